//! The NumPy functions and array methods `tenslift optimize` understands
//! (STENSO's grammar, Fig. 3, and a few neighbours), each as npir.

use tenslift_frontend::ir::{Affine, Loc, ScalarType};

use super::args::Args;
use super::diagnostics::{
    error, BAD_ARGUMENT, SHAPE_MISMATCH, UNKNOWN_FUNCTION, UNSUPPORTED_DTYPE,
};
use super::eval::{Evaluator, Result, Value};
use super::ir::{self, BinaryFn, ReduceFn, UnaryFn, T};
use super::syntax::{ExprKind, Keyword, PyExpr};

/// `np.<attr>` used as a value.
pub fn module_attribute(attr: &str, loc: &Loc) -> Result<Value> {
    let literal = |text: &str| {
        let n = ir::Node::Literal(text.to_string());
        Value::Tensor(ir::node(n, Vec::new(), ScalarType::F64, true, loc))
    };
    match attr {
        "newaxis" => Ok(Value::None),
        "pi" => Ok(literal("3.141592653589793")),
        "e" => Ok(literal("2.718281828459045")),
        "float64" | "double" => Ok(Value::DType(ScalarType::F64)),
        "float32" | "single" => Ok(Value::DType(ScalarType::F32)),
        other => Err(error(
            UNKNOWN_FUNCTION,
            loc.clone(),
            format!("`np.{other}` is not supported here"),
        )),
    }
}

impl Evaluator<'_> {
    pub(super) fn call(
        &mut self,
        func: &PyExpr,
        args: &[PyExpr],
        keywords: &[Keyword],
        loc: &Loc,
    ) -> Result<Value> {
        match &func.kind {
            ExprKind::Attr { value, attr } => match self.expr(value)? {
                Value::Module => {
                    let mut a = Args::new(format!("np.{attr}"), loc.clone(), args, keywords);
                    let v = self.numpy(attr, &mut a, None)?;
                    a.finish()?;
                    Ok(v)
                }
                Value::Tensor(t) => {
                    let mut a = Args::new(format!(".{attr}"), loc.clone(), args, keywords);
                    let v = self.method(&t, attr, &mut a)?;
                    a.finish()?;
                    Ok(v)
                }
                _ => Err(error(
                    UNKNOWN_FUNCTION,
                    loc.clone(),
                    format!("`.{attr}(...)` of something that is neither numpy nor an array"),
                )),
            },
            ExprKind::Name { id } if !self.env.contains_key(id) => {
                let mut a = Args::new(id.clone(), loc.clone(), args, keywords);
                let v = self.builtin(id, &mut a)?;
                a.finish()?;
                Ok(v)
            }
            _ => Err(error(
                UNKNOWN_FUNCTION,
                self.at(func),
                "only numpy functions, array methods, len and range can be called",
            )),
        }
    }

    fn builtin(&mut self, name: &str, a: &mut Args) -> Result<Value> {
        match name {
            "len" => {
                let t = self.arg_tensor(a, 0, "obj")?;
                match t.shape.first() {
                    Some(d) => Ok(Value::Size(d.clone())),
                    None => Err(error(BAD_ARGUMENT, a.loc.clone(), "len() of a 0-d array")),
                }
            }
            "range" => {
                let first = self.size(a.req(0, "stop")?)?;
                match a.opt(1, "stop") {
                    Some(stop) => Ok(Value::Range(first, self.size(stop)?)),
                    None => Ok(Value::Range(Affine::constant(0), first)),
                }
            }
            other => Err(error(
                UNKNOWN_FUNCTION,
                a.loc.clone(),
                format!("`{other}` is not a function tenslift knows"),
            )),
        }
    }

    /// An array method: `A.sum(axis=1)` is `np.sum(A, axis=1)`.
    fn method(&mut self, t: &T, name: &str, a: &mut Args) -> Result<Value> {
        match name {
            "transpose" => {
                let rest = a.rest(0);
                let axes = match rest {
                    [] => None,
                    [one] if matches!(one.kind, ExprKind::Tuple { .. } | ExprKind::List { .. }) => {
                        Some(self.axes_in_order(one, t.shape.len())?)
                    }
                    many => Some(
                        many.iter()
                            .map(|e| self.axis(e, t.shape.len()))
                            .collect::<Result<_>>()?,
                    ),
                };
                transpose(t, axes, &a.loc).map(Value::Tensor)
            }
            "reshape" => {
                let rest = a.rest(0);
                let shape = match rest {
                    [one] => self.shape_arg(one)?,
                    many => many.iter().map(|e| self.size(e)).collect::<Result<_>>()?,
                };
                reshape(t, &shape, &a.loc).map(Value::Tensor)
            }
            "sum" | "prod" | "max" | "min" | "mean" | "dot" | "trace" | "squeeze" | "diagonal" => {
                self.numpy(name, a, Some(t))
            }
            other => Err(error(
                UNKNOWN_FUNCTION,
                a.loc.clone(),
                format!("the array method `.{other}()` is not supported"),
            )),
        }
    }

    /// Argument `i` as an array; with a receiver, argument 0 is the
    /// receiver and the others shift down.
    fn arg_tensor(&mut self, a: &mut Args, i: usize, name: &str) -> Result<T> {
        let e = a.req(i, name)?;
        let loc = self.at(e);
        let v = self.expr(e)?;
        self.tensor(v, &loc)
    }

    /// Parameter `i` of a function whose first parameter may be the
    /// method's receiver.
    fn operand(&mut self, a: &mut Args, recv: Option<&T>, name: &str) -> Result<T> {
        match recv {
            Some(t) => Ok(t.clone()),
            None => self.arg_tensor(a, 0, name),
        }
    }

    /// `np.<name>(...)` (or a method, `recv` its receiver).
    fn numpy(&mut self, name: &str, a: &mut Args, recv: Option<&T>) -> Result<Value> {
        let shift = usize::from(recv.is_none());
        if let Some(f) = unary_fn(name) {
            let x = self.operand(a, recv, "x")?;
            return ir::unary(f, &x, &a.loc).map(Value::Tensor);
        }
        if name == "square" || name == "reciprocal" {
            let x = self.operand(a, recv, "x")?;
            return square_or_reciprocal(name, &x, &a.loc).map(Value::Tensor);
        }
        if let Some(f) = binary_fn(name) {
            let x = self.arg_tensor(a, 0, "x1")?;
            let y = self.arg_tensor(a, 1, "x2")?;
            return ir::binary(f, &x, &y, &a.loc).map(Value::Tensor);
        }
        if let Some(f) = reduce_fn(name) {
            let x = self.operand(a, recv, "a")?;
            let axes = self.axes(a.opt(shift, "axis"), x.shape.len())?;
            let keep = self.flag(a.opt(usize::MAX, "keepdims"))?;
            return reduction(f, &x, axes, keep, name == "mean", &a.loc).map(Value::Tensor);
        }
        match name {
            "dot" | "matmul" | "inner" | "outer" | "tensordot" | "einsum" => {
                self.contraction(name, a, recv)
            }
            "where" => {
                let c = self.arg_tensor(a, 0, "condition")?;
                let x = self.arg_tensor(a, 1, "x")?;
                let y = self.arg_tensor(a, 2, "y")?;
                ir::select(&c, &x, &y, &a.loc).map(Value::Tensor)
            }
            "full" | "zeros" | "ones" | "full_like" | "zeros_like" | "ones_like"
            | "broadcast_to" => self.filled(name, a),
            _ => self.structural(name, a, recv, shift),
        }
    }

    /// Transposes, reshapes, diagonals, stacking.
    fn structural(
        &mut self,
        name: &str,
        a: &mut Args,
        recv: Option<&T>,
        shift: usize,
    ) -> Result<Value> {
        let loc = a.loc.clone();
        match name {
            "transpose" => {
                let x = self.arg_tensor(a, 0, "a")?;
                let axes = match a.opt(1, "axes") {
                    Some(e) => Some(self.axes_in_order(e, x.shape.len())?),
                    None => None,
                };
                transpose(&x, axes, &loc).map(Value::Tensor)
            }
            "swapaxes" => {
                let x = self.arg_tensor(a, 0, "a")?;
                let i = self.axis(a.req(1, "axis1")?, x.shape.len())?;
                let j = self.axis(a.req(2, "axis2")?, x.shape.len())?;
                let mut perm: Vec<usize> = (0..x.shape.len()).collect();
                perm.swap(i, j);
                transpose(&x, Some(perm), &loc).map(Value::Tensor)
            }
            "reshape" => {
                let x = self.arg_tensor(a, 0, "a")?;
                let shape = self.shape_arg(a.req(1, "newshape")?)?;
                reshape(&x, &shape, &loc).map(Value::Tensor)
            }
            "expand_dims" | "squeeze" => self.unit_axes(name, a, recv, shift),
            "diag" | "diagonal" => {
                let x = self.operand(a, recv, "v")?;
                diag(&x, name == "diagonal", &loc).map(Value::Tensor)
            }
            "trace" => {
                let x = self.operand(a, recv, "a")?;
                let d = diag(&x, true, &loc)?;
                ir::reduce(ReduceFn::Sum, &d, vec![0], &loc).map(Value::Tensor)
            }
            "stack" | "array" => self.stack(name, a),
            other => Err(error(
                UNKNOWN_FUNCTION,
                loc,
                format!("`np.{other}` is not supported (see src/numpy/README.md for the list)"),
            )),
        }
    }

    /// A tuple of axes in the order given (a permutation).
    fn axes_in_order(&mut self, e: &PyExpr, rank: usize) -> Result<Vec<usize>> {
        let items: Vec<&PyExpr> = match &e.kind {
            ExprKind::Tuple { elts } | ExprKind::List { elts } => elts.iter().collect(),
            _ => vec![e],
        };
        items.into_iter().map(|x| self.axis(x, rank)).collect()
    }

    fn unit_axes(
        &mut self,
        name: &str,
        a: &mut Args,
        recv: Option<&T>,
        shift: usize,
    ) -> Result<Value> {
        let x = self.operand(a, recv, "a")?;
        let loc = a.loc.clone();
        let mut result: Vec<Option<usize>> = (0..x.shape.len()).map(Some).collect();
        if name == "expand_dims" {
            let at = self.axis(a.req(1, "axis")?, x.shape.len() + 1)?;
            result.insert(at, None);
        } else {
            let chosen = match a.opt(shift, "axis") {
                Some(e) => self.axes(Some(e), x.shape.len())?,
                None => (0..x.shape.len())
                    .filter(|&d| ir::is_one(&x.shape[d]))
                    .collect(),
            };
            if let Some(&d) = chosen.iter().find(|&&d| !ir::is_one(&x.shape[d])) {
                return Err(error(
                    SHAPE_MISMATCH,
                    loc,
                    format!("cannot squeeze axis {d}: its extent is not 1"),
                ));
            }
            result.retain(|d| !d.is_some_and(|d| chosen.contains(&d)));
        }
        unit_reshape(&x, result, &loc).map(Value::Tensor)
    }

    /// `np.full`, `np.zeros`, `np.ones`, their `_like` forms, `np.broadcast_to`.
    fn filled(&mut self, name: &str, a: &mut Args) -> Result<Value> {
        let loc = a.loc.clone();
        let (shape, like) = if name.ends_with("_like") {
            let x = self.arg_tensor(a, 0, "a")?;
            (x.shape.clone(), Some(x.dtype))
        } else if name == "broadcast_to" {
            let x = self.arg_tensor(a, 0, "array")?;
            let shape = self.shape_arg(a.req(1, "shape")?)?;
            let full = ir::broadcast_shapes(&x.shape, &shape, &loc)?;
            if full != shape {
                return Err(error(
                    SHAPE_MISMATCH,
                    loc,
                    format!(
                        "cannot broadcast {} to {}",
                        ir::shape_text(&x.shape),
                        ir::shape_text(&shape)
                    ),
                ));
            }
            let n = ir::Node::Broadcast(x.clone());
            return Ok(Value::Tensor(ir::node(n, shape, x.dtype, x.weak, &loc)));
        } else {
            (self.shape_arg(a.req(0, "shape")?)?, None)
        };
        let value = match name {
            "zeros" | "zeros_like" => super::eval::size_tensor(&Affine::constant(0), &loc),
            "ones" | "ones_like" => super::eval::size_tensor(&Affine::constant(1), &loc),
            _ => self.arg_tensor(a, 1, "fill_value")?,
        };
        let dtype = match a.opt(if name == "full" { 2 } else { 1 }, "dtype") {
            Some(e) => match self.expr(e)? {
                Value::DType(d) => d,
                _ => {
                    return Err(error(
                        BAD_ARGUMENT,
                        self.at(e),
                        "dtype must be np.float64 or np.float32",
                    ))
                }
            },
            None => like.unwrap_or(ScalarType::F64),
        };
        if !value.shape.is_empty() {
            return Err(error(BAD_ARGUMENT, loc, "the fill value must be a scalar"));
        }
        let value = ir::cast(&value, dtype, false);
        Ok(Value::Tensor(ir::node(
            ir::Node::Broadcast(value),
            shape,
            dtype,
            false,
            &loc,
        )))
    }
}

/// `np.square(x)` is `x * x`, `np.reciprocal(x)` is `1 / x`.
fn square_or_reciprocal(name: &str, x: &T, loc: &Loc) -> Result<T> {
    if name == "square" {
        return ir::binary(BinaryFn::Mul, x, x, loc);
    }
    let one = super::eval::size_tensor(&Affine::constant(1), loc);
    ir::binary(BinaryFn::Div, &one, x, loc)
}

fn unary_fn(name: &str) -> Option<UnaryFn> {
    Some(match name {
        "exp" => UnaryFn::Exp,
        "log" => UnaryFn::Log,
        "sqrt" => UnaryFn::Sqrt,
        "abs" | "absolute" | "fabs" => UnaryFn::Abs,
        "tanh" => UnaryFn::Tanh,
        "negative" => UnaryFn::Neg,
        "logical_not" => UnaryFn::Not,
        _ => return None,
    })
}

fn binary_fn(name: &str) -> Option<BinaryFn> {
    Some(match name {
        "add" => BinaryFn::Add,
        "subtract" => BinaryFn::Sub,
        "multiply" => BinaryFn::Mul,
        "divide" | "true_divide" => BinaryFn::Div,
        "power" => BinaryFn::Pow,
        "maximum" | "fmax" => BinaryFn::Maximum,
        "minimum" | "fmin" => BinaryFn::Minimum,
        "less" => BinaryFn::Lt,
        "less_equal" => BinaryFn::Le,
        "greater" => BinaryFn::Gt,
        "greater_equal" => BinaryFn::Ge,
        "equal" => BinaryFn::Eq,
        "not_equal" => BinaryFn::Ne,
        "logical_and" => BinaryFn::And,
        "logical_or" => BinaryFn::Or,
        _ => return None,
    })
}

fn reduce_fn(name: &str) -> Option<ReduceFn> {
    Some(match name {
        "sum" | "mean" => ReduceFn::Sum,
        "prod" => ReduceFn::Prod,
        "max" | "amax" => ReduceFn::Max,
        "min" | "amin" => ReduceFn::Min,
        _ => return None,
    })
}

/// A reduction, with `keepdims` and `mean`'s division by the count.
fn reduction(f: ReduceFn, x: &T, axes: Vec<usize>, keep: bool, mean: bool, loc: &Loc) -> Result<T> {
    if x.dtype == ScalarType::I64 || x.weak {
        return Err(error(
            UNSUPPORTED_DTYPE,
            loc.clone(),
            "reductions of Python numbers are not supported",
        ));
    }
    let count: Vec<Affine> = axes.iter().map(|&d| x.shape[d].clone()).collect();
    let rank = x.shape.len();
    let mut r = ir::reduce(f, x, axes.clone(), loc)?;
    if mean {
        let mut divisor = super::eval::size_tensor(&Affine::constant(1), loc);
        for c in &count {
            let c = super::eval::size_tensor(c, loc);
            divisor = ir::binary(BinaryFn::Mul, &divisor, &c, loc)?;
        }
        r = ir::binary(BinaryFn::Div, &r, &divisor, loc)?;
    }
    if keep {
        let mut kept = 0;
        let axes_of: Vec<Option<usize>> = (0..rank)
            .map(|d| {
                if axes.contains(&d) {
                    None
                } else {
                    kept += 1;
                    Some(kept - 1)
                }
            })
            .collect();
        r = unit_reshape(&r, axes_of, loc)?;
    }
    Ok(r)
}

/// `np.transpose(x, axes)` (`None`: reversed).
pub fn transpose(x: &T, axes: Option<Vec<usize>>, loc: &Loc) -> Result<T> {
    let rank = x.shape.len();
    let perm = axes.unwrap_or_else(|| (0..rank).rev().collect());
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if sorted != (0..rank).collect::<Vec<_>>() {
        return Err(error(
            BAD_ARGUMENT,
            loc.clone(),
            format!("axes {perm:?} are not a permutation of the {rank} axes"),
        ));
    }
    if perm == sorted {
        return Ok(x.clone());
    }
    let shape = perm.iter().map(|&p| x.shape[p].clone()).collect();
    let n = ir::Node::View(x.clone(), ir::View::Transpose(perm));
    Ok(ir::node(n, shape, x.dtype, x.weak, loc))
}

/// A view that adds (`None`) or drops extent-1 axes.
fn unit_reshape(x: &T, axes: Vec<Option<usize>>, loc: &Loc) -> Result<T> {
    if axes.iter().copied().eq((0..x.shape.len()).map(Some)) {
        return Ok(x.clone());
    }
    let shape = axes
        .iter()
        .map(|a| a.map_or(Affine::constant(1), |d| x.shape[d].clone()))
        .collect();
    let n = ir::Node::View(x.clone(), ir::View::Reshape(axes));
    Ok(ir::node(n, shape, x.dtype, x.weak, loc))
}

/// `np.reshape` when it only adds or drops extent-1 axes (`-1` stands
/// for the next axis of extent other than 1).
pub fn reshape(x: &T, shape: &[Affine], loc: &Loc) -> Result<T> {
    let source: Vec<usize> = (0..x.shape.len())
        .filter(|&d| !ir::is_one(&x.shape[d]))
        .collect();
    let mut next = source.iter();
    let mut axes = Vec::new();
    let refuse = || {
        error(
            super::diagnostics::NOT_AFFINE,
            loc.clone(),
            format!(
                "reshape from {} to {} merges or splits axes (only axes of extent 1 may be added or dropped)",
                ir::shape_text(&x.shape),
                ir::shape_text(shape)
            ),
        )
    };
    for dim in shape {
        if ir::is_one(dim) {
            axes.push(None);
            continue;
        }
        let &d = next.next().ok_or_else(refuse)?;
        if dim.as_constant() != Some(-1) && *dim != x.shape[d] {
            return Err(refuse());
        }
        axes.push(Some(d));
    }
    if next.next().is_some() {
        return Err(refuse());
    }
    unit_reshape(x, axes, loc)
}

/// `np.diag` (a vector becomes a diagonal matrix, a square matrix gives
/// its diagonal); `matrix_only` for `np.diagonal` and `np.trace`.
fn diag(x: &T, matrix_only: bool, loc: &Loc) -> Result<T> {
    match x.shape.as_slice() {
        [n] if !matrix_only => {
            let shape = vec![n.clone(), n.clone()];
            Ok(ir::node(ir::Node::DiagMatrix(x.clone()), shape, x.dtype, x.weak, loc))
        }
        [n, m] if n == m => {
            let n = ir::Node::View(x.clone(), ir::View::Diagonal);
            Ok(ir::node(n, vec![x.shape[0].clone()], x.dtype, x.weak, loc))
        }
        [n, m] => Err(error(
            SHAPE_MISMATCH,
            loc.clone(),
            format!("the diagonal of a non-square ({n}, {m}) matrix: its length min({n}, {m}) is not known"),
        )),
        _ => Err(error(
            SHAPE_MISMATCH,
            loc.clone(),
            format!("np.diag of an array of shape {}", ir::shape_text(&x.shape)),
        )),
    }
}

/// `a @ b` / `np.matmul`.
pub fn matmul(a: &T, b: &T, loc: &Loc) -> Result<T> {
    super::contract::matmul(a, b, loc)
}
