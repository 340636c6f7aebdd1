//! Shapes and positions: broadcasting, slicing, concatenation, and the
//! row-major index arithmetic they share.

use tenslift_targets::ops::SliceItem;
use tenslift_targets::Dim;

use super::{Result, TensirSpecError};
use crate::algebra::{Tensor, Value};

/// Most elements one intermediate tensor may have (a guard against
/// candidates whose broadcasts or outer products explode at spec sizes).
const ELEMENT_LIMIT: usize = 1 << 22;

pub(super) fn checked_len(op: &str, shape: &[usize]) -> Result<usize> {
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .unwrap_or(usize::MAX);
    if n > ELEMENT_LIMIT {
        return Err(TensirSpecError::TooManyElements {
            op: op.to_string(),
            elements: n,
            limit: ELEMENT_LIMIT,
        });
    }
    Ok(n)
}

pub(super) fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Iterates over every multi-index of `shape` in row-major order.
pub(super) fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut index = vec![0usize; shape.len()];
    loop {
        f(&index);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// Broadcasts `t` to `shape` (NumPy rules, right-aligned).
pub(super) fn broadcast_to(t: &Tensor, shape: &[usize], op: &str) -> Result<Tensor> {
    if t.shape() == shape {
        return Ok(t.clone());
    }
    let mismatch = || TensirSpecError::ShapeMismatch {
        op: op.to_string(),
        shapes: vec![t.shape().to_vec(), shape.to_vec()],
    };
    let rank = shape.len();
    let src = t.shape();
    if src.len() > rank {
        return Err(mismatch());
    }
    let lead = rank - src.len();
    for (i, &d) in src.iter().enumerate() {
        if d != 1 && d != shape[lead + i] {
            return Err(mismatch());
        }
    }
    checked_len(op, shape)?;
    let strides = row_major_strides(src);
    let elems = t.elems();
    Ok(Tensor::from_fn(shape, |idx| {
        let offset: usize = src
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if d == 1 {
                    0
                } else {
                    idx[lead + i] * strides[i]
                }
            })
            .sum();
        elems[offset].clone()
    }))
}

pub(super) fn broadcast_shape(op: &str, shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        let lead = rank - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[lead + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(TensirSpecError::ShapeMismatch {
                    op: op.to_string(),
                    shapes: shapes.iter().map(|s| s.to_vec()).collect(),
                });
            }
        }
    }
    Ok(out)
}

/// The concrete positions one slice item selects on an axis of length `len`
/// (`None` for an index, which drops the axis, with its position).
pub(super) fn slice_positions(
    item: &SliceItem,
    len: usize,
    eval: &dyn Fn(&Dim) -> Result<i64>,
) -> Result<(Vec<usize>, bool)> {
    match item {
        SliceItem::Full => Ok(((0..len).collect(), true)),
        SliceItem::Index(i) => {
            let i = eval(i)?;
            if i < 0 || i as usize >= len {
                return Err(TensirSpecError::IndexOutOfBounds { index: i, len });
            }
            Ok((vec![i as usize], false))
        }
        SliceItem::Range { start, stop, step } => {
            let (a, b) = (eval(start)?, eval(stop)?);
            if *step <= 0 || a < 0 || a > b || b as usize > len {
                return Err(TensirSpecError::SliceOutOfBounds {
                    start: a,
                    stop: b,
                    step: *step,
                    len,
                });
            }
            let positions = (a..b).step_by(*step as usize).map(|p| p as usize).collect();
            Ok((positions, true))
        }
    }
}

/// Row-major offsets (into a tensor of `shape`) of the elements a slice
/// selects, and the shape of the selection.
pub(super) fn slice_offsets(
    shape: &[usize],
    items: &[SliceItem],
    eval: &dyn Fn(&Dim) -> Result<i64>,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if items.len() > shape.len() {
        return Err(TensirSpecError::Malformed(format!(
            "{} slice components for a value of rank {}",
            items.len(),
            shape.len()
        )));
    }
    let mut per_axis = Vec::with_capacity(shape.len());
    let mut out_shape = Vec::new();
    for (axis, &len) in shape.iter().enumerate() {
        let item = items.get(axis).unwrap_or(&SliceItem::Full);
        let (positions, keeps) = slice_positions(item, len, eval)?;
        if keeps {
            out_shape.push(positions.len());
        }
        per_axis.push(positions);
    }
    let strides = row_major_strides(shape);
    let counts: Vec<usize> = per_axis.iter().map(Vec::len).collect();
    checked_len("slice", &counts)?;
    let mut offsets = Vec::new();
    for_each_index(&counts, |idx| {
        offsets.push(
            idx.iter()
                .enumerate()
                .map(|(axis, &k)| per_axis[axis][k] * strides[axis])
                .sum(),
        );
    });
    Ok((offsets, out_shape))
}

pub(super) fn tensor(shape: Vec<usize>, elems: Vec<Value>) -> Result<Tensor> {
    Tensor::new(shape, elems).map_err(|e| TensirSpecError::Malformed(e.to_string()))
}

pub(super) fn concat(args: &[Tensor], axis: usize) -> Result<Tensor> {
    let first = args
        .first()
        .ok_or_else(|| TensirSpecError::Malformed("concat of nothing".into()))?;
    let rank = first.shape().len();
    if axis >= rank
        || args.iter().any(|a| {
            a.shape().len() != rank
                || (0..rank).any(|d| d != axis && a.shape()[d] != first.shape()[d])
        })
    {
        return Err(TensirSpecError::ShapeMismatch {
            op: "concat".into(),
            shapes: args.iter().map(|a| a.shape().to_vec()).collect(),
        });
    }
    let mut shape = first.shape().to_vec();
    shape[axis] = args.iter().map(|a| a.shape()[axis]).sum();
    checked_len("concat", &shape)?;
    let outer: usize = shape[..axis].iter().product();
    let mut elems = Vec::with_capacity(shape.iter().product());
    for o in 0..outer {
        for a in args {
            let chunk: usize = a.shape()[axis..].iter().product();
            elems.extend_from_slice(&a.elems()[o * chunk..(o + 1) * chunk]);
        }
    }
    tensor(shape, elems)
}

/// `flip(t, axes)`: the listed axes read from their far end.
pub(super) fn flip(t: &Tensor, axes: &[usize]) -> Tensor {
    let shape = t.shape();
    let strides = row_major_strides(shape);
    Tensor::from_fn(shape, |idx| {
        let offset: usize = idx
            .iter()
            .enumerate()
            .map(|(a, &i)| {
                let i = if axes.contains(&a) {
                    shape[a] - 1 - i
                } else {
                    i
                };
                i * strides[a]
            })
            .sum();
        t.elems()[offset].clone()
    })
}

/// `window(t, sizes)` with result shape `shape` (positions, then sizes):
/// element `[i, k]` is `t[i + k]`. Every window must fit.
pub(super) fn window(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let rank = t.shape().len();
    let (positions, sizes) = shape.split_at(rank);
    let fits = t
        .shape()
        .iter()
        .zip(positions)
        .zip(sizes)
        .all(|((n, p), s)| *s >= 1 && s <= n && p + s - 1 == *n);
    if !fits {
        return Err(TensirSpecError::Malformed(format!(
            "window of sizes {sizes:?} over a value of shape {:?}",
            t.shape()
        )));
    }
    checked_len("window", shape)?;
    let strides = row_major_strides(t.shape());
    Ok(Tensor::from_fn(shape, |idx| {
        let offset: usize = (0..rank)
            .map(|d| (idx[d] + idx[rank + d]) * strides[d])
            .sum();
        t.elems()[offset].clone()
    }))
}
