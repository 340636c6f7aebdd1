//! `tenslift extract` must never panic: truncated files, binary garbage,
//! empty files, absurd nesting and huge literals all end with exit code 1
//! (rejected) or 2 (unusable input), never 101 (a Rust panic).

use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn run_extract(path: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .arg("extract")
        .arg(path)
        .output()
        .expect("run tenslift");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_clean_failure(path: &Path, what: &str) {
    let (code, stderr) = run_extract(path);
    assert!(
        matches!(code, Some(1) | Some(2)),
        "{what}: exit code {code:?}, stderr:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what} panicked:\n{stderr}");
}

/// A deterministic pseudo-random byte stream (xorshift), no extra crates.
fn garbage(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

#[test]
fn hostile_inputs_fail_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write fixture");
        p
    };
    assert_clean_failure(&write("empty.c", b""), "empty file");
    for seed in 1..4u64 {
        let p = write(&format!("garbage{seed}.c"), &garbage(4096, seed));
        assert_clean_failure(&p, "binary garbage");
    }
    let deep_parens = format!(
        "void f(int n, int *a) {{ for (int i = 0; i < n; i++) a[i] = {}1{}; }}\n",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    assert_clean_failure(
        &write("parens.c", deep_parens.as_bytes()),
        "10000-deep parentheses",
    );
    let long_chain = format!(
        "void f(int n, int *a) {{ for (int i = 0; i < n; i++) a[i] = 0{}; }}\n",
        " + a[i]".repeat(10_000)
    );
    assert_clean_failure(&write("chain.c", long_chain.as_bytes()), "10000-term sum");
    let deep_blocks = format!(
        "void f(int n, int *a) {{ for (int i = 0; i < n; i++) {} a[i] = 1; {} }}\n",
        "{".repeat(2_000),
        "}".repeat(2_000)
    );
    assert_clean_failure(
        &write("blocks.c", deep_blocks.as_bytes()),
        "2000-deep blocks",
    );
    let huge = "void f(int n, int *a) { for (int i = 0; i < n; i++) a[i] = 123456789012345678901234567890; }\n";
    assert_clean_failure(&write("huge.c", huge.as_bytes()), "huge literal");
    let nested_helpers = format!(
        "static inline float sq(float x) {{ return x * x; }}\n\
         void f(int n, float *y) {{ for (int i = 0; i < n; i++) y[i] = {}y[i]{}; }}\n",
        "sq(".repeat(30),
        ")".repeat(30)
    );
    assert_clean_failure(
        &write("helpers.c", nested_helpers.as_bytes()),
        "exponential helper inlining",
    );
    let mut doubling = String::from("static inline float h0(float x) { return x; }\n");
    for k in 1..13 {
        doubling.push_str(&format!(
            "static inline float h{k}(float x) {{ return h{}(x) + h{}(x); }}\n",
            k - 1,
            k - 1
        ));
    }
    doubling
        .push_str("void f(int n, float *y) { for (int i = 0; i < n; i++) y[i] = h12(y[i]); }\n");
    assert_clean_failure(
        &write("doubling.c", doubling.as_bytes()),
        "doubling helpers",
    );
    let missing = dir.path().join("does_not_exist.c");
    let (code, _) = run_extract(&missing);
    assert_eq!(code, Some(2), "missing file");
}

#[test]
fn truncated_fixtures_fail_cleanly_or_extract() {
    let dir = tempfile::tempdir().expect("tempdir");
    let positive = Path::new(ROOT).join("tests/fixtures/extract/positive");
    let mut files: Vec<_> = std::fs::read_dir(&positive)
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    files.sort();
    for (n, path) in files.iter().enumerate().take(12) {
        let text = std::fs::read(path).expect("read fixture");
        for cut in [text.len() / 3, text.len() / 2, text.len() * 9 / 10] {
            let p = dir.path().join(format!("trunc_{n}_{cut}.c"));
            std::fs::write(&p, &text[..cut]).expect("write");
            let (code, stderr) = run_extract(&p);
            assert!(
                matches!(code, Some(0) | Some(1) | Some(2)),
                "{} cut at {cut}: exit {code:?}\n{stderr}",
                path.display()
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
}

#[test]
fn deepest_accepted_expression_still_round_trips_through_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let terms = 90;
    let src = format!(
        "void f(int n, double *a, const double *b) {{ for (int i = 0; i < n; i++) a[i] = 0.0{}; }}\n",
        " + b[i]".repeat(terms)
    );
    let path = dir.path().join("deep_sum.c");
    std::fs::write(&path, src).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .env("LIBCLANG_PATH", "/usr/lib/llvm-19/lib")
        .arg("extract")
        .arg(&path)
        .arg("--json")
        .output()
        .expect("run tenslift");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tu: tenslift_frontend::ir::TranslationUnit =
        serde_json::from_slice(&out.stdout).expect("deep JSON parses with default limits");
    assert_eq!(tu.kernels.len(), 1);
}
