//! End-to-end tests of `tenslift verify` and `tenslift lift --verify` with
//! the real binary, libclang, Z3, gcc and the Python libraries: a manifest
//! kernel passes everywhere, a file of our own goes through the generated C
//! driver, and injected wrong lifts are caught by both the bounded check and
//! the differential runs.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const OWN: &str = "tests/fixtures/verify/own_kernels.c";

fn tenslift(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenslift"));
    cmd.current_dir(ROOT).args(args);
    if std::env::var_os("TENSLIFT_PYTHON").is_none() {
        // Worktrees without their own venv use the main checkout's.
        let local = Path::new(ROOT).join(".venv/bin/python");
        if !local.exists() {
            cmd.env("TENSLIFT_PYTHON", "/work/main/.venv/bin/python");
        }
    }
    match cmd.output() {
        Ok(o) => o,
        Err(e) => panic!("cannot run tenslift: {e}"),
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

#[test]
fn gemm_passes_bounded_and_differential_on_every_target() {
    // The committed lift of gemm, so that the test does not hinge on how
    // fast the search runs on a loaded machine (other tests lift).
    let out = tenslift(&[
        "verify",
        "benchmarks/polybench/gemm.c",
        "--program",
        "tests/fixtures/lifted/gemm.tensir",
        "--json",
        "--timeout",
        "120",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &records(&out)[0];
    assert_eq!(r["function"], "kernel_gemm");
    assert_eq!(r["bounded"], "pass", "{r}");
    assert_eq!(r["differential"], "pass", "{r}");
    let runs = r["details"]["differential"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for target in ["numpy", "jax", "pytorch", "hlo"] {
        let mine: Vec<&Value> = runs.iter().filter(|x| x["target"] == target).collect();
        // The manifest's MINI and SMALL datasets, each agreeing with gcc.
        assert_eq!(mine.len(), 2, "{target}: {r}");
        assert!(mine.iter().all(|x| x["verdict"] == "pass"), "{target}: {r}");
    }
    let sizes = r["details"]["sizes_checked"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(sizes.len(), 2, "two size tuples checked symbolically");
    assert_ne!(sizes[0], sizes[1]);
}

#[test]
fn a_file_outside_the_manifest_goes_through_the_generated_driver() {
    let out = tenslift(&[
        "verify",
        OWN,
        "--function",
        "matvec",
        "--function",
        "quarter",
        "--function",
        "transpose_add",
        "--targets",
        "numpy,jax",
        "--json",
        "--timeout",
        "30",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rs = records(&out);
    assert_eq!(rs.len(), 3);
    for r in &rs {
        assert_eq!(r["differential"], "pass", "{r}");
        let runs = r["details"]["differential"]["runs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let labels: Vec<&str> = runs
            .iter()
            .filter_map(|x| x["reference"].as_str())
            .collect();
        assert!(
            labels.contains(&"small") && labels.contains(&"moderate"),
            "{r}"
        );
        let sizes_of = |label: &str| {
            runs.iter()
                .find(|x| x["reference"] == label)
                .map(|x| x["sizes"].clone())
                .unwrap_or(Value::Null)
        };
        assert_ne!(
            sizes_of("small"),
            sizes_of("moderate"),
            "two different size tuples"
        );
    }
    // Integers are compared exactly.
    let quarter = rs
        .iter()
        .find(|r| r["function"] == "quarter")
        .unwrap_or(&Value::Null);
    assert_eq!(quarter["bounded"], "pass");
    let first = &quarter["details"]["differential"]["runs"][0]["outputs"][0];
    assert_eq!(first["tolerance"], 0.0);
    assert_eq!(first["max_abs"], 0.0);
}

#[test]
fn log_and_division_inputs_are_drawn_positive_so_the_c_stays_in_its_domain() {
    let out = tenslift(&[
        "verify",
        OWN,
        "--function",
        "log_ratio",
        "--targets",
        "numpy",
        "--json",
        "--timeout",
        "30",
    ]);
    let r = &records(&out)[0];
    assert_eq!(r["differential"], "pass", "{r}");
}

#[test]
fn inputs_outside_the_c_domain_skip_the_differential_run_with_a_reason() {
    let out = tenslift(&[
        "verify",
        "tests/fixtures/verify/domain.c",
        "--program",
        "tests/fixtures/verify/shifted_sqrt.tensir",
        "--targets",
        "numpy",
        "--json",
    ]);
    // Not a failure: the symbolic check still passes over the reals.
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &records(&out)[0];
    assert_eq!(r["differential"], "skipped", "{r}");
    let reason = r["details"]["differential"]["reason"]
        .as_str()
        .unwrap_or("");
    assert!(reason.contains("NaN"), "{reason}");
}

#[test]
fn injected_wrong_lifts_are_caught_by_bounded_and_differential() {
    for (function, program) in [
        ("transpose_add", "wrong_swapped_indices"),
        ("forward_diff", "wrong_off_by_one_slice"),
        ("matvec", "wrong_reduction_axis"),
        ("quarter", "wrong_floor_division"),
        ("matvec", "wrong_float64"),
    ] {
        let path = format!("tests/fixtures/verify/{program}.tensir");
        let out = tenslift(&[
            "verify",
            OWN,
            "--function",
            function,
            "--program",
            &path,
            "--targets",
            "numpy",
            "--json",
            "--timeout",
            "30",
        ]);
        assert_eq!(out.status.code(), Some(6), "{program}: {}", stderr(&out));
        let r = &records(&out)[0];
        assert_eq!(r["bounded"], "fail", "{program}: {r}");
        assert_eq!(r["differential"], "fail", "{program}: {r}");
        assert_eq!(r["verified"], false);
        assert!(
            stderr(&out).contains("fail"),
            "{program}: summary names the failure"
        );
    }
}

#[test]
fn the_correct_program_for_the_same_kernel_passes() {
    let out = tenslift(&[
        "verify",
        OWN,
        "--function",
        "forward_diff",
        "--program",
        "tests/fixtures/verify/forward_diff_ok.tensir",
        "--targets",
        "numpy",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &records(&out)[0];
    assert_eq!(
        (r["bounded"].as_str(), r["differential"].as_str()),
        (Some("pass"), Some("pass"))
    );
}

#[test]
fn the_markdown_report_shows_source_program_checks_and_errors() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let report = dir.path().join("reports");
    let out = tenslift(&[
        "verify",
        OWN,
        "--function",
        "quarter",
        "--targets",
        "numpy",
        "--report",
        &report.to_string_lossy(),
        "--timeout",
        "30",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for name in [
        "index.md",
        "index.html",
        "index.json",
        "own_kernels-quarter.html",
        "own_kernels-quarter.json",
    ] {
        assert!(report.join(name).is_file(), "{name} written");
    }
    let md = std::fs::read_to_string(report.join("own_kernels-quarter.md")).unwrap_or_default();
    insta::assert_snapshot!("verify_report_quarter", stable(&md));
    let html = std::fs::read_to_string(report.join("own_kernels-quarter.html")).unwrap_or_default();
    assert!(
        html.starts_with("<!DOCTYPE html>") && !html.contains("<script") && !html.contains("http")
    );
}

/// The report without what changes from run to run (solver times) or with
/// the unbounded prover's progress (its section, its row, the header status
/// and the reason that quote it; the prover's own tests pin those).
fn stable(md: &str) -> String {
    let mut out = Vec::new();
    let mut in_unbounded = false;
    for line in md.lines() {
        if line.starts_with("## ") {
            in_unbounded = line.starts_with("## Unbounded");
            if in_unbounded {
                out.push("## Unbounded proof: [redacted]\n".to_string());
                continue;
            }
        }
        if in_unbounded
            || line.starts_with("| unbounded")
            || line.starts_with("| header status")
            || line.starts_with("Reason: ")
            || line.is_empty()
        {
            continue;
        }
        let mut l = line.to_string();
        while let Some(pos) = l.find(" ms)") {
            let start = l[..pos].rfind('(').map_or(pos, |p| p + 1);
            l.replace_range(start..pos + 3, "[time]");
        }
        out.push(l);
    }
    out.join("\n")
}

#[test]
fn a_report_directory_that_cannot_be_made_leaves_no_files_and_fails() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "x").unwrap_or_else(|e| panic!("{e}"));
    let out = tenslift(&[
        "verify",
        OWN,
        "--function",
        "quarter",
        "--targets",
        "numpy",
        "--report",
        &blocker.join("sub").to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot write reports"));
}

#[test]
fn lift_verify_records_the_verdict_in_the_module_header() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let module = dir.path().join("matvec.py");
    let out = tenslift(&[
        "lift",
        OWN,
        "--function",
        "matvec",
        "--target",
        "numpy",
        "--verify",
        "-o",
        &module.to_string_lossy(),
        "--timeout",
        "30",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let code = std::fs::read_to_string(&module).unwrap_or_default();
    let header = code
        .lines()
        .find(|l| l.starts_with("# verification:"))
        .unwrap_or("");
    assert!(
        header.contains("bounded+differential") || header.contains("proved"),
        "{header}"
    );
    assert!(!header.contains("unverified"));
}

#[test]
fn unknown_targets_are_a_usage_error() {
    let out = tenslift(&["verify", OWN, "--targets", "numpy,fortran"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown target `fortran`"));
}

#[test]
fn a_kernel_sized_by_macros_is_lifted_once_and_agrees_at_every_dataset() {
    // pin_down's extent is `#ifndef N / #define N 16`: N is a size of the
    // program. cref.py compiles MINI with -DN=32 and SMALL with -DN=4096;
    // the one program (StableHLO emitted at each dataset's N) agrees with
    // both, without lifting again.
    let out = tenslift(&[
        "verify",
        "benchmarks/dspstone/pin_down.c",
        "--targets",
        "numpy,hlo",
        "--json",
        "--timeout",
        "60",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &records(&out)[0];
    assert_eq!(r["differential"], "pass", "{r}");
    let runs = r["details"]["differential"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for target in ["numpy", "hlo"] {
        let mine: Vec<&Value> = runs.iter().filter(|x| x["target"] == target).collect();
        assert_eq!(mine.len(), 2, "{target}: {r}");
        assert!(mine.iter().all(|x| x["verdict"] == "pass"), "{target}: {r}");
        let ns: Vec<i64> = mine
            .iter()
            .filter_map(|x| x["sizes"]["N"].as_i64())
            .collect();
        assert_eq!(ns, vec![32, 4096], "{target}: {r}");
    }
    let reason = r["details"]["differential"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(!reason.contains("lifted with -D"), "{reason}");
}

#[test]
fn a_program_fixed_at_the_default_macro_value_is_refuted() {
    // What a lifter that read `#define N 16` as a constant would produce:
    // right for N = 16 only. The bounded check (N = 3, 4) and the datasets
    // (N = 32) both catch it.
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("pin_down_16.tensir");
    let program = "source \"benchmarks/dspstone/pin_down.c\" 8-13\nfunc pin_down(x: out i32[16]) {\n  x = broadcast(1i32, [16]);\n}\n";
    std::fs::write(&path, program).unwrap_or_else(|e| panic!("{e}"));
    let out = tenslift(&[
        "verify",
        "benchmarks/dspstone/pin_down.c",
        "--program",
        &path.to_string_lossy(),
        "--targets",
        "numpy,hlo",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let r = &records(&out)[0];
    assert_eq!(r["bounded"], "fail", "{r}");
    assert_eq!(r["differential"], "fail", "{r}");
    let runs = r["details"]["differential"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let reason = r["details"]["differential"]["reason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.contains("MINI")
            || runs
                .iter()
                .any(|x| x["reference"] == "MINI" && x["verdict"] == "fail"),
        "{r}"
    );
}

#[test]
fn macro_sized_kernels_lift_at_any_size_and_verify_against_the_c_built_with_each_size() {
    const MACRO_SIZED: &str = "tests/fixtures/verify/macro_matvec.c";
    // 20000 x 30000 would be 6e8 statements to execute symbolically: only
    // a kernel whose macros became size parameters lifts here at once.
    let out = tenslift(&[
        "lift",
        MACRO_SIZED,
        "-DM=20000",
        "-DN=30000",
        "--target",
        "numpy",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let code = String::from_utf8_lossy(&out.stdout);
    assert!(code.contains("def macro_matvec(a, x, y, M, N):"), "{code}");
    assert!(code.contains("np.matmul(a, x, out=y)"), "{code}");

    // The C driver defines M and N per size tuple: two different tuples
    // both agree with the program.
    let out = tenslift(&[
        "verify",
        MACRO_SIZED,
        "--targets",
        "numpy",
        "--json",
        "--timeout",
        "30",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rs = records(&out);
    let r = &rs[0];
    assert_eq!(r["bounded"], "pass", "{r}");
    assert_eq!(r["differential"], "pass", "{r}");
    let runs = r["details"]["differential"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let sizes: Vec<&Value> = runs.iter().map(|x| &x["sizes"]).collect();
    assert!(sizes.len() >= 2, "{r}");
    assert!(
        sizes.iter().all(|s| s["M"].as_i64().unwrap_or(0) > 1),
        "{r}"
    );
    assert_ne!(sizes[0], sizes[1], "{r}");
}

/// A target whose generated code does not finish within `--run-timeout`
/// is killed and reported as undecided ("skipped", with the reason), not as
/// a failure of the program: the other checks still decide the verdict.
#[test]
fn a_differential_run_past_its_time_limit_is_skipped_not_failed() {
    // Importing JAX alone takes longer than 50 ms.
    let out = tenslift(&[
        "verify",
        "tests/fixtures/verify/macro_matvec.c",
        "--targets",
        "jax",
        "--run-timeout",
        "0.05",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &records(&out)[0];
    assert_eq!(r["differential"], "skipped", "{r}");
    let reason = r["details"]["differential"]["reason"]
        .as_str()
        .unwrap_or("");
    assert!(reason.contains("jax did not finish within 0.05 s"), "{r}");
    assert_eq!(r["bounded"], "pass", "{r}");
}
