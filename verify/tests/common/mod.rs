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
/// A file of the benchmark manifest is read as the sweeps read it: with
/// its entry's include folders and, in the distributed form, the MINI
/// dataset's macros.
pub fn kernel(file: &str, function: &str) -> Kernel {
    let path = crate_dir().join("..").join(file);
    let (include_dirs, defines) = manifest_flags(file);
    let options = Options {
        functions: vec![function.to_string()],
        include_dirs,
        defines,
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

/// The include folders and macros the manifest gives `file` (relative to
/// the workspace root): none for a file it does not list.
fn manifest_flags(file: &str) -> (Vec<PathBuf>, Vec<String>) {
    let root = crate_dir().join("..");
    let Ok(text) = std::fs::read_to_string(root.join("benchmarks/manifest.toml")) else {
        return (Vec::new(), Vec::new());
    };
    let Ok(manifest) = text.parse::<toml::Table>() else {
        return (Vec::new(), Vec::new());
    };
    let relative = file.strip_prefix("benchmarks/").unwrap_or(file);
    let entry = manifest
        .get("kernel")
        .and_then(|k| k.as_array())
        .and_then(|ks| {
            ks.iter()
                .find(|k| k.get("file").and_then(|f| f.as_str()) == Some(relative))
        });
    let Some(entry) = entry else {
        return (Vec::new(), Vec::new());
    };
    let includes = entry
        .get("include")
        .and_then(|i| i.as_array())
        .map(|dirs| {
            dirs.iter()
                .filter_map(|d| d.as_str())
                .map(|d| root.join("benchmarks").join(d))
                .collect()
        })
        .unwrap_or_default();
    let defines = match entry.get("form").and_then(|f| f.as_str()) {
        Some("distributed") => vec!["MINI_DATASET".to_string()],
        _ => Vec::new(),
    };
    (includes, defines)
}
