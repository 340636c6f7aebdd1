//! Identities that hold where the input program is defined (opt-in).
//!
//! By default the normal form keeps only identities of the real field
//! (module docs, rules 1–4): `exp(log x)` stays an application, because for
//! `x < 0` C and NumPy compute NaN where `x` is a number. A user who states
//! that the inputs keep every `log` argument positive and every `sqrt`
//! argument positive (`--assume-in-domain`: the program computes no NaN and
//! divides by no zero square root) gets, while [`assume_in_domain`] is on:
//!
//! - `exp(c₁·log u₁ + … + rest) = u₁^c₁ · … · exp(rest)` for integer `cᵢ`
//!   (`exp(log x) = x`, `exp(log a - log b) = a / b`);
//! - `log(exp x) = x`;
//! - every square root `s = sqrt(t)` kept to the smallest exponents:
//!   `s² = t` (so `sqrt(x)⁴ = x²`), and `P·s⁻¹ = (P/t)·s` where `t`
//!   divides `P` (so `x / sqrt(x) = sqrt(x)`).
//!
//! The switch is process-wide (normal forms are interned process-wide):
//! the CLI sets it once, before any expression is built, from the user's
//! flag. Tests that turn it on run in their own process
//! (tests/domain_algebra.rs), never beside tests that expect it off.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::atom::{Atom, Func};
use super::expr::{Expr, Mono, Term};
use super::rational::Rat;

static ASSUME_IN_DOMAIN: AtomicBool = AtomicBool::new(false);

/// Turns the domain identities on or off for the whole process.
pub fn set_assume_in_domain(on: bool) {
    ASSUME_IN_DOMAIN.store(on, Ordering::SeqCst);
}

/// Whether the domain identities are on.
pub fn assume_in_domain() -> bool {
    ASSUME_IN_DOMAIN.load(Ordering::Relaxed)
}

/// `exp(arg)` with the logarithms of `arg` taken out: each term
/// `c·log(u)` with an integer `c` becomes the factor `u^c`.
pub(crate) fn exp_of_logs(arg: &Expr) -> Option<Expr> {
    let mut factor = Expr::one();
    let mut rest = Vec::new();
    let mut found = false;
    for term in arg.terms() {
        match log_argument(term) {
            Some((u, c)) => {
                factor = factor.mul(&u.pow(c).ok()?);
                found = true;
            }
            None => rest.push(term.clone()),
        }
    }
    if !found {
        return None;
    }
    let rest = Expr::from_terms(rest);
    Some(if rest.is_zero() {
        factor
    } else {
        factor.mul(&Expr::atom(Atom::app(Func::Exp, vec![rest])))
    })
}

/// `(u, c)` when `term` is `c·log(u)` with a small integer `c`.
fn log_argument(term: &Term) -> Option<(Expr, i32)> {
    let c = i32::try_from(term.coeff.to_i64()?).ok()?;
    match term.mono.factors() {
        [(atom, 1)] => match atom.as_app() {
            Some((Func::Log, [u])) => Some((u.clone(), c)),
            _ => None,
        },
        _ => None,
    }
}

/// `log(arg)` when `arg` is `exp(x)`: `x`.
pub(crate) fn log_of_exp(arg: &Expr) -> Option<Expr> {
    match arg.terms() {
        [term] if term.coeff.is_one() => match term.mono.factors() {
            [(atom, 1)] => match atom.as_app() {
                Some((Func::Exp, [x])) => Some(x.clone()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// Whether `e` holds a square-root atom at its top level.
pub(crate) fn has_square_root(e: &Expr) -> bool {
    e.top_atoms()
        .any(|a| matches!(a.as_app(), Some((Func::Sqrt, _))))
}

/// `e` with every square root `s = sqrt(t)` brought to its smallest
/// exponents: `s^k = t·s^(k-2)` for `k >= 2` and for `k <= -2`, and
/// `P·s^-1 = (P/t)·s` where the polynomial `t` divides `P`.
pub(crate) fn reduce_square_roots(e: Expr) -> Expr {
    // Reducing rebuilds sums, which cancel reciprocals, which multiply
    // numerators by denominators that may hold roots again: the two
    // normalisations need not meet. Past a nesting depth the expression is
    // left as it is — still equal to its value, only a missed equality.
    let depth = DEPTH.with(|d| d.get());
    if depth >= MAX_DEPTH {
        return e;
    }
    DEPTH.with(|d| d.set(depth + 1));
    let reduced = reduce_all(e);
    DEPTH.with(|d| d.set(depth));
    reduced
}

const MAX_DEPTH: u32 = 16;

thread_local! {
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

fn reduce_all(e: Expr) -> Expr {
    let e = reduce_powers(&e).unwrap_or(e);
    reduce_quotients(&e).unwrap_or(e)
}

/// The square root atoms among `mono`'s factors, with their exponents.
fn roots_of(mono: &Mono) -> impl Iterator<Item = (&Atom, &Expr, i32)> {
    mono.factors().iter().filter_map(|(a, k)| match a.as_app() {
        Some((Func::Sqrt, [t])) => Some((a, t, *k)),
        _ => None,
    })
}

/// Term by term: `s^k = t^(k div 2)·s^(k mod 2)` for `|k| >= 2`, with the
/// remainder 1 for odd positive `k` and -1 for odd negative `k`. `None`
/// when no term has such a power.
fn reduce_powers(e: &Expr) -> Option<Expr> {
    let needs = |t: &Term| roots_of(&t.mono).any(|(_, _, k)| k.abs() >= 2);
    if !e.terms().iter().any(needs) {
        return None;
    }
    let mut kept = Vec::new();
    let mut rebuilt = Vec::new();
    for term in e.terms() {
        if !needs(term) {
            kept.push(term.clone());
            continue;
        }
        let mut factors = Vec::new();
        let mut product = Expr::constant(term.coeff.clone());
        for (atom, k) in term.mono.factors() {
            match atom.as_app() {
                Some((Func::Sqrt, [t])) if k.abs() >= 2 => {
                    // Rust's remainder takes the dividend's sign: -3 % 2 = -1.
                    let rest = k % 2;
                    product = product.mul(&t.pow((k - rest) / 2).ok()?);
                    if rest != 0 {
                        factors.push((atom.clone(), rest));
                    }
                }
                _ => factors.push((atom.clone(), *k)),
            }
        }
        let mono = Expr::from_canonical_raw(vec![Term {
            coeff: Rat::ONE,
            mono: Mono(factors.into()),
        }]);
        rebuilt.push(product.mul(&mono));
    }
    Some(Expr::from_terms(kept).add(&Expr::sum(rebuilt.iter())))
}

/// For each root `s = sqrt(t)`: the terms with `s^-1` summed as `P·s^-1`
/// become `(P/t)·s` when the polynomial `t` divides `P`. All roots in one
/// pass over the terms (one rebuild, not one per root). `None` when no
/// root's quotient divides.
fn reduce_quotients(e: &Expr) -> Option<Expr> {
    let mut roots: Vec<Atom> = e
        .terms()
        .iter()
        .flat_map(|t| roots_of(&t.mono).filter(|r| r.2 == -1).map(|r| r.0.clone()))
        .collect();
    if roots.is_empty() {
        return None;
    }
    roots.sort();
    roots.dedup();
    let mut terms: Vec<Term> = e.terms().to_vec();
    let mut changed = false;
    for root in roots {
        let Some((Func::Sqrt, [t])) = root.as_app() else {
            continue;
        };
        let (over, others): (Vec<Term>, Vec<Term>) = terms
            .iter()
            .cloned()
            .partition(|term| term.mono.exponent(&root) == -1);
        let p = Expr::from_terms(
            over.iter()
                .map(|term| Term {
                    coeff: term.coeff.clone(),
                    mono: term.mono.without(&root),
                })
                .collect(),
        );
        let Some(q) = p.divide_polynomial(t) else {
            continue;
        };
        terms = others;
        terms.extend(q.mul(&Expr::atom(root.clone())).terms().iter().cloned());
        changed = true;
    }
    changed.then(|| Expr::from_terms(terms))
}
