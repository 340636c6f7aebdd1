//! The concrete C interpreter that confirms counterexamples, checked on
//! real kernels against values worked out by hand from C's rules.

mod common;

use std::collections::HashMap;

use common::{kernel, sizes};
use tenslift_targets::interp::Array;
use tenslift_targets::DType;
use tenslift_verify::concrete::{run_kernel, RunError};

fn ints(a: &Array) -> Vec<i64> {
    (0..a.len()).map(|i| a.get_i64(i)).collect()
}

fn args(items: Vec<(&str, Array)>) -> HashMap<String, Array> {
    items.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

#[test]
fn c_division_truncates_and_the_remainder_follows_the_dividend() {
    let k = kernel("verify/tests/fixtures/quot_rem.c", "quot_rem");
    let a = Array::from_i64(DType::I32, vec![4], vec![-7, 7, -7, 7]);
    let d = Array::from_i64(DType::I32, vec![4], vec![2, -2, -2, 2]);
    let zeros = Array::from_i64(DType::I32, vec![4], vec![0; 4]);
    let run = run_kernel(
        &k,
        &sizes(&[("n", 4)]),
        &args(vec![("a", a), ("d", d), ("q", zeros.clone()), ("r", zeros)]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ints(&run.arrays["q"]), vec![-3, -3, 3, 3]);
    assert_eq!(ints(&run.arrays["r"]), vec![-1, 1, -1, 1]);
}

#[test]
fn division_by_zero_is_reported_as_undefined_behaviour() {
    let k = kernel("verify/tests/fixtures/quot_rem.c", "quot_rem");
    let a = Array::from_i64(DType::I32, vec![1], vec![5]);
    let d = Array::from_i64(DType::I32, vec![1], vec![0]);
    let zero = Array::from_i64(DType::I32, vec![1], vec![0]);
    let err = run_kernel(
        &k,
        &sizes(&[("n", 1)]),
        &args(vec![("a", a), ("d", d), ("q", zero.clone()), ("r", zero)]),
    )
    .unwrap_err();
    assert!(matches!(err, RunError::Undefined(m) if m.contains("division by zero")));
}

#[test]
fn a_uint8_temporary_wraps_before_it_is_halved() {
    let k = kernel("verify/tests/fixtures/half_sum_u8.c", "half_sum_u8");
    let a = Array::from_i64(DType::U8, vec![2], vec![200, 10]);
    let b = Array::from_i64(DType::U8, vec![2], vec![100, 20]);
    let out = Array::from_i64(DType::U8, vec![2], vec![0, 0]);
    let run = run_kernel(
        &k,
        &sizes(&[("n", 2)]),
        &args(vec![("a", a), ("b", b), ("out", out)]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // 300 wraps to 44, halved to 22; 30 halves to 15.
    assert_eq!(ints(&run.arrays["out"]), vec![22, 15]);
}

#[test]
fn color_burn_takes_the_data_dependent_branch() {
    let k = kernel("benchmarks/blend/color_burn_8.c", "color_burn_8");
    let base = Array::from_i64(DType::U8, vec![3], vec![100, 100, 255]);
    let active = Array::from_i64(DType::U8, vec![3], vec![0, 50, 7]);
    let out = Array::from_i64(DType::U8, vec![3], vec![0; 3]);
    let run = run_kernel(
        &k,
        &sizes(&[("m", 1), ("n", 3)]),
        &args(vec![("base", base), ("active", active), ("out", out)]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Black maps to white; 255 - 155/50 = 252; 255 - 0/7 = 255.
    assert_eq!(ints(&run.arrays["out"]), vec![255, 252, 255]);
}

#[test]
fn float_arithmetic_rounds_to_single_precision_and_returns() {
    let k = kernel("benchmarks/blas/dot.c", "dot");
    let x = Array::from_f64(DType::F32, vec![2], vec![0.1, 1.0]);
    let y = Array::from_f64(DType::F32, vec![2], vec![0.2, 1e8]);
    let run = run_kernel(&k, &sizes(&[("n", 2)]), &args(vec![("x", x), ("y", y)]))
        .unwrap_or_else(|e| panic!("{e}"));
    let want = 0.0f32 + 0.1f32 * 0.2f32 + 1.0f32 * 1e8f32;
    let got = run.returned.map(|a| a.get_f64(0));
    assert_eq!(got, Some(f64::from(want)));
}
