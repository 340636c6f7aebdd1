//! Runs every fixture program for real in NumPy, JAX, PyTorch and XLA
//! (StableHLO) and compares with the reference interpreter. One Python
//! process per target. Needs the project's Python environment: set
//! TENSLIFT_PYTHON or create `<workspace>/.venv`.

mod common;

use std::path::Path;

use tenslift_targets::interp;
use tenslift_targets::runner::{python_interpreter, run_batch_entry, Case, Entry};
use tenslift_targets::Target;

fn check_target(target: Target) {
    check(target, Entry::Plain, &[]);
}

/// Runs the fixtures (all, or those named in `only`) and compares.
fn check(target: Target, entry: Entry, only: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = python_interpreter(&root);
    assert!(
        python.exists(),
        "Python interpreter {} not found: set TENSLIFT_PYTHON to the venv's python",
        python.display()
    );
    let fixtures: Vec<_> = common::load_fixtures()
        .into_iter()
        .filter(|f| only.is_empty() || only.contains(&f.name.as_str()))
        .collect();
    let args: Vec<_> = fixtures.iter().map(common::random_args).collect();
    let expected: Vec<_> = fixtures
        .iter()
        .zip(&args)
        .map(|(f, a)| {
            let sizes = f.sizes.iter().map(|(k, v)| (k.clone(), *v)).collect();
            interp::run(&f.program, &sizes, a)
                .unwrap_or_else(|e| panic!("{}: interpreter failed: {e}", f.name))
        })
        .collect();
    let cases: Vec<Case> = fixtures
        .iter()
        .zip(&args)
        .map(|(f, a)| Case {
            id: f.name.clone(),
            program: &f.program,
            sizes: f.sizes.clone(),
            args: a.clone(),
        })
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let results = run_batch_entry(&python, target, &cases, dir.path(), entry)
        .unwrap_or_else(|e| panic!("{target}: {e}"));
    let mut failures = Vec::new();
    for ((f, want), got) in fixtures.iter().zip(&expected).zip(&results) {
        match got {
            Err(e) => failures.push(format!("{}: Python error:\n{e}", f.name)),
            Ok(got) => {
                let diffs = common::compare_outcomes(want, got);
                if !diffs.is_empty() {
                    failures.push(format!("{}: {}", f.name, diffs.join("; ")));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{target}: {} of {} programs disagree with the interpreter:\n{}",
        failures.len(),
        fixtures.len(),
        failures.join("\n")
    );
}

#[test]
fn numpy_agrees_with_the_interpreter() {
    check_target(Target::Numpy);
}

#[test]
fn jax_agrees_with_the_interpreter() {
    check_target(Target::Jax);
}

#[test]
fn pytorch_agrees_with_the_interpreter() {
    check_target(Target::Pytorch);
}

#[test]
fn stablehlo_agrees_with_the_interpreter() {
    check_target(Target::Hlo);
}

#[test]
fn pytorch_compiled_entry_agrees_with_the_interpreter() {
    // torch.compile is slow to compile; a few representative programs.
    check(
        Target::Pytorch,
        Entry::TorchCompiled,
        &[
            "gemm",
            "blend_multiply_u8",
            "jacobi_1d",
            "l2norm_return",
            "loop_trisolv",
        ],
    );
}
