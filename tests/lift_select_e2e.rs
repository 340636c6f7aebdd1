//! End-to-end tests of the select and region sketches through the real
//! `tenslift lift` binary: data-dependent selects (blend kernels with C
//! integer division), triangular output regions (`syrk`, and `syr2k`, a
//! sum of two products of the same operands), triangular and
//! symmetric operands (`trmm`, `symm`), constant fills, and sketches over
//! stored intermediates (`correlation`, `covariance`). Each lifted
//! program's NumPy runs on the C driver's inputs and must write exactly
//! what the gcc-compiled C wrote.

use std::process::{Command, Output};

use serde_json::Value;

mod lift_common;
use lift_common::ROOT;

fn tenslift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .arg("lift")
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("run tenslift")
}

/// The lifted program's TensIR text (failing the test when not lifted).
fn lifted_program(file: &str) -> String {
    lifted_program_with(file, &[])
}

fn lifted_program_with(file: &str, extra: &[&str]) -> String {
    let mut args = vec![file, "--target", "numpy", "--json", "--timeout", "120"];
    args.extend_from_slice(extra);
    let out = tenslift(&args);
    let record: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{file}: not one JSON record ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(record["status"], "lifted", "{file}: {record}");
    record["program"].as_str().unwrap_or_default().to_string()
}

fn numpy_matches_compiled_c_with(kernel: &str, file: &str, lift_args: &[&str]) {
    lift_common::numpy_matches_compiled_c(kernel, file, lift_args);
}

fn numpy_matches_compiled_c(kernel: &str, file: &str) {
    lift_common::numpy_matches_compiled_c(kernel, file, &[]);
}

/// `C[i][j]` updated for `j <= i` only: one formula per triangle, and the
/// lower one a matrix product, not an element loop (as lifted); NumPy then
/// gets it as one BLAS syrk (the symmetry rewrite, on by default).
#[test]
fn syrk_lifts_to_a_triangle_split_of_a_matrix_product() {
    let file = "benchmarks/polybench/syrk.c";
    let program = lifted_program_with(file, &["--no-symmetry"]);
    for part in ["tril(", "triu(C, k=1)", "matmul(A, transpose(A"] {
        assert!(program.contains(part), "{part} missing in {program}");
    }
    let program = lifted_program(file);
    assert!(
        program.contains("C = syrk(A, C, alpha, beta);"),
        "{program}"
    );
    numpy_matches_compiled_c("syrk", file);
}

/// `syr2k` adds `A @ B.T + B @ A.T` on the lower triangle: two matrix
/// products of the same operands, each peeled off by coefficient
/// extraction, in both search modes.
#[test]
fn syr2k_lifts_to_a_triangle_split_of_two_matrix_products() {
    let file = "benchmarks/polybench/syr2k.c";
    for mode in ["best", "first"] {
        let out = tenslift(&[
            file,
            "--target",
            "numpy",
            "--json",
            "--search",
            mode,
            "--no-symmetry",
        ]);
        let record: Value = serde_json::from_slice(&out.stdout).expect("one JSON record");
        assert_eq!(record["status"], "lifted", "{mode}: {record}");
        let program = record["program"].as_str().unwrap_or_default();
        assert_eq!(program.matches("matmul(").count(), 2, "{program}");
        for part in ["tril(", "triu(C, k=1)", "transpose(A"] {
            assert!(program.contains(part), "{part} missing in {program}");
        }
    }
    numpy_matches_compiled_c("syr2k", file);
}

/// `correlation` stores column means, then standard deviations (a
/// thresholded root of second moments about the stored means), then the
/// standardised data in place, then its Gram matrix with a unit diagonal:
/// each later output is a sketch over the stored ones, in both modes.
#[test]
fn correlation_lifts_through_its_stored_statistics() {
    let file = "benchmarks/polybench/correlation.c";
    for mode in ["best", "first"] {
        let out = tenslift(&[file, "--target", "numpy", "--json", "--search", mode]);
        let record: Value = serde_json::from_slice(&out.stdout).expect("one JSON record");
        assert_eq!(record["status"], "lifted", "{mode}: {record}");
        assert!(
            record["time_s"].as_f64().is_some_and(|t| t < 60.0),
            "{record}"
        );
        let program = record["program"].as_str().unwrap_or_default();
        for part in [
            // The column sums of squares: one einsum pass, no squared temporary.
            "einsum(\"ab,ab->b\", sub(data, mean), sub(data, mean))",
            "-0.1",
            "div(sub(data, mean), mul(sqrt(float_n), stddev))",
            "matmul(transpose(data, perm=[1, 0]), data)",
            "triu(full([m, m], 1.0), k=0)",
        ] {
            assert!(program.contains(part), "{part} missing in {program}");
        }
    }
    numpy_matches_compiled_c("correlation", file);
}

/// `covariance` centres the data in place, then fills the upper triangle
/// of `Wᵀ W / (n - 1)` and mirrors it into the lower one: the whole matrix
/// is one product of the stored data, divided as C divides, no loop kept.
#[test]
fn covariance_lifts_to_a_scaled_gram_matrix_of_the_centred_data() {
    let file = "benchmarks/polybench/covariance.c";
    for mode in ["best", "first"] {
        let out = tenslift(&[file, "--target", "numpy", "--json", "--search", mode]);
        let record: Value = serde_json::from_slice(&out.stdout).expect("one JSON record");
        assert_eq!(record["status"], "lifted", "{mode}: {record}");
        let program = record["program"].as_str().unwrap_or_default();
        assert!(
            program.contains(
                "cov = div(matmul(transpose(data, perm=[1, 0]), data), sub(float_n, 1.0))"
            ),
            "{program}"
        );
        assert!(!program.contains("for "), "{program}");
    }
    numpy_matches_compiled_c("covariance", file);
}

/// `trmm` reads `A[k][i]` for `k > i` only; `symm` reads the lower
/// triangle of `A` as the symmetric matrix it stores.
#[test]
fn triangular_and_symmetric_operands_lift_and_match_c() {
    let trmm = lifted_program("benchmarks/polybench/trmm.c");
    assert!(trmm.contains("tril(A, k=-1)"), "{trmm}");
    numpy_matches_compiled_c("trmm", "benchmarks/polybench/trmm.c");
    let symm = lifted_program("benchmarks/polybench/symm.c");
    assert!(
        // One contraction with the symmetric matrix: matmul or its einsum.
        symm.contains("tril(A, k=0)") && (symm.contains("matmul(") || symm.contains("einsum(")),
        "{symm}"
    );
    numpy_matches_compiled_c("symm", "benchmarks/polybench/symm.c");
}

/// `if (a == 0) pixel = 255; else pixel = 255 - (255 - b) / a;`: a where
/// over the division by the active layer.
#[test]
fn color_burn_lifts_to_a_where_and_matches_c() {
    let program = lifted_program("benchmarks/blend/color_burn_8.c");
    assert!(program.contains("where(ne("), "{program}");
    numpy_matches_compiled_c("color_burn_8", "benchmarks/blend/color_burn_8.c");
}

/// A condition on a remainder of the noise byte and a scalar parameter.
#[test]
fn dissolve_blend_lifts_to_a_where_and_matches_c() {
    let program = lifted_program("benchmarks/blend/dissolve_blend_8.c");
    assert!(program.contains("where(lt("), "{program}");
    numpy_matches_compiled_c("dissolve_blend_8", "benchmarks/blend/dissolve_blend_8.c");
}

/// Two branches that each divide by 255, one of them a factored product
/// `2 * (255 - b) * (255 - a)`.
#[test]
fn overlay_blend_lifts_to_a_where_and_matches_c() {
    let program = lifted_program("benchmarks/blend/overlay_blend_8.c");
    assert!(program.contains("where(lt("), "{program}");
    numpy_matches_compiled_c("overlay_blend_8", "benchmarks/blend/overlay_blend_8.c");
}

#[test]
fn color_dodge_and_screen_blends_match_c() {
    numpy_matches_compiled_c("color_dodge_8", "benchmarks/blend/color_dodge_8.c");
    numpy_matches_compiled_c("screen_blend_8", "benchmarks/blend/screen_blend_8.c");
}

/// `x[i] = 1` for a buffer of macro size `N`: a constant fill, lifted at
/// the size the C driver's MINI dataset defines.
#[test]
fn a_constant_fill_lifts() {
    let program = lifted_program("benchmarks/dspstone/pin_down.c");
    assert!(program.contains("x = broadcast(1i32"), "{program}");
    numpy_matches_compiled_c_with(
        "pin_down",
        "benchmarks/dspstone/pin_down.c",
        &["-D", "N=32"],
    );
}

/// The division in a `where` branch C takes only for a non-zero divisor is
/// guarded (`where(d != 0, d, 1)`): a tensor program evaluates both
/// branches, and PyTorch raises on an integer division by zero. The
/// PyTorch program runs on inputs full of zeros (and 255s, color dodge's
/// zero divisor) and writes what the NumPy program writes.
#[test]
fn blend_divisions_are_guarded_and_run_under_pytorch() {
    for (kernel, guard) in [
        (
            "color_burn_8",
            "trunc_div(sub(255i32, cast(base, i32)), where(",
        ),
        ("color_dodge_8", "trunc_div(cast(base, i32), where("),
    ] {
        let file = format!("benchmarks/blend/{kernel}.c");
        let program = lifted_program(&file);
        assert!(program.contains(guard), "{kernel}: {program}");
        let dir = tempfile::tempdir().expect("temp dir");
        for target in ["numpy", "pytorch"] {
            let module = dir.path().join(format!("{target}_{kernel}.py"));
            let out = tenslift(&[
                &file,
                "--target",
                target,
                "-o",
                module.to_str().expect("utf-8 temp path"),
                "--timeout",
                "120",
            ]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{kernel} {target}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let run = Command::new(lift_common::python())
            .args(["-c", RUN_BOTH, kernel])
            .arg(dir.path())
            .output()
            .expect("run python");
        assert!(
            run.status.success(),
            "{kernel}: {}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
    }
}

/// Runs the NumPy and PyTorch modules of one blend kernel on the same u8
/// inputs (a third of the active layer 0, a quarter 255) and compares.
const RUN_BOTH: &str = r#"
import importlib.util, pathlib, sys
import numpy as np, torch
kernel, folder = sys.argv[1], pathlib.Path(sys.argv[2])
def load(target):
    spec = importlib.util.spec_from_file_location(target, folder / f"{target}_{kernel}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, kernel)
m, n = 24, 32
rng = np.random.default_rng(7)
base = rng.integers(0, 256, (m, n), dtype=np.uint8)
active = rng.integers(0, 256, (m, n), dtype=np.uint8)
active[::3] = 0
active[1::4] = 255
out_np = np.zeros((m, n), dtype=np.uint8)
load("numpy")(base.copy(), active.copy(), out_np, m, n)
out_t = torch.zeros((m, n), dtype=torch.uint8)
load("pytorch")(torch.from_numpy(base.copy()), torch.from_numpy(active.copy()), out_t, m, n)
assert (active == 0).any() and (active == 255).any()
assert np.array_equal(out_np, out_t.numpy()), (out_np, out_t.numpy())
"#;
