//! End-to-end tests of `tenslift bench` with the real binary, real lifting,
//! real gcc/clang/Polly builds and the real Python runner: the BLAS suite at
//! MINI produces lift.csv, runtime.csv with checked and timed rows, a summary
//! with Table 2 and Figure 8 numbers and plots; shards merge back into the
//! whole; a bad suite is a usage error that leaves nothing behind.

use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .arg("bench")
        .args(args)
        .current_dir(ROOT)
        .env("CI", "true")
        .output()
        .expect("run tenslift")
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
fn blas_at_mini_is_lifted_checked_timed_and_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let out_s = out.to_string_lossy().into_owned();
    let done = bench(&[
        "--suite",
        "blas",
        "--dataset",
        "MINI",
        "--repeat",
        "3",
        "--targets",
        "numpy",
        "--out",
        &out_s,
        "--json",
        "--timeout",
        "120",
    ]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(&done.stdout).expect("one JSON object on stdout");
    assert_eq!(report["kernels"], 3);

    let lift = read_csv(&out.join("lift.csv"));
    let status = column(&lift, "status");
    assert_eq!(lift.len(), 4, "three BLAS kernels: {lift:?}");
    // dot lifts in well under a second; gemv and ger may need longer than
    // the timeout on a loaded machine with a debug build, so only the kernels
    // that lifted are expected in runtime.csv.
    let kernels: Vec<&str> = lift[1..]
        .iter()
        .filter(|r| r[status] == "lifted")
        .map(|r| r[0].as_str())
        .collect();
    assert!(kernels.contains(&"dot"), "{lift:?}");
    assert_eq!(report["lifted"], kernels.len());

    let runtime = read_csv(&out.join("runtime.csv"));
    let (variant, median, ok, runs) = (
        column(&runtime, "variant"),
        column(&runtime, "median_s"),
        column(&runtime, "status"),
        column(&runtime, "runs"),
    );
    for kernel in &kernels {
        let variants: Vec<&str> = runtime[1..]
            .iter()
            .filter(|r| r[0] == *kernel)
            .map(|r| r[variant].as_str())
            .collect();
        assert_eq!(
            variants,
            ["gcc", "clang", "polly", "polly-parallel", "numpy"],
            "{kernel}"
        );
    }
    for row in &runtime[1..] {
        assert_eq!(
            row[ok], "ok",
            "every MINI BLAS measurement succeeds: {row:?}"
        );
        let t: f64 = row[median].parse().expect("a median");
        assert!(t > 0.0 && t < 1.0, "{row:?}");
        assert_eq!(row[runs], "3", "{row:?}");
    }

    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| blas | 3 |"), "{summary}");
    assert!(
        summary.contains("Best lifted CPU backend per kernel vs gcc -O3:"),
        "{summary}"
    );
    assert!(summary.contains("vs best Polly:"), "{summary}");
    assert!(
        summary.contains("tenslift bench --suite blas --dataset MINI"),
        "{summary}"
    );
    assert!(summary.contains("cores"), "machine line: {summary}");
    for plot in [
        "speedup_blas",
        "geomean_backends",
        "synthesis_time_vs_length",
    ] {
        for ext in ["png", "svg"] {
            let path = out.join("plots").join(format!("{plot}.{ext}"));
            assert!(path.is_file(), "{} missing", path.display());
        }
    }
    // The modules a bundle would carry are in the result directory.
    assert!(out
        .join("kernels")
        .join(kernels[0])
        .join("numpy.py")
        .is_file());
}

#[test]
fn shards_merge_back_into_the_whole_suite() {
    let dir = tempfile::tempdir().unwrap();
    let mut parts = Vec::new();
    for shard in ["1/2", "2/2"] {
        let out = dir.path().join(shard.replace('/', "of"));
        let out_s = out.to_string_lossy().into_owned();
        let done = bench(&[
            "--suite",
            "blas",
            "--no-runtime",
            "--shard",
            shard,
            "--timeout",
            "5",
            "--out",
            &out_s,
        ]);
        assert_eq!(
            done.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        parts.push(read_csv(&out.join("lift.csv")).len() - 1);
        assert!(!out.join("runtime.csv").exists());
    }
    assert_eq!(parts, [2, 1], "round-robin over 3 sorted kernels");
    let merged = dir.path().join("merged");
    let (a, b, m) = (
        dir.path().join("1of2"),
        dir.path().join("2of2"),
        merged.to_string_lossy().into_owned(),
    );
    let done = bench(&[
        "--merge",
        &a.to_string_lossy(),
        &b.to_string_lossy(),
        "--out",
        &m,
    ]);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let mut names: Vec<String> = read_csv(&merged.join("lift.csv"))[1..]
        .iter()
        .map(|r| r[0].clone())
        .collect();
    names.sort();
    assert_eq!(names, ["dot", "gemv", "ger"]);
    let summary = std::fs::read_to_string(merged.join("summary.md")).unwrap();
    assert!(summary.contains("| blas | 3 |"), "{summary}");
    assert!(
        summary.contains("merged by: tenslift bench --merge"),
        "{summary}"
    );
}

#[test]
fn unknown_suite_is_a_usage_error_with_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("never");
    let done = bench(&["--suite", "nosuch", "--out", &out.to_string_lossy()]);
    assert_eq!(done.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        stderr.contains("no suite `nosuch`") && stderr.contains("polybench"),
        "{stderr}"
    );
    assert!(!out.exists(), "no result directory for a rejected command");
    let done = bench(&["--shard", "3/2", "--out", &out.to_string_lossy()]);
    assert_eq!(done.status.code(), Some(2));
}

#[test]
fn macro_sized_kernels_take_the_dataset_size_and_call_json_names_the_emitted_function() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let out_s = out.to_string_lossy().into_owned();
    let done = bench(&[
        "--suite",
        "dspstone,mathfu",
        "--dataset",
        "MINI",
        "--targets",
        "numpy,hlo",
        "--no-runtime",
        "--out",
        &out_s,
        "--json",
        "--timeout",
        "120",
    ]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{stderr}");
    let kernel = |name: &str, file: &str| -> String {
        let path = out.join("kernels").join(name).join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    // pin_down is sized by an overridable `#define N 16`: the program takes
    // N as a size, call.json gives it MINI's n = 32 (cref.py compiles the C
    // with -DN=32), and StableHLO, which needs every size, is emitted at 32.
    let program = kernel("pin_down", "program.tensir");
    assert!(program.contains("i32[N]"), "{program}");
    let call: serde_json::Value = serde_json::from_str(&kernel("pin_down", "call.json")).unwrap();
    let size_n = call["params"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "N"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(size_n["kind"], "size", "{call}");
    assert_eq!(size_n["value"], 32, "{call}");
    assert!(kernel("pin_down", "hlo.mlir").contains("32xi32"));

    // The plan of the measurements not run, for another machine holding the
    // checkout (scripts/bench_cuda.sh): manifest and data relative to it.
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    let manifest = plan["manifest"].as_str().unwrap_or_default();
    assert!(manifest.starts_with(".."), "{manifest}");
    let resolved = std::fs::canonicalize(out.join(manifest)).unwrap();
    let ours = std::fs::canonicalize(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benchmarks/manifest.toml"
    ));
    assert_eq!(Some(resolved), ours.ok());
    assert_eq!(plan["cleanup"], true);
    let first = &plan["kernels"][0];
    for key in ["dir", "inputs", "reference"] {
        let path = first[key].as_str().unwrap_or("/");
        assert!(!path.starts_with('/'), "{key}: {path}");
    }

    // mathfu's `len` is emitted as `len_` (it would shadow Python's builtin).
    let call: serde_json::Value = serde_json::from_str(&kernel("len", "call.json")).unwrap();
    assert_eq!(call["function"], "len_", "{call}");
    assert_eq!(call["c_function"], "len", "{call}");
    assert!(kernel("len", "numpy.py").contains("def len_("));
    // The float tolerance of verify's differential runs, for this program's
    // longest reduction at MINI.
    let k = call["tolerance"]["reduction_length"].as_u64().unwrap_or(0);
    assert!(k > 1, "{call}");
    let f32_factor = call["tolerance"]["relative_factor"]["float32"]
        .as_f64()
        .unwrap_or(0.0);
    let expected = 16.0 * (k as f64 + 2.0) * 2f64.powi(-24);
    assert!((f32_factor - expected).abs() < 1e-12 * expected, "{call}");
}
