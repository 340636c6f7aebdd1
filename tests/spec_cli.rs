//! Command-line behaviour of `tenslift spec` on corpus kernels: the text
//! spec, the JSON shape, sizes for a general strided view and for a
//! recurrence whose spec explodes at the usual sizes, `--eval` on `.npy`
//! inputs, and the exit codes.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use tenslift_targets::dtype::DType;
use tenslift_targets::interp::{Array, Data};
use tenslift_targets::npy;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const GEMM: &str = "benchmarks/polybench/gemm.c";
const ATTENTION: &str = "benchmarks/llama/transformer_part1.c";

fn tenslift(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(ROOT)
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .args(args)
        .output()
        .expect("run tenslift")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json_of(args: &[&str]) -> Value {
    let out = tenslift(args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("spec --json prints JSON")
}

#[test]
fn gemm_text_spec_at_explicit_sizes() {
    let out = tenslift(&[
        "spec",
        GEMM,
        "--function",
        "kernel_gemm",
        "--sizes",
        "ni=2,nj=3,nk=2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("spec_gemm_2_3_2", stdout(&out));
}

#[test]
fn json_has_sizes_inputs_and_every_output_element() {
    let v = json_of(&["spec", GEMM, "--function", "kernel_gemm", "--json"]);
    let sizes = v["sizes"].as_object().expect("sizes object");
    let (ni, nj) = (sizes["ni"].as_u64().unwrap(), sizes["nj"].as_u64().unwrap());
    let mut values: Vec<u64> = sizes.values().filter_map(Value::as_u64).collect();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), 3, "distinct sizes: {sizes:?}");
    let inputs: Vec<&str> = v["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    for name in ["A", "B", "C", "alpha", "beta"] {
        assert!(inputs.contains(&name), "{name} in {inputs:?}");
    }
    let c = &v["outputs"][0];
    assert_eq!(c["name"], "C");
    assert_eq!(c["shape"], serde_json::json!([ni, nj]));
    assert_eq!(
        c["elements"].as_array().unwrap().len() as u64,
        ni * nj,
        "one entry per element"
    );
    assert!(c["elements"][0]["expr"]
        .as_str()
        .unwrap()
        .contains("C[0,0]*beta"));
}

#[test]
fn strided_key_cache_view_gets_non_overlapping_sizes() {
    let v = json_of(&[
        "spec",
        ATTENTION,
        "--function",
        "transformer_part1",
        "--json",
    ]);
    let size = |name: &str| v["sizes"][name].as_i64().expect(name);
    // key_cache[t*kv_dim + head*head_size + i]: head's row slice must fit.
    assert!(size("kv_dim") >= (size("head") + 1) * size("head_size"));
    let att = &v["outputs"][0];
    assert_eq!(att["shape"], serde_json::json!([size("pos") + 1]));
}

#[test]
fn explicit_overlapping_sizes_are_refused() {
    let out = tenslift(&[
        "spec",
        ATTENTION,
        "--function",
        "transformer_part1",
        "--sizes",
        "pos=2,head=3,head_size=4,kv_dim=5",
    ]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        stderr(&out).contains("rows of `key_cache` overlap"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn gramschmidt_falls_back_to_sizes_with_a_buildable_spec() {
    let v = json_of(&[
        "spec",
        "benchmarks/polybench/gramschmidt.c",
        "--function",
        "kernel_gramschmidt",
        "--json",
    ]);
    assert_eq!(v["sizes"], serde_json::json!({"m": 3, "n": 2}));
}

fn write(dir: &Path, name: &str, shape: Vec<usize>, values: Vec<f64>) {
    npy::write(
        &dir.join(format!("{name}.npy")),
        &Array::from_f64(DType::F64, shape, values),
    )
    .unwrap();
}

#[test]
fn eval_writes_numeric_outputs_in_the_c_buffer_shape() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path();
    // C = alpha*A*B + beta*C at ni=2, nj=3, nk=2.
    write(inputs, "alpha", vec![], vec![2.0]);
    write(inputs, "beta", vec![], vec![0.5]);
    write(inputs, "A", vec![2, 2], vec![1.0, 2.0, 3.0, 4.0]);
    write(inputs, "B", vec![2, 3], vec![1.0, 0.0, -1.0, 0.5, 1.0, 2.0]);
    write(inputs, "C", vec![2, 3], vec![2.0; 6]);
    let out_dir = inputs.join("out");
    let out = tenslift(&[
        "spec",
        GEMM,
        "--function",
        "kernel_gemm",
        "--sizes",
        "ni=2,nj=3,nk=2",
        "--eval",
        inputs.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let c = npy::read(&out_dir.join("C.npy")).unwrap();
    assert_eq!(c.shape, vec![2, 3]);
    // Row 0: 2*[1*1+2*0.5, 1*0+2*1, -1+2*2] + 1 = [5, 5, 7].
    // Row 1: 2*[3+2, 0+4, -3+8] + 1 = [11, 9, 11].
    assert_eq!(c.data, Data::Float(vec![5.0, 5.0, 7.0, 11.0, 9.0, 11.0]));
}

#[test]
fn eval_reports_a_missing_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = tenslift(&[
        "spec",
        GEMM,
        "--function",
        "kernel_gemm",
        "--eval",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(4));
    assert!(stderr(&out).contains("missing input"), "{}", stderr(&out));
}

#[test]
fn exit_codes_for_rejected_files_unknown_functions_and_bad_sizes() {
    let rejected = tenslift(&["spec", "tests/fixtures/extract/negative/goto_label.c"]);
    assert_eq!(rejected.status.code(), Some(1));
    assert!(stderr(&rejected).contains("`goto` is not supported"));

    let unknown = tenslift(&["spec", GEMM, "--function", "no_such_kernel"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(stderr(&unknown).contains("no function named `no_such_kernel`"));

    let bad_sizes = tenslift(&[
        "spec",
        GEMM,
        "--function",
        "kernel_gemm",
        "--sizes",
        "ni=two",
    ]);
    assert_eq!(bad_sizes.status.code(), Some(4));
    assert!(stderr(&bad_sizes).contains("malformed size list `ni=two`"));

    let not_a_size = tenslift(&["spec", GEMM, "--function", "kernel_gemm", "--sizes", "q=3"]);
    assert_eq!(not_a_size.status.code(), Some(4));
    assert!(stderr(&not_a_size).contains("`q` is not a size parameter"));
}

#[test]
fn eval_writes_a_pure_output_without_an_initial_file_in_the_spec_shape() {
    let dir = tempfile::tempdir().unwrap();
    // att[t] for t <= pos is fully written; its initial contents are never read.
    let (pos, head, head_size, kv_dim) = (1usize, 1usize, 2usize, 4usize);
    write(dir.path(), "q", vec![kv_dim], vec![0.0, 0.0, 1.0, 2.0]);
    write(
        dir.path(),
        "key_cache",
        vec![pos + 1, kv_dim],
        vec![9.0, 9.0, 3.0, 4.0, 9.0, 9.0, 5.0, 6.0],
    );
    let sizes = format!("pos={pos},head={head},head_size={head_size},kv_dim={kv_dim}");
    let out = tenslift(&[
        "spec",
        ATTENTION,
        "--function",
        "transformer_part1",
        "--sizes",
        &sizes,
        "--eval",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let att = npy::read(&dir.path().join("spec-outputs").join("att.npy")).unwrap();
    assert_eq!(att.shape, vec![pos + 1]);
    let root2 = 2f64.sqrt();
    // The f32 output rounds the exact value (1*3 + 2*4)/sqrt(2).
    let expected = [11.0 / root2, 17.0 / root2].map(|v| v as f32 as f64);
    assert_eq!(att.data, Data::Float(expected.to_vec()));
}
