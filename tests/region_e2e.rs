//! End-to-end tests of region lifting with the real binary, libclang, gcc
//! and the Python libraries, on kernels in the form real code declares
//! them (`tests/fixtures/region`): PolyBench as distributed (fixed, padded
//! extents; loops to parameters), one macro per array dimension, a declared
//! row length and a flat pointer with a leading dimension wider than the
//! loops run.
//!
//! Each kernel lifts whole (jacobi-2d keeps its time loop), its program
//! reads and writes slices of the declared arrays, and its preconditions
//! are stated. The generated module, run on arrays at their declared size
//! whose border is filled with a sentinel, equals the gcc-compiled C (a
//! shared library called through ctypes on the same arrays) on the region
//! and leaves the border as it was; a call that violates a precondition
//! raises the `ValueError` naming it. `tenslift verify` passes bounded and
//! differential checks.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const DIR: &str = "tests/fixtures/region";

fn tenslift(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenslift"));
    cmd.current_dir(ROOT).args(args);
    if std::env::var_os("TENSLIFT_PYTHON").is_none() {
        // Worktrees without their own venv use the main checkout's.
        if !Path::new(ROOT).join(".venv/bin/python").exists() {
            cmd.env("TENSLIFT_PYTHON", "/work/main/.venv/bin/python");
        }
    }
    match cmd.output() {
        Ok(o) => o,
        Err(e) => panic!("cannot run tenslift: {e}"),
    }
}

fn python() -> std::path::PathBuf {
    match std::env::var_os("TENSLIFT_PYTHON") {
        Some(p) => p.into(),
        None if Path::new(ROOT).join(".venv/bin/python").exists() => {
            Path::new(ROOT).join(".venv/bin/python")
        }
        None => "/work/main/.venv/bin/python".into(),
    }
}

fn records(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Lifts `stem` with `--json`; the one record.
fn lift_record(stem: &str) -> Value {
    let file = format!("{DIR}/{stem}.c");
    let out = tenslift(&[
        "lift",
        &file,
        "--target",
        "numpy",
        "--json",
        "--timeout",
        "120",
    ]);
    assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
    let mut all = records(&out);
    assert_eq!(all.len(), 1, "{file}");
    all.remove(0)
}

/// (fixture, status, a slice the program must read or write, the
/// preconditions `lift --json` must list).
const EXPECTED: &[(&str, &str, &str, &[&str])] = &[
    (
        "gemm",
        "lifted",
        "C[0:ni, 0:nj] = ",
        &["ni <= ext_40", "nj <= ext_50", "nk <= ext_60"],
    ),
    (
        "atax",
        "lifted",
        "tmp[0:m] = ",
        &["m <= ext_38", "n <= ext_42"],
    ),
    (
        "bicg",
        "lifted",
        "q[0:n] = ",
        &["n <= ext_42", "m <= ext_38"],
    ),
    (
        "syrk",
        "lifted",
        // The triangle split, run by one BLAS syrk on the slices.
        "C[0:n, 0:n] = syrk(A[0:n, 0:m], C[0:n, 0:n], alpha, beta);",
        &["n <= ext_44", "m <= ext_36"],
    ),
    (
        "jacobi_2d",
        "partial",
        "B[1:n - 1, 1:n - 1] = ",
        &["n <= ext_30"],
    ),
    (
        "mult_dims",
        "lifted",
        "c_matrix[0:A_ROW, 0:B_COL] = ",
        &["B_ROW <= A_COL", "A_ROW <= C_ROW", "B_COL <= C_COL"],
    ),
    (
        "covariance",
        "lifted",
        "cov[0:m, 0:m] = ",
        &["n <= ext_32", "m <= ext_28"],
    ),
    ("gemv_lda", "lifted", "A[:, 0:n]", &["n <= lda"]),
    ("scale_ld", "lifted", "A[:, 0:n] = ", &["n <= ld"]),
];

#[test]
fn real_form_kernels_lift_with_sliced_regions_and_stated_preconditions() {
    let mut failures = Vec::new();
    for (stem, status, slice, preconditions) in EXPECTED {
        let r = lift_record(stem);
        let program = r["program"].as_str().unwrap_or_default();
        let listed: Vec<&str> = r["preconditions"]
            .as_array()
            .map(|a| a.iter().filter_map(|p| p["relation"].as_str()).collect())
            .unwrap_or_default();
        let stated = preconditions
            .iter()
            .all(|p| program.contains(&format!("requires {p}\n")));
        if r["status"] != *status || !program.contains(slice) || listed != *preconditions || !stated
        {
            failures.push(format!("{stem}: {r}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn lifted_tensir_of_the_region_fixtures() {
    for (stem, ..) in EXPECTED {
        let r = lift_record(stem);
        let program = r["program"].as_str().unwrap_or_default();
        insta::assert_snapshot!(format!("region_{stem}"), program);
    }
}

/// The extents' build values travel with the program: `lift --json` lists
/// each extent size with its value and the array axis it came from, and
/// the TensIR text carries them (`extent ext_40 = 40 of C[0]`), so drivers
/// read them from the program, not from the size's name.
#[test]
fn lift_json_lists_each_extent_with_its_value_and_array_axis() {
    let r = lift_record("gemm");
    let extents = serde_json::to_string_pretty(&r["extents"]).expect("JSON");
    insta::assert_snapshot!("region_gemm_extents_json", extents);
    let program = r["program"].as_str().unwrap_or_default();
    assert!(program.contains("extent ext_40 = 40 of C[0]\n"), "{r}");
    // An extent that is not a constant (a leading-dimension parameter) is
    // no extent size: nothing is listed.
    let r = lift_record("gemv_lda");
    assert_eq!(r["extents"], json!([]), "{r}");
}

/// PolyBench as distributed, through the manifest: `verify` runs the C
/// (cref.py, linked with the suite's utilities) at the MINI dataset, gives
/// the generated code the extents the build declared, and proves for all
/// sizes the region program whose final step the C does as a separate
/// statement (`B[i][j] = alpha * B[i][j]` after the accumulation).
#[test]
fn verify_proves_and_runs_the_distributed_trmm_at_its_declared_extents() {
    let out = tenslift(&[
        "verify",
        "benchmarks/polybench-dist/linear-algebra/blas/trmm/trmm.c",
        "--function",
        "kernel_trmm",
        "-I",
        "benchmarks/polybench-dist/utilities",
        "-D",
        "MINI_DATASET",
        "--json",
        "--targets",
        "numpy",
        "--timeout",
        "60",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &records(&out)[0];
    assert_eq!(r["bounded"], "pass", "{r}");
    assert_eq!(r["unbounded"], "proved", "{r}");
    assert_eq!(r["differential"], "pass", "{r}");
    // Each dataset's build declares its own extents (M = 20 at MINI, 60 at
    // SMALL), and the generated code was given them.
    let runs = r["details"]["differential"]["runs"].as_array().cloned();
    let runs = runs.unwrap_or_default();
    assert_eq!(runs.len(), 2, "{r}");
    for run in &runs {
        let (extent, value) = match run["reference"].as_str() {
            Some("MINI") => ("ext_20", 20),
            _ => ("ext_60", 60),
        };
        assert_eq!(run["sizes"][extent], value, "{r}");
    }
}

/// Calls the C (a shared library, through ctypes) and the lifted function
/// on the same arrays at their declared size: random values in the region,
/// a sentinel elsewhere. The C must leave the border alone (or the test's
/// region is wrong); the program must equal the C everywhere, the border bit
/// for bit. Then each size in `violate` is raised past its array and the
/// lifted function must raise the ValueError naming the relation.
const SENTINEL_CHECK: &str = r##"
import ctypes, importlib.util, inspect, json, sys
import numpy as np
module_path, lib_path, target = sys.argv[1:4]
spec = json.loads(sys.argv[4])
loaded = importlib.util.spec_from_file_location("lifted", module_path)
mod = importlib.util.module_from_spec(loaded); loaded.loader.exec_module(mod)
fn = getattr(mod, spec["function"])
cfn = getattr(ctypes.CDLL(lib_path), spec["function"])
cfn.restype = None
rng = np.random.default_rng(16)
values, c_args, regions = {}, [], {}
for a in spec["args"]:
    name, kind = a["name"], a["kind"]
    if kind == "int":
        values[name] = a["value"]; c_args.append(ctypes.c_int(a["value"]))
    elif kind == "double":
        values[name] = a["value"]; c_args.append(ctypes.c_double(a["value"]))
    elif kind == "float":
        values[name] = a["value"]; c_args.append(ctypes.c_float(a["value"]))
    else:
        dtype = np.dtype(a["dtype"])
        full = np.full(a["shape"], -7777, dtype)
        region = tuple(slice(0, r) for r in a["region"])
        shape = full[region].shape
        full[region] = rng.uniform(-1, 1, shape) if dtype.kind == "f" else rng.integers(-8, 9, shape)
        values[name] = full; regions[name] = region
        c_args.append(full.ctypes.data_as(ctypes.c_void_p))
before = {n: v.copy() for n, v in values.items() if isinstance(v, np.ndarray)}
def lifted_args():
    out = {}
    for p in inspect.signature(fn).parameters:
        v = values[p] if p in values else spec["sizes"][p]
        if isinstance(v, np.ndarray):
            v = before[p].copy()
            if target == "pytorch":
                import torch
                v = torch.from_numpy(v)
        out[p] = v
    return out
args = lifted_args()
cfn(*c_args)
fn(**args)
border = 0
for name, want in before.items():
    c = values[name]
    got = np.asarray(args[name])
    outside = np.ones(c.shape, bool); outside[regions[name]] = False
    border += int(outside.sum())
    assert (c[outside] == -7777).all(), (name, "the C wrote outside the test's region")
    assert got[outside].tobytes() == want[outside].tobytes(), (name, "border changed")
    if c.dtype.kind == "f":
        tol = 1e-5 if c.dtype == np.float32 else 1e-9
        assert np.allclose(got, c, rtol=tol, atol=tol), (name, np.abs(got - c).max())
    else:
        assert np.array_equal(got, c), name
assert border > 0, "no border to check"
for size, value, relation in spec["violate"]:
    args = lifted_args(); args[size] = value
    try:
        fn(**args)
    except ValueError as e:
        assert "precondition violated: " + relation in str(e), str(e)
    else:
        raise AssertionError(f"{size} = {value} violates {relation} but nothing was raised")
print("border elements checked:", border)
"##;

fn array(name: &str, dtype: &str, shape: &[usize], region: &[usize]) -> Value {
    json!({"name": name, "kind": "array", "dtype": dtype, "shape": shape, "region": region})
}

fn scalar(name: &str, kind: &str, value: f64) -> Value {
    json!({"name": name, "kind": kind, "value": value})
}

fn int(name: &str, value: i64) -> Value {
    json!({"name": name, "kind": "int", "value": value})
}

/// The C calls of the fixtures checked against the compiled C.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "gemm",
            json!({
                "function": "kernel_gemm",
                "args": [int("ni", 7), int("nj", 9), int("nk", 11),
                         scalar("alpha", "double", 1.5), scalar("beta", "double", 0.75),
                         array("C", "float64", &[40, 50], &[7, 9]),
                         array("A", "float64", &[40, 60], &[7, 11]),
                         array("B", "float64", &[60, 50], &[11, 9])],
                "sizes": {"ext_40": 40, "ext_50": 50, "ext_60": 60},
                "violate": [["ni", 41, "ni <= ext_40"], ["nk", 61, "nk <= ext_60"]],
            }),
        ),
        (
            "atax",
            json!({
                "function": "kernel_atax",
                "args": [int("m", 5), int("n", 8),
                         array("A", "float64", &[38, 42], &[5, 8]),
                         array("x", "float64", &[42], &[8]),
                         array("y", "float64", &[42], &[8]),
                         array("tmp", "float64", &[38], &[5])],
                "sizes": {"ext_38": 38, "ext_42": 42},
                "violate": [["m", 39, "m <= ext_38"]],
            }),
        ),
        (
            "bicg",
            json!({
                "function": "kernel_bicg",
                "args": [int("m", 6), int("n", 9),
                         array("A", "float64", &[42, 38], &[9, 6]),
                         array("s", "float64", &[38], &[6]),
                         array("q", "float64", &[42], &[9]),
                         array("p", "float64", &[38], &[6]),
                         array("r", "float64", &[42], &[9])],
                "sizes": {"ext_38": 38, "ext_42": 42},
                "violate": [["n", 43, "n <= ext_42"]],
            }),
        ),
        (
            "syrk",
            json!({
                "function": "kernel_syrk",
                "args": [int("n", 7), int("m", 5),
                         scalar("alpha", "double", 1.25), scalar("beta", "double", 0.5),
                         array("C", "float64", &[44, 44], &[7, 7]),
                         array("A", "float64", &[44, 36], &[7, 5])],
                "sizes": {"ext_36": 36, "ext_44": 44},
                "violate": [["m", 37, "m <= ext_36"]],
            }),
        ),
        (
            "jacobi_2d",
            json!({
                "function": "kernel_jacobi_2d",
                "args": [int("tsteps", 3), int("n", 9),
                         array("A", "float64", &[30, 30], &[9, 9]),
                         array("B", "float64", &[30, 30], &[9, 9])],
                "sizes": {"ext_30": 30},
                "violate": [["n", 31, "n <= ext_30"]],
            }),
        ),
        (
            "mult_dims",
            json!({
                "function": "mult",
                "args": [array("a_matrix", "int32", &[10, 14], &[10, 12]),
                         array("b_matrix", "int32", &[12, 8], &[12, 8]),
                         array("c_matrix", "int32", &[16, 9], &[10, 8])],
                "sizes": {"A_ROW": 10, "A_COL": 14, "B_ROW": 12, "B_COL": 8,
                          "C_ROW": 16, "C_COL": 9},
                "violate": [["B_ROW", 15, "B_ROW <= A_COL"]],
            }),
        ),
        (
            "covariance",
            json!({
                "function": "kernel_covariance",
                "args": [int("m", 6), int("n", 9), scalar("float_n", "double", 9.0),
                         array("data", "float64", &[32, 28], &[9, 6]),
                         array("cov", "float64", &[28, 28], &[6, 6]),
                         array("mean", "float64", &[28], &[6])],
                "sizes": {"ext_28": 28, "ext_32": 32},
                "violate": [["n", 33, "n <= ext_32"]],
            }),
        ),
        (
            "gemv_lda",
            json!({
                "function": "gemv_lda",
                "args": [int("m", 5), int("n", 6), int("lda", 10),
                         scalar("alpha", "float", 1.5),
                         array("A", "float32", &[5, 10], &[5, 6]),
                         array("x", "float32", &[6], &[6]),
                         scalar("beta", "float", 0.5),
                         array("y", "float32", &[5], &[5])],
                "sizes": {},
                "violate": [["lda", 5, "n <= lda"]],
            }),
        ),
        (
            "scale_ld",
            json!({
                "function": "scale_ld",
                "args": [int("m", 5), int("n", 4), int("ld", 9),
                         scalar("alpha", "double", -2.0),
                         array("A", "float64", &[5, 9], &[5, 4])],
                "sizes": {},
                "violate": [["n", 10, "n <= ld"]],
            }),
        ),
    ]
}

/// Compiles `stem` into a shared library in `dir`.
fn shared_library(stem: &str, dir: &Path) -> std::path::PathBuf {
    let lib = dir.join(format!("lib{stem}.so"));
    let out = Command::new("gcc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(Path::new(ROOT).join(DIR).join(format!("{stem}.c")))
        .output()
        .expect("run gcc");
    assert!(out.status.success(), "gcc {stem}: {}", stderr(&out));
    lib
}

fn generated_module_equals_the_c_and_keeps_the_border(stem: &str, call: &Value, target: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let module = dir.path().join(format!("{stem}_{target}.py"));
    let module_arg = module.to_str().expect("utf-8 path");
    let file = format!("{DIR}/{stem}.c");
    let out = tenslift(&[
        "lift",
        &file,
        "--target",
        target,
        "-o",
        module_arg,
        "--timeout",
        "120",
    ]);
    assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
    let lib = shared_library(stem, dir.path());
    let run = Command::new(python())
        .args(["-c", SENTINEL_CHECK, module_arg])
        .arg(&lib)
        .arg(target)
        .arg(call.to_string())
        .output()
        .expect("run python");
    assert!(
        run.status.success(),
        "{stem} ({target}): the lifted module differs from the C:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        stderr(&run)
    );
}

#[test]
fn numpy_modules_equal_the_c_on_the_region_and_keep_the_border() {
    for (stem, call) in calls() {
        generated_module_equals_the_c_and_keeps_the_border(stem, &call, "numpy");
    }
}

#[test]
fn jax_and_pytorch_gemm_equal_the_c_and_check_preconditions() {
    let (stem, call) = calls().remove(0);
    for target in ["jax", "pytorch"] {
        generated_module_equals_the_c_and_keeps_the_border(stem, &call, target);
    }
}

#[test]
fn hlo_refuses_sizes_that_violate_a_precondition() {
    let emit = |sizes: &[&str]| {
        let mut args = vec![
            "lift",
            "tests/fixtures/region/gemm.c",
            "--target",
            "hlo",
            "--timeout",
            "120",
        ];
        for s in sizes {
            args.extend(["--size", s]);
        }
        tenslift(&args)
    };
    let fits = [
        "ni=4",
        "nj=5",
        "nk=6",
        "ext_40=40",
        "ext_50=50",
        "ext_60=60",
    ];
    let out = emit(&fits);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("// requires: ni <= ext_40"),
        "the module header states the preconditions:\n{text}"
    );
    let out = emit(&[
        "ni=41",
        "nj=5",
        "nk=6",
        "ext_40=40",
        "ext_50=50",
        "ext_60=60",
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("precondition `ni <= ext_40` does not hold"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn verify_passes_bounded_and_differential_at_declared_extents() {
    for stem in ["gemm", "mult_dims", "gemv_lda"] {
        let file = format!("{DIR}/{stem}.c");
        let out = tenslift(&[
            "verify",
            &file,
            "--json",
            "--targets",
            "numpy",
            "--timeout",
            "60",
        ]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
        let r = &records(&out)[0];
        assert_eq!(r["bounded"], "pass", "{r}");
        assert_eq!(r["differential"], "pass", "{r}");
        assert_eq!(r["unbounded"], "proved", "{r}");
        let invariants = r["details"]["unbounded"]["invariants"].to_string();
        assert!(invariants.contains("assumed (precondition): "), "{r}");
        // The C ran on arrays at their declared extents.
        for run in r["details"]["differential"]["runs"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let sizes = &run["sizes"];
            if stem == "gemm" {
                assert_eq!(sizes["ext_40"], 40, "{r}");
                assert!(sizes["ni"].as_i64() < Some(40), "{r}");
            }
        }
    }
}

#[test]
fn a_program_that_writes_the_border_fails_the_differential_run() {
    // gemm's lift with its store widened to the whole declared array: equal
    // to the C on the region, wrong on the border.
    let wrong = "source \"tests/fixtures/region/gemm.c\" 15-23\nstatus \"unverified\"\n\
        requires ni <= ext_40\nrequires nj <= ext_50\nrequires nk <= ext_60\n\
        func kernel_gemm(ni: size, nj: size, nk: size, alpha: f64, beta: f64, \
        C: inout f64[ext_40, ext_50], A: f64[ext_40, ext_60], B: f64[ext_60, ext_50], \
        ext_40: size, ext_50: size, ext_60: size) {\n  \
        C = add(mul(alpha, matmul(A, B)), mul(C, beta));\n}\n";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("wrong.tensir");
    std::fs::write(&path, wrong).expect("write");
    let out = tenslift(&[
        "verify",
        "tests/fixtures/region/gemm.c",
        "--program",
        path.to_str().expect("utf-8 path"),
        "--json",
        "--targets",
        "numpy",
        "--timeout",
        "60",
    ]);
    assert_ne!(out.status.code(), Some(0));
    let r = &records(&out)[0];
    assert_eq!(r["differential"], "fail", "{r}");
    assert_eq!(r["bounded"], "fail", "{r}");
}
