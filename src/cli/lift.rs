//! `tenslift lift FILE.c [--function F]... [--target numpy|jax|pytorch|hlo|auto]
//! [-o OUT] [--timeout S] [--search best|first] [--cost-table FILE.json]
//! [--sizes n=1000,m=800] [--json] [--verify]`: extracts each kernel,
//! searches a TensIR program equal to its spec at two size tuples, and
//! emits it (with `--target auto`, for the target predicted fastest at
//! `--sizes`: see [`super::auto`]); with `--verify` also
//! runs `tenslift verify`'s checks and writes the verdict into the module's
//! header. One summary line per kernel on stderr (or one JSON object per
//! kernel on stdout with `--json`).
//!
//! Exit codes: 0 every kernel lifted (whole, or partially: status
//! `partial` with `kept_loops`, a complete program that keeps the loops
//! carrying dependencies); 1 the C was rejected (diagnostics on stderr);
//! 2 usage or I/O; 3 no such kernel; 5 some kernel was not lifted (failed,
//! or only some outputs solved); 6 `--verify` found a program wrong; 7 the
//! parse ran past `--timeout`; 8 (a whole file, no `--function`) every
//! function that lowered was lifted and written, the others were refused
//! (their diagnostics on stderr, `rejected` records with `--json`, and a
//! `not lifted` line each at the top of the module). `-o` is
//! written only when every kernel lifted (and, with `--verify`, none failed), via a
//! temporary file renamed into place, so a failure leaves no file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tenslift_frontend::ExtractError;
use tenslift_targets::symmetry::apply_symmetry;
use tenslift_targets::{emit, print_program, EmitOptions, Target};
use tenslift_verify::reports::render_json;

use super::auto;
use super::cflags::CFlags;
use super::verify::{verify_kernel, VerifySetup};
use super::watchdog::{grace, Watchdog};
use super::{
    print_err, print_out, quiet, render_diagnostics, report_extract_error, require_kernels,
    EXIT_NOT_LIFTED, EXIT_OK, EXIT_REJECTED, EXIT_SOME_REFUSED, EXIT_USAGE, EXIT_VERIFY_FAILED,
};
use crate::synth::cases::{self, CaseTree, Split};
use crate::synth::cost::{complexity_degree, CostModel, CostTable};
use crate::synth::{lift_kernel, Outcome, SynthError, SynthOptions};
use tenslift_frontend::ir::Kernel;
use tenslift_targets::{emit_dispatch, Dispatch, Program};

/// The least time the parse gets, whatever `--timeout` says.
const MIN_PARSE_SECONDS: f64 = 5.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchMode {
    /// Keep searching after a solution for a cheaper one (branch and bound).
    Best,
    /// Return the first solution.
    First,
}

/// `--target`: one of the emitters, or `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LiftTarget {
    Numpy,
    Jax,
    Pytorch,
    Hlo,
    /// The target predicted fastest at `--sizes` (from the calibration).
    Auto,
}

impl LiftTarget {
    /// The target itself; `None` for `auto`.
    fn fixed(self) -> Option<Target> {
        match self {
            LiftTarget::Numpy => Some(Target::Numpy),
            LiftTarget::Jax => Some(Target::Jax),
            LiftTarget::Pytorch => Some(Target::Pytorch),
            LiftTarget::Hlo => Some(Target::Hlo),
            LiftTarget::Auto => None,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct LiftArgs {
    /// The C file.
    pub file: PathBuf,
    /// Lift only these kernels (repeatable); default: every kernel, all in
    /// one module.
    #[arg(long)]
    pub function: Vec<String>,
    /// The code generation target.
    #[arg(long, short, value_enum, default_value_t = LiftTarget::Numpy)]
    pub target: LiftTarget,
    /// Write the generated code here (only when every kernel lifted).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// An outer safety limit, in seconds, on each kernel's lift and on
    /// parsing the C (at least 5 s); exit 7 past it. The search's own
    /// limits are counted in work, so a lift that ends within it gives the
    /// same program on any machine.
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Print, per kernel, which tactics the search tried, how much work
    /// each did and why each stopped (on stderr).
    #[arg(long)]
    pub explain: bool,
    /// Search strategy.
    #[arg(long, value_enum, default_value_t = SearchMode::Best)]
    pub search: SearchMode,
    /// Multiplies every work limit of the search (libraries evaluated,
    /// search steps): 2 searches twice as far. The same effort gives the
    /// same program on any machine.
    #[arg(long, default_value_t = 1.0)]
    pub effort: f64,
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
    /// The sizes `--target auto` predicts at, comma-separated (default:
    /// the manifest's LARGE sizes for a corpus kernel, else the C's own
    /// extents, else 1000); they bind like `--size` too.
    #[arg(long = "sizes", value_name = "NAME=VALUE,...", value_delimiter = ',', value_parser = parse_size)]
    pub auto_sizes: Vec<(String, i64)>,
    /// Verify each program (Z3 bounded, unbounded, differential against
    /// the compiled C with this target) and record the verdict in the
    /// module's header; a failed verification writes nothing (exit 6).
    #[arg(long)]
    pub verify: bool,
    /// Keep the program as lifted: skip the symmetry rewrites that the
    /// chosen target runs faster (a symmetric product by BLAS syrk/syr2k,
    /// a transpose of a symmetric matrix dropped; see `tenslift emit
    /// --symmetry`).
    #[arg(long)]
    pub no_symmetry: bool,
    /// Assume the C keeps every `log` and `sqrt` argument positive (it
    /// computes no NaN) and use the identities that hold there
    /// (`exp(log x) = x`, `sqrt(x)² = x`, `x / sqrt(x) = sqrt(x)`); the
    /// module states the assumption (as `optimize --assume-in-domain`).
    #[arg(long)]
    pub assume_in_domain: bool,
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
    // Process-wide, before any expression is built (algebra::domain).
    crate::algebra::domain::set_assume_in_domain(args.assume_in_domain);
    if !(args.effort.is_finite() && args.effort > 0.0 && args.effort <= 1e6) {
        print_err("error: --effort must be a positive number (at most 1e6)\n");
        return EXIT_USAGE;
    }
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
    // A search budget far below a second must not fail the parse of a
    // file with large headers: the parse gets at least MIN_PARSE_SECONDS.
    let parse_seconds = args.timeout.max(MIN_PARSE_SECONDS);
    let mut options = match args
        .cflags
        .options_within(path, args.function.clone(), parse_seconds)
    {
        Ok(o) => o,
        Err(message) => {
            print_err(&format!("error: {message}\n"));
            return EXIT_USAGE;
        }
    };
    // A whole file lifts every function that lowers and reports the
    // others; functions named with --function must all lower.
    options.keep_going = args.function.is_empty();
    let unit = match tenslift_frontend::extract(&path.to_string_lossy(), &options) {
        Ok(unit) => unit,
        Err(ExtractError::Rejected(diagnostics)) => {
            print_err(&render_diagnostics(&diagnostics));
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
        Err(other) => return report_extract_error(&other),
    };
    if let Err(code) = require_kernels(path, &unit, &args.function) {
        return code;
    }
    let mut code = report_refused(
        path,
        &unit,
        args.json,
        args.target.fixed().unwrap_or(Target::Numpy),
    );
    let synth_options = SynthOptions {
        timeout: Duration::from_secs_f64(args.timeout),
        first: args.search == SearchMode::First,
        limits: crate::synth::Limits::default().scaled(args.effort),
        model,
        ..SynthOptions::default()
    };
    let fixed = args.target.fixed();
    // A named target is priced too, for the warning alone; a table that
    // does not load then only costs the warning.
    let fixed_table = fixed.and_then(|_| auto::load_table(args.cost_table.as_deref()).ok());
    let auto_table = match fixed {
        Some(_) => None,
        None => match auto::load_table(args.cost_table.as_deref()) {
            Ok(t) => Some(t),
            Err(message) => {
                print_err(&format!("error: {message}\n"));
                return EXIT_USAGE;
            }
        },
    };
    // A function that picks its computation by testing its flags or its
    // increments is lifted case by case (`synth::cases`), then a
    // dispatcher runs its tests.
    let planned: Vec<(Kernel, Option<Split>)> = cases::plan(&unit.kernels);
    if fixed == Some(Target::Hlo) && planned.len() > 1 {
        // Each StableHLO module has one `@main`; two in one file do not parse.
        let names: Vec<&str> = planned.iter().map(|(k, _)| k.name.as_str()).collect();
        print_err(&format!(
            "{}: error: --target hlo writes one module per kernel; choose one with --function ({})\n",
            path.display(),
            names.join(", ")
        ));
        return EXIT_USAGE;
    }
    if let (Some(Target::Hlo), Some((k, s))) = (
        fixed,
        planned.iter().find_map(|(k, s)| Some(k).zip(s.as_ref())),
    ) {
        print_err(&format!(
            "{}: error: `{}` picks its computation by testing {}: {} cases, and a StableHLO \
             module computes one; lift it to numpy, jax or pytorch for the dispatcher\n",
            path.display(),
            k.name,
            s.flags().join(", "),
            s.cases.len()
        ));
        return EXIT_USAGE;
    }
    let user_sizes: crate::spec::Sizes =
        args.sizes.iter().chain(&args.auto_sizes).cloned().collect();
    let emit_options = EmitOptions {
        sizes: user_sizes.clone(),
    };
    let mut all_lifted = true;
    let mut verification_failed = false;
    let mut verify_setup = VerifySetup::new(
        path,
        &args.cflags,
        vec![fixed.unwrap_or(Target::Numpy)],
        Duration::from_secs_f64(args.timeout),
    );
    let watchdog = Watchdog::start();
    let work: Vec<(usize, Kernel)> = planned
        .iter()
        .enumerate()
        .flat_map(|(at, (k, s))| match s {
            Some(s) => s.cases.iter().map(|c| (at, c.clone())).collect(),
            None => vec![(at, k.clone())],
        })
        .collect();
    let mut case_programs: Vec<Program> = Vec::new();
    let mut case_target = None;
    for (at, kernel) in &work {
        let start = Instant::now();
        let name = cases::label(kernel);
        watchdog.arm(
            synth_options.timeout + grace(synth_options.timeout),
            format!("{}: {name}: lifting", path.display()),
        );
        let outcome = lift_kernel(kernel, &synth_options);
        let seconds = start.elapsed().as_secs_f64();
        let (mut program, cost, stats, kept_loops, vectorised) =
            match (&outcome.whole, &outcome.partial) {
                (Some(w), _) if w.program.is_some() => {
                    (w.program.clone(), w.cost, &w.stats, None, None)
                }
                (_, Ok(p)) => (
                    Some(p.program.clone()),
                    p.cost,
                    &p.stats,
                    Some(&p.kept_loops),
                    Some(p.vectorised),
                ),
                (Some(w), Err(_)) => (None, 0.0, &w.stats, None, None),
                (None, Err(_)) => (None, 0.0, &Default::default(), None, None),
            };
        let timings = match (&outcome.whole, &outcome.partial) {
            (_, Ok(p)) if kept_loops.is_some() => p.timings.clone(),
            (Some(w), _) => w.timings.clone(),
            _ => Default::default(),
        };
        // hook(roofline): `--target auto` picks this kernel's target.
        let choice = auto_table
            .as_ref()
            .zip(program.as_ref())
            .and_then(|(t, p)| {
                auto::decide(&t.table, path, kernel, p, &user_sizes, work.len() == 1)
            });
        // The cases of one function share the first case's target: the
        // dispatcher calls them alike.
        let target = match (kernel.case.as_ref().filter(|c| c.number > 1), case_target) {
            (Some(_), Some(t)) => t,
            _ => choice
                .as_ref()
                .map_or(fixed.unwrap_or(Target::Numpy), |c| c.target),
        };
        if kernel.case.as_ref().is_some_and(|c| c.number == 1) {
            case_target = Some(target);
        }
        if let (Some(_), Some(p)) = (&kernel.case, program.as_mut()) {
            p.name = name.as_str().into();
        }
        verify_setup.targets = vec![target];
        // The rewrite depends on the target, so it runs here and not in
        // the search; what is verified and emitted is the rewritten program.
        if let (false, Some(p)) = (args.no_symmetry, program.as_mut()) {
            *p = apply_symmetry(p, Some(target)).0;
        }
        if let (true, Some(p)) = (args.assume_in_domain, program.as_mut()) {
            let stated = super::optimize_numpy::DOMAIN_PRECONDITION.replace("the input", "the C");
            p.meta.preconditions.push(stated);
        }
        let mut verification = None;
        if args.verify {
            // Verification has its own limits (Z3's, the compiled C's).
            watchdog.disarm();
            if let Some(program) = program.as_mut() {
                let v = verify_kernel(&verify_setup, kernel, Some(program), "lifted");
                program.meta.status = v.header_status();
                verification_failed |= v.failed();
                verification = Some(v);
            }
        }
        let stats = stats.clone();
        let (solved, outputs) = outcome
            .whole
            .as_ref()
            .map_or((0, 0), |w| (w.solved, w.outputs));
        watchdog.arm(
            grace(synth_options.timeout),
            format!("{}: {name}: emitting", path.display()),
        );
        let emitted = program
            .as_ref()
            .map(|p| emit(p, target, &emit_options).map_err(|e| e.to_string()));
        let error = outcome.error();
        let (status, detail) = match (&emitted, error) {
            (Some(Ok(_)), _) if kept_loops.is_some() => ("partial", String::new()),
            (Some(Ok(_)), _) => ("lifted", String::new()),
            (Some(Err(e)), _) => ("failed", format!("emit: {e}")),
            (None, Some(e)) if solved > 0 && !matches!(e, SynthError::Rejected(_)) => {
                ("partial", with_partial_attempt(e, &outcome))
            }
            (None, Some(e)) => ("failed", with_partial_attempt(e, &outcome)),
            (None, None) => ("failed", "no program".to_string()),
        };
        match &emitted {
            Some(Ok(text)) => code.push_str(text),
            _ => all_lifted = false,
        }
        if let (Some(_), Some(Ok(_)), Some(p)) = (&kernel.case, &emitted, &program) {
            case_programs.push(p.clone());
        }
        // Calibrated costs are seconds, analytic ones flops.
        let cost_text = if args.cost_table.is_some() {
            format!("{cost:.3e} s")
        } else {
            format!("{cost:.0}")
        };
        let summary = match (status, kept_loops) {
            ("lifted", _) => format!(
                "{}: {name}: lifted in {seconds:.2} s, cost {cost_text}\n",
                path.display(),
            ),
            ("partial", Some(kept)) => format!(
                "{}: {name}: partial in {seconds:.2} s, cost {cost_text}, loops kept: {}\n",
                path.display(),
                kept.join(", "),
            ),
            _ => format!(
                "{}: {name}: {status} after {seconds:.2} s ({solved}/{outputs} outputs): {detail}\n",
                path.display(),
            ),
        };
        if !(quiet() && matches!(status, "lifted" | "partial")) {
            print_err(&summary);
        }
        if program.is_none() {
            print_err(&what_was_tried(path, &name, &stats));
        }
        if args.explain {
            print_err(&outcome.trace.render(&name));
        }
        let table_from = auto_table.as_ref().map_or("", |t| t.from.as_str());
        if let Some(c) = &choice {
            if !quiet() {
                print_err(&c.line(path, &name, table_from));
            }
            if let Some(w) = c.warning(path, &name) {
                print_err(&w);
            }
        }
        let fixed_warning = fixed_table
            .as_ref()
            .zip(fixed.zip(program.as_ref()))
            .and_then(|(t, (target, p))| {
                auto::warning_for_fixed(&t.table, path, kernel, p, target, &user_sizes)
            });
        if let Some(w) = fixed_warning {
            print_err(&w);
        }
        if let Some(v) = &verification {
            print_err(&format!(
                "{}: {name}: verification: {}\n",
                path.display(),
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
                "file": path.display().to_string(),
                "function": kernel.name,
                "case": kernel.case.as_ref().map(|c| json!({
                    "number": c.number, "of": c.count, "name": name,
                    "flags": c.pins.iter().map(|(f, v)| json!({"flag": f, "value": v})).collect::<Vec<_>>(),
                })),
                "status": status,
                "target": program.as_ref().map(|_| target.name()),
                "auto": choice.as_ref().map(|c| c.json(table_from)),
                "time_s": seconds,
                "program": program.as_ref().map(print_program),
                "cost": program.as_ref().map(|_| cost),
                "cost_model": if args.cost_table.is_some() { "calibrated" } else { "analytic" },
                "complexity": program.as_ref().and_then(complexity_degree),
                "search": match args.search { SearchMode::Best => "best", SearchMode::First => "first" },
                "stats": stats,
                "timings": timings,
                "trace": &outcome.trace,
                "message": detail,
                "kept_loops": kept_loops,
                "vectorised": vectorised,
                "verification": verification.as_ref().map(render_json),
                "preconditions": preconditions_json(kernel),
                "extents": extents_json(program.as_ref(), kernel),
            });
            print_out(&format!("{record}\n"));
        }
        if let (Some(case), Some(split)) = (&kernel.case, &planned[*at].1) {
            if case.number == case.count {
                let programs = std::mem::take(&mut case_programs);
                match dispatcher(&planned[*at].0, split, &programs, target) {
                    Ok(text) => {
                        code.push_str(&text);
                        if !quiet() {
                            print_err(&format!(
                                "{}: {}: lifted by its {} cases; `{}` runs the C's tests on its flags and calls one\n",
                                path.display(),
                                kernel.name,
                                case.count,
                                kernel.name
                            ));
                        }
                    }
                    Err(why) => {
                        all_lifted = false;
                        print_err(&format!(
                            "{}: {}: not lifted: {why}\n",
                            path.display(),
                            kernel.name
                        ));
                    }
                }
            }
        }
    }
    watchdog.disarm();
    if verification_failed {
        return EXIT_VERIFY_FAILED;
    }
    if !all_lifted {
        return EXIT_NOT_LIFTED;
    }
    let done = if unit.refused.is_empty() {
        EXIT_OK
    } else {
        EXIT_SOME_REFUSED
    };
    deliver(args.output.as_deref(), &code, args.json, done)
}

/// Writes the generated module to `output` atomically, or to stdout
/// unless `json` (the records went there); `done` is the exit code on
/// success.
pub(crate) fn deliver(output: Option<&Path>, code: &str, json: bool, done: i32) -> i32 {
    match output {
        Some(out) => match write_atomically(out, code) {
            Ok(()) => done,
            Err(e) => {
                print_err(&format!("error: cannot write {}: {e}\n", out.display()));
                EXIT_USAGE
            }
        },
        None => {
            if !json {
                print_out(code);
            }
            done
        }
    }
}

/// Reports each function of the file that was refused (its diagnostics
/// and a summary line on stderr, a `rejected` record with `--json`), and
/// returns the comment lines that open the module, naming them.
fn report_refused(
    path: &Path,
    unit: &tenslift_frontend::ir::TranslationUnit,
    json: bool,
    target: Target,
) -> String {
    let comment = if target == Target::Hlo { "//" } else { "#" };
    let mut header = String::new();
    for r in &unit.refused {
        print_err(&render_diagnostics(&r.diagnostics));
        let first = r.diagnostics.items.first();
        let at = first
            .and_then(|d| d.loc.as_ref())
            .map_or_else(String::new, |l| {
                format!(" at {}:{}:{}", l.file, l.line, l.col)
            });
        let code = first.map_or("", |d| d.code.id);
        print_err(&format!(
            "{}: {}: refused ({code}{at}); the file's other functions are lifted\n",
            path.display(),
            r.name
        ));
        header.push_str(&format!(
            "{comment} not lifted: `{}` ({code}{at}), refused by the frontend\n",
            r.name
        ));
        if json {
            let record = json!({
                "file": path.display().to_string(), "function": r.name, "status": "rejected",
                "time_s": 0.0, "program": null, "cost": null, "stats": null,
                "message": r.diagnostics.render(),
            });
            print_out(&format!("{record}\n"));
        }
    }
    header
}

/// For a kernel with no program: what the search tried (its counters) and
/// where to look next.
fn what_was_tried(path: &Path, kernel: &str, stats: &crate::synth::search::Stats) -> String {
    let deadline = if stats.budget_exhausted || stats.library_truncated {
        "; a work limit stopped the search (`--explain` shows which tactic)"
    } else {
        ""
    };
    format!(
        "  tried: {} library candidates, {} search steps, {} sketches backtracked, \
         {} outputs translated directly{deadline}\n  \
         next: `tenslift spec {} --function {kernel}` prints the exact expression of \
         each output the search had to match\n",
        stats.stubs,
        stats.steps,
        stats.backtracks,
        stats.direct,
        path.display(),
    )
}

/// The whole-kernel error, followed by why keeping loops did not help
/// either when partial lifting was tried.
fn with_partial_attempt(error: &SynthError, outcome: &Outcome) -> String {
    match (&outcome.whole, outcome.partial_failure()) {
        (Some(_), Some(partial)) => format!("{error}; with loops kept: {partial}"),
        _ => error.to_string(),
    }
}

/// Writes a sibling temporary file and renames it over `path`.
pub(crate) fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
    // A device, pipe or socket (`-o /dev/null`, `-o /dev/stdout`) is
    // written in place: renaming a file over it would replace it.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return std::fs::write(path, contents);
    }
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

/// The sizes that stand for declared constant extents, with their build
/// value and the array axis they came from: the program's metadata when it
/// was lifted, else the kernel's.
fn extents_json(
    program: Option<&tenslift_targets::Program>,
    kernel: &tenslift_frontend::ir::Kernel,
) -> serde_json::Value {
    let extents = match program {
        Some(p) => p.meta.extents.clone(),
        None => crate::synth::signature::declared_extents(kernel),
    };
    extents
        .iter()
        .map(|e| json!({"name": e.name, "value": e.value, "array": e.array, "dim": e.dim}))
        .collect()
}

/// Every precondition of the kernel, one object each: the relations
/// between sizes its region relies on (`ni <= ext_1000`, with the array
/// axis it keeps in bounds; the program checks them), then what the caller
/// must guarantee beyond the shapes (disjoint rows, how a C struct's fields
/// are passed). `text` is the sentence in either case.
fn preconditions_json(kernel: &tenslift_frontend::ir::Kernel) -> serde_json::Value {
    let relations = crate::spec::region::relations(kernel).into_iter().map(|r| {
        json!({
            "text": r.to_string(),
            "relation": r.to_string(),
            "array": r.array,
            "axis": r.axis,
        })
    });
    let stated = kernel
        .preconditions()
        .into_iter()
        .map(|text| json!({ "text": text }));
    relations.chain(stated).collect()
}

/// The dispatcher of `kernel` lifted by the cases of `split`, one
/// program each (in case order), in `target`.
fn dispatcher(
    kernel: &Kernel,
    split: &Split,
    programs: &[Program],
    target: Target,
) -> Result<String, String> {
    if programs.len() != split.cases.len() {
        return Err(format!(
            "{} of its {} cases lifted (it picks one by testing its flags)",
            programs.len(),
            split.cases.len()
        ));
    }
    let tree = dispatch_tree(&split.tree, split);
    emit_dispatch(&kernel.name, programs, &tree, &split.flags(), target).map_err(|e| e.to_string())
}

/// [`CaseTree`] as the targets spell it: conditions in Python, cases by
/// their functions' names.
fn dispatch_tree(tree: &CaseTree, split: &Split) -> Dispatch {
    match tree {
        CaseTree::Leaf(k) => Dispatch::Case(cases::label(&split.cases[*k])),
        CaseTree::Branch {
            cond,
            then,
            otherwise,
        } => Dispatch::Test {
            cond: crate::synth::guard::python(cond),
            then: Box::new(dispatch_tree(then, split)),
            otherwise: Box::new(dispatch_tree(otherwise, split)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `-o` naming a pipe (as `/dev/null` or `/dev/stdout` are devices)
    /// writes into it; a rename would have put a file in its place.
    #[test]
    fn output_into_a_pipe_is_written_not_replaced() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("out.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo here: nothing to check
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).expect("read the pipe"))
        };
        write_atomically(&fifo, "x = 1\n").expect("written");
        assert_eq!(reader.join().expect("reader"), "x = 1\n");
        let kind = std::fs::symlink_metadata(&fifo)
            .expect("still there")
            .file_type();
        assert!(!kind.is_file(), "the pipe was replaced by a file");
    }
}
