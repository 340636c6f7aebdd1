//! A leading size guard, `if (n <= 0) return;` (or `return 0.0f;`), as
//! BLAS-style code opens with. The loop IR has no early exit; the guard is
//! dropped when it changes nothing: every disjunct of its condition says
//! that some integer parameter `v` is at most 0, and under each of them
//! every assignment of the rest of the kernel sits in a loop that then runs
//! no iteration, and what the kernel returns is the guard's value (a local
//! set to that literal before the loops, or nothing).
//!
//! [`strip`] takes the guard off the C before lowering; [`redundant`]
//! checks the lowered kernel and says why not when the guard matters (then
//! the kernel is refused as before, with that reason).

use crate::affine::Poly;
use crate::ir::{Affine, Expr, ExprKind, Kernel, LValue, Loc, Loop, Stmt};
use crate::syntax::{
    CBinOp, CExpr, CExprKind, CFunction, CStmt, CType, CUnOp, IntValue, RefTarget,
};

/// A stripped guard: the parameters one of which is at most 0 when it
/// holds, the value it returns, and where it is.
pub(super) struct Guard {
    pub vars: Vec<String>,
    pub value: Option<f64>,
    pub loc: Loc,
}

/// The function without its leading guard, and the guard; `None` when the
/// body does not open with one of the accepted form (declarations may come
/// first).
pub(super) fn strip(func: &CFunction) -> Option<(CFunction, Guard)> {
    let at = func
        .body
        .iter()
        .position(|s| !matches!(s, CStmt::Decl(..) | CStmt::Null(_)))?;
    let CStmt::If {
        cond,
        then_branch,
        else_branch: None,
        loc,
    } = &func.body[at]
    else {
        return None;
    };
    let returned = match &**then_branch {
        CStmt::Return(value, _) => value.as_ref(),
        CStmt::Compound(inner, _) => match inner.as_slice() {
            [CStmt::Return(value, _)] => value.as_ref(),
            _ => return None,
        },
        _ => return None,
    };
    let value = match returned {
        None => None,
        Some(e) => Some(literal(e)?),
    };
    let mut vars = Vec::new();
    at_most_zero(cond, &mut vars)?;
    let mut body = func.body.clone();
    body.remove(at);
    let guard = Guard {
        vars,
        value,
        loc: loc.clone(),
    };
    Some((
        CFunction {
            body,
            ..func.clone()
        },
        guard,
    ))
}

fn strip_c(e: &CExpr) -> &CExpr {
    match &e.kind {
        CExprKind::Paren(inner) | CExprKind::Implicit(inner) | CExprKind::Cast(inner) => {
            strip_c(inner)
        }
        _ => e,
    }
}

/// A numeric literal, possibly negated or converted.
fn literal(e: &CExpr) -> Option<f64> {
    match &strip_c(e).kind {
        CExprKind::Int(IntValue::Fits(v)) => Some(*v as f64),
        CExprKind::Float { value, .. } => Some(*value),
        CExprKind::Unary {
            op: CUnOp::Minus,
            arg,
        } => literal(arg).map(|v| -v),
        _ => None,
    }
}

/// Pushes, for each disjunct of `cond`, the integer parameter it bounds
/// by 0 from above (`n <= 0`, `n < 1`, `n == 0`, `!n`, `0 >= n`); `None`
/// when some disjunct is anything else.
fn at_most_zero(cond: &CExpr, vars: &mut Vec<String>) -> Option<()> {
    let c = strip_c(cond);
    let param = |e: &CExpr| match (&strip_c(e).kind, &strip_c(e).ty) {
        (CExprKind::Ref(r), CType::Scalar(t)) if r.target == RefTarget::Param && !t.is_float() => {
            Some(r.name.clone())
        }
        _ => None,
    };
    let int = |e: &CExpr| match strip_c(e).kind {
        CExprKind::Int(IntValue::Fits(v)) => Some(v),
        _ => None,
    };
    match &c.kind {
        CExprKind::Binary {
            op: CBinOp::LOr,
            lhs,
            rhs,
        } => {
            at_most_zero(lhs, vars)?;
            at_most_zero(rhs, vars)
        }
        CExprKind::Unary {
            op: CUnOp::LNot,
            arg,
        } => {
            vars.push(param(arg)?);
            Some(())
        }
        CExprKind::Binary { op, lhs, rhs } => {
            // `v op k`, or `k op v` read as `v op' k`.
            let (v, k, op) = match (param(lhs), int(rhs), param(rhs), int(lhs)) {
                (Some(v), Some(k), _, _) => (v, k, *op),
                (_, _, Some(v), Some(k)) => (v, k, flipped(*op)?),
                _ => return None,
            };
            let bounded = match op {
                CBinOp::Le | CBinOp::Eq => k <= 0,
                CBinOp::Lt => k <= 1,
                _ => false,
            };
            bounded.then(|| vars.push(v))
        }
        _ => None,
    }
}

fn flipped(op: CBinOp) -> Option<CBinOp> {
    Some(match op {
        CBinOp::Lt => CBinOp::Gt,
        CBinOp::Le => CBinOp::Ge,
        CBinOp::Gt => CBinOp::Lt,
        CBinOp::Ge => CBinOp::Le,
        CBinOp::Eq => CBinOp::Eq,
        _ => return None,
    })
}

/// Why dropping `guard` would change what `kernel` does; `None` when it
/// would not (see the module documentation).
pub(super) fn redundant(kernel: &Kernel, guard: &Guard) -> Option<String> {
    for v in &guard.vars {
        if let Some(why) = assignments_skipped(&kernel.body, v, false) {
            return Some(format!("when `{v} <= 0`, {why}"));
        }
    }
    let returned = kernel.body.iter().find_map(|s| match s {
        Stmt::Return { value, .. } => Some(value),
        _ => None,
    });
    match (returned, guard.value) {
        (None, None) => None,
        (Some(value), Some(g)) => match value_before_loops(&kernel.body, value) {
            Some(v) if v == g => None,
            _ => Some(format!(
                "the kernel would not return {g} when the loops do not run"
            )),
        },
        (Some(_), None) => Some("the guard returns nothing but the kernel returns a value".into()),
        (None, Some(_)) => Some("the guard returns a value but the kernel does not".into()),
    }
}

/// Whether every assignment in `body` (beyond local scalars set outside
/// every loop) lies in a loop that runs no iteration when `v <= 0`.
fn assignments_skipped(body: &[Stmt], v: &str, in_empty_loop: bool) -> Option<String> {
    for s in body {
        match s {
            Stmt::Loop(l) => {
                let empty = in_empty_loop || empty_when(l, v);
                if let Some(why) = assignments_skipped(&l.body, v, empty) {
                    return Some(why);
                }
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                let why = assignments_skipped(then_body, v, in_empty_loop)
                    .or_else(|| assignments_skipped(else_body, v, in_empty_loop));
                if why.is_some() {
                    return why;
                }
            }
            Stmt::Assign { target, .. } if !in_empty_loop => {
                if let LValue::Element { array, .. } = target {
                    return Some(format!("`{array}` is still written"));
                }
            }
            Stmt::Assign { .. } | Stmt::Return { .. } => {}
        }
    }
    None
}

/// Whether loop `l` runs no iteration whenever `v <= 0`: its trip span is
/// `a*v + b` with `a > 0`, `b <= 0` and nothing else.
fn empty_when(l: &Loop, v: &str) -> bool {
    let span = |hi: &Affine, lo: &Affine| {
        Poly::from_affine(hi)
            .sub(&Poly::from_affine(lo))
            .ok()?
            .to_affine()
    };
    let d = if l.step > 0 {
        span(&l.end, &l.start)
    } else {
        span(&l.start, &l.end)
    };
    d.is_some_and(|d| {
        d.constant <= 0 && d.terms.len() == 1 && d.terms.get(v).is_some_and(|a| *a > 0)
    })
}

/// The value `value` has when no loop runs: a literal, or a local whose
/// last assignment outside every loop is a literal.
fn value_before_loops(body: &[Stmt], value: &Expr) -> Option<f64> {
    match &value.kind {
        ExprKind::IntLit { value } => Some(*value as f64),
        ExprKind::FloatLit { value, .. } => Some(*value),
        ExprKind::Cast { arg } => value_before_loops(body, arg),
        ExprKind::Var { name, .. } => {
            for s in body.iter().rev() {
                match s {
                    Stmt::Assign {
                        target: LValue::Scalar { name: n, .. },
                        value,
                        ..
                    } if n == name => return value_before_loops(body, value),
                    // Set under a condition outside the loops: unknown.
                    Stmt::If {
                        then_body,
                        else_body,
                        ..
                    } if assigns(then_body, name) || assigns(else_body, name) => return None,
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

fn assigns(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::Assign {
            target: LValue::Scalar { name: n, .. },
            ..
        } => n == name,
        Stmt::Loop(l) => assigns(&l.body, name),
        Stmt::If {
            then_body,
            else_body,
            ..
        } => assigns(then_body, name) || assigns(else_body, name),
        _ => false,
    })
}
