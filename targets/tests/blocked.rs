//! NumPy computes whole-array element-wise stores in blocks of rows
//! (`emit::chunk`): which stores are blocked, and the shape of the loop.
//! That the blocks compute the same values is checked by running the
//! `blocked_*` fixtures (execute.rs), whose sizes make a ragged last block.

use tenslift_targets::{emit, parse_program, EmitOptions, Target};

fn numpy(text: &str) -> String {
    let p = parse_program("t.tensir", text).expect("parses");
    emit(&p, Target::Numpy, &EmitOptions::default()).expect("emits")
}

#[test]
fn an_elementwise_chain_runs_in_blocks_of_rows() {
    let code = numpy(
        "func f(n: size, m: size, a: f64, A: f64[n, m], row: f64[m], col: f64[n, 1], B: inout f64[n, m]) {
  B = add(mul(sqrt(A), row), sub(mul(B, a), col));
}
",
    );
    assert!(
        code.contains("_r = max(1, 262144 // max(1, 8 * (m)))"),
        "{code}"
    );
    assert!(code.contains("for _lo in range(0, n, _r):"), "{code}");
    // Leaves of the leading extent are sliced, the row vector and the
    // scalar are read whole, the destination is written block by block.
    assert!(code.contains("np.sqrt(A[_lo:_hi]"), "{code}");
    assert!(code.contains("col[_lo:_hi]"), "{code}");
    assert!(code.contains("* row") || code.contains("row,"), "{code}");
    assert!(!code.contains("row[_lo"), "{code}");
    assert!(code.contains("out=B[_lo:_hi])"), "{code}");
}

#[test]
fn scalar_arithmetic_is_recomputed_in_each_block() {
    let code = numpy(
        "func f(n: size, a: f64, x: f64[n], y: out f64[n]) {
  y = add(mul(x, cast(n, f64)), exp(mul(x, sub(1.0, a))));
}
",
    );
    assert!(code.contains("for _lo in range(0, n, _r):"), "{code}");
    assert!(code.contains("(1.0 - a)"), "{code}");
    assert!(
        code.contains("np.asarray(np.int64(n)).astype(np.float64)"),
        "{code}"
    );
}

#[test]
fn row_invariant_subtrees_are_computed_once_before_the_loop() {
    // A scalar reduced from the array and a vector broadcast over the rows.
    let code = numpy(
        "func f(n: size, m: size, x: f64[n, m], u: f64[m], v: f64[m], y: out f64[n, m]) {
  y = add(div(x, sum(x, axes=[0, 1])), exp(mul(x, sub(u, v))));
}
",
    );
    let (before, inside) = code
        .split_once("for _lo in range(0, n, _r):")
        .expect("blocked");
    assert!(before.contains("np.sum(x, axis=(0, 1)"), "{code}");
    assert!(before.contains("(u - v)"), "{code}");
    assert!(!inside.contains("np.sum"), "{code}");
    assert!(!inside.contains("(u - v)"), "{code}");
}

#[test]
fn an_outer_product_is_blocked_by_its_row_vector() {
    // vec_lerp after factoring: `A ⊗ (x - y) + y`.
    let code = numpy(
        "func l(k: size, m: size, A: f64[k], x: f64[m], y: f64[m], r: out f64[k, m]) {
  r = add(y, einsum(\"b,a->ab\", sub(x, y), A));
}
",
    );
    let (before, inside) = code
        .split_once("for _lo in range(0, k, _r):")
        .expect("blocked");
    assert!(before.contains("(x - y)"), "{code}");
    assert!(
        inside.contains("np.multiply.outer(A[_lo:_hi], _t0, out=r[_lo:_hi])"),
        "{code}"
    );
    assert!(
        inside.contains("np.add(y, r[_lo:_hi], out=r[_lo:_hi])"),
        "{code}"
    );
}

#[test]
fn rows_per_block_are_a_number_for_constant_rows() {
    let code = numpy(
        "func f(n: size, x: f32[n, 256], y: f32[n, 256], z: out f32[n, 256]) {
  z = add(mul(x, y), exp(x));
}
",
    );
    assert!(code.contains("_r = 256\n"), "{code}");
}

#[test]
fn what_is_not_blocked() {
    let cases = [
        // One operation: no temporary to keep in cache.
        "func f(n: size, x: f64[n], y: out f64[n]) {\n  y = mul(x, 2.0);\n}\n",
        // Two operations in the destination (`np.multiply(x, z, out=y)`,
        // `np.add(w, y, out=y)`): no temporary, and 6 passes whole against
        // 4 blocked, not enough to pay.
        "func f(n: size, x: f64[n], z: f64[n], w: f64[n], y: out f64[n]) {\n  y = add(mul(x, z), w);\n}\n",
        // A reduction.
        "func f(n: size, x: f64[n, n], y: out f64[n]) {\n  y = add(sum(mul(x, x), axes=[1]), 1.0);\n}\n",
        // A region of the destination.
        "func f(n: size, x: f64[n], y: inout f64[n]) {\n  y[1:n] = add(mul(x[1:n], 2.0), 1.0);\n}\n",
        // A constant shape the caches hold whole (4 KiB).
        "func f(x: f64[16, 32], y: out f64[16, 32]) {\n  y = add(mul(x, 2.0), 1.0);\n}\n",
        // Inside a loop.
        "func f(t: size, n: size, x: inout f64[n]) {\n  for k in 0..t {\n    x = add(mul(x, 0.5), 1.0);\n  }\n}\n",
        // A leaf whose leading axis is neither the destination's nor 1.
        "func f(n: size, x: f64[n, n], y: out f64[n, n]) {\n  y = add(mul(transpose(x, perm=[1, 0]), 2.0), 1.0);\n}\n",
    ];
    for text in cases {
        let code = numpy(text);
        assert!(!code.contains("_lo"), "blocked:\n{text}\n{code}");
    }
}

#[test]
fn only_numpy_blocks() {
    let text = "func f(n: size, x: f64[n], y: out f64[n]) {\n  y = add(mul(x, 2.0), exp(x));\n}\n";
    let p = parse_program("t.tensir", text).expect("parses");
    let opts = EmitOptions {
        sizes: [("n".to_string(), 100_000)].into_iter().collect(),
    };
    for target in Target::ALL {
        let code = emit(&p, target, &opts).expect("emits");
        assert_eq!(
            code.contains("_lo"),
            target == Target::Numpy,
            "{target}:\n{code}"
        );
    }
}
