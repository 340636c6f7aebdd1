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
    /// Zeros before and after the leaf along each axis: a filter whose
    /// window runs off the leaf's ends (a full convolution, a causal FIR
    /// from a zero state, an image filter with zero borders) reads zeros
    /// there, as the C's guards (`if (j < lenA && i - j < lenB)`,
    /// `if (yy >= 0 && yy < h && …)`) leave those taps out. `offset` is then a
    /// position in the padded leaf.
    pad: Vec<(usize, usize)>,
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
        let mut lows = Vec::with_capacity(rank);
        let mut offset = Vec::with_capacity(rank);
        let mut sizes = Vec::with_capacity(rank);
        let mut pad = Vec::with_capacity(rank);
        for a in 0..rank {
            let shifts = terms.iter().map(|t| t.leaf[a] as i64 - t.target[a] as i64);
            let lo = shifts.clone().min()?;
            let hi = shifts.max()?;
            let size = usize::try_from(hi - lo + 1).ok()?;
            let end = lo + (target.shape()[a] + size) as i64 - 1;
            let (before, after) = (
                usize::try_from(-lo).unwrap_or(0),
                usize::try_from(end - leaf.shape()[a] as i64).unwrap_or(0),
            );
            lows.push(lo);
            offset.push(usize::try_from(lo + before as i64).ok()?);
            sizes.push(size);
            pad.push((before, after));
        }
        if sizes.iter().all(|&s| s == 1) {
            return None;
        }
        let hole = taps_of(&terms, &lows, &sizes, target.shape(), leaf.shape())?;
        // Uniform taps over a padded axis every element reads whole are a
        // reduction along it broadcast (`out[i][j] = Σ_k a[i][k]`), not a
        // filter: its "window" spans the axis at these sizes only.
        let padded = |a: usize| pad[a].0 + pad[a].1 > 0;
        if super::uniform(&hole).is_some()
            && (0..rank).any(|a| padded(a) && every_element_reads_all(&terms, a, leaf.shape()[a]))
        {
            return None;
        }
        Some(Taps {
            offset,
            sizes,
            pad,
            hole,
            rest,
        })
    }
}

/// Whether every target element with a term reads every position of the
/// leaf along `axis` (of length `len`).
fn every_element_reads_all(terms: &[Term], axis: usize, len: usize) -> bool {
    let mut read: std::collections::HashMap<&[usize], std::collections::HashSet<usize>> =
        std::collections::HashMap::new();
    for t in terms {
        read.entry(&t.target).or_default().insert(t.leaf[axis]);
    }
    read.values().all(|positions| positions.len() == len)
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

/// The taps: the coefficient at each window offset (from `lows`, the
/// smallest shift along each axis), the same for every target element; an
/// offset with a non-zero tap must occur in every element whose window
/// reads the leaf there (all of them, unless the window runs off the
/// leaf's ends: [`Taps::pad`]).
fn taps_of(
    terms: &[Term],
    lows: &[i64],
    sizes: &[usize],
    target: &[usize],
    leaf: &[usize],
) -> Option<Tensor> {
    let len: usize = sizes.iter().product();
    let mut taps: Vec<Option<Value>> = vec![None; len];
    let mut seen = vec![0usize; len];
    for term in terms {
        let mut slot = 0;
        for a in 0..sizes.len() {
            let shift = term.leaf[a] as i64 - term.target[a] as i64 - lows[a];
            slot = slot * sizes[a] + usize::try_from(shift).ok()?;
        }
        match &taps[slot] {
            Some(c) if *c != term.coeff => return None,
            Some(_) => {}
            None => taps[slot] = Some(term.coeff.clone()),
        }
        seen[slot] += 1;
    }
    let every =
        taps.iter().zip(&seen).enumerate().all(|(slot, (tap, &n))| {
            tap.is_none() || n == reading(slot, lows, sizes, target, leaf)
        });
    let values = taps.into_iter().map(|t| t.unwrap_or_else(Value::zero));
    every.then(|| Tensor::new(sizes.to_vec(), values.collect()).ok())?
}

/// How many target elements read the leaf at window offset `slot` (in
/// row-major order over `sizes`): those whose position there lies on the
/// leaf.
fn reading(slot: usize, lows: &[i64], sizes: &[usize], target: &[usize], leaf: &[usize]) -> usize {
    let mut rest = slot;
    let mut count = 1;
    for a in (0..sizes.len()).rev() {
        let k = (rest % sizes[a]) as i64 + lows[a];
        rest /= sizes[a];
        // Elements i in 0..target with 0 <= i + k < leaf.
        let (first, last) = ((-k).max(0), (target[a] as i64).min(leaf[a] as i64 - k));
        count *= usize::try_from(last - first).unwrap_or(0);
    }
    count
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
    let divisor = uniform_divisor(&taps.hole, dtype);
    let h = match &divisor {
        Some(d) => Found {
            expr: d.clone(),
            cost: 1.0,
        },
        None => {
            let Some(h) = solve_value(search, &taps.hole, dtype, depth - 1, limit - cost)? else {
                search.stats.backtrack();
                return Ok(None);
            };
            h
        }
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
    for sizes in tap_dims(search, &h.expr, &taps.sizes) {
        let views = if taps.pad.iter().any(|&(before, after)| before + after > 0) {
            padded_views(search, stub, taps, target.shape(), &sizes)
        } else {
            view_spellings(search, stub, taps, target.shape(), &sizes)
        };
        for view in views {
            let taps = match divisor {
                Some(_) => TapsExpr::Divisor(&h.expr),
                None => TapsExpr::Taps(&h.expr),
            };
            let Some(expr) = filter_expr(view, &sizes, taps, rest.clone()) else {
                continue;
            };
            if !search.is_banned(depth, &expr) {
                return Ok(Some(Found { expr, cost }));
            }
        }
    }
    Ok(None)
}

/// Uniform taps whose value no literal of `dtype` denotes but whose
/// reciprocal one does (a 3x3 box blur's `1/9`, from `s / 9.0f`): that
/// reciprocal, the window's sum divided by it.
fn uniform_divisor(hole: &Tensor, dtype: DType) -> Option<Expr> {
    let c = super::uniform(hole)?.as_constant()?;
    if super::literal(&c, dtype).is_some() {
        return None;
    }
    super::literal(&c.recip()?, dtype)
}

/// How a window's elements are weighted.
#[derive(Clone, Copy)]
enum TapsExpr<'e> {
    /// Multiplied by the taps (one number, or one per window position).
    Taps(&'e Expr),
    /// Summed and divided by this number.
    Divisor(&'e Expr),
}

/// The window sizes as dims: the taps' own shape when the hole has one,
/// else each spelling of the sizes (the sizes and leaf extents equal to
/// each, then the constant: a 3x3 box at `width = 3` is `[width, width]`
/// first, and `[3, 3]` once the acceptance check rejected that).
fn tap_dims(search: &Search<'_>, taps: &Expr, sizes: &[usize]) -> Vec<Vec<Dim>> {
    let matches = taps.shape().len() == sizes.len()
        && taps
            .shape()
            .iter()
            .zip(sizes)
            .all(|(d, &n)| d.eval(&|s| search.sizes.get(s).copied()).ok() == Some(n as i64));
    if matches {
        return vec![taps.shape().to_vec()];
    }
    let mut choices: Vec<Vec<Dim>> = vec![Vec::new()];
    for &n in sizes {
        let mut spellings = dims_of_value(search, n);
        spellings.push(Dim::constant(n as i64));
        choices = choices
            .iter()
            .flat_map(|c| {
                spellings.iter().map(move |d| {
                    let mut c = c.clone();
                    c.push(d.clone());
                    c
                })
            })
            .take(MAX_SPELLINGS)
            .collect();
    }
    choices
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

/// The views of a leaf padded with zeros where the window runs off its
/// ends: along each axis `concat([full(P), X[a:b], full(Q)])` (a full
/// convolution's signal; an image filtered with zero borders, padded on
/// both axes), each pad spelled as the window less one (a full
/// convolution's `t - 1`), as the sizes and leaf extents of its value, or
/// as a constant.
fn padded_views(
    search: &Search<'_>,
    stub: &Stub,
    taps: &Taps,
    extents: &[usize],
    windows: &[Dim],
) -> Vec<Expr> {
    let Some(part) = padded_part(stub, taps, extents) else {
        return Vec::new();
    };
    // One list of spellings per pad, before and after along each axis.
    let spellings = |n: usize, axis: usize| -> Vec<Option<Dim>> {
        if n == 0 {
            return vec![None];
        }
        let mut out = Vec::new();
        if n + 1 == taps.sizes[axis] {
            out.extend(windows[axis].sub(&Dim::constant(1)).ok());
        }
        out.extend(dims_of_value(search, n));
        out.push(Dim::constant(n as i64));
        out.dedup();
        out.into_iter().map(Some).collect()
    };
    let mut choices: Vec<Vec<Option<Dim>>> = vec![Vec::new()];
    for (axis, &(before, after)) in taps.pad.iter().enumerate() {
        for n in [before, after] {
            choices = choices
                .iter()
                .flat_map(|c| {
                    spellings(n, axis).into_iter().map(move |d| {
                        let mut c = c.clone();
                        c.push(d);
                        c
                    })
                })
                .take(MAX_SPELLINGS)
                .collect();
        }
    }
    let zero = Lit::zero(stub.expr.dtype());
    choices
        .iter()
        .filter_map(|pads| {
            let mut view = part.clone();
            for (axis, pad) in pads.chunks(2).enumerate() {
                let zeros = |d: &Option<Dim>| {
                    let mut shape = view.shape().to_vec();
                    shape[axis] = d.clone()?;
                    build::full(shape, zero).ok()
                };
                let parts: Vec<Expr> = zeros(&pad[0])
                    .into_iter()
                    .chain([view.clone()])
                    .chain(zeros(&pad[1]))
                    .collect();
                if parts.len() > 1 {
                    view = build::concat(parts, axis).ok()?;
                }
            }
            Some(view)
        })
        .collect()
}

/// The part of the leaf a padded window reads: the leaf, or its slice
/// where the window starts or ends inside it.
fn padded_part(stub: &Stub, taps: &Taps, extents: &[usize]) -> Option<Expr> {
    let mut items = Vec::with_capacity(extents.len());
    for (a, &extent) in extents.iter().enumerate() {
        let (len, dim) = (stub.value.shape()[a], &stub.expr.shape()[a]);
        let lo = taps.offset[a] as i64 - taps.pad[a].0 as i64;
        let start = lo.max(0) as usize;
        let end =
            usize::try_from((lo + (extent + taps.sizes[a]) as i64 - 1).min(len as i64)).ok()?;
        items.push(if start == 0 && end == len {
            SliceItem::Full
        } else {
            SliceItem::Range {
                start: spell(start, len, dim),
                stop: spell(end, len, dim),
                step: 1,
            }
        });
    }
    if items.iter().all(|i| *i == SliceItem::Full) {
        Some(stub.expr.clone())
    } else {
        build::slice(stub.expr.clone(), items).ok()
    }
}

/// `window(view, sizes)` contracted with the taps (a vector: `matmul`;
/// more axes: `tensordot`; one number: a sum over the window, times it),
/// or summed and divided by a divisor, plus the rest.
fn filter_expr(view: Expr, sizes: &[Dim], taps: TapsExpr, rest: Option<Expr>) -> Option<Expr> {
    let rank = sizes.len();
    let windows = build::window(view, sizes.to_vec()).ok()?;
    let window_axes: Vec<usize> = (rank..2 * rank).collect();
    let is_one =
        |e: &Expr| matches!(e.op(), Op::Lit(l) if !matches!(l, Lit::Bool(_)) && l.as_f64() == 1.0);
    let filtered = match taps {
        TapsExpr::Divisor(d) => {
            let sum = build::sum(windows, &window_axes).ok()?;
            Expr::binary(BinaryOp::Div, sum, d.clone()).ok()?
        }
        TapsExpr::Taps(taps) => match taps.shape().len() {
            0 => {
                let sum = build::sum(windows, &window_axes).ok()?;
                if is_one(taps) {
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
        },
    };
    match rest {
        Some(r) => Expr::binary(BinaryOp::Add, filtered, r).ok(),
        None => Some(filtered),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(name: &str, i: u32) -> Value {
        Value::symbol(&Symbol::element(name, &[i]))
    }

    fn vector(elems: Vec<Value>) -> Tensor {
        Tensor::new(vec![elems.len()], elems).expect("vector")
    }

    #[test]
    fn a_full_convolution_reads_its_signal_padded_with_zeros() {
        // y = a * b (full), a of 3 samples, b of 2 taps.
        let (a, b) = (|i| e("a", i), |i| e("b", i));
        let y = vector(vec![
            &a(0) * &b(0),
            &(&a(0) * &b(1)) + &(&a(1) * &b(0)),
            &(&a(1) * &b(1)) + &(&a(2) * &b(0)),
            &a(2) * &b(1),
        ]);
        let leaf = vector(vec![a(0), a(1), a(2)]);
        let taps = Taps::read(&y, &leaf).expect("a padded window");
        assert_eq!(
            (taps.pad.clone(), taps.offset.clone(), taps.sizes.clone()),
            (vec![(1, 1)], vec![0], vec![2])
        );
        assert_eq!(taps.hole.elems(), &[b(1), b(0)]);
        // A tap missing where the window is on the signal is no filter.
        let gap = vector(vec![
            &a(0) * &b(0),
            &a(0) * &b(1),
            &(&a(1) * &b(1)) + &(&a(2) * &b(0)),
            &a(2) * &b(1),
        ]);
        assert!(Taps::read(&gap, &leaf).is_none());
    }

    #[test]
    fn an_image_filtered_with_zero_borders_reads_it_padded_on_both_axes() {
        // A 3x3 box sum over a 4x3 image, zero outside it.
        let x = |r: u32, c: u32| Value::symbol(&Symbol::element("x", &[r, c]));
        let leaf = Tensor::new(
            vec![4, 3],
            (0..4).flat_map(|r| (0..3).map(move |c| x(r, c))).collect(),
        )
        .expect("image");
        let mut elems = Vec::new();
        for r in 0..4i64 {
            for c in 0..3i64 {
                let mut sum = Value::zero();
                for (rr, cc) in
                    (r - 1..=r + 1).flat_map(|rr| (c - 1..=c + 1).map(move |cc| (rr, cc)))
                {
                    if (0..4).contains(&rr) && (0..3).contains(&cc) {
                        sum = &sum + &x(rr as u32, cc as u32);
                    }
                }
                elems.push(sum);
            }
        }
        let y = Tensor::new(vec![4, 3], elems).expect("filtered");
        let taps = Taps::read(&y, &leaf).expect("a window padded on both axes");
        assert_eq!(
            (taps.pad.clone(), taps.offset.clone(), taps.sizes.clone()),
            (vec![(1, 1), (1, 1)], vec![0, 0], vec![3, 3])
        );
        assert!(taps.hole.elems().iter().all(|t| *t == Value::one()));
    }

    #[test]
    fn a_row_sum_every_element_reads_whole_is_no_padded_window() {
        // y[j] = a[0] + a[1] + a[2] for each j: a reduction, not a filter.
        let a = |i| e("a", i);
        let sum = &(&a(0) + &a(1)) + &a(2);
        let y = vector(vec![sum.clone(), sum.clone(), sum]);
        let leaf = vector(vec![a(0), a(1), a(2)]);
        assert!(Taps::read(&y, &leaf).is_none());
    }
}
