//! `tenslift emit`: compiles a TensIR program to NumPy, JAX, PyTorch or
//! StableHLO. Exit codes: 0 success, 1 bad program (diagnostics on
//! stderr), 2 usage or I/O error. Output is written atomically: nothing is
//! left at `-o` when compilation fails.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::{print_err, EXIT_OK, EXIT_REJECTED, EXIT_USAGE};

use tenslift_targets::symmetry::{apply_symmetry, apply_with, Policy};
use tenslift_targets::{emit, EmitError, EmitOptions, Program, Target};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum TargetArg {
    Numpy,
    Jax,
    Pytorch,
    Hlo,
}

impl From<TargetArg> for Target {
    fn from(t: TargetArg) -> Target {
        match t {
            TargetArg::Numpy => Target::Numpy,
            TargetArg::Jax => Target::Jax,
            TargetArg::Pytorch => Target::Pytorch,
            TargetArg::Hlo => Target::Hlo,
        }
    }
}

/// Which symmetry rewrites `--symmetry` applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SymmetryArg {
    /// The uses measured faster on the target (symmetry::Policy::for_target).
    Target,
    /// Every use, faster or not (to measure them).
    All,
}

/// Compile a TensIR program (.tensir) to target code.
#[derive(clap::Args, Debug)]
pub struct EmitArgs {
    /// The TensIR program.
    pub program: PathBuf,
    /// The code generation target.
    #[arg(long, short, value_enum, default_value_t = TargetArg::Numpy)]
    pub target: TargetArg,
    /// Write the code here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Bind a size parameter, e.g. `--size n=1024` (StableHLO has static
    /// shapes, so `--target hlo` needs every size parameter).
    #[arg(long = "size", value_name = "NAME=VALUE", value_parser = parse_size)]
    pub sizes: Vec<(String, i64)>,
    /// Rewrite with the symmetry analysis first (transposes of symmetric
    /// values dropped, transposed products shared, one triangle of a
    /// symmetric product by BLAS syrk/syr2k); `--symmetry` alone is
    /// `--symmetry=target`. What changed is reported on stderr.
    #[arg(
        long,
        value_enum,
        value_name = "USES",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "target"
    )]
    pub symmetry: Option<SymmetryArg>,
}

pub(crate) fn parse_size(s: &str) -> Result<(String, i64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    let value: i64 = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` is not an integer"))?;
    Ok((name.trim().to_string(), value))
}

/// Reads and parses a TensIR file; on failure prints why and gives the
/// exit code (2 unreadable, 1 a bad program, located).
pub(crate) fn load_program(path: &Path) -> Result<Program, i32> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        print_err(&format!("error: cannot read {file}: {e}\n"));
        EXIT_USAGE
    })?;
    tenslift_targets::parse_program(&file, &text).map_err(|diag| {
        print_err(&format!("{diag}\n"));
        EXIT_REJECTED
    })
}

/// Runs `tenslift emit` and returns the exit code.
pub fn run(args: EmitArgs) -> i32 {
    let file = args.program.display().to_string();
    let program = match load_program(&args.program) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let target: Target = args.target.into();
    let program = match args.symmetry {
        None => program,
        Some(uses) => {
            let (rewritten, report) = match uses {
                SymmetryArg::Target => apply_symmetry(&program, Some(target)),
                SymmetryArg::All => apply_with(&program, Policy::all()),
            };
            print_err(&format!("{file}: {report}"));
            rewritten
        }
    };
    let opts = EmitOptions {
        sizes: args.sizes.iter().cloned().collect::<BTreeMap<_, _>>(),
    };
    let code = match emit(&program, target, &opts) {
        Ok(c) => c,
        Err(e @ (EmitError::MissingSize { .. } | EmitError::BadSize { .. })) => {
            print_err(&format!("error: {e}\n"));
            return EXIT_USAGE;
        }
        Err(e) => {
            print_err(&format!("{file}: error: {e}\n"));
            return EXIT_REJECTED;
        }
    };
    match &args.output {
        None => {
            let mut stdout = std::io::stdout().lock();
            if let Err(e) = stdout.write_all(code.as_bytes()) {
                print_err(&format!("error: cannot write standard output: {e}\n"));
                return EXIT_USAGE;
            }
            EXIT_OK
        }
        Some(path) => match super::lift::write_atomically(path, &code) {
            Ok(()) => EXIT_OK,
            Err(e) => {
                print_err(&format!("error: cannot write {}: {e}\n", path.display()));
                EXIT_USAGE
            }
        },
    }
}
