//! Recognising C's running maximum and minimum.
//!
//! C computes `max_val = x[i] > max_val ? x[i] : max_val` in a loop; the
//! algebra core keeps that as nested `select(lt0(m - x), x, m)`, while a
//! tensor program's `max` reduction is the application `max(…)`. Both denote
//! the same function: `select(lt0(e - t), t, e)` is `max(t, e)` (ties pick
//! `e`, which equals `t` then) and `select(lt0(t - e), t, e)` is `min(t, e)`.
//! [`canonical_extrema`] rewrites every such select, innermost first, so
//! running extrema in C specs compare equal to reductions. An integer
//! divisor guarded against zero (`where(d != 0, d, 1)`) compares as `d`.
//! (This rule belongs in the core's `select` constructor; it lives here until
//! the core adopts it.)

use std::collections::HashMap;

use crate::algebra::{Atom, AtomKind, Expr, Func};

/// `e` with every select that is a maximum or minimum of its branches
/// rebuilt as `max`/`min` (which flatten, so a chain becomes one `max`).
pub fn canonical_extrema(e: &Expr) -> Expr {
    rewrite(e, &mut HashMap::new())
}

fn has_select(e: &Expr) -> bool {
    e.terms().iter().any(|t| {
        t.mono.factors().iter().any(|(a, _)| match a.kind() {
            AtomKind::Sym { .. } => false,
            AtomKind::App { func, args } => *func == Func::Select || args.iter().any(has_select),
            AtomKind::Recip(q) => has_select(q),
        })
    })
}

fn rewrite(e: &Expr, memo: &mut HashMap<Atom, Expr>) -> Expr {
    if !has_select(e) {
        return e.clone();
    }
    let mut parts = Vec::with_capacity(e.terms().len());
    for term in e.terms() {
        let mut product = Expr::constant(term.coeff.clone());
        for (atom, exp) in term.mono.factors() {
            // A negative power of a rebuilt atom that folded to zero cannot
            // happen for a sound rewrite; should it, keep `e` as it was.
            let Ok(powered) = rewrite_atom(atom, memo).pow(*exp) else {
                return e.clone();
            };
            product = product.mul(&powered);
        }
        parts.push(product);
    }
    Expr::sum(parts.iter())
}

fn rewrite_atom(atom: &Atom, memo: &mut HashMap<Atom, Expr>) -> Expr {
    if let Some(done) = memo.get(atom) {
        return done.clone();
    }
    let result = match atom.kind() {
        AtomKind::Sym { .. } => Expr::atom(atom.clone()),
        AtomKind::Recip(q) => {
            let q2 = rewrite(q, memo);
            Expr::one()
                .div(&q2)
                .unwrap_or_else(|_| Expr::atom(atom.clone()))
        }
        AtomKind::App { func, args } => {
            let args: Vec<Expr> = args.iter().map(|a| rewrite(a, memo)).collect();
            match (func, args.as_slice()) {
                (Func::Select, [cond, then_value, else_value]) => {
                    extremum(cond, then_value, else_value)
                        .unwrap_or_else(|| Expr::select(cond, then_value, else_value))
                }
                (Func::TruncDiv | Func::Rem, [n, d]) => {
                    let d = unguarded_divisor(d).unwrap_or(d);
                    Expr::apply(*func, &[n.clone(), d.clone()])
                        .unwrap_or_else(|_| Expr::atom(atom.clone()))
                }
                _ => Expr::apply(*func, &args).unwrap_or_else(|_| Expr::atom(atom.clone())),
            }
        }
    };
    memo.insert(atom.clone(), result.clone());
    result
}

/// Whether `x` is a non-zero constant times `c` (zero exactly where `c` is;
/// the core normalises a select's condition `255 - a` to `a - 255`).
fn nonzero_multiple(x: &Expr, c: &Expr) -> bool {
    x == c || *x == c.neg()
}

/// `d` for a divisor guarded against zero, `select(d, d, 1)`: C integer
/// division by zero is undefined, and the core assumes divisors non-zero
/// (its rule 2), so the guard a tensor program needs (PyTorch raises on an
/// integer division by zero, even in a `where` branch it discards) changes
/// no defined value.
fn unguarded_divisor(d: &Expr) -> Option<&Expr> {
    match d.as_atom()?.as_app()? {
        (Func::Select, [cond, then_value, else_value])
            if else_value.is_one() && nonzero_multiple(then_value, cond) =>
        {
            Some(then_value)
        }
        _ => None,
    }
}

/// `max`/`min` of the branches when the condition compares exactly them.
fn extremum(cond: &Expr, then_value: &Expr, else_value: &Expr) -> Option<Expr> {
    let pair = [then_value.clone(), else_value.clone()];
    if *cond == Expr::lt0(&else_value.sub(then_value)) {
        return Some(Expr::max_of(&pair));
    }
    if *cond == Expr::lt0(&then_value.sub(else_value)) {
        return Some(Expr::min_of(&pair));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::Symbol;

    fn x(i: u32) -> Expr {
        Symbol::element("x", &[i]).to_expr()
    }

    #[test]
    fn a_running_maximum_becomes_one_max() {
        let mut m = x(0);
        for i in 1..4 {
            m = Expr::select(&Expr::gt(&x(i), &m), &x(i), &m);
        }
        let expected = Expr::max_of(&[x(0), x(1), x(2), x(3)]);
        assert_ne!(m, expected);
        assert_eq!(canonical_extrema(&m), expected);
    }

    #[test]
    fn a_running_minimum_becomes_min_and_other_selects_stay() {
        let m = Expr::select(&Expr::lt(&x(1), &x(0)), &x(1), &x(0));
        assert_eq!(canonical_extrema(&m), Expr::min_of(&[x(0), x(1)]));
        let other = Expr::select(&Expr::lt(&x(1), &x(2)), &x(1), &x(0));
        assert_eq!(canonical_extrema(&other), other);
    }

    #[test]
    fn a_divisor_guarded_against_zero_compares_as_the_divisor() {
        let guarded = Expr::select(&x(1), &x(1), &Expr::one());
        let quotient = Expr::trunc_div(&x(0), &guarded);
        assert_eq!(canonical_extrema(&quotient), Expr::trunc_div(&x(0), &x(1)));
        // A guard with another fallback is a different function.
        let other = Expr::select(&x(1), &x(1), &Expr::int(2));
        let quotient = Expr::trunc_div(&x(0), &other);
        assert_eq!(canonical_extrema(&quotient), quotient);
    }
}
