//! Splits linearised pointer subscripts into dimensions.
//!
//! Every access `p[e]` of one pointer is read as a polynomial `e`. Each
//! monomial is split into its iterator factors and its parameter factors;
//! the parameter factors (times a constant for constant strides) name the
//! dimension's stride. `A[i*lda + k]` has strides `lda, 1` and becomes
//! `A[i][k]`; `A[(i*N + j)*M + k]` with constants gives `N*M, M, 1`. The
//! split is exact: `Σ index[d] * stride[d]` is the original subscript, so it
//! is correct whatever the row lengths; the logical dimensions it implies
//! assume each index stays below the ratio of neighbouring strides (the
//! leading-dimension convention).
//!
//! Constant strides are recognised when the iterator coefficients of all
//! accesses form a divisibility chain ending in 1 (`64*i + j`: strides
//! `64, 1`); a lone `2*i` stays one-dimensional.

use std::collections::BTreeMap;

use crate::affine::{Monomial, Poly};
use crate::fourier_motzkin::gcd;
use crate::ir::Affine;

/// One dimension's stride: `coeff · Π params`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stride {
    pub params: Monomial,
    pub coeff: i64,
}

/// Where a stride was found: multiplying a loop iterator (`t*kv_dim`), or
/// only multiplying a loop-invariant position parameter (`head*head_size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum StrideOrigin {
    Iterator,
    Position,
}

/// The layout found for one pointer.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Outermost first; the last is always 1.
    pub strides: Vec<Affine>,
    /// Per access (in input order), one affine index per dimension.
    pub indices: Vec<Vec<Affine>>,
    /// Extents of the inner dimensions implied by stride ratios
    /// (`dims[0]` is always `None`: the caller infers it from loops).
    pub dims: Vec<Option<Affine>>,
    /// Every stride is the product of the inner extents (row-major, no
    /// padding): the pointer is a dense array of `dims`. Set when a stride
    /// is a product of parameters (`x[(j*filters + i)*spatial + k]`,
    /// strides `filters*spatial, spatial, 1`), which `strides` cannot hold
    /// as affine values (it is then empty).
    pub dense: bool,
}

/// Why a pointer's subscripts could not be split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DelinearizeError {
    /// A monomial multiplies iterators together (`A[i*j]`).
    NonLinear(String),
    /// A stride is a product of parameters or two strides compete.
    BadStride(String),
    /// A coefficient or offset does not fit in 64 bits.
    Overflow,
}

fn render_monomial(coeff: i64, m: &Monomial) -> String {
    let mut parts: Vec<String> = Vec::new();
    if coeff != 1 || m.is_empty() {
        parts.push(coeff.to_string());
    }
    parts.extend(m.iter().cloned());
    parts.join("*")
}

/// `m` without one occurrence of `p`.
fn without(m: &Monomial, p: &str) -> Monomial {
    let mut rest = m.clone();
    if let Some(at) = rest.iter().position(|x| x == p) {
        rest.remove(at);
    }
    rest
}

/// How a parameter-only offset term `c · m` (at least two parameters, e.g.
/// `head*head_size`) becomes an index term: parameter `position` (times
/// `c`) in the dimension whose stride is the rest of `m`.
///
/// A dimension whose stride already is the rest of `m` is used when exactly
/// one such split exists (`head*lda` with `i*lda` elsewhere is row
/// `i + head`). Otherwise the stride must be told from the position: the
/// position is the one factor that is not extent-like (`is_extent`: it
/// bounds no loop and is no stride), and the other factors form a new
/// stride. `None` when no split, or more than one, qualifies.
fn split_offset(
    m: &Monomial,
    strides: &[(Stride, StrideOrigin)],
    is_extent: &dyn Fn(&str) -> bool,
) -> Option<(Stride, String)> {
    let mut factors: Vec<&String> = m.iter().collect();
    factors.dedup();
    let split = |p: &String| {
        (
            Stride {
                params: without(m, p),
                coeff: 1,
            },
            p.clone(),
        )
    };
    let existing: Vec<(Stride, String)> = factors
        .iter()
        .map(|p| split(p))
        .filter(|(s, _)| strides.iter().any(|(x, _)| x == s))
        .collect();
    if !existing.is_empty() {
        return (existing.len() == 1).then(|| existing[0].clone());
    }
    let in_stride = |p: &str| strides.iter().any(|(s, _)| s.params.iter().any(|x| x == p));
    let positions: Vec<&&String> = factors
        .iter()
        .filter(|p| !is_extent(p) && !in_stride(p))
        .collect();
    match positions.as_slice() {
        [p] => Some(split(p)),
        _ => None,
    }
}

/// Splits the accesses of one pointer. `is_iter` tells loop iterators from
/// parameters; `is_extent` names parameters that bound some loop (they
/// are read as strides, never as positions, in `head*head_size`). With
/// `constant_strides` false, parameter-free coefficients never open a
/// dimension (the caller's fallback when a constant split would let an
/// inner index run past its row). `runs_to(i, p)` says loop iterator `i`
/// counts from 0 up to size `p` (interleaved rows,
/// [`fold_interleaved_strides`]).
pub fn delinearize(
    accesses: &[Poly],
    is_iter: &dyn Fn(&str) -> bool,
    is_extent: &dyn Fn(&str) -> bool,
    runs_to: &dyn Fn(&str, &str) -> bool,
    constant_strides: bool,
) -> Result<Layout, DelinearizeError> {
    let (folded, folds) = fold_interleaved_strides(accesses, is_iter, runs_to);
    let (grouped, mut compounds) = group_compound_strides(&folded, is_iter)?;
    // Expanded in this order: a compound may sum folded strides.
    compounds.extend(folds);
    let layout = split(&grouped, is_iter, is_extent, constant_strides)?;
    let mut layout = expand_compounds(layout, &compounds);
    borrow_rows_for_reversed_positions(&mut layout, is_iter)?;
    Ok(layout)
}

/// A walk that counts an iterator down, `pIn++` in `for (col = n; col > 0;
/// col--)`, leaves `n - col` in a row: the split read the subscript
/// `(r + 1)*n - col` as row `r + 1`, position `-col`, which is exact but
/// puts every position below 0. A position whose iterators all count
/// negatively and that has no constant of its own to stay at or above 0
/// takes one row of its dimension from the row index when that has a
/// positive constant: row `r`, position `n - col`, the same sum.
fn borrow_rows_for_reversed_positions(
    layout: &mut Layout,
    is_iter: &dyn Fn(&str) -> bool,
) -> Result<(), DelinearizeError> {
    for index in &mut layout.indices {
        for d in (1..index.len()).rev() {
            let Some(Some(extent)) = layout.dims.get(d) else {
                continue;
            };
            let iters: Vec<i64> = index[d]
                .terms
                .iter()
                .filter(|(v, _)| is_iter(v))
                .map(|(_, &c)| c)
                .collect();
            let reversed = !iters.is_empty() && iters.iter().all(|&c| c < 0);
            if !reversed || index[d].constant > 0 || index[d - 1].constant < 1 {
                continue;
            }
            index[d - 1].constant -= 1;
            for (v, &c) in &extent.terms {
                let e = index[d].terms.entry(v.clone()).or_insert(0);
                *e = e.checked_add(c).ok_or(DelinearizeError::Overflow)?;
            }
            index[d].constant = index[d]
                .constant
                .checked_add(extent.constant)
                .ok_or(DelinearizeError::Overflow)?;
            index[d].terms.retain(|_, c| *c != 0);
        }
    }
    Ok(())
}

/// Interleaved samples (`rgb[(y*w + x)*3 + c]`, `rgb[3*i + 1]` in a flat
/// walk split over `h*w`): every term that holds an iterator or a size has
/// a common factor `k > 1`, and an iterator that steps without a size (the
/// sample within a row, `3*x`) runs to a size that is a stride (`x < w`).
/// The row then holds `k*w` elements: read as
/// stride `w` and row index `3*y`, the position `3*x + c` would run past
/// its row of `w` and no size tuple keeps the access in bounds. Each
/// single-size stride `p` becomes the stride `k*p` (a stand-in name,
/// expanded back as compounds are), its terms divided by `k`, so the split
/// is row `y`, position `3*x + c` in a row of `3*w`. Terms over two or more
/// sizes (a batch of interleaved images) are left as they are, and so is
/// a decimation (`in[2*y*w + 2*x]` with `x < ow`), whose rows are `w` long.
fn fold_interleaved_strides(
    accesses: &[Poly],
    is_iter: &dyn Fn(&str) -> bool,
    runs_to: &dyn Fn(&str, &str) -> bool,
) -> (Vec<Poly>, Compounds) {
    let unchanged = || (accesses.to_vec(), Vec::new());
    let terms = || accesses.iter().flat_map(|p| p.terms.iter());
    if terms().any(|(m, _)| m.iter().filter(|v| !is_iter(v)).count() > 1) {
        return unchanged();
    }
    let strides: Vec<&String> = terms()
        .filter(|(m, _)| m.iter().any(|v| is_iter(v)))
        .flat_map(|(m, _)| m.iter().filter(|v| !is_iter(v)))
        .collect();
    let past_its_row = terms().any(|(m, _)| match m.as_slice() {
        [x] if is_iter(x) => strides.iter().any(|p| runs_to(x, p)),
        _ => false,
    });
    if !past_its_row {
        return unchanged();
    }
    let k = terms()
        .filter(|(m, _)| !m.is_empty())
        .try_fold(0i64, |g, (_, &c)| Some(gcd(g, c.checked_abs()?)));
    let Some(k) = k.filter(|&k| k > 1) else {
        return unchanged();
    };
    let mut compounds: Compounds = Vec::new();
    let folded = accesses
        .iter()
        .map(|p| {
            let mut q = Poly::default();
            for (m, &c) in &p.terms {
                let Some(size) = m.iter().find(|v| !is_iter(v)) else {
                    q.terms.insert(m.clone(), c);
                    continue;
                };
                let mut stride = Affine::constant(0);
                stride.terms.insert(size.clone(), k);
                let name = format!("{COMPOUND}{stride}");
                let mut key: Monomial = m.iter().filter(|v| is_iter(v)).cloned().collect();
                key.push(name.clone());
                key.sort();
                *q.terms.entry(key).or_insert(0) += c / k;
                if !compounds.iter().any(|(n, _)| *n == name) {
                    compounds.push((name, stride));
                }
            }
            q
        })
        .collect();
    (folded, compounds)
}

/// Compound strides by stand-in name: `(name, sum)`.
type Compounds = Vec<(String, Affine)>;

/// Prefix of the name standing for a compound stride while splitting.
const COMPOUND: &str = "\u{2}stride:";

/// An iterator whose coefficient is an affine sum of two or more
/// parameters (`out[y*OW + x]` with a local `OW = W - KW + 1`, expanded to
/// `y*W - y*KW + y + x`) strides by that sum as one stride: its terms
/// become one, over a stand-in name, and the sum comes back in the layout
/// ([`expand_compounds`]). A coefficient with a single parameter
/// (`i*lda + i`, a diagonal) keeps its terms, as before.
fn group_compound_strides(
    accesses: &[Poly],
    is_iter: &dyn Fn(&str) -> bool,
) -> Result<(Vec<Poly>, Compounds), DelinearizeError> {
    let mut compounds: Compounds = Vec::new();
    let mut out = Vec::with_capacity(accesses.len());
    for p in accesses {
        // Iterator -> its coefficient, when every term of it is affine in
        // the parameters.
        let mut by_iter: BTreeMap<String, Affine> = BTreeMap::new();
        for (m, &c) in &p.terms {
            let iters: Vec<&String> = m.iter().filter(|v| is_iter(v)).collect();
            let [it] = iters.as_slice() else { continue };
            let rest = without(m, it);
            let coeff = by_iter
                .entry((*it).clone())
                .or_insert_with(|| Affine::constant(0));
            match rest.as_slice() {
                [] => {
                    coeff.constant = coeff
                        .constant
                        .checked_add(c)
                        .ok_or(DelinearizeError::Overflow)?
                }
                [param] => {
                    let e = coeff.terms.entry(param.clone()).or_insert(0);
                    *e = e.checked_add(c).ok_or(DelinearizeError::Overflow)?;
                }
                _ => {
                    coeff.terms.insert(String::new(), 0);
                }
            }
        }
        let mut q = p.clone();
        for (it, coeff) in by_iter {
            let product = coeff.terms.keys().any(String::is_empty);
            if product || coeff.terms.values().filter(|c| **c != 0).count() < 2 {
                continue;
            }
            let name = format!("{COMPOUND}{coeff}");
            q.terms
                .retain(|m, _| !(m.contains(&it) && m.iter().filter(|v| is_iter(v)).count() == 1));
            let mut m = vec![it.clone(), name.clone()];
            m.sort();
            q.terms.insert(m, 1);
            if !compounds.iter().any(|(n, _)| *n == name) {
                compounds.push((name, coeff));
            }
        }
        out.push(q);
    }
    Ok((out, compounds))
}

/// The layout with each stand-in name of a compound stride replaced by
/// its sum (strides and row extents).
fn expand_compounds(mut layout: Layout, compounds: &[(String, Affine)]) -> Layout {
    if compounds.is_empty() {
        return layout;
    }
    // Coefficients are small (a stride's sum times 1); saturating keeps
    // an absurd one from wrapping.
    let expand = |a: &mut Affine| {
        for (name, value) in compounds {
            if let Some(c) = a.terms.remove(name) {
                a.constant = a.constant.saturating_add(c.saturating_mul(value.constant));
                for (v, k) in &value.terms {
                    let e = a.terms.entry(v.clone()).or_insert(0);
                    *e = e.saturating_add(c.saturating_mul(*k));
                }
                a.terms.retain(|_, k| *k != 0);
            }
        }
    };
    layout.strides.iter_mut().for_each(expand);
    layout.dims.iter_mut().flatten().for_each(expand);
    layout.indices.iter_mut().flatten().for_each(expand);
    layout
}

fn split(
    accesses: &[Poly],
    is_iter: &dyn Fn(&str) -> bool,
    is_extent: &dyn Fn(&str) -> bool,
    constant_strides: bool,
) -> Result<Layout, DelinearizeError> {
    // Constant strides: |coefficients| of parameter-free iterator terms.
    let mut constant_coeffs: Vec<i64> = Vec::new();
    for p in accesses {
        for (m, &c) in &p.terms {
            let (iters, params): (Vec<&String>, Vec<&String>) = m.iter().partition(|v| is_iter(v));
            if iters.len() > 1 {
                return Err(DelinearizeError::NonLinear(render_monomial(c, m)));
            }
            if iters.len() == 1 && params.is_empty() {
                let magnitude = c.checked_abs().ok_or(DelinearizeError::Overflow)?;
                constant_coeffs.push(magnitude);
            }
        }
    }
    constant_coeffs.sort_unstable();
    constant_coeffs.dedup();
    let split_constants = constant_strides
        && constant_coeffs.len() > 1
        && constant_coeffs[0] == 1
        && constant_coeffs.windows(2).all(|w| w[1] % w[0] == 0);

    let stride_of_term = |m: &Monomial, c: i64| -> (Stride, i64) {
        let params: Monomial = m.iter().filter(|v| !is_iter(v)).cloned().collect();
        if params.is_empty() && split_constants {
            (
                Stride {
                    params,
                    coeff: c.abs(),
                },
                c.signum(),
            )
        } else {
            (Stride { params, coeff: 1 }, c)
        }
    };

    // Collect the strides: first those of terms with an iterator, then
    // those that parameter-only offsets (`head*head_size`) open.
    let mut strides: Vec<(Stride, StrideOrigin)> = vec![(
        Stride {
            params: Vec::new(),
            coeff: 1,
        },
        StrideOrigin::Iterator,
    )];
    for p in accesses {
        for (m, &c) in &p.terms {
            if m.iter().any(|v| is_iter(v)) {
                let (s, _) = stride_of_term(m, c);
                if !strides.iter().any(|(x, _)| *x == s) {
                    strides.push((s, StrideOrigin::Iterator));
                }
            }
        }
    }
    // Offset term -> (dimension stride, position parameter).
    let mut offset_splits: Vec<(Monomial, Stride, String)> = Vec::new();
    for p in accesses {
        for (m, &c) in &p.terms {
            if m.len() < 2 || m.iter().any(|v| is_iter(v)) {
                continue;
            }
            if offset_splits.iter().any(|(x, _, _)| x == m) {
                continue;
            }
            let Some((stride, position)) = split_offset(m, &strides, is_extent) else {
                return Err(DelinearizeError::BadStride(format!(
                    "the offset `{}` is a product of parameters and it is unclear which \
                     one is the position and which the stride",
                    render_monomial(c, m)
                )));
            };
            if !strides.iter().any(|(x, _)| *x == stride) {
                strides.push((stride.clone(), StrideOrigin::Position));
            }
            offset_splits.push((m.clone(), stride, position));
        }
    }
    // Outermost first: more parameter factors, then strides of iterators
    // before those of positions (`t*kv_dim + head*head_size`: the head's
    // slice lies inside the row), then larger constants.
    strides.sort_by(|(a, a_origin), (b, b_origin)| {
        b.params
            .len()
            .cmp(&a.params.len())
            .then(a_origin.cmp(b_origin))
            .then(b.coeff.cmp(&a.coeff))
            .then(a.params.cmp(&b.params))
    });
    for pair in strides.windows(2) {
        let ((outer, outer_origin), (inner, inner_origin)) = (&pair[0], &pair[1]);
        if !outer.params.is_empty()
            && outer.params.len() == inner.params.len()
            && outer_origin == inner_origin
        {
            return Err(DelinearizeError::BadStride(format!(
                "`{}` and `{}` compete for the same dimension",
                render_monomial(outer.coeff, &outer.params),
                render_monomial(inner.coeff, &inner.params)
            )));
        }
    }
    let strides: Vec<Stride> = strides.into_iter().map(|(s, _)| s).collect();
    let mut stride_affines = Vec::new();
    let mut product_stride = None;
    for s in &strides {
        match s.params.as_slice() {
            [] => stride_affines.push(Affine::constant(s.coeff)),
            [p] => {
                let mut a = Affine::constant(0);
                a.terms.insert(p.clone(), s.coeff);
                stride_affines.push(a);
            }
            _ => product_stride = product_stride.or(Some(s.clone())),
        }
    }
    let ratios: Vec<Option<Affine>> = strides
        .windows(2)
        .map(|pair| stride_ratio(&pair[0], &pair[1]))
        .collect();
    let dense = match &product_stride {
        // A product of parameters is a stride only as the product of the
        // extents inside it: every ratio must be one extent.
        Some(_) if ratios.iter().all(Option::is_some) && is_unit(strides.last()) => {
            stride_affines.clear();
            true
        }
        Some(s) => {
            return Err(DelinearizeError::BadStride(format!(
                "the stride `{}` is a product of parameters that is not the product of the inner extents",
                render_monomial(s.coeff, &s.params)
            )))
        }
        None => false,
    };

    let inner = strides.len() - 1;
    let mut indices = Vec::new();
    for p in accesses {
        let mut index = vec![Affine::constant(0); strides.len()];
        for (m, &c) in &p.terms {
            let iter: Option<&String> = m.iter().find(|v| is_iter(v));
            let (dim, coeff, var) = match iter {
                Some(it) => {
                    let (s, k) = stride_of_term(m, c);
                    let d = strides.iter().position(|x| *x == s).unwrap_or(inner);
                    (d, k, Some(it.clone()))
                }
                None => {
                    // An offset: `c * stride` belongs to that dimension.
                    let stride = Stride {
                        params: m.clone(),
                        coeff: 1,
                    };
                    let split = offset_splits.iter().find(|(x, _, _)| x == m);
                    match (strides.iter().position(|x| *x == stride), split) {
                        (Some(d), _) if !m.is_empty() => (d, c, None),
                        (_, Some((_, s, position))) => {
                            let d = strides.iter().position(|x| x == s).unwrap_or(inner);
                            (d, c, Some(position.clone()))
                        }
                        _ => match m.as_slice() {
                            [] => (inner, c, None),
                            [param] => (inner, c, Some(param.clone())),
                            _ => {
                                return Err(DelinearizeError::BadStride(format!(
                                    "the offset `{}` is a product of parameters",
                                    render_monomial(c, m)
                                )))
                            }
                        },
                    }
                }
            };
            let slot = &mut index[dim];
            match var {
                Some(v) => {
                    let e = slot.terms.entry(v).or_insert(0);
                    *e = e.checked_add(coeff).ok_or(DelinearizeError::Overflow)?;
                }
                None => {
                    slot.constant = slot
                        .constant
                        .checked_add(coeff)
                        .ok_or(DelinearizeError::Overflow)?;
                }
            }
            slot.terms.retain(|_, c| *c != 0);
        }
        indices.push(index);
    }

    let mut dims = vec![None];
    dims.extend(ratios);
    Ok(Layout {
        strides: stride_affines,
        indices,
        dims,
        dense,
    })
}

/// Whether the innermost stride is 1.
fn is_unit(s: Option<&Stride>) -> bool {
    s.is_some_and(|x| x.params.is_empty() && x.coeff == 1)
}

/// `outer / inner` when it is a constant or a single parameter.
fn stride_ratio(outer: &Stride, inner: &Stride) -> Option<Affine> {
    if outer.params == inner.params {
        return (outer.coeff % inner.coeff == 0)
            .then(|| Affine::constant(outer.coeff / inner.coeff));
    }
    if outer.params.len() == inner.params.len() + 1 && outer.coeff == inner.coeff {
        let mut rest = outer.params.clone();
        for p in &inner.params {
            let at = rest.iter().position(|x| x == p)?;
            rest.remove(at);
        }
        return rest.first().map(|p| Affine::var(p.clone()));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poly(terms: &[(&[&str], i64)]) -> Poly {
        let mut p = Poly::default();
        for (m, c) in terms {
            let mut m: Vec<String> = m.iter().map(|s| s.to_string()).collect();
            m.sort();
            p.terms.insert(m, *c);
        }
        p
    }
    fn is_iter(v: &str) -> bool {
        matches!(v, "i" | "j" | "k")
    }
    fn no_extent(_: &str) -> bool {
        false
    }
    fn no_runs(_: &str, _: &str) -> bool {
        false
    }
    fn show(l: &Layout) -> String {
        let strides: Vec<String> = l.strides.iter().map(|s| s.to_string()).collect();
        let idx: Vec<String> = l
            .indices
            .iter()
            .map(|ix| {
                ix.iter()
                    .map(|a| format!("[{a}]"))
                    .collect::<Vec<_>>()
                    .join("")
            })
            .collect();
        format!("strides {} | {}", strides.join(","), idx.join(" "))
    }

    #[test]
    fn leading_dimension_parameter() {
        // A[i*lda + k] and A[k + lda*i + lda] (= A[i+1][k])
        let a = poly(&[(&["i", "lda"], 1), (&["k"], 1)]);
        let b = poly(&[(&["i", "lda"], 1), (&["k"], 1), (&["lda"], 1)]);
        let l = delinearize(&[a, b], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides lda,1 | [i][k] [i + 1][k]");
        assert_eq!(l.dims, vec![None, Some(Affine::var("lda"))]);
    }

    #[test]
    fn a_position_counted_down_takes_a_row_from_its_row_index() {
        // A[i*lda + lda - k] (k counting lda..1) is row i, position lda - k;
        // A[(i + 1)*lda + k] keeps row i + 1 (its position counts up).
        let a = poly(&[(&["i", "lda"], 1), (&["lda"], 1), (&["k"], -1)]);
        let b = poly(&[(&["i", "lda"], 1), (&["k"], 1), (&["lda"], 1)]);
        let l = delinearize(&[a, b], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides lda,1 | [i][-k + lda] [i + 1][k]");
    }

    #[test]
    fn product_of_parameters_is_a_dense_stride() {
        // darknet: x[j*filters*spatial + i*spatial + k] = x[j][i][k]
        let a = poly(&[
            (&["filters", "j", "spatial"], 1),
            (&["i", "spatial"], 1),
            (&["k"], 1),
        ]);
        let l = delinearize(&[a], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert!(l.dense);
        assert_eq!(
            l.dims,
            vec![
                None,
                Some(Affine::var("filters")),
                Some(Affine::var("spatial"))
            ]
        );
        let ix: Vec<String> = l.indices[0].iter().map(|a| a.to_string()).collect();
        assert_eq!(ix, ["j", "i", "k"]);
        // filters*spatial with an inner stride of 1 alone is not dense.
        let b = poly(&[(&["filters", "j", "spatial"], 1), (&["k"], 1)]);
        assert!(delinearize(&[b], &is_iter, &no_extent, &no_runs, true).is_err());
    }

    #[test]
    fn constant_strides_from_macro_sizes() {
        // A[(i*8 + j)*4 + k] = A[32i + 4j + k]
        let a = poly(&[(&["i"], 32), (&["j"], 4), (&["k"], 1)]);
        let l = delinearize(&[a], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides 32,4,1 | [i][j][k]");
        assert_eq!(
            l.dims,
            vec![None, Some(Affine::constant(8)), Some(Affine::constant(4))]
        );
    }

    #[test]
    fn constant_split_can_be_turned_off() {
        let a = poly(&[(&["i"], 32), (&["j"], 4), (&["k"], 1)]);
        let l = delinearize(&[a], &is_iter, &no_extent, &no_runs, false).unwrap();
        assert_eq!(show(&l), "strides 1 | [32*i + 4*j + k]");
    }

    #[test]
    fn an_iterator_strided_by_a_sum_of_sizes_opens_one_dimension() {
        // `out[i*OW + j]` with `OW = W - KW + 1` expanded by the lowering.
        let a = poly(&[
            (&["W", "i"], 1),
            (&["KW", "i"], -1),
            (&["i"], 1),
            (&["j"], 1),
        ]);
        let l = delinearize(&[a], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides -KW + W + 1,1 | [i][j]");
        assert_eq!(l.dims[1], Some(aff(&[("W", 1), ("KW", -1)], 1)));
        // One parameter beside the iterator is still two dimensions (a
        // diagonal `A[i*lda + i]`).
        let d = poly(&[(&["i", "lda"], 1), (&["i"], 1)]);
        let l = delinearize(&[d], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides lda,1 | [i][i]");
    }

    fn aff(terms: &[(&str, i64)], constant: i64) -> Affine {
        let mut a = Affine::constant(constant);
        for (v, c) in terms {
            a.terms.insert(v.to_string(), *c);
        }
        a
    }

    #[test]
    fn interleaved_samples_widen_the_row() {
        // rgb[(i*n + j)*3 + 2] with j < n: rows of 3*n samples.
        let runs = |i: &str, p: &str| i == "j" && p == "n";
        let a = poly(&[(&["i", "n"], 3), (&["j"], 3), (&[], 2)]);
        let b = poly(&[(&["i", "n"], 3), (&["j"], 3)]);
        let l = delinearize(&[a.clone(), b.clone()], &is_iter, &no_extent, &runs, true).unwrap();
        assert_eq!(show(&l), "strides 3*n,1 | [i][3*j + 2] [i][3*j]");
        assert_eq!(l.dims[1], Some(aff(&[("n", 3)], 0)));
        // A decimation, in[2*i*n + 2*j] with j not running to n, keeps
        // rows of n.
        let d = poly(&[(&["i", "n"], 2), (&["j"], 2)]);
        let l = delinearize(&[d], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides n,1 | [2*i][2*j]");
        // An offset of one row (not a multiple of 3) keeps rows of n.
        let c = poly(&[(&["i", "n"], 3), (&["j"], 3), (&["n"], 1)]);
        let l = delinearize(&[c], &is_iter, &no_extent, &runs, true).unwrap();
        assert_eq!(show(&l), "strides n,1 | [3*i + 1][3*j]");
    }

    #[test]
    fn single_scaled_iterator_stays_one_dimensional() {
        let a = poly(&[(&["i"], 2), (&[], 1)]);
        let l = delinearize(&[a], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides 1 | [2*i + 1]");
    }

    #[test]
    fn mixed_one_and_two_dimensional_uses_agree() {
        // x[i*n + j] and x[j]: the second is row 0.
        let a = poly(&[(&["i", "n"], 1), (&["j"], 1)]);
        let b = poly(&[(&["j"], 1)]);
        let l = delinearize(&[a, b], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides n,1 | [i][j] [0][j]");
    }

    #[test]
    fn parameter_offset_goes_to_innermost() {
        let a = poly(&[(&["i", "lda"], 1), (&["j"], 1), (&["off"], 1)]);
        let l = delinearize(&[a], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides lda,1 | [i][j + off]");
    }

    fn is_iter_t(v: &str) -> bool {
        matches!(v, "i" | "t")
    }
    fn head_size_bounds_a_loop(v: &str) -> bool {
        v == "head_size"
    }

    #[test]
    fn position_parameter_times_extent_opens_a_dimension() {
        // q[head*head_size + i], loop i < head_size
        let q = poly(&[(&["head", "head_size"], 1), (&["i"], 1)]);
        let l = delinearize(&[q], &is_iter_t, &head_size_bounds_a_loop, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides head_size,1 | [head][i]");
        assert_eq!(l.dims, vec![None, Some(Affine::var("head_size"))]);
    }

    #[test]
    fn position_dimension_lies_inside_iterator_rows() {
        // key_cache[t*kv_dim + head*head_size + i]
        let k = poly(&[
            (&["kv_dim", "t"], 1),
            (&["head", "head_size"], 1),
            (&["i"], 1),
        ]);
        let l = delinearize(&[k], &is_iter_t, &head_size_bounds_a_loop, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides kv_dim,head_size,1 | [t][head][i]");
        assert_eq!(
            l.dims,
            vec![None, None, Some(Affine::var("head_size"))],
            "kv_dim / head_size is not known to be a whole number"
        );
    }

    #[test]
    fn position_joins_an_existing_stride() {
        // A[i*lda + head*lda + j] and A[2*head*lda + j]: rows i + head, 2*head
        let a = poly(&[(&["i", "lda"], 1), (&["head", "lda"], 1), (&["j"], 1)]);
        let b = poly(&[(&["head", "lda"], 2), (&["j"], 1)]);
        let l = delinearize(&[a, b], &is_iter, &no_extent, &no_runs, true).unwrap();
        assert_eq!(show(&l), "strides lda,1 | [head + i][j] [2*head][j]");
    }

    #[test]
    fn position_without_a_telling_extent_is_refused() {
        // x[a*b + i] where neither a nor b bounds a loop: which is the stride?
        let x = poly(&[(&["a", "b"], 1), (&["i"], 1)]);
        assert!(matches!(
            delinearize(&[x], &is_iter, &no_extent, &no_runs, true),
            Err(DelinearizeError::BadStride(_))
        ));
    }

    #[test]
    fn refused_layouts() {
        // A product of parameters that is not the product of the inner
        // extents (`i*n*p + k`: no dimension of extent `p` inside it).
        let product = poly(&[(&["i", "n", "p"], 1), (&["k"], 1)]);
        assert!(matches!(
            delinearize(&[product], &is_iter, &no_extent, &no_runs, true),
            Err(DelinearizeError::BadStride(_))
        ));
        let competing = poly(&[(&["i", "lda"], 1), (&["j", "ldb"], 1)]);
        assert!(matches!(
            delinearize(&[competing], &is_iter, &no_extent, &no_runs, true),
            Err(DelinearizeError::BadStride(_))
        ));
        let nonlinear = poly(&[(&["i", "j"], 1)]);
        assert!(matches!(
            delinearize(&[nonlinear], &is_iter, &no_extent, &no_runs, true),
            Err(DelinearizeError::NonLinear(_))
        ));
    }
}

#[cfg(test)]
mod exactness {
    //! Property: whatever layout is chosen, `Σ index[d] · stride[d]`
    //! reproduces the original flat subscript exactly.
    use super::*;
    use proptest::prelude::*;

    fn is_iter(v: &str) -> bool {
        matches!(v, "i" | "j" | "k")
    }
    /// `lda` bounds a loop; `ldb` and `off` do not.
    fn is_extent(v: &str) -> bool {
        v == "lda"
    }

    /// A random affine index over the iterators, with a small offset.
    fn index() -> impl Strategy<Value = Affine> {
        (
            prop::sample::select(vec!["i", "j", "k"]),
            -2i64..3,
            prop::bool::ANY,
        )
            .prop_map(|(v, c, with_param)| {
                let mut a = Affine::var(v);
                a.constant = c;
                if with_param {
                    a.terms.insert("off".into(), 1);
                }
                a
            })
    }

    /// A stride: a parameter, or a constant.
    fn stride() -> impl Strategy<Value = Poly> {
        prop_oneof![
            prop::sample::select(vec!["lda", "ldb"]).prop_map(Poly::var),
            (2i64..64).prop_map(Poly::constant),
        ]
    }

    /// A dense layout's strides: the products of the inner extents.
    fn dense_strides(layout: &Layout) -> Vec<Poly> {
        let mut out = vec![Poly::constant(1)];
        for d in layout.dims.iter().skip(1).rev() {
            let extent = Poly::from_affine(d.as_ref().expect("dense: every inner extent"));
            let next = out[0].mul(&extent).expect("small numbers");
            out.insert(0, next);
        }
        out
    }

    fn flat(indices: &[Affine], strides: &[Poly]) -> Poly {
        let mut total = Poly::default();
        for (ix, s) in indices.iter().zip(strides) {
            let term = Poly::from_affine(ix).mul(s).expect("small numbers");
            total = total.add(&term).expect("small numbers");
        }
        total
    }

    proptest! {
        #[test]
        fn layout_reproduces_every_subscript(
            dims in prop::collection::vec((index(), stride()), 1..4),
            extra in index(),
            scale in 1i64..4,
        ) {
            let mut strides: Vec<Poly> = dims.iter().map(|(_, s)| s.clone()).collect();
            let last = strides.len() - 1;
            strides[last] = Poly::constant(1);
            let indices: Vec<Affine> = dims.iter().map(|(ix, _)| ix.clone()).collect();
            // Scaled, the samples interleave (every iterator may run to a
            // stride: the fold is tried).
            let scaled = |p: Poly| p.mul(&Poly::constant(scale)).expect("small numbers");
            let accesses = vec![scaled(flat(&indices, &strides)), scaled(Poly::from_affine(&extra))];
            let runs_to = |_: &str, _: &str| scale > 1;
            for constant_strides in [true, false] {
                if let Ok(layout) = delinearize(&accesses, &is_iter, &is_extent, &runs_to, constant_strides) {
                    let stride_polys = if layout.dense {
                        dense_strides(&layout)
                    } else {
                        prop_assert_eq!(layout.strides.last().cloned(), Some(Affine::constant(1)));
                        layout.strides.iter().map(Poly::from_affine).collect()
                    };
                    for (access, index) in accesses.iter().zip(&layout.indices) {
                        prop_assert_eq!(&flat(index, &stride_polys), access);
                    }
                }
            }
        }
    }
}
