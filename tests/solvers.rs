//! End-to-end tests of solvers as library operations, with the real
//! binary, libclang, Z3, gcc and NumPy/SciPy: PolyBench's cholesky, lu,
//! ludcmp and trisolv, in the repository's VLA form and as PolyBench 4.2
//! distributes them, lift whole to `cholesky`, `lu_nopivot` and
//! `trisolve_*` (the lifted TensIR is snapshotted), and the lifted
//! programs pass `tenslift verify`'s bounded Z3 check and the differential
//! run of the emitted NumPy against gcc at MINI and SMALL.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const KERNELS: [&str; 4] = ["cholesky", "lu", "ludcmp", "trisolv"];

fn tenslift(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenslift"));
    cmd.current_dir(ROOT).args(args);
    if std::env::var_os("TENSLIFT_PYTHON").is_none()
        && !Path::new(ROOT).join(".venv/bin/python").exists()
    {
        cmd.env("TENSLIFT_PYTHON", "/work/main/.venv/bin/python");
    }
    match cmd.output() {
        Ok(o) => o,
        Err(e) => panic!("cannot run tenslift: {e}"),
    }
}

fn one_record(out: &Output, what: &str) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{what}: not JSON ({e})"))
}

/// The command-line arguments that read kernel `name` in `form`.
fn kernel_args(name: &str, distributed: bool) -> Vec<String> {
    if distributed {
        vec![
            format!("benchmarks/polybench-dist/linear-algebra/solvers/{name}/{name}.c"),
            "-I".into(),
            "benchmarks/polybench-dist/utilities".into(),
            "-DMINI_DATASET".into(),
            "--function".into(),
            format!("kernel_{name}"),
        ]
    } else {
        vec![format!("benchmarks/polybench/{name}.c")]
    }
}

#[test]
fn solver_kernels_lift_whole_to_library_operations_in_both_forms() {
    let mut programs = Vec::new();
    for distributed in [false, true] {
        for name in KERNELS {
            let mut args = vec!["lift".to_string(), "--json".into()];
            args.extend(kernel_args(name, distributed));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = tenslift(&args);
            assert_eq!(out.status.code(), Some(0), "{name}");
            let record = one_record(&out, name);
            assert_eq!(record["status"], "lifted", "{name}: {record}");
            let program = record["program"].as_str().unwrap_or_default();
            assert!(!program.contains("for "), "{name} keeps a loop:\n{program}");
            // The snapshot names no path: both forms' text is compared.
            let body: Vec<&str> = program
                .lines()
                .filter(|l| !l.starts_with("source "))
                .collect();
            programs.push(format!(
                "== {name} ({})\n{}",
                if distributed { "distributed" } else { "vla" },
                body.join("\n")
            ));
        }
    }
    insta::assert_snapshot!("solver_programs", programs.join("\n"));
}

#[test]
fn lifted_solvers_pass_bounded_and_differential_checks() {
    // cholesky covers `cholesky`; ludcmp covers `lu_nopivot` and both
    // triangular solves. (verify's manifest run of the distributed form
    // does not bind the declared extents yet; `tenslift bench` does.)
    for (name, distributed) in [("cholesky", false), ("ludcmp", false)] {
        let mut args = vec![
            "verify".to_string(),
            "--json".into(),
            "--targets".into(),
            "numpy".into(),
            "--timeout".into(),
            "30".into(),
        ];
        args.extend(kernel_args(name, distributed));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = tenslift(&args);
        let record = one_record(&out, name);
        assert_eq!(record["bounded"], "pass", "{name}: {record}");
        assert_eq!(record["differential"], "pass", "{name}: {record}");
        assert_eq!(out.status.code(), Some(0), "{name}: {record}");
    }
}
