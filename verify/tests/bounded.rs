//! Bounded checks of hand-written TensIR programs against real corpus
//! kernels extracted by the real frontend.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use tenslift_frontend::ir::Kernel;
use tenslift_frontend::{extract, Options};
use tenslift_targets::{parse_program, Program};
use tenslift_verify::bounded::{check, BoundedOptions};
use tenslift_verify::{BoundedResult, Counterexample};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kernel(file: &str, function: &str) -> Kernel {
    let path = workspace().join(file);
    let options = Options {
        functions: vec![function.to_string()],
        ..Default::default()
    };
    let tu = extract(&path.display().to_string(), &options)
        .unwrap_or_else(|e| panic!("extracting {file}: {e}"));
    tu.kernels
        .into_iter()
        .find(|k| k.name == function)
        .unwrap_or_else(|| panic!("{file} has no kernel {function}"))
}

fn program(name: &str) -> Program {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.tensir"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    parse_program(&path.display().to_string(), &text).unwrap_or_else(|d| panic!("{d}"))
}

fn sizes(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn run(k: &Kernel, fixture: &str, s: &[(&str, i64)]) -> BoundedResult {
    let started = std::time::Instant::now();
    let result = check(k, &program(fixture), &sizes(s), &BoundedOptions::default())
        .unwrap_or_else(|e| panic!("{fixture}: {e}"));
    eprintln!(
        "{fixture}: {} ms, {} solver calls\n{result}",
        started.elapsed().as_millis(),
        result.stats().solver_calls
    );
    result
}

fn assert_pass(k: &Kernel, fixture: &str, s: &[(&str, i64)]) {
    let result = run(k, fixture, s);
    assert!(result.is_pass(), "{fixture} should pass:\n{result}");
}

fn assert_fail(k: &Kernel, fixture: &str, s: &[(&str, i64)]) -> Counterexample {
    match run(k, fixture, s) {
        BoundedResult::Fail { counterexample, .. } => *counterexample,
        other => panic!("{fixture} should fail:\n{other}"),
    }
}

#[test]
fn polybench_gemm_passes_and_a_missing_alpha_fails() {
    let k = kernel("benchmarks/polybench/gemm.c", "kernel_gemm");
    let s = [("ni", 3), ("nj", 4), ("nk", 5)];
    assert_pass(&k, "gemm", &s);
    let cex = assert_fail(&k, "gemm_no_alpha", &s);
    let _ = HashMap::<String, i64>::new();
    eprintln!("{cex}");
}
