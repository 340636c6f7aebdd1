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
use std::collections::HashSet;

use z3::ast::{Ast, Bool, Dynamic, Int, Real};
use z3::DeclKind;

use crate::domain::value::{self, V};

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
    /// The reduction node (lifted) or local array it comes from: two uses
    /// of one family differ only in bounds, cuts and indices.
    pub family: String,
    /// The range function and its arguments after the upper bound: the
    /// same sum at another bound (`None`: not known).
    pub function: Option<(std::rc::Rc<z3::FuncDecl>, Vec<Int>)>,
    /// The lemma instances made while evaluating `body` at `bound` (the
    /// unfold lemmas of sums nested in the summand): valid for every value
    /// of `bound`, so they are restated at each fresh constant.
    pub lemmas: Vec<Bool>,
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

/// Whether a fresh constant is the summation index of a lemma or template.
pub(crate) fn is_summation_index(name: &str) -> bool {
    ["ext!", "sum_r!", "local_r!"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// Most split lemmas made for one kernel: they are one per local sum and
/// pair of lifted sums of one family, and where an accumulation is redone
/// in every iteration of outer loops (doitgen) the uses are many and the
/// triples hundreds of thousands (gigabytes of terms). Counted in lemmas,
/// not time, so the verdict does not depend on the machine.
const MAX_SPLITS: usize = 2048;

/// The extensionality lemmas relating local sums to lifted sums over the
/// same range, in the same arithmetic: for each pair (local `L`, lifted
/// `F`), `L = F` and, when one summand is the other times a factor `k`
/// free of the summation index, `L = k · F` (or `F = k · L`); for each
/// local `L` and two uses `F`, `G` of one lifted family, `F = G + L` (a
/// reduction cut one step further).
pub(crate) fn pair_lemmas(uses: &[SumUse]) -> (Vec<Bool>, Vec<Bool>) {
    let mut equal = Vec::new();
    let mut derived = Vec::new();
    // One use per value: a sum met twice needs its lemmas once. Each
    // use's keys are printed once: the pairs are many (doitgen's rewritten
    // sums meet 150 uses) and printing a term is not cheap.
    let mut seen = std::collections::HashSet::new();
    let mut splits = 0;
    let keyed: Vec<(&SumUse, String, Range)> = uses
        .iter()
        .filter_map(|u| {
            let value = format!("{:?}", u.value);
            seen.insert(value.clone()).then(|| (u, value, Range::of(u)))
        })
        .collect();
    for (u, _, ur) in keyed.iter().filter(|(u, ..)| u.local) {
        let lifted_here = || keyed.iter().filter(move |(w, _, wr)| !w.local && wr == ur);
        for (w, ..) in lifted_here() {
            equal.push(lemma(u, w));
            derived.extend(scaled(u, w));
            derived.extend(scaled(w, u));
        }
        for (f, fv, _) in lifted_here() {
            for (g, ..) in lifted_here().filter(|(g, gv, _)| g.family == f.family && gv != fv) {
                if splits == MAX_SPLITS {
                    break;
                }
                splits += 1;
                derived.push(split(f, g, u));
            }
        }
    }
    for (u, ..) in &keyed {
        derived.push(zero(u));
    }
    (equal, derived)
}

/// A use's bounds as printed (simplified) and its arithmetic: two uses
/// over equal ranges have equal keys.
#[derive(PartialEq)]
struct Range {
    real: bool,
    lo: String,
    hi: String,
}

impl Range {
    fn of(u: &SumUse) -> Range {
        Range {
            real: u.value.is_real(),
            lo: u.lo.simplify().to_string(),
            hi: u.hi.simplify().to_string(),
        }
    }
}

/// The extensionality lemmas between a local sum and a lifted one from the
/// same lower bound to upper bounds written differently (an exit counter
/// `n - i <= n ? n : n - i` minus its start against a slice length `i`):
/// the local sum taken at the lifted one's bound, which its range function
/// gives, so that the lemma holds as stated and Z3 meets the local sum at
/// its own bound by congruence once the bounds are shown equal.
pub(crate) fn bound_pair_lemmas(uses: &[SumUse]) -> Vec<Bool> {
    let keyed: Vec<(&SumUse, Range)> = uses.iter().map(|u| (u, Range::of(u))).collect();
    let mut out = Vec::new();
    for (u, ur) in keyed.iter().filter(|(u, _)| u.local) {
        for (w, wr) in keyed.iter().filter(|(w, _)| !w.local) {
            if ur.real != wr.real || ur.lo != wr.lo || ur.hi == wr.hi {
                continue;
            }
            if let Some(at) = u.clone_at(&w.hi) {
                out.push(lemma(&at, w));
            }
        }
    }
    out
}

/// A lemma with the names that make it relevant to a query.
pub(crate) type Tagged = (Bool, std::collections::HashSet<String>);

/// The lemma tiers a condition is tried with in turn: `base`, then also
/// the `equal` sums (relevant through the constants they share), then
/// also the `derived` ones (relevant through the uses they relate, not
/// their own fresh summation index); a tier is left out when it adds
/// nothing. More lemmas slow Z3 down on what the first tiers prove.
pub(crate) fn lemma_tiers(base: Vec<Tagged>, equal: &[Bool], derived: &[Bool]) -> Vec<Vec<Tagged>> {
    let mut tier = base;
    let mut tiers = vec![tier.clone()];
    if !equal.is_empty() {
        tier.extend(
            equal
                .iter()
                .map(|f| (f.clone(), crate::unbounded::relevance::fresh_constants(f))),
        );
        tiers.push(tier.clone());
    }
    if !derived.is_empty() {
        tier.extend(derived.iter().map(|f| {
            let mut names = crate::unbounded::relevance::fresh_constants(f);
            names.retain(|n| !is_summation_index(n));
            (f.clone(), names)
        }));
        tiers.push(tier);
    }
    tiers
}

/// Equal and scaled sums among the lifted program's own reductions over one
/// range: two reduction nodes that sum the same products in another order
/// or layout (`matmul(A, x)` and `matmul(x, transpose(A))`), or one node at
/// two indices whose summands agree (a symmetric `Xᵀ X` at `(i, j)` and
/// `(j, i)`); and an own sum of the C against a lifted one at the same
/// element (Cholesky's `A[i][j] -= A[i][k] A[j][k]` against the
/// operation's inner sum), whose bounds agree only once the condition's
/// case is substituted. Kept apart from [`pair_lemmas`]: there are many such pairs,
/// so they are made for one condition at a time, after its substitution
/// (`subst`), between sums at the same indices (possibly permuted) of
/// which the condition names one (`named`) and mentions both (`present`).
pub(crate) fn lifted_pair_lemmas(
    uses: &[SumUse],
    subst: &[(Int, Int)],
    named: &HashSet<Dynamic>,
    present: &HashSet<Dynamic>,
) -> Vec<Bool> {
    let key = |i: &Int| i.simplify().to_string();
    let pairs: Vec<(&Int, &Int)> = subst.iter().map(|(a, b)| (a, b)).collect();
    let after = |t: &Dynamic| t.substitute(&pairs).simplify();
    let mut seen = HashSet::new();
    // Each lifted use with its value and sorted index arguments as the
    // condition reads them.
    let lifted: Vec<(&SumUse, Dynamic, Vec<String>)> = uses
        .iter()
        .filter_map(|u| {
            let value = after(&term(&u.value));
            let (_, args) = u.function.as_ref()?;
            let mut index: Vec<String> = args
                .iter()
                .map(|a| after(&Dynamic::from_ast(a)).to_string())
                .collect();
            index.sort();
            (present.contains(&value) && seen.insert(value.to_string()))
                .then_some((u, value, index))
        })
        .collect();
    let mut out = Vec::new();
    for (k, (u, uv, ui)) in lifted.iter().enumerate() {
        for (w, wv, wi) in &lifted[k + 1..] {
            if (u.local && w.local)
                || u.value.is_real() != w.value.is_real()
                || key(&u.lo) != key(&w.lo)
                || ui != wi
                || !(named.contains(uv) || named.contains(wv))
            {
                continue;
            }
            // At each one's bound: two bounds that are equal only under the
            // condition's hypotheses (`n` and an exit counter `n ≥ 0 ? n :
            // 0`) meet by congruence.
            let mut at_bounds = vec![(*u, w.clone_at(&u.hi))];
            if key(&u.hi) != key(&w.hi) {
                at_bounds.push((*w, u.clone_at(&w.hi)));
            }
            for (a, b) in at_bounds {
                let Some(b) = b else { continue };
                out.push(lemma(a, &b));
                out.extend(scaled(a, &b));
                out.extend(scaled(&b, a));
            }
        }
    }
    out.iter().map(|l| l.substitute(&pairs)).collect()
}

impl SumUse {
    /// This sum with upper bound `hi` (the same summands); `None` when
    /// the range function is unknown and `hi` is another bound.
    fn clone_at(&self, hi: &Int) -> Option<SumUse> {
        let value = if self.hi.simplify().to_string() == hi.simplify().to_string() {
            self.value.clone()
        } else {
            let (f, rest) = self.function.as_ref()?;
            let mut args: Vec<&dyn Ast> = vec![hi];
            args.extend(rest.iter().map(|a| a as &dyn Ast));
            let v = f.apply(&args);
            match (v.as_real(), v.as_int()) {
                (Some(r), _) => V::R(r),
                (_, Some(i)) => V::I(i),
                _ => return None,
            }
        };
        Some(SumUse {
            value,
            lo: self.lo.clone(),
            hi: hi.clone(),
            bound: self.bound.clone(),
            body: self.body.clone(),
            local: self.local,
            family: self.family.clone(),
            function: self.function.clone(),
            lemmas: self.lemmas.clone(),
        })
    }
}

/// `F = 0` when every summand is 0 (a sum over a range cut to nothing
/// inside another sum).
fn zero(u: &SumUse) -> Bool {
    let s = fresh_bound("ext");
    let inside = s.ge(&u.lo) & s.lt(&u.hi);
    let zero = if u.value.is_real() {
        V::R(value::real_num(0))
    } else {
        V::int(0)
    };
    let summand = substitute(&u.body, &u.bound, &s);
    let lemma = inside
        .implies(summand.equal(&zero))
        .implies(u.value.equal(&zero));
    with_template_lemmas(lemma, &[u], &s)
}

fn lemma(u: &SumUse, w: &SumUse) -> Bool {
    let s = fresh_bound("ext");
    let at = |x: &SumUse| substitute(&x.body, &x.bound, &s);
    let inside = s.ge(&u.lo) & s.lt(&u.hi);
    let summands_equal = inside.implies(at(u).equal(&at(w)));
    with_template_lemmas(summands_equal.implies(u.value.equal(&w.value)), &[u, w], &s)
}

/// `lemma` and the template lemmas of `uses`, restated at `s`.
fn with_template_lemmas(lemma: Bool, uses: &[&SumUse], s: &Int) -> Bool {
    let mut all = lemma;
    for u in uses {
        for l in &u.lemmas {
            all &= l.substitute(&[(&u.bound, s)]);
        }
    }
    all
}

/// `F = G + H` when `f(s) = g(s) + h(s)` for a fresh `s` in the range.
fn split(f: &SumUse, g: &SumUse, h: &SumUse) -> Bool {
    let s = fresh_bound("ext");
    let at = |x: &SumUse| substitute(&x.body, &x.bound, &s);
    let inside = s.ge(&f.lo) & s.lt(&f.hi);
    let summands = inside.implies(at(f).equal(&value::add(&at(g), &at(h))));
    let lemma = summands.implies(f.value.equal(&value::add(&g.value, &h.value)));
    with_template_lemmas(lemma, &[f, g, h], &s)
}

/// `A = k · B` when the summand of `a` is a product with the summand of
/// `b` as one factor and the other factors `k` free of the index.
fn scaled(a: &SumUse, b: &SumUse) -> Option<Bool> {
    let s = fresh_bound("ext");
    // Simplified, so that one element read through different index
    // arithmetic (`A0(0 + 1·i, s)`, `A0(i, s)`) is one factor.
    let fa = simplified(&substitute(&a.body, &a.bound, &s));
    let fb = simplified(&substitute(&b.body, &b.bound, &s));
    let (V::R(ra), V::R(rb)) = (&fa, &fb) else {
        return None;
    };
    // The factors of `b`'s summand, each taken out of `a`'s once (a
    // multiset difference): `B·(x·β)` is `β` times `B·x`.
    let mut factors = Vec::new();
    flatten_product(&Dynamic::from_ast(ra), &mut factors);
    let mut wanted = Vec::new();
    flatten_product(&Dynamic::from_ast(rb), &mut wanted);
    for w in &wanted {
        let text = w.to_string();
        let at = factors.iter().position(|f| f.to_string() == text)?;
        factors.remove(at);
    }
    let name = s.to_string();
    let k = factors
        .iter()
        .map(|f| f.as_real())
        .collect::<Option<Vec<Real>>>()?;
    if k.is_empty() || k.iter().any(|f| f.to_string().contains(&name)) {
        return None;
    }
    let k = V::R(k.iter().skip(1).fold(k[0].clone(), |p, f| p * f.clone()));
    let inside = s.ge(&a.lo) & s.lt(&a.hi);
    let summands = inside.implies(fa.equal(&value::mul(&k, &fb)));
    let lemma = summands.implies(a.value.equal(&value::mul(&k, &b.value)));
    Some(with_template_lemmas(lemma, &[a, b], &s))
}

fn simplified(v: &V) -> V {
    match v {
        V::I(i) => V::I(i.simplify()),
        V::R(r) => V::R(r.simplify()),
        V::B(b) => V::B(b.simplify()),
    }
}

fn term(v: &V) -> Dynamic {
    match v {
        V::I(i) => Dynamic::from_ast(i),
        V::R(r) => Dynamic::from_ast(r),
        V::B(b) => Dynamic::from_ast(b),
    }
}

fn flatten_product(t: &Dynamic, out: &mut Vec<Dynamic>) {
    if t.is_app() && t.decl().kind() == DeclKind::Mul {
        for c in t.children() {
            flatten_product(&c, out);
        }
    } else {
        out.push(t.clone());
    }
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
                family: "local_product".to_string(),
                function: None,
                lemmas: Vec::new(),
            },
            SumUse {
                value: lifted_value.clone(),
                lo: Int::from_i64(0),
                hi: n,
                bound: q,
                body: lifted_body,
                local: false,
                family: "sum_lifted".to_string(),
                function: None,
                lemmas: Vec::new(),
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
        let (lemmas, _) = pair_lemmas(&uses);
        assert_eq!(lemmas.len(), 1);
        assert!(proves(&lemmas, &i.eq(&e), &local.equal(&lifted)));
        // Without the lemma the two range functions are unrelated.
        assert!(!proves(&[], &i.eq(&e), &local.equal(&lifted)));
    }

    #[test]
    fn different_summands_prove_nothing() {
        let (uses, i, e, local, lifted) = diagonal_sums(true);
        let (lemmas, _) = pair_lemmas(&uses);
        assert!(!proves(&lemmas, &i.eq(&e), &local.equal(&lifted)));
        // Nor at different elements with equal summand shapes.
        let (uses, i, e, local, lifted) = diagonal_sums(false);
        let (lemmas, _) = pair_lemmas(&uses);
        let differ = i.eq(&e).not();
        assert!(!proves(&lemmas, &differ, &local.equal(&lifted)));
    }

    #[test]
    fn different_ranges_are_not_paired() {
        let (mut uses, ..) = diagonal_sums(false);
        uses[1].hi = Int::new_const("m");
        assert!(pair_lemmas(&uses).0.is_empty());
    }

    /// A use `Σ_{r<n} body(r)` of family `family`.
    fn use_of(value: &V, n: &Int, bound: &Int, body: V, local: bool, family: &str) -> SumUse {
        SumUse {
            value: value.clone(),
            lo: Int::from_i64(0),
            hi: n.clone(),
            bound: bound.clone(),
            body,
            local,
            family: family.to_string(),
            function: None,
            lemmas: Vec::new(),
        }
    }

    fn real_fn(name: &str, arity: usize) -> FuncDecl {
        let int = Sort::int();
        let domain: Vec<&Sort> = (0..arity).map(|_| &int).collect();
        FuncDecl::new(name, &domain, &Sort::real())
    }

    fn at(f: &FuncDecl, args: &[&Int]) -> V {
        let args: Vec<&dyn Ast> = args.iter().map(|a| *a as &dyn Ast).collect();
        V::R(f.apply(&args).as_real().expect("real"))
    }

    #[test]
    fn a_factor_free_of_the_index_comes_out_of_the_sum() {
        // L = Σ A(r, j) * x(j) (local), S = Σ A(r, j) (lifted): L = x(j) · S.
        let (a, x) = (real_fn("A0", 2), real_fn("x0", 1));
        let (l, sf) = (real_fn("local_sum_w", 2), real_fn("sum_col", 2));
        let (n, j) = (Int::new_const("n"), fresh_bound("j"));
        let (p, q) = (fresh_bound("local_r"), fresh_bound("sum_r"));
        let local = at(&l, &[&n, &j]);
        let lifted = at(&sf, &[&n, &j]);
        let body = value::mul(&at(&a, &[&p, &j]), &at(&x, &[&j]));
        let uses = vec![
            use_of(&local, &n, &p, body, true, "local_w"),
            use_of(&lifted, &n, &q, at(&a, &[&q, &j]), false, "red_col"),
        ];
        let (_, derived) = pair_lemmas(&uses);
        let goal = local.equal(&value::mul(&at(&x, &[&j]), &lifted));
        assert!(proves(&derived, &Bool::from_bool(true), &goal));
        // A wrong factor is not derived.
        let wrong = local.equal(&value::mul(&at(&x, &[&n]), &lifted));
        assert!(!proves(&derived, &Bool::from_bool(true), &wrong));
    }

    #[test]
    fn a_sum_of_zeros_is_zero_and_a_longer_cut_splits() {
        // F_c = Σ_{r<n} G(c; r) where G(c; r) = Σ_{t<c} A(r, t); the
        // local column sum L = Σ_{r<n} A(r, c).
        let (a, g, f, l) = (
            real_fn("A0", 2),
            real_fn("sum_in", 2),
            real_fn("sum_out", 2),
            real_fn("local_sum_cs", 2),
        );
        let (n, c) = (Int::new_const("n"), fresh_bound("c"));
        let one = Int::from_i64(1);
        let next = c.clone() + one;
        let zero = Int::from_i64(0);
        let template = |cut: &Int| -> (Int, V, Vec<Bool>) {
            let r = fresh_bound("sum_r");
            let body = at(&g, &[cut, &r]);
            // The unfold lemmas of the inner sum at the template's index.
            let lemmas = vec![
                at(&g, &[&zero, &r]).equal(&V::R(value::real_num(0))),
                cut.ge(Int::from_i64(1))
                    .implies(at(&g, &[cut, &r]).equal(&value::add(
                        &at(&g, &[&(cut.clone() - Int::from_i64(1)), &r]),
                        &at(&a, &[&r, &(cut.clone() - Int::from_i64(1))]),
                    ))),
            ];
            (r, body, lemmas)
        };
        let mut uses = Vec::new();
        for cut in [&zero, &c, &next] {
            let (r, body, lemmas) = template(cut);
            let mut u = use_of(&at(&f, &[&n, cut]), &n, &r, body, false, "red_out");
            u.lemmas = lemmas;
            uses.push(u);
        }
        let p = fresh_bound("local_r");
        uses.push(use_of(
            &at(&l, &[&n, &c]),
            &n,
            &p,
            at(&a, &[&p, &c]),
            true,
            "local_cs",
        ));
        let (_, derived) = pair_lemmas(&uses);
        let hyp = c.ge(Int::from_i64(0));
        let zero_value = V::R(value::real_num(0));
        assert!(proves(
            &derived,
            &hyp,
            &at(&f, &[&n, &zero]).equal(&zero_value)
        ));
        let split = at(&f, &[&n, &next]).equal(&value::add(&at(&f, &[&n, &c]), &at(&l, &[&n, &c])));
        assert!(proves(&derived, &hyp, &split));
        // Not the other way round, nor a sum of nonzero terms zero.
        let wrong = at(&f, &[&n, &c]).equal(&value::add(&at(&f, &[&n, &next]), &at(&l, &[&n, &c])));
        assert!(!proves(&derived, &hyp, &wrong));
        assert!(!proves(
            &derived,
            &hyp,
            &at(&f, &[&n, &c]).equal(&zero_value)
        ));
    }
}
