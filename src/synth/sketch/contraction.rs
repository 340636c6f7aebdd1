//! Contraction sketches `einsum(X, ?h)` and `einsum(X, ?h) + ?r` over every
//! library leaf `X` that is an array of distinct input symbols, with the
//! tensor hole `?h` solved by coefficient extraction
//! ([`crate::synth::extraction`]) and `?r` the part of the target free of
//! `X`; holes are searched simplest first (Simp score). A target that is a
//! leaf read at its first or last coordinates is that slice.

use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, BinaryOp, DType, Dim, Expr};

use crate::algebra::{simp_score, Tensor};
use crate::synth::budget::Halt;
use crate::synth::extraction::{contracted_len, Extraction};
use crate::synth::library::Stub;
use crate::synth::search::{work_of, Found, Search, SketchFamily, Solved};

/// The `contraction` family; see the module documentation.
pub struct Contraction;

impl SketchFamily for Contraction {
    fn name(&self) -> &'static str {
        "contraction"
    }

    fn summary(&self) -> &'static str {
        "einsum(X, ?h) [+ ?r] with the tensor hole solved by coefficient extraction; a leaf's edge slice"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        if target.elems().iter().all(|e| e.is_zero()) {
            return Ok(None);
        }
        if let Some(found) = sliced_leaf(search, target, dtype, bound) {
            return Ok(Some(found));
        }
        if depth == 0 {
            return Ok(None);
        }
        let mut best: Option<Found> = None;
        for (i, extraction) in extractions(search, target, dtype)? {
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            let stub = &search.library.stubs[i];
            if let Some(found) = solve_extraction(search, stub, &extraction, target, depth, limit)?
            {
                if found.cost < limit {
                    best = Some(found);
                    if search.first {
                        return Ok(best);
                    }
                }
            }
        }
        Ok(best)
    }
}

/// Every leaf the target is linear in, with its extraction, simplest
/// holes first. Each leaf tried costs one unit of work.
fn extractions(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
) -> Result<Vec<(usize, Extraction)>, Halt> {
    let target_vars = target.vars();
    let mut candidates: Vec<(f64, usize, Extraction)> = Vec::new();
    for (i, stub) in search.library.stubs.iter().enumerate() {
        if stub.depth != 0
            || stub.expr.dtype() != dtype
            || stub.value.shape().is_empty()
            || !stub
                .vars
                .iter()
                .all(|v| target_vars.binary_search(v).is_ok())
        {
            continue;
        }
        search.meter.charge(work_of(target))?;
        if let Some(extraction) = Extraction::solve(target, &stub.value) {
            let score = simp_score(&[extraction.hole.clone(), extraction.rest.clone()]);
            candidates.push((score, i, extraction));
        }
    }
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(candidates.into_iter().map(|(_, i, e)| (i, e)).collect())
}

/// `einsum(stub, ?h) [+ ?r]` with the extraction's hole (and rest) solved
/// below `limit`.
fn solve_extraction(
    search: &Search<'_>,
    stub: &Stub,
    extraction: &Extraction,
    target: &Tensor,
    depth: u32,
    limit: f64,
) -> Solved {
    let dtype = stub.expr.dtype();
    let extents = stub.value.shape().to_vec();
    let mut op_cost = stub.cost + target.len() as f64 * 2.0 * contracted_len(extraction);
    let has_rest = !extraction.rest.elems().iter().all(|e| e.is_zero());
    if has_rest {
        op_cost += target.len() as f64;
    }
    if op_cost >= limit {
        return Ok(None);
    }
    search.stats.coefficient_solve();
    let Some(h) = search.solve(&extraction.hole, dtype, depth - 1, limit - op_cost)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let Some(mut expr) = extraction.rebuild(&stub.expr, &extents, h.expr) else {
        return Ok(None);
    };
    let mut cost = op_cost + h.cost;
    if has_rest {
        let Some(r) = search.solve(&extraction.rest, dtype, depth - 1, limit - cost)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        let Ok(sum) = Expr::binary(BinaryOp::Add, expr, r.expr) else {
            return Ok(None);
        };
        expr = sum;
        cost += r.cost;
    }
    Ok(Some(Found { expr, cost }))
}

/// A leaf (any readable array, also one holding more inputs than the
/// target mentions) read at fixed first or last coordinates of its
/// leading axes: `A[n - 1, m - 1, :]` is what a scratch array left by
/// the last iteration holds.
fn sliced_leaf(search: &Search<'_>, target: &Tensor, dtype: DType, bound: f64) -> Option<Found> {
    let rank = target.shape().len();
    let first = target.elems().first()?;
    for stub in search.library.leaves_all() {
        let shape = stub.value.shape();
        if stub.expr.dtype() != dtype
            || shape.len() <= rank
            || shape[shape.len() - rank..] != *target.shape()
            || stub.cost >= bound
        {
            continue;
        }
        let lead = shape.len() - rank;
        let block: usize = target.shape().iter().product();
        for (at, e) in stub.value.elems().iter().enumerate().step_by(block.max(1)) {
            if e != first {
                continue;
            }
            let index = stub.value.index_of(at);
            let same = (0..block).all(|k| stub.value.elems().get(at + k) == target.elems().get(k));
            if !same {
                continue;
            }
            let mut items = Vec::with_capacity(shape.len());
            for (axis, &c) in index.iter().take(lead).enumerate() {
                let dim = stub.expr.shape()[axis].clone();
                items.push(if c == 0 {
                    SliceItem::Index(Dim::constant(0))
                } else if c + 1 == shape[axis] {
                    SliceItem::Index(dim.add(&Dim::constant(-1)).ok()?)
                } else {
                    break;
                });
            }
            if items.len() != lead {
                continue;
            }
            items.extend((0..rank).map(|_| SliceItem::Full));
            if let Ok(expr) = build::slice(stub.expr.clone(), items) {
                return Some(Found {
                    expr,
                    cost: stub.cost,
                });
            }
        }
    }
    None
}
