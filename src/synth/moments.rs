//! Sketches over stored intermediates. Tried before the library: a square
//! output that is a stored array's Gram matrix times one scalar factor
//! (`Wᵀ W / (n - 1)`, a covariance's), read off the spec without
//! evaluating a library over the stored values. Tried only for an output
//! the plain library could not solve: second moments of an array about a
//! stored column statistic (`sum((X - mean)², axis 0)`, a standard
//! deviation's core), Gram matrices of a stored array (`Wᵀ W`, a
//! correlation's), and a square output that is such a matrix with its
//! diagonal overridden by one constant (`corr[i][i] = 1`). The library's
//! depth bound never builds the product of a stub with itself, and no
//! region sketch writes a diagonal.

use tenslift_targets::{build, DType, Dim, Expr, Lit, Param, ParamKind};

use super::cost::cost_of;
use super::direct::{translate, Targets};
use super::library::Evaluator;
use super::options::SynthError;
use super::problem::Goal;
use super::search::Found;
use super::tactic::{Attempt, Candidate, OutputTactic};
use crate::algebra::{AtomKind, Tensor, Value};
use crate::spec::Sizes;

/// The `scaled-gram` output tactic: [`scaled_gram`], tried before the
/// library for a square output once something is stored (evaluating every
/// stub over the stored values would be slow), and for any output that
/// failed once.
pub struct ScaledGram;

impl OutputTactic for ScaledGram {
    fn name(&self) -> &'static str {
        "scaled-gram"
    }

    fn summary(&self) -> &'static str {
        "a stored matrix's Gram matrix times a scalar factor read off the spec (covariance's W^T W / (n - 1))"
    }

    fn conclusive(&self) -> bool {
        true
    }

    fn applies(&self, goal: &Goal<'_>) -> Result<(), String> {
        let square = goal
            .target()
            .is_some_and(|t| matches!(t.shape(), [a, b] if a == b));
        if (square && !goal.pass.written.is_empty()) || goal.retried().is_some() {
            Ok(())
        } else {
            Err("not a square output after a stored array, nor a retried output".into())
        }
    }

    fn run(
        &self,
        goal: &Goal<'_>,
        _: Option<&Found>,
        evaluator: &mut Evaluator,
    ) -> Result<Attempt, SynthError> {
        let problem = goal.problem;
        let found = goal.target().and_then(|target| {
            let written = &goal.pass.written;
            scaled_gram(evaluator, &problem.params, written, &target, &problem.sizes)
        });
        Ok(Attempt::of(found.map(|found| Candidate {
            found,
            region: goal.region.clone(),
        })))
    }
}

/// The `stored-moments` output tactic: [`direct`], for an output that
/// failed once.
pub struct StoredMoments;

impl OutputTactic for StoredMoments {
    fn name(&self) -> &'static str {
        "stored-moments"
    }

    fn summary(&self) -> &'static str {
        "for a retried output: a Gram matrix with a constant diagonal, or data standardised by stored column statistics"
    }

    fn conclusive(&self) -> bool {
        true
    }

    fn applies(&self, goal: &Goal<'_>) -> Result<(), String> {
        match goal.retried() {
            Some(_) => Ok(()),
            None => Err("tried only for an output that failed once".into()),
        }
    }

    fn run(
        &self,
        goal: &Goal<'_>,
        _: Option<&Found>,
        evaluator: &mut Evaluator,
    ) -> Result<Attempt, SynthError> {
        let problem = goal.problem;
        let found = goal.target().and_then(|target| {
            let written = &goal.pass.written;
            direct(evaluator, &problem.params, written, &target, &problem.sizes)
        });
        Ok(Attempt::of(found.map(|found| Candidate {
            found,
            region: goal.region.clone(),
        })))
    }
}

/// A float array parameter's (name, extents), if `p` is one.
fn float_array(p: &Param) -> Option<(&Param, &[Dim])> {
    match &p.kind {
        ParamKind::Array { dtype, shape, .. } if dtype.is_float() => Some((p, shape.as_slice())),
        _ => None,
    }
}

/// Extra library leaves built from the arrays stored so far (`written`):
/// for every readable matrix `X` of shape `[a, b]` and stored vector `v` of
/// length `b`, `sum((X - v) * (X - v), axis 0)`; for every stored matrix
/// `W`, its Gram matrices `Wᵀ W` and `W Wᵀ`.
pub fn leaves(params: &[Param], written: &[String]) -> Vec<Expr> {
    let is_written = |p: &Param| written.iter().any(|w| **w == *p.name);
    let readable = |p: &Param| match &p.kind {
        ParamKind::Array { access, .. } => {
            *access != tenslift_targets::Access::Out || is_written(p)
        }
        _ => false,
    };
    let arrays: Vec<(&Param, &[Dim])> = params
        .iter()
        .filter(|p| readable(p))
        .filter_map(float_array)
        .collect();
    let mut out = Vec::new();
    for &(matrix, shape) in arrays.iter().filter(|(_, s)| s.len() == 2) {
        let x = Expr::var(&matrix.name, matrix.ty());
        for &(vector, vshape) in arrays.iter().filter(|(p, s)| s.len() == 1 && is_written(p)) {
            if vshape[0] != shape[1] || vector.ty().dtype != matrix.ty().dtype {
                continue;
            }
            let v = Expr::var(&vector.name, vector.ty());
            let moment = build::sub(x.clone(), v).and_then(|d| {
                let square = build::mul(d.clone(), d)?;
                build::sum(square, &[0])
            });
            let Ok(moment) = moment else {
                continue;
            };
            // The root mean square deviation over each float scalar (the
            // count as a parameter), and its negation, which a comparison
            // against a threshold (`σ <= eps`) reads: the library's depth
            // bound stops below both.
            for scalar in params
                .iter()
                .filter(|p| matches!(p.kind, ParamKind::Scalar(d) if d == matrix.ty().dtype))
            {
                let count = Expr::var(&scalar.name, scalar.ty());
                if let Ok(root) = build::div(moment.clone(), count).and_then(build::sqrt) {
                    out.extend(build::neg(root.clone()).ok());
                    out.push(root);
                }
            }
            out.push(moment);
        }
        if is_written(matrix) {
            out.extend(gram_matrices(&x));
        }
    }
    out.extend(row_moments(params, written));
    out
}

/// `sum((Xᵀ - v)², axis 0)` for every readable matrix `X` of shape `[a, b]`
/// and stored float vector `v` of length `a`: second moments of each row
/// about a stored row statistic (a per-row variance). An integer `X` is
/// converted to `v`'s type first, as C's usual arithmetic conversions do
/// in `data[i] - mean` with a float mean.
fn row_moments(params: &[Param], written: &[String]) -> Vec<Expr> {
    let is_written = |p: &Param| written.iter().any(|w| **w == *p.name);
    let readable = |p: &Param| match &p.kind {
        ParamKind::Array { access, .. } => {
            *access != tenslift_targets::Access::Out || is_written(p)
        }
        _ => false,
    };
    let vectors: Vec<(&Param, &[Dim])> = params
        .iter()
        .filter(|p| is_written(p))
        .filter_map(float_array)
        .filter(|(_, s)| s.len() == 1)
        .collect();
    let mut out = Vec::new();
    for matrix in params.iter().filter(|p| readable(p)) {
        let ParamKind::Array { dtype, shape, .. } = &matrix.kind else {
            continue;
        };
        if shape.len() != 2 || !dtype.is_numeric() {
            continue;
        }
        for &(vector, vshape) in &vectors {
            let vtype = vector.ty().dtype;
            if vshape[0] != shape[0] || (dtype.is_float() && *dtype != vtype) {
                continue;
            }
            let x = Expr::var(&matrix.name, matrix.ty());
            let x = if *dtype == vtype {
                Ok(x)
            } else {
                build::cast(x, vtype)
            };
            let moment = x
                .and_then(|x| build::transpose(x, &[1, 0]))
                .and_then(|t| build::sub(t, Expr::var(&vector.name, vector.ty())))
                .and_then(|d| build::mul(d.clone(), d))
                .and_then(|square| build::sum(square, &[0]));
            out.extend(moment.ok());
        }
    }
    out
}

/// `Wᵀ W` and `W Wᵀ` of a matrix `w`.
fn gram_matrices(w: &Expr) -> Vec<Expr> {
    let transposed = |e: &Expr| build::transpose(e.clone(), &[1, 0]);
    [
        transposed(w).and_then(|t| build::matmul(t, w.clone())),
        transposed(w).and_then(|t| build::matmul(w.clone(), t)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The constant every diagonal element of a square `target` holds, if the
/// diagonal is one constant.
fn constant_diagonal(target: &Tensor) -> Option<f64> {
    let shape = target.shape();
    if shape.len() != 2 || shape[0] != shape[1] || shape[0] == 0 {
        return None;
    }
    let first = target.get(&[0, 0])?.as_constant()?;
    (1..shape[0])
        .all(|i| target.get(&[i, i]).and_then(|e| e.as_constant()).as_ref() == Some(&first))
        .then(|| first.to_f64())
}

/// `g` off the diagonal and `c` on it: `triu(g, 1) + tril(g, -1) + c·I`,
/// the identity built as the diagonal band of a constant matrix.
fn with_diagonal(g: &Expr, c: f64) -> Option<Expr> {
    let dtype = g.dtype();
    let filled = build::full(g.shape().to_vec(), Lit::float(c, dtype)).ok()?;
    let band = build::tril(build::triu(filled, 0).ok()?, 0).ok()?;
    let off = build::add(
        build::triu(g.clone(), 1).ok()?,
        build::tril(g.clone(), -1).ok()?,
    )
    .ok()?;
    build::add(off, band).ok()
}

/// A program for a square `target` whose diagonal is one constant and
/// whose other elements are those of a stored array's Gram matrix; its
/// value is checked whole against the target.
pub fn unit_diagonal(
    evaluator: &mut Evaluator,
    params: &[Param],
    written: &[String],
    target: &Tensor,
    sizes: &Sizes,
) -> Option<Found> {
    let c = constant_diagonal(target)?;
    let n = target.shape()[0];
    for g in stored_grams(params, written) {
        let Some(value) = evaluator.value(&g) else {
            continue;
        };
        if value.shape() != target.shape() {
            continue;
        }
        let off_diagonal_equal =
            (0..n).all(|i| (0..n).all(|j| i == j || value.get(&[i, j]) == target.get(&[i, j])));
        if !off_diagonal_equal {
            continue;
        }
        let found = with_diagonal(&g, c).and_then(|e| accepted(evaluator, e, target, sizes));
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The Gram matrices of every stored float matrix.
fn stored_grams(params: &[Param], written: &[String]) -> Vec<Expr> {
    params
        .iter()
        .filter(|p| written.iter().any(|w| **w == *p.name))
        .filter_map(float_array)
        .filter(|(_, s)| s.len() == 2)
        .flat_map(|(p, _)| gram_matrices(&Expr::var(&p.name, p.ty())))
        .collect()
}

/// `expr`, priced, when its value is exactly `target`.
fn accepted(
    evaluator: &mut Evaluator,
    expr: Expr,
    target: &Tensor,
    sizes: &Sizes,
) -> Option<Found> {
    if !evaluator.value(&expr).is_some_and(|v| &v == target) {
        return None;
    }
    let cost = cost_of(&[&expr], sizes);
    Some(Found { expr, cost })
}

/// `Wᵀ W / d` or `Wᵀ W · q` for a stored matrix `W` and a scalar factor of
/// the parameters (a sample covariance `Wᵀ W / (n - 1)` of centred data):
/// the factor is the quotient of one element of `target` by the same
/// element of the Gram matrix, it must be the same for every element, and
/// it is written back as an expression by the direct translation. A factor
/// that is a reciprocal `1/d` is written as a division by `d`, as C divides.
pub fn scaled_gram(
    evaluator: &mut Evaluator,
    params: &[Param],
    written: &[String],
    target: &Tensor,
    sizes: &Sizes,
) -> Option<Found> {
    let shape = target.shape();
    if shape.len() != 2 || shape[0] != shape[1] {
        return None;
    }
    for g in stored_grams(params, written) {
        let Some(value) = evaluator.value(&g) else {
            continue;
        };
        if value.shape() != target.shape() {
            continue;
        }
        let Some(factor) = common_factor(&value, target) else {
            continue;
        };
        let dtype = g.dtype();
        let expr = if factor == Value::one() {
            Some(g.clone())
        } else if let Some(divisor) = reciprocal_of(&factor) {
            scalar_expr(&divisor, dtype, params, sizes).and_then(|d| build::div(g.clone(), d).ok())
        } else {
            scalar_expr(&factor, dtype, params, sizes).and_then(|q| build::mul(g.clone(), q).ok())
        };
        let found = expr.and_then(|e| accepted(evaluator, e, target, sizes));
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The one `q` with `target = value · q` element by element, if there is
/// one (read off the first non-zero element of `value`).
fn common_factor(value: &Tensor, target: &Tensor) -> Option<Value> {
    let pivot = value.elems().iter().position(|e| !e.is_zero())?;
    let q = target.elems()[pivot].divide_exact(&value.elems()[pivot])?;
    value
        .elems()
        .iter()
        .zip(target.elems())
        .all(|(v, t)| v.mul(&q) == *t)
        .then_some(q)
}

/// `d` when `q` is `1/d` times a constant (`c/d` gives `d/c`).
fn reciprocal_of(q: &Value) -> Option<Value> {
    let [term] = q.terms() else {
        return None;
    };
    let [(atom, 1)] = term.mono.factors() else {
        return None;
    };
    let AtomKind::Recip(d) = atom.kind() else {
        return None;
    };
    d.div(&Value::constant(term.coeff.clone())).ok()
}

/// The TensIR expression of a scalar value of the parameters.
fn scalar_expr(value: &Value, dtype: DType, params: &[Param], sizes: &Sizes) -> Option<Expr> {
    let target = Tensor::scalar(value.clone());
    let targets = Targets {
        first: &target,
        first_sizes: sizes,
        second: None,
        out_shape: None,
    };
    translate(&targets, dtype, params, &[])
}

/// A program for `target` from the arrays stored so far, without a
/// library: the diagonal override of a Gram matrix ([`unit_diagonal`]), or
/// a matrix standardised by stored column statistics ([`standardised`]).
pub fn direct(
    evaluator: &mut Evaluator,
    params: &[Param],
    written: &[String],
    target: &Tensor,
    sizes: &Sizes,
) -> Option<Found> {
    unit_diagonal(evaluator, params, written, target, sizes)
        .or_else(|| standardised(evaluator, params, written, target, sizes))
}

/// `(X - u) / (sqrt(c) * w)` or `(X - u) / w` for a readable matrix `X`,
/// stored vectors `u` (a column mean) and `w` (a column deviation) and a
/// float scalar `c`: the centring and scaling of a data matrix, whose
/// quotient by a stored polynomial the library never divides by.
pub fn standardised(
    evaluator: &mut Evaluator,
    params: &[Param],
    written: &[String],
    target: &Tensor,
    sizes: &Sizes,
) -> Option<Found> {
    let is_written = |p: &Param| written.iter().any(|w| **w == *p.name);
    let var = |p: &Param| Expr::var(&p.name, p.ty());
    let matrices = params.iter().filter_map(float_array).filter(|(p, s)| {
        s.len() == 2
            && (is_written(p)
                || matches!(&p.kind, ParamKind::Array { access, .. } if *access != tenslift_targets::Access::Out))
    });
    let vectors: Vec<&Param> = params
        .iter()
        .filter(|p| is_written(p))
        .filter_map(float_array)
        .filter(|(_, s)| s.len() == 1)
        .map(|(p, _)| p)
        .collect();
    let scalars: Vec<&Param> = params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Scalar(d) if d.is_float()))
        .collect();
    for (matrix, _) in matrices {
        for &mean in &vectors {
            let Ok(centred) = build::sub(var(matrix), var(mean)) else {
                continue;
            };
            for &scale in vectors.iter().filter(|v| v.name != mean.name) {
                let scaled_by_roots = scalars.iter().filter_map(|c| {
                    build::sqrt(var(c))
                        .and_then(|r| build::mul(r, var(scale)))
                        .ok()
                });
                for divisor in std::iter::once(var(scale)).chain(scaled_by_roots) {
                    let found = build::div(centred.clone(), divisor)
                        .ok()
                        .and_then(|e| accepted(evaluator, e, target, sizes));
                    if found.is_some() {
                        return found;
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_targets::{print_expr, Access, DType};

    fn array(name: &str, shape: &[&str], access: Access) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::Array {
                dtype: DType::F64,
                shape: shape.iter().map(|d| Dim::sym(d)).collect(),
                access,
            },
        }
    }

    #[test]
    fn a_diagonal_of_one_constant_is_recognised_and_any_other_is_not() {
        let unit = Tensor::from_fn(&[3, 3], |ix| {
            if ix[0] == ix[1] {
                Value::one()
            } else {
                Value::int((ix[0] * 3 + ix[1]) as i64)
            }
        });
        assert_eq!(constant_diagonal(&unit), Some(1.0));
        let varying = Tensor::from_fn(&[3, 3], |ix| Value::int((ix[0] + ix[1]) as i64));
        assert_eq!(constant_diagonal(&varying), None);
    }

    #[test]
    fn a_common_factor_holds_for_every_element_or_is_not_one() {
        let value = Tensor::from_fn(&[2, 2], |ix| Value::int((ix[0] * 2 + ix[1]) as i64));
        let doubled = value.map(|e| e.mul(&Value::int(2)));
        assert_eq!(common_factor(&value, &doubled), Some(Value::int(2)));
        let mut off = doubled.elems().to_vec();
        off[3] = Value::int(7);
        let off = Tensor::from_fn(&[2, 2], |ix| off[ix[0] * 2 + ix[1]].clone());
        assert_eq!(common_factor(&value, &off), None);
    }

    #[test]
    fn moments_need_a_stored_vector_and_gram_matrices_a_stored_matrix() {
        let params = vec![
            array("data", &["n", "m"], Access::InOut),
            array("mean", &["m"], Access::Out),
        ];
        let printed = |written: &[String]| -> Vec<String> {
            leaves(&params, written).iter().map(print_expr).collect()
        };
        assert!(printed(&[]).is_empty());
        let with_mean = printed(&["mean".to_string()]);
        assert_eq!(
            with_mean,
            ["sum(mul(sub(data, mean), sub(data, mean)), axes=[0])"]
        );
        let with_data = printed(&["mean".to_string(), "data".to_string()]);
        assert!(
            with_data.contains(&"matmul(transpose(data, perm=[1, 0]), data)".to_string()),
            "{with_data:?}"
        );
    }
}
