//! The C frontend: parses a C file with libclang 19 and extracts each kernel
//! (a function containing a loop nest, or a `#pragma scop` region) into the
//! loop IR of [`ir`]. Takes a path plus clang-style flags (`-I`, `-D`,
//! `-std`, or a compile_commands.json); hands on a [`ir::TranslationUnit`],
//! or a list of located diagnostics explaining every construct it refused.
//!
//! ```no_run
//! use tenslift_frontend::{extract, ExtractError, Options};
//! match extract("gemm.c", &Options::default()) {
//!     Ok(tu) => print!("{}", tenslift_frontend::dump::translation_unit(&tu)),
//!     Err(ExtractError::Rejected(diags)) => eprint!("{}", diags.render()),
//!     Err(other) => eprintln!("error: {other}"),
//! }
//! ```
//!
//! Pipeline inside: [`includes`] refuses devices and oversized files
//! before anything is read; `libclang` (a thin safe layer over clang-sys)
//! parses, under a deadline;
//! `reader` copies cursors into the owned `syntax` tree (depth-bounded),
//! rolling loops unrolled by hand back into one (`reroll`) and setting
//! f2c's comma temporaries by statements of their own (`comma_temps`);
//! `lower` builds the IR, using [`affine`] and [`delinearize`] for
//! subscripts and [`roles`] for parameter roles; [`dump`] prints it;
//! [`diagnostics`] holds every rejection code; [`types`] has C's arithmetic
//! conversions. [`ir_rewrite`] rewrites the IR it hands on (an iterator
//! substituted, a descending loop made ascending) for the crates
//! downstream that restructure or prove loop nests.
//!
//! Architecture invariant: this crate knows nothing of tensors, specs or
//! targets; it only says what the C does, with C's types and semantics.

pub mod affine;
pub(crate) mod comma_temps;
pub(crate) mod decrement_while;
pub mod delinearize;
pub mod diagnostics;
pub mod dump;
pub(crate) mod early_returns;
pub mod extract;
pub(crate) mod flag_sizes;
pub(crate) mod flat_product;
pub mod fourier_motzkin;
pub(crate) mod hoist_helpers;
pub mod includes;
pub(crate) mod induction;
pub mod ir;
pub mod ir_rewrite;
pub(crate) mod libclang;
pub(crate) mod lower;
mod macros;
pub(crate) mod nonnull;
pub mod options;
pub(crate) mod pointer_for;
pub(crate) mod reader;
pub(crate) mod reroll;
pub mod roles;
pub(crate) mod syntax;
#[cfg(test)]
mod test_util;
pub mod types;

pub use diagnostics::{Diagnostic, Diagnostics, Style};
pub use extract::{extract, ExtractError};
pub use options::{from_compile_commands, CompileDbError, Options, DEFAULT_PARSE_TIMEOUT};
