//! Helpers for unit tests that lower real C (parsed by libclang).

use crate::ir::{Kernel, TranslationUnit};
use crate::{extract, ExtractError, Options};

/// `source` written to a temporary `k.c` and extracted with `options`.
pub(crate) fn extracted(source: &str, options: &Options) -> Result<TranslationUnit, ExtractError> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.c");
    std::fs::write(&path, source).expect("write C");
    extract(path.to_str().expect("utf-8 path"), options)
}

/// The body of the single kernel in `source`, as dumped with its
/// whitespace collapsed, or the codes of its diagnostics.
pub(crate) fn lowered(source: &str) -> Result<String, Vec<&'static str>> {
    dumped_body(source).map(|body| collapsed(&body))
}

/// The body of the single kernel in `source`, as dumped (one statement a
/// line, indented by depth), or the codes of its diagnostics.
pub(crate) fn dumped_body(source: &str) -> Result<String, Vec<&'static str>> {
    match extracted(source, &Options::default()) {
        Ok(tu) => Ok(body_of(&tu.kernels[0])),
        Err(ExtractError::Rejected(d)) => Err(d.items.iter().map(|d| d.code.id).collect()),
        Err(other) => panic!("{other}"),
    }
}

/// The dumped body of `kernel` with its whitespace collapsed.
pub(crate) fn collapsed_body(kernel: &Kernel) -> String {
    collapsed(&body_of(kernel))
}

fn body_of(kernel: &Kernel) -> String {
    let text = crate::dump::kernel(kernel);
    text.split("  body\n")
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

fn collapsed(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The rendered diagnostics of `source` (empty when it lowers).
pub(crate) fn diagnostics(source: &str) -> String {
    match extracted(source, &Options::default()) {
        Ok(_) => String::new(),
        Err(ExtractError::Rejected(d)) => d.render(),
        Err(other) => panic!("{other}"),
    }
}
