//! The backstop behind `--timeout`: the search stops itself at its
//! deadline, but a stage that does not look at the clock (a sketch working
//! through a spec of 65 536-term sums) would run on. A watchdog thread ends
//! the process with [`EXIT_TIMEOUT`] and a message when the armed deadline
//! passes; output files are written only after every kernel, so nothing
//! partial is left behind.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::{print_err, EXIT_TIMEOUT};

/// What is being watched and until when.
type Armed = Option<(Instant, String)>;

/// A deadline that ends the process when it passes.
pub struct Watchdog {
    state: Arc<(Mutex<Armed>, Condvar)>,
}

impl Watchdog {
    /// Starts the watching thread, disarmed.
    pub fn start() -> Watchdog {
        let state: Arc<(Mutex<Armed>, Condvar)> = Arc::default();
        let watched = Arc::clone(&state);
        // Without the thread nothing is watched; the cooperative deadlines
        // still hold, so a failed spawn is not an error.
        let _ = std::thread::Builder::new()
            .name("tenslift-watchdog".into())
            .spawn(move || watch(&watched));
        Watchdog { state }
    }

    /// Ends the process if `what` still runs `after` from now.
    pub fn arm(&self, after: Duration, what: String) {
        let (lock, wake) = &*self.state;
        if let Ok(mut armed) = lock.lock() {
            *armed = Some((Instant::now() + after, what));
            wake.notify_all();
        }
    }

    pub fn disarm(&self) {
        let (lock, wake) = &*self.state;
        if let Ok(mut armed) = lock.lock() {
            *armed = None;
            wake.notify_all();
        }
    }
}

fn watch(state: &(Mutex<Armed>, Condvar)) {
    let (lock, wake) = state;
    let Ok(mut armed) = lock.lock() else {
        return;
    };
    loop {
        let wait = match &*armed {
            None => Duration::from_secs(3600),
            Some((deadline, what)) => match deadline.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left,
                _ => {
                    print_err(&format!(
                        "error: {what} ran past --timeout and was stopped; nothing was written\n"
                    ));
                    std::process::exit(EXIT_TIMEOUT);
                }
            },
        };
        armed = match wake.wait_timeout(armed, wait) {
            Ok((guard, _)) => guard,
            Err(_) => return,
        };
    }
}

/// How long past its own `--timeout` a kernel's lift may run (checking the
/// program at both sizes and emitting it come after the search's deadline)
/// before the watchdog stops it: a tenth of the timeout and 5 s, so a user's
/// `--timeout 60` ends by 71 s whatever stage ignores the clock (it was 100 s,
/// and a 64x64 constant-size kernel's library ran 87 s).
pub fn grace(timeout: Duration) -> Duration {
    Duration::from_secs(5) + timeout / 10
}
