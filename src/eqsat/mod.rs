//! Equality saturation over TensIR (issue #19 item 2), with `egg`.
//!
//! Every statement's expression of a program goes into one e-graph
//! (`lang`: TensIR operations as e-nodes, attributes as leaf e-nodes,
//! each class typed by the analysis), the rules of [`rules`] (kept as data,
//! one identity per line) are applied until the e-graph saturates or a
//! limit counted in work stops it (e-nodes, iterations), and each
//! statement's cheapest equal expression is extracted (`extract`) under
//! the synthesizer's cost model at sizes [`Limits::scale`] times the given
//! ones, where asymptotic order decides (as the hand-written rewrites this module replaced compared). A
//! statement keeps its expression unless the extracted one is cheaper by
//! [`Limits::min_saving`], so no program gets costlier.
//!
//! ```
//! use tenslift::eqsat::{optimize_program, Limits};
//! use tenslift::synth::cost::CostModel;
//! use tenslift_targets::{parse_program, print_program};
//! let text = "func f(n: size, m: size, A: f64[m, n], x: f64[n], y: out f64[n]) {\n  \
//!             y = matmul(x, matmul(transpose(A, perm=[1, 0]), A));\n}\n";
//! let program = parse_program("f.tensir", text).unwrap();
//! let sizes = [("n".to_string(), 5), ("m".to_string(), 4)].into_iter().collect();
//! let (better, report) =
//!     optimize_program(&program, &CostModel::Analytic, &sizes, &Limits::default()).unwrap();
//! assert!(report.cost_after < report.cost_before);
//! assert!(print_program(&better).contains("matmul(matmul(x, transpose(A, perm=[1, 0])), A)"));
//! ```
//!
//! Statements stay where they are: `let`s are not inlined (a value read
//! by two statements is computed once, and a `let` may read an array a
//! later store changes), so each statement is optimised on its own terms.
//! One exception, after extraction ([`share`]): a statement that computes
//! again, as part of its expression, a value another statement of its
//! block stores reads the stored region instead (the store moved up where
//! it came later and nothing in between depends on the order).
//! The caller still re-checks the returned program against the spec (the
//! lift's acceptance check): the rules are identities over the reals,
//! checked one by one by symbolic execution in this module's tests, but an
//! e-graph is only as sound as its least-tested rule.

mod apply;
mod extract;
mod lang;
pub mod rules;
mod share;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use egg::{Id, Rewrite, Runner, StopReason};
use tenslift_targets::{map_values, Expr, Program, ProgramError, Stmt};
use thiserror::Error;

pub use apply::{Cond, Family, Gate, Rule};
pub use extract::ExtractError;
use lang::{add_expr, TensLang, Types};

use crate::cost::{program_sum, CostModel};
use crate::spec::Sizes;

/// How far saturation may go, counted in work, so that the same program
/// gives the same result on a loaded machine.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Most e-nodes (egg checks after each rule's applications).
    pub nodes: usize,
    /// Most iterations (each searches every rule, then applies them all).
    pub iterations: usize,
    /// Programs are priced at the given sizes times this (256, as
    /// the hand-written rewrites this module replaced compared product orders: at traced sizes of 3 to
    /// 8 a cubic and a quadratic form cost about the same).
    pub scale: i64,
    /// A statement is rewritten only when its cost falls by at least this
    /// fraction: the cost model is coarser than that (a 0.3 % saving on
    /// syr2k measured anywhere from 0.85x to 1.05x), so smaller savings are
    /// churn, not speed.
    pub min_saving: f64,
    /// A wall-clock safety net only, far above any expected run: a run
    /// that hits it reports [`Stop::SafetyTimeLimit`], the result then
    /// depending on the machine.
    pub safety_seconds: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            nodes: 10_000,
            iterations: 12,
            scale: 256,
            min_saving: 0.05,
            safety_seconds: 600,
        }
    }
}

/// Why saturation stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// No rule adds anything: every equal form the rules reach is known.
    Saturated,
    IterationLimit,
    NodeLimit,
    /// The wall-clock safety net (never expected).
    SafetyTimeLimit,
    Other(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Saturated => write!(f, "saturated"),
            Stop::IterationLimit => write!(f, "iteration limit"),
            Stop::NodeLimit => write!(f, "node limit"),
            Stop::SafetyTimeLimit => write!(f, "safety time limit"),
            Stop::Other(why) => write!(f, "{why}"),
        }
    }
}

/// What one optimisation did.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The program's cost at the scaled sizes, before and after (a kept
    /// loop's body counted once per trip, as `synth::cost` counts).
    pub cost_before: f64,
    pub cost_after: f64,
    /// The e-graph's size when saturation stopped.
    pub nodes: usize,
    pub classes: usize,
    pub iterations: usize,
    pub stop: Stop,
    /// New unions per rule name, over all iterations.
    pub applications: BTreeMap<String, usize>,
    /// Statements with an expression, and how many of them changed.
    pub statements: usize,
    pub rewritten: usize,
    /// Expressions that now read a value another statement stores instead
    /// of computing it again ([`share`]).
    pub shared: usize,
    /// Statements whose extraction failed (they keep their expression).
    pub extraction_failures: usize,
    /// Wall-clock seconds in all and saturating, for reports only
    /// (nothing depends on them).
    pub seconds: f64,
    pub saturation_seconds: f64,
}

/// Why a program could not be optimised.
#[derive(Debug, Error)]
pub enum EqsatError {
    #[error("a rewrite rule is malformed: {0}")]
    BadRule(String),
    #[error("a rule produced an ill-typed e-graph: {0}")]
    TypeConflict(String),
    #[error("the optimised program is invalid: {0}")]
    Invalid(#[from] ProgramError),
}

/// Every rule as an egg rewrite, built once.
fn rewrites() -> Result<&'static [Rewrite<TensLang, Types>], EqsatError> {
    static REWRITES: OnceLock<Result<Vec<Rewrite<TensLang, Types>>, String>> = OnceLock::new();
    REWRITES
        .get_or_init(|| rules::RULES.iter().map(Rule::rewrite).collect())
        .as_deref()
        .map_err(|e| EqsatError::BadRule(e.clone()))
}

/// `sizes` with every value multiplied by `scale`.
fn scaled(sizes: &Sizes, scale: i64) -> Sizes {
    sizes
        .iter()
        .map(|(name, &v)| (name.clone(), v.saturating_mul(scale)))
        .collect()
}

/// Each statement's expression in pre-order, with the sizes it is priced
/// at: a kept loop's variable at the middle of its range (as
/// `synth::cost::program_sum` prices it); `None` inside a loop whose
/// bounds do not evaluate or that never runs.
fn collect<'p>(body: &'p [Stmt], sizes: Option<&Sizes>, out: &mut Vec<(&'p Expr, Option<Sizes>)>) {
    for stmt in body {
        match stmt {
            Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => {
                out.push((value, sizes.cloned()));
            }
            // A local's declaration has no expression; reads of it are
            // leaves like a parameter's (`map_values` skips it too).
            Stmt::Var { .. } => {}
            Stmt::Loop {
                var,
                start,
                stop,
                body,
            } => {
                let inner = sizes.and_then(|s| {
                    let lookup = |name: &str| s.get(name).copied();
                    let (lo, hi) = (start.eval(&lookup).ok()?, stop.eval(&lookup).ok()?);
                    let mut inner = s.clone();
                    inner.insert(var.to_string(), lo + (hi - lo) / 2);
                    (hi > lo).then_some(inner)
                });
                collect(body, inner.as_ref(), out);
            }
        }
    }
}

/// `body` with each statement's expression taken from `next` in pre-order.
fn replace(body: &[Stmt], next: &mut impl Iterator<Item = Expr>) -> Vec<Stmt> {
    map_values(body, &mut |old| next.next().unwrap_or_else(|| old.clone()))
}

fn stop_of(reason: Option<&StopReason>) -> Stop {
    match reason {
        Some(StopReason::Saturated) => Stop::Saturated,
        Some(StopReason::IterationLimit(_)) => Stop::IterationLimit,
        Some(StopReason::NodeLimit(_)) => Stop::NodeLimit,
        Some(StopReason::TimeLimit(_)) => Stop::SafetyTimeLimit,
        Some(StopReason::Other(why)) => Stop::Other(why.clone()),
        None => Stop::Other("not run".to_string()),
    }
}

/// A saturated e-graph, with each statement's class (`None` for the
/// statements that are not priced, see [`collect`]).
struct Saturated {
    runner: Runner<TensLang, Types>,
    roots: Vec<Option<Id>>,
}

/// Saturates the program's expressions under `limits`.
fn saturate(roots: &[(&Expr, Option<Sizes>)], limits: &Limits) -> Result<Saturated, EqsatError> {
    let mut egraph = lang::EGraph::new(Types::default());
    let mut memo = HashMap::new();
    let ids: Vec<Option<Id>> = roots
        .iter()
        .map(|(e, s)| s.as_ref().map(|_| add_expr(&mut egraph, e, &mut memo)))
        .collect();
    let runner = Runner::default()
        .with_egraph(egraph)
        .with_node_limit(limits.nodes)
        .with_iter_limit(limits.iterations)
        .with_time_limit(Duration::from_secs(limits.safety_seconds))
        .run(rewrites()?);
    if let Some(conflict) = runner.egraph.analysis.conflicts.first() {
        return Err(EqsatError::TypeConflict(conflict.clone()));
    }
    Ok(Saturated { runner, roots: ids })
}

/// The cheapest program equal to `program` that the rules reach, priced by
/// `model` at `sizes` × [`Limits::scale`], and what was done.
pub fn optimize_program(
    program: &Program,
    model: &CostModel,
    sizes: &Sizes,
    limits: &Limits,
) -> Result<(Program, Report), EqsatError> {
    let start = Instant::now();
    let at = scaled(sizes, limits.scale);
    let mut roots = Vec::new();
    collect(&program.body, Some(&at), &mut roots);
    let Saturated {
        mut runner,
        roots: ids,
    } = saturate(&roots, limits)?;
    let saturation_seconds = start.elapsed().as_secs_f64();
    let (mut rewritten, mut failures) = (0, 0);
    let mut chosen = Vec::with_capacity(roots.len());
    for ((expr, sizes), id) in roots.iter().zip(&ids) {
        let (Some(sizes), Some(id)) = (sizes, id) else {
            chosen.push((*expr).clone());
            continue;
        };
        let before = model.cost_of(&[expr], sizes);
        match extract::extract(&runner.egraph, *id, model, sizes) {
            Ok(e) if model.cost_of(&[&e], sizes) < before * (1.0 - limits.min_saving.max(1e-9)) => {
                rewritten += 1;
                chosen.push(e);
            }
            Ok(_) => chosen.push((*expr).clone()),
            Err(_) => {
                failures += 1;
                chosen.push((*expr).clone());
            }
        }
    }
    let mut optimized = program.clone();
    optimized.body = replace(&program.body, &mut chosen.into_iter());
    optimized.validate()?;
    let (body, shared) = share::share_stored(&optimized, &mut runner.egraph);
    // A program the pass left invalid (it should not) keeps its stores as they were.
    let sharing = (shared > 0).then(|| Program {
        body,
        ..optimized.clone()
    });
    let shared = match sharing {
        Some(p) if p.validate().is_ok() => {
            optimized = p;
            shared
        }
        _ => 0,
    };
    let price = |e: &Expr, s: &Sizes| model.cost_of(&[e], s);
    let mut applications = BTreeMap::new();
    for it in &runner.iterations {
        for (name, n) in &it.applied {
            *applications.entry(name.to_string()).or_insert(0) += n;
        }
    }
    let report = Report {
        cost_before: program_sum(program, &at, &price),
        cost_after: program_sum(&optimized, &at, &price),
        nodes: runner.egraph.total_number_of_nodes(),
        classes: runner.egraph.number_of_classes(),
        iterations: runner.iterations.len(),
        stop: stop_of(runner.stop_reason.as_ref()),
        applications,
        statements: roots.len(),
        rewritten,
        shared,
        extraction_failures: failures,
        seconds: start.elapsed().as_secs_f64(),
        saturation_seconds,
    };
    Ok((optimized, report))
}
