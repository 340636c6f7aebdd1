//! Fourier-Motzkin elimination over affine constraints `a >= 0` of the
//! loop IR: whether a conjunction has no integer point. Each constraint is
//! tightened to integers (coefficients divided by their gcd, the constant
//! rounded down), which is sound for integer iterators and sizes. The
//! answer `true` is a proof; `false` may also mean "gave up" (overflow,
//! too many constraints). The synthesizer's guards and splits and the
//! region relations of a kernel both ask it, so it lives with the IR.

use std::collections::BTreeSet;

use crate::ir::Affine;

/// Most constraints the elimination keeps before giving up (unproved).
const MAX_CONSTRAINTS: usize = 512;

/// Fourier-Motzkin: eliminates every variable; the system is infeasible
/// when a constant row is negative.
pub fn infeasible(rows: Vec<Affine>) -> bool {
    let mut rows: Vec<Affine> = rows.into_iter().filter_map(tighten).collect();
    if rows.iter().any(|r| r.terms.is_empty() && r.constant < 0) {
        return true;
    }
    let vars: BTreeSet<String> = rows.iter().flat_map(|r| r.terms.keys().cloned()).collect();
    for v in vars {
        let (with, without): (Vec<Affine>, Vec<Affine>) =
            rows.into_iter().partition(|r| r.terms.contains_key(&v));
        let coef = |r: &Affine| r.terms.get(&v).copied().unwrap_or(0);
        let (pos, neg): (Vec<&Affine>, Vec<&Affine>) = with.iter().partition(|r| coef(r) > 0);
        rows = without;
        for p in &pos {
            for n in &neg {
                let (cp, cn) = (coef(p), -coef(n));
                let Some(combined) = combine(p, cn, n, cp) else {
                    return false;
                };
                if let Some(row) = tighten(combined) {
                    if row.terms.is_empty() && row.constant < 0 {
                        return true;
                    }
                    rows.push(row);
                }
            }
        }
        if rows.len() > MAX_CONSTRAINTS {
            return false;
        }
    }
    false
}

/// `a * ca + b * cb` (both multipliers positive), `None` on overflow.
fn combine(a: &Affine, ca: i64, b: &Affine, cb: i64) -> Option<Affine> {
    let mut out = Affine::constant(
        a.constant
            .checked_mul(ca)?
            .checked_add(b.constant.checked_mul(cb)?)?,
    );
    for (k, c) in a
        .terms
        .iter()
        .map(|(k, c)| (k, c.checked_mul(ca)))
        .chain(b.terms.iter().map(|(k, c)| (k, c.checked_mul(cb))))
    {
        let e = out.terms.entry(k.clone()).or_insert(0);
        *e = e.checked_add(c?)?;
    }
    out.terms.retain(|_, c| *c != 0);
    Some(out)
}

/// Divides by the gcd of the variable coefficients, rounding the constant
/// down (an integer point of `a >= 0` satisfies the tightened row); a row
/// that always holds (a non-negative constant) is dropped.
fn tighten(mut a: Affine) -> Option<Affine> {
    a.terms.retain(|_, c| *c != 0);
    if a.terms.is_empty() {
        return (a.constant < 0).then_some(a);
    }
    let g = a.terms.values().fold(0i64, |g, &c| gcd(g, c.abs()));
    if g > 1 {
        a.terms.values_mut().for_each(|c| *c /= g);
        a.constant = a.constant.div_euclid(g);
    }
    Some(a)
}

/// The greatest common divisor of `a` and `b` (non-negative arguments).
pub(crate) fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
