//! End-to-end tests of partial lifting: `tenslift lift` on PolyBench
//! kernels whose outer loop carries a dependency (time-stepped stencils, a
//! triangular solver) keeps that loop, reports status `partial` with the
//! kept loops, and the emitted NumPy computes what the gcc-compiled C does.

use std::process::Output;

use serde_json::Value;

mod lift_common;
use lift_common::tenslift_lift;

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

fn numpy_matches_compiled_c(manifest_kernel: &str, file: &str) {
    lift_common::numpy_matches_compiled_c(manifest_kernel, file, &[]);
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
fn trisolv_keeps_no_loop_now_that_it_is_a_triangular_solve() {
    // It kept its row loop until the solver tactic (src/synth/solvers.rs)
    // lifted it whole; the partial path must not win over that.
    let (_, record) = record("benchmarks/polybench/trisolv.c");
    assert_eq!(record["status"], "lifted", "{record}");
    assert!(record["kept_loops"].is_null(), "{record}");
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
