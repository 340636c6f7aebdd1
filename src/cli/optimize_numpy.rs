//! `tenslift optimize PROG.py [--function F]... [--target numpy|jax|pytorch|hlo]
//! [--shapes A=n,k]... [-o OUT] [--verify] [--json] [--explain] [--assume-in-domain]`: reads
//! straight-line NumPy functions (STENSO's setting), searches the cheapest
//! equal TensIR program for each and emits it with a wrapper of the
//! input's own signature; with `--verify` it is checked like a lift (Z3 at
//! two size tuples, the unbounded prover, and differential runs against
//! the input function itself). One summary line per function on stderr,
//! or one JSON object per function on stdout with `--json`.
//! `--assume-in-domain` adds the identities that hold where every `log` and
//! `sqrt` argument is positive (`algebra::domain`), states that assumption in
//! the module and gives it to the bounded check.
//!
//! Exit codes: 0 every function optimised (the output is never costlier
//! than the input: when the search finds nothing cheaper, the input's own
//! TensIR is emitted); 1 the Python was refused (located diagnostics on
//! stderr); 2 usage or I/O; 3 no such function; 5 some function has no
//! program; 6 `--verify` found a program wrong; 7 past `--timeout`.
//! `-o` is written only when every function succeeded.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tenslift_frontend::Options;
use tenslift_targets::runner::python_interpreter;
use tenslift_targets::symmetry::apply_symmetry;
use tenslift_targets::{emit, print_program, EmitOptions, Program, Target};
use tenslift_verify::differential::cdriver::CompileFlags;
use tenslift_verify::differential::{compare, scratch_dir, DifferentialResult};
use tenslift_verify::reports::{render_json, KernelVerification};

use super::emit::parse_size;
use super::lift::{deliver, LiftTarget, SearchMode};
use super::verify::{moderate_sizes, verify_kernel_with, VerifySetup, WORKSPACE_ROOT};
use super::watchdog::{grace, Watchdog};
use super::{
    print_err, print_out, quiet, render_diagnostics, EXIT_NOT_LIFTED, EXIT_NO_KERNEL, EXIT_OK,
    EXIT_REJECTED, EXIT_USAGE, EXIT_VERIFY_FAILED,
};
use crate::cost::{complexity_degree, CostModel, CostTable};
use crate::numpy::optimize::{optimize, Chosen, Optimized, COMPARE_EXTENT};
use crate::numpy::signature::{parse_shapes_flag, ParamType};
use crate::numpy::wrapper::{core_name, wrapper};
use crate::numpy::{read, Lowered, ReadError};
use crate::spec::Sizes;
use crate::synth::SynthOptions;

#[derive(clap::Args, Debug)]
pub struct OptimizeArgs {
    /// The Python file.
    pub file: PathBuf,
    /// Optimise only these functions (repeatable); default: every
    /// top-level function, all in one module.
    #[arg(long)]
    pub function: Vec<String>,
    /// The code generation target (`auto` is not available here).
    #[arg(long, short, value_enum, default_value_t = LiftTarget::Numpy)]
    pub target: LiftTarget,
    /// A parameter's shape and dtype, `NAME=dim,dim[:f32]` (`NAME=` for an
    /// f64 scalar); wins over the `# tenslift:` comment.
    #[arg(long = "shapes", value_name = "NAME=DIMS", value_parser = parse_shapes_flag)]
    pub shapes: Vec<(String, ParamType)>,
    /// Write the generated code here (only when every function succeeded).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// An outer safety limit in seconds on each function's search; exit 7
    /// past it. The search's own limits are counted in work.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Multiplies every work limit of the search.
    #[arg(long, default_value_t = 1.0)]
    pub effort: f64,
    #[arg(long, value_enum, default_value_t = SearchMode::Best)]
    pub search: SearchMode,
    /// Price candidates with this calibration (from `tenslift calibrate`).
    #[arg(long, value_name = "FILE.json")]
    pub cost_table: Option<PathBuf>,
    /// Bind a size for `--target hlo` (static shapes), e.g. `--size n=1024`.
    #[arg(long = "size", value_name = "NAME=VALUE", value_parser = parse_size)]
    pub sizes: Vec<(String, i64)>,
    /// Verify each program (Z3 bounded, unbounded, differential against
    /// the input function) and record the verdict in the module's header.
    #[arg(long)]
    pub verify: bool,
    /// Keep the program as found: skip the symmetry rewrites the target
    /// runs faster (as `lift --no-symmetry`).
    #[arg(long)]
    pub no_symmetry: bool,
    /// Print which tactics the search tried and why each stopped.
    #[arg(long)]
    pub explain: bool,
    /// Print one JSON object per function on stdout.
    #[arg(long)]
    pub json: bool,
    /// Assume the inputs keep every `log` and `sqrt` argument positive
    /// (the program computes no NaN and divides by no zero root), and use
    /// the identities that hold there: `exp(log x) = x`,
    /// `exp(log a - log b) = a / b`, `sqrt(x)² = x`, `x / sqrt(x) =
    /// sqrt(x)`. The generated module states the assumption; where it does
    /// not hold, the output may be a number where the input is NaN.
    #[arg(long)]
    pub assume_in_domain: bool,
}

/// What `--assume-in-domain` asks of the caller, stated in the module.
pub(crate) const DOMAIN_PRECONDITION: &str = "every argument of `log` and `sqrt` in the input is \
     positive (--assume-in-domain: optimised with exp(log x) = x and sqrt(x)^2 = x; where the \
     input computes NaN, this program may compute a number)";

/// What one function gave, for the summary, the JSON and the module.
struct Report {
    optimized: Optimized,
    code: Option<Result<String, String>>,
    verification: Option<KernelVerification>,
    seconds: f64,
}

pub fn run(args: OptimizeArgs) -> i32 {
    let Some(target) = fixed_target(args.target) else {
        print_err("error: optimize needs a fixed --target (numpy, jax, pytorch or hlo)\n");
        return EXIT_USAGE;
    };
    let options = match synth_options(&args) {
        Ok(o) => o,
        Err(message) => {
            print_err(&format!("error: {message}\n"));
            return EXIT_USAGE;
        }
    };
    // Process-wide, before any expression is built (algebra::domain).
    crate::algebra::domain::set_assume_in_domain(args.assume_in_domain);
    let python = python_interpreter(Path::new(WORKSPACE_ROOT));
    let lowered = match read(&args.file, &python, &args.function, &args.shapes) {
        Ok(l) => l,
        Err(e) => return report_read_error(&e, &args),
    };
    if target == Target::Hlo && lowered.len() > 1 {
        print_err(&format!(
            "{}: error: --target hlo writes one module per function; choose one with --function\n",
            args.file.display()
        ));
        return EXIT_USAGE;
    }
    let setup = verify_setup(&args, target);
    let watchdog = Watchdog::start();
    let (mut module, mut all_ok, mut failed) = (String::new(), true, false);
    for l in &lowered {
        watchdog.arm(
            options.timeout + grace(options.timeout),
            format!("{}: {}: optimizing", args.file.display(), l.kernel.name),
        );
        let report = optimize_one(l, &options, &args, &setup, &python, &watchdog, target);
        failed |= report.verification.as_ref().is_some_and(|v| v.failed());
        match &report.code {
            Some(Ok(text)) => module.push_str(text),
            _ => all_ok = false,
        }
        print_report(&args, l, &report, target);
    }
    watchdog.disarm();
    if failed {
        return EXIT_VERIFY_FAILED;
    }
    if !all_ok {
        return EXIT_NOT_LIFTED;
    }
    deliver(args.output.as_deref(), &module, args.json, EXIT_OK)
}

fn fixed_target(t: LiftTarget) -> Option<Target> {
    match t {
        LiftTarget::Numpy => Some(Target::Numpy),
        LiftTarget::Jax => Some(Target::Jax),
        LiftTarget::Pytorch => Some(Target::Pytorch),
        LiftTarget::Hlo => Some(Target::Hlo),
        LiftTarget::Auto => None,
    }
}

fn synth_options(args: &OptimizeArgs) -> Result<SynthOptions, String> {
    if !(args.effort.is_finite() && args.effort > 0.0 && args.effort <= 1e6) {
        return Err("--effort must be a positive number (at most 1e6)".to_string());
    }
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err("--timeout must be a positive number of seconds".to_string());
    }
    let model = match &args.cost_table {
        None => CostModel::Analytic,
        Some(file) => CostModel::Calibrated(CostTable::load(file).map_err(|e| e.to_string())?),
    };
    Ok(SynthOptions {
        timeout: Duration::from_secs_f64(args.timeout),
        first: args.search == SearchMode::First,
        limits: crate::synth::Limits::default().scaled(args.effort),
        model,
        ..SynthOptions::default()
    })
}

fn report_read_error(e: &ReadError, args: &OptimizeArgs) -> i32 {
    match e {
        ReadError::Rejected(d) => {
            print_err(&render_diagnostics(d));
            if args.json {
                let record = json!({"file": args.file.display().to_string(), "function": null,
                                    "status": "rejected", "message": d.render()});
                print_out(&format!("{record}\n"));
            }
            let no_function = d.items.iter().any(|i| i.code.id == "NP002");
            if no_function {
                EXIT_NO_KERNEL
            } else {
                EXIT_REJECTED
            }
        }
        other => {
            print_err(&format!("error: {other}\n"));
            EXIT_USAGE
        }
    }
}

fn verify_setup(args: &OptimizeArgs, target: Target) -> VerifySetup {
    let timeout = Duration::from_secs_f64(args.timeout);
    VerifySetup {
        file: args.file.clone(),
        targets: vec![target],
        timeout,
        lift_timeout: timeout,
        run_timeout: super::verify::DEFAULT_RUN_TIMEOUT,
        compile: CompileFlags::default(),
        frontend: Options::default(),
        relift: false,
        isolate_bounded: false,
        unbounded: true,
    }
}

/// Searches, verifies (with `--verify`) and emits one function.
fn optimize_one(
    l: &Lowered,
    options: &SynthOptions,
    args: &OptimizeArgs,
    setup: &VerifySetup,
    python: &Path,
    watchdog: &Watchdog,
    target: Target,
) -> Report {
    let start = Instant::now();
    let optimized = optimize(l, options);
    let seconds = start.elapsed().as_secs_f64();
    let mut program = optimized.program().cloned();
    // As in `lift`: the rewrite depends on the target, so it runs here,
    // and what is verified and emitted is the rewritten program.
    if let (false, Some(p)) = (args.no_symmetry, program.as_mut()) {
        *p = apply_symmetry(p, Some(target)).0;
    }
    if let (true, Some(p)) = (args.assume_in_domain, program.as_mut()) {
        p.meta.preconditions.push(DOMAIN_PRECONDITION.to_string());
    }
    let mut verification = None;
    if let (true, Some(p)) = (args.verify, program.as_mut()) {
        // Verification has its own limits (Z3's, the Python runs').
        watchdog.disarm();
        let against = |first: Option<&Sizes>| against_input(setup, l, p, first, python);
        let v = verify_kernel_with(setup, &l.kernel, Some(p), "optimized", &against);
        p.meta.status = v.header_status();
        verification = Some(v);
    }
    watchdog.arm(
        grace(options.timeout),
        format!("{}: {}: emitting", args.file.display(), l.kernel.name),
    );
    let code = program
        .as_ref()
        .map(|p| emit_with_wrapper(l, p, target, args));
    Report {
        optimized,
        code,
        verification,
        seconds,
    }
}

/// The program as `<f>_core` in `target`, then the wrapper `f`.
fn emit_with_wrapper(
    l: &Lowered,
    p: &Program,
    target: Target,
    args: &OptimizeArgs,
) -> Result<String, String> {
    let mut core = p.clone();
    core.name = core_name(&l.kernel.name).as_str().into();
    let options = EmitOptions {
        sizes: args.sizes.iter().cloned().collect(),
    };
    let text = emit(&core, target, &options).map_err(|e| e.to_string())?;
    Ok(text + &wrapper(l, target))
}

/// The differential check: `program` against the input function itself,
/// at the first bounded size tuple and one about four times larger.
fn against_input(
    setup: &VerifySetup,
    l: &Lowered,
    program: &Program,
    first: Option<&Sizes>,
    python: &Path,
) -> DifferentialResult {
    let Some(small) = first else {
        return DifferentialResult::skipped("no valid size tuple");
    };
    let mut tuples = vec![("small".to_string(), small.clone())];
    if let Some(moderate) = moderate_sizes(&l.kernel, small, &Sizes::new()) {
        tuples.push(("moderate".to_string(), moderate));
    }
    let workdir = match scratch_dir() {
        Ok(d) => d,
        Err(e) => return DifferentialResult::skipped(format!("no temporary directory: {e}")),
    };
    match crate::numpy::reference::run(python, &setup.file, l, &tuples, workdir.path()) {
        Ok(references) => compare(
            &l.kernel,
            program,
            &references,
            &setup.targets,
            python,
            workdir.path(),
            Some(setup.run_timeout),
        ),
        Err(why) => DifferentialResult::skipped(format!("the input program did not run: {why}")),
    }
}

fn print_report(args: &OptimizeArgs, l: &Lowered, r: &Report, target: Target) {
    let file = args.file.display().to_string();
    let f = &l.kernel.name;
    let o = &r.optimized;
    let degree = |p: Option<&Program>| p.and_then(complexity_degree);
    let (before_degree, after_degree) = (degree(o.input.as_ref()), degree(o.program()));
    let shown = |c: Option<f64>| c.map_or("?".to_string(), |c| format!("{c:.3e}"));
    let status = match (&r.code, o.chosen) {
        (Some(Ok(_)), Chosen::Search) => "optimized",
        (Some(Ok(_)), _) => "unchanged",
        _ => "failed",
    };
    let detail = match (&r.code, o.outcome.error()) {
        (Some(Err(e)), _) => format!("emit: {e}"),
        (None, Some(e)) => e.to_string(),
        (None, None) => o
            .input_note
            .clone()
            .unwrap_or_else(|| "no program".to_string()),
        _ => String::new(),
    };
    let line = match status {
        "failed" => format!("{file}: {f}: failed after {:.2} s: {detail}\n", r.seconds),
        _ => format!(
            "{file}: {f}: {status} in {:.2} s, cost {} -> {} at sizes {COMPARE_EXTENT}, degree {} -> {}\n",
            r.seconds,
            shown(o.cost_before),
            shown(o.cost_after),
            before_degree.map_or("?".to_string(), |d| d.to_string()),
            after_degree.map_or("?".to_string(), |d| d.to_string()),
        ),
    };
    if !(quiet() && status != "failed") {
        print_err(&line);
    }
    if args.explain {
        print_err(&o.outcome.trace.render(f));
    }
    if let Some(v) = &r.verification {
        print_err(&format!(
            "{file}: {f}: verification: {}\n",
            v.header_status()
        ));
        if v.failed() {
            for line in v.reason.lines() {
                print_err(&format!("  {line}\n"));
            }
        }
    }
    if args.json {
        let record = json!({
            "file": file, "function": f, "status": status, "chosen": o.chosen.name(),
            "target": target.name(), "time_s": r.seconds,
            "program": o.program().map(print_program),
            "input_program": o.input.as_ref().map(print_program),
            "search_program": o.outcome.program().map(print_program),
            "input_note": o.input_note,
            "cost_before": o.cost_before, "cost_after": o.cost_after, "cost_sizes": COMPARE_EXTENT,
            "complexity_before": before_degree, "complexity_after": after_degree,
            "message": detail, "trace": &o.outcome.trace,
            "verification": r.verification.as_ref().map(render_json),
        });
        print_out(&format!("{record}\n"));
    }
}
