//! The Python syntax tree of a NumPy file, as the interpreter's own `ast`
//! module reads it: `pyast.py` (embedded in the binary) runs in the venv
//! and prints the top-level functions in the small schema below, which
//! serde reads back. Python, not a parser of ours, decides what the file
//! means; constructs outside the schema arrive as `Other` nodes naming
//! their Python class, so the lowering refuses them where they stand.

use std::path::Path;

use std::process::Command;

use serde::Deserialize;

/// The dumper script (`src/numpy/pyast.py`).
pub const PYAST_SCRIPT: &str = include_str!("pyast.py");

/// What the dumper printed for one file.
#[derive(Debug, Deserialize)]
pub struct Dump {
    pub ok: bool,
    #[serde(default)]
    pub error: Option<SyntaxError>,
    #[serde(default)]
    pub functions: Vec<Function>,
    /// `import numpy as np`: alias -> module.
    #[serde(default)]
    pub imports: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
pub struct SyntaxError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

/// A top-level `def`.
#[derive(Debug, Deserialize)]
pub struct Function {
    pub name: String,
    pub line: u32,
    pub col: u32,
    /// The first line of the definition (its first decorator's, if any).
    pub first_line: u32,
    pub end_line: u32,
    pub params: Vec<Parameter>,
    /// Features of the signature the lowering refuses (defaults, `*args`).
    pub unsupported: Vec<String>,
    pub body: Vec<PyStmt>,
}

#[derive(Debug, Deserialize)]
pub struct Parameter {
    pub name: String,
    pub line: u32,
    pub col: u32,
}

/// A statement with its position.
#[derive(Debug, Deserialize)]
pub struct PyStmt {
    pub line: u32,
    pub col: u32,
    #[serde(flatten)]
    pub kind: StmtKind,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "s", rename_all = "lowercase")]
pub enum StmtKind {
    Assign {
        targets: Vec<PyExpr>,
        value: PyExpr,
    },
    AugAssign {
        target: PyExpr,
        op: String,
        value: PyExpr,
    },
    Return {
        value: Option<PyExpr>,
    },
    Expr {
        value: PyExpr,
    },
    Pass,
    Other {
        what: String,
    },
}

/// An expression with its position.
#[derive(Debug, Deserialize)]
pub struct PyExpr {
    pub line: u32,
    pub col: u32,
    #[serde(flatten)]
    pub kind: ExprKind,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "e", rename_all = "lowercase")]
pub enum ExprKind {
    Name {
        id: String,
    },
    Const {
        kind: ConstKind,
        text: String,
    },
    Attr {
        value: Box<PyExpr>,
        attr: String,
    },
    Call {
        func: Box<PyExpr>,
        args: Vec<PyExpr>,
        keywords: Vec<Keyword>,
    },
    BinOp {
        op: String,
        left: Box<PyExpr>,
        right: Box<PyExpr>,
    },
    Unary {
        op: String,
        operand: Box<PyExpr>,
    },
    Compare {
        left: Box<PyExpr>,
        ops: Vec<String>,
        comparators: Vec<PyExpr>,
    },
    Subscript {
        value: Box<PyExpr>,
        index: Box<PyExpr>,
    },
    Slice {
        lower: Option<Box<PyExpr>>,
        upper: Option<Box<PyExpr>>,
        step: Option<Box<PyExpr>>,
    },
    Tuple {
        elts: Vec<PyExpr>,
    },
    List {
        elts: Vec<PyExpr>,
    },
    ListComp {
        elt: Box<PyExpr>,
        generators: Vec<Generator>,
    },
    Other {
        what: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConstKind {
    Int,
    Float,
    Str,
    Bool,
    None,
    Ellipsis,
}

#[derive(Debug, Deserialize)]
pub struct Keyword {
    pub arg: String,
    pub value: PyExpr,
    pub line: u32,
    pub col: u32,
}

#[derive(Debug, Deserialize)]
pub struct Generator {
    pub target: PyExpr,
    pub iter: PyExpr,
    pub ifs: Vec<PyExpr>,
    pub is_async: bool,
}

/// Why the dumper gave no tree.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("cannot run the Python interpreter {python}: {source}")]
    Spawn {
        python: String,
        source: std::io::Error,
    },
    #[error("the Python parser failed ({python}): {stderr}")]
    Failed { python: String, stderr: String },
    #[error("the Python parser printed malformed output: {0}")]
    Malformed(String),
}

/// Runs the dumper on `file` with `python`.
pub fn dump(python: &Path, file: &Path) -> Result<Dump, DumpError> {
    let shown = python.display().to_string();
    let output = Command::new(python)
        .arg("-I")
        .arg("-c")
        .arg(PYAST_SCRIPT)
        .arg(file)
        .output()
        .map_err(|source| DumpError::Spawn {
            python: shown.clone(),
            source,
        })?;
    if !output.status.success() {
        return Err(DumpError::Failed {
            python: shown,
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    serde_json::from_slice(&output.stdout).map_err(|e| DumpError::Malformed(e.to_string()))
}
