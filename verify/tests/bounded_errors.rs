//! What the bounded check says when the question is ill-posed or the
//! answer is out of reach: typed errors for mismatched interfaces, missing
//! sizes and shapes that do not fit the C; Unknown with a reason when the
//! time budget is spent.

mod common;

use common::{kernel, program, program_text, sizes};
use tenslift_verify::bounded::{check, BoundedOptions};
use tenslift_verify::{BoundedResult, VerifyError};

const GEMM: &str = "benchmarks/polybench/gemm.c";

fn gemm_sizes() -> std::collections::BTreeMap<String, i64> {
    sizes(&[("ni", 3), ("nj", 4), ("nk", 5)])
}

#[test]
fn a_parameter_of_another_type_is_an_interface_error() {
    let k = kernel(GEMM, "kernel_gemm");
    let p = program_text(
        "func kernel_gemm(ni: size, nj: size, nk: size, alpha: f32, beta: f64,\n  C: inout f64[ni, nj], A: f64[ni, nk], B: f64[nk, nj]) {\n  C = mul(beta, C);\n}\n",
    );
    let err = check(&k, &p, &gemm_sizes(), &BoundedOptions::default()).unwrap_err();
    assert!(
        matches!(&err, VerifyError::Interface(m) if m.contains("`alpha` is f64 in the C but f32")),
        "{err}"
    );
}

#[test]
fn an_output_the_program_omits_is_an_interface_error() {
    // atax writes tmp; a program without it cannot reproduce the C.
    let k = kernel("benchmarks/polybench/atax.c", "kernel_atax");
    let p = program_text(
        "func kernel_atax(m: size, n: size, A: f64[m, n], x: f64[n], y: out f64[n]) {\n  y = matmul(transpose(A, perm=[1, 0]), matmul(A, x));\n}\n",
    );
    let err = check(
        &k,
        &p,
        &sizes(&[("m", 3), ("n", 4)]),
        &BoundedOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, VerifyError::Interface(m) if m.contains("`tmp`")),
        "{err}"
    );
}

#[test]
fn a_missing_size_is_named() {
    let k = kernel(GEMM, "kernel_gemm");
    let err = check(
        &k,
        &program("gemm"),
        &sizes(&[("ni", 3), ("nj", 4)]),
        &BoundedOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err, VerifyError::MissingSize("nk".to_string()));
}

#[test]
fn a_program_shape_smaller_than_the_c_layout_is_reported() {
    // gemm_nt reads A[i*lda + p]; declaring A as m x k forgets lda.
    let k = kernel("benchmarks/darknet/gemm_nt.c", "gemm_nt");
    let p = program_text(
        "func gemm_nt(m: size, n: size, k: size, ALPHA: f32, A: f32[m, k], lda: size,\n  B: f32[n, ldb], ldb: size, C: inout f32[m, ldc], ldc: size) {\n  C[0:m, 0:n] = add(C[0:m, 0:n], mul(ALPHA, matmul(A, transpose(B[:, 0:k], perm=[1, 0]))));\n}\n",
    );
    let s = sizes(&[
        ("m", 2),
        ("n", 4),
        ("k", 3),
        ("lda", 5),
        ("ldb", 6),
        ("ldc", 7),
    ]);
    let err = check(&k, &p, &s, &BoundedOptions::default()).unwrap_err();
    assert!(
        matches!(&err, VerifyError::Kernel(m) if m.contains("`A[1][1]`") && m.contains("holds 6")),
        "{err}"
    );
}

#[test]
fn a_slice_out_of_bounds_at_these_sizes_is_a_program_error() {
    let k = kernel("benchmarks/darknet/gemm_nt.c", "gemm_nt");
    // B[0:k, 0:n] needs k <= n; at k = 5 > n = 4 it cannot run.
    let s = sizes(&[
        ("m", 2),
        ("n", 4),
        ("k", 5),
        ("lda", 5),
        ("ldb", 6),
        ("ldc", 7),
    ]);
    let err = check(
        &k,
        &program("gemm_nt_untransposed"),
        &s,
        &BoundedOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, VerifyError::Program(m) if m.contains("out of bounds")),
        "{err}"
    );
}

#[test]
fn a_spent_time_budget_is_unknown_not_pass() {
    let k = kernel(GEMM, "kernel_gemm");
    let result = check(
        &k,
        &program("gemm"),
        &gemm_sizes(),
        &BoundedOptions {
            timeout_ms: 0,
            assume_in_domain: false,
            isolated: false,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    match result {
        BoundedResult::Unknown { reason, .. } => {
            assert!(reason.contains("spent"), "{reason}")
        }
        other => panic!("expected unknown, got {other}"),
    }
}
