//! What the search did, tactic by tactic: the record behind a failure
//! message, `lift --json`'s `trace` and `lift --explain`.
//!
//! Like egg's `Runner`, which keeps an `Iteration` per step and a typed
//! `StopReason`, the driver keeps a [`TacticRun`] per tactic it consulted:
//! its name, how it stopped ([`Stop`]), the work it spent and the
//! candidates it tried. Everything here is counted in work, so two runs on
//! the same input give the same trace, whatever the machine's load.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

/// The name of the kernel tactic that solves the outputs one by one: its
/// line in a trace is followed by the per-output records.
pub const PER_OUTPUT: &str = "per-output";

/// How one tactic's attempt ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "stop", rename_all = "snake_case")]
pub enum Stop {
    /// It found a program of this cost.
    Found { cost: f64 },
    /// It searched everything it could reach and found nothing.
    Exhausted,
    /// Its work limit stopped it before it found anything.
    Budget,
    /// It does not apply here, for this reason.
    NotApplicable { why: String },
    /// It was not consulted: an earlier tactic settled the goal.
    NotTried,
}

impl Stop {
    fn describe(&self) -> String {
        match self {
            Stop::Found { cost } => format!("found a program, cost {cost:.4e}"),
            Stop::Exhausted => "exhausted its candidates".to_string(),
            Stop::Budget => "stopped at its work limit".to_string(),
            Stop::NotApplicable { why } => format!("not applicable: {why}"),
            Stop::NotTried => "not tried".to_string(),
        }
    }
}

/// One tactic's attempt at one goal (an output, or the whole kernel).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TacticRun {
    pub tactic: &'static str,
    #[serde(flatten)]
    pub stop: Stop,
    /// Units of work spent ([`super::budget`]).
    pub work: u64,
    /// Candidates tried: library stubs, sketches, proposals.
    pub candidates: u64,
    /// Per sketch family, how often it was applied (the enumerative
    /// search only).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub families: BTreeMap<&'static str, u64>,
}

impl TacticRun {
    /// A run that ended before any work.
    pub fn without_work(tactic: &'static str, stop: Stop) -> TacticRun {
        TacticRun {
            tactic,
            stop,
            work: 0,
            candidates: 0,
            families: BTreeMap::new(),
        }
    }
}

/// The tactics consulted for one output in one pass over the outputs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OutputTrace {
    pub output: String,
    /// 1 for the first pass; a retry after a rejection or an output that
    /// waited for another one's result starts a later pass.
    pub pass: u32,
    pub runs: Vec<TacticRun>,
}

/// The whole record of one kernel's lift.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Trace {
    /// The kernel-level tactics, in registry order.
    pub kernel: Vec<TacticRun>,
    /// Per output and pass, the output tactics.
    pub outputs: Vec<OutputTrace>,
    /// Candidate programs the acceptance check rejected, with why.
    pub rejected: Vec<String>,
    /// What equality saturation did to the accepted program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewrites: Option<RewriteRecord>,
}

/// Equality saturation over the accepted program (`crate::eqsat`): its
/// cost at the scaled sizes before and after, the e-graph when it stopped,
/// and whether the rewritten program was kept (it must pass the same
/// acceptance check).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RewriteRecord {
    pub cost_before: f64,
    pub cost_after: f64,
    pub nodes: usize,
    pub classes: usize,
    pub iterations: usize,
    pub stop: String,
    pub statements_rewritten: usize,
    /// Expressions that read a value another statement stores instead of
    /// computing it again.
    #[serde(skip_serializing_if = "is_zero")]
    pub values_shared: usize,
    /// New unions per rule that fired.
    pub applications: BTreeMap<String, usize>,
    /// `kept`, `no cheaper form`, or why the rewritten program was dropped.
    pub outcome: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Trace {
    /// The readable trace `lift --explain` prints.
    pub fn render(&self, kernel: &str) -> String {
        let mut out = format!("{kernel}: how the search went\n");
        for run in &self.kernel {
            let _ = writeln!(out, "  {:<12} {}", run.tactic, line(run));
            if run.tactic == PER_OUTPUT {
                self.render_outputs(&mut out);
            }
        }
        out
    }

    fn render_outputs(&self, out: &mut String) {
        for output in &self.outputs {
            let _ = writeln!(out, "    output `{}` (pass {})", output.output, output.pass);
            for run in &output.runs {
                let _ = writeln!(out, "      {:<14} {}", run.tactic, line(run));
            }
        }
        for why in &self.rejected {
            let _ = writeln!(out, "    rejected: {why}");
        }
        if let Some(r) = &self.rewrites {
            let _ = writeln!(
                out,
                "  rewrites     {}: cost {:.4e} -> {:.4e} ({} statements, {} values shared; e-graph {} nodes, {} iterations, {})",
                r.outcome, r.cost_before, r.cost_after, r.statements_rewritten, r.values_shared, r.nodes, r.iterations, r.stop
            );
        }
    }

    /// What the tactics that ran on `output` in its last pass did, in a
    /// few words (the ones that did not apply are left to `--explain`):
    /// the failure message's detail.
    pub fn unsolved_summary(&self, output: &str) -> Option<String> {
        let last = self.outputs.iter().rev().find(|o| o.output == output)?;
        let parts: Vec<String> = last
            .runs
            .iter()
            .filter(|r| !matches!(r.stop, Stop::NotApplicable { .. } | Stop::NotTried))
            .map(|r| format!("{} {}", r.tactic, short(&r.stop)))
            .collect();
        Some(format!("tried {}", parts.join(", ")))
    }
}

/// A run's stop, work and candidates on one line.
fn line(run: &TacticRun) -> String {
    let mut text = run.stop.describe();
    if run.work > 0 || run.candidates > 0 {
        let _ = write!(text, " ({} work, {} candidates)", run.work, run.candidates);
    }
    let applied: Vec<String> = run
        .families
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    if !applied.is_empty() {
        let _ = write!(text, "; sketches applied: {}", applied.join(", "));
    }
    text
}

/// A stop in a few words, for the one-line failure message.
fn short(stop: &Stop) -> String {
    match stop {
        Stop::Found { .. } => "(found a program)".to_string(),
        Stop::Exhausted => "(exhausted its candidates)".to_string(),
        Stop::Budget => "(hit its work limit)".to_string(),
        Stop::NotApplicable { why } => format!("not applicable ({why})"),
        Stop::NotTried => "not tried".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_failure_summary_names_each_tactic_of_the_last_pass() {
        let trace = Trace {
            outputs: vec![
                OutputTrace {
                    output: "C".into(),
                    pass: 1,
                    runs: vec![TacticRun::without_work("direct", Stop::Exhausted)],
                },
                OutputTrace {
                    output: "C".into(),
                    pass: 2,
                    runs: vec![
                        TacticRun::without_work(
                            "direct",
                            Stop::NotApplicable {
                                why: "not point-wise".into(),
                            },
                        ),
                        TacticRun::without_work("enumerative", Stop::Budget),
                    ],
                },
            ],
            ..Trace::default()
        };
        assert_eq!(
            trace.unsolved_summary("C").as_deref(),
            Some("tried enumerative (hit its work limit)")
        );
        assert_eq!(trace.unsolved_summary("D"), None);
    }
}
