//! The parser never panics: damaged versions of every fixture (cut short,
//! a span deleted, a character inserted) either parse or give a located
//! diagnostic inside the text.

mod common;

use proptest::prelude::*;
use tenslift_targets::{parse_program, Dim, Op, SliceItem, Stmt};

fn check(text: &str) -> Result<(), TestCaseError> {
    if let Err(d) = parse_program("fuzz.tensir", text) {
        let lines = text.lines().count().max(1) as u32 + 1;
        prop_assert!(
            d.pos.line >= 1 && d.pos.line <= lines,
            "line {} of {lines}",
            d.pos.line
        );
        prop_assert!(d.to_string().starts_with("fuzz.tensir:"));
    }
    Ok(())
}

/// The largest character boundary of `text` at or before byte `i`.
fn floor_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn damaged_fixtures_do_not_panic(which in 0usize..1000, at in 0usize..10_000, len in 0usize..12, insert in proptest::char::range(' ', '~')) {
        let fixtures = common::load_fixtures();
        let text = &fixtures[which % fixtures.len()].text;
        // Cuts fall on character boundaries: fixtures may hold non-ASCII
        // comments (`Aᵀ`), and the test damages text, not UTF-8.
        let at = floor_boundary(text, at % (text.len() + 1));
        let end = floor_boundary(text, (at + len).min(text.len()));
        check(&text[..at])?;
        check(&format!("{}{}", &text[..at], &text[end..]))?;
        check(&format!("{}{insert}{}", &text[..at], &text[at..]))?;
    }

    #[test]
    fn arbitrary_text_does_not_panic(text in "[ -~\n]{0,200}") {
        check(&text)?;
    }
}

/// Random dims built from `n`, `m` and constants with `+ - *` and floor
/// division by a constant.
fn arb_dim() -> impl Strategy<Value = Dim> {
    let leaf = prop_oneof![
        (-20i64..20).prop_map(Dim::constant),
        Just(Dim::sym("n")),
        Just(Dim::sym("m")),
    ];
    leaf.prop_recursive(4, 16, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_filter_map("undivided", |(a, b)| a.add(&b).ok()),
            (inner.clone(), inner.clone()).prop_filter_map("undivided", |(a, b)| a.sub(&b).ok()),
            (inner.clone(), inner.clone()).prop_filter_map("undivided", |(a, b)| a.mul(&b).ok()),
            (inner, 1i64..5).prop_filter_map("positive", |(a, d)| a.floor_div(d).ok()),
        ]
    })
}

proptest! {
    #[test]
    fn printed_dims_parse_back_to_the_same_dim(d in arb_dim()) {
        let text = format!("func f(n: size, m: size, x: f64[n]) {{\n  let y = x[{d}];\n}}\n");
        let p = parse_program("dim.tensir", &text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let parsed = match &p.body[0] {
            Stmt::Let { value, .. } => match value.op() {
                Op::Slice(items) => items[0].clone(),
                _ => unreachable!(),
            },
            _ => unreachable!(),
        };
        prop_assert_eq!(parsed, SliceItem::Index(d.clone()), "{}", text);
        // And the dim evaluates like the arithmetic it came from.
        let v = d.eval(&|s| Some(if s == "n" { 7 } else { 3 }));
        prop_assert!(v.is_ok());
    }
}
