//! The fuzzing harness (issue 20, item 2), run through the real binary:
//! a bounded, seeded campaign over the three targets (frontend, search,
//! TensIR; see `fuzz_common::campaign`), the regression fixtures of
//! `tests/fixtures/fuzz/`, and the long campaign `scripts/fuzz.sh` starts
//! (ignored here).
//!
//! `tests/fixtures/fuzz/open.txt` lists defects found and not yet fixed:
//! `fixture FILE` (the fixture must still show its defect; when it no
//! longer does, the test says so and the line goes) and `signature TEXT`
//! (a campaign finding whose signature contains TEXT is reported, not
//! failed). Anything else the campaign finds fails the test.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod fuzz_common;
use fuzz_common::campaign::{finding_of, run_campaign, Found, Report, TARGETS};
use fuzz_common::proc::ROOT;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn fixtures_dir() -> PathBuf {
    Path::new(ROOT).join("tests/fixtures/fuzz")
}

/// `(kind, text)` lines of `open.txt`.
fn open_defects() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(fixtures_dir().join("open.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(k, t)| {
            (
                k.to_string(),
                t.split(" # ").next().unwrap_or(t).trim().to_string(),
            )
        })
        .collect()
}

/// The fixture's file name for a finding: `COMMAND__TARGET_CLASS_INDEX.EXT`.
fn fixture_name(f: &Found) -> String {
    let ext = if f.input.command.starts_with("emit") {
        "tensir"
    } else {
        "c"
    };
    format!(
        "{}__{}_{}_{}.{ext}",
        f.input.command,
        f.input.target,
        f.finding.name(),
        f.index
    )
}

/// Writes each finding's minimal input as a fixture into `dir` and returns
/// the Markdown lines describing them.
fn write_findings(findings: &[Found], dir: &Path) -> String {
    let _ = std::fs::create_dir_all(dir);
    let mut md = String::new();
    for f in findings {
        let name = fixture_name(f);
        let _ = std::fs::write(dir.join(&name), &f.minimal);
        let _ = writeln!(
            md,
            "- `{name}`: {} ({}), input: {}, minimised {} -> {} bytes\n  ```\n  {}\n  ```",
            f.finding.name(),
            f.signature,
            f.input.what.chars().take(160).collect::<String>(),
            f.input.bytes.len(),
            f.minimal.len(),
            f.stderr.replace('\n', "\n  ")
        );
    }
    md
}

fn summary(report: &Report, seed: u64) -> String {
    let mut md = format!(
        "seed {seed}, {:.0} s\n\n| target | inputs |\n|---|---|\n",
        report.seconds
    );
    for t in TARGETS {
        let _ = writeln!(md, "| {t} | {} |", report.runs.get(t).copied().unwrap_or(0));
    }
    md.push_str("\n| target, command, ending | inputs |\n|---|---|\n");
    for (k, n) in &report.endings {
        let _ = writeln!(md, "| {k} | {n} |");
    }
    let _ = writeln!(md, "\n{} findings", report.findings.len());
    md
}

#[test]
fn bounded_campaign_finds_no_new_defect() {
    let seed = env_or("TENSLIFT_FUZZ_SEED", 20);
    let per_target = env_or("TENSLIFT_FUZZ_INPUTS", 300);
    let scratch = tempfile::tempdir().expect("scratch");
    let deadline = Instant::now() + Duration::from_secs(150);
    let report = run_campaign(seed, per_target, Some(deadline), false, scratch.path());
    eprintln!("{}", summary(&report, seed));
    let open = open_defects();
    let known = |f: &Found| {
        open.iter()
            .any(|(k, t)| k == "signature" && f.signature.contains(t.as_str()))
    };
    let new: Vec<Found> = report
        .findings
        .iter()
        .filter(|f| !known(f))
        .cloned()
        .collect();
    let old = report.findings.len() - new.len();
    eprintln!("{old} findings of open defects (tests/fixtures/fuzz/open.txt)");
    let md = write_findings(&new, &Path::new(ROOT).join("target/fuzz-findings"));
    assert!(
        new.is_empty(),
        "new defects (fixtures in target/fuzz-findings/):\n{md}"
    );
    let total: usize = report.runs.values().sum();
    assert!(
        total >= 3 * 40,
        "only {total} inputs ran: {:?}",
        report.runs
    );
}

/// The command a fixture runs: the part of its name before `__`.
fn fixture_command(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    name.split_once("__").map(|(c, _)| c.to_string())
}

#[test]
fn fuzz_fixtures_fail_cleanly() {
    let open = open_defects();
    let scratch = tempfile::tempdir().expect("scratch");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("tests/fixtures/fuzz")
        .flatten()
        .map(|e| e.path())
        .filter(|p| fixture_command(p).is_some())
        .collect();
    entries.sort();
    let mut problems = Vec::new();
    for path in &entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let command = fixture_command(path).unwrap_or_default();
        let bytes = std::fs::read(path).expect("fixture");
        let (finding, run) = finding_of(&command, &bytes, scratch.path());
        let is_open = open.iter().any(|(k, t)| k == "fixture" && t == name);
        match (finding, is_open) {
            (Some(f), false) => problems.push(format!(
                "{name}: {} ({:?})\n{}",
                f.name(),
                run.ending,
                run.stderr
            )),
            (None, true) => problems.push(format!(
                "{name}: fixed ({:?}): remove it from open.txt",
                run.ending
            )),
            _ => {}
        }
    }
    assert!(entries.len() >= 3, "no fuzz fixtures found");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// `scripts/fuzz.sh`: a long campaign (`TENSLIFT_FUZZ_MINUTES`, default 20)
/// with the heavy bombs, writing `summary.md` and the minimised findings as
/// fixtures into `TENSLIFT_FUZZ_OUT`.
#[test]
#[ignore]
fn long_campaign() {
    let seed = env_or("TENSLIFT_FUZZ_SEED", 1);
    let minutes = env_or("TENSLIFT_FUZZ_MINUTES", 20);
    let out = std::env::var_os("TENSLIFT_FUZZ_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join("target/fuzz-campaign"));
    let scratch = tempfile::tempdir().expect("scratch");
    let deadline = Instant::now() + Duration::from_secs(minutes * 60);
    let report = run_campaign(seed, u64::MAX, Some(deadline), true, scratch.path());
    let mut md = summary(&report, seed);
    md.push_str(&write_findings(&report.findings, &out.join("fixtures")));
    std::fs::write(out.join("summary.md"), &md).expect("write summary");
    eprintln!("{md}");
}

/// Writes the first `TENSLIFT_FUZZ_INPUTS` (default 20) inputs of each
/// target of seed `TENSLIFT_FUZZ_SEED` into `TENSLIFT_FUZZ_OUT`, to read
/// what a campaign runs.
#[test]
#[ignore]
fn dump_inputs() {
    use fuzz_common::campaign::{input, Seeds};
    let seed = env_or("TENSLIFT_FUZZ_SEED", 20);
    let count = env_or("TENSLIFT_FUZZ_INPUTS", 20);
    let out = std::env::var_os("TENSLIFT_FUZZ_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join("target/fuzz-inputs"));
    std::fs::create_dir_all(&out).expect("output dir");
    let seeds = Seeds::load();
    for target in TARGETS {
        for i in 0..count {
            let inp = input(&seeds, target, seed, i, true);
            let ext = if inp.command.starts_with("emit") {
                "tensir"
            } else {
                "c"
            };
            let name = format!("{target}_{i}_{}.{ext}", inp.command);
            std::fs::write(out.join(name), &inp.bytes).expect("write input");
        }
    }
}

/// The same seed gives the same inputs, whichever order they are drawn in.
#[test]
fn inputs_are_deterministic() {
    use fuzz_common::campaign::{input, Seeds};
    let seeds = Seeds::load();
    for target in TARGETS {
        let later = input(&seeds, target, 7, 5, true);
        let first = input(&seeds, target, 7, 0, true);
        assert_eq!(first.bytes, input(&seeds, target, 7, 0, true).bytes);
        assert_eq!(later.bytes, input(&seeds, target, 7, 5, true).bytes);
        assert_ne!(
            first.bytes, later.bytes,
            "{target}: inputs 0 and 5 are equal"
        );
    }
}

/// Delta debugging keeps exactly the units the predicate needs.
#[test]
fn ddmin_finds_the_failing_lines() {
    use fuzz_common::campaign::ddmin;
    let units: Vec<String> = (0..40).map(|i| format!("line{i}")).collect();
    let mut budget = 500;
    let mut fails = |b: &[u8]| {
        let text = String::from_utf8_lossy(b);
        text.split('\n').any(|l| l == "line7") && text.split('\n').any(|l| l == "line31")
    };
    let kept = ddmin(units, "\n", &mut budget, &mut fails);
    assert_eq!(kept, vec!["line7".to_string(), "line31".to_string()]);
}

/// Every generated kernel is C that gcc accepts with warnings as errors
/// (so a refusal by the tool is the tool's, not the generator's).
#[test]
fn generated_kernels_are_valid_c() {
    use fuzz_common::kernel::generate;
    use fuzz_common::rng::Rng;
    let dir = tempfile::tempdir().expect("scratch");
    let file = dir.path().join("kernels.c");
    let source: String = std::iter::once("#include <math.h>\n".to_string())
        .chain(
            (0..300)
                .map(|i| generate(&mut Rng::for_item(20, "kernel", i), &format!("fz{i}")).to_c()),
        )
        .collect();
    std::fs::write(&file, source).expect("write");
    let out = std::process::Command::new("gcc")
        .args([
            "-std=c99",
            "-fsyntax-only",
            "-Wall",
            "-Werror",
            "-Wno-unused-variable",
        ])
        .arg(&file)
        .output()
        .expect("run gcc");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
