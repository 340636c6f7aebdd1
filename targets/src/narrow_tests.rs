use std::collections::HashMap;

use proptest::prelude::*;

use super::*;
use crate::interp::{self, Array};
use crate::syntax::{parse_program, print_program};

/// The four 8-bit blends as `tenslift lift` finds them (C semantics: `i32`
/// arithmetic on promoted pixels, truncating division).
const BLENDS: [&str; 4] = [
    "func multiply_blend_8(base: u8[m, n], active: u8[m, n], out: out u8[m, n], m: size, n: size) {\n  out = cast(trunc_div(mul(cast(base, i32), cast(active, i32)), 255i32), u8);\n}\n",
    "func screen_blend_8(base: u8[m, n], active: u8[m, n], out: out u8[m, n], m: size, n: size) {\n  out = cast(sub(add(cast(active, i32), cast(base, i32)), trunc_div(mul(cast(base, i32), cast(active, i32)), 255i32)), u8);\n}\n",
    "func normal_blend_8(base: u8[m, n], active: u8[m, n], out: out u8[m, n], m: size, n: size, opacity: i32) {\n  out = cast(trunc_div(add(mul(opacity, cast(active, i32)), mul(sub(255i32, opacity), cast(base, i32))), 255i32), u8);\n}\n",
    "func overlay_blend_8(base: u8[m, n], active: u8[m, n], out: out u8[m, n], m: size, n: size) {\n  out = cast(where(lt(cast(base, i32), 128i32), trunc_div(mul(2i32, mul(cast(base, i32), cast(active, i32))), 255i32), sub(255i32, trunc_div(mul(2i32, mul(sub(cast(base, i32), 255i32), sub(cast(active, i32), 255i32))), 255i32))), u8);\n}\n",
];

const POLICIES: [Target; 4] = [Target::Numpy, Target::Jax, Target::Pytorch, Target::Hlo];

/// Every pair of 8-bit pixels: `base[i, j] = i`, `active[i, j] = j`.
fn all_pixel_pairs() -> HashMap<String, Array> {
    let (b, a): (Vec<i64>, Vec<i64>) = (0..256 * 256).map(|k| (k / 256, k % 256)).unzip();
    [
        (
            "base".to_string(),
            Array::from_i64(DType::U8, vec![256, 256], b),
        ),
        (
            "active".to_string(),
            Array::from_i64(DType::U8, vec![256, 256], a),
        ),
    ]
    .into_iter()
    .collect()
}

fn sizes(m: i64, n: i64) -> HashMap<String, i64> {
    [("m".to_string(), m), ("n".to_string(), n)]
        .into_iter()
        .collect()
}

#[test]
fn magic_numbers_for_255_are_the_known_ones_and_exact() {
    assert_eq!(div_magic(255, 65025), Some((32897, 23)));
    assert!((0..=65025i64).all(|x| (x * 32897) >> 23 == x / 255));
    assert_eq!(div_magic(1, 10), None);
    assert_eq!(div_magic(7, 0), Some((1, 0)));
}

#[test]
fn ranges_follow_c_promotion_of_pixels() {
    let p = parse_program("t.tensir", BLENDS[1]).unwrap();
    let Stmt::Store { value, .. } = &p.body[0] else {
        panic!("store expected")
    };
    let mut r = Ranges::new();
    let inner = &value.args()[0];
    assert_eq!(r.exact(inner), Some(Interval::new(-255, 510)));
    let product = &inner.args()[1].args()[0];
    assert_eq!(r.interval(product), Some(Interval::new(0, 65025)));
    assert_eq!(r.interval(&inner.args()[1]), Some(Interval::new(0, 255)));
    assert_eq!(
        Policy::for_target(Target::Numpy).dtype_for(Interval::new(0, 65025)),
        Some(DType::U16)
    );
    assert_eq!(
        Policy::for_target(Target::Pytorch).dtype_for(Interval::new(0, 65025)),
        Some(DType::I32)
    );
    assert_eq!(
        Policy::for_target(Target::Numpy).dtype_for(Interval::new(-255, 255)),
        Some(DType::I16)
    );
}

#[test]
fn a_wrapping_product_gets_its_types_range_and_is_not_narrowed() {
    let text =
        "func f(n: size, x: i32[n], y: out i32[n]) {\n  y = trunc_div(mul(x, 3i32), 255i32);\n}\n";
    let p = parse_program("t.tensir", text).unwrap();
    for t in POLICIES {
        let low = lower_program(&p, Policy::for_target(t));
        assert_eq!(print_program(&low), print_program(&p), "{t}");
    }
}

#[test]
fn lowered_blends_compute_the_c_result_on_every_pixel_pair() {
    let args = all_pixel_pairs();
    for text in BLENDS {
        let p = parse_program("t.tensir", text).unwrap();
        for opacity in [0i64, 1, 128, 255, -7, 256, 100_000, i64::from(i32::MIN)] {
            let mut args = args.clone();
            args.insert(
                "opacity".into(),
                Array::from_i64(DType::I32, vec![], vec![opacity]),
            );
            let want = interp::run(&p, &sizes(256, 256), &args).unwrap();
            for t in POLICIES {
                let low = lower_program(&p, Policy::for_target(t));
                let got = interp::run(&low, &sizes(256, 256), &args).unwrap();
                assert_eq!(got, want, "{t}: {}", print_program(&low));
            }
        }
    }
}

#[test]
fn numpy_narrows_the_multiply_blend_to_16_bits() {
    let p = parse_program("t.tensir", BLENDS[0]).unwrap();
    let low = print_program(&lower_program(&p, Policy::for_target(Target::Numpy)));
    assert!(
        low.contains("cast(trunc_div(mul(cast(base, u16), cast(active, u16)), 255u16), u8)"),
        "{low}"
    );
    let low = print_program(&lower_program(&p, Policy::for_target(Target::Pytorch)));
    assert!(
        low.contains(
            "trunc_div(mul(mul(cast(base, i32), cast(active, i32)), 32897i32), 8388608i32)"
        ),
        "{low}"
    );
}

#[test]
fn shifts_only_for_proven_non_negative_dividends() {
    let p = parse_program("t.tensir", BLENDS[0]).unwrap();
    let low = lower_program(&p, Policy::for_target(Target::Jax));
    let Stmt::Store { value, .. } = &low.body[0] else {
        panic!("store expected")
    };
    assert_eq!(shift_amount(&value.args()[0]), Some(23));
    let text = "func f(n: size, x: i32[n], y: out i32[n]) {\n  y = trunc_div(x, 8i32);\n}\n";
    let p = parse_program("t.tensir", text).unwrap();
    let Stmt::Store { value, .. } = &p.body[0] else {
        panic!("store expected")
    };
    assert_eq!(shift_amount(value), None);
}

/// The divisor of `x / (a == 0 ? 1 : a)` is positive where the guard
/// excludes zero, so truncation and floor agree; unguarded, or guarded on
/// another value, it is not.
#[test]
fn a_divisor_guarded_against_zero_is_positive() {
    let value_of = |body: &str| {
        let text = format!(
            "func f(n: size, a: u8[n], b: u8[n], x: i32[n], y: out i32[n]) {{\n  y = {body};\n}}\n"
        );
        let p = parse_program("t.tensir", &text).unwrap();
        let Stmt::Store { value, .. } = &p.body[0] else {
            panic!("store expected")
        };
        value.clone()
    };
    let guarded = "where(ne(a, 0u8), a, 1u8)";
    let cases = [
        (
            format!("trunc_div(cast(b, i32), cast({guarded}, i32))"),
            true,
        ),
        (
            "trunc_div(cast(b, i32), cast(where(gt(a, 0u8), a, 3u8), i32))".to_string(),
            true,
        ),
        ("trunc_div(cast(b, i32), cast(a, i32))".to_string(), false),
        (format!("trunc_div(x, cast({guarded}, i32))"), false),
        (
            "trunc_div(cast(b, i32), cast(where(ne(b, 0u8), a, 1u8), i32))".to_string(),
            false,
        ),
        (
            "trunc_div(cast(b, i32), cast(where(ne(a, 0u8), a, 0u8), i32))".to_string(),
            false,
        ),
    ];
    for (body, positive) in cases {
        assert_eq!(nonneg_by_positive(&value_of(&body)), positive, "{body}");
    }
}

/// A random integer expression over two `u8` images promoted to `i32`,
/// the shape of the 8-bit blends.
fn blend_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("cast(base, i32)".to_string()),
        Just("cast(active, i32)".to_string()),
        (0i64..300).prop_map(|v| format!("{v}i32")),
    ];
    leaf.prop_recursive(4, 16, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone(), 0..6usize).prop_map(|(a, b, k)| {
                let op = ["add", "sub", "mul", "maximum", "minimum", "mul"][k];
                format!("{op}({a}, {b})")
            }),
            (inner.clone(), 1i64..600, any::<bool>()).prop_map(|(a, c, rem)| {
                let op = if rem { "rem" } else { "trunc_div" };
                format!("{op}({a}, {c}i32)")
            }),
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(c, a, b)| { format!("where(lt({c}, 128i32), {a}, {b})") }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn lowering_keeps_every_value(e in blend_expr()) {
        let text = format!("func f(base: u8[m, n], active: u8[m, n], out: out i32[m, n], out8: out u8[m, n], m: size, n: size) {{\n  out = add(mul(cast(active, i32), 0i32), {e});\n  out8 = cast(add(mul(cast(base, i32), 0i32), {e}), u8);\n}}\n");
        let p = parse_program("t.tensir", &text).unwrap();
        let args = all_pixel_pairs();
        let want = interp::run(&p, &sizes(256, 256), &args);
        for t in POLICIES {
            let low = lower_program(&p, Policy::for_target(t));
            let got = interp::run(&low, &sizes(256, 256), &args);
            match (&want, &got) {
                (Ok(w), Ok(g)) => prop_assert_eq!(w, g, "{}", print_program(&low)),
                (w, g) => prop_assert_eq!(w.is_ok(), g.is_ok(), "{:?} {:?}", w, g),
            }
        }
    }

    #[test]
    fn magic_division_is_exact_where_claimed(c in 2i64..5000, max in 0i64..3_000_000, x in 0i64..3_000_000) {
        let x = x % (max + 1);
        let (m, s) = div_magic(c, max).unwrap();
        prop_assert_eq!((i128::from(x) * i128::from(m)) >> s, i128::from(x / c));
    }
}

#[test]
fn doubled_products_divide_without_division() {
    let p = parse_program("t.tensir", BLENDS[3]).unwrap();
    let low = print_program(&lower_program(&p, Policy::for_target(Target::Jax)));
    assert!(
        !low.contains("255i32)), u8)") && low.contains("ge(sub("),
        "{low}"
    );
    assert!(!low.contains("trunc_div(mul(2i32"), "{low}");
}
