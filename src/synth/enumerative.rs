//! The `enumerative` output tactic: TENSORIZE's search proper. A library
//! of typed stubs of depth ≤ 2 is enumerated over the output's leaves
//! ([`library`](super::library)), then the top-down search
//! ([`search`](super::search)) solves the output's value through each of
//! its store regions, below the cost of the best program the earlier
//! tactics found. For an output that failed before, with nothing stored
//! since, the library also holds the stored arrays' moments
//! ([`moments::leaves`](super::moments::leaves)) and the search gets the
//! smaller moment budget, so that it cannot hold up the kept-loops
//! fallback.

use std::time::Instant;

use tenslift_targets::{Expr, Op};

use super::budget::{Halt, Meter};
use super::cost::CostModel;
use super::library::{leaves, Evaluator, Library};
use super::moments;
use super::options::SynthError;
use super::problem::{region_target, Goal};
use super::search::{with_tie_slack, Counters, Found, Reductions, Search, Stats, Timings};
use super::sketch::region::triangle_leaves;
use super::tactic::{Attempt, Candidate, OutputTactic};
use super::trace::Stop;
use crate::algebra::Tensor;
use crate::spec::tensir::canonical_extrema;

/// The `enumerative` output tactic; see the module documentation.
pub struct Enumerative;

impl OutputTactic for Enumerative {
    fn name(&self) -> &'static str {
        "enumerative"
    }

    fn summary(&self) -> &'static str {
        "a library of depth-2 stubs and the top-down search over the sketch families below"
    }

    fn applies(&self, _: &Goal<'_>) -> Result<(), String> {
        Ok(())
    }

    fn run(
        &self,
        goal: &Goal<'_>,
        best: Option<&Found>,
        evaluator: &mut Evaluator,
    ) -> Result<Attempt, SynthError> {
        let moments = moment_leaves(goal);
        enumerate(goal, &goal.output.value, evaluator, best, &moments)
    }
}

/// The `after-stores` output tactic: the enumerative search on what the
/// output must be computed from the arrays already stored
/// ([`Problem::spec_after_stores`](super::problem::Problem::spec_after_stores)),
/// those arrays read as they are after their stores. Its targets are
/// small where the whole kernel's spec repeats the stored values.
pub struct AfterStores;

impl OutputTactic for AfterStores {
    fn name(&self) -> &'static str {
        "after-stores"
    }

    fn summary(&self) -> &'static str {
        "the enumerative search on the output's spec after the stored arrays' last writes, those arrays as inputs (gemver's w = w + alpha * A @ x)"
    }

    fn conclusive(&self) -> bool {
        true
    }

    fn applies(&self, goal: &Goal<'_>) -> Result<(), String> {
        if goal.pass.written.is_empty() {
            Err("nothing is stored yet".into())
        } else if goal.peeled {
            Err("an output solved through its store's conversion".into())
        } else {
            Ok(())
        }
    }

    fn run(
        &self,
        goal: &Goal<'_>,
        best: Option<&Found>,
        _: &mut Evaluator,
    ) -> Result<Attempt, SynthError> {
        let problem = goal.problem;
        let spec = problem.spec_after_stores(goal.pass, goal.name());
        let Some(output) = spec.as_ref().and_then(|s| s.output(goal.name())) else {
            let why = "the statements before the output write more than the stored arrays";
            return Ok(stopped(
                Stats::default(),
                Stop::NotApplicable { why: why.into() },
            ));
        };
        // The stored arrays are inputs here: no prefix to evaluate.
        let mut evaluator = Evaluator::new(problem.sizes.clone(), problem.params.clone(), vec![]);
        enumerate(goal, &output.value, &mut evaluator, best, &[])
    }
}

/// A library over the goal's leaves (and `moments`), then the search for
/// `value` through each store region below `best`'s cost.
fn enumerate(
    goal: &Goal<'_>,
    value: &Tensor,
    evaluator: &mut Evaluator,
    best: Option<&Found>,
    moments: &[Expr],
) -> Result<Attempt, SynthError> {
    let problem = goal.problem;
    let started = Instant::now();
    let library_meter = Meter::new(problem.options.limits.library_evaluations, problem.deadline);
    let library = Library::build(
        evaluator,
        library_leaves(goal, value, moments),
        &problem.sizes,
        &library_meter,
        problem.options.library_limit,
        value,
    );
    let mut stats = Stats {
        evaluations: library_meter.used(),
        library_truncated: library_meter.exhausted(),
        ..Stats::default()
    };
    let mut library = match library {
        Ok(library) => library,
        Err(Halt::Deadline) => return Err(timeout(problem.deadline, problem.options)),
        Err(Halt::Budget) => return Ok(stopped(stats, Stop::Budget)),
    };
    reprice(&mut library, &problem.options.model, &problem.sizes);
    stats.stubs = library.stubs.len();
    let library_s = started.elapsed().as_secs_f64();
    let bound = best.map_or(f64::INFINITY, |f| with_tie_slack(f.cost));
    let capped = !moments.is_empty();
    let searched = search_regions(goal, value, &library, bound, capped, &mut stats)?;
    let mut attempt = Attempt::of(searched.found);
    attempt.stop = searched.stop;
    attempt.work = stats.work + stats.evaluations;
    attempt.candidates = stats.stubs as u64;
    attempt.timings = Timings {
        library_s,
        search_s: started.elapsed().as_secs_f64() - library_s,
    };
    attempt.stats = stats;
    Ok(attempt)
}

/// The timeout error for a lift whose user deadline passed.
fn timeout(deadline: Instant, options: &super::options::SynthOptions) -> SynthError {
    let started = deadline.checked_sub(options.timeout).unwrap_or(deadline);
    SynthError::Timeout(started.elapsed().as_secs_f64())
}

/// An attempt that found nothing, with its counters.
fn stopped(stats: Stats, stop: Stop) -> Attempt {
    let mut attempt = Attempt::of(None);
    attempt.stop = stop;
    attempt.work = stats.evaluations;
    attempt.stats = stats;
    attempt
}

/// The moments of the stored arrays, for an output that failed with the
/// same arrays stored as now.
fn moment_leaves(goal: &Goal<'_>) -> Vec<Expr> {
    if goal.retried() == Some(goal.pass.written.len()) {
        moments::leaves(&goal.problem.params, &goal.pass.written)
    } else {
        Vec::new()
    }
}

/// The library's leaves: every readable view, scalar and constant (beside
/// moment leaves, scalars only: the plain library already failed this
/// output), less the size casts a rejected program fitted and the extent
/// sizes (they only size arrays: the C never computes with them), plus the
/// triangles of square inputs read on one side of a diagonal.
fn library_leaves(goal: &Goal<'_>, value: &Tensor, moment_leaves: &[Expr]) -> Vec<Expr> {
    let problem = goal.problem;
    let fitted = goal.memory.fitted_sizes.get(goal.name());
    let views = |name: &str| problem.views(name);
    leaves(&problem.params, &views, &goal.pass.written, goal.dtype)
        .into_iter()
        .filter(|leaf| moment_leaves.is_empty() || leaf.shape().is_empty())
        .filter(|leaf| !fitted.is_some_and(|casts| casts.contains(leaf)))
        .filter(|leaf| !reads_extent_size(leaf, &problem.extent_sizes))
        .chain(triangle_leaves(&problem.params, value))
        .chain(moment_leaves.iter().cloned())
        .collect()
}

/// Whether `leaf` is an extent size (`ext_1000`) cast to an element type.
fn reads_extent_size(leaf: &Expr, extents: &[String]) -> bool {
    matches!(leaf.op(), Op::Cast(_))
        && leaf
            .args()
            .first()
            .is_some_and(|a| matches!(a.op(), Op::Var(n) if extents.iter().any(|e| **e == **n)))
}

/// The library prices stubs analytically; a calibrated model re-prices
/// them (stubs keep their slots).
fn reprice(library: &mut Library, model: &CostModel, sizes: &crate::spec::Sizes) {
    if let CostModel::Calibrated(_) = model {
        for stub in &mut library.stubs {
            stub.cost = model.cost_of(&[&stub.expr], sizes);
        }
    }
}

/// What the searches over an output's store regions gave.
struct Searched {
    found: Option<Candidate>,
    stop: Stop,
}

/// Searches the output through each store region in turn, until one has
/// a program; the work of all of them is one budget.
fn search_regions(
    goal: &Goal<'_>,
    value: &Tensor,
    library: &Library,
    bound: f64,
    capped: bool,
    stats: &mut Stats,
) -> Result<Searched, SynthError> {
    let problem = goal.problem;
    let limits = &problem.options.limits;
    let limit = if capped {
        limits.moment_search_work
    } else {
        limits.search_work
    };
    let meter = Meter::new(limit, problem.deadline);
    for region in problem.store_regions(goal.output) {
        let Some(target) = region_target(value, &region, &problem.sizes) else {
            continue;
        };
        let target = target.map(canonical_extrema);
        let reductions = Reductions::build(library, target.shape());
        let mut search = |meter: &Meter, first: bool| {
            search_once(
                goal,
                library,
                &reductions,
                meter,
                first,
                &target,
                bound,
                stats,
            )
        };
        let mut outcome = search(&meter, problem.options.first);
        // Best mode's branch and bound can spend its budget below a first
        // solution; a first-mode search with a budget of its own finds one.
        if matches!(outcome, Err(Halt::Budget)) && !problem.options.first && !capped {
            let retry = Meter::new(limits.search_work, problem.deadline);
            outcome = search(&retry, true);
        }
        match outcome {
            Ok(Some(found)) => {
                let found = Some(Candidate { found, region });
                return Ok(Searched {
                    found,
                    stop: Stop::Exhausted,
                });
            }
            Ok(None) => {}
            Err(Halt::Budget) => {
                return Ok(Searched {
                    found: None,
                    stop: Stop::Budget,
                })
            }
            Err(Halt::Deadline) => return Err(timeout(problem.deadline, problem.options)),
        }
    }
    Ok(Searched {
        found: None,
        stop: Stop::Exhausted,
    })
}

/// One top-down search of `target`, its counters added to `stats`.
#[allow(clippy::too_many_arguments)]
fn search_once(
    goal: &Goal<'_>,
    library: &Library,
    reductions: &Reductions,
    meter: &Meter,
    first: bool,
    target: &Tensor,
    bound: f64,
    stats: &mut Stats,
) -> Result<Option<Found>, Halt> {
    let problem = goal.problem;
    let before = meter.used();
    let search = Search {
        library,
        reductions,
        model: &problem.options.model,
        sizes: &problem.sizes,
        meter,
        first,
        stats: Counters::new(problem.families.iter().map(|f| f.name())),
        banned: goal.memory.banned(goal.name()),
        top_depth: problem.options.depth,
        families: problem.families,
    };
    let outcome = search.solve(target, goal.dtype, problem.options.depth, bound);
    let mut searched = search.stats.snapshot();
    searched.work = meter.used() - before;
    searched.budget_exhausted = meter.exhausted();
    stats.absorb(&searched);
    outcome
}
