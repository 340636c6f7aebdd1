//! Runs generated code for real: writes modules and `.npy` inputs into a
//! work directory and runs all cases of one target in one Python process
//! (importing JAX or PyTorch costs seconds), then reads the outputs back.
//!
//! The interpreter is `$TENSLIFT_PYTHON` if set, else
//! `<workspace root>/.venv/bin/python`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

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
    let output = Command::new(python)
        .arg(&script)
        .arg(&manifest_path)
        .arg(&results_path)
        .output()
        .map_err(io(format!("running {}", python.display())))?;
    if !output.status.success() {
        return Err(RunnerError::Python {
            python: python.display().to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
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

/// The name the Python emitters give the program's entry function.
pub fn python_function_name(p: &Program) -> String {
    crate::emit::NameMap::for_program(p, &[]).get(&p.name)
}
