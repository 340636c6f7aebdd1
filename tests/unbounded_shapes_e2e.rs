//! End-to-end tests of the unbounded prover on loop shapes of PolyBench as
//! distributed (real binary, libclang, Z3, gcc, NumPy): each kernel is
//! lifted and then proved equal to the C for all sizes, with the
//! invariant the shape needs named in the proof.
//!
//! - symm: `C[i][j] = beta * C[i][j] + ...` after `for (k < i) C[k][j] +=
//!   ...`: an accumulation whose init follows it, and a scalar `temp2`
//!   stored with a term the loop does not add (related by difference).
//! - doitgen: `sum[p]` redone from zero in every `(r, q)` iteration, the
//!   lifted program naming only the last one.
//! - ludcmp: LU in place as its defining loops, then a forward and a back
//!   substitution through a scalar `w`, the back one descending.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

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

/// `tenslift verify --json` on `file` (with `extra` arguments): its one
/// record.
fn verify(file: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "verify",
        file,
        "--json",
        "--targets",
        "numpy",
        "--timeout",
        "60",
    ];
    args.extend(extra);
    let out = tenslift(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{file}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().next().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{file}: not JSON ({e}): {stdout}"))
}

/// A distributed PolyBench kernel's file and arguments.
fn dist(path: &str, name: &str) -> (String, Vec<String>) {
    (
        format!("benchmarks/polybench-dist/{path}/{name}/{name}.c"),
        vec![
            "--function".into(),
            format!("kernel_{name}"),
            "-I".into(),
            "benchmarks/polybench-dist/utilities".into(),
            "-DMINI_DATASET".into(),
        ],
    )
}

fn proved_with(path: &str, name: &str, invariant: &str) {
    let (file, args) = dist(path, name);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = verify(&file, &args);
    assert_eq!(r["bounded"], "pass", "{name}: {r}");
    assert_eq!(r["unbounded"], "proved", "{name}: {r}");
    assert_eq!(r["differential"], "pass", "{name}: {r}");
    let invariants = r["details"]["unbounded"]["invariants"].to_string();
    assert!(
        invariants.contains(invariant),
        "{name}: no `{invariant}` in {invariants}"
    );
}

#[test]
fn symm_is_proved_with_its_late_init_and_a_difference_relation() {
    proved_with(
        "linear-algebra/blas",
        "symm",
        "temp2: storing it adds to the element what the lifted reduction it feeds adds",
    );
}

#[test]
fn doitgen_is_proved_with_its_sum_redone_per_iteration() {
    proved_with(
        "linear-algebra/kernels",
        "doitgen",
        "sum: redone in every iteration of its outer loops",
    );
}

#[test]
fn ludcmp_is_proved_in_both_forms() {
    proved_with(
        "linear-algebra/solvers",
        "ludcmp",
        "is `lu_nopivot`'s defining recurrence written as loops",
    );
    let r = verify("benchmarks/polybench/ludcmp.c", &[]);
    assert_eq!(r["unbounded"], "proved", "{r}");
    let program = r["details"]["program"].as_str().unwrap_or_default();
    assert!(program.contains("trisolve_upper("), "{program}");
}
