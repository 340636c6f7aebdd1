//! Resource limits on what libclang may read, checked before the parse:
//! libclang has no hook to refuse a file, and `#include "/dev/zero"` makes
//! it read (and allocate) until it is killed. Every `#include` we can
//! resolve textually (quoted, absolute, or found in an `-I` directory) and
//! every `-include` file must be a regular file of at most
//! [`MAX_FILE_BYTES`]; resolved files are scanned in turn. Includes spelled
//! through a macro cannot be resolved here: the parse deadline stops those.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::diagnostics::{Diagnostic, UNSAFE_INPUT_FILE};
use crate::ir::Loc;
use crate::options::Options;

/// The largest source or header file the frontend reads.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// At most this many distinct files are scanned (include graphs are small;
/// this only bounds the work on hostile input).
const MAX_SCANNED_FILES: usize = 4096;

/// Why `path` may not be read, if it may not: not a regular file, or too
/// large. A missing file is clang's to report.
pub fn unsafe_to_read(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a device, FIFO or socket)"
        };
        return Some(format!("`{}`: {what}", path.display()));
    }
    (meta.len() > MAX_FILE_BYTES).then(|| {
        format!(
            "`{}`: {} MiB, more than the {} MiB limit",
            path.display(),
            meta.len() / (1024 * 1024),
            MAX_FILE_BYTES / (1024 * 1024)
        )
    })
}

/// One `#include` directive: its target as written, whether quoted, and
/// its 1-based line and column.
fn directives(source: &str) -> Vec<(String, bool, u32, u32)> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("include") else {
            continue;
        };
        let rest = rest.trim_start();
        let (close, quoted) = match rest.chars().next() {
            Some('"') => ('"', true),
            Some('<') => ('>', false),
            _ => continue,
        };
        let Some(end) = rest[1..].find(close) else {
            continue;
        };
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let col = u32::try_from(line.len() - trimmed.len() + 1).unwrap_or(1);
        out.push((rest[1..1 + end].to_string(), quoted, line_no, col));
    }
    out
}

/// Where clang would find `name` among the places we know of (system
/// directories excluded: their headers are trusted).
fn resolve(name: &str, quoted: bool, from: &Path, options: &Options) -> Option<PathBuf> {
    let named = Path::new(name);
    if named.is_absolute() {
        return Some(named.to_path_buf());
    }
    let here = quoted.then(|| from.parent().unwrap_or(Path::new("")).join(named));
    here.into_iter()
        .chain(options.include_dirs.iter().map(|d| d.join(named)))
        .find(|p| p.exists())
}

/// Every include reachable from `main` (whose text is `source`) that may
/// not be read, located at its `#include` line.
pub fn check(main: &str, source: &str, options: &Options) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for forced in &options.includes {
        if let Some(why) = unsafe_to_read(forced) {
            problems.push(Diagnostic::new(
                UNSAFE_INPUT_FILE,
                None,
                format!("-include {why}"),
            ));
        }
    }
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut queue: Vec<(PathBuf, String)> = vec![(PathBuf::from(main), source.to_string())];
    for forced in options
        .includes
        .iter()
        .filter(|f| unsafe_to_read(f).is_none())
    {
        if let Ok(text) = std::fs::read_to_string(forced) {
            queue.push((forced.clone(), text));
        }
    }
    while let Some((file, text)) = queue.pop() {
        for (name, quoted, line, col) in directives(&text) {
            let Some(target) = resolve(&name, quoted, &file, options) else {
                continue;
            };
            if let Some(why) = unsafe_to_read(&target) {
                let loc = Loc {
                    file: file.display().to_string(),
                    line,
                    col,
                };
                problems.push(Diagnostic::new(
                    UNSAFE_INPUT_FILE,
                    Some(loc),
                    format!("refusing to include {why}"),
                ));
                continue;
            }
            let key = target.canonicalize().unwrap_or(target.clone());
            if seen.len() < MAX_SCANNED_FILES && seen.insert(key) {
                if let Ok(text) = std::fs::read_to_string(&target) {
                    queue.push((target, text));
                }
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_quoted_and_angled_directives() {
        let src = "#include <stdio.h>\n  #  include \"a/b.h\" // x\n#define X 1\n#include MACRO\n";
        let found = directives(src);
        assert_eq!(
            found,
            vec![
                ("stdio.h".to_string(), false, 1, 1),
                ("a/b.h".to_string(), true, 2, 3)
            ]
        );
    }

    #[test]
    fn refuses_devices_and_directories_but_not_regular_files() {
        assert!(unsafe_to_read(Path::new("/dev/zero")).is_some());
        assert!(unsafe_to_read(Path::new("/tmp")).is_some());
        assert!(unsafe_to_read(Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/includes.rs"
        )))
        .is_none());
        let options = Options::default();
        let problems = check("k.c", "int x;\n#include \"/dev/zero\"\n", &options);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].loc.as_ref().map(|l| l.line), Some(2));
    }
}
