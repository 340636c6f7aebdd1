//! `tenslift calibrate [--out results/calibration-<host>.json] [--python
//! PATH] [--quick] [--targets numpy,jax,pytorch,hlo] [--note TEXT]`: times
//! every operation kind of the cost model in every target
//! (scripts/calibrate.py), fits seconds per call, per flop and per byte for
//! each, measures the machine's memory bandwidth and peak FLOP/s and the
//! rates of plain gcc -O3 loops (scripts/calibrate_c.c), and writes the
//! table (schema [`COST_TABLE_SCHEMA`], documented in results/README.md)
//! that `tenslift lift --cost-table` and `--target auto` read.
//!
//! The fit: the copy kinds (transpose+copy, slicing copy) do no arithmetic,
//! so their timings give seconds per byte; every other kind's seconds per
//! call and per flop are fitted to what its timings leave after the bytes
//! it moves are paid at that rate. Fits are weighted by 1/t², so a small
//! size counts as much as a large one (relative error). The matrix-product,
//! matrix-vector and factorisation kinds also keep their timings as
//! `curves`, which price them between and past the timed sizes (a line
//! cannot follow the caches); `lu` times each target's own `_lu_nopivot`
//! (the emitters' source, handed to the script in a temporary file).
//!
//! Exit codes: 0 written; 2 usage, Python or I/O failure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::json;
use tenslift_targets::emit::lu_nopivot_helper;
use tenslift_targets::{build, DType, Dim, Expr, Op, Target};

use super::{print_err, EXIT_OK, EXIT_USAGE};
use crate::spec::Sizes;
use crate::synth::cost::{
    node_work, CRates, Coefficients, CostTable, MachineLimits, OpKind, TargetCosts, Work,
    COST_TABLE_SCHEMA,
};

#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Where to write the table (default results/calibration-<host>.json).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The Python with NumPy (default $TENSLIFT_PYTHON, else the
    /// workspace's .venv/bin/python).
    #[arg(long)]
    pub python: Option<PathBuf>,
    /// Fewer sizes and repetitions per measurement (seconds instead of
    /// minutes).
    #[arg(long)]
    pub quick: bool,
    /// The targets to time (comma-separated).
    #[arg(long, default_value = "numpy,jax,pytorch,hlo")]
    pub targets: String,
    /// A note recorded in the table beside the machine's load (say what
    /// else was running).
    #[arg(long)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Measurement {
    /// Absent in a NumPy-only run.
    #[serde(default = "numpy_name")]
    target: String,
    op: String,
    n: i64,
    seconds: f64,
}

fn numpy_name() -> String {
    "numpy".to_string()
}

/// What scripts/calibrate.py prints (its docstring describes it).
#[derive(Debug, Deserialize)]
struct Timings {
    numpy_version: String,
    measurements: Vec<Measurement>,
    #[serde(default)]
    call_overhead_s: BTreeMap<String, f64>,
    machine: MachineLimits,
    c: CTimings,
    #[serde(default)]
    skipped: BTreeMap<String, String>,
}

/// The C reference loops' medians (scripts/calibrate_c.c).
#[derive(Debug, Deserialize)]
struct CTimings {
    n_stream: f64,
    n_matmul: f64,
    triad_s: f64,
    dot_s: f64,
    matmul_s: f64,
}

impl CTimings {
    fn rates(&self) -> CRates {
        CRates {
            stream_s_per_byte: self.triad_s / (24.0 * self.n_stream),
            reduce_s_per_flop: self.dot_s / (2.0 * self.n_stream),
            matmul_s_per_flop: self.matmul_s / (2.0 * self.n_matmul.powi(3)),
        }
    }
}

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn default_python() -> PathBuf {
    std::env::var_os("TENSLIFT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".venv/bin/python"))
}

/// This machine's name, as `hostname` prints it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| {
            let out = Command::new("hostname").output().ok()?;
            Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
        })
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The exponent scripts/calibrate.py times `pow` with (its POW_EXPONENT):
/// a general one, not NumPy's fast paths for 2, 0.5 and -1.
const POW_EXPONENT: f64 = 2.5;

/// The expression scripts/calibrate.py times for `kind` at `n`
/// (vectors of n elements, n × n matrices, an n × n matrix with a vector
/// for `matvec` and `trisolve`), for its flops and bytes.
fn timed_expr(kind: OpKind, n: i64) -> Option<Expr> {
    let vector = |name: &str| build::var(name, DType::F64, vec![Dim::constant(n)]);
    let matrix = |name: &str| build::var(name, DType::F64, vec![Dim::constant(n); 2]);
    let (x, y) = (vector("x"), vector("y"));
    match kind {
        OpKind::Add => build::add(x, y).ok(),
        OpKind::Mul => build::mul(x, y).ok(),
        OpKind::Div => build::div(x, y).ok(),
        OpKind::Exp => build::exp(x).ok(),
        OpKind::Log => build::log(x).ok(),
        OpKind::Sqrt => build::sqrt(x).ok(),
        OpKind::Pow => build::pow(x, build::f64_lit(POW_EXPONENT)).ok(),
        OpKind::Maximum => build::maximum(x, y).ok(),
        OpKind::Where => build::select(build::gt(x.clone(), y.clone()).ok()?, x, y).ok(),
        OpKind::Sum => build::sum(matrix("A"), &[1]).ok(),
        OpKind::Matmul => build::matmul(matrix("A"), matrix("B")).ok(),
        OpKind::Matvec => build::matmul(matrix("A"), x).ok(),
        OpKind::Gram => {
            build::matmul(matrix("A"), build::transpose(matrix("A"), &[1, 0]).ok()?).ok()
        }
        OpKind::TriSolve => Expr::new(
            Op::TriSolve {
                lower: true,
                unit: false,
            },
            vec![matrix("A"), x],
        )
        .ok(),
        OpKind::Cholesky => Expr::new(Op::Cholesky, vec![matrix("A")]).ok(),
        OpKind::Lu => Expr::new(Op::LuNoPivot, vec![matrix("A")]).ok(),
        OpKind::Einsum => build::einsum("ij,jk->ik", vec![matrix("A"), matrix("B")]).ok(),
        // An n x n block of an n x 2n array updated in place: the work of
        // the addition it is.
        OpKind::Region => build::add(matrix("A"), matrix("B")).ok(),
        OpKind::TransposeCopy | OpKind::SliceCopy => None,
    }
}

/// The work one timed call does.
fn timed_work(kind: OpKind, n: i64) -> Option<Work> {
    let bytes = 8.0 * (n * n) as f64;
    match kind {
        // Read and write every element.
        OpKind::TransposeCopy => Some(Work {
            flops: 0.0,
            bytes: 2.0 * bytes,
        }),
        OpKind::SliceCopy => Some(Work { flops: 0.0, bytes }),
        _ => {
            let expr = timed_expr(kind, n)?;
            let mut work = Work::default();
            expr.walk(&mut |node| {
                let w = node_work(node, &Sizes::new());
                work.flops += w.flops;
                work.bytes += w.bytes;
            });
            Some(work)
        }
    }
}

/// Weighted least squares of `y = a + b x` (weights 1/y²), with `a, b ≥ 0`.
fn fit_line(points: &[(f64, f64)]) -> (f64, f64) {
    let weighted: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|(_, y)| *y > 0.0)
        .map(|&(x, y)| (x, y, 1.0 / (y * y)))
        .collect();
    let sw: f64 = weighted.iter().map(|p| p.2).sum();
    if weighted.is_empty() || sw <= 0.0 {
        return (0.0, 0.0);
    }
    let mean_x = weighted.iter().map(|p| p.2 * p.0).sum::<f64>() / sw;
    let mean_y = weighted.iter().map(|p| p.2 * p.1).sum::<f64>() / sw;
    let sxx: f64 = weighted.iter().map(|p| p.2 * (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = weighted
        .iter()
        .map(|p| p.2 * (p.0 - mean_x) * (p.1 - mean_y))
        .sum();
    let slope = if sxx > 0.0 { (sxy / sxx).max(0.0) } else { 0.0 };
    let intercept = mean_y - slope * mean_x;
    if intercept >= 0.0 {
        return (intercept, slope);
    }
    // Through the origin: b = Σw x y / Σw x².
    let sx2: f64 = weighted.iter().map(|p| p.2 * p.0 * p.0).sum();
    let sxy0: f64 = weighted.iter().map(|p| p.2 * p.0 * p.1).sum();
    (0.0, if sx2 > 0.0 { sxy0 / sx2 } else { 0.0 })
}

/// Fits every kind's coefficients from the timings.
fn fit(measurements: &[&Measurement]) -> Result<Vec<(OpKind, Coefficients)>, String> {
    let points = |kind: OpKind| -> Vec<(Work, f64)> {
        measurements
            .iter()
            .filter(|m| OpKind::from_name(&m.op) == Some(kind))
            .filter_map(|m| Some((timed_work(kind, m.n)?, m.seconds)))
            .collect()
    };
    let mut out = Vec::new();
    let mut per_byte = Vec::new();
    for kind in [OpKind::TransposeCopy, OpKind::SliceCopy] {
        let p = points(kind);
        if p.len() < 2 {
            return Err(format!("fewer than two timings of `{}`", kind.name()));
        }
        let (overhead, slope) = fit_line(&p.iter().map(|(w, t)| (w.bytes, *t)).collect::<Vec<_>>());
        per_byte.push(slope);
        out.push((
            kind,
            Coefficients {
                overhead_s: overhead,
                s_per_flop: 0.0,
                s_per_byte: slope,
            },
        ));
    }
    let s_per_byte = per_byte.iter().sum::<f64>() / per_byte.len() as f64;
    for kind in OpKind::ALL {
        if matches!(kind, OpKind::TransposeCopy | OpKind::SliceCopy) {
            continue;
        }
        let p = points(kind);
        if p.is_empty() && kind.stand_in().is_some() {
            // A target without the operation (StableHLO has no LU): on
            // loading, the table prices it by its stand-in, as it does a
            // table measured before the kind was timed.
            continue;
        }
        if p.len() < 2 {
            return Err(format!("fewer than two timings of `{}`", kind.name()));
        }
        out.push((kind, fit_kind(&p, s_per_byte)));
    }
    Ok(out)
}

/// One kind's coefficients: what the copies' rate per byte does not
/// explain is arithmetic (and per-call cost). (A kind's own rate per byte,
/// chosen where it fitted its timings better, was tried on 2026-11-29:
/// PyTorch's element-wise kinds, which run on both cores, then priced its
/// kept-loop stencils 2-3x under XLA's where they run 2-3x slower, and
/// `auto` chose worse on PolyBench: 17 of 29 within 10 % instead of 22.)
fn fit_kind(points: &[(Work, f64)], s_per_byte: f64) -> Coefficients {
    let residual: Vec<(f64, f64)> = points
        .iter()
        .map(|(w, t)| (w.flops, (t - s_per_byte * w.bytes).max(t * 0.05)))
        .collect();
    let (overhead, s_per_flop) = fit_line(&residual);
    Coefficients {
        overhead_s: overhead,
        s_per_flop,
        s_per_byte,
    }
}

/// Writes each target's `_lu_nopivot` source (the emitters' own) for
/// scripts/calibrate.py to time as `lu`.
fn write_lu_helpers(dir: &Path) -> Result<PathBuf, String> {
    let helpers: BTreeMap<&str, &str> = Target::ALL
        .into_iter()
        .filter_map(|t| Some((t.name(), lu_nopivot_helper(t)?)))
        .collect();
    let path = dir.join("lu_helpers.json");
    std::fs::write(&path, json!(helpers).to_string())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

fn run_python(python: &Path, quick: bool, targets: &str) -> Result<Timings, String> {
    let script = workspace_root().join("scripts/calibrate.py");
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let mut cmd = Command::new(python);
    cmd.arg(&script).arg("--targets").arg(targets);
    cmd.arg("--lu-helpers").arg(write_lu_helpers(dir.path())?);
    if quick {
        cmd.arg("--quick");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {} failed: {}",
            python.display(),
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("{} printed no timings: {e}", script.display()))
}

/// Each timed target's coefficients: per call, then each kind's beyond
/// the call (a kind's fitted overhead less one trivial call, so that a
/// program of several operations pays its call once).
fn target_costs(timings: &Timings) -> Result<BTreeMap<String, TargetCosts>, String> {
    let mut out = BTreeMap::new();
    for (target, call) in &timings.call_overhead_s {
        let rows: Vec<&Measurement> = timings
            .measurements
            .iter()
            .filter(|m| &m.target == target)
            .collect();
        let fitted = fit(&rows).map_err(|e| format!("{target}: {e}"))?;
        let ops = fitted
            .into_iter()
            .map(|(kind, c)| {
                let beyond = Coefficients {
                    overhead_s: (c.overhead_s - call).max(0.0),
                    ..c
                };
                (kind, beyond)
            })
            .collect();
        out.insert(
            target.clone(),
            TargetCosts {
                call_overhead_s: *call,
                ops,
                curves: curves(&rows, *call),
            },
        );
    }
    Ok(out)
}

/// A target's timings of the [`OpKind::CURVED`] kinds as `[work, seconds
/// beyond the call]`, by growing size.
fn curves(rows: &[&Measurement], call: f64) -> BTreeMap<OpKind, Vec<[f64; 2]>> {
    let mut out: BTreeMap<OpKind, Vec<[f64; 2]>> = BTreeMap::new();
    for m in rows {
        let Some(kind) = OpKind::from_name(&m.op).filter(|k| OpKind::CURVED.contains(k)) else {
            continue;
        };
        if let Some(work) = timed_work(kind, m.n) {
            let seconds = (m.seconds - call).max(m.seconds * 0.05);
            out.entry(kind)
                .or_default()
                .push([kind.curve_axis(work), seconds]);
        }
    }
    for points in out.values_mut() {
        points.sort_by(|a, b| a[0].total_cmp(&b[0]));
    }
    out
}

/// The machine's state while it was measured: load and cores, and the
/// caller's note.
fn load_note(note: Option<&str>) -> String {
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut text = format!("1-minute load average {load} on {cores} cores at the start");
    if let Some(note) = note {
        text.push_str("; ");
        text.push_str(note);
    }
    text
}

fn build_table(args: &CalibrateArgs, timings: &Timings, host: String) -> Result<CostTable, String> {
    let numpy: Vec<&Measurement> = timings
        .measurements
        .iter()
        .filter(|m| m.target == "numpy")
        .collect();
    let mut note = load_note(args.note.as_deref());
    for (target, why) in &timings.skipped {
        note.push_str(&format!("; {target} not timed: {why}"));
    }
    Ok(CostTable {
        schema: COST_TABLE_SCHEMA,
        host,
        numpy_version: timings.numpy_version.clone(),
        date: today(),
        ops: fit(&numpy)?.into_iter().collect(),
        note,
        targets: target_costs(timings)?,
        machine: Some(timings.machine.clone()),
        c: Some(timings.c.rates()),
        curves: BTreeMap::new(),
    })
}

fn fail(message: &str) -> i32 {
    print_err(&format!("error: {message}\n"));
    EXIT_USAGE
}

pub fn run(args: CalibrateArgs) -> i32 {
    let python = args.python.clone().unwrap_or_else(default_python);
    let host = host_name();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("results/calibration-{host}.json")));
    let timings = match run_python(&python, args.quick, &args.targets) {
        Ok(t) => t,
        Err(message) => return fail(&message),
    };
    let table = match build_table(&args, &timings, host) {
        Ok(t) => t,
        Err(message) => return fail(&message),
    };
    let mut record = match serde_json::to_value(&table) {
        Ok(v) => v,
        Err(e) => return fail(&e.to_string()),
    };
    record["command"] = json!(format!(
        "tenslift calibrate --out {}{} --targets {}",
        out.display(),
        if args.quick { " --quick" } else { "" },
        args.targets
    ));
    record["measurements"] = json!(timings
        .measurements
        .iter()
        .map(|m| json!({"target": m.target, "op": m.op, "n": m.n, "seconds": m.seconds}))
        .collect::<Vec<_>>());
    let text = match serde_json::to_string_pretty(&record) {
        Ok(t) => t + "\n",
        Err(e) => return fail(&e.to_string()),
    };
    if let Err(e) = super::lift::write_atomically(&out, &text) {
        return fail(&format!("cannot write {}: {e}", out.display()));
    }
    print_err(&format!(
        "wrote {} ({} operation kinds, targets {})\n",
        out.display(),
        table.ops.len(),
        table.targets.keys().cloned().collect::<Vec<_>>().join(", ")
    ));
    EXIT_OK
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_recovered_from_exact_points() {
        let points: Vec<(f64, f64)> = [1.0, 10.0, 100.0, 1000.0]
            .iter()
            .map(|&x| (x, 2e-6 + 3e-9 * x))
            .collect();
        let (a, b) = fit_line(&points);
        assert!(
            (a - 2e-6).abs() < 1e-12 && (b - 3e-9).abs() < 1e-15,
            "{a} {b}"
        );
    }

    #[test]
    fn a_matrix_product_does_cubic_work_and_a_copy_none() {
        let small = timed_work(OpKind::Matmul, 10).expect("work");
        let large = timed_work(OpKind::Matmul, 20).expect("work");
        assert!((large.flops / small.flops - 8.0).abs() < 1e-9);
        assert_eq!(
            timed_work(OpKind::TransposeCopy, 10).map(|w| w.flops),
            Some(0.0)
        );
    }

    #[test]
    fn dates_are_civil() {
        let d = today();
        assert_eq!(d.len(), 10, "{d}");
        assert!(d.starts_with("20"), "{d}");
    }
    #[test]
    fn every_kind_has_a_timed_expression_or_a_copy_work() {
        for kind in OpKind::ALL {
            assert!(timed_work(kind, 8).is_some(), "{kind:?}");
        }
    }
}
