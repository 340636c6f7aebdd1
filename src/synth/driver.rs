//! The driver: tries the registry's kernel tactics in order until one
//! gives a program (or decides the kernel), and keeps the trace of what
//! each did.

use std::time::Instant;

use tenslift_frontend::ir::Kernel;
use tenslift_targets::Program;

use super::options::{Lifted, PartialError, PartialLift, SynthError, SynthOptions};
use super::registry::{KERNEL_TACTICS, OUTPUT_TACTICS, SKETCH_FAMILIES};
use super::tactic::{KernelContext, KernelResult};
use super::trace::{Stop, TacticRun, Trace};

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
    outcome
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
