//! Unbounded proofs, Tenspiler-style: the C loop nest equals its lifted
//! TensIR program for every size, not only the sizes a bounded check tries.
//!
//! Sizes are Z3 integers constrained by the C's assumptions; arrays are Z3
//! arrays over integer indices (reals for float kernels, exact integers
//! with C semantics otherwise); reductions are recursive range functions
//! with their unfold lemma. Each loop gets an invariant derived from the
//! lifted program (never searched): what the loop nest has computed so far
//! equals the lifted program on that region, the rest is unchanged. The
//! initiation, preservation and postcondition conditions are discharged by
//! Z3 one by one, each under its own timeout.
//!
//! Programs that keep loops (partial lifts) are proved by simulation in
//! `loops`: each kept loop is matched to its C loop, and the segments
//! between and inside them are proved with this machinery for arbitrary
//! array contents and every in-range value of the kept loop variables.

use serde::Serialize;

/// Knobs of [`prove`].
#[derive(Clone, Debug, Serialize)]
pub struct UnboundedOptions {
    /// Budget for each verification condition, in milliseconds of Z3 work:
    /// converted into Z3's deterministic resource limit (`rlimit`), so the
    /// verdict does not depend on the machine's load; wall-clock time stops
    /// a condition at twice this (a safety net for queries on which Z3's
    /// resource count stalls).
    pub timeout_ms: u64,
    /// The user's `--assume-in-domain` (see `BoundedOptions`): a
    /// refutation needs inputs inside the assumed domain.
    pub assume_in_domain: bool,
}

impl Default for UnboundedOptions {
    fn default() -> UnboundedOptions {
        UnboundedOptions {
            timeout_ms: 10_000,
            assume_in_domain: false,
        }
    }
}

/// The verdict of an unbounded proof attempt.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum UnboundedResult {
    /// Every verification condition holds for all sizes.
    Proved {
        /// The loop invariants used, human-readable, one per loop.
        invariants: Vec<String>,
        /// How many verification conditions Z3 discharged.
        conditions: usize,
        /// The arithmetic the proof holds in ("reals", "integers (C
        /// semantics)").
        arithmetic: String,
    },
    /// Nothing was refuted, but no proof was found.
    Unknown {
        /// The condition that could not be decided.
        condition: String,
        /// Why: a timeout, an operation without a lemma, an unsupported
        /// loop shape.
        reason: String,
    },
    /// A verification condition is false: the program is wrong.
    Failed {
        condition: String,
        /// Z3's model of the failing condition.
        counterexample: Option<String>,
    },
}

/// Why a kernel or program is outside what the encoding covers.
#[derive(Clone, Debug)]
pub(crate) struct Unsupported(pub String);

/// A float literal as its Z3 real: the decimal it round-trips as in its
/// type (`value::decimal_real`).
pub(crate) fn real_literal(v: f64, single: bool) -> Result<Real, Unsupported> {
    value::decimal_real(v, single)
        .ok_or_else(|| Unsupported(format!("the non-finite constant {v}")))
}

/// A dim (polynomial over sizes, rendered by the targets crate) as a Z3
/// integer, each size read through `size`.
pub(crate) fn dim_term(
    dim: &tenslift_targets::Dim,
    size: &dyn Fn(&str) -> Option<Int>,
) -> Result<Int, Unsupported> {
    let text = dim.render(&|s| s.to_string(), "//");
    let (poly, divisor) = match text.rsplit_once(") // ") {
        Some((p, d)) => (
            p.trim_start_matches('('),
            d.trim()
                .parse::<i64>()
                .map_err(|_| Unsupported(format!("dim {text}")))?,
        ),
        None => (text.as_str(), 1),
    };
    let mut total = Int::from_i64(0);
    let mut sign = 1i64;
    for token in poly.split(' ') {
        match token {
            "+" => sign = 1,
            "-" => sign = -1,
            "" => {}
            term => {
                let (neg, term) = match term.strip_prefix('-') {
                    Some(t) => (-1, t),
                    None => (1, term),
                };
                let mut product = Int::from_i64(sign * neg);
                for factor in term.split('*') {
                    product = match factor.parse::<i64>() {
                        Ok(c) => product * Int::from_i64(c),
                        Err(_) => {
                            product
                                * size(factor).ok_or_else(|| {
                                    Unsupported(format!("unknown size `{factor}` in dim {text}"))
                                })?
                        }
                    };
                }
                total += product;
            }
        }
    }
    Ok(if divisor == 1 {
        total
    } else {
        total.div(Int::from_i64(divisor))
    })
}

mod context;
mod extensionality;
mod libm;
mod lifted;
mod loops;
mod relevance;
mod shape;
mod solver_loops;
mod unroll;
mod vcgen;

use std::collections::HashMap;

use tenslift_frontend::ir::{self as loop_ir, Kernel};
use tenslift_targets::{self as tensir, Program};
use z3::ast::{Ast, Bool, Int, Real};
use z3::{FuncDecl, SatResult, Solver, Sort};

use crate::domain::value::{self, V};
use lifted::{Lifted, Symbols};

/// Proves `program` equal to `kernel` for all sizes: every output array
/// element and the returned value, over real arithmetic for floats and
/// exact integers (C truncating division, wrap-around of narrow types)
/// otherwise.
pub fn prove(kernel: &Kernel, program: &Program, options: &UnboundedOptions) -> UnboundedResult {
    let fitted = ascending(&crate::interface::kernel_for_program(kernel, program));
    let _turn = crate::z3_turn::take();
    // A fresh context per kernel: Z3's behaviour on a query depends on the
    // terms created before it (their ids order variables), so a kernel
    // gets the verdict it gets alone, whatever was proved before it.
    z3::with_z3_config(&z3::Config::new(), || {
        prove_in_context(&fitted, program, options)
    })
}

/// `kernel` with its descending loops ascending over the same values in
/// the same order (the invariants count iterations upwards).
fn ascending(kernel: &Kernel) -> Kernel {
    let mut names = Vec::new();
    tenslift_frontend::ir_rewrite::iterators(&kernel.body, &mut names);
    let body = kernel
        .body
        .iter()
        .map(|s| tenslift_frontend::ir_rewrite::ascend(s, &names).0)
        .collect();
    Kernel {
        body,
        ..kernel.clone()
    }
}

/// A program that is one in-place factorisation, proved through the
/// factorisation's defining loops ([`solver_loops`]); `None` (the element
/// encoding decides) unless that proof goes through.
fn through_solver_loops(
    kernel: &Kernel,
    program: &Program,
    options: &UnboundedOptions,
) -> Option<UnboundedResult> {
    let (looped, line) = solver_loops::expand(kernel, program)?;
    match loops::prove(kernel, &looped, options) {
        UnboundedResult::Proved {
            mut invariants,
            conditions,
            arithmetic,
        } => {
            invariants.insert(0, line);
            Some(UnboundedResult::Proved {
                invariants,
                conditions,
                arithmetic,
            })
        }
        _ => None,
    }
}

fn prove_in_context(
    kernel: &Kernel,
    program: &Program,
    options: &UnboundedOptions,
) -> UnboundedResult {
    // `syrk`, `syr2k`, `mirror_lower` as the masks and contractions they
    // are defined by: the invariants are read off those.
    let expanded = match tenslift_targets::symmetry::blas::expand_program(program) {
        Ok(p) => p,
        Err(e) => {
            return UnboundedResult::Unknown {
                condition: "encoding the lifted program".to_string(),
                reason: e.message,
            }
        }
    };
    let program = &expanded;
    // Kept loops (partial lifts) are proved by simulation, segment by
    // segment, with this loop-free machinery for each segment.
    if let Some(name) = array_named_by_other_coordinates(kernel, program) {
        return UnboundedResult::Unknown {
            condition: "encoding the lifted program".to_string(),
            reason: format!(
                "the program reads or writes `{name}` with another rank than the C's \
                 subscripts (a block of a flat array): not supported by the unbounded prover"
            ),
        };
    }
    if program.has_loops() {
        return loops::prove(kernel, program, options);
    }
    if let Some(proved) = through_solver_loops(kernel, program, options) {
        return proved;
    }
    let related = std::cell::Cell::new(false);
    match attempt(kernel, program, options, false, &related) {
        UnboundedResult::Unknown { .. } if related.get() => {
            attempt(kernel, program, options, true, &related)
        }
        result => result,
    }
}

/// One proof of a loop-free `program`: accumulators stored after their
/// loop related to the lifted element exactly, or (`by_difference`, tried
/// when that is too strong and some accumulator was related) by what the
/// loop adds; `related` is set when some accumulator was.
fn attempt(
    kernel: &Kernel,
    program: &Program,
    options: &UnboundedOptions,
    by_difference: bool,
    related: &std::cell::Cell<bool>,
) -> UnboundedResult {
    let symbols = symbols(kernel, program);
    let arithmetic = arithmetic(program);
    let lifted = match Lifted::new(program, &symbols) {
        Ok(l) => l,
        Err(Unsupported(reason)) => {
            return UnboundedResult::Unknown {
                condition: "encoding the lifted program".to_string(),
                reason,
            }
        }
    };
    let unrolled = unroll::unroll_small_loops(kernel);
    let mut exec = match vcgen::Exec::new(&unrolled, &lifted, &symbols) {
        Ok(e) => e,
        Err(Unsupported(reason)) => {
            return UnboundedResult::Unknown {
                condition: "the loop nest's shape".to_string(),
                reason,
            }
        }
    };
    let base: Vec<Bool> = symbols
        .sizes
        .iter()
        .filter(|(n, _)| is_size(program, kernel, n))
        .map(|(_, s)| s.ge(Int::from_i64(1)))
        .collect();
    let base = match preconditions(program, &|n| symbols.size(n)) {
        Ok(assumed) => base.into_iter().chain(assumed).collect(),
        Err(Unsupported(reason)) => {
            return UnboundedResult::Unknown {
                condition: "the program's preconditions".to_string(),
                reason,
            }
        }
    };
    exec.relations_by_difference = by_difference;
    let run = exec.run(base);
    related.set(exec.related_any.get());
    if let Err(Unsupported(reason)) = run {
        return UnboundedResult::Unknown {
            condition: "generating the verification conditions".to_string(),
            reason,
        };
    }
    // Lemma tiers, tried in turn on a condition that is not proved yet:
    // the unfold lemmas, then sums equal over equal summands, then sums
    // split, scaled or zero (more lemmas slow Z3 down on what the first
    // tiers prove).
    let (equal_sums, derived_sums) = extensionality::pair_lemmas(&lifted.sums.borrow());
    let base = lifted
        .lemmas
        .borrow()
        .iter()
        .chain(symbols.facts.borrow().iter())
        .map(|f| (f.clone(), relevance::fresh_constants(f)))
        .collect();
    let tiers = extensionality::lemma_tiers(base, &equal_sums, &derived_sums);
    let tight_tier = usize::from(!equal_sums.is_empty());
    let sums = lifted.sums.borrow();
    let facts = Facts {
        tiers,
        tight_tier,
        sums: &sums,
    };
    let budget = Budget::of(options);
    // The bounded check at small sizes, run at most once: on the first
    // model of a negated condition, so that a wrong program is refuted at
    // once instead of after every lemma tier has spent its budget (two
    // minutes for diag_dot doubled, against 0.1 s for the bounded check).
    let concrete = std::cell::OnceCell::new();
    let bounded = || concrete.get_or_init(|| bounded_verdict(kernel, program, options));
    let refuted = || matches!(bounded(), Bounded::Fails(_));
    for condition in &exec.conditions {
        let Some(verdict) = discharge(kernel, condition, &facts, &budget, &refuted) else {
            continue;
        };
        match verdict.result {
            SatResult::Unsat => {}
            SatResult::Sat => {
                let model = verdict.model.map(|text| {
                    if text.len() > 2000 {
                        format!("{}…", &text[..text.floor_char_boundary(2000)])
                    } else {
                        text
                    }
                });
                // A model of a negated condition is no proof of an error:
                // the invariant may be too weak, and range functions and
                // libm calls are uninterpreted. Only a bounded check that
                // finds concrete inputs on which the two sides differ makes
                // the program wrong.
                return match bounded().clone() {
                    Bounded::Passes(sizes) => UnboundedResult::Unknown {
                        condition: condition.name.clone(),
                        reason: format!(
                            "the condition fails with the invariant derived from the lifted program (too weak for this loop shape), yet the bounded check passes at {sizes}"
                        ),
                    },
                    Bounded::Fails(inputs) => UnboundedResult::Failed {
                        condition: condition.name.clone(),
                        counterexample: Some(format!(
                            "{inputs}(Z3's model of the failing condition: {})",
                            model.unwrap_or_else(|| "none".to_string())
                        )),
                    },
                    Bounded::Undecided(why) => UnboundedResult::Unknown {
                        condition: condition.name.clone(),
                        reason: format!(
                            "the condition fails with the invariant derived from the lifted program, but Z3's model need not be a real input (uninterpreted range or libm functions) and the bounded check is undecided ({why})"
                        ),
                    },
                };
            }
            SatResult::Unknown => {
                // Undecided here, but a wrong program is still refuted by
                // concrete inputs on which the two sides differ.
                if let Bounded::Fails(inputs) = bounded().clone() {
                    return UnboundedResult::Failed {
                        condition: condition.name.clone(),
                        counterexample: Some(inputs),
                    };
                }
                return UnboundedResult::Unknown {
                    condition: condition.name.clone(),
                    reason: format!(
                        "Z3 gave up ({}) within {} resource units (the budget of {} ms; wall-clock safety net {} ms)",
                        verdict
                            .reason
                            .unwrap_or_else(|| "no reason given".to_string()),
                        budget.rlimit,
                        options.timeout_ms,
                        budget.wall.as_millis()
                    ),
                };
            }
        }
    }
    UnboundedResult::Proved {
        invariants: assumed_lines(program)
            .chain(exec.invariants.iter().cloned())
            .collect(),
        conditions: exec.conditions.len(),
        arithmetic,
    }
}

/// The lemmas a condition may be given: tiers tried in turn (each tagged
/// with its fresh constants, for relevance), then the lifted program's
/// pairs of equal sums (each with the two sum terms it relates).
struct Facts<'s> {
    tiers: Vec<Vec<(Bool, std::collections::HashSet<String>)>>,
    /// The tier the few facts tried first are drawn from: the one with the
    /// equal-sum lemmas (an own sum against the lifted one), never the
    /// derived ones (splits, zeros), which connect to everything.
    tight_tier: usize,
    /// The sums met, for the lifted pair lemmas of each condition.
    sums: &'s [extensionality::SumUse],
}

/// Checks one condition with each tier of facts in turn, then with the
/// last tier and the pair lemmas whose two sums both occur in the query:
/// the last attempt's verdict and solver (`None`: nothing to check).
fn discharge(
    kernel: &Kernel,
    condition: &vcgen::Condition,
    facts: &Facts,
    budget: &Budget,
    refuted: &dyn Fn() -> bool,
) -> Option<Verdict> {
    // A model found with fewer facts may vanish with more, so a `sat` tier
    // only ends the search when concrete inputs show the program wrong.
    let settled = |v: &Verdict| match v.result {
        SatResult::Unsat => true,
        SatResult::Sat => refuted(),
        SatResult::Unknown => false,
    };
    let mut roots: Vec<&Bool> = condition.hyps.iter().collect();
    roots.push(&condition.goal);
    let tight_tier = facts.tiers.get(facts.tight_tier)?;
    let near = relevance::relevant(&roots, tight_tier);
    let pairs = pair_lemmas(condition, facts, &roots, &near);
    // A written element named by its index: first the few facts about the
    // very applications the goal mentions (the unfold lemmas at the
    // counter, the definitions and pairs of sums there), which Z3 combines
    // at once where the whole relevant set (instances at every cut, with
    // their case splits) drowns it.
    if !condition.subst.is_empty() {
        let candidates: Vec<&Bool> = near.iter().copied().chain(pairs.iter()).collect();
        let tight = relevance::connected(&condition.goal, &condition.subst, &candidates);
        if !tight.is_empty() && tight.len() < candidates.len() {
            let verdict = check(kernel, condition, &tight, budget);
            if settled(&verdict) {
                return Some(verdict);
            }
        }
    }
    let mut attempt = None;
    let mut facts_before = None;
    let mut last = Vec::new();
    for tier in &facts.tiers {
        let relevant = relevance::relevant(&roots, tier);
        if facts_before == Some(relevant.len()) {
            continue;
        }
        facts_before = Some(relevant.len());
        let verdict = check(kernel, condition, &relevant, budget);
        let done = settled(&verdict);
        attempt = Some(verdict);
        last = relevant;
        if done {
            return attempt;
        }
    }
    if pairs.is_empty() {
        return attempt;
    }
    last.extend(pairs.iter());
    Some(check(kernel, condition, &last, budget))
}

/// The pair lemmas of sums for one condition: between a sum it mentions
/// and one it or its `near` facts mention, as they read after its
/// substitution (offering every pair reachable through shared constants
/// drowns Z3).
fn pair_lemmas(
    condition: &vcgen::Condition,
    facts: &Facts,
    roots: &[&Bool],
    near: &[&Bool],
) -> Vec<Bool> {
    let pairs: Vec<(&Int, &Int)> = condition.subst.iter().map(|(a, b)| (a, b)).collect();
    let after = |b: &Bool| b.substitute(&pairs).simplify();
    let roots_after: Vec<Bool> = roots.iter().map(|b| after(b)).collect();
    let named = relevance::subterms(&roots_after.iter().collect::<Vec<_>>());
    let mut terms = roots_after;
    terms.extend(near.iter().map(|b| after(b)));
    let present = relevance::subterms(&terms.iter().collect::<Vec<_>>());
    extensionality::lifted_pair_lemmas(facts.sums, &condition.subst, &named, &present)
}

/// What Z3 said about one condition.
struct Verdict {
    result: SatResult,
    /// The model of the negated condition (when satisfiable).
    model: Option<String>,
    /// Why Z3 gave up (when unknown).
    reason: Option<String>,
}

/// One Z3 check of `condition` under `facts`, in a context of its own:
/// the query goes through SMT-LIB text, so Z3 sees exactly the terms of
/// this query in the order the text gives them. In the kernel's context
/// the same query was measured to stall for 20 s where a fresh parse of
/// its text took 0.2 s (Z3 orders variables by term ids, which all the
/// earlier conditions' terms had shifted), and the verdict now depends on
/// the query alone, as a replay of a dumped query with `z3` shows.
fn check(
    kernel: &Kernel,
    condition: &vcgen::Condition,
    facts: &[&Bool],
    budget: &Budget,
) -> Verdict {
    let solver = Solver::new();
    let pairs: Vec<(&Int, &Int)> = condition.subst.iter().map(|(a, b)| (a, b)).collect();
    let named = |b: &Bool| {
        if pairs.is_empty() {
            b.clone()
        } else {
            b.substitute(&pairs).simplify()
        }
    };
    let hyps: Vec<Bool> = condition.hyps.iter().map(named).collect();
    let mut decider = context::Decider::new(&hyps.iter().collect::<Vec<_>>());
    for h in &hyps {
        solver.assert(h);
    }
    for f in facts {
        let g = decider.simplify(&named(f));
        if std::env::var_os("TENSLIFT_TRACE_TMP").is_some() && g.to_string() == "true" {
            eprintln!(
                "TRACE became true: {}\nHYPS: {:?}",
                f,
                hyps.iter().map(|h| h.to_string()).collect::<Vec<_>>()
            );
        }
        solver.assert(&g);
    }
    // Z3's simplifier normalises the polynomials of the goal first
    // (simplifying the hypotheses too was measured to hurt).
    solver.assert(decider.simplify(&named(&condition.goal.not())).simplify());
    dump(kernel, &condition.name, &solver);
    let t0 = std::time::Instant::now();
    let v = crate::z3_turn::check_text(&solver.to_string(), budget.rlimit, budget.wall);
    if std::env::var_os("TENSLIFT_TRACE_TMP").is_some() {
        eprintln!(
            "TRACE {} facts={} {:?} {:?}",
            condition.name,
            facts.len(),
            v.result,
            t0.elapsed()
        );
    }
    Verdict {
        result: v.result,
        model: v.model,
        reason: v.reason,
    }
}

/// Writes the query of a condition as SMT-LIB into the folder named by
/// `TENSLIFT_UNBOUNDED_DUMP` (unset: nothing), one file per condition and
/// lemma tier, for replaying a hard or failing condition with `z3` alone.
fn dump(kernel: &Kernel, condition: &str, solver: &Solver) {
    let Some(dir) = std::env::var_os("TENSLIFT_UNBOUNDED_DUMP") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let stem: String = format!("{}-{condition}", kernel.name)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut path = dir.join(format!("{stem}.smt2"));
    for k in 1.. {
        if !path.exists() {
            break;
        }
        path = dir.join(format!("{stem}.{k}.smt2"));
    }
    // A debugging aid: a failure to write changes no verdict.
    let _ = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(&path, format!("{solver}\n(check-sat)\n")));
}

/// The relations the program relies on (`requires ni <= ext_1000`: the
/// region the C's loops touch fits its declared arrays) as hypotheses of
/// every condition: the C is only defined where they hold.
pub(crate) fn preconditions(
    program: &Program,
    size: &dyn Fn(&str) -> Option<Int>,
) -> Result<Vec<Bool>, Unsupported> {
    program
        .meta
        .requires
        .iter()
        .map(|r| Ok(dim_term(&r.needed, size)?.le(dim_term(&r.declared, size)?)))
        .collect()
}

/// How a proof shows the preconditions it assumed, before its invariants.
pub(crate) fn assumed_lines(program: &Program) -> impl Iterator<Item = String> + '_ {
    program
        .meta
        .requires
        .iter()
        .map(|r| format!("assumed (precondition): {r}"))
}

/// Z3 resource units (`rlimit`) granted per millisecond of
/// [`UnboundedOptions::timeout_ms`]. Measured with Z3 4.8.12 on this
/// project's 2-core VM: 430 units/ms on a fresh query, 180 units/ms over a
/// 20 s query with the machine busy; so the budget means roughly the time
/// it names, but counts work, not time, and a kernel gets the same verdict
/// on a busy machine.
const RLIMIT_PER_MS: u64 = 300;

/// Wall-clock back-stop, as a multiple of the nominal budget. Z3 4.8.12
/// does not count resource units evenly: on the nonlinear preservation
/// conditions of 2mm and gemver it counted 74 units/ms on an idle machine
/// and then stalled, so a condition with a 10 s budget and a back-stop of
/// ten times that ran for 100 s, twice per tier, and the golden-corpus test
/// outran CI's 90 minutes. Two times the nominal budget keeps the verdict
/// deterministic for every query that counts at the calibrated rate and
/// bounds the rest.
const WALL_CLOCK_FACTOR: u64 = 2;

/// How much Z3 may spend on one condition.
struct Budget {
    /// The deterministic bound: Z3 resource units.
    rlimit: u32,
    /// The safety net against a resource count that stalls: wall clock,
    /// [`WALL_CLOCK_FACTOR`] times the nominal budget.
    wall: std::time::Duration,
}

impl Budget {
    fn of(options: &UnboundedOptions) -> Budget {
        let ms = options.timeout_ms.max(1);
        Budget {
            rlimit: u32::try_from(ms.saturating_mul(RLIMIT_PER_MS)).unwrap_or(u32::MAX),
            wall: std::time::Duration::from_millis(ms.saturating_mul(WALL_CLOCK_FACTOR)),
        }
    }
}

/// An array the program declares with another rank than the kernel's
/// logical subscripts (`xb[head*head_size + i]` is `xb[head][i]` to the
/// frontend, a vector to the program): the unbounded prover relates
/// elements subscript by subscript, so it cannot check such a program.
fn array_named_by_other_coordinates(kernel: &Kernel, program: &Program) -> Option<String> {
    program.params.iter().find_map(|p| {
        let tenslift_targets::ParamKind::Array { shape, .. } = &p.kind else {
            return None;
        };
        kernel.params.iter().find_map(|c| match &c.kind {
            loop_ir::ParamKind::Array(info)
                if c.name == *p.name && info.dims.len() != shape.len() =>
            {
                Some(c.name.clone())
            }
            _ => None,
        })
    })
}

/// What the bounded checker says at two small size tuples.
#[derive(Clone)]
enum Bounded {
    /// It passes at both; the sizes tried.
    Passes(String),
    /// It finds inputs on which the two sides differ (rendered).
    Fails(String),
    /// No verdict; why.
    Undecided(String),
}

/// Runs the bounded checker at all sizes 3, then 2.
fn bounded_verdict(kernel: &Kernel, program: &Program, options: &UnboundedOptions) -> Bounded {
    let mut names: Vec<String> = program
        .params
        .iter()
        .filter(|p| matches!(p.kind, tensir::ParamKind::Size))
        .map(|p| p.name.to_string())
        .collect();
    for p in &kernel.params {
        if matches!(p.kind, loop_ir::ParamKind::Scalar { is_size: true, .. })
            && !names.contains(&p.name)
        {
            names.push(p.name.clone());
        }
    }
    let mut tried = Vec::new();
    for size in [3i64, 2] {
        let sizes: std::collections::BTreeMap<String, i64> =
            names.iter().map(|n| (n.clone(), size)).collect();
        let bounded = crate::bounded::check(
            kernel,
            program,
            &sizes,
            &crate::BoundedOptions {
                timeout_ms: options.timeout_ms,
                assume_in_domain: options.assume_in_domain,
                // A refuted segment makes a wrong program likely.
                isolated: true,
            },
        );
        match bounded {
            Ok(crate::BoundedResult::Fail { counterexample, .. }) => {
                return Bounded::Fails(counterexample.to_string())
            }
            Ok(crate::BoundedResult::Unknown { reason, .. }) => {
                return Bounded::Undecided(format!("at all sizes = {size}: {reason}"))
            }
            Ok(crate::BoundedResult::Pass { .. }) => tried.push(format!("all sizes = {size}")),
            Err(e) => return Bounded::Undecided(format!("at all sizes = {size}: {e}")),
        }
    }
    Bounded::Passes(tried.join(" and "))
}

fn is_size(program: &Program, kernel: &Kernel, name: &str) -> bool {
    program
        .param(name)
        .is_some_and(|p| matches!(p.kind, tensir::ParamKind::Size))
        || kernel.params.iter().any(|p| {
            p.name == name && matches!(p.kind, loop_ir::ParamKind::Scalar { is_size: true, .. })
        })
}

/// The arithmetic the proof holds in.
fn arithmetic(program: &Program) -> String {
    let float = program.params.iter().any(|p| match &p.kind {
        tensir::ParamKind::Array { dtype, .. } | tensir::ParamKind::Scalar(dtype) => {
            dtype.is_float()
        }
        tensir::ParamKind::Size => false,
    }) || program.ret.is_some_and(|d| d.is_float());
    if float {
        "reals (floats are proved over real arithmetic, as Tenspiler and TENSORIZE do; libm functions uninterpreted)".to_string()
    } else {
        "integers (exact; C truncating division and remainder; narrow types wrap; no overflow of 32/64-bit intermediates)".to_string()
    }
}

/// The symbols both sides share: sizes, data scalars, initial arrays.
fn symbols(kernel: &Kernel, program: &Program) -> Symbols {
    let mut sizes = std::collections::BTreeMap::new();
    let mut scalars = HashMap::new();
    let mut arrays = HashMap::new();
    for p in &program.params {
        let name = p.name.to_string();
        match &p.kind {
            tensir::ParamKind::Size => {
                sizes.insert(name.clone(), Int::new_const(name));
            }
            tensir::ParamKind::Scalar(d) => {
                let v = if d.is_float() {
                    V::R(Real::new_const(name.clone()))
                } else {
                    V::I(Int::new_const(name.clone()))
                };
                scalars.insert(name, v);
            }
            tensir::ParamKind::Array { dtype, shape, .. } => {
                let int = Sort::int();
                let domain: Vec<&Sort> = shape.iter().map(|_| &int).collect();
                let (range, kind) = if dtype.is_float() {
                    (Sort::real(), None)
                } else if *dtype == tenslift_targets::DType::Bool {
                    (Sort::int(), Some((1, false)))
                } else {
                    (Sort::int(), Some((dtype.bits(), dtype.is_signed_int())))
                };
                let f = FuncDecl::new(format!("{name}0"), &domain, &range);
                arrays.insert(name, (f, kind));
            }
        }
    }
    // C local arrays start with unknown contents.
    for l in &kernel.locals {
        if let tenslift_frontend::ir::LocalKind::Array(info) = &l.kind {
            let int = Sort::int();
            let domain: Vec<&Sort> = info.dims.iter().map(|_| &int).collect();
            let (range, kind) = if info.elem.is_float() {
                (Sort::real(), None)
            } else {
                (Sort::int(), Some((info.elem.bits(), info.elem.is_signed())))
            };
            let f = FuncDecl::new(format!("{}0", l.name), &domain, &range);
            arrays.entry(l.name.clone()).or_insert((f, kind));
        }
    }
    for p in &kernel.params {
        if let loop_ir::ParamKind::Scalar { ty, .. } = &p.kind {
            if sizes.contains_key(&p.name) || scalars.contains_key(&p.name) {
                continue;
            }
            if ty.is_float() {
                scalars.insert(p.name.clone(), V::R(Real::new_const(p.name.clone())));
            } else {
                sizes.insert(p.name.clone(), Int::new_const(p.name.clone()));
            }
        }
    }
    Symbols {
        sizes,
        scalars,
        arrays,
        facts: std::cell::RefCell::new(Vec::new()),
    }
}
