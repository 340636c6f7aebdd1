//! What a bounded check hands back: the verdict, the counterexample a user
//! can read (and replay), and how long it took.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::time::Duration;

use tenslift_targets::interp::Array;
use tenslift_targets::DType;

/// A value from a Z3 model or a concrete run.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    /// `exact` is the rational Z3 chose (`-3/2`) or the decimal expansion of
    /// an irrational one; `approx` is the nearest double.
    Real {
        exact: String,
        approx: f64,
    },
}

impl Value {
    pub fn as_f64(&self) -> f64 {
        match self {
            Value::Int(i) => *i as f64,
            Value::Real { approx, .. } => *approx,
        }
    }

    pub(crate) fn from_f64(x: f64) -> Value {
        Value::Real {
            exact: format!("{x:?}"),
            approx: x,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Real { exact, approx } => {
                // Long fractions get a decimal next to them.
                if exact.contains('/') && exact.len() > 8 {
                    write!(f, "{exact} (≈ {approx})")
                } else {
                    f.write_str(exact)
                }
            }
        }
    }
}

/// An input of the counterexample: a scalar (rank 0) or an array, with the
/// program's element type and shape, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub values: Vec<Value>,
}

impl ArrayValue {
    /// The value as the reference interpreter's array (floats rounded to
    /// the element type, as an `f32` array would hold them).
    pub fn to_array(&self) -> Array {
        if self.dtype.is_float() {
            Array::from_f64(
                self.dtype,
                self.shape.clone(),
                self.values.iter().map(Value::as_f64).collect(),
            )
        } else {
            Array::from_i64(
                self.dtype,
                self.shape.clone(),
                self.values
                    .iter()
                    .map(|v| match v {
                        Value::Int(i) => i64::try_from(*i).unwrap_or(i64::MAX),
                        Value::Real { approx, .. } => *approx as i64,
                    })
                    .collect(),
            )
        }
    }
}

/// Where the two sides part.
#[derive(Clone, Debug, PartialEq)]
pub enum Difference {
    /// An element of an output array.
    Element {
        array: String,
        index: Vec<usize>,
        c_value: Value,
        program_value: Value,
    },
    /// A scalar the C writes (a global) that the program holds as a
    /// rank-0 array.
    Scalar {
        name: String,
        c_value: Value,
        program_value: Value,
    },
    /// The returned value.
    Returned {
        c_value: Value,
        program_value: Value,
    },
    /// The program cannot run on inputs where the C is well defined (an
    /// integer division by zero).
    ProgramError { message: String },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Element {
                array,
                index,
                c_value,
                program_value,
            } => {
                let idx: Vec<String> = index.iter().map(usize::to_string).collect();
                write!(
                    f,
                    "{array}[{}]: C gives {c_value}, the program gives {program_value}",
                    idx.join(", ")
                )
            }
            Difference::Scalar {
                name,
                c_value,
                program_value,
            } => write!(
                f,
                "{name}: C gives {c_value}, the program gives {program_value}"
            ),
            Difference::Returned {
                c_value,
                program_value,
            } => write!(
                f,
                "the returned value: C gives {c_value}, the program gives {program_value}"
            ),
            Difference::ProgramError { message } => {
                write!(f, "the program fails where the C is defined: {message}")
            }
        }
    }
}

/// Both sides re-run concretely on the counterexample (C with `f64`/`f32`
/// arithmetic and real math functions, the program with the TensIR
/// reference interpreter). `Err` holds why a side could not produce a value.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub c_value: Result<Value, String>,
    pub program_value: Result<Value, String>,
    /// Whether the concrete results differ (beyond rounding: relative 1e-9
    /// for f64, 1e-5 for f32; integers exactly).
    pub differs: bool,
}

/// Inputs on which the kernel and the program disagree.
#[derive(Clone, Debug, PartialEq)]
pub struct Counterexample {
    pub sizes: BTreeMap<String, i64>,
    /// Every non-size parameter of the program (and of the C), by name.
    pub inputs: BTreeMap<String, ArrayValue>,
    /// Inputs whose initial contents neither side reads (outputs); kept for
    /// replaying, left out when printing.
    pub unread: BTreeSet<String>,
    /// Values Z3 chose for locals the C reads before writing them.
    pub uninitialised: BTreeMap<String, Value>,
    pub difference: Difference,
    pub replay: Option<Replay>,
}

impl Counterexample {
    /// The inputs as arguments of `tenslift_targets::interp::run`.
    pub fn program_args(&self) -> HashMap<String, Array> {
        self.inputs
            .iter()
            .map(|(k, v)| (k.clone(), v.to_array()))
            .collect()
    }

    /// The sizes as `tenslift_targets::interp::run` takes them.
    pub fn size_args(&self) -> HashMap<String, i64> {
        self.sizes.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}

impl fmt::Display for Counterexample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.difference)?;
        writeln!(f, "  at sizes {}", sizes_text(&self.sizes))?;
        for (name, v) in self
            .inputs
            .iter()
            .filter(|(n, _)| !self.unread.contains(*n))
        {
            let values: Vec<String> = v.values.iter().map(Value::to_string).collect();
            if v.shape.is_empty() {
                writeln!(f, "  {name} = {}", values.join(""))?;
            } else {
                let dims: Vec<String> = v.shape.iter().map(usize::to_string).collect();
                writeln!(
                    f,
                    "  {name}: {}[{}] = [{}] (row-major)",
                    v.dtype,
                    dims.join(", "),
                    values.join(", ")
                )?;
            }
        }
        for (name, v) in &self.uninitialised {
            writeln!(f, "  {name} (uninitialised) = {v}")?;
        }
        if let Some(r) = &self.replay {
            let show = |x: &Result<Value, String>| match x {
                Ok(v) => v.to_string(),
                Err(e) => format!("fails: {e}"),
            };
            writeln!(
                f,
                "  replayed concretely: C {}, program {} ({})",
                show(&r.c_value),
                show(&r.program_value),
                if r.differs {
                    "they differ"
                } else {
                    "they agree"
                }
            )?;
        }
        Ok(())
    }
}

/// Effort spent on a check.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    pub elapsed: Duration,
    /// Output elements compared (array elements, scalars, the result).
    pub compared: usize,
    /// Of those, how many were the same term on both sides (no solver call).
    pub identical: usize,
    /// Of those, how many had the same linear normal form on both sides
    /// (proved equal without a solver call: `bounded::linear`).
    pub normalised: usize,
    pub solver_calls: usize,
}

/// The verdict of a bounded check.
#[derive(Clone, Debug, PartialEq)]
pub enum BoundedResult {
    /// Z3 proved every output equal for all inputs at these sizes (the
    /// query "some output element differs" is unsatisfiable). `summary`
    /// says in which sense: "equal over the reals at sizes …" when floats
    /// are involved.
    Pass { summary: String, stats: Stats },
    /// Inputs on which the two sides differ.
    Fail {
        counterexample: Box<Counterexample>,
        stats: Stats,
    },
    /// No verdict: a timeout, an unsupported construct (named), or a
    /// difference that only uninterpreted math functions produce and that
    /// the concrete replay does not confirm (`candidate`).
    Unknown {
        reason: String,
        candidate: Option<Box<Counterexample>>,
        stats: Stats,
    },
}

impl BoundedResult {
    pub fn is_pass(&self) -> bool {
        matches!(self, BoundedResult::Pass { .. })
    }

    pub fn stats(&self) -> &Stats {
        match self {
            BoundedResult::Pass { stats, .. }
            | BoundedResult::Fail { stats, .. }
            | BoundedResult::Unknown { stats, .. } => stats,
        }
    }
}

impl fmt::Display for BoundedResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundedResult::Pass { summary, stats } => {
                write!(f, "pass: {summary} ({} ms)", stats.elapsed.as_millis())
            }
            BoundedResult::Fail {
                counterexample,
                stats,
            } => write!(
                f,
                "fail ({} ms): {counterexample}",
                stats.elapsed.as_millis()
            ),
            BoundedResult::Unknown {
                reason, candidate, ..
            } => {
                write!(f, "unknown: {reason}")?;
                if let Some(c) = candidate {
                    write!(f, "\n  candidate: {c}")?;
                }
                Ok(())
            }
        }
    }
}

/// `n=3, m=4`, or `(none)`.
pub fn sizes_text(sizes: &BTreeMap<String, i64>) -> String {
    let parts: Vec<String> = sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if parts.is_empty() {
        "(none)".to_string()
    } else {
        parts.join(", ")
    }
}
