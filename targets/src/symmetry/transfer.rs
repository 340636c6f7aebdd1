//! One transfer function per TensIR operation: the symmetry of a node's
//! value from its operands' symmetries (and, where the operation can
//! create symmetry, from how its operands relate to one another).
//!
//! Every rule is sound for all inputs: it claims axes interchangeable only
//! when every execution makes them so. Where an operation gives no
//! symmetry, its arm says why.

use super::lattice::Symmetry;
use super::relation::{as_swap, permutations_between, self_permutations, Facts};
use crate::dim::Dim;
use crate::expr::Expr;
use crate::ops::{BinaryOp, Op, SliceItem};

/// The symmetry of `e`'s value, given its operands' symmetries `args` (in
/// operand order), `var` for names (parameters and `let`s: `None` when the
/// analysis knows nothing of the name) and `facts` for any sub-expression.
pub fn transfer(
    e: &Expr,
    args: &[Symmetry],
    var: &dyn Fn(&str) -> Option<Symmetry>,
    facts: &dyn Facts,
) -> Symmetry {
    let rank = e.ty().rank();
    match e.op() {
        // A name means what the environment says; a parameter is unknown
        // data (the caller's arrays carry no symmetry annotation).
        Op::Var(name) => var(name).unwrap_or_else(|| Symmetry::none(rank)),
        // Rank 0: nothing to permute.
        Op::Lit(_) => Symmetry::none(0),
        // A constant tensor is invariant under any permutation of axes of
        // one length.
        Op::Full { shape, .. } => equal_dims(shape, &Symmetry::full(rank)),
        Op::Unary(_) | Op::Cast(_) => args[0].clone(),
        Op::Binary(b) => {
            let meet = elementwise(e, args);
            if commutes(*b) {
                with_alias_swap(e, meet, facts)
            } else {
                meet
            }
        }
        Op::Where => elementwise(e, args),
        Op::Reduce { axes, .. } => {
            let kept: Vec<usize> = (0..args[0].rank()).filter(|a| !axes.contains(a)).collect();
            args[0].restrict(&kept)
        }
        // A scan runs along `axis` only: the other axes keep what they
        // shared, `axis` is interchangeable with none.
        Op::Scan { axis, .. } => {
            let alone: Vec<Vec<usize>> = args[0]
                .groups()
                .into_iter()
                .map(|g| g.into_iter().filter(|a| a != axis).collect())
                .collect();
            Symmetry::from_groups(rank, &alone)
        }
        // The position along `axis` of each line: the other axes keep
        // what they shared.
        Op::ArgExtreme { axis, .. } => {
            let kept: Vec<usize> = (0..args[0].rank()).filter(|a| a != axis).collect();
            args[0].restrict(&kept)
        }
        Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::Einsum(_) => contraction(e, facts),
        Op::Transpose(perm) => args[0].restrict(perm),
        Op::Broadcast(_) => elementwise(e, args),
        Op::Slice(items) => slice(e, items, &args[0]),
        Op::Concat { axis } => {
            // The operands line up outside the concatenation axis; along
            // it the parts differ, so it is interchangeable with nothing.
            let meet = elementwise(e, args);
            let alone: Vec<Vec<usize>> = meet
                .groups()
                .into_iter()
                .map(|g| g.into_iter().filter(|a| a != axis).collect())
                .collect();
            Symmetry::from_groups(rank, &alone)
        }
        // A triangle of a symmetric matrix is not symmetric (the other
        // triangle is zero).
        Op::Triu(_) | Op::Tril(_) => Symmetry::none(rank),
        // A vector's diagonal matrix is symmetric; a matrix's diagonal is
        // a vector (rank 1: nothing to permute).
        Op::Diag if rank == 2 => Symmetry::full(2),
        Op::Diag => Symmetry::none(rank),
        // A histogram is a vector.
        Op::ScatterAdd => Symmetry::none(rank),
        // A Cholesky factor and an LU pair are triangular; a triangular
        // solve's result has no symmetry its right-hand side could lend it
        // (T⁻¹·S is not symmetric for a symmetric S).
        Op::Cholesky | Op::TriSolve { .. } | Op::LuNoPivot => Symmetry::none(rank),
        // The update's lower triangle and `c`'s upper one are unrelated.
        Op::Syrk | Op::Syr2k => Symmetry::none(rank),
        Op::MirrorLower => Symmetry::full(2),
        // Reversing both of two interchangeable axes keeps them so
        // (`x[n-1-a, n-1-b] = x[n-1-b, n-1-a]`); reversing one breaks it.
        Op::Flip(axes) => {
            let split: Vec<Vec<usize>> = args[0]
                .groups()
                .into_iter()
                .flat_map(|g| {
                    let (flipped, kept) = g.into_iter().partition(|a| axes.contains(a));
                    [flipped, kept]
                })
                .collect();
            Symmetry::from_groups(rank, &split)
        }
        // New axes cut across the operand's: no symmetry is known (a
        // window's axes pair positions with offsets, never like with like).
        Op::Reshape(_) | Op::Window(_) => Symmetry::none(rank),
    }
}

/// Whether `f(x, y) = f(y, x)` for every element.
fn commutes(b: BinaryOp) -> bool {
    matches!(
        b,
        BinaryOp::Add
            | BinaryOp::Mul
            | BinaryOp::Maximum
            | BinaryOp::Minimum
            | BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::And
            | BinaryOp::Or
    )
}

/// Only axes of one length can be interchangeable: splits `s`'s groups by
/// the dims of `shape`.
fn equal_dims(shape: &[Dim], s: &Symmetry) -> Symmetry {
    let mut out = Symmetry::none(shape.len());
    for i in 0..shape.len() {
        if let Some(j) = (0..i).find(|&j| s.same(i, j) && shape[i] == shape[j]) {
            out = out.merge(j, i);
        }
    }
    out
}

/// An element-wise result (NumPy broadcasting, operands right-aligned):
/// result axes `i`, `j` are interchangeable when, in every operand, both
/// are interchangeable axes, or both are absent or stretched from length 1
/// (the operand is constant along both).
fn elementwise(e: &Expr, args: &[Symmetry]) -> Symmetry {
    let out = e.shape();
    let rank = out.len();
    let one = Dim::constant(1);
    // Per operand and result axis: the operand axis it reads, or `None`
    // where the operand is constant along the result axis.
    let maps: Vec<Vec<Option<usize>>> = e
        .args()
        .iter()
        .map(|a| {
            let shape = a.shape();
            let offset = rank - shape.len();
            (0..rank)
                .map(|i| {
                    let t = i.checked_sub(offset)?;
                    (shape[t] != one || out[i] == one).then_some(t)
                })
                .collect()
        })
        .collect();
    let mut s = Symmetry::none(rank);
    for i in 0..rank {
        for j in 0..i {
            let together = out[i] == out[j]
                && maps.iter().zip(args).all(|(m, sym)| match (m[i], m[j]) {
                    (None, None) => true,
                    (Some(a), Some(b)) => sym.same(a, b),
                    _ => false,
                });
            if together && !s.same(i, j) {
                s = s.merge(j, i);
            }
        }
    }
    s
}

/// The paper's aliasing rule for a commutative `f(x, y)` with `y` a swap
/// of `x`'s axes `n`, `m`: `f(x, xᵀ)` is symmetric in `n`, `m`.
fn with_alias_swap(e: &Expr, meet: Symmetry, facts: &dyn Facts) -> Symmetry {
    let (x, y) = (&e.args()[0], &e.args()[1]);
    if x.shape() != e.shape() || y.shape() != e.shape() {
        return meet;
    }
    permutations_between(y, x, facts)
        .iter()
        .filter_map(|sigma| as_swap(sigma))
        .fold(
            meet,
            |s, (n, m)| if s.same(n, m) { s } else { s.merge(n, m) },
        )
}

/// A contraction's result axes `i`, `j` are interchangeable when swapping
/// their labels maps the multiset of factors onto itself (see
/// [`super::relation`]): `A·Aᵀ`, `Aᵀ·A`, `S·S` for a symmetric `S`, a
/// batch of symmetric matrices.
fn contraction(e: &Expr, facts: &dyn Facts) -> Symmetry {
    let rank = e.ty().rank();
    let mut s = Symmetry::none(rank);
    for sigma in self_permutations(e, facts) {
        if let Some((i, j)) = as_swap(&sigma) {
            if e.shape()[i] == e.shape()[j] && !s.same(i, j) {
                s = s.merge(i, j);
            }
        }
    }
    s
}

/// Kept axes stay interchangeable when they were and are cut alike (both
/// whole, or the same range); a single index drops its axis and fixes one
/// coordinate, which leaves the others' symmetry intact.
fn slice(e: &Expr, items: &[SliceItem], a: &Symmetry) -> Symmetry {
    let item = |axis: usize| items.get(axis).unwrap_or(&SliceItem::Full);
    let kept: Vec<usize> = (0..a.rank())
        .filter(|&axis| !matches!(item(axis), SliceItem::Index(_)))
        .collect();
    let mut s = Symmetry::none(kept.len());
    for (u, &x) in kept.iter().enumerate() {
        for (t, &y) in kept.iter().enumerate().take(u) {
            let alike = item(x) == item(y) && e.shape()[u] == e.shape()[t];
            if alike && a.same(x, y) && !s.same(t, u) {
                s = s.merge(t, u);
            }
        }
    }
    s
}
