//! The conversions corpus (`benchmarks/conversions/`) end to end through the
//! real binary: every kernel lifts to NumPy, JAX and PyTorch, its TensIR is
//! a snapshot, and `tenslift verify` passes the bounded check and the
//! differential runs against gcc on every target. The histograms are
//! tested in `tests/histograms.rs`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The kernels that lift, each with a piece of its NumPy code that shows
/// the conversion C does.
const LIFTED: &[(&str, &str)] = &[
    ("int_matmul_facc", "astype(np.float32)"),
    ("int_mean_var", "astype(np.float32)"),
    // u8 converts to f32 exactly inside the ufunc: no separate copy.
    ("u8_normalize", "np.float32(255.0)"),
    // Assigning into the i32 destination truncates like C's conversion
    // (block by block: the product and its conversion are two passes).
    ("quantize_trunc", "q[_lo:_hi] = _t0"),
    ("gemv_dacc", "np.matmul"),
    ("dot_dacc", "astype(np.float64)"),
];

fn tenslift(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenslift"));
    cmd.current_dir(ROOT)
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .args(args);
    if std::env::var_os("TENSLIFT_PYTHON").is_none() && !Path::new(ROOT).join(".venv").exists() {
        cmd.env("TENSLIFT_PYTHON", "/work/main/.venv/bin/python");
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run tenslift: {e}"))
}

fn file(kernel: &str) -> String {
    format!("benchmarks/conversions/{kernel}.c")
}

fn record(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().next().unwrap_or_else(|| {
        panic!(
            "no record; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

#[test]
fn every_conversion_kernel_lifts_to_numpy_jax_and_pytorch() {
    for (kernel, shows) in LIFTED {
        for target in ["numpy", "jax", "pytorch"] {
            let out = tenslift(&["lift", "-t", target, &file(kernel)]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{kernel} to {target}: {stderr}");
            let code = String::from_utf8_lossy(&out.stdout);
            assert!(code.contains(&format!("def {kernel}(")), "{kernel}: {code}");
            if target == "numpy" {
                assert!(code.contains(shows), "{kernel} lacks `{shows}`:\n{code}");
            }
        }
    }
}

#[test]
fn the_lifted_tensir_of_every_conversion_kernel_is_a_snapshot() {
    let mut lines = Vec::new();
    for (kernel, _) in LIFTED {
        let out = tenslift(&["lift", "-t", "numpy", "--json", &file(kernel)]);
        let r = record(&out);
        let program = r["program"].as_str().unwrap_or_default();
        // The body only: the header names the file and lines.
        let body: Vec<&str> = program
            .lines()
            .filter(|l| !l.starts_with("source ") && !l.starts_with("status "))
            .collect();
        lines.push(format!("// {kernel}\n{}", body.join("\n")));
    }
    insta::assert_snapshot!("conversions_tensir", lines.join("\n"));
}

#[test]
fn a_float_sum_stored_into_an_int_array_is_cast_back_with_truncation() {
    let out = tenslift(&["lift", "-t", "numpy", "--json", &file("int_matmul_facc")]);
    let r = record(&out);
    let program = r["program"].as_str().unwrap_or_default();
    assert!(
        program.contains("c = cast(matmul(cast(a, f32), cast(b, f32)), i32);"),
        "{program}"
    );
}

fn verify_passes(kernel: &str) {
    let out = tenslift(&["verify", "--json", "--timeout", "10", &file(kernel)]);
    let r = record(&out);
    assert_eq!(r["bounded"], "pass", "{kernel}: {r}");
    assert_eq!(r["differential"], "pass", "{kernel}: {r}");
    let runs = r["details"]["differential"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for target in ["numpy", "jax", "pytorch"] {
        let mine: Vec<&Value> = runs.iter().filter(|x| x["target"] == target).collect();
        assert!(!mine.is_empty(), "{kernel}: {target} did not run: {r}");
        assert!(
            mine.iter().all(|x| x["verdict"] == "pass"),
            "{kernel} {target}: {r}"
        );
    }
}

#[test]
fn int_matmul_with_a_float_accumulator_verifies() {
    verify_passes("int_matmul_facc");
}

#[test]
fn int_mean_and_variance_in_float_verify() {
    verify_passes("int_mean_var");
}

#[test]
fn u8_normalisation_verifies() {
    verify_passes("u8_normalize");
}

#[test]
fn truncating_quantisation_verifies() {
    verify_passes("quantize_trunc");
}

#[test]
fn double_accumulators_over_float_data_verify() {
    verify_passes("gemv_dacc");
    verify_passes("dot_dacc");
}
