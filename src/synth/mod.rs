//! The synthesizer: finds a TensIR program equal to a C kernel's spec.
//!
//! It takes a kernel's loop IR (`tenslift_frontend::ir::Kernel`) and
//! [`SynthOptions`], and hands on an [`Outcome`]: a whole program, a
//! program with kept loops, or the error and the [`Trace`] that says, per
//! tactic, why none was found.
//!
//! [`lift_kernel`] is a short driver over a registry ([`registry`]) of
//! tactics, tried in order:
//!
//! * kernel tactics ([`tactic::KernelTactic`]): a histogram read off the
//!   loop IR ([`scatter`]), a solver program ([`solvers`]), the outputs
//!   solved one at a time ([`outputs`]), the loops that carry dependencies
//!   kept ([`partial`]);
//! * output tactics ([`tactic::OutputTactic`]), for each output of the
//!   spec: a direct translation ([`direct`]), sketches over stored arrays
//!   ([`moments`]), the enumerative search ([`enumerative`]: a [`library`]
//!   of stubs and the top-down [`search`] over the sketch families of
//!   [`sketch`]).
//!
//! A program is accepted only when it equals the C spec at every
//! acceptance size tuple (`spec::tensir::check_program_at_both_sizes`), so
//! a program fitted to one size tuple is never returned. Costs come from
//! [`cost`]: the analytic model, or a table calibrated on this machine.
//!
//! The kernel's leading guards that change what it does (the C's `if
//! (cond) return …;`, kept by the frontend) are attached to the program
//! last ([`guard`]): the search only ever sees the rest of the kernel.
//!
//! A kernel that picks its whole computation by testing integer flags it
//! is passed is split into one kernel per case first ([`cases`], by the
//! commands that lift: each case is lifted like any kernel).
//!
//! Every search limit is counted in work ([`budget`]), never in seconds:
//! the same input gives the same program, statistics and trace on any
//! machine. The user's `--timeout` is only an outer safety net.

pub mod argsearch;
pub mod budget;
pub mod cases;
pub mod convert;
pub mod direct;
pub mod driver;
pub mod enumerative;
pub mod extraction;
pub mod fold;
pub mod guard;
pub mod library;
pub mod moments;
pub mod options;
pub mod outputs;
pub mod partial;
pub mod problem;
pub mod registry;
pub mod scatter;
pub mod search;
pub mod signature;
pub mod sketch;
pub mod solvers;
pub mod stencil;
pub mod tactic;
pub mod trace;

pub use crate::cost;
pub use budget::Limits;
pub use driver::{lift_kernel, Outcome};
pub use options::{Lifted, PartialError, PartialLift, SynthError, SynthOptions};
pub use search::Stats;
pub use trace::Trace;

#[cfg(test)]
mod tests;
