//! Every evaluator against the one table of C semantics
//! (`tenslift_targets::c_semantics`): gcc-compiled C as ground truth, the
//! algebra's exact evaluation (the spec of the C through the real
//! frontend), TensIR's interpreter, verify's concrete C interpreter (the one
//! that replays counterexamples), and through the real `tenslift verify`
//! binary both of verify's Z3 paths (the bounded encoding of both sides at
//! concrete sizes, and the unbounded prover's encoding for all sizes) and
//! the code the NumPy, JAX, PyTorch and StableHLO emitters write, run
//! against the C.
//!
//! The table's cases become one C kernel (one output array per case, each
//! element the case's expression over literals) and one TensIR program
//! that spells each case with C's promotions explicit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tenslift::spec::{spec_at_chosen_sizes, Sizes};
use tenslift_targets::c_semantics::{c_type, defined_cases, Case, Expected};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn output_name(case: &Case) -> String {
    format!("y_{}", case.name)
}

fn expected(case: &Case) -> f64 {
    match case.expected {
        Expected::Value(v) => v,
        Expected::Undefined(why) => panic!("{} is undefined: {why}", case.name),
    }
}

/// The kernel: `y_<case>[i] = <case's C expression>` for every defined case.
fn c_kernel() -> String {
    let cases: Vec<&Case> = defined_cases().collect();
    let params: Vec<String> = cases
        .iter()
        .map(|c| format!("{} *{}", c_type(c.result()), output_name(c)))
        .collect();
    let mut text = format!("void c_semantics(int n, {})\n{{\n", params.join(", "));
    text.push_str("    for (int i = 0; i < n; i++) {\n");
    for c in &cases {
        text.push_str(&format!(
            "        {}[i] = {};\n",
            output_name(c),
            c.c_expr()
        ));
    }
    text.push_str("    }\n}\n");
    text
}

/// A driver for gcc: runs the kernel once and prints `name value` lines.
fn c_main() -> String {
    let cases: Vec<&Case> = defined_cases().collect();
    let mut text = String::from("#include <stdio.h>\n");
    let params: Vec<String> = cases
        .iter()
        .map(|c| format!("{} *", c_type(c.result())))
        .collect();
    text.push_str(&format!("void c_semantics(int, {});\n", params.join(", ")));
    text.push_str("int main(void)\n{\n");
    for c in &cases {
        text.push_str(&format!(
            "    {} {}[1];\n",
            c_type(c.result()),
            output_name(c)
        ));
    }
    let args: Vec<String> = cases.iter().map(|c| output_name(c)).collect();
    text.push_str(&format!("    c_semantics(1, {});\n", args.join(", ")));
    for c in &cases {
        let name = output_name(c);
        text.push_str(&format!(
            "    printf(\"{name} %.17g\\n\", (double){name}[0]);\n"
        ));
    }
    text.push_str("    return 0;\n}\n");
    text
}

/// The TensIR program computing every case.
fn tensir_program() -> String {
    let cases: Vec<&Case> = defined_cases().collect();
    let params: Vec<String> = cases
        .iter()
        .map(|c| format!("{}: out {}[n]", output_name(c), c.result()))
        .collect();
    let mut text = format!("func c_semantics(n: size, {}) {{\n", params.join(", "));
    for c in &cases {
        text.push_str(&format!(
            "  {} = broadcast({}, [n]);\n",
            output_name(c),
            c.tensir_expr()
        ));
    }
    text.push_str("}\n");
    text
}

/// The files of the test, written once per process.
fn files() -> &'static (PathBuf, PathBuf, PathBuf) {
    static FILES: std::sync::OnceLock<(PathBuf, PathBuf, PathBuf)> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c_semantics");
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            path
        };
        (
            write("c_semantics.c", c_kernel()),
            write("main.c", c_main()),
            write("c_semantics.tensir", tensir_program()),
        )
    })
}

fn check_all(evaluator: &str, value_of: impl Fn(&Case) -> Option<f64>) {
    let mut wrong = Vec::new();
    for case in defined_cases() {
        let want = expected(case);
        match value_of(case) {
            Some(got) if got == want => {}
            got => wrong.push(format!("{}: want {want}, got {got:?}", case.name)),
        }
    }
    assert!(
        wrong.is_empty(),
        "{evaluator} disagrees with the table:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn gcc_agrees_with_the_table() {
    let (kernel, main, _) = files();
    let exe = kernel.with_extension("exe");
    let built = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(kernel)
        .arg(main)
        .output()
        .unwrap_or_else(|e| panic!("cannot run gcc: {e}"));
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&ran.stdout);
    let values: BTreeMap<String, f64> = stdout
        .lines()
        .filter_map(|l| {
            let (name, v) = l.split_once(' ')?;
            Some((name.to_string(), v.parse().ok()?))
        })
        .collect();
    check_all("gcc", |c| values.get(&output_name(c)).copied());
}

fn extract_kernel() -> tenslift_frontend::ir::Kernel {
    let (kernel, _, _) = files();
    let options = tenslift_frontend::Options {
        functions: vec!["c_semantics".to_string()],
        ..tenslift_frontend::Options::default()
    };
    let path = kernel.to_string_lossy().into_owned();
    let unit = tenslift_frontend::extract(&path, &options).unwrap_or_else(|e| panic!("{e}"));
    unit.kernels
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no kernel extracted"))
}

#[test]
fn the_algebra_agrees_with_the_table() {
    let spec = spec_at_chosen_sizes(&extract_kernel(), &Sizes::new())
        .unwrap_or_else(|e| panic!("spec: {e}"));
    check_all("the algebra (spec of the C)", |c| {
        let out = spec.output(&output_name(c))?;
        Some(out.value.elems().first()?.as_constant()?.to_f64())
    });
}

#[test]
fn verify_concrete_c_interpreter_agrees_with_the_table() {
    let kernel = extract_kernel();
    let sizes = [("n".to_string(), 1)].into_iter().collect();
    let args = defined_cases()
        .map(|c| {
            let zeros = tenslift_targets::interp::Array::zeros(c.result(), vec![1]);
            (output_name(c), zeros)
        })
        .collect();
    let run = tenslift_verify::concrete::run_kernel(&kernel, &sizes, &args)
        .unwrap_or_else(|e| panic!("{e}"));
    check_all("verify's concrete C interpreter", |c| {
        let a = run.arrays.get(&output_name(c))?;
        Some(if c.result().is_float() {
            a.get_f64(0)
        } else {
            a.get_i64(0) as f64
        })
    });
}

#[test]
fn the_tensir_interpreter_agrees_with_the_table() {
    let (_, _, program) = files();
    let text = std::fs::read_to_string(program).unwrap_or_else(|e| panic!("{e}"));
    let program = tenslift_targets::parse_program("c_semantics.tensir", &text)
        .unwrap_or_else(|d| panic!("{d}\n{text}"));
    let sizes = [("n".to_string(), 1)].into_iter().collect();
    let outcome = tenslift_targets::interp::run(&program, &sizes, &Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    check_all("the TensIR interpreter", |c| {
        let a = outcome.arrays.get(&output_name(c))?;
        Some(if c.result().is_float() {
            a.get_f64(0)
        } else {
            a.get_i64(0) as f64
        })
    });
}

fn tenslift(args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenslift"));
    cmd.current_dir(ROOT).args(args);
    if std::env::var_os("TENSLIFT_PYTHON").is_none() && !Path::new(ROOT).join(".venv").exists() {
        cmd.env("TENSLIFT_PYTHON", "/work/main/.venv/bin/python");
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run tenslift: {e}"))
}

/// `tenslift verify` of the C kernel against `program`, as its JSON record.
fn verify(program: &Path) -> Value {
    let (kernel, _, _) = files();
    let out = tenslift(&[
        "verify",
        &kernel.to_string_lossy(),
        "--function",
        "c_semantics",
        "--program",
        &program.to_string_lossy(),
        "--json",
        "--timeout",
        "60",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().next().unwrap_or_else(|| {
        panic!(
            "no record; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

#[test]
fn both_z3_paths_and_every_emitted_target_agree_with_the_c() {
    let (_, _, program) = files();
    let r = verify(program);
    // Z3 interprets the C (verify's kernel encoding) and the TensIR
    // (its program encoding) independently; both must give each case's
    // value for every input, here none but the literals. The unbounded
    // prover encodes both sides again, for every `n`.
    assert_eq!(r["bounded"], "pass", "{r}");
    assert_eq!(r["unbounded"], "proved", "{r}");
    let runs = r["details"]["differential"]["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for target in ["numpy", "jax", "pytorch", "hlo"] {
        let mine: Vec<&Value> = runs.iter().filter(|x| x["target"] == target).collect();
        assert!(!mine.is_empty(), "{target} did not run: {r}");
        assert!(mine.iter().all(|x| x["verdict"] == "pass"), "{target}: {r}");
    }
}

#[test]
fn a_program_off_by_one_on_one_case_fails_bounded_and_differential() {
    // The same program with C's truncation replaced by rounding down on
    // one case: every check above must be able to fail.
    let (_, _, program) = files();
    let text = std::fs::read_to_string(program).unwrap_or_else(|e| panic!("{e}"));
    let wrong = text.replace("cast(-2.7f32, i32)", "-3i32");
    assert_ne!(wrong, text);
    let path = program.with_file_name("floor_instead_of_trunc.tensir");
    std::fs::write(&path, wrong).unwrap_or_else(|e| panic!("{e}"));
    let r = verify(&path);
    assert_eq!(r["bounded"], "fail", "{r}");
    assert_eq!(r["unbounded"], "fail", "{r}");
    assert_eq!(r["differential"], "fail", "{r}");
}
