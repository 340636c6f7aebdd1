//! `for` loops (kept by partial lifting): syntax, scoping rules, located
//! errors, and the interpreter's in-place semantics.

use std::collections::HashMap;

use tenslift_targets::interp::{run, Array};
use tenslift_targets::{
    emit, parse_program, print_program, DType, Dim, EmitError, EmitOptions, Stmt, Target,
};

fn error_of(text: &str) -> String {
    match parse_program("t.tensir", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(d) => d.to_string(),
    }
}

const TRISOLV: &str = "func trisolv(n: size, L: f64[n, n], b: f64[n], x: inout f64[n]) {
  for i in 0..n {
    let row = L[i, 0:i];
    x[i] = div(sub(b[i], dot(row, x[0:i])), L[i, i]);
  }
}
";

#[test]
fn a_loop_parses_with_its_variable_as_a_dim_symbol() {
    let p = parse_program("t.tensir", TRISOLV).expect("parses");
    let [Stmt::Loop {
        var,
        start,
        stop,
        body,
    }] = p.body.as_slice()
    else {
        panic!("one loop expected: {:?}", p.body)
    };
    assert_eq!(&**var, "i");
    assert_eq!((start, stop), (&Dim::constant(0), &Dim::sym("n")));
    assert_eq!(body.len(), 2);
    let Stmt::Let { value, .. } = &body[0] else {
        panic!("let expected")
    };
    assert_eq!(value.shape(), &[Dim::sym("i")]);
}

#[test]
fn nested_loops_print_and_parse_back_unchanged() {
    let text = "func f(tsteps: size, n: size, A: inout f64[n, n]) {
  for t in 0..tsteps {
    for i in 1..n - 1 {
      let left = A[i, 0:i];
      A[i, 0:i] = add(left, cast(t, f64));
      A[i, i] = mul(A[i - 1, i], 0.5);
    }
  }
}
";
    let p = parse_program("t.tensir", text).expect("parses");
    let printed = print_program(&p);
    assert!(printed.contains("  for t in 0..tsteps {\n    for i in 1..n - 1 {\n      let left"));
    let again = parse_program("printed.tensir", &printed).expect("reparses");
    assert_eq!(again, p);
}

#[test]
fn body_lets_are_scoped_to_one_iteration() {
    // The same name in two sibling loops and after them is fine.
    let ok = "func f(n: size, x: inout f64[n]) {
  for i in 0..n {
    let v = mul(x[i], 2.0);
    x[i] = v;
  }
  for j in 0..n {
    let v = add(x[j], 1.0);
    x[j] = v;
  }
  let v = x;
  x = add(v, v);
}
";
    parse_program("t.tensir", ok).expect("sibling scopes");
    let e = error_of(
        "func f(n: size, x: inout f64[n]) {
  for i in 0..n {
    let v = x[i];
  }
  x = broadcast(v, [n]);
}
",
    );
    assert!(
        e.starts_with("t.tensir:5:17: error: `v` is not defined"),
        "{e}"
    );
}

#[test]
fn the_loop_variable_is_out_of_scope_after_the_loop() {
    let e = error_of(
        "func f(n: size, x: inout f64[n]) {
  for i in 0..n {
    x[i] = 1.0;
  }
  x[0:i] = x[0:i];
}
",
    );
    assert!(
        e.contains("`i` in dimension `i` is not a size parameter"),
        "{e}"
    );
    assert!(e.starts_with("t.tensir:5:"), "{e}");
}

#[test]
fn shadowing_and_return_inside_a_loop_are_rejected_where_they_occur() {
    let e = error_of(
        "func f(n: size, x: inout f64[n]) {
  for n in 0..3 {
    x[0] = 1.0;
  }
}
",
    );
    assert!(e.contains("loop variable `n` is already bound"), "{e}");
    let e = error_of(
        "func f(n: size, x: f64[n]) -> f64 {
  for i in 0..n {
    return x[i];
  }
}
",
    );
    assert!(
        e.starts_with("t.tensir:3:5: error: `return` is not allowed inside a loop"),
        "{e}"
    );
    let e = error_of(
        "func f(n: size, x: inout f64[n]) {
  for i in 0..n {
    let i = 2;
  }
}
",
    );
    assert!(e.contains("`i` is already bound"), "{e}");
}

#[test]
fn loop_bounds_may_use_enclosing_loop_variables_only() {
    parse_program(
        "t.tensir",
        "func f(n: size, A: inout f64[n, n]) {
  for i in 0..n {
    for j in 0..i {
      A[i, j] = 0.0;
    }
  }
}
",
    )
    .expect("triangular nest");
    let e = error_of(
        "func f(n: size, A: inout f64[n, n]) {
  for i in 0..m {
    A[i, 0] = 0.0;
  }
}
",
    );
    assert!(
        e.contains("`m` in dimension `m` is not a size parameter"),
        "{e}"
    );
}

fn vector(values: &[f64]) -> Array {
    Array::from_f64(DType::F64, vec![values.len()], values.to_vec())
}

#[test]
fn the_interpreter_runs_a_recurrence_in_place() {
    let p = parse_program("t.tensir", TRISOLV).expect("parses");
    // L = [[2, 0, 0], [1, 4, 0], [3, 2, 5]], b = L @ [1, 2, 3].
    let l = Array::from_f64(
        DType::F64,
        vec![3, 3],
        vec![2.0, 0.0, 0.0, 1.0, 4.0, 0.0, 3.0, 2.0, 5.0],
    );
    let b = vector(&[2.0, 9.0, 22.0]);
    let args = HashMap::from([
        ("L".to_string(), l),
        ("b".to_string(), b),
        ("x".to_string(), vector(&[0.0, 0.0, 0.0])),
    ]);
    let sizes = HashMap::from([("n".to_string(), 3)]);
    let out = run(&p, &sizes, &args).expect("runs");
    assert_eq!(out.arrays["x"], vector(&[1.0, 2.0, 3.0]));
}

#[test]
fn the_interpreter_iterates_a_time_loop_and_skips_empty_ranges() {
    let p = parse_program(
        "t.tensir",
        "func f(tsteps: size, n: size, x: inout f64[n]) {
  for t in 0..tsteps {
    x = add(x, cast(t, f64));
  }
  for i in n..1 {
    x = mul(x, 0.0);
  }
}
",
    )
    .expect("parses");
    let sizes = HashMap::from([("tsteps".to_string(), 4), ("n".to_string(), 2)]);
    let args = HashMap::from([("x".to_string(), vector(&[1.0, 10.0]))]);
    let out = run(&p, &sizes, &args).expect("runs");
    // 0 + 1 + 2 + 3 added; the second loop has no iterations.
    assert_eq!(out.arrays["x"], vector(&[7.0, 16.0]));
}

fn emit_at(text: &str, target: Target, sizes: &[(&str, i64)]) -> Result<String, EmitError> {
    let p = parse_program("t.tensir", text).expect("parses");
    let sizes = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    emit(&p, target, &EmitOptions { sizes })
}

#[test]
fn stablehlo_unrolls_shape_dependent_loops_up_to_a_limit() {
    let small = emit_at(TRISOLV, Target::Hlo, &[("n", 4)]).expect("unrolls");
    assert!(!small.contains("stablehlo.while"), "{small}");
    // Row i of the recurrence reads the first i elements of x.
    assert!(small.contains("tensor<3xf64>"), "{small}");
    match emit_at(TRISOLV, Target::Hlo, &[("n", 30_000)]) {
        Err(EmitError::Unsupported(m)) => {
            assert!(
                m.contains("the loop over `i`") && m.contains("limit"),
                "{m}"
            )
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn time_loops_become_one_compiled_loop_whatever_the_trip_count() {
    let text = "func f(tsteps: size, n: size, A: inout f64[n]) {
  for t in 0..tsteps {
    A[1:n] = mul(A[0:n - 1], cast(t, f64));
  }
}
";
    let hlo = emit_at(text, Target::Hlo, &[("tsteps", 1_000_000), ("n", 8)]).expect("emits");
    assert_eq!(hlo.matches("stablehlo.while").count(), 1, "{hlo}");
    // A recurrence indexed by the variable: dynamic slices in one loop.
    let prefix = "func g(n: size, x: i32[n], y: inout i32[n]) {
  for i in 1..n {
    y[i] = add(y[i - 1], x[i]);
  }
}
";
    let hlo = emit_at(prefix, Target::Hlo, &[("n", 100_000)]).expect("emits");
    assert_eq!(hlo.matches("stablehlo.while").count(), 1, "{hlo}");
    assert!(hlo.contains("stablehlo.dynamic_slice"), "{hlo}");
    assert!(hlo.contains("stablehlo.dynamic_update_slice"), "{hlo}");
    let jax = emit_at(text, Target::Jax, &[]).expect("emits");
    assert!(
        jax.contains("jax.lax.fori_loop(0, tsteps, _loop0_body, (A,))"),
        "{jax}"
    );
    let numpy = emit_at(text, Target::Numpy, &[]).expect("emits");
    assert!(
        numpy.contains("        for t in range(0, tsteps):\n"),
        "{numpy}"
    );
}

const SCAN: &str = "func f(n: size, x: f64[n], y: out f64[n]) {
  var s: f64[];
  s = 0.0;
  for i in 0..n {
    s = add(s, x[i]);
    y[i] = s;
  }
}
";

#[test]
fn a_var_carries_state_across_iterations_and_is_no_parameter() {
    let p = parse_program("t.tensir", SCAN).expect("parses");
    assert!(print_program(&p).ends_with(SCAN), "{}", print_program(&p));
    let sizes = HashMap::from([("n".to_string(), 4)]);
    let args = HashMap::from([
        ("x".to_string(), vector(&[1.0, 2.0, 3.0, 4.0])),
        ("y".to_string(), vector(&[0.0; 4])),
    ]);
    let out = run(&p, &sizes, &args).expect("runs");
    assert_eq!(out.arrays["y"], vector(&[1.0, 3.0, 6.0, 10.0]));
    assert!(!out.arrays.contains_key("s"), "{:?}", out.arrays.keys());
    // JAX carries it through the loop like a written array; the caller
    // only gets the parameters back.
    let jax = emit_at(SCAN, Target::Jax, &[]).expect("emits");
    assert!(
        jax.contains("(s, y,) = _state") || jax.contains("y, s,"),
        "{jax}"
    );
    assert!(jax.contains("return (y,), None"), "{jax}");
}

#[test]
fn a_var_is_declared_at_the_top_level_and_written_before_it_is_read() {
    let e = error_of(
        "func f(n: size, y: out f64[n]) {
  var s: f64[];
  y[0] = s;
}
",
    );
    assert!(
        e.starts_with("t.tensir:3:3: error: `var s` is read before a store writes it"),
        "{e}"
    );
    let e = error_of(
        "func f(n: size, y: out f64[n]) {
  for i in 0..n {
    var s: f64[];
    s = 1.0;
    y[i] = s;
  }
}
",
    );
    assert!(e.contains("`var` is allowed only at the top level"), "{e}");
    let e = error_of(
        "func f(n: size, y: out f64[n]) {
  var y: f64[n];
  y = 1.0;
}
",
    );
    assert!(e.contains("`y` is already bound"), "{e}");
}

#[test]
fn jax_writes_a_stencil_interior_in_a_compiled_loop_as_one_select() {
    let text = "func smooth(tsteps: size, n: size, A: inout f64[n, n], B: inout f64[n, n]) {
  for t in 0..tsteps {
    B[1:n - 1, 1:n - 1] = mul(0.5, add(A[0:n - 2, 1:n - 1], A[2:n, 1:n - 1]));
    A[0:n - 1, 1:n - 1] = B[1:n, 1:n - 1];
  }
}
";
    let jax = emit_at(text, Target::Jax, &[]).expect("emits");
    // The interior (every axis past a border) by the select helper ...
    assert!(
        jax.contains("B = _pad_store(B, ") && jax.contains("((1, n - 1), (1, n - 1)))"),
        "{jax}"
    );
    assert!(jax.contains("def _pad_store(a, v, box):"), "{jax}");
    // ... a box reaching an edge of the array by the update.
    assert!(jax.contains("A = A.at[0:n - 1, 1:n - 1].set("), "{jax}");
    // Outside a compiled loop nothing changes.
    let flat = "func f(n: size, A: inout f64[n, n]) {
  A[1:n - 1, 1:n - 1] = mul(2.0, A[1:n - 1, 1:n - 1]);
}
";
    let jax = emit_at(flat, Target::Jax, &[]).expect("emits");
    assert!(!jax.contains("_pad_store"), "{jax}");
}

#[test]
fn stablehlo_updates_in_place_in_a_while_loop_except_a_stencil_interior() {
    let text = "func smooth(tsteps: size, n: size, A: inout f64[n, n], B: inout f64[n, n], x: inout f64[n]) {
  for t in 0..tsteps {
    B[1:n - 1, 1:n - 1] = mul(0.5, add(A[0:n - 2, 1:n - 1], A[2:n, 1:n - 1]));
    A[0:n - 1, 1:n - 1] = B[1:n, 1:n - 1];
    x[1:n - 1] = mul(0.5, add(x[0:n - 2], x[2:n]));
  }
}
";
    let hlo = emit_at(text, Target::Hlo, &[("tsteps", 3), ("n", 6)]).expect("emits");
    let (outside, body) = hlo.split_once("stablehlo.while").expect("a while loop");
    // The interior of B: one select over the array; the edge-reaching box
    // of A and the rank-1 interior of x: in-place updates.
    assert_eq!(body.matches("stablehlo.select").count(), 1, "{hlo}");
    assert_eq!(
        body.matches("stablehlo.dynamic_update_slice").count(),
        2,
        "{hlo}"
    );
    assert!(!outside.contains("dynamic_update_slice"), "{hlo}");
    // Outside a loop a store runs once and keeps its select.
    let flat = "func f(n: size, x: inout f64[n]) {
  x[1:n - 1] = mul(2.0, x[1:n - 1]);
}
";
    let hlo = emit_at(flat, Target::Hlo, &[("n", 6)]).expect("emits");
    assert!(hlo.contains("stablehlo.select"), "{hlo}");
    assert!(!hlo.contains("dynamic_update_slice"), "{hlo}");
}

#[test]
fn jax_sums_a_stored_array_over_its_leading_axis_as_a_product_with_ones() {
    let text = "func f(n: size, m: size, A: f64[n, m], B: f64[n, m], C: i64[n, m], x: f64[m], s: out f64[m], r: out f64[n], t: out f64[m], c: out i64[m]) {
  s[0:m] = sum(A[0:n, 0:m], axes=[0]);
  r[0:n] = sum(A, axes=[1]);
  t[0:m] = sum(mul(B, x), axes=[0]);
  c[0:m] = sum(C, axes=[0]);
}
";
    let jax = emit_at(text, Target::Jax, &[]).expect("emits");
    assert!(jax.contains("_sum_lead(A[0:n, 0:m])"), "{jax}");
    assert!(jax.contains("def _sum_lead(a):"), "{jax}");
    // The last axis, a computed operand (which XLA fuses with its
    // reduction), and integers keep the reduction.
    assert!(jax.contains("jnp.sum(A, axis=(1,)"), "{jax}");
    assert!(jax.contains("jnp.sum((B * x), axis=(0,)"), "{jax}");
    assert!(jax.contains("jnp.sum(C, axis=(0,)"), "{jax}");
}
