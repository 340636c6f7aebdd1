//! A helper's early returns as one conditional expression.
//!
//! darknet's activations return from several places:
//!
//! ```c
//! static inline float lhtan_activate(float x) {
//!     if (x < 0) return .001*x;
//!     if (x > 1) return .001*(x-1) + 1;
//!     return x;
//! }
//! ```
//!
//! is `x < 0 ? .001*x : (x > 1 ? .001*(x-1) + 1 : x)`, which inlines like a
//! `return expr;` helper. The statements before the first early return
//! stay statements (the helper is then hoisted); from the first early
//! return on, every statement must be an `if` whose branches end in a
//! `return` or fall through to the next statement, so the value each path
//! takes is a nested conditional. A switch whose cases all return reads
//! as such an `if` chain (`reader::switch`).

use crate::hoist_helpers::returns_early;
use crate::syntax::{CExpr, CExprKind, CStmt};

/// `(stmts, value)` with the early returns in `stmts` folded into `value`
/// (the final `return`'s expression, `None` when the body ends in an `if`
/// all of whose paths return); `None` when a path does something other
/// than return or fall through after the first early return, or falls off
/// the end.
pub(crate) fn fold_early_returns(
    stmts: Vec<CStmt>,
    value: Option<CExpr>,
) -> Option<(Vec<CStmt>, CExpr)> {
    let first = stmts.iter().position(returns_early)?;
    let mut kept = stmts;
    let suffix = kept.split_off(first);
    let value = fold_block(&suffix, value)?;
    Some((kept, value))
}

/// The value `stmts` give when every path ends in a `return` or falls
/// through to `after` (`None`: falling through is not allowed).
fn fold_block(stmts: &[CStmt], after: Option<CExpr>) -> Option<CExpr> {
    stmts
        .iter()
        .rev()
        .try_fold(after, |after, s| value_of(s, after).map(Some))?
}

fn value_of(s: &CStmt, after: Option<CExpr>) -> Option<CExpr> {
    match s {
        CStmt::Return(Some(e), _) => Some(e.clone()),
        CStmt::Compound(items, _) => fold_block(items, after),
        CStmt::Null(_) => after,
        CStmt::If {
            cond,
            then_branch,
            else_branch,
            ..
        } => {
            let then_value = value_of(then_branch, after.clone())?;
            let else_value = match else_branch {
                Some(e) => value_of(e, after)?,
                None => after?,
            };
            Some(conditional(cond, then_value, else_value))
        }
        _ => None,
    }
}

/// `cond ? then_value : else_value`, typed as the values (both already
/// converted to the helper's result type by the `return`s).
fn conditional(cond: &CExpr, then_value: CExpr, else_value: CExpr) -> CExpr {
    CExpr {
        ty: then_value.ty.clone(),
        loc: cond.loc.clone(),
        kind: CExprKind::Conditional {
            cond: Box::new(cond.clone()),
            then_value: Box::new(then_value),
            else_value: Box::new(else_value),
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn returns_from_several_places_inline_as_a_conditional() {
        let body = lowered(
            "static inline float lhtan(float x)\n\
             {\n    if (x < 0) return .001*x;\n    if (x > 1) return .001*(x-1) + 1;\n    return x;\n}\n\
             void f(float *x, int n) { for (int i = 0; i < n; i++) x[i] = lhtan(x[i]); }\n",
        )
        .expect("lowers");
        assert!(body.contains('?'), "{body}");
    }

    #[test]
    fn an_else_chain_and_statements_before_fold_too() {
        let body = lowered(
            "static inline float band(float x)\n\
             {\n    float y = 2*x;\n    if (y < 0) return 0; else if (y > 1) return 1; else return y;\n}\n\
             void f(float *x, int n) { for (int i = 0; i < n; i++) x[i] = band(x[i]); }\n",
        )
        .expect("lowers");
        assert!(body.contains('?'), "{body}");
    }
}
