use std::collections::BTreeMap;

use tenslift_targets::parse_program;

use super::*;
use crate::algebra::Rat;
use tenslift_frontend::ir::ScalarType;

fn sizes(pairs: &[(&str, i64)]) -> Sizes {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect::<BTreeMap<_, _>>()
}

fn run(text: &str, at: &[(&str, i64)]) -> ProgramSpec {
    let program = parse_program("t.tensir", text).expect("test program parses");
    execute(&program, &sizes(at)).expect("test program executes")
}

fn sym(name: &str, index: &[u32]) -> Value {
    Symbol::element(name, index).to_expr()
}

#[test]
fn matmul_sums_products_of_input_symbols() {
    let spec = run(
        "func f(n: size, A: f64[n, n], x: f64[n], y: out f64[n]) {\n  y = matmul(A, x);\n}\n",
        &[("n", 2)],
    );
    let y = &spec.output("y").expect("y is an output").value;
    let expected = sym("A", &[1, 0]) * sym("x", &[0]) + sym("A", &[1, 1]) * sym("x", &[1]);
    assert_eq!(y.elems()[1], expected);
}

#[test]
fn region_store_keeps_untouched_elements() {
    let spec = run(
        "func f(n: size, x: inout f64[n]) {\n  x[1:n] = mul(2.0, x[0:n - 1]);\n}\n",
        &[("n", 3)],
    );
    let x = &spec.output("x").expect("x is an output").value;
    assert_eq!(x.elems()[0], sym("x", &[0]));
    assert_eq!(x.elems()[2], sym("x", &[1]) * Value::int(2));
}

#[test]
fn trunc_div_and_floor_are_distinct_but_constants_fold_like_c() {
    let spec = run(
        "func f(a: i32) -> i32 {\n  return add(trunc_div(-7i32, 2i32), rem(-7i32, 2i32));\n}\n",
        &[],
    );
    assert_eq!(
        spec.output("return").expect("returns").value.elems()[0],
        Value::int(-4)
    );
}

#[test]
fn narrow_integer_arithmetic_wraps_and_casts_truncate() {
    let spec = run(
        "func f(a: u8, b: f64) -> u8 {\n  return add(add(a, 250u8), cast(b, u8));\n}\n",
        &[],
    );
    let got = &spec.output("return").expect("returns").value.elems()[0];
    let a = Symbol::scalar("a").to_expr();
    let b = Symbol::scalar("b").to_expr();
    // The inner wraps are absorbed: wrapping is arithmetic modulo 2^8.
    let expected = (a + Value::int(250) + b.trunc()).wrap(8, false);
    assert_eq!(*got, expected);
}

#[test]
fn float_literals_are_their_shortest_decimal() {
    let spec = run("func f() -> f64 {\n  return mul(0.1, -2.5);\n}\n", &[]);
    let got = &spec.output("return").expect("returns").value.elems()[0];
    assert_eq!(
        *got,
        Value::constant(Rat::new(-1, 4).expect("nonzero denominator"))
    );
}

#[test]
fn missing_sizes_and_bad_slices_are_errors() {
    let program = parse_program(
        "t.tensir",
        "func f(n: size, x: inout f64[n]) {\n  x[0:n] = x[1:n + 1];\n}\n",
    )
    .expect("parses");
    assert!(matches!(
        execute(&program, &sizes(&[])),
        Err(TensirSpecError::MissingSize { .. })
    ));
    assert!(matches!(
        execute(&program, &sizes(&[("n", 3)])),
        Err(TensirSpecError::SliceOutOfBounds { .. })
    ));
}

#[test]
fn einsum_transpose_and_triangles_agree_with_loops() {
    let spec = run(
        "func f(n: size, A: f64[n, n], B: out f64[n, n], C: out f64[n, n]) {\n  B = einsum(\"ij,kj->ik\", A, A);\n  C = triu(matmul(A, transpose(A, perm=[1, 0])), k=1);\n}\n",
        &[("n", 3)],
    );
    let b = &spec.output("B").expect("B").value;
    let c = &spec.output("C").expect("C").value;
    assert_eq!(b.elems()[1], c.elems()[1]);
    assert!(c.elems()[3].is_zero());
    assert!(!b.elems()[3].is_zero());
}

#[test]
fn a_rank_zero_array_is_c_element_zero() {
    let spec = run(
        "func f(n: size, x: f64[n], s: inout f64[]) {\n  s = add(s, sum(x));\n}\n",
        &[("n", 2)],
    );
    let s = &spec.output("s").expect("s").value;
    assert_eq!(
        s.elems()[0],
        sym("s", &[0]) + sym("x", &[0]) + sym("x", &[1])
    );
}

#[test]
fn comparison_reports_the_first_differing_element() {
    let program = parse_program(
        "t.tensir",
        "func f(n: size, x: inout f64[n]) {\n  x[1:n] = mul(2.0, x[1:n]);\n}\n",
    )
    .expect("parses");
    let at = sizes(&[("n", 3)]);
    let spec = execute(&program, &at).expect("runs");
    let c_like = Spec {
        kernel: "f".into(),
        sizes: at.clone(),
        inputs: Vec::new(),
        outputs: vec![super::super::Output {
            name: "x".into(),
            elem: ScalarType::F64,
            value: Tensor::from_fn(&[3], |i| sym("x", &[i[0] as u32]) * Value::int(2)),
        }],
    };
    match equal_to_spec(&spec, &c_like) {
        Comparison::Differs {
            index, program, c, ..
        } => {
            assert_eq!(index, vec![0]);
            assert_eq!(program, sym("x", &[0]));
            assert_eq!(c, sym("x", &[0]) * Value::int(2));
        }
        other => panic!("expected a difference, got {other:?}"),
    }
}

#[test]
fn an_executor_shares_pure_subexpressions_between_programs() {
    let first = parse_program(
        "a.tensir",
        "func f(n: size, A: f64[n, n], B: f64[n, n], C: inout f64[n, n]) {\n  C = add(C, matmul(A, B));\n}\n",
    )
    .expect("parses");
    // The same `matmul(A, B)` text, but `A` is overwritten first: its value
    // there must not come from the cache.
    let second = parse_program(
        "b.tensir",
        "func f(n: size, A: inout f64[n, n], B: f64[n, n], C: inout f64[n, n]) {\n  A = mul(2.0, A);\n  C = add(C, matmul(A, B));\n}\n",
    )
    .expect("parses");
    let at = sizes(&[("n", 2)]);
    let mut executor = Executor::new(at.clone());
    let a1 = executor.execute(&first).expect("runs");
    assert!(!executor.shared.is_empty());
    let b1 = executor.execute(&second).expect("runs");
    assert_eq!(a1, execute(&first, &at).expect("runs"));
    assert_eq!(b1, execute(&second, &at).expect("runs"));
    assert_ne!(a1.output("C"), b1.output("C"));
    // Running again from a warm cache changes nothing.
    assert_eq!(executor.execute(&first).expect("runs"), a1);
}

#[test]
fn a_variable_of_the_wrong_declared_shape_is_an_error_not_a_panic() {
    use tenslift_targets::{self as tensir, DType, Dim, Ty};
    let program = parse_program(
        "t.tensir",
        "func f(n: size, m: size, A: f64[n, m], d: out f64[n]) {\n  d = sum(A, axes=[1]);\n}\n",
    )
    .expect("parses");
    // Pretend `A` is square, as an unvalidated synthesized program might.
    let square = tensir::Expr::var(
        "A",
        Ty::tensor(DType::F64, vec![Dim::sym("n"), Dim::sym("n")]),
    );
    let diag =
        tensir::Expr::new(tensir::Op::Diag, vec![square]).expect("square matrix has a diagonal");
    let mut broken = program.clone();
    broken.body = vec![Stmt::Store {
        target: "d".into(),
        region: None,
        value: diag,
    }];
    let outcome = execute(&broken, &sizes(&[("n", 3), ("m", 4)]));
    assert!(
        matches!(outcome, Err(TensirSpecError::Malformed(_))),
        "{outcome:?}"
    );
}

#[test]
fn a_loop_executes_like_its_unrolled_statements_even_through_a_shared_cache() {
    // `x[0:i + 1]` reads only a pristine parameter, but its value changes
    // with `i`: it must not be shared between iterations or programs.
    let looped = "func f(n: size, x: f64[n], y: out f64[n]) {
  for i in 0..n {
    let prefix = x[0:i + 1];
    y[i] = mul(cast(i, f64), sum(prefix, axes=[0]));
  }
}
";
    let unrolled = "func f(n: size, x: f64[n], y: out f64[n]) {
  y[0] = mul(0.0, sum(x[0:1], axes=[0]));
  y[1] = mul(1.0, sum(x[0:2], axes=[0]));
  y[2] = mul(2.0, sum(x[0:3], axes=[0]));
}
";
    let at = sizes(&[("n", 3)]);
    let mut executor = Executor::new(at.clone());
    let program = parse_program("t.tensir", looped).expect("parses");
    let first = executor.execute(&program).expect("executes");
    let again = executor.execute(&program).expect("executes again");
    let reference = run(unrolled, &[("n", 3)]);
    assert_eq!(first.output("y"), reference.output("y"));
    assert_eq!(again.output("y"), reference.output("y"));
    let y = &first.output("y").expect("y").value;
    assert_eq!(y.elems()[1], sym("x", &[0]) + sym("x", &[1]));
}

#[test]
fn runaway_loops_are_refused() {
    let program = parse_program(
        "t.tensir",
        "func f(t: size, n: size, x: inout f64[n]) {\n  for s in 0..t {\n    x = add(x, 1.0);\n  }\n}\n",
    )
    .expect("parses");
    let err = execute(&program, &sizes(&[("t", 1_000_000), ("n", 1)])).unwrap_err();
    assert!(
        matches!(err, TensirSpecError::TooManyStatements { .. }),
        "{err}"
    );
}

#[test]
fn flip_reshape_and_window_read_the_elements_they_name() {
    let spec = run(
        "func f(n: size, t: size, x: f64[n + t], h: f64[t], c: f64[6], y: out f64[n], z: out f64[t], m: out f64[3, 2]) {\n  y = matmul(window(x[0:n + t - 1], [t]), h);\n  z = flip(h, axes=[0]);\n  m = reshape(c, [3, 2]);\n}\n",
        &[("n", 3), ("t", 2)],
    );
    let y = &spec.output("y").expect("y").value;
    let expected = sym("x", &[2]) * sym("h", &[0]) + sym("x", &[3]) * sym("h", &[1]);
    assert_eq!(y.elems()[2], expected);
    let z = &spec.output("z").expect("z").value;
    assert_eq!(z.elems(), &[sym("h", &[1]), sym("h", &[0])]);
    let m = &spec.output("m").expect("m").value;
    assert_eq!(m.get(&[2, 1]), Some(&sym("c", &[5])));
}

#[test]
fn a_window_larger_than_its_operand_is_an_error() {
    let program = parse_program(
        "t.tensir",
        "func f(n: size, t: size, x: f64[n], y: out f64[n - t + 1, t]) {\n  y = window(x, [t]);\n}\n",
    )
    .expect("parses");
    assert!(execute(&program, &sizes(&[("n", 2), ("t", 3)])).is_err());
    assert!(execute(&program, &sizes(&[("n", 3), ("t", 3)])).is_ok());
}
