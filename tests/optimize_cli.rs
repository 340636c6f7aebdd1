//! End-to-end tests of `tenslift optimize-tensir` on the real binary.

use std::process::{Command, Output};

fn tenslift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .args(args)
        .output()
        .expect("the tenslift binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// PolyBench atax as the search first lifted it: `x @ (Aᵀ A)`, cubic.
const ATAX: &str = "func atax(m: size, n: size, A: f64[m, n], x: f64[n], y: out f64[n]) {\n  \
                    y = matmul(x, matmul(transpose(A, perm=[1, 0]), A));\n}\n";

#[test]
fn a_cubic_product_chain_becomes_two_matrix_vector_products() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("atax.tensir");
    std::fs::write(&input, ATAX).expect("writes");
    let output = dir.path().join("atax.opt.tensir");
    let out = tenslift(&[
        "optimize-tensir",
        input.to_str().expect("utf-8 path"),
        "--size",
        "m=1900",
        "--size",
        "n=2100",
        "-o",
        output.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let program = std::fs::read_to_string(&output).expect("the optimised program");
    assert!(
        program.contains("y = matmul(matmul(x, transpose(A, perm=[1, 0])), A);"),
        "{program}"
    );
    let report = text(&out.stderr);
    assert!(report.contains("1 of 1 statements rewritten"), "{report}");
    assert!(report.contains("matmul-assoc-left"), "{report}");
    // The optimised program is a fixed point.
    let again = tenslift(&[
        "optimize-tensir",
        output.to_str().expect("utf-8 path"),
        "-q",
    ]);
    assert_eq!(text(&again.stdout), program);
}

#[test]
fn a_bad_program_is_located_and_nothing_is_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("bad.tensir");
    std::fs::write(&input, "func f(x: f64[n]) {\n  x = add(x, 1i32);\n}\n").expect("writes");
    let output = dir.path().join("out.tensir");
    let out = tenslift(&[
        "optimize-tensir",
        input.to_str().expect("utf-8 path"),
        "-o",
        output.to_str().expect("utf-8 path"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("bad.tensir:"),
        "{}",
        text(&out.stderr)
    );
    assert!(!output.exists());
}

#[test]
fn usage_errors_exit_2() {
    let missing = tenslift(&["optimize-tensir", "/no/such/file.tensir"]);
    assert_eq!(missing.status.code(), Some(2));
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("atax.tensir");
    std::fs::write(&input, ATAX).expect("writes");
    let scale = tenslift(&[
        "optimize-tensir",
        input.to_str().expect("utf-8 path"),
        "--scale",
        "0",
    ]);
    assert_eq!(scale.status.code(), Some(2));
    let table = tenslift(&[
        "optimize-tensir",
        input.to_str().expect("utf-8 path"),
        "--cost-table",
        "/no/such/table.json",
    ]);
    assert_eq!(table.status.code(), Some(2));
}
