//! The frontend's entry point: parse one C file with libclang and extract
//! its kernels.
//!
//! Parsing runs on a dedicated thread with a large stack: libclang is
//! installed into that thread's clang-sys slot (so concurrent calls from
//! parallel tests or a rayon pool never share an index or translation unit),
//! and our own walks can never overflow the caller's stack. A panic on that
//! thread is caught and reported as [`ExtractError::Internal`].

use std::path::Path;

use clang_sys as sys;

use crate::diagnostics::{self as codes, Diagnostic, Diagnostics};
use crate::includes;
use crate::ir::{Loc, RefusedFunction, TranslationUnit};
use crate::libclang::{self, Cursor, Index};
use crate::lower::lower_function;
use crate::options::{CompileDbError, Options};
use crate::reader::Reader;

/// Stack size of the parsing thread.
const PARSE_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Why no translation unit came back.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// The C was understood but refused (or clang found errors): every
    /// problem, located.
    #[error("{} error(s) in {}", .0.items.len(), .0.file)]
    Rejected(Diagnostics),
    #[error("cannot read {path}: {source}")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot load libclang: {0}")]
    Libclang(String),
    #[error("libclang could not process {path}: {message}")]
    Parse { path: String, message: String },
    #[error(transparent)]
    CompileDb(#[from] CompileDbError),
    #[error("internal error in the frontend: {0}")]
    Internal(String),
    /// Parsing and extraction ran past [`Options::parse_timeout`] (an
    /// exponential macro, a huge file); the parsing thread was abandoned.
    #[error("parsing {path} took longer than {seconds} s")]
    Timeout { path: String, seconds: f64 },
}

impl ExtractError {
    /// True when the C itself was refused (exit code 1 in the CLI), false
    /// for problems with the environment or the input file (exit code 2).
    pub fn is_rejection(&self) -> bool {
        matches!(self, ExtractError::Rejected(_))
    }
}

/// Parses `path` (as the user named it) with `options` and extracts every
/// selected kernel, within `options.parse_timeout`.
pub fn extract(path: &str, options: &Options) -> Result<TranslationUnit, ExtractError> {
    let source = read_source(path)?;
    let unsafe_includes = includes::check(path, &source, options);
    if !unsafe_includes.is_empty() {
        return Err(rejected(path, unsafe_includes));
    }
    let path_owned = path.to_string();
    let options = options.clone();
    let limit = options.parse_timeout;
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("tenslift-frontend".into())
        .stack_size(PARSE_STACK_BYTES)
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                extract_here(&path_owned, &options, &source)
            }))
            .unwrap_or_else(|panic| Err(ExtractError::Internal(panic_message(&*panic))));
            // The receiver is gone when the deadline passed first.
            let _ = send.send(result);
        })
        .map_err(|e| ExtractError::Internal(format!("cannot start the parser thread: {e}")))?;
    // libclang cannot be interrupted: past the deadline the thread is left
    // to finish (or to be ended with the process) and nobody waits for it.
    match receive.recv_timeout(limit) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(ExtractError::Timeout {
            path: path.to_string(),
            seconds: limit.as_secs_f64(),
        }),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(ExtractError::Internal(
            "the parser thread ended without a result".into(),
        )),
    }
}

/// The main file's text, refusing what is not a regular file of bounded
/// size (`tenslift extract /dev/zero` must not read forever).
fn read_source(path: &str) -> Result<String, ExtractError> {
    let unreadable = |source| ExtractError::Unreadable {
        path: path.to_string(),
        source,
    };
    if let Some(why) = includes::unsafe_to_read(Path::new(path)) {
        return Err(unreadable(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            why,
        )));
    }
    let bytes = std::fs::read(path).map_err(unreadable)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// Lines of `#pragma scop` / `#pragma endscop` pairs, and the lines of
/// unmatched ones.
fn scop_regions(source: &str) -> (Vec<(u32, u32)>, Vec<u32>) {
    let mut regions = Vec::new();
    let mut unmatched = Vec::new();
    let mut open: Option<u32> = None;
    for (i, line) in source.lines().enumerate() {
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        match words.as_slice() {
            ["pragma", "scop"] => {
                if let Some(prev) = open.replace(n) {
                    unmatched.push(prev);
                }
            }
            ["pragma", "endscop"] => match open.take() {
                Some(start) => regions.push((start, n)),
                None => unmatched.push(n),
            },
            _ => {}
        }
    }
    unmatched.extend(open);
    (regions, unmatched)
}

fn contains_loop(f: &Cursor<'_>) -> bool {
    let mut stack = f.children();
    while let Some(c) = stack.pop() {
        if matches!(
            c.kind(),
            sys::CXCursor_ForStmt | sys::CXCursor_WhileStmt | sys::CXCursor_DoStmt
        ) {
            return true;
        }
        stack.extend(c.children());
    }
    false
}

fn extract_here(
    path: &str,
    options: &Options,
    source: &str,
) -> Result<TranslationUnit, ExtractError> {
    libclang::install_on_this_thread().map_err(ExtractError::Libclang)?;
    let index = Index::new();
    let tu = index
        .parse(path, &options.clang_args())
        .map_err(|message| ExtractError::Parse {
            path: path.to_string(),
            message,
        })?;
    let mut diagnostics: Vec<Diagnostic> = tu
        .diagnostics()
        .into_iter()
        .filter(|d| d.is_error)
        .map(|d| {
            Diagnostic::new(
                codes::CLANG_ERROR,
                d.location.map(|p| Loc {
                    file: p.file,
                    line: p.line,
                    col: p.col,
                }),
                d.message,
            )
        })
        .collect();
    if !diagnostics.is_empty() {
        return Err(rejected(path, diagnostics));
    }

    let functions: Vec<Cursor<'_>> = tu
        .root()
        .children()
        .into_iter()
        .filter(|c| {
            c.kind() == sys::CXCursor_FunctionDecl
                && c.is_definition()
                && c.position().is_some_and(|p| p.in_main_file)
        })
        .collect();
    let size_macros = crate::macros::overridable_int_macros(&tu.root(), &options.defines);
    let (regions, unmatched) = scop_regions(source);
    for line in unmatched {
        diagnostics.push(Diagnostic::new(
            codes::SCOP_UNMATCHED,
            Some(Loc {
                file: path.to_string(),
                line,
                col: 1,
            }),
            "`#pragma scop` without a matching `#pragma endscop` (or the reverse)",
        ));
    }
    let regions_in = |f: &Cursor<'_>| -> Vec<(u32, u32)> {
        let (first, last) = f.line_span().unwrap_or((0, 0));
        regions
            .iter()
            .copied()
            .filter(|&(s, e)| s > first && e < last)
            .collect()
    };

    let selected: Vec<&Cursor<'_>> = if options.functions.is_empty() {
        let with_loops: Vec<&Cursor<'_>> = functions
            .iter()
            .filter(|f| f.spelling() != "main" && (contains_loop(f) || !regions_in(f).is_empty()))
            .collect();
        // A file of loop-free functions (`int add(int b, int c)`) lifts
        // every one of them; beside loop nests they stay helpers.
        if with_loops.is_empty() {
            functions
                .iter()
                .filter(|f| f.spelling() != "main")
                .collect()
        } else {
            with_loops
        }
    } else {
        let mut chosen = Vec::new();
        for name in &options.functions {
            match functions.iter().find(|f| &f.spelling() == name) {
                Some(f) => chosen.push(f),
                None => diagnostics.push(Diagnostic::new(
                    codes::UNKNOWN_FUNCTION_NAME,
                    None,
                    format!("no function named `{name}` is defined in this file"),
                )),
            }
        }
        chosen
    };
    if selected.is_empty() && diagnostics.is_empty() {
        diagnostics.push(Diagnostic::new(
            codes::NO_KERNEL,
            None,
            "no function (other than `main`) is defined in this file",
        ));
    }

    let mut kernels = Vec::new();
    let mut refused = Vec::new();
    for f in selected {
        let mut reader = Reader::with_size_macros(size_macros.clone());
        let func = reader.read_function(f);
        let mut own = std::mem::take(&mut reader.diagnostics);
        let regions = regions_in(f);
        if regions.len() > 1 {
            own.push(Diagnostic::new(
                codes::SCOP_UNMATCHED,
                Some(Loc {
                    file: path.to_string(),
                    line: regions[1].0,
                    col: 1,
                }),
                format!("`{}` has more than one `#pragma scop` region", func.name),
            ));
        } else {
            match lower_function(&func, regions.first().copied()) {
                Ok(k) if own.is_empty() => kernels.extend(k),
                Ok(_) => {}
                Err(mut d) => own.append(&mut d),
            }
        }
        if !own.is_empty() {
            refused.push((func.name.clone(), own));
        }
    }
    // The whole file is refused for a problem of its own, without
    // keep_going, or when nothing in it lowers.
    let keep = options.keep_going && !kernels.is_empty();
    if !diagnostics.is_empty() || (!keep && !refused.is_empty()) {
        diagnostics.extend(refused.into_iter().flat_map(|(_, d)| d));
        return Err(rejected(path, diagnostics));
    }
    let refused = refused
        .into_iter()
        .map(|(name, d)| RefusedFunction {
            name,
            diagnostics: located(path, d),
        })
        .collect();
    Ok(TranslationUnit {
        file: path.to_string(),
        kernels,
        refused,
    })
}

fn rejected(path: &str, items: Vec<Diagnostic>) -> ExtractError {
    ExtractError::Rejected(located(path, items))
}

/// Sorts by position (file-level problems first) and drops duplicates.
fn located(path: &str, mut items: Vec<Diagnostic>) -> Diagnostics {
    items.sort_by(|a, b| {
        let key = |d: &Diagnostic| {
            d.loc
                .as_ref()
                .map(|l| (1, l.file != path, l.file.clone(), l.line, l.col))
        };
        key(a).cmp(&key(b))
    });
    items.dedup();
    Diagnostics {
        file: path.to_string(),
        items,
    }
}

/// Whether `path` exists as a readable file (for early CLI checks).
pub fn is_readable_file(path: &Path) -> bool {
    std::fs::File::open(path).is_ok() && path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_scop_pairs_and_unmatched_pragmas() {
        let src = "int x;\n#pragma scop\nfor(;;);\n  #  pragma   endscop\n#pragma endscop\n";
        let (regions, unmatched) = scop_regions(src);
        assert_eq!(regions, vec![(2, 4)]);
        assert_eq!(unmatched, vec![5]);
    }
}
