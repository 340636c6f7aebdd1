//! `substitute`: a scalar temporary set in an iteration (once, or as a
//! chain of assignments each reading the last) and read only after that in
//! the same iteration (`xshift = x[i] - m; v += xshift *
//! xshift`, llm.c's layernorm and darknet's variance; `int gx = …; int gy
//! = …; m = abs(gx) + abs(gy)`, a Sobel filter on 8-bit pixels) is replaced by its
//! value where it is read, and its assignment dropped when nothing else in
//! the kernel reads it. The loop then reads no scalar it writes: the rows
//! of a two-pass variance are one reduction each, and the loop around them
//! vectorises instead of staying a Python loop.
//!
//! Legal when, in the loop body that assigns it: every write of the
//! temporary is an assignment of that block, nothing before the first
//! reads the temporary (no value carried in from the previous iteration),
//! the first value does not read it (each later one reads the value before
//! it, put in), and nothing after an assignment writes what its value
//! reads (so the value read later is the one assigned). The values stay
//! under [`MAX_NODES`] nodes, and each has the temporary's own type (the
//! conversion an assignment makes, `unsigned char t = a[i] + b[i]`, is a
//! cast in the loop IR's value, so it moves with the value). The dead
//! assignments go only when the kernel's own loop is found and reads the
//! temporary nowhere else. The temporary's every read moves
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
        "a float or integer temporary set in an iteration (once, or as a chain `t = 0; t += a; …`) and read only after that in it is replaced by its value where it is read, so the loop reads no scalar it writes"
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
            let elsewhere = reads_outside(&site.kernel.body, t, &site.l.iter);
            if elsewhere == Some(0) && reads_in(&l.body, t) == 0 {
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

/// [`substitute_in`] at the top of `body` only. The temporary may be
/// assigned several times there (`s = 0; s += a; s += b; …; y = s / 9`,
/// a window summed term by term): each value, with the previous one put
/// in for `t`, is what the reads up to the next assignment see.
fn substitute_here(body: &[loop_ir::Stmt], t: &str) -> Option<Vec<loop_ir::Stmt>> {
    let assigns: Vec<usize> = (0..body.len())
        .filter(|&i| writes(std::slice::from_ref(&body[i]), t))
        .collect();
    let (&first, &last) = (assigns.first()?, assigns.last()?);
    if reads_in(&body[..first], t) > 0 || reads_in(&body[last + 1..], t) == 0 {
        return None;
    }
    let mut current: Option<Expr> = None;
    let mut out = Vec::with_capacity(body.len());
    for (i, s) in body.iter().enumerate() {
        let now = current.as_ref().map(|value| ByValue { t, value });
        let s = match &now {
            Some(by) => rewrite_stmt(s, by),
            None => s.clone(),
        };
        if assigns.contains(&i) {
            let value = assigned_value(&s, t)?;
            // Later statements must not change what the value reads, and
            // a chain that squares its value each time must not explode.
            if loaded(value).iter().any(|a| writes(&body[i + 1..], a)) || size(value) > MAX_NODES {
                return None;
            }
            current = Some(value.clone());
        }
        out.push(s);
    }
    Some(out)
}

/// Most expression nodes a substituted value may hold.
const MAX_NODES: usize = 256;

/// The value `s` assigns to the temporary `t` (a one-element local, float
/// or integer), when `s` is such an assignment, the value has `t`'s own
/// type (read where it is put in, it is what the load read) and no longer
/// reads `t`.
fn assigned_value<'s>(s: &'s loop_ir::Stmt, t: &str) -> Option<&'s Expr> {
    let loop_ir::Stmt::Assign {
        target: LValue::Element { array, ty, .. },
        value,
        ..
    } = s
    else {
        return None;
    };
    (array == t && value.ty == *ty && !reads(value, t)).then_some(value)
}

/// How many nodes `e` has.
fn size(e: &Expr) -> usize {
    1 + match &e.kind {
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => size(arg),
        ExprKind::Binary { lhs, rhs, .. } => size(lhs) + size(rhs),
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => size(cond) + size(then_value) + size(else_value),
        ExprKind::Call { args, .. } => args.iter().map(size).sum(),
        _ => 0,
    }
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

/// How many loads of `t` the statements hold outside the loop over
/// `iter` (the kernel's loop this one stands for: a restructured loop may
/// repeat its reads, unrolled or cut in pieces); `None` when no loop over
/// `iter` is among them.
fn reads_outside(stmts: &[loop_ir::Stmt], t: &str, iter: &str) -> Option<usize> {
    let own = loop_over(stmts, iter)?;
    Some(reads_in(stmts, t) - reads_in(std::slice::from_ref(own), t))
}

/// The loop over `iter` among `stmts` or inside them.
fn loop_over<'s>(stmts: &'s [loop_ir::Stmt], iter: &str) -> Option<&'s loop_ir::Stmt> {
    stmts.iter().find_map(|s| match s {
        loop_ir::Stmt::Loop(l) if l.iter == iter => Some(s),
        loop_ir::Stmt::Loop(l) => loop_over(&l.body, iter),
        loop_ir::Stmt::If {
            then_body,
            else_body,
            ..
        } => loop_over(then_body, iter).or_else(|| loop_over(else_body, iter)),
        _ => None,
    })
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
