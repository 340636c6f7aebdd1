//! Whole-pipeline differential property test: grammar-generated C kernels
//! are lifted by the real `tenslift lift --target numpy`, and every lifted
//! program must compute what the gcc-compiled C computes on random inputs.
//! A kernel the tool refuses or does not lift is counted, not failed; a
//! lifted kernel whose output differs, or a crash of the binary, fails the
//! test after being shrunk to a minimal kernel (written under
//! `target/fuzz-findings/`, to become a fixture in `tests/fixtures/fuzz/`).
//!
//! Seeded and deterministic: `TENSLIFT_FUZZ_SEED` (default 20) and
//! `TENSLIFT_FUZZ_KERNELS` (default 200) pick the kernels.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

mod fuzz_common;
use fuzz_common::diff::{check_batch, Outcome};
use fuzz_common::kernel::{generate, minimise, Kernel};
use fuzz_common::proc::ROOT;
use fuzz_common::rng::Rng;

const BATCH: usize = 20;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `count` kernels of campaign `seed`, each from its own stream.
fn kernels(seed: u64, count: usize) -> Vec<Kernel> {
    (0..count)
        .map(|i| {
            generate(
                &mut Rng::for_item(seed, "kernel", i as u64),
                &format!("fz{i}"),
            )
        })
        .collect()
}

/// Checks every batch, two at a time (the machine has two cores).
fn check_all(all: &[Kernel], scratch: &Path) -> Vec<Outcome> {
    let batches: Vec<&[Kernel]> = all.chunks(BATCH).collect();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let b = next.fetch_add(1, Ordering::SeqCst);
                let Some(batch) = batches.get(b) else { break };
                let outcomes = check_batch(batch, &scratch.join(format!("batch{b}")));
                results.lock().expect("results").insert(b, outcomes);
            });
        }
    });
    results
        .into_inner()
        .expect("results")
        .into_values()
        .flatten()
        .collect()
}

fn is_finding(o: &Outcome) -> bool {
    matches!(o, Outcome::Differs { .. } | Outcome::Crash(..))
}

/// Shrinks a failing kernel while it still fails the same way, writes it
/// under `target/fuzz-findings/`, and returns the report text.
fn report_finding(k: &Kernel, outcome: &Outcome, scratch: &Path) -> String {
    let mut tries = 0;
    let mut still_fails = |candidate: &Kernel| {
        tries += 1;
        let dir = scratch.join(format!("shrink{tries}"));
        let o = check_batch(std::slice::from_ref(candidate), &dir);
        std::mem::discriminant(&o[0]) == std::mem::discriminant(outcome)
    };
    let small = minimise(k, 80, &mut still_fails);
    let last = check_batch(std::slice::from_ref(&small), &scratch.join("final"));
    let findings = Path::new(ROOT).join("target/fuzz-findings");
    let _ = std::fs::create_dir_all(&findings);
    let _ = std::fs::write(
        findings.join(format!("differential_{}.c", k.name)),
        small.to_c(),
    );
    format!(
        "kernel {} (sizes {:?}):\n{}\nminimal ({tries} shrink runs):\n{}\n{:?}\n",
        k.name,
        small.sizes(),
        k.to_c(),
        small.to_c(),
        last[0]
    )
}

#[test]
fn lifted_numpy_equals_gcc_on_generated_kernels() {
    let seed = env_or("TENSLIFT_FUZZ_SEED", 20);
    let count = env_or("TENSLIFT_FUZZ_KERNELS", 200) as usize;
    let all = kernels(seed, count);
    let scratch = tempfile::tempdir().expect("scratch");
    // `TENSLIFT_FUZZ_KEEP=DIR` keeps every batch's files for inspection.
    let keep = std::env::var_os("TENSLIFT_FUZZ_KEEP").map(std::path::PathBuf::from);
    let scratch = keep.as_deref().unwrap_or(scratch.path());
    let outcomes = check_all(&all, scratch);
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    for o in &outcomes {
        let key = match o {
            Outcome::Agrees => "agrees",
            Outcome::NotLifted(_) => "not lifted",
            Outcome::Skipped(_) => "skipped",
            Outcome::Crash(..) => "crash",
            Outcome::Differs { .. } => "differs",
        };
        *tally.entry(key).or_default() += 1;
    }
    eprintln!("seed {seed}, {count} kernels: {tally:?}");
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for o in &outcomes {
        if let Outcome::NotLifted(why) | Outcome::Skipped(why) = o {
            // Without the file and line, so equal reasons count together.
            let why = why.find("error[").map_or(why.as_str(), |at| &why[at..]);
            *reasons.entry(why.chars().take(100).collect()).or_default() += 1;
        }
    }
    eprintln!("not lifted or skipped, by reason: {reasons:#?}");
    let reports: Vec<String> = all
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| is_finding(o))
        .map(|(k, o)| report_finding(k, o, scratch))
        .collect();
    assert!(
        reports.is_empty(),
        "{} findings:\n{}",
        reports.len(),
        reports.join("\n")
    );
    let agrees = tally.get("agrees").copied().unwrap_or(0);
    assert!(
        agrees * 5 >= count,
        "only {agrees} of {count} kernels lifted and compared: {tally:?}"
    );
}
