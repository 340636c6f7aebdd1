//! Statements: blocks, declarations, assignments (with compound operators
//! and `++`/`--` desugared), `if` (guard or data) and the final `return`;
//! `for` loops are in [`super::loops`].

use super::{strip, Binding, Lowerer};
use crate::diagnostics as codes;
use crate::ir::*;
use crate::syntax::*;
use crate::types::usual_arithmetic;

/// Casts `e` to `ty` unless it already has that type.
pub(super) fn cast_to(ty: ScalarType, e: Expr) -> Expr {
    if e.ty == ty {
        e
    } else {
        Expr {
            ty,
            kind: ExprKind::Cast { arg: Box::new(e) },
        }
    }
}

/// The literal 1 in type `ty` (for `++`/`--`).
pub(super) fn one(ty: ScalarType) -> Expr {
    let kind = if ty.is_float() {
        ExprKind::FloatLit {
            value: 1.0,
            text: if ty == ScalarType::F32 { "1.0f" } else { "1.0" }.into(),
        }
    } else {
        ExprKind::IntLit { value: 1 }
    };
    Expr { ty, kind }
}

impl Lowerer<'_> {
    pub(super) fn lower_body(&mut self, region: Option<(u32, u32)>) -> Vec<Stmt> {
        let func = self.func;
        let mut out = Vec::new();
        let last = func.body.iter().rposition(|s| !matches!(s, CStmt::Null(_)));
        for (i, s) in func.body.iter().enumerate() {
            if let Some((from, to)) = region {
                let line = s.loc().line;
                if line <= from || line >= to {
                    // Outside the scop region only declarations matter
                    // (their names are used inside).
                    if let CStmt::Decl(vars, _) = s {
                        self.declare_outside_region(vars, line <= from, &mut out);
                    }
                    continue;
                }
            }
            if let CStmt::Return(value, loc) = s {
                if Some(i) == last {
                    self.lower_return(value.as_ref(), loc, &mut out);
                    continue;
                }
            }
            self.stmt(s, &mut out);
        }
        out
    }

    /// Declarations outside the scop region still declare names. A scalar
    /// declared before the region keeps its initialiser (PolyBench's
    /// `DATA_TYPE eps = 0.1;` above `#pragma scop`) as an assignment at the
    /// start of the kernel, when it can be lowered; when it cannot (a call,
    /// a pointer), a read of the variable inside the region is refused
    /// rather than reading an unknown value. Other initialisers are dropped.
    fn declare_outside_region(&mut self, vars: &[CVarDecl], before: bool, out: &mut Vec<Stmt>) {
        for v in vars {
            if self.iterator_keys.contains(&v.key) {
                continue;
            }
            if !matches!(v.ty, CType::Scalar(_) | CType::Array { .. }) {
                self.outside_region_keys.insert(v.key.clone());
                continue;
            }
            if before && matches!(v.ty, CType::Scalar(_)) && v.init.is_some() {
                self.declare_with_outside_init(v, out);
                continue;
            }
            let mut scratch = Vec::new();
            let without_init = CVarDecl {
                init: None,
                ..v.clone()
            };
            self.decl(&without_init, &mut scratch);
        }
    }

    /// Lowers a pre-region scalar declaration with its initialiser; on
    /// failure, forgets the attempt's diagnostics and marks the variable
    /// so that reading it in the region is diagnosed.
    fn declare_with_outside_init(&mut self, v: &CVarDecl, out: &mut Vec<Stmt>) {
        let (diagnostics, flat, rejected, inlined) = (
            self.diagnostics.len(),
            self.flat_accesses.len(),
            self.saw_reader_rejection,
            self.inlined_nodes,
        );
        let mut lowered = Vec::new();
        self.decl(v, &mut lowered);
        if self.diagnostics.len() == diagnostics && lowered.len() == 1 {
            out.append(&mut lowered);
            return;
        }
        self.diagnostics.truncate(diagnostics);
        self.flat_accesses.truncate(flat);
        self.saw_reader_rejection = rejected;
        self.inlined_nodes = inlined;
        self.affine_locals.remove(&v.key);
        self.affine_inits.remove(&v.key);
        self.uninitialised_keys.insert(v.key.clone());
    }

    fn lower_return(&mut self, value: Option<&CExpr>, loc: &Loc, out: &mut Vec<Stmt>) {
        let Some(value) = value else { return };
        let Some(ty) = self.func.result.scalar() else {
            self.error(
                codes::UNSUPPORTED_TYPE,
                loc,
                format!(
                    "returned type `{}` is not supported",
                    super::type_name(&self.func.result)
                ),
            );
            return;
        };
        match self.expr(value) {
            Some(v) => {
                self.returns = Some(ty);
                out.push(Stmt::Return {
                    value: cast_to(ty, v),
                    loc: loc.clone(),
                });
            }
            None => self.dropped(loc),
        }
    }

    pub(super) fn block(&mut self, s: &CStmt) -> Vec<Stmt> {
        let mut out = Vec::new();
        self.stmt(s, &mut out);
        out
    }

    fn stmt(&mut self, s: &CStmt, out: &mut Vec<Stmt>) {
        match s {
            CStmt::Compound(stmts, _) => {
                for inner in stmts {
                    self.stmt(inner, out);
                }
            }
            CStmt::Decl(vars, _) => {
                for v in vars {
                    self.decl(v, out);
                }
            }
            CStmt::Expr(e) => self.expr_stmt(e, out),
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                loc,
            } => {
                let (kind, cond) = if self.is_guard(cond) {
                    (IfKind::Guard, self.through_affine_locals(cond))
                } else {
                    (IfKind::Data, cond.clone())
                };
                let cond = self.expr(&cond);
                let then_body = self.block(then_branch);
                let else_body = else_branch
                    .as_ref()
                    .map(|e| self.block(e))
                    .unwrap_or_default();
                match cond {
                    Some(cond) => out.push(Stmt::If {
                        cond,
                        kind,
                        then_body,
                        else_body,
                        loc: loc.clone(),
                    }),
                    None => self.dropped(loc),
                }
            }
            CStmt::For {
                init,
                cond,
                inc,
                body,
                loc,
            } => self.for_loop(init, cond, inc, body, loc, out),
            CStmt::Return(_, loc) => self.error(
                codes::BAD_RETURN,
                loc,
                "`return` before the end of the kernel",
            ),
            CStmt::Null(_) | CStmt::Rejected(_) => {}
        }
    }

    fn decl(&mut self, v: &CVarDecl, out: &mut Vec<Stmt>) {
        if v.is_static {
            self.rejected_keys.insert(v.key.clone());
            self.error(
                codes::STATIC_LOCAL,
                &v.loc,
                format!("`{}` is a static local variable", v.name),
            );
            return;
        }
        if self.iterator_keys.contains(&v.key) {
            // A variable only used as a loop iterator: each loop binds it.
            return;
        }
        match &v.ty {
            CType::Scalar(ty) => {
                let name = self.fresh_name(&v.name);
                self.bindings.insert(
                    v.key.clone(),
                    Binding::Scalar {
                        name: name.clone(),
                        ty: *ty,
                        class: VarClass::Local,
                    },
                );
                self.locals.push(Local {
                    name: name.clone(),
                    kind: LocalKind::Scalar { ty: *ty },
                    loc: v.loc.clone(),
                });
                if let Some(init) = &v.init {
                    // Read the initialiser before binding the name, so a
                    // self-reference cannot loop.
                    if !ty.is_float() && !self.written_keys.contains(&v.key) {
                        // Any polynomial: a subscript through it may be a
                        // linearised one (darknet's `int index = j*filters*spatial
                        // + i*spatial + k; x[index]`), which delinearisation
                        // splits; a bound through it must still be affine.
                        match self.poly(init) {
                            Ok(p) => {
                                if p.to_affine().is_some() {
                                    self.affine_inits.insert(v.key.clone(), init.clone());
                                }
                                self.affine_locals.insert(v.key.clone(), p);
                            }
                            // Said where it is used as a subscript.
                            Err(crate::affine::NotAffine::Indirect) => {
                                let why = crate::affine::NotAffine::Loaded {
                                    name: v.name.clone(),
                                    definition: super::histogram::c_text(init),
                                };
                                self.not_affine_locals.insert(v.key.clone(), why);
                            }
                            Err(_) => {}
                        }
                    }
                    match self.expr(init) {
                        Some(value) => out.push(Stmt::Assign {
                            target: LValue::Scalar { name, ty: *ty },
                            value: cast_to(*ty, value),
                            loc: v.loc.clone(),
                        }),
                        None => self.dropped(&v.loc),
                    }
                }
            }
            CType::Array { .. } => {
                if let Some(init) = &v.init {
                    self.rejected_keys.insert(v.key.clone());
                    self.error(
                        codes::INITIALIZER_LIST,
                        &init.loc,
                        format!("local array `{}` has an initialiser", v.name),
                    );
                    return;
                }
                let Some((elem, dims)) = self.declared_dims(v) else {
                    self.rejected_keys.insert(v.key.clone());
                    self.error(
                        codes::UNSUPPORTED_TYPE,
                        &v.loc,
                        format!(
                            "local `{}` has unsupported type `{}`",
                            v.name,
                            super::type_name(&v.ty)
                        ),
                    );
                    return;
                };
                let name = self.fresh_name(&v.name);
                self.bindings.insert(
                    v.key.clone(),
                    Binding::Array {
                        name: name.clone(),
                        elem,
                        ndims: dims.len(),
                        flat: false,
                    },
                );
                self.locals.push(Local {
                    name,
                    kind: LocalKind::Array(ArrayInfo {
                        elem,
                        dims,
                        storage: Storage::Declared,
                    }),
                    loc: v.loc.clone(),
                });
            }
            CType::Pointer { .. } => {
                self.rejected_keys.insert(v.key.clone());
                self.error(
                    codes::POINTER_ARITHMETIC,
                    &v.loc,
                    format!(
                        "local pointer `{}`: pointers derived inside the kernel may alias its arrays",
                        v.name
                    ),
                );
            }
            other => {
                self.rejected_keys.insert(v.key.clone());
                self.error(
                    codes::UNSUPPORTED_TYPE,
                    &v.loc,
                    format!(
                        "local `{}` has unsupported type `{}`",
                        v.name,
                        super::type_name(other)
                    ),
                );
            }
        }
    }

    /// The current value of an assignment target.
    fn read_back(&self, target: &LValue) -> Expr {
        match target {
            LValue::Scalar { name, ty } => {
                let class = self
                    .bindings
                    .values()
                    .find_map(|b| match b {
                        Binding::Scalar { name: n, class, .. } if n == name => Some(*class),
                        _ => None,
                    })
                    .unwrap_or(VarClass::Local);
                Expr {
                    ty: *ty,
                    kind: ExprKind::Var {
                        name: name.clone(),
                        class,
                    },
                }
            }
            LValue::Element { array, index, ty } => Expr {
                ty: *ty,
                kind: ExprKind::Load {
                    array: array.clone(),
                    index: index.clone(),
                },
            },
        }
    }

    fn target_type(target: &LValue) -> ScalarType {
        match target {
            LValue::Scalar { ty, .. } | LValue::Element { ty, .. } => *ty,
        }
    }

    /// `target = target op rhs` with C's conversions explicit.
    pub(super) fn compound(&self, target: &LValue, op: BinaryOp, rhs: Expr) -> Expr {
        let t = Self::target_type(target);
        let common = usual_arithmetic(t, rhs.ty);
        let current = cast_to(common, self.read_back(target));
        let sum = Expr {
            ty: common,
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(current),
                rhs: Box::new(cast_to(common, rhs)),
            },
        };
        cast_to(t, sum)
    }

    fn expr_stmt(&mut self, e: &CExpr, out: &mut Vec<Stmt>) {
        let loc = e.loc.clone();
        let inner = match &e.kind {
            CExprKind::Paren(_) => strip(e),
            _ => e,
        };
        match &inner.kind {
            CExprKind::Binary {
                op: CBinOp::Assign, ..
            } => self.assign_chain(inner, out),
            CExprKind::Binary {
                op: CBinOp::CompoundAssign(op),
                lhs,
                rhs,
            } => {
                if *op == ArithOp::Add && self.histogram(lhs, Some(rhs), &loc, out) {
                    return;
                }
                if let ArithOp::Shl | ArithOp::Shr = op {
                    // `x >>= c` is `x = (T)(x >> c)`, the shift in `x`'s
                    // promoted type.
                    let Some(target) = self.lvalue(lhs) else {
                        self.dropped(&loc);
                        return;
                    };
                    let t = Self::target_type(&target);
                    let current = cast_to(
                        usual_arithmetic(t, ScalarType::I32),
                        self.read_back(&target),
                    );
                    match self.shifted(current, *op == ArithOp::Shl, rhs, &loc) {
                        Some(v) => out.push(Stmt::Assign {
                            value: cast_to(t, v),
                            target,
                            loc,
                        }),
                        None => self.dropped(&loc),
                    }
                    return;
                }
                let target = self.lvalue(lhs);
                let value = self.expr(rhs);
                let (Some(target), Some(value)) = (target, value) else {
                    self.dropped(&loc);
                    return;
                };
                {
                    let op = match op {
                        ArithOp::Add => BinaryOp::Add,
                        ArithOp::Sub => BinaryOp::Sub,
                        ArithOp::Mul => BinaryOp::Mul,
                        ArithOp::Div => BinaryOp::Div,
                        ArithOp::Rem => BinaryOp::Rem,
                        // Lowered above; kept total without a panic.
                        ArithOp::Shl | ArithOp::Shr => {
                            self.dropped(&loc);
                            return;
                        }
                    };
                    let value = self.compound(&target, op, value);
                    out.push(Stmt::Assign { target, value, loc });
                }
            }
            CExprKind::Unary {
                op: op @ (CUnOp::PostInc | CUnOp::PreInc | CUnOp::PostDec | CUnOp::PreDec),
                arg,
            } => {
                if matches!(op, CUnOp::PostInc | CUnOp::PreInc)
                    && self.histogram(arg, None, &loc, out)
                {
                    return;
                }
                let Some(target) = self.lvalue(arg) else {
                    self.dropped(&loc);
                    return;
                };
                {
                    let t = Self::target_type(&target);
                    let common = usual_arithmetic(t, ScalarType::I32);
                    let op = if matches!(op, CUnOp::PostInc | CUnOp::PreInc) {
                        BinaryOp::Add
                    } else {
                        BinaryOp::Sub
                    };
                    let value = self.compound(&target, op, one(common));
                    out.push(Stmt::Assign { target, value, loc });
                }
            }
            _ => {
                // No effect on memory (or refused inside `expr`): lower it
                // only for its diagnostics.
                let _ = self.expr(inner);
            }
        }
    }

    /// `a = b = e;` (any number of simple assignments in a row): `e` is
    /// evaluated once and stored into the innermost target, then each
    /// outer target receives the value just stored (what the inner
    /// assignment expression yields), converted to its own type as C
    /// does. An assignment anywhere else inside an expression stays TL032.
    fn assign_chain(&mut self, e: &CExpr, out: &mut Vec<Stmt>) {
        // (target expression, location of its `=`), outermost first.
        let mut targets: Vec<(&CExpr, Loc)> = Vec::new();
        let mut cur = e;
        while let CExprKind::Binary {
            op: CBinOp::Assign,
            lhs,
            rhs,
        } = &strip(cur).kind
        {
            targets.push((lhs, strip(cur).loc.clone()));
            cur = rhs;
        }
        let lowered: Vec<Option<LValue>> = targets.iter().map(|(t, _)| self.lvalue(t)).collect();
        let value = self.expr(cur);
        let (Some(lvalues), Some(value)) = (lowered.into_iter().collect::<Option<Vec<_>>>(), value)
        else {
            self.dropped(&e.loc);
            return;
        };
        let mut value = value;
        for (target, (_, loc)) in lvalues.into_iter().zip(targets).rev() {
            let ty = Self::target_type(&target);
            let stored = cast_to(ty, value);
            let next = self.read_back(&target);
            out.push(Stmt::Assign {
                target,
                value: stored,
                loc,
            });
            value = next;
        }
    }

    /// Whether an `if` condition is affine in iterators and sizes.
    /// `c` with each affine local read as its initialiser (repeatedly: one
    /// may read another). Exact: such a local and everything its
    /// initialiser reads are never assigned after it (iterators aside,
    /// which its declaration sits inside).
    fn through_affine_locals(&self, c: &CExpr) -> CExpr {
        let mut c = c.clone();
        for _ in 0..8 {
            let read: Vec<(&String, &CExpr)> = self
                .affine_inits
                .iter()
                .filter(|(key, _)| c.refers_to(key))
                .collect();
            if read.is_empty() {
                break;
            }
            for (key, init) in read {
                c = crate::induction::replace_reads(&c, key, init);
            }
        }
        c
    }

    fn is_guard(&self, c: &CExpr) -> bool {
        let c = strip(c);
        match &c.kind {
            CExprKind::Binary { op, lhs, rhs } => match op {
                CBinOp::Lt | CBinOp::Gt | CBinOp::Le | CBinOp::Ge | CBinOp::Eq | CBinOp::Ne => {
                    self.affine(lhs).is_ok() && self.affine(rhs).is_ok()
                }
                CBinOp::LAnd | CBinOp::LOr => self.is_guard(lhs) && self.is_guard(rhs),
                _ => false,
            },
            CExprKind::Unary {
                op: CUnOp::LNot,
                arg,
            } => self.is_guard(arg),
            _ => false,
        }
    }
}
