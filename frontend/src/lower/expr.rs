//! Expressions, array accesses and assignment targets.
//!
//! Implicit conversions that change the type become [`ExprKind::Cast`];
//! lvalue-to-rvalue and array decay vanish. Subscripts of declared arrays
//! must be affine per dimension; subscripts of pointers are read as
//! polynomials and delinearised once all accesses are known.

use super::{strip, Binding, FlatAccess, Lowerer, FLAT_MARKER};
use crate::affine::NotAffine;
use crate::diagnostics as codes;
use crate::ir::*;
use crate::syntax::*;

/// Most expression nodes helper inlining may copy into one kernel.
const MAX_INLINED_NODES: usize = 100_000;

/// Number of nodes in `e`, counting no further than `limit + 1`.
fn expr_size(e: &Expr, limit: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        count += 1;
        if count > limit {
            break;
        }
        match &e.kind {
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => stack.push(arg),
            ExprKind::Binary { lhs, rhs, .. } => {
                stack.push(lhs);
                stack.push(rhs);
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                stack.push(cond);
                stack.push(then_value);
                stack.push(else_value);
            }
            ExprKind::Call { args, .. } => stack.extend(args.iter()),
            _ => {}
        }
    }
    count
}

fn math_function(name: &str) -> Option<MathFn> {
    let base = name.strip_suffix('f').filter(|b| {
        matches!(
            *b,
            "sqrt"
                | "exp"
                | "log"
                | "fabs"
                | "pow"
                | "fmax"
                | "fmin"
                | "tanh"
                | "round"
                | "floor"
                | "ceil"
                | "sin"
                | "cos"
                | "cosh"
                | "sinh"
        )
    });
    Some(match base.unwrap_or(name) {
        "sqrt" => MathFn::Sqrt,
        "exp" => MathFn::Exp,
        "log" => MathFn::Log,
        "fabs" | "abs" | "labs" | "llabs" => MathFn::Abs,
        "pow" => MathFn::Pow,
        "fmax" => MathFn::Max,
        "fmin" => MathFn::Min,
        "tanh" => MathFn::Tanh,
        "round" => MathFn::Round,
        "floor" => MathFn::Floor,
        "ceil" => MathFn::Ceil,
        "sin" => MathFn::Sin,
        "cos" => MathFn::Cos,
        "cosh" => MathFn::Cosh,
        "sinh" => MathFn::Sinh,
        _ => return None,
    })
}

impl Lowerer<'_> {
    /// The scalar type of a node, or a TL034 diagnostic.
    fn scalar_type(&mut self, e: &CExpr) -> Option<ScalarType> {
        match &e.ty {
            CType::Scalar(s) => Some(*s),
            CType::Pointer { .. } => {
                self.error(
                    codes::POINTER_ARITHMETIC,
                    &e.loc,
                    "pointer-valued expression (pointer arithmetic is not supported)",
                );
                None
            }
            other => {
                let name = super::type_name(other);
                self.error(
                    codes::UNSUPPORTED_TYPE,
                    &e.loc,
                    format!("values of type `{name}` are not supported"),
                );
                None
            }
        }
    }

    /// Lowers a value expression; `None` after recording diagnostics.
    pub(super) fn expr(&mut self, e: &CExpr) -> Option<Expr> {
        match &e.kind {
            CExprKind::Paren(inner) => self.expr(inner),
            CExprKind::Rejected => {
                self.saw_reader_rejection = true;
                None
            }
            CExprKind::Implicit(inner) => {
                let outer_ty = e.ty.scalar();
                let inner_expr = self.expr(inner)?;
                match outer_ty {
                    Some(t) => Some(super::stmt::cast_to(t, inner_expr)),
                    None => Some(inner_expr),
                }
            }
            CExprKind::Cast(inner) => {
                let inner_expr = self.expr(inner)?;
                Some(super::stmt::cast_to(self.scalar_type(e)?, inner_expr))
            }
            // A macro literal that sizes nothing (`macro_sizes` resolved the
            // others): its value.
            CExprKind::MacroInt { value, .. } => Some(Expr {
                ty: self.scalar_type(e)?,
                kind: ExprKind::IntLit { value: *value },
            }),
            CExprKind::Int(v) => {
                let ty = self.scalar_type(e)?;
                match v {
                    IntValue::Fits(value) => Some(Expr {
                        ty,
                        kind: ExprKind::IntLit { value: *value },
                    }),
                    IntValue::TooLarge => {
                        self.error(
                            codes::LITERAL_OVERFLOW,
                            &e.loc,
                            "integer literal does not fit in a signed 64-bit value",
                        );
                        None
                    }
                }
            }
            CExprKind::Float { value, text } => Some(Expr {
                ty: self.scalar_type(e)?,
                kind: ExprKind::FloatLit {
                    value: *value,
                    text: text.clone(),
                },
            }),
            CExprKind::Ref(r) => self.value_ref(r, e),
            CExprKind::Subscript { .. } => {
                let (array, index, ty) = self.access(e)?;
                Some(Expr {
                    ty,
                    kind: ExprKind::Load { array, index },
                })
            }
            CExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs),
            CExprKind::Unary { op, arg } => match op {
                CUnOp::Plus => self.expr(arg),
                CUnOp::Minus | CUnOp::LNot => {
                    let arg = self.expr(arg)?;
                    Some(Expr {
                        ty: self.scalar_type(e)?,
                        kind: ExprKind::Unary {
                            op: if *op == CUnOp::Minus {
                                UnaryOp::Neg
                            } else {
                                UnaryOp::Not
                            },
                            arg: Box::new(arg),
                        },
                    })
                }
                CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec => {
                    self.error(
                        codes::SIDE_EFFECT_IN_EXPRESSION,
                        &e.loc,
                        "`++`/`--` inside an expression; make it a statement of its own",
                    );
                    None
                }
                CUnOp::Unsupported(sym) => {
                    let code = if matches!(*sym, "*" | "&") {
                        codes::POINTER_ARITHMETIC
                    } else {
                        codes::UNSUPPORTED_OPERATOR
                    };
                    self.error(code, &e.loc, format!("operator `{sym}` is not supported"));
                    None
                }
            },
            CExprKind::Conditional {
                cond,
                then_value,
                else_value,
            } => {
                let c = self.expr(cond);
                let t = self.expr(then_value);
                let f = self.expr(else_value);
                let (c, t, f) = (c?, t?, f?);
                Some(Expr {
                    ty: self.scalar_type(e)?,
                    kind: ExprKind::Select {
                        cond: Box::new(c),
                        then_value: Box::new(t),
                        else_value: Box::new(f),
                    },
                })
            }
            CExprKind::Call {
                callee,
                args,
                inline,
            } => self.call(e, callee.as_ref(), args, inline.as_deref()),
            CExprKind::Member { .. } => {
                self.error(
                    codes::MEMBER_ACCESS,
                    &e.loc,
                    "struct or union member access is not supported",
                );
                None
            }
            CExprKind::Unsupported(what) => {
                if what == "sizeof" {
                    self.error(
                        codes::UNSUPPORTED_OPERATOR,
                        &e.loc,
                        "`sizeof` is not supported",
                    );
                } else {
                    self.error(
                        codes::UNSUPPORTED_EXPRESSION,
                        &e.loc,
                        format!("unsupported expression ({what})"),
                    );
                }
                None
            }
        }
    }

    fn value_ref(&mut self, r: &DeclRef, e: &CExpr) -> Option<Expr> {
        if let RefTarget::EnumConstant(v) = r.target {
            return Some(Expr {
                ty: ScalarType::I32,
                kind: ExprKind::IntLit { value: v },
            });
        }
        match self.bindings.get(&r.key).cloned() {
            Some(Binding::Iter { name, ty }) => Some(Expr {
                ty,
                kind: ExprKind::Var {
                    name,
                    class: VarClass::Iter,
                },
            }),
            Some(Binding::Scalar { .. }) if self.uninitialised_keys.contains(&r.key) => {
                self.error(
                    codes::UNSUPPORTED_EXPRESSION,
                    &e.loc,
                    format!(
                        "`{}` is initialised before the scop region with an expression the kernel cannot evaluate",
                        r.name
                    ),
                );
                None
            }
            Some(Binding::Scalar { name, ty, class }) => Some(Expr {
                ty,
                kind: ExprKind::Var { name, class },
            }),
            Some(Binding::Array { name, .. }) => {
                self.error(
                    codes::PARTIAL_SUBSCRIPT,
                    &e.loc,
                    format!("array `{name}` used without a subscript for each dimension"),
                );
                None
            }
            Some(Binding::Inlined(value)) => {
                self.inlined_nodes += expr_size(&value, MAX_INLINED_NODES);
                if self.inlined_nodes > MAX_INLINED_NODES {
                    self.error(
                        codes::TOO_DEEP,
                        &e.loc,
                        format!(
                            "inlining helpers here copies more than {MAX_INLINED_NODES} expression nodes"
                        ),
                    );
                    return None;
                }
                Some(value)
            }
            None => {
                self.unbound(r, &e.loc);
                None
            }
        }
    }

    /// Diagnoses a use of a name with no binding.
    fn unbound(&mut self, r: &DeclRef, loc: &Loc) {
        if self.rejected_keys.contains(&r.key) {
            return;
        }
        if self.outside_region_keys.contains(&r.key) {
            self.error(
                codes::POINTER_ARITHMETIC,
                loc,
                format!(
                    "`{}` is declared outside the scop region with a type the kernel cannot use",
                    r.name
                ),
            );
            return;
        }
        if self.iterator_keys.contains(&r.key) {
            self.error(
                codes::ITERATOR_AFTER_LOOP,
                loc,
                format!("`{}` is a loop iterator used outside its loop", r.name),
            );
        } else if r.target == RefTarget::Function {
            self.error(
                codes::UNKNOWN_CALL,
                loc,
                format!("function `{}` used as a value", r.name),
            );
        } else {
            self.error(
                codes::UNSUPPORTED_EXPRESSION,
                loc,
                format!("unsupported use of `{}`", r.name),
            );
        }
    }

    fn binary(&mut self, e: &CExpr, op: CBinOp, lhs: &CExpr, rhs: &CExpr) -> Option<Expr> {
        let ir_op = match op {
            CBinOp::Mul => BinaryOp::Mul,
            CBinOp::Div => BinaryOp::Div,
            CBinOp::Rem => BinaryOp::Rem,
            CBinOp::Add => BinaryOp::Add,
            CBinOp::Sub => BinaryOp::Sub,
            CBinOp::Lt => BinaryOp::Lt,
            CBinOp::Gt => BinaryOp::Gt,
            CBinOp::Le => BinaryOp::Le,
            CBinOp::Ge => BinaryOp::Ge,
            CBinOp::Eq => BinaryOp::Eq,
            CBinOp::Ne => BinaryOp::Ne,
            CBinOp::LAnd => BinaryOp::And,
            CBinOp::LOr => BinaryOp::Or,
            CBinOp::Shl | CBinOp::Shr => return self.shift(e, op == CBinOp::Shl, lhs, rhs),
            CBinOp::Assign | CBinOp::CompoundAssign(_) => {
                self.error(
                    codes::SIDE_EFFECT_IN_EXPRESSION,
                    &e.loc,
                    "assignment inside an expression; make it a statement of its own",
                );
                return None;
            }
            CBinOp::Unsupported(sym) => {
                self.error(
                    codes::UNSUPPORTED_OPERATOR,
                    &e.loc,
                    format!("operator `{sym}` is not supported"),
                );
                // Operands may hide further problems worth reporting.
                let _ = self.expr(lhs);
                let _ = self.expr(rhs);
                return None;
            }
        };
        // Operands first: a problem inside them explains the node's type too.
        let a = self.expr(lhs);
        let b = self.expr(rhs);
        let (a, b) = (a?, b?);
        Some(Expr {
            ty: self.scalar_type(e)?,
            kind: ExprKind::Binary {
                op: ir_op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
        })
    }

    /// `a << c` and `a >> c` for a constant `c`, as the arithmetic they
    /// are on the promoted type of `a`: `a * 2^c`; `a / 2^c` when unsigned;
    /// and for a signed `a` the floor division of an arithmetic shift (what
    /// gcc and clang do), `(a - ((a % d + d) % d)) / d` with `d = 2^c`,
    /// which cannot overflow for `c` up to two below the type's width
    /// (`a % d + d < 2d`, and `a - r` is a multiple of `d` at or above the
    /// type's minimum, itself a multiple of `d`).
    fn shift(&mut self, e: &CExpr, left: bool, lhs: &CExpr, rhs: &CExpr) -> Option<Expr> {
        let a = self.expr(lhs);
        let ty = self.scalar_type(e)?;
        let a = super::stmt::cast_to(ty, a?);
        self.shifted(a, left, rhs, &e.loc)
    }

    /// `a << count` or `a >> count` in `a`'s type (already promoted); see
    /// [`Self::shift`].
    pub(super) fn shifted(&mut self, a: Expr, left: bool, rhs: &CExpr, loc: &Loc) -> Option<Expr> {
        let sym = if left { "<<" } else { ">>" };
        let count = self.poly(rhs).ok().and_then(|p| p.as_constant());
        let ty = a.ty;
        let widest = if left || !ty.is_signed() {
            ty.bits() as i64 - 1
        } else {
            ty.bits() as i64 - 2
        };
        let Some(c) = count.filter(|c| (0..=widest).contains(c)) else {
            let why = match count {
                Some(c) => format!("the shift count {c} is outside 0..={widest} for `{ty:?}`"),
                None => "the shift count is not a constant".to_string(),
            };
            self.error(
                codes::UNSUPPORTED_OPERATOR,
                loc,
                format!("operator `{sym}`: {why}"),
            );
            return None;
        };
        let lit = |value: i64| Expr {
            ty,
            kind: ExprKind::IntLit { value },
        };
        let bin = |op: BinaryOp, lhs: Expr, rhs: Expr| Expr {
            ty,
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
        };
        let d = 1i64 << c;
        Some(if left {
            bin(BinaryOp::Mul, a, lit(d))
        } else if !ty.is_signed() {
            bin(BinaryOp::Div, a, lit(d))
        } else {
            let rem = bin(BinaryOp::Rem, a.clone(), lit(d));
            let modulo = bin(BinaryOp::Rem, bin(BinaryOp::Add, rem, lit(d)), lit(d));
            bin(BinaryOp::Div, bin(BinaryOp::Sub, a, modulo), lit(d))
        })
    }

    fn call(
        &mut self,
        e: &CExpr,
        callee: Option<&DeclRef>,
        args: &[CExpr],
        inline: Option<&InlineBody>,
    ) -> Option<Expr> {
        let Some(callee) = callee.filter(|c| c.target == RefTarget::Function) else {
            self.error(
                codes::UNKNOWN_CALL,
                &e.loc,
                "call through a function pointer is not supported",
            );
            return None;
        };
        if callee.name == self.func.name {
            self.error(
                codes::RECURSION,
                &e.loc,
                format!("`{}` calls itself", callee.name),
            );
            return None;
        }
        let long_double_variant = callee
            .name
            .strip_suffix('l')
            .is_some_and(|base| math_function(base).is_some() || base == "fma");
        if long_double_variant {
            self.error(
                codes::UNSUPPORTED_TYPE,
                &e.loc,
                format!(
                    "`{}` computes in long double, which is not supported",
                    callee.name
                ),
            );
            return None;
        }
        if matches!(callee.name.as_str(), "fma" | "fmaf") && args.len() == 3 {
            return self.fused_multiply_add(e, args);
        }
        let Some(func) = math_function(&callee.name) else {
            if let Some(body) =
                inline.filter(|b| b.params.len() == args.len() && b.stmts.is_empty())
            {
                return self.inline_call(e, body, args);
            }
            self.error(
                codes::UNKNOWN_CALL,
                &e.loc,
                format!("call to unknown function `{}`", callee.name),
            );
            return None;
        };
        if args.len() != func.arity() {
            self.error(
                codes::UNKNOWN_CALL,
                &e.loc,
                format!(
                    "`{}` takes {} argument(s), not {}",
                    callee.name,
                    func.arity(),
                    args.len()
                ),
            );
            return None;
        }
        let lowered: Vec<Option<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        let args: Vec<Expr> = lowered.into_iter().collect::<Option<_>>()?;
        Some(Expr {
            ty: self.scalar_type(e)?,
            kind: ExprKind::Call { func, args },
        })
    }

    /// `fma(a, b, c)` as `a*b + c` in the call's type. The spec's algebra
    /// is exact real arithmetic, where the two are equal; fma rounds once
    /// and `a*b + c` twice, a difference the differential runs tolerate.
    fn fused_multiply_add(&mut self, e: &CExpr, args: &[CExpr]) -> Option<Expr> {
        let ty = self.scalar_type(e)?;
        let lowered: Vec<Option<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        let [a, b, c]: [Expr; 3] = lowered
            .into_iter()
            .collect::<Option<Vec<_>>>()?
            .try_into()
            .ok()?;
        let bin = |op, lhs, rhs| Expr {
            ty,
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(super::stmt::cast_to(ty, lhs)),
                rhs: Box::new(super::stmt::cast_to(ty, rhs)),
            },
        };
        Some(bin(BinaryOp::Add, bin(BinaryOp::Mul, a, b), c))
    }

    /// A call of a `return expr;` helper: its expression with the
    /// parameters bound to the (already converted) arguments. Arguments
    /// are side-effect free, so substituting them is exact.
    fn inline_call(&mut self, e: &CExpr, body: &InlineBody, args: &[CExpr]) -> Option<Expr> {
        let lowered: Vec<Option<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        let args: Vec<Expr> = lowered.into_iter().collect::<Option<_>>()?;
        let saved: Vec<(String, Option<Binding>)> = body
            .params
            .iter()
            .zip(args)
            .map(|(key, arg)| {
                let old = self.bindings.insert(key.clone(), Binding::Inlined(arg));
                (key.clone(), old)
            })
            .collect();
        let value = self.expr(&body.value);
        for (key, old) in saved {
            match old {
                Some(b) => self.bindings.insert(key, b),
                None => self.bindings.remove(&key),
            };
        }
        Some(super::stmt::cast_to(self.scalar_type(e)?, value?))
    }

    /// An assignment target.
    pub(super) fn lvalue(&mut self, e: &CExpr) -> Option<LValue> {
        let target = strip(e);
        match &target.kind {
            CExprKind::Ref(r) => match self.bindings.get(&r.key).cloned() {
                Some(Binding::Iter { name, .. }) => {
                    self.error(
                        codes::ITERATOR_WRITTEN,
                        &e.loc,
                        format!("loop iterator `{name}` is written inside its loop"),
                    );
                    None
                }
                Some(Binding::Scalar { name, ty, .. }) => Some(LValue::Scalar { name, ty }),
                Some(Binding::Array { name, flat, .. }) => {
                    if flat {
                        self.error(
                            codes::POINTER_ARITHMETIC,
                            &e.loc,
                            format!("pointer `{name}` is modified (pointer arithmetic)"),
                        );
                    } else {
                        self.error(
                            codes::PARTIAL_SUBSCRIPT,
                            &e.loc,
                            format!(
                                "array `{name}` assigned without a subscript for each dimension"
                            ),
                        );
                    }
                    None
                }
                Some(Binding::Inlined(_)) => {
                    self.error(
                        codes::UNSUPPORTED_EXPRESSION,
                        &e.loc,
                        "assignment to a parameter of an inlined helper",
                    );
                    None
                }
                None => {
                    self.unbound(r, &e.loc);
                    None
                }
            },
            CExprKind::Subscript { .. } => {
                let (array, index, ty) = self.access(target)?;
                Some(LValue::Element { array, index, ty })
            }
            CExprKind::Unary {
                op: CUnOp::Unsupported("*"),
                ..
            } => {
                self.error(
                    codes::POINTER_ARITHMETIC,
                    &e.loc,
                    "write through a dereferenced pointer",
                );
                None
            }
            CExprKind::Member { .. } => {
                self.error(
                    codes::MEMBER_ACCESS,
                    &e.loc,
                    "struct or union member access is not supported",
                );
                None
            }
            _ => {
                self.error(
                    codes::UNSUPPORTED_EXPRESSION,
                    &e.loc,
                    "unsupported assignment target",
                );
                None
            }
        }
    }

    fn index_error(&mut self, array: &str, index: &CExpr, why: NotAffine) {
        let code = match why {
            NotAffine::Indirect | NotAffine::Loaded { .. } => codes::INDIRECT_SUBSCRIPT,
            NotAffine::StaleIterator(_) => codes::ITERATOR_AFTER_LOOP,
            NotAffine::SideEffect => codes::SIDE_EFFECT_IN_EXPRESSION,
            _ => codes::NON_AFFINE_SUBSCRIPT,
        };
        let message = match why {
            NotAffine::Indirect => {
                format!("indirect subscript: the index of `{array}` is read from memory")
            }
            other => format!("subscript of `{array}` is not affine: {other}"),
        };
        self.error(code, &index.loc, message);
    }

    /// An array element: the array's IR name, one affine index per
    /// dimension (a placeholder for pointers), and the element type.
    pub(super) fn access(&mut self, e: &CExpr) -> Option<(String, Vec<Affine>, ScalarType)> {
        let mut indices: Vec<&CExpr> = Vec::new();
        let mut cur = strip(e);
        while let CExprKind::Subscript { base, index } = &cur.kind {
            indices.push(index);
            cur = strip(base);
        }
        indices.reverse();
        let r = match &cur.kind {
            CExprKind::Ref(r) => r,
            CExprKind::Member { .. } => {
                self.error(
                    codes::MEMBER_ACCESS,
                    &cur.loc,
                    "struct or union member access is not supported",
                );
                return None;
            }
            CExprKind::Rejected => return None,
            _ => {
                self.error(
                    codes::POINTER_ARITHMETIC,
                    &cur.loc,
                    "subscript of a computed pointer (pointer arithmetic is not supported)",
                );
                return None;
            }
        };
        let Some(Binding::Array {
            name,
            elem,
            ndims,
            flat,
        }) = self.bindings.get(&r.key).cloned()
        else {
            if self.bindings.contains_key(&r.key) {
                self.error(
                    codes::PARTIAL_SUBSCRIPT,
                    &cur.loc,
                    format!("`{}` is not an array", r.name),
                );
            } else {
                self.unbound(r, &cur.loc);
            }
            return None;
        };
        if e.ty.scalar().is_none() || indices.len() != ndims {
            self.error(
                codes::PARTIAL_SUBSCRIPT,
                &e.loc,
                format!(
                    "`{name}` has {ndims} dimension(s) but is used with {} subscript(s){}",
                    indices.len(),
                    if flat && indices.len() > 1 {
                        " (pointers to pointers are not supported)"
                    } else {
                        ""
                    }
                ),
            );
            return None;
        }
        if flat {
            let index = indices[0];
            match self.poly(index) {
                Ok(poly) => {
                    let id = self.flat_accesses.len();
                    self.flat_accesses.push(FlatAccess {
                        array: name.clone(),
                        poly,
                        loc: index.loc.clone(),
                    });
                    let marker = Affine::var(format!("{FLAT_MARKER}{id}"));
                    Some((name, vec![marker], elem))
                }
                Err(why) => {
                    self.index_error(&name, index, why);
                    None
                }
            }
        } else {
            let mut out = Vec::new();
            let mut ok = true;
            for index in indices {
                match self.affine(index) {
                    Ok(a) => out.push(a),
                    Err(why) => {
                        self.index_error(&name, index, why);
                        ok = false;
                    }
                }
            }
            ok.then_some((name, out, elem))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn fma_is_a_product_plus_an_addend_and_fmal_stays_refused() {
        let body = lowered(
            "#include <math.h>
             void k(float *y, const float *x, double *z, float a, int n) {
               for (int i = 0; i < n; i++) { y[i] = fmaf(a, x[i], y[i]); z[i] = fma(z[i], 2.0, 1.0); }
             }",
        )
        .expect("lifts");
        assert!(
            body.contains("y[i] = ((a * x[i]):f32 + y[i]):f32"),
            "{body}"
        );
        assert!(
            body.contains("z[i] = ((z[i] * 2.0):f64 + 1.0):f64"),
            "{body}"
        );
        let long = lowered(
            "#include <math.h>
             void k(long double *y, int n) { for (int i = 0; i < n; i++) y[i] = fmal(y[i], y[i], y[i]); }",
        );
        assert!(long.is_err());
    }
}
