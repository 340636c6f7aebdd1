//! `tenslift optimize` refusals on the real binary: every fixture in
//! tests/fixtures/numpy/ (outside `ok/`) is a program the NumPy frontend
//! must refuse with a located diagnostic, a non-zero exit code and no
//! output file. One snapshot line per fixture (ruff's style): the exit
//! code and each diagnostic's first line.

use std::path::Path;
use std::process::Command;

const FIXTURES: &str = "tests/fixtures/numpy";

/// Runs `tenslift optimize` from the crate root (so paths in diagnostics
/// are relative and stable) and returns (exit code, stdout, stderr).
fn optimize(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--color", "never", "optimize"])
        .args(args)
        .output()
        .expect("the tenslift binary runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The `file:line:col: error[...]` lines of a diagnostic dump.
fn error_lines<'a>(stderr: &'a str, file: &str) -> Vec<&'a str> {
    stderr
        .lines()
        .filter(|l| l.starts_with(file) && l.contains(": error"))
        .collect()
}

/// Whether `line` is `file:LINE:COL: error...` with positive numbers.
fn located(line: &str, file: &str) -> bool {
    let Some(rest) = line.strip_prefix(file).and_then(|r| r.strip_prefix(':')) else {
        return false;
    };
    let mut parts = rest.splitn(3, ':');
    let number = |p: Option<&str>| p.and_then(|s| s.parse::<u32>().ok()).is_some_and(|n| n > 0);
    number(parts.next())
        && number(parts.next())
        && parts.next().is_some_and(|r| r.starts_with(" error"))
}

#[test]
fn every_bad_fixture_is_refused_at_its_location() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURES);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".py"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "fixtures: {names:?}");
    let scratch = tempfile::tempdir().expect("temp dir");
    let mut lines = Vec::new();
    for name in &names {
        let file = format!("{FIXTURES}/{name}");
        let out = scratch.path().join(name);
        let (code, stdout, stderr) = optimize(&[&file, "-o", out.to_str().expect("utf-8")]);
        let errors = error_lines(&stderr, &file);
        assert_ne!(code, 0, "{file} was accepted:\n{stderr}");
        assert!(!errors.is_empty(), "{file}: no diagnostic:\n{stderr}");
        for e in &errors {
            assert!(located(e, &file), "{file}: not located: {e}");
        }
        assert!(stdout.is_empty(), "{file}: stdout: {stdout}");
        assert!(!out.exists(), "{file}: an output file was written");
        let shown: Vec<&str> = errors.iter().map(|e| &e[FIXTURES.len() + 1..]).collect();
        lines.push(format!("exit {code}: {}", shown.join(" ; ")));
    }
    insta::assert_snapshot!(lines.join("\n"));
}

#[test]
fn refusals_and_usage_errors_have_distinct_exit_codes() {
    let good = format!("{FIXTURES}/ok/single.py");
    // A refused program (1), a missing function (3), a usage error (2).
    let (refused, _, _) = optimize(&[&format!("{FIXTURES}/loop.py")]);
    let (missing, stdout, stderr) = optimize(&[&good, "--function", "nope"]);
    let (usage, _, _) = optimize(&[&good, "--target", "auto"]);
    let (absent, _, _) = optimize(&["tests/fixtures/numpy/no_such_file.py"]);
    assert_eq!((refused, missing, usage, absent), (1, 3, 2, 2), "{stderr}");
    assert!(stdout.is_empty());
    let errors = error_lines(&stderr, &good);
    assert!(
        errors.len() == 1 && errors[0].contains("NP002") && errors[0].contains("`nope`"),
        "{stderr}"
    );
}
