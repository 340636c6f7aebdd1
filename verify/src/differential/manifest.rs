//! Manifest kernels (benchmarks/manifest.toml) run through the project's C
//! reference driver `scripts/cref.py`, so their inputs respect the declared
//! ranges and structured initialisations (`spd`, `diag_dominant`, …) that
//! domain-restricted kernels need.
//!
//! `cref.py` compiles the C of a dataset with `-D<SIZE>=<value>` for every
//! size of the dataset ([`dataset_defines`]): kernels whose extents are C
//! macros (`#define N 16`) take their sizes from there, so a program lifted
//! for that dataset must be lifted with the same defines. Entries of the
//! `distributed` form (PolyBench/C 4.2 as the suite ships it) are compiled
//! the suite's way instead: `-D<DATASET>_DATASET` picks the sizes in the
//! kernel's own header and `include` names the suite's header directory
//! ([`form_defines`], [`ManifestKernel::include_dirs`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use tenslift_targets::npy;

use super::{CReference, DifferentialError};

/// One manifest entry, as far as the differential run needs it.
#[derive(Clone, Debug)]
pub struct ManifestKernel {
    /// The manifest's kernel name (what `cref.py --kernel` takes).
    pub name: String,
    /// Output names (`return` for a returned scalar).
    pub outputs: Vec<String>,
    /// Size tuples by dataset name.
    pub sizes: BTreeMap<String, BTreeMap<String, i64>>,
    /// The entry's `form` (`own` when absent): `distributed`, `c99-vla`, `own`.
    pub form: String,
    /// The entry's `include` directories, absolute (relative ones in the
    /// manifest are relative to the manifest's directory).
    pub include: Vec<PathBuf>,
}

/// The form an entry has when the manifest does not say.
pub const DEFAULT_FORM: &str = "own";

/// The form of a suite's own distributed sources, compiled with its header.
pub const DISTRIBUTED_FORM: &str = "distributed";

impl ManifestKernel {
    /// The macro definitions (`NAME[=VALUE]`) that `cref.py` compiles `dataset` with.
    pub fn defines(&self, dataset: &str) -> Vec<String> {
        let sizes = self.sizes.get(dataset).cloned().unwrap_or_default();
        form_defines(&self.form, dataset, &sizes)
    }

    /// The `-I` directories that `cref.py` compiles the entry with.
    pub fn include_dirs(&self) -> Vec<PathBuf> {
        self.include.clone()
    }
}

/// What `-D` the C of an entry of `form` is compiled with for `dataset`:
/// the suite's dataset switch (`MINI_DATASET`) for the distributed form,
/// whose header defines the sizes, else every size as a macro
/// ([`dataset_defines`]).
pub fn form_defines(form: &str, dataset: &str, sizes: &BTreeMap<String, i64>) -> Vec<String> {
    if form == DISTRIBUTED_FORM {
        vec![format!("{}_DATASET", dataset.to_uppercase())]
    } else {
        dataset_defines(sizes)
    }
}

/// The macro definitions (`NAME=VALUE`, as `-D` takes them) that
/// `scripts/cref.py` (`size_defines`) compiles a dataset with: every size of
/// the dataset, its name upper-cased.
pub fn dataset_defines(sizes: &BTreeMap<String, i64>) -> Vec<String> {
    sizes
        .iter()
        .map(|(name, value)| format!("{}={value}", name.to_uppercase()))
        .collect()
}

/// `sizes` plus each size under its macro name (`n` also as `N`), unless
/// that name is a size already: the C is compiled with [`dataset_defines`],
/// so a kernel sized by the macro `N` (a parameter with
/// `Origin::Macro`) takes the value of the manifest's `n`.
pub fn with_macro_names(sizes: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    let mut out = sizes.clone();
    for (name, value) in sizes {
        out.entry(name.to_uppercase()).or_insert(*value);
    }
    out
}

/// The manifest entry for `function` in `file`, if there is one.
pub fn find(
    workspace: &Path,
    file: &Path,
    function: &str,
) -> Result<Option<ManifestKernel>, DifferentialError> {
    let manifest_path = workspace.join("benchmarks").join("manifest.toml");
    let Ok(text) = std::fs::read_to_string(&manifest_path) else {
        return Ok(None);
    };
    let value: toml::Value = toml::from_str(&text)
        .map_err(|e| DifferentialError::Tool(format!("{}: {e}", manifest_path.display())))?;
    let Ok(wanted) = std::fs::canonicalize(file) else {
        return Ok(None);
    };
    let kernels = value
        .get("kernel")
        .and_then(toml::Value::as_array)
        .cloned()
        .unwrap_or_default();
    for k in kernels {
        let field = |key: &str| k.get(key).and_then(toml::Value::as_str).unwrap_or("");
        if field("function") != function {
            continue;
        }
        let path: PathBuf = workspace.join("benchmarks").join(field("file"));
        if std::fs::canonicalize(&path).ok().as_ref() != Some(&wanted) {
            continue;
        }
        let outputs = k
            .get("outputs")
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|o| o.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let mut sizes = BTreeMap::new();
        if let Some(table) = k.get("sizes").and_then(toml::Value::as_table) {
            for (dataset, tuple) in table {
                let tuple: BTreeMap<String, i64> = tuple
                    .as_table()
                    .map(|t| {
                        t.iter()
                            .filter_map(|(n, v)| v.as_integer().map(|v| (n.clone(), v)))
                            .collect()
                    })
                    .unwrap_or_default();
                sizes.insert(dataset.clone(), tuple);
            }
        }
        let form = k
            .get("form")
            .and_then(toml::Value::as_str)
            .unwrap_or(DEFAULT_FORM)
            .to_string();
        let include = k
            .get("include")
            .and_then(toml::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(toml::Value::as_str)
                    .map(|dir| workspace.join("benchmarks").join(dir))
                    .collect()
            })
            .unwrap_or_default();
        return Ok(Some(ManifestKernel {
            name: field("name").to_string(),
            outputs,
            sizes,
            form,
            include,
        }));
    }
    Ok(None)
}

/// Runs `cref.py run` for `dataset` and reads its inputs and outputs back.
pub fn run_cref(
    workspace: &Path,
    python: &Path,
    kernel: &ManifestKernel,
    dataset: &str,
    seed: u64,
    workdir: &Path,
) -> Result<CReference, DifferentialError> {
    let sizes = kernel.sizes.get(dataset).cloned().ok_or_else(|| {
        DifferentialError::Tool(format!("kernel {} has no dataset {dataset}", kernel.name))
    })?;
    let out = workdir.join(format!("cref_{dataset}"));
    let script = workspace.join("scripts").join("cref.py");
    let ran = Command::new(python)
        .arg(&script)
        .args(["run", "--kernel", &kernel.name, "--dataset", dataset])
        .args(["--variant", "gcc", "--seed", &seed.to_string(), "--out"])
        .arg(&out)
        .output()
        .map_err(|e| DifferentialError::Tool(format!("cannot run {}: {e}", python.display())))?;
    if !ran.status.success() {
        return Err(DifferentialError::CRun(
            String::from_utf8_lossy(&ran.stderr).trim().to_string(),
        ));
    }
    let mut inputs = HashMap::new();
    let in_dir = out.join("inputs");
    let entries = std::fs::read_dir(&in_dir).map_err(|e| DifferentialError::io(&in_dir, e))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("npy") {
            continue;
        }
        if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
            inputs.insert(stem.to_string(), npy::read(&path)?);
        }
    }
    let mut outputs = BTreeMap::new();
    for name in &kernel.outputs {
        outputs.insert(name.clone(), npy::read(&out.join(format!("{name}.npy")))?);
    }
    Ok(CReference {
        label: dataset.to_string(),
        sizes: with_macro_names(&sizes),
        inputs,
        outputs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macro_names_alias_sizes_without_shadowing_them() {
        let sizes: BTreeMap<String, i64> = [("n".to_string(), 32), ("M".to_string(), 4)]
            .into_iter()
            .collect();
        let aliased = with_macro_names(&sizes);
        assert_eq!(aliased.get("N"), Some(&32));
        assert_eq!(aliased.get("n"), Some(&32));
        assert_eq!(aliased.get("M"), Some(&4));
        assert_eq!(aliased.len(), 3);
    }

    #[test]
    fn distributed_form_is_compiled_with_the_dataset_switch_not_the_sizes() {
        let sizes: BTreeMap<String, i64> = [("ni".to_string(), 20)].into_iter().collect();
        assert_eq!(
            form_defines("distributed", "MINI", &sizes),
            vec!["MINI_DATASET"]
        );
        assert_eq!(form_defines("c99-vla", "MINI", &sizes), vec!["NI=20"]);
        assert_eq!(form_defines(DEFAULT_FORM, "MINI", &sizes), vec!["NI=20"]);
    }

    #[test]
    fn dataset_defines_upper_case_every_size_like_cref() {
        let sizes: BTreeMap<String, i64> = [("a_row".to_string(), 10), ("n".to_string(), 32)]
            .into_iter()
            .collect();
        assert_eq!(dataset_defines(&sizes), vec!["A_ROW=10", "N=32"]);
    }
}
