//! The symmetry rewrites on lifted corpus programs (PolyBench syrk, syr2k,
//! covariance, correlation; STENSO reorder_dot, dot_trans) and on the paper's
//! micro-benchmarks: a snapshot of each target's rewritten program and
//! report, and each rewritten program run for real in its target against
//! the reference interpreter's run of the original, on random inputs.

mod common;

use std::path::{Path, PathBuf};

use tenslift_targets::interp;
use tenslift_targets::runner::{python_interpreter, run_batch_entry, Case, Entry};
use tenslift_targets::symmetry::{apply_with, Policy};
use tenslift_targets::{apply_symmetry, print_program, Program, Target};

fn fixture_paths() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("symmetry");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/symmetry exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "tensir"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn rewritten_programs_snapshots() {
    for path in fixture_paths() {
        let f = common::load_fixture(&path);
        let mut text = String::new();
        for target in Target::ALL {
            let (p, report) = apply_symmetry(&f.program, Some(target));
            text.push_str(&format!("## {target}\n{report}{}\n", print_program(&p)));
        }
        insta::assert_snapshot!(f.name.clone(), text);
    }
}

/// Every use applies to the corpus programs it is for (whatever the
/// policy of a target says), so each use is run in every target below.
#[test]
fn every_use_fires_where_expected() {
    let expect = [
        ("syrk", "lower triangle"),
        ("syr2k", "lower triangle"),
        ("covariance", "mirrored"),
        ("paper_dot_cse", "transpose dropped"),
        ("paper_chained", "transpose dropped"),
        ("paper_reduce", "reduction rotated"),
    ];
    for path in fixture_paths() {
        let f = common::load_fixture(&path);
        let (_, report) = apply_with(&f.program, Policy::all());
        let kinds: Vec<&str> = report.changes.iter().map(|c| c.kind.name()).collect();
        for (name, kind) in expect {
            if f.name == name {
                assert!(kinds.contains(&kind), "{name}: {report}");
            }
        }
        if f.name == "dot_trans" {
            assert!(report.changes.is_empty(), "dot_trans: {report}");
        }
    }
}

/// The rewritten programs (the target's policy, and every use) computed
/// in `target` agree with the interpreter's run of the original.
fn check(target: Target) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = python_interpreter(&root);
    assert!(python.exists(), "no Python at {}", python.display());
    let fixtures: Vec<_> = fixture_paths()
        .iter()
        .map(|p| common::load_fixture(p))
        .collect();
    let mut rewritten: Vec<(String, Program, usize)> = Vec::new();
    for (k, f) in fixtures.iter().enumerate() {
        let (own, _) = apply_symmetry(&f.program, Some(target));
        let (all, _) = apply_with(&f.program, Policy::all());
        rewritten.push((format!("{}__{target}", f.name), own, k));
        rewritten.push((format!("{}__all", f.name), all, k));
    }
    let args: Vec<_> = fixtures.iter().map(common::random_args).collect();
    let cases: Vec<Case> = rewritten
        .iter()
        .map(|(id, p, k)| Case {
            id: id.clone(),
            program: p,
            sizes: fixtures[*k].sizes.clone(),
            args: args[*k].clone(),
        })
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let results = run_batch_entry(&python, target, &cases, dir.path(), Entry::Plain)
        .unwrap_or_else(|e| panic!("{target}: {e}"));
    let mut failures = Vec::new();
    for ((id, _, k), got) in rewritten.iter().zip(&results) {
        let f = &fixtures[*k];
        let sizes = f.sizes.iter().map(|(n, v)| (n.clone(), *v)).collect();
        let want = interp::run(&f.program, &sizes, &args[*k])
            .unwrap_or_else(|e| panic!("{id}: interpreter failed: {e}"));
        match got {
            Err(e) => failures.push(format!("{id}: Python error:\n{e}")),
            Ok(got) => {
                let diffs = common::compare_outcomes(&want, got);
                if !diffs.is_empty() {
                    failures.push(format!("{id}: {}", diffs.join("; ")));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn numpy_runs_the_rewritten_programs() {
    check(Target::Numpy);
}

#[test]
fn jax_runs_the_rewritten_programs() {
    check(Target::Jax);
}

#[test]
fn pytorch_runs_the_rewritten_programs() {
    check(Target::Pytorch);
}

#[test]
fn xla_runs_the_rewritten_programs() {
    check(Target::Hlo);
}
