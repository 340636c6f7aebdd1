//! Equal sums over equal summands. A local array of the C that accumulates
//! (`product[i][j] += A[i][l] * B[l][j]`) is a range function of its own,
//! and the lifted program sums the same products with another one (an
//! einsum over a diagonal, a transposed view): the unfold lemmas alone never
//! relate two range functions. The extensionality lemma does:
//!
//!   (∀ r ∈ [lo, hi). f(r) = g(r))  ⇒  Σ_{r<hi} f(r) = Σ_{r<hi} g(r)
//!
//! instantiated for each pair of uses (a local sum, a lifted sum) with the
//! same bounds, the universal replaced by a fresh constant `s` that appears
//! nowhere else: `(lo ≤ s < hi ⇒ f(s) = g(s)) ⇒ F = G`. With `s` fresh the
//! ground implication is equivalent to the quantified one, so it is sound;
//! Z3 uses it when the summands are equal under the condition's
//! hypotheses (for every `s`, which it can only show by the summands'
//! structure).

use std::cell::Cell;

use z3::ast::{Ast, Bool, Int};

use super::value::V;

/// One use of a sum range function: its value `Σ_{r ∈ [lo, hi)} body(r)`,
/// and its summand at the placeholder `bound`.
pub(crate) struct SumUse {
    pub value: V,
    pub lo: Int,
    pub hi: Int,
    pub bound: Int,
    pub body: V,
    /// A local array's accumulation (else a lifted reduction).
    pub local: bool,
}

thread_local! {
    static FRESH: Cell<u64> = const { Cell::new(0) };
}

/// A fresh integer constant (named with `!`, so relevance tracks it).
pub(crate) fn fresh_bound(base: &str) -> Int {
    let n = FRESH.with(|c| {
        let n = c.get() + 1;
        c.set(n);
        n
    });
    Int::new_const(format!("{base}!{n}"))
}

/// The extensionality lemma for every pair of a local sum and a lifted sum
/// over the same range, in the same arithmetic.
pub(crate) fn pair_lemmas(uses: &[SumUse]) -> Vec<Bool> {
    let key = |i: &Int| i.simplify().to_string();
    let mut out = Vec::new();
    for u in uses.iter().filter(|u| u.local) {
        for w in uses.iter().filter(|w| !w.local) {
            if u.value.is_real() != w.value.is_real()
                || key(&u.hi) != key(&w.hi)
                || key(&u.lo) != key(&w.lo)
            {
                continue;
            }
            out.push(lemma(u, w));
        }
    }
    out
}

fn lemma(u: &SumUse, w: &SumUse) -> Bool {
    let s = fresh_bound("ext");
    let at = |x: &SumUse| substitute(&x.body, &x.bound, &s);
    let inside = s.ge(&u.lo) & s.lt(&u.hi);
    let summands_equal = inside.implies(at(u).equal(&at(w)));
    summands_equal.implies(u.value.equal(&w.value))
}

fn substitute(v: &V, from: &Int, to: &Int) -> V {
    match v {
        V::I(i) => V::I(i.substitute(&[(from, to)])),
        V::R(r) => V::R(r.substitute(&[(from, to)])),
        V::B(b) => V::B(b.substitute(&[(from, to)])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::{FuncDecl, SatResult, Solver, Sort};

    /// `F(n) = Σ_{r<n} A(i, r) * B(r, i)` (a local sum at `(i, i)`) and
    /// `G(n) = Σ_{r<n} A(e, r) * B(r, e)` (a lifted diagonal at `e`).
    fn diagonal_sums(swap_lifted: bool) -> (Vec<SumUse>, Int, Int, V, V) {
        let int = Sort::int();
        let real = Sort::real();
        let a = FuncDecl::new("A0", &[&int, &int], &real);
        let b = FuncDecl::new("B0", &[&int, &int], &real);
        let f = FuncDecl::new("local_sum_product", &[&int, &int, &int], &real);
        let g = FuncDecl::new("sum_lifted", &[&int, &int], &real);
        let (n, i, e) = (Int::new_const("n"), fresh_bound("i"), fresh_bound("e"));
        let term = |x: &Int, y: &Int, r: &Int| -> V {
            let l = a.apply(&[x, r]).as_real().expect("real");
            let m = b.apply(&[r, y]).as_real().expect("real");
            V::R(l * m)
        };
        let (p, q) = (fresh_bound("r"), fresh_bound("r"));
        let local_value = V::R(f.apply(&[&n, &i, &i]).as_real().expect("real"));
        let lifted_value = V::R(g.apply(&[&n, &e]).as_real().expect("real"));
        let lifted_body = if swap_lifted {
            // A(e, r) * B(e, r): the transposed operand, a wrong program.
            let l = a.apply(&[&e, &q]).as_real().expect("real");
            let m = b.apply(&[&e, &q]).as_real().expect("real");
            V::R(l * m)
        } else {
            term(&e, &e, &q)
        };
        let uses = vec![
            SumUse {
                value: local_value.clone(),
                lo: Int::from_i64(0),
                hi: n.clone(),
                bound: p.clone(),
                body: term(&i, &i, &p),
                local: true,
            },
            SumUse {
                value: lifted_value.clone(),
                lo: Int::from_i64(0),
                hi: n,
                bound: q,
                body: lifted_body,
                local: false,
            },
        ];
        (uses, i, e, local_value, lifted_value)
    }

    fn proves(facts: &[Bool], hyp: &Bool, goal: &Bool) -> bool {
        let solver = Solver::new();
        for f in facts {
            solver.assert(f);
        }
        solver.assert(hyp);
        solver.assert(goal.not());
        solver.check() == SatResult::Unsat
    }

    #[test]
    fn equal_summands_give_equal_sums() {
        let (uses, i, e, local, lifted) = diagonal_sums(false);
        let lemmas = pair_lemmas(&uses);
        assert_eq!(lemmas.len(), 1);
        assert!(proves(&lemmas, &i.eq(&e), &local.equal(&lifted)));
        // Without the lemma the two range functions are unrelated.
        assert!(!proves(&[], &i.eq(&e), &local.equal(&lifted)));
    }

    #[test]
    fn different_summands_prove_nothing() {
        let (uses, i, e, local, lifted) = diagonal_sums(true);
        let lemmas = pair_lemmas(&uses);
        assert!(!proves(&lemmas, &i.eq(&e), &local.equal(&lifted)));
        // Nor at different elements with equal summand shapes.
        let (uses, i, e, local, lifted) = diagonal_sums(false);
        let lemmas = pair_lemmas(&uses);
        let differ = i.eq(&e).not();
        assert!(!proves(&lemmas, &differ, &local.equal(&lifted)));
    }

    #[test]
    fn different_ranges_are_not_paired() {
        let (mut uses, ..) = diagonal_sums(false);
        uses[1].hi = Int::new_const("m");
        assert!(pair_lemmas(&uses).is_empty());
    }
}
