//! Deciding a condition's case splits before Z3 sees it. The invariants
//! describe an array element with `ite`s over where it lies (done, in
//! progress, untouched, inside a region store), and the same element read
//! in two places carries two syntactically different conditions that the
//! loop bounds decide alike. Inside products (`alpha · A[i][j] · x[j]`)
//! such `ite`s make Z3's nonlinear arithmetic case-split blindly; a gemver
//! preservation condition ran past 100 s. Each such condition that is
//! pure integer arithmetic over constants (counters, sizes, element
//! indices) is decided here under the condition's pure hypotheses with a
//! small, separate query, and replaced by `true` or `false` where the
//! hypotheses imply it. Replacing a subterm by a value it has under the
//! hypotheses changes nothing where they hold, so the condition keeps its
//! meaning.

use std::collections::HashMap;

use z3::ast::{Ast, Bool, Dynamic};
use z3::{DeclKind, Params, SatResult, Solver};

/// Resource units for deciding one `ite` condition (linear integer
/// arithmetic over a few constants: far below this in practice).
const DECIDE_RLIMIT: u32 = 20_000;

/// Wall-clock back-stop for one decision (Z3's resource count can stall).
const DECIDE_WALL: std::time::Duration = std::time::Duration::from_millis(500);

/// Whether `t` is built from constants, numerals and interpreted linear
/// arithmetic and Boolean operations only (no array or range function, no
/// product of two unknowns, no division): a fragment Z3 decides at once.
fn pure(t: &Dynamic, memo: &mut HashMap<Dynamic, bool>) -> bool {
    if let Some(p) = memo.get(t) {
        return *p;
    }
    let p = if !t.is_app() {
        false
    } else if t.num_children() == 0 {
        // A constant (counter, size, element index) or a numeral.
        true
    } else {
        // A whitelist: the crate's `DeclKind` numbering follows a newer Z3
        // than Debian's 4.8.12 past the arithmetic kinds (an uninterpreted
        // function reads as `FfBitsum`), so only these kinds are trusted.
        let children = t.children();
        let linear = match t.decl().kind() {
            DeclKind::Mul => children.iter().filter(|c| !numeral(c)).count() <= 1,
            DeclKind::Add
            | DeclKind::Sub
            | DeclKind::Uminus
            | DeclKind::Le
            | DeclKind::Lt
            | DeclKind::Ge
            | DeclKind::Gt
            | DeclKind::Eq
            | DeclKind::Distinct
            | DeclKind::And
            | DeclKind::Or
            | DeclKind::Not
            | DeclKind::Implies
            | DeclKind::Iff
            | DeclKind::Xor
            | DeclKind::Ite
            | DeclKind::ToReal => true,
            _ => false,
        };
        linear && children.iter().all(|c| pure(c, memo))
    };
    memo.insert(t.clone(), p);
    p
}

fn numeral(t: &Dynamic) -> bool {
    t.is_app()
        && matches!(t.decl().kind(), DeclKind::Anum | DeclKind::ToReal)
        && t.children().iter().all(numeral)
}

/// Decides conditions under fixed hypotheses, remembering each answer.
pub(crate) struct Decider {
    solver: Solver,
    known: HashMap<Dynamic, Option<bool>>,
    pure: HashMap<Dynamic, bool>,
}

impl Decider {
    /// A decider for the pure members of `hyps`.
    pub fn new(hyps: &[&Bool]) -> Decider {
        let solver = Solver::new();
        let mut params = Params::new();
        params.set_u32("rlimit", DECIDE_RLIMIT);
        solver.set_params(&params);
        let mut memo = HashMap::new();
        for h in hyps {
            if pure(&Dynamic::from_ast(*h), &mut memo) {
                solver.assert(*h);
            }
        }
        Decider {
            solver,
            known: HashMap::new(),
            pure: memo,
        }
    }

    /// `Some(v)` when the hypotheses imply that `c` is `v`.
    fn decide(&mut self, c: &Bool) -> Option<bool> {
        let key = Dynamic::from_ast(c);
        if let Some(v) = self.known.get(&key) {
            return *v;
        }
        let v = if !pure(&key, &mut self.pure) {
            None
        } else if self.unsat_with(&c.not()) {
            Some(true)
        } else if self.unsat_with(c) {
            Some(false)
        } else {
            None
        };
        self.known.insert(key, v);
        v
    }

    fn unsat_with(&self, extra: &Bool) -> bool {
        self.solver.push();
        self.solver.assert(extra);
        let unsat = crate::z3_turn::check_within(&self.solver, DECIDE_WALL) == SatResult::Unsat;
        self.solver.pop(1);
        unsat
    }

    /// `t` with every pure `ite` condition the hypotheses decide replaced
    /// by its value, simplified.
    pub fn simplify(&mut self, t: &Bool) -> Bool {
        let mut conditions = Vec::new();
        let mut seen = std::collections::HashSet::new();
        collect_ite_conditions(&Dynamic::from_ast(t), &mut seen, &mut conditions);
        let mut pairs: Vec<(Bool, Bool)> = Vec::new();
        for c in conditions {
            if let Some(v) = self.decide(&c) {
                pairs.push((c, Bool::from_bool(v)));
            }
        }
        if pairs.is_empty() {
            return t.clone();
        }
        let refs: Vec<(&Bool, &Bool)> = pairs.iter().map(|(a, b)| (a, b)).collect();
        t.substitute(&refs).simplify()
    }
}

fn collect_ite_conditions(
    t: &Dynamic,
    seen: &mut std::collections::HashSet<Dynamic>,
    out: &mut Vec<Bool>,
) {
    if !t.is_app() || !seen.insert(t.clone()) {
        return;
    }
    let children = t.children();
    if t.decl().kind() == DeclKind::Ite {
        if let Some(c) = children.first().and_then(|c| c.as_bool()) {
            if c.num_children() > 0 {
                out.push(c);
            }
        }
    }
    for c in &children {
        collect_ite_conditions(c, seen, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::{Int, Real};
    use z3::FuncDecl;

    #[test]
    fn conditions_the_bounds_decide_are_replaced_and_others_kept() {
        let (i, n) = (Int::new_const("i"), Int::new_const("n"));
        let a = FuncDecl::new("A0", &[&z3::Sort::int()], &z3::Sort::real());
        let read = |k: &Int| a.apply(&[k]).as_real().expect("real");
        let zero = Int::from_i64(0);
        let in_range = i.ge(&zero) & i.lt(&n);
        let hyps = [in_range.clone(), n.ge(Int::from_i64(1))];
        let hyp_refs: Vec<&Bool> = hyps.iter().collect();
        let mut d = Decider::new(&hyp_refs);
        // `i < n` holds, `i < 0` does not, `i < 3` is open.
        let x = Real::new_const("x");
        let t = i
            .lt(&n)
            .ite(&read(&i), &x)
            .eq(i.lt(&zero).ite(&x, &read(&i)))
            & i.lt(Int::from_i64(3)).ite(&x, &read(&zero)).eq(&x);
        let s = d.simplify(&t).to_string();
        assert!(!s.contains("(< i n)") && !s.contains("(< i 0)"), "{s}");
        assert!(s.contains('3'), "an undecided condition stays: {s}");
        // A condition over an array element is never decided.
        let data = read(&i).gt(Real::from_int(&zero));
        let u = data.ite(&x, &read(&zero)).eq(&x);
        assert_eq!(d.simplify(&u).to_string(), u.to_string());
    }
}
