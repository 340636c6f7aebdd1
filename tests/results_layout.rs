//! results/ holds figures, not generated code: every committed file under
//! `results/` is a summary, a CSV, a plot, a note or a run record. Generated
//! modules, plans and logs are re-created by the run's command and ignored.

use std::path::Path;
use std::process::Command;

/// Why a committed path under `results/` is out of place, or `None`.
fn misplaced(path: &str) -> Option<&'static str> {
    let rest = path.strip_prefix("results/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    let name = parts[parts.len() - 1];
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match parts.len() {
        1 if matches!(ext, "md" | "json" | "csv") => None,
        1 => Some("top-level file that is not a note (.md) or a table (.json, .csv)"),
        2 if matches!(name, "summary.md" | "NOTE.md" | "run.json") || ext == "csv" => None,
        2 => Some("run file other than summary.md, NOTE.md, run.json or a CSV"),
        3 if parts[1] == "plots" && matches!(ext, "png" | "svg" | "pdf") => None,
        3 if parts[1] == "plots" => Some("plots/ holds images only"),
        _ => Some("generated output (kernels/, data/, …) is re-created by the run, not committed"),
    }
}

#[test]
fn committed_results_are_figures_not_generated_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("git")
        .args(["ls-files", "results"])
        .current_dir(root)
        .output()
        .expect("git runs");
    if !out.status.success() {
        // A source tarball without .git: nothing is committed to check.
        eprintln!("not a git checkout; results layout not checked");
        return;
    }
    let listing = String::from_utf8_lossy(&out.stdout);
    let bad: Vec<String> = listing
        .lines()
        .filter_map(|p| misplaced(p).map(|why| format!("{p}: {why}")))
        .collect();
    assert!(
        bad.is_empty(),
        "misplaced files under results/:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_layout_rule_refuses_generated_modules_and_keeps_figures() {
    assert!(misplaced("results/run/kernels/gemm/numpy.py").is_some());
    assert!(misplaced("results/run/plan.json").is_some());
    assert!(misplaced("results/run/runtime.log").is_some());
    assert!(misplaced("results/run/plots/speedup.txt").is_some());
    assert!(misplaced("results/run/summary.md").is_none());
    assert!(misplaced("results/run/runtime.csv").is_none());
    assert!(misplaced("results/run/plots/speedup.png").is_none());
    assert!(misplaced("results/verification-2026-11-22.md").is_none());
}
