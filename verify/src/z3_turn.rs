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

/// What one check of an SMT-LIB query said.
pub(crate) struct TextVerdict {
    pub result: SatResult,
    /// The model (when satisfiable).
    pub model: Option<String>,
    /// Why Z3 gave up (when unknown).
    pub reason: Option<String>,
}

/// Checks the SMT-LIB `query` (declarations and assertions) within
/// `rlimit` resource units, in a `z3` child process killed once `wall`
/// has passed: Z3 4.8.12 ignores `Z3_interrupt` in some nonlinear
/// searches (a gemver condition ran 7 minutes past its interrupt), and
/// only a process can be stopped for sure. Without a `z3` executable the
/// query is parsed into a fresh context of this process instead.
pub(crate) fn check_text(query: &str, rlimit: u32, wall: Duration) -> TextVerdict {
    match check_in_child(query, rlimit, wall) {
        Some(v) => v,
        None => check_in_fresh_context(query, rlimit, wall),
    }
}

fn check_in_child(query: &str, rlimit: u32, wall: Duration) -> Option<TextVerdict> {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new("z3")
        .args(["-in", "-smt2", &format!("rlimit={rlimit}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let input = format!("{query}\n(check-sat)\n(get-info :reason-unknown)\n(get-model)\n(exit)\n");
    let mut stdin = child.stdin.take()?;
    let writer = std::thread::spawn(move || {
        // A child killed early closes the pipe; the error changes nothing.
        let _ = stdin.write_all(input.as_bytes());
    });
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = stdout.read_to_string(&mut out);
        out
    });
    let started = std::time::Instant::now();
    let killed = loop {
        match child.try_wait() {
            Ok(Some(_)) => break false,
            Ok(None) if started.elapsed() > wall => {
                let _ = child.kill();
                let _ = child.wait();
                break true;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return None,
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    if killed {
        return Some(TextVerdict {
            result: SatResult::Unknown,
            model: None,
            reason: Some("canceled (the wall-clock back-stop)".to_string()),
        });
    }
    Some(parse_answer(&out))
}

/// Reads `z3`'s answers to `(check-sat)`, `(get-info :reason-unknown)`
/// and `(get-model)`.
fn parse_answer(out: &str) -> TextVerdict {
    let mut lines = out.lines();
    let result = match lines.next().map(str::trim) {
        Some("unsat") => SatResult::Unsat,
        Some("sat") => SatResult::Sat,
        _ => SatResult::Unknown,
    };
    let rest: Vec<&str> = lines.collect();
    let reason = rest
        .first()
        .and_then(|l| l.split_once('"'))
        .map(|(_, r)| r.trim_end_matches(")").trim_end_matches('"').to_string())
        .filter(|r| !r.is_empty());
    let model = (result == SatResult::Sat).then(|| rest.get(1..).unwrap_or(&[]).join("\n"));
    TextVerdict {
        result,
        model,
        reason: if result == SatResult::Unknown {
            reason.or_else(|| Some("no answer from z3".to_string()))
        } else {
            None
        },
    }
}

fn check_in_fresh_context(query: &str, rlimit: u32, wall: Duration) -> TextVerdict {
    let query = query.to_string();
    z3::with_z3_config(&z3::Config::new(), move || {
        let solver = Solver::new();
        let mut params = z3::Params::new();
        params.set_u32("rlimit", rlimit);
        solver.set_params(&params);
        solver.from_string(query);
        let result = check_within(&solver, wall);
        TextVerdict {
            result,
            model: (result == SatResult::Sat)
                .then(|| solver.get_model().map(|m| m.to_string()))
                .flatten(),
            reason: (result == SatResult::Unknown)
                .then(|| solver.get_reason_unknown())
                .flatten(),
        }
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
    fn a_query_text_is_decided_in_a_child_and_a_hard_one_is_stopped() {
        let sat = check_text(
            "(declare-fun x () Int)\n(assert (> x 2))",
            100_000,
            Duration::from_secs(20),
        );
        assert_eq!(sat.result, SatResult::Sat);
        assert!(sat.model.unwrap_or_default().contains("define-fun x"));
        let unsat = check_text(
            "(declare-fun x () Int)\n(assert (> x 2))\n(assert (< x 2))",
            100_000,
            Duration::from_secs(20),
        );
        assert_eq!(unsat.result, SatResult::Unsat);
        // x³ + y³ = z³ in positive integers: undecided, stopped.
        let hard = "(declare-fun x () Int)(declare-fun y () Int)(declare-fun z () Int)\n\
                    (assert (and (>= x 1) (>= y 1) (>= z 1)))\n\
                    (assert (= (+ (* x x x) (* y y y)) (* z z z)))";
        let started = std::time::Instant::now();
        let v = check_text(hard, u32::MAX, Duration::from_millis(500));
        assert_eq!(v.result, SatResult::Unknown);
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(v.reason.is_some());
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
