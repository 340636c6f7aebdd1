//! Verification reports: everything `tenslift verify` found out about one
//! kernel ([`KernelVerification`]), rendered as JSON, Markdown and one
//! self-contained HTML page, plus an index over all kernels. Rendering is
//! pure; [`write_reports`] writes the files atomically (all or none).

mod html;
mod json;
mod markdown;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use html::{render_html, render_html_index};
pub use json::render_json;
pub use markdown::{render_markdown, render_markdown_index};

use crate::differential::{DifferentialResult, Verdict};

/// One check's status as the JSON and the summary name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Pass,
    Fail,
    Unknown,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Unknown => "unknown",
        }
    }
}

/// The bounded check at one size tuple.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundedRun {
    pub sizes: BTreeMap<String, i64>,
    pub status: Status,
    /// The checker's own text: the summary, the counterexample, or why not.
    pub detail: String,
    pub elapsed_ms: u128,
}

/// The unbounded proof attempt, independent of the prover's types.
#[derive(Clone, Debug, PartialEq)]
pub struct UnboundedSummary {
    /// `proved`, `unknown`, `fail` or `not run`.
    pub status: String,
    pub invariants: Vec<String>,
    pub conditions: usize,
    pub arithmetic: String,
    pub detail: String,
}

impl UnboundedSummary {
    pub fn not_run(why: impl Into<String>) -> UnboundedSummary {
        UnboundedSummary {
            status: "not run".to_string(),
            invariants: Vec::new(),
            conditions: 0,
            arithmetic: String::new(),
            detail: why.into(),
        }
    }
}

/// Everything known about one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelVerification {
    pub file: String,
    pub function: String,
    /// `file`, first and last line of the kernel in the C.
    pub source_range: (String, u32, u32),
    pub source_text: String,
    /// The TensIR program checked (`None` when lifting failed).
    pub program_text: Option<String>,
    /// Where the program came from: `lifted` or the `--program` file.
    pub program_origin: String,
    pub bounded: Vec<BoundedRun>,
    pub unbounded: UnboundedSummary,
    pub differential: DifferentialResult,
    /// The arithmetic model of the symbolic checks.
    pub arithmetic: String,
    /// Why the kernel is not verified (empty when it is).
    pub reason: String,
}

/// The arithmetic model of the bounded check, stated once for reports.
pub const BOUNDED_ARITHMETIC: &str =
    "floats as exact reals (no rounding), integers exact with C's \
truncating division, wrap-around conversions and undefined behaviour as preconditions; \
sqrt/exp/log/tanh/pow/sin/cos/round/floor/ceil uninterpreted functions shared by both sides";

impl KernelVerification {
    /// The bounded verdict over all size tuples: a failure anywhere fails,
    /// a pass needs every tuple to pass.
    pub fn bounded_status(&self) -> Status {
        if self.bounded.iter().any(|b| b.status == Status::Fail) {
            Status::Fail
        } else if !self.bounded.is_empty() && self.bounded.iter().all(|b| b.status == Status::Pass)
        {
            Status::Pass
        } else {
            Status::Unknown
        }
    }

    /// `proved`, `unknown` or `fail` (a prover that did not run is unknown).
    pub fn unbounded_status(&self) -> &str {
        match self.unbounded.status.as_str() {
            "proved" => "proved",
            "fail" => "fail",
            _ => "unknown",
        }
    }

    /// Whether a check found the program wrong (a kernel without a program
    /// has nothing to fail).
    pub fn failed(&self) -> bool {
        self.bounded_status() == Status::Fail
            || self.unbounded_status() == "fail"
            || self.differential.verdict == Verdict::Fail
    }

    /// Whether some check passed and none failed.
    pub fn verified(&self) -> bool {
        !self.failed()
            && (self.bounded_status() == Status::Pass
                || self.unbounded_status() == "proved"
                || self.differential.verdict == Verdict::Pass)
    }

    /// The status line for a generated module's header.
    pub fn header_status(&self) -> String {
        if self.program_text.is_none() {
            return first_line(&self.reason);
        }
        if self.failed() {
            return format!("failed: {}", first_line(&self.reason));
        }
        let mut parts = Vec::new();
        if self.unbounded_status() == "proved" {
            // The prover's arithmetic reads "reals (floats are proved over
            // …)"; the header keeps the short name.
            let arithmetic = match self.unbounded.arithmetic.split(" (").next() {
                Some(short) if !short.trim().is_empty() => short.trim().to_string(),
                _ => "reals".to_string(),
            };
            return format!("proved (unbounded, {arithmetic})");
        }
        if self.bounded_status() == Status::Pass {
            parts.push("bounded");
        }
        if self.differential.verdict == Verdict::Pass {
            parts.push("differential");
        }
        if parts.is_empty() {
            format!("unverified: {}", first_line(&self.reason))
        } else {
            parts.join("+")
        }
    }

    /// A file-name stem for this kernel's report files.
    pub fn stem(&self) -> String {
        let file = Path::new(&self.file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let clean = |s: &str| -> String {
            s.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        format!("{}-{}", clean(&file), clean(&self.function))
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_string()
}

/// Writes `<stem>.md`, `<stem>.html`, `<stem>.json` per kernel and
/// `index.md`, `index.html`, `index.json` into `dir`. Every file goes to a
/// temporary name first; on any error the files written so far are removed.
pub fn write_reports(dir: &Path, kernels: &[KernelVerification]) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<(String, String)> = Vec::new();
    for k in kernels {
        let stem = k.stem();
        files.push((format!("{stem}.md"), render_markdown(k)));
        files.push((format!("{stem}.html"), render_html(k)));
        files.push((format!("{stem}.json"), format!("{:#}\n", render_json(k))));
    }
    files.push(("index.md".into(), render_markdown_index(kernels)));
    files.push(("index.html".into(), render_html_index(kernels)));
    let index: Vec<serde_json::Value> = kernels.iter().map(render_json).collect();
    files.push((
        "index.json".into(),
        format!("{:#}\n", serde_json::Value::Array(index)),
    ));
    std::fs::create_dir_all(dir)?;
    let mut temporaries = Vec::new();
    let result = (|| {
        for (name, text) in &files {
            let tmp = dir.join(format!(".{name}.tenslift-{}.tmp", std::process::id()));
            temporaries.push(tmp.clone());
            std::fs::write(&tmp, text)?;
        }
        Ok::<(), std::io::Error>(())
    })();
    if let Err(e) = result {
        for t in &temporaries {
            let _ = std::fs::remove_file(t);
        }
        return Err(e);
    }
    // Every file is complete on disk; now put them in place.
    let mut written = Vec::new();
    for ((name, _), tmp) in files.iter().zip(&temporaries) {
        let target = dir.join(name);
        std::fs::rename(tmp, &target)?;
        written.push(target);
    }
    Ok(written)
}
