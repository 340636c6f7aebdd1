//! The `tenslift` command line.
//!
//! Each subcommand lives in `src/cli/<name>.rs` as a `#[derive(clap::Args)]`
//! struct plus `pub fn run(args) -> i32`; [`main`] parses the command line
//! and dispatches. To add a subcommand: create the module, add a variant to
//! [`Command`] and an arm to the `match` in [`main`]. Exit codes are the
//! constants below — nothing else decides them.

pub mod auto;
pub mod bench;
pub mod calibrate;
pub mod cflags;
pub mod emit;
pub mod extract;
pub mod lift;
pub mod optimize;
pub mod spec;
pub mod verify;
pub mod watchdog;

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
/// Parsing the C (libclang's preprocessing and parse plus extraction) ran
/// past `--timeout` (default 60 s), or a lift past it and the watchdog's
/// grace; nothing is written. (`bench::lift` reads it as a timeout.)
pub const EXIT_TIMEOUT: i32 = 7;
/// `lift` of a whole file: every function that lowered was lifted and
/// written; the others were refused (located diagnostics on stderr).
pub const EXIT_SOME_REFUSED: i32 = 8;

/// When diagnostics are coloured, as clang's `-fdiagnostics-color`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    Always,
    Never,
}

/// The global output settings (`--quiet`, `--color`), set once in [`main`].
#[derive(Clone, Copy, Debug, Default)]
struct Output {
    quiet: bool,
    style: tenslift_frontend::Style,
}

static OUTPUT: std::sync::OnceLock<Output> = std::sync::OnceLock::new();

fn output() -> Output {
    OUTPUT.get().copied().unwrap_or_default()
}

/// Whether `--quiet` was given: progress and success lines are left out,
/// errors and diagnostics are still printed.
pub fn quiet() -> bool {
    output().quiet
}

/// Renders frontend diagnostics in the `--color` style.
pub fn render_diagnostics(diagnostics: &tenslift_frontend::Diagnostics) -> String {
    diagnostics.render_styled(output().style)
}

fn resolve_color(choice: ColorChoice) -> bool {
    use std::io::IsTerminal;
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            !no_color && std::io::stderr().is_terminal()
        }
    }
}

/// Prints why extraction failed and gives the exit code: rejected C (1),
/// a parse past the deadline (7), anything else (2).
pub(crate) fn report_extract_error(error: &tenslift_frontend::ExtractError) -> i32 {
    use tenslift_frontend::ExtractError;
    match error {
        ExtractError::Rejected(diagnostics) => {
            print_err(&render_diagnostics(diagnostics));
            EXIT_REJECTED
        }
        ExtractError::Timeout { .. } => {
            print_err(&format!(
                "error: {error} (--timeout): a macro that expands exponentially, or a huge \
                 generated file? Raise --timeout if the file is just large.\n"
            ));
            EXIT_TIMEOUT
        }
        other => {
            print_err(&format!("error: {other}\n"));
            EXIT_USAGE
        }
    }
}

/// Lifts C loop nests into verified tensor programs.
#[derive(Debug, Parser)]
#[command(name = "tenslift", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print only errors and diagnostics (no per-kernel progress lines).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
    /// Colour diagnostics: `auto` (on a terminal, unless NO_COLOR is set),
    /// `always` or `never`.
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the loop IR extracted from a C file.
    #[command(after_help = "Examples:\n  \
        tenslift extract gemm.c\n  \
        tenslift extract gemm.c --function gemm --json\n  \
        tenslift extract 2mm.c -I polybench/utilities -DLARGE_DATASET")]
    Extract(extract::ExtractArgs),
    /// Print the spec: one exact expression per output element.
    #[command(after_help = "Examples:\n  \
        tenslift spec gemm.c --sizes ni=2,nj=3,nk=2\n  \
        tenslift extract gemm.c --json > gemm.json && tenslift spec gemm.json --second")]
    Spec(spec::SpecArgs),
    /// Print a TensIR program as NumPy, JAX, PyTorch or StableHLO code.
    #[command(after_help = "Examples:\n  \
        tenslift emit gemm.tensir\n  \
        tenslift emit gemm.tensir --target hlo --size ni=64 --size nj=64 --size nk=64")]
    Emit(emit::EmitArgs),
    /// Rewrite a TensIR program into the cheapest equal program the
    /// e-graph rules reach (equality saturation), and say what changed.
    #[command(after_help = "Examples:\n  \
        tenslift optimize-tensir atax.tensir --size m=1900 --size n=2100\n  \
        tenslift optimize-tensir p.tensir --cost-table results/calibration-vm.json -o p.opt.tensir")]
    OptimizeTensir(optimize::OptimizeArgs),
    /// Search a tensor program equal to each kernel and emit it.
    #[command(
        after_help = "Without --function every kernel in the file is lifted and the \
        output is one module holding all of them (written only when every kernel lifted).\n\n\
        Examples:\n  \
        tenslift lift gemm.c                      # NumPy on stdout\n  \
        tenslift lift gemm.c --target jax -o gemm_jax.py\n  \
        tenslift lift kernels.c --function gemm --verify\n  \
        tenslift lift big.c --timeout 300 --json\n  \
        tenslift lift gemm.c --target auto --sizes ni=1000,nj=1100,nk=1200"
    )]
    Lift(lift::LiftArgs),
    /// Time each tensor operation kind in every target, the machine's
    /// bandwidth and peak, and plain C loops; write the cost table for
    /// `lift --cost-table` and `--target auto`.
    #[command(after_help = "Examples:\n  \
        tenslift calibrate --quick\n  \
        nice tenslift calibrate --note 'other jobs running'   # results/calibration-<host>.json\n  \
        tenslift calibrate --out cost.json && tenslift lift gemm.c --cost-table cost.json")]
    Calibrate(calibrate::CalibrateArgs),
    /// Check a lifted (or given) program: Z3 bounded, unbounded, and
    /// differential runs against the compiled C.
    #[command(after_help = "Examples:\n  \
        tenslift verify gemm.c --targets numpy\n  \
        tenslift verify gemm.c --function gemm --program gemm.tensir --report out/")]
    Verify(verify::VerifyArgs),
    /// Lift whole suites and time them against gcc, clang and Polly.
    #[command(after_help = "Examples:\n  \
        tenslift bench --suite blas --dataset SMALL --no-runtime\n  \
        tenslift bench --suite polybench,dsp --targets numpy --jobs 2")]
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
    let _ = OUTPUT.set(Output {
        quiet: cli.quiet,
        style: tenslift_frontend::Style {
            color: resolve_color(cli.color),
        },
    });
    match cli.command {
        Command::Extract(args) => extract::run(args),
        Command::Spec(args) => spec::run(args),
        Command::Emit(args) => emit::run(args),
        Command::OptimizeTensir(args) => optimize::run(args),
        Command::Lift(args) => lift::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Bench(args) => bench::run(args),
    }
}
