//! The search's counters: what `lift --json` reports per kernel
//! (TENSORIZE Table 2's columns, plus the library size and the work
//! spent). Every counter is a count of work done in an order the search
//! fixes, so two runs on the same input report the same numbers; the
//! seconds spent are kept apart, in [`Timings`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

/// Counters reported per kernel.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Library stubs enumerated.
    pub stubs: usize,
    /// Candidate expressions the libraries evaluated.
    pub evaluations: u64,
    /// Targets visited (base-case lookups): TENSORIZE's exploration steps.
    pub steps: u64,
    /// Sketches whose hole search failed.
    pub backtracks: u64,
    /// Sketches derived from the target's outermost function.
    pub pattern_matched: u64,
    /// Outputs translated directly from their point-wise template.
    pub direct: u64,
    /// Sketches whose hole value was solved algebraically.
    pub solved_algebraically: u64,
    /// Contraction sketches whose tensor hole was solved by coefficient
    /// extraction (see `extraction`).
    pub solved_by_coefficients: u64,
    /// Units of search work spent (see `budget`).
    pub work: u64,
    /// The most work any one search had spent when it last improved its
    /// top-level solution: a limit at least this large finds the same
    /// programs (what the limits are calibrated against).
    pub work_at_best: u64,
    /// Whether a work limit stopped some search (in best mode the program
    /// is then the cheapest one found within it).
    pub budget_exhausted: bool,
    /// Whether a library stopped at its evaluation limit.
    pub library_truncated: bool,
    /// Per sketch family, how many solutions it contributed.
    pub families: BTreeMap<&'static str, u64>,
}

impl Stats {
    /// Adds another search's counters (outputs are searched one by one).
    pub fn absorb(&mut self, other: &Stats) {
        self.stubs += other.stubs;
        self.evaluations += other.evaluations;
        self.steps += other.steps;
        self.backtracks += other.backtracks;
        self.pattern_matched += other.pattern_matched;
        self.direct += other.direct;
        self.solved_algebraically += other.solved_algebraically;
        self.solved_by_coefficients += other.solved_by_coefficients;
        self.work += other.work;
        self.work_at_best = self.work_at_best.max(other.work_at_best);
        self.budget_exhausted |= other.budget_exhausted;
        self.library_truncated |= other.library_truncated;
        for (name, n) in &other.families {
            *self.families.entry(name).or_default() += n;
        }
    }
}

/// Seconds spent, per phase: reported beside [`Stats`], never compared.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timings {
    pub library_s: f64,
    pub search_s: f64,
}

/// The counters one search updates (from rayon workers too).
#[derive(Debug)]
pub struct Counters {
    steps: AtomicU64,
    backtracks: AtomicU64,
    pattern_matched: AtomicU64,
    solved_algebraically: AtomicU64,
    solved_by_coefficients: AtomicU64,
    work_at_best: AtomicU64,
    /// Solutions per sketch family, in the order of the search's families.
    families: Vec<(&'static str, AtomicU64)>,
}

impl Counters {
    /// Counters for a search over these sketch families.
    pub fn new(family_names: impl IntoIterator<Item = &'static str>) -> Counters {
        Counters {
            steps: AtomicU64::new(0),
            backtracks: AtomicU64::new(0),
            pattern_matched: AtomicU64::new(0),
            solved_algebraically: AtomicU64::new(0),
            solved_by_coefficients: AtomicU64::new(0),
            work_at_best: AtomicU64::new(0),
            families: family_names
                .into_iter()
                .map(|n| (n, AtomicU64::new(0)))
                .collect(),
        }
    }

    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// One exploration step (a target visited).
    pub(crate) fn step(&self) {
        Self::bump(&self.steps);
    }

    /// A sketch or hole that led nowhere.
    pub(crate) fn backtrack(&self) {
        Self::bump(&self.backtracks);
    }

    /// A sketch whose holes were filled by pattern matching.
    pub(crate) fn pattern_match(&self) {
        Self::bump(&self.pattern_matched);
    }

    /// A sketch whose hole value the algebra solved.
    pub(crate) fn algebraic_solve(&self) {
        Self::bump(&self.solved_algebraically);
    }

    /// A contraction sketch solved by coefficient extraction.
    pub(crate) fn coefficient_solve(&self) {
        Self::bump(&self.solved_by_coefficients);
    }

    /// The top-level solution improved after `work` units.
    pub(crate) fn improved_at(&self, work: u64) {
        self.work_at_best.fetch_max(work, Ordering::Relaxed);
    }

    /// A solution from the `index`-th sketch family.
    pub(crate) fn family_found(&self, index: usize) {
        if let Some((_, n)) = self.families.get(index) {
            Self::bump(n);
        }
    }

    /// The counters as plain numbers.
    pub fn snapshot(&self) -> Stats {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            steps: load(&self.steps),
            backtracks: load(&self.backtracks),
            pattern_matched: load(&self.pattern_matched),
            solved_algebraically: load(&self.solved_algebraically),
            solved_by_coefficients: load(&self.solved_by_coefficients),
            work_at_best: load(&self.work_at_best),
            families: self
                .families
                .iter()
                .map(|(name, n)| (*name, load(n)))
                .filter(|(_, n)| *n > 0)
                .collect(),
            ..Stats::default()
        }
    }
}
