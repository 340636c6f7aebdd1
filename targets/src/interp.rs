//! The reference interpreter: runs TensIR on concrete arrays with the
//! semantics the emitters must reproduce. Floats are computed in f64 and
//! rounded to f32 after every operation for f32 values; integers wrap to
//! their width like C conversions; `trunc_div`/`rem` truncate toward zero.

use std::collections::{BTreeMap, HashMap};

use crate::dim::{Dim, DimError};
use crate::dtype::{DType, Lit};
use crate::expr::Expr;
use crate::ops::{BinaryOp, EinsumLayout, Op, ReduceKind, SliceItem, UnaryOp};
use crate::program::{ParamKind, Program, Stmt};
use crate::solvers;

/// Element storage: floats as f64, integers and bools as i64.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    Float(Vec<f64>),
    Int(Vec<i64>),
}

/// A concrete array (rank 0 for scalars), row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub data: Data,
}

/// Why a program could not be run on the given inputs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum InterpError {
    #[error("missing argument `{0}`")]
    MissingArgument(String),
    #[error("argument `{name}` has {got}, expected {want}")]
    BadArgument {
        name: String,
        got: String,
        want: String,
    },
    #[error(transparent)]
    Dim(#[from] DimError),
    #[error("integer division by zero")]
    DivisionByZero,
    #[error("slice {what} is out of bounds for an axis of length {len}")]
    OutOfBounds { what: String, len: usize },
    #[error("{0} of an empty set of elements")]
    EmptyReduction(&'static str),
    #[error("`{0}` is not bound")]
    Unbound(String),
    #[error("{0}")]
    Einsum(String),
    /// An operation whose definition does not type-check (a malformed
    /// node built around the checker).
    #[error("{0}")]
    Malformed(String),
}

type IResult<T> = Result<T, InterpError>;

impl Array {
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn zeros(dtype: DType, shape: Vec<usize>) -> Array {
        let n = shape.iter().product();
        let data = if dtype.is_float() {
            Data::Float(vec![0.0; n])
        } else {
            Data::Int(vec![0; n])
        };
        Array { dtype, shape, data }
    }

    pub fn from_f64(dtype: DType, shape: Vec<usize>, values: Vec<f64>) -> Array {
        let data = if dtype.is_float() {
            Data::Float(values.into_iter().map(|v| dtype.round_float(v)).collect())
        } else {
            Data::Int(
                values
                    .into_iter()
                    .map(|v| cast_float_to_int(v, dtype))
                    .collect(),
            )
        };
        Array { dtype, shape, data }
    }

    pub fn from_i64(dtype: DType, shape: Vec<usize>, values: Vec<i64>) -> Array {
        let data = if dtype.is_float() {
            Data::Float(
                values
                    .into_iter()
                    .map(|v| dtype.round_float(v as f64))
                    .collect(),
            )
        } else {
            Data::Int(
                values
                    .into_iter()
                    .map(|v| dtype.wrap_int(i128::from(v)))
                    .collect(),
            )
        };
        Array { dtype, shape, data }
    }

    pub fn scalar(lit: Lit) -> Array {
        match lit {
            Lit::Float(..) => Array::from_f64(lit.dtype(), vec![], vec![lit.as_f64()]),
            _ => Array::from_i64(lit.dtype(), vec![], vec![lit.as_i64()]),
        }
    }

    /// Element `i` as f64 (integers converted).
    pub fn get_f64(&self, i: usize) -> f64 {
        match &self.data {
            Data::Float(v) => v[i],
            Data::Int(v) => v[i] as f64,
        }
    }

    pub fn get_i64(&self, i: usize) -> i64 {
        match &self.data {
            Data::Float(v) => v[i] as i64,
            Data::Int(v) => v[i],
        }
    }

    /// A new array whose element `k` is this array's element `map(k)`.
    fn gather(&self, shape: Vec<usize>, map: impl Fn(usize) -> usize) -> Array {
        let n: usize = shape.iter().product();
        let data = match &self.data {
            Data::Float(v) => Data::Float((0..n).map(|k| v[map(k)]).collect()),
            Data::Int(v) => Data::Int((0..n).map(|k| v[map(k)]).collect()),
        };
        Array {
            dtype: self.dtype,
            shape,
            data,
        }
    }
}

fn cast_float_to_int(v: f64, to: DType) -> i64 {
    if to == DType::Bool {
        return i64::from(v != 0.0);
    }
    // Out-of-range conversions are undefined in C; saturate then wrap.
    to.wrap_int(v.trunc() as i128)
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

fn unravel(mut k: usize, shape: &[usize], out: &mut [usize]) {
    for i in (0..shape.len()).rev() {
        if shape[i] > 0 {
            out[i] = k % shape[i];
            k /= shape[i];
        }
    }
}

/// Maps flat indices of `out_shape` to flat indices of a broadcast operand.
fn broadcast_map(in_shape: &[usize], out_shape: &[usize]) -> impl Fn(usize) -> usize {
    let in_strides = strides(in_shape);
    let offset = out_shape.len() - in_shape.len();
    let eff: Vec<usize> = (0..out_shape.len())
        .map(|i| {
            if i < offset || in_shape[i - offset] == 1 {
                0
            } else {
                in_strides[i - offset]
            }
        })
        .collect();
    strided_map(out_shape.to_vec(), eff, in_shape == out_shape)
}

/// The flat index `sum(idx[i] * strides[i])` of the multi-index of `k` in
/// `shape`, computed without allocating (the interpreter's hot path).
fn strided_map(shape: Vec<usize>, strides: Vec<usize>, identity: bool) -> impl Fn(usize) -> usize {
    move |mut k| {
        if identity {
            return k;
        }
        let mut flat = 0;
        for i in (0..shape.len()).rev() {
            let d = shape[i];
            if d > 0 {
                flat += (k % d) * strides[i];
                k /= d;
            }
        }
        flat
    }
}

fn broadcast_shape(a: &[usize], b: &[usize]) -> Vec<usize> {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|i| {
            let da = (i + a.len()).checked_sub(rank).map_or(1, |j| a[j]);
            let db = (i + b.len()).checked_sub(rank).map_or(1, |j| b[j]);
            if da == 1 {
                db
            } else {
                da
            }
        })
        .collect()
}

/// Concrete values of size parameters and bound names while running.
pub struct Env {
    pub sizes: HashMap<String, i64>,
    pub values: HashMap<String, Array>,
}

impl Env {
    fn dim(&self, d: &Dim) -> IResult<i64> {
        Ok(d.eval(&|s| self.sizes.get(s).copied())?)
    }

    fn udim(&self, d: &Dim) -> IResult<usize> {
        let v = self.dim(d)?;
        usize::try_from(v).map_err(|_| InterpError::OutOfBounds {
            what: format!("size {d} = {v}"),
            len: 0,
        })
    }
}

/// The results of running a program: final contents of `out`/`inout`
/// arrays (by name) and the returned scalar.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub arrays: BTreeMap<String, Array>,
    pub returned: Option<Array>,
}

/// Runs `program`. `sizes` binds size parameters; `args` binds every other
/// parameter (scalars as rank-0 arrays). `out` arrays may be omitted (they
/// start as zeros).
pub fn run(
    program: &Program,
    sizes: &HashMap<String, i64>,
    args: &HashMap<String, Array>,
) -> IResult<Outcome> {
    let mut env = Env {
        sizes: sizes.clone(),
        values: HashMap::new(),
    };
    for p in &program.params {
        let name = p.name.to_string();
        match &p.kind {
            ParamKind::Size => {
                let v = *sizes
                    .get(&name)
                    .ok_or_else(|| InterpError::MissingArgument(name.clone()))?;
                env.values
                    .insert(name, Array::from_i64(DType::I64, vec![], vec![v]));
            }
            ParamKind::Scalar(_) | ParamKind::Array { .. } => {
                let ty = p.ty();
                let shape = ty
                    .shape
                    .iter()
                    .map(|d| env.udim(d))
                    .collect::<IResult<Vec<usize>>>()?;
                let value = match args.get(&name) {
                    Some(a) => a.clone(),
                    None if p.access() == Some(crate::program::Access::Out) => {
                        Array::zeros(ty.dtype, shape.clone())
                    }
                    None => return Err(InterpError::MissingArgument(name)),
                };
                if value.dtype != ty.dtype || value.shape != shape {
                    return Err(InterpError::BadArgument {
                        name,
                        got: format!("{}{:?}", value.dtype, value.shape),
                        want: format!("{}{:?}", ty.dtype, shape),
                    });
                }
                env.values.insert(name, value);
            }
        }
    }
    let mut returned = None;
    exec_block(&program.body, &mut env, &mut returned)?;
    let arrays = program
        .params
        .iter()
        .filter(|p| p.access().is_some_and(|a| a.is_written()))
        .filter_map(|p| env.values.remove(&*p.name).map(|v| (p.name.to_string(), v)))
        .collect();
    Ok(Outcome { arrays, returned })
}

/// Runs statements in order; a loop runs its body once per value of its
/// variable, and the body's `let`s are dropped after each iteration.
fn exec_block(stmts: &[Stmt], env: &mut Env, returned: &mut Option<Array>) -> IResult<()> {
    for stmt in stmts {
        match stmt {
            Stmt::Let { name, value } => {
                let v = eval(value, env)?;
                env.values.insert(name.to_string(), v);
            }
            Stmt::Var { name, ty } => {
                let shape = ty
                    .shape
                    .iter()
                    .map(|d| env.udim(d))
                    .collect::<IResult<Vec<_>>>()?;
                env.values
                    .insert(name.to_string(), Array::zeros(ty.dtype, shape));
            }
            Stmt::Store {
                target,
                region,
                value,
            } => {
                let v = eval(value, env)?;
                let dest = env
                    .values
                    .get_mut(&**target)
                    .ok_or_else(|| InterpError::Unbound(target.to_string()))?;
                match region {
                    None => *dest = v,
                    Some(items) => {
                        let positions = slice_positions(&dest.shape, items, &env.sizes)?;
                        store_at(dest, &positions, &v);
                    }
                }
            }
            Stmt::Return(value) => *returned = Some(eval(value, env)?),
            Stmt::Loop {
                var,
                start,
                stop,
                body,
            } => {
                let (first, end) = (env.dim(start)?, env.dim(stop)?);
                for t in first..end {
                    env.sizes.insert(var.to_string(), t);
                    env.values.insert(
                        var.to_string(),
                        Array::from_i64(DType::I64, vec![], vec![t]),
                    );
                    exec_block(body, env, returned)?;
                    for s in body {
                        if let Stmt::Let { name, .. } = s {
                            env.values.remove(&**name);
                        }
                    }
                }
                env.sizes.remove(&**var);
                env.values.remove(&**var);
            }
        }
    }
    Ok(())
}

fn store_at(dest: &mut Array, positions: &[usize], v: &Array) {
    match (&mut dest.data, &v.data) {
        (Data::Float(d), Data::Float(s)) => {
            for (p, x) in positions.iter().zip(s) {
                d[*p] = *x;
            }
        }
        (Data::Int(d), Data::Int(s)) => {
            for (p, x) in positions.iter().zip(s) {
                d[*p] = *x;
            }
        }
        // Types were checked when the program was built.
        _ => {}
    }
}

/// Flat positions (row-major in the result) selected by a slice.
fn slice_positions(
    shape: &[usize],
    items: &[SliceItem],
    sizes: &HashMap<String, i64>,
) -> IResult<Vec<usize>> {
    let ev = |d: &Dim| -> IResult<i64> { Ok(d.eval(&|s| sizes.get(s).copied())?) };
    let st = strides(shape);
    let mut positions = vec![0usize];
    for (axis, len) in shape.iter().enumerate() {
        let len_i = *len as i64;
        let picks: Vec<usize> = match items.get(axis).unwrap_or(&SliceItem::Full) {
            SliceItem::Full => (0..*len).collect(),
            SliceItem::Index(d) => {
                let i = ev(d)?;
                if i < 0 || i >= len_i {
                    return Err(InterpError::OutOfBounds {
                        what: format!("index {d} = {i}"),
                        len: *len,
                    });
                }
                vec![i as usize]
            }
            SliceItem::Range { start, stop, step } => {
                let (a, b) = (ev(start)?, ev(stop)?);
                if a < 0 || b > len_i || a > b {
                    return Err(InterpError::OutOfBounds {
                        what: format!("range {start}:{stop} = {a}:{b}"),
                        len: *len,
                    });
                }
                (a..b).step_by(*step as usize).map(|i| i as usize).collect()
            }
        };
        let stride = st[axis];
        positions = positions
            .iter()
            .flat_map(|p| picks.iter().map(move |i| p + i * stride))
            .collect();
    }
    Ok(positions)
}

/// Evaluates an expression in an environment. Shared subtrees are
/// evaluated once.
pub fn eval(e: &Expr, env: &Env) -> IResult<Array> {
    eval_memo(e, env, &mut HashMap::new())
}

fn eval_memo(e: &Expr, env: &Env, memo: &mut HashMap<Expr, Array>) -> IResult<Array> {
    if let Some(v) = memo.get(e) {
        return Ok(v.clone());
    }
    let v = eval_node(e, env, memo)?;
    if !e.args().is_empty() {
        memo.insert(e.clone(), v.clone());
    }
    Ok(v)
}

fn eval_node(e: &Expr, env: &Env, memo: &mut HashMap<Expr, Array>) -> IResult<Array> {
    let args = e
        .args()
        .iter()
        .map(|a| eval_memo(a, env, memo))
        .collect::<IResult<Vec<Array>>>()?;
    let dtype = e.dtype();
    match e.op() {
        Op::Var(name) => {
            let v = env
                .values
                .get(&**name)
                .ok_or_else(|| InterpError::Unbound(name.to_string()))?;
            // Every operation below trusts operand shapes to match types.
            let want = e
                .shape()
                .iter()
                .map(|d| env.udim(d))
                .collect::<IResult<Vec<usize>>>()?;
            if v.dtype != dtype || v.shape != want {
                return Err(InterpError::BadArgument {
                    name: name.to_string(),
                    got: format!("{}{:?}", v.dtype, v.shape),
                    want: format!("{dtype}{want:?}"),
                });
            }
            Ok(v.clone())
        }
        Op::Lit(l) => Ok(Array::scalar(*l)),
        Op::Full { shape, value } => {
            let shape = shape
                .iter()
                .map(|d| env.udim(d))
                .collect::<IResult<Vec<_>>>()?;
            let one = Array::scalar(*value);
            Ok(one.gather(shape, |_| 0))
        }
        Op::Unary(u) => Ok(unary(*u, &args[0])),
        Op::Binary(b) => binary(*b, &args[0], &args[1], dtype),
        Op::Where => {
            let shape = broadcast_shape(
                &args[0].shape,
                &broadcast_shape(&args[1].shape, &args[2].shape),
            );
            let (mc, mt, mf) = (
                broadcast_map(&args[0].shape, &shape),
                broadcast_map(&args[1].shape, &shape),
                broadcast_map(&args[2].shape, &shape),
            );
            let n: usize = shape.iter().product();
            let data = match (&args[1].data, &args[2].data) {
                (Data::Float(t), Data::Float(f)) => Data::Float(
                    (0..n)
                        .map(|k| {
                            if args[0].get_i64(mc(k)) != 0 {
                                t[mt(k)]
                            } else {
                                f[mf(k)]
                            }
                        })
                        .collect(),
                ),
                _ => Data::Int(
                    (0..n)
                        .map(|k| {
                            if args[0].get_i64(mc(k)) != 0 {
                                args[1].get_i64(mt(k))
                            } else {
                                args[2].get_i64(mf(k))
                            }
                        })
                        .collect(),
                ),
            };
            Ok(Array { dtype, shape, data })
        }
        Op::Reduce { kind, axes } => reduce(*kind, axes, &args[0]),
        Op::Scan { kind, axis } => Ok(scan(*kind, *axis, &args[0])),
        Op::ArgExtreme {
            largest,
            axis,
            dtype,
            last,
        } => arg_extreme((*largest, *last), *axis, *dtype, &args[0]),
        Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::Einsum(_) => {
            let ranks: Vec<usize> = args.iter().map(|a| a.shape.len()).collect();
            let spec = e
                .op()
                .as_contraction(&ranks)
                .ok_or_else(|| InterpError::Unbound("contraction".into()))?;
            contract(&spec.inputs, &spec.output, &args, dtype)
        }
        Op::Transpose(perm) => {
            let a = &args[0];
            let shape: Vec<usize> = perm.iter().map(|&i| a.shape[i]).collect();
            let st = strides(&a.shape);
            let permuted: Vec<usize> = perm.iter().map(|&p| st[p]).collect();
            Ok(a.gather(shape.clone(), strided_map(shape, permuted, false)))
        }
        Op::Broadcast(shape) => {
            let shape = shape
                .iter()
                .map(|d| env.udim(d))
                .collect::<IResult<Vec<_>>>()?;
            let m = broadcast_map(&args[0].shape, &shape);
            Ok(args[0].gather(shape, m))
        }
        Op::Slice(items) => {
            let a = &args[0];
            let positions = slice_positions(&a.shape, items, &env.sizes)?;
            let shape = e
                .shape()
                .iter()
                .map(|d| env.udim(d))
                .collect::<IResult<Vec<_>>>()?;
            Ok(a.gather(shape, |k| positions[k]))
        }
        Op::Flip(axes) => {
            let a = &args[0];
            let shape = a.shape.clone();
            Ok(a.gather(shape.clone(), flipped_map(shape, axes.clone())))
        }
        Op::Reshape(_) => {
            let shape = e
                .shape()
                .iter()
                .map(|d| env.udim(d))
                .collect::<IResult<Vec<_>>>()?;
            Ok(args[0].gather(shape, |k| k))
        }
        Op::Window(sizes) => {
            let sizes = sizes
                .iter()
                .map(|d| env.udim(d))
                .collect::<IResult<Vec<_>>>()?;
            window(&args[0], &sizes)
        }
        Op::Concat { axis } => {
            let mut shape = args[0].shape.clone();
            shape[*axis] = args.iter().map(|a| a.shape[*axis]).sum();
            let mut out = Array::zeros(dtype, shape.clone());
            let mut offset = 0;
            for a in &args {
                let n = a.shape[*axis];
                let items: Vec<SliceItem> = (0..shape.len())
                    .map(|i| {
                        if i == *axis {
                            SliceItem::Range {
                                start: Dim::constant(offset as i64),
                                stop: Dim::constant((offset + n) as i64),
                                step: 1,
                            }
                        } else {
                            SliceItem::Full
                        }
                    })
                    .collect();
                let positions = slice_positions(&shape, &items, &env.sizes)?;
                store_at(&mut out, &positions, a);
                offset += n;
            }
            Ok(out)
        }
        Op::Triu(k) | Op::Tril(k) => {
            let a = &args[0];
            let cols = a.shape[1];
            let upper = matches!(e.op(), Op::Triu(_));
            let keep = |flat: usize| {
                let (i, j) = ((flat / cols.max(1)) as i64, (flat % cols.max(1)) as i64);
                if upper {
                    j - i >= *k
                } else {
                    j - i <= *k
                }
            };
            let data = match &a.data {
                Data::Float(v) => Data::Float(
                    v.iter()
                        .enumerate()
                        .map(|(f, x)| if keep(f) { *x } else { 0.0 })
                        .collect(),
                ),
                Data::Int(v) => Data::Int(
                    v.iter()
                        .enumerate()
                        .map(|(f, x)| if keep(f) { *x } else { 0 })
                        .collect(),
                ),
            };
            Ok(Array {
                dtype,
                shape: a.shape.clone(),
                data,
            })
        }
        Op::Diag => {
            let a = &args[0];
            let n = a.shape[0];
            if a.shape.len() == 2 {
                Ok(a.gather(vec![n], move |k| k * n + k))
            } else {
                let mut out = Array::zeros(dtype, vec![n, n]);
                let positions: Vec<usize> = (0..n).map(|k| k * n + k).collect();
                store_at(&mut out, &positions, a);
                Ok(out)
            }
        }
        Op::Cast(to) => Ok(cast(&args[0], *to)),
        Op::Cholesky | Op::TriSolve { .. } | Op::LuNoPivot => solve(e.op(), &args, dtype),
        Op::ScatterAdd => scatter_add(&args[0], &args[1], &args[2]),
        // The operands are evaluated (memoised) above; the definition
        // reuses them.
        Op::Syrk | Op::Syr2k | Op::MirrorLower => match crate::symmetry::blas::definition(e) {
            Some(Ok(d)) => eval_memo(&d, env, memo),
            Some(Err(err)) => Err(InterpError::Malformed(err.message)),
            None => Err(InterpError::Malformed(e.op().name().to_string())),
        },
    }
}

/// The flat source position of each result position of `flip(x, axes)`
/// over `shape`.
fn flipped_map(shape: Vec<usize>, axes: Vec<usize>) -> impl Fn(usize) -> usize {
    let st = strides(&shape);
    move |k| {
        let mut idx = vec![0; shape.len()];
        unravel(k, &shape, &mut idx);
        for &a in &axes {
            idx[a] = shape[a] - 1 - idx[a];
        }
        idx.iter().zip(&st).map(|(i, s)| i * s).sum()
    }
}

/// `window(a, sizes)`: element `[i, k]` (positions, then offsets within
/// the window) is `a[i + k]`; every window must fit.
fn window(a: &Array, sizes: &[usize]) -> IResult<Array> {
    let rank = a.shape.len();
    let mut shape = Vec::with_capacity(2 * rank);
    for (n, t) in a.shape.iter().zip(sizes) {
        if *t == 0 || t > n {
            return Err(InterpError::OutOfBounds {
                what: format!("window of size {t}"),
                len: *n,
            });
        }
        shape.push(n - t + 1);
    }
    shape.extend_from_slice(sizes);
    let st = strides(&a.shape);
    let map = {
        let shape = shape.clone();
        move |k: usize| {
            let mut idx = vec![0; shape.len()];
            unravel(k, &shape, &mut idx);
            (0..rank).map(|d| (idx[d] + idx[rank + d]) * st[d]).sum()
        }
    };
    Ok(a.gather(shape, map))
}

/// Float arithmetic rounded to the element type after every operation.
struct Rounded(DType);

impl solvers::Arith for Rounded {
    type V = f64;
    type E = std::convert::Infallible;
    fn sub(&mut self, a: &f64, b: &f64) -> Result<f64, Self::E> {
        Ok(self.0.round_float(a - b))
    }
    fn mul(&mut self, a: &f64, b: &f64) -> Result<f64, Self::E> {
        Ok(self.0.round_float(a * b))
    }
    fn div(&mut self, a: &f64, b: &f64) -> Result<f64, Self::E> {
        Ok(self.0.round_float(a / b))
    }
    fn sqrt(&mut self, a: &f64) -> Result<f64, Self::E> {
        Ok(self.0.round_float(a.sqrt()))
    }
}

/// The solver operations by their recurrences ([`solvers`]).
fn solve(op: &Op, args: &[Array], dtype: DType) -> IResult<Array> {
    let floats = |a: &Array| match &a.data {
        Data::Float(v) => Ok(v.clone()),
        Data::Int(_) => Err(InterpError::Unbound(format!(
            "float operands of {}",
            op.name()
        ))),
    };
    let a = floats(&args[0])?;
    let n = args[0].shape[0];
    let mut ar = Rounded(dtype);
    let (shape, values) = match op {
        Op::Cholesky => (
            args[0].shape.clone(),
            solvers::cholesky(&mut ar, n, &a, 0.0),
        ),
        Op::LuNoPivot => (args[0].shape.clone(), solvers::lu_nopivot(&mut ar, n, &a)),
        Op::TriSolve { lower, unit } => {
            let b = &args[1];
            let m = b.shape.get(1).copied().unwrap_or(1);
            let x = solvers::trisolve(&mut ar, n, m, &a, &floats(b)?, *lower, *unit);
            (b.shape.clone(), x)
        }
        _ => return Err(InterpError::Unbound(op.name().to_string())),
    };
    let values = values.unwrap_or_else(|never| match never {});
    Ok(Array::from_f64(dtype, shape, values))
}

/// `h` with `vals[k]` added to bin `idx[k]` for each `k` in row-major
/// order, each sum rounded (floats) or wrapped (integers) to `h`'s type
/// as the C's `h[x[i]] += v` does; an index outside the bins is an error.
fn scatter_add(h: &Array, idx: &Array, vals: &Array) -> IResult<Array> {
    let bins = h.len();
    let mut out = h.clone();
    for k in 0..idx.len() {
        let i = idx.get_i64(k);
        let b = usize::try_from(i)
            .ok()
            .filter(|b| *b < bins)
            .ok_or_else(|| InterpError::OutOfBounds {
                what: format!("scatter_add index {i}"),
                len: bins,
            })?;
        match (&mut out.data, &vals.data) {
            (Data::Float(o), Data::Float(v)) => o[b] = h.dtype.round_float(o[b] + v[k]),
            (Data::Int(o), Data::Int(v)) => {
                o[b] = h.dtype.wrap_int(i128::from(o[b]) + i128::from(v[k]))
            }
            _ => return Err(InterpError::Unbound("scatter_add values".into())),
        }
    }
    Ok(out)
}

fn cast(a: &Array, to: DType) -> Array {
    let shape = a.shape.clone();
    match &a.data {
        Data::Float(v) if to.is_float() => Array::from_f64(to, shape, v.clone()),
        Data::Float(v) => Array {
            dtype: to,
            shape,
            data: Data::Int(v.iter().map(|x| cast_float_to_int(*x, to)).collect()),
        },
        Data::Int(v) => Array::from_i64(to, shape, v.clone()),
    }
}

fn map_float(a: &Array, f: impl Fn(f64) -> f64) -> Array {
    let d = a.dtype;
    let data = match &a.data {
        Data::Float(v) => Data::Float(v.iter().map(|x| d.round_float(f(*x))).collect()),
        Data::Int(v) => Data::Int(v.clone()),
    };
    Array {
        dtype: d,
        shape: a.shape.clone(),
        data,
    }
}

fn map_int(a: &Array, f: impl Fn(i64) -> i128) -> Array {
    let d = a.dtype;
    let data = match &a.data {
        Data::Int(v) => Data::Int(v.iter().map(|x| d.wrap_int(f(*x))).collect()),
        Data::Float(v) => Data::Float(v.clone()),
    };
    Array {
        dtype: d,
        shape: a.shape.clone(),
        data,
    }
}

fn unary(op: UnaryOp, a: &Array) -> Array {
    if a.dtype.is_float() {
        map_float(a, |x| match op {
            UnaryOp::Neg => -x,
            UnaryOp::Abs => x.abs(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Not => x,
            // Rust's `round` is C's: halves away from zero.
            UnaryOp::Round => x.round(),
            UnaryOp::Floor => x.floor(),
            UnaryOp::Ceil => x.ceil(),
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
            UnaryOp::Cosh => x.cosh(),
            UnaryOp::Sinh => x.sinh(),
        })
    } else {
        map_int(a, |x| {
            let x = i128::from(x);
            match op {
                UnaryOp::Neg => -x,
                UnaryOp::Abs => x.abs(),
                UnaryOp::Not => i128::from(x == 0),
                _ => x,
            }
        })
    }
}

fn binary(op: BinaryOp, a: &Array, b: &Array, out: DType) -> IResult<Array> {
    let shape = broadcast_shape(&a.shape, &b.shape);
    let (ma, mb) = (
        broadcast_map(&a.shape, &shape),
        broadcast_map(&b.shape, &shape),
    );
    let n: usize = shape.iter().product();
    let operand = a.dtype;
    let data = if operand.is_float() {
        let (Data::Float(x), Data::Float(y)) = (&a.data, &b.data) else {
            return Err(InterpError::Unbound("float operands".into()));
        };
        if op.is_comparison() {
            Data::Int(
                (0..n)
                    .map(|k| {
                        let (p, q) = (x[ma(k)], y[mb(k)]);
                        i64::from(match op {
                            BinaryOp::Lt => p < q,
                            BinaryOp::Le => p <= q,
                            BinaryOp::Gt => p > q,
                            BinaryOp::Ge => p >= q,
                            BinaryOp::Eq => p == q,
                            _ => p != q,
                        })
                    })
                    .collect(),
            )
        } else {
            Data::Float(
                (0..n)
                    .map(|k| {
                        let (p, q) = (x[ma(k)], y[mb(k)]);
                        operand.round_float(match op {
                            BinaryOp::Add => p + q,
                            BinaryOp::Sub => p - q,
                            BinaryOp::Mul => p * q,
                            BinaryOp::Div => p / q,
                            BinaryOp::Pow => p.powf(q),
                            BinaryOp::Maximum => p.max(q),
                            BinaryOp::Minimum => p.min(q),
                            _ => f64::NAN,
                        })
                    })
                    .collect(),
            )
        }
    } else {
        let mut v = Vec::with_capacity(n);
        for k in 0..n {
            let (p, q) = (i128::from(a.get_i64(ma(k))), i128::from(b.get_i64(mb(k))));
            let r = match op {
                BinaryOp::Add => p + q,
                BinaryOp::Sub => p - q,
                BinaryOp::Mul => p.wrapping_mul(q),
                BinaryOp::TruncDiv | BinaryOp::Rem if q == 0 => {
                    return Err(InterpError::DivisionByZero)
                }
                // i128 division truncates toward zero, like C.
                BinaryOp::TruncDiv => p / q,
                BinaryOp::Rem => p % q,
                BinaryOp::Maximum => p.max(q),
                BinaryOp::Minimum => p.min(q),
                BinaryOp::Lt => i128::from(p < q),
                BinaryOp::Le => i128::from(p <= q),
                BinaryOp::Gt => i128::from(p > q),
                BinaryOp::Ge => i128::from(p >= q),
                BinaryOp::Eq => i128::from(p == q),
                BinaryOp::Ne => i128::from(p != q),
                BinaryOp::And => i128::from(p != 0 && q != 0),
                BinaryOp::Or => i128::from(p != 0 || q != 0),
                BinaryOp::Div | BinaryOp::Pow => 0,
            };
            v.push(out.wrap_int(r));
        }
        Data::Int(v)
    };
    Ok(Array {
        dtype: out,
        shape,
        data,
    })
}

/// `argmax`/`argmin` along `axis`: C's running search from the first
/// element, a later one taken only when strictly greater (less), so the
/// first extreme wins and a NaN after the first element is never taken.
fn arg_extreme(
    (largest, last): (bool, bool),
    axis: usize,
    dtype: DType,
    a: &Array,
) -> IResult<Array> {
    let len = a.shape[axis];
    if len == 0 {
        return Err(InterpError::EmptyReduction(if largest {
            "argmax"
        } else {
            "argmin"
        }));
    }
    let outer: usize = a.shape[..axis].iter().product();
    let inner: usize = a.shape[axis + 1..].iter().product();
    let at = |k: usize| a.get_f64(k);
    let beats = |x: f64, m: f64| match (largest, last) {
        (true, false) => x > m,
        (true, true) => x >= m,
        (false, false) => x < m,
        (false, true) => x <= m,
    };
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let base = o * len * inner + i;
            let (mut best, mut m) = (0usize, at(base));
            for k in 1..len {
                let x = at(base + k * inner);
                if beats(x, m) {
                    (best, m) = (k, x);
                }
            }
            out.push(best as i64);
        }
    }
    let mut shape = a.shape.clone();
    shape.remove(axis);
    Ok(Array {
        dtype,
        shape,
        data: Data::Int(out),
    })
}

/// `scan(a, kind, axis)`: each element combined with its predecessor
/// along `axis` (already combined: positions are visited in row-major
/// order), rounded or wrapped at every step as a C running value is.
fn scan(kind: ReduceKind, axis: usize, a: &Array) -> Array {
    let predecessor = crate::ops::scan_predecessor(&a.shape, axis);
    let pairs = (0..a.len()).filter_map(|f| Some((f, predecessor(f)?)));
    let d = a.dtype;
    let mut out = a.clone();
    match &mut out.data {
        Data::Float(v) => {
            for (flat, prev) in pairs {
                let (p, x) = (v[prev], v[flat]);
                v[flat] = d.round_float(match kind {
                    ReduceKind::Sum => p + x,
                    ReduceKind::Prod => p * x,
                    ReduceKind::Max => p.max(x),
                    ReduceKind::Min => p.min(x),
                });
            }
        }
        Data::Int(v) => {
            for (flat, prev) in pairs {
                let (p, x) = (i128::from(v[prev]), i128::from(v[flat]));
                v[flat] = match kind {
                    ReduceKind::Sum => d.wrap_int(p + x),
                    ReduceKind::Prod => d.wrap_int(p.wrapping_mul(x)),
                    ReduceKind::Max => d.wrap_int(p.max(x)),
                    ReduceKind::Min => d.wrap_int(p.min(x)),
                };
            }
        }
    }
    out
}

fn reduce(kind: ReduceKind, axes: &[usize], a: &Array) -> IResult<Array> {
    let out_shape: Vec<usize> = (0..a.shape.len())
        .filter(|i| !axes.contains(i))
        .map(|i| a.shape[i])
        .collect();
    let out_strides = strides(&out_shape);
    let n_out: usize = out_shape.iter().product();
    // A max/min over no elements is the type's extreme (see
    // `Lit::extreme`), as the emitted programs compute it.
    let d = a.dtype;
    // Input index -> output position: reduced axes contribute nothing.
    let mut j = 0;
    let in_to_out: Vec<usize> = (0..a.shape.len())
        .map(|i| {
            if axes.contains(&i) {
                0
            } else {
                j += 1;
                out_strides[j - 1]
            }
        })
        .collect();
    let out_pos = strided_map(a.shape.clone(), in_to_out, false);
    let data = match &a.data {
        Data::Float(v) => {
            let init = match kind {
                ReduceKind::Sum => 0.0,
                ReduceKind::Prod => 1.0,
                ReduceKind::Max => f64::NEG_INFINITY,
                ReduceKind::Min => f64::INFINITY,
            };
            let mut acc = vec![init; n_out];
            for (flat, x) in v.iter().enumerate() {
                let s = &mut acc[out_pos(flat)];
                *s = d.round_float(match kind {
                    ReduceKind::Sum => *s + x,
                    ReduceKind::Prod => *s * x,
                    ReduceKind::Max => s.max(*x),
                    ReduceKind::Min => s.min(*x),
                });
            }
            Data::Float(acc)
        }
        Data::Int(v) => {
            let extreme = |largest| match Lit::extreme(d, largest) {
                Lit::Int(v, _) => v,
                other => other.as_f64() as i64,
            };
            let init = match kind {
                ReduceKind::Sum => 0,
                ReduceKind::Prod => 1,
                ReduceKind::Max => extreme(false),
                ReduceKind::Min => extreme(true),
            };
            let mut acc = vec![init; n_out];
            for (flat, x) in v.iter().enumerate() {
                let s = &mut acc[out_pos(flat)];
                let (p, q) = (i128::from(*s), i128::from(*x));
                *s = match kind {
                    ReduceKind::Sum => d.wrap_int(p + q),
                    ReduceKind::Prod => d.wrap_int(p.wrapping_mul(q)),
                    ReduceKind::Max => (*s).max(*x),
                    ReduceKind::Min => (*s).min(*x),
                };
            }
            Data::Int(acc)
        }
    };
    Ok(Array {
        dtype: d,
        shape: out_shape,
        data,
    })
}

/// Einsum of one or two operands: products over all label assignments,
/// summed over labels absent from the output.
fn contract(inputs: &[Vec<char>], output: &[char], args: &[Array], dtype: DType) -> IResult<Array> {
    let shapes: Vec<&[usize]> = args.iter().map(|a| a.shape.as_slice()).collect();
    let layout = EinsumLayout::new(inputs, output, &shapes).map_err(InterpError::Einsum)?;
    let (out_shape, sum_shape) = (&layout.out_shape, &layout.sum_shape);
    let n_out: usize = out_shape.iter().product();
    let n_sum: usize = sum_shape.iter().product();
    let mut out = Array::zeros(dtype, out_shape.clone());
    let mut oi = vec![0; out_shape.len()];
    let mut si = vec![0; sum_shape.len()];
    for k in 0..n_out {
        unravel(k, out_shape, &mut oi);
        let mut facc = 0.0f64;
        let mut iacc = 0i64;
        for s in 0..n_sum {
            unravel(s, sum_shape, &mut si);
            let mut fprod = 1.0f64;
            let mut iprod = 1i128;
            for (j, a) in args.iter().enumerate() {
                let flat = layout.offset(j, &oi, &si);
                if dtype.is_float() {
                    fprod = dtype.round_float(fprod * a.get_f64(flat));
                } else {
                    iprod =
                        i128::from(dtype.wrap_int(iprod.wrapping_mul(i128::from(a.get_i64(flat)))));
                }
            }
            if dtype.is_float() {
                facc = dtype.round_float(facc + fprod);
            } else {
                iacc = dtype.wrap_int(i128::from(iacc) + iprod);
            }
        }
        match &mut out.data {
            Data::Float(v) => v[k] = facc,
            Data::Int(v) => v[k] = iacc,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse_program;

    fn run_text(text: &str, sizes: &[(&str, i64)], args: Vec<(&str, Array)>) -> Outcome {
        let p = parse_program("t.tensir", text).unwrap_or_else(|d| panic!("{d}"));
        let sizes = sizes.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        let args = args.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        run(&p, &sizes, &args).unwrap()
    }

    fn ints(a: &Array) -> Vec<i64> {
        (0..a.len()).map(|i| a.get_i64(i)).collect()
    }

    #[test]
    fn integer_division_truncates_like_c() {
        let out = run_text(
            "func f(n: size, a: i32[n], b: i32[n], q: out i32[n], r: out i32[n]) {\n  q = trunc_div(a, b);\n  r = rem(a, b);\n}\n",
            &[("n", 4)],
            vec![
                ("a", Array::from_i64(DType::I32, vec![4], vec![-7, 7, -7, 7])),
                ("b", Array::from_i64(DType::I32, vec![4], vec![2, -2, -2, 2])),
            ],
        );
        assert_eq!(ints(&out.arrays["q"]), vec![-3, -3, 3, 3]);
        assert_eq!(ints(&out.arrays["r"]), vec![-1, 1, -1, 1]);
    }

    #[test]
    fn max_and_min_over_no_elements_are_the_identity() {
        // `max(x[1:n])` at n = 1, as the C's `if (x[i] > m) m = x[i]` over
        // an empty range leaves `m`: -inf for floats, the least i16.
        let out = run_text(
            "func f(n: size, x: f32[4], y: i16[4], m: out f32[], k: out i16[]) {\n  m = max(x[1:n], axes=[0]);\n  k = min(y[1:n], axes=[0]);\n}\n",
            &[("n", 1)],
            vec![
                ("x", Array::from_f64(DType::F32, vec![4], vec![1.0, 2.0, 3.0, 4.0])),
                ("y", Array::from_i64(DType::I16, vec![4], vec![1, 2, 3, 4])),
            ],
        );
        assert_eq!(out.arrays["m"].get_f64(0), f64::NEG_INFINITY);
        assert_eq!(ints(&out.arrays["k"]), vec![i64::from(i16::MAX)]);
    }

    #[test]
    fn uint8_wraps_and_casts_keep_low_bits() {
        let out = run_text(
            "func f(n: size, a: u8[n], s: out u8[n], c: out u8[n]) {\n  s = add(a, 10u8);\n  c = cast(mul(cast(a, i32), 2i32), u8);\n}\n",
            &[("n", 2)],
            vec![("a", Array::from_i64(DType::U8, vec![2], vec![250, 3]))],
        );
        assert_eq!(ints(&out.arrays["s"]), vec![4, 13]);
        assert_eq!(ints(&out.arrays["c"]), vec![244, 6]);
    }

    #[test]
    fn float_to_int_truncates_toward_zero() {
        let out = run_text(
            "func f(n: size, x: f64[n], y: out i32[n]) {\n  y = cast(x, i32);\n}\n",
            &[("n", 3)],
            vec![(
                "x",
                Array::from_f64(DType::F64, vec![3], vec![-2.7, 2.7, -0.5]),
            )],
        );
        assert_eq!(ints(&out.arrays["y"]), vec![-2, 2, 0]);
    }

    #[test]
    fn f32_rounds_after_every_operation() {
        let out = run_text(
            "func f(x: f32) -> f32 {\n  return add(x, 0.2f32);\n}\n",
            &[],
            vec![("x", Array::from_f64(DType::F32, vec![], vec![0.1]))],
        );
        let got = out.returned.unwrap().get_f64(0);
        assert_eq!(got, (0.1f32 + 0.2f32) as f64);
        assert_ne!(got, 0.1f64 + 0.2f64);
    }

    #[test]
    fn partial_and_strided_write_back() {
        let out = run_text(
            "func f(n: size, y: inout i64[n]) {\n  y[1:n:2] = full([n / 2], 9);\n}\n",
            &[("n", 5)],
            vec![(
                "y",
                Array::from_i64(DType::I64, vec![5], vec![0, 1, 2, 3, 4]),
            )],
        );
        assert_eq!(ints(&out.arrays["y"]), vec![0, 9, 2, 9, 4]);
    }

    #[test]
    fn scans_run_along_their_axis_rounding_and_wrapping_every_step() {
        let text = "func f(r: size, c: size, a: i8[r, c], x: f32[c], rows: out i8[r, c], cols: out i8[r, c], m: out i8[r, c], y: out f32[c]) {\n  rows = cumsum(a, axis=1);\n  cols = cumsum(a, axis=0);\n  m = cummax(a, axis=1);\n  y = cumsum(x, axis=0);\n}\n";
        let a = Array::from_i64(DType::I8, vec![2, 3], vec![100, 27, -5, 1, 2, 3]);
        let x = Array::from_f64(DType::F32, vec![3], vec![1e8, 1.0, -1e8]);
        let out = run_text(text, &[("r", 2), ("c", 3)], vec![("a", a), ("x", x)]);
        // 100 + 27 = 127, then 122; the second row on its own.
        assert_eq!(ints(&out.arrays["rows"]), vec![100, 127, 122, 1, 3, 6]);
        // 100 + 1 = 101, 27 + 2, -5 + 3.
        assert_eq!(ints(&out.arrays["cols"]), vec![100, 27, -5, 101, 29, -2]);
        assert_eq!(ints(&out.arrays["m"]), vec![100, 100, 100, 1, 2, 3]);
        // C's order in f32: 1e8 + 1 rounds to 1e8, then 0.
        let y = &out.arrays["y"];
        assert_eq!((y.get_f64(0), y.get_f64(1), y.get_f64(2)), (1e8, 1e8, 0.0));
        // An i8 running sum wraps: 100 + 27 + 100 = 227 - 256.
        let wrap = run_text(
            "func g(n: size, a: i8[n], s: out i8[n]) {\n  s = cumsum(a, axis=0);\n}\n",
            &[("n", 3)],
            vec![("a", Array::from_i64(DType::I8, vec![3], vec![100, 27, 100]))],
        );
        assert_eq!(ints(&wrap.arrays["s"]), vec![100, 127, -29]);
    }

    #[test]
    fn scatter_add_accumulates_repeated_bins_in_order_and_refuses_other_indices() {
        let text = "func f(n: size, x: i32[n], w: f32[n], h: inout f32[3]) {\n  h = scatter_add(h, x, w);\n}\n";
        let x = Array::from_i64(DType::I32, vec![4], vec![2, 0, 2, 2]);
        let w = Array::from_f64(DType::F32, vec![4], vec![1e8, 0.5, 1.0, -1e8]);
        let h = Array::from_f64(DType::F32, vec![3], vec![0.0, 1.0, 0.0]);
        let out = run_text(
            text,
            &[("n", 4)],
            vec![("x", x), ("w", w.clone()), ("h", h.clone())],
        );
        // C's order: ((0 + 1e8) + 1) - 1e8 in f32 is 0, not 1.
        let want = ((1e8f32 + 1.0f32) - 1e8f32) as f64;
        assert_eq!(out.arrays["h"].get_f64(2), want);
        assert_eq!(out.arrays["h"].get_f64(0), 0.5);
        assert_eq!(out.arrays["h"].get_f64(1), 1.0);
        let p = parse_program("t.tensir", text).unwrap();
        let bad = Array::from_i64(DType::I32, vec![4], vec![0, 3, 0, 0]);
        let sizes = HashMap::from([("n".to_string(), 4)]);
        let args = HashMap::from([
            ("x".to_string(), bad),
            ("w".to_string(), w),
            ("h".to_string(), h),
        ]);
        assert!(matches!(
            run(&p, &sizes, &args),
            Err(InterpError::OutOfBounds { .. })
        ));
    }

    #[test]
    fn matmul_and_einsum_agree() {
        let a = Array::from_i64(DType::I64, vec![2, 2], vec![1, 2, 3, 4]);
        let b = Array::from_i64(DType::I64, vec![2, 2], vec![5, 6, 7, 8]);
        let out = run_text(
            "func f(a: i64[2, 2], b: i64[2, 2], c: out i64[2, 2], d: out i64[2, 2]) {\n  c = matmul(a, b);\n  d = einsum(\"ij,jk->ik\", a, b);\n}\n",
            &[],
            vec![("a", a), ("b", b)],
        );
        assert_eq!(ints(&out.arrays["c"]), vec![19, 22, 43, 50]);
        assert_eq!(out.arrays["c"], out.arrays["d"]);
    }

    #[test]
    fn division_by_zero_and_bad_slices_are_errors() {
        let p = parse_program(
            "t.tensir",
            "func f(n: size, a: i32[n], q: out i32[n]) {\n  q = trunc_div(a, 0i32);\n}\n",
        )
        .unwrap();
        let sizes = [("n".to_string(), 1)].into_iter().collect();
        let args = [(
            "a".to_string(),
            Array::from_i64(DType::I32, vec![1], vec![1]),
        )]
        .into_iter()
        .collect();
        assert_eq!(run(&p, &sizes, &args), Err(InterpError::DivisionByZero));
        let p = parse_program(
            "t.tensir",
            "func f(n: size, a: i32[n], q: out i32[n - 1]) {\n  q = a[2:n + 1];\n}\n",
        )
        .unwrap();
        let sizes = [("n".to_string(), 3)].into_iter().collect();
        let args = [(
            "a".to_string(),
            Array::from_i64(DType::I32, vec![3], vec![1, 2, 3]),
        )]
        .into_iter()
        .collect();
        assert!(matches!(
            run(&p, &sizes, &args),
            Err(InterpError::OutOfBounds { .. })
        ));
    }
}
