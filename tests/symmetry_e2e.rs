//! The symmetry rewrites end to end, on the real binary: each target's
//! rewrite of the committed lifts of PolyBench syrk, syr2k and covariance
//! is verified against the C like any lifted program (Z3 bounded and
//! unbounded, differential runs against gcc in every target), and `tenslift
//! emit --symmetry` code runs equal to the code emitted without it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use tenslift_targets::{apply_symmetry, parse_program, print_program, Target};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn tenslift(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenslift"));
    cmd.current_dir(ROOT).args(args);
    if std::env::var_os("TENSLIFT_PYTHON").is_none() && !Path::new(ROOT).join(".venv").exists() {
        cmd.env("TENSLIFT_PYTHON", "/work/main/.venv/bin/python");
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run tenslift: {e}"))
}

fn python() -> String {
    std::env::var("TENSLIFT_PYTHON").unwrap_or_else(|_| {
        let local = Path::new(ROOT).join(".venv/bin/python");
        if local.exists() {
            local.display().to_string()
        } else {
            "/work/main/.venv/bin/python".to_string()
        }
    })
}

fn lifted(name: &str) -> String {
    let path = Path::new(ROOT).join(format!("targets/tests/symmetry/{name}.tensir"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Verifies `target`'s rewrite of the committed lift of `kernel` and
/// returns the JSON record.
fn verify_rewrite(kernel: &str, target: Target, dir: &Path, extra: &[&str]) -> Value {
    let program = parse_program(kernel, &lifted(kernel)).unwrap_or_else(|d| panic!("{d}"));
    let (rewritten, report) = apply_symmetry(&program, Some(target));
    assert!(
        !report.changes.is_empty(),
        "{kernel} {target}: nothing rewritten"
    );
    let path = dir.join(format!("{kernel}_{target}.tensir"));
    std::fs::write(&path, print_program(&rewritten)).expect("temp file");
    let c = format!("benchmarks/polybench/{kernel}.c");
    let program = path.to_str().unwrap();
    let mut args = vec!["verify", &c, "--program", program, "--json"];
    args.extend_from_slice(extra);
    let out = tenslift(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{kernel} {target}: {stderr}");
    let record = stdout.lines().next().unwrap_or_default();
    serde_json::from_str(record).unwrap_or_else(|e| panic!("not JSON ({e}): {record}"))
}

#[test]
fn syrk_and_syr2k_rewrites_are_proved_for_all_sizes() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (kernel, target) in [
        ("syrk", Target::Numpy),
        ("syr2k", Target::Numpy),
        ("syr2k", Target::Pytorch),
    ] {
        let r = verify_rewrite(kernel, target, dir.path(), &[]);
        assert_eq!(r["bounded"], "pass", "{kernel} {target}: {r}");
        assert_eq!(r["unbounded"], "proved", "{kernel} {target}: {r}");
        assert_eq!(r["differential"], "pass", "{kernel} {target}: {r}");
    }
}

/// The mirrored covariance (JAX's and StableHLO's rewrite): bounded and
/// differential; the unbounded prover derives no invariant for the C's
/// mirrored stores (for the original lift neither), so it is not run: its
/// undecided conditions each spent the whole Z3 budget, a minute in all.
#[test]
fn the_mirrored_covariance_passes_bounded_and_differential_checks() {
    let dir = tempfile::tempdir().expect("temp dir");
    let r = verify_rewrite("covariance", Target::Jax, dir.path(), &["--no-unbounded"]);
    assert_eq!(r["bounded"], "pass", "{r}");
    assert_eq!(r["differential"], "pass", "{r}");
    assert_eq!(
        r["details"]["unbounded"]["detail"], "not run (--no-unbounded)",
        "{r}"
    );
    let runs = r["details"]["differential"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for target in ["numpy", "jax", "pytorch", "hlo"] {
        assert!(runs.iter().any(|x| x["target"] == target), "{target}: {r}");
    }
}

const COMPARE: &str = r#"
import importlib.util, sys
import numpy as np

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

target, original, rewritten = sys.argv[1:4]
rng = np.random.default_rng(7)
n, m = 37, 23
A, C = rng.uniform(-1, 1, (n, m)), rng.uniform(-1, 1, (n, n))
results = []
for path in (original, rewritten):
    fn = getattr(load(path, path.split("/")[-1][:-3]), "kernel_syrk")
    if target == "numpy":
        c = C.copy()
        fn(n, m, 1.5, 1.2, c, A)
    elif target == "pytorch":
        import torch
        c = torch.from_numpy(C.copy())
        fn(n, m, 1.5, 1.2, c, torch.from_numpy(A))
        c = c.numpy()
    else:
        c = C.copy()
        fn(n, m, 1.5, 1.2, c, A)
    results.append(c)
assert np.allclose(results[0], results[1], rtol=1e-12, atol=1e-12), np.abs(results[0] - results[1]).max()
assert not np.array_equal(results[0], C)
print("equal")
"#;

#[test]
fn emitted_symmetric_code_runs_equal_to_the_original() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = dir.path().join("syrk.tensir");
    std::fs::write(&program, lifted("syrk")).expect("temp file");
    let script = dir.path().join("compare.py");
    std::fs::write(&script, COMPARE).expect("temp file");
    for target in ["numpy", "jax", "pytorch"] {
        let paths = [
            dir.path().join(format!("orig_{target}.py")),
            dir.path().join(format!("sym_{target}.py")),
        ];
        let plain = [
            "emit",
            program.to_str().unwrap(),
            "-t",
            target,
            "-o",
            paths[0].to_str().unwrap(),
        ];
        assert_eq!(tenslift(&plain).status.code(), Some(0));
        let out = tenslift(&[
            "emit",
            program.to_str().unwrap(),
            "-t",
            target,
            "--symmetry",
            "-o",
            paths[1].to_str().unwrap(),
        ]);
        let report = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{report}");
        let changed = target != "pytorch";
        assert_eq!(
            report.contains("lower triangle"),
            changed,
            "{target}: {report}"
        );
        let run = Command::new(python())
            .arg(&script)
            .arg(target)
            .args(&paths)
            .output()
            .expect("python runs");
        assert!(
            run.status.success() && String::from_utf8_lossy(&run.stdout).contains("equal"),
            "{target}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
}
