//! The whole corpus (`benchmarks/manifest.toml`) through the lift-only path,
//! its outcome an insta snapshot per suite in ruff's one-line-per-fixture
//! style: `name: lifted|partial|failed(<first line of the reason>)|
//! rejected(<first line of the diagnostic>)`, then the lifted program's
//! TensIR as `tenslift lift` prints it. Any change in what the search finds
//! (a kernel gained or lost, a different program) shows in review as a
//! snapshot diff. Every returned program must also equal the C spec at two
//! size tuples, checked here again independently of the search.
//!
//! The search's limits are counted in work, so the outcome does not depend
//! on the machine's load; the timeout is only the outer safety net and
//! must never be what stops a corpus kernel.
//! Kernels lift on rayon workers. `TENSLIFT_CORPUS_SUITES=dsp,dspstone`
//! lifts and compares those suites only.

mod corpus_common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use corpus_common::{extract, lift, manifest, Entry, Lift, ROOT};
use rayon::prelude::*;

/// The outer safety limit per kernel (`tenslift lift`'s default): no
/// corpus kernel comes near it. `TENSLIFT_CORPUS_TIMEOUT_S` overrides it.
const TIMEOUT_S: u64 = 60;

fn timeout() -> Duration {
    let seconds = std::env::var("TENSLIFT_CORPUS_TIMEOUT_S")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(TIMEOUT_S);
    Duration::from_secs(seconds)
}

/// An entry's outcome: its extraction's rejection, or its lift.
fn outcome(kernel: &Result<tenslift_frontend::ir::Kernel, String>) -> Lift {
    match kernel {
        Ok(kernel) => lift(kernel, timeout()),
        Err(e) => {
            let first = e.lines().next().unwrap_or("");
            Lift {
                status: format!("rejected({})", first.replace(&format!("{ROOT}/"), "")),
                program: None,
                wrong: None,
                stats: "null".to_string(),
                seconds: 0.0,
            }
        }
    }
}

/// The suites `TENSLIFT_CORPUS_SUITES` (comma-separated) names, or every
/// suite: a change confined to a few suites is reviewed without lifting
/// the whole corpus (the snapshots of the other suites are not compared).
fn selected(entries: Vec<Entry>) -> Vec<Entry> {
    let Ok(names) = std::env::var("TENSLIFT_CORPUS_SUITES") else {
        return entries;
    };
    let names: Vec<&str> = names.split(',').map(str::trim).collect();
    let kept: Vec<Entry> = entries
        .into_iter()
        .filter(|e| names.contains(&e.suite.as_str()))
        .collect();
    assert!(!kept.is_empty(), "TENSLIFT_CORPUS_SUITES names no suite");
    kept
}

#[test]
fn corpus_lift_outcomes_match_their_snapshots() {
    let entries = manifest();
    assert!(entries.len() > 200, "the manifest lost its kernels");
    let entries = selected(entries);
    let start = Instant::now();
    // libclang is used one file at a time; the search runs in parallel.
    let kernels: Vec<_> = entries.iter().map(extract).collect();
    let lifts: Vec<Lift> = entries
        .par_iter()
        .zip(kernels.par_iter())
        .map(|(_, kernel)| outcome(kernel))
        .collect();
    report_times(&entries, &lifts, start.elapsed().as_secs_f64());
    let wrong: Vec<String> = entries
        .iter()
        .zip(&lifts)
        .filter_map(|(e, l)| l.wrong.as_ref().map(|w| format!("{}: {w}", e.name)))
        .collect();
    assert!(
        wrong.is_empty(),
        "returned programs that differ from their spec:\n{}",
        wrong.join("\n")
    );
    let mut suites: BTreeMap<&str, String> = BTreeMap::new();
    for (entry, lift) in entries.iter().zip(&lifts) {
        let record = lift.record(&entry.name);
        suites
            .entry(entry.suite.as_str())
            .or_default()
            .push_str(&record);
    }
    // Every suite is compared (and its `.snap.new` written) before the test
    // fails, so that one run shows every change.
    let differing: Vec<&str> = suites
        .iter()
        .filter(|(suite, text)| {
            std::panic::catch_unwind(|| {
                insta::assert_snapshot!(format!("corpus_{suite}"), text.as_str());
            })
            .is_err()
        })
        .map(|(suite, _)| *suite)
        .collect();
    assert!(
        differing.is_empty(),
        "the lift outcomes of these suites changed (review the .snap.new files): {}",
        differing.join(", ")
    );
}

/// The tally and the slowest kernels, for whoever tunes the timeout.
fn report_times(entries: &[Entry], lifts: &[Lift], total: f64) {
    let mut by_time: Vec<(f64, &str, &str)> = entries
        .iter()
        .zip(lifts)
        .map(|(e, l)| (l.seconds, e.name.as_str(), l.status.as_str()))
        .collect();
    by_time.sort_by(|a, b| b.0.total_cmp(&a.0));
    let count = |prefix: &str| {
        lifts
            .iter()
            .filter(|l| l.status.starts_with(prefix))
            .count()
    };
    eprintln!(
        "{} kernels in {total:.1} s: {} lifted, {} partial, {} failed, {} rejected; slowest:",
        lifts.len(),
        count("lifted"),
        count("partial"),
        count("failed"),
        count("rejected"),
    );
    for (seconds, name, status) in by_time.iter().take(25) {
        let status: String = status.chars().take(100).collect();
        eprintln!("  {seconds:7.2} s  {name}: {status}");
    }
    if let Ok(path) = std::env::var("TENSLIFT_CORPUS_TIMES") {
        let lines: Vec<String> = by_time
            .iter()
            .map(|(s, n, st)| format!("{s:.3}\t{n}\t{st}"))
            .collect();
        let _ = std::fs::write(path, lines.join("\n") + "\n");
    }
}
