//! Values that are one another up to a permutation of axes: the paper's
//! "aliasing" detection, generalised from `T` and `transpose(T)` to
//! contractions.
//!
//! A value is read as a *term*: factors, each a base value with one label
//! per base axis, and the labels of the result's axes (a contraction sums
//! the labels missing from the result). A plain value is a one-factor term
//! (`transpose(X, [1, 0])` is `X[b, a] -> (a, b)`). Two terms are the same
//! tensor up to a permutation `σ` of the result's axes when a bijection of
//! labels maps one multiset of factors onto the other, result labels onto
//! result labels; a factor's labels may first be permuted within the
//! groups of its base's symmetry (a symmetric `S[i, j]` is `S[j, i]`).
//! Multiplication commutes and summed labels are dummies, so equal
//! factor multisets are equal values (in real arithmetic; floating point
//! may round a reordered sum differently).
//!
//! `matmul(A, Aᵀ)` is its own transpose (the factors `A[i, k]`, `A[j, k]`
//! swap under `i ↔ j`), and `matmul(B, Aᵀ)` is the transpose of
//! `matmul(A, Bᵀ)`.

use std::collections::HashMap;

use super::lattice::Symmetry;
use crate::expr::Expr;
use crate::ops::Op;

/// Symmetries of sub-expressions (the analysis' facts so far).
pub trait Facts {
    fn of(&self, e: &Expr) -> Symmetry;
}

/// Most within-group axis permutations tried per factor (a rank-6
/// symmetric base has 720): beyond it only the identity is tried, which
/// misses symmetries but never claims a false one.
const MAX_GROUP_PERMUTATIONS: usize = 720;

/// `e` as base value read through transposes: axis `t` of `e` is axis
/// `axes[t]` of `base`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub base: Expr,
    pub axes: Vec<usize>,
}

pub fn view(e: &Expr) -> View {
    match e.op() {
        Op::Transpose(perm) => {
            let inner = view(&e.args()[0]);
            let axes = perm.iter().map(|&p| inner.axes[p]).collect();
            View {
                base: inner.base,
                axes,
            }
        }
        _ => View {
            base: e.clone(),
            axes: (0..e.ty().rank()).collect(),
        },
    }
}

/// A value as factors with labelled base axes and labelled result axes.
#[derive(Clone, Debug)]
struct Term {
    /// `(base, label of each base axis)`.
    factors: Vec<(Expr, Vec<u8>)>,
    /// The label of each result axis.
    out: Vec<u8>,
}

/// `e` as a term: a contraction (possibly transposed) by its operands, any
/// other value as itself.
fn term_of(e: &Expr) -> Term {
    let v = view(e);
    let ranks: Vec<usize> = v.base.args().iter().map(|a| a.ty().rank()).collect();
    let contraction = match v.base.op() {
        Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::Einsum(_) => {
            v.base.op().as_contraction(&ranks)
        }
        _ => None,
    };
    let Some(spec) = contraction else {
        let labels: Vec<u8> = (0..v.base.ty().rank()).map(|a| a as u8).collect();
        let out = v.axes.iter().map(|&a| labels[a]).collect();
        return Term {
            factors: vec![(v.base, labels)],
            out,
        };
    };
    let factors = v
        .base
        .args()
        .iter()
        .zip(&spec.inputs)
        .map(|(operand, labels)| {
            let ov = view(operand);
            let mut base_labels = vec![0u8; labels.len()];
            for (t, &c) in labels.iter().enumerate() {
                base_labels[ov.axes[t]] = c as u8;
            }
            (ov.base, base_labels)
        })
        .collect();
    let out = v.axes.iter().map(|&a| spec.output[a] as u8).collect();
    Term { factors, out }
}

/// Every permutation of `0..rank` that moves each axis within its group.
fn group_permutations(sym: &Symmetry) -> Vec<Vec<usize>> {
    let mut perms = vec![(0..sym.rank()).collect::<Vec<usize>>()];
    for group in sym.groups().into_iter().filter(|g| g.len() > 1) {
        let orders = permutations(&group);
        if perms.len() * orders.len() > MAX_GROUP_PERMUTATIONS {
            return vec![(0..sym.rank()).collect()];
        }
        perms = perms
            .iter()
            .flat_map(|p| {
                let group = &group;
                orders.iter().map(move |order| {
                    let mut q = p.clone();
                    for (slot, &axis) in group.iter().zip(order) {
                        q[*slot] = axis;
                    }
                    q
                })
            })
            .collect();
    }
    perms
}

fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

/// A partial bijection between the labels of two terms.
#[derive(Clone, Default)]
struct LabelMap {
    forward: HashMap<u8, u8>,
    backward: HashMap<u8, u8>,
}

impl LabelMap {
    fn bind(&mut self, from: u8, to: u8) -> bool {
        match (self.forward.get(&from), self.backward.get(&to)) {
            (Some(&t), _) => t == to,
            (None, Some(_)) => false,
            (None, None) => {
                self.forward.insert(from, to);
                self.backward.insert(to, from);
                true
            }
        }
    }
}

/// Every `σ` with `q = transpose(p, σ)` that the factor multisets show,
/// found by matching `q`'s factors to `p`'s in every order.
fn matchings(q: &Term, p: &Term, facts: &dyn Facts) -> Vec<Vec<usize>> {
    if q.factors.len() != p.factors.len() || q.out.len() != p.out.len() {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut used = vec![false; p.factors.len()];
    match_factors(q, p, facts, 0, &mut used, LabelMap::default(), &mut found);
    found
}

fn match_factors(
    q: &Term,
    p: &Term,
    facts: &dyn Facts,
    next: usize,
    used: &mut [bool],
    map: LabelMap,
    found: &mut Vec<Vec<usize>>,
) {
    if next == q.factors.len() {
        if let Some(sigma) = result_permutation(q, p, &map) {
            if !found.contains(&sigma) {
                found.push(sigma);
            }
        }
        return;
    }
    let (qbase, qlabels) = &q.factors[next];
    for k in 0..p.factors.len() {
        let (pbase, plabels) = &p.factors[k];
        if used[k] || pbase != qbase {
            continue;
        }
        used[k] = true;
        for rho in group_permutations(&facts.of(pbase)) {
            let mut m = map.clone();
            let ok = (0..qlabels.len()).all(|a| m.bind(qlabels[a], plabels[rho[a]]));
            if ok {
                match_factors(q, p, facts, next + 1, used, m, found);
            }
        }
        used[k] = false;
    }
}

/// `σ[t]`: where result label `t` of `q` lands among `p`'s result labels;
/// `None` when a result label maps to a summed one.
fn result_permutation(q: &Term, p: &Term, map: &LabelMap) -> Option<Vec<usize>> {
    q.out
        .iter()
        .map(|l| {
            let to = map.forward.get(l)?;
            p.out.iter().position(|o| o == to)
        })
        .collect()
}

/// A `σ` with `q = transpose(p, σ)`, preferring the identity; `None` when
/// none is seen.
pub fn permutation_between(q: &Expr, p: &Expr, facts: &dyn Facts) -> Option<Vec<usize>> {
    let all = permutations_between(q, p, facts);
    let identity: Vec<usize> = (0..q.ty().rank()).collect();
    if all.contains(&identity) {
        return Some(identity);
    }
    all.into_iter().next()
}

/// Every `σ` with `q = transpose(p, σ)` that the factors show.
pub fn permutations_between(q: &Expr, p: &Expr, facts: &dyn Facts) -> Vec<Vec<usize>> {
    if q.ty().rank() != p.ty().rank() || q.dtype() != p.dtype() {
        return Vec::new();
    }
    matchings(&term_of(q), &term_of(p), facts)
}

/// Every `σ` with `e = transpose(e, σ)` that `e`'s factors show.
pub fn self_permutations(e: &Expr, facts: &dyn Facts) -> Vec<Vec<usize>> {
    let t = term_of(e);
    matchings(&t, &t, facts)
}

/// The pair a permutation swaps, when it is a single transposition.
pub fn as_swap(sigma: &[usize]) -> Option<(usize, usize)> {
    let moved: Vec<usize> = (0..sigma.len()).filter(|&i| sigma[i] != i).collect();
    match moved[..] {
        [i, j] if sigma[i] == j && sigma[j] == i => Some((i, j)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build;
    use crate::dim::Dim;
    use crate::dtype::DType;

    struct NoFacts;
    impl Facts for NoFacts {
        fn of(&self, e: &Expr) -> Symmetry {
            Symmetry::none(e.ty().rank())
        }
    }

    struct Symmetric(Expr);
    impl Facts for Symmetric {
        fn of(&self, e: &Expr) -> Symmetry {
            if *e == self.0 {
                Symmetry::full(2)
            } else {
                Symmetry::none(e.ty().rank())
            }
        }
    }

    fn mat(name: &str, r: &str, c: &str) -> Expr {
        build::var(name, DType::F64, vec![Dim::sym(r), Dim::sym(c)])
    }

    fn t(x: &Expr) -> Expr {
        build::transpose(x.clone(), &[1, 0]).unwrap()
    }

    #[test]
    fn gram_matrices_are_their_own_transposes() {
        let a = mat("A", "n", "k");
        let aat = build::matmul(a.clone(), t(&a)).unwrap();
        assert!(self_permutations(&aat, &NoFacts).contains(&vec![1, 0]));
        let ata = build::matmul(t(&a), a.clone()).unwrap();
        assert!(self_permutations(&ata, &NoFacts).contains(&vec![1, 0]));
        let b = mat("B", "n", "k");
        let abt = build::matmul(a.clone(), t(&b)).unwrap();
        assert_eq!(self_permutations(&abt, &NoFacts), vec![vec![0, 1]]);
    }

    #[test]
    fn b_at_is_the_transpose_of_a_bt() {
        let (a, b) = (mat("A", "n", "k"), mat("B", "n", "k"));
        let abt = build::matmul(a.clone(), t(&b)).unwrap();
        let bat = build::matmul(b.clone(), t(&a)).unwrap();
        assert_eq!(permutation_between(&bat, &abt, &NoFacts), Some(vec![1, 0]));
        assert_eq!(
            permutation_between(&t(&abt), &bat, &NoFacts),
            Some(vec![0, 1])
        );
        let ab = build::matmul(a.clone(), t(&a)).unwrap();
        assert_eq!(permutation_between(&ab, &abt, &NoFacts), None);
    }

    #[test]
    fn a_symmetric_factor_may_be_read_transposed() {
        let s = mat("S", "n", "n");
        let ss = build::matmul(s.clone(), s.clone()).unwrap();
        assert!(!self_permutations(&ss, &NoFacts).contains(&vec![1, 0]));
        let facts = Symmetric(s.clone());
        assert!(self_permutations(&ss, &facts).contains(&vec![1, 0]));
        assert_eq!(permutation_between(&t(&s), &s, &facts), Some(vec![0, 1]));
        assert_eq!(permutation_between(&t(&s), &s, &NoFacts), Some(vec![1, 0]));
    }

    #[test]
    fn swaps_are_single_transpositions() {
        assert_eq!(as_swap(&[0, 2, 1]), Some((1, 2)));
        assert_eq!(as_swap(&[1, 2, 0]), None);
        assert_eq!(as_swap(&[0, 1]), None);
    }
}
