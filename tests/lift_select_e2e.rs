//! End-to-end tests of the select and region sketches through the real
//! `tenslift lift` binary: data-dependent selects (blend kernels with C
//! integer division), triangular output regions (`syrk`), triangular and
//! symmetric operands (`trmm`, `symm`) and constant fills. Each lifted
//! program's NumPy runs on the C driver's inputs and must write exactly
//! what the gcc-compiled C wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn tenslift(args: &[&str]) -> Output {
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

/// The lifted program's TensIR text (failing the test when not lifted).
fn lifted_program(file: &str) -> String {
    let out = tenslift(&[file, "--target", "numpy", "--json", "--timeout", "120"]);
    let record: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{file}: not one JSON record ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(record["status"], "lifted", "{file}: {record}");
    record["program"].as_str().unwrap_or_default().to_string()
}

const COMPARE: &str = r##"
import importlib.util, inspect, json, sys, pathlib
import numpy as np
module_path, inputs, outputs = map(pathlib.Path, sys.argv[1:4])
spec = importlib.util.spec_from_file_location("lifted", module_path)
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
sizes = json.loads((inputs / "meta.json").read_text())["sizes"]
name = [l.split(":", 1)[1].strip() for l in module_path.read_text().splitlines() if l.startswith("# function:")][0]
fn = getattr(mod, name)
args = {p: sizes[p] if p in sizes else np.load(inputs / f"{p}.npy") for p in inspect.signature(fn).parameters}
result = fn(*args.values())
checked = 0
for expected in sorted(outputs.glob("*.npy")):
    want = np.load(expected)
    got = np.asarray(result) if expected.stem == "return" else args[expected.stem]
    if want.dtype.kind == "f":
        assert np.allclose(got.reshape(want.shape), want, rtol=1e-9, atol=1e-9), expected.stem
    else:
        assert np.array_equal(got.reshape(want.shape), want), expected.stem
    checked += 1
assert checked > 0
print("checked", checked)
"##;

/// Lifts `file` to NumPy, runs it on the inputs the C driver generated for
/// `kernel` and compares each output with the compiled C's. `lift_args`
/// pass the driver's dataset macros to the lift, for kernels whose extents
/// are macros.
fn numpy_matches_compiled_c_with(kernel: &str, file: &str, lift_args: &[&str]) {
    let py = python();
    assert!(
        py.exists(),
        "set TENSLIFT_PYTHON: {} not found",
        py.display()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let module = dir.path().join("lifted.py");
    let module_arg = module.to_str().expect("utf-8 temp path");
    let mut args = vec![
        file,
        "--target",
        "numpy",
        "-o",
        module_arg,
        "--timeout",
        "120",
    ];
    args.extend_from_slice(lift_args);
    let out = tenslift(&args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let inputs = dir.path().join("in");
    let outputs = dir.path().join("out");
    let (inputs_arg, outputs_arg) = (
        inputs.to_str().expect("utf-8 temp path"),
        outputs.to_str().expect("utf-8 temp path"),
    );
    for (step, extra) in [
        ("inputs", vec!["--out", inputs_arg]),
        ("run", vec!["--inputs", inputs_arg, "--out", outputs_arg]),
    ] {
        let run = Command::new(&py)
            .arg("scripts/cref.py")
            .arg(step)
            .args(["--kernel", kernel, "--dataset", "MINI"])
            .args(&extra)
            .current_dir(ROOT)
            .output()
            .expect("run cref.py");
        assert!(
            run.status.success(),
            "cref {step} {kernel}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let run = Command::new(&py)
        .args(["-c", COMPARE])
        .args([module_arg, inputs_arg, outputs_arg])
        .output()
        .expect("run python");
    assert!(
        run.status.success(),
        "{file}: NumPy differs from C:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

fn numpy_matches_compiled_c(kernel: &str, file: &str) {
    numpy_matches_compiled_c_with(kernel, file, &[]);
}

/// `C[i][j]` updated for `j <= i` only: one formula per triangle, and the
/// lower one a matrix product, not an element loop.
#[test]
fn syrk_lifts_to_a_triangle_split_of_a_matrix_product() {
    let program = lifted_program("benchmarks/polybench/syrk.c");
    for part in ["tril(", "triu(C, k=1)", "matmul(A, transpose(A"] {
        assert!(program.contains(part), "{part} missing in {program}");
    }
    numpy_matches_compiled_c("syrk", "benchmarks/polybench/syrk.c");
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
        symm.contains("tril(A, k=0)") && symm.contains("matmul("),
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
