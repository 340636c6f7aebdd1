//! One benchmark run: select and shard kernels, lift them in parallel,
//! write lift.csv and the generated modules, time everything through the
//! runtime runner, and write runtime.csv, run.json and summary.md.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;
use tenslift_targets::Target;

use super::csv::Table;
use super::emit::{dataset_sizes, parse, program_ops, write_modules};
use super::lift::{lift_in_child, LiftOutcome};
use super::manifest::{Manifest, ManifestKernel, DATASETS};
use super::runtime::{run_runner, Plan, PlanKernel, RunnerCall};
use super::shard::Shard;
use super::stats::{C_VARIANTS, LIFTED_VARIANTS};
use super::summary::{render, utc_date, RunInfo};
use super::{roofline, write_text, BenchError};

/// Columns of lift.csv.
pub const LIFT_COLUMNS: [&str; 19] = [
    "kernel",
    "suite",
    "function",
    "status",
    "time_s",
    "cost",
    "program_ops",
    "steps",
    "backtracks",
    "stubs",
    "solved_algebraically",
    "pattern_matched",
    "message",
    // super::roofline::LIFT_EXTRA:
    "auto_target",
    "predicted_s",
    "flops",
    "bytes",
    "roofline_s",
    "bound_by",
];
const STAT_COLUMNS: [&str; 5] = [
    "steps",
    "backtracks",
    "stubs",
    "solved_algebraically",
    "pattern_matched",
];

/// Everything a run needs; the CLI fills it from its flags.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub manifest: PathBuf,
    /// The repository root: scripts/, and target/bench/ for bulky inputs.
    pub root: PathBuf,
    pub suites: String,
    pub jobs: usize,
    /// Search seconds per kernel.
    pub lift_timeout_s: f64,
    /// Seconds per runtime measurement (one variant of one kernel).
    pub runtime_timeout_s: f64,
    /// Lifted variants to time (numpy, jax, pytorch, torch-compile, hlo).
    pub targets: Vec<String>,
    pub dataset: String,
    pub device: String,
    pub out: PathBuf,
    pub shard: Option<Shard>,
    pub repeat: u32,
    pub runtime: bool,
    /// The calibration `auto` and the roofline read (default: this host's
    /// committed table, else the built-in one).
    pub cost_table: Option<PathBuf>,
    /// The command line, for the summary.
    pub command: String,
    /// The `tenslift` executable lifting children run.
    pub binary: PathBuf,
    pub python: PathBuf,
    /// Runner progress to `<out>/runtime.log` instead of the terminal.
    pub quiet: bool,
}

/// Progress reported to the caller (the CLI draws it).
pub enum Progress<'a> {
    LiftStarted { kernels: usize },
    Lifted { kernel: &'a str, status: &'a str },
    RuntimeStarted { kernels: usize },
}

/// What a finished run produced.
#[derive(Debug)]
pub struct RunReport {
    pub out: PathBuf,
    pub kernels: usize,
    pub lifted: usize,
    pub info: RunInfo,
    /// Why the plots are missing, when they are.
    pub plot_error: Option<String>,
}

impl BenchConfig {
    pub fn check(&self) -> Result<(), BenchError> {
        if !DATASETS.contains(&self.dataset.as_str()) {
            return Err(BenchError::Usage(format!(
                "unknown dataset `{}` (known: {})",
                self.dataset,
                DATASETS.join(", ")
            )));
        }
        for t in &self.targets {
            if !LIFTED_VARIANTS.contains(&t.as_str()) {
                return Err(BenchError::Usage(format!(
                    "unknown target `{t}` (known: {})",
                    LIFTED_VARIANTS.join(", ")
                )));
            }
        }
        if !matches!(self.device.as_str(), "cpu" | "cuda") {
            return Err(BenchError::Usage(format!(
                "unknown device `{}` (cpu or cuda)",
                self.device
            )));
        }
        if self.repeat == 0 {
            return Err(BenchError::Usage("--repeat must be at least 1".into()));
        }
        for (flag, t) in [
            ("--timeout", self.lift_timeout_s),
            ("--runtime-timeout", self.runtime_timeout_s),
        ] {
            if !(t.is_finite() && t > 0.0) {
                return Err(BenchError::Usage(format!(
                    "{flag} must be a positive number of seconds"
                )));
            }
        }
        Ok(())
    }

    fn emit_targets(&self) -> Vec<Target> {
        let mut targets = Vec::new();
        for t in &self.targets {
            let target = match t.as_str() {
                "numpy" => Target::Numpy,
                "jax" => Target::Jax,
                "hlo" => Target::Hlo,
                _ => Target::Pytorch,
            };
            if !targets.contains(&target) {
                targets.push(target);
            }
        }
        targets
    }

    /// Where inputs and C outputs go: under target/, never under results/.
    fn work_dir(&self) -> PathBuf {
        let name = self
            .out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        self.root.join("target").join("bench").join(name)
    }
}

/// The selected kernels of this run (suite filter, then shard), and the
/// names of the whole run's kernels before the shard took its part.
pub fn select_kernels(
    manifest: &Manifest,
    config: &BenchConfig,
) -> Result<(Vec<ManifestKernel>, Vec<String>), BenchError> {
    let kernels = manifest.select(&config.suites)?;
    let selection = kernels.iter().map(|k| k.name.clone()).collect();
    let part = match config.shard {
        Some(shard) => shard.select(&kernels, |k| k.name.as_str()),
        None => kernels,
    };
    Ok((part, selection))
}

/// run.json's description of this run.
fn run_info(config: &BenchConfig, started: u64, lift_wall_s: f64, wall_s: f64) -> RunInfo {
    RunInfo {
        command: config.command.clone(),
        machine: super::machine::describe(),
        dataset: config.dataset.clone(),
        started: utc_date(started),
        lift_wall_s,
        runtime_wall_s: wall_s - lift_wall_s,
        wall_s,
        merged_from: Vec::new(),
        selection: Vec::new(),
        shard: config.shard.map(|s| format!("{}/{}", s.index, s.count)),
        missing: Vec::new(),
    }
}

/// A lifted kernel with its program, ready to time.
struct Lifted {
    kernel: ManifestKernel,
    dir: PathBuf,
}

/// Lifts every kernel (in parallel), writes lift.csv and the modules.
fn lift_all(
    manifest: &Manifest,
    kernels: &[ManifestKernel],
    config: &BenchConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<(Table, Vec<Lifted>), BenchError> {
    progress(Progress::LiftStarted {
        kernels: kernels.len(),
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.jobs.max(1))
        .build()
        .map_err(|e| BenchError::Usage(format!("cannot start {} jobs: {e}", config.jobs)))?;
    let outcomes: Vec<LiftOutcome> = pool.install(|| {
        kernels
            .par_iter()
            .map(|k| {
                let source = manifest.source(k);
                // The C reference of the dataset is compiled with its sizes
                // as macros; kernels sized by macros must be lifted with the
                // same values, or the program has the wrong extents.
                let flags = manifest.c_flags(k, &config.dataset);
                let outcome = lift_in_child(
                    &config.binary,
                    &source,
                    &k.function,
                    &flags,
                    config.lift_timeout_s,
                    &config.root,
                );
                progress(Progress::Lifted {
                    kernel: &k.name,
                    status: &outcome.status,
                });
                outcome
            })
            .collect()
    });
    let mut table = Table::new(&LIFT_COLUMNS);
    let mut lifted = Vec::new();
    let targets = config.emit_targets();
    let costs = crate::predict::load_table(
        config.cost_table.as_deref(),
        &config.root,
        &crate::cli::calibrate::host_name(),
    )
    .map_err(BenchError::Usage)?;
    for (kernel, outcome) in kernels.iter().zip(outcomes) {
        let mut status = outcome.status.clone();
        let mut message = outcome.message.clone();
        let mut ops = String::new();
        let mut extra = roofline::empty_columns();
        // A partial lift that returns a program is complete (it keeps the
        // loops carrying dependencies) and is timed like a whole one.
        if let (Some(text), "lifted" | "partial") = (&outcome.program, status.as_str()) {
            let dir = config.out.join("kernels").join(&kernel.name);
            match parse(&kernel.name, text) {
                Ok(program) => {
                    ops = program_ops(&program).to_string();
                    write_text(&dir.join("program.tensir"), text)?;
                    let failed = write_modules(&program, kernel, &config.dataset, &targets, &dir)?;
                    let sizes = dataset_sizes(&program, kernel, &config.dataset);
                    let refused: Vec<Target> = failed.iter().map(|(t, _)| *t).collect();
                    extra = roofline::lift_columns(
                        &costs.table,
                        &program,
                        &sizes,
                        &config.targets,
                        &refused,
                    );
                    if !failed.is_empty() {
                        let names: Vec<String> = failed
                            .iter()
                            .map(|(t, e)| format!("{}: {e}", t.name()))
                            .collect();
                        message = format!("not emitted: {}", names.join("; "));
                    }
                    lifted.push(Lifted {
                        kernel: kernel.clone(),
                        dir,
                    });
                }
                Err(e) => {
                    status = "error".into();
                    message = e.to_string();
                }
            }
        }
        let stat = |key: &str| -> String {
            outcome
                .stats
                .as_ref()
                .and_then(|s| s.get(key))
                .map(|v| v.to_string())
                .unwrap_or_default()
        };
        let mut row = vec![
            kernel.name.clone(),
            kernel.suite.clone(),
            kernel.function.clone(),
            status,
            format!("{:.4}", outcome.time_s),
            outcome.cost.map(|c| format!("{c}")).unwrap_or_default(),
            ops,
        ];
        row.extend(STAT_COLUMNS.iter().map(|k| stat(k)));
        row.push(message);
        row.extend(extra);
        table.rows.push(row);
    }
    table.write(&config.out.join("lift.csv"))?;
    Ok((table, lifted))
}

fn plan_for(config: &BenchConfig, lifted: &[Lifted], base: &Path, cleanup: bool) -> Plan {
    let relative = |p: &Path| -> String {
        p.strip_prefix(base)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let work = if cleanup {
        config.work_dir()
    } else {
        base.join("data")
    };
    let mut variants: Vec<String> = C_VARIANTS.iter().map(|s| s.to_string()).collect();
    variants.extend(
        LIFTED_VARIANTS
            .iter()
            .filter(|v| config.targets.iter().any(|t| t == *v))
            .map(|s| s.to_string()),
    );
    Plan {
        manifest: config.manifest.to_string_lossy().into_owned(),
        dataset: config.dataset.clone(),
        repeat: config.repeat,
        timeout_s: config.runtime_timeout_s,
        variants,
        cleanup,
        kernels: lifted
            .iter()
            .map(|l| {
                let data = work.join(&l.kernel.name);
                PlanKernel {
                    name: l.kernel.name.clone(),
                    suite: l.kernel.suite.clone(),
                    dir: relative(&l.dir),
                    inputs: relative(&data.join("inputs")),
                    reference: relative(&data.join("reference")),
                    c_outputs: relative(&data.join("c")),
                    outputs: l.kernel.outputs.clone(),
                }
            })
            .collect(),
    }
}

/// With `--no-runtime`, the plan of the measurements that were not run, so
/// that they can run later or on another machine holding the same checkout
/// (a GPU machine: `bench_runner.py run --plan OUT/plan.json --device cuda
/// --jobs N --c-reference-only`). Its data paths are relative to the result
/// directory and the data is removed kernel by kernel as it is measured,
/// so the plan travels with the directory and a full LARGE run does not
/// fill the disk.
fn write_portable_plan(config: &BenchConfig, lifted: &[Lifted]) -> Result<(), BenchError> {
    let mut plan = plan_for(config, lifted, &config.out, false);
    plan.cleanup = true;
    if let Some(relative) = relative_to(&config.manifest, &config.out) {
        plan.manifest = relative.to_string_lossy().into_owned();
    }
    plan.write(&config.out.join("plan.json"))
}

/// `path` relative to the directory `dir` (`../../benchmarks/manifest.toml`),
/// so that a plan names its manifest wherever the checkout lies; None when
/// either cannot be resolved.
fn relative_to(path: &Path, dir: &Path) -> Option<PathBuf> {
    let path = std::fs::canonicalize(path).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    let common = path
        .components()
        .zip(dir.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut relative = PathBuf::new();
    for _ in dir.components().skip(common) {
        relative.push("..");
    }
    relative.extend(path.components().skip(common));
    Some(relative)
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `tenslift bench`: the whole run.
pub fn run(
    config: &BenchConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<RunReport, BenchError> {
    config.check()?;
    let started = now_unix();
    let clock = Instant::now();
    let manifest = Manifest::load(&config.manifest)?;
    let (kernels, selection) = select_kernels(&manifest, config)?;
    std::fs::create_dir_all(&config.out).map_err(BenchError::io(&config.out))?;
    let (lift_table, lifted) = lift_all(&manifest, &kernels, config, progress)?;
    let lift_wall_s = clock.elapsed().as_secs_f64();
    let runtime_csv = config.out.join("runtime.csv");
    let runtime_table = if config.runtime {
        progress(Progress::RuntimeStarted {
            kernels: lifted.len(),
        });
        let _ = std::fs::remove_file(&runtime_csv);
        let plan = plan_for(config, &lifted, &config.out, true);
        let plan_path = config.out.join("plan.json");
        plan.write(&plan_path)?;
        let log = config.out.join("runtime.log");
        run_runner(&RunnerCall {
            python: &config.python,
            script: &config.root.join("scripts").join("bench_runner.py"),
            plan: &plan_path,
            csv: &runtime_csv,
            skip_c: false,
            skip_python: false,
            device: &config.device,
            log: config.quiet.then_some(log.as_path()),
        })?;
        if runtime_csv.is_file() {
            Some(Table::read(&runtime_csv)?)
        } else {
            None
        }
    } else {
        write_portable_plan(config, &lifted)?;
        None
    };
    let wall_s = clock.elapsed().as_secs_f64();
    let info = RunInfo {
        selection,
        ..run_info(config, started, lift_wall_s, wall_s)
    };
    finish(&config.out, &info, &lift_table, runtime_table.as_ref())?;
    let plot_error = plot(&config.python, &config.root, &config.out).err();
    Ok(RunReport {
        out: config.out.clone(),
        kernels: kernels.len(),
        lifted: lifted.len(),
        info,
        plot_error,
    })
}

/// Writes run.json and summary.md of a result directory.
pub fn finish(
    out: &Path,
    info: &RunInfo,
    lift: &Table,
    runtime: Option<&Table>,
) -> Result<(), BenchError> {
    let json = serde_json::to_string_pretty(info)
        .map_err(|e| BenchError::Runner(format!("cannot encode run.json: {e}")))?;
    write_text(&out.join("run.json"), &(json + "\n"))?;
    if let Some(runtime) = runtime {
        roofline::table(lift, runtime).write(&out.join("roofline.csv"))?;
    }
    write_text(&out.join("summary.md"), &render(info, lift, runtime))
}

/// Draws the figures with scripts/bench_plots.py into `<out>/plots/`.
pub fn plot(python: &Path, root: &Path, out: &Path) -> Result<(), String> {
    let script = root.join("scripts").join("bench_plots.py");
    let done = std::process::Command::new(python)
        .arg(&script)
        .arg("--run")
        .arg(out)
        .output()
        .map_err(|e| format!("cannot start {}: {e}", python.display()))?;
    if done.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&done.stderr)
            .lines()
            .last()
            .unwrap_or("bench_plots.py failed")
            .to_string())
    }
}

/// `--export-bundle DIR`: lift, then write a self-contained directory with
/// the modules, inputs, C reference outputs and C timings and the runner,
/// for a machine with a GPU and Python but no Rust, libclang or Z3.
pub fn export_bundle(
    config: &BenchConfig,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<RunReport, BenchError> {
    config.check()?;
    let started = now_unix();
    let clock = Instant::now();
    let manifest = Manifest::load(&config.manifest)?;
    let (kernels, selection) = select_kernels(&manifest, config)?;
    let bundle = &config.out;
    std::fs::create_dir_all(bundle).map_err(BenchError::io(bundle))?;
    let (lift_table, lifted) = lift_all(&manifest, &kernels, config, progress)?;
    let lift_wall_s = clock.elapsed().as_secs_f64();
    let plan = plan_for(config, &lifted, bundle, false);
    let plan_path = bundle.join("plan.json");
    plan.write(&plan_path)?;
    progress(Progress::RuntimeStarted {
        kernels: lifted.len(),
    });
    let c_csv = bundle.join("c_runtime.csv");
    let _ = std::fs::remove_file(&c_csv);
    let log = bundle.join("c_runtime.log");
    let script = config.root.join("scripts").join("bench_runner.py");
    run_runner(&RunnerCall {
        python: &config.python,
        script: &script,
        plan: &plan_path,
        csv: &c_csv,
        skip_c: false,
        skip_python: true,
        device: "cpu",
        log: config.quiet.then_some(log.as_path()),
    })?;
    let runner_text = super::read_text(&script)?;
    write_text(&bundle.join("bench_runner.py"), &runner_text)?;
    write_text(&bundle.join("README.md"), BUNDLE_README)?;
    let wall_s = clock.elapsed().as_secs_f64();
    let info = RunInfo {
        selection,
        ..run_info(config, started, lift_wall_s, wall_s)
    };
    let c_table = Table::read(&c_csv).ok();
    finish(bundle, &info, &lift_table, c_table.as_ref())?;
    Ok(RunReport {
        out: bundle.clone(),
        kernels: kernels.len(),
        lifted: lifted.len(),
        info,
        plot_error: None,
    })
}

const BUNDLE_README: &str = "# tenslift benchmark bundle\n\n\
Made by `tenslift bench --export-bundle` (the command is in run.json). It holds the\n\
lifted modules (kernels/<name>/), their inputs and the C reference outputs (data/),\n\
the C timings of the exporting machine (c_runtime.csv) and the runner. On a machine\n\
with a CUDA GPU and Python with numpy, jax[cuda] and torch:\n\n\
```sh\n\
python bench_runner.py run --plan plan.json --csv results/runtime.csv --skip-c --device cuda\n\
python bench_runner.py run --plan plan.json --csv results/runtime.csv --skip-c --device cpu  # optional\n\
```\n\n\
Then, where tenslift is installed: `tenslift bench --import BUNDLE --out results/RUN`.\n";
