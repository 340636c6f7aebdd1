//! End to end through the real binary: row-pointer matrices, struct
//! parameters (by value, by pointer, global; nested and `void *` fields) and
//! loop-free functions lift to NumPy and pass `tenslift verify`'s bounded
//! check and differential run against gcc-compiled C (the generated driver
//! builds the row pointers and the structs), and state their preconditions.

use std::process::Command;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn tenslift(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(ROOT)
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .env("TENSLIFT_PYTHON", format!("{ROOT}/.venv/bin/python"))
        .args(args)
        .output()
        .expect("run tenslift");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Every kernel of `file` passes bounded and differential with NumPy.
fn verifies(file: &str, kernels: usize) {
    let (code, out, err) = tenslift(&["verify", file, "--targets", "numpy", "--json"]);
    assert_eq!(code, Some(0), "{file}: {err}");
    let records = json_lines(&out);
    assert_eq!(records.len(), kernels, "{file}: {out}");
    for r in records {
        assert_eq!(r["bounded"], "pass", "{file}: {r}");
        assert_eq!(r["differential"], "pass", "{file}: {r}");
    }
}

#[test]
fn row_pointer_kernels_verify_against_the_c() {
    for k in ["matmul", "transpose", "matvec", "scale3d"] {
        verifies(&format!("benchmarks/rowptr/{k}_rowptr.c"), 1);
    }
    // Not in the manifest: the generated C driver builds the row pointers.
    verifies("tests/fixtures/extract/positive/row_pointers.c", 2);
}

#[test]
fn struct_kernels_verify_against_the_c() {
    for f in [
        "darknet-struct/scale_matrix.c",
        "darknet-struct/matrix_add.c",
        "darknet-struct/normalize_gray_image.c",
        "darknet-struct/layer_bias.c",
        "darknet-struct/layer_update.c",
        "tensor-desc/tensor_add.c",
        "tensor-desc/tensor_matvec.c",
    ] {
        verifies(&format!("benchmarks/{f}"), 1);
    }
    // By value, by pointer with a nested path, and a global struct.
    verifies("tests/fixtures/extract/positive/struct_fields.c", 3);
}

#[test]
fn loop_free_functions_all_lift_and_verify() {
    for f in ["add", "lerp", "lerp_into"] {
        verifies(&format!("benchmarks/scalar/{f}.c"), 1);
    }
    // Several loop-free functions in one file: every one is lifted.
    verifies("tests/fixtures/extract/positive/loop_free.c", 3);
}

#[test]
fn preconditions_and_struct_calling_notes_are_stated() {
    let (code, out, err) = tenslift(&[
        "lift",
        "benchmarks/darknet-struct/scale_matrix.c",
        "--target",
        "numpy",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let r = &json_lines(&out)[0];
    let pre: Vec<&str> = r["preconditions"]
        .as_array()
        .expect("preconditions")
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert!(
        pre.iter().any(|p| p.contains("m_vals = m.vals")
            && p.contains("passed by value")
            && p.contains("m_rows = m.rows")),
        "{pre:?}"
    );
    assert!(
        pre.iter()
            .any(|p| p.contains("`m_vals` is passed as row pointers") && p.contains("disjoint")),
        "{pre:?}"
    );
    let (code, module, err) = tenslift(&[
        "lift",
        "benchmarks/darknet-struct/scale_matrix.c",
        "--target",
        "numpy",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(module.contains("# precondition: "), "{module}");
    assert!(
        module.contains("Preconditions (the C relies on them):")
            && module.contains("    - the C struct `m`"),
        "{module}"
    );
    assert!(
        module.contains("def scale_matrix(m_rows, m_cols, m_vals, scale)"),
        "{module}"
    );
}

#[test]
fn refused_struct_and_row_uses_are_located() {
    let (code, _, err) = tenslift(&[
        "extract",
        "tests/fixtures/extract/negative/struct_field_problems.c",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("struct_field_problems.c:14:3: error[TL033]"),
        "{err}"
    );
    assert!(
        err.contains("struct_field_problems.c:19:14: error[TL030]"),
        "{err}"
    );
    assert!(
        err.contains("struct_field_problems.c:24:16: error[TL033]"),
        "{err}"
    );
    assert!(
        err.contains("struct_field_problems.c:32:7: error[TL033]: array field `M->m` is written"),
        "{err}"
    );
    let (code, _, err) = tenslift(&[
        "extract",
        "tests/fixtures/extract/negative/row_alias_write.c",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("row_alias_write.c:7:7: error[TL026]")
            && err.contains("a row of a row-pointer matrix"),
        "{err}"
    );
}
