//! `tenslift optimize-tensir`: rewrites a TensIR program into the
//! cheapest equal program the e-graph rules reach ([`crate::eqsat`]) and
//! says what changed. Exit codes: 0 success, 1 bad program, 2 usage or
//! I/O error. The program is written atomically (`-o`) or to stdout; the
//! report goes to stderr (`--quiet` leaves it out).

use std::path::PathBuf;

use tenslift_targets::print_program;

use super::emit::{load_program, parse_size};
use super::{print_err, print_out, quiet, EXIT_OK, EXIT_REJECTED, EXIT_USAGE};
use crate::eqsat::{optimize_program, Limits, Report};
use crate::spec::Sizes;
use crate::synth::cost::{CostModel, CostTable};

/// Size a parameter gets when `--size` does not bind it.
const DEFAULT_SIZE: i64 = 1024;

/// Optimise a TensIR program (.tensir) by equality saturation.
#[derive(clap::Args, Debug)]
pub struct OptimizeArgs {
    /// The TensIR program.
    pub program: PathBuf,
    /// Write the optimised program here instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Price the program with this size, e.g. `--size n=1000` (unbound
    /// sizes are 1024).
    #[arg(long = "size", value_name = "NAME=VALUE", value_parser = parse_size)]
    pub sizes: Vec<(String, i64)>,
    /// Multiply every size by this before pricing (the lift uses 256 times
    /// its traced sizes).
    #[arg(long, default_value_t = 1)]
    pub scale: i64,
    /// Price with a calibration (`tenslift calibrate`) instead of the
    /// analytic model.
    #[arg(long)]
    pub cost_table: Option<PathBuf>,
    /// Most e-nodes.
    #[arg(long, default_value_t = Limits::default().nodes)]
    pub nodes: usize,
    /// Most saturation iterations.
    #[arg(long, default_value_t = Limits::default().iterations)]
    pub iterations: usize,
}

/// The report's lines: costs, the e-graph, and the rules that applied.
fn render(report: &Report, file: &str) -> String {
    let ratio = if report.cost_after > 0.0 {
        report.cost_before / report.cost_after
    } else {
        1.0
    };
    let mut rules: Vec<String> = report
        .applications
        .iter()
        .map(|(name, n)| format!("{name} x{n}"))
        .collect();
    rules.sort();
    format!(
        "{file}: cost {:.4e} -> {:.4e} ({ratio:.2}x), {} of {} statements rewritten\n\
         {file}: e-graph {} nodes, {} classes, {} iterations, stopped: {}, {:.3} s ({:.3} s saturating)\n\
         {file}: rules applied: {}\n",
        report.cost_before,
        report.cost_after,
        report.rewritten,
        report.statements,
        report.nodes,
        report.classes,
        report.iterations,
        report.stop,
        report.seconds,
        report.saturation_seconds,
        if rules.is_empty() { "none".to_string() } else { rules.join(", ") },
    )
}

fn model_of(table: Option<&std::path::Path>) -> Result<CostModel, String> {
    match table {
        None => Ok(CostModel::Analytic),
        Some(file) => CostTable::load(file)
            .map(CostModel::Calibrated)
            .map_err(|e| e.to_string()),
    }
}

/// Runs `tenslift optimize-tensir` and returns the exit code.
pub fn run(args: OptimizeArgs) -> i32 {
    let file = args.program.display().to_string();
    let model = match model_of(args.cost_table.as_deref()) {
        Ok(m) => m,
        Err(e) => {
            print_err(&format!("error: {e}\n"));
            return EXIT_USAGE;
        }
    };
    if args.scale < 1 {
        print_err("error: --scale must be at least 1\n");
        return EXIT_USAGE;
    }
    let program = match load_program(&args.program) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut sizes: Sizes = program
        .params
        .iter()
        .filter(|p| matches!(p.kind, tenslift_targets::ParamKind::Size))
        .map(|p| (p.name.to_string(), DEFAULT_SIZE))
        .collect();
    sizes.extend(args.sizes.iter().cloned());
    let limits = Limits {
        nodes: args.nodes,
        iterations: args.iterations,
        scale: args.scale,
        ..Limits::default()
    };
    let (better, report) = match optimize_program(&program, &model, &sizes, &limits) {
        Ok(r) => r,
        Err(e) => {
            print_err(&format!("{file}: error: {e}\n"));
            return EXIT_REJECTED;
        }
    };
    if !quiet() {
        print_err(&render(&report, &file));
    }
    let out = print_program(&better);
    match &args.output {
        None => {
            print_out(&out);
            EXIT_OK
        }
        Some(path) => match super::lift::write_atomically(path, &out) {
            Ok(()) => EXIT_OK,
            Err(e) => {
                print_err(&format!("error: cannot write {}: {e}\n", path.display()));
                EXIT_USAGE
            }
        },
    }
}
