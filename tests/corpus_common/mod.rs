//! Shared by the corpus-wide tests (`lift_corpus`, `determinism`): the
//! manifest's entries, the kernel each names read the way `tenslift bench`
//! reads it at MINI, and one kernel's lift outcome as a deterministic text
//! (status, first line of the reason, the printed TensIR; no timings).

// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Deserialize;
use tenslift::spec::tensir::check_program_at_acceptance_sizes;
use tenslift::synth::{lift_kernel, Outcome, SynthOptions};
use tenslift_frontend::ir::Kernel;
use tenslift_frontend::Options;
use tenslift_targets::print_program;

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[derive(Deserialize)]
struct Manifest {
    kernel: Vec<Entry>,
}

#[derive(Deserialize, Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub suite: String,
    pub file: String,
    pub function: String,
    pub expect: String,
    /// `distributed` entries are read the suite's way (see [`c_flags`]).
    #[serde(default)]
    pub form: String,
    #[serde(default)]
    pub include: Vec<String>,
}

/// Every entry of `benchmarks/manifest.toml`, in manifest order.
pub fn manifest() -> Vec<Entry> {
    let path = Path::new(ROOT).join("benchmarks/manifest.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let parsed: Manifest =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parsed.kernel
}

/// The C file of an entry, relative to the repository root (the path the
/// lifted program's `source` line records, so snapshots do not depend on
/// where the repository is checked out).
pub fn c_path(entry: &Entry) -> String {
    format!("benchmarks/{}", entry.file)
}

/// The `-I`/`-D` flags an entry's C is read with at MINI, as `scripts/cref.py`
/// compiles it: a distributed-form PolyBench file needs the suite's header
/// and a dataset switch; other entries carry their own size defaults.
pub fn c_flags(entry: &Entry) -> (Vec<String>, Vec<String>) {
    let includes = entry
        .include
        .iter()
        .map(|dir| format!("{ROOT}/benchmarks/{dir}"))
        .collect();
    let defines = if entry.form == "distributed" {
        vec!["MINI_DATASET".to_string()]
    } else {
        Vec::new()
    };
    (includes, defines)
}

/// The kernel an entry names, or why it could not be extracted. The path is
/// relative: the tests run from the repository root (cargo's working
/// directory for integration tests).
pub fn extract(entry: &Entry) -> Result<Kernel, String> {
    let (include_dirs, defines) = c_flags(entry);
    let options = Options {
        functions: vec![entry.function.clone()],
        include_dirs: include_dirs.into_iter().map(Into::into).collect(),
        defines,
        ..Options::default()
    };
    let unit = tenslift_frontend::extract(&c_path(entry), &options).map_err(|e| e.to_string())?;
    unit.kernels
        .into_iter()
        .find(|k| k.name == entry.function)
        .ok_or_else(|| format!("no kernel `{}`", entry.function))
}

/// One kernel through the lift-only path (`tenslift lift`'s: whole, else
/// with loops kept).
pub struct Lift {
    /// `lifted`, `partial` or `failed(<first line of the reason>)`.
    pub status: String,
    /// The printed TensIR, as `tenslift lift --json` reports it.
    pub program: Option<String>,
    /// A returned program that is not equal to the C spec (a test failure).
    pub wrong: Option<String>,
    /// The search's counters and trace as `lift --json` reports them
    /// (work-counted, so equal across runs on any machine).
    pub stats: String,
    pub seconds: f64,
}

impl Lift {
    /// The entry's record with its statistics and trace: what must not
    /// change between an idle and a loaded run.
    pub fn record_with_stats(&self, name: &str) -> String {
        format!("{}  stats {}\n", self.record(name), self.stats)
    }

    /// The entry's snapshot record: `name: status`, then the program
    /// indented by two spaces.
    pub fn record(&self, name: &str) -> String {
        let mut text = format!("{name}: {}\n", self.status);
        for line in self.program.iter().flat_map(|p| p.lines()) {
            text.push_str("  ");
            text.push_str(line);
            text.push('\n');
        }
        text
    }
}

/// Lifts `kernel` with a search timeout of `timeout`, and checks a returned
/// program against the C spec at two size tuples, independently of the
/// search's own acceptance.
pub fn lift(kernel: &Kernel, timeout: Duration) -> Lift {
    let options = SynthOptions {
        timeout,
        ..SynthOptions::default()
    };
    let start = Instant::now();
    let outcome = lift_kernel(kernel, &options);
    let seconds = start.elapsed().as_secs_f64();
    let whole = outcome.whole.as_ref().is_some_and(|w| w.program.is_some());
    let stats = stats_of(&outcome);
    let Some(program) = outcome.program() else {
        let why = match (outcome.error(), outcome.partial_failure()) {
            (Some(e), Some(p)) => format!("{e}; with loops kept: {p}"),
            (Some(e), None) => e.to_string(),
            (None, Some(p)) => p,
            (None, None) => "no program".to_string(),
        };
        return Lift {
            status: format!("failed({})", scrub_seconds(first_line(&why))),
            program: None,
            wrong: None,
            stats,
            seconds,
        };
    };
    let wrong = match program.validate() {
        Err(e) => Some(format!("invalid program: {e}")),
        Ok(()) => match check_program_at_acceptance_sizes(program, kernel) {
            Ok((comparison, _)) if comparison.is_equal() => None,
            Ok((comparison, sizes)) => {
                Some(format!("differs from the spec at {sizes:?}: {comparison}"))
            }
            Err(e) => Some(format!("cannot check: {e}")),
        },
    };
    Lift {
        status: if whole { "lifted" } else { "partial" }.to_string(),
        program: Some(print_program(program)),
        wrong,
        stats,
        seconds,
    }
}

/// The counters of the attempt that gave the outcome, and the trace, as
/// one JSON line.
fn stats_of(outcome: &Outcome) -> String {
    let stats = match (&outcome.whole, &outcome.partial) {
        (Some(w), _) if w.program.is_some() => &w.stats,
        (_, Ok(p)) => &p.stats,
        (Some(w), Err(_)) => &w.stats,
        (None, Err(_)) => return "null".to_string(),
    };
    serde_json::json!({ "stats": stats, "trace": &outcome.trace }).to_string()
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// `text` with the seconds of every "timeout after 12.3 s" replaced by
/// `N`: the elapsed time is not part of the outcome.
pub fn scrub_seconds(text: &str) -> String {
    const MARK: &str = "timeout after ";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at + MARK.len()]);
        rest = &rest[at + MARK.len()..];
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits > 0 {
            out.push('N');
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}
