//! `tenslift optimize` end to end on the real binary: a few NumPy programs
//! are optimised with `--verify` (whose differential run compares the
//! generated code against the input function itself), and the written
//! module is then imported in the venv beside the input and both are run
//! on the same random arrays.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's interpreter (as `scripts/env.sh` sets it), else the
/// checkout's `.venv`.
fn python() -> PathBuf {
    std::env::var_os("TENSLIFT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join(".venv/bin/python"))
}

/// Imports the input file and the generated module, calls both entry
/// points on the same arrays (shapes from argv as JSON) and prints the
/// largest relative difference over every returned array.
const COMPARE: &str = r#"
import importlib.util, json, sys
import numpy as np
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
src, out, fn, shapes, dtype = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
rng = np.random.default_rng(7)
args = [rng.uniform(0.5, 2.0, size=tuple(s)).astype(dtype) for s in shapes]
want, got = getattr(load(src, "src"), fn)(*args), getattr(load(out, "out"), fn)(*args)
want = want if isinstance(want, tuple) else (want,)
got = got if isinstance(got, tuple) else (got,)
assert len(want) == len(got), (len(want), len(got))
worst = 0.0
for w, g in zip(want, got):
    w, g = np.asarray(w, dtype=np.float64), np.asarray(g, dtype=np.float64)
    assert w.shape == g.shape, (w.shape, g.shape)
    worst = max(worst, float(np.max(np.abs(w - g) / (np.abs(w) + 1e-12), initial=0.0)))
print(worst)
"#;

struct Case {
    file: &'static str,
    function: &'static str,
    extra: &'static [&'static str],
    target: &'static str,
    /// Concrete input shapes for the independent comparison.
    shapes: &'static str,
    dtype: &'static str,
    /// Whether the search must find something cheaper than the input.
    cheaper: bool,
}

/// Optimises `case` with `--verify --json -o` and returns the JSON record
/// and the written module.
fn optimize(case: &Case, dir: &Path) -> (Value, PathBuf) {
    let out = dir.join(format!("{}_{}.py", case.function, case.target));
    let run = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(root())
        .args([
            "optimize",
            case.file,
            "--function",
            case.function,
            "--verify",
            "--json",
        ])
        .args(["--target", case.target, "-o", out.to_str().expect("utf-8")])
        .args(case.extra)
        .output()
        .expect("the tenslift binary runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{}: {stderr}", case.file);
    let line = String::from_utf8_lossy(&run.stdout);
    let record: Value = serde_json::from_str(line.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: no JSON record ({e}): {line}", case.file));
    (record, out)
}

fn check(case: &Case) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (record, module) = optimize(case, dir.path());
    let v = &record["verification"];
    assert_eq!(v["bounded"], "pass", "{}: {v}", case.file);
    let differential = &v["details"]["differential"];
    assert_eq!(
        differential["verdict"], "pass",
        "{}: {differential}",
        case.file
    );
    let runs = differential["runs"].as_array().map_or(0, Vec::len);
    assert!(runs >= 2, "{}: {runs} differential runs", case.file);
    if case.cheaper {
        let (before, after) = (&record["cost_before"], &record["cost_after"]);
        assert!(
            after.as_f64() < before.as_f64() && record["chosen"] == "search",
            "{}: cost {before} -> {after}",
            case.file
        );
    }
    let source = root().join(case.file);
    let run = Command::new(python())
        .args(["-c", COMPARE])
        .args([source.as_os_str(), module.as_os_str()])
        .args([case.function, case.shapes, case.dtype])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}: {}",
        case.file,
        String::from_utf8_lossy(&run.stderr)
    );
    let worst: f64 = stdout.trim().parse().expect("a number");
    let tolerance = if case.dtype == "float32" { 1e-4 } else { 1e-10 };
    assert!(
        worst <= tolerance,
        "{}: relative difference {worst}",
        case.file
    );
}

#[test]
fn diagonal_of_a_product_becomes_quadratic_and_agrees() {
    check(&Case {
        file: "benchmarks/stenso_numpy/diag_dot.py",
        function: "diag_dot",
        extra: &[],
        target: "numpy",
        shapes: "[[40, 30], [30, 40]]",
        dtype: "float64",
        cheaper: true,
    });
}

#[test]
fn a_tuple_of_a_transpose_and_a_mean_agrees() {
    check(&Case {
        file: "tests/fixtures/numpy/ok/tuple_where.py",
        function: "clipped_stats",
        extra: &[],
        target: "numpy",
        shapes: "[[17, 9], [17, 9]]",
        dtype: "float64",
        cheaper: true,
    });
}

#[test]
fn slices_and_broadcasts_agree() {
    check(&Case {
        file: "tests/fixtures/numpy/ok/stencil.py",
        function: "stencil",
        extra: &[],
        target: "numpy",
        shapes: "[[12, 7], [7]]",
        dtype: "float64",
        cheaper: false,
    });
}

#[test]
fn float32_with_keepdims_agrees() {
    check(&Case {
        file: "tests/fixtures/numpy/ok/single.py",
        function: "softish",
        extra: &[],
        target: "numpy",
        shapes: "[[11, 6], [11, 5]]",
        dtype: "float32",
        cheaper: false,
    });
}

#[test]
fn jax_output_of_a_product_chain_agrees() {
    check(&Case {
        file: "benchmarks/stenso_numpy/sum_diag_dot.py",
        function: "sum_diag_dot",
        extra: &[],
        target: "jax",
        shapes: "[[24, 16], [16, 24]]",
        dtype: "float64",
        cheaper: true,
    });
}

/// `function` of the STENSO program `file` over two matrices (A, B: f64[n,
/// m]) on NumPy, with `extra` flags.
fn stenso_pair(
    file: &'static str,
    function: &'static str,
    extra: &'static [&'static str],
    cheaper: bool,
) -> Case {
    Case {
        file,
        function,
        extra,
        target: "numpy",
        shapes: "[[13, 9], [13, 9]]",
        dtype: "float64",
        cheaper,
    }
}

const LOG_EXP_2: &str = "benchmarks/stenso_numpy/log_exp_2.py";

#[test]
fn assumed_in_domain_a_quotient_of_logarithms_is_a_division() {
    // STENSO's log_exp_2: exp(log A - log B) = A / B where A, B > 0.
    check(&stenso_pair(
        LOG_EXP_2,
        "log_exp_2",
        &["--assume-in-domain"],
        true,
    ));
    let dir = tempfile::tempdir().expect("temp dir");
    let (record, module) = optimize(
        &stenso_pair(
            "benchmarks/stenso_numpy/synth_3.py",
            "synth_3",
            &["--assume-in-domain"],
            true,
        ),
        dir.path(),
    );
    let text = std::fs::read_to_string(module).expect("module written");
    // (A + B) / sqrt(A + B) = sqrt(A + B), and the module says what it assumed.
    assert!(
        text.contains("np.sqrt") && !text.contains("np.divide"),
        "{text}"
    );
    assert!(text.contains("--assume-in-domain"), "{text}");
    assert_eq!(record["verification"]["bounded"], "pass", "{record}");
}

#[test]
fn without_the_domain_assumption_logarithms_stay() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, module) = optimize(&stenso_pair(LOG_EXP_2, "log_exp_2", &[], false), dir.path());
    let text = std::fs::read_to_string(module).expect("module written");
    assert!(text.contains("np.log") && text.contains("np.exp"), "{text}");
}

/// The input returns a view of its argument: the generated entry point
/// returns the same view rather than a copy into a fresh array (the
/// core, verified against the input, computes the same values), so it
/// is never a memory pass slower than the input.
#[test]
fn a_view_of_an_argument_is_returned_as_a_view() {
    let case = Case {
        file: "tests/fixtures/numpy/ok/transposed_view.py",
        function: "flipped",
        extra: &[],
        target: "numpy",
        shapes: "[[13, 7]]",
        dtype: "float64",
        cheaper: false,
    };
    check(&case);
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, module) = optimize(&case, dir.path());
    let code = std::fs::read_to_string(&module).expect("the module");
    assert!(
        code.contains("    return np.transpose(A, (1, 0,))\n"),
        "{code}"
    );
}
