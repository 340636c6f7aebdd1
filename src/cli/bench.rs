//! `tenslift bench`: the batch harness (see [`crate::bench`]). Lifts the
//! selected manifest kernels in parallel, times C baselines and lifted
//! backends one after another, writes lift.csv, runtime.csv, summary.md and
//! plots into `--out`. `--merge DIR...` combines result directories,
//! `--export-bundle DIR` writes a CUDA-machine bundle, `--import DIR`
//! folds a measured bundle into `--out`.
//!
//! Exit codes: 0 done; 2 usage, I/O or runner failure.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use super::{print_err, print_out, EXIT_OK, EXIT_USAGE};
use crate::bench::merge::merge;
use crate::bench::run::{self as bench_run, export_bundle, BenchConfig, Progress, RunReport};
use crate::bench::shard::Shard;
use crate::bench::suite_dir;
use crate::bench::BenchError;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Suites to run, comma-separated, or `all`.
    #[arg(long, default_value = "all")]
    pub suite: String,
    /// Kernels lifted at once (runtime measurements are always one at a time).
    #[arg(long, default_value_t = default_jobs())]
    pub jobs: usize,
    /// Seconds of search per kernel (the lifting child is killed 10 s later).
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Seconds per runtime measurement (one variant of one kernel, all repeats).
    #[arg(long, default_value_t = 120.0)]
    pub runtime_timeout: f64,
    /// Lifted backends to time, comma-separated.
    #[arg(
        long,
        default_value = "numpy,jax,pytorch,torch-compile,hlo",
        value_delimiter = ','
    )]
    pub targets: Vec<String>,
    /// Dataset size of the runtime measurements.
    #[arg(long, default_value = "LARGE")]
    pub dataset: String,
    /// Where the lifted backends run (`cuda` adds `-cuda` variants).
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Result directory (default: results/bench-<dataset>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only every N-th kernel starting at K (1-based), e.g. `--shard 2/8`.
    #[arg(long)]
    pub shard: Option<String>,
    /// Print one JSON object with the outcome instead of text; no progress bars.
    #[arg(long)]
    pub json: bool,
    /// Timed runs per measurement (after one warm-up run).
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
    /// Lift only: no runtime measurements.
    #[arg(long)]
    pub no_runtime: bool,
    /// The calibration the `auto` and roofline columns read (default: this
    /// host's committed results/calibration-<host>.json, else a built-in
    /// conservative table).
    #[arg(long, value_name = "FILE.json")]
    pub cost_table: Option<PathBuf>,
    /// The kernel manifest.
    #[arg(long, default_value = "benchmarks/manifest.toml")]
    pub manifest: PathBuf,
    /// A suite tree to benchmark without a manifest (every `kernel_*` of
    /// it; needs --layout). Its generated manifest is written to --out.
    #[arg(long, value_name = "DIR", requires = "layout",
          conflicts_with_all = ["merge", "export_bundle", "import"])]
    pub suite_dir: Option<PathBuf>,
    /// The layout of --suite-dir: `polybench` (PolyBench/C 4.2:
    /// `<group>/<name>/<name>.c`, `utilities/polybench.h`).
    #[arg(long, value_name = "LAYOUT", requires = "suite_dir")]
    pub layout: Option<String>,
    /// Combine these result directories into `--out`.
    #[arg(long, num_args = 1.., value_name = "DIR", conflicts_with_all = ["export_bundle", "import"])]
    pub merge: Vec<PathBuf>,
    /// Write a self-contained bundle for a CUDA machine into DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "import")]
    pub export_bundle: Option<PathBuf>,
    /// Merge the results of a bundle measured elsewhere into `--out`.
    #[arg(long, value_name = "DIR")]
    pub import: Option<PathBuf>,
}

fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// The repository root: the manifest lives in `<root>/benchmarks/`.
fn repo_root(manifest: &Path) -> PathBuf {
    let absolute = std::fs::canonicalize(manifest).unwrap_or_else(|_| manifest.to_path_buf());
    absolute
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn quiet(json: bool) -> bool {
    json || std::env::var_os("CI").is_some_and(|v| v == "true" || v == "1")
        || !std::io::stderr().is_terminal()
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args()
        .enumerate()
        .map(|(i, a)| if i == 0 { "tenslift".to_string() } else { a })
        .collect();
    args.join(" ")
}

pub fn run_command(args: BenchArgs) -> Result<RunReport, BenchError> {
    let shard = args.shard.as_deref().map(str::parse::<Shard>).transpose()?;
    let root = repo_root(&args.manifest);
    let quiet = quiet(args.json);
    let out = args
        .export_bundle
        .clone()
        .or_else(|| args.out.clone())
        .unwrap_or_else(|| PathBuf::from(format!("results/bench-{}", args.dataset)));
    let binary = std::env::current_exe()
        .map_err(|e| BenchError::Runner(format!("cannot find the tenslift executable: {e}")))?;
    // Lifting children run in the repository root: hand them absolute paths.
    let manifest = match (&args.suite_dir, &args.layout) {
        (Some(dir), Some(layout)) => {
            let (path, skipped) = suite_dir::write_manifest(dir, layout, &args.dataset, &out)?;
            for s in skipped {
                print_err(&format!(
                    "tenslift: warning: {}: not benchmarked: {}\n",
                    s.file.display(),
                    s.reason
                ));
            }
            std::fs::canonicalize(&path).unwrap_or(path)
        }
        _ => std::fs::canonicalize(&args.manifest).unwrap_or(args.manifest.clone()),
    };
    let config = BenchConfig {
        manifest,
        python: tenslift_targets::runner::python_interpreter(&root),
        root,
        suites: args.suite.clone(),
        jobs: args.jobs,
        lift_timeout_s: args.timeout,
        runtime_timeout_s: args.runtime_timeout,
        targets: args.targets.clone(),
        dataset: args.dataset.clone(),
        device: args.device.clone(),
        out,
        shard,
        repeat: args.repeat,
        runtime: !args.no_runtime,
        cost_table: args.cost_table.clone(),
        command: command_line(),
        binary,
        quiet,
    };
    let bar: Mutex<Option<ProgressBar>> = Mutex::new(None);
    let progress = |event: Progress| {
        if quiet {
            return;
        }
        let Ok(mut bar) = bar.lock() else { return };
        match event {
            Progress::LiftStarted { kernels } => {
                let b = ProgressBar::new(kernels as u64);
                if let Ok(style) =
                    ProgressStyle::with_template("lifting {bar:30} {pos}/{len} {elapsed} {msg}")
                {
                    b.set_style(style);
                }
                *bar = Some(b);
            }
            Progress::Lifted { kernel, status } => {
                if let Some(b) = bar.as_ref() {
                    b.set_message(format!("{kernel}: {status}"));
                    b.inc(1);
                }
            }
            Progress::RuntimeStarted { kernels } => {
                if let Some(b) = bar.take() {
                    b.finish_and_clear();
                }
                print_err(&format!(
                    "timing {kernels} lifted kernels, one measurement at a time\n"
                ));
            }
        }
    };
    let report = if args.export_bundle.is_some() {
        export_bundle(&config, &progress)
    } else {
        bench_run::run(&config, &progress)
    };
    if let Ok(Some(b)) = bar.lock().map(|mut b| b.take()) {
        b.finish_and_clear();
    }
    report
}

pub fn run(args: BenchArgs) -> i32 {
    let json = args.json;
    if !args.merge.is_empty() || args.import.is_some() {
        let Some(out) = args.out.clone() else {
            print_err("error: --merge and --import need --out DIR\n");
            return EXIT_USAGE;
        };
        let mut inputs: Vec<&Path> = args.merge.iter().map(PathBuf::as_path).collect();
        if let Some(bundle) = &args.import {
            if out.join("lift.csv").is_file() {
                inputs.push(out.as_path());
            }
            inputs.push(bundle.as_path());
        }
        return match merge(&inputs, &out, &command_line()) {
            Ok(info) => {
                if !info.missing.is_empty() {
                    print_err(&format!(
                        "warning: {} kernel(s) of the run are in no merged directory: {}\n",
                        info.missing.len(),
                        info.missing.join(", ")
                    ));
                }
                let root = repo_root(&args.manifest);
                let python = tenslift_targets::runner::python_interpreter(&root);
                if let Err(e) = crate::bench::run::plot(&python, &root, &out) {
                    print_err(&format!("warning: no plots: {e}\n"));
                }
                let summary = out.join("summary.md");
                if json {
                    let record = serde_json::json!({"out": out, "summary": summary});
                    print_out(&format!("{record}\n"));
                } else {
                    print_err(&format!("merged into {}\n", summary.display()));
                }
                EXIT_OK
            }
            Err(e) => {
                print_err(&format!("error: {e}\n"));
                EXIT_USAGE
            }
        };
    }
    match run_command(args) {
        Ok(report) => {
            if json {
                let record = serde_json::json!({
                    "out": report.out,
                    "kernels": report.kernels,
                    "lifted": report.lifted,
                    "wall_s": report.info.wall_s,
                    "plot_error": report.plot_error,
                });
                print_out(&format!("{record}\n"));
            } else {
                if let Some(e) = &report.plot_error {
                    print_err(&format!("warning: no plots: {e}\n"));
                }
                print_err(&format!(
                    "{} of {} kernels lifted; {} s; summary: {}\n",
                    report.lifted,
                    report.kernels,
                    report.info.wall_s.round(),
                    report.out.join("summary.md").display()
                ));
            }
            EXIT_OK
        }
        Err(e) => {
            print_err(&format!("error: {e}\n"));
            EXIT_USAGE
        }
    }
}
