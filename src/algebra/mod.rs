//! The exact algebra core: expressions in a canonical normal form.
//!
//! Specs, sketches and verification conditions are all [`Expr`]s. Every
//! constructor returns normal form and every normal form is interned, so
//! clones are reference-count increments and `==` is a pointer comparison.
//! The core is `Send + Sync`: the interners are sharded tables of weak
//! references, so all rayon threads can build and compare expressions at
//! once without a global lock.
//!
//! ```
//! use tenslift::algebra::{Expr, Symbol};
//! let a = Symbol::element("A", &[0, 0]).to_expr();
//! let b = Symbol::element("B", &[0, 0]).to_expr();
//! let lhs = (&a + &b) * (&a - &b);
//! let rhs = &a * &a - &b * &b;
//! assert_eq!(lhs, rhs);
//! assert_eq!(lhs.to_string(), "A[0,0]^2 - B[0,0]^2");
//! ```
//!
//! # Normal form
//!
//! An expression is a sum of terms `c · Π aᵢ^kᵢ` with `c` a non-zero exact
//! rational ([`Rat`]: `i64` fast path, big integers on overflow), atoms `aᵢ`
//! and non-zero integer exponents `kᵢ`, terms sorted by monomial and merged.
//! Atoms are:
//!
//! - symbols: input elements `A[i,j]`, scalar parameters `alpha`, holes `?v`;
//! - applications of [`Func`] to normal-form arguments, normalised by the
//!   rules listed in [`apply`] (constant folding only where exact);
//! - `1/q` for a polynomial `q` with at least two terms, stored with its
//!   monomial content and leading coefficient divided out.
//!
//! Rules, and what "equal" means:
//!
//! 1. Arithmetic is that of the field of real numbers: `+` and `×` are
//!    associative and commutative, `×` distributes (products are expanded).
//!    Floating-point rounding is not modelled — not reassociation, not
//!    `float` (f32) rounding, not overflow to infinity. Two equal normal
//!    forms are **equal over the reals**, which is what TENSORIZE guarantees
//!    and what the verifier checks separately for IEEE concerns. Expansion
//!    is never cut short: a product whose expansion would be too large is
//!    refused by its caller (the spec executor reports `ExpressionTooLarge`
//!    and the size chooser retries at smaller sizes), so every normal form
//!    stays canonical and no equality is decided on a truncated one.
//! 2. Division by an atom or a monomial gives negative exponents (Laurent
//!    polynomials) and assumes the divisor non-zero, as TENSORIZE/SymPy did.
//!    Division by a polynomial first tries exact division; otherwise it
//!    introduces the atom `1/q` (`q` with monomial content and the
//!    coefficient of its first non-constant term divided out, so associates
//!    share one atom). Every sum is kept over a common power of each such
//!    atom, `N·(1/q)^K`, with `q` divided out of `N` while it divides: so
//!    `x/(x+1) + 1/(x+1)` is `1` and `(p/q)·q` is `p`.
//! 3. C integer operations are distinct functions: `tdiv` (truncating
//!    division), `rem`, `trunc` (float → int), `wrap_u8` etc. (conversion to a
//!    narrower integer type). They fold on integer constants with C
//!    semantics. Integer arithmetic between conversions is exact: no
//!    overflow is modelled — neither signed overflow (undefined in C) nor
//!    the wrap-around of `unsigned`/`uint32_t`/`uint64_t` arithmetic (defined
//!    in C): specs assume intermediate results stay in range. Narrow types
//!    (`uint8_t`, `short`) promote to `int`, so their wrap-around happens at
//!    the conversion back, which is modelled.
//! 4. Comparisons are the 0/1-valued predicates `lt0(d)` and `eq0(d)`;
//!    `select(c, a, b)` tests `c ≠ 0`.
//!
//! Soundness: equal normal forms always denote equal functions of the
//! inputs (under rules 1–2). The converse holds for polynomials and
//! Laurent polynomials over atoms, and for quotients by one polynomial; it
//! does not always hold for identities hidden inside opaque applications
//! (`sqrt(x)^2 = x`), between different reciprocal atoms (`1/(p·q)` vs
//! `1/p · 1/q`, as no polynomial factorisation is attempted), or that need
//! 0/1 reasoning about predicates (`lt0(x)^2 = lt0(x)`). The core never
//! claims a false equality; it may miss a true one.
//!
//! # Map of the module
//!
//! [`domain`] the opt-in identities that hold where the program is
//! defined (`exp(log x) = x`, `sqrt(x)² = x`; `--assume-in-domain`) ·
//! [`rational`] exact numbers · [`intern`] hash-consing · [`atom`] symbols,
//! applications, reciprocals · [`expr`] the normal form · [`poly`]
//! arithmetic and division · [`apply`] application rules · [`ops`]
//! substitution, `var`, coefficients · [`solve`] holes and linear systems ·
//! [`tensor`] symbolic tensors, density, Simp · [`eval`] numeric values ·
//! [`display`] text.

pub mod apply;
pub mod atom;
pub mod display;
pub mod domain;
pub mod eval;
pub mod expr;
pub mod intern;
pub mod ops;
pub mod poly;
pub mod rational;
pub mod solve;
pub mod tensor;

use thiserror::Error;

pub use atom::{Atom, AtomKind, Func, Symbol, SymbolKind};
pub use eval::{EvalError, Evaluator};
pub use expr::{Expr, Mono, Term};

/// The algebra's [`Expr`] under the one name the rest of the crate uses
/// for it, beside TensIR's and the loop IR's own `Expr`: an exact symbolic
/// value.
pub type Value = Expr;
pub use rational::Rat;
pub use solve::{
    solve_hole, solve_identity, solve_linear, solve_system, solve_tensor_holes, SolveError,
};
pub use tensor::{simp_score, Tensor};

/// Errors of algebraic operations.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum AlgebraError {
    #[error("division by zero")]
    DivisionByZero,
    #[error(
        "`{symbol}` occurs inside an application or denominator, not as a polynomial variable"
    )]
    NotPolynomial { symbol: String },
    #[error("`{func}` applied to {given} arguments")]
    Arity { func: String, given: usize },
    #[error("shape {shape:?} does not hold {elements} elements")]
    ShapeMismatch { shape: Vec<usize>, elements: usize },
}

#[cfg(test)]
mod tests;
