//! End-to-end tests of `tenslift extract` on the C kernels in
//! `tests/fixtures/extract/`: every positive kernel's text IR and every
//! negative kernel's diagnostics are insta snapshots; the JSON output of
//! every positive kernel must parse back to the same IR the library returns.
//!
//! A fixture's first line may be `// tenslift-args: ...` with extra flags.
//! The binary runs from the package root with relative paths, so snapshots
//! hold no absolute paths.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tenslift_frontend::ir::TranslationUnit;
use tenslift_frontend::{extract, Options};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(ROOT).join("tests/fixtures/extract").join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    files
}

fn relative(path: &Path) -> String {
    path.strip_prefix(ROOT)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Extra flags from a `// tenslift-args:` first line.
fn fixture_args(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("// tenslift-args:"))
        .map(|rest| rest.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

fn tenslift(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(ROOT)
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .args(args)
        .output()
        .expect("run tenslift")
}

fn extract_args(path: &Path, json: bool) -> Vec<String> {
    let mut args = vec!["extract".to_string(), relative(path)];
    args.extend(fixture_args(path));
    if json {
        args.push("--json".to_string());
    }
    args
}

/// The same flags as `Options` for the library call.
fn fixture_options(path: &Path) -> Options {
    let args = fixture_args(path);
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-I" => o.include_dirs.extend(it.next().map(PathBuf::from)),
            "--function" => o.functions.extend(it.next().cloned()),
            other => {
                if let Some(d) = other.strip_prefix("-D") {
                    o.defines.push(d.to_string());
                } else if let Some(i) = other.strip_prefix("-I") {
                    o.include_dirs.push(PathBuf::from(i));
                }
            }
        }
    }
    o
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
fn positive_kernels_have_the_expected_ir() {
    let files = fixtures("positive");
    assert!(files.len() >= 40, "only {} positive fixtures", files.len());
    for path in files {
        let out = tenslift(&extract_args(&path, false));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{} was rejected:\n{stderr}",
            path.display()
        );
        assert!(
            stderr.is_empty(),
            "{}: stderr not empty: {stderr}",
            path.display()
        );
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        insta::with_settings!({
            snapshot_path => "snapshots/extract_positive",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(stem(&path), stdout);
        });
    }
}

#[test]
fn negative_kernels_are_rejected_with_located_diagnostics() {
    let files = fixtures("negative");
    assert!(files.len() >= 15, "only {} negative fixtures", files.len());
    for path in files {
        let out = tenslift(&extract_args(&path, false));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{} was not rejected; stderr:\n{stderr}",
            path.display()
        );
        assert!(
            out.stdout.is_empty(),
            "{}: a rejected file must print nothing on stdout",
            path.display()
        );
        assert!(stderr.contains("error[TL0"), "{}: {stderr}", path.display());
        insta::with_settings!({
            snapshot_path => "snapshots/extract_negative",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(stem(&path), stderr);
        });
    }
}

#[test]
fn json_output_round_trips_to_the_library_ir() {
    for path in fixtures("positive") {
        let rel = relative(&path);
        let out = tenslift(&extract_args(&path, true));
        assert_eq!(out.status.code(), Some(0), "{rel}");
        let from_cli: TranslationUnit = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{rel}: --json output does not parse: {e}"));
        // The library, called from the package root like the binary.
        let cwd_guard = std::env::current_dir().ok();
        assert_eq!(
            cwd_guard.as_deref(),
            Some(Path::new(ROOT)),
            "tests run from the package root"
        );
        let from_lib = extract(&rel, &fixture_options(&path))
            .unwrap_or_else(|e| panic!("{rel}: library extract failed: {e}"));
        assert_eq!(
            from_cli, from_lib,
            "{rel}: CLI JSON differs from the library IR"
        );
        let again: TranslationUnit =
            serde_json::from_str(&serde_json::to_string(&from_lib).expect("serialise"))
                .expect("parse back");
        assert_eq!(again, from_lib, "{rel}: JSON round trip changed the IR");
    }
}

#[test]
fn library_extract_is_safe_from_parallel_threads() {
    // Each call parses on its own thread with its own libclang index, so
    // concurrent callers (parallel tests, a rayon pool) cannot interfere.
    let files: Vec<PathBuf> = fixtures("positive").into_iter().take(8).collect();
    let sequential: Vec<TranslationUnit> = files
        .iter()
        .map(|p| extract(&relative(p), &fixture_options(p)).expect("extracts"))
        .collect();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let files = files.clone();
            std::thread::spawn(move || {
                files
                    .iter()
                    .map(|p| extract(&relative(p), &fixture_options(p)).expect("extracts"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for h in handles {
        let parallel = h.join().expect("thread finished");
        assert_eq!(parallel, sequential);
    }
}
