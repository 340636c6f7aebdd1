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
use fuzz_common::diff::{check_batch, check_file, Named, Outcome};
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
fn report_finding(k: &Kernel, outcome: &Outcome, scratch: &Path) -> (String, String) {
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
    let text = format!(
        "kernel {} (sizes {:?}):\n{}\nminimal ({tries} shrink runs):\n{}\n{:?}\n",
        k.name,
        small.sizes(),
        k.to_c(),
        small.to_c(),
        last[0]
    );
    (normalised(&small.to_c(), &small.name), text)
}

const FIXTURES: &str = "tests/fixtures/fuzz/differential";

/// C text without comment lines and with the function named `K`, so that a
/// shrunk finding can be matched with a fixture.
fn normalised(c: &str, name: &str) -> String {
    c.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| l.replace(&format!(" {name}("), " K("))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A differential fixture: its path, function, sizes and whether
/// `tests/fixtures/fuzz/open.txt` lists it as an open defect.
struct Fixture {
    path: std::path::PathBuf,
    named: Named,
    open: bool,
}

/// Every `tests/fixtures/fuzz/differential/*.c`; each starts with
/// `// function: NAME` and `// sizes: n=5 m=7`.
fn fixtures() -> Vec<Fixture> {
    let open = std::fs::read_to_string(Path::new(ROOT).join("tests/fixtures/fuzz/open.txt"))
        .unwrap_or_default();
    let mut paths: Vec<_> = std::fs::read_dir(Path::new(ROOT).join(FIXTURES))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "c"));
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("fixture");
            let field = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(key))
                    .map(str::trim)
                    .unwrap_or_default()
                    .to_string()
            };
            let sizes = field("// sizes:")
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.parse().expect("size value")))
                .collect();
            let file = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let open = open
                .lines()
                .any(|l| l.starts_with(&format!("fixture differential/{file}")));
            Fixture {
                named: Named {
                    name: field("// function:"),
                    sizes,
                },
                path,
                open,
            }
        })
        .collect()
}

/// Each fixture agrees with the C or is not lifted (a wrong program is the
/// defect; refusing one is sound), or, while open, still differs (then the
/// test says it is fixed and the `open.txt` line goes).
#[test]
fn differential_fixtures() {
    let scratch = tempfile::tempdir().expect("scratch");
    let mut problems = Vec::new();
    let all = fixtures();
    for (n, f) in all.iter().enumerate() {
        let dir = scratch.path().join(format!("f{n}"));
        let outcome = check_file(&f.path, std::slice::from_ref(&f.named), &dir).remove(0);
        match (&outcome, f.open) {
            (Outcome::Agrees | Outcome::NotLifted(_), true) => problems.push(format!(
                "{}: fixed, remove it from open.txt",
                f.path.display()
            )),
            (Outcome::Differs { .. }, true) | (Outcome::Agrees | Outcome::NotLifted(_), false) => {}
            (o, _) => problems.push(format!("{}: {o:?}", f.path.display())),
        }
    }
    assert!(!all.is_empty(), "no fixtures in {FIXTURES}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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
    let open: Vec<String> = fixtures()
        .iter()
        .filter(|f| f.open)
        .map(|f| {
            normalised(
                &std::fs::read_to_string(&f.path).unwrap_or_default(),
                &f.named.name,
            )
        })
        .collect();
    let mut reports = Vec::new();
    for (k, o) in all.iter().zip(&outcomes).filter(|(_, o)| is_finding(o)) {
        let (minimal, text) = report_finding(k, o, scratch);
        if open.contains(&minimal) {
            eprintln!("open defect (a fixture in {FIXTURES}):\n{text}");
        } else {
            reports.push(text);
        }
    }
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
