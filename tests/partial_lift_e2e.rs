//! End-to-end tests of partial lifting: `tenslift lift` on PolyBench
//! kernels whose outer loop carries a dependency (time-stepped stencils, a
//! triangular solver) keeps that loop, reports status `partial` with the
//! kept loops, and the emitted NumPy computes what the gcc-compiled C does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn tenslift_lift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .arg("lift")
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("run tenslift")
}

fn python() -> PathBuf {
    std::env::var_os("TENSLIFT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join(".venv/bin/python"))
}

/// The one JSON record `lift --json` prints for `file`.
fn record(file: &str) -> (Output, Value) {
    let out = tenslift_lift(&[file, "--target", "numpy", "--json", "--timeout", "120"]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let line = stdout.lines().next().unwrap_or_else(|| {
        panic!(
            "no record for {file}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}"));
    (out, value)
}

fn kept_loops(record: &Value) -> Vec<String> {
    record["kept_loops"]
        .as_array()
        .unwrap_or_else(|| panic!("no kept_loops in {record}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// The C parameter names of the one kernel in `file`, in C order, as
/// `tenslift extract --json` reports them.
fn c_parameter_names(file: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .args(["extract", file, "--json"])
        .current_dir(ROOT)
        .output()
        .expect("run tenslift extract");
    let unit: Value = serde_json::from_slice(&out.stdout).expect("extract JSON");
    unit["kernels"][0]["params"]
        .as_array()
        .expect("params")
        .iter()
        .map(|p| p["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Lifts `file` to a NumPy module, runs it on the inputs the C driver
/// (scripts/cref.py, gcc) generates for the MINI dataset, and compares
/// every output array with what the compiled C wrote.
fn numpy_matches_compiled_c(manifest_kernel: &str, file: &str) {
    let py = python();
    let c_params = c_parameter_names(file);
    assert!(
        py.exists(),
        "set TENSLIFT_PYTHON: {} not found",
        py.display()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let module = dir.path().join("lifted.py");
    let module_arg = module.to_str().expect("utf-8 path");
    let out = tenslift_lift(&[
        file,
        "--target",
        "numpy",
        "-o",
        module_arg,
        "--timeout",
        "120",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inputs = dir.path().join("in");
    let outputs = dir.path().join("out");
    let inputs_arg = inputs.to_str().expect("utf-8 path");
    let outputs_arg = outputs.to_str().expect("utf-8 path");
    let steps: [(&str, Vec<&str>); 2] = [
        ("inputs", vec!["--out", inputs_arg]),
        ("run", vec!["--inputs", inputs_arg, "--out", outputs_arg]),
    ];
    for (step, extra) in steps {
        let done = Command::new(&py)
            .arg("scripts/cref.py")
            .arg(step)
            .args(["--kernel", manifest_kernel, "--dataset", "MINI"])
            .args(&extra)
            .current_dir(ROOT)
            .output()
            .expect("run cref.py");
        assert!(
            done.status.success(),
            "cref {step}: {}",
            String::from_utf8_lossy(&done.stderr)
        );
    }
    // In/out arrays are updated in place by the lifted function, as by C.
    let compare = r##"
import importlib.util, inspect, json, sys, pathlib
import numpy as np
module_path, inputs, outputs = map(pathlib.Path, sys.argv[1:4])
# The emitted parameters are the C ones in C order, some renamed to be
# valid Python (`_fict_`): files are found by the C names.
c_names = json.loads(sys.argv[4])
spec = importlib.util.spec_from_file_location("lifted", module_path)
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
sizes = json.loads((inputs / "meta.json").read_text())["sizes"]
name = [l.split(":", 1)[1].strip() for l in module_path.read_text().splitlines() if l.startswith("# function:")][0]
fn = getattr(mod, name)
assert len(c_names) == len(inspect.signature(fn).parameters)
args = {p: sizes[p] if p in sizes else np.load(inputs / f"{p}.npy") for p in c_names}
fn(*args.values())
checked = 0
for expected in sorted(outputs.glob("*.npy")):
    want = np.load(expected)
    got = args[expected.stem]
    assert np.allclose(got.reshape(want.shape), want, rtol=1e-9, atol=1e-9), (expected.stem, np.abs(got - want).max())
    checked += 1
assert checked > 0
print("checked", checked)
"##;
    let run = Command::new(&py)
        .args(["-c", compare])
        .arg(&module)
        .arg(&inputs)
        .arg(&outputs)
        .arg(serde_json::to_string(&c_params).expect("JSON"))
        .output()
        .expect("run python");
    assert!(
        run.status.success(),
        "{file}: NumPy differs from C:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn jacobi_1d_is_partial_with_the_time_loop_kept() {
    let (out, record) = record("benchmarks/polybench/jacobi-1d.c");
    assert_eq!(out.status.code(), Some(0), "{record}");
    assert_eq!(record["status"], "partial", "{record}");
    assert_eq!(kept_loops(&record), vec!["t"]);
    assert_eq!(record["vectorised"], true);
    let program = record["program"].as_str().unwrap_or_default();
    assert!(program.contains("for t in 0..tsteps"), "{program}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("partial in") && stderr.contains("loops kept: t"),
        "{stderr}"
    );
}

#[test]
fn jacobi_1d_numpy_matches_compiled_c() {
    numpy_matches_compiled_c("jacobi-1d", "benchmarks/polybench/jacobi-1d.c");
}

#[test]
fn jacobi_2d_numpy_matches_compiled_c() {
    numpy_matches_compiled_c("jacobi-2d", "benchmarks/polybench/jacobi-2d.c");
}

#[test]
fn trisolv_numpy_matches_compiled_c() {
    numpy_matches_compiled_c("trisolv", "benchmarks/polybench/trisolv.c");
}

#[test]
fn trisolv_keeps_only_its_row_loop() {
    let (_, record) = record("benchmarks/polybench/trisolv.c");
    assert_eq!(record["status"], "partial", "{record}");
    assert_eq!(kept_loops(&record), vec!["i"]);
}

#[test]
fn heat_3d_numpy_matches_compiled_c() {
    numpy_matches_compiled_c("heat-3d", "benchmarks/polybench/heat-3d.c");
}

#[test]
fn fdtd_2d_numpy_matches_compiled_c() {
    numpy_matches_compiled_c("fdtd-2d", "benchmarks/polybench/fdtd-2d.c");
}

#[test]
fn seidel_2d_numpy_matches_compiled_c() {
    numpy_matches_compiled_c("seidel-2d", "benchmarks/polybench/seidel-2d.c");
}

#[test]
fn seidel_2d_vectorises_the_terms_no_earlier_iteration_wrote() {
    let (_, record) = record("benchmarks/polybench/seidel-2d.c");
    assert_eq!(record["status"], "partial", "{record}");
    assert_eq!(kept_loops(&record), vec!["t", "i", "j"]);
    let program = record["program"].as_str().unwrap_or_default();
    // Rows i-1 and i+1 and the unwritten part of row i as slices; only
    // A[i, j-1] stays in the j loop.
    assert!(program.contains("let A_j_terms = "), "{program}");
    assert!(program.contains("A[i + 1, 2:n]"), "{program}");
    assert!(
        program.contains("A[i, j] = add(div(A[i, j - 1], 9.0), A_j_terms[j - 1])"),
        "{program}"
    );
}

#[test]
fn lu_numpy_matches_compiled_c() {
    numpy_matches_compiled_c("lu", "benchmarks/polybench/lu.c");
}

#[test]
fn cholesky_numpy_matches_compiled_c() {
    numpy_matches_compiled_c("cholesky", "benchmarks/polybench/cholesky.c");
}
