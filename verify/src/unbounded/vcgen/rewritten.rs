//! An accumulation that outer loops redo from scratch in every iteration:
//! doitgen's `sum[p] = 0; for (s..) sum[p] += A[r][q][s] * C4[s][p];`
//! inside `for (r..) for (q..)`, whose element holds the sum of the
//! latest `(r, q)` iteration. The lifted program names only the last
//! one (`sum = A[nr - 1, nq - 1, :]` after the product), so the invariant
//! reads every stage off the C (see `own`): at a point inside iteration
//! `(r, q)`, an element whose init is done holds that iteration's partial
//! sum; otherwise, and at the head of an outer loop, it holds the complete
//! sum of the latest iteration done, or its initial value when none is.
//! At the kernel's end that is the last iteration's sum, which the
//! extensionality lemmas relate to the lifted one.

use z3::ast::{Bool, Int};

use super::{Exec, Frame};
use crate::domain::value::V;
use crate::unbounded::shape::Write;
use crate::unbounded::Unsupported;

/// An init and an accumulation of one element, both inside `outer` loops
/// (the first ones of both writes) that do not index it.
pub(super) struct Rewritten<'w> {
    init: &'w Write,
    acc: &'w Write,
    /// How many of the writes' first loops rewrite the element.
    outer: usize,
    /// The accumulation's reduction loop.
    rho: usize,
}

impl<'w> Rewritten<'w> {
    /// The group when `writes` are exactly such an init and accumulation.
    pub fn of(name: &str, writes: &'w [Write]) -> Option<Rewritten<'w>> {
        let [init, acc] = writes else { return None };
        let outer = init.reduction_loops();
        let k = outer.len();
        if k == 0 || outer != (0..k).collect::<Vec<_>>() || super::reads_array(&init.value, name) {
            return None;
        }
        let reductions = acc.reduction_loops();
        let [shared @ .., rho] = reductions.as_slice() else {
            return None;
        };
        let rho = *rho;
        let same_loops =
            (0..k).all(|m| acc.loops.get(m).map(|l| &l.path) == Some(&init.loops[m].path));
        // Outer loops over fixed ranges: the latest iteration done is the
        // lexicographic predecessor (see `last_of`).
        let counters: Vec<&String> = init.loops.iter().map(|l| &l.iter).collect();
        let free_of =
            |a: &tenslift_frontend::ir::Affine| a.terms.keys().all(|t| !counters.contains(&t));
        let free = |m: usize| free_of(&init.loops[m].start) && free_of(&init.loops[m].end);
        let ok = shared == outer.as_slice()
            && same_loops
            && (0..k).all(free)
            && acc.path > init.path
            && super::own::accumulation_step(&acc.value, name, acc).is_some();
        ok.then_some(Rewritten {
            init,
            acc,
            outer: k,
            rho,
        })
    }
}

impl Exec<'_> {
    /// The invariant's value of element `e` of `name` (group `g`) at the
    /// head of the innermost of `frames`.
    pub(super) fn rewritten_piece(
        &self,
        name: &str,
        g: &Rewritten,
        frames: &[Frame],
        e: &[Int],
    ) -> Result<V, Unsupported> {
        let k = g.outer;
        let ranges = (0..k)
            .map(|m| self.bounds_at(g.init, m, &[]))
            .collect::<Result<Vec<_>, _>>()?;
        let (q, nest_done) = self.common(g.acc, frames);
        let inside = q.min(k);
        let cs: Vec<Int> = frames[..inside].iter().map(|f| f.counter.clone()).collect();
        let initial = self.symbols.initial(name, e)?;
        let covered = self.coverage(g.acc, e)?.0 & self.coverage(g.init, e)?.0;
        // The latest iteration done before the current one (or before the
        // point, outside the outer loops): complete.
        let mut before = initial.clone();
        if inside == 0 {
            // Outside the loop nest: after it (or at the kernel's end),
            // its last iteration is done; before it, none is.
            if frames.is_empty() || nest_done {
                let (exists, last) = last_of(&ranges, 0, &[]);
                before = V::ite(&exists, &self.complete(name, g, e, &last)?, &before);
            }
        } else {
            for m in 0..inside {
                let (exists, last) = last_of(&ranges, m, &cs);
                before = V::ite(&exists, &self.complete(name, g, e, &last)?, &before);
            }
        }
        let before = V::ite(&covered, &before, &initial);
        if inside < k {
            return Ok(before);
        }
        // Inside iteration `cs`: this iteration's stage once its init is done.
        let outer: Vec<(usize, Int)> = cs.iter().cloned().enumerate().collect();
        let x = |w: &Write| -> Result<Vec<Option<Int>>, Unsupported> {
            let (_, mut x) = self.coverage(w, e)?;
            for (m, c) in &outer {
                x[*m] = Some(c.clone());
            }
            Ok(x)
        };
        let init_done = self.done(g.init, &x(g.init)?, frames, None)?;
        let t = self.done_count(g.acc, &x(g.acc)?, frames, g.rho)?;
        let start = self.start_value(name, Some(g.init), e, &outer)?;
        let partial = self.own_accumulation(name, g.acc, g.rho, &start, e, &t, &outer)?;
        Ok(V::ite(&(covered & init_done), &partial, &before))
    }

    /// The element's value once iteration `at` of the outer loops is done.
    fn complete(&self, name: &str, g: &Rewritten, e: &[Int], at: &[Int]) -> Result<V, Unsupported> {
        let outer: Vec<(usize, Int)> = at.iter().cloned().enumerate().collect();
        let (_, x) = self.coverage(g.acc, e)?;
        let (_, hi) = self.bounds_at(g.acc, g.rho, &x)?;
        let start = self.start_value(name, Some(g.init), e, &outer)?;
        self.own_accumulation(name, g.acc, g.rho, &start, e, &hi, &outer)
    }
}

/// The latest iteration of the outer loops (each over its range) that
/// precedes every iteration starting with `cs[..m + 1]` but agrees with
/// `cs[..m]`: `cs[m] - 1` at level `m`, the last of every range below; or,
/// with no `cs`, the last iteration of all. Whether it exists, and it.
fn last_of(ranges: &[(Int, Int)], m: usize, cs: &[Int]) -> (Bool, Vec<Int>) {
    let one = Int::from_i64(1);
    let mut exists = Bool::from_bool(true);
    let mut at: Vec<Int> = cs.iter().take(m).cloned().collect();
    if let Some(c) = cs.get(m) {
        let prev = c.clone() - one.clone();
        exists &= prev.ge(&ranges[m].0);
        at.push(prev);
    }
    let below = if cs.is_empty() { 0 } else { m + 1 };
    for (lo, hi) in &ranges[below..] {
        exists &= hi.gt(lo);
        at.push(hi.clone() - one.clone());
    }
    (exists, at)
}
