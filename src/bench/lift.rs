//! Lifting one kernel in a child `tenslift lift --json` process, killed when
//! its deadline passes: the in-process search deadline is checked between
//! search steps, so a single long step (a large spec, a Z3 call) could
//! otherwise overrun it, and a crash in one kernel must not end the run.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::manifest::CFlags;

/// `tenslift lift`'s exit code for a parse or lift past `--timeout`
/// (`cli::EXIT_TIMEOUT`).
const LIFT_EXIT_TIMEOUT: i32 = 7;

/// Extra seconds past `--timeout` before the child is killed: the search
/// deadline is the child's own, this only catches a child that ignores it.
pub const KILL_GRACE_S: f64 = 10.0;

/// Outcome of lifting one kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct LiftOutcome {
    /// lifted, partial, failed, rejected, timeout or error.
    pub status: String,
    /// Wall time of the child process.
    pub time_s: f64,
    /// The TensIR program text when lifted.
    pub program: Option<String>,
    pub cost: Option<f64>,
    /// Search statistics as the lift command reports them (JSON object).
    pub stats: Option<Value>,
    pub message: String,
}

/// Lifts `function` of `file` with the `tenslift` executable `binary`, the
/// C read with `flags` (include directories and macro definitions).
pub fn lift_in_child(
    binary: &Path,
    file: &Path,
    function: &str,
    flags: &CFlags,
    timeout_s: f64,
    workdir: &Path,
) -> LiftOutcome {
    let start = Instant::now();
    let child = Command::new(binary)
        .arg("lift")
        .arg(file)
        .args(["--function", function, "--target", "numpy", "--json"])
        .args(flags.args())
        .arg("--timeout")
        .arg(format!("{timeout_s}"))
        .current_dir(workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return failure(
                "error",
                0.0,
                format!("cannot start {}: {e}", binary.display()),
            )
        }
    };
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let deadline = Duration::from_secs_f64(timeout_s + KILL_GRACE_S);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let time_s = start.elapsed().as_secs_f64();
    let out = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
    let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
    if status.is_none() {
        return failure("timeout", time_s, format!("killed after {time_s:.1} s"));
    }
    let record = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["function"] == function || v["status"] == "rejected");
    match record {
        Some(r) => LiftOutcome {
            status: r["status"].as_str().unwrap_or("failed").to_string(),
            time_s,
            program: r["program"].as_str().map(str::to_string),
            cost: r["cost"].as_f64(),
            stats: r.get("stats").filter(|s| s.is_object()).cloned(),
            message: first_line(r["message"].as_str().unwrap_or("")),
        },
        None => {
            let code = status.and_then(|s| s.code());
            // The parse or the lift ran past the child's own time limit
            // (`tenslift lift`'s exit code 7; bench does not import the CLI).
            if code == Some(LIFT_EXIT_TIMEOUT) {
                return failure("timeout", time_s, first_line(&err));
            }
            failure(
                "error",
                time_s,
                format!("exit {code:?}: {}", first_line(&err)),
            )
        }
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

fn failure(status: &str, time_s: f64, message: String) -> LiftOutcome {
    LiftOutcome {
        status: status.to_string(),
        time_s,
        program: None,
        cost: None,
        stats: None,
        message,
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.chars().take(200).collect()
}
