//! An index of the sums of the library's deepest stubs, so that a target
//! that is one reduction away from the library is found by lookup.

use std::collections::HashMap;

use rayon::prelude::*;
use tenslift_targets::{DType, Expr, ReduceKind};

use crate::algebra::{Tensor, Value};
use crate::synth::library::Library;

/// The most stub elements one index sums. Past it the index is left empty
/// (the search still finds the reduction as a sketch, only not by lookup):
/// a kernel with fixed large extents (`float in[1029]` globals) has
/// depth-2 stubs of a million symbolic elements each (the corpus's
/// indices sum at most 60 000 in all). A count, not a time, so the same
/// kernel gets the same index on every machine.
const MAX_SUMMED_ELEMENTS: usize = 4_000_000;

/// Sums of the library's deepest stubs (one level past the library) that
/// have the searched output's shape: `sum(A * B.T, axis=1)` for a vector
/// target, `sum(A * B.T)` for a scalar one. Targets of one output's search
/// all have its shape (holes keep the target's shape), so the index is
/// built once per output region, keyed like the library by value.
#[derive(Default)]
pub struct Reductions {
    by_value: HashMap<(DType, Tensor), (usize, Vec<usize>)>,
}

/// The axes of a rank-≤2 `shape` whose sum leaves `target` (in order).
fn reduction_axes(shape: &[usize], target: &[usize]) -> Vec<Vec<usize>> {
    match (shape, target) {
        ([_], []) => vec![vec![0]],
        ([_, _], []) => vec![vec![0, 1]],
        ([rows, cols], [len]) => {
            let mut out = Vec::new();
            if rows == len {
                out.push(vec![1]);
            }
            if cols == len && cols != rows {
                out.push(vec![0]);
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The exact sum of `t`'s elements over `axes` (rank ≤ 2).
fn sum_over(t: &Tensor, axes: &[usize]) -> Option<Tensor> {
    let shape = t.shape();
    // One merge of all the terms: folding `acc + e` copies the growing
    // sum at every step (quadratic in a long row's terms).
    let add_all = |items: &mut dyn Iterator<Item = &Value>| Value::sum(items);
    match (shape, axes) {
        (_, [0]) if shape.len() == 1 => Some(Tensor::scalar(add_all(&mut t.elems().iter()))),
        (_, [0, 1]) => Some(Tensor::scalar(add_all(&mut t.elems().iter()))),
        ([rows, cols], [1]) => {
            let elems = (0..*rows)
                .map(|i| add_all(&mut t.elems()[i * cols..(i + 1) * cols].iter()))
                .collect();
            Tensor::new(vec![*rows], elems).ok()
        }
        ([rows, cols], [0]) => {
            let elems = (0..*cols)
                .map(|j| add_all(&mut (0..*rows).map(|i| &t.elems()[i * cols + j])))
                .collect();
            Tensor::new(vec![*cols], elems).ok()
        }
        _ => None,
    }
}

/// Whether the index sums `stub`: a depth-2 numeric one.
fn summed(stub: &crate::synth::library::Stub) -> bool {
    stub.depth == 2 && stub.expr.dtype().is_numeric()
}

/// The elements an index for `target_shape` would sum.
fn summed_elements(library: &Library, target_shape: &[usize]) -> usize {
    library
        .stubs
        .iter()
        .filter(|s| summed(s))
        .map(|s| s.value.len() * reduction_axes(s.value.shape(), target_shape).len())
        .sum()
}

impl Reductions {
    /// Indexes the sums of `library`'s depth-2 numeric stubs whose result
    /// has shape `target_shape`. Shallower stubs' sums are library stubs
    /// already. Its work is bounded by [`MAX_SUMMED_ELEMENTS`], so it
    /// needs no deadline of its own.
    pub fn build(library: &Library, target_shape: &[usize]) -> Reductions {
        if target_shape.len() > 1 || summed_elements(library, target_shape) > MAX_SUMMED_ELEMENTS {
            return Reductions::default();
        }
        let sums: Vec<Vec<(Tensor, usize, Vec<usize>)>> = library
            .stubs
            .par_iter()
            .enumerate()
            .map(|(i, stub)| {
                if !summed(stub) {
                    return Vec::new();
                }
                reduction_axes(stub.value.shape(), target_shape)
                    .into_iter()
                    .filter_map(|axes| Some((sum_over(&stub.value, &axes)?, i, axes)))
                    .collect()
            })
            .collect();
        let mut by_value: HashMap<(DType, Tensor), (usize, Vec<usize>)> = HashMap::new();
        for (value, i, axes) in sums.into_iter().flatten() {
            let key = (library.stubs[i].expr.dtype(), value);
            let cheaper = by_value
                .get(&key)
                .is_none_or(|&(j, _)| library.stubs[i].cost < library.stubs[j].cost);
            if cheaper {
                by_value.insert(key, (i, axes));
            }
        }
        Reductions { by_value }
    }

    pub(super) fn lookup(&self, library: &Library, dtype: DType, value: &Tensor) -> Option<Expr> {
        let (i, axes) = self.by_value.get(&(dtype, value.clone()))?;
        Expr::reduce(
            ReduceKind::Sum,
            library.stubs[*i].expr.clone(),
            axes.clone(),
        )
        .ok()
    }
}
