//! The parts of benchmarks/manifest.toml the harness needs: which kernels
//! exist, their suite, C file, function, outputs and sizes per dataset.
//! (scripts/cref.py reads the rest: parameter types, ranges, inputs.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

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
