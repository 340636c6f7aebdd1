//! Verification: proves a lifted TensIR program equal to the C loop nest it
//! came from. Takes the frontend's loop IR and a TensIR program; hands on a
//! verdict per check (Z3 bounded at concrete sizes; Z3 unbounded with loop
//! invariants derived from the lifted program, [`unbounded::prove`];
//! differential runs of the generated code against gcc-compiled C in
//! [`differential`]) with counterexamples and reasons; [`reports`] renders
//! them as JSON, Markdown and HTML.
//!
//! [`bounded::check`] interprets both sides over Z3 terms at concrete sizes
//! and asks, output element by output element, whether any input makes
//! them differ. [`concrete::run_kernel`] runs a kernel on numbers with C
//! semantics, the same interpreter the checker uses to replay
//! counterexamples.
//!
//! Architecture invariant: verification never trusts the algebra core of the
//! synthesizer; it re-derives the semantics of both sides from their IRs.
//! Inside, the loop-IR and TensIR interpreters are written once against a
//! value domain (`domain`), with a symbolic (Z3) and a concrete instance.
//!
//! Floats are reals in the Z3 checks: no operation rounds, and a float
//! literal, of the C or of the program, is the shortest decimal that
//! round-trips in its type (`.1` and `np.float32(0.1)` are both 1/10), the
//! reading the synthesizer's spec uses. The differential runs see the
//! roundings.

pub mod bounded;
pub mod concrete;
pub mod differential;
mod domain;
mod error;
mod interface;
mod kernel_eval;
mod program_eval;
mod replay;
pub mod report;
pub mod reports;
mod symbolic;
pub mod unbounded;
mod z3_turn;

pub use bounded::{check, BoundedOptions};
pub use error::VerifyError;
pub use report::{ArrayValue, BoundedResult, Counterexample, Difference, Replay, Stats, Value};
pub use unbounded::{prove, UnboundedOptions, UnboundedResult};
