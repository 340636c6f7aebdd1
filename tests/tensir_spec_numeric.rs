//! Numeric end-to-end smoke check of the golden lifted programs: each runs
//! on random inputs in the targets' reference interpreter, in NumPy (the
//! generated code, one Python process for all), and as its C kernel's spec
//! evaluated numerically; all three must agree.

mod tensir_spec_common;

use std::collections::HashMap;
use std::path::Path;

use tensir_spec_common::{load_golden, Golden, GOLDEN, ROOT};
use tenslift::algebra::Symbol;
use tenslift::spec::spec_of_kernel;
use tenslift_targets::interp::{self, Array, Outcome};
use tenslift_targets::runner::{python_interpreter, run_batch, Case};
use tenslift_targets::{DType, ParamKind, Program, Target};

/// SplitMix64, seeded per program so every run sees the same inputs.
struct Rng(u64);

impl Rng {
    fn new(seed: &str) -> Rng {
        Rng(seed.bytes().fold(0x9E37_79B9_7F4A_7C15, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x1000_0000_01B3)
        }))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Random arguments: floats in [0.5, 2.5] (square roots, logs and divisors
/// stay defined), uint8 pixels in [1, 255] (color burn divides by them).
fn random_args(program: &Program, sizes: &HashMap<String, i64>) -> HashMap<String, Array> {
    let mut rng = Rng::new(&program.name);
    let mut args = HashMap::new();
    for p in &program.params {
        if p.kind == ParamKind::Size {
            continue;
        }
        let ty = p.ty();
        let shape: Vec<usize> = ty
            .shape
            .iter()
            .map(|d| d.eval(&|s| sizes.get(s).copied()).expect("sizes bound") as usize)
            .collect();
        let n: usize = shape.iter().product();
        let array = if ty.dtype.is_float() {
            let values = (0..n).map(|_| rng.uniform(0.5, 2.5)).collect();
            Array::from_f64(ty.dtype, shape, values)
        } else {
            let values = (0..n).map(|_| 1 + (rng.next() % 255) as i64).collect();
            Array::from_i64(ty.dtype, shape, values)
        };
        args.insert(p.name.to_string(), array);
    }
    args
}

fn close(dtype: DType, want: f64, got: f64) -> bool {
    let tol = match dtype {
        DType::F32 => 1e-4,
        DType::F64 => 1e-9,
        _ => 0.0,
    };
    (want - got).abs() <= tol * want.abs().max(1.0)
}

fn compare(what: &str, want: &Outcome, got: &Outcome) -> Vec<String> {
    let mut diffs = Vec::new();
    let pairs = want
        .arrays
        .iter()
        .map(|(name, w)| (name.clone(), w, got.arrays.get(name)))
        .chain(
            want.returned
                .iter()
                .map(|w| ("return".to_string(), w, got.returned.as_ref())),
        );
    for (name, w, g) in pairs {
        let Some(g) = g else {
            diffs.push(format!("{what}: `{name}` missing"));
            continue;
        };
        if w.shape != g.shape || w.len() != g.len() {
            diffs.push(format!(
                "{what}: `{name}` shape {:?} vs {:?}",
                w.shape, g.shape
            ));
            continue;
        }
        if let Some(i) = (0..w.len()).find(|&i| !close(w.dtype, w.get_f64(i), g.get_f64(i))) {
            diffs.push(format!(
                "{what}: `{name}`[{i}] = {} expected {}",
                g.get_f64(i),
                w.get_f64(i)
            ));
        }
    }
    diffs
}

/// The C kernel's spec, evaluated at the same inputs, as an outcome.
fn c_spec_outcome(g: &Golden, args: &HashMap<String, Array>) -> Result<Outcome, String> {
    let spec = spec_of_kernel(&g.kernel, &g.sizes).map_err(|e| e.to_string())?;
    let env = |s: &Symbol| -> Option<f64> {
        if s.index().is_empty() {
            if let Some(v) = g.sizes.get(s.name()) {
                return Some(*v as f64);
            }
        }
        let a = args.get(s.name())?;
        let mut offset = 0usize;
        for (&i, &n) in s.index().iter().zip(&a.shape) {
            offset = offset * n + i as usize;
        }
        (offset < a.len()).then(|| a.get_f64(offset))
    };
    let mut outcome = Outcome {
        arrays: Default::default(),
        returned: None,
    };
    for out in &spec.outputs {
        let dtype = g
            .program
            .param(&out.name)
            .map(|p| p.ty().dtype)
            .or(g.program.ret)
            .ok_or_else(|| format!("C output `{}` unknown to the program", out.name))?;
        let values = out
            .value
            .elems()
            .iter()
            .map(|e| e.eval(&env).map_err(|err| format!("{}: {err}", out.name)))
            .collect::<Result<Vec<f64>, String>>()?;
        let array = Array::from_f64(DType::F64, out.value.shape().to_vec(), values);
        let array = Array { dtype, ..array };
        if out.name == "return" {
            outcome.returned = Some(array);
        } else {
            outcome.arrays.insert(out.name.clone(), array);
        }
    }
    Ok(outcome)
}

#[test]
fn golden_programs_agree_numerically_in_the_interpreter_numpy_and_the_c_spec() {
    let goldens: Vec<Golden> = GOLDEN.iter().map(|(s, f)| load_golden(s, f)).collect();
    let sizes: Vec<HashMap<String, i64>> = goldens
        .iter()
        .map(|g| g.sizes.iter().map(|(k, v)| (k.clone(), *v)).collect())
        .collect();
    let args: Vec<_> = goldens
        .iter()
        .zip(&sizes)
        .map(|(g, s)| random_args(&g.program, s))
        .collect();
    let mut failures = Vec::new();
    let mut expected = Vec::new();
    for ((g, s), a) in goldens.iter().zip(&sizes).zip(&args) {
        let want = interp::run(&g.program, s, a)
            .unwrap_or_else(|e| panic!("{}: interpreter failed: {e}", g.stem));
        match c_spec_outcome(g, a) {
            Ok(c) => failures.extend(compare(&format!("{} (C spec)", g.stem), &want, &c)),
            Err(e) => failures.push(format!("{}: C spec evaluation failed: {e}", g.stem)),
        }
        expected.push(want);
    }
    let cases: Vec<Case> = goldens
        .iter()
        .zip(&args)
        .map(|(g, a)| Case {
            id: format!("golden_{}", g.stem),
            program: &g.program,
            sizes: g.sizes.clone(),
            args: a.clone(),
        })
        .collect();
    let python = python_interpreter(Path::new(ROOT));
    assert!(
        python.exists(),
        "Python interpreter {} not found: set TENSLIFT_PYTHON",
        python.display()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let results = run_batch(&python, Target::Numpy, &cases, dir.path())
        .unwrap_or_else(|e| panic!("NumPy runner: {e}"));
    for ((g, want), got) in goldens.iter().zip(&expected).zip(&results) {
        match got {
            Ok(got) => failures.extend(compare(&format!("{} (NumPy)", g.stem), want, got)),
            Err(e) => failures.push(format!("{} (NumPy): {e}", g.stem)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
