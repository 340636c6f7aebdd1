//! The rewrite rules, as data: one entry per rule, its identity in the
//! comment above it (Cranelift ISLE style), its gate on the element type
//! ([`Gate`]) and its conditions. Patterns are s-expressions over TensIR
//! operation names; an operation's attribute comes first (`(sum ?axes ?x)`,
//! `(transpose perm:1,0 ?x)`, `(einsum ?spec ?a ?b)`). Attributes a rule
//! computes (a composed permutation) come from its binder, below the table.
//!
//! Soundness: every rule is an identity over the reals; [`Gate`] says
//! which element types keep C's results exactly (wrap-around integer
//! arithmetic is a ring: re-association and distribution keep it bit for
//! bit; casts, `trunc_div` and `rem` appear in no rule). The applier
//! refuses a right-hand side that does not type-check or whose type differs
//! from the matched class. Each rule is tested by symbolic execution
//! (`tests.rs`: every term of a saturated class equals the original).
//!
//! Powers: `pow` appears only with a constant exponent of 1, 2, 3, 4,
//! -1 or 1/2, where it equals a product chain, a reciprocal or a square
//! root over the reals (the algebra's `pow_real` expands an integer power
//! the same way); a general exponent stays libm's pow.
//!
//! Not here, on purpose: `einsum("a,b->ab", u, v)` → `outer(u, v)`,
//! which both cost models price lower and NumPy runs slower (`np.einsum`
//! 17 µs, `np.outer` 26 µs at 120×140 f32; with it, ger and vec_lerp lost
//! 25 to 40 %, results/eqsat-*.md): the cost model prices an einsum by the
//! square root of its operands' product, twice an outer product's flops.
//! Also not here: identities that hold only on part of the domain
//! (`exp(log x) = x`, `sqrt(x)² = x`, `x / sqrt(x) = sqrt(x)`): they turn
//! C's NaN into a number for negative inputs. Costly expansions that no
//! extraction could prefer (pulling a slice out of an element-wise
//! operation, pushing a factor into a reduction) are left out so the
//! e-graph stays small.

use tenslift_targets::{Dim, EinsumSpec, Lit, Op, SliceItem};

use super::apply::{Cond, Family, Gate, Match, Rule};
use super::lang::{Attr, LeafKind};

use Cond::*;
use Family::*;
use Gate::*;

const fn rule(
    name: &'static str,
    f: Family,
    g: Gate,
    lhs: &'static str,
    rhs: &'static str,
) -> Rule {
    Rule::new(name, f, g, lhs, rhs)
}

/// Every rule.
#[rustfmt::skip]
pub static RULES: &[Rule] = &[
    // ---- element-wise algebra ----
    // a + b == b + a
    rule("add-comm", Algebra, Exact, "(add ?a ?b)", "(add ?b ?a)"),
    // a * b == b * a
    rule("mul-comm", Algebra, Exact, "(mul ?a ?b)", "(mul ?b ?a)"),
    // (a + b) + c == a + (b + c)
    rule("add-assoc", Algebra, Ring, "(add (add ?a ?b) ?c)", "(add ?a (add ?b ?c))"),
    // (a * b) * c == a * (b * c)
    rule("mul-assoc", Algebra, Ring, "(mul (mul ?a ?b) ?c)", "(mul ?a (mul ?b ?c))"),
    // a - b == a + -b
    rule("sub-to-add-neg", Algebra, Exact, "(sub ?a ?b)", "(add ?a (neg ?b))"),
    // a + -b == a - b
    rule("add-neg-to-sub", Algebra, Exact, "(add ?a (neg ?b))", "(sub ?a ?b)"),
    // -(-a) == a
    rule("neg-neg", Algebra, Exact, "(neg (neg ?a))", "?a"),
    // -(a * b) == (-a) * b
    rule("neg-mul", Algebra, Exact, "(neg (mul ?a ?b))", "(mul (neg ?a) ?b)"),
    // (-a) * b == -(a * b)
    rule("mul-neg", Algebra, Exact, "(mul (neg ?a) ?b)", "(neg (mul ?a ?b))"),
    // a + 0 == a
    rule("add-zero", Algebra, Exact, "(add ?a ?z)", "?a").when(&[Zero("?z")]),
    // a - 0 == a
    rule("sub-zero", Algebra, Exact, "(sub ?a ?z)", "?a").when(&[Zero("?z")]),
    // a * 1 == a
    rule("mul-one", Algebra, Exact, "(mul ?a ?o)", "?a").when(&[One("?o")]),
    // a / 1 == a
    rule("div-one", Algebra, Real, "(div ?a ?o)", "?a").when(&[One("?o")]),
    // a * (b + c) == a*b + a*c
    rule("mul-add-expand", Algebra, Ring, "(mul ?a (add ?b ?c))", "(add (mul ?a ?b) (mul ?a ?c))"),
    // a*b + a*c == a * (b + c)
    rule("mul-add-factor", Algebra, Ring, "(add (mul ?a ?b) (mul ?a ?c))", "(mul ?a (add ?b ?c))"),
    // a * (b - c) == a*b - a*c
    rule("mul-sub-expand", Algebra, Ring, "(mul ?a (sub ?b ?c))", "(sub (mul ?a ?b) (mul ?a ?c))"),
    // a*b - a*c == a * (b - c)
    rule("mul-sub-factor", Algebra, Ring, "(sub (mul ?a ?b) (mul ?a ?c))", "(mul ?a (sub ?b ?c))"),
    // (a * b) / c == a * (b / c)
    rule("div-mul", Algebra, Real, "(div (mul ?a ?b) ?c)", "(mul ?a (div ?b ?c))"),
    // a * (b / c) == (a * b) / c
    rule("mul-div", Algebra, Real, "(mul ?a (div ?b ?c))", "(div (mul ?a ?b) ?c)"),
    // a / s == a * (1 / s)   (s a scalar: one division instead of one per element)
    rule("div-to-reciprocal", Algebra, Real, "(div ?a ?s)", "(mul ?a (div ?one ?s))").when(&[Scalar("?s"), NotScalar("?a")]).bind(one_of_type),
    // ---- powers with a small constant exponent (strength reduction) ----
    // pow(x, 1) == x
    rule("pow-one", Power, Real, "(pow ?x ?c)", "?x").when(&[Const("?c", 1.0), FullShape("?x")]),
    // pow(x, 2) == x * x
    rule("pow-two", Power, Real, "(pow ?x ?c)", "(mul ?x ?x)").when(&[Const("?c", 2.0), FullShape("?x")]),
    // pow(x, 3) == x * (x * x)
    rule("pow-three", Power, Real, "(pow ?x ?c)", "(mul ?x (mul ?x ?x))").when(&[Const("?c", 3.0), FullShape("?x")]),
    // pow(x, 4) == (x * x) * (x * x)
    rule("pow-four", Power, Real, "(pow ?x ?c)", "(mul (mul ?x ?x) (mul ?x ?x))").when(&[Const("?c", 4.0), FullShape("?x")]),
    // pow(x, -1) == 1 / x
    rule("pow-minus-one", Power, Real, "(pow ?x ?c)", "(div ?one ?x)").when(&[Const("?c", -1.0), FullShape("?x")]).bind(one_of_x),
    // pow(x, 0.5) == sqrt(x)   (over the reals both are defined for x >= 0 only)
    rule("pow-half", Power, Real, "(pow ?x ?c)", "(sqrt ?x)").when(&[Const("?c", 0.5), FullShape("?x")]),
    // ---- scalar factors and products ----
    // (s * A) @ B == s * (A @ B)
    rule("matmul-scalar-lhs-out", Scalars, Ring, "(matmul (mul ?s ?a) ?b)", "(mul ?s (matmul ?a ?b))").when(&[Scalar("?s")]),
    // A @ (s * B) == s * (A @ B)
    rule("matmul-scalar-rhs-out", Scalars, Ring, "(matmul ?a (mul ?s ?b))", "(mul ?s (matmul ?a ?b))").when(&[Scalar("?s")]),
    // s * (A @ B) == (s * A) @ B
    rule("matmul-scalar-lhs-in", Scalars, Ring, "(mul ?s (matmul ?a ?b))", "(matmul (mul ?s ?a) ?b)").when(&[Scalar("?s")]),
    // s * (A @ B) == A @ (s * B)
    rule("matmul-scalar-rhs-in", Scalars, Ring, "(mul ?s (matmul ?a ?b))", "(matmul ?a (mul ?s ?b))").when(&[Scalar("?s")]),
    // (A / s) @ B == (A @ B) / s
    rule("matmul-div-lhs-out", Scalars, Real, "(matmul (div ?a ?s) ?b)", "(div (matmul ?a ?b) ?s)").when(&[Scalar("?s")]),
    // A @ (B / s) == (A @ B) / s
    rule("matmul-div-rhs-out", Scalars, Real, "(matmul ?a (div ?b ?s))", "(div (matmul ?a ?b) ?s)").when(&[Scalar("?s")]),
    // einsum(s * A, B) == s * einsum(A, B)
    rule("einsum-scalar-lhs-out", Scalars, Ring, "(einsum ?e (mul ?s ?a) ?b)", "(mul ?s (einsum ?e ?a ?b))").when(&[Scalar("?s")]),
    // einsum(A, s * B) == s * einsum(A, B)
    rule("einsum-scalar-rhs-out", Scalars, Ring, "(einsum ?e ?a (mul ?s ?b))", "(mul ?s (einsum ?e ?a ?b))").when(&[Scalar("?s")]),
    // s * einsum(A, B) == einsum(s * A, B)
    rule("einsum-scalar-lhs-in", Scalars, Ring, "(mul ?s (einsum ?e ?a ?b))", "(einsum ?e (mul ?s ?a) ?b)").when(&[Scalar("?s")]),
    // s * einsum(A, B) == einsum(A, s * B)
    rule("einsum-scalar-rhs-in", Scalars, Ring, "(mul ?s (einsum ?e ?a ?b))", "(einsum ?e ?a (mul ?s ?b))").when(&[Scalar("?s")]),
    // sum(A * b) == sum(A) * b   (b constant along every reduced axis)
    rule("sum-factor-out", Scalars, Ring, "(sum ?ax (mul ?a ?b))", "(mul (sum ?ax ?a) ?b)").when(&[Unreduced { kept: "?b", full: "?a", axes: "?ax" }]),
    // sum(A / s) == sum(A) / s
    rule("sum-div-out", Scalars, Real, "(sum ?ax (div ?a ?s))", "(div (sum ?ax ?a) ?s)").when(&[Scalar("?s")]),
    // ---- transposes ----
    // transpose(transpose(x, q), p) == transpose(x, q∘p)
    rule("transpose-transpose", Transpose, Exact, "(transpose ?p (transpose ?q ?x))", "(transpose ?pq ?x)").bind(composed_perm),
    // transpose(x, identity) == x
    rule("transpose-identity", Transpose, Exact, "(transpose ?p ?x)", "?x").when(&[IdentityPerm("?p")]),
    // (A @ B)ᵀ == Bᵀ @ Aᵀ
    rule("transpose-matmul-in", Transpose, Exact, "(transpose perm:1,0 (matmul ?a ?b))", "(matmul (transpose perm:1,0 ?b) (transpose perm:1,0 ?a))").when(&[Rank("?a", 2), Rank("?b", 2)]),
    // Bᵀ @ Aᵀ == (A @ B)ᵀ
    rule("transpose-matmul-out", Transpose, Exact, "(matmul (transpose perm:1,0 ?b) (transpose perm:1,0 ?a))", "(transpose perm:1,0 (matmul ?a ?b))"),
    // (a + b)ᵀ == aᵀ + bᵀ
    rule("transpose-add", Transpose, Exact, "(transpose ?p (add ?a ?b))", "(add (transpose ?p ?a) (transpose ?p ?b))").when(&[SameShape("?a", "?b")]),
    // (a - b)ᵀ == aᵀ - bᵀ
    rule("transpose-sub", Transpose, Exact, "(transpose ?p (sub ?a ?b))", "(sub (transpose ?p ?a) (transpose ?p ?b))").when(&[SameShape("?a", "?b")]),
    // (a * b)ᵀ == aᵀ * bᵀ
    rule("transpose-mul", Transpose, Exact, "(transpose ?p (mul ?a ?b))", "(mul (transpose ?p ?a) (transpose ?p ?b))").when(&[SameShape("?a", "?b")]),
    // (s * A)ᵀ == s * Aᵀ
    rule("transpose-scalar", Transpose, Exact, "(transpose ?p (mul ?s ?a))", "(mul ?s (transpose ?p ?a))").when(&[Scalar("?s")]),
    // sum(transpose(x, p), axes) == transpose(sum(x, p[axes]), p')
    rule("sum-transpose", Transpose, Exact, "(sum ?ax (transpose ?p ?x))", "(transpose ?p2 (sum ?ax2 ?x))").bind(sum_of_transpose),
    // diag(xᵀ) == diag(x)
    rule("diag-transpose", Transpose, Exact, "(diag (transpose perm:1,0 ?x))", "(diag ?x)"),
    // v @ transpose(M) == M @ v   (v a vector: M's rows dotted with v, as atax's two
    // spellings of A x; one class lets a statement reuse the other's stored value)
    rule("matvec-transpose-rhs", Transpose, Exact, "(matmul ?v (transpose perm:1,0 ?m))", "(matmul ?m ?v)").when(&[Rank("?v", 1), Rank("?m", 2)]),
    // transpose(M) @ v == v @ M
    rule("matvec-transpose-lhs", Transpose, Exact, "(matmul (transpose perm:1,0 ?m) ?v)", "(matmul ?v ?m)").when(&[Rank("?v", 1), Rank("?m", 2)]),
    // ---- contractions ----
    // (A @ B) @ C == A @ (B @ C)   (B a matrix: with a vector B the two differ)
    rule("matmul-assoc-right", Contraction, Ring, "(matmul (matmul ?a ?b) ?c)", "(matmul ?a (matmul ?b ?c))").when(&[Rank("?b", 2)]),
    // A @ (B @ C) == (A @ B) @ C   (B a matrix)
    rule("matmul-assoc-left", Contraction, Ring, "(matmul ?a (matmul ?b ?c))", "(matmul (matmul ?a ?b) ?c)").when(&[Rank("?b", 2)]),
    // A @ B + A @ C == A @ (B + C)
    rule("matmul-add-factor-lhs", Contraction, Ring, "(add (matmul ?a ?b) (matmul ?a ?c))", "(matmul ?a (add ?b ?c))").when(&[SameShape("?b", "?c")]),
    // A @ C + B @ C == (A + B) @ C
    rule("matmul-add-factor-rhs", Contraction, Ring, "(add (matmul ?a ?c) (matmul ?b ?c))", "(matmul (add ?a ?b) ?c)").when(&[SameShape("?a", "?b")]),
    // A @ B - A @ C == A @ (B - C)
    rule("matmul-sub-factor-lhs", Contraction, Ring, "(sub (matmul ?a ?b) (matmul ?a ?c))", "(matmul ?a (sub ?b ?c))").when(&[SameShape("?b", "?c")]),
    // A @ C - B @ C == (A - B) @ C
    rule("matmul-sub-factor-rhs", Contraction, Ring, "(sub (matmul ?a ?c) (matmul ?b ?c))", "(matmul (sub ?a ?b) ?c)").when(&[SameShape("?a", "?b")]),
    // A @ (B + C) == A @ B + A @ C
    rule("matmul-add-expand-lhs", Contraction, Ring, "(matmul ?a (add ?b ?c))", "(add (matmul ?a ?b) (matmul ?a ?c))").when(&[SameShape("?b", "?c")]),
    // (A + B) @ C == A @ C + B @ C
    rule("matmul-add-expand-rhs", Contraction, Ring, "(matmul (add ?a ?b) ?c)", "(add (matmul ?a ?c) (matmul ?b ?c))").when(&[SameShape("?a", "?b")]),
    // einsum(s, A, C) + einsum(s, B, C) == einsum(s, A + B, C)   (an einsum is linear in each operand)
    rule("einsum-add-factor-lhs", Contraction, Ring, "(add (einsum ?s ?a ?c) (einsum ?s ?b ?c))", "(einsum ?s (add ?a ?b) ?c)").when(&[SameShape("?a", "?b")]),
    // einsum(s, C, A) + einsum(s, C, B) == einsum(s, C, A + B)
    rule("einsum-add-factor-rhs", Contraction, Ring, "(add (einsum ?s ?c ?a) (einsum ?s ?c ?b))", "(einsum ?s ?c (add ?a ?b))").when(&[SameShape("?a", "?b")]),
    // einsum(s, A, C) - einsum(s, B, C) == einsum(s, A - B, C)
    rule("einsum-sub-factor-lhs", Contraction, Ring, "(sub (einsum ?s ?a ?c) (einsum ?s ?b ?c))", "(einsum ?s (sub ?a ?b) ?c)").when(&[SameShape("?a", "?b")]),
    // einsum(s, C, A) - einsum(s, C, B) == einsum(s, C, A - B)
    rule("einsum-sub-factor-rhs", Contraction, Ring, "(sub (einsum ?s ?c ?a) (einsum ?s ?c ?b))", "(einsum ?s ?c (sub ?a ?b))").when(&[SameShape("?a", "?b")]),
    // einsum("b,a->ab", y, c - a) == c*y - einsum("b,a->ab", y, a)   (c a scalar; c*y broadcasts
    // along the rows: a linear interpolation `x*a + (1 - a)*y` then factors to `a ⊗ (x - y) + y`)
    rule("einsum-outer-scalar-minus-rhs", Contraction, Ring, "(einsum ?s ?y (sub ?c ?a))", "(sub (mul ?c ?y) (einsum ?s ?y ?a))").when(&[Scalar("?c"), Spec("?s", &["b,a->ab"])]),
    // einsum("a,b->ab", c - a, y) == c*y - einsum("a,b->ab", a, y)
    rule("einsum-outer-scalar-minus-lhs", Contraction, Ring, "(einsum ?s (sub ?c ?a) ?y)", "(sub (mul ?c ?y) (einsum ?s ?a ?y))").when(&[Scalar("?c"), Spec("?s", &["a,b->ab"])]),
    // (u ⊗ v) @ y == u * (v · y)   (y a vector)
    rule("outer-matvec", Contraction, Ring, "(matmul (outer ?u ?v) ?y)", "(mul ?u (matmul ?v ?y))").when(&[Rank("?y", 1)]),
    // (u ⊗ v) @ Y == u ⊗ (v @ Y)   (Y a matrix)
    rule("outer-matmul", Contraction, Ring, "(matmul (outer ?u ?v) ?y)", "(outer ?u (matmul ?v ?y))").when(&[Rank("?y", 2)]),
    // y @ (u ⊗ v) == (y · u) * v   (y a vector)
    rule("vecmat-outer", Contraction, Ring, "(matmul ?y (outer ?u ?v))", "(mul (matmul ?y ?u) ?v)").when(&[Rank("?y", 1)]),
    // Y @ (u ⊗ v) == (Y @ u) ⊗ v   (Y a matrix)
    rule("matmul-outer", Contraction, Ring, "(matmul ?y (outer ?u ?v))", "(outer (matmul ?y ?u) ?v)").when(&[Rank("?y", 2)]),
    // A @ B == einsum(A, B)
    rule("matmul-to-einsum", Contraction, Exact, "(matmul ?a ?b)", "(einsum ?s ?a ?b)").bind(einsum_of_matmul),
    // u ⊗ v == einsum("a,b->ab", u, v)
    rule("outer-to-einsum", Contraction, Exact, "(outer ?a ?b)", "(einsum spec:a,b->ab ?a ?b)"),
    // tensordot(A, B) == einsum(A, B)
    rule("tensordot-to-einsum", Contraction, Exact, "(tensordot ?t ?a ?b)", "(einsum ?s ?a ?b)").bind(einsum_of_tensordot),
    // einsum("ab,bc->ac", A, B) == A @ B
    rule("einsum-to-matmul", Contraction, Exact, "(einsum ?s ?a ?b)", "(matmul ?a ?b)").when(&[Spec("?s", &["ab,bc->ac", "ab,b->a", "a,ab->b", "a,a->"])]),
    // einsum("ba,bc->ac", A, B) == Aᵀ @ B
    rule("einsum-to-matmul-lt", Contraction, Exact, "(einsum ?s ?a ?b)", "(matmul (transpose perm:1,0 ?a) ?b)").when(&[Spec("?s", &["ba,bc->ac"])]),
    // einsum("ab,cb->ac", A, B) == A @ Bᵀ
    rule("einsum-to-matmul-rt", Contraction, Exact, "(einsum ?s ?a ?b)", "(matmul ?a (transpose perm:1,0 ?b))").when(&[Spec("?s", &["ab,cb->ac"])]),
    // einsum("ba,cb->ac", A, B) == Aᵀ @ Bᵀ
    rule("einsum-to-matmul-tt", Contraction, Exact, "(einsum ?s ?a ?b)", "(matmul (transpose perm:1,0 ?a) (transpose perm:1,0 ?b))").when(&[Spec("?s", &["ba,cb->ac"])]),
    // einsum(s, A, B) == einsum(s', B, A)   (operands swapped with their labels)
    rule("einsum-swap", Contraction, Exact, "(einsum ?s ?a ?b)", "(einsum ?s2 ?b ?a)").bind(swapped_spec),
    // einsum(s, transpose(A, p), B) == einsum(s', A, B)
    rule("einsum-transpose-lhs", Contraction, Exact, "(einsum ?s (transpose ?p ?a) ?b)", "(einsum ?s2 ?a ?b)").bind(spec_absorbing_lhs),
    // einsum(s, A, transpose(B, p)) == einsum(s', A, B)
    rule("einsum-transpose-rhs", Contraction, Exact, "(einsum ?s ?a (transpose ?p ?b))", "(einsum ?s2 ?a ?b)").bind(spec_absorbing_rhs),
    // transpose(einsum(s, A, B), p) == einsum(s', A, B)
    rule("transpose-einsum", Contraction, Exact, "(transpose ?p (einsum ?s ?a ?b))", "(einsum ?s2 ?a ?b)").bind(spec_absorbing_out),
    // Σ_ab A_ab (x ⊗ y)_ab == x · (A @ y)
    rule("bilinear-form", Contraction, Ring, "(einsum ?s ?a (outer ?x ?y))", "(matmul ?x (matmul ?a ?y))").when(&[Spec("?s", &["ab,ab->"])]),
    // Σ_ab A_ab (x ⊗ y)_ba == y · (A @ x)
    rule("bilinear-form-t", Contraction, Ring, "(einsum ?s ?a (outer ?x ?y))", "(matmul ?y (matmul ?a ?x))").when(&[Spec("?s", &["ab,ba->"])]),
    // diag(X @ Y) == sum(X * Yᵀ, axis=1)   (STENSO's diagonal identity)
    rule("diag-matmul", Contraction, Exact, "(diag (matmul ?x ?y))", "(sum axes:1 (mul ?x (transpose perm:1,0 ?y)))").when(&[Rank("?x", 2), Rank("?y", 2)]),
    // ---- reductions ----
    // sum(A * B, axes) == einsum(A, B)   (no operand stretched; floats: an i32 dot product
    // is NumPy's own loop, 0.76x the product and sum it replaces, makespeare sum_of_squares)
    rule("sum-mul-to-einsum", Reduction, Exact, "(sum ?ax (mul ?a ?b))", "(einsum ?s ?a ?b)").when(&[Float]).bind(einsum_of_sum_mul),
    // einsum(A, B) == sum(A * B, axes)   (one operand's labels a suffix of the other's)
    rule("einsum-to-sum-mul", Reduction, Exact, "(einsum ?s ?a ?b)", "(sum ?ax (mul ?a ?b))").bind(sum_mul_of_einsum),
    // sum(sum(x, b), a) == sum(x, a ∪ b)
    rule("sum-sum", Reduction, Ring, "(sum ?a (sum ?b ?x))", "(sum ?ab ?x)").bind(merged_axes),
    // sum(x, axes=[]) == x
    rule("sum-none", Reduction, Exact, "(sum axes: ?x)", "?x"),
    // sum(a + b) == sum(a) + sum(b)
    rule("sum-add-split", Reduction, Ring, "(sum ?ax (add ?a ?b))", "(add (sum ?ax ?a) (sum ?ax ?b))").when(&[SameShape("?a", "?b")]),
    // sum(a) + sum(b) == sum(a + b)
    rule("sum-add-join", Reduction, Ring, "(add (sum ?ax ?a) (sum ?ax ?b))", "(sum ?ax (add ?a ?b))").when(&[SameShape("?a", "?b")]),
    // ---- slices ----
    // (a + b)[i] == a[i] + b[i]
    rule("slice-add", Slicing, Exact, "(slice ?i (add ?a ?b))", "(add (slice ?i ?a) (slice ?i ?b))").when(&[SameShape("?a", "?b"), NotScalar("?a")]),
    // (a - b)[i] == a[i] - b[i]
    rule("slice-sub", Slicing, Exact, "(slice ?i (sub ?a ?b))", "(sub (slice ?i ?a) (slice ?i ?b))").when(&[SameShape("?a", "?b"), NotScalar("?a")]),
    // (a * b)[i] == a[i] * b[i]
    rule("slice-mul", Slicing, Exact, "(slice ?i (mul ?a ?b))", "(mul (slice ?i ?a) (slice ?i ?b))").when(&[SameShape("?a", "?b"), NotScalar("?a")]),
    // (s * a)[i] == s * a[i]
    rule("slice-scalar-mul", Slicing, Exact, "(slice ?i (mul ?s ?a))", "(mul ?s (slice ?i ?a))").when(&[Scalar("?s")]),
    // (s + a)[i] == s + a[i]
    rule("slice-scalar-add", Slicing, Exact, "(slice ?i (add ?s ?a))", "(add ?s (slice ?i ?a))").when(&[Scalar("?s")]),
    // (A @ B)[r, c] == A[r, :] @ B[:, c]
    rule("slice-matmul", Slicing, Exact, "(slice ?i (matmul ?a ?b))", "(matmul (slice ?ia ?a) (slice ?ib ?b))").bind(sliced_operands),
    // x[j][i] == x[j∘i]   (unit steps)
    rule("slice-slice", Slicing, Exact, "(slice ?i (slice ?j ?x))", "(slice ?k ?x)").bind(composed_slice),
    // x[:, :] == x
    rule("slice-whole", Slicing, Exact, "(slice ?i ?x)", "?x").when(&[WholeSlice("?i")]),
];

/// Binds `name` to an attribute.
fn attr(name: &'static str, a: Attr) -> Option<Vec<(&'static str, LeafKind)>> {
    Some(vec![(name, LeafKind::Attr(a))])
}

/// `?one`: the literal 1 in the element type of `?s`.
/// `?one`: the literal 1 of `var`'s element type.
fn one_like(m: &Match, var: &str) -> Option<Vec<(&'static str, LeafKind)>> {
    let dtype = m.ty(var)?.dtype;
    Some(vec![("?one", LeafKind::Lit(Lit::float(1.0, dtype)))])
}

fn one_of_type(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    one_like(m, "?s")
}

fn one_of_x(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    one_like(m, "?x")
}

fn perm(m: &Match, name: &str) -> Option<Vec<usize>> {
    match m.attr(name)? {
        Attr::Perm(p) => Some(p.clone()),
        _ => None,
    }
}

fn axes(m: &Match, name: &str) -> Option<Vec<usize>> {
    match m.attr(name)? {
        Attr::Axes(a) => Some(a.clone()),
        _ => None,
    }
}

fn spec(m: &Match, name: &str) -> Option<EinsumSpec> {
    match m.attr(name)? {
        Attr::Spec(s) => Some(s.clone()),
        _ => None,
    }
}

/// `?pq`: result axis `i` of the outer transpose is axis `q[p[i]]` of `x`.
fn composed_perm(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let (p, q) = (perm(m, "?p")?, perm(m, "?q")?);
    let pq = p
        .iter()
        .map(|&i| q.get(i).copied())
        .collect::<Option<_>>()?;
    attr("?pq", Attr::Perm(pq))
}

/// `?ab`: the outer sum's axes (numbered among the axes the inner sum
/// keeps) and the inner sum's, as axes of `x`.
fn merged_axes(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let (outer, inner) = (axes(m, "?a")?, axes(m, "?b")?);
    let rank = m.rank("?x")?;
    let kept: Vec<usize> = (0..rank).filter(|i| !inner.contains(i)).collect();
    let mut all: Vec<usize> = outer
        .iter()
        .map(|&a| kept.get(a).copied())
        .collect::<Option<_>>()?;
    all.extend(&inner);
    all.sort_unstable();
    attr("?ab", Attr::Axes(all))
}

/// `?ax2`, `?p2`: reducing a transposed value is reducing the axes they
/// came from, then putting the kept ones in the transposed order.
fn sum_of_transpose(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let (ax, p) = (axes(m, "?ax")?, perm(m, "?p")?);
    let mut ax2: Vec<usize> = ax
        .iter()
        .map(|&a| p.get(a).copied())
        .collect::<Option<_>>()?;
    ax2.sort_unstable();
    let kept_x: Vec<usize> = (0..p.len()).filter(|i| !ax2.contains(i)).collect();
    let p2 = (0..p.len())
        .filter(|i| !ax.contains(i))
        .map(|i| kept_x.iter().position(|&k| k == p[i]))
        .collect::<Option<_>>()?;
    let mut out = attr("?ax2", Attr::Axes(ax2))?;
    out.extend(attr("?p2", Attr::Perm(p2))?);
    Some(out)
}

fn einsum_of(op: Op, m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let ranks = [m.rank("?a")?, m.rank("?b")?];
    attr("?s", Attr::Spec(op.as_contraction(&ranks)?))
}

fn einsum_of_matmul(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    einsum_of(Op::Matmul, m)
}

fn einsum_of_tensordot(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    match m.attr("?t")? {
        Attr::Pairs(l, r) => einsum_of(
            Op::Tensordot {
                lhs_axes: l.clone(),
                rhs_axes: r.clone(),
            },
            m,
        ),
        _ => None,
    }
}

fn swapped_spec(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let mut s = spec(m, "?s")?;
    if s.inputs.len() != 2 {
        return None;
    }
    s.inputs.swap(0, 1);
    attr("?s2", Attr::Spec(s))
}

/// Operand `k` was `transpose(a, p)` with labels `l`: `a` has label
/// `l[i]` on axis `p[i]`.
fn spec_absorbing(m: &Match, k: usize) -> Option<Vec<(&'static str, LeafKind)>> {
    let (mut s, p) = (spec(m, "?s")?, perm(m, "?p")?);
    let labels = s.inputs.get(k)?.clone();
    if labels.len() != p.len() {
        return None;
    }
    let mut under = labels.clone();
    for (i, &axis) in p.iter().enumerate() {
        *under.get_mut(axis)? = labels[i];
    }
    s.inputs[k] = under;
    attr("?s2", Attr::Spec(s))
}

fn spec_absorbing_lhs(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    spec_absorbing(m, 0)
}

fn spec_absorbing_rhs(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    spec_absorbing(m, 1)
}

/// `transpose(einsum(s), p)`: output axis `i` is the einsum's axis `p[i]`.
fn spec_absorbing_out(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let (mut s, p) = (spec(m, "?s")?, perm(m, "?p")?);
    if s.inputs.len() != 2 || s.output.len() != p.len() {
        return None;
    }
    s.output = p
        .iter()
        .map(|&i| s.output.get(i).copied())
        .collect::<Option<_>>()?;
    attr("?s2", Attr::Spec(s))
}

fn letters(n: usize) -> Option<Vec<char>> {
    (n <= 26).then(|| (0..n).map(|i| (b'a' + i as u8) as char).collect())
}

/// `?s`: `sum(a * b, axes)` as a contraction, when both operands have
/// rank at least 1 and broadcasting stretches neither (each is the
/// product's trailing axes exactly).
fn einsum_of_sum_mul(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let (a, b, ax) = (m.ty("?a")?, m.ty("?b")?, axes(m, "?ax")?);
    let full = if a.rank() >= b.rank() { a } else { b };
    let all = letters(full.rank())?;
    let labels_of = |t: &tenslift_targets::Ty| -> Option<Vec<char>> {
        let skip = full.rank() - t.rank();
        let same = t.shape.iter().zip(&full.shape[skip..]).all(|(x, y)| x == y);
        (t.rank() > 0 && same).then(|| all[skip..].to_vec())
    };
    let inputs = vec![labels_of(a)?, labels_of(b)?];
    let output = (0..all.len())
        .filter(|i| !ax.contains(i))
        .map(|i| all[i])
        .collect();
    attr("?s", Attr::Spec(EinsumSpec { inputs, output }))
}

/// `?ax`: an einsum whose smaller operand's labels are the larger's
/// trailing labels (so `mul` broadcasts it into place), with the output
/// labels in the larger operand's order, is a sum of a product.
fn sum_mul_of_einsum(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let s = spec(m, "?s")?;
    let [x, y] = s.inputs.as_slice() else {
        return None;
    };
    let (full, part) = if x.len() >= y.len() { (x, y) } else { (y, x) };
    if part.is_empty() || !full.ends_with(part) {
        return None;
    }
    let kept: Vec<usize> = s
        .output
        .iter()
        .map(|c| full.iter().position(|f| f == c))
        .collect::<Option<_>>()?;
    if !kept.windows(2).all(|w| w[0] < w[1]) {
        return None;
    }
    let ax = (0..full.len()).filter(|i| !kept.contains(i)).collect();
    attr("?ax", Attr::Axes(ax))
}

/// `?ia`, `?ib`: a slice of a product is the product of the rows of the
/// left operand and the columns of the right one it selects.
fn sliced_operands(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let Attr::Items(items) = m.attr("?i")? else {
        return None;
    };
    if items.iter().all(|i| *i == SliceItem::Full) {
        return None;
    }
    let item = |k: usize| items.get(k).cloned().unwrap_or(SliceItem::Full);
    let full = SliceItem::Full;
    let (ia, ib) = match (m.rank("?a")?, m.rank("?b")?, items.len()) {
        (2, 2, _) => (vec![item(0), full.clone()], vec![full, item(1)]),
        (2, 1, _) => (vec![item(0), full.clone()], vec![full]),
        (1, 2, _) => (vec![full.clone()], vec![full, item(0)]),
        _ => return None,
    };
    let mut out = attr("?ia", Attr::Items(ia))?;
    out.extend(attr("?ib", Attr::Items(ib))?);
    Some(out)
}

/// One axis of `x[j][i]` as one item, unit steps only.
fn compose_item(inner: &SliceItem, outer: &SliceItem) -> Option<SliceItem> {
    let add = |a: &Dim, b: &Dim| a.add(b).ok();
    Some(match (inner, outer) {
        (SliceItem::Full, o) => o.clone(),
        (i, SliceItem::Full) => i.clone(),
        (SliceItem::Range { start, step: 1, .. }, SliceItem::Index(k)) => {
            SliceItem::Index(add(start, k)?)
        }
        (
            SliceItem::Range { start, step: 1, .. },
            SliceItem::Range {
                start: s2,
                stop: e2,
                step: 1,
            },
        ) => SliceItem::Range {
            start: add(start, s2)?,
            stop: add(start, e2)?,
            step: 1,
        },
        _ => return None,
    })
}

/// `?k`: `x[j][i]` as one slice of `x` (an index of `j` drops its axis,
/// so `i`'s items apply to the axes `j` keeps).
fn composed_slice(m: &Match) -> Option<Vec<(&'static str, LeafKind)>> {
    let (Attr::Items(outer), Attr::Items(inner)) = (m.attr("?i")?, m.attr("?j")?) else {
        return None;
    };
    let rank = m.rank("?x")?;
    let mut next = outer.iter();
    let mut k = Vec::with_capacity(rank);
    for axis in 0..rank {
        let j = inner.get(axis).cloned().unwrap_or(SliceItem::Full);
        k.push(match j {
            SliceItem::Index(_) => j,
            _ => compose_item(&j, next.next().unwrap_or(&SliceItem::Full))?,
        });
    }
    if next.next().is_some() {
        return None;
    }
    attr("?k", Attr::Items(k))
}
