//! The differential reference of `tenslift optimize`: the input NumPy
//! function itself, run in the venv on seeded random inputs
//! (`reference.py`), in the form `verify::differential::compare` holds a
//! program against (the inputs given and the outputs produced).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::process::Command;
use std::rc::Rc;

use serde_json::json;
use tenslift_frontend::ir::{Affine, ScalarType};
use tenslift_targets::interp::Array;
use tenslift_targets::npy;
use tenslift_verify::differential::CReference;

use super::ir::{BinaryFn, Node, UnaryFn, T};
use super::kernel::Lowered;
use crate::spec::Sizes;
use crate::synth::signature::dtype_of;

/// The reference script (`src/numpy/reference.py`).
pub const REFERENCE_SCRIPT: &str = include_str!("reference.py");

fn eval_shape(dims: &[Affine], sizes: &Sizes) -> Result<Vec<usize>, String> {
    dims.iter()
        .map(|d| {
            d.eval(&|v| sizes.get(v).copied())
                .and_then(|x| usize::try_from(x).ok())
                .ok_or_else(|| format!("the extent {d} has no value at these sizes"))
        })
        .collect()
}

fn numpy_dtype(t: ScalarType) -> &'static str {
    if t == ScalarType::F32 {
        "float32"
    } else {
        "float64"
    }
}

/// Runs the input function of `l` (in `file`) at each labelled size tuple.
pub fn run(
    python: &Path,
    file: &Path,
    l: &Lowered,
    tuples: &[(String, Sizes)],
    workdir: &Path,
) -> Result<Vec<CReference>, String> {
    let positive = positive_inputs(&l.results);
    let mut cases = Vec::new();
    for (seed, (label, sizes)) in tuples.iter().enumerate() {
        let dir = workdir.join(format!("ref_{label}"));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let params = l
            .inputs
            .iter()
            .map(|(name, ty)| {
                Ok(json!({"name": name, "dtype": numpy_dtype(ty.dtype),
                          "shape": eval_shape(&ty.dims, sizes)?, "positive": positive.contains(name)}))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let outputs: Vec<_> = l
            .outputs
            .iter()
            .zip(&l.results)
            .map(|(n, t)| json!([n, numpy_dtype(t.dtype)]))
            .collect();
        cases.push(json!({"dir": dir, "seed": seed, "params": params,
                          "outputs": outputs, "tuple": l.returns_tuple}));
    }
    let manifest = workdir.join("reference.json");
    let text = json!({"file": file, "function": l.kernel.name, "cases": cases}).to_string();
    std::fs::write(&manifest, text).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let ran = Command::new(python)
        .arg("-c")
        .arg(REFERENCE_SCRIPT)
        .arg(&manifest)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", python.display()))?;
    if !ran.status.success() {
        return Err(format!(
            "the input program could not be loaded: {}",
            String::from_utf8_lossy(&ran.stderr).trim()
        ));
    }
    tuples
        .iter()
        .map(|(label, sizes)| read_case(l, label, sizes, &workdir.join(format!("ref_{label}"))))
        .collect()
}

/// One case's inputs and outputs (every output array also as a zero
/// input: the program takes it as an argument).
fn read_case(l: &Lowered, label: &str, sizes: &Sizes, dir: &Path) -> Result<CReference, String> {
    if let Ok(why) = std::fs::read_to_string(dir.join("error.txt")) {
        return Err(format!(
            "the input program raised at {label} sizes: {}",
            why.trim()
        ));
    }
    let read = |name: String| npy::read(&dir.join(name)).map_err(|e| e.to_string());
    let mut inputs = HashMap::new();
    for (name, _) in &l.inputs {
        inputs.insert(name.clone(), read(format!("in_{name}.npy"))?);
    }
    let mut outputs = BTreeMap::new();
    for (name, t) in l.outputs.iter().zip(&l.results) {
        let value = read(format!("out_{name}.npy"))?;
        if name != "return" {
            let shape = eval_shape(&t.shape, sizes)?;
            inputs.insert(name.clone(), Array::zeros(dtype_of(t.dtype), shape));
        }
        outputs.insert(name.clone(), value);
    }
    Ok(CReference {
        label: label.to_string(),
        sizes: sizes.clone(),
        inputs,
        outputs,
    })
}

/// The parameters that reach a logarithm, a square root, a power or a
/// divisor: they get positive random values, as the C drivers give them.
pub fn positive_inputs(results: &[T]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen = HashSet::new();
    for t in results {
        walk(t, false, &mut seen, &mut out);
    }
    out
}

fn walk(t: &T, positive: bool, seen: &mut HashSet<(usize, bool)>, out: &mut BTreeSet<String>) {
    if !seen.insert((Rc::as_ptr(t) as usize, positive)) {
        return;
    }
    let mut go = |c: &T, p: bool| walk(c, p, seen, out);
    match &t.node {
        Node::Input(name) if positive => {
            out.insert(name.clone());
        }
        Node::Input(_) | Node::Literal(_) | Node::Size(_) => {}
        Node::Unary(UnaryFn::Log | UnaryFn::Sqrt, x) => go(x, true),
        Node::Binary(BinaryFn::Div, x, y) => {
            go(x, positive);
            go(y, true);
        }
        Node::Binary(BinaryFn::Pow, x, y) => {
            go(x, true);
            go(y, positive);
        }
        Node::Broadcast(x)
        | Node::Cast(x)
        | Node::Unary(_, x)
        | Node::View(x, _)
        | Node::DiagMatrix(x)
        | Node::Reduce(_, x, _) => go(x, positive),
        Node::Binary(_, x, y) => {
            go(x, positive);
            go(y, positive);
        }
        Node::Where(c, x, y) => {
            go(c, positive);
            go(x, positive);
            go(y, positive);
        }
        Node::Contract(c) => {
            go(&c.a, positive);
            go(&c.b, positive);
        }
        Node::Stack(items, _) => items.iter().for_each(|i| go(i, positive)),
        Node::Comprehension(c) => go(&c.body, positive),
    }
}
