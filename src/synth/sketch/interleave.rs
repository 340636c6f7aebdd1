//! Interleaved vectors: DSP code stores complex numbers as `re, im, re,
//! im, ...` and computes `D[2i]` and `D[2i + 1]` from `A[2i]`, `A[2i + 1]`,
//! ... (DSPstone's `n_complex_updates`). Such a target reads, in every
//! element, only positions of its own block of `k`; its `k` strided parts
//! `D[c::k]` are element-wise over the inputs' strided views `A[c::k]`.
//!
//! The family re-poses each part over those views: a library of its own
//! (the views of the vector leaves the target reads, and the scalar
//! leaves), and a search in it for every part below the bound; the parts
//! are then laid back out as columns and flattened:
//! `reshape(concat([reshape(?p0, [n, 1]), ..., reshape(?pk-1, [n, 1])],
//! axis=1), [k*n])`. The main library never holds strided views, so
//! kernels without interleaving pay nothing for them.
//!
//! Where no part can be said alone, since every part reads every position
//! of its block through a small matrix (an array of `vec4` times a `mat4`),
//! the target is searched once more as `n` rows of `k` over the vectors'
//! rows `reshape(x, [n, k])`: `reshape(matmul(reshape(in, [n, 4]),
//! transpose(M)), [4n])`.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, Access, DType, Dim, Expr, Op, Param, ParamKind};

use crate::algebra::{Symbol, Tensor, Value};
use crate::synth::budget::Halt;
use crate::synth::library::{Evaluator, Library, Stub};
use crate::synth::search::{Counters, Found, Reductions, Search, SketchFamily, Solved};

/// Block lengths tried, smallest first.
const FACTORS: [usize; 3] = [2, 3, 4];

/// Most stubs the parts' library holds.
const PART_LIBRARY_LIMIT: usize = 20_000;

/// The `interleave` family; see the module documentation.
pub struct Interleave;

impl SketchFamily for Interleave {
    fn name(&self) -> &'static str {
        "interleave"
    }

    fn summary(&self) -> &'static str {
        "reshape(concat([?p0, ..., ?pk-1] as columns), [k*n]) for a vector computed in blocks of k (re/im pairs), each part searched over the inputs' strided views x[c::k]; failing that, reshape(?rows, [k*n]) searched over the inputs' rows reshape(x, [n, k]) (vec4 times mat4)"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        if depth == 0 || target.shape().len() != 1 {
            return Ok(None);
        }
        let vectors = input_vectors(search, target.len());
        let Some(k) = block_factor(target, &vectors) else {
            return Ok(None);
        };
        if let Some(found) = solve_parts(search, target, &vectors, k, dtype, depth, bound)? {
            return Ok(Some(found));
        }
        solve_rows(search, target, &vectors, k, dtype, depth, bound)
    }
}

/// The library's vector leaves of length `len` that hold their array's
/// initial elements in order (`A`, not a value stored earlier).
fn input_vectors<'s>(search: &Search<'s>, len: usize) -> Vec<&'s Stub> {
    search
        .library
        .stubs
        .iter()
        .filter(|s| s.depth == 0 && s.value.shape() == [len])
        .filter(|s| {
            let Op::Var(name) = s.expr.op() else {
                return false;
            };
            s.value
                .elems()
                .iter()
                .enumerate()
                .all(|(i, e)| e.as_symbol() == Some(Symbol::element(name, &[i as u32])))
        })
        .collect()
}

/// The smallest `k` such that every element reads the vectors only inside
/// its own block of `k` positions, and some element reads another
/// position than its own or is not its neighbour's formula moved by one
/// (a complex conjugate: `y[2i] = x[2i]`, `y[2i+1] = -x[2i+1]`).
fn block_factor(target: &Tensor, vectors: &[&Stub]) -> Option<usize> {
    let names: BTreeSet<&str> = vectors
        .iter()
        .filter_map(|s| match s.expr.op() {
            Op::Var(name) => Some(&**name),
            _ => None,
        })
        .collect();
    let len = target.len();
    let element_wise = moves_alike(target, &names);
    FACTORS.into_iter().find(|&k| {
        if !len.is_multiple_of(k) || len / k < 2 {
            return false;
        }
        let mut crosses = false;
        let inside = target.elems().iter().enumerate().all(|(m, e)| {
            e.vars()
                .iter()
                .filter(|s| names.contains(s.name()))
                .all(|s| {
                    let p = s.index().first().map_or(usize::MAX, |&p| p as usize);
                    crosses |= p != m;
                    p / k == m / k
                })
        });
        inside && (crosses || !element_wise)
    })
}

/// Whether the first element, its reads of the vectors `names` moved by
/// one position, is the second (an element-wise target, which no block
/// layout helps).
fn moves_alike(target: &Tensor, names: &BTreeSet<&str>) -> bool {
    let [first, second, ..] = target.elems() else {
        return true;
    };
    let moved: HashMap<Symbol, Value> = first
        .vars()
        .into_iter()
        .filter(|s| names.contains(s.name()))
        .filter_map(|s| {
            let [p] = s.index() else { return None };
            Some((
                s.clone(),
                Value::symbol(&Symbol::element(s.name(), &[p + 1])),
            ))
        })
        .collect();
    first.substitute(&moved).is_ok_and(|e| e == *second)
}

/// Solves the `k` parts over the strided views and lays them back out.
fn solve_parts(
    search: &Search<'_>,
    target: &Tensor,
    vectors: &[&Stub],
    k: usize,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Solved {
    let Some((len_dim, n_dim)) = block_extents(vectors, k) else {
        return Ok(None);
    };
    let layout_cost = target.len() as f64;
    if layout_cost >= bound {
        return Ok(None);
    }
    let Some(library) = own_library(part_library(search, target, vectors, &len_dim, k))? else {
        return Ok(None);
    };
    let n = target.len() / k;
    let reductions = Reductions::build(&library, &[n]);
    let parts_search = nested(search, &library, &reductions, depth);
    let mut cost = layout_cost;
    let mut columns = Vec::with_capacity(k);
    for c in 0..k {
        let part = strided_part(target, c, k);
        let Some(found) = parts_search.solve(&part, dtype, depth - 1, bound - cost)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        cost += found.cost;
        let Some(column) = as_column(found.expr, &n_dim) else {
            return Ok(None);
        };
        columns.push(column);
    }
    let laid_out = build::concat(columns, 1).and_then(|c| build::reshape(c, vec![len_dim]));
    Ok(laid_out.ok().map(|expr| Found { expr, cost }))
}

/// Solves the target as `n` rows of its blocks over the vectors' rows: a
/// block that mixes its own positions through a small matrix (a `vec4`
/// array times a `mat4`: `out[4i + j] = Σ_c M[j][c] * in[4i + c]`) is
/// `reshape(matmul(reshape(in, [n, 4]), transpose(M)), [4n])`, which no
/// single strided part can say, since each part reads every column.
fn solve_rows(
    search: &Search<'_>,
    target: &Tensor,
    vectors: &[&Stub],
    k: usize,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Solved {
    let Some((len_dim, n_dim)) = block_extents(vectors, k) else {
        return Ok(None);
    };
    let n = target.len() / k;
    let Ok(rows) = Tensor::new(vec![n, k], target.elems().to_vec()) else {
        return Ok(None);
    };
    let Some(library) = own_library(row_library(search, &rows, vectors, &n_dim, k))? else {
        return Ok(None);
    };
    let reductions = Reductions::build(&library, &[n, k]);
    let rows_search = nested(search, &library, &reductions, depth);
    let Some(found) = rows_search.solve(&rows, dtype, depth - 1, bound)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let flat = build::reshape(found.expr, vec![len_dim]);
    Ok(flat.ok().map(|expr| Found {
        expr,
        cost: found.cost,
    }))
}

/// The rows' library: each vector as `[n, k]` rows, and the main
/// library's other leaves (scalars, the small matrix).
fn row_library(
    search: &Search<'_>,
    rows: &Tensor,
    vectors: &[&Stub],
    n_dim: &Dim,
    k: usize,
) -> Result<Library, Halt> {
    let mut leaves: Vec<Expr> = vectors
        .iter()
        .filter_map(|v| {
            build::reshape(v.expr.clone(), vec![n_dim.clone(), Dim::constant(k as i64)]).ok()
        })
        .collect();
    let is_vector = |s: &Stub| vectors.iter().any(|v| v.expr == s.expr);
    leaves.extend(
        search
            .library
            .stubs
            .iter()
            .filter(|s| s.depth == 0 && !is_vector(s))
            .map(|s| s.expr.clone()),
    );
    let params = params_of(search, &leaves);
    let mut evaluator = Evaluator::new(search.sizes.clone(), params, Vec::new());
    Library::build(
        &mut evaluator,
        leaves,
        search.sizes,
        search.meter,
        PART_LIBRARY_LIMIT,
        rows,
    )
}

/// The vectors' length and the number of blocks of `k` in it, when that
/// divides exactly.
fn block_extents(vectors: &[&Stub], k: usize) -> Option<(Dim, Dim)> {
    let len_dim = vectors.first()?.expr.shape().first()?.clone();
    let n_dim = len_dim.floor_div(k as i64).ok()?;
    (n_dim.divisor() == 1).then_some((len_dim, n_dim))
}

/// A family's own library, `None` where building it ran out of budget
/// (the family then finds nothing; the search goes on).
fn own_library(built: Result<Library, Halt>) -> Result<Option<Library>, Halt> {
    match built {
        Ok(library) => Ok(Some(library)),
        Err(Halt::Budget) => Ok(None),
        Err(halt) => Err(halt),
    }
}

/// A search one level down over a family's own library, its work on the
/// same meter and its statistics apart.
fn nested<'s>(
    search: &Search<'s>,
    library: &'s Library,
    reductions: &'s Reductions,
    depth: u32,
) -> Search<'s> {
    Search {
        library,
        reductions,
        stats: Counters::new(search.families.iter().map(|f| f.name())),
        banned: &[],
        top_depth: depth - 1,
        ..*search
    }
}

/// Elements `c, c + k, c + 2k, ...` of a vector.
fn strided_part(target: &Tensor, c: usize, k: usize) -> Tensor {
    let elems = target.elems();
    Tensor::from_fn(&[target.len() / k], |i| elems[c + k * i[0]].clone())
}

/// A part as an `[n, 1]` column (a uniform part broadcast first).
fn as_column(part: Expr, n: &Dim) -> Option<Expr> {
    let vector = if part.shape().is_empty() {
        build::broadcast(part, vec![n.clone()]).ok()?
    } else {
        part
    };
    build::reshape(vector, vec![n.clone(), Dim::constant(1)]).ok()
}

/// The parts' library: the strided views `x[c:len - (k - 1 - c):k]` of the
/// vectors, and the main library's scalar leaves, enumerated like any
/// library (its work counted on the search's meter).
fn part_library(
    search: &Search<'_>,
    target: &Tensor,
    vectors: &[&Stub],
    len_dim: &Dim,
    k: usize,
) -> Result<Library, Halt> {
    let mut leaves = Vec::new();
    for v in vectors {
        for c in 0..k {
            let item = SliceItem::Range {
                start: Dim::constant(c as i64),
                stop: len_dim
                    .sub(&Dim::constant((k - 1 - c) as i64))
                    .map_err(|_| Halt::Budget)?,
                step: k as i64,
            };
            leaves.extend(build::slice(v.expr.clone(), vec![item]).ok());
        }
    }
    leaves.extend(
        search
            .library
            .stubs
            .iter()
            .filter(|s| s.depth == 0 && s.value.shape().is_empty())
            .map(|s| s.expr.clone()),
    );
    let params = params_of(search, &leaves);
    let mut evaluator = Evaluator::new(search.sizes.clone(), params, Vec::new());
    Library::build(
        &mut evaluator,
        leaves,
        search.sizes,
        search.meter,
        PART_LIBRARY_LIMIT,
        target,
    )
}

/// The parameters the leaves read, as the kernel's inputs: the sizes,
/// then every variable at the type it is read at.
fn params_of(search: &Search<'_>, leaves: &[Expr]) -> Vec<Param> {
    let mut params: Vec<Param> = search
        .sizes
        .keys()
        .map(|name| Param {
            name: Arc::from(name.as_str()),
            kind: ParamKind::Size,
        })
        .collect();
    for leaf in leaves {
        leaf.walk_unique(&mut |node| {
            let Op::Var(name) = node.op() else {
                return;
            };
            if params.iter().any(|p| p.name == *name) {
                return;
            }
            let kind = if node.shape().is_empty() {
                ParamKind::Scalar(node.dtype())
            } else {
                ParamKind::Array {
                    dtype: node.dtype(),
                    shape: node.shape().to_vec(),
                    access: Access::In,
                }
            };
            params.push(Param {
                name: name.clone(),
                kind,
            });
        });
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(name: &str, i: u32) -> Value {
        Value::symbol(&Symbol::element(name, &[i]))
    }

    #[test]
    fn a_conjugate_is_blocked_where_an_element_wise_product_is_not() {
        let names: BTreeSet<&str> = ["x", "w"].into_iter().collect();
        let conj = Tensor::new(
            vec![4],
            vec![e("x", 0), -&e("x", 1), e("x", 2), -&e("x", 3)],
        )
        .expect("conj");
        assert!(!moves_alike(&conj, &names));
        let product = Tensor::from_fn(&[4], |i| &e("x", i[0] as u32) * &e("w", i[0] as u32));
        assert!(moves_alike(&product, &names));
    }
}
