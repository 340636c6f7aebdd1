//! The parser never panics: damaged versions of every fixture (cut short,
//! a span deleted, a character inserted) either parse or give a located
//! diagnostic inside the text.

mod common;

use proptest::prelude::*;
use tenslift_targets::parse_program;

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn damaged_fixtures_do_not_panic(which in 0usize..1000, at in 0usize..10_000, len in 0usize..12, insert in proptest::char::range(' ', '~')) {
        let fixtures = common::load_fixtures();
        let text = &fixtures[which % fixtures.len()].text;
        let at = at % (text.len() + 1);
        let end = (at + len).min(text.len());
        check(&text[..at])?;
        check(&format!("{}{}", &text[..at], &text[end..]))?;
        check(&format!("{}{insert}{}", &text[..at], &text[at..]))?;
    }

    #[test]
    fn arbitrary_text_does_not_panic(text in "[ -~\n]{0,200}") {
        check(&text)?;
    }
}
