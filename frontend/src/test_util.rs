//! Helpers for unit tests that lower real C (parsed by libclang).

use crate::{extract, ExtractError, Options};

/// The body of the single kernel in `source`, as dumped with its
/// whitespace collapsed, or the codes of its diagnostics.
pub(crate) fn lowered(source: &str) -> Result<String, Vec<&'static str>> {
    dumped_body(source).map(|body| body.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The body of the single kernel in `source`, as dumped (one statement a
/// line, indented by depth), or the codes of its diagnostics.
pub(crate) fn dumped_body(source: &str) -> Result<String, Vec<&'static str>> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.c");
    std::fs::write(&path, source).expect("write C");
    match extract(path.to_str().expect("utf-8 path"), &Options::default()) {
        Ok(tu) => {
            let text = crate::dump::kernel(&tu.kernels[0]);
            Ok(text
                .split("  body\n")
                .nth(1)
                .unwrap_or_default()
                .to_string())
        }
        Err(ExtractError::Rejected(d)) => Err(d.items.iter().map(|d| d.code.id).collect()),
        Err(other) => panic!("{other}"),
    }
}

/// The rendered diagnostics of `source` (empty when it lowers).
pub(crate) fn diagnostics(source: &str) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.c");
    std::fs::write(&path, source).expect("write C");
    match extract(path.to_str().expect("utf-8 path"), &Options::default()) {
        Ok(_) => String::new(),
        Err(ExtractError::Rejected(d)) => d.render(),
        Err(other) => panic!("{other}"),
    }
}
