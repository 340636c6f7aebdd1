//! Search limits counted in work, so that the same input gives the same
//! program on an idle and on a loaded machine.
//!
//! Every limit of the synthesizer is a number of units of work ([`Limits`]):
//! candidate expressions a library evaluates, hole values the search
//! computes, targets it visits. A [`Meter`] counts one search's work
//! against its limit; when the count passes the limit the search stops with
//! [`Halt::Budget`] and (in best mode) keeps the cheapest program found so
//! far, which is the same program on every machine because the work done
//! before the stop does not depend on timing. The meter is charged only from
//! one thread at a time in an order fixed by the search (parallel maps
//! charge their total after they join), so the count itself is
//! deterministic.
//!
//! The user's `--timeout` is not a search limit: it is an outer safety net.
//! A meter also carries that deadline; passing it stops the search with
//! [`Halt::Deadline`], which the driver reports as a timeout (exit 7) and
//! never turns into a program. The corpus never reaches it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use serde::Serialize;

/// Why a search stopped before exhausting its space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Halt {
    /// Its work limit was reached (deterministic).
    Budget,
    /// The user's `--timeout` passed (an outer safety net, not a limit).
    Deadline,
}

/// The work limits of one lift; see the module documentation. Each is a
/// count of units of work, never seconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Candidate expressions one library may evaluate.
    pub library_evaluations: u64,
    /// Work one output's top-down search may do: each target visited and
    /// each hole value computed counts one.
    pub search_work: u64,
    /// The same for a search over stored intermediates' moments, which is
    /// tried only after the plain search failed and must not hold up the
    /// kept-loops fallback.
    pub moment_search_work: u64,
    /// Work of the search for one statement when loops are kept.
    pub statement_work: u64,
    /// Rejected candidates replaced by the next one before giving up.
    pub generalisation_retries: usize,
}

/// The defaults, calibrated on the corpus with `scripts/work_profile.py`
/// (2026-11-26): at ten times these limits no corpus kernel's program
/// changes; the largest single search (darknet's GEMMs) finds its program
/// after 46 000 units and exhausts its space after 115 000, a library
/// evaluates at most 45 000 candidates; at about 25 000 units a second
/// on this 2-core machine, a search stops within 10 s.
impl Default for Limits {
    fn default() -> Limits {
        Limits {
            library_evaluations: 100_000,
            search_work: 250_000,
            moment_search_work: 100_000,
            statement_work: 100_000,
            generalisation_retries: 4,
        }
    }
}

impl Limits {
    /// Every work limit multiplied by `factor` (`--effort`), at least one
    /// unit each; the retry count stays.
    pub fn scaled(&self, factor: f64) -> Limits {
        let scale = |n: u64| ((n as f64 * factor).round() as u64).max(1);
        Limits {
            library_evaluations: scale(self.library_evaluations),
            search_work: scale(self.search_work),
            moment_search_work: scale(self.moment_search_work),
            statement_work: scale(self.statement_work),
            generalisation_retries: self.generalisation_retries,
        }
    }
}

/// Elements of an evaluated library value that count one more unit of
/// work, as sixteen terms do in the search (`search::work_of`): measured
/// on a kernel with fixed extents of a thousand elements (the hardening
/// fixture `global_conv1d.c`), a library then spends about as long per
/// unit as a small one. The corpus's values are small: all of its
/// libraries together add a few thousand units, and no program changes.
pub const ELEMENTS_PER_UNIT: u64 = 16;

/// How often (in units of work) a meter looks at the clock for the user's
/// deadline: reading the clock costs more than one unit.
const CLOCK_EVERY: u64 = 256;

/// Counts one search's work against its limit; see the module docs.
#[derive(Debug)]
pub struct Meter {
    used: AtomicU64,
    limit: u64,
    deadline: Instant,
    halted: AtomicBool,
}

impl Meter {
    pub fn new(limit: u64, deadline: Instant) -> Meter {
        Meter {
            used: AtomicU64::new(0),
            limit,
            deadline,
            halted: AtomicBool::new(false),
        }
    }

    /// Counts `units` of work; fails once the limit or the deadline is
    /// passed (and on every later charge).
    pub fn charge(&self, units: u64) -> Result<(), Halt> {
        let before = self.used.fetch_add(units, Ordering::Relaxed);
        let after = before.saturating_add(units);
        if after > self.limit {
            self.halted.store(true, Ordering::Relaxed);
            return Err(Halt::Budget);
        }
        if before / CLOCK_EVERY != after / CLOCK_EVERY && Instant::now() > self.deadline {
            return Err(Halt::Deadline);
        }
        Ok(())
    }

    /// Fails when the limit is already spent or the deadline passed,
    /// without counting anything.
    pub fn check(&self) -> Result<(), Halt> {
        self.charge(0)?;
        if Instant::now() > self.deadline {
            return Err(Halt::Deadline);
        }
        Ok(())
    }

    /// Units of work counted so far (at most the limit plus the last
    /// charge).
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed).min(self.limit)
    }

    /// Whether the limit stopped the search.
    pub fn exhausted(&self) -> bool {
        self.halted.load(Ordering::Relaxed)
    }

    pub fn deadline(&self) -> Instant {
        self.deadline
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    #[test]
    fn a_meter_stops_exactly_past_its_limit_and_stays_stopped() {
        let meter = Meter::new(10, far());
        assert!(meter.charge(4).is_ok());
        assert!(meter.charge(6).is_ok());
        assert_eq!(meter.charge(1), Err(Halt::Budget));
        assert_eq!(meter.check(), Err(Halt::Budget));
        assert!(meter.exhausted());
        assert_eq!(meter.used(), 10);
    }

    #[test]
    fn a_passed_deadline_is_not_a_budget_stop() {
        let meter = Meter::new(u64::MAX, Instant::now());
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(meter.check(), Err(Halt::Deadline));
        assert!(!meter.exhausted());
    }
}
