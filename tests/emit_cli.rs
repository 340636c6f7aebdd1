//! End-to-end tests of `tenslift emit` on the real binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tenslift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .args(args)
        .output()
        .expect("the tenslift binary runs")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("targets/tests/programs")
        .join(format!("{name}.tensir"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn emits_numpy_to_stdout() {
    let out = tenslift(&[
        "emit",
        fixture("gemm").to_str().unwrap(),
        "--target",
        "numpy",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let code = text(&out.stdout);
    assert!(code.contains("def gemm(ni, nj, nk, alpha, beta, C, A, B):"));
    assert!(code.contains("# source: \"polybench/gemm.c\", lines 20-35"));
    assert!(code.contains("# verification: \"unverified\""));
}

#[test]
fn writes_every_target_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    for (target, marker) in [
        ("numpy", "import numpy as np"),
        ("jax", "jax.jit"),
        ("pytorch", "import torch"),
        ("hlo", "stablehlo.dot_general"),
    ] {
        let path = dir.path().join(format!("gemm_{target}.out"));
        let out = tenslift(&[
            "emit",
            fixture("gemm").to_str().unwrap(),
            "--target",
            target,
            "-o",
            path.to_str().unwrap(),
            "--size",
            "ni=4",
            "--size",
            "nj=5",
            "--size",
            "nk=6",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{target}: {}",
            text(&out.stderr)
        );
        let code = std::fs::read_to_string(&path).unwrap();
        assert!(code.contains(marker), "{target}:\n{code}");
    }
    // Only the outputs remain: no temporary files.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
}

#[test]
fn bad_program_gives_located_diagnostic_exit_1_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("bad.tensir");
    std::fs::write(
        &src,
        "func f(n: size, a: f64[n], b: f32[n], c: out f64[n]) {\n  c = add(a, b);\n}\n",
    )
    .unwrap();
    let dest = dir.path().join("out.py");
    let out = tenslift(&[
        "emit",
        src.to_str().unwrap(),
        "--target",
        "numpy",
        "-o",
        dest.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "bad.tensir:2:7: error: add operands have different element types f64 and f32"
        ),
        "{err}"
    );
    assert!(err.contains("  c = add(a, b);\n      ^"), "{err}");
    assert!(!dest.exists());
}

#[test]
fn hlo_without_sizes_is_a_usage_error() {
    let out = tenslift(&["emit", fixture("gemm").to_str().unwrap(), "--target", "hlo"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--size ni=N"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn missing_file_and_unknown_target_are_usage_errors() {
    let out = tenslift(&["emit", "/nonexistent/x.tensir", "--target", "numpy"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read /nonexistent/x.tensir"));
    let out = tenslift(&[
        "emit",
        fixture("gemm").to_str().unwrap(),
        "--target",
        "cobol",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn unwritable_output_is_an_io_error() {
    let out = tenslift(&[
        "emit",
        fixture("gemm").to_str().unwrap(),
        "--target",
        "numpy",
        "-o",
        "/nonexistent-dir/out.py",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot write /nonexistent-dir/out.py"));
}
