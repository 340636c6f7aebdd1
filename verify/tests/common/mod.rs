//! Shared by the integration tests: real kernels from C files, programs
//! from fixtures.

// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use tenslift_frontend::ir::Kernel;
use tenslift_frontend::{extract, Options};
use tenslift_targets::{parse_program, Program};

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Extracts `function` from a C file (relative to the workspace root).
pub fn kernel(file: &str, function: &str) -> Kernel {
    let path = crate_dir().join("..").join(file);
    let options = Options {
        functions: vec![function.to_string()],
        ..Default::default()
    };
    let tu = extract(&path.display().to_string(), &options)
        .unwrap_or_else(|e| panic!("extracting {file}: {e}"));
    tu.kernels
        .into_iter()
        .find(|k| k.name == function)
        .unwrap_or_else(|| panic!("{file} has no kernel {function}"))
}

pub fn program(name: &str) -> Program {
    let path = crate_dir()
        .join("tests/fixtures")
        .join(format!("{name}.tensir"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    parse_program(&path.display().to_string(), &text).unwrap_or_else(|d| panic!("{d}"))
}

pub fn sizes(pairs: &[(&str, i64)]) -> BTreeMap<String, i64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// A program from text (for small variants written inline).
pub fn program_text(text: &str) -> Program {
    parse_program("inline.tensir", text).unwrap_or_else(|d| panic!("{d}"))
}
