//! Issue #20's reproducers, through the real binary on real C: each ends
//! with a located diagnostic or a clean exit code, never a panic (101), a
//! signal or a hang; and the options a new user meets first (`--target`'s
//! default, `--quiet`, `--color`, the examples in `--help`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn fixture(name: &str) -> PathBuf {
    Path::new(ROOT).join("tests/fixtures/hardening").join(name)
}

fn tenslift(args: &[&str]) -> Output {
    tenslift_in(Path::new(ROOT), args)
}

/// Runs in `dir`, so that relative paths (and snapshots) are stable.
fn tenslift_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .env_remove("NO_COLOR")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run tenslift")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// No panic and no signal: the process exited with one of our codes.
fn assert_clean(out: &Output, what: &str) {
    let err = stderr(out);
    assert!(
        matches!(out.status.code(), Some(0..=7)),
        "{what}: status {:?}\n{err}",
        out.status
    );
    assert!(!err.contains("panicked"), "{what} panicked:\n{err}");
}

const SAXPY: &str = "void saxpy(int n, float a, const float *x, float *y) {\n  \
                     for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];\n}\n";

#[test]
fn empty_iteration_space_does_not_panic_the_search() {
    let path = fixture("negative_step_not_equal.c");
    let out = tenslift(&["lift", &path.to_string_lossy(), "--timeout", "10"]);
    assert_clean(&out, "`i != 3*n; i--`");
}

#[test]
fn a_200_000_term_sum_is_refused_with_a_located_diagnostic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let terms: Vec<String> = (0..200_000).map(|k| format!("a[{k}]")).collect();
    let src = format!(
        "void big(int n, double *a) {{ for (int i = 0; i < n; i++) a[i] = {}; }}\n",
        terms.join(" + ")
    );
    assert!(src.len() > 2_000_000);
    let path = dir.path().join("sum.c");
    std::fs::write(&path, src).expect("write");
    let out_py = dir.path().join("out.py");
    for command in ["extract", "lift"] {
        let mut args = vec![command, path.to_str().expect("utf-8 path")];
        if command == "lift" {
            args.extend(["-o", out_py.to_str().expect("utf-8 path")]);
        }
        let out = tenslift(&args);
        assert_clean(&out, command);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{command}: {err}");
        assert!(err.contains("sum.c:1:65: error[TL004]"), "{command}: {err}");
        // The 2 MB line is shown as a window around the column.
        assert!(
            err.len() < 2_000,
            "{command}: {} bytes of stderr",
            err.len()
        );
    }
    assert!(!out_py.exists(), "no partial output file");
    let out = tenslift_in(dir.path(), &["extract", "sum.c"]);
    insta::assert_snapshot!("sum_200000_terms_stderr", stderr(&out));
}

#[test]
fn an_exponential_macro_stops_at_the_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out_py = dir.path().join("out.py");
    let path = fixture("macro_bomb.c");
    let start = Instant::now();
    let out = tenslift(&[
        "lift",
        &path.to_string_lossy(),
        "--timeout",
        "2",
        "-o",
        &out_py.to_string_lossy(),
    ]);
    let took = start.elapsed();
    assert_clean(&out, "macro bomb");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(7), "{err}");
    // The parse gets at least 5 s whatever the search budget.
    assert!(err.contains("took longer than 5 s"), "{err}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert!(!out_py.exists(), "no partial output file");
    // `extract` has the same limit.
    let out = tenslift(&["extract", &path.to_string_lossy(), "--timeout", "1"]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
}

#[test]
fn device_includes_are_refused_before_parsing() {
    let out = tenslift(&["lift", &fixture("include_dev_zero.c").to_string_lossy()]);
    assert_clean(&out, "/dev/zero include");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("include_dev_zero.c:1:1: error[TL006]: refusing to include `/dev/zero`"),
        "{err}"
    );
    let relative = tenslift(&["extract", "tests/fixtures/hardening/include_dev_zero.c"]);
    insta::assert_snapshot!("include_dev_zero_stderr", stderr(&relative));
    // Through a symlink beside the file, found as a quoted include.
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.h")).expect("symlink");
    let path = dir.path().join("k.c");
    std::fs::write(&path, format!("#include \"zero.h\"\n{SAXPY}")).expect("write");
    let out = tenslift(&["extract", &path.to_string_lossy()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("k.c:1:1: error[TL006]"), "{err}");
    // The main file itself.
    let out = tenslift(&["extract", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn lift_defaults_to_numpy_and_quiet_silences_progress() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("saxpy.c");
    std::fs::write(&path, SAXPY).expect("write");
    let out = tenslift(&["lift", &path.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let code = String::from_utf8_lossy(&out.stdout);
    assert!(code.contains("target: numpy") && code.contains("import numpy as np"));
    assert!(stderr(&out).contains("saxpy: lifted in"));
    let out = tenslift(&["lift", "--quiet", &path.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out), "");
    assert_eq!(String::from_utf8_lossy(&out.stdout), code);
}

#[test]
fn color_follows_the_flag_and_no_color() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("goto.c");
    std::fs::write(
        &path,
        "void f(int n, int *a) { for (int i = 0; i < n; i++) { if (a[i]) goto out; a[i] = 1; } out: ; }\n",
    )
    .expect("write");
    let file = path.to_string_lossy();
    let always = stderr(&tenslift(&["extract", "--color=always", &file]));
    assert!(always.contains("\x1b[1;31merror[TL011]:"), "{always:?}");
    // Not a terminal: `auto` is plain, as is `never`.
    for flag in ["--color=auto", "--color=never"] {
        let plain = stderr(&tenslift(&["extract", flag, &file]));
        assert!(
            plain.contains("error[TL011]") && !plain.contains('\x1b'),
            "{flag}"
        );
    }
}

#[test]
fn every_subcommand_help_has_an_example() {
    for sub in [
        "extract",
        "spec",
        "emit",
        "optimize-tensir",
        "lift",
        "calibrate",
        "verify",
        "bench",
    ] {
        let out = tenslift(&[sub, "--help"]);
        assert_eq!(out.status.code(), Some(0));
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.contains("Examples:\n  tenslift "),
            "{sub} --help has no example:\n{help}"
        );
    }
    let lift = String::from_utf8_lossy(&tenslift(&["lift", "--help"]).stdout).into_owned();
    insta::assert_snapshot!("lift_help", lift);
}

#[test]
fn a_search_that_ignores_its_deadline_is_stopped_by_the_watchdog() {
    // A 65 536-term balanced sum: depth 17, so the frontend accepts it, but
    // a contraction sketch works through it without looking at the clock.
    fn balanced(lo: usize, hi: usize) -> String {
        if hi - lo == 1 {
            return format!("x[{lo}]");
        }
        let mid = (lo + hi) / 2;
        format!("({} + {})", balanced(lo, mid), balanced(mid, hi))
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bal.c");
    let src = format!(
        "void bal(int n, double *y, const double *x) {{ for (int i = 0; i < n; i++) y[i] = {}; }}\n",
        balanced(0, 1 << 16)
    );
    std::fs::write(&path, src).expect("write");
    let out_py = dir.path().join("out.py");
    let start = Instant::now();
    let out = tenslift(&[
        "lift",
        &path.to_string_lossy(),
        "--timeout",
        "10",
        "-o",
        &out_py.to_string_lossy(),
    ]);
    let took = start.elapsed();
    assert_clean(&out, "balanced sum");
    // Parse (<= 10 s) + search (10 s) + the watchdog's grace (15 s).
    assert!(took < Duration::from_secs(45), "took {took:?}");
    assert!(matches!(out.status.code(), Some(5 | 7)), "{}", stderr(&out));
    assert!(!out_py.exists(), "no partial output file");
}

#[test]
fn refusals_and_failures_point_at_the_next_step() {
    let negative = Path::new(ROOT).join("tests/fixtures/extract/negative");
    let out = tenslift(&[
        "extract",
        &negative.join("unknown_call.c").to_string_lossy(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(err.matches("error[TL030]").count(), 2, "{err}");
    assert_eq!(
        err.matches("note: helpers whose whole body").count(),
        1,
        "one note for two TL030s:\n{err}"
    );
    let out = tenslift(&["lift", &fixture("global_running_mix.c").to_string_lossy()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    // The global arrays' literal extent (1024) is traced small, so the
    // spec is computed; the reason is then that nothing vectorises (the
    // recurrence divides by its own value).
    assert!(
        err.contains("running_mix: failed") && err.contains("nothing vectorises"),
        "{err}"
    );
    assert!(
        err.contains("  tried: ") && err.contains("library candidates"),
        "{err}"
    );
    assert!(
        err.contains("next: `tenslift spec ") && err.contains("--function running_mix`"),
        "{err}"
    );
}

#[test]
fn hlo_with_several_kernels_asks_for_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("two.c");
    let relu = "void relu(int n, float *x) { for (int i = 0; i < n; i++) x[i] = x[i] > 0.0f ? x[i] : 0.0f; }\n";
    std::fs::write(&path, format!("{SAXPY}{relu}")).expect("write");
    let file = path.to_string_lossy();
    let out = tenslift(&["lift", &file, "--target", "hlo", "--size", "n=4"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("choose one with --function (saxpy, relu)"),
        "{err}"
    );
    let out = tenslift(&[
        "lift",
        &file,
        "-t",
        "hlo",
        "--size",
        "n=4",
        "--function",
        "relu",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // NumPy: one module with both kernels.
    let out = tenslift(&["lift", &file]);
    let code = String::from_utf8_lossy(&out.stdout);
    assert!(
        code.contains("def saxpy(") && code.contains("def relu("),
        "{code}"
    );
}
