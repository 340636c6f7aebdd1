//! Solving a hole on part of its elements (a mask): the holes of a region
//! sketch need only agree with the target on their own triangle. A masked
//! hole is a stub agreeing on the mask, an `op(stub, ?h)` sketch solved on
//! the same mask, or (at the region's own level) a peeled contraction.

use tenslift_targets::{build, BinaryOp, DType, Expr};

use super::{literal, step_cost};
use crate::algebra::{Tensor, Value};
use crate::synth::budget::Halt;
use crate::synth::extraction::Peel;
use crate::synth::library::Stub;
use crate::synth::search::{work_of, Found, Search, Solved};

/// Depth of the masked search below a region sketch.
pub(super) const MASKED_DEPTH: u32 = 2;

/// Candidates a masked (region) hole tries per level, simplest first.
const MASKED_CANDIDATES_PER_LEVEL: usize = 64;

/// Whether `value` (a tensor of the target's shape, or a scalar) equals
/// `target` on every masked element.
fn agrees_on(value: &Tensor, target: &Tensor, mask: &[bool]) -> bool {
    if value.shape().is_empty() {
        let v = &value.elems()[0];
        return target.elems().iter().zip(mask).all(|(t, &m)| !m || t == v);
    }
    value.shape() == target.shape()
        && value
            .elems()
            .iter()
            .zip(target.elems())
            .zip(mask)
            .all(|((v, t), &m)| !m || v == t)
}

/// The target restricted to the mask (zero elsewhere): its Simp score and
/// inputs count only the elements the hole must compute.
fn masked(target: &Tensor, mask: &[bool]) -> Tensor {
    let elems = target
        .elems()
        .iter()
        .zip(mask)
        .map(|(t, &m)| if m { t.clone() } else { Value::zero() })
        .collect();
    Tensor::new(target.shape().to_vec(), elems).unwrap_or_else(|_| target.clone())
}

/// A library expression equal to `target` on the masked elements, or an
/// `op(stub, ?h)` sketch whose hole is solved on the same elements,
/// simplest holes first, within `depth`.
pub(super) fn masked_solve(
    search: &Search<'_>,
    target: &Tensor,
    mask: &[bool],
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Solved {
    let part = masked(target, mask);
    search.meter.charge(work_of(&part))?;
    search.stats.step();
    if let Some(found) = constant_on(&part, mask, dtype) {
        return Ok((found.cost < bound).then_some(found));
    }
    let mut best = stub_on_mask(search, target, mask, dtype, bound);
    if best.is_some() && search.first || depth == 0 {
        return Ok(best);
    }
    // A sum of contractions is peeled at the region's own level (and in
    // the remainders it leaves), not below every stub sketch.
    if depth == MASKED_DEPTH {
        let limit = best.as_ref().map_or(bound, |b| b.cost);
        if let Some(found) = masked_contraction(search, &part, mask, dtype, depth, limit)? {
            best = Some(found);
            if search.first {
                return Ok(best);
            }
        }
    }
    let step = step_cost(target);
    for (hole, op, index) in masked_holes(search, target, &part, mask, dtype)? {
        let stub = &search.library.stubs[index];
        let op_cost = stub.cost + step;
        let limit = best.as_ref().map_or(bound, |b| b.cost);
        if op_cost >= limit {
            continue;
        }
        if let Some(h) = masked_solve(search, &hole, mask, dtype, depth - 1, limit - op_cost)? {
            if let Ok(expr) = Expr::binary(op, stub.expr.clone(), h.expr) {
                best = Some(Found {
                    expr,
                    cost: op_cost + h.cost,
                });
                if search.first {
                    break;
                }
            }
        }
    }
    Ok(best)
}

/// The cheapest stub (a scalar one too) equal to `target` on the masked
/// elements, cheaper than `bound`.
fn stub_on_mask(
    search: &Search<'_>,
    target: &Tensor,
    mask: &[bool],
    dtype: DType,
    bound: f64,
) -> Option<Found> {
    let mut best: Option<Found> = None;
    for stub in &search.library.stubs {
        if stub.expr.dtype() == dtype
            && stub.cost < best.as_ref().map_or(bound, |b| b.cost)
            && agrees_on(&stub.value, target, mask)
        {
            best = Some(Found {
                expr: stub.expr.clone(),
                cost: stub.cost,
            });
        }
    }
    best
}

/// The holes of `op(stub, ?h)` sketches on the masked part, simplest
/// first, at most [`MASKED_CANDIDATES_PER_LEVEL`]; each stub whose holes
/// are computed costs one unit of work.
fn masked_holes(
    search: &Search<'_>,
    target: &Tensor,
    part: &Tensor,
    mask: &[bool],
    dtype: DType,
) -> Result<Vec<(Tensor, BinaryOp, usize)>, Halt> {
    let part_vars = part.vars();
    let part_score = part.complexity();
    let mut holes = Vec::new();
    for (index, stub) in search.library.stubs.iter().enumerate() {
        if stub.expr.dtype() != dtype || stub.depth > 1 {
            continue;
        }
        let Some(s) = masked_stub_value(stub, target, part, &part_vars, mask) else {
            continue;
        };
        search.meter.charge(work_of(part))?;
        for (h, op) in masked_hole_values(part, &s, stub, mask, dtype) {
            if h.elems().iter().all(Value::is_zero) {
                continue;
            }
            let score = h.complexity();
            if score < part_score {
                holes.push((score, h, op, index));
            }
        }
    }
    holes.sort_by(|a, b| a.0.total_cmp(&b.0));
    holes.truncate(MASKED_CANDIDATES_PER_LEVEL);
    Ok(holes.into_iter().map(|(_, h, op, i)| (h, op, i)).collect())
}

/// The stub's value on the mask (a scalar stub broadcast), when it reads
/// only inputs the part reads there.
fn masked_stub_value(
    stub: &Stub,
    target: &Tensor,
    part: &Tensor,
    part_vars: &[crate::algebra::Symbol],
    mask: &[bool],
) -> Option<Tensor> {
    if stub.value.shape() == target.shape() {
        let s = masked(&stub.value, mask);
        // Only the inputs the stub reads inside the region count.
        s.vars()
            .iter()
            .all(|v| part_vars.binary_search(v).is_ok())
            .then_some(s)
    } else if stub.value.shape().is_empty() {
        if !stub.vars.iter().all(|v| part_vars.binary_search(v).is_ok()) {
            return None;
        }
        let v = stub.value.elems()[0].clone();
        Some(masked(&part.map(|_| v.clone()), mask))
    } else {
        None
    }
}

/// `part - s` (for `s + ?h`) and, for a float scalar stub, `part / s` (for
/// `s * ?h`): scale factors (`alpha * ?h`) are scalars, and dividing by
/// every tensor stub would dominate the time for nothing.
fn masked_hole_values(
    part: &Tensor,
    s: &Tensor,
    stub: &Stub,
    mask: &[bool],
    dtype: DType,
) -> Vec<(Tensor, BinaryOp)> {
    let mut candidates = Vec::new();
    if let Ok(h) = part.zip_with(s, |t, s| t - s) {
        candidates.push((h, BinaryOp::Add));
    }
    if dtype.is_float() && stub.value.shape().is_empty() {
        let quotient: Option<Vec<Value>> = part
            .elems()
            .iter()
            .zip(s.elems())
            .zip(mask)
            .map(|((t, s), &m)| {
                if m {
                    t.div(s).ok()
                } else {
                    Some(Value::zero())
                }
            })
            .collect();
        if let Some(q) = quotient.and_then(|q| Tensor::new(part.shape().to_vec(), q).ok()) {
            candidates.push((q, BinaryOp::Mul));
        }
    }
    candidates
}

/// `einsum(X, ?h) + ?r` on the masked elements, for a leaf `X` the part is
/// linear in and that meets the part under several index maps (a sum of
/// contractions of `X`, like syr2k's `A @ B.T + B @ A.T`): one contraction
/// is peeled ([`Peel`]), its hole filled by the cheapest stub agreeing
/// with it where it is known, and the exact remainder (strictly simpler)
/// solved on the same mask.
fn masked_contraction(
    search: &Search<'_>,
    part: &Tensor,
    mask: &[bool],
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Solved {
    if !dtype.is_float() || part.shape().len() < 2 {
        return Ok(None);
    }
    let library = search.library;
    let part_vars = part.vars();
    // The remainder reads the same inputs (syr2k's other product reads A
    // and B too): progress is counted in terms, which a peel must lower.
    let part_terms = term_count(part);
    let mut best: Option<Found> = None;
    for operand in &library.stubs {
        if operand.depth != 0
            || operand.expr.dtype() != dtype
            || operand.value.shape().is_empty()
            || !operand
                .vars
                .iter()
                .all(|v| part_vars.binary_search(v).is_ok())
        {
            continue;
        }
        search.meter.charge(work_of(part))?;
        for peel in Peel::candidates(part, Some(mask), &operand.value) {
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            let masked_part = MaskedPart {
                part,
                mask,
                terms: part_terms,
            };
            match try_peel(search, &masked_part, operand, &peel, dtype, depth, limit)? {
                Some(f) if f.cost < limit => {
                    best = Some(f);
                    if search.first {
                        return Ok(best);
                    }
                }
                Some(_) => {}
                None => search.stats.backtrack(),
            }
        }
    }
    Ok(best)
}

/// The part of a target a peel works on.
struct MaskedPart<'a> {
    part: &'a Tensor,
    mask: &'a [bool],
    /// Its number of terms: a peel must leave fewer.
    terms: usize,
}

/// One peeled contraction of `operand` on the masked part, its hole the
/// cheapest stub agreeing where the peel knows it, plus the remainder
/// solved on the same mask. `None` when the peel does not pay or fails.
fn try_peel(
    search: &Search<'_>,
    target: &MaskedPart<'_>,
    operand: &Stub,
    peel: &Peel,
    dtype: DType,
    depth: u32,
    limit: f64,
) -> Solved {
    let (part, mask) = (target.part, target.mask);
    let op_cost = operand.cost + part.len() as f64 * 2.0 * peel.contracted_len() + step_cost(part);
    if op_cost >= limit {
        return Ok(None);
    }
    let Some(hole) = stub_agreeing(search, peel.hole(), &peel.known, dtype, limit - op_cost) else {
        return Ok(None);
    };
    let Some(value) = peel.contribution(&operand.value, &hole.value, part.shape()) else {
        return Ok(None);
    };
    let Ok(remainder) = part.zip_with(&value, |t, c| t - c) else {
        return Ok(None);
    };
    let remainder = masked(&remainder, mask);
    if term_count(&remainder) >= target.terms {
        return Ok(None);
    }
    let Some(contraction) = peel.rebuild(&operand.expr, operand.value.shape(), hole.expr.clone())
    else {
        return Ok(None);
    };
    search.stats.coefficient_solve();
    let cost = op_cost + hole.cost;
    if remainder.elems().iter().all(Value::is_zero) {
        return Ok(Some(Found {
            expr: contraction,
            cost,
        }));
    }
    let rest = masked_solve(search, &remainder, mask, dtype, depth, limit - cost)?;
    Ok(rest.and_then(|r| {
        build::add(contraction, r.expr).ok().map(|expr| Found {
            expr,
            cost: cost + r.cost,
        })
    }))
}

/// The number of terms of all elements.
fn term_count(t: &Tensor) -> usize {
    t.elems().iter().map(Value::len).sum()
}

/// The cheapest stub of `value`'s shape equal to it on the `known`
/// elements, cheaper than `bound`.
fn stub_agreeing<'l>(
    search: &Search<'l>,
    value: &Tensor,
    known: &[bool],
    dtype: DType,
    bound: f64,
) -> Option<&'l Stub> {
    let mut best: Option<&Stub> = None;
    for stub in &search.library.stubs {
        if stub.expr.dtype() == dtype
            && stub.value.shape() == value.shape()
            && stub.cost < best.map_or(bound, |b| b.cost)
            && agrees_on(&stub.value, value, known)
        {
            best = Some(stub);
        }
    }
    best
}

/// A literal equal to every masked element, when they share one constant.
fn constant_on(part: &Tensor, mask: &[bool], dtype: DType) -> Option<Found> {
    let mut value: Option<&Value> = None;
    for (e, &m) in part.elems().iter().zip(mask) {
        if !m {
            continue;
        }
        match value {
            None => value = Some(e),
            Some(v) if v == e => {}
            Some(_) => return None,
        }
    }
    let c = value?.as_constant()?;
    Some(Found {
        expr: literal(&c, dtype)?,
        cost: 1.0,
    })
}
