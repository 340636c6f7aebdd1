//! End-to-end tests of `tenslift lift --target auto` and the bench's
//! `auto` and roofline columns, through the real binary on real C, priced
//! with a small hand-written table (tests/fixtures/roofline/cost-table.json:
//! NumPy cheap per call and slow per flop, JAX 1 ms per call and 100x faster
//! per flop, the C at 1 ns per flop), so that the choice is known.

use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn tenslift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .args(args)
        .current_dir(ROOT)
        .env("CI", "true")
        .output()
        .expect("run tenslift")
}

fn fixture(name: &str) -> String {
    format!("{ROOT}/tests/fixtures/roofline/{name}")
}

/// `lift --target auto --json` of the matrix product; its one record.
fn lift_auto(extra: &[&str]) -> (serde_json::Value, String) {
    let (file, table) = (fixture("mm.c"), fixture("cost-table.json"));
    let mut args = vec![
        "lift",
        file.as_str(),
        "--target",
        "auto",
        "--json",
        "--cost-table",
        &table,
    ];
    args.extend_from_slice(extra);
    let out = tenslift(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let record = serde_json::from_slice(&out.stdout).expect("one JSON record");
    (record, stderr)
}

#[test]
fn auto_picks_numpy_for_a_small_product_and_jax_for_a_large_one() {
    let (small, stderr) = lift_auto(&["--sizes", "n=8"]);
    let auto = &small["auto"];
    assert_eq!(auto["chosen"], "numpy", "{auto}");
    assert_eq!(small["target"], "numpy");
    assert_eq!(auto["sizes"]["n"], 8);
    assert_eq!(auto["sizes_from"], "--sizes");
    // Every size is bound and there is one kernel: StableHLO is priced too.
    let predicted = auto["predicted_s"].as_object().expect("predictions");
    assert_eq!(predicted.len(), 4, "{auto}");
    // NumPy: 1 µs per call, 1 µs per operation, 2·8³ flops at 1 ns.
    let numpy = predicted["numpy"].as_f64().expect("seconds");
    assert!(numpy > 3.0e-6 && numpy < 1e-5, "{numpy}");
    assert!(predicted["jax"].as_f64().expect("seconds") > 1e-3);
    // The C's 2·8³ flops at 1 ns beat NumPy's call: a warning says so.
    assert_eq!(auto["slower_than_c"], true, "{auto}");
    assert!(stderr.contains("mm: auto: numpy (predicted"), "{stderr}");
    assert!(
        stderr.contains("warning: the numpy program is predicted slower than the C"),
        "{stderr}"
    );
    let (large, stderr) = lift_auto(&["--sizes", "n=2000"]);
    assert_eq!(large["auto"]["chosen"], "jax", "{}", large["auto"]);
    assert_eq!(large["auto"]["slower_than_c"], false);
    assert!(!stderr.contains("warning"), "{stderr}");
    // The emitted module is JAX's.
    assert!(
        large["program"].is_string() && stderr.contains("mm: auto: jax"),
        "{stderr}"
    );
}

#[test]
fn auto_without_sizes_states_the_default_and_leaves_stablehlo_out() {
    let (record, _) = lift_auto(&[]);
    let auto = &record["auto"];
    assert_eq!(auto["sizes"]["n"], 1000);
    assert!(
        auto["sizes_from"]
            .as_str()
            .is_some_and(|s| s.contains("default 1000 for n")),
        "{auto}"
    );
    assert!(auto["predicted_s"].get("hlo").is_none(), "{auto}");
    assert!(auto["excluded"][0]
        .as_str()
        .is_some_and(|s| s.starts_with("hlo:")));
}

#[test]
fn a_table_without_per_target_costs_is_a_usage_error() {
    // The committed schema-1 table of `vm` has NumPy's costs only.
    let dir = tempfile::tempdir().expect("tempdir");
    let old = dir.path().join("v1.json");
    let mut v1: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("cost-table.json")).expect("fixture"),
    )
    .expect("json");
    for key in ["schema", "targets", "machine", "c"] {
        v1.as_object_mut().expect("object").remove(key);
    }
    std::fs::write(&old, v1.to_string()).expect("write");
    let file = fixture("mm.c");
    let out = tenslift(&[
        "lift",
        &file,
        "--target",
        "auto",
        "--cost-table",
        &old.to_string_lossy(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no per-target costs"), "{stderr}");
}

fn read_csv(path: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

fn column(rows: &[Vec<String>], name: &str) -> usize {
    rows[0]
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", rows[0]))
}

#[test]
fn the_bench_reports_auto_and_the_roofline_consistently() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run");
    let table = fixture("cost-table.json");
    let done = tenslift(&[
        "bench",
        "--suite",
        "blas",
        "--dataset",
        "MINI",
        "--repeat",
        "3",
        "--targets",
        "numpy,pytorch",
        "--cost-table",
        &table,
        "--out",
        &out.to_string_lossy(),
        "--json",
    ]);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let lift = read_csv(&out.join("lift.csv"));
    let (kernel, auto, flops) = (
        column(&lift, "kernel"),
        column(&lift, "auto_target"),
        column(&lift, "flops"),
    );
    for row in &lift[1..] {
        // At MINI sizes NumPy's call is the cheapest of the run's targets.
        assert_eq!(row[auto], "numpy", "{row:?}");
    }
    let dot = lift[1..].iter().find(|r| r[kernel] == "dot").expect("dot");
    // dot at MINI: n = 32, one multiply and one add per element.
    assert_eq!(dot[flops], "64");
    let roofline = read_csv(&out.join("roofline.csv"));
    assert_eq!(roofline.len(), lift.len(), "one row per kernel");
    let col = |name: &str| column(&roofline, name);
    let num = |row: &[String], name: &str| -> f64 {
        row[col(name)]
            .parse()
            .unwrap_or_else(|_| panic!("{name} in {row:?}"))
    };
    for row in &roofline[1..] {
        let best = row[col("best_target")].as_str();
        assert!(["numpy", "pytorch"].contains(&best), "{row:?}");
        assert_eq!(
            row[col("auto_is_best")],
            (row[col("auto_target")] == best).to_string()
        );
        let ratio = num(row, "best_s") / num(row, "auto_s");
        assert!(
            (num(row, "auto_vs_best") / ratio - 1.0).abs() < 1e-3,
            "{row:?}"
        );
        assert!(
            num(row, "auto_vs_best") <= 1.0 + 1e-9,
            "best is best: {row:?}"
        );
        let fraction = num(row, "roofline_s") / num(row, "best_s");
        assert!(
            (num(row, "roofline_fraction") / fraction - 1.0).abs() < 1e-3,
            "{row:?}"
        );
    }
    let summary = std::fs::read_to_string(out.join("summary.md")).expect("summary");
    assert!(
        summary.contains("auto picked the measured best on")
            && summary.contains("auto vs gcc -O3:")
            && summary.contains("of the bound"),
        "{summary}"
    );
    assert!(out.join("plots/roofline.png").is_file());
}

#[test]
fn a_named_target_predicted_slower_than_the_c_gets_the_same_warning() {
    let (file, table) = (fixture("mm.c"), fixture("cost-table.json"));
    let lift = |target: &str, sizes: &[&str]| {
        let mut args = vec![
            "lift",
            file.as_str(),
            "--target",
            target,
            "--cost-table",
            &table,
        ];
        args.extend_from_slice(sizes);
        let out = tenslift(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        stderr
    };
    // JAX's 1 ms call against the C's 2·8³ ns.
    let stderr = lift("jax", &["--sizes", "n=8"]);
    assert!(
        stderr.contains("warning: the jax program is predicted slower than the C"),
        "{stderr}"
    );
    assert!(!stderr.contains("auto:"), "{stderr}");
    // At n = 2000 JAX's flops win.
    assert!(!lift("jax", &["--sizes", "n=2000"]).contains("warning"));
    // No sizes named anywhere: the default 1000 is nobody's choice.
    assert!(!lift("numpy", &[]).contains("warning"));
}
