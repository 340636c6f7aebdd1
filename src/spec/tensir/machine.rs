//! The evaluator: one TensIR node at a time, memoised per node.
//!
//! Two memo tables: `memo` holds this execution's values and is cleared when
//! a store changes what variables mean; `shared` outlives the execution (it
//! belongs to an [`super::Executor`]) and holds only values of *pure* nodes —
//! nodes whose variables are all parameters still at their initial values —
//! which are the same in every program executed at the same sizes. A node
//! whose dims mention a loop variable is never pure: its value changes
//! from one iteration to the next.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tenslift_targets::{self as tensir, solvers, symmetry, Dim, Op, SliceItem};

use super::layout::{
    broadcast_shape, broadcast_to, checked_len, concat, flip, row_major_strides, slice_offsets,
    tensor, window,
};
use super::semantics::{arg_extreme, binary, einsum, literal, reduce, scalar_type, scan, unary};
use super::{Result, TensirSpecError};
use crate::algebra::{Tensor, Value};
use crate::spec::exec::convert;
use crate::spec::{format_sizes, Sizes};

pub(super) struct Machine<'p> {
    pub(super) sizes: &'p Sizes,
    /// Values of the loop variables of the loops being executed.
    pub(super) loop_values: HashMap<&'p str, i64>,
    /// Every loop variable of the program (for purity).
    pub(super) loop_vars: HashSet<&'p str>,
    pub(super) env: HashMap<&'p str, Tensor>,
    pub(super) memo: HashMap<tensir::Expr, Tensor>,
    /// Parameters whose value is still their initial one (and that a
    /// variable of the same name and type denotes in every program).
    pub(super) pristine: HashSet<&'p str>,
    purity: HashMap<tensir::Expr, bool>,
    pub(super) shared: HashMap<tensir::Expr, Tensor>,
    /// Initial contents of array parameters by name and shape, kept
    /// between executions: building them interns one symbol per element,
    /// which dominated a search evaluating thousands of candidates over
    /// 3-D and 4-D arrays.
    pub(super) initial: HashMap<(Arc<str>, Vec<usize>), Tensor>,
}

impl<'p> Machine<'p> {
    pub(super) fn new(
        sizes: &'p Sizes,
        shared: HashMap<tensir::Expr, Tensor>,
        initial: HashMap<(Arc<str>, Vec<usize>), Tensor>,
    ) -> Machine<'p> {
        Machine {
            sizes,
            loop_values: HashMap::new(),
            loop_vars: HashSet::new(),
            env: HashMap::new(),
            memo: HashMap::new(),
            pristine: HashSet::new(),
            purity: HashMap::new(),
            shared,
            initial,
        }
    }

    /// Binds `name` to a new value: earlier memoised values that read it
    /// are stale, and it is no longer at its initial value.
    pub(super) fn rebind(&mut self, name: &'p str, value: Tensor) {
        self.env.insert(name, value);
        self.pristine.remove(name);
        self.memo.clear();
        self.purity.clear();
    }

    /// Binds a `let` name. Names are bound once, so nothing memoised reads
    /// it yet — unless a malformed program rebinds a name.
    pub(super) fn bind(&mut self, name: &'p str, value: Tensor) {
        if self.env.contains_key(name) {
            self.rebind(name, value);
        } else {
            self.env.insert(name, value);
        }
    }

    /// Whether `e` reads only pristine parameters.
    fn is_pure(&mut self, e: &tensir::Expr) -> bool {
        if let Op::Var(name) = e.op() {
            return self.pristine.contains(&**name);
        }
        if let Some(&known) = self.purity.get(e) {
            return known;
        }
        let pure = !self.dims_mention_loop_var(e.op()) && e.args().iter().all(|a| self.is_pure(a));
        self.purity.insert(e.clone(), pure);
        pure
    }

    /// Whether the dims of `op` (shapes, slices) mention a loop variable.
    fn dims_mention_loop_var(&self, op: &Op) -> bool {
        if self.loop_vars.is_empty() {
            return false;
        }
        let in_dim = |d: &Dim| d.symbols().any(|s| self.loop_vars.contains(s));
        match op {
            Op::Full { shape, .. }
            | Op::Broadcast(shape)
            | Op::Reshape(shape)
            | Op::Window(shape) => shape.iter().any(in_dim),
            Op::Slice(items) => items.iter().any(|it| match it {
                SliceItem::Full => false,
                SliceItem::Index(d) => in_dim(d),
                SliceItem::Range { start, stop, .. } => in_dim(start) || in_dim(stop),
            }),
            _ => false,
        }
    }

    pub(super) fn dim(&self, d: &Dim) -> Result<i64> {
        d.eval(&|s| {
            self.loop_values
                .get(s)
                .or_else(|| self.sizes.get(s))
                .copied()
        })
        .map_err(|e| TensirSpecError::BadDim {
            dim: d.to_string(),
            sizes: format_sizes(self.sizes),
            reason: e.to_string(),
        })
    }

    pub(super) fn shape(&self, dims: &[Dim]) -> Result<Vec<usize>> {
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

    pub(super) fn eval(&mut self, e: &tensir::Expr) -> Result<Tensor> {
        if let Some(t) = self.memo.get(e) {
            return Ok(t.clone());
        }
        let pure = self.is_pure(e);
        if pure {
            if let Some(t) = self.shared.get(e) {
                return Ok(t.clone());
            }
        }
        let t = match symmetry::blas::definition(e) {
            // `syrk`, `syr2k`, `mirror_lower`: their defining expression
            // over the same operands.
            Some(definition) => {
                let d = definition.map_err(|err| TensirSpecError::Malformed(err.message))?;
                self.eval(&d)?
            }
            None => {
                let args = e
                    .args()
                    .iter()
                    .map(|a| self.eval(a))
                    .collect::<Result<Vec<Tensor>>>()?;
                self.apply(e, &args)?
            }
        };
        if pure {
            self.shared.insert(e.clone(), t.clone());
        } else {
            self.memo.insert(e.clone(), t.clone());
        }
        Ok(t)
    }

    pub(super) fn apply(&self, e: &tensir::Expr, args: &[Tensor]) -> Result<Tensor> {
        let dtype = e.dtype();
        let name = e.op().name();
        match e.op() {
            Op::Var(v) => {
                let value = self.env.get(&**v).ok_or_else(|| TensirSpecError::Unbound {
                    name: v.to_string(),
                })?;
                // Every later shape computation trusts the declared types; a
                // program that was never validated may break them.
                if value.shape() != self.shape(e.shape())?.as_slice() {
                    return Err(TensirSpecError::Malformed(format!(
                        "`{v}` is used as {} but holds a value of shape {:?}",
                        e.ty(),
                        value.shape()
                    )));
                }
                Ok(value.clone())
            }
            Op::Lit(l) => Ok(Tensor::scalar(literal(*l)?)),
            Op::Full { shape, value } => {
                let shape = self.shape(shape)?;
                checked_len(name, &shape)?;
                let v = literal(*value)?;
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
            Op::Scan { kind, axis } => scan(*kind, dtype, &args[0], *axis),
            Op::ArgExtreme {
                largest,
                axis,
                last,
                ..
            } => arg_extreme((*largest, *last), &args[0], *axis),
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
            Op::Flip(axes) => Ok(flip(&args[0], axes)),
            Op::Reshape(dims) => tensor(self.shape(dims)?, args[0].elems().to_vec()),
            Op::Window(_) => window(&args[0], &self.shape(e.shape())?),
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
            Op::Cholesky | Op::TriSolve { .. } | Op::LuNoPivot => solve(e.op(), args),
            Op::ScatterAdd => scatter_add(dtype, &args[0], &args[1], &args[2]),
            Op::Syrk | Op::Syr2k | Op::MirrorLower => Err(TensirSpecError::Malformed(format!(
                "{name} is evaluated through its definition"
            ))),
        }
    }
}

/// Exact arithmetic of normal forms for [`solvers`]' recurrences.
struct Exact;

impl solvers::Arith for Exact {
    type V = Value;
    type E = TensirSpecError;
    fn sub(&mut self, a: &Value, b: &Value) -> Result<Value> {
        Ok(a.sub(b))
    }
    fn mul(&mut self, a: &Value, b: &Value) -> Result<Value> {
        super::semantics::product("mul", a, b)
    }
    fn div(&mut self, a: &Value, b: &Value) -> Result<Value> {
        a.div(b).map_err(|_| TensirSpecError::DivisionByZero {
            op: "solver".to_string(),
        })
    }
    fn sqrt(&mut self, a: &Value) -> Result<Value> {
        Ok(a.sqrt())
    }
}

/// A solver operation's value: its recurrence over exact normal forms, so
/// a C loop nest computing the same recurrence has equal elements.
fn solve(op: &Op, args: &[Tensor]) -> Result<Tensor> {
    let n = args[0].shape()[0];
    let a = args[0].elems();
    let (shape, elems) = match op {
        Op::Cholesky => (
            args[0].shape().to_vec(),
            solvers::cholesky(&mut Exact, n, a, Value::zero())?,
        ),
        Op::LuNoPivot => (
            args[0].shape().to_vec(),
            solvers::lu_nopivot(&mut Exact, n, a)?,
        ),
        Op::TriSolve { lower, unit } => {
            let b = &args[1];
            let m = b.shape().get(1).copied().unwrap_or(1);
            let x = solvers::trisolve(&mut Exact, n, m, a, b.elems(), *lower, *unit)?;
            (b.shape().to_vec(), x)
        }
        _ => {
            return Err(TensirSpecError::Malformed(format!(
                "{} is no solver",
                op.name()
            )))
        }
    };
    tensor(shape, elems)
}

/// `scatter_add(h, idx, vals)` as the C loop it stands for runs it: for
/// each index in row-major order, every bin becomes `select(idx == bin,
/// bin + val, bin)`, the same terms the loop IR's histogram form (a loop
/// over the bins with a data-dependent `if`) produces, so the two specs
/// meet in one normal form.
fn scatter_add(
    dtype: tenslift_targets::DType,
    h: &Tensor,
    idx: &Tensor,
    vals: &Tensor,
) -> Result<Tensor> {
    let mut bins: Vec<Value> = h.elems().to_vec();
    for (k, v) in idx.elems().iter().zip(vals.elems()) {
        for (b, bin) in bins.iter_mut().enumerate() {
            let cond = Value::equals(k, &Value::int(b as i64));
            let one = |x: &Value| Tensor::scalar(x.clone());
            let sum = binary(
                tenslift_targets::ops::BinaryOp::Add,
                dtype,
                &one(bin),
                &one(v),
            )?;
            let sum = sum.elems()[0].clone();
            *bin = Value::select(&cond, &sum, bin);
        }
    }
    tensor(h.shape().to_vec(), bins)
}
