//! A `return` at the end of a branch of the function's own statements:
//! BLAS-style code returns from the case it handles first (`if (incx == 1
//! && incy == 1) { …; return dtemp; }` then the general case), and code
//! that picks its computation by a flag may return from both branches.
//! The loop IR has one exit, at the end, so such a function is read as
//! the `if` with the statements after it as its `else`, each `return e;`
//! an assignment `result = e;` to one local (of the function's type: C
//! converts a returned value as if by assignment), and `return result;`
//! last. Exact: the statements after the `if` ran only when it did not
//! return.
//!
//! Taken only where every block either always returns (it ends in a
//! `return`, or in an `if` whose branches both always return, with no
//! `return` before) or never does: a branch that returns on some paths
//! only (`if (m != 0) { …; if (n < 5) return s; }`) would need the
//! statements after it guarded too, and stays refused (TL037).

use crate::hoist_helpers::returns_early;
use crate::syntax::{
    CBinOp, CExpr, CExprKind, CFunction, CStmt, CType, CVarDecl, DeclRef, RefTarget,
};

/// The function with its branch returns folded (see the module
/// documentation); `None` when it has none, or one this does not take.
pub(super) fn fold(func: &CFunction) -> Option<CFunction> {
    // A trailing `return` is the function's own; one inside an `if` is ours.
    let returns = |s: &CStmt| returns_early(s) && !matches!(s, CStmt::Return(..));
    if !func.body.iter().any(returns) {
        return None;
    }
    let result = match func.result {
        CType::Void => None,
        _ => Some(DeclRef {
            name: "result".to_string(),
            key: format!("{}\u{1}result", func.key),
            target: RefTarget::Local,
        }),
    };
    let mut body = Vec::new();
    if let Some(r) = &result {
        body.push(CStmt::Decl(
            vec![CVarDecl {
                name: r.name.clone(),
                key: r.key.clone(),
                ty: func.result.clone(),
                dims: Vec::new(),
                init: None,
                is_static: false,
                loc: func.loc.clone(),
            }],
            func.loc.clone(),
        ));
    }
    body.extend(fold_block(&func.body, &result, &func.result)?);
    if let Some(r) = &result {
        body.push(CStmt::Return(
            Some(reference(r, &func.result, &func.loc)),
            func.loc.clone(),
        ));
    }
    Some(CFunction {
        body,
        ..func.clone()
    })
}

/// How a block leaves: never by a `return`, always, or on some paths.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Exit {
    Never,
    Always,
    Sometimes,
}

fn exit_of(stmts: &[CStmt]) -> Exit {
    let Some(last) = stmts.iter().rposition(|s| !matches!(s, CStmt::Null(_))) else {
        return Exit::Never;
    };
    let before = stmts[..last].iter().any(returns_early);
    match (&stmts[last], before) {
        (_, true) => Exit::Sometimes,
        (CStmt::Return(..), false) => Exit::Always,
        (
            CStmt::If {
                then_branch,
                else_branch: Some(e),
                ..
            },
            false,
        ) if exit_of(items(then_branch)) == Exit::Always && exit_of(items(e)) == Exit::Always => {
            Exit::Always
        }
        (s, false) if returns_early(s) => Exit::Sometimes,
        _ => Exit::Never,
    }
}

/// A block's statements, a single statement as a list of one.
pub(super) fn items(s: &CStmt) -> &[CStmt] {
    match s {
        CStmt::Compound(items, _) => items,
        other => std::slice::from_ref(other),
    }
}

/// `stmts` with the first `if` that returns made the `if` with the rest
/// as its `else`, and every `return e;` an assignment to `result`.
fn fold_block(stmts: &[CStmt], result: &Option<DeclRef>, ty: &CType) -> Option<Vec<CStmt>> {
    let Some(k) = stmts.iter().position(returns_early) else {
        return Some(stmts.to_vec());
    };
    let mut out = stmts[..k].to_vec();
    let rest = &stmts[k + 1..];
    match &stmts[k] {
        CStmt::Return(value, loc) => {
            if rest.iter().any(|s| !matches!(s, CStmt::Null(_))) {
                return None;
            }
            out.extend(assign(result, value.as_ref(), ty, loc));
        }
        CStmt::If {
            cond,
            then_branch,
            else_branch,
            loc,
        } => {
            let then_items = items(then_branch);
            let else_items = else_branch.as_deref().map_or(&[][..], items);
            let (then_exit, else_exit) = (exit_of(then_items), exit_of(else_items));
            let (mut then_block, mut else_block) = (then_items.to_vec(), else_items.to_vec());
            match (then_exit, else_exit) {
                (Exit::Always, Exit::Always) if exit_of(rest) == Exit::Never => {}
                (Exit::Always, Exit::Never) => else_block.extend_from_slice(rest),
                (Exit::Never, Exit::Always) => then_block.extend_from_slice(rest),
                _ => return None,
            }
            out.push(CStmt::If {
                cond: cond.clone(),
                then_branch: Box::new(CStmt::Compound(
                    fold_block(&then_block, result, ty)?,
                    loc.clone(),
                )),
                else_branch: Some(Box::new(CStmt::Compound(
                    fold_block(&else_block, result, ty)?,
                    loc.clone(),
                ))),
                loc: loc.clone(),
            });
        }
        _ => return None,
    }
    Some(out)
}

/// `result = value;` (nothing for a `void` function's `return;`).
fn assign(
    result: &Option<DeclRef>,
    value: Option<&CExpr>,
    ty: &CType,
    loc: &crate::ir::Loc,
) -> Option<CStmt> {
    let (r, v) = (result.as_ref()?, value?);
    Some(CStmt::Expr(CExpr {
        kind: CExprKind::Binary {
            op: CBinOp::Assign,
            lhs: Box::new(reference(r, ty, loc)),
            rhs: Box::new(v.clone()),
        },
        ty: ty.clone(),
        loc: loc.clone(),
    }))
}

fn reference(r: &DeclRef, ty: &CType, loc: &crate::ir::Loc) -> CExpr {
    CExpr {
        kind: CExprKind::Ref(r.clone()),
        ty: ty.clone(),
        loc: loc.clone(),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    /// BLAS-style: the unit-stride case returns from its branch, the
    /// general case follows; read as one `if` with the rest as its `else`,
    /// the index variables of the general case set in that branch.
    #[test]
    fn a_branch_that_returns_takes_the_rest_as_its_else() {
        let body = lowered(
            "double f(int n, const double *x, int inc, int unit) {
               double s = 0.0; int i, ix;
               if (unit == 1) { for (i = 0; i < n; i++) s += x[i]; return s; }
               ix = 0;
               for (i = 0; i < n; i++) { s += x[ix]; ix += inc; }
               return s;
             }",
        )
        .expect("lowers");
        assert!(body.contains("result = s else"), "{body}");
        assert!(body.ends_with("return result"), "{body}");
        // `ix` closed over the loop and set in the branch: an affine subscript.
        assert!(body.contains("s = (s + x[i_1][0]):f64"), "{body}");
    }

    /// A `void` function returning from both branches, and one whose
    /// branch returns on some paths only (still refused: the statements
    /// after it would need the same test).
    #[test]
    fn returns_on_every_path_fold_and_some_paths_stay_refused() {
        let both = lowered(
            "void f(int n, float *y, int mode) {
               if (mode) { for (int i = 0; i < n; i++) y[i] = 1.0f; return; }
               else { for (int i = 0; i < n; i++) y[i] = 2.0f; return; }
             }",
        );
        assert!(both.is_ok(), "{both:?}");
        let some = lowered(
            "float f(int n, const float *x, int mode) {
               float s = 0.0f;
               if (mode) { for (int i = 0; i < n; i++) s += x[i]; if (n < 5) return s; }
               for (int i = 0; i < n; i++) s += x[i] * x[i];
               return s;
             }",
        );
        assert_eq!(some, Err(vec!["TL037"]));
    }
}
