//! How Z3 is run: one check per process at a time, each stopped by our own
//! wall clock.
//!
//! Debian's Z3 4.8.12 arms a solver's `timeout` parameter from one
//! process-wide pool of timer threads that loses wake-ups: in the test
//! suite a condition with a 20 s limit ran for 14 minutes (its timer never
//! fired) while another thread blocked on a mutex inside
//! `Z3_solver_check`. So no check here uses that parameter:
//! [`check_within`] runs the check and calls `Z3_interrupt` from a watchdog
//! thread of its own when the wall clock is spent. Checks are sequential by
//! design (`tenslift verify` runs one kernel after another);
//! [`bounded::check`](crate::bounded::check) and
//! [`unbounded::prove`](crate::unbounded::prove) also take a process-wide
//! turn ([`take`]) so that concurrent callers (the test harness's threads)
//! queue instead of overlapping. The turn is re-entrant on its thread:
//! `prove` calls `check` for a counterexample.

use std::cell::Cell;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use z3::{SatResult, Solver};

static TURN: Mutex<()> = Mutex::new(());

thread_local! {
    static HELD: Cell<bool> = const { Cell::new(false) };
}

/// Held while this thread uses Z3; released on drop.
pub(crate) struct Z3Turn {
    guard: Option<MutexGuard<'static, ()>>,
}

impl Drop for Z3Turn {
    fn drop(&mut self) {
        if self.guard.take().is_some() {
            HELD.with(|h| h.set(false));
        }
    }
}

/// Waits until no other thread uses Z3 (at once when this one already does).
pub(crate) fn take() -> Z3Turn {
    if HELD.with(Cell::get) {
        return Z3Turn { guard: None };
    }
    // A panic in another check poisons nothing this lock protects.
    let guard = TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    HELD.with(|h| h.set(true));
    Z3Turn { guard: Some(guard) }
}

/// `solver.check()`, interrupted once `wall` has passed (the verdict is
/// then `Unknown`, with Z3's reason "canceled").
pub(crate) fn check_within(solver: &Solver, wall: Duration) -> SatResult {
    let handle = solver.get_context().handle();
    // Interrupting after the check returned would cancel the next one.
    let checking = Mutex::new(true);
    let (finished, watch) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let (checking, handle) = (&checking, &handle);
        scope.spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = watch.recv_timeout(wall) {
                let still = checking.lock().unwrap_or_else(|p| p.into_inner());
                if *still {
                    handle.interrupt();
                }
            }
        });
        let verdict = solver.check();
        *checking.lock().unwrap_or_else(|p| p.into_inner()) = false;
        drop(finished);
        verdict
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turn_is_reentrant_on_its_thread_and_exclusive_across_threads() {
        let outer = take();
        let inner = take();
        assert!(outer.guard.is_some() && inner.guard.is_none());
        drop(inner);
        assert!(
            HELD.with(Cell::get),
            "the inner turn does not end the outer one"
        );
        let other = std::thread::spawn(|| TURN.try_lock().is_err());
        assert!(other.join().unwrap_or(false), "another thread must wait");
        drop(outer);
        assert!(!HELD.with(Cell::get));
        assert!(std::thread::spawn(|| TURN.try_lock().is_ok())
            .join()
            .unwrap_or(false));
    }
    /// A query Z3 4.8.12 does not decide in seconds: x³ + y³ = z³ in
    /// positive integers (nonlinear integer arithmetic).
    fn hard_query(solver: &Solver) {
        use z3::ast::Int;
        let [x, y, z] = ["x", "y", "z"].map(Int::new_const);
        let one = Int::from_i64(1);
        for v in [&x, &y, &z] {
            solver.assert(v.ge(&one));
        }
        let cube = |v: &Int| v * v * v;
        solver.assert((cube(&x) + cube(&y)).eq(cube(&z)));
    }

    #[test]
    fn a_check_is_stopped_by_the_wall_clock_and_the_next_one_still_decides() {
        let _turn = take();
        let hard = Solver::new();
        hard_query(&hard);
        let started = std::time::Instant::now();
        let verdict = check_within(&hard, Duration::from_millis(300));
        assert_eq!(verdict, SatResult::Unknown);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
        let easy = Solver::new();
        let x = z3::ast::Int::new_const("x");
        easy.assert(x.gt(z3::ast::Int::from_i64(2)));
        assert_eq!(check_within(&easy, Duration::from_secs(10)), SatResult::Sat);
    }
}
