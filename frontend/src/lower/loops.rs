//! `for` loops: the header is matched against the accepted forms and
//! normalised to an iterator, an affine start, an exclusive affine end and
//! a constant step; the body is lowered with the iterator bound.

use super::{strip, Binding, Lowerer};
use crate::affine::{NotAffine, Poly};
use crate::diagnostics as codes;
use crate::ir::*;
use crate::ir_rewrite::difference;
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
            guards,
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
        let mut body = self.block(body);
        self.bindings.remove(&key);
        if let Some(cond) = self.bounds_test(&name, ty, step, &guards) {
            body = vec![Stmt::If {
                cond,
                kind: IfKind::Guard,
                then_body: body,
                else_body: Vec::new(),
                loc: loc.clone(),
            }];
        }
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
        // Condition: one bound, or a conjunction of bounds (a tile's `i <
        // ii + T && i < n`, `i < MIN(ii + T, n)`): the first whose distance
        // from the start is constant is the loop's end, the others guards.
        let parts = self.bound_conjuncts(cond);
        let mut bounds = Vec::new();
        for part in &parts {
            let before = self.diagnostics.len();
            match self.loop_condition(part, &key, &c_name, ty) {
                Some(b) => bounds.push(b),
                // A conjunct that is no bound of the iterator: the whole
                // condition is reported as it is.
                None if parts.len() > 1 => {
                    self.diagnostics.truncate(before);
                    return self.bad_for(
                        &cond.loc,
                        &format!("the condition must be `{c_name} < bound` (or <=, >, >=, !=), or such bounds joined by `&&`"),
                    );
                }
                None => return None,
            }
        }
        // Increment.
        let step = self.loop_step(inc, &key, &c_name)?;
        // `i != x` stops the loop at `x` but holds again after it: no guard.
        if bounds.len() > 1 && bounds.iter().any(|(op, _)| *op == CBinOp::Ne) {
            return self.bad_for(
                &cond.loc,
                &format!("`{c_name} != bound` cannot be joined with other bounds by `&&`"),
            );
        }
        let mut ends = Vec::new();
        for (op, bound) in bounds {
            ends.push(self.exclusive_end(op, bound, step, &c_name, &cond.loc)?);
        }
        let at = ends
            .iter()
            .position(|e| difference(e, &start).as_constant().is_some())
            .unwrap_or(0);
        let end = ends.remove(at);
        Some(LoopHeader {
            key,
            c_name,
            ty,
            start,
            end,
            step,
            guards: ends,
        })
    }

    /// The test that the iterator `name` is before each of the `ends`
    /// (`i < n` inside `for i in ii..ii + T`); `None` for no ends.
    fn bounds_test(&self, name: &str, ty: ScalarType, step: i64, ends: &[Affine]) -> Option<Expr> {
        let iterators: Vec<String> = self.loop_bounds.keys().cloned().collect();
        let int = |kind| Expr {
            ty: ScalarType::I32,
            kind,
        };
        let mut tests = ends.iter().map(|end| {
            int(ExprKind::Binary {
                op: if step > 0 { BinaryOp::Lt } else { BinaryOp::Gt },
                lhs: Box::new(Expr {
                    ty,
                    kind: ExprKind::Var {
                        name: name.to_string(),
                        class: VarClass::Iter,
                    },
                }),
                rhs: Box::new(crate::ir_rewrite::affine_expr(end, ty, &iterators)),
            })
        });
        let first = tests.next()?;
        Some(tests.fold(first, |a, b| {
            int(ExprKind::Binary {
                op: BinaryOp::And,
                lhs: Box::new(a),
                rhs: Box::new(b),
            })
        }))
    }

    /// One bound of a loop condition, `lhs op rhs` with `lhs - rhs` affine
    /// and the iterator (`key`) in it with coefficient 1 or -1, as `(op,
    /// bound)` with the iterator on the left (`n > i` is `i < n`).
    fn loop_condition(
        &mut self,
        cond: &CExpr,
        key: &str,
        c_name: &str,
        ty: ScalarType,
    ) -> Option<(CBinOp, Affine)> {
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
            key.to_string(),
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
        self.bindings.remove(key);
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
        Some((op, bound))
    }

    /// The exclusive end a bound gives a loop stepping by `step`.
    fn exclusive_end(
        &mut self,
        op: CBinOp,
        bound: Affine,
        step: i64,
        c_name: &str,
        at: &Loc,
    ) -> Option<Affine> {
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
                    at,
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
            self.error(codes::LITERAL_OVERFLOW, at, "loop bound overflows 64 bits");
            return None;
        };
        Some(end)
    }

    /// The bounds a loop condition joins with `&&`, a `MIN` macro's
    /// conditional (`i < (a < b ? a : b)`) read as `i < a && i < b`.
    fn bound_conjuncts(&self, cond: &CExpr) -> Vec<CExpr> {
        let c = strip(cond);
        match &c.kind {
            CExprKind::Binary {
                op: CBinOp::LAnd,
                lhs,
                rhs,
            } => {
                let mut out = self.bound_conjuncts(lhs);
                out.extend(self.bound_conjuncts(rhs));
                out
            }
            CExprKind::Binary { op, lhs, rhs } if matches!(op, CBinOp::Lt | CBinOp::Le) => {
                match self.min_of(rhs) {
                    Some((a, b)) => [a, b]
                        .into_iter()
                        .map(|side| CExpr {
                            kind: CExprKind::Binary {
                                op: *op,
                                lhs: lhs.clone(),
                                rhs: Box::new(side),
                            },
                            ..c.clone()
                        })
                        .collect(),
                    None => vec![c.clone()],
                }
            }
            _ => vec![c.clone()],
        }
    }

    /// `(a, b)` when `e` is the smaller of them as a conditional spells it
    /// (`a < b ? a : b`, `a <= b ? a : b`, `b > a ? a : b`, …), the sides
    /// compared as affine values.
    fn min_of(&self, e: &CExpr) -> Option<(CExpr, CExpr)> {
        let CExprKind::Conditional {
            cond,
            then_value,
            else_value,
        } = &strip(e).kind
        else {
            return None;
        };
        let CExprKind::Binary { op, lhs, rhs } = &strip(cond).kind else {
            return None;
        };
        let same =
            |x: &CExpr, y: &CExpr| matches!((self.poly(x), self.poly(y)), (Ok(p), Ok(q)) if p == q);
        // `x < y ? x : y` and `y > x ? x : y` pick the smaller.
        let (small, large) = match op {
            CBinOp::Lt | CBinOp::Le => (lhs, rhs),
            CBinOp::Gt | CBinOp::Ge => (rhs, lhs),
            _ => return None,
        };
        (same(small, then_value) && same(large, else_value))
            .then(|| ((**then_value).clone(), (**else_value).clone()))
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
    /// Exclusive ends of the other bounds a `&&` condition joins: the body
    /// runs only before each (a guard; the bounds only tighten as the
    /// iterator moves, so the C stops where the first fails).
    guards: Vec<Affine>,
}

#[cfg(test)]
mod tests {
    use crate::test_util::{dumped_body, lowered};

    /// A tile's loop, `i < ii + 32 && i < n`: the tile's constant extent
    /// is the loop's end, the array's end a guard around the body; the
    /// order of the two bounds does not matter.
    #[test]
    fn a_tile_clipped_by_a_conjunction_is_a_guarded_loop() {
        for cond in [
            "i < ii + 32 && i < n",
            "i < n && i < ii + 32",
            "i <= n - 1 && ii + 32 > i",
        ] {
            let source = format!(
                "void f(int n, float *y) {{
                   for (int ii = 0; ii < n; ii += 32)
                     for (int i = ii; {cond}; i++) y[i] = 0.0f;
                 }}"
            );
            let body = lowered(&source).expect("lowers");
            assert!(
                body.contains("for i in ii..ii + 32 step 1 if guard (i < n):i32 y[i] = 0.0f"),
                "{cond}: {body}"
            );
        }
    }

    /// `i < MIN(a, b)` through the usual macro is `i < a && i < b`; so is
    /// a conditional written the other way round.
    #[test]
    fn a_min_macro_bound_is_a_guarded_loop() {
        for min in ["((a) < (b) ? (a) : (b))", "((b) > (a) ? (a) : (b))"] {
            let source = format!(
                "#define MIN(a, b) {min}
                 void f(int n, float *y) {{
                   for (int ii = 0; ii < n; ii += 8)
                     for (int i = ii; i < MIN(ii + 8, n); i++) y[i] = 1.0f;
                 }}"
            );
            let body = dumped_body(&source).expect("lowers");
            assert!(body.contains("if guard (i < n)"), "{min}: {body}");
        }
        // A conditional that is the larger of the two is no bound.
        let source = "void f(int n, int m, float *y) {
                        for (int i = 0; i < (n < m ? m : n); i++) y[i] = 1.0f;
                      }";
        assert_eq!(lowered(source), Err(vec!["TL015"]));
    }

    /// `&&` with a test that is no bound of the iterator (data, `!=`)
    /// stays refused, with the reason.
    #[test]
    fn a_conjunction_with_no_bound_in_it_is_refused() {
        for cond in ["i < n && y[i] > 0.0f", "i < n && i != m"] {
            let source = format!(
                "void f(int n, int m, float *y) {{ for (int i = 0; {cond}; i++) y[i] = 1.0f; }}"
            );
            assert_eq!(lowered(&source), Err(vec!["TL014"]), "{cond}");
        }
    }
}
