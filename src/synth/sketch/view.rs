//! A view of a leaf: a target whose every element is one element of a
//! library leaf, at a position affine in the target's index, is that leaf
//! read through a view: a strided slice `x[a:b:s]`, its reversal
//! `flip(x[a:b:s], axes=[0])` (convolution's `h[N - 1 - j]`), a reshape of
//! a strided run of a vector (`reshape(coeff, [3, 3])` for `coeff[3k + l]`),
//! or slices and fixed indices of a matrix's axes. The holes of the window
//! and contraction sketches are often such views of an input, which no
//! stub holds. Views cost nothing, so a view ends its level.

use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, DType, Dim, Expr};

use super::{positions, spell};
use crate::algebra::{Symbol, Tensor};
use crate::synth::search::{work_of, Found, Search, SketchFamily, Solved};

/// The `view` family; see the module documentation.
pub struct LeafView;

impl SketchFamily for LeafView {
    fn name(&self) -> &'static str {
        "view"
    }

    fn summary(&self) -> &'static str {
        "a leaf read at an affine index map: x[a:b:s], flip(x[a:b:s]), reshape(x[a:b:s], shape), a matrix's slices"
    }

    fn conclusive(&self) -> bool {
        true
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        _: u32,
        bound: f64,
    ) -> Solved {
        let Some(symbols) = single_symbols(target) else {
            return Ok(None);
        };
        search.meter.charge(work_of(target))?;
        Ok(leaf_view(search, target, &symbols, dtype).filter(|f| f.cost < bound))
    }
}

/// The target's elements when each is one input symbol of one array.
fn single_symbols(target: &Tensor) -> Option<Vec<Symbol>> {
    if target.shape().is_empty() {
        return None;
    }
    let symbols: Vec<Symbol> = target
        .elems()
        .iter()
        .map(|e| e.as_symbol())
        .collect::<Option<_>>()?;
    let name = symbols.first()?.name();
    symbols
        .iter()
        .all(|s| s.name() == name && !s.is_hole())
        .then_some(symbols)
}

/// The first leaf (in library order) the target is a view of.
fn leaf_view(
    search: &Search<'_>,
    target: &Tensor,
    symbols: &[Symbol],
    dtype: DType,
) -> Option<Found> {
    let name = symbols.first()?.name();
    for stub in search.library.leaves_all() {
        let shape = stub.value.shape();
        if stub.expr.dtype() != dtype
            || shape.is_empty()
            || stub.value == *target
            || !stub.vars.iter().any(|v| v.name() == name)
        {
            continue;
        }
        let Some(at) = positions(&stub.value) else {
            continue;
        };
        let Some(offsets): Option<Vec<usize>> =
            symbols.iter().map(|s| at.get(s).copied()).collect()
        else {
            continue;
        };
        let Some(map) = AffineMap::of(shape, &offsets, target.shape()) else {
            continue;
        };
        let expr = if shape.len() == 1 {
            flat_view(&stub.expr, shape[0], &map, target.shape())
        } else {
            axis_view(&stub.expr, shape, &map, target.shape())
        };
        if let Some(expr) = expr {
            let cost = search.model.cost_of(&[&expr], search.sizes);
            return Some(Found { expr, cost });
        }
    }
    None
}

/// Leaf index `first + Σ_k steps[.][k] · i_k` at target index `i`.
struct AffineMap {
    /// The leaf index of the target's first element.
    first: Vec<i64>,
    /// Per leaf axis, the step along each target axis.
    steps: Vec<Vec<i64>>,
}

impl AffineMap {
    /// The map from the leaf offsets of the target's elements, when it is
    /// affine.
    fn of(leaf_shape: &[usize], offsets: &[usize], target_shape: &[usize]) -> Option<AffineMap> {
        let leaf_index = |offset: usize| -> Vec<i64> {
            let mut rest = offset;
            let mut index = vec![0i64; leaf_shape.len()];
            for (j, &n) in leaf_shape.iter().enumerate().rev() {
                index[j] = (rest % n.max(1)) as i64;
                rest /= n.max(1);
            }
            index
        };
        let first = leaf_index(*offsets.first()?);
        let rank = target_shape.len();
        let mut unit = 1usize;
        let mut steps = vec![vec![0i64; rank]; leaf_shape.len()];
        for k in (0..rank).rev() {
            if target_shape[k] > 1 {
                let next = leaf_index(offsets[unit]);
                for (j, row) in steps.iter_mut().enumerate() {
                    row[k] = next[j] - first[j];
                }
            }
            unit *= target_shape[k];
        }
        let map = AffineMap { first, steps };
        let affine = offsets.iter().enumerate().all(|(at, &offset)| {
            let mut rest = at;
            let mut index = vec![0usize; rank];
            for (k, &n) in target_shape.iter().enumerate().rev() {
                index[k] = rest % n.max(1);
                rest /= n.max(1);
            }
            leaf_index(offset) == map.apply(&index)
        });
        affine.then_some(map)
    }

    fn apply(&self, index: &[usize]) -> Vec<i64> {
        self.first
            .iter()
            .zip(&self.steps)
            .map(|(f, row)| {
                f + row
                    .iter()
                    .zip(index)
                    .map(|(s, &i)| s * i as i64)
                    .sum::<i64>()
            })
            .collect()
    }
}

/// The run of `count` elements from `lo` every `step` of a vector leaf of
/// length `len`, as a slice (the leaf itself when it is all of it).
fn strided_run(leaf: &Expr, len: usize, lo: usize, step: usize, count: usize) -> Option<Expr> {
    if lo == 0 && step == 1 && count == len {
        return Some(leaf.clone());
    }
    let len_dim = leaf.shape().first()?;
    let stop = lo + step * (count - 1) + 1;
    let item = SliceItem::Range {
        start: spell(lo, len, len_dim),
        stop: spell(stop, len, len_dim),
        step: step as i64,
    };
    build::slice(leaf.clone(), vec![item]).ok()
}

/// A view of a vector leaf: a strided run, reversed along the target axes
/// whose step is negative, reshaped when the target has several axes
/// (their steps must be row-major multiples of the last one).
fn flat_view(leaf: &Expr, len: usize, map: &AffineMap, target_shape: &[usize]) -> Option<Expr> {
    let steps = &map.steps[0];
    let rank = target_shape.len();
    let last = (0..rank).rev().find(|&k| target_shape[k] > 1);
    let gap = last.map_or(1, |k| steps[k].unsigned_abs() as usize);
    if gap == 0 {
        return None;
    }
    let mut magnitude = gap;
    for k in (0..rank).rev() {
        if target_shape[k] > 1 && steps[k].unsigned_abs() as usize != magnitude {
            return None;
        }
        magnitude *= target_shape[k];
    }
    let count: usize = target_shape.iter().product();
    let lo = map.first[0]
        + (0..rank)
            .filter(|&k| steps[k] < 0)
            .map(|k| steps[k] * (target_shape[k] as i64 - 1))
            .sum::<i64>();
    let run = strided_run(leaf, len, usize::try_from(lo).ok()?, gap, count)?;
    let shaped = if rank == 1 {
        run
    } else {
        build::reshape(run.clone(), reshaped_dims(&run, target_shape)?).ok()?
    };
    let flipped: Vec<usize> = (0..rank).filter(|&k| steps[k] < 0).collect();
    with_flips(shaped, &flipped)
}

/// The dims of a run reshaped to `shape`: the trailing extents as
/// constants, the leading one the run's length divided by them.
fn reshaped_dims(run: &Expr, shape: &[usize]) -> Option<Vec<Dim>> {
    let trailing: usize = shape[1..].iter().product();
    let lead = run.shape().first()?.floor_div(trailing as i64).ok()?;
    if lead.divisor() != 1 {
        return None;
    }
    let mut dims = vec![lead];
    dims.extend(shape[1..].iter().map(|&n| Dim::constant(n as i64)));
    Some(dims)
}

/// A view of a matrix (or higher) leaf: each target axis runs along one
/// leaf axis, in order, with a constant step (a slice, reversed when the
/// step is negative); the other leaf axes stay at fixed indices.
fn axis_view(
    leaf: &Expr,
    shape: &[usize],
    map: &AffineMap,
    target_shape: &[usize],
) -> Option<Expr> {
    if target_shape.contains(&1) {
        return None;
    }
    let mut items = Vec::with_capacity(shape.len());
    let mut next_axis = 0;
    let mut flipped = Vec::new();
    for (j, &len) in shape.iter().enumerate() {
        let moving: Vec<usize> = (0..target_shape.len())
            .filter(|&k| map.steps[j][k] != 0)
            .collect();
        let dim = &leaf.shape()[j];
        let first = usize::try_from(map.first[j]).ok()?;
        match moving.as_slice() {
            [] => items.push(SliceItem::Index(spell(first, len, dim))),
            [k] if *k == next_axis => {
                next_axis += 1;
                let (step, count) = (map.steps[j][*k], target_shape[*k]);
                let lo = map.first[j] + step.min(0) * (count as i64 - 1);
                let lo = usize::try_from(lo).ok()?;
                let stride = step.unsigned_abs() as usize;
                items.push(if lo == 0 && stride == 1 && count == len {
                    SliceItem::Full
                } else {
                    SliceItem::Range {
                        start: spell(lo, len, dim),
                        stop: spell(lo + stride * (count - 1) + 1, len, dim),
                        step: stride as i64,
                    }
                });
                if step < 0 {
                    flipped.push(*k);
                }
            }
            _ => return None,
        }
    }
    if next_axis != target_shape.len() {
        return None;
    }
    let sliced = if items.iter().all(|i| *i == SliceItem::Full) {
        leaf.clone()
    } else {
        build::slice(leaf.clone(), items).ok()?
    };
    with_flips(sliced, &flipped)
}

/// `e` reversed along `axes` (itself when there are none).
fn with_flips(e: Expr, axes: &[usize]) -> Option<Expr> {
    if axes.is_empty() {
        Some(e)
    } else {
        build::flip(e, axes).ok()
    }
}
