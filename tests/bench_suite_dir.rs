//! `tenslift bench --suite-dir DIR --layout polybench` on a miniature
//! PolyBench/C 4.2 tree built here (our utilities/polybench.h and two small
//! kernels written for this test): every `kernel_*` is found without a
//! manifest, read with `-I DIR/utilities -D<DATASET>_DATASET`, its sizes taken
//! from the header's macros at the dataset and its arrays at their declared
//! extents; the generated manifest drives lifting and the C baseline driver.
//! `--no-runtime`: lifting arrays declared larger than the loops touch is
//! another branch's work (region lifting), so nothing would be timed yet.

use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

const SCALE_H: &str = "#ifndef SCALE_H\n#define SCALE_H\n\
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \\\n\
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)\n#define LARGE_DATASET\n#endif\n\
#if !defined(N) && !defined(M)\n\
#ifdef MINI_DATASET\n#define N 6\n#define M 5\n#endif\n\
#ifdef SMALL_DATASET\n#define N 16\n#define M 12\n#endif\n\
#ifdef MEDIUM_DATASET\n#define N 60\n#define M 50\n#endif\n\
#ifdef LARGE_DATASET\n#define N 600\n#define M 500\n#endif\n\
#ifdef EXTRALARGE_DATASET\n#define N 1600\n#define M 1500\n#endif\n\
#endif\n\
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)\n#define _PB_M POLYBENCH_LOOP_BOUND(M, m)\n\
#define DATA_TYPE double\n#define DATA_PRINTF_MODIFIER \"%0.2lf \"\n#define SCALAR_VAL(x) x\n\
#endif\n";

const SCALE_C: &str = "#include <polybench.h>\n#include \"scale.h\"\n\n\
static void kernel_scale(int n, int m, DATA_TYPE alpha,\n\
                         DATA_TYPE POLYBENCH_2D(A, N, M, n, m))\n{\n  int i, j;\n\
#pragma scop\n  for (i = 0; i < _PB_N; i++)\n    for (j = 0; j < _PB_M; j++)\n\
      A[i][j] = alpha * A[i][j];\n#pragma endscop\n}\n\n\
int main(int argc, char **argv)\n{\n  int n = N, m = M, i, j;\n\
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, M, n, m);\n\
  for (i = 0; i < n; i++)\n    for (j = 0; j < m; j++)\n      (*A)[i][j] = i + j;\n\
  kernel_scale(n, m, SCALAR_VAL(2.0), POLYBENCH_ARRAY(A));\n\
  polybench_prevent_dce(fprintf(stderr, DATA_PRINTF_MODIFIER, (*A)[0][0]));\n\
  POLYBENCH_FREE_ARRAY(A);\n  return 0;\n}\n";

const COLSUM_H: &str = "#ifndef COLSUM_H\n#define COLSUM_H\n\
#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \\\n\
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)\n#define LARGE_DATASET\n#endif\n\
#if !defined(R) && !defined(C)\n\
#ifdef MINI_DATASET\n#define R 7\n#define C 3\n#endif\n\
#ifndef MINI_DATASET\n#define R 70\n#define C 30\n#endif\n\
#endif\n\
#define _PB_R POLYBENCH_LOOP_BOUND(R, r)\n#define _PB_C POLYBENCH_LOOP_BOUND(C, c)\n\
#define DATA_TYPE double\n#endif\n";

const COLSUM_C: &str = "#include <polybench.h>\n#include \"colsum.h\"\n\n\
static void kernel_colsum(int r, int c, DATA_TYPE POLYBENCH_2D(X, R, C, r, c),\n\
                          DATA_TYPE POLYBENCH_1D(s, C, c))\n{\n  int i, j;\n\
#pragma scop\n  for (j = 0; j < _PB_C; j++) {\n    s[j] = 0.0;\n\
    for (i = 0; i < _PB_R; i++)\n      s[j] += X[i][j];\n  }\n#pragma endscop\n}\n\n\
int main(int argc, char **argv)\n{\n  int r = R, c = C;\n\
  POLYBENCH_2D_ARRAY_DECL(X, DATA_TYPE, R, C, r, c);\n\
  POLYBENCH_1D_ARRAY_DECL(s, DATA_TYPE, C, c);\n\
  kernel_colsum(r, c, POLYBENCH_ARRAY(X), POLYBENCH_ARRAY(s));\n\
  polybench_prevent_dce(fprintf(stderr, \"%f\", (*s)[0]));\n\
  POLYBENCH_FREE_ARRAY(X);\n  POLYBENCH_FREE_ARRAY(s);\n  return 0;\n}\n";

/// A PolyBench-layout tree: utilities/ (our header and runtime) and two kernels.
fn mini_tree(dir: &Path) {
    let utilities = dir.join("utilities");
    std::fs::create_dir_all(&utilities).unwrap();
    let ours = Path::new(ROOT).join("benchmarks/polybench-dist/utilities");
    for file in ["polybench.h", "polybench.c"] {
        std::fs::copy(ours.join(file), utilities.join(file)).unwrap();
    }
    let kernels = [
        ("linear-algebra/blas/scale", "scale", SCALE_C, SCALE_H),
        ("datamining/colsum", "colsum", COLSUM_C, COLSUM_H),
    ];
    for (group, name, c, h) in kernels {
        let kernel_dir = dir.join(group);
        std::fs::create_dir_all(&kernel_dir).unwrap();
        std::fs::write(kernel_dir.join(format!("{name}.c")), c).unwrap();
        std::fs::write(kernel_dir.join(format!("{name}.h")), h).unwrap();
    }
    // Not a kernel file (its name is not its directory's): ignored.
    std::fs::write(dir.join("datamining/colsum/notes.c"), "int x;\n").unwrap();
}

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .arg("bench")
        .args(args)
        .current_dir(ROOT)
        .env("CI", "true")
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .output()
        .expect("run tenslift")
}

fn run_suite_dir(tree: &Path, out: &Path, dataset: &str) -> toml::Table {
    let done = bench(&[
        "--suite-dir",
        &tree.to_string_lossy(),
        "--layout",
        "polybench",
        "--dataset",
        dataset,
        "--no-runtime",
        "--targets",
        "numpy",
        "--timeout",
        "20",
        "--jobs",
        "2",
        "--out",
        &out.to_string_lossy(),
    ]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(0), "{stderr}");
    let text = std::fs::read_to_string(out.join("suite-manifest.toml")).unwrap();
    toml::from_str(&text).unwrap()
}

fn entry<'a>(manifest: &'a toml::Table, name: &str) -> &'a toml::Value {
    manifest["kernel"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no entry {name} in {manifest:?}"))
}

#[test]
fn every_kernel_of_a_polybench_tree_is_found_sized_by_its_header_and_lifted() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    mini_tree(&tree);
    let out = dir.path().join("run-mini");
    let manifest = run_suite_dir(&tree, &out, "MINI");
    assert_eq!(manifest["kernel"].as_array().unwrap().len(), 2);
    let scale = entry(&manifest, "scale");
    assert_eq!(scale["function"].as_str(), Some("kernel_scale"));
    assert_eq!(scale["suite"].as_str(), Some("linear-algebra/blas"));
    assert_eq!(scale["form"].as_str(), Some("distributed"));
    assert_eq!(scale["outputs"].as_array().unwrap().len(), 1);
    let sizes = &scale["sizes"]["MINI"];
    assert_eq!(
        (sizes["n"].as_integer(), sizes["m"].as_integer()),
        (Some(6), Some(5))
    );
    let params = scale["params"].as_array().unwrap();
    let a = params
        .iter()
        .find(|p| p["name"].as_str() == Some("A"))
        .unwrap();
    assert_eq!(a["shape"], toml::Value::Array(vec![6.into(), 5.into()]));
    let colsum = entry(&manifest, "colsum");
    assert_eq!(colsum["sizes"]["MINI"]["r"].as_integer(), Some(7));
    assert_eq!(colsum["outputs"], toml::Value::Array(vec!["s".into()]));

    // lift.csv: one row per kernel, each read by the frontend (not an
    // extraction error), whether or not it lifts on this branch.
    let lift = std::fs::read_to_string(out.join("lift.csv")).unwrap();
    for name in ["scale", "colsum"] {
        let row = lift
            .lines()
            .find(|l| l.starts_with(&format!("{name},")))
            .unwrap_or_else(|| panic!("no lift.csv row for {name}:\n{lift}"));
        assert!(
            !row.contains(",rejected,") && !row.contains(",error,"),
            "{row}"
        );
    }

    // Another dataset: the header's other sizes, the declared extents with them.
    let small = run_suite_dir(&tree, &dir.path().join("run-small"), "SMALL");
    let scale = entry(&small, "scale");
    assert_eq!(scale["sizes"]["SMALL"]["n"].as_integer(), Some(16));
    let a = &scale["params"].as_array().unwrap()[3];
    assert_eq!(a["shape"], toml::Value::Array(vec![16.into(), 12.into()]));
}

#[test]
fn the_generated_manifest_drives_the_c_baseline_driver() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    mini_tree(&tree);
    let out = dir.path().join("run");
    run_suite_dir(&tree, &out, "MINI");
    let python =
        std::env::var("TENSLIFT_PYTHON").unwrap_or_else(|_| format!("{ROOT}/.venv/bin/python"));
    let ran = Command::new(python)
        .arg(Path::new(ROOT).join("scripts/cref.py"))
        .arg("--manifest")
        .arg(out.join("suite-manifest.toml"))
        .args(["run", "--kernel", "colsum", "--dataset", "MINI", "--out"])
        .arg(dir.path().join("cref"))
        .output()
        .expect("run cref.py");
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(ran.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(report["outputs"], serde_json::json!(["s"]));
}

#[test]
fn a_directory_without_the_suite_header_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let done = bench(&[
        "--suite-dir",
        &dir.path().to_string_lossy(),
        "--layout",
        "polybench",
        "--no-runtime",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert_eq!(done.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(stderr.contains("no utilities/polybench.h"), "{stderr}");
    assert!(!out.join("suite-manifest.toml").exists());
}
