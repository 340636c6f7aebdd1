//! `index-split` (index-set splitting): a loop over `i` that writes `A[i][…]`
//! and reads the one row `A[p][…]` at a point `p` of its range conflicts
//! with itself only at `i = p`. Cut there, it becomes `for i < p`, the
//! iteration `i = p`, `for i > p`: in each piece the row read is no row the
//! piece writes. floyd-warshall's `path[k][j]` inside `for i` (and
//! `path[i][k]` inside `for j`) splits so: each of the nine pieces is one
//! min-plus update of a block (for the first,
//! `minimum(path[0:k, 0:k], add(path[0:k, k:k+1], path[k, 0:k]))`), and the
//! pieces run in the C's order.
//!
//! The first loop, in pre-order from the loop restructured, that has such
//! a point is split; the point must provably lie in the loop's range.

use tenslift_frontend::ir::{self as loop_ir, Affine, Loop};

use super::{nest_of, LoopSite, Restructured, Restructuring};
use crate::synth::partial::bounds::Facts;
use crate::synth::partial::dependence::{difference, separated, Scope};
use crate::synth::stencil::{self, Access};
use tenslift_frontend::ir_rewrite::{iterators, rewrite_stmt, Substitute};

pub struct Split;

impl Restructuring for Split {
    fn name(&self) -> &'static str {
        "index-split"
    }

    fn summary(&self) -> &'static str {
        "a loop that writes `A[i]` and reads `A[p]` at one point `p` of its range is cut into `i < p`, `i = p`, `i > p` (floyd-warshall's min-plus blocks)"
    }

    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured> {
        let mut names = Vec::new();
        iterators(&site.kernel.body, &mut names);
        let mut scope = site.scope.clone();
        split_in(site.l, &mut scope, &names).map(Restructured::of)
    }
}

/// `l` (or the first loop inside it with a split point) split.
fn split_in(l: &Loop, scope: &mut Scope, names: &[String]) -> Option<Vec<loop_ir::Stmt>> {
    if let Some(p) = split_point(l, scope) {
        return Some(pieces(l, &p, names));
    }
    scope.push(nest_of(l));
    let mut found = None;
    for (k, s) in l.body.iter().enumerate() {
        let loop_ir::Stmt::Loop(inner) = s else {
            continue;
        };
        if let Some(split) = split_in(inner, scope, names) {
            let mut body = l.body[..k].to_vec();
            body.extend(split);
            body.extend(l.body[k + 1..].iter().cloned());
            found = Some(vec![loop_ir::Stmt::Loop(Loop { body, ..l.clone() })]);
            break;
        }
    }
    scope.pop();
    found
}

/// `for i < p`, the body at `i = p`, `for i > p`.
fn pieces(l: &Loop, p: &Affine, names: &[String]) -> Vec<loop_ir::Stmt> {
    let before = Loop {
        end: p.clone(),
        ..l.clone()
    };
    let mut next = p.clone();
    next.constant += 1;
    let after = Loop {
        start: next,
        ..l.clone()
    };
    let at = Substitute {
        var: &l.iter,
        by: p,
        iterators: names,
    };
    let mut out = vec![loop_ir::Stmt::Loop(before)];
    out.extend(l.body.iter().map(|s| rewrite_stmt(s, &at)));
    out.push(loop_ir::Stmt::Loop(after));
    out
}

/// A point of `l`'s range where a write and a read (or two writes) of one
/// array meet: one subscript is `i + c`, the other the same for every
/// iteration.
fn split_point(l: &Loop, scope: &Scope) -> Option<Affine> {
    let accesses = stencil::accesses(&loop_ir::Stmt::Loop(l.clone())).ok()?;
    let facts = Facts::of_loops(scope.iter());
    for w in accesses.iter().filter(|a| a.is_store) {
        for r in accesses.iter().filter(|r| r.array == w.array) {
            if separated(w, r, &l.iter, scope) || w.index.len() != r.index.len() {
                continue;
            }
            for d in 0..w.index.len() {
                let point = meeting(w, r, d, &l.iter).or_else(|| meeting(r, w, d, &l.iter));
                let Some(p) = point else {
                    continue;
                };
                let mut last = difference(&l.end, &p);
                last.constant -= 1;
                if facts.implies(&difference(&p, &l.start)) && facts.implies(&last) {
                    return Some(p);
                }
            }
        }
    }
    None
}

/// `p` when subscript `d` of `moving` is `iter + rest` (no other loop of
/// its nest) and that of `fixed` names no loop of its nest: they meet at
/// `iter = fixed - rest`.
fn meeting(moving: &Access, fixed: &Access, d: usize, iter: &str) -> Option<Affine> {
    let (m, f) = (&moving.index[d], &fixed.index[d]);
    if m.terms.get(iter) != Some(&1) {
        return None;
    }
    let in_nest = |a: &Affine, nest: &[stencil::NestLoop], except: &str| {
        a.terms
            .keys()
            .any(|k| k != except && nest.iter().any(|l| &l.iter == k))
    };
    if in_nest(m, &moving.loops, iter) || in_nest(f, &fixed.loops, "") {
        return None;
    }
    let mut rest = m.clone();
    rest.terms.remove(iter);
    Some(difference(f, &rest))
}
