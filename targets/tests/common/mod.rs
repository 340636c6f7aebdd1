//! Shared by the integration tests: loading the fixture programs, making
//! deterministic random inputs, and comparing results.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use tenslift_targets::interp::{Array, Data, Outcome};
use tenslift_targets::{parse_program, DType, ParamKind, Program};

pub struct Fixture {
    pub name: String,
    pub text: String,
    pub program: Program,
    pub sizes: BTreeMap<String, i64>,
    /// Float inputs drawn from [0.5, 2.5] instead of [-2, 2].
    pub positive: bool,
    /// Integer inputs never zero (divisors).
    pub nonzero: bool,
}

pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("programs")
}

pub fn load_fixtures() -> Vec<Fixture> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(programs_dir())
        .expect("fixture directory exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "tensir"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load_fixture(p)).collect()
}

pub fn load_fixture(path: &Path) -> Fixture {
    let text = std::fs::read_to_string(path).expect("readable fixture");
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let program = match parse_program(&path.display().to_string(), &text) {
        Ok(p) => p,
        Err(d) => panic!("fixture does not parse:\n{d}"),
    };
    let mut sizes = BTreeMap::new();
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
            Some("positive") => positive = true,
            Some("nonzero") => nonzero = true,
            // Sizes for the symbolic execution test (tests/tensir_spec_fixtures.rs).
            Some("spec-sizes") => {}
            other => panic!("unknown test directive {other:?} in {name}"),
        }
    }
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
        text,
        program,
        sizes,
        positive,
        nonzero,
    }
}

/// SplitMix64: small, deterministic, good enough for test inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: &str) -> Rng {
        Rng(seed.bytes().fold(0x9E37_79B9_7F4A_7C15, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x1000_0000_01B3)
        }))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }
}

fn int_range(d: DType) -> (i64, i64) {
    match d {
        DType::Bool => (0, 1),
        DType::I8 => (-128, 127),
        DType::U8 => (0, 255),
        DType::I16 => (-300, 300),
        DType::U16 => (0, 65535),
        DType::U32 => (0, 4_000_000_000),
        _ => (-1000, 1000),
    }
}

pub fn random_array(rng: &mut Rng, d: DType, shape: Vec<usize>, f: &Fixture) -> Array {
    let n: usize = shape.iter().product();
    if d.is_float() {
        let (lo, hi) = if f.positive { (0.5, 2.5) } else { (-2.0, 2.0) };
        Array::from_f64(d, shape, (0..n).map(|_| rng.uniform(lo, hi)).collect())
    } else {
        let (lo, hi) = int_range(d);
        let values = (0..n)
            .map(|_| loop {
                let v = rng.int(lo, hi);
                if !(f.nonzero && v == 0) {
                    break v;
                }
            })
            .collect();
        Array::from_i64(d, shape, values)
    }
}

/// Random values for every non-size parameter of a fixture.
pub fn random_args(f: &Fixture) -> HashMap<String, Array> {
    let mut rng = Rng::new(&f.name);
    let mut args = HashMap::new();
    for p in &f.program.params {
        let ty = p.ty();
        if p.kind == ParamKind::Size {
            continue;
        }
        let shape: Vec<usize> = ty
            .shape
            .iter()
            .map(|d| d.eval(&|s| f.sizes.get(s).copied()).expect("sizes bound") as usize)
            .collect();
        args.insert(
            p.name.to_string(),
            random_array(&mut rng, ty.dtype, shape, f),
        );
    }
    args
}

/// Differences between two arrays: exact for integers and bools, a tight
/// relative tolerance for floats (looser for f32).
pub fn compare(what: &str, want: &Array, got: &Array) -> Option<String> {
    if want.dtype != got.dtype || want.shape != got.shape {
        return Some(format!(
            "{what}: expected {}{:?}, got {}{:?}",
            want.dtype, want.shape, got.dtype, got.shape
        ));
    }
    let tol = if want.dtype == DType::F32 {
        2e-5
    } else {
        1e-10
    };
    for i in 0..want.len() {
        let bad = match (&want.data, &got.data) {
            (Data::Float(_), Data::Float(_)) => {
                let (a, b) = (want.get_f64(i), got.get_f64(i));
                let scale = 1.0f64.max(a.abs());
                !((a - b).abs() <= tol * scale || (a.is_nan() && b.is_nan()))
            }
            _ => want.get_i64(i) != got.get_i64(i),
        };
        if bad {
            return Some(format!(
                "{what}[{i}]: expected {}, got {}",
                want.get_f64(i),
                got.get_f64(i)
            ));
        }
    }
    None
}

pub fn compare_outcomes(want: &Outcome, got: &Outcome) -> Vec<String> {
    let mut diffs = Vec::new();
    for (name, w) in &want.arrays {
        match got.arrays.get(name) {
            Some(g) => diffs.extend(compare(name, w, g)),
            None => diffs.push(format!("{name}: missing")),
        }
    }
    match (&want.returned, &got.returned) {
        (Some(w), Some(g)) => diffs.extend(compare("return", w, g)),
        (None, None) => {}
        _ => diffs.push("returned value presence differs".to_string()),
    }
    diffs
}
