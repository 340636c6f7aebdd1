//! The driver: tries the registry's kernel tactics in order until one
//! gives a program (or decides the kernel), and keeps the trace of what
//! each did.

use std::time::Instant;

use tenslift_frontend::ir::Kernel;
use tenslift_targets::Program;

use super::options::{Lifted, PartialError, PartialLift, SynthError, SynthOptions};
use super::registry::{KERNEL_TACTICS, OUTPUT_TACTICS, SKETCH_FAMILIES};
use super::tactic::{KernelContext, KernelResult};
use super::trace::{RewriteRecord, Stop, TacticRun, Trace};
use crate::spec::tensir::check_program_at_both_sizes;

/// What lifting one kernel gave: the whole-kernel attempt (when made), the
/// lift with loops kept (when the whole one failed and loops carry
/// dependencies), and the trace of every tactic.
#[derive(Debug)]
pub struct Outcome {
    pub whole: Option<Lifted>,
    pub partial: Result<PartialLift, PartialError>,
    pub trace: Trace,
}

impl Outcome {
    /// The program found, whole or with loops kept.
    pub fn program(&self) -> Option<&Program> {
        match (&self.whole, &self.partial) {
            (Some(w), _) if w.program.is_some() => w.program.as_ref(),
            (_, Ok(p)) => Some(&p.program),
            _ => None,
        }
    }

    /// Why partial lifting failed, when it was tried and failed (not when
    /// no loop carried a dependency, or the whole kernel lifted first).
    pub fn partial_failure(&self) -> Option<String> {
        match &self.partial {
            Err(PartialError::NotTried) => None,
            Err(e) => Some(e.to_string()),
            Ok(_) => None,
        }
    }

    /// The whole-kernel error, when neither attempt produced a program.
    pub fn error(&self) -> Option<&SynthError> {
        match (&self.whole, &self.partial) {
            (_, Ok(_)) => None,
            (Some(w), Err(_)) => w.error.as_ref(),
            (None, Err(_)) => None,
        }
    }
}

/// Lifts `kernel`: the registry's kernel tactics in order (a histogram, a
/// solver, the outputs one by one, the loops that carry dependencies
/// kept), until one gives a program or decides the kernel.
pub fn lift_kernel(kernel: &Kernel, options: &SynthOptions) -> Outcome {
    let context = KernelContext {
        options,
        deadline: Instant::now() + options.timeout,
        output_tactics: OUTPUT_TACTICS,
        families: SKETCH_FAMILIES,
    };
    let mut outcome = Outcome {
        whole: None,
        partial: Err(PartialError::NotTried),
        trace: Trace::default(),
    };
    let mut settled = false;
    for tactic in KERNEL_TACTICS {
        if settled {
            let run = TacticRun::without_work(tactic.name(), Stop::NotTried);
            outcome.trace.kernel.push(run);
            continue;
        }
        if let Err(why) = tactic.applies(kernel) {
            let run = TacticRun::without_work(tactic.name(), Stop::NotApplicable { why });
            outcome.trace.kernel.push(run);
            continue;
        }
        let result = tactic.run(kernel, &context, &mut outcome.trace);
        let (stop, found, work) = record(&mut outcome, result);
        let mut run = TacticRun::without_work(tactic.name(), stop);
        run.work = work;
        outcome.trace.kernel.push(run);
        settled = found || tactic.decides() || timed_out(&outcome);
    }
    rewrite(kernel, options, &mut outcome);
    attach_guards(kernel, &mut outcome);
    outcome
}

/// The kernel's leading guards stated on the programs found: a program
/// computes the kernel past its guards, and they run first.
fn attach_guards(kernel: &Kernel, outcome: &mut Outcome) {
    if kernel.guards.is_empty() {
        return;
    }
    let guards: Vec<_> = kernel
        .guards
        .iter()
        .map(super::guard::program_guard)
        .collect();
    if let Some(w) = outcome.whole.as_mut().and_then(|w| w.program.as_mut()) {
        w.meta.guards = guards.clone();
    }
    if let Ok(p) = outcome.partial.as_mut() {
        p.program.meta.guards = guards;
    }
}

/// Equality saturation over the accepted program (`crate::eqsat`): the
/// cheapest equal form the rules reach replaces the program when it passes
/// the same acceptance check as every candidate.
fn rewrite(kernel: &Kernel, options: &SynthOptions, outcome: &mut Outcome) {
    let Some(program) = outcome.program() else {
        return;
    };
    let Ok(sizes) = crate::spec::choose_sizes(kernel, &crate::spec::Sizes::new()) else {
        return;
    };
    let limits = crate::eqsat::Limits::default();
    let (candidate, report) =
        match crate::eqsat::optimize_program(program, &options.model, &sizes, &limits) {
            Ok(done) => done,
            Err(e) => {
                let record = RewriteRecord {
                    outcome: format!("not applied: {e}"),
                    ..RewriteRecord::default()
                };
                outcome.trace.rewrites = Some(record);
                return;
            }
        };
    let verdict = if report.rewritten == 0 && report.shared == 0 {
        "no cheaper form".to_string()
    } else {
        match check_program_at_both_sizes(&candidate, kernel) {
            Ok((c, _)) if c.is_equal() => "kept".to_string(),
            Ok((c, sizes)) => format!(
                "dropped: differs at {}: {c}",
                crate::spec::format_sizes(&sizes)
            ),
            Err(e) => format!("dropped: {e}"),
        }
    };
    if verdict == "kept" {
        replace_program(
            outcome,
            candidate,
            report.cost_after / report.cost_before.max(f64::MIN_POSITIVE),
        );
    }
    outcome.trace.rewrites = Some(RewriteRecord {
        cost_before: report.cost_before,
        cost_after: report.cost_after,
        nodes: report.nodes,
        classes: report.classes,
        iterations: report.iterations,
        stop: report.stop.to_string(),
        statements_rewritten: report.rewritten,
        values_shared: report.shared,
        applications: report.applications,
        outcome: verdict,
    });
}

/// Puts the rewritten program in place of the accepted one, its cost
/// scaled by the rewrite's ratio.
fn replace_program(outcome: &mut Outcome, program: Program, ratio: f64) {
    match (&mut outcome.whole, &mut outcome.partial) {
        (Some(w), _) if w.program.is_some() => {
            w.complexity = crate::cost::complexity_degree(&program);
            w.program = Some(program);
            w.cost *= ratio;
        }
        (_, Ok(p)) => {
            p.program = program;
            p.cost *= ratio;
        }
        _ => {}
    }
}

/// Stores a kernel tactic's result in the outcome; returns how it stopped,
/// whether it gave a program and the work it reports.
fn record(outcome: &mut Outcome, result: KernelResult) -> (Stop, bool, u64) {
    match result {
        KernelResult::Whole(lifted) => {
            let stop = match (&lifted.program, &lifted.error) {
                (Some(_), _) => Stop::Found { cost: lifted.cost },
                (None, Some(e)) if lifted.stats.budget_exhausted => budget_or(e),
                _ => Stop::Exhausted,
            };
            let found = lifted.program.is_some();
            let work = lifted.stats.work + lifted.stats.evaluations;
            outcome.whole = Some(lifted);
            (stop, found, work)
        }
        // Statements lifted one by one with no loop kept: a whole lift.
        KernelResult::Kept(Ok(p)) if p.kept_loops.is_empty() => {
            let outputs = outcome.whole.as_ref().map_or(0, |w| w.outputs);
            let stop = Stop::Found { cost: p.cost };
            let work = p.stats.work + p.stats.evaluations;
            outcome.whole = Some(Lifted {
                complexity: crate::cost::complexity_degree(&p.program),
                program: Some(p.program),
                cost: p.cost,
                stats: p.stats,
                timings: p.timings,
                error: None,
                solved: outputs,
                outputs,
            });
            (stop, true, work)
        }
        KernelResult::Kept(kept) => {
            let (stop, work) = match &kept {
                Ok(p) => (
                    Stop::Found { cost: p.cost },
                    p.stats.work + p.stats.evaluations,
                ),
                Err(_) => (Stop::Exhausted, 0),
            };
            let found = kept.is_ok();
            outcome.partial = kept;
            (stop, found, work)
        }
        KernelResult::Nothing => (Stop::Exhausted, false, 0),
    }
}

/// A whole-kernel failure on which a work limit hit: `Budget`, unless the
/// failure was a rejection (the limit did not decide it).
fn budget_or(error: &SynthError) -> Stop {
    match error {
        SynthError::NotFound { .. } => Stop::Budget,
        _ => Stop::Exhausted,
    }
}

/// Whether the user's deadline stopped the last tactic: nothing after it
/// may run.
fn timed_out(outcome: &Outcome) -> bool {
    let whole = outcome
        .whole
        .as_ref()
        .is_some_and(|w| matches!(w.error, Some(SynthError::Timeout(_))));
    let kept = matches!(&outcome.partial, Err(PartialError::Synth(e)) if matches!(**e, SynthError::Timeout(_)));
    whole || kept
}
