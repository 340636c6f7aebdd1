//! Object-like macros that spell one integer and that the user may
//! redefine: `-DN=384`, or a `#define N 8` guarded by `#ifndef N`.
//!
//! Kernels sized by such macros (DSPstone's `N`, UTDSP's `A_ROW`) are one C
//! program per value. A literal spelled with one of these names is read as
//! [`crate::syntax::CExprKind::MacroInt`], and the lowering makes it a size
//! parameter when it sizes a loop or an array, so the lifted program is
//! traced at small sizes and holds for every value. A macro the file
//! defines unconditionally fixes the size: it stays a literal.

use std::collections::HashMap;

use clang_sys as sys;

use crate::libclang::Cursor;

/// Name -> value of every overridable integer macro of the translation
/// unit whose root is `root`; `defines` are the `-D` options (`N=384`).
pub fn overridable_int_macros(root: &Cursor<'_>, defines: &[String]) -> HashMap<String, i64> {
    let from_command_line: Vec<&str> = defines
        .iter()
        .map(|d| d.split_once('=').map_or(d.as_str(), |(name, _)| name))
        .collect();
    let mut sources: HashMap<String, Option<String>> = HashMap::new();
    let mut out = HashMap::new();
    for c in root.children() {
        if c.kind() != sys::CXCursor_MacroDefinition || c.is_macro_function_like() {
            continue;
        }
        let tokens = c.tokens();
        let [name, literal] = tokens.as_slice() else {
            continue;
        };
        let Some(value) = int_literal(literal) else {
            continue;
        };
        let overridable = from_command_line.contains(&name.as_str())
            || c.position().is_some_and(|p| {
                let text = sources
                    .entry(p.file.clone())
                    .or_insert_with(|| std::fs::read_to_string(&p.file).ok());
                text.as_deref()
                    .is_some_and(|t| guarded_by_ifndef(t, p.line, name))
            });
        if overridable {
            out.insert(name.clone(), value);
        }
    }
    out
}

/// The value of a C integer literal token (`384`, `0x10`, `8u`, `64L`).
fn int_literal(token: &str) -> Option<i64> {
    let digits = token.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        return i64::from_str_radix(hex, 16).ok();
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return i64::from_str_radix(&digits[1..], 8).ok();
    }
    digits.parse().ok()
}

/// Whether the `#define` of `name` on 1-based `line` of `text` directly
/// follows `#ifndef name` (or `#if !defined(name)`), blank lines and
/// comment-only lines aside.
fn guarded_by_ifndef(text: &str, line: u32, name: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let Some(before) = (line as usize).checked_sub(1) else {
        return false;
    };
    let previous = lines[..before.min(lines.len())]
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with("/*"));
    let Some(directive) = previous.and_then(|l| l.strip_prefix('#')) else {
        return false;
    };
    let words: String = directive
        .chars()
        .map(|c| if c == '(' || c == ')' { ' ' } else { c })
        .collect();
    let words: Vec<&str> = words.split_whitespace().collect();
    matches!(words.as_slice(), ["ifndef", n] if *n == name)
        || matches!(words.as_slice(), ["if", "!defined", n] if *n == name)
        || matches!(words.as_slice(), ["if", "!", "defined", n] if *n == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_c_integer_literals() {
        assert_eq!(int_literal("384"), Some(384));
        assert_eq!(int_literal("0x10"), Some(16));
        assert_eq!(int_literal("010"), Some(8));
        assert_eq!(int_literal("64UL"), Some(64));
        assert_eq!(int_literal("0"), Some(0));
        assert_eq!(int_literal("1.5"), None);
        assert_eq!(int_literal("N"), None);
    }

    #[test]
    fn only_a_define_under_its_own_ifndef_is_overridable() {
        let text = "#ifndef N\n#define N 8\n#endif\n#define M 4\n#ifndef K\n\n#define J 2\n#if !defined(L)\n#define L 3\n";
        assert!(guarded_by_ifndef(text, 2, "N"));
        assert!(!guarded_by_ifndef(text, 4, "M"));
        assert!(!guarded_by_ifndef(text, 7, "J"));
        assert!(guarded_by_ifndef(text, 9, "L"));
        assert!(!guarded_by_ifndef(text, 1, "N"));
    }
}
