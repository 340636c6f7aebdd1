//! Element semantics of TensIR operations on symbolic tensors: C
//! conversions, narrow-integer wrap-around, element-wise operations,
//! reductions and contractions.

use tenslift_frontend::ir::ScalarType;
use tenslift_targets::ops::{BinaryOp, ReduceKind, UnaryOp};
use tenslift_targets::{DType, EinsumLayout, Lit};

use super::layout::{
    broadcast_shape, broadcast_to, checked_len, for_each_index, row_major_strides, tensor,
};
use super::{Result, TensirSpecError};
use crate::algebra::{Atom, Func, Rat, Tensor, Value};

/// The C type a TensIR element type stands for (for conversion semantics).
pub(super) fn scalar_type(d: DType) -> ScalarType {
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
/// conversion back), and `unsigned int`, whose C arithmetic wraps. Signed
/// `int` and wider are exact, as in the C spec (overflow is undefined).
pub(super) fn wraps(d: DType) -> Option<(u8, bool)> {
    (d.is_int() && (d.bits() < 32 || d == DType::U32)).then(|| (d.bits() as u8, d.is_signed_int()))
}

/// `wrap(x)` of the same width is `x` modulo 2^bits, so an operand of a
/// wrapping add/sub/mul may drop its own wrap: keeps `wrap(wrap(a)+b)` and
/// `wrap(a+b)` one normal form.
pub(super) fn unwrap_operand(v: &Value, bits: u8, signed: bool) -> Value {
    if let Some((Func::Wrap { bits: b, signed: s }, [inner])) = v.as_atom().and_then(Atom::as_app) {
        if b == bits && s == signed {
            return inner.clone();
        }
    }
    v.clone()
}

/// The value a float literal `v` of type `dtype` denotes: the shortest
/// decimal that round-trips in that type, as the C spec reads C's decimal
/// literals (None for infinities and NaN).
pub fn float_literal_value(v: f64, dtype: DType) -> Option<Rat> {
    let text = if dtype == DType::F32 {
        format!("{}", v as f32)
    } else {
        format!("{v}")
    };
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    let magnitude = Rat::parse_decimal(digits)?;
    Some(if negative { -&magnitude } else { magnitude })
}

/// The exact value of a literal (floats as [`float_literal_value`]).
pub(super) fn literal(l: Lit) -> Result<Value> {
    Ok(match l {
        Lit::Bool(b) => Value::int(i64::from(b)),
        Lit::Int(v, _) => Value::int(v),
        Lit::Float(bits, d) => {
            let v = f64::from_bits(bits);
            let exact = float_literal_value(v, d)
                .map(Value::constant)
                .or_else(|| Rat::from_f64(v).map(Value::constant));
            exact.ok_or_else(|| {
                TensirSpecError::Malformed(format!("literal {v} is not a finite number"))
            })?
        }
    })
}

pub(super) fn wrap_result(v: Value, dtype: DType) -> Value {
    match wraps(dtype) {
        Some((bits, signed)) => v.wrap(bits, signed),
        None => v,
    }
}

pub(super) fn unary(op: UnaryOp, dtype: DType, a: &Tensor) -> Tensor {
    a.map(|v| match op {
        UnaryOp::Neg => match wraps(dtype) {
            Some((bits, signed)) => unwrap_operand(v, bits, signed).neg().wrap(bits, signed),
            None => v.neg(),
        },
        UnaryOp::Abs if dtype.is_int() && !dtype.is_signed_int() => v.clone(),
        UnaryOp::Abs => wrap_result(v.abs(), dtype),
        UnaryOp::Sqrt => v.sqrt(),
        UnaryOp::Exp => v.exp(),
        UnaryOp::Log => v.log(),
        UnaryOp::Tanh => v.tanh(),
        UnaryOp::Not => v.logical_not(),
        UnaryOp::Round => v.integral(Func::Round),
        UnaryOp::Floor => v.integral(Func::Floor),
        UnaryOp::Ceil => v.integral(Func::Ceil),
        UnaryOp::Sin => v.sin(),
        UnaryOp::Cos => v.cos(),
        UnaryOp::Cosh => v.cosh(),
        UnaryOp::Sinh => v.sinh(),
    })
}

/// `x * y`, refused past the C spec's limit of expanded term pairs: the
/// terms of a recurrence (a kept loop's `var`) grow geometrically, and the
/// product would exhaust memory instead of failing.
pub(super) fn product(op: &str, x: &Value, y: &Value) -> Result<Value> {
    let terms = x.len().saturating_mul(y.len());
    let limit = crate::spec::exec::PRODUCT_TERM_LIMIT;
    if terms > limit {
        return Err(TensirSpecError::ExpressionTooLarge {
            op: op.to_string(),
            terms,
            limit,
        });
    }
    Ok(x.mul(y))
}

pub(super) fn binary(op: BinaryOp, operand: DType, a: &Tensor, b: &Tensor) -> Result<Tensor> {
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
                    _ => product(name, &x, &y)?,
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

/// `argmax`/`argmin` along `axis` as the C search it stands for: from
/// position 0, a later element is taken when strictly greater (less) than
/// the best so far, so the position is the same chain of selects the C
/// spec holds (`select(x[k] > m, k, best)`), the running value included.
pub(super) fn arg_extreme(
    (largest, last): (bool, bool),
    a: &Tensor,
    axis: usize,
) -> Result<Tensor> {
    let src = a.shape();
    let len = src[axis];
    if len == 0 {
        let op = if largest { "argmax" } else { "argmin" };
        return Err(TensirSpecError::EmptyReduction { op: op.to_string() });
    }
    let mut out_shape = src.to_vec();
    out_shape.remove(axis);
    let outer: usize = src[..axis].iter().product();
    let inner: usize = src[axis + 1..].iter().product();
    let mut elems = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| &a.elems()[(o * len + k) * inner + i];
            let (mut m, mut best) = (at(0).clone(), Value::int(0));
            for k in 1..len {
                let x = at(k);
                let better = match (largest, last) {
                    (true, false) => Value::gt(x, &m),
                    (true, true) => Value::ge(x, &m),
                    (false, false) => Value::lt(x, &m),
                    (false, true) => Value::le(x, &m),
                };
                m = Value::select(&better, x, &m);
                best = Value::select(&better, &Value::int(k as i64), &best);
            }
            elems.push(best);
        }
    }
    tensor(out_shape, elems)
}

pub(super) fn reduce(kind: ReduceKind, dtype: DType, a: &Tensor, axes: &[usize]) -> Result<Tensor> {
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
        elems.push(combined(kind, dtype, &group));
    });
    tensor(out_shape, elems)
}

/// `kind`'s reduction of `group` (operands already unwrapped), wrapped
/// to `dtype`.
fn combined(kind: ReduceKind, dtype: DType, group: &[Value]) -> Value {
    match kind {
        ReduceKind::Sum => wrap_result(Value::sum(group.iter()), dtype),
        ReduceKind::Prod => {
            wrap_result(group.iter().fold(Value::one(), |acc, v| acc.mul(v)), dtype)
        }
        ReduceKind::Max => Value::max_of(group),
        ReduceKind::Min => Value::min_of(group),
    }
}

/// `scan(a, kind, axis)`: element `[.., i, ..]` is `kind`'s reduction of
/// `a[.., 0..=i, ..]`, stated as [`reduce`] states a reduction (so a
/// running value in C, whose spec is the same prefix reduction, compares
/// equal element by element).
pub(super) fn scan(kind: ReduceKind, dtype: DType, a: &Tensor, axis: usize) -> Result<Tensor> {
    let shape = a.shape().to_vec();
    let strides = row_major_strides(&shape);
    let wrap = wraps(dtype);
    let mut elems = Vec::with_capacity(a.len());
    for_each_index(&shape, |idx| {
        let at: usize = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
        let base = at - idx[axis] * strides[axis];
        let group: Vec<Value> = (0..=idx[axis])
            .map(|k| {
                let v = &a.elems()[base + k * strides[axis]];
                match wrap {
                    Some((bits, signed)) => unwrap_operand(v, bits, signed),
                    None => v.clone(),
                }
            })
            .collect();
        elems.push(combined(kind, dtype, &group));
    });
    tensor(shape, elems)
}

/// General contraction of one or two operands: labels absent from `output`
/// are summed.
pub(super) fn einsum(
    inputs: &[Vec<char>],
    output: &[char],
    args: &[Tensor],
    dtype: DType,
) -> Result<Tensor> {
    let shapes: Vec<&[usize]> = args.iter().map(|a| a.shape()).collect();
    let layout = EinsumLayout::new(inputs, output, &shapes).map_err(TensirSpecError::Malformed)?;
    let (out_shape, summed_shape) = (layout.out_shape.clone(), &layout.sum_shape);
    checked_len("einsum", &out_shape)?;
    let wrap = wraps(dtype);
    let mut elems = Vec::with_capacity(out_shape.iter().product());
    let mut products = Vec::new();
    let mut too_large = None;
    for_each_index(&out_shape, |out_idx| {
        products.clear();
        let mut visit = |s_idx: &[usize]| {
            let mut p: Option<Value> = None;
            for (k, t) in args.iter().enumerate() {
                let offset = layout.offset(k, out_idx, s_idx);
                let v = match wrap {
                    Some((bits, signed)) => unwrap_operand(&t.elems()[offset], bits, signed),
                    None => t.elems()[offset].clone(),
                };
                p = Some(match p {
                    None => v,
                    Some(acc) => match product("einsum", &acc, &v) {
                        Ok(p) => p,
                        Err(e) => {
                            too_large.get_or_insert(e);
                            Value::zero()
                        }
                    },
                });
            }
            products.push(p.unwrap_or_else(Value::one));
        };
        if summed_shape.is_empty() {
            visit(&[]);
        } else {
            for_each_index(summed_shape, &mut visit);
        }
        elems.push(wrap_result(Value::sum(products.iter()), dtype));
    });
    if let Some(e) = too_large {
        return Err(e);
    }
    tensor(out_shape, elems)
}
