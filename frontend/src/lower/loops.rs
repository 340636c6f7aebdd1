//! `for` loops: the header is matched against the accepted forms and
//! normalised to an iterator, an affine start, an exclusive affine end and
//! a constant step; the body is lowered with the iterator bound.

use super::{strip, Binding, Lowerer};
use crate::affine::{NotAffine, Poly};
use crate::diagnostics as codes;
use crate::ir::*;
use crate::syntax::*;

impl Lowerer<'_> {
    pub(super) fn for_loop(
        &mut self,
        init: &CStmt,
        cond: &CExpr,
        inc: &CExpr,
        body: &CStmt,
        loc: &Loc,
        out: &mut Vec<Stmt>,
    ) {
        let Some(header) = self.loop_header(init, cond, inc, loc) else {
            // Still lower the body so every problem in it is reported; bind
            // the iterator (if there is one) so its uses do not cascade.
            let key = loop_var_key(init);
            if let Some((key, name)) = &key {
                self.bindings.insert(
                    key.clone(),
                    Binding::Iter {
                        name: name.clone(),
                        ty: ScalarType::I32,
                    },
                );
            }
            let _ = self.block(body);
            if let Some((key, _)) = key {
                self.bindings.remove(&key);
            }
            return;
        };
        let LoopHeader {
            key,
            c_name,
            ty,
            start,
            end,
            step,
        } = header;
        let name = self.fresh_name(&c_name);
        self.bindings.insert(
            key.clone(),
            Binding::Iter {
                name: name.clone(),
                ty,
            },
        );
        self.loop_bounds
            .insert(name.clone(), (start.clone(), end.clone(), step));
        let body = self.block(body);
        self.bindings.remove(&key);
        out.push(Stmt::Loop(Loop {
            iter: name,
            start,
            end,
            step,
            body,
            loc: loc.clone(),
        }));
    }

    fn loop_header(
        &mut self,
        init: &CStmt,
        cond: &CExpr,
        inc: &CExpr,
        loc: &Loc,
    ) -> Option<LoopHeader> {
        // Iterator and start.
        let (key, c_name, var_ty, start_expr) = match init {
            CStmt::Decl(vars, _) if vars.len() == 1 && vars[0].init.is_some() => {
                let v = &vars[0];
                (
                    v.key.clone(),
                    v.name.clone(),
                    v.ty.clone(),
                    v.init.as_ref()?,
                )
            }
            CStmt::Expr(e) => match &strip(e).kind {
                CExprKind::Binary {
                    op: CBinOp::Assign,
                    lhs,
                    rhs,
                } => match &strip(lhs).kind {
                    CExprKind::Ref(r) => (r.key.clone(), r.name.clone(), lhs.ty.clone(), &**rhs),
                    _ => return self.bad_for(loc, "the initialiser must assign the iterator"),
                },
                _ => return self.bad_for(loc, "the initialiser must assign the iterator"),
            },
            _ => {
                return self.bad_for(
                    loc,
                    "the initialiser must declare or assign exactly one iterator",
                )
            }
        };
        let Some(ty) = var_ty.scalar().filter(|t| !t.is_float()) else {
            self.error(
                codes::ITERATOR_TYPE,
                loc,
                format!(
                    "iterator `{c_name}` has type `{}`",
                    super::type_name(&var_ty)
                ),
            );
            return None;
        };
        if let Some(Binding::Scalar {
            class: VarClass::Param,
            ..
        }) = self.bindings.get(&key)
        {
            self.error(
                codes::ITERATOR_TYPE,
                loc,
                format!(
                    "iterator `{c_name}` is a parameter or global; its final value would escape the kernel"
                ),
            );
            return None;
        }
        if matches!(self.bindings.get(&key), Some(Binding::Iter { .. })) {
            self.error(
                codes::ITERATOR_WRITTEN,
                loc,
                format!("loop reuses `{c_name}`, the iterator of an enclosing loop"),
            );
            return None;
        }
        let start = match self.affine(start_expr) {
            Ok(a) => a,
            Err(why) => {
                self.error(
                    codes::NON_AFFINE_BOUND,
                    &start_expr.loc,
                    format!("start of loop `{c_name}` is not affine: {why}"),
                );
                return None;
            }
        };
        // Condition: `lhs op rhs` with `lhs - rhs` affine and the iterator
        // appearing with coefficient 1 or -1 (`i < n`, `n > i`, `i + K <= n`).
        let c = strip(cond);
        let (op, lhs, rhs) = match &c.kind {
            CExprKind::Binary { op, lhs, rhs }
                if matches!(
                    op,
                    CBinOp::Lt | CBinOp::Le | CBinOp::Gt | CBinOp::Ge | CBinOp::Ne
                ) =>
            {
                (*op, &**lhs, &**rhs)
            }
            _ => {
                return self.bad_for(
                    &cond.loc,
                    &format!("the condition must be `{c_name} < bound` (or <=, >, >=, !=)"),
                )
            }
        };
        let probe = format!("\u{1}iter:{c_name}");
        self.bindings.insert(
            key.clone(),
            Binding::Iter {
                name: probe.clone(),
                ty,
            },
        );
        let diff = self
            .poly(lhs)
            .and_then(|a| a.sub(&self.poly(rhs)?))
            .and_then(|p| {
                p.to_affine()
                    .ok_or_else(|| NotAffine::NonLinear("a product of variables".into()))
            });
        self.bindings.remove(&key);
        let mut diff = match diff {
            Ok(d) => d,
            Err(why) => {
                self.error(
                    codes::NON_AFFINE_BOUND,
                    &cond.loc,
                    format!("bound of loop `{c_name}` is not affine: {why}"),
                );
                return None;
            }
        };
        let coeff = diff.terms.remove(&probe).unwrap_or(0);
        // `coeff*i + rest op 0`  =>  `i op' -rest` (coeff 1) or `i op'' rest` (coeff -1).
        let (op, bound) = match coeff {
            1 => match Poly::from_affine(&diff).scale(-1).map(|p| p.to_affine()) {
                Ok(Some(b)) => (op, b),
                _ => {
                    self.error(
                        codes::NON_AFFINE_BOUND,
                        &cond.loc,
                        format!("bound of loop `{c_name}` overflows 64 bits"),
                    );
                    return None;
                }
            },
            -1 => {
                let flipped = match op {
                    CBinOp::Lt => CBinOp::Gt,
                    CBinOp::Le => CBinOp::Ge,
                    CBinOp::Gt => CBinOp::Lt,
                    CBinOp::Ge => CBinOp::Le,
                    other => other,
                };
                (flipped, diff)
            }
            0 => {
                return self.bad_for(
                    &cond.loc,
                    &format!("the condition does not involve the iterator `{c_name}`"),
                )
            }
            _ => {
                self.error(
                    codes::NON_AFFINE_BOUND,
                    &cond.loc,
                    format!("the condition scales the iterator `{c_name}` by {coeff}; only 1 or -1 is supported"),
                );
                return None;
            }
        };
        // Increment.
        let step = self.loop_step(inc, &key, &c_name)?;
        // Normalise to an exclusive end.
        let shift = |a: &Affine, by: i64| -> Option<Affine> {
            let mut out = a.clone();
            out.constant = out.constant.checked_add(by)?;
            Some(out)
        };
        let end = match (op, step) {
            (CBinOp::Lt, s) if s > 0 => Some(bound),
            (CBinOp::Le, s) if s > 0 => shift(&bound, 1),
            (CBinOp::Gt, s) if s < 0 => Some(bound),
            (CBinOp::Ge, s) if s < 0 => shift(&bound, -1),
            (CBinOp::Ne, 1) | (CBinOp::Ne, -1) => Some(bound),
            _ => {
                self.error(
                    codes::LOOP_DIRECTION,
                    &cond.loc,
                    format!(
                        "loop `{c_name}` steps by {step} but its condition {}",
                        match op {
                            CBinOp::Ne => "uses `!=` (only allowed with step 1 or -1)",
                            _ => "counts the other way",
                        }
                    ),
                );
                return None;
            }
        };
        let Some(end) = end else {
            self.error(
                codes::LITERAL_OVERFLOW,
                &cond.loc,
                "loop bound overflows 64 bits",
            );
            return None;
        };
        Some(LoopHeader {
            key,
            c_name,
            ty,
            start,
            end,
            step,
        })
    }

    fn loop_step(&mut self, inc: &CExpr, key: &str, c_name: &str) -> Option<i64> {
        let is_iter = |e: &CExpr| matches!(&strip(e).kind, CExprKind::Ref(r) if r.key == key);
        let constant = |this: &Self, e: &CExpr| this.affine(e).ok().and_then(|a| a.as_constant());
        let i = strip(inc);
        let step = match &i.kind {
            CExprKind::Unary { op, arg } if is_iter(arg) => match op {
                CUnOp::PostInc | CUnOp::PreInc => Some(1),
                CUnOp::PostDec | CUnOp::PreDec => Some(-1),
                _ => None,
            },
            CExprKind::Binary {
                op: CBinOp::CompoundAssign(op),
                lhs,
                rhs,
            } if is_iter(lhs) => match op {
                ArithOp::Add => constant(self, rhs),
                ArithOp::Sub => constant(self, rhs).and_then(|c| c.checked_neg()),
                _ => None,
            },
            CExprKind::Binary {
                op: CBinOp::Assign,
                lhs,
                rhs,
            } if is_iter(lhs) => match &strip(rhs).kind {
                CExprKind::Binary {
                    op: CBinOp::Add,
                    lhs: a,
                    rhs: b,
                } => {
                    if is_iter(a) {
                        constant(self, b)
                    } else if is_iter(b) {
                        constant(self, a)
                    } else {
                        None
                    }
                }
                CExprKind::Binary {
                    op: CBinOp::Sub,
                    lhs: a,
                    rhs: b,
                } if is_iter(a) => constant(self, b).and_then(|c| c.checked_neg()),
                _ => None,
            },
            _ => None,
        };
        match step {
            Some(s) if s != 0 => Some(s),
            _ => {
                self.error(
                    codes::BAD_STEP,
                    &inc.loc,
                    format!("loop `{c_name}` must step by a non-zero integer constant"),
                );
                None
            }
        }
    }

    fn bad_for<T>(&mut self, loc: &Loc, why: &str) -> Option<T> {
        self.error(
            codes::FOR_SHAPE,
            loc,
            format!("unsupported `for` loop: {why}"),
        );
        None
    }
}

/// The key and C name of the variable a `for` initialiser sets.
fn loop_var_key(init: &CStmt) -> Option<(String, String)> {
    match init {
        CStmt::Decl(vars, _) => vars.first().map(|v| (v.key.clone(), v.name.clone())),
        CStmt::Expr(e) => match &strip(e).kind {
            CExprKind::Binary {
                op: CBinOp::Assign,
                lhs,
                ..
            } => match &strip(lhs).kind {
                CExprKind::Ref(r) => Some((r.key.clone(), r.name.clone())),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

struct LoopHeader {
    key: String,
    c_name: String,
    ty: ScalarType,
    start: Affine,
    end: Affine,
    step: i64,
}
