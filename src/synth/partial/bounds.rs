//! Affine facts about iterators and sizes, and what they imply: a guard
//! that always holds inside its loops, a split point inside a loop's
//! range, a subscript that stays inside its array.
//!
//! The facts are the loops around a statement (`start <= i`, `i <= end -
//! 1`); a goal `g >= 0` is implied when the facts with `g <= -1` have no
//! rational solution, decided by Fourier-Motzkin elimination. Each
//! constraint is tightened to integers (coefficients divided by their gcd,
//! the constant rounded down), which is sound for integer iterators
//! (`tenslift_frontend::fourier_motzkin`, shared with the region
//! relations). The prover may fail to prove a true goal, never proves a
//! false one.

use tenslift_frontend::fourier_motzkin::infeasible;
use tenslift_frontend::ir::{Affine, Expr};

use crate::synth::stencil::NestLoop;

/// A conjunction of `a >= 0` facts.
#[derive(Clone, Debug, Default)]
pub(super) struct Facts {
    rows: Vec<Affine>,
}

impl Facts {
    /// The facts the loops give their bodies: each iterator lies in its
    /// range.
    pub fn of_loops<'a>(loops: impl IntoIterator<Item = &'a NestLoop>) -> Facts {
        let mut facts = Facts::default();
        for l in loops {
            let var = Affine::var(l.iter.clone());
            facts.push(sub(&var, &l.start));
            let mut last = sub(&l.end, &var);
            last.constant -= 1;
            facts.push(last);
        }
        facts
    }

    pub fn push(&mut self, a: Affine) {
        self.rows.push(a);
    }

    /// Whether `goal >= 0` holds whenever the facts do.
    pub fn implies(&self, goal: &Affine) -> bool {
        let mut negated = scale(goal, -1);
        negated.constant -= 1;
        let mut rows = self.rows.clone();
        rows.push(negated);
        infeasible(rows)
    }

    /// Whether every constraint of `cond` holds whenever the facts do.
    pub fn implies_all(&self, cond: &[Affine]) -> bool {
        cond.iter().all(|c| self.implies(c))
    }

    /// Whether no point satisfies the facts and every constraint of
    /// `cond` (the condition never holds).
    pub fn excludes(&self, cond: &[Affine]) -> bool {
        let mut rows = self.rows.clone();
        rows.extend(cond.iter().cloned());
        infeasible(rows)
    }
}

fn sub(a: &Affine, b: &Affine) -> Affine {
    super::dependence::difference(a, b)
}

fn scale(a: &Affine, c: i64) -> Affine {
    tenslift_frontend::ir_rewrite::scale(a, c)
}

pub(super) use tenslift_frontend::ir_rewrite::{affine_of, constraints_of};

/// What the facts decide about a guard: always true, always false, or
/// neither (`None`).
pub(super) fn decide(facts: &Facts, cond: &Expr) -> Option<bool> {
    let rows = constraints_of(cond)?;
    if facts.implies_all(&rows) {
        Some(true)
    } else if facts.excludes(&rows) {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aff(terms: &[(&str, i64)], constant: i64) -> Affine {
        Affine {
            terms: terms.iter().map(|(k, c)| (k.to_string(), *c)).collect(),
            constant,
        }
    }

    fn nest(iter: &str, start: Affine, end: Affine) -> NestLoop {
        NestLoop {
            iter: iter.into(),
            start,
            end,
        }
    }

    /// nussinov: inside `for i in 0..n, for j in i+1..n`, `j - 1 >= 0` and
    /// `i + 1 < n` always hold; `i < j - 1` depends on `j`.
    #[test]
    fn guards_implied_by_the_loops_around_them() {
        let loops = [
            nest("i", aff(&[], 0), aff(&[("n", 1)], 0)),
            nest("j", aff(&[("i", 1)], 1), aff(&[("n", 1)], 0)),
        ];
        let facts = Facts::of_loops(&loops);
        assert!(facts.implies(&aff(&[("j", 1)], -1)));
        assert!(facts.implies(&aff(&[("n", 1), ("i", -1)], -2)));
        assert!(!facts.implies(&aff(&[("j", 1), ("i", -1)], -2)));
        assert!(!facts.excludes(&[aff(&[("j", 1), ("i", -1)], -2)]));
        // j == i is impossible there.
        assert!(facts.excludes(&[
            aff(&[("j", 1), ("i", -1)], 0),
            aff(&[("i", 1), ("j", -1)], 0)
        ]));
    }

    /// A split point `k` lies in the range of `i` when both run over 0..n.
    #[test]
    fn a_split_point_inside_the_range() {
        let loops = [
            nest("k", aff(&[], 0), aff(&[("n", 1)], 0)),
            nest("i", aff(&[], 0), aff(&[("n", 1)], 0)),
        ];
        let facts = Facts::of_loops(&loops[..1]);
        // 0 <= k and k <= n - 1.
        assert!(facts.implies(&aff(&[("k", 1)], 0)));
        assert!(facts.implies(&aff(&[("n", 1), ("k", -1)], -1)));
        assert!(!facts.implies(&aff(&[("n", 1), ("k", -1)], -2)));
    }
}
