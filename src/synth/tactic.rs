//! The two kinds of tactic the registry (`synth::registry`) lists, in
//! order, as egg lists its rewrites:
//!
//! * a [`KernelTactic`] decides a whole kernel from its loop IR (a
//!   histogram, a solver), or solves it output by output, or keeps loops;
//! * an [`OutputTactic`] proposes a program for one output of the spec
//!   (a direct translation, a sketch over stored arrays, the enumerative
//!   search).
//!
//! Each says when it applies and reports what it did as an [`Attempt`]
//! (found or not, why it stopped, the work it spent), which the driver
//! records in the [`Trace`](super::trace::Trace).

use std::time::Instant;

use tenslift_frontend::ir::Kernel;
use tenslift_targets::ops::SliceItem;

use super::library::Evaluator;
use super::options::{SynthError, SynthOptions};
use super::problem::Goal;
use super::search::{Found, SketchFamily, Stats, Timings};
use super::trace::{Stop, TacticRun, Trace};

/// A program for one output: the expression and the region it is stored
/// through (`None`: the whole array).
#[derive(Clone, Debug)]
pub struct Candidate {
    pub found: Found,
    pub region: Option<Vec<SliceItem>>,
}

/// What one tactic's attempt gave.
#[derive(Debug)]
pub struct Attempt {
    pub found: Option<Candidate>,
    /// Why it stopped when it found nothing (`Exhausted` or `Budget`).
    pub stop: Stop,
    pub work: u64,
    pub candidates: u64,
    pub stats: Stats,
    pub timings: Timings,
}

impl Attempt {
    /// A search that found `found` (or exhausted its candidates) without
    /// counted work.
    pub fn of(found: Option<Candidate>) -> Attempt {
        Attempt {
            found,
            stop: Stop::Exhausted,
            work: 0,
            candidates: 0,
            stats: Stats::default(),
            timings: Timings::default(),
        }
    }

    /// The trace record of this attempt by `tactic`.
    pub fn run(&self, tactic: &'static str) -> TacticRun {
        let stop = match &self.found {
            Some(c) => Stop::Found { cost: c.found.cost },
            None => self.stop.clone(),
        };
        TacticRun {
            tactic,
            stop,
            work: self.work,
            candidates: self.candidates,
            families: self.stats.families.clone(),
        }
    }
}

/// A tactic for one output.
pub trait OutputTactic: Sync {
    /// Its name in traces and ARCHITECTURE.md.
    fn name(&self) -> &'static str;
    /// One line: what it finds.
    fn summary(&self) -> &'static str;
    /// Whether a program from it settles the output: no later tactic is
    /// consulted (in best mode; first mode stops at any program).
    fn conclusive(&self) -> bool {
        false
    }
    /// `Err(why)` when it does not apply to this goal.
    fn applies(&self, goal: &Goal<'_>) -> Result<(), String>;
    /// Its program for the goal; `best` is the cheapest one found by the
    /// earlier tactics (a search looks only below it). `Err` only at the
    /// user's deadline.
    fn run(
        &self,
        goal: &Goal<'_>,
        best: Option<&Found>,
        evaluator: &mut Evaluator,
    ) -> Result<Attempt, SynthError>;
}

/// What a kernel tactic reads beside the kernel.
pub struct KernelContext<'a> {
    pub options: &'a SynthOptions,
    /// The user's outer deadline.
    pub deadline: Instant,
    pub output_tactics: &'a [&'a dyn OutputTactic],
    pub families: &'a [&'a dyn SketchFamily],
}

/// What a kernel tactic gave.
pub enum KernelResult {
    /// A whole-kernel lift: a program, or the error that says why not.
    Whole(super::options::Lifted),
    /// A lift with loops kept, or why keeping loops did not work.
    Kept(Result<super::options::PartialLift, super::options::PartialError>),
    /// Nothing: its proposals all failed (the next tactic goes on).
    Nothing,
}

/// A tactic for a whole kernel.
pub trait KernelTactic: Sync {
    fn name(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    /// `Err(why)` when it does not apply to this kernel.
    fn applies(&self, kernel: &Kernel) -> Result<(), String>;
    /// Whether its answer, program or error, is final for the kernel.
    fn decides(&self) -> bool {
        false
    }
    /// Its attempt at the kernel; per-output work goes into `trace`.
    fn run(&self, kernel: &Kernel, context: &KernelContext<'_>, trace: &mut Trace) -> KernelResult;
}
