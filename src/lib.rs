//! tenslift: lifts C loop nests into verified tensor programs.
//!
//! The root package owns the middle of the pipeline and the user interface:
//! the exact algebra core ([`algebra`]), symbolic execution of loop IR and
//! TensIR into specs ([`spec`]), and the command line ([`cli`]). It takes C
//! files through `tenslift-frontend`, builds programs in `tenslift-targets`,
//! and checks them with `tenslift-verify`.
//!
//! Architecture invariant: only [`cli`] prints to the terminal.

pub mod algebra;
pub mod bench;
pub mod cli;
pub mod cost;
pub mod eqsat;
pub mod predict;
pub mod spec;
pub mod synth;
