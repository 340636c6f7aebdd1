//! Interprets a TensIR program over any [`Domain`], element by element at
//! concrete sizes: tensors are row-major vectors of values; contractions
//! and reductions become sums of products; slicing, broadcasting and
//! transposition are index arithmetic; region stores overwrite positions.
//!
//! The semantics are TensIR's own (`targets/TENSIR.md`): integer arithmetic
//! wraps at the element type's width, integer division by zero is an error
//! of the program (recorded with [`Domain::require`]), `where` evaluates
//! both branches.

use std::collections::{BTreeMap, HashMap};

use tenslift_targets::interp::InterpError;
use tenslift_targets::{solvers, symmetry};
use tenslift_targets::{
    BinaryOp, DType, Dim, EinsumLayout, Expr, Lit, Op, Program, ReduceKind, SliceItem, Stmt,
    UnaryOp,
};

use crate::domain::{Cmp, Domain, IntTy, Opaque};
use crate::error::{Abort, VerifyError};

/// A concrete-shape tensor of domain values, row-major.
#[derive(Clone, Debug)]
pub(crate) struct Tensor<V> {
    pub shape: Vec<usize>,
    pub data: Vec<V>,
}

impl<V: Clone> Tensor<V> {
    pub fn scalar(v: V) -> Tensor<V> {
        Tensor {
            shape: Vec::new(),
            data: vec![v],
        }
    }
}

/// The final values of written arrays and the returned scalar.
pub(crate) struct ProgramOutcome<V> {
    pub arrays: HashMap<String, Tensor<V>>,
    pub returned: Option<V>,
}

/// Elements a single intermediate tensor may have.
const MAX_ELEMENTS: usize = 1_000_000;

fn program_error(msg: String) -> Abort {
    Abort::Error(VerifyError::Program(msg))
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// A tensor of `shape` whose element at each index is `a`'s element at the
/// index `source` turns it into (in place).
fn gathered<T: Clone>(
    a: &Tensor<T>,
    shape: Vec<usize>,
    source: impl Fn(&mut Vec<usize>),
) -> Tensor<T> {
    let st = strides(&a.shape);
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|k| {
            let mut idx = unravel(k, &shape);
            source(&mut idx);
            let flat: usize = idx.iter().zip(&st).map(|(i, s)| i * s).sum();
            a.data[flat].clone()
        })
        .collect();
    Tensor { shape, data }
}

fn unravel(mut k: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for i in (0..shape.len()).rev() {
        if shape[i] > 0 {
            idx[i] = k % shape[i];
            k /= shape[i];
        }
    }
    idx
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

/// The operand's flat index for each flat index of `out` (NumPy
/// broadcasting: right-aligned, extent-1 axes stretch).
fn broadcast_index(in_shape: &[usize], out_shape: &[usize], k: usize) -> usize {
    let idx = unravel(k, out_shape);
    let offset = out_shape.len() - in_shape.len();
    let st = strides(in_shape);
    in_shape
        .iter()
        .enumerate()
        .map(|(i, &n)| if n == 1 { 0 } else { idx[i + offset] * st[i] })
        .sum()
}

struct Interp<'a, D: Domain> {
    dom: &'a mut D,
    /// Size parameters and the values of the loop variables in scope.
    sizes: BTreeMap<String, i64>,
    values: HashMap<String, Tensor<D::V>>,
    memo: HashMap<Expr, Tensor<D::V>>,
    /// Where obligations come from, for messages.
    stmt: usize,
}

/// The domain's float arithmetic for [`solvers`]' recurrences.
struct SolverArith<'i, 'd, D: Domain> {
    interp: &'i mut Interp<'d, D>,
    dtype: DType,
}

impl<D: Domain> solvers::Arith for SolverArith<'_, '_, D> {
    type V = D::V;
    type E = Abort;
    fn sub(&mut self, a: &D::V, b: &D::V) -> Result<D::V, Abort> {
        self.interp.binary(BinaryOp::Sub, a, b, self.dtype)
    }
    fn mul(&mut self, a: &D::V, b: &D::V) -> Result<D::V, Abort> {
        self.interp.binary(BinaryOp::Mul, a, b, self.dtype)
    }
    fn div(&mut self, a: &D::V, b: &D::V) -> Result<D::V, Abort> {
        self.interp.binary(BinaryOp::Div, a, b, self.dtype)
    }
    fn sqrt(&mut self, a: &D::V) -> Result<D::V, Abort> {
        self.interp.unary(UnaryOp::Sqrt, a, self.dtype)
    }
}

/// Runs `program` with `values` bound to every parameter (size parameters
/// as rank-0 integer tensors).
pub(crate) fn run<D: Domain>(
    dom: &mut D,
    program: &Program,
    sizes: &BTreeMap<String, i64>,
    values: HashMap<String, Tensor<D::V>>,
) -> Result<ProgramOutcome<D::V>, Abort> {
    let mut interp = Interp {
        dom,
        sizes: sizes.clone(),
        values,
        memo: HashMap::new(),
        stmt: 0,
    };
    let mut returned = None;
    let mut budget = MAX_EXECUTED_STATEMENTS;
    interp.block(&program.body, &mut returned, &mut budget)?;
    let arrays = program
        .params
        .iter()
        .filter(|p| p.access().is_some_and(|a| a.is_written()))
        .filter_map(|p| {
            interp
                .values
                .remove(&*p.name)
                .map(|t| (p.name.to_string(), t))
        })
        .collect();
    Ok(ProgramOutcome { arrays, returned })
}

/// Most statements one run executes (loops unrolled at the concrete
/// sizes); beyond it the encoding would be too large to solve.
const MAX_EXECUTED_STATEMENTS: usize = 100_000;

impl<D: Domain> Interp<'_, D> {
    /// Runs statements in order; a loop runs its body once per value of its
    /// variable, which is a size symbol and an integer value inside it.
    fn block(
        &mut self,
        stmts: &[Stmt],
        returned: &mut Option<D::V>,
        budget: &mut usize,
    ) -> Result<(), Abort> {
        for stmt in stmts {
            self.stmt += 1;
            *budget = budget.checked_sub(1).ok_or_else(|| {
                program_error(format!(
                    "the program's loops run more than {MAX_EXECUTED_STATEMENTS} statements at these sizes"
                ))
            })?;
            // Stores change what a variable means, so shared results are only
            // reused within one statement.
            self.memo.clear();
            match stmt {
                Stmt::Let { name, value } => {
                    let v = self.eval(value)?;
                    self.values.insert(name.to_string(), v);
                }
                Stmt::Var { name, ty } => {
                    let shape = self.shape(&ty.shape)?;
                    let zero = self.zero(ty.dtype)?;
                    let n = shape.iter().product();
                    let data = vec![zero; n];
                    self.values.insert(name.to_string(), Tensor { shape, data });
                }
                Stmt::Store {
                    target,
                    region,
                    value,
                } => {
                    let v = self.eval(value)?;
                    let dest = self
                        .values
                        .get(&**target)
                        .ok_or_else(|| program_error(format!("`{target}` is not bound")))?;
                    let positions = match region {
                        None => (0..dest.data.len()).collect(),
                        Some(items) => self.slice_positions(&dest.shape.clone(), items)?,
                    };
                    if positions.len() != v.data.len() {
                        return Err(program_error(format!(
                            "statement {}: storing {} values into {} positions of `{target}`",
                            self.stmt,
                            v.data.len(),
                            positions.len()
                        )));
                    }
                    if let Some(dest) = self.values.get_mut(&**target) {
                        for (p, x) in positions.into_iter().zip(v.data) {
                            dest.data[p] = x;
                        }
                    }
                }
                Stmt::Return(value) => {
                    let v = self.eval(value)?;
                    *returned = v.data.into_iter().next();
                }
                Stmt::Loop {
                    var,
                    start,
                    stop,
                    body,
                } => {
                    let (first, end) = (self.signed_dim(start)?, self.signed_dim(stop)?);
                    for t in first..end {
                        self.sizes.insert(var.to_string(), t);
                        let value = self.dom.int(i128::from(t));
                        self.values.insert(var.to_string(), Tensor::scalar(value));
                        self.block(body, returned, budget)?;
                    }
                    self.sizes.remove(&**var);
                    self.values.remove(&**var);
                }
            }
        }
        Ok(())
    }
}

impl<D: Domain> Interp<'_, D> {
    /// A dim's value, which may be negative (loop bounds).
    fn signed_dim(&self, d: &Dim) -> Result<i64, Abort> {
        d.eval(&|s| self.sizes.get(s).copied())
            .map_err(|e| match e {
                tenslift_targets::DimError::Unbound(s) => Abort::Error(VerifyError::MissingSize(s)),
                other => program_error(other.to_string()),
            })
    }

    fn dim(&self, d: &Dim) -> Result<usize, Abort> {
        let v = self.signed_dim(d)?;
        usize::try_from(v).map_err(|_| program_error(format!("the size `{d}` is {v}")))
    }

    fn shape(&self, dims: &[Dim]) -> Result<Vec<usize>, Abort> {
        let shape = dims
            .iter()
            .map(|d| self.dim(d))
            .collect::<Result<Vec<_>, _>>()?;
        let n = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .filter(|n| *n <= MAX_ELEMENTS);
        if n.is_none() {
            return Err(Abort::Error(VerifyError::TooLarge(format!(
                "a tensor of shape {shape:?}"
            ))));
        }
        Ok(shape)
    }

    fn lit(&mut self, l: Lit) -> Result<D::V, Abort> {
        match l {
            Lit::Bool(b) => Ok(self.dom.int(i128::from(b))),
            Lit::Int(v, _) => Ok(self.dom.int(i128::from(v))),
            Lit::Float(_, d) => self.dom.literal(l.as_f64(), d == DType::F32),
        }
    }

    fn zero(&mut self, dtype: DType) -> Result<D::V, Abort> {
        if dtype.is_float() {
            self.dom.real(0.0)
        } else {
            Ok(self.dom.int(0))
        }
    }

    /// Rounds or wraps a freshly computed element to its type.
    fn finish(&mut self, v: D::V, dtype: DType) -> D::V {
        match dtype {
            DType::F32 => self.dom.round_single(&v),
            DType::F64 => v,
            DType::Bool => self.dom.truth(&v),
            _ => match IntTy::of_tensir(dtype) {
                Some(it) => self.dom.wrap(&v, it),
                None => v,
            },
        }
    }

    fn eval(&mut self, e: &Expr) -> Result<Tensor<D::V>, Abort> {
        if let Some(t) = self.memo.get(e) {
            return Ok(t.clone());
        }
        let t = self.eval_node(e)?;
        if !e.args().is_empty() {
            self.memo.insert(e.clone(), t.clone());
        }
        Ok(t)
    }

    fn eval_node(&mut self, e: &Expr) -> Result<Tensor<D::V>, Abort> {
        let args = e
            .args()
            .iter()
            .map(|a| self.eval(a))
            .collect::<Result<Vec<_>, _>>()?;
        let dtype = e.dtype();
        match e.op() {
            Op::Var(name) => self
                .values
                .get(&**name)
                .cloned()
                .ok_or_else(|| program_error(format!("`{name}` is not bound"))),
            Op::Lit(l) => Ok(Tensor::scalar(self.lit(*l)?)),
            Op::Full { shape, value } => {
                let shape = self.shape(shape)?;
                let v = self.lit(*value)?;
                let n = shape.iter().product();
                Ok(Tensor {
                    shape,
                    data: vec![v; n],
                })
            }
            Op::Unary(u) => {
                let a = &args[0];
                let operand = e.args()[0].dtype();
                let data = a
                    .data
                    .iter()
                    .map(|x| self.unary(*u, x, operand))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Tensor {
                    shape: a.shape.clone(),
                    data,
                })
            }
            Op::Binary(b) => {
                let shape = broadcast_shape(&args[0].shape, &args[1].shape);
                let n: usize = shape.iter().product();
                let mut data = Vec::with_capacity(n);
                for k in 0..n {
                    let x = &args[0].data[broadcast_index(&args[0].shape, &shape, k)];
                    let y = &args[1].data[broadcast_index(&args[1].shape, &shape, k)];
                    data.push(self.binary(*b, x, y, dtype)?);
                }
                Ok(Tensor { shape, data })
            }
            Op::Where => {
                let shape = broadcast_shape(
                    &args[0].shape,
                    &broadcast_shape(&args[1].shape, &args[2].shape),
                );
                let n: usize = shape.iter().product();
                let mut data = Vec::with_capacity(n);
                for k in 0..n {
                    let c = &args[0].data[broadcast_index(&args[0].shape, &shape, k)];
                    let t = &args[1].data[broadcast_index(&args[1].shape, &shape, k)];
                    let f = &args[2].data[broadcast_index(&args[2].shape, &shape, k)];
                    data.push(self.dom.select(c, t, f));
                }
                Ok(Tensor { shape, data })
            }
            Op::Reduce { kind, axes } => self.reduce(*kind, axes, &args[0], dtype),
            Op::Scan { kind, axis } => self.scan(*kind, *axis, &args[0], dtype),
            Op::ArgExtreme {
                largest,
                axis,
                last,
                ..
            } => self.arg_extreme((*largest, *last), *axis, &args[0]),
            Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::Einsum(_) => {
                let ranks: Vec<usize> = args.iter().map(|a| a.shape.len()).collect();
                let spec = e.op().as_contraction(&ranks).ok_or_else(|| {
                    Abort::Unsupported(format!("{} of ranks {ranks:?}", e.op().name()))
                })?;
                self.contract(&spec.inputs, &spec.output, &args, dtype)
            }
            Op::Transpose(perm) => {
                let a = &args[0];
                let shape: Vec<usize> = perm.iter().map(|&p| a.shape[p]).collect();
                let st = strides(&a.shape);
                let n: usize = shape.iter().product();
                let data = (0..n)
                    .map(|k| {
                        let idx = unravel(k, &shape);
                        let flat: usize = perm.iter().zip(&idx).map(|(&p, &i)| i * st[p]).sum();
                        a.data[flat].clone()
                    })
                    .collect();
                Ok(Tensor { shape, data })
            }
            Op::Broadcast(dims) => {
                let shape = self.shape(dims)?;
                let a = &args[0];
                let n: usize = shape.iter().product();
                let data = (0..n)
                    .map(|k| a.data[broadcast_index(&a.shape, &shape, k)].clone())
                    .collect();
                Ok(Tensor { shape, data })
            }
            Op::Slice(items) => {
                let a = &args[0];
                let positions = self.slice_positions(&a.shape, items)?;
                let shape = self.shape(e.shape())?;
                let data = positions.iter().map(|&p| a.data[p].clone()).collect();
                Ok(Tensor { shape, data })
            }
            Op::Flip(axes) => Ok(gathered(&args[0], args[0].shape.clone(), |idx| {
                for &a in axes {
                    idx[a] = args[0].shape[a] - 1 - idx[a];
                }
            })),
            Op::Reshape(dims) => Ok(Tensor {
                shape: self.shape(dims)?,
                data: args[0].data.clone(),
            }),
            Op::Window(_) => {
                let shape = self.shape(e.shape())?;
                let rank = args[0].shape.len();
                if (0..rank).any(|d| {
                    shape[rank + d] == 0 || shape[d] + shape[rank + d] != args[0].shape[d] + 1
                }) {
                    return Err(program_error(format!(
                        "window {:?} does not fit a value of shape {:?}",
                        &shape[rank..],
                        args[0].shape
                    )));
                }
                Ok(gathered(&args[0], shape, |idx| {
                    for d in 0..rank {
                        idx[d] += idx[rank + d];
                    }
                    idx.truncate(rank);
                }))
            }
            Op::Concat { axis } => {
                let mut shape = args[0].shape.clone();
                shape[*axis] = args.iter().map(|a| a.shape[*axis]).sum();
                let n: usize = shape.iter().product();
                let mut data = Vec::with_capacity(n);
                for k in 0..n {
                    let mut idx = unravel(k, &shape);
                    let mut part = 0;
                    while idx[*axis] >= args[part].shape[*axis] {
                        idx[*axis] -= args[part].shape[*axis];
                        part += 1;
                    }
                    let st = strides(&args[part].shape);
                    let flat: usize = idx.iter().zip(&st).map(|(i, s)| i * s).sum();
                    data.push(args[part].data[flat].clone());
                }
                Ok(Tensor { shape, data })
            }
            Op::Triu(k) | Op::Tril(k) => {
                let a = &args[0];
                let upper = matches!(e.op(), Op::Triu(_));
                let cols = a.shape.get(1).copied().unwrap_or(1).max(1);
                let zero = self.zero(dtype)?;
                let data = a
                    .data
                    .iter()
                    .enumerate()
                    .map(|(flat, x)| {
                        let (i, j) = ((flat / cols) as i64, (flat % cols) as i64);
                        let keep = if upper { j - i >= *k } else { j - i <= *k };
                        if keep {
                            x.clone()
                        } else {
                            zero.clone()
                        }
                    })
                    .collect();
                Ok(Tensor {
                    shape: a.shape.clone(),
                    data,
                })
            }
            Op::Diag => {
                let a = &args[0];
                let n = a.shape.first().copied().unwrap_or(0);
                if a.shape.len() == 2 {
                    let data = (0..n).map(|k| a.data[k * n + k].clone()).collect();
                    Ok(Tensor {
                        shape: vec![n],
                        data,
                    })
                } else {
                    let zero = self.zero(dtype)?;
                    let mut data = vec![zero; n * n];
                    for k in 0..n {
                        data[k * n + k] = a.data[k].clone();
                    }
                    Ok(Tensor {
                        shape: vec![n, n],
                        data,
                    })
                }
            }
            Op::Cast(to) => {
                let from = e.args()[0].dtype();
                let a = &args[0];
                let data = a
                    .data
                    .iter()
                    .map(|x| self.cast(x, from, *to))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Tensor {
                    shape: a.shape.clone(),
                    data,
                })
            }
            Op::Cholesky | Op::TriSolve { .. } | Op::LuNoPivot => self.solve(e.op(), &args, dtype),
            Op::ScatterAdd => self.scatter_add(&args[0], &args[1], &args[2], dtype),
            // `syrk`, `syr2k`, `mirror_lower` mean their definition over
            // the same (memoised) operands.
            Op::Syrk | Op::Syr2k | Op::MirrorLower => match symmetry::blas::definition(e) {
                Some(Ok(d)) => self.eval(&d),
                Some(Err(err)) => Err(program_error(err.message)),
                None => Err(program_error(format!(
                    "{} has no definition",
                    e.op().name()
                ))),
            },
        }
    }

    /// A solver operation by its recurrence, over this domain's arithmetic
    /// (the same expression per element as a C loop nest computing it).
    fn solve(
        &mut self,
        op: &Op,
        args: &[Tensor<D::V>],
        dtype: DType,
    ) -> Result<Tensor<D::V>, Abort> {
        let n = args[0].shape.first().copied().unwrap_or(0);
        let zero = self.zero(dtype)?;
        let a = &args[0].data;
        let mut ar = SolverArith {
            interp: self,
            dtype,
        };
        let (shape, data) = match op {
            Op::Cholesky => (
                args[0].shape.clone(),
                solvers::cholesky(&mut ar, n, a, zero)?,
            ),
            Op::LuNoPivot => (args[0].shape.clone(), solvers::lu_nopivot(&mut ar, n, a)?),
            Op::TriSolve { lower, unit } => {
                let b = &args[1];
                let m = b.shape.get(1).copied().unwrap_or(1);
                let x = solvers::trisolve(&mut ar, n, m, a, &b.data, *lower, *unit)?;
                (b.shape.clone(), x)
            }
            _ => return Err(program_error(format!("{} is no solver", op.name()))),
        };
        Ok(Tensor { shape, data })
    }

    /// `scatter_add(h, idx, vals)` over symbolic indices: for each index
    /// in row-major order, every bin `b` becomes `idx == b ? bin + val :
    /// bin` (an index outside the bins changes none, as in the loop IR's
    /// form of the C; the in-range precondition is the caller's).
    fn scatter_add(
        &mut self,
        h: &Tensor<D::V>,
        idx: &Tensor<D::V>,
        vals: &Tensor<D::V>,
        dtype: DType,
    ) -> Result<Tensor<D::V>, Abort> {
        let mut data = h.data.clone();
        for (k, v) in idx.data.iter().zip(&vals.data) {
            for (b, bin) in data.iter_mut().enumerate() {
                let at = self.dom.int(b as i128);
                let hit = self.dom.cmp(Cmp::Eq, k, &at);
                let sum = self.binary(BinaryOp::Add, bin, v, dtype)?;
                *bin = self.dom.select(&hit, &sum, bin);
            }
        }
        Ok(Tensor {
            shape: h.shape.clone(),
            data,
        })
    }

    fn unary(&mut self, op: UnaryOp, x: &D::V, dtype: DType) -> Result<D::V, Abort> {
        let opaque = match op {
            UnaryOp::Sqrt => Some(Opaque::Sqrt),
            UnaryOp::Exp => Some(Opaque::Exp),
            UnaryOp::Log => Some(Opaque::Log),
            UnaryOp::Tanh => Some(Opaque::Tanh),
            UnaryOp::Round => Some(Opaque::Round),
            UnaryOp::Floor => Some(Opaque::Floor),
            UnaryOp::Ceil => Some(Opaque::Ceil),
            UnaryOp::Sin => Some(Opaque::Sin),
            UnaryOp::Cos => Some(Opaque::Cos),
            UnaryOp::Cosh => Some(Opaque::Cosh),
            UnaryOp::Sinh => Some(Opaque::Sinh),
            _ => None,
        };
        if let Some(f) = opaque {
            let v = self.dom.apply(f, std::slice::from_ref(x))?;
            return Ok(self.finish(v, dtype));
        }
        let v = match op {
            UnaryOp::Neg => self.dom.neg(x),
            UnaryOp::Abs => {
                let z = self.zero(dtype)?;
                let negative = self.dom.cmp(Cmp::Lt, x, &z);
                let n = self.dom.neg(x);
                self.dom.select(&negative, &n, x)
            }
            _ => {
                let z = self.dom.int(0);
                return Ok(self.dom.cmp(Cmp::Eq, x, &z));
            }
        };
        Ok(self.finish(v, dtype))
    }

    fn binary(&mut self, op: BinaryOp, x: &D::V, y: &D::V, result: DType) -> Result<D::V, Abort> {
        let cmp = match op {
            BinaryOp::Lt => Some(Cmp::Lt),
            BinaryOp::Le => Some(Cmp::Le),
            BinaryOp::Gt => Some(Cmp::Gt),
            BinaryOp::Ge => Some(Cmp::Ge),
            BinaryOp::Eq => Some(Cmp::Eq),
            BinaryOp::Ne => Some(Cmp::Ne),
            _ => None,
        };
        if let Some(c) = cmp {
            return Ok(self.dom.cmp(c, x, y));
        }
        let v = match op {
            BinaryOp::Add => self.dom.add(x, y),
            BinaryOp::Sub => self.dom.sub(x, y),
            BinaryOp::Mul => self.dom.mul(x, y),
            BinaryOp::Div => self.dom.div_real(x, y),
            BinaryOp::TruncDiv | BinaryOp::Rem => {
                let z = self.dom.int(0);
                let nz = self.dom.cmp(Cmp::Ne, y, &z);
                let name = if op == BinaryOp::Rem {
                    "rem"
                } else {
                    "trunc_div"
                };
                self.dom
                    .require(&nz, format!("`{name}` by zero in statement {}", self.stmt))?;
                if op == BinaryOp::Rem {
                    self.dom.trunc_rem(x, y)
                } else {
                    self.dom.trunc_div(x, y)
                }
            }
            BinaryOp::Pow => self.dom.apply(Opaque::Pow, &[x.clone(), y.clone()])?,
            // Strict, as C's `MAX`/`MIN` idiom compares (`a > b ? a : b`;
            // a tie gives the same value either way): a kernel written so
            // and its lifted `maximum` are then one term, which keeps the
            // bounded queries of nested ones (floyd-warshall's min-plus
            // updates, n levels deep) decidable.
            BinaryOp::Maximum => {
                let c = self.dom.cmp(Cmp::Gt, x, y);
                self.dom.select(&c, x, y)
            }
            BinaryOp::Minimum => {
                let c = self.dom.cmp(Cmp::Lt, x, y);
                self.dom.select(&c, x, y)
            }
            BinaryOp::And => {
                let b = self.dom.truth(y);
                let z = self.dom.int(0);
                self.dom.select(x, &b, &z)
            }
            BinaryOp::Or => {
                let b = self.dom.truth(y);
                let one = self.dom.int(1);
                self.dom.select(x, &one, &b)
            }
            _ => return Err(Abort::Unsupported(format!("`{}`", op.name()))),
        };
        Ok(self.finish(v, result))
    }

    fn cast(&mut self, x: &D::V, from: DType, to: DType) -> Result<D::V, Abort> {
        if to == DType::Bool {
            return Ok(self.dom.truth(x));
        }
        if to.is_float() {
            let r = if from.is_float() {
                x.clone()
            } else {
                self.dom.to_real(x)
            };
            return Ok(if to == DType::F32 && from != DType::F32 {
                self.dom.round_single(&r)
            } else {
                r
            });
        }
        let Some(it) = IntTy::of_tensir(to) else {
            return Ok(x.clone());
        };
        let i = if from.is_float() {
            self.dom.trunc_to_int(x)
        } else {
            x.clone()
        };
        Ok(self.dom.wrap(&i, it))
    }

    /// `scan(a, kind, axis)`: a running value along `axis`, combined as
    /// [`Self::reduce`] combines (a sum from zero, a product from one, an
    /// extreme from the first element), each partial result wrapped.
    fn scan(
        &mut self,
        kind: ReduceKind,
        axis: usize,
        a: &Tensor<D::V>,
        dtype: DType,
    ) -> Result<Tensor<D::V>, Abort> {
        let predecessor = tenslift_targets::ops::scan_predecessor(&a.shape, axis);
        let mut acc: Vec<D::V> = Vec::with_capacity(a.data.len());
        for (flat, x) in a.data.iter().enumerate() {
            let prev = predecessor(flat).map(|p| acc[p].clone());
            let v = match (kind, prev) {
                (ReduceKind::Sum, p) => {
                    let p = match p {
                        Some(p) => p,
                        None => self.zero(dtype)?,
                    };
                    self.dom.add(&p, x)
                }
                (ReduceKind::Prod, p) => {
                    let p = match p {
                        Some(p) => p,
                        None if dtype.is_float() => self.dom.real(1.0)?,
                        None => self.dom.int(1),
                    };
                    self.dom.mul(&p, x)
                }
                (_, None) => x.clone(),
                (ReduceKind::Max | ReduceKind::Min, Some(p)) => {
                    let op = if kind == ReduceKind::Max {
                        Cmp::Gt
                    } else {
                        Cmp::Lt
                    };
                    let better = self.dom.cmp(op, x, &p);
                    self.dom.select(&better, x, &p)
                }
            };
            acc.push(v);
        }
        // Wrapping once at the end equals wrapping every step.
        let data = acc.into_iter().map(|v| self.finish(v, dtype)).collect();
        Ok(Tensor {
            shape: a.shape.clone(),
            data,
        })
    }

    fn reduce(
        &mut self,
        kind: ReduceKind,
        axes: &[usize],
        a: &Tensor<D::V>,
        dtype: DType,
    ) -> Result<Tensor<D::V>, Abort> {
        let (out_shape, groups) = reduction_groups(axes, a);
        let mut data = Vec::with_capacity(groups.len());
        for group in groups {
            let mut items = group.into_iter();
            let acc = match kind {
                ReduceKind::Sum => {
                    let mut acc = self.zero(dtype)?;
                    for x in items {
                        acc = self.dom.add(&acc, x);
                    }
                    acc
                }
                ReduceKind::Prod => {
                    let mut acc = if dtype.is_float() {
                        self.dom.real(1.0)?
                    } else {
                        self.dom.int(1)
                    };
                    for x in items {
                        acc = self.dom.mul(&acc, x);
                    }
                    acc
                }
                ReduceKind::Max | ReduceKind::Min => {
                    let first = items.next().ok_or_else(|| {
                        program_error(InterpError::EmptyReduction(kind.name()).to_string())
                    })?;
                    let mut acc = first.clone();
                    let op = if kind == ReduceKind::Max {
                        Cmp::Gt
                    } else {
                        Cmp::Lt
                    };
                    for x in items {
                        let better = self.dom.cmp(op, x, &acc);
                        acc = self.dom.select(&better, x, &acc);
                    }
                    acc
                }
            };
            // Wrapping once at the end equals wrapping every step.
            data.push(self.finish(acc, dtype));
        }
        Ok(Tensor {
            shape: out_shape,
            data,
        })
    }

    /// `argmax`/`argmin` along `axis` as C's running search: a later
    /// element replaces the best so far only when strictly greater (less).
    fn arg_extreme(
        &mut self,
        (largest, last): (bool, bool),
        axis: usize,
        a: &Tensor<D::V>,
    ) -> Result<Tensor<D::V>, Abort> {
        let (out_shape, groups) = reduction_groups(&[axis], a);
        let op = match (largest, last) {
            (true, false) => Cmp::Gt,
            (true, true) => Cmp::Ge,
            (false, false) => Cmp::Lt,
            (false, true) => Cmp::Le,
        };
        let mut data = Vec::with_capacity(groups.len());
        for group in groups {
            let mut items = group.into_iter();
            let first = items
                .next()
                .ok_or_else(|| program_error(InterpError::EmptyReduction("argmax").to_string()))?;
            let (mut acc, mut best) = (first.clone(), self.dom.int(0));
            for (k, x) in items.enumerate() {
                let better = self.dom.cmp(op, x, &acc);
                acc = self.dom.select(&better, x, &acc);
                let here = self.dom.int(k as i128 + 1);
                best = self.dom.select(&better, &here, &best);
            }
            data.push(best);
        }
        Ok(Tensor {
            shape: out_shape,
            data,
        })
    }

    fn contract(
        &mut self,
        inputs: &[Vec<char>],
        output: &[char],
        args: &[Tensor<D::V>],
        dtype: DType,
    ) -> Result<Tensor<D::V>, Abort> {
        let shapes: Vec<&[usize]> = args.iter().map(|a| a.shape.as_slice()).collect();
        let layout = EinsumLayout::new(inputs, output, &shapes).map_err(program_error)?;
        let (out_shape, sum_shape) = (layout.out_shape.clone(), &layout.sum_shape);
        let n_out: usize = out_shape.iter().product();
        let n_sum: usize = sum_shape.iter().product();
        let mut data = Vec::with_capacity(n_out);
        for k in 0..n_out {
            let oi = unravel(k, &out_shape);
            let mut acc = self.zero(dtype)?;
            for s in 0..n_sum {
                let si = unravel(s, sum_shape);
                let mut product: Option<D::V> = None;
                for (j, a) in args.iter().enumerate() {
                    let x = &a.data[layout.offset(j, &oi, &si)];
                    product = Some(match product {
                        None => x.clone(),
                        Some(p) => self.dom.mul(&p, x),
                    });
                }
                if let Some(p) = product {
                    acc = self.dom.add(&acc, &p);
                }
            }
            data.push(self.finish(acc, dtype));
        }
        Ok(Tensor {
            shape: out_shape,
            data,
        })
    }

    /// Flat positions (row-major in the result) a slice selects.
    fn slice_positions(&self, shape: &[usize], items: &[SliceItem]) -> Result<Vec<usize>, Abort> {
        let ev = |d: &Dim| -> Result<i64, Abort> {
            d.eval(&|s| self.sizes.get(s).copied())
                .map_err(|e| program_error(e.to_string()))
        };
        let st = strides(shape);
        let mut positions = vec![0usize];
        for (axis, &len) in shape.iter().enumerate() {
            let len_i = len as i64;
            let picks: Vec<usize> = match items.get(axis).unwrap_or(&SliceItem::Full) {
                SliceItem::Full => (0..len).collect(),
                SliceItem::Index(d) => {
                    let i = ev(d)?;
                    if i < 0 || i >= len_i {
                        return Err(program_error(format!(
                            "statement {}: index {d} = {i} is out of bounds for an axis of length {len}",
                            self.stmt
                        )));
                    }
                    vec![i as usize]
                }
                SliceItem::Range { start, stop, step } => {
                    let (a, b) = (ev(start)?, ev(stop)?);
                    if a < 0 || b > len_i || a > b || *step <= 0 {
                        return Err(program_error(format!(
                            "statement {}: range {start}:{stop} = {a}:{b} is out of bounds for an axis of length {len}",
                            self.stmt
                        )));
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
}

/// The shape left after reducing `axes` of `a`, and each output position's
/// elements in row-major order (so along a reduced axis, in its order).
fn reduction_groups<'a, V>(axes: &[usize], a: &'a Tensor<V>) -> (Vec<usize>, Vec<Vec<&'a V>>) {
    let out_shape: Vec<usize> = (0..a.shape.len())
        .filter(|i| !axes.contains(i))
        .map(|i| a.shape[i])
        .collect();
    let n_out: usize = out_shape.iter().product();
    let mut groups: Vec<Vec<&V>> = vec![Vec::new(); n_out];
    let out_strides = strides(&out_shape);
    for (flat, x) in a.data.iter().enumerate() {
        let idx = unravel(flat, &a.shape);
        let out: usize = idx
            .iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, v)| *v)
            .zip(&out_strides)
            .map(|(v, s)| v * s)
            .sum();
        groups[out].push(x);
    }
    (out_shape, groups)
}
