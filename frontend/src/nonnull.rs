//! Optional array parameters: C code passes `NULL` for a buffer it does not
//! have and tests the pointer before use (`if (da) da[i] += …;` in
//! darknet, `bias != NULL ? bias[o] : 0.0f` in llm.c). A tensor program
//! has no null array, so the kernel is read for the case where every
//! tested pointer parameter is set: each test folds to its value then, and
//! the lifted program states the assumption as a precondition (the C's
//! `NULL` case is not lifted; see [`crate::ir::Kernel::preconditions`]).
//!
//! The tests recognised are a pointer parameter's truth value (`p`, `!p`)
//! and its comparison with a null constant (`p != NULL`, `p == 0`,
//! `NULL != p`), in `if` conditions, conditional expressions and the
//! operands of `!`, `&&` and `||`. An `if` or a conditional whose condition
//! becomes a constant is replaced by the branch taken.

use crate::ir::{Loc, ScalarType};
use crate::syntax::{CBinOp, CExpr, CExprKind, CFunction, CStmt, CType, CUnOp, IntValue};

/// A function with its null tests folded, and the parameters assumed set
/// with the first place each is tested.
pub(crate) struct Folded {
    pub func: CFunction,
    pub assumed: Vec<(String, Loc)>,
}

/// `None` when no pointer parameter is tested (the common case).
pub(crate) fn assume_set_pointers(func: &CFunction) -> Option<Folded> {
    let pointers: Vec<(String, String)> = func
        .params
        .iter()
        .filter(|p| matches!(p.ty, CType::Pointer { .. }))
        .map(|p| (p.key.clone(), p.name.clone()))
        .collect();
    if pointers.is_empty() {
        return None;
    }
    let mut folder = Folder {
        pointers,
        assumed: Vec::new(),
    };
    let body: Vec<CStmt> = func.body.iter().map(|s| folder.stmt(s)).collect();
    if folder.assumed.is_empty() {
        return None;
    }
    Some(Folded {
        func: CFunction {
            body,
            ..func.clone()
        },
        assumed: folder.assumed,
    })
}

struct Folder {
    /// Pointer parameters: (declaration key, name).
    pointers: Vec<(String, String)>,
    assumed: Vec<(String, Loc)>,
}

impl Folder {
    fn stmt(&mut self, s: &CStmt) -> CStmt {
        match s {
            CStmt::Compound(items, loc) => {
                CStmt::Compound(items.iter().map(|s| self.stmt(s)).collect(), loc.clone())
            }
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                loc,
            } => {
                let cond = self.condition(cond);
                match constant(&cond) {
                    Some(true) => self.stmt(then_branch),
                    Some(false) => else_branch
                        .as_ref()
                        .map_or(CStmt::Null(loc.clone()), |b| self.stmt(b)),
                    None => CStmt::If {
                        cond,
                        then_branch: Box::new(self.stmt(then_branch)),
                        else_branch: else_branch.as_ref().map(|b| Box::new(self.stmt(b))),
                        loc: loc.clone(),
                    },
                }
            }
            CStmt::For {
                init,
                cond,
                inc,
                body,
                loc,
            } => CStmt::For {
                init: Box::new(self.stmt(init)),
                cond: self.expr(cond),
                inc: self.expr(inc),
                body: Box::new(self.stmt(body)),
                loc: loc.clone(),
            },
            other => other.map_exprs(&mut |e| self.expr(e)),
        }
    }

    /// `e` with its null tests folded (children first).
    fn expr(&mut self, e: &CExpr) -> CExpr {
        if let Some(value) = self.null_test(e) {
            return truth(value, &e.loc);
        }
        let mut out = e.clone();
        match &mut out.kind {
            // Operands read for their truth value: a bare pointer is a test.
            CExprKind::Conditional { cond: x, .. }
            | CExprKind::Unary {
                op: CUnOp::LNot,
                arg: x,
            } => {
                let tested = self.condition(x);
                out.map_children(&mut |c| self.expr(c));
                replace_first(&mut out, tested);
            }
            CExprKind::Binary {
                op: CBinOp::LAnd | CBinOp::LOr,
                lhs,
                rhs,
            } => {
                **lhs = self.condition(lhs);
                **rhs = self.condition(rhs);
            }
            _ => out.map_children(&mut |c| self.expr(c)),
        }
        fold(out)
    }

    /// A condition: a pointer parameter's truth value, or any expression.
    fn condition(&mut self, e: &CExpr) -> CExpr {
        match self.pointer(e) {
            Some(name) => {
                self.note(name, &e.loc);
                truth(true, &e.loc)
            }
            None => self.expr(e),
        }
    }

    fn note(&mut self, name: String, loc: &Loc) {
        if !self.assumed.iter().any(|(n, _)| *n == name) {
            self.assumed.push((name, loc.clone()));
        }
    }

    /// The value of `e` when it tests a pointer parameter against null,
    /// noting the assumption.
    fn null_test(&mut self, e: &CExpr) -> Option<bool> {
        let (key, set) = match &e.stripped().kind {
            CExprKind::Binary {
                op: op @ (CBinOp::Ne | CBinOp::Eq),
                lhs,
                rhs,
            } => {
                let key = match (self.pointer(lhs), self.pointer(rhs)) {
                    (Some(k), None) if is_null(rhs) => k,
                    (None, Some(k)) if is_null(lhs) => k,
                    _ => return None,
                };
                (key, *op == CBinOp::Ne)
            }
            CExprKind::Unary {
                op: CUnOp::LNot,
                arg,
            } => (self.pointer(arg)?, false),
            _ => return None,
        };
        self.note(key, &e.loc);
        Some(set)
    }

    /// The name of the pointer parameter `e` reads, if it is one.
    fn pointer(&self, e: &CExpr) -> Option<String> {
        let CExprKind::Ref(r) = &e.stripped().kind else {
            return None;
        };
        self.pointers
            .iter()
            .find(|(key, _)| *key == r.key)
            .map(|(_, name)| name.clone())
    }
}

/// Puts `tested` in place of the first operand of a conditional or a
/// negation (the one read for its truth value).
fn replace_first(e: &mut CExpr, tested: CExpr) {
    match &mut e.kind {
        CExprKind::Conditional { cond: x, .. } | CExprKind::Unary { arg: x, .. } => **x = tested,
        _ => {}
    }
}

/// Whether `e` is a null pointer constant (`0`, `NULL`, `(void *)0`).
fn is_null(e: &CExpr) -> bool {
    match &e.kind {
        CExprKind::Paren(x) | CExprKind::Implicit(x) | CExprKind::Cast(x) => is_null(x),
        CExprKind::Int(IntValue::Fits(0)) => true,
        _ => false,
    }
}

fn truth(value: bool, loc: &Loc) -> CExpr {
    CExpr {
        kind: CExprKind::Int(IntValue::Fits(i64::from(value))),
        ty: CType::Scalar(ScalarType::I32),
        loc: loc.clone(),
    }
}

/// The truth value of a folded constant condition.
fn constant(e: &CExpr) -> Option<bool> {
    match &e.stripped().kind {
        CExprKind::Int(IntValue::Fits(v)) => Some(*v != 0),
        _ => None,
    }
}

/// `e` with a constant condition, negation or logical operand folded.
fn fold(e: CExpr) -> CExpr {
    let loc = e.loc.clone();
    match &e.kind {
        CExprKind::Conditional {
            cond,
            then_value,
            else_value,
        } => match constant(cond) {
            Some(true) => (**then_value).clone(),
            Some(false) => (**else_value).clone(),
            None => e,
        },
        CExprKind::Unary {
            op: CUnOp::LNot,
            arg,
        } => constant(arg).map_or(e.clone(), |v| truth(!v, &loc)),
        CExprKind::Binary {
            op: op @ (CBinOp::LAnd | CBinOp::LOr),
            lhs,
            rhs,
        } => {
            let absorbing = *op == CBinOp::LOr;
            match (constant(lhs), constant(rhs)) {
                (Some(v), _) if v == absorbing => truth(v, &loc),
                (Some(_), None) => logical(rhs),
                (None, Some(v)) if v == absorbing => truth(v, &loc),
                (None, Some(_)) => logical(lhs),
                (Some(_), Some(v)) => truth(v, &loc),
                (None, None) => e.clone(),
            }
        }
        _ => e,
    }
}

/// `x` as the 0/1 value C's `&&` would give it (`x != 0`).
fn logical(x: &CExpr) -> CExpr {
    CExpr {
        kind: CExprKind::Binary {
            op: CBinOp::Ne,
            lhs: Box::new(x.clone()),
            rhs: Box::new(truth(false, &x.loc)),
        },
        ty: CType::Scalar(ScalarType::I32),
        loc: x.loc.clone(),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn a_tested_pointer_is_read_as_set_and_its_branch_kept() {
        let source = "void f(int n, float *d, const float *x) {
            for (int i = 0; i < n; i++) { if (d) d[i] += x[i]; }
        }";
        assert_eq!(
            lowered(source).expect("lowers"),
            "for i in 0..n step 1 d[i] = (d[i] + x[i]):f32"
        );
    }

    #[test]
    fn comparisons_with_null_fold_both_ways() {
        let source = "#include <stddef.h>
        void f(int n, float *y, const float *b) {
            for (int i = 0; i < n; i++) y[i] = (b != NULL) ? b[i] : 0.0f;
            for (int i = 0; i < n; i++) if (NULL == b || !b) y[i] = 1.0f;
        }";
        // The second loop's `if` is never taken: an empty loop stays.
        assert_eq!(
            lowered(source).expect("lowers"),
            "for i in 0..n step 1 y[i] = b[i] for i_1 in 0..n step 1"
        );
    }

    #[test]
    fn the_assumption_is_stated_as_a_precondition() {
        let source = "void f(int n, float *d) { for (int i = 0; i < n; i++) if (d) d[i] = 0; }";
        let tu = crate::test_util::extracted(source, &crate::Options::default()).expect("lowers");
        let stated = tu.kernels[0].preconditions();
        assert_eq!(stated.len(), 1);
        assert!(stated[0].starts_with("`d` is not NULL"), "{stated:?}");
    }
}
