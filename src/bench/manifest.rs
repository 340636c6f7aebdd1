//! The parts of benchmarks/manifest.toml the harness needs: which kernels
//! exist, their suite, C file, function, outputs and sizes per dataset.
//! (scripts/cref.py reads the rest: parameter types, ranges, inputs.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use tenslift_verify::differential::manifest::{form_defines, DEFAULT_FORM};

use super::{read_text, BenchError};

/// Dataset names, smallest first.
pub const DATASETS: [&str; 5] = ["MINI", "SMALL", "MEDIUM", "LARGE", "EXTRALARGE"];

#[derive(Clone, Debug, Deserialize)]
pub struct ManifestParam {
    pub name: String,
    pub kind: String,
}

/// One `[[kernel]]` entry.
#[derive(Clone, Debug, Deserialize)]
pub struct ManifestKernel {
    pub name: String,
    pub suite: String,
    /// Relative to the manifest's directory.
    pub file: String,
    pub function: String,
    pub outputs: Vec<String>,
    pub params: Vec<ManifestParam>,
    pub sizes: BTreeMap<String, BTreeMap<String, i64>>,
    /// `distributed`, `c99-vla` or `own` (the default; benchmarks/README.md).
    #[serde(default = "default_form")]
    pub form: String,
    /// `-I` directories, relative to the manifest's directory.
    #[serde(default)]
    pub include: Vec<String>,
}

fn default_form() -> String {
    DEFAULT_FORM.to_string()
}

/// How the C of one kernel is read for one dataset: what `scripts/cref.py`
/// compiles the C baseline with, so the lifted program has the same extents.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CFlags {
    pub include_dirs: Vec<PathBuf>,
    /// `NAME[=VALUE]`, as `-D` takes them.
    pub defines: Vec<String>,
}

impl CFlags {
    /// The flags as command-line arguments (`-I DIR`, `-DNAME=VALUE`).
    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for dir in &self.include_dirs {
            args.push("-I".to_string());
            args.push(dir.to_string_lossy().into_owned());
        }
        args.extend(self.defines.iter().map(|d| format!("-D{d}")));
        args
    }
}

#[derive(Deserialize)]
struct ManifestFile {
    #[serde(default)]
    kernel: Vec<ManifestKernel>,
}

/// The manifest: kernels in file order, plus where it lives.
#[derive(Clone, Debug)]
pub struct Manifest {
    pub path: PathBuf,
    pub kernels: Vec<ManifestKernel>,
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest, BenchError> {
        let text = read_text(path)?;
        let parsed: ManifestFile = toml::from_str(&text).map_err(|e| BenchError::Manifest {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(Manifest {
            path: path.to_path_buf(),
            kernels: parsed.kernel,
        })
    }

    /// The C file of a kernel.
    pub fn source(&self, kernel: &ManifestKernel) -> PathBuf {
        self.path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(&kernel.file)
    }

    /// The flags the C of `kernel` is compiled with for `dataset`: the
    /// entry's `include` directories and its form's defines
    /// (`-D<DATASET>_DATASET` for the distributed form, else every size).
    pub fn c_flags(&self, kernel: &ManifestKernel, dataset: &str) -> CFlags {
        let base = self.path.parent().unwrap_or_else(|| Path::new("."));
        let sizes = kernel.sizes.get(dataset).cloned().unwrap_or_default();
        CFlags {
            include_dirs: kernel.include.iter().map(|d| base.join(d)).collect(),
            defines: form_defines(&kernel.form, dataset, &sizes),
        }
    }

    /// Every suite name, sorted.
    pub fn suites(&self) -> Vec<String> {
        let mut suites: Vec<String> = self.kernels.iter().map(|k| k.suite.clone()).collect();
        suites.sort();
        suites.dedup();
        suites
    }

    /// Kernels of the comma-separated suites (`all` for every kernel); an
    /// unknown suite name is an error that lists the known ones.
    pub fn select(&self, suites: &str) -> Result<Vec<ManifestKernel>, BenchError> {
        let wanted: Vec<&str> = suites.split(',').map(str::trim).collect();
        if wanted.contains(&"all") {
            return Ok(self.kernels.clone());
        }
        let known = self.suites();
        for name in &wanted {
            if !known.iter().any(|k| k == name) {
                return Err(BenchError::Usage(format!(
                    "no suite `{name}` in {} (known: all, {})",
                    self.path.display(),
                    known.join(", ")
                )));
            }
        }
        Ok(self
            .kernels
            .iter()
            .filter(|k| wanted.contains(&k.suite.as_str()))
            .cloned()
            .collect())
    }
}
