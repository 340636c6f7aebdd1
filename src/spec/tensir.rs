//! Symbolic execution of a TensIR program into the spec representation.
//!
//! A candidate tensor program is accepted when it computes, at concrete
//! sizes, exactly the expressions the C kernel's [`Spec`] holds. [`execute`]
//! runs a [`Program`] over the same fresh symbols the C spec uses (an array
//! parameter `A` becomes `A[i,j]`, a scalar `alpha` the symbol `alpha`, a size
//! parameter its value), so the two compare element by element with
//! [`equal_to_spec`]. Semantics follow the C spec's conventions: arithmetic is
//! exact over the reals (f32 rounding is not modelled), integers of at least
//! 32 bits never overflow, narrower integers wrap at every operation (as
//! their C counterparts wrap at the conversion back), `trunc_div`/`rem`/`cast`
//! keep their C meaning. Every node is evaluated once per execution: results
//! are memoised on the (Arc-shared, hash-cached) TensIR node.

use std::collections::HashMap;

use tenslift_frontend::ir::{Kernel, ScalarType};
use tenslift_targets::ops::{BinaryOp, ReduceKind, SliceItem, UnaryOp};
use tenslift_targets::{Access, DType, Dim, Expr as TExpr, Lit, Op, ParamKind, Program, Stmt};
use thiserror::Error;

use super::exec::convert;

mod extrema;
use super::{format_sizes, spec_of_kernel, Sizes, Spec, SpecError};
use crate::algebra::{Atom, Expr as Value, Func, Rat, Symbol, Tensor};
pub use extrema::canonical_extrema;

/// Most elements one intermediate tensor may have (a guard against
/// candidates whose broadcasts or outer products explode at spec sizes).
const ELEMENT_LIMIT: usize = 1 << 22;

/// Why a TensIR program could not be executed symbolically.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TensirSpecError {
    #[error("no value for size parameter `{name}`")]
    MissingSize { name: String },
    #[error("dimension `{dim}` cannot be evaluated at sizes {sizes}: {reason}")]
    BadDim {
        dim: String,
        sizes: String,
        reason: String,
    },
    #[error("`{name}` is not bound (not a parameter or an earlier `let`)")]
    Unbound { name: String },
    #[error("`{name}` is not an array parameter the program may write")]
    NotWritable { name: String },
    #[error("division by the constant zero in `{op}`")]
    DivisionByZero { op: String },
    #[error("slice {start}:{stop}:{step} is out of bounds for an axis of length {len}")]
    SliceOutOfBounds {
        start: i64,
        stop: i64,
        step: i64,
        len: usize,
    },
    #[error("index {index} is out of bounds for an axis of length {len}")]
    IndexOutOfBounds { index: i64, len: usize },
    #[error("`{op}` produces {elements} elements, over the limit of {limit}")]
    TooManyElements {
        op: String,
        elements: usize,
        limit: usize,
    },
    #[error("`{op}` has operands of shapes {shapes:?} that do not fit at these sizes")]
    ShapeMismatch { op: String, shapes: Vec<Vec<usize>> },
    #[error("`{op}` over an empty set of elements")]
    EmptyReduction { op: String },
    #[error("element type {dtype} has no C counterpart in the spec")]
    UnsupportedType { dtype: String },
    #[error("the C kernel's spec: {0}")]
    CSpec(#[from] SpecError),
    #[error("the program is malformed: {0}")]
    Malformed(String),
}

type Result<T> = std::result::Result<T, TensirSpecError>;

/// One output of a program: an array it may write (final values), or
/// `return`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramOutput {
    pub name: String,
    pub dtype: DType,
    pub value: Tensor,
}

/// What a TensIR program computes at one size tuple.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramSpec {
    pub program: String,
    pub sizes: Sizes,
    /// `out`/`inout` arrays in parameter order, then `return`.
    pub outputs: Vec<ProgramOutput>,
}

impl ProgramSpec {
    pub fn output(&self, name: &str) -> Option<&ProgramOutput> {
        self.outputs.iter().find(|o| o.name == name)
    }
}

/// The outcome of comparing a program's spec with a C spec.
#[derive(Clone, Debug, PartialEq)]
pub enum Comparison {
    Equal,
    /// The first output element (row-major, outputs in C order) that differs.
    Differs {
        output: String,
        index: Vec<usize>,
        program: Value,
        c: Value,
    },
    ShapeMismatch {
        output: String,
        program: Vec<usize>,
        c: Vec<usize>,
    },
    /// The C kernel changes this output; the program does not produce it.
    MissingOutput {
        output: String,
    },
    /// The program changes an array the C kernel leaves alone.
    UnexpectedOutput {
        output: String,
    },
}

impl Comparison {
    pub fn is_equal(&self) -> bool {
        matches!(self, Comparison::Equal)
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Comparison::Equal => write!(f, "equal"),
            Comparison::Differs {
                output,
                index,
                program,
                c,
            } => {
                let idx: Vec<String> = index.iter().map(usize::to_string).collect();
                write!(
                    f,
                    "{output}[{}] differs: program computes {program}, C computes {c}",
                    idx.join(",")
                )
            }
            Comparison::ShapeMismatch { output, program, c } => write!(
                f,
                "{output} has shape {program:?} in the program but {c:?} in C"
            ),
            Comparison::MissingOutput { output } => {
                write!(f, "the C kernel writes `{output}`; the program does not")
            }
            Comparison::UnexpectedOutput { output } => {
                write!(f, "the program changes `{output}`; the C kernel does not")
            }
        }
    }
}

/// The C type a TensIR element type stands for (for conversion semantics).
fn scalar_type(d: DType) -> ScalarType {
    match d {
        DType::Bool => ScalarType::Bool,
        DType::I8 => ScalarType::I8,
        DType::I16 => ScalarType::I16,
        DType::I32 => ScalarType::I32,
        DType::I64 => ScalarType::I64,
        DType::U8 => ScalarType::U8,
        DType::U16 => ScalarType::U16,
        DType::U32 => ScalarType::U32,
        DType::F32 => ScalarType::F32,
        DType::F64 => ScalarType::F64,
    }
}

/// Whether arithmetic in `d` wraps in a way the spec models: integer types
/// narrower than C's `int` (their C counterparts promote and wrap at the
/// conversion back). Wider integers are exact, as in the C spec.
fn wraps(d: DType) -> Option<(u8, bool)> {
    (d.is_int() && d.bits() < 32).then(|| (d.bits() as u8, d.is_signed_int()))
}

/// `wrap(x)` of the same width is `x` modulo 2^bits, so an operand of a
/// wrapping add/sub/mul may drop its own wrap: keeps `wrap(wrap(a)+b)` and
/// `wrap(a+b)` one normal form.
fn unwrap_operand(v: &Value, bits: u8, signed: bool) -> Value {
    if let Some((Func::Wrap { bits: b, signed: s }, [inner])) = v.as_atom().and_then(Atom::as_app) {
        if b == bits && s == signed {
            return inner.clone();
        }
    }
    v.clone()
}

/// The exact value of a literal: floats are the shortest decimal that
/// round-trips, as the C spec reads C's decimal literals.
fn literal(l: Lit) -> Value {
    match l {
        Lit::Bool(b) => Value::int(i64::from(b)),
        Lit::Int(v, _) => Value::int(v),
        Lit::Float(bits, d) => {
            let v = f64::from_bits(bits);
            let text = if d == DType::F32 {
                format!("{}", v as f32)
            } else {
                format!("{v}")
            };
            let (negative, digits) = match text.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, text.as_str()),
            };
            let exact = Rat::parse_decimal(digits)
                .map(|r| {
                    if negative {
                        Value::constant(r).neg()
                    } else {
                        Value::constant(r)
                    }
                })
                .or_else(|| Rat::from_f64(v).map(Value::constant));
            exact.unwrap_or_else(Value::zero)
        }
    }
}

fn checked_len(op: &str, shape: &[usize]) -> Result<usize> {
    let n = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .unwrap_or(usize::MAX);
    if n > ELEMENT_LIMIT {
        return Err(TensirSpecError::TooManyElements {
            op: op.to_string(),
            elements: n,
            limit: ELEMENT_LIMIT,
        });
    }
    Ok(n)
}

fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Iterates over every multi-index of `shape` in row-major order.
fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut index = vec![0usize; shape.len()];
    loop {
        f(&index);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// Broadcasts `t` to `shape` (NumPy rules, right-aligned).
fn broadcast_to(t: &Tensor, shape: &[usize], op: &str) -> Result<Tensor> {
    if t.shape() == shape {
        return Ok(t.clone());
    }
    let mismatch = || TensirSpecError::ShapeMismatch {
        op: op.to_string(),
        shapes: vec![t.shape().to_vec(), shape.to_vec()],
    };
    let rank = shape.len();
    let src = t.shape();
    if src.len() > rank {
        return Err(mismatch());
    }
    let lead = rank - src.len();
    for (i, &d) in src.iter().enumerate() {
        if d != 1 && d != shape[lead + i] {
            return Err(mismatch());
        }
    }
    checked_len(op, shape)?;
    let strides = row_major_strides(src);
    let elems = t.elems();
    Ok(Tensor::from_fn(shape, |idx| {
        let offset: usize = src
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                if d == 1 {
                    0
                } else {
                    idx[lead + i] * strides[i]
                }
            })
            .sum();
        elems[offset].clone()
    }))
}

fn broadcast_shape(op: &str, shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        let lead = rank - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[lead + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(TensirSpecError::ShapeMismatch {
                    op: op.to_string(),
                    shapes: shapes.iter().map(|s| s.to_vec()).collect(),
                });
            }
        }
    }
    Ok(out)
}

/// The concrete positions one slice item selects on an axis of length `len`
/// (`None` for an index, which drops the axis, with its position).
fn slice_positions(
    item: &SliceItem,
    len: usize,
    eval: &dyn Fn(&Dim) -> Result<i64>,
) -> Result<(Vec<usize>, bool)> {
    match item {
        SliceItem::Full => Ok(((0..len).collect(), true)),
        SliceItem::Index(i) => {
            let i = eval(i)?;
            if i < 0 || i as usize >= len {
                return Err(TensirSpecError::IndexOutOfBounds { index: i, len });
            }
            Ok((vec![i as usize], false))
        }
        SliceItem::Range { start, stop, step } => {
            let (a, b) = (eval(start)?, eval(stop)?);
            if *step <= 0 || a < 0 || a > b || b as usize > len {
                return Err(TensirSpecError::SliceOutOfBounds {
                    start: a,
                    stop: b,
                    step: *step,
                    len,
                });
            }
            let positions = (a..b).step_by(*step as usize).map(|p| p as usize).collect();
            Ok((positions, true))
        }
    }
}

/// Row-major offsets (into a tensor of `shape`) of the elements a slice
/// selects, and the shape of the selection.
fn slice_offsets(
    shape: &[usize],
    items: &[SliceItem],
    eval: &dyn Fn(&Dim) -> Result<i64>,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if items.len() > shape.len() {
        return Err(TensirSpecError::Malformed(format!(
            "{} slice components for a value of rank {}",
            items.len(),
            shape.len()
        )));
    }
    let mut per_axis = Vec::with_capacity(shape.len());
    let mut out_shape = Vec::new();
    for (axis, &len) in shape.iter().enumerate() {
        let item = items.get(axis).unwrap_or(&SliceItem::Full);
        let (positions, keeps) = slice_positions(item, len, eval)?;
        if keeps {
            out_shape.push(positions.len());
        }
        per_axis.push(positions);
    }
    let strides = row_major_strides(shape);
    let counts: Vec<usize> = per_axis.iter().map(Vec::len).collect();
    checked_len("slice", &counts)?;
    let mut offsets = Vec::new();
    for_each_index(&counts, |idx| {
        offsets.push(
            idx.iter()
                .enumerate()
                .map(|(axis, &k)| per_axis[axis][k] * strides[axis])
                .sum(),
        );
    });
    Ok((offsets, out_shape))
}

struct Machine<'p> {
    sizes: &'p Sizes,
    env: HashMap<&'p str, Tensor>,
    memo: HashMap<TExpr, Tensor>,
}

impl<'p> Machine<'p> {
    fn dim(&self, d: &Dim) -> Result<i64> {
        d.eval(&|s| self.sizes.get(s).copied())
            .map_err(|e| TensirSpecError::BadDim {
                dim: d.to_string(),
                sizes: format_sizes(self.sizes),
                reason: e.to_string(),
            })
    }

    fn shape(&self, dims: &[Dim]) -> Result<Vec<usize>> {
        dims.iter()
            .map(|d| {
                let n = self.dim(d)?;
                usize::try_from(n).map_err(|_| TensirSpecError::BadDim {
                    dim: d.to_string(),
                    sizes: format_sizes(self.sizes),
                    reason: format!("it is negative ({n})"),
                })
            })
            .collect()
    }

    fn eval(&mut self, e: &TExpr) -> Result<Tensor> {
        if let Some(t) = self.memo.get(e) {
            return Ok(t.clone());
        }
        let args = e
            .args()
            .iter()
            .map(|a| self.eval(a))
            .collect::<Result<Vec<Tensor>>>()?;
        let t = self.apply(e, &args)?;
        self.memo.insert(e.clone(), t.clone());
        Ok(t)
    }

    fn apply(&self, e: &TExpr, args: &[Tensor]) -> Result<Tensor> {
        let dtype = e.dtype();
        let name = e.op().name();
        match e.op() {
            Op::Var(v) => self
                .env
                .get(&**v)
                .cloned()
                .ok_or_else(|| TensirSpecError::Unbound {
                    name: v.to_string(),
                }),
            Op::Lit(l) => Ok(Tensor::scalar(literal(*l))),
            Op::Full { shape, value } => {
                let shape = self.shape(shape)?;
                checked_len(name, &shape)?;
                let v = literal(*value);
                Ok(Tensor::from_fn(&shape, |_| v.clone()))
            }
            Op::Unary(u) => Ok(unary(*u, dtype, &args[0])),
            Op::Binary(b) => binary(*b, e.args()[0].dtype(), &args[0], &args[1]),
            Op::Where => {
                let shape =
                    broadcast_shape(name, &[args[0].shape(), args[1].shape(), args[2].shape()])?;
                let c = broadcast_to(&args[0], &shape, name)?;
                let x = broadcast_to(&args[1], &shape, name)?;
                let y = broadcast_to(&args[2], &shape, name)?;
                let elems = (0..c.len())
                    .map(|i| Value::select(&c.elems()[i], &x.elems()[i], &y.elems()[i]))
                    .collect();
                tensor(shape, elems)
            }
            Op::Reduce { kind, axes } => reduce(*kind, dtype, &args[0], axes),
            Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::Einsum(_) => {
                let ranks: Vec<usize> = args.iter().map(|a| a.shape().len()).collect();
                let spec = e.op().as_contraction(&ranks).ok_or_else(|| {
                    TensirSpecError::Malformed(format!("{name} on operands of ranks {ranks:?}"))
                })?;
                einsum(&spec.inputs, &spec.output, args, dtype)
            }
            Op::Transpose(perm) => {
                let src = &args[0];
                let shape: Vec<usize> = perm.iter().map(|&p| src.shape()[p]).collect();
                let strides = row_major_strides(src.shape());
                let elems = src.elems();
                Ok(Tensor::from_fn(&shape, |idx| {
                    let offset: usize = perm
                        .iter()
                        .enumerate()
                        .map(|(i, &p)| idx[i] * strides[p])
                        .sum();
                    elems[offset].clone()
                }))
            }
            Op::Broadcast(dims) => {
                let shape = self.shape(dims)?;
                broadcast_to(&args[0], &shape, name)
            }
            Op::Slice(items) => {
                let src = &args[0];
                let (offsets, shape) = slice_offsets(src.shape(), items, &|d| self.dim(d))?;
                let elems = offsets.iter().map(|&o| src.elems()[o].clone()).collect();
                tensor(shape, elems)
            }
            Op::Concat { axis } => concat(args, *axis),
            Op::Triu(k) | Op::Tril(k) => {
                let upper = matches!(e.op(), Op::Triu(_));
                let src = &args[0];
                let cols = src.shape().get(1).copied().unwrap_or(0);
                let elems = src
                    .elems()
                    .iter()
                    .enumerate()
                    .map(|(o, v)| {
                        let (i, j) = ((o / cols.max(1)) as i64, (o % cols.max(1)) as i64);
                        let keep = if upper { j - i >= *k } else { j - i <= *k };
                        if keep {
                            v.clone()
                        } else {
                            Value::zero()
                        }
                    })
                    .collect();
                tensor(src.shape().to_vec(), elems)
            }
            Op::Diag => {
                let src = &args[0];
                let n = src.shape()[0];
                if src.shape().len() == 1 {
                    checked_len(name, &[n, n])?;
                    Ok(Tensor::from_fn(&[n, n], |idx| {
                        if idx[0] == idx[1] {
                            src.elems()[idx[0]].clone()
                        } else {
                            Value::zero()
                        }
                    }))
                } else {
                    let elems = (0..n).map(|i| src.elems()[i * n + i].clone()).collect();
                    tensor(vec![n], elems)
                }
            }
            Op::Cast(to) => {
                let from = scalar_type(e.args()[0].dtype());
                let to = scalar_type(*to);
                Ok(args[0].map(|v| convert(v, from, to)))
            }
        }
    }
}

fn tensor(shape: Vec<usize>, elems: Vec<Value>) -> Result<Tensor> {
    Tensor::new(shape, elems).map_err(|e| TensirSpecError::Malformed(e.to_string()))
}

fn wrap_result(v: Value, dtype: DType) -> Value {
    match wraps(dtype) {
        Some((bits, signed)) => v.wrap(bits, signed),
        None => v,
    }
}

fn unary(op: UnaryOp, dtype: DType, a: &Tensor) -> Tensor {
    a.map(|v| match op {
        UnaryOp::Neg => wrap_result(v.neg(), dtype),
        UnaryOp::Abs if dtype.is_int() && !dtype.is_signed_int() => v.clone(),
        UnaryOp::Abs => wrap_result(v.abs(), dtype),
        UnaryOp::Sqrt => v.sqrt(),
        UnaryOp::Exp => v.exp(),
        UnaryOp::Log => v.log(),
        UnaryOp::Tanh => v.tanh(),
        UnaryOp::Not => v.logical_not(),
    })
}

fn binary(op: BinaryOp, operand: DType, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let name = op.name();
    let shape = broadcast_shape(name, &[a.shape(), b.shape()])?;
    let a = broadcast_to(a, &shape, name)?;
    let b = broadcast_to(b, &shape, name)?;
    let wrap = wraps(operand);
    let mut elems = Vec::with_capacity(a.len());
    for (x, y) in a.elems().iter().zip(b.elems()) {
        let v = match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => {
                let (x, y) = match wrap {
                    Some((bits, signed)) => (
                        unwrap_operand(x, bits, signed),
                        unwrap_operand(y, bits, signed),
                    ),
                    None => (x.clone(), y.clone()),
                };
                let v = match op {
                    BinaryOp::Add => x.add(&y),
                    BinaryOp::Sub => x.sub(&y),
                    _ => x.mul(&y),
                };
                wrap_result(v, operand)
            }
            BinaryOp::Div => x.div(y).map_err(|_| TensirSpecError::DivisionByZero {
                op: name.to_string(),
            })?,
            BinaryOp::TruncDiv | BinaryOp::Rem if y.is_zero() => {
                return Err(TensirSpecError::DivisionByZero {
                    op: name.to_string(),
                })
            }
            // Quotients and remainders of in-range operands stay in range,
            // except `MIN / -1`, which C leaves undefined.
            BinaryOp::TruncDiv => Value::trunc_div(x, y),
            BinaryOp::Rem => Value::rem(x, y),
            BinaryOp::Pow => x.pow_real(y),
            BinaryOp::Maximum => Value::max_of(&[x.clone(), y.clone()]),
            BinaryOp::Minimum => Value::min_of(&[x.clone(), y.clone()]),
            BinaryOp::Lt => Value::lt(x, y),
            BinaryOp::Le => Value::le(x, y),
            BinaryOp::Gt => Value::gt(x, y),
            BinaryOp::Ge => Value::ge(x, y),
            BinaryOp::Eq => Value::equals(x, y),
            BinaryOp::Ne => Value::not_equals(x, y),
            BinaryOp::And => Value::logical_and(x, y),
            BinaryOp::Or => Value::logical_or(x, y),
        };
        elems.push(v);
    }
    tensor(shape, elems)
}

fn reduce(kind: ReduceKind, dtype: DType, a: &Tensor, axes: &[usize]) -> Result<Tensor> {
    let src = a.shape();
    let keep: Vec<usize> = (0..src.len()).filter(|i| !axes.contains(i)).collect();
    let out_shape: Vec<usize> = keep.iter().map(|&i| src[i]).collect();
    let reduced: Vec<usize> = axes.iter().map(|&i| src[i]).collect();
    let strides = row_major_strides(src);
    let count: usize = reduced.iter().product();
    if count == 0 && matches!(kind, ReduceKind::Max | ReduceKind::Min) {
        return Err(TensirSpecError::EmptyReduction {
            op: kind.name().to_string(),
        });
    }
    let wrap = wraps(dtype);
    let mut elems = Vec::with_capacity(out_shape.iter().product());
    let mut group = Vec::with_capacity(count);
    for_each_index(&out_shape, |out_idx| {
        let base: usize = keep
            .iter()
            .zip(out_idx)
            .map(|(&axis, &i)| i * strides[axis])
            .sum();
        group.clear();
        for_each_index(&reduced, |r_idx| {
            let offset: usize = axes
                .iter()
                .zip(r_idx)
                .map(|(&axis, &i)| i * strides[axis])
                .sum();
            let v = &a.elems()[base + offset];
            group.push(match wrap {
                Some((bits, signed)) => unwrap_operand(v, bits, signed),
                None => v.clone(),
            });
        });
        let v = match kind {
            ReduceKind::Sum => wrap_result(Value::sum(group.iter()), dtype),
            ReduceKind::Prod => {
                wrap_result(group.iter().fold(Value::one(), |acc, v| acc.mul(v)), dtype)
            }
            ReduceKind::Max => Value::max_of(&group),
            ReduceKind::Min => Value::min_of(&group),
        };
        elems.push(v);
    });
    tensor(out_shape, elems)
}

/// General contraction of one or two operands: labels absent from `output`
/// are summed.
fn einsum(inputs: &[Vec<char>], output: &[char], args: &[Tensor], dtype: DType) -> Result<Tensor> {
    let mut labels: Vec<(char, usize)> = Vec::new();
    for (lab, t) in inputs.iter().zip(args) {
        if lab.len() != t.shape().len() {
            return Err(TensirSpecError::Malformed(format!(
                "einsum subscript {lab:?} for an operand of rank {}",
                t.shape().len()
            )));
        }
        for (c, &n) in lab.iter().zip(t.shape()) {
            match labels.iter().find(|(l, _)| l == c) {
                Some((_, m)) if *m != n => {
                    return Err(TensirSpecError::ShapeMismatch {
                        op: "einsum".into(),
                        shapes: args.iter().map(|a| a.shape().to_vec()).collect(),
                    })
                }
                Some(_) => {}
                None => labels.push((*c, n)),
            }
        }
    }
    let size_of = |c: &char| labels.iter().find(|(l, _)| l == c).map(|(_, n)| *n);
    let out_shape = output
        .iter()
        .map(size_of)
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| TensirSpecError::Malformed("einsum output label unknown".into()))?;
    let summed: Vec<char> = labels
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !output.contains(c))
        .collect();
    let summed_shape: Vec<usize> = summed.iter().filter_map(size_of).collect();
    checked_len("einsum", &out_shape)?;
    // For each operand, the stride of each label in the output and summed
    // index vectors, so an element's offset is two dot products.
    let operand_strides: Vec<(Vec<usize>, Vec<usize>)> = inputs
        .iter()
        .zip(args)
        .map(|(lab, t)| {
            let strides = row_major_strides(t.shape());
            let stride_of = |c: &char| lab.iter().position(|l| l == c).map_or(0, |p| strides[p]);
            (
                output.iter().map(stride_of).collect(),
                summed.iter().map(stride_of).collect(),
            )
        })
        .collect();
    let wrap = wraps(dtype);
    let mut elems = Vec::with_capacity(out_shape.iter().product());
    let mut products = Vec::new();
    for_each_index(&out_shape, |out_idx| {
        let bases: Vec<usize> = operand_strides
            .iter()
            .map(|(os, _)| os.iter().zip(out_idx).map(|(s, i)| s * i).sum())
            .collect();
        products.clear();
        let mut visit = |s_idx: &[usize]| {
            let mut p: Option<Value> = None;
            for (k, t) in args.iter().enumerate() {
                let offset: usize = bases[k]
                    + operand_strides[k]
                        .1
                        .iter()
                        .zip(s_idx)
                        .map(|(s, i)| s * i)
                        .sum::<usize>();
                let v = match wrap {
                    Some((bits, signed)) => unwrap_operand(&t.elems()[offset], bits, signed),
                    None => t.elems()[offset].clone(),
                };
                p = Some(match p {
                    None => v,
                    Some(acc) => acc.mul(&v),
                });
            }
            products.push(p.unwrap_or_else(Value::one));
        };
        if summed_shape.is_empty() {
            visit(&[]);
        } else {
            for_each_index(&summed_shape, &mut visit);
        }
        elems.push(wrap_result(Value::sum(products.iter()), dtype));
    });
    tensor(out_shape, elems)
}

fn concat(args: &[Tensor], axis: usize) -> Result<Tensor> {
    let first = args
        .first()
        .ok_or_else(|| TensirSpecError::Malformed("concat of nothing".into()))?;
    let rank = first.shape().len();
    if axis >= rank
        || args.iter().any(|a| {
            a.shape().len() != rank
                || (0..rank).any(|d| d != axis && a.shape()[d] != first.shape()[d])
        })
    {
        return Err(TensirSpecError::ShapeMismatch {
            op: "concat".into(),
            shapes: args.iter().map(|a| a.shape().to_vec()).collect(),
        });
    }
    let mut shape = first.shape().to_vec();
    shape[axis] = args.iter().map(|a| a.shape()[axis]).sum();
    checked_len("concat", &shape)?;
    let outer: usize = shape[..axis].iter().product();
    let mut elems = Vec::with_capacity(shape.iter().product());
    for o in 0..outer {
        for a in args {
            let chunk: usize = a.shape()[axis..].iter().product();
            elems.extend_from_slice(&a.elems()[o * chunk..(o + 1) * chunk]);
        }
    }
    tensor(shape, elems)
}

/// The initial contents of an array parameter: the symbols the C spec gives
/// it. A rank-0 array is C's `s[0]` (the frontend refuses `*s`).
fn initial_symbols(name: &str, shape: &[usize]) -> Tensor {
    if shape.is_empty() {
        Tensor::scalar(Symbol::element(name, &[0]).to_expr())
    } else {
        Tensor::of_symbols(name, shape, false)
    }
}

/// Executes `program` symbolically at `sizes` (every size parameter bound).
pub fn execute(program: &Program, sizes: &Sizes) -> Result<ProgramSpec> {
    let mut machine = Machine {
        sizes,
        env: HashMap::new(),
        memo: HashMap::new(),
    };
    for p in &program.params {
        let value = match &p.kind {
            ParamKind::Size => {
                let n = sizes
                    .get(&*p.name)
                    .ok_or_else(|| TensirSpecError::MissingSize {
                        name: p.name.to_string(),
                    })?;
                Tensor::scalar(Value::int(*n))
            }
            // An integer the C spec treats as a size is its value there too.
            ParamKind::Scalar(_) => Tensor::scalar(match sizes.get(&*p.name) {
                Some(n) => Value::int(*n),
                None => Symbol::scalar(&p.name).to_expr(),
            }),
            ParamKind::Array { shape, .. } => {
                let shape = machine.shape(shape)?;
                checked_len(&p.name, &shape)?;
                initial_symbols(&p.name, &shape)
            }
        };
        machine.env.insert(&p.name, value);
    }
    let mut returned = None;
    for stmt in &program.body {
        match stmt {
            Stmt::Let { name, value } => {
                let v = machine.eval(value)?;
                machine.env.insert(name, v);
            }
            Stmt::Store {
                target,
                region,
                value,
            } => {
                let v = machine.eval(value)?;
                store(&mut machine, program, target, region.as_deref(), v)?;
                // Reads of `target` after the store see the new value.
                machine.memo.clear();
            }
            Stmt::Return(value) => {
                let v = machine.eval(value)?;
                returned = Some((value.dtype(), v));
            }
        }
    }
    let mut outputs = Vec::new();
    for p in &program.params {
        if let ParamKind::Array { dtype, access, .. } = &p.kind {
            if access.is_written() {
                let value =
                    machine
                        .env
                        .get(&*p.name)
                        .cloned()
                        .ok_or_else(|| TensirSpecError::Unbound {
                            name: p.name.to_string(),
                        })?;
                outputs.push(ProgramOutput {
                    name: p.name.to_string(),
                    dtype: *dtype,
                    value,
                });
            }
        }
    }
    if let Some((dtype, value)) = returned {
        outputs.push(ProgramOutput {
            name: "return".into(),
            dtype,
            value,
        });
    }
    Ok(ProgramSpec {
        program: program.name.to_string(),
        sizes: sizes.clone(),
        outputs,
    })
}

/// Writes `value` into the whole of array `target` or into a region of it.
fn store<'p>(
    machine: &mut Machine<'p>,
    program: &'p Program,
    target: &str,
    region: Option<&[SliceItem]>,
    value: Tensor,
) -> Result<()> {
    let not_writable = || TensirSpecError::NotWritable {
        name: target.to_string(),
    };
    let param = program
        .param(target)
        .filter(|p| p.access().is_some_and(|a| a != Access::In))
        .ok_or_else(not_writable)?;
    let current = machine.env.get(target).cloned().ok_or_else(not_writable)?;
    let Some(items) = region else {
        let value = broadcast_to(&value, current.shape(), "store")?;
        machine.env.insert(&param.name, value);
        return Ok(());
    };
    let (offsets, shape) = slice_offsets(current.shape(), items, &|d| machine.dim(d))?;
    let value = broadcast_to(&value, &shape, "store")?;
    let mut elems = current.elems().to_vec();
    for (&o, v) in offsets.iter().zip(value.elems()) {
        elems[o] = v.clone();
    }
    let updated = tensor(current.shape().to_vec(), elems)?;
    machine.env.insert(&param.name, updated);
    Ok(())
}

/// Compares a program's spec with the C kernel's spec at the same sizes:
/// every output the C kernel has must be produced with equal elements, and
/// the program may change no other array.
pub fn equal_to_spec(program_spec: &ProgramSpec, c_spec: &Spec) -> Comparison {
    for c_out in &c_spec.outputs {
        let Some(p_out) = program_spec.output(&c_out.name) else {
            // An output the C kernel leaves at its initial values needs no
            // write in the program.
            let untouched = initial_symbols(&c_out.name, c_out.value.shape());
            if c_out.value == untouched {
                continue;
            }
            return Comparison::MissingOutput {
                output: c_out.name.clone(),
            };
        };
        if p_out.value.shape() != c_out.value.shape() {
            // A rank-0 array is C's one-element array `s[0]`.
            let both_single = p_out.value.len() == 1 && c_out.value.len() == 1;
            if !both_single {
                return Comparison::ShapeMismatch {
                    output: c_out.name.clone(),
                    program: p_out.value.shape().to_vec(),
                    c: c_out.value.shape().to_vec(),
                };
            }
        }
        for (offset, (p, c)) in p_out
            .value
            .elems()
            .iter()
            .zip(c_out.value.elems())
            .enumerate()
        {
            if p != c && canonical_extrema(p) != canonical_extrema(c) {
                return Comparison::Differs {
                    output: c_out.name.clone(),
                    index: c_out.value.index_of(offset),
                    program: p.clone(),
                    c: c.clone(),
                };
            }
        }
    }
    for p_out in &program_spec.outputs {
        if c_spec.output(&p_out.name).is_none() {
            let untouched = initial_symbols(&p_out.name, p_out.value.shape());
            if p_out.value != untouched {
                return Comparison::UnexpectedOutput {
                    output: p_out.name.clone(),
                };
            }
        }
    }
    Comparison::Equal
}

/// Computes both specs at `sizes` and compares them.
pub fn check_program_against_kernel(
    program: &Program,
    kernel: &Kernel,
    sizes: &Sizes,
) -> Result<Comparison> {
    let c_spec = spec_of_kernel(kernel, sizes)?;
    let program_spec = execute(program, sizes)?;
    Ok(equal_to_spec(&program_spec, &c_spec))
}

#[cfg(test)]
mod tests;
