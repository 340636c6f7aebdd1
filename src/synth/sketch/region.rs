//! A static region: the elements of a square target on and below a
//! diagonal follow one formula and the rest another (PolyBench's `j <= i`
//! updates); the sketch `tril(?x, k) + triu(?y, k + 1)` solves each hole
//! only on its own triangle (its density), the other triangle's values of
//! the hole being free ([`super::masked`]). A region is a property of a
//! whole output, so the family applies at the search's top level only.
//!
//! Beside it, the library leaves of triangular operands: a matrix input
//! read only on or below (above) a diagonal enters the library as
//! `tril(A, k)` (`triu(A, k)`; of the rectangle a strictly triangular
//! product reads, `A[:, 0:n-1]` for `k < i`) and, read on a whole
//! triangle with its diagonal, as the symmetric matrix that triangle
//! stores (PolyBench's `symm`, `trmm`).

use tenslift_targets::{build, DType, Expr, Param, ParamKind};

use super::masked::{masked_solve, MASKED_DEPTH};
use super::step_cost;
use crate::algebra::{Tensor, Value};
use crate::synth::search::{Found, Search, SketchFamily, Solved};

/// The `region` family; see the module documentation.
pub struct Region;

impl SketchFamily for Region {
    fn name(&self) -> &'static str {
        "region"
    }

    fn summary(&self) -> &'static str {
        "tril(?x, k) + triu(?y, k+1) when two formulas split a square output by a diagonal"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        if depth != search.top_depth {
            return Ok(None);
        }
        region_sketch(search, target, dtype, bound)
    }
}

/// A triangle of a square matrix: the elements with `j - i <= k`
/// (`tril(·, k)`), the rest being `triu(·, k + 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Triangle {
    pub(super) k: i64,
}

impl Triangle {
    pub(super) fn lower_mask(self, n: usize) -> Vec<bool> {
        (0..n * n)
            .map(|o| ((o % n) as i64 - (o / n) as i64) <= self.k)
            .collect()
    }
}

/// A cheap structural fingerprint of an element: two elements computed by
/// the same formula at different indices share it.
fn fingerprint(v: &Value) -> (usize, i64) {
    let degree = v.terms().iter().map(|t| t.mono.degree()).max().unwrap_or(0);
    (v.len(), degree)
}

/// Whether the mask splits the target's elements into two parts, each of
/// one fingerprint, that differ from each other: a region the spec
/// computes with two formulas. Diagonal elements are left out: there the
/// formula's index pairs coincide and terms merge (`A[i,k]·B[j,k] +
/// B[i,k]·A[j,k]` is one term `2·A[i,k]·B[i,k]` at `i = j`).
pub(super) fn splits_by_formula(target: &Tensor, mask: &[bool]) -> bool {
    let cols = target.shape().get(1).copied().unwrap_or(1).max(1);
    let mut inside = None;
    let mut outside = None;
    for (offset, (e, &m)) in target.elems().iter().zip(mask).enumerate() {
        if offset / cols == offset % cols {
            continue;
        }
        let part = if m { &mut inside } else { &mut outside };
        let f = fingerprint(e);
        match part {
            None => *part = Some(f),
            Some(g) if *g == f => {}
            Some(_) => return false,
        }
    }
    matches!((inside, outside), (Some(a), Some(b)) if a != b)
}

/// The family's sketch; see the module documentation.
fn region_sketch(search: &Search<'_>, target: &Tensor, dtype: DType, bound: f64) -> Solved {
    let [n, m] = target.shape() else {
        return Ok(None);
    };
    if n != m || *n < 2 || !dtype.is_numeric() {
        return Ok(None);
    }
    let n = *n;
    let mut best: Option<Found> = None;
    for k in [0, -1] {
        let triangle = Triangle { k };
        let lower = triangle.lower_mask(n);
        if !splits_by_formula(target, &lower) {
            continue;
        }
        let upper: Vec<bool> = lower.iter().map(|b| !b).collect();
        let limit = best.as_ref().map_or(bound, |b| b.cost);
        // Two triangle ops and the add.
        let step = 3.0 * step_cost(target);
        if step >= limit {
            continue;
        }
        let Some(x) = masked_solve(search, target, &lower, dtype, MASKED_DEPTH, limit - step)?
        else {
            search.stats.backtrack();
            continue;
        };
        let Some(y) = masked_solve(
            search,
            target,
            &upper,
            dtype,
            MASKED_DEPTH,
            limit - step - x.cost,
        )?
        else {
            search.stats.backtrack();
            continue;
        };
        let expr = square_pair(x.expr, y.expr).and_then(|(x, y)| {
            build::add(build::tril(x, k).ok()?, build::triu(y, k + 1).ok()?).ok()
        });
        if let Some(expr) = expr {
            search.stats.pattern_match();
            best = Some(Found {
                expr,
                cost: step + x.cost + y.cost,
            });
        }
    }
    Ok(best)
}

/// Both holes as full squares: a scalar solution broadcasts to the other
/// hole's (symbolic) shape, so the program stays size-generic.
fn square_pair(x: Expr, y: Expr) -> Option<(Expr, Expr)> {
    let shape = [&x, &y]
        .into_iter()
        .find(|e| e.shape().len() == 2)?
        .shape()
        .to_vec();
    let widen = |e: Expr| {
        if e.shape().len() == 2 {
            Some(e)
        } else {
            build::broadcast(e, shape.clone()).ok()
        }
    };
    Some((widen(x)?, widen(y)?))
}

/// The diagonal offsets `q - p` of the elements `A[p, q]` the target
/// reads from each 2-D input, as (least, greatest).
fn read_offsets(target: &Tensor, name: &str) -> Option<(i64, i64)> {
    let offsets: Vec<i64> = target
        .vars()
        .iter()
        .filter(|v| !v.is_hole() && v.name() == name)
        .filter_map(|v| match v.index() {
            [p, q] => Some(i64::from(*q) - i64::from(*p)),
            _ => None,
        })
        .collect();
    Some((*offsets.iter().min()?, *offsets.iter().max()?))
}

/// Extra library leaves for float matrices the target reads only on
/// one triangle: the triangle itself, and when the triangle includes the
/// diagonal, the symmetric matrix it stores. Without them the library's
/// view of such an input reads elements the target never mentions, and is
/// discarded.
pub fn triangle_leaves(params: &[Param], target: &Tensor) -> Vec<Expr> {
    let mut out = Vec::new();
    for p in params {
        let ParamKind::Array { dtype, shape, .. } = &p.kind else {
            continue;
        };
        // A strictly triangular read trims the input to what it reads (`A`
        // of a `k < i` product is `n x (n-1)`): the triangle of the
        // rectangle is still the mask; the symmetric leaves need a square.
        if shape.len() != 2 || !dtype.is_float() {
            continue;
        }
        let square = shape[0] == shape[1];
        let Some((least, greatest)) = read_offsets(target, &p.name) else {
            continue;
        };
        let var = Expr::var(&p.name, p.ty());
        let symmetric = |keep: fn(Expr, i64) -> Result<Expr, _>, mirror: i64| {
            let triangle = keep(var.clone(), 0).ok()?;
            let strict = keep(var.clone(), mirror).ok()?;
            build::add(triangle, build::transpose(strict, &[1, 0]).ok()?).ok()
        };
        if greatest <= 0 {
            out.extend(build::tril(var.clone(), greatest).ok());
            if greatest == 0 && square {
                out.extend(symmetric(build::tril, -1));
            }
        }
        if least >= 0 {
            out.extend(build::triu(var.clone(), least).ok());
            if least == 0 && square {
                out.extend(symmetric(build::triu, 1));
            }
        }
    }
    out
}
