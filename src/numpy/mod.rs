//! NumPy programs as input (`tenslift optimize`, STENSO's setting): a
//! straight-line NumPy function becomes a loop-IR kernel, so the spec, the
//! cost-guided search and every verifier run on it exactly as on C.
//!
//! ```text
//! prog.py ──pyast.py (Python's own `ast`, in the venv)──▶ syntax (JSON)
//!         ──eval──▶ npir (typed, shaped NumPy operations; NP0xx refusals)
//!         ──loops──▶ loop IR Kernel ──synth::lift_kernel──▶ TensIR
//!         └─tensir──▶ the input as TensIR (cost before; kept when cheaper)
//! ```
//!
//! Shapes and dtypes come from a `# tenslift: A: f64[n, k]` comment above
//! the `def` or `--shapes A=n,k` ([`signature`]). The grammar accepted and
//! the semantics assumed are in `src/numpy/README.md`; every refusal is a
//! located diagnostic ([`diagnostics`]).
//!
//! Architecture invariant: the program is only read (by Python's parser),
//! never run, except by [`reference`], the differential check's reference.

pub mod args;
pub mod calls;
pub mod contract;
pub mod diagnostics;
pub mod eval;
pub mod index;
pub mod ir;
pub mod kernel;
pub mod loops;
pub mod optimize;
pub mod reference;
pub mod signature;
pub mod syntax;
pub mod tensir;
pub mod wrapper;

use std::path::Path;

use tenslift_frontend::diagnostics::Diagnostics;

pub use kernel::Lowered;
use signature::ParamType;

/// Why a file gave no kernels.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Python(#[from] syntax::DumpError),
    /// Located refusals (render them with `Diagnostics::render`).
    #[error("{}", .0.render())]
    Rejected(Diagnostics),
}

/// Reads `path` with `python`'s `ast` and lowers the functions named in
/// `functions` (every top-level function when empty). Every function's
/// refusals are collected before giving up.
pub fn read(
    path: &Path,
    python: &Path,
    functions: &[String],
    overrides: &[(String, ParamType)],
) -> Result<Vec<Lowered>, ReadError> {
    let file = path.display().to_string();
    let source = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: file.clone(),
        source,
    })?;
    let dump = syntax::dump(python, path)?;
    let reject = |items| ReadError::Rejected(diagnostics::of_file(&file, items));
    if !dump.ok {
        let e = dump.error.unwrap_or(syntax::SyntaxError {
            line: 1,
            col: 1,
            message: "invalid Python".to_string(),
        });
        let loc = tenslift_frontend::ir::Loc {
            file: file.clone(),
            line: e.line,
            col: e.col,
        };
        return Err(reject(vec![diagnostics::error(
            diagnostics::PYTHON_SYNTAX,
            loc,
            e.message,
        )]));
    }
    if let Some(missing) = functions
        .iter()
        .find(|w| !dump.functions.iter().any(|f| &&f.name == w))
    {
        let message = format!("no top-level function `{missing}` in the file");
        return Err(reject(vec![diagnostics::file_error(
            diagnostics::NO_FUNCTION,
            message,
        )]));
    }
    let chosen: Vec<&syntax::Function> = dump
        .functions
        .iter()
        .filter(|f| functions.is_empty() || functions.contains(&f.name))
        .collect();
    if chosen.is_empty() {
        let message = "the file defines no top-level function";
        return Err(reject(vec![diagnostics::file_error(
            diagnostics::NO_FUNCTION,
            message,
        )]));
    }
    let cx = kernel::Context {
        file: &file,
        source: &source,
        numpy_names: numpy_names(&dump),
        overrides,
    };
    let mut lowered = Vec::new();
    let mut problems = Vec::new();
    for f in chosen {
        match kernel::lower(f, &cx) {
            Ok(l) => lowered.push(l),
            Err(items) => problems.extend(items),
        }
    }
    if problems.is_empty() {
        Ok(lowered)
    } else {
        Err(reject(problems))
    }
}

/// The names the file imports numpy as (`np` when it imports nothing).
fn numpy_names(dump: &syntax::Dump) -> Vec<String> {
    let names: Vec<String> = dump
        .imports
        .iter()
        .filter(|(_, module)| module.as_str() == "numpy")
        .map(|(alias, _)| alias.clone())
        .collect();
    if names.is_empty() {
        vec!["np".to_string()]
    } else {
        names
    }
}
