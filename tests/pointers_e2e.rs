//! End-to-end tests of pointer-walking C (issue 17) with the real binary:
//! every DSPstone-style kernel in `benchmarks/dspstone-ptr/` that the
//! manifest expects to lift comes out of `tenslift lift --target numpy`
//! as a NumPy function, and passes `tenslift verify` (Z3 bounded check and
//! differential runs against gcc) on NumPy; the ones expected partial are
//! reported with a reason, never silently.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// (file stem, expected to lift whole).
const KERNELS: &[(&str, bool)] = &[
    ("dot_product", true),
    ("lms_update", true),
    ("matrix1", true),
    ("matrix1x3", true),
    ("n_real_updates", true),
    ("vec_add_param", true),
    ("convolution", true),
    ("fir", true),
    ("fir_delay", true),
    ("fir2dim", true),
    ("lms", true),
    ("n_complex_updates", true),
];

fn tenslift(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenslift"));
    cmd.current_dir(ROOT).args(args);
    if std::env::var_os("TENSLIFT_PYTHON").is_none() {
        let local = Path::new(ROOT).join(".venv/bin/python");
        if !local.exists() {
            cmd.env("TENSLIFT_PYTHON", "/work/main/.venv/bin/python");
        }
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run tenslift: {e}"))
}

fn file(stem: &str) -> String {
    format!("benchmarks/dspstone-ptr/{stem}.c")
}

#[test]
fn every_pointer_kernel_extracts_to_subscripts_and_lifts_or_says_why() {
    for &(stem, whole) in KERNELS {
        let extract = tenslift(&["extract", &file(stem)]);
        let ir = String::from_utf8_lossy(&extract.stdout);
        assert_eq!(extract.status.code(), Some(0), "{stem}: {ir}");
        assert!(ir.contains(&format!("kernel {stem} ")), "{stem}: {ir}");
        let dir = tempfile::tempdir().expect("temp dir");
        let out_path = dir.path().join(format!("{stem}.py"));
        let out_arg = out_path.to_str().expect("utf-8 path");
        let lift = tenslift(&["lift", &file(stem), "--target", "numpy", "-o", out_arg]);
        let stderr = String::from_utf8_lossy(&lift.stderr);
        if whole {
            assert_eq!(lift.status.code(), Some(0), "{stem}: {stderr}");
            let code = std::fs::read_to_string(&out_path).expect("generated file");
            assert!(code.contains("import numpy"), "{stem}: {code}");
            assert!(code.contains(&format!("def {stem}(")), "{stem}: {code}");
        } else {
            assert_eq!(lift.status.code(), Some(5), "{stem}: {stderr}");
            assert!(stderr.contains("no program found"), "{stem}: {stderr}");
            assert!(!out_path.exists(), "{stem}: partial output written");
        }
    }
}

/// The kernels issue 17 made lift (flipped, sliding-window and
/// interleaved views), verified in a test of their own so that each test
/// stays short and the two run side by side.
const VIEW_KERNELS: &[&str] = &["convolution", "fir", "fir2dim", "n_complex_updates"];

/// Kernels that return a scalar computed before an in-place update of an
/// array (the delay-line shift walked from the end, the LMS weight update
/// that reads the filter output): the statements lift one after another
/// and the returned value comes back from the Python function.
const RETURN_KERNELS: &[&str] = &["fir_delay", "lms"];

#[test]
fn lifted_pointer_kernels_pass_bounded_and_differential() {
    let plain = KERNELS.iter().filter(|(stem, whole)| {
        *whole && !VIEW_KERNELS.contains(stem) && !RETURN_KERNELS.contains(stem)
    });
    for &(stem, _) in plain {
        verify_passes(stem);
    }
}

#[test]
fn kernels_read_through_flips_windows_and_strides_pass_bounded_and_differential() {
    for stem in VIEW_KERNELS {
        verify_passes(stem);
    }
}

#[test]
fn kernels_returning_a_scalar_beside_an_update_lift_whole_and_verify() {
    for stem in RETURN_KERNELS {
        let lift = tenslift(&["lift", &file(stem), "--target", "numpy"]);
        let code = String::from_utf8_lossy(&lift.stdout);
        assert_eq!(lift.status.code(), Some(0), "{stem}: {code}");
        assert!(code.contains("return "), "{stem}: {code}");
        assert!(!code.contains("for "), "{stem} keeps a loop: {code}");
        verify_passes(stem);
    }
}

/// `tenslift verify` on NumPy: the bounded check and the differential
/// runs against gcc both pass.
fn verify_passes(stem: &str) {
    let out = tenslift(&["verify", &file(stem), "--targets", "numpy", "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stem}: {stdout}");
    let record: Value = serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{stem}: not JSON ({e}): {stdout}"));
    assert_eq!(record["bounded"], "pass", "{stem}: {record}");
    assert_eq!(record["differential"], "pass", "{stem}: {record}");
}
