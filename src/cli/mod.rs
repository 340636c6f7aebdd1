//! The `tenslift` command line.
//!
//! Each subcommand lives in `src/cli/<name>.rs` as a `#[derive(clap::Args)]`
//! struct plus `pub fn run(args) -> i32`; [`main`] parses the command line
//! and dispatches. To add a subcommand: create the module, add a variant to
//! [`Command`] and an arm to the `match` in [`main`]. Exit codes are the
//! constants below — nothing else decides them.

pub mod bench;
pub mod calibrate;
pub mod cflags;
pub mod emit;
pub mod extract;
pub mod lift;
pub mod spec;
pub mod verify;

use clap::{Parser, Subcommand};

/// Success.
pub const EXIT_OK: i32 = 0;
/// The C was rejected: diagnostics on stderr, nothing on stdout.
pub const EXIT_REJECTED: i32 = 1;
/// Usage error, missing or unreadable file, libclang not loadable.
pub const EXIT_USAGE: i32 = 2;
/// No kernel of that name, or several and none chosen.
pub const EXIT_NO_KERNEL: i32 = 3;
/// The kernel was understood, but its spec cannot be computed at the
/// requested sizes (out-of-bounds access, bad size list, limits).
pub const EXIT_SPEC: i32 = 4;
/// `lift` ran, but some kernel was not lifted (failed, or only partially).
pub const EXIT_NOT_LIFTED: i32 = 5;
/// `verify` (or `lift --verify`) found the program wrong: a counterexample,
/// a mismatch against the compiled C, or a disproof. Nothing is written.
pub const EXIT_VERIFY_FAILED: i32 = 6;

/// Lifts C loop nests into verified tensor programs.
#[derive(Debug, Parser)]
#[command(name = "tenslift", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the loop IR extracted from a C file.
    Extract(extract::ExtractArgs),
    /// Print the spec: one exact expression per output element.
    Spec(spec::SpecArgs),
    /// Print a TensIR program as NumPy, JAX, PyTorch or StableHLO code.
    Emit(emit::EmitArgs),
    /// Search a tensor program equal to each kernel and emit it.
    Lift(lift::LiftArgs),
    /// Time each tensor operation kind in this machine's NumPy and write a
    /// cost table for `lift --cost-table`.
    Calibrate(calibrate::CalibrateArgs),
    /// Check a lifted (or given) program: Z3 bounded, unbounded, and
    /// differential runs against the compiled C.
    Verify(verify::VerifyArgs),
    /// Lift whole suites and time them against gcc, clang and Polly.
    Bench(bench::BenchArgs),
}

/// Checks that every kernel named with `--function` was extracted and that
/// there is at least one; otherwise says so (located at the file) and gives
/// the exit code.
pub(crate) fn require_kernels(
    path: &std::path::Path,
    unit: &tenslift_frontend::ir::TranslationUnit,
    wanted: &[String],
) -> Result<(), i32> {
    if let Some(missing) = wanted
        .iter()
        .find(|w| !unit.kernels.iter().any(|k| &k.name == *w))
    {
        print_err(&format!(
            "{}: error: no kernel `{missing}`\n",
            path.display()
        ));
        return Err(EXIT_NO_KERNEL);
    }
    if unit.kernels.is_empty() {
        print_err(&format!("{}: error: no kernel found\n", path.display()));
        return Err(EXIT_NO_KERNEL);
    }
    Ok(())
}

/// Writes to stdout, ignoring a closed pipe (`tenslift ... | head` must
/// not panic the way `print!` would).
pub fn print_out(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writes to stderr, ignoring a closed pipe.
pub fn print_err(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    // clang spells it `-std=c99`; clap only knows `--std=c99`.
    let args = std::env::args_os().map(|a| match a.to_str() {
        Some(s) if s.starts_with("-std=") => format!("-{s}").into(),
        _ => a,
    });
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    match cli.command {
        Command::Extract(args) => extract::run(args),
        Command::Spec(args) => spec::run(args),
        Command::Emit(args) => emit::run(args),
        Command::Lift(args) => lift::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Bench(args) => bench::run(args),
    }
}
