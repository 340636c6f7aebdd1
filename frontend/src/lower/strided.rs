//! A loop stepping by a parameter to a multiple of it, behind a guard that
//! makes the step positive:
//!
//! ```c
//! if (n <= 0 || incx <= 0) return;
//! nincx = n * incx;
//! for (i = 0; i < nincx; i += incx) dx[i] = da * dx[i];
//! ```
//!
//! (reference BLAS's `dscal`, `dasum`, `idamax` with a stride, written in
//! C). Its step is no constant, so the loop has no affine trip count. The
//! kernel runs it only when the guard fails, so `incx >= 1` there, and it
//! is then exactly `for (i = 0; i < n; i++)` with `i * incx` for `i`: `n`
//! trips over `0, incx, …, (n - 1) * incx`. Without such a guard the C
//! runs no trip at all for `incx <= 0`, so the loop is left as it is. The
//! guard, which then matters, runs ahead of the program (`super::guards`).

use crate::syntax::{ArithOp, CBinOp, CExpr, CExprKind, CFunction, CStmt, CUnOp, CVarDecl};

/// `func` with each such loop counted by one; `positive` are the
/// parameters a leading guard returns on when at most 0. `None` when
/// nothing changed.
pub(super) fn unstride(func: &CFunction, positive: &[String]) -> Option<CFunction> {
    let mut changed = false;
    let body = func
        .body
        .iter()
        .map(|s| rewrite(s, func, positive, &mut changed))
        .collect();
    changed.then(|| CFunction {
        body,
        ..func.clone()
    })
}

fn rewrite(s: &CStmt, func: &CFunction, positive: &[String], changed: &mut bool) -> CStmt {
    if let Some(counted) = counted(s, func, positive) {
        *changed = true;
        return counted;
    }
    s.map_stmts(&mut |inner| rewrite(inner, func, positive, changed))
}

/// How many times the statements read or write the variable `key`.
fn uses(stmts: &[CStmt], key: &str) -> usize {
    let mut n = 0;
    for s in stmts {
        s.any_expr(&mut |e| {
            n += e.count_refs(key);
            false
        });
    }
    n
}

/// `for (i = 0; i < n * s; i += s) body` as `for (i = 0; i < n; i++)
/// body[i := i * s]`, when `s` is a parameter in `positive` that nothing
/// writes, `n` a variable nothing in the loop writes, and `i` is written
/// only by the step and used nowhere else in the function.
fn counted(s: &CStmt, func: &CFunction, positive: &[String]) -> Option<CStmt> {
    let header = crate::induction::counted_for(s)?;
    let (start, init, cond, inc, body) = (
        &header.start,
        header.init,
        header.cond,
        header.inc,
        header.body,
    );
    let key = header.iter.ref_key()?.to_string();
    if start.int_constant() != Some(0) {
        return None;
    }
    let CExprKind::Binary {
        op: CBinOp::CompoundAssign(ArithOp::Add),
        lhs,
        rhs: step,
    } = &inc.stripped().kind
    else {
        return None;
    };
    let step_param = param_named(func, step, positive)?;
    let CExprKind::Binary {
        op: CBinOp::Lt,
        lhs: tested,
        rhs: bound,
    } = &cond.stripped().kind
    else {
        return None;
    };
    if lhs.ref_key() != Some(&key) || tested.ref_key() != Some(&key) {
        return None;
    }
    let count = other_factor(bound, &step_param.key)?;
    let count_key = count.ref_key()?;
    let unwritten = [key.as_str(), step_param.key.as_str(), count_key];
    let elsewhere = uses(&func.body, &key) != uses(std::slice::from_ref(s), &key);
    if unwritten.iter().any(|k| body.writes(k)) || elsewhere {
        return None;
    }
    let scaled = |e: &CExpr| scale_refs(e, &key, step);
    let mut new_cond = cond.clone();
    if let CExprKind::Binary { rhs, .. } = &mut new_cond.kind {
        **rhs = count.clone();
    }
    Some(CStmt::For {
        init: Box::new(init.clone()),
        cond: new_cond,
        inc: CExpr {
            kind: CExprKind::Unary {
                op: CUnOp::PreInc,
                arg: lhs.clone(),
            },
            ..inc.clone()
        },
        body: Box::new(body.map_exprs(&mut |e| scaled(e))),
        loc: header.loc.clone(),
    })
}

/// The integer parameter `e` names, when a guard makes it positive.
fn param_named<'f>(func: &'f CFunction, e: &CExpr, positive: &[String]) -> Option<&'f CVarDecl> {
    let key = e.ref_key()?;
    let p = func.params.iter().find(|p| p.key == key)?;
    (p.ty.is_integer() && positive.contains(&p.name)).then_some(p)
}

/// `n` of `n * s` or `s * n` (`s` the step's key).
fn other_factor<'e>(bound: &'e CExpr, step: &str) -> Option<&'e CExpr> {
    let CExprKind::Binary {
        op: CBinOp::Mul,
        lhs,
        rhs,
    } = &bound.stripped().kind
    else {
        return None;
    };
    match (lhs.ref_key() == Some(step), rhs.ref_key() == Some(step)) {
        (true, false) => Some(rhs),
        (false, true) => Some(lhs),
        _ => None,
    }
}

/// `e` with every read of `key` as `(key * step)`.
fn scale_refs(e: &CExpr, key: &str, step: &CExpr) -> CExpr {
    if e.ref_key() == Some(key) && !matches!(e.kind, CExprKind::Paren(_)) {
        if let CExprKind::Ref(_) | CExprKind::Implicit(_) = &e.kind {
            let product = CExpr {
                kind: CExprKind::Binary {
                    op: CBinOp::Mul,
                    lhs: Box::new(e.clone()),
                    rhs: Box::new(step.clone()),
                },
                ..e.clone()
            };
            return CExpr {
                kind: CExprKind::Paren(Box::new(product)),
                ..e.clone()
            };
        }
    }
    let mut out = e.clone();
    out.map_children(&mut |c| scale_refs(c, key, step));
    out
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn a_stride_loop_behind_a_positive_step_guard_is_counted() {
        let strided = "void f(int n, double a, double *x, int incx) {
            int i, nincx;
            if (n <= 0 || incx <= 0) return;
            nincx = n * incx;
            for (i = 0; i < nincx; i += incx) x[i] = a * x[i];
        }";
        let counted = "void f(int n, double a, double *x, int incx) {
            int i, nincx;
            if (n <= 0 || incx <= 0) return;
            for (i = 0; i < n; ++i) x[i * incx] = a * x[i * incx];
        }";
        assert_eq!(lowered(strided), lowered(counted));
    }

    #[test]
    fn without_the_guard_the_loop_stays_refused() {
        // For incx <= 0 the C runs no trip; `i < n` would run n.
        let strided = "void f(int n, double a, double *x, int incx) {
            for (int i = 0; i < n * incx; i += incx) x[i] = a * x[i];
        }";
        assert!(lowered(strided).is_err());
    }
}
