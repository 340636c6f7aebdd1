//! `tenslift lift FILE.c [--function F]... --target numpy|jax|pytorch|hlo
//! [-o OUT] [--timeout S] [--search best|first] [--cost-table FILE.json]
//! [--json]`: extracts each
//! kernel, searches a TensIR program equal to its spec at two size tuples,
//! and emits it. One summary line per kernel on stderr (or one JSON object
//! per kernel on stdout with `--json`).
//!
//! Exit codes: 0 every kernel lifted; 1 the C was rejected (diagnostics on
//! stderr); 2 usage or I/O; 3 no such kernel; 5 some kernel was not lifted
//! (failed, partial). `-o` is written only when every kernel lifted, via a
//! temporary file renamed into place, so a failure leaves no file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tenslift_frontend::ExtractError;
use tenslift_targets::{emit, print_program, EmitOptions, Target};

use super::cflags::CFlags;
use super::emit::TargetArg;
use super::{
    print_err, print_out, EXIT_NOT_LIFTED, EXIT_NO_KERNEL, EXIT_OK, EXIT_REJECTED, EXIT_USAGE,
};
use crate::synth::cost::{CostModel, CostTable};
use crate::synth::{lift_kernel, SynthError, SynthOptions};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchMode {
    /// Keep searching after a solution for a cheaper one (branch and bound).
    Best,
    /// Return the first solution.
    First,
}

#[derive(clap::Args, Debug)]
pub struct LiftArgs {
    /// The C file.
    pub file: PathBuf,
    /// Lift only these kernels (repeatable); default: every kernel.
    #[arg(long)]
    pub function: Vec<String>,
    /// The code generation target.
    #[arg(long, short, value_enum)]
    pub target: TargetArg,
    /// Write the generated code here (only when every kernel lifted).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Seconds of search per kernel.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Search strategy.
    #[arg(long, value_enum, default_value_t = SearchMode::Best)]
    pub search: SearchMode,
    /// Print one JSON object per kernel on stdout.
    #[arg(long)]
    pub json: bool,
    /// Price candidates with this calibration (from `tenslift calibrate`)
    /// instead of the analytic flops-and-bytes model.
    #[arg(long, value_name = "FILE.json")]
    pub cost_table: Option<PathBuf>,
    /// Bind a size parameter for `--target hlo` (static shapes), e.g.
    /// `--size n=1024`.
    #[arg(long = "size", value_name = "NAME=VALUE", value_parser = parse_size)]
    pub sizes: Vec<(String, i64)>,
    #[command(flatten)]
    pub cflags: CFlags,
}

fn parse_size(s: &str) -> Result<(String, i64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    let value: i64 = value
        .trim()
        .parse()
        .map_err(|_| format!("`{value}` is not an integer"))?;
    Ok((name.trim().to_string(), value))
}

pub fn run(args: LiftArgs) -> i32 {
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        print_err("error: --timeout must be a positive number of seconds\n");
        return EXIT_USAGE;
    }
    let model = match &args.cost_table {
        None => CostModel::Analytic,
        Some(file) => match CostTable::load(file) {
            Ok(table) => CostModel::Calibrated(table),
            Err(e) => {
                print_err(&format!("error: {e}\n"));
                return EXIT_USAGE;
            }
        },
    };
    let path = args.file.as_path();
    let options = match args.cflags.options(path, args.function.clone()) {
        Ok(o) => o,
        Err(message) => {
            print_err(&format!("error: {message}\n"));
            return EXIT_USAGE;
        }
    };
    let unit = match tenslift_frontend::extract(&path.to_string_lossy(), &options) {
        Ok(unit) => unit,
        Err(ExtractError::Rejected(diagnostics)) => {
            print_err(&diagnostics.render());
            if args.json {
                let record = json!({
                    "file": path.display().to_string(), "function": null, "status": "rejected",
                    "time_s": 0.0, "program": null, "cost": null, "stats": null,
                    "message": diagnostics.render(),
                });
                print_out(&format!("{record}\n"));
            }
            return EXIT_REJECTED;
        }
        Err(other) => {
            print_err(&format!("error: {other}\n"));
            return EXIT_USAGE;
        }
    };
    for wanted in &args.function {
        if !unit.kernels.iter().any(|k| &k.name == wanted) {
            print_err(&format!(
                "{}: error: no kernel `{wanted}`\n",
                path.display()
            ));
            return EXIT_NO_KERNEL;
        }
    }
    if unit.kernels.is_empty() {
        print_err(&format!("{}: error: no kernel found\n", path.display()));
        return EXIT_NO_KERNEL;
    }
    let synth_options = SynthOptions {
        timeout: Duration::from_secs_f64(args.timeout),
        first: args.search == SearchMode::First,
        model,
        ..SynthOptions::default()
    };
    let target: Target = args.target.into();
    let emit_options = EmitOptions {
        sizes: args.sizes.iter().cloned().collect(),
    };
    let mut code = String::new();
    let mut all_lifted = true;
    for kernel in &unit.kernels {
        let start = Instant::now();
        let lifted = lift_kernel(kernel, &synth_options);
        let seconds = start.elapsed().as_secs_f64();
        let emitted = lifted
            .program
            .as_ref()
            .map(|p| emit(p, target, &emit_options).map_err(|e| e.to_string()));
        let (status, detail) = match (&emitted, &lifted.error) {
            (Some(Ok(_)), _) => ("lifted", String::new()),
            (Some(Err(e)), _) => ("failed", format!("emit: {e}")),
            (None, Some(e)) if lifted.solved > 0 && !matches!(e, SynthError::Rejected(_)) => {
                ("partial", e.to_string())
            }
            (None, Some(e)) => ("failed", e.to_string()),
            (None, None) => ("failed", "no program".to_string()),
        };
        match &emitted {
            Some(Ok(text)) => code.push_str(text),
            _ => all_lifted = false,
        }
        let summary = match status {
            "lifted" => format!(
                "{}: {}: lifted in {seconds:.2} s, cost {}\n",
                path.display(),
                kernel.name,
                // Calibrated costs are seconds, analytic ones flops.
                if args.cost_table.is_some() {
                    format!("{:.3e} s", lifted.cost)
                } else {
                    format!("{:.0}", lifted.cost)
                }
            ),
            _ => format!(
                "{}: {}: {status} after {seconds:.2} s ({}/{} outputs): {detail}\n",
                path.display(),
                kernel.name,
                lifted.solved,
                lifted.outputs
            ),
        };
        print_err(&summary);
        if args.json {
            let record = json!({
                "file": path.display().to_string(),
                "function": kernel.name,
                "status": status,
                "time_s": seconds,
                "program": lifted.program.as_ref().map(print_program),
                "cost": lifted.program.as_ref().map(|_| lifted.cost),
                "cost_model": if args.cost_table.is_some() { "calibrated" } else { "analytic" },
                "complexity": lifted.complexity,
                "search": match args.search { SearchMode::Best => "best", SearchMode::First => "first" },
                "stats": lifted.stats,
                "message": detail,
            });
            print_out(&format!("{record}\n"));
        }
    }
    if !all_lifted {
        return EXIT_NOT_LIFTED;
    }
    match &args.output {
        Some(out) => match write_atomically(out, &code) {
            Ok(()) => EXIT_OK,
            Err(e) => {
                print_err(&format!("error: cannot write {}: {e}\n", out.display()));
                EXIT_USAGE
            }
        },
        None => {
            if !args.json {
                print_out(&code);
            }
            EXIT_OK
        }
    }
}

/// Writes a sibling temporary file and renames it over `path`.
pub(crate) fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_string());
    let tmp = dir.join(format!(".{name}.tenslift-{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, contents).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
