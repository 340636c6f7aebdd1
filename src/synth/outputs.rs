//! The `per-output` kernel tactic: the spec's outputs are solved one at a
//! time, each by the output tactics in registry order; later outputs may
//! read the arrays earlier ones wrote, and an output that reads another's
//! result waits for a later pass. The assembled program is accepted only
//! when it equals the C spec at every acceptance size tuple
//! ([`check_program_at_both_sizes`]); a rejected output's expression is
//! banned and the outputs are solved again, a bounded number of times.

use std::sync::Arc;

use tenslift_frontend::ir::{self as loop_ir, Kernel};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{Expr, Param, Program, Stmt};

use super::convert::{self, Peeled};
use super::fold;
use super::library::Evaluator;
use super::options::{Lifted, SynthError};
use super::partial::carries_dependency;
use super::problem::{Goal, Memory, Pass, Problem};
use super::search::{with_tie_slack, Stats, Timings};
use super::signature::{self, rebase_onto_regions};
use super::tactic::{Candidate, KernelContext, KernelResult, KernelTactic};
use super::trace::{OutputTrace, Stop, TacticRun, Trace, PER_OUTPUT};
use crate::spec::tensir::{check_program_at_both_sizes, Comparison};
use crate::spec::Output;

/// The `per-output` kernel tactic; see the module documentation.
pub struct PerOutput;

impl KernelTactic for PerOutput {
    fn name(&self) -> &'static str {
        PER_OUTPUT
    }

    fn summary(&self) -> &'static str {
        "solves the spec's outputs one at a time with the output tactics, then accepts the whole program at every size tuple or retries"
    }

    fn applies(&self, _: &Kernel) -> Result<(), String> {
        Ok(())
    }

    fn run(&self, kernel: &Kernel, context: &KernelContext<'_>, trace: &mut Trace) -> KernelResult {
        KernelResult::Whole(lift_outputs(kernel, context, trace))
    }
}

/// Counters of the whole lift, across passes and retries.
#[derive(Default)]
struct Tally {
    stats: Stats,
    timings: Timings,
}

/// The fraction of the search's work limit the outputs get when the
/// kernel's top-level loop carries a dependency (a time loop, a solver's
/// row loop): a loop-free form is rare there (trmm's row loop is one, found
/// within a twentieth of the limit), and `kept-loops` usually lifts it, so
/// a whole search that cannot succeed must not cost four times more than
/// the lift that does (fdtd-2d's outputs exhausted 450 000 units).
const CARRIED_AT_TOP_SHARE: f64 = 0.25;

/// Solves every output, accepts the program or retries.
fn lift_outputs(kernel: &Kernel, context: &KernelContext<'_>, trace: &mut Trace) -> Lifted {
    let carried_at_top = kernel
        .body
        .iter()
        .any(|s| matches!(s, loop_ir::Stmt::Loop(l) if carries_dependency(l, &[])));
    let mut shared = context.options.clone();
    if carried_at_top {
        shared.limits.search_work =
            (shared.limits.search_work as f64 * CARRIED_AT_TOP_SHARE).round() as u64;
    }
    let options = &shared;
    let problem = match Problem::new(kernel, options, context.families, context.deadline) {
        Ok(problem) => problem,
        Err(e) => return Lifted::failed(e, 0),
    };
    let outputs = problem.spec.outputs.len();
    let mut memory = Memory::default();
    let mut tally = Tally::default();
    let mut retries_left = options.limits.generalisation_retries;
    let mut passes = 0;
    let result = loop {
        let round = solve_round(
            &problem,
            &mut memory,
            context,
            trace,
            &mut tally,
            &mut passes,
        );
        match round.and_then(|pass| accept(&problem, pass)) {
            Ok(Accepted::Program(program, cost, solved)) => break Ok((program, cost, solved)),
            Ok(Accepted::Rejected(rejection, culprit, solved)) => {
                trace.rejected.push(rejection.to_string());
                match culprit {
                    Some((name, expr)) if retries_left > 0 => {
                        retries_left -= 1;
                        ban(&mut memory, name, expr);
                    }
                    _ => break Err(Box::new((rejection, solved))),
                }
            }
            Err(failure) => break Err(failure),
        }
    };
    let mut lifted = match result {
        Ok((program, cost, solved)) => {
            let mut lifted = Lifted::whole(program, cost, outputs);
            lifted.solved = solved;
            lifted
        }
        Err(failure) => {
            let (error, solved) = *failure;
            let mut lifted = Lifted::failed(error, outputs);
            lifted.solved = solved;
            lifted
        }
    };
    lifted.stats = tally.stats;
    lifted.timings = tally.timings;
    lifted
}

/// Bans a rejected output's expression for the next round. A size read as
/// a constant (`cast(m)` where m = 4 at the first sizes standing for the
/// literal 4) comes back in many spellings; dropping the size leaves it
/// read makes the next library build the constant.
fn ban(memory: &mut Memory, name: String, expr: Expr) {
    memory
        .fitted_sizes
        .entry(name.clone())
        .or_default()
        .extend(size_casts(&expr));
    memory.banned.entry(name).or_default().push(expr);
}

/// A failed round: why, and how many outputs it had solved (boxed: the
/// error is large and the `Ok` path is the common one).
type Failure = Box<(SynthError, usize)>;

/// One round: passes over the outputs until each is solved, or a pass
/// solves none. The error carries how many outputs were solved.
fn solve_round(
    problem: &Problem<'_>,
    memory: &mut Memory,
    context: &KernelContext<'_>,
    trace: &mut Trace,
    tally: &mut Tally,
    passes: &mut u32,
) -> Result<Pass, Failure> {
    let mut pass = Pass::default();
    let mut pending: Vec<&Output> = problem.ordered_outputs();
    while !pending.is_empty() {
        *passes += 1;
        pass.number = *passes;
        let mut still = Vec::new();
        let solved_before = pass.solved;
        for out_spec in pending {
            let peeled = convert::peel_store_conversion(problem.kernel, out_spec);
            let out = peeled.as_ref().map_or(out_spec, |p| &p.output);
            let (candidate, runs) = solve_output(
                problem,
                memory,
                &pass,
                out,
                peeled.is_some(),
                context,
                tally,
            )
            .map_err(|e| (e, pass.solved))?;
            trace.outputs.push(OutputTrace {
                output: out.name.to_string(),
                pass: pass.number,
                runs,
            });
            match candidate {
                Some(c) => pass.record(problem, out, peeled.as_ref(), c),
                None => {
                    memory
                        .failed_with
                        .insert(out.name.to_string(), pass.written.len());
                    still.push(out_spec);
                }
            }
        }
        if let Some(first) = still.first().filter(|_| pass.solved == solved_before) {
            let output = first.name.to_string();
            let tried = trace.unsolved_summary(&output).unwrap_or_default();
            return Err(Box::new((
                SynthError::NotFound { output, tried },
                pass.solved,
            )));
        }
        pending = still;
    }
    Ok(pass)
}

/// One output: the output tactics in order, each looking below the best
/// program so far; a conclusive tactic's program (or in first mode any
/// program) settles it. Returns the best program and the trace records.
fn solve_output(
    problem: &Problem<'_>,
    memory: &Memory,
    pass: &Pass,
    output: &Output,
    peeled: bool,
    context: &KernelContext<'_>,
    tally: &mut Tally,
) -> Result<(Option<Candidate>, Vec<TacticRun>), SynthError> {
    let goal = Goal {
        problem,
        pass,
        memory,
        output,
        peeled,
        dtype: signature::dtype_of(output.elem),
        region: problem.regions.get(&output.name).cloned(),
    };
    let mut evaluator = Evaluator::new(
        problem.sizes.clone(),
        problem.params.clone(),
        pass.body.clone(),
    );
    let mut best: Option<Candidate> = None;
    let mut settled = false;
    let mut runs = Vec::new();
    for tactic in context.output_tactics {
        if settled {
            runs.push(TacticRun::without_work(tactic.name(), Stop::NotTried));
            continue;
        }
        if let Err(why) = tactic.applies(&goal) {
            runs.push(TacticRun::without_work(
                tactic.name(),
                Stop::NotApplicable { why },
            ));
            continue;
        }
        let attempt = tactic.run(&goal, best.as_ref().map(|c| &c.found), &mut evaluator)?;
        tally.stats.absorb(&attempt.stats);
        tally.timings.library_s += attempt.timings.library_s;
        tally.timings.search_s += attempt.timings.search_s;
        runs.push(attempt.run(tactic.name()));
        if let Some(candidate) = attempt.found {
            settled = problem.options.first || tactic.conclusive();
            best = Some(preferred(best, candidate));
        }
    }
    Ok((best, runs))
}

/// The later candidate when it costs no more than the earlier one (up to
/// rounding): later tactics are the more structured ones, and the
/// search's programs are the ones best mode has always produced.
fn preferred(earlier: Option<Candidate>, later: Candidate) -> Candidate {
    match earlier {
        Some(e) if later.found.cost > with_tie_slack(e.found.cost) => e,
        _ => later,
    }
}

impl Pass {
    /// Adds a solved output to the program: literal arithmetic folded
    /// exactly, converted back when solved through its store's conversion,
    /// and stored (or returned). Cheaper equal forms are found once the
    /// whole program is accepted (`crate::eqsat`).
    fn record(
        &mut self,
        problem: &Problem<'_>,
        output: &Output,
        peeled: Option<&Peeled>,
        candidate: Candidate,
    ) {
        let (model, sizes) = (&problem.options.model, &problem.sizes);
        let Candidate { mut found, region } = candidate;
        // The search's own expression is what a retry bans (it would find
        // it again otherwise).
        self.chosen
            .insert(output.name.to_string(), found.expr.clone());
        let folded = fold::fold_constants(&found.expr);
        if folded != found.expr {
            let before = model.cost_of(&[&found.expr], sizes);
            let after = model.cost_of(&[&folded], sizes);
            found.cost -= (before - after).max(0.0);
            found.expr = folded;
        }
        if let Some(p) = peeled {
            let before = model.cost_of(&[&found.expr], sizes);
            found.expr = convert::convert_back(p, found.expr);
            found.cost += model.cost_of(&[&found.expr], sizes) - before;
        }
        self.cost += found.cost;
        self.solved += 1;
        if *output.name == *"return" {
            self.returned = Some(found.expr);
            return;
        }
        let value = broadcast_to_store(&problem.params, &output.name, &region, found.expr);
        self.body.push(Stmt::Store {
            target: Arc::from(&*output.name),
            region,
            value,
        });
        self.written.push(output.name.to_string());
    }
}

/// What the acceptance check said of a round's program.
enum Accepted {
    /// Equal at every size tuple: the program, its cost, outputs solved.
    Program(Program, f64, usize),
    /// Rejected: why, the differing output's search expression, outputs
    /// solved.
    Rejected(SynthError, Option<(String, Expr)>, usize),
}

/// Assembles the round's program on the declared arrays and checks it
/// against the C spec at every acceptance size tuple.
fn accept(problem: &Problem<'_>, mut pass: Pass) -> Result<Accepted, Failure> {
    let kernel = problem.kernel;
    let solved = pass.solved;
    let fail = |e: SynthError| Box::new((e, solved));
    let ret = pass.returned.as_ref().map(|e| e.dtype());
    if let Some(e) = pass.returned.take() {
        pass.body.push(Stmt::Return(e));
    }
    let program = Program {
        meta: signature::program_meta(kernel).map_err(fail)?,
        name: Arc::from(kernel.name.as_str()),
        params: problem.declared_params.clone(),
        ret,
        body: rebase_onto_regions(&pass.body, &problem.regions).map_err(fail)?,
    };
    if let Err(e) = program.validate() {
        // A store of the wrong type is that output's fault: a size spelled
        // by the wrong name (a 3x3 window as `width` where width = 3)
        // gives a shape right at the first sizes only. Banned, another
        // spelling comes next.
        let rejection = SynthError::Rejected(e.to_string());
        let culprit = mistyped_store(problem, &pass)
            .and_then(|name| pass.chosen.remove(&name).map(|e| (name, e)));
        return match culprit {
            Some(c) => Ok(Accepted::Rejected(rejection, Some(c), solved)),
            None => Err(fail(rejection)),
        };
    }
    let (other, sizes) =
        check_program_at_both_sizes(&program, kernel).map_err(|e| fail(e.into()))?;
    if other.is_equal() {
        return Ok(Accepted::Program(program, pass.cost, solved));
    }
    let rejection =
        SynthError::Rejected(format!("at {}: {other}", crate::spec::format_sizes(&sizes)));
    let culprit = differing_output(&other)
        .and_then(|name| pass.chosen.remove(name).map(|e| (name.to_string(), e)));
    Ok(Accepted::Rejected(rejection, culprit, solved))
}

/// The first output the pass stores a value into whose shape is not its
/// target's (the whole array, or its region).
fn mistyped_store(problem: &Problem<'_>, pass: &Pass) -> Option<String> {
    pass.body.iter().find_map(|s| {
        let Stmt::Store {
            target,
            region,
            value,
        } = s
        else {
            return None;
        };
        let param = problem.params.iter().find(|p| p.name == *target)?;
        let shape = param.ty().shape;
        let wanted = match region {
            None => shape,
            Some(items) => tenslift_targets::expr::slice_shape(&shape, items).ok()?,
        };
        (value.shape() != wanted.as_slice()).then(|| target.to_string())
    })
}

/// The output a failed comparison names, when it names one.
fn differing_output(comparison: &Comparison) -> Option<&str> {
    match comparison {
        Comparison::Differs { output, .. } | Comparison::ShapeMismatch { output, .. } => {
            Some(output)
        }
        _ => None,
    }
}

/// `expr` broadcast to the shape of the store's target when it is a
/// uniform value of lower rank (`x = 0` fills an array); TensIR stores need
/// exactly the target's type.
fn broadcast_to_store(
    params: &[Param],
    name: &str,
    region: &Option<Vec<SliceItem>>,
    expr: Expr,
) -> Expr {
    let Some(param) = params.iter().find(|p| &*p.name == name) else {
        return expr;
    };
    let ty = param.ty();
    let shape = match region {
        None => Some(ty.shape.clone()),
        Some(items) => tenslift_targets::expr::slice_shape(&ty.shape, items).ok(),
    };
    match shape {
        Some(shape) if shape.as_slice() != expr.shape() => {
            tenslift_targets::build::broadcast(expr.clone(), shape).unwrap_or(expr)
        }
        _ => expr,
    }
}

/// The casts of size parameters to element types inside `expr`.
fn size_casts(expr: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    expr.walk(&mut |node| {
        if let tenslift_targets::Op::Cast(_) = node.op() {
            // Scalar integer variables cast to an element type are sizes
            // (the only such leaves); narrow arrays widened to i32 are not.
            let reads_size = node.args().first().is_some_and(|a| {
                matches!(a.op(), tenslift_targets::Op::Var(_))
                    && a.shape().is_empty()
                    && a.dtype().is_int()
            });
            if reads_size && !out.contains(node) {
                out.push(node.clone());
            }
        }
    });
    out
}
