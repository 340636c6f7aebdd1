//! `tenslift verify FILE.c [--function F]... [--program P.tensir]
//! [--targets numpy,jax,pytorch,hlo] [--timeout S] [--lift-timeout S] [--run-timeout S] [--json]
//! [--report DIR]`:
//! lifts each kernel (or takes the given program) and checks it three ways:
//! Z3 bounded equivalence at two size tuples, the unbounded prover, and
//! differential runs of the generated code against the gcc-compiled C. One
//! summary line per kernel on stderr, or one JSON object per kernel on
//! stdout with `--json`; `--report DIR` writes Markdown, HTML and JSON.
//!
//! Exit codes: 0 nothing failed; 1 the C was rejected; 2 usage or I/O;
//! 3 no such kernel; 5 some kernel was not lifted; 6 a check failed (a
//! counterexample, a mismatch against the C, a disproof).
//!
//! Manifest kernels are run against `scripts/cref.py` at two datasets, whose
//! C is compiled with the dataset's sizes as `-D` macros. The kernel is
//! extracted again with those macros for each dataset; where that changes
//! it (extents that are macros), the program for that dataset is lifted
//! from the re-extracted kernel (a `--program` is held against it as given).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tenslift_frontend::ir::Kernel;
use tenslift_frontend::Options;
use tenslift_targets::runner::python_interpreter;
use tenslift_targets::{parse_program, print_program, Program, Target};
use tenslift_verify::bounded::{check, BoundedOptions};
use tenslift_verify::differential::cdriver::{run_generated, CompileFlags, DriverSetup};
use tenslift_verify::differential::manifest::ManifestKernel;
use tenslift_verify::differential::{
    compare, compare_each, manifest, scratch_dir, CReference, Checked, DifferentialError,
    DifferentialResult, Verdict,
};
use tenslift_verify::report::sizes_text;
use tenslift_verify::reports::{
    render_json, write_reports, BoundedRun, KernelVerification, Status, UnboundedSummary,
    BOUNDED_ARITHMETIC,
};
use tenslift_verify::{prove, BoundedResult, UnboundedOptions, UnboundedResult, VerifyError};

use super::cflags::CFlags;
use super::{
    print_err, print_out, require_kernels, EXIT_NOT_LIFTED, EXIT_OK, EXIT_USAGE, EXIT_VERIFY_FAILED,
};
use crate::spec::{choose_second_sizes, choose_sizes, Sizes};
use crate::synth::lift_kernel;
use crate::synth::SynthOptions;

/// The repository the binary was built from: the manifest, `scripts/cref.py`
/// and the default Python environment live here.
pub const WORKSPACE_ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The C file.
    pub file: PathBuf,
    /// Verify only these kernels (repeatable); default: every kernel.
    #[arg(long)]
    pub function: Vec<String>,
    /// Check this TensIR program instead of lifting (needs one kernel).
    #[arg(long)]
    pub program: Option<PathBuf>,
    /// Targets for the differential runs (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "numpy,jax,pytorch,hlo")]
    pub targets: Vec<String>,
    /// Seconds of Z3 work for each check (bounded: per size tuple;
    /// unbounded: per verification condition).
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Seconds for the search when the kernel is lifted here, as
    /// `tenslift lift --timeout` (default: the same 60 s, so `verify` lifts
    /// what `lift` lifts).
    #[arg(long, value_name = "S", default_value_t = 60.0)]
    pub lift_timeout: f64,
    /// Seconds each target's differential batch may run (its compile
    /// included) before it is killed and counted as undecided.
    #[arg(long, value_name = "S", default_value_t = DEFAULT_RUN_TIMEOUT.as_secs_f64())]
    pub run_timeout: f64,
    /// Skip the unbounded prover (reported as not run): the bounded and
    /// differential checks alone, when a kernel's invariants are known to be
    /// out of the prover's reach and its conditions would each spend the
    /// whole `--timeout` before it gives up.
    #[arg(long)]
    pub no_unbounded: bool,
    /// Print one JSON object per kernel on stdout.
    #[arg(long)]
    pub json: bool,
    /// Write Markdown, HTML and JSON reports into this directory.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub cflags: CFlags,
}

/// What `--assume-in-domain` adds to the bounded check's arithmetic.
const DOMAIN_ARITHMETIC: &str = "--assume-in-domain: every log and sqrt argument of the input \
     assumed positive, with sqrt(u)^2 = u, sqrt(u) >= 0 and exp(log u) = u there";

/// `--run-timeout`'s default: long enough for Inductor and XLA to compile
/// a corpus kernel on a loaded 2-core machine, short of a hang.
pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// What every check needs besides the kernel and the program.
pub struct VerifySetup {
    pub file: PathBuf,
    pub targets: Vec<Target>,
    /// Z3's budget per check.
    pub timeout: Duration,
    /// The search's deadline when a kernel (or a dataset's variant of it)
    /// is lifted for the check.
    pub lift_timeout: Duration,
    /// How long one target's differential batch may run.
    pub run_timeout: Duration,
    pub compile: CompileFlags,
    /// How the frontend read the file (the user's `-I`/`-D`/`-p`): the base
    /// for re-extracting a kernel with a dataset's macros.
    pub frontend: Options,
    /// Whether a dataset whose macros change the kernel gets a program
    /// lifted for it (`false` when the user gave the program).
    pub relift: bool,
    /// Whether the bounded checks decide real queries in a `z3` child
    /// ([`BoundedOptions::isolated`]): for a program the user gave.
    pub isolate_bounded: bool,
    /// Whether the unbounded prover runs (`verify --no-unbounded` turns it off).
    pub unbounded: bool,
}

impl VerifySetup {
    pub fn new(file: &Path, cflags: &CFlags, targets: Vec<Target>, timeout: Duration) -> Self {
        let frontend = cflags
            .options(file, Vec::new())
            .unwrap_or_else(|_| Options {
                include_dirs: cflags.include_dirs.clone(),
                defines: cflags.defines.clone(),
                ..Options::default()
            });
        VerifySetup {
            file: file.to_path_buf(),
            targets,
            timeout,
            lift_timeout: timeout,
            run_timeout: DEFAULT_RUN_TIMEOUT,
            compile: CompileFlags {
                include_dirs: cflags.include_dirs.clone(),
                defines: cflags.defines.clone(),
            },
            frontend,
            relift: true,
            isolate_bounded: false,
            unbounded: true,
        }
    }
}

/// Parses `--targets`.
pub fn parse_targets(names: &[String]) -> Result<Vec<Target>, String> {
    names
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .map(|n| {
            Target::from_name(n)
                .ok_or_else(|| format!("unknown target `{n}` (numpy, jax, pytorch, hlo)"))
        })
        .collect()
}

pub fn run(args: VerifyArgs) -> i32 {
    for (flag, value) in [
        ("--timeout", args.timeout),
        ("--lift-timeout", args.lift_timeout),
        ("--run-timeout", args.run_timeout),
    ] {
        if !(value.is_finite() && value > 0.0) {
            print_err(&format!(
                "error: {flag} must be a positive number of seconds\n"
            ));
            return EXIT_USAGE;
        }
    }
    let targets = match parse_targets(&args.targets) {
        Ok(t) => t,
        Err(message) => {
            print_err(&format!("error: {message}\n"));
            return EXIT_USAGE;
        }
    };
    let path = args.file.as_path();
    let options = match args
        .cflags
        .options_within(path, args.function.clone(), args.timeout)
    {
        Ok(o) => o,
        Err(message) => {
            print_err(&format!("error: {message}\n"));
            return EXIT_USAGE;
        }
    };
    let given = match &args.program {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(text) => match parse_program(&p.to_string_lossy(), &text) {
                Ok(program) => Some(program),
                Err(d) => {
                    print_err(&format!("{d}\n"));
                    return EXIT_USAGE;
                }
            },
            Err(e) => {
                print_err(&format!("error: cannot read {}: {e}\n", p.display()));
                return EXIT_USAGE;
            }
        },
        None => None,
    };
    let unit = match tenslift_frontend::extract(&path.to_string_lossy(), &options) {
        Ok(unit) => unit,
        Err(error) => return super::report_extract_error(&error),
    };
    if let Err(code) = require_kernels(path, &unit, &args.function) {
        return code;
    }
    if let (Some(_), Some(k)) = (&given, unit.kernels.iter().find(|k| k.case.is_some())) {
        print_err(&format!(
            "error: `{}` tests its increments and is checked case by case; --program checks a \
             kernel of one case\n",
            k.name
        ));
        return EXIT_USAGE;
    }
    if given.is_some() && unit.kernels.len() != 1 {
        print_err("error: --program checks one kernel; choose it with --function\n");
        return EXIT_USAGE;
    }
    let mut setup = VerifySetup::new(
        path,
        &args.cflags,
        targets,
        Duration::from_secs_f64(args.timeout),
    );
    setup.relift = given.is_none();
    setup.isolate_bounded = given.is_some();
    setup.lift_timeout = Duration::from_secs_f64(args.lift_timeout);
    setup.run_timeout = Duration::from_secs_f64(args.run_timeout);
    setup.unbounded = !args.no_unbounded;
    let mut results = Vec::new();
    let mut not_lifted = false;
    // A function that picks its computation by testing its flags is
    // checked case by case, as `lift` lifts it (`synth::cases`).
    let work: Vec<Kernel> = match &given {
        None => crate::synth::cases::each_case(&unit.kernels),
        Some(_) => unit.kernels.clone(),
    };
    for kernel in &work {
        let start = Instant::now();
        let (program, origin) = match &given {
            Some(p) => (Some(p.clone()), "given".to_string()),
            None => {
                let synth = SynthOptions {
                    timeout: setup.lift_timeout,
                    ..SynthOptions::default()
                };
                let outcome = lift_kernel(kernel, &synth);
                let why = outcome
                    .error()
                    .map(|e| e.to_string())
                    .or_else(|| outcome.partial_failure())
                    .unwrap_or_else(|| "no program".to_string());
                (outcome.program().cloned(), format!("not lifted: {why}"))
            }
        };
        let origin = match (&args.program, &program) {
            (Some(p), _) => p.display().to_string(),
            (None, Some(_)) => "lifted".to_string(),
            (None, None) => origin,
        };
        not_lifted |= program.is_none();
        let verification = verify_kernel(&setup, kernel, program.as_ref(), &origin);
        let seconds = start.elapsed().as_secs_f64();
        print_err(&summary_line(path, &verification, seconds));
        if args.json {
            print_out(&format!("{}\n", render_json(&verification)));
        }
        results.push(verification);
    }
    if let Some(dir) = &args.report {
        if let Err(e) = write_reports(dir, &results) {
            print_err(&format!(
                "error: cannot write reports into {}: {e}\n",
                dir.display()
            ));
            return EXIT_USAGE;
        }
    }
    if results
        .iter()
        .any(|r| r.program_text.is_some() && r.failed())
    {
        EXIT_VERIFY_FAILED
    } else if not_lifted {
        EXIT_NOT_LIFTED
    } else {
        EXIT_OK
    }
}

fn summary_line(path: &Path, v: &KernelVerification, seconds: f64) -> String {
    if v.program_text.is_none() {
        return format!(
            "{}: {}: {} ({seconds:.1} s)\n",
            path.display(),
            v.function,
            v.header_status()
        );
    }
    let mut line = format!(
        "{}: {}: bounded {}, unbounded {}, differential {} -> {} ({seconds:.1} s)\n",
        path.display(),
        v.function,
        v.bounded_status().name(),
        v.unbounded_status(),
        v.differential.verdict.name(),
        v.header_status()
    );
    if !v.reason.is_empty() && !v.verified() {
        for l in v.reason.lines() {
            line.push_str(&format!("  {l}\n"));
        }
    }
    line
}

/// Runs every check of `program` against `kernel` (`None`: lifting failed,
/// only the source is reported).
pub fn verify_kernel(
    setup: &VerifySetup,
    kernel: &Kernel,
    program: Option<&Program>,
    origin: &str,
) -> KernelVerification {
    let against_c = |first: Option<&Sizes>| match program {
        Some(p) => differential(setup, kernel, p, first),
        None => DifferentialResult::skipped("no program"),
    };
    verify_kernel_with(setup, kernel, program, origin, &against_c)
}

/// [`verify_kernel`] with the differential run given: `tenslift optimize`
/// runs the program against the input NumPy function instead of the C.
/// `differential` gets the first bounded size tuple.
pub fn verify_kernel_with(
    setup: &VerifySetup,
    kernel: &Kernel,
    program: Option<&Program>,
    origin: &str,
    differential: &dyn Fn(Option<&Sizes>) -> DifferentialResult,
) -> KernelVerification {
    let mut v = KernelVerification {
        file: setup.file.display().to_string(),
        function: crate::synth::cases::label(kernel),
        source_range: (
            kernel.range.file.clone(),
            kernel.range.start_line,
            kernel.range.end_line,
        ),
        source_text: source_lines(
            Path::new(&kernel.range.file),
            kernel.range.start_line,
            kernel.range.end_line,
        ),
        program_text: program.map(print_program),
        program_origin: origin.to_string(),
        bounded: Vec::new(),
        unbounded: UnboundedSummary::not_run("the unbounded prover is not available in this build"),
        differential: DifferentialResult::skipped("not run"),
        arithmetic: if crate::algebra::domain::assume_in_domain() {
            format!("{BOUNDED_ARITHMETIC}; {DOMAIN_ARITHMETIC}")
        } else {
            BOUNDED_ARITHMETIC.to_string()
        },
        reason: String::new(),
    };
    let Some(program) = program else {
        v.reason = origin.to_string();
        v.differential = DifferentialResult::skipped("no program");
        return v;
    };
    let first = choose_sizes(kernel, &Sizes::new());
    let second = first
        .as_ref()
        .ok()
        .and_then(|f| choose_second_sizes(kernel, f).ok());
    let mut tuples = Vec::new();
    match &first {
        Ok(f) => tuples.push(f.clone()),
        Err(e) => v.reason = format!("no valid size tuple: {e}"),
    }
    tuples.extend(second);
    let bounded_options = BoundedOptions {
        timeout_ms: u64::try_from(setup.timeout.as_millis()).unwrap_or(u64::MAX),
        // The user's `--assume-in-domain`, set process-wide by the command.
        assume_in_domain: crate::algebra::domain::assume_in_domain(),
        isolated: setup.isolate_bounded,
    };
    for sizes in &tuples {
        let started = Instant::now();
        let (status, detail) = match check(kernel, program, sizes, &bounded_options) {
            Ok(result @ BoundedResult::Pass { .. }) => (Status::Pass, result.to_string()),
            Ok(result @ BoundedResult::Fail { .. }) => (Status::Fail, result.to_string()),
            Ok(result @ BoundedResult::Unknown { .. }) => (Status::Unknown, result.to_string()),
            // A program that does not fit the C's interface, or cannot run
            // where the C can, is wrong, not undecided.
            Err(e @ (VerifyError::Interface(_) | VerifyError::Program(_))) => {
                (Status::Fail, e.to_string())
            }
            Err(e) => (Status::Unknown, e.to_string()),
        };
        v.bounded.push(BoundedRun {
            sizes: sizes.clone(),
            status,
            detail,
            elapsed_ms: started.elapsed().as_millis(),
        });
    }
    v.unbounded = if setup.unbounded {
        unbounded_summary(kernel, program, setup)
    } else {
        UnboundedSummary::not_run("not run (--no-unbounded)")
    };
    v.differential = differential(tuples.first());
    v.reason = reason(&v);
    v
}

/// The unbounded prover's verdict, in report form.
fn unbounded_summary(kernel: &Kernel, program: &Program, setup: &VerifySetup) -> UnboundedSummary {
    let options = UnboundedOptions {
        timeout_ms: u64::try_from(setup.timeout.as_millis()).unwrap_or(u64::MAX),
        assume_in_domain: crate::algebra::domain::assume_in_domain(),
    };
    match prove(kernel, program, &options) {
        UnboundedResult::Proved {
            invariants,
            conditions,
            arithmetic,
        } => UnboundedSummary {
            status: "proved".to_string(),
            detail: format!("proved for all sizes ({conditions} verification conditions)"),
            invariants,
            conditions,
            arithmetic,
        },
        UnboundedResult::Unknown { condition, reason } => UnboundedSummary {
            status: "unknown".to_string(),
            detail: format!("{condition}: {reason}"),
            ..UnboundedSummary::not_run("")
        },
        UnboundedResult::Failed {
            condition,
            counterexample,
        } => UnboundedSummary {
            status: "fail".to_string(),
            detail: match counterexample {
                Some(c) => format!("{condition} fails: {c}"),
                None => format!("{condition} fails"),
            },
            ..UnboundedSummary::not_run("")
        },
    }
}

/// Why the kernel is not (fully) verified: failures first, then unknowns.
fn reason(v: &KernelVerification) -> String {
    let mut failures = Vec::new();
    let mut open = Vec::new();
    for b in &v.bounded {
        let text = format!("bounded at {}: {}", sizes_text(&b.sizes), b.detail);
        match b.status {
            Status::Fail => failures.push(text),
            Status::Unknown => open.push(text),
            Status::Pass => {}
        }
    }
    match v.unbounded_status() {
        "fail" => failures.push(format!("unbounded: {}", v.unbounded.detail)),
        "unknown" => open.push(format!("unbounded: {}", v.unbounded.detail)),
        _ => {}
    }
    match v.differential.verdict {
        Verdict::Fail => failures.push(format!("differential: {}", v.differential.reason)),
        Verdict::Skipped => open.push(format!("differential skipped: {}", v.differential.reason)),
        Verdict::Pass => {}
    }
    if !failures.is_empty() {
        failures.join("\n")
    } else {
        open.join("\n")
    }
}

fn differential(
    setup: &VerifySetup,
    kernel: &Kernel,
    program: &Program,
    first: Option<&Sizes>,
) -> DifferentialResult {
    if setup.targets.is_empty() {
        return DifferentialResult::skipped("no targets chosen");
    }
    let workspace = Path::new(WORKSPACE_ROOT);
    let python = python_interpreter(workspace);
    let workdir = match scratch_dir() {
        Ok(d) => d,
        Err(e) => return DifferentialResult::skipped(format!("no temporary directory: {e}")),
    };
    let entry = match manifest::find(workspace, &setup.file, &kernel.name) {
        Ok(entry) => entry.filter(|e| MANIFEST_DATASETS.iter().any(|d| e.sizes.contains_key(*d))),
        Err(e) => return DifferentialResult::skipped(format!("the C reference did not run: {e}")),
    };
    if let Some(entry) = entry {
        return manifest_differential(setup, kernel, program, &entry, &python, workdir.path());
    }
    let references = match generated_references(setup, kernel, program, first, workdir.path()) {
        Ok(r) => r,
        // The generated module cannot even take the C's arguments.
        Err(e @ DifferentialError::Interface(_)) => {
            return DifferentialResult {
                verdict: Verdict::Fail,
                reason: e.to_string(),
                runs: Vec::new(),
            }
        }
        Err(e) => return DifferentialResult::skipped(format!("the C reference did not run: {e}")),
    };
    compare(
        kernel,
        program,
        &references,
        &setup.targets,
        &python,
        workdir.path(),
        Some(setup.run_timeout),
    )
}

/// The manifest datasets the differential run uses.
const MANIFEST_DATASETS: [&str; 2] = ["MINI", "SMALL"];

/// The kernel and program for one dataset of a manifest kernel.
struct DatasetProgram {
    kernel: Kernel,
    program: Program,
    /// `Some(defines)` when the dataset's macros changed the kernel.
    relifted: Option<Vec<String>>,
}

/// The manifest's MINI and SMALL datasets through `cref.py`, each compared
/// with the program for that dataset's macros.
fn manifest_differential(
    setup: &VerifySetup,
    kernel: &Kernel,
    program: &Program,
    entry: &ManifestKernel,
    python: &Path,
    workdir: &Path,
) -> DifferentialResult {
    let workspace = Path::new(WORKSPACE_ROOT);
    let mut per_dataset = Vec::new();
    let mut references = Vec::new();
    let mut notes = Vec::new();
    for dataset in MANIFEST_DATASETS {
        if !entry.sizes.contains_key(dataset) {
            continue;
        }
        let chosen = match program_for_dataset(setup, kernel, program, entry, dataset) {
            Ok(chosen) => chosen,
            Err(why) => {
                notes.push(format!("{dataset} not checked: {why}"));
                continue;
            }
        };
        match manifest::run_cref(workspace, python, entry, dataset, 0, workdir) {
            Ok(mut reference) => {
                // The manifest sizes the loops; a declared extent is the
                // extent the C's array has at this dataset (a program lifted
                // at another dataset carries that dataset's value).
                for e in &chosen.program.meta.extents {
                    let given = reference.inputs.get(&e.array);
                    let value = given.and_then(|a| a.shape.get(e.dim)).map(|&v| v as i64);
                    reference
                        .sizes
                        .entry(e.name.clone())
                        .or_insert(value.unwrap_or(e.value));
                }
                for (name, value) in build_extents(&chosen.kernel) {
                    reference.sizes.entry(name).or_insert(value);
                }
                references.push(reference)
            }
            Err(e) => {
                return DifferentialResult::skipped(format!("the C reference did not run: {e}"))
            }
        }
        if let Some(defines) = &chosen.relifted {
            notes.push(format!(
                "{dataset}: {} with -D{}",
                if setup.relift {
                    "program lifted"
                } else {
                    "kernel read"
                },
                defines.join(" -D")
            ));
        }
        per_dataset.push(chosen);
    }
    if per_dataset.is_empty() {
        return DifferentialResult::skipped(notes.join("; "));
    }
    let checked: Vec<Checked> = per_dataset
        .iter()
        .zip(&references)
        .map(|(d, reference)| Checked {
            kernel: &d.kernel,
            program: &d.program,
            reference,
        })
        .collect();
    let mut result = compare_each(
        &checked,
        &setup.targets,
        python,
        workdir,
        Some(setup.run_timeout),
    );
    if !notes.is_empty() {
        result.reason = format!("{} ({})", result.reason, notes.join("; "));
    }
    result
}

/// The kernel as the frontend reads it with `dataset`'s sizes as macros
/// (what `cref.py` compiles), and the program to check against it: the
/// given one when the macros change nothing (or the user gave it), else
/// one lifted from the re-extracted kernel.
fn program_for_dataset(
    setup: &VerifySetup,
    kernel: &Kernel,
    program: &Program,
    entry: &ManifestKernel,
    dataset: &str,
) -> Result<DatasetProgram, String> {
    let defines = entry.defines(dataset);
    let mut options = setup.frontend.clone();
    options.functions = vec![kernel.name.clone()];
    // After the user's own: the dataset's value wins, as in cref.py's build.
    options.defines.extend(defines.iter().cloned());
    options.include_dirs.extend(entry.include_dirs());
    let unit = tenslift_frontend::extract(&setup.file.to_string_lossy(), &options)
        .map_err(|e| format!("the C cannot be read with -D{}: {e}", defines.join(" -D")))?;
    // A case is split again out of the kernel read with the macros.
    let same_case = |(k, split): (Kernel, Option<crate::synth::cases::Split>)| match &kernel.case {
        Some(c) => split.and_then(|s| s.cases.into_iter().nth(c.number - 1)),
        None => Some(k),
    };
    let Some(at_dataset) = crate::synth::cases::plan(&unit.kernels)
        .into_iter()
        .find(|(k, _)| k.name == kernel.name)
        .and_then(same_case)
    else {
        return Err(format!(
            "no kernel `{}` with -D{}",
            kernel.name,
            defines.join(" -D")
        ));
    };
    if at_dataset.same_for_every_macro_value(kernel) {
        return Ok(DatasetProgram {
            kernel: at_dataset,
            program: program.clone(),
            relifted: None,
        });
    }
    let program = if setup.relift {
        let synth = SynthOptions {
            timeout: setup.lift_timeout,
            ..SynthOptions::default()
        };
        let outcome = lift_kernel(&at_dataset, &synth);
        match outcome.program() {
            Some(p) => p.clone(),
            None => {
                let why = outcome
                    .error()
                    .map(|e| e.to_string())
                    .or_else(|| outcome.partial_failure())
                    .unwrap_or_else(|| "no program".to_string());
                return Err(format!("not lifted with -D{}: {why}", defines.join(" -D")));
            }
        }
    } else {
        program.clone()
    };
    Ok(DatasetProgram {
        kernel: at_dataset,
        program,
        relifted: Some(defines),
    })
}

/// The generated driver's outputs at the checked sizes and a moderate
/// tuple about four times larger (files outside the manifest).
fn generated_references(
    setup: &VerifySetup,
    kernel: &Kernel,
    program: &Program,
    first: Option<&Sizes>,
    workdir: &Path,
) -> Result<Vec<CReference>, DifferentialError> {
    let Some(small) = first else {
        return Err(DifferentialError::Tool(
            "no valid size tuple for the kernel".to_string(),
        ));
    };
    // The C declares its arrays at the extents' build values: the driver
    // passes arrays that large (the program reads and writes its region of
    // them), with every other size small.
    let pinned = build_extents(kernel);
    let small = &if pinned.is_empty() {
        small.clone()
    } else {
        choose_sizes(kernel, &pinned).map_err(|e| {
            DifferentialError::Tool(format!(
                "no small sizes fit the arrays at their declared extents: {e}"
            ))
        })?
    };
    let mut tuples = vec![("small", small.clone())];
    if let Some(moderate) = moderate_sizes(kernel, small, &pinned) {
        tuples.push(("moderate", moderate));
    }
    let driver = DriverSetup {
        source: &setup.file,
        flags: &setup.compile,
        workdir,
    };
    tuples
        .iter()
        .enumerate()
        .map(|(i, (label, sizes))| run_generated(&driver, kernel, program, sizes, i as u64, label))
        .collect()
}

/// A valid tuple a few times larger than `small` (each size scaled by 4,
/// else 2, plus one where that is valid), else any other valid tuple.
/// The one more makes sizes that small unroll factors do not divide
/// (`4 * 3 + 1 = 13`), so that C unrolled by hand runs both its main and
/// its clean-up loop against the program.
pub(crate) fn moderate_sizes(kernel: &Kernel, small: &Sizes, pinned: &Sizes) -> Option<Sizes> {
    if small.len() <= pinned.len() {
        return None;
    }
    for (factor, extra) in [(4, 1), (4, 0), (2, 1), (2, 0)] {
        let scaled: Sizes = small
            .iter()
            .map(|(k, v)| {
                let size = pinned.get(k).copied().unwrap_or(v * factor + extra);
                (k.clone(), size)
            })
            .collect();
        if let Ok(sizes) = choose_sizes(kernel, &scaled) {
            return Some(sizes);
        }
    }
    if !pinned.is_empty() {
        return None;
    }
    choose_second_sizes(kernel, small).ok()
}

/// The extent sizes (`Origin::Extent`) at the values this build declares.
fn build_extents(kernel: &Kernel) -> Sizes {
    kernel
        .params
        .iter()
        .filter_map(|p| match p.origin {
            tenslift_frontend::ir::Origin::Extent { value } => Some((p.name.clone(), value)),
            _ => None,
        })
        .collect()
}

/// Lines `start..=end` of `file` (empty when it cannot be read).
fn source_lines(file: &Path, start: u32, end: u32) -> String {
    let Ok(text) = std::fs::read_to_string(file) else {
        return String::new();
    };
    text.lines()
        .skip(start.saturating_sub(1) as usize)
        .take((end.saturating_sub(start) + 1) as usize)
        .collect::<Vec<_>>()
        .join("\n")
}
