//! Shared by the end-to-end lift tests: running the real `tenslift` binary,
//! and the check every lifted kernel must pass — its emitted NumPy, run on
//! the inputs the C driver (scripts/cref.py) generates, writes exactly what
//! the gcc-compiled C writes.

// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// `tenslift lift ARGS` from the repository root.
pub fn tenslift_lift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .arg("lift")
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("run tenslift")
}

pub fn python() -> PathBuf {
    std::env::var_os("TENSLIFT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join(".venv/bin/python"))
}

/// The C parameter names of the one kernel in `file`, in C order, as
/// `tenslift extract --json` reports them (the emitter may rename some to be
/// valid Python: `np` → `np_`).
fn c_parameter_names(file: &str, c_flags: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .args(["extract", file, "--json"])
        .args(c_flags)
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

/// In/out arrays are updated in place by the lifted function, as by the C;
/// a returned scalar is compared with the driver's `return.npy`.
const COMPARE: &str = r##"
import importlib.util, inspect, json, sys, pathlib
import numpy as np
module_path, inputs, outputs = map(pathlib.Path, sys.argv[1:4])
c_names = json.loads(sys.argv[4])
spec = importlib.util.spec_from_file_location("lifted", module_path)
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
sizes = json.loads((inputs / "meta.json").read_text())["sizes"]
name = [l.split(":", 1)[1].strip() for l in module_path.read_text().splitlines() if l.startswith("# function:")][0]
fn = getattr(mod, name)
assert len(c_names) == len(inspect.signature(fn).parameters)
def arg(p):
    if p in sizes:
        return sizes[p]
    if (inputs / f"{p}.npy").exists():
        return np.load(inputs / f"{p}.npy")
    # A macro size `N`: the driver compiled the C with -DN=<the size n>.
    return sizes[p.lower()]
args = {p: arg(p) for p in c_names}
result = fn(*args.values())
checked = 0
for expected in sorted(outputs.glob("*.npy")):
    want = np.load(expected)
    got = (np.asarray(result) if expected.stem == "return" else args[expected.stem]).reshape(want.shape)
    if want.dtype.kind == "f":
        tol = 1e-4 if want.dtype == np.float32 else 1e-9
        assert np.allclose(got, want, rtol=tol, atol=tol), (expected.stem, np.abs(got - want).max())
    else:
        assert np.array_equal(got, want), expected.stem
    checked += 1
assert checked > 0
print("checked", checked)
"##;

/// Lifts `file` to a NumPy module (with `c_flags`, e.g. the driver's
/// dataset macros for kernels whose extents are macros), runs it on the
/// inputs the C driver generates for `kernel` at MINI, and compares every
/// output with what the compiled C wrote.
pub fn numpy_matches_compiled_c(kernel: &str, file: &str, c_flags: &[&str]) {
    let py = python();
    assert!(
        py.exists(),
        "set TENSLIFT_PYTHON: {} not found",
        py.display()
    );
    let c_params = c_parameter_names(file, c_flags);
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
    args.extend_from_slice(c_flags);
    let out = tenslift_lift(&args);
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
