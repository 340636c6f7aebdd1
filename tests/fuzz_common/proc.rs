//! Runs the real `tenslift` binary as a child process with a wall-clock
//! limit, so that a panic, a signal or a hang is observed, not suffered, and
//! classifies what happened.

use std::io::Read as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

pub fn tenslift() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tenslift"))
}

pub fn python() -> PathBuf {
    std::env::var_os("TENSLIFT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(ROOT).join(".venv/bin/python"))
}

/// How one run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Exit(i32),
    Signal(i32),
    /// Still running at the limit (then killed).
    Hang,
}

#[derive(Clone, Debug)]
pub struct Run {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
}

/// A defect class: anything but a clean exit code is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Finding {
    Panic,
    Signal,
    Hang,
    PartialOutput,
}

impl Finding {
    pub fn name(self) -> &'static str {
        match self {
            Finding::Panic => "panic",
            Finding::Signal => "signal",
            Finding::Hang => "hang",
            Finding::PartialOutput => "partial-output",
        }
    }
}

/// Runs `tenslift ARGS` with `limit` seconds of wall clock.
pub fn run_tenslift(args: &[&str], limit: Duration) -> Run {
    let mut cmd = Command::new(tenslift());
    cmd.args(args)
        .current_dir(ROOT)
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .env("RUST_BACKTRACE", "0");
    run_limited(cmd, limit)
}

/// Runs `cmd` (stdin closed, stdout and stderr captured on threads so a full
/// pipe cannot stall it) and kills it past `limit`.
pub fn run_limited(mut cmd: Command, limit: Duration) -> Run {
    let start = Instant::now();
    let spawned = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => panic!("cannot start {cmd:?}: {e}"),
    };
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => match (status.code(), status.signal()) {
                (Some(code), _) => break Ending::Exit(code),
                (None, Some(sig)) => break Ending::Signal(sig),
                (None, None) => break Ending::Signal(0),
            },
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break Ending::Hang;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => panic!("waiting for tenslift: {e}"),
        }
    };
    Run {
        ending,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        seconds: start.elapsed().as_secs_f64(),
    }
}

/// The defect a run shows, if any: exit 101 is a Rust panic; a signal or
/// a run past its limit are defects too; a failing run (exit > 0) must not
/// leave `output` behind. Exit 8 (`EXIT_SOME_REFUSED`) is not a failing
/// run: a whole file whose other functions lifted writes those, by
/// design (issue #17), and says which were refused.
pub fn classify(run: &Run, output: Option<&Path>) -> Option<Finding> {
    match run.ending {
        Ending::Exit(101) => Some(Finding::Panic),
        Ending::Signal(_) => Some(Finding::Signal),
        Ending::Hang => Some(Finding::Hang),
        Ending::Exit(0 | 8) => None,
        Ending::Exit(_) if output.is_some_and(|p| p.exists()) => Some(Finding::PartialOutput),
        Ending::Exit(_) => None,
    }
}
