//! Compiler flags for the parse: `-I`, `-D`, `-std`, `-include`, given
//! directly or read from a `compile_commands.json`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// How long the parse and extraction may take when nobody says
/// (`tenslift` passes its `--timeout`).
pub const DEFAULT_PARSE_TIMEOUT: Duration = Duration::from_secs(60);

/// How to parse the file and which kernels to extract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Functions to extract; empty means every function with a loop nest.
    pub functions: Vec<String>,
    pub include_dirs: Vec<PathBuf>,
    /// `NAME` or `NAME=VALUE`.
    pub defines: Vec<String>,
    /// `c99`, `c11`, `gnu11`, ...; clang's default when `None`.
    pub std: Option<String>,
    /// Headers to include first (`-include FILE`).
    pub includes: Vec<PathBuf>,
    /// The wall-clock limit on libclang's parse plus the extraction; past
    /// it [`crate::extract`] gives up with `ExtractError::Timeout` and
    /// abandons the parsing thread (libclang cannot be interrupted).
    pub parse_timeout: Duration,
    /// Keep the functions that lower when others in the file are refused
    /// for reasons of their own: those are listed in
    /// [`crate::ir::TranslationUnit::refused`] instead of refusing the
    /// whole file (problems of the file itself still refuse it, and so
    /// does a file where no function lowers).
    pub keep_going: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            functions: Vec::new(),
            include_dirs: Vec::new(),
            defines: Vec::new(),
            std: None,
            includes: Vec::new(),
            parse_timeout: DEFAULT_PARSE_TIMEOUT,
            keep_going: false,
        }
    }
}

impl Options {
    /// The clang command-line flags these options stand for.
    pub fn clang_args(&self) -> Vec<String> {
        let mut args = vec!["-x".to_string(), "c".to_string()];
        if let Some(std) = &self.std {
            args.push(format!("-std={std}"));
        }
        for dir in &self.include_dirs {
            args.push(format!("-I{}", dir.display()));
        }
        for d in &self.defines {
            args.push(format!("-D{d}"));
        }
        for f in &self.includes {
            args.push("-include".to_string());
            args.push(f.display().to_string());
        }
        args.push("-ferror-limit=0".to_string());
        args
    }
}

/// Problems reading a compilation database.
#[derive(Debug, thiserror::Error)]
pub enum CompileDbError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a valid compilation database: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path} has no entry for {file}")]
    NoEntry { path: String, file: String },
    #[error("{path}: unbalanced quotes in the command for {file}")]
    BadCommand { path: String, file: String },
}

#[derive(Deserialize)]
struct Entry {
    directory: String,
    file: String,
    #[serde(default)]
    arguments: Option<Vec<String>>,
    #[serde(default)]
    command: Option<String>,
}

/// Splits a shell command line (single/double quotes, backslash escapes).
fn shell_split(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        ch => cur.push(ch),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => cur.push(chars.next()?),
                        ch => cur.push(ch),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.push(chars.next()?);
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

fn absolute(dir: &Path, p: &str) -> PathBuf {
    let path = Path::new(p);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        dir.join(path)
    }
}

/// Keeps `-I`, `-D`, `-std` and `-include` from a compiler command line,
/// resolving relative paths against `dir`.
pub fn options_from_arguments(args: &[String], dir: &Path, into: &mut Options) {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let next = args.get(i + 1);
        let mut take_next = false;
        if a == "-I" {
            if let Some(v) = next {
                into.include_dirs.push(absolute(dir, v));
                take_next = true;
            }
        } else if let Some(v) = a.strip_prefix("-I") {
            into.include_dirs.push(absolute(dir, v));
        } else if a == "-D" {
            if let Some(v) = next {
                into.defines.push(v.clone());
                take_next = true;
            }
        } else if let Some(v) = a.strip_prefix("-D") {
            into.defines.push(v.to_string());
        } else if let Some(v) = a.strip_prefix("-std=").or_else(|| a.strip_prefix("--std=")) {
            into.std = Some(v.to_string());
        } else if a == "-include" {
            if let Some(v) = next {
                into.includes.push(absolute(dir, v));
                take_next = true;
            }
        }
        i += if take_next { 2 } else { 1 };
    }
}

/// Reads the flags for `file` from `build_dir/compile_commands.json`.
pub fn from_compile_commands(build_dir: &Path, file: &Path) -> Result<Options, CompileDbError> {
    let db_path = build_dir.join("compile_commands.json");
    let shown = db_path.display().to_string();
    let text = std::fs::read_to_string(&db_path).map_err(|source| CompileDbError::Read {
        path: shown.clone(),
        source,
    })?;
    let entries: Vec<Entry> =
        serde_json::from_str(&text).map_err(|source| CompileDbError::Parse {
            path: shown.clone(),
            source,
        })?;
    let wanted = canonical(file);
    let entry = entries
        .iter()
        .find(|e| canonical(&absolute(Path::new(&e.directory), &e.file)) == wanted)
        .ok_or_else(|| CompileDbError::NoEntry {
            path: shown.clone(),
            file: file.display().to_string(),
        })?;
    let args = match (&entry.arguments, &entry.command) {
        (Some(a), _) => a.clone(),
        (None, Some(c)) => shell_split(c).ok_or_else(|| CompileDbError::BadCommand {
            path: shown.clone(),
            file: file.display().to_string(),
        })?,
        (None, None) => Vec::new(),
    };
    let mut options = Options::default();
    // Skip the compiler itself.
    options_from_arguments(
        args.get(1..).unwrap_or(&[]),
        Path::new(&entry.directory),
        &mut options,
    );
    Ok(options)
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_shell_commands() {
        assert_eq!(
            shell_split(r#"cc -DNAME="a b" -I 'inc dir' x\ y.c"#).unwrap(),
            vec!["cc", "-DNAME=a b", "-I", "inc dir", "x y.c"]
        );
        assert!(shell_split("cc 'unterminated").is_none());
    }

    #[test]
    fn keeps_include_define_std_and_resolves_paths() {
        let args: Vec<String> = [
            "-O2", "-Iinc", "-I", "/abs", "-DN=4", "-D", "M", "-std=c99", "-include", "pre.h",
            "-c", "k.c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut o = Options::default();
        options_from_arguments(&args, Path::new("/build"), &mut o);
        assert_eq!(
            o.include_dirs,
            vec![PathBuf::from("/build/inc"), PathBuf::from("/abs")]
        );
        assert_eq!(o.defines, vec!["N=4", "M"]);
        assert_eq!(o.std.as_deref(), Some("c99"));
        assert_eq!(o.includes, vec![PathBuf::from("/build/pre.h")]);
    }
}
