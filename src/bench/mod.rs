//! The batch benchmark harness behind `tenslift bench`.
//!
//! A run lifts every selected manifest kernel in parallel (each lift in a
//! child `tenslift lift --json` process that is killed when its timeout
//! passes), writes `lift.csv`, emits each lifted program for every target,
//! and hands a plan to `scripts/bench_runner.py`, which times the C
//! baselines and the lifted modules one after another into `runtime.csv`.
//! [`summary`] turns both CSVs into `summary.md` (TENSORIZE Table 2 and
//! Figure 8 style); `scripts/bench_plots.py` draws the figures. Result
//! directories of shards or of an exported CUDA bundle merge with [`merge`].
//!
//! Nothing here prints: progress goes through a callback the CLI renders.

pub mod csv;
pub mod emit;
pub mod lift;
pub mod machine;
pub mod manifest;
pub mod merge;
pub mod roofline;
pub mod run;
pub mod runtime;
pub mod shard;
pub mod stats;
pub mod suite_dir;
pub mod summary;

use std::path::PathBuf;

/// Everything that can stop a benchmark run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Manifest { path: PathBuf, message: String },
    #[error("{0}")]
    Usage(String),
    #[error("{path}: malformed CSV: {message}")]
    Csv { path: PathBuf, message: String },
    #[error("the runtime runner failed: {0}")]
    Runner(String),
}

impl BenchError {
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BenchError {
        let path = path.into();
        move |source| BenchError::Io { path, source }
    }
}

/// Reads a whole file, naming it in the error.
pub fn read_text(path: &std::path::Path) -> Result<String, BenchError> {
    std::fs::read_to_string(path).map_err(BenchError::io(path))
}

/// Writes a whole file through a temporary sibling so that a failure leaves
/// no half-written result.
pub fn write_text(path: &std::path::Path, text: &str) -> Result<(), BenchError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(BenchError::io(dir))?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".to_string());
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let result = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(BenchError::io(path))
}
