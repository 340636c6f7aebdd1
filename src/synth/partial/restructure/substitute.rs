//! `substitute`: a float temporary set once in an iteration and read only
//! after that in the same iteration (`xshift = x[i] - m; v += xshift *
//! xshift`, llm.c's layernorm and darknet's variance) is replaced by its
//! value where it is read, and its assignment dropped when nothing else in
//! the kernel reads it. The loop then reads no scalar it writes: the rows
//! of a two-pass variance are one reduction each, and the loop around them
//! vectorises instead of staying a Python loop.
//!
//! Legal when, in the loop body that assigns it: the assignment is the
//! only write of the temporary, nothing before it reads the temporary (no
//! value carried in from the previous iteration), its value does not read
//! the temporary, and nothing after it writes what its value reads (so the
//! value read later is the one assigned). The temporary's every read moves
//! to the same point of the same iteration, so the C's arithmetic is
//! unchanged, element for element.

use tenslift_frontend::ir::{self as loop_ir, Expr, ExprKind, LValue, Loop};
use tenslift_frontend::ir_rewrite::{rewrite_stmt, Rewrite};

use super::distribute::{reads, writes};
use super::{LoopSite, Restructured, Restructuring};

pub struct Substitute;

impl Restructuring for Substitute {
    fn name(&self) -> &'static str {
        "substitute"
    }

    fn summary(&self) -> &'static str {
        "a float temporary set once in an iteration and read only after that in it is replaced by its value where it is read, so the loop reads no scalar it writes"
    }

    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured> {
        let mut body = site.l.body.clone();
        let mut changed = false;
        for t in site.scalars {
            if let Some(new) = substitute_in(&body, t) {
                body = new;
                changed = true;
            }
        }
        if !changed {
            return None;
        }
        let mut l = Loop {
            body,
            ..site.l.clone()
        };
        // A temporary no one reads any more is dead: its assignment goes.
        for t in site.scalars {
            let elsewhere = reads_in(&site.kernel.body, t) - reads_in(&site.l.body, t);
            if elsewhere == 0 && reads_in(&l.body, t) == 0 {
                l.body = drop_writes(&l.body, t);
            }
        }
        Some(Restructured::of(vec![loop_ir::Stmt::Loop(l)]))
    }
}

/// `body` with `t`'s reads replaced by its value, in the first block (this
/// one or a loop body inside it) where that is legal; `None` when none is.
fn substitute_in(body: &[loop_ir::Stmt], t: &str) -> Option<Vec<loop_ir::Stmt>> {
    if let Some(done) = substitute_here(body, t) {
        return Some(done);
    }
    for (i, s) in body.iter().enumerate() {
        if let loop_ir::Stmt::Loop(l) = s {
            if let Some(inner) = substitute_in(&l.body, t) {
                let mut out = body.to_vec();
                out[i] = loop_ir::Stmt::Loop(Loop {
                    body: inner,
                    ..l.clone()
                });
                return Some(out);
            }
        }
    }
    None
}

/// [`substitute_in`] at the top of `body` only.
fn substitute_here(body: &[loop_ir::Stmt], t: &str) -> Option<Vec<loop_ir::Stmt>> {
    let assigns: Vec<usize> = (0..body.len())
        .filter(|&i| writes(std::slice::from_ref(&body[i]), t))
        .collect();
    let [at] = assigns.as_slice() else {
        return None;
    };
    let loop_ir::Stmt::Assign {
        target: LValue::Element { array, ty, .. },
        value,
        ..
    } = &body[*at]
    else {
        return None;
    };
    let after = &body[at + 1..];
    let legal = array == t
        && ty.is_float()
        && value.ty == *ty
        && reads_in(&body[..*at], t) == 0
        && !reads(value, t)
        && reads_in(after, t) > 0
        && loaded(value).iter().all(|a| !writes(after, a));
    if !legal {
        return None;
    }
    let by = ByValue { t, value };
    let mut out = body[..=*at].to_vec();
    out.extend(after.iter().map(|s| rewrite_stmt(s, &by)));
    Some(out)
}

/// Replaces each read of the temporary `t` (a one-element local) by `value`.
struct ByValue<'a> {
    t: &'a str,
    value: &'a Expr,
}

impl Rewrite for ByValue<'_> {
    fn expr(&self, e: &Expr) -> Option<Expr> {
        matches!(&e.kind, ExprKind::Load { array, .. } if array == self.t)
            .then(|| self.value.clone())
    }
}

/// The arrays (and former scalars) `e` loads from.
fn loaded(e: &Expr) -> Vec<String> {
    match &e.kind {
        ExprKind::Load { array, .. } => vec![array.clone()],
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => loaded(arg),
        ExprKind::Binary { lhs, rhs, .. } => [loaded(lhs), loaded(rhs)].concat(),
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => [loaded(cond), loaded(then_value), loaded(else_value)].concat(),
        ExprKind::Call { args, .. } => args.iter().flat_map(loaded).collect(),
        _ => Vec::new(),
    }
}

/// How many loads of `t` the statements hold (values, conditions; a
/// temporary in a subscript or bound counts too, so it is never dropped).
fn reads_in(stmts: &[loop_ir::Stmt], t: &str) -> usize {
    let in_expr = |e: &Expr| loaded(e).iter().filter(|a| *a == t).count();
    let in_affine = |a: &loop_ir::Affine| usize::from(a.terms.contains_key(t));
    stmts
        .iter()
        .map(|s| match s {
            loop_ir::Stmt::Assign { target, value, .. } => {
                let index = match target {
                    LValue::Element { index, .. } => index.iter().map(in_affine).sum(),
                    LValue::Scalar { .. } => 0,
                };
                in_expr(value) + index
            }
            loop_ir::Stmt::Loop(l) => {
                in_affine(&l.start) + in_affine(&l.end) + reads_in(&l.body, t)
            }
            loop_ir::Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => in_expr(cond) + reads_in(then_body, t) + reads_in(else_body, t),
            loop_ir::Stmt::Return { value, .. } => in_expr(value),
        })
        .sum()
}

/// The statements without their assignments to `t` (a dead temporary).
fn drop_writes(stmts: &[loop_ir::Stmt], t: &str) -> Vec<loop_ir::Stmt> {
    stmts
        .iter()
        .filter(|s| !matches!(s, loop_ir::Stmt::Assign { target: LValue::Element { array, .. }, .. } if array == t))
        .map(|s| match s {
            loop_ir::Stmt::Loop(l) => loop_ir::Stmt::Loop(Loop {
                body: drop_writes(&l.body, t),
                ..l.clone()
            }),
            other => other.clone(),
        })
        .collect()
}
