//! Differential runs: the generated NumPy / JAX / PyTorch / StableHLO code
//! against the gcc-compiled C, on the same random inputs, at two size
//! tuples. Integers must match exactly; floats within the tolerance of
//! [`tolerance`] (scaled by the reduction length and the element type).
//!
//! The C side is either the project's reference driver for manifest kernels
//! ([`manifest::run_cref`], which honours declared ranges and structured
//! initialisations) or a driver generated from the kernel's signature
//! ([`cdriver::run_generated`]) for any other C file. Both hand back a
//! [`CReference`]: the inputs given and the outputs the C produced.
//!
//! Each reference is compared with the program meant for it
//! ([`Checked`]): kernels whose extents are C macros are extracted and
//! lifted again with each dataset's `-D` sizes, so the program of one
//! dataset can differ from another's.

pub mod cdriver;
pub mod manifest;
pub mod tolerance;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use tenslift_frontend::ir::Kernel;
use tenslift_targets::interp::{Array, Data};
use tenslift_targets::runner::{run_batch_within, Case, Entry, RunnerError};
use tenslift_targets::{npy::NpyError, ParamKind, Program, Target};

/// Why the C side of a differential run could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum DifferentialError {
    #[error("the program does not match the kernel: {0}")]
    Interface(String),
    #[error("gcc rejected the generated driver:\n{0}")]
    Compile(String),
    #[error("the compiled C failed: {0}")]
    CRun(String),
    #[error("{0}")]
    Tool(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Npy(#[from] NpyError),
}

impl DifferentialError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> DifferentialError {
        DifferentialError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// A fresh scratch directory for one differential run, removed when dropped.
pub fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix("tenslift-verify-")
        .tempdir()
}

/// What the compiled C did on one set of inputs.
#[derive(Clone, Debug)]
pub struct CReference {
    /// `MINI`, `small`, … (names the run in reports).
    pub label: String,
    pub sizes: BTreeMap<String, i64>,
    /// Every non-size argument as given to the C (outputs' initial contents
    /// included), scalars as rank-0 arrays.
    pub inputs: HashMap<String, Array>,
    /// Final contents of every output, `return` for a returned scalar.
    pub outputs: BTreeMap<String, Array>,
}

/// Verdict of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    Skipped,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Skipped => "skipped",
        }
    }
}

/// How far one output is from the C.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutputError {
    pub name: String,
    pub dtype: String,
    pub elements: usize,
    pub max_abs: f64,
    pub max_rel: f64,
    /// The accepted relative factor (`0` for integers: exact).
    pub tolerance: f64,
    /// Elements beyond the tolerance.
    pub mismatches: usize,
    /// The first element beyond it: flat index, C value, program value.
    pub first_mismatch: Option<(usize, f64, f64)>,
}

/// One target at one size tuple.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TargetRun {
    pub target: String,
    pub reference: String,
    pub sizes: BTreeMap<String, i64>,
    pub verdict: Verdict,
    pub reason: String,
    pub outputs: Vec<OutputError>,
}

/// The verdict over every target and size tuple.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DifferentialResult {
    pub verdict: Verdict,
    pub reason: String,
    pub runs: Vec<TargetRun>,
}

impl DifferentialResult {
    pub fn skipped(reason: impl Into<String>) -> DifferentialResult {
        DifferentialResult {
            verdict: Verdict::Skipped,
            reason: reason.into(),
            runs: Vec::new(),
        }
    }
}

/// One C reference with the kernel (as extracted for it) and the program to
/// hold against it.
#[derive(Clone, Copy, Debug)]
pub struct Checked<'a> {
    pub kernel: &'a Kernel,
    pub program: &'a Program,
    pub reference: &'a CReference,
}

/// Runs `program` with every target on the inputs of each reference and
/// compares with the C's outputs.
pub fn compare(
    kernel: &Kernel,
    program: &Program,
    references: &[CReference],
    targets: &[Target],
    python: &Path,
    workdir: &Path,
    limit: Option<Duration>,
) -> DifferentialResult {
    let checked: Vec<Checked> = references
        .iter()
        .map(|reference| Checked {
            kernel,
            program,
            reference,
        })
        .collect();
    compare_each(&checked, targets, python, workdir, limit)
}

/// Runs each reference's program with every target on its inputs and
/// compares with the C's outputs. A target whose batch runs past `limit`
/// is killed and counts as skipped (undecided), not as a failure: nothing
/// ran to compare.
pub fn compare_each(
    checked: &[Checked],
    targets: &[Target],
    python: &Path,
    workdir: &Path,
    limit: Option<Duration>,
) -> DifferentialResult {
    if let Some(reason) = checked.iter().find_map(|c| non_finite_output(c.reference)) {
        return DifferentialResult::skipped(reason);
    }
    let mut cases = Vec::new();
    for (i, c) in checked.iter().enumerate() {
        let (program, r) = (c.program, c.reference);
        match program_args(program, r) {
            Ok(args) => cases.push(Case {
                id: format!("case{i}_{}", sanitize(&r.label)),
                program,
                sizes: r.sizes.clone(),
                args,
            }),
            Err(reason) => {
                return DifferentialResult {
                    verdict: Verdict::Fail,
                    reason,
                    runs: Vec::new(),
                }
            }
        }
    }
    let mut runs = Vec::new();
    for &target in targets {
        let dir = workdir.join(format!("py_{}", target.name()));
        let results = run_batch_within(python, target, &cases, &dir, Entry::Plain, limit);
        for (i, c) in checked.iter().enumerate() {
            let (kernel, r) = (c.kernel, c.reference);
            let mut run = TargetRun {
                target: target.name().to_string(),
                reference: r.label.clone(),
                sizes: r.sizes.clone(),
                verdict: Verdict::Pass,
                reason: String::new(),
                outputs: Vec::new(),
            };
            let outcome = match &results {
                Err(RunnerError::Python { stderr, .. }) if missing_module(stderr) => Err((
                    Verdict::Skipped,
                    format!("{} is not installed", target.name()),
                )),
                // A target that cannot express the program at these sizes
                // (StableHLO past its unrolling limit) emits nothing, and
                // `lift` refuses it just as clearly: nothing ran to compare.
                Err(RunnerError::Emit { source, .. }) => Err((
                    Verdict::Skipped,
                    format!("{} cannot express this program: {source}", target.name()),
                )),
                Err(RunnerError::TimedOut { limit }) => Err((
                    Verdict::Skipped,
                    format!(
                        "{} did not finish within {} s (raise --run-timeout)",
                        target.name(),
                        limit.as_secs_f64()
                    ),
                )),
                Err(e) => Err((
                    Verdict::Fail,
                    format!("the generated code did not run: {e}"),
                )),
                Ok(per_case) => match &per_case[i] {
                    Err(text) if missing_module(text) => Err((
                        Verdict::Skipped,
                        format!("{} is not installed", target.name()),
                    )),
                    Err(text) => Err((Verdict::Fail, format!("the generated code raised: {text}"))),
                    Ok(o) => Ok(o),
                },
            };
            match outcome {
                Err((verdict, reason)) => {
                    run.verdict = verdict;
                    run.reason = reason;
                }
                Ok(outcome) => {
                    // A library solver accumulates in its own order over
                    // chains the C's loop nest does not show as one reduction.
                    let length = tolerance::reduction_length(kernel, &r.sizes)
                        .max(tolerance::program_reduction_length(c.program, &r.sizes));
                    let single = tolerance::computes_in_single(kernel);
                    for (name, c_value) in &r.outputs {
                        let produced = if name == "return" {
                            outcome.returned.as_ref()
                        } else {
                            outcome.arrays.get(name)
                        };
                        let Some(p_value) = produced else {
                            run.verdict = Verdict::Fail;
                            run.reason = format!("the program does not produce `{name}`");
                            continue;
                        };
                        let measured =
                            measure(name, c_value, p_value, length, single).map(|mut err| {
                                if let Some(before) = r.inputs.get(name) {
                                    untouched_changes(before, c_value, p_value, &mut err, &mut run);
                                }
                                err
                            });
                        match measured {
                            Ok(err) => {
                                if err.mismatches > 0 {
                                    run.verdict = Verdict::Fail;
                                    if run.reason.is_empty() {
                                        run.reason = mismatch_text(&err);
                                    }
                                }
                                run.outputs.push(err);
                            }
                            Err(reason) => {
                                run.verdict = Verdict::Fail;
                                run.reason = reason;
                            }
                        }
                    }
                }
            }
            runs.push(run);
        }
    }
    summarise(runs)
}

fn summarise(runs: Vec<TargetRun>) -> DifferentialResult {
    let failed: Vec<&TargetRun> = runs.iter().filter(|r| r.verdict == Verdict::Fail).collect();
    let passed = runs.iter().filter(|r| r.verdict == Verdict::Pass).count();
    let (verdict, reason) = if let Some(first) = failed.first() {
        (
            Verdict::Fail,
            format!("{} at {}: {}", first.target, first.reference, first.reason),
        )
    } else if passed > 0 {
        let skipped: Vec<String> = runs
            .iter()
            .filter(|r| r.verdict == Verdict::Skipped)
            .map(|r| format!("{} ({})", r.target, r.reason))
            .collect();
        let mut reason = format!("{passed} runs agree with the compiled C");
        if !skipped.is_empty() {
            reason.push_str(&format!("; skipped: {}", skipped.join(", ")));
        }
        (Verdict::Pass, reason)
    } else {
        let reasons: Vec<String> = runs.iter().map(|r| r.reason.clone()).collect();
        (Verdict::Skipped, reasons.join("; "))
    };
    DifferentialResult {
        verdict,
        reason,
        runs,
    }
}

fn missing_module(text: &str) -> bool {
    text.contains("ModuleNotFoundError") || text.contains("No module named")
}

fn sanitize(label: &str) -> String {
    label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A NaN or infinity in the C's outputs means the random inputs left the
/// kernel's domain: no comparison is meaningful.
fn non_finite_output(r: &CReference) -> Option<String> {
    r.outputs.iter().find_map(|(name, a)| match &a.data {
        Data::Float(v) if v.iter().any(|x| !x.is_finite()) => Some(format!(
            "the C produces NaN or infinity in `{name}` at {} on the random inputs (outside the kernel's domain)",
            r.label
        )),
        _ => None,
    })
}

/// The program's non-size arguments from the reference's inputs, with
/// the element types the C used.
fn program_args(program: &Program, r: &CReference) -> Result<HashMap<String, Array>, String> {
    let mut args = HashMap::new();
    for p in &program.params {
        let (dtype, name) = match &p.kind {
            ParamKind::Size => continue,
            ParamKind::Scalar(d) => (*d, p.name.to_string()),
            ParamKind::Array { dtype, .. } => (*dtype, p.name.to_string()),
        };
        let Some(value) = r.inputs.get(&name) else {
            return Err(format!(
                "the C has no argument `{name}` that the program takes"
            ));
        };
        if value.dtype != dtype {
            return Err(format!(
                "the program takes `{name}` as {dtype}, the C as {}",
                value.dtype
            ));
        }
        args.insert(name, value.clone());
    }
    Ok(args)
}

/// Elements the C left bit for bit as they were (the border of a region
/// the loops never touch, in arrays passed at their declared size) must be
/// left so by the program too: counted as mismatches, and the run fails
/// naming the first.
fn untouched_changes(
    before: &Array,
    c: &Array,
    p: &Array,
    err: &mut OutputError,
    run: &mut TargetRun,
) {
    if before.len() != c.len() || p.len() != c.len() || before.dtype != c.dtype {
        return;
    }
    let same = |a: &Array, i: usize, b: &Array| {
        if c.dtype.is_float() {
            a.get_f64(i).to_bits() == b.get_f64(i).to_bits()
        } else {
            a.get_i64(i) == b.get_i64(i)
        }
    };
    let changed: Vec<usize> = (0..c.len())
        .filter(|&i| same(before, i, c) && !same(before, i, p))
        .collect();
    let Some(&first) = changed.first() else {
        return;
    };
    err.mismatches += changed.len();
    run.verdict = Verdict::Fail;
    run.reason = format!(
        "`{}`: the program changed {} elements the C left unchanged (first at flat index {first}: {} became {})",
        err.name,
        changed.len(),
        before.get_f64(first),
        p.get_f64(first)
    );
}

fn mismatch_text(err: &OutputError) -> String {
    match err.first_mismatch {
        Some((i, c, p)) => format!(
            "`{}`: {} of {} elements differ (first at flat index {i}: C {c}, program {p}; max abs error {:.3e})",
            err.name, err.mismatches, err.elements, err.max_abs
        ),
        None => format!("`{}` differs", err.name),
    }
}

/// Compares one output element-wise.
fn measure(
    name: &str,
    c: &Array,
    p: &Array,
    reduction_length: u64,
    single: bool,
) -> Result<OutputError, String> {
    if c.len() != p.len() {
        return Err(format!(
            "`{name}` has {} elements in the C but {} in the program (shapes {:?} and {:?})",
            c.len(),
            p.len(),
            c.shape,
            p.shape
        ));
    }
    let factor =
        tolerance::relative_factor(tolerance::working_dtype(c.dtype, single), reduction_length);
    let scale = (0..c.len())
        .map(|i| c.get_f64(i).abs())
        .fold(0.0f64, f64::max);
    let mut err = OutputError {
        name: name.to_string(),
        dtype: c.dtype.to_string(),
        elements: c.len(),
        max_abs: 0.0,
        max_rel: 0.0,
        tolerance: factor.unwrap_or(0.0),
        mismatches: 0,
        first_mismatch: None,
    };
    for i in 0..c.len() {
        let (cv, pv, equal, diff) = match factor {
            Some(f) => {
                let (cv, pv) = (c.get_f64(i), p.get_f64(i));
                let diff = (pv - cv).abs();
                // A NaN from the program fails this comparison, so it counts.
                let ok = diff <= f * (cv.abs() + scale);
                (cv, pv, ok, diff)
            }
            None => {
                let (cv, pv) = (c.get_i64(i), p.get_i64(i));
                (
                    cv as f64,
                    pv as f64,
                    cv == pv,
                    (i128::from(pv) - i128::from(cv)).unsigned_abs() as f64,
                )
            }
        };
        let diff = if diff.is_nan() { f64::INFINITY } else { diff };
        err.max_abs = err.max_abs.max(diff);
        err.max_rel = err.max_rel.max(diff / cv.abs().max(f64::MIN_POSITIVE));
        if !equal {
            err.mismatches += 1;
            err.first_mismatch.get_or_insert((i, cv, pv));
        }
    }
    Ok(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_targets::DType;

    #[test]
    fn integers_must_match_exactly_and_floats_within_the_scaled_tolerance() {
        let c = Array::from_i64(DType::I32, vec![3], vec![1, -2, 3]);
        let p = Array::from_i64(DType::I32, vec![3], vec![1, -1, 3]);
        let err = measure("y", &c, &p, 1, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(err.mismatches, 1);
        assert_eq!(err.first_mismatch, Some((1, -2.0, -1.0)));

        let c = Array::from_f64(DType::F32, vec![2], vec![1.0, 2.0]);
        let close = Array::from_f64(DType::F32, vec![2], vec![1.0 + 1e-6, 2.0]);
        let far = Array::from_f64(DType::F32, vec![2], vec![1.01, 2.0]);
        let ok = measure("y", &c, &close, 64, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ok.mismatches, 0);
        let bad = measure("y", &c, &far, 64, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bad.mismatches, 1);
    }

    #[test]
    fn a_nan_from_the_program_is_a_mismatch() {
        let c = Array::from_f64(DType::F64, vec![1], vec![1.0]);
        let p = Array::from_f64(DType::F64, vec![1], vec![f64::NAN]);
        let err = measure("y", &c, &p, 1, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(err.mismatches, 1);
    }
}
