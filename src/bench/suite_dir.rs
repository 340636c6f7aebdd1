//! `tenslift bench --suite-dir DIR --layout polybench`: a PolyBench/C 4.2
//! tree (`<group>/<name>/<name>.c` + `<name>.h`, `utilities/polybench.h`)
//! benchmarked without a manifest. Every `kernel_*` function found is read
//! the suite's way (`-I DIR/utilities -I <kernel dir> -D<DATASET>_DATASET`);
//! its parameters, their shapes and the dataset's sizes come from the C
//! itself: sizes are the values the header's macros take at the dataset
//! (the size parameter `ni` takes the macro `NI`, PolyBench's convention),
//! arrays are taken at their declared (padded) extents. The result is a
//! manifest written into the run's directory, which the rest of the harness
//! and `scripts/cref.py` (C baselines) read like any other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tenslift_frontend::ir::{Kernel, Origin, ParamKind, Role};
use tenslift_frontend::Options;
use toml::{Table, Value};

use super::{write_text, BenchError};

/// Suite layouts `--layout` accepts.
pub const LAYOUTS: [&str; 1] = ["polybench"];

/// A kernel file of the tree that yields no manifest entry, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    pub file: PathBuf,
    pub reason: String,
}

/// The kernel files of a PolyBench-layout tree: `<...>/<name>/<name>.c`
/// outside `utilities/`, sorted.
pub fn kernel_files(dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(current) = pending.pop() {
        let entries = std::fs::read_dir(&current).map_err(BenchError::io(&current))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "utilities") {
                    pending.push(path);
                }
            } else if is_kernel_file(&path) {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn is_kernel_file(path: &Path) -> bool {
    let stem = path.file_stem().and_then(|s| s.to_str());
    let parent = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|s| s.to_str());
    path.extension().is_some_and(|e| e == "c") && stem.is_some() && stem == parent
}

/// Names of the functions `kernel_*` the file defines (a definition starts
/// a line, possibly after `static` and the return type).
pub fn kernel_functions(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in source.lines() {
        let trimmed = line.trim_start();
        let Some(start) = trimmed.find("kernel_") else {
            continue;
        };
        let head = &trimmed[..start];
        let declares = head
            .split_whitespace()
            .all(|w| matches!(w, "static" | "void" | "inline" | "int" | "double" | "float"));
        let name: String = trimmed[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let rest = trimmed[start + name.len()..].trim_start();
        if declares && rest.starts_with('(') && !trimmed.ends_with(';') && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The flags a kernel file of the tree is read and compiled with.
pub fn flags_for(dir: &Path, file: &Path, dataset: &str) -> (Vec<PathBuf>, Vec<String>) {
    let mut includes = vec![dir.join("utilities")];
    if let Some(parent) = file.parent() {
        includes.push(parent.to_path_buf());
    }
    (
        includes,
        vec![format!("{}_DATASET", dataset.to_uppercase())],
    )
}

/// Integer-valued object-like macros of `file` as gcc's preprocessor sees
/// them with `includes` and `defines` (the header's sizes at the dataset).
pub fn macro_values(
    file: &Path,
    includes: &[PathBuf],
    defines: &[String],
) -> Result<BTreeMap<String, i64>, String> {
    let output = Command::new("gcc")
        .arg("-E")
        .arg("-dM")
        .args(includes.iter().map(|d| format!("-I{}", d.display())))
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run gcc -E: {e}"))?;
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "gcc -E failed: {}",
            err.lines().next().unwrap_or("")
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut values = BTreeMap::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ' ');
        if let (Some("#define"), Some(name), Some(value)) =
            (parts.next(), parts.next(), parts.next())
        {
            if let Ok(v) = value
                .trim()
                .trim_matches(|c| c == '(' || c == ')')
                .parse::<i64>()
            {
                values.insert(name.to_string(), v);
            }
        }
    }
    Ok(values)
}

/// One manifest entry for `kernel`, or why there is none.
fn entry_for(
    kernel: &Kernel,
    name: &str,
    suite: &str,
    file: &Path,
    dataset: &str,
    macros: &BTreeMap<String, i64>,
    include: &[PathBuf],
) -> Result<Table, String> {
    let mut params = Vec::new();
    let mut sizes = Table::new();
    let mut outputs = Vec::new();
    let mut dtype = None;
    // Extent sizes (`Origin::Extent`, the arrays' declared extents traced
    // as sizes) are not C parameters: they size the shapes below, and the
    // lifted function defaults them to this build's values.
    let extents: BTreeMap<&str, i64> = kernel
        .params
        .iter()
        .filter_map(|p| match &p.origin {
            Origin::Extent { value } => Some((p.name.as_str(), *value)),
            _ => None,
        })
        .collect();
    for p in &kernel.params {
        if extents.contains_key(p.name.as_str()) {
            continue;
        }
        let mut row = Table::new();
        row.insert("name".into(), Value::from(p.name.clone()));
        match &p.kind {
            ParamKind::Scalar { is_size: true, .. } => {
                let macro_name = p.name.to_uppercase();
                let value = macros.get(&macro_name).ok_or_else(|| {
                    format!(
                        "size `{}`: the header defines no macro {macro_name}",
                        p.name
                    )
                })?;
                sizes.insert(p.name.clone(), Value::from(*value));
                row.insert("kind".into(), Value::from("size"));
            }
            ParamKind::Scalar { ty, .. } => {
                row.insert("kind".into(), Value::from("scalar"));
                row.insert("type".into(), Value::from(ty.name()));
            }
            ParamKind::Array(info) => {
                let shape = info
                    .dims
                    .iter()
                    .map(|d| {
                        let extent = |n: &str| extents.get(n).copied();
                        d.as_ref().and_then(|a| a.eval(&extent)).map(Value::from)
                    })
                    .collect::<Option<Vec<Value>>>()
                    .ok_or_else(|| format!("array `{}` has no constant declared extent", p.name))?;
                row.insert("kind".into(), Value::from("array"));
                row.insert("type".into(), Value::from(info.elem.name()));
                row.insert("shape".into(), Value::Array(shape));
                if matches!(p.role, Role::Output | Role::InOut) {
                    outputs.push(Value::from(p.name.clone()));
                    dtype.get_or_insert(info.elem.name());
                }
            }
        }
        params.push(Value::Table(row));
    }
    if outputs.is_empty() {
        return Err("the kernel writes no array parameter".into());
    }
    let mut entry = Table::new();
    entry.insert("name".into(), Value::from(name));
    entry.insert("suite".into(), Value::from(suite));
    entry.insert("form".into(), Value::from("distributed"));
    let dirs = include.iter().map(|d| Value::from(d.display().to_string()));
    entry.insert("include".into(), Value::Array(dirs.collect()));
    // The suite's runtime (timer, allocation), linked into the C baseline
    // because the kernel file's own main() refers to it.
    let runtime: Vec<Value> = include
        .iter()
        .map(|d| d.join("polybench.c"))
        .filter(|f| f.is_file())
        .map(|f| Value::from(f.display().to_string()))
        .collect();
    entry.insert("sources".into(), Value::Array(runtime));
    entry.insert("file".into(), Value::from(file.display().to_string()));
    entry.insert("function".into(), Value::from(kernel.name.clone()));
    entry.insert("dtype".into(), Value::from(dtype.unwrap_or("f64")));
    entry.insert("outputs".into(), Value::Array(outputs));
    entry.insert("expect".into(), Value::from("lift"));
    entry.insert("params".into(), Value::Array(params));
    let mut by_dataset = Table::new();
    by_dataset.insert(dataset.to_uppercase(), Value::Table(sizes));
    entry.insert("sizes".into(), Value::Table(by_dataset));
    Ok(entry)
}

/// The entries of one kernel file (one per `kernel_*` function).
fn entries_of_file(dir: &Path, file: &Path, dataset: &str) -> Result<Vec<Table>, Skipped> {
    let skip = |reason: String| Skipped {
        file: file.to_path_buf(),
        reason,
    };
    let source = std::fs::read_to_string(file).map_err(|e| skip(e.to_string()))?;
    let functions = kernel_functions(&source);
    if functions.is_empty() {
        return Err(skip("no kernel_* function".into()));
    }
    let (includes, defines) = flags_for(dir, file, dataset);
    let macros = macro_values(file, &includes, &defines).map_err(skip)?;
    let options = Options {
        functions: functions.clone(),
        include_dirs: includes,
        defines,
        ..Options::default()
    };
    let unit = tenslift_frontend::extract(&file.to_string_lossy(), &options)
        .map_err(|e| skip(e.to_string()))?;
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
    let stem = stem.unwrap_or_default();
    let group = file
        .parent()
        .and_then(Path::parent)
        .and_then(|g| g.strip_prefix(dir).ok())
        .map(|g| g.to_string_lossy().into_owned())
        .filter(|g| !g.is_empty())
        .unwrap_or_else(|| "polybench".to_string());
    let mut entries = Vec::new();
    for function in &functions {
        let Some(kernel) = unit.kernels.iter().find(|k| &k.name == function) else {
            return Err(skip(format!("`{function}` was not extracted")));
        };
        let name = if functions.len() == 1 {
            stem.clone()
        } else {
            format!("{stem}.{function}")
        };
        let include = [dir.join("utilities")];
        let entry = entry_for(kernel, &name, &group, file, dataset, &macros, &include)
            .map_err(|why| skip(format!("{function}: {why}")))?;
        entries.push(entry);
    }
    Ok(entries)
}

/// Writes `<out>/suite-manifest.toml` for the tree `dir` at `dataset` and
/// returns its path with the files that gave no entry.
pub fn write_manifest(
    dir: &Path,
    layout: &str,
    dataset: &str,
    out: &Path,
) -> Result<(PathBuf, Vec<Skipped>), BenchError> {
    if !LAYOUTS.contains(&layout) {
        return Err(BenchError::Usage(format!(
            "unknown --layout `{layout}` (known: {})",
            LAYOUTS.join(", ")
        )));
    }
    let dir = std::fs::canonicalize(dir).map_err(BenchError::io(dir))?;
    if !dir.join("utilities").join("polybench.h").is_file() {
        return Err(BenchError::Usage(format!(
            "{} is not a PolyBench tree: no utilities/polybench.h",
            dir.display()
        )));
    }
    let mut kernels = Vec::new();
    let mut skipped = Vec::new();
    for file in kernel_files(&dir)? {
        match entries_of_file(&dir, &file, dataset) {
            Ok(entries) => kernels.extend(entries.into_iter().map(Value::Table)),
            Err(s) => skipped.push(s),
        }
    }
    if kernels.is_empty() {
        return Err(BenchError::Usage(format!(
            "no kernel_* function usable in {}",
            dir.display()
        )));
    }
    let mut manifest = Table::new();
    manifest.insert("kernel".into(), Value::Array(kernels));
    let text = toml::to_string(&manifest)
        .map_err(|e| BenchError::Usage(format!("cannot write the suite manifest: {e}")))?;
    let header = format!(
        "# Generated by `tenslift bench --suite-dir {} --layout {layout} --dataset {dataset}`\n\n",
        dir.display()
    );
    let path = out.join("suite-manifest.toml");
    write_text(&path, &(header + &text))?;
    Ok((path, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_definitions_are_found_not_calls_or_prototypes() {
        let source = "static\nvoid kernel_gemm(int ni,\n  double A[1]) {\n}\n\
                      void kernel_proto(int n);\n\
                      int main() {\n  kernel_gemm(ni, A);\n}\n\
                      static void kernel_two(int n) {}\n";
        assert_eq!(kernel_functions(source), vec!["kernel_gemm", "kernel_two"]);
    }

    #[test]
    fn kernel_files_are_name_slash_name_dot_c() {
        assert!(is_kernel_file(Path::new(
            "t/stencils/jacobi-1d/jacobi-1d.c"
        )));
        assert!(!is_kernel_file(Path::new("t/stencils/jacobi-1d/other.c")));
        assert!(!is_kernel_file(Path::new(
            "t/stencils/jacobi-1d/jacobi-1d.h"
        )));
    }
}
