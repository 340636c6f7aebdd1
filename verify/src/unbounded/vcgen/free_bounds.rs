//! Whether a write reaches an element when a loop that its subscript does
//! not determine bounds one that it does.
//!
//! In symm's `for (i..) for (j..) for (k = 0; k < i; k++) C[k][j] += ...`
//! the element `C[e0][e1]` fixes `k = e0` and `j = e1`, but not `i`: the
//! write reaches the element when some `i` of its own range has
//! `0 <= e0 < i`. With every such bound affine in one free iterator with
//! coefficient ±1, that existence is a conjunction: each lower bound on the
//! free iterator is at most each upper bound ([`FreeBounds::exists`]).
//! Anything else stays unsupported, as before.

use std::collections::{BTreeMap, HashSet};

use tenslift_frontend::ir::Affine;
use z3::ast::{Bool, Int};

use crate::unbounded::shape::LoopInfo;
use crate::unbounded::Unsupported;

/// Lower and upper (inclusive) bounds on each free iterator.
#[derive(Default)]
pub(super) struct FreeBounds {
    bounds: BTreeMap<String, (Vec<Int>, Vec<Int>)>,
}

/// What a bound splits into: the free iterator it mentions (if any) with
/// its coefficient, and the rest.
fn split(
    a: &Affine,
    free: &HashSet<String>,
) -> Result<(Option<(String, i64)>, Affine), Unsupported> {
    let mut rest = a.clone();
    let mut found = None;
    for (name, &c) in &a.terms {
        if !free.contains(name) {
            continue;
        }
        if found.is_some() || c.abs() != 1 {
            return Err(Unsupported(format!(
                "a bound `{a}` over loops the written element does not determine"
            )));
        }
        rest.terms.remove(name);
        found = Some((name.clone(), c));
    }
    Ok((found, rest))
}

impl FreeBounds {
    /// Records the bounds of `lo <= v < hi` that mention a free iterator;
    /// `eval` gives an affine's value from the determined iterators. Returns
    /// the part of the condition that mentions none (all of it when
    /// neither bound does).
    pub(super) fn bound(
        &mut self,
        v: &Int,
        (lo, hi): (&Affine, &Affine),
        free: &HashSet<String>,
        eval: &dyn Fn(&Affine) -> Result<Int, Unsupported>,
    ) -> Result<Bool, Unsupported> {
        let mut determined = Bool::from_bool(true);
        // v >= c*f + r  and  v < c*f + r  (c = ±1) as bounds on f.
        for (a, is_lower) in [(lo, true), (hi, false)] {
            let (f, rest) = split(a, free)?;
            let r = eval(&rest)?;
            let Some((f, c)) = f else {
                determined &= if is_lower { v.ge(&r) } else { v.lt(&r) };
                continue;
            };
            let entry = self.bounds.entry(f).or_default();
            match (is_lower, c) {
                (true, 1) => entry.1.push(v.clone() - r),
                (true, _) => entry.0.push(r - v.clone()),
                (false, 1) => entry.0.push(v.clone() - r + Int::from_i64(1)),
                (false, _) => entry.1.push(r - v.clone() - Int::from_i64(1)),
            }
        }
        Ok(determined)
    }

    /// Adds each free iterator's own range `start <= f < end` (from the
    /// write's `loops`).
    pub(super) fn ranges(
        &mut self,
        loops: &[LoopInfo],
        free: &HashSet<String>,
        eval: &dyn Fn(&Affine) -> Result<Int, Unsupported>,
    ) -> Result<(), Unsupported> {
        let mentions = |a: &Affine| a.terms.keys().any(|n| free.contains(n));
        for (f, (lows, highs)) in self.bounds.iter_mut() {
            let Some(LoopInfo { start, end, .. }) = loops.iter().find(|l| &l.iter == f) else {
                return Err(Unsupported(format!("`{f}` is not a loop of the write")));
            };
            if mentions(start) || mentions(end) {
                return Err(Unsupported(format!(
                    "the bounds of loop `{f}` depend on loops the written element does not determine"
                )));
            }
            lows.push(eval(start)?);
            highs.push(eval(end)? - Int::from_i64(1));
        }
        Ok(())
    }

    /// Some value of every free iterator meets all its bounds.
    pub(super) fn exists(&self) -> Bool {
        let mut all = Bool::from_bool(true);
        for (lows, highs) in self.bounds.values() {
            for l in lows {
                for h in highs {
                    all &= l.le(h);
                }
            }
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use tenslift_frontend::ir::Affine;
    use z3::ast::Int;
    use z3::{SatResult, Solver};

    use super::FreeBounds;
    use crate::unbounded::shape::LoopInfo;

    fn var(name: &str) -> Affine {
        Affine::var(name)
    }

    /// symm's `for (i = 0; i < m; i++) … for (k = 0; k < i; k++) C[k][j]
    /// += …` reaches `C[e][j]` exactly when some `i < m` has `e < i`,
    /// i.e. `0 <= e <= m - 2`.
    #[test]
    fn a_bound_over_an_undetermined_loop_is_an_existence() {
        let (e, m) = (Int::new_const("e"), Int::new_const("m"));
        let free: HashSet<String> = ["i".to_string()].into();
        let eval = |a: &Affine| -> Result<Int, crate::unbounded::Unsupported> {
            let mut t = Int::from_i64(a.constant);
            for (name, c) in &a.terms {
                let v = match name.as_str() {
                    "m" => m.clone(),
                    other => return Err(crate::unbounded::Unsupported(other.into())),
                };
                t += Int::from_i64(*c) * v;
            }
            Ok(t)
        };
        let mut bounds = FreeBounds::default();
        let determined = bounds
            .bound(&e, (&Affine::constant(0), &var("i")), &free, &eval)
            .expect("one free iterator");
        let loops = [LoopInfo {
            iter: "i".into(),
            start: Affine::constant(0),
            end: var("m"),
            path: Vec::new(),
        }];
        bounds
            .ranges(&loops, &free, &eval)
            .expect("its range is known");
        let covered = determined & bounds.exists();
        let expected = e.ge(Int::from_i64(0)) & e.le(m.clone() - Int::from_i64(2));
        let solver = Solver::new();
        solver.assert(covered.eq(&expected).not());
        assert_eq!(solver.check(), SatResult::Unsat);
    }

    #[test]
    fn two_free_iterators_in_one_bound_stay_unsupported() {
        let free: HashSet<String> = ["i".to_string(), "t".to_string()].into();
        let mut both = var("i");
        both.terms.insert("t".into(), 1);
        let eval = |_: &Affine| Ok(Int::from_i64(0));
        let mut bounds = FreeBounds::default();
        let e = Int::new_const("e");
        let zero = Affine::constant(0);
        assert!(bounds.bound(&e, (&zero, &both), &free, &eval).is_err());
    }
}
