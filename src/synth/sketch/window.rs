//! Sliding windows: `y[i] = Σ_j h[j] · x[i + j]` (a FIR filter, a
//! correlation) is `matmul(window(x[0:n + t - 1], [t]), h)`, and a 2-D
//! filter `out[y][x] = Σ_k Σ_l c[k][l] · img[y + k][x + l]` is the
//! `tensordot` of the 2-D windows with the taps.
//!
//! The window is read off the target: for a leaf `X` of the target's rank
//! whose elements are distinct inputs, the offsets `p - i` between each
//! element's index `i` and the positions `p` of `X` it reads span the
//! window along each axis (the smallest offset is where the view of `X`
//! starts). The taps, the coefficient of `X[o + i + t]` in element `i`,
//! must be the same for every `i` (a shift-invariant filter); they are a
//! hole searched like any other (the `view` family reads `coeff[3k + l]`
//! as `reshape(coeff, [3, 3])`), and so is the part of the target free of
//! `X`. Uniform taps (a moving sum) are a sum over the window's axes.
//!
//! Sizes come from the hole's own shape (the taps' dims) and, for the end
//! of the view, from the sizes equal to the target's extent
//! (`x[0:n + t - 1]`) or from the leaf's end (`x[0:len - 1]`): each
//! spelling is one candidate, and one the acceptance check rejected is
//! skipped the next time.

use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, BinaryOp, DType, Dim, Expr, Lit, Op};

use super::constant::solve_value;
use super::{positions, spell};
use crate::algebra::{Symbol, Tensor, Value};
use crate::synth::library::Stub;
use crate::synth::search::{work_of, Found, Search, SketchFamily, Solved};

/// Most spellings of a window's view tried for one solution.
const MAX_SPELLINGS: usize = 16;

/// The `window` family; see the module documentation.
pub struct SlidingWindow;

impl SketchFamily for SlidingWindow {
    fn name(&self) -> &'static str {
        "window"
    }

    fn summary(&self) -> &'static str {
        "matmul/tensordot(window(X[o:o + n + t - 1], [t]), ?taps) [+ ?r]: a shift-invariant filter over a leaf (FIR, correlation, 2-D filter)"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        let rank = target.shape().len();
        if depth == 0 || rank == 0 || target.elems().iter().all(|e| e.is_zero()) {
            return Ok(None);
        }
        let mut best: Option<Found> = None;
        for stub in
            search.library.stubs.iter().filter(|s| {
                s.depth == 0 && s.expr.dtype() == dtype && s.value.shape().len() == rank
            })
        {
            search.meter.charge(work_of(target))?;
            let Some(taps) = Taps::read(target, &stub.value) else {
                continue;
            };
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            if let Some(found) = solve_taps(search, stub, &taps, target, depth, limit)? {
                best = Some(found);
                if search.first {
                    break;
                }
            }
        }
        Ok(best)
    }
}

/// A target read as a window of one leaf: where the window starts, its
/// sizes, the taps and the part free of the leaf.
struct Taps {
    offset: Vec<usize>,
    sizes: Vec<usize>,
    hole: Tensor,
    rest: Tensor,
}

/// One term `coeff · X[leaf]` of target element `target`.
struct Term {
    target: Vec<usize>,
    leaf: Vec<usize>,
    coeff: Value,
}

impl Taps {
    /// The window of `leaf` the target is a filter over, when it is one.
    fn read(target: &Tensor, leaf: &Tensor) -> Option<Taps> {
        let (terms, rest) = linear_terms(target, leaf)?;
        let rank = target.shape().len();
        let mut offset = Vec::with_capacity(rank);
        let mut sizes = Vec::with_capacity(rank);
        for a in 0..rank {
            let shifts = terms.iter().map(|t| t.leaf[a] as i64 - t.target[a] as i64);
            let lo = shifts.clone().min()?;
            let hi = shifts.max()?;
            let lo = usize::try_from(lo).ok()?;
            let size = (hi as usize) - lo + 1;
            if lo + target.shape()[a] + size - 1 > leaf.shape()[a] {
                return None;
            }
            offset.push(lo);
            sizes.push(size);
        }
        if sizes.iter().all(|&s| s == 1) {
            return None;
        }
        let hole = taps_of(&terms, &offset, &sizes, target.len())?;
        Some(Taps {
            offset,
            sizes,
            hole,
            rest,
        })
    }
}

/// The terms of the target linear in the leaf's symbols, and the part
/// free of them; `None` when some element is not linear in them.
fn linear_terms(target: &Tensor, leaf: &Tensor) -> Option<(Vec<Term>, Tensor)> {
    let at = positions(leaf)?;
    let mut wrt: Vec<Symbol> = at.keys().cloned().collect();
    wrt.sort();
    let mut terms = Vec::new();
    let mut rest = vec![Value::zero(); target.len()];
    for (offset, elem) in target.elems().iter().enumerate() {
        if elem.is_zero() {
            continue;
        }
        for (mono, coeff) in elem.coefficients(&wrt).ok()? {
            if mono.is_one() {
                rest[offset] = coeff;
                continue;
            }
            let [(atom, 1)] = mono.factors() else {
                return None;
            };
            let position = *at.get(&atom.as_symbol()?)?;
            terms.push(Term {
                target: target.index_of(offset),
                leaf: leaf.index_of(position),
                coeff,
            });
        }
    }
    let rest = Tensor::new(target.shape().to_vec(), rest).ok()?;
    (!terms.is_empty()).then_some((terms, rest))
}

/// The taps: the coefficient at each window offset, the same for every
/// target element (an offset with a non-zero tap must occur in all
/// `count` of them).
fn taps_of(terms: &[Term], offset: &[usize], sizes: &[usize], count: usize) -> Option<Tensor> {
    let len: usize = sizes.iter().product();
    let mut taps: Vec<Option<Value>> = vec![None; len];
    let mut seen = vec![0usize; len];
    for term in terms {
        let mut slot = 0;
        for a in 0..sizes.len() {
            slot = slot * sizes[a] + (term.leaf[a] - offset[a] - term.target[a]);
        }
        match &taps[slot] {
            Some(c) if *c != term.coeff => return None,
            Some(_) => {}
            None => taps[slot] = Some(term.coeff.clone()),
        }
        seen[slot] += 1;
    }
    let every = taps
        .iter()
        .zip(&seen)
        .all(|(tap, &n)| tap.is_none() || n == count);
    let values = taps.into_iter().map(|t| t.unwrap_or_else(Value::zero));
    every.then(|| Tensor::new(sizes.to_vec(), values.collect()).ok())?
}

/// The window sketch over `stub` with its taps (and rest) solved below
/// `limit`, under the first spelling of its view not rejected before.
fn solve_taps(
    search: &Search<'_>,
    stub: &Stub,
    taps: &Taps,
    target: &Tensor,
    depth: u32,
    limit: f64,
) -> Solved {
    let dtype = stub.expr.dtype();
    let window_len: usize = taps.sizes.iter().product();
    let has_rest = !taps.rest.elems().iter().all(|e| e.is_zero());
    let mut cost = stub.cost + target.len() as f64 * 2.0 * window_len as f64;
    if has_rest {
        cost += target.len() as f64;
    }
    if cost >= limit {
        return Ok(None);
    }
    let Some(h) = solve_value(search, &taps.hole, dtype, depth - 1, limit - cost)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    cost += h.cost;
    let rest = if has_rest {
        let Some(r) = search.solve(&taps.rest, dtype, depth - 1, limit - cost)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        cost += r.cost;
        Some(r.expr)
    } else {
        None
    };
    let sizes = tap_dims(search, &h.expr, &taps.sizes);
    for view in view_spellings(search, stub, taps, target.shape(), &sizes) {
        let Some(expr) = filter_expr(view, &sizes, &h.expr, rest.clone()) else {
            continue;
        };
        if !search.is_banned(depth, &expr) {
            return Ok(Some(Found { expr, cost }));
        }
    }
    Ok(None)
}

/// The window sizes as dims: the taps' own shape when the hole has one,
/// else the sizes spelled like the view's extents.
fn tap_dims(search: &Search<'_>, taps: &Expr, sizes: &[usize]) -> Vec<Dim> {
    let matches = taps.shape().len() == sizes.len()
        && taps
            .shape()
            .iter()
            .zip(sizes)
            .all(|(d, &n)| d.eval(&|s| search.sizes.get(s).copied()).ok() == Some(n as i64));
    if matches {
        return taps.shape().to_vec();
    }
    sizes
        .iter()
        .map(|&n| {
            dims_of_value(search, n)
                .into_iter()
                .next()
                .unwrap_or_else(|| Dim::constant(n as i64))
        })
        .collect()
}

/// The dims whose value at the search's sizes is `n`: the sizes equal to
/// it, then the library leaves' extents equal to it, in a fixed order.
fn dims_of_value(search: &Search<'_>, n: usize) -> Vec<Dim> {
    let mut out: Vec<Dim> = search
        .sizes
        .iter()
        .filter(|(_, &v)| v == n as i64)
        .map(|(name, _)| Dim::sym(name))
        .collect();
    for stub in search.library.leaves_all() {
        for d in stub.expr.shape() {
            let value = d.eval(&|s| search.sizes.get(s).copied()).ok();
            if value == Some(n as i64) && d.as_const().is_none() && !out.contains(d) {
                out.push(d.clone());
            }
        }
    }
    out
}

/// The views of the leaf a window may read, one spelling of each axis'
/// end per candidate: the target's extent plus the window (`n + t - 1`),
/// an offset from the leaf's end, a constant.
fn view_spellings(
    search: &Search<'_>,
    stub: &Stub,
    taps: &Taps,
    target_shape: &[usize],
    sizes: &[Dim],
) -> Vec<Expr> {
    let mut per_axis: Vec<Vec<SliceItem>> = Vec::new();
    for (a, &len) in stub.value.shape().iter().enumerate() {
        let dim = &stub.expr.shape()[a];
        let (lo, extent) = (taps.offset[a], target_shape[a]);
        let stop = lo + extent + taps.sizes[a] - 1;
        let start = spell(lo, len, dim);
        let range = |stop: Dim| SliceItem::Range {
            start: start.clone(),
            stop,
            step: 1,
        };
        let mut items = Vec::new();
        if lo == 0 && stop == len {
            items.push(SliceItem::Full);
        }
        for n in dims_of_value(search, extent) {
            let end = start.add(&n).and_then(|e| e.add(&sizes[a]));
            if let Ok(end) = end.and_then(|e| e.sub(&Dim::constant(1))) {
                items.push(range(end));
            }
        }
        items.push(range(spell(stop, len, dim)));
        items.push(range(Dim::constant(stop as i64)));
        items.dedup();
        per_axis.push(items);
    }
    let mut views = vec![Vec::new()];
    for items in &per_axis {
        views = views
            .iter()
            .flat_map(|v: &Vec<SliceItem>| {
                items.iter().map(move |i| {
                    let mut w = v.clone();
                    w.push(i.clone());
                    w
                })
            })
            .take(MAX_SPELLINGS)
            .collect();
    }
    views
        .into_iter()
        .filter_map(|items| {
            if items.iter().all(|i| *i == SliceItem::Full) {
                Some(stub.expr.clone())
            } else {
                build::slice(stub.expr.clone(), items).ok()
            }
        })
        .collect()
}

/// `window(view, sizes)` contracted with the taps (a vector: `matmul`;
/// more axes: `tensordot`; one number: a sum over the window), plus the
/// rest.
fn filter_expr(view: Expr, sizes: &[Dim], taps: &Expr, rest: Option<Expr>) -> Option<Expr> {
    let rank = sizes.len();
    let windows = build::window(view, sizes.to_vec()).ok()?;
    let window_axes: Vec<usize> = (rank..2 * rank).collect();
    let filtered = match taps.shape().len() {
        0 => {
            let sum = build::sum(windows, &window_axes).ok()?;
            let one =
                matches!(taps.op(), Op::Lit(l) if !matches!(l, Lit::Bool(_)) && l.as_f64() == 1.0);
            if one {
                sum
            } else {
                Expr::binary(BinaryOp::Mul, sum, taps.clone()).ok()?
            }
        }
        1 if rank == 1 => build::matmul(windows, taps.clone()).ok()?,
        r if r == rank => {
            let taps_axes: Vec<usize> = (0..rank).collect();
            build::tensordot(windows, taps.clone(), &window_axes, &taps_axes).ok()?
        }
        _ => return None,
    };
    match rest {
        Some(r) => Expr::binary(BinaryOp::Add, filtered, r).ok(),
        None => Some(filtered),
    }
}
