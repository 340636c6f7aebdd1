//! The plan handed to scripts/bench_runner.py and the call that runs it.
//! The runner measures one process at a time, so this is strictly
//! sequential however many lifting jobs ran before.

use std::path::Path;
use std::process::{Command, Stdio};

use serde::Serialize;

use super::{write_text, BenchError};

/// One kernel to time. Paths are relative to the plan's directory (or absolute).
#[derive(Clone, Debug, Serialize)]
pub struct PlanKernel {
    pub name: String,
    pub suite: String,
    /// Directory with call.json and the generated modules.
    pub dir: String,
    pub inputs: String,
    pub reference: String,
    pub c_outputs: String,
    pub outputs: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// The manifest the kernels come from (scripts/cref.py reads their
    /// parameters there): benchmarks/manifest.toml or a generated one.
    pub manifest: String,
    pub dataset: String,
    pub repeat: u32,
    pub timeout_s: f64,
    /// C variants and lifted variants, in the order they run.
    pub variants: Vec<String>,
    /// Delete inputs and C outputs of a kernel once it is measured.
    pub cleanup: bool,
    pub kernels: Vec<PlanKernel>,
}

impl Plan {
    pub fn write(&self, path: &Path) -> Result<(), BenchError> {
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| BenchError::Runner(format!("cannot encode the plan: {e}")))?;
        write_text(path, &(text + "\n"))
    }
}

/// What the runner should skip and where it sends its progress.
pub struct RunnerCall<'a> {
    pub python: &'a Path,
    pub script: &'a Path,
    pub plan: &'a Path,
    pub csv: &'a Path,
    pub skip_c: bool,
    pub skip_python: bool,
    pub device: &'a str,
    /// Progress lines go here; `None` passes them to the terminal.
    pub log: Option<&'a Path>,
}

/// Runs the runner to completion; its rows are in `csv` afterwards.
pub fn run_runner(call: &RunnerCall) -> Result<(), BenchError> {
    let mut command = Command::new(call.python);
    command
        .arg(call.script)
        .arg("run")
        .arg("--plan")
        .arg(call.plan)
        .arg("--csv")
        .arg(call.csv)
        .args(["--device", call.device])
        .stdin(Stdio::null());
    if call.skip_c {
        command.arg("--skip-c");
    }
    if call.skip_python {
        command.arg("--skip-python");
    }
    match call.log {
        Some(log) => {
            let file = std::fs::File::create(log).map_err(BenchError::io(log))?;
            command.stderr(file).stdout(Stdio::null());
        }
        None => {
            command.stdout(Stdio::null());
        }
    }
    let status = command
        .status()
        .map_err(|e| BenchError::Runner(format!("cannot start {}: {e}", call.python.display())))?;
    if !status.success() {
        return Err(BenchError::Runner(format!(
            "{} {} exited with {status}",
            call.python.display(),
            call.script.display()
        )));
    }
    Ok(())
}
