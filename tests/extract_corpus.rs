//! Every kernel of the benchmark corpus (`benchmarks/manifest.toml`) goes
//! through `tenslift extract FILE --function NAME --json` as a user would
//! run it. Kernels expected to lift (fully or partially) must extract with
//! exit 0, with the kernel present, every manifest output written (or
//! returned), and every manifest size parameter recognised as a size.
//! Kernels expected to be rejected must fail with exit 1 and a diagnostic
//! located in their file.

use std::path::Path;
use std::process::Command;

use serde::Deserialize;
use tenslift_frontend::ir::{Kernel, ParamKind, Role, TranslationUnit};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// Extractions run at once (each is a separate process).
const WORKERS: usize = 4;

#[derive(Deserialize)]
struct Manifest {
    kernel: Vec<Entry>,
}

#[derive(Deserialize, Clone)]
struct Entry {
    name: String,
    file: String,
    function: String,
    expect: String,
    /// `distributed` entries are read the suite's way (see [`c_flags`]).
    #[serde(default)]
    form: String,
    #[serde(default)]
    include: Vec<String>,
    outputs: Vec<String>,
    params: Vec<ManifestParam>,
}

#[derive(Deserialize, Clone)]
struct ManifestParam {
    name: String,
    kind: String,
}

fn manifest() -> Vec<Entry> {
    let path = Path::new(ROOT).join("benchmarks/manifest.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let parsed: Manifest =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parsed.kernel
}

/// What went wrong with one kernel, or `None` when it behaved.
fn check(entry: &Entry) -> Option<String> {
    let file = format!("benchmarks/{}", entry.file);
    let out = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(ROOT)
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .args(["extract", &file, "--function", &entry.function, "--json"])
        .args(flag_args(entry))
        .output()
        .expect("run tenslift");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let name = &entry.name;
    match entry.expect.as_str() {
        "reject" => {
            if out.status.code() != Some(1) {
                return Some(format!(
                    "{name}: expected exit 1, got {:?}",
                    out.status.code()
                ));
            }
            let located = stderr.lines().any(|line| {
                line.strip_prefix(&format!("{file}:")).is_some_and(|rest| {
                    let mut parts = rest.splitn(3, ':');
                    let numeric = |p: Option<&str>| {
                        p.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                    };
                    numeric(parts.next())
                        && numeric(parts.next())
                        && parts.next().is_some_and(|m| m.starts_with(" error[TL0"))
                })
            });
            (!located).then(|| format!("{name}: no `{file}:LINE:COL: error[TL0..]` in:\n{stderr}"))
        }
        "lift" | "partial" => {
            if out.status.code() != Some(0) {
                return Some(format!("{name}: rejected:\n{stderr}"));
            }
            let tu: TranslationUnit = match serde_json::from_slice(&out.stdout) {
                Ok(tu) => tu,
                Err(e) => return Some(format!("{name}: --json output does not parse: {e}")),
            };
            match tu.kernels.iter().find(|k| k.name == entry.function) {
                Some(kernel) => kernel_problems(entry, kernel),
                None => Some(format!("{name}: kernel `{}` missing", entry.function)),
            }
        }
        other => Some(format!("{name}: unknown expectation `{other}`")),
    }
}

/// Manifest facts the extracted kernel must agree with.
fn kernel_problems(entry: &Entry, kernel: &Kernel) -> Option<String> {
    let mut problems = Vec::new();
    for output in &entry.outputs {
        if output == "return" {
            if kernel.returns.is_none() {
                problems.push("returns nothing".to_string());
            }
            continue;
        }
        match kernel.params.iter().find(|p| &p.name == output) {
            Some(p) if matches!(p.role, Role::Output | Role::InOut) => {}
            Some(p) => problems.push(format!("output `{output}` has role {:?}", p.role)),
            None => problems.push(format!("output `{output}` is not a parameter")),
        }
    }
    for mp in entry.params.iter().filter(|p| p.kind == "size") {
        match kernel.params.iter().find(|p| p.name == mp.name) {
            Some(p) if matches!(p.kind, ParamKind::Scalar { is_size: true, .. }) => {}
            Some(_) => problems.push(format!("`{}` is not marked size", mp.name)),
            None => problems.push(format!("size `{}` is not a parameter", mp.name)),
        }
    }
    (!problems.is_empty()).then(|| format!("{}: {}", entry.name, problems.join("; ")))
}

#[test]
fn every_manifest_kernel_extracts_or_is_rejected_as_expected() {
    let entries = manifest();
    assert!(
        entries.len() >= 140,
        "only {} kernels in the manifest",
        entries.len()
    );
    assert!(
        entries.iter().any(|e| e.expect == "reject"),
        "the manifest has no kernel expected to be rejected"
    );
    let chunk = entries.len().div_ceil(WORKERS);
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = entries
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().filter_map(check).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker finished"))
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} kernels misbehaved:\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n")
    );
}

/// The `-I`/`-D` flags an entry's C is read with at MINI, as `scripts/cref.py`
/// compiles it: a distributed-form PolyBench file needs the suite's header
/// and a dataset switch; other entries carry their own size defaults.
fn c_flags(entry: &Entry) -> (Vec<String>, Vec<String>) {
    let includes = entry
        .include
        .iter()
        .map(|dir| format!("{ROOT}/benchmarks/{dir}"))
        .collect();
    let defines = if entry.form == "distributed" {
        vec!["MINI_DATASET".to_string()]
    } else {
        Vec::new()
    };
    (includes, defines)
}

fn flag_args(entry: &Entry) -> Vec<String> {
    let (includes, defines) = c_flags(entry);
    let mut args = Vec::new();
    for dir in includes {
        args.push("-I".to_string());
        args.push(dir);
    }
    args.extend(defines.into_iter().map(|d| format!("-D{d}")));
    args
}
