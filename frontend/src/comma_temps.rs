//! Temporaries set inside an expression by the comma operator, as f2c
//! writes `abs` of an expression (`dabs` and `fabsf` need a value read
//! once): `stemp += (r__1 = sx[i__], fabsf(r__1));`.
//!
//! A comma `(t = v, rest)` that the statement always evaluates (not in the
//! right operand of `&&`, `||` nor in a branch of `?:`), where `t` is a
//! local, `v` stores and calls nothing, and the statement reads `t`
//! nowhere but in `rest`, is the statement `t = v;` followed by the
//! statement with `rest` in its place: `r__1 = sx[i__]; stemp +=
//! fabsf(r__1);`. The value is the same, `t` holds the same afterwards,
//! and nothing else the statement evaluates can see the difference. Any
//! other comma is left for the lowering to refuse.

use crate::syntax::{CBinOp, CExpr, CExprKind, CStmt, RefTarget};

/// `stmts` with the comma temporaries of each statement's own expression
/// (an expression statement, an `if` condition, a returned value) set by
/// statements of their own just before it.
pub(crate) fn hoist(stmts: Vec<CStmt>) -> Vec<CStmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        let mut set = Vec::new();
        let s = match s {
            CStmt::Expr(e) => CStmt::Expr(unfold(&e, &e, &mut set)),
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                loc,
            } => CStmt::If {
                cond: unfold(&cond, &cond, &mut set),
                then_branch,
                else_branch,
                loc,
            },
            CStmt::Return(Some(e), loc) => CStmt::Return(Some(unfold(&e, &e, &mut set)), loc),
            other => other,
        };
        out.extend(set.into_iter().map(CStmt::Expr));
        out.push(s);
    }
    out
}

/// `e` (part of the statement expression `whole`) with each comma it
/// always evaluates whose left side is a temporary's assignment replaced
/// by its right side, the assignments pushed to `set` in order.
fn unfold(e: &CExpr, whole: &CExpr, set: &mut Vec<CExpr>) -> CExpr {
    match &e.kind {
        CExprKind::Binary {
            op: CBinOp::Unsupported(","),
            lhs,
            rhs,
        } if temporary(lhs, rhs, whole) => {
            set.push((**lhs).clone());
            let rest = unfold(rhs, whole, set);
            CExpr {
                kind: CExprKind::Paren(Box::new(rest)),
                ty: e.ty.clone(),
                loc: e.loc.clone(),
            }
        }
        // Only the first operand is always evaluated.
        CExprKind::Binary {
            op: CBinOp::LAnd | CBinOp::LOr,
            lhs,
            ..
        } => {
            let mut out = e.clone();
            let first = unfold(lhs, whole, set);
            if let CExprKind::Binary { lhs: l, .. } = &mut out.kind {
                **l = first;
            }
            out
        }
        CExprKind::Conditional { cond, .. } => {
            let mut out = e.clone();
            let first = unfold(cond, whole, set);
            if let CExprKind::Conditional { cond: c, .. } = &mut out.kind {
                **c = first;
            }
            out
        }
        _ => {
            let mut out = e.clone();
            out.map_children(&mut |c| unfold(c, whole, set));
            out
        }
    }
}

/// Whether `lhs` of the comma `(lhs, rest)` in `whole` is `t = v` for a
/// local `t`, `v` free of stores and calls, and `whole` reads `t` only
/// there and in `rest`.
fn temporary(lhs: &CExpr, rest: &CExpr, whole: &CExpr) -> bool {
    let Some((t, v)) = lhs.assigned_variable() else {
        return false;
    };
    t.target == RefTarget::Local
        && v.is_pure()
        && whole.count_refs(&t.key) == lhs.count_refs(&t.key) + rest.count_refs(&t.key)
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn a_temporary_set_by_a_comma_is_set_just_before_its_statement() {
        let comma = lowered(
            "#include <math.h>
             float f(int n, const float *x) {
               float s = 0.f, t;
               for (int i = 0; i < n; i++) s += (t = x[i], fabsf(t));
               return s;
             }",
        );
        let plain = lowered(
            "#include <math.h>
             float f(int n, const float *x) {
               float s = 0.f, t;
               for (int i = 0; i < n; i++) { t = x[i]; s += fabsf(t); }
               return s;
             }",
        );
        assert!(plain.is_ok(), "{plain:?}");
        assert_eq!(comma, plain);
    }

    #[test]
    fn a_comma_evaluated_only_sometimes_stays_refused() {
        let guarded = lowered(
            "#include <math.h>
             void f(int n, const float *x, float *y) {
               float t;
               for (int i = 0; i < n; i++) y[i] = (x[i] > 0 && (t = x[i], fabsf(t)) > 1) ? 1.f : 0.f;
             }",
        );
        assert!(guarded.is_err(), "{guarded:?}");
    }
}
