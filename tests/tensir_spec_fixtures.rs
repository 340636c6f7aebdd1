//! Every operation of TensIR, executed symbolically, against the targets'
//! reference interpreter: each fixture program of `targets/tests/programs/`
//! is executed into exact expressions, those are evaluated numerically at
//! random inputs, and the values must match the interpreter's. Integer
//! inputs are small, so 32- and 64-bit arithmetic never overflows (the
//! spec, like the C spec, does not model that overflow).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use tenslift::algebra::Symbol;
use tenslift::spec::tensir::execute;
use tenslift_targets::interp::{self, Array};
use tenslift_targets::{parse_program, DType, ParamKind, Program};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

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

    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

struct Fixture {
    name: String,
    program: Program,
    sizes: BTreeMap<String, i64>,
    positive: bool,
    nonzero: bool,
}

fn load(path: &Path) -> Fixture {
    let text = std::fs::read_to_string(path).expect("readable fixture");
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let program = parse_program(&path.display().to_string(), &text)
        .unwrap_or_else(|d| panic!("fixture does not parse:\n{d}"));
    let mut sizes = BTreeMap::new();
    let mut spec_sizes = BTreeMap::new();
    let (mut positive, mut nonzero) = (false, false);
    for line in text.lines() {
        let Some(directive) = line.trim().strip_prefix("# test:") else {
            continue;
        };
        let mut words = directive.split_whitespace();
        match words.next() {
            Some("sizes") => {
                for kv in words {
                    let (k, v) = kv.split_once('=').expect("size directive k=v");
                    sizes.insert(k.to_string(), v.parse().expect("integer size"));
                }
            }
            // Sizes chosen for the targets' tests (NumPy's blocks of rows
            // need large arrays) give way to small ones here: every element
            // is an exact expression.
            Some("spec-sizes") => spec_sizes.extend(words.map(|kv| {
                let (k, v) = kv.split_once('=').expect("size directive k=v");
                (k.to_string(), v.parse::<i64>().expect("integer size"))
            })),
            Some("positive") => positive = true,
            Some("nonzero") => nonzero = true,
            _ => {}
        }
    }
    sizes.extend(spec_sizes);
    let defaults = [5, 4, 6, 3];
    let mut k = 0;
    for p in &program.params {
        if p.kind == ParamKind::Size && !sizes.contains_key(&*p.name) {
            sizes.insert(p.name.to_string(), defaults[k % defaults.len()]);
            k += 1;
        }
    }
    Fixture {
        name,
        program,
        sizes,
        positive,
        nonzero,
    }
}

/// Small inputs: floats are multiples of 1/8 (exact in f32, so the exact
/// spec and the f32 interpreter round alike on short chains), integers in
/// a range no 32-bit arithmetic of a fixture overflows.
fn random_args(f: &Fixture) -> HashMap<String, Array> {
    let mut rng = Rng::new(&f.name);
    let mut args = HashMap::new();
    for p in &f.program.params {
        if p.kind == ParamKind::Size {
            continue;
        }
        let ty = p.ty();
        let shape: Vec<usize> = ty
            .shape
            .iter()
            .map(|d| d.eval(&|s| f.sizes.get(s).copied()).expect("sizes bound") as usize)
            .collect();
        let n: usize = shape.iter().product();
        let array = if ty.dtype.is_float() {
            let (lo, hi) = if f.positive { (4, 20) } else { (-16, 16) };
            let values = (0..n).map(|_| rng.int(lo, hi) as f64 / 8.0).collect();
            Array::from_f64(ty.dtype, shape, values)
        } else {
            let (lo, hi) = match ty.dtype {
                DType::Bool => (0, 1),
                DType::U8 | DType::U16 | DType::U32 => (0, 250),
                DType::I8 => (-128, 127),
                _ => (-40, 40),
            };
            let values = (0..n)
                .map(|_| loop {
                    let v = rng.int(lo, hi);
                    if !(f.nonzero && v == 0) {
                        break v;
                    }
                })
                .collect();
            Array::from_i64(ty.dtype, shape, values)
        };
        args.insert(p.name.to_string(), array);
    }
    args
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(ROOT).join("targets/tests/programs");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture directory exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "tensir"))
        .collect();
    paths.sort();
    paths
}

fn check(f: &Fixture) -> Result<(), String> {
    let args = random_args(f);
    let sizes: HashMap<String, i64> = f.sizes.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let want = interp::run(&f.program, &sizes, &args).map_err(|e| format!("interp: {e}"))?;
    let spec = execute(&f.program, &f.sizes).map_err(|e| format!("execute: {e}"))?;
    let env = |s: &Symbol| -> Option<f64> {
        let a = args.get(s.name())?;
        if a.shape.is_empty() {
            return Some(a.get_f64(0));
        }
        let mut offset = 0usize;
        for (&i, &n) in s.index().iter().zip(&a.shape) {
            offset = offset * n + i as usize;
        }
        (offset < a.len()).then(|| a.get_f64(offset))
    };
    for out in &spec.outputs {
        let w = if out.name == "return" {
            want.returned.as_ref()
        } else {
            want.arrays.get(&out.name)
        }
        .ok_or_else(|| format!("interpreter has no `{}`", out.name))?;
        if w.len() != out.value.len() {
            return Err(format!(
                "`{}`: {} vs {} elements",
                out.name,
                w.len(),
                out.value.len()
            ));
        }
        for (i, e) in out.value.elems().iter().enumerate() {
            let got = e
                .eval(&env)
                .map_err(|err| format!("`{}`[{i}]: {err}", out.name))?;
            let expected = w.get_f64(i);
            let tol = match out.dtype {
                DType::F32 => 1e-5,
                DType::F64 => 1e-9,
                _ => 0.0,
            };
            let same = (got - expected).abs() <= tol * expected.abs().max(1.0)
                || (got.is_nan() && expected.is_nan());
            if !same {
                return Err(format!(
                    "`{}`[{i}] = {got} from {e}, interpreter says {expected}",
                    out.name
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn symbolic_execution_agrees_with_the_interpreter_on_every_targets_fixture() {
    let paths = fixtures();
    assert!(paths.len() >= 50, "only {} fixtures found", paths.len());
    let mut failures = Vec::new();
    for path in &paths {
        let f = load(path);
        if let Err(e) = check(&f) {
            failures.push(format!("{}: {e}", f.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures disagree:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
