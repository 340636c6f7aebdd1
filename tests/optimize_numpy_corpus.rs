//! The 33 STENSO computations written as naive NumPy programs
//! (benchmarks/stenso_numpy/) through `tenslift optimize` on the real
//! binary: each must optimise, its TensIR is snapshotted (one line per
//! program), and its asymptotic degree must equal STENSO's optimum in
//! benchmarks/stenso_optimal.toml. No `--verify` here (Z3 would take
//! minutes); tests/optimize_numpy_e2e.rs verifies a few end to end and
//! scripts/stenso_numpy_bench.py compares outputs numerically.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use tenslift_targets::{parse_program, Access, ParamKind, Program};

const PROGRAMS: &str = "benchmarks/stenso_numpy";

/// `name -> degree` from benchmarks/stenso_optimal.toml.
fn optimal_degrees(root: &Path) -> BTreeMap<String, u32> {
    let text = std::fs::read_to_string(root.join("benchmarks/stenso_optimal.toml"))
        .expect("stenso_optimal.toml");
    let table: toml::Table = text.parse().expect("valid TOML");
    let kernels = table["kernel"].as_array().expect("[[kernel]] entries");
    kernels
        .iter()
        .map(|k| {
            let name = k["name"].as_str().expect("name").to_string();
            let degree = k["degree"].as_integer().expect("degree");
            (name, u32::try_from(degree).expect("non-negative degree"))
        })
        .collect()
}

/// The degree of writing the outputs: any program must write every output
/// element, although the analytic cost model prices a plain copy (`out =
/// A`, STENSO's `dot_trans_2`) at zero.
fn output_degree(p: &Program) -> u32 {
    p.params
        .iter()
        .filter_map(|q| match &q.kind {
            ParamKind::Array { shape, access, .. } if *access != Access::In => {
                Some(shape.iter().filter(|d| d.as_const().is_none()).count() as u32)
            }
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// Optimises one program and returns its JSON record.
fn optimize(root: &Path, file: &str) -> Value {
    let run = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(root)
        .args(["optimize", file, "--json"])
        .output()
        .expect("the tenslift binary runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{file}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_str(stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{file}: no JSON record ({e}): {stdout}"))
}

#[test]
fn every_stenso_program_optimises_to_the_optimal_degree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let optimal = optimal_degrees(root);
    let mut names: Vec<String> = std::fs::read_dir(root.join(PROGRAMS))
        .expect("benchmarks/stenso_numpy")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(".py")
                .map(String::from)
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 33, "{names:?}");
    let (mut lines, mut misses) = (Vec::new(), Vec::new());
    for name in &names {
        let record = optimize(root, &format!("{PROGRAMS}/{name}.py"));
        let text = record["program"].as_str().expect("a program").to_string();
        let program = parse_program(name, &text).expect("the printed TensIR parses");
        let cost_degree = record["complexity_after"].as_u64().map_or(0, |d| d as u32);
        let degree = cost_degree.max(output_degree(&program));
        match optimal.get(name) {
            Some(&want) if want != degree => misses.push(format!("{name}: {degree} != {want}")),
            _ => {}
        }
        let body: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("func "))
            .map(str::trim)
            .collect();
        lines.push(format!(
            "{name}: {} degree {degree}: {}",
            record["chosen"].as_str().unwrap_or("?"),
            body.join(" ")
        ));
    }
    assert!(
        misses.is_empty(),
        "degree above STENSO's optimum: {misses:?}"
    );
    insta::assert_snapshot!(lines.join("\n"));
}
