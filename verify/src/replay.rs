//! Re-runs a counterexample concretely: the C through the loop-IR
//! interpreter on numbers (real `sqrt`, `exp`, … and `f32` rounding), the
//! program through the TensIR reference interpreter, which shares no code
//! with the symbolic encoding. A difference that survives this is real; one
//! that does not came from uninterpreted functions.

use std::collections::{BTreeMap, HashMap};

use tenslift_frontend::ir::Kernel;
use tenslift_targets::interp::{self, Array};
use tenslift_targets::{DType, Program};

use crate::concrete::{cval_of, CVal, ConcreteDomain};
use crate::error::Abort;
use crate::interface::{Entry, Interface};
use crate::kernel_eval::{self, UNINITIALISED_PREFIX};
use crate::report::{Counterexample, Difference, Replay, Value};

fn value_of(a: &Array, i: usize) -> Value {
    match cval_of(a, i) {
        CVal::Int(v) => Value::Int(v),
        CVal::Real(x) => Value::from_f64(x),
    }
}

fn cvalue(v: CVal) -> Value {
    match v {
        CVal::Int(i) => Value::Int(i),
        CVal::Real(x) => Value::from_f64(x),
    }
}

/// Whether two concrete results differ beyond rounding.
fn differ(c: &Value, p: &Value, dtype: Option<DType>) -> bool {
    match (c, p) {
        (Value::Int(a), Value::Int(b)) => a != b,
        _ => {
            let (a, b) = (c.as_f64(), p.as_f64());
            if a.is_nan() || b.is_nan() {
                return a.is_nan() != b.is_nan();
            }
            if a == b {
                return false;
            }
            if a.is_infinite() || b.is_infinite() {
                return true;
            }
            let tolerance = if dtype == Some(DType::F32) {
                1e-5
            } else {
                1e-9
            };
            (a - b).abs() > tolerance * a.abs().max(b.abs()).max(1.0)
        }
    }
}

fn flat_index(shape: &[usize], index: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (i, n)| acc * n + i)
}

/// Replays `cex` on both sides and reports the values at its difference.
pub(crate) fn replay(
    kernel: &Kernel,
    program: &Program,
    iface: &Interface,
    cex: &Counterexample,
) -> Replay {
    let args = cex.program_args();
    let sizes: HashMap<String, i64> = cex.size_args();
    let program_run = interp::run(program, &sizes, &args).map_err(|e| e.to_string());
    let c_run = run_c(kernel, iface, &cex.sizes, &args, &cex.uninitialised);

    let (c_value, program_value, dtype) = match &cex.difference {
        Difference::Element { array, index, .. } => {
            let shape = args.get(array).map(|a| a.shape.clone()).unwrap_or_default();
            let at = flat_index(&shape, index);
            let dtype = args.get(array).map(|a| a.dtype);
            let c = c_run.and_then(|o| {
                o.arrays
                    .get(array)
                    .and_then(|v| v.get(at).copied())
                    .map(cvalue)
                    .ok_or_else(|| format!("the C has no element {array}[{at}]"))
            });
            let p = program_run.map(|o| {
                o.arrays
                    .get(array)
                    .map(|a| value_of(a, at))
                    .unwrap_or_else(|| value_of(&args[array], at))
            });
            (c, p, dtype)
        }
        Difference::Scalar { name, .. } => {
            let dtype = args.get(name).map(|a| a.dtype);
            let c = c_run.and_then(|o| {
                o.scalars
                    .get(name)
                    .copied()
                    .map(cvalue)
                    .ok_or_else(|| format!("the C has no scalar `{name}`"))
            });
            let p = program_run.map(|o| {
                o.arrays
                    .get(name)
                    .map(|a| value_of(a, 0))
                    .unwrap_or_else(|| value_of(&args[name], 0))
            });
            (c, p, dtype)
        }
        Difference::Returned { .. } => {
            let c = c_run.and_then(|o| {
                o.returned
                    .map(cvalue)
                    .ok_or_else(|| "the C returned nothing".to_string())
            });
            let p = program_run.and_then(|o| {
                o.returned
                    .map(|a| value_of(&a, 0))
                    .ok_or_else(|| "the program returned nothing".to_string())
            });
            (c, p, iface.returns)
        }
        Difference::ProgramError { .. } => {
            let c = c_run.map(|_| Value::Int(0));
            let p = program_run.map(|_| Value::Int(0));
            let differs = c.is_ok() && p.is_err();
            return Replay {
                c_value: c.map_err(|e| format!("the C fails too: {e}")),
                program_value: p,
                differs,
            };
        }
    };
    let differs = match (&c_value, &program_value) {
        (Ok(c), Ok(p)) => differ(c, p, dtype),
        _ => false,
    };
    Replay {
        c_value,
        program_value,
        differs,
    }
}

type COutcome = kernel_eval::KernelOutcome<CVal>;

fn run_c(
    kernel: &Kernel,
    iface: &Interface,
    sizes: &BTreeMap<String, i64>,
    args: &HashMap<String, Array>,
    uninitialised: &BTreeMap<String, Value>,
) -> Result<COutcome, String> {
    let mut scalars = HashMap::new();
    let mut arrays = HashMap::new();
    for e in &iface.entries {
        match e {
            Entry::Pinned { name, value } => {
                scalars.insert(name.clone(), CVal::Int(i128::from(*value)));
            }
            Entry::Scalar { name, .. } | Entry::Cell { name, .. } => {
                let a = args
                    .get(name)
                    .ok_or_else(|| format!("no value for `{name}`"))?;
                scalars.insert(name.clone(), cval_of(a, 0));
            }
            Entry::Array { name, .. } => {
                let a = args
                    .get(name)
                    .ok_or_else(|| format!("no value for `{name}`"))?;
                arrays.insert(
                    name.clone(),
                    (0..a.len()).map(|i| cval_of(a, i)).collect::<Vec<_>>(),
                );
            }
        }
    }
    let locals = uninitialised
        .iter()
        .map(|(k, v)| {
            let c = match v {
                Value::Int(i) => CVal::Int(*i),
                Value::Real { approx, .. } => CVal::Real(*approx),
            };
            (format!("{UNINITIALISED_PREFIX}{k}"), c)
        })
        .collect();
    let mut dom = ConcreteDomain::new(locals);
    kernel_eval::run(&mut dom, kernel, sizes, scalars, arrays).map_err(|a| match a {
        Abort::Error(e) => e.to_string(),
        Abort::Unsupported(s) => format!("not supported: {s}"),
        Abort::Undefined(s) => format!("undefined behaviour ({s})"),
    })
}
