//! The concrete domain: C arithmetic on numbers. Integers are exact
//! (`i128`, wide enough for any product of two 64-bit values), doubles are
//! `f64`, and `float` results are rounded to single precision after every
//! operation, as C does on x86-64. Used to replay counterexamples and by
//! [`run_kernel`], the public concrete evaluation of a loop-IR kernel.

use std::collections::{BTreeMap, HashMap};

use tenslift_frontend::ir::{self as loop_ir, Kernel, ScalarType};
use tenslift_targets::interp::{Array, Data};
use tenslift_targets::DType;

use crate::domain::{Cmp, Domain, ElemKind, IntTy, Opaque};
use crate::error::{Abort, VerifyError};
use crate::kernel_eval::{self, UNINITIALISED_PREFIX};

/// A concrete value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum CVal {
    Int(i128),
    Real(f64),
}

impl CVal {
    fn as_f64(self) -> f64 {
        match self {
            CVal::Int(i) => i as f64,
            CVal::Real(r) => r,
        }
    }

    fn as_int(self) -> i128 {
        match self {
            CVal::Int(i) => i,
            CVal::Real(r) => r.trunc() as i128,
        }
    }

    fn is_true(self) -> bool {
        match self {
            CVal::Int(i) => i != 0,
            CVal::Real(r) => r != 0.0,
        }
    }
}

/// Concrete evaluation with inputs looked up by name; uninitialised locals
/// read as zero unless the inputs name them.
pub(crate) struct ConcreteDomain {
    inputs: HashMap<String, CVal>,
}

impl ConcreteDomain {
    pub fn new(inputs: HashMap<String, CVal>) -> ConcreteDomain {
        ConcreteDomain { inputs }
    }
}

fn bool_val(b: bool) -> CVal {
    CVal::Int(i128::from(b))
}

impl Domain for ConcreteDomain {
    type V = CVal;

    fn input(&mut self, name: &str, kind: ElemKind) -> Result<CVal, Abort> {
        match self.inputs.get(name) {
            Some(v) => Ok(match kind {
                ElemKind::Int(_) => CVal::Int(v.as_int()),
                ElemKind::Real => CVal::Real(v.as_f64()),
            }),
            None if name.starts_with(UNINITIALISED_PREFIX) => Ok(match kind {
                ElemKind::Int(_) => CVal::Int(0),
                ElemKind::Real => CVal::Real(0.0),
            }),
            None => Err(Abort::Error(VerifyError::Interface(format!(
                "no value for the input `{name}`"
            )))),
        }
    }

    fn int(&mut self, v: i128) -> CVal {
        CVal::Int(v)
    }

    fn real(&mut self, v: f64) -> Result<CVal, Abort> {
        Ok(CVal::Real(v))
    }

    fn add(&mut self, a: &CVal, b: &CVal) -> CVal {
        match (a, b) {
            (CVal::Int(x), CVal::Int(y)) => CVal::Int(x.wrapping_add(*y)),
            _ => CVal::Real(a.as_f64() + b.as_f64()),
        }
    }

    fn sub(&mut self, a: &CVal, b: &CVal) -> CVal {
        match (a, b) {
            (CVal::Int(x), CVal::Int(y)) => CVal::Int(x.wrapping_sub(*y)),
            _ => CVal::Real(a.as_f64() - b.as_f64()),
        }
    }

    fn mul(&mut self, a: &CVal, b: &CVal) -> CVal {
        match (a, b) {
            (CVal::Int(x), CVal::Int(y)) => CVal::Int(x.wrapping_mul(*y)),
            _ => CVal::Real(a.as_f64() * b.as_f64()),
        }
    }

    fn neg(&mut self, a: &CVal) -> CVal {
        match a {
            CVal::Int(x) => CVal::Int(x.wrapping_neg()),
            CVal::Real(r) => CVal::Real(-r),
        }
    }

    fn div_real(&mut self, a: &CVal, b: &CVal) -> CVal {
        CVal::Real(a.as_f64() / b.as_f64())
    }

    fn trunc_div(&mut self, a: &CVal, b: &CVal) -> CVal {
        // A zero divisor was assumed away before this point.
        CVal::Int(a.as_int().checked_div(b.as_int()).unwrap_or(0))
    }

    fn trunc_rem(&mut self, a: &CVal, b: &CVal) -> CVal {
        CVal::Int(a.as_int().checked_rem(b.as_int()).unwrap_or(0))
    }

    fn cmp(&mut self, op: Cmp, a: &CVal, b: &CVal) -> CVal {
        let ord = match (a, b) {
            (CVal::Int(x), CVal::Int(y)) => x.partial_cmp(y),
            _ => a.as_f64().partial_cmp(&b.as_f64()),
        };
        use std::cmp::Ordering::{Equal, Greater, Less};
        // Comparisons with NaN are false, except `!=`.
        bool_val(match op {
            Cmp::Lt => ord == Some(Less),
            Cmp::Le => matches!(ord, Some(Less | Equal)),
            Cmp::Gt => ord == Some(Greater),
            Cmp::Ge => matches!(ord, Some(Greater | Equal)),
            Cmp::Eq => ord == Some(Equal),
            Cmp::Ne => ord != Some(Equal),
        })
    }

    fn truth(&mut self, a: &CVal) -> CVal {
        bool_val(a.is_true())
    }

    fn select(&mut self, c: &CVal, t: &CVal, e: &CVal) -> CVal {
        if c.is_true() {
            *t
        } else {
            *e
        }
    }

    fn to_real(&mut self, a: &CVal) -> CVal {
        CVal::Real(a.as_f64())
    }

    fn trunc_to_int(&mut self, a: &CVal) -> CVal {
        CVal::Int(a.as_int())
    }

    fn wrap(&mut self, a: &CVal, ty: IntTy) -> CVal {
        let modulus = 1i128 << ty.bits;
        let r = a.as_int().rem_euclid(modulus);
        CVal::Int(if ty.signed && r > ty.max() {
            r - modulus
        } else {
            r
        })
    }

    fn fits(&mut self, a: &CVal, ty: IntTy) -> CVal {
        let v = a.as_int();
        bool_val(v >= ty.min() && v <= ty.max())
    }

    fn known_within(&mut self, a: &CVal, _ty: IntTy) -> CVal {
        *a
    }

    fn round_single(&mut self, a: &CVal) -> CVal {
        CVal::Real(a.as_f64() as f32 as f64)
    }

    fn apply(&mut self, f: Opaque, args: &[CVal]) -> Result<CVal, Abort> {
        let x = args.first().map_or(f64::NAN, |a| a.as_f64());
        Ok(CVal::Real(match f {
            Opaque::Sqrt => x.sqrt(),
            Opaque::Exp => x.exp(),
            Opaque::Log => x.ln(),
            Opaque::Tanh => x.tanh(),
            Opaque::Pow => x.powf(args.get(1).map_or(f64::NAN, |a| a.as_f64())),
            // Rust's `round` is C's: halves away from zero.
            Opaque::Round => x.round(),
            Opaque::Floor => x.floor(),
            Opaque::Ceil => x.ceil(),
            Opaque::Sin => x.sin(),
            Opaque::Cos => x.cos(),
            Opaque::Cosh => x.cosh(),
            Opaque::Sinh => x.sinh(),
        }))
    }

    fn assume(&mut self, cond: &CVal, why: &str) -> Result<(), Abort> {
        if cond.is_true() {
            Ok(())
        } else {
            Err(Abort::Undefined(why.to_string()))
        }
    }

    fn require(&mut self, cond: &CVal, what: String) -> Result<(), Abort> {
        if cond.is_true() {
            Ok(())
        } else {
            Err(Abort::Error(VerifyError::Program(what)))
        }
    }

    fn decide(&mut self, c: &CVal) -> Option<bool> {
        Some(c.is_true())
    }

    fn push_path(&mut self, _cond: &CVal, _taken: bool) {}

    fn pop_path(&mut self) {}

    fn same(&self, a: &CVal, b: &CVal) -> bool {
        a == b
    }
}

/// What a concrete run of a kernel produced: the final contents of every
/// array argument and of every scalar the caller passed, and the returned
/// value. Arrays keep the element type and shape they were passed with.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelRun {
    pub arrays: BTreeMap<String, Array>,
    pub scalars: BTreeMap<String, Array>,
    pub returned: Option<Array>,
}

/// Why a concrete run stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// The run reached behaviour C leaves undefined.
    #[error("undefined behaviour in C: {0}")]
    Undefined(String),
    #[error("not supported: {0}")]
    Unsupported(String),
}

impl From<Abort> for RunError {
    fn from(a: Abort) -> RunError {
        match a {
            Abort::Error(e) => RunError::Verify(e),
            Abort::Unsupported(s) => RunError::Unsupported(s),
            Abort::Undefined(s) => RunError::Undefined(s),
        }
    }
}

pub(crate) fn cval_of(a: &Array, i: usize) -> CVal {
    match &a.data {
        Data::Float(v) => CVal::Real(v[i]),
        Data::Int(v) => CVal::Int(i128::from(v[i])),
    }
}

pub(crate) fn array_of(dtype: DType, shape: Vec<usize>, values: &[CVal]) -> Array {
    if dtype.is_float() {
        Array::from_f64(dtype, shape, values.iter().map(|v| v.as_f64()).collect())
    } else {
        let ints = values
            .iter()
            .map(|v| i64::try_from(v.as_int()).unwrap_or(i64::MAX))
            .collect();
        Array::from_i64(dtype, shape, ints)
    }
}

/// The TensIR element type of a C scalar type, if it has one.
pub(crate) fn dtype_of(ty: ScalarType) -> Option<DType> {
    Some(match ty {
        ScalarType::Bool => DType::Bool,
        ScalarType::I8 => DType::I8,
        ScalarType::U8 => DType::U8,
        ScalarType::I16 => DType::I16,
        ScalarType::U16 => DType::U16,
        ScalarType::I32 => DType::I32,
        ScalarType::U32 => DType::U32,
        ScalarType::I64 => DType::I64,
        ScalarType::F32 => DType::F32,
        ScalarType::F64 => DType::F64,
        ScalarType::U64 => return None,
    })
}

/// Runs `kernel` on concrete arguments with C semantics (the independent
/// reference the bounded check replays counterexamples with). `sizes` binds
/// size parameters; `args` binds every other parameter the kernel reads:
/// scalars as rank-0 arrays, arrays as flat memory of any shape (elements
/// are found through the kernel's own layout, as C would). Uninitialised
/// locals read as zero.
pub fn run_kernel(
    kernel: &Kernel,
    sizes: &BTreeMap<String, i64>,
    args: &HashMap<String, Array>,
) -> Result<KernelRun, RunError> {
    let mut scalars = HashMap::new();
    let mut arrays = HashMap::new();
    for p in &kernel.params {
        match &p.kind {
            loop_ir::ParamKind::Scalar { .. } if sizes.contains_key(&p.name) => {
                scalars.insert(p.name.clone(), CVal::Int(i128::from(sizes[&p.name])));
            }
            loop_ir::ParamKind::Scalar { .. } => {
                let a = args.get(&p.name).ok_or_else(|| {
                    VerifyError::Interface(format!("no value for the scalar `{}`", p.name))
                })?;
                if a.is_empty() {
                    return Err(VerifyError::Interface(format!("`{}` is empty", p.name)).into());
                }
                scalars.insert(p.name.clone(), cval_of(a, 0));
            }
            loop_ir::ParamKind::Array(_) => {
                let a = args.get(&p.name).ok_or_else(|| {
                    VerifyError::Interface(format!("no value for the array `{}`", p.name))
                })?;
                arrays.insert(
                    p.name.clone(),
                    (0..a.len()).map(|i| cval_of(a, i)).collect::<Vec<_>>(),
                );
            }
        }
    }
    let mut dom = ConcreteDomain::new(HashMap::new());
    let outcome = kernel_eval::run(&mut dom, kernel, sizes, scalars, arrays)?;
    let mut run = KernelRun {
        arrays: BTreeMap::new(),
        scalars: BTreeMap::new(),
        returned: None,
    };
    for (name, values) in outcome.arrays {
        if let Some(given) = args.get(&name) {
            run.arrays
                .insert(name, array_of(given.dtype, given.shape.clone(), &values));
        }
    }
    for (name, value) in outcome.scalars {
        if let Some(given) = args.get(&name) {
            run.scalars
                .insert(name, array_of(given.dtype, vec![], &[value]));
        }
    }
    if let (Some(v), Some(ty)) = (outcome.returned, kernel.returns) {
        let dtype = dtype_of(ty).ok_or_else(|| {
            RunError::Unsupported(format!("the return type {ty} has no TensIR type"))
        })?;
        run.returned = Some(array_of(dtype, vec![], &[v]));
    }
    Ok(run)
}
