//! Histograms end to end through the real binary: `h[x[i]] += w[i]` and
//! `h[x[i]]++` with a declared range lift to `scatter_add` in every target
//! (NumPy `np.add.at`, PyTorch `index_add`, JAX `.at[].add`, StableHLO
//! `scatter`), verify bounded + differential against gcc, state and check
//! the in-range precondition; a data-dependent write that is not an
//! accumulation, and a histogram whose bins have no declared range, stay
//! refused with a located TL021.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn python() -> PathBuf {
    match std::env::var_os("TENSLIFT_PYTHON") {
        Some(p) => p.into(),
        None if Path::new(ROOT).join(".venv/bin/python").exists() => {
            Path::new(ROOT).join(".venv/bin/python")
        }
        None => "/work/main/.venv/bin/python".into(),
    }
}

fn tenslift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(ROOT)
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .env("TENSLIFT_PYTHON", python())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run tenslift: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn kernel(name: &str) -> String {
    format!("benchmarks/conversions/{name}.c")
}

#[test]
fn every_histogram_lifts_to_a_scatter_add_in_every_target() {
    let cases = [
        ("hist_u8", vec!["--size", "n=8"]),
        ("hist_weighted", vec!["--size", "n=8", "--size", "nbins=4"]),
        ("hist_image", vec!["--size", "rows=3", "--size", "cols=5"]),
    ];
    for (name, sizes) in cases {
        for (target, shows) in [
            ("numpy", "np.add.at"),
            ("pytorch", "index_add"),
            ("jax", ".at[jnp.ravel(idx)].add"),
            ("hlo", "\"stablehlo.scatter\""),
        ] {
            let file = kernel(name);
            let mut args = vec!["lift", file.as_str(), "--target", target];
            if target == "hlo" {
                args.extend(sizes.iter().copied());
            }
            let out = tenslift(&args);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} {target}: {}",
                text(&out.stderr)
            );
            let code = text(&out.stdout);
            assert!(code.contains(shows), "{name} {target}:\n{code}");
        }
    }
}

#[test]
fn the_declared_range_is_a_stated_precondition_only_where_the_type_does_not_give_it() {
    let out = tenslift(&["lift", &kernel("hist_weighted"), "-t", "numpy", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let record: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let pre = record["preconditions"].to_string();
    assert!(
        pre.contains("every bin index `bin[i]` of the histogram `h` lies in [0, nbins)"),
        "{pre}"
    );
    assert!(record["program"]
        .as_str()
        .unwrap_or("")
        .contains("h = scatter_add(h, bin, w);"));
    // An unsigned char index is in range by its type: nothing to state.
    let out = tenslift(&["lift", &kernel("hist_u8"), "-t", "numpy", "--json"]);
    let record: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(record["preconditions"], Value::Array(vec![]), "{record}");
    let program = record["program"].as_str().unwrap_or("");
    assert!(
        program.contains("scatter_add(full([256], 0i32), img, full([n], 1i32))"),
        "{program}"
    );
}

/// The generated module accumulates repeated bins exactly as the C does
/// and refuses an index outside the bins with a ValueError.
#[test]
fn repeated_bins_accumulate_and_an_index_out_of_range_is_refused_at_run_time() {
    let dir = std::env::temp_dir().join(format!("tenslift-hist-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for target in ["numpy", "pytorch", "jax"] {
        let module = dir.join(format!("hist_{target}.py"));
        let module_s = module.to_string_lossy().into_owned();
        let out = tenslift(&[
            "lift",
            &kernel("hist_weighted"),
            "-t",
            target,
            "-o",
            &module_s,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let run = Command::new(python())
            .arg("tests/fixtures/histograms/hist_dup.py")
            .arg(&module)
            .arg(target)
            .current_dir(ROOT)
            .output()
            .expect("run python");
        assert!(
            run.status.success() && text(&run.stdout).contains("ok"),
            "{target}: {}{}",
            text(&run.stdout),
            text(&run.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_weighted_histogram_verifies_bounded_and_differential() {
    let out = tenslift(&[
        "verify",
        &kernel("hist_weighted"),
        "--json",
        "--targets",
        "numpy,hlo",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let record: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(record["bounded"], "pass", "{record}");
    assert_eq!(record["differential"], "pass", "{record}");
    // scatter_add has an unbounded encoding (a sum over the indices that
    // hit each bin), so the weighted histogram is proved for all sizes.
    let unbounded = &record["details"]["unbounded"];
    assert_eq!(unbounded["status"], "proved", "{unbounded}");
}

#[test]
fn non_accumulating_and_unranged_indirect_writes_stay_refused_where_they_are() {
    let out = tenslift(&[
        "lift",
        "tests/fixtures/histograms/scatter_store.c",
        "-t",
        "numpy",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("scatter_store.c:6:11: error[TL021]: indirect subscript: the index of `h` is read from memory"),
        "{err}"
    );
    let out = tenslift(&["lift", "benchmarks/utdsp/histogram.c", "-t", "numpy"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("histogram.c:9:14: error[TL021]: histogram `hist[image[i]]`: the range of its bins is not declared"),
        "{err}"
    );
}

/// An index read into a local before it subscripts (llm.c's cross-entropy:
/// `int ix = targets[b*T + t]; … probs_bt[ix]`) is a gather by data: said
/// so where the local subscripts, with what it is set to.
#[test]
fn an_index_read_into_a_local_is_reported_as_a_gather() {
    let out = tenslift(&[
        "lift",
        "tests/fixtures/probe/llm_crossentropy_forward.c",
        "-t",
        "numpy",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("llm_crossentropy_forward.c:9:39: error[TL021]: subscript of `probs` is not affine: `ix` is set to `targets[b * T + t]`, an index read from memory (a gather by data"),
        "{err}"
    );
}

/// A file mixing functions that lower with ones that cannot: the others
/// are lifted and written, each refused one is reported where it is, and
/// exit code 8 and the `--json` records say which is which.
#[test]
fn a_file_lifts_the_functions_that_lower_and_reports_the_others() {
    let dir = std::env::temp_dir().join(format!("tenslift-multi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let module = dir.join("mixed.py");
    let module_s = module.to_string_lossy().into_owned();
    let out = tenslift(&[
        "lift",
        "tests/fixtures/multi/mixed.c",
        "-t",
        "numpy",
        "-o",
        &module_s,
    ]);
    assert_eq!(out.status.code(), Some(8), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("mixed.c:12:11: error[TL021]"), "{err}");
    assert!(err.contains("mixed.c:18:5: error[TL010]"), "{err}");
    let code = std::fs::read_to_string(&module).expect("the module is written");
    assert!(
        code.contains("def scale(") && code.contains("# not lifted: `walk` (TL010"),
        "{code}"
    );
    let out = tenslift(&[
        "lift",
        "tests/fixtures/multi/mixed.c",
        "-t",
        "numpy",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(8));
    let statuses: Vec<(String, String)> = text(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("JSON line");
            (v["function"].to_string(), v["status"].to_string())
        })
        .collect();
    assert!(
        statuses.contains(&("\"scale\"".into(), "\"lifted\"".into())),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&("\"bad_store\"".into(), "\"rejected\"".into())),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&("\"walk\"".into(), "\"rejected\"".into())),
        "{statuses:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
