//! Runs generated code for real: writes modules and `.npy` inputs into a
//! work directory and runs all cases of one target in one Python process
//! (importing JAX or PyTorch costs seconds), then reads the outputs back.
//!
//! The interpreter is `$TENSLIFT_PYTHON` if set, else
//! `<workspace root>/.venv/bin/python`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::emit::{emit, EmitError, EmitOptions, Target};
use crate::interp::{Array, Outcome};
use crate::npy::{self, NpyError};
use crate::program::{ParamKind, Program};

/// The batch runner script (also at `targets/runner/run_cases.py`).
pub const RUNNER_SCRIPT: &str = include_str!("../runner/run_cases.py");

/// The Python interpreter to use: `$TENSLIFT_PYTHON`, else the workspace's
/// virtual environment.
pub fn python_interpreter(workspace_root: &Path) -> PathBuf {
    match std::env::var_os("TENSLIFT_PYTHON") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => workspace_root.join(".venv").join("bin").join("python"),
    }
}

/// One program run on one set of inputs.
pub struct Case<'a> {
    /// Unique among the batch; letters, digits and `_` only.
    pub id: String,
    pub program: &'a Program,
    pub sizes: BTreeMap<String, i64>,
    /// Non-size arguments by parameter name (scalars as rank-0 arrays).
    pub args: HashMap<String, Array>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("cannot prepare case `{id}`: {source}")]
    Emit { id: String, source: EmitError },
    #[error(transparent)]
    Npy(#[from] NpyError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("the Python runner failed ({python}): {stderr}")]
    Python { python: String, stderr: String },
    #[error("malformed runner results: {0}")]
    Results(String),
    /// The batch ran past its time limit and was killed (with every process
    /// it started: XLA and Inductor compile in workers).
    #[error("the Python runner did not finish within {} s and was killed", limit.as_secs_f64())]
    TimedOut { limit: Duration },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunnerError {
    let what = what.into();
    move |source| RunnerError::Io { what, source }
}

/// Runs every case with `target` in one Python process. Per case the result
/// is the outcome, or the Python error text.
pub fn run_batch(
    python: &Path,
    target: Target,
    cases: &[Case],
    workdir: &Path,
) -> Result<Vec<Result<Outcome, String>>, RunnerError> {
    run_batch_entry(python, target, cases, workdir, Entry::Plain)
}

/// Which generated entry point the Python runner calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `f` (for JAX: the write-back wrapper around `f_jit`).
    Plain,
    /// PyTorch's `f_compiled` (`torch.compile`).
    TorchCompiled,
}

/// [`run_batch`] with a choice of entry point.
pub fn run_batch_entry(
    python: &Path,
    target: Target,
    cases: &[Case],
    workdir: &Path,
    entry: Entry,
) -> Result<Vec<Result<Outcome, String>>, RunnerError> {
    run_batch_within(python, target, cases, workdir, entry, None)
}

/// [`run_batch_entry`] killed after `limit` (none: no limit). A generated
/// module can take unboundedly long to compile (an unrolled StableHLO
/// module, a Dynamo trace of a long Python loop); the limit turns that into
/// [`RunnerError::TimedOut`], which callers report as undecided.
pub fn run_batch_within(
    python: &Path,
    target: Target,
    cases: &[Case],
    workdir: &Path,
    entry: Entry,
    limit: Option<Duration>,
) -> Result<Vec<Result<Outcome, String>>, RunnerError> {
    let mut manifest_cases = Vec::new();
    for case in cases {
        let dir = workdir.join(&case.id);
        let out_dir = dir.join("out");
        std::fs::create_dir_all(&out_dir).map_err(io(format!("creating {}", out_dir.display())))?;
        let opts = EmitOptions {
            sizes: case.sizes.clone(),
        };
        let code = emit(case.program, target, &opts).map_err(|source| RunnerError::Emit {
            id: case.id.clone(),
            source,
        })?;
        let module = dir.join(format!(
            "{}_{}.{}",
            case.id,
            target.name(),
            target.extension()
        ));
        std::fs::write(&module, code).map_err(io(format!("writing {}", module.display())))?;
        let mut args = Vec::new();
        let mut results = Vec::new();
        for p in &case.program.params {
            let name = p.name.to_string();
            let written = p.access().is_some_and(|a| a.is_written());
            if p.kind == ParamKind::Size {
                let v = case.sizes.get(&name).copied().unwrap_or(0);
                args.push(serde_json::json!({"kind": "size", "name": name, "value": v}));
                continue;
            }
            let value = case.args.get(&name).ok_or_else(|| {
                RunnerError::Results(format!("case `{}` lacks argument `{name}`", case.id))
            })?;
            let path = dir.join(format!("in_{name}.npy"));
            npy::write(&path, value)?;
            let kind = if matches!(p.kind, ParamKind::Scalar(_)) {
                "scalar"
            } else {
                "array"
            };
            args.push(serde_json::json!({
                "kind": kind, "name": name, "npy": path.display().to_string(), "written": written
            }));
            if written {
                results.push(name);
            }
        }
        if case.program.ret.is_some() {
            results.push("__return__".to_string());
        }
        manifest_cases.push(serde_json::json!({
            "id": case.id,
            "module": module.display().to_string(),
            "function": match entry {
                Entry::Plain => python_function_name(case.program),
                Entry::TorchCompiled => format!("{}_compiled", python_function_name(case.program)),
            },
            "args": args,
            "results": results,
            "out_dir": out_dir.display().to_string(),
        }));
    }
    let manifest = serde_json::json!({"target": target.name(), "cases": manifest_cases});
    let manifest_path = workdir.join(format!("manifest_{}.json", target.name()));
    let results_path = workdir.join(format!("results_{}.json", target.name()));
    let script = workdir.join("run_cases.py");
    std::fs::write(&script, RUNNER_SCRIPT).map_err(io("writing the runner script"))?;
    std::fs::write(&manifest_path, manifest.to_string()).map_err(io("writing the manifest"))?;
    let status = run_script(
        python,
        &script,
        &manifest_path,
        &results_path,
        workdir,
        limit,
    )?;
    if !status.success() {
        let stderr = std::fs::read(workdir.join("runner.stderr")).unwrap_or_default();
        return Err(RunnerError::Python {
            python: python.display().to_string(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
        });
    }
    let text = std::fs::read_to_string(&results_path).map_err(io("reading runner results"))?;
    let status: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| RunnerError::Results(e.to_string()))?;
    let mut out = Vec::new();
    for case in cases {
        let entry = &status[&case.id];
        if entry["ok"] != serde_json::Value::Bool(true) {
            out.push(Err(entry["error"]
                .as_str()
                .unwrap_or("no result")
                .to_string()));
            continue;
        }
        let out_dir = workdir.join(&case.id).join("out");
        let mut arrays = BTreeMap::new();
        for p in &case.program.params {
            if p.access().is_some_and(|a| a.is_written()) {
                arrays.insert(
                    p.name.to_string(),
                    npy::read(&out_dir.join(format!("{}.npy", p.name)))?,
                );
            }
        }
        let returned = match case.program.ret {
            Some(_) => Some(npy::read(&out_dir.join("__return__.npy"))?),
            None => None,
        };
        out.push(Ok(Outcome { arrays, returned }));
    }
    Ok(out)
}

/// Runs the runner script, its output in files of `workdir` (no pipe to
/// drain while waiting), killed with its process group when `limit`
/// passes.
fn run_script(
    python: &Path,
    script: &Path,
    manifest: &Path,
    results: &Path,
    workdir: &Path,
    limit: Option<Duration>,
) -> Result<ExitStatus, RunnerError> {
    let file = |name: &str| {
        std::fs::File::create(workdir.join(name)).map_err(io(format!("creating {name}")))
    };
    let mut command = Command::new(python);
    command
        .arg(script)
        .arg(manifest)
        .arg(results)
        .stdin(Stdio::null())
        .stdout(file("runner.stdout")?)
        .stderr(file("runner.stderr")?);
    if limit.is_some() {
        // Its own group, to kill the compile workers with it; without a
        // limit the child stays in ours and gets the user's Ctrl-C.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    let mut child = command
        .spawn()
        .map_err(io(format!("running {}", python.display())))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => {}
            Err(e) => return Err(io("waiting for the Python runner")(e)),
        }
        if let Some(limit) = limit.filter(|l| start.elapsed() > *l) {
            kill_group(&mut child);
            return Err(RunnerError::TimedOut { limit });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills `child` and the process group it leads, then reaps it.
fn kill_group(child: &mut Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: `kill` takes plain integers; the group id is the child's
        // pid (`process_group(0)`), and the child is not reaped yet, so the
        // id names no other group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The name the Python emitters give the program's entry function.
pub fn python_function_name(p: &Program) -> String {
    crate::emit::NameMap::for_program(p, &[]).get(&p.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// An "interpreter" that starts a grandchild and never finishes: the
    /// limit must end both, and be reported as a time-out.
    #[test]
    fn a_batch_past_its_limit_is_killed_with_its_workers() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let pid_file = dir.path().join("worker.pid");
        let fake = dir.path().join("python");
        let script = format!(
            "#!/bin/sh\nsleep 600 &\necho $! > {}\nwait\n",
            pid_file.display()
        );
        std::fs::write(&fake, script).expect("writing the fake interpreter");
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755))
            .expect("making it executable");
        let program = crate::parse_program(
            "f.tensir",
            "func f(n: size, x: f64[n], out: out f64[n]) {\n  out = x;\n}\n",
        )
        .expect("program");
        let array = Array::from_f64(crate::DType::F64, vec![2], vec![1.0, 2.0]);
        let case = Case {
            id: "c0".into(),
            program: &program,
            sizes: BTreeMap::from([("n".to_string(), 2)]),
            args: HashMap::from([("x".to_string(), array.clone()), ("out".to_string(), array)]),
        };
        let start = Instant::now();
        let limit = Duration::from_millis(500);
        let result = run_batch_within(
            &fake,
            Target::Numpy,
            &[case],
            dir.path(),
            Entry::Plain,
            Some(limit),
        );
        assert!(
            matches!(result, Err(RunnerError::TimedOut { .. })),
            "{:?}",
            result.err()
        );
        assert!(start.elapsed() < Duration::from_secs(30));
        let worker = std::fs::read_to_string(&pid_file).expect("the worker started");
        let worker = worker.trim();
        // SIGKILL is delivered asynchronously, and a killed worker lingers
        // as a zombie until init reaps it.
        let gone = || {
            std::fs::read_to_string(format!("/proc/{worker}/stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true)
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !gone() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(gone(), "the worker {worker} survived its group's kill");
    }
}
