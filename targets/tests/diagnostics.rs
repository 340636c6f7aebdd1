//! Bad programs are rejected with located, readable diagnostics.

use tenslift_targets::parse_program;

/// Parses `text` expecting an error; returns the rendered diagnostic.
fn error_of(text: &str) -> String {
    match parse_program("t.tensir", text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(d) => d.to_string(),
    }
}

const HEAD: &str = "func f(n: size, a: f64[n], b: f64[n], k: i32[n], c: out f64[n]) {\n";

#[test]
fn type_error_points_at_the_operation() {
    let e = error_of(&format!("{HEAD}  c = add(a, k);\n}}\n"));
    assert_eq!(
        e,
        "t.tensir:2:7: error: add operands have different element types f64 and i32 (insert a cast)\n  c = add(a, k);\n      ^"
    );
}

#[test]
fn undefined_name_and_unknown_operation() {
    assert!(error_of(&format!("{HEAD}  c = add(a, z);\n}}\n"))
        .starts_with("t.tensir:2:14: error: `z` is not defined"));
    assert!(error_of(&format!("{HEAD}  c = frobnicate(a);\n}}\n"))
        .starts_with("t.tensir:2:7: error: unknown operation `frobnicate`"));
}

#[test]
fn syntax_errors_say_what_was_expected() {
    let e = error_of(&format!("{HEAD}  c = add(a, b)\n}}\n"));
    assert!(
        e.starts_with("t.tensir:3:1: error: expected `;`, found `}`"),
        "{e}"
    );
    let e = error_of("func f(n: size) {\n  let x = 1 @ 2;\n}\n");
    assert!(
        e.starts_with("t.tensir:2:13: error: unexpected character `@`"),
        "{e}"
    );
}

#[test]
fn literals_are_checked_against_their_type() {
    let e = error_of(&format!("{HEAD}  let x = 300u8;\n}}\n"));
    assert!(e.contains("literal `300u8` is out of range for u8"), "{e}");
    let e = error_of(&format!("{HEAD}  let x = 1.5i32;\n}}\n"));
    assert!(e.contains("an integer type needs an integer value"), "{e}");
}

#[test]
fn integer_ops_need_integers_and_real_division_needs_floats() {
    assert!(error_of(&format!("{HEAD}  let q = trunc_div(a, b);\n}}\n"))
        .contains("trunc_div needs integer operands, got f64"));
    assert!(error_of(&format!("{HEAD}  let q = div(k, k);\n}}\n"))
        .contains("div needs float operands (use trunc_div for integers), got i32"));
}

#[test]
fn stores_are_checked() {
    let e = error_of(&format!("{HEAD}  a = b;\n}}\n"));
    assert!(
        e.starts_with("t.tensir:2:3: error: `a` is an input; declare it `out` or `inout`"),
        "{e}"
    );
    let e = error_of(&format!("{HEAD}  c[0:n - 1] = a;\n}}\n"));
    assert!(
        e.contains("stored value has type f64[n], the region of `c` has type f64[n - 1]"),
        "{e}"
    );
    let e = error_of(&format!("{HEAD}  let t = c;\n}}\n"));
    assert!(
        e.contains("`c` is an `out` array read before it is written"),
        "{e}"
    );
}

#[test]
fn shapes_must_agree() {
    let text = "func f(n: size, m: size, a: f64[n, m], b: f64[m, n], c: out f64[n, m]) {\n  c = add(a, b);\n}\n";
    assert!(
        error_of(text).contains("add operands have shapes [n, m] and [m, n] that do not broadcast")
    );
    let text = "func f(n: size, m: size, a: f64[n, m], b: f64[n, m], c: out f64[n, n]) {\n  c = matmul(a, b);\n}\n";
    assert!(error_of(text).contains("einsum label `b` has sizes m and n"));
}

#[test]
fn dims_may_only_use_size_parameters() {
    let e = error_of("func f(n: size, x: f64[q]) {\n}\n");
    assert!(
        e.contains("shape of `x`: `q` in dimension `q` is not a size parameter"),
        "{e}"
    );
}

#[test]
fn return_must_match_the_declared_type() {
    let e = error_of("func f(n: size, x: f64[n]) -> i32 {\n  return sum(x, axes=[0]);\n}\n");
    assert!(
        e.contains("returned value has type f64[], the function returns i32"),
        "{e}"
    );
}

#[test]
fn negative_constant_dims_are_rejected() {
    let e = error_of("func f(x: f64[2 - 5]) {\n}\n");
    assert!(
        e.contains("shape of `x`: dimension `-3` is negative"),
        "{e}"
    );
}

#[test]
fn absurdly_deep_nesting_is_an_error_not_a_crash() {
    let deep = format!("{}a{}", "neg(".repeat(100_000), ")".repeat(100_000));
    let e = error_of(&format!("{HEAD}  let t = {deep};\n}}\n"));
    assert!(
        e.contains("nested more than 256 levels deep"),
        "{}",
        &e[..200.min(e.len())]
    );
    let dims = format!(
        "func f(x: f64[{}1{}]) {{\n}}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert!(error_of(&dims).contains("nested too deeply"));
    let minus = format!("func f(x: f64[{}1]) {{\n}}\n", "-".repeat(100_000));
    assert!(error_of(&minus).contains("nested too deeply"));
}
