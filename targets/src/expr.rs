//! Typed expression trees. Every node carries its element type and symbolic
//! shape, computed when the node is built, so an ill-typed expression cannot
//! exist and shapes are at hand for cost models. Nodes are shared (`Arc`)
//! and cache their hash, so cloning, hashing and comparing are cheap.

use std::collections::hash_map::DefaultHasher;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::dim::{Dim, DimError};
use crate::dtype::{DType, Lit};
use crate::ops::{BinaryOp, EinsumSpec, Op, ReduceKind, SliceItem, UnaryOp};

/// The type of a value: element type and symbolic shape (rank 0 = scalar).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ty {
    pub dtype: DType,
    pub shape: Vec<Dim>,
}

impl Ty {
    pub fn scalar(dtype: DType) -> Ty {
        Ty {
            dtype,
            shape: Vec::new(),
        }
    }

    pub fn tensor(dtype: DType, shape: Vec<Dim>) -> Ty {
        Ty { dtype, shape }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        write!(f, "{}[{}]", self.dtype, dims.join(", "))
    }
}

/// Why an operation cannot be applied to its operands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TypeError {
    pub message: String,
}

impl TypeError {
    pub fn new(message: impl Into<String>) -> TypeError {
        TypeError {
            message: message.into(),
        }
    }
}

impl From<DimError> for TypeError {
    fn from(e: DimError) -> TypeError {
        TypeError::new(e.to_string())
    }
}

/// One node of an expression tree.
#[derive(Debug)]
pub struct Node {
    pub op: Op,
    pub args: Vec<Expr>,
    pub ty: Ty,
    hash: u64,
}

/// A shared, typed expression.
#[derive(Clone, Debug)]
pub struct Expr(Arc<Node>);

impl PartialEq for Expr {
    fn eq(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.hash == other.0.hash
                && self.0.op == other.0.op
                && self.0.ty == other.0.ty
                && self.0.args == other.0.args)
    }
}

impl Eq for Expr {}

impl Hash for Expr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl Expr {
    fn make(op: Op, args: Vec<Expr>, ty: Ty) -> Expr {
        let mut h = DefaultHasher::new();
        op.hash(&mut h);
        ty.hash(&mut h);
        for a in &args {
            h.write_u64(a.0.hash);
        }
        let hash = h.finish();
        Expr(Arc::new(Node { op, args, ty, hash }))
    }

    /// A reference to a parameter or `let` binding of the given type.
    pub fn var(name: &str, ty: Ty) -> Expr {
        Expr::make(Op::Var(Arc::from(name)), Vec::new(), ty)
    }

    /// A scalar constant.
    pub fn lit(value: Lit) -> Expr {
        Expr::make(Op::Lit(value), Vec::new(), Ty::scalar(value.dtype()))
    }

    /// Applies `op` to `args`, checking and computing the result type.
    pub fn new(op: Op, args: Vec<Expr>) -> Result<Expr, TypeError> {
        let tys: Vec<&Ty> = args.iter().map(|a| &a.0.ty).collect();
        let ty = infer(&op, &tys)?;
        Ok(Expr::make(op, args, ty))
    }

    pub fn unary(op: UnaryOp, a: Expr) -> Result<Expr, TypeError> {
        Expr::new(Op::Unary(op), vec![a])
    }

    pub fn binary(op: BinaryOp, a: Expr, b: Expr) -> Result<Expr, TypeError> {
        Expr::new(Op::Binary(op), vec![a, b])
    }

    pub fn reduce(kind: ReduceKind, a: Expr, axes: Vec<usize>) -> Result<Expr, TypeError> {
        Expr::new(Op::Reduce { kind, axes }, vec![a])
    }

    pub fn scan(kind: ReduceKind, a: Expr, axis: usize) -> Result<Expr, TypeError> {
        Expr::new(Op::Scan { kind, axis }, vec![a])
    }

    pub fn op(&self) -> &Op {
        &self.0.op
    }

    pub fn args(&self) -> &[Expr] {
        &self.0.args
    }

    pub fn ty(&self) -> &Ty {
        &self.0.ty
    }

    pub fn dtype(&self) -> DType {
        self.0.ty.dtype
    }

    pub fn shape(&self) -> &[Dim] {
        &self.0.ty.shape
    }

    /// The cached structural hash.
    pub fn hash_value(&self) -> u64 {
        self.0.hash
    }

    /// Visits every node once per occurrence, parents before children.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        for a in self.args() {
            a.walk(f);
        }
    }

    /// Visits every distinct node once, parents before children: linear in
    /// the DAG's size where [`Expr::walk`] is exponential in its sharing
    /// (a doubled subtree is visited twice, at every level).
    pub fn walk_unique(&self, f: &mut dyn FnMut(&Expr)) {
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![self.clone()];
        while let Some(e) = stack.pop() {
            if !seen.insert(Arc::as_ptr(&e.0)) {
                continue;
            }
            f(&e);
            stack.extend(e.args().iter().rev().cloned());
        }
    }
}

fn err<T>(msg: String) -> Result<T, TypeError> {
    Err(TypeError::new(msg))
}

/// NumPy broadcasting of two shapes (right-aligned; a constant 1 stretches).
pub fn broadcast_shapes(a: &[Dim], b: &[Dim]) -> Option<Vec<Dim>> {
    let rank = a.len().max(b.len());
    let one = Dim::constant(1);
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let da = (i + a.len()).checked_sub(rank).map(|j| &a[j]);
        let db = (i + b.len()).checked_sub(rank).map(|j| &b[j]);
        let d = match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) if x == y => x.clone(),
            (Some(x), Some(y)) if *x == one => y.clone(),
            (Some(x), Some(y)) if *y == one => x.clone(),
            _ => return None,
        };
        out.push(d);
    }
    Some(out)
}

fn shape_text(s: &[Dim]) -> String {
    let dims: Vec<String> = s.iter().map(|d| d.to_string()).collect();
    format!("[{}]", dims.join(", "))
}

fn check_axes(what: &str, axes: &[usize], rank: usize) -> Result<(), TypeError> {
    for (i, a) in axes.iter().enumerate() {
        if *a >= rank {
            return err(format!("{what}: axis {a} is out of range for rank {rank}"));
        }
        if axes[..i].contains(a) {
            return err(format!("{what}: axis {a} is repeated"));
        }
    }
    Ok(())
}

/// The result shape of slicing `shape` with `items`.
pub fn slice_shape(shape: &[Dim], items: &[SliceItem]) -> Result<Vec<Dim>, TypeError> {
    if items.len() > shape.len() {
        return err(format!(
            "{} slice components for a value of rank {}",
            items.len(),
            shape.len()
        ));
    }
    let mut out = Vec::new();
    for (i, d) in shape.iter().enumerate() {
        match items.get(i).unwrap_or(&SliceItem::Full) {
            SliceItem::Full => out.push(d.clone()),
            SliceItem::Index(_) => {}
            SliceItem::Range { start, stop, step } => {
                if *step <= 0 {
                    return err(format!("slice step {step} must be positive"));
                }
                out.push(stop.sub(start)?.ceil_div(*step)?);
            }
        }
    }
    Ok(out)
}

/// The result type of `op` applied to operands of types `args`.
pub fn infer(op: &Op, args: &[&Ty]) -> Result<Ty, TypeError> {
    let arity = match op {
        Op::Var(_) | Op::Lit(_) | Op::Full { .. } => 0,
        Op::Binary(_) | Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::TriSolve { .. } => 2,
        Op::Where | Op::ScatterAdd => 3,
        Op::Syrk => 4,
        Op::Syr2k => 5,
        Op::Einsum(spec) => spec.inputs.len(),
        Op::Concat { .. } => args.len().max(1),
        _ => 1,
    };
    if args.len() != arity {
        return err(format!(
            "{} takes {arity} operand(s), got {}",
            op.name(),
            args.len()
        ));
    }
    match op {
        Op::Var(name) => err(format!("variable `{name}` needs a declared type")),
        Op::Lit(l) => {
            if !l.in_range() {
                return err(format!("literal {l} is out of range for its type"));
            }
            Ok(Ty::scalar(l.dtype()))
        }
        Op::Full { shape, value } => {
            if !value.in_range() {
                return err(format!("literal {value} is out of range for its type"));
            }
            Ok(Ty::tensor(value.dtype(), shape.clone()))
        }
        Op::Unary(u) => {
            let a = args[0];
            let ok = match u {
                UnaryOp::Not => a.dtype == DType::Bool,
                UnaryOp::Neg | UnaryOp::Abs => a.dtype.is_numeric(),
                _ => a.dtype.is_float(),
            };
            if !ok {
                let need = match u {
                    UnaryOp::Not => "bool",
                    UnaryOp::Neg | UnaryOp::Abs => "a numeric type",
                    _ => "a float type",
                };
                return err(format!("{} needs {need}, got {}", u.name(), a.dtype));
            }
            Ok(a.clone())
        }
        Op::Binary(b) => {
            let (x, y) = (args[0], args[1]);
            if x.dtype != y.dtype {
                return err(format!(
                    "{} operands have different element types {} and {} (insert a cast)",
                    b.name(),
                    x.dtype,
                    y.dtype
                ));
            }
            let d = x.dtype;
            let ok = match b {
                BinaryOp::Div | BinaryOp::Pow => d.is_float(),
                BinaryOp::TruncDiv | BinaryOp::Rem => d.is_int(),
                BinaryOp::And | BinaryOp::Or => d == DType::Bool,
                BinaryOp::Eq | BinaryOp::Ne => true,
                _ => d.is_numeric(),
            };
            if !ok {
                let need = match b {
                    BinaryOp::Div | BinaryOp::Pow => "float operands (use trunc_div for integers)",
                    BinaryOp::TruncDiv | BinaryOp::Rem => "integer operands",
                    BinaryOp::And | BinaryOp::Or => "bool operands",
                    _ => "numeric operands",
                };
                return err(format!("{} needs {need}, got {d}", b.name()));
            }
            let shape = broadcast_shapes(&x.shape, &y.shape).ok_or_else(|| {
                TypeError::new(format!(
                    "{} operands have shapes {} and {} that do not broadcast",
                    b.name(),
                    shape_text(&x.shape),
                    shape_text(&y.shape)
                ))
            })?;
            let dtype = if b.is_comparison() { DType::Bool } else { d };
            Ok(Ty::tensor(dtype, shape))
        }
        Op::Where => {
            let (c, x, y) = (args[0], args[1], args[2]);
            if c.dtype != DType::Bool {
                return err(format!("where condition must be bool, got {}", c.dtype));
            }
            if x.dtype != y.dtype {
                return err(format!(
                    "where branches have different element types {} and {}",
                    x.dtype, y.dtype
                ));
            }
            let shape = broadcast_shapes(&x.shape, &y.shape)
                .and_then(|s| broadcast_shapes(&c.shape, &s))
                .ok_or_else(|| TypeError::new("where operands do not broadcast"))?;
            Ok(Ty::tensor(x.dtype, shape))
        }
        Op::Reduce { kind, axes } => {
            let a = args[0];
            if !a.dtype.is_numeric() {
                return err(format!("{} needs a numeric operand, got bool", kind.name()));
            }
            check_axes(kind.name(), axes, a.rank())?;
            let shape = a
                .shape
                .iter()
                .enumerate()
                .filter(|(i, _)| !axes.contains(i))
                .map(|(_, d)| d.clone())
                .collect();
            Ok(Ty::tensor(a.dtype, shape))
        }
        Op::Scan { kind, axis } => {
            let a = args[0];
            if !a.dtype.is_numeric() {
                return err(format!(
                    "{} needs a numeric operand, got bool",
                    kind.scan_name()
                ));
            }
            check_axes(kind.scan_name(), &[*axis], a.rank())?;
            Ok(a.clone())
        }
        Op::ArgExtreme { axis, dtype, .. } => {
            let a = args[0];
            if !a.dtype.is_numeric() {
                return err(format!("{} needs a numeric operand, got bool", op.name()));
            }
            if !dtype.is_int() {
                return err(format!("{} gives an integer, not {dtype}", op.name()));
            }
            check_axes(op.name(), std::slice::from_ref(axis), a.rank())?;
            let mut shape = a.shape.clone();
            shape.remove(*axis);
            Ok(Ty::tensor(*dtype, shape))
        }
        Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::Einsum(_) => {
            infer_contraction(op, args)
        }
        Op::Transpose(perm) => {
            let a = args[0];
            if perm.len() != a.rank() {
                return err(format!(
                    "transpose permutation has {} axes for a value of rank {}",
                    perm.len(),
                    a.rank()
                ));
            }
            check_axes("transpose", perm, a.rank())?;
            Ok(Ty::tensor(
                a.dtype,
                perm.iter().map(|&i| a.shape[i].clone()).collect(),
            ))
        }
        Op::Broadcast(shape) => {
            let a = args[0];
            match broadcast_shapes(&a.shape, shape) {
                Some(s) if s == *shape => Ok(Ty::tensor(a.dtype, shape.clone())),
                _ => err(format!(
                    "cannot broadcast shape {} to {}",
                    shape_text(&a.shape),
                    shape_text(shape)
                )),
            }
        }
        Op::Slice(items) => Ok(Ty::tensor(
            args[0].dtype,
            slice_shape(&args[0].shape, items)?,
        )),
        Op::Flip(axes) => {
            check_axes("flip", axes, args[0].rank())?;
            Ok(args[0].clone())
        }
        Op::Reshape(shape) => reshaped(args[0], shape),
        Op::Window(sizes) => windowed(args[0], sizes),
        Op::Concat { axis } => {
            let first = args[0];
            if *axis >= first.rank() {
                return err(format!(
                    "concat axis {axis} is out of range for rank {}",
                    first.rank()
                ));
            }
            let mut total = Dim::constant(0);
            for a in args {
                let same_other_dims = a.rank() == first.rank()
                    && (0..a.rank()).all(|i| i == *axis || a.shape[i] == first.shape[i]);
                if a.dtype != first.dtype || !same_other_dims {
                    return err(format!(
                        "concat operands {} and {} do not match outside axis {axis}",
                        Ty::tensor(first.dtype, first.shape.clone()),
                        a
                    ));
                }
                total = total.add(&a.shape[*axis])?;
            }
            let mut shape = first.shape.clone();
            shape[*axis] = total;
            Ok(Ty::tensor(first.dtype, shape))
        }
        Op::Triu(_) | Op::Tril(_) => {
            if args[0].rank() != 2 {
                return err(format!(
                    "{} needs a matrix, got rank {}",
                    op.name(),
                    args[0].rank()
                ));
            }
            Ok(args[0].clone())
        }
        Op::Diag => {
            let a = args[0];
            match a.rank() {
                1 => Ok(Ty::tensor(
                    a.dtype,
                    vec![a.shape[0].clone(), a.shape[0].clone()],
                )),
                2 if a.shape[0] == a.shape[1] => Ok(Ty::tensor(a.dtype, vec![a.shape[0].clone()])),
                _ => err(format!(
                    "diag needs a vector or a square matrix, got shape {}",
                    shape_text(&a.shape)
                )),
            }
        }
        Op::Cast(to) => Ok(Ty::tensor(*to, args[0].shape.clone())),
        Op::Cholesky | Op::LuNoPivot => {
            let a = args[0];
            square_float_matrix(op, a)?;
            Ok(a.clone())
        }
        Op::TriSolve { .. } => {
            let (t, b) = (args[0], args[1]);
            square_float_matrix(op, t)?;
            if b.dtype != t.dtype || !(1..=2).contains(&b.rank()) || b.shape[0] != t.shape[0] {
                return err(format!(
                    "{} needs a right-hand side of {} with {} rows, got {b}",
                    op.name(),
                    t.dtype,
                    t.shape[0]
                ));
            }
            Ok(b.clone())
        }
        Op::ScatterAdd => {
            let (h, idx, vals) = (args[0], args[1], args[2]);
            if h.rank() != 1 || !h.dtype.is_numeric() {
                return err(format!(
                    "scatter_add accumulates into a numeric vector, got {h}"
                ));
            }
            if !idx.dtype.is_int() {
                return err(format!("scatter_add indices must be integers, got {idx}"));
            }
            if vals.dtype != h.dtype || vals.shape != idx.shape {
                return err(format!(
                    "scatter_add values {vals} must have the bins' element type and the indices' shape {}",
                    shape_text(&idx.shape)
                ));
            }
            Ok(h.clone())
        }
        Op::Syrk | Op::Syr2k => infer_rank_k_update(op, args),
        Op::MirrorLower => {
            let x = args[0];
            if x.rank() != 2 || x.shape[0] != x.shape[1] || !x.dtype.is_numeric() {
                return err(format!(
                    "mirror_lower needs a square numeric matrix, got {x}"
                ));
            }
            Ok(x.clone())
        }
    }
}

/// The type of `reshape(a, shape)`: the element counts must be equal as
/// polynomials of the sizes (`[n, 2]` and `[2*n]`).
fn reshaped(a: &Ty, shape: &[Dim]) -> Result<Ty, TypeError> {
    let count = |dims: &[Dim]| -> Result<Dim, TypeError> {
        dims.iter()
            .try_fold(Dim::constant(1), |acc, d| Ok(acc.mul(d)?))
    };
    if count(&a.shape)? != count(shape)? {
        return err(format!(
            "reshape of shape {} to {} changes the number of elements",
            shape_text(&a.shape),
            shape_text(shape)
        ));
    }
    Ok(Ty::tensor(a.dtype, shape.to_vec()))
}

/// The type of `window(a, sizes)`: the window positions along each axis,
/// then the window's own axes.
fn windowed(a: &Ty, sizes: &[Dim]) -> Result<Ty, TypeError> {
    if a.rank() == 0 || sizes.len() != a.rank() {
        return err(format!(
            "window takes one size per axis: {} sizes for shape {}",
            sizes.len(),
            shape_text(&a.shape)
        ));
    }
    let mut shape = Vec::with_capacity(2 * sizes.len());
    for (n, t) in a.shape.iter().zip(sizes) {
        shape.push(n.sub(t)?.add(&Dim::constant(1))?);
    }
    shape.extend(sizes.iter().cloned());
    Ok(Ty::tensor(a.dtype, shape))
}

/// `syrk(a, c, alpha, beta)` and `syr2k(a, b, c, alpha, beta)`: float
/// factors of one shape `[n, k]`, `c` an `[n, n]` matrix and two scalars,
/// all of one element type; the result has `c`'s type.
fn infer_rank_k_update(op: &Op, args: &[&Ty]) -> Result<Ty, TypeError> {
    let factors = if matches!(op, Op::Syr2k) { 2 } else { 1 };
    let a = args[0];
    let c = args[factors];
    let scalars = &args[factors + 1..];
    let d = a.dtype;
    let factors_ok = a.rank() == 2
        && d.is_float()
        && args[..factors]
            .iter()
            .all(|f| f.dtype == d && f.shape == a.shape);
    if !factors_ok {
        return err(format!(
            "{} needs float factor matrices of one shape, got {}",
            op.name(),
            args[..factors]
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(" and ")
        ));
    }
    let n = &a.shape[0];
    if c.dtype != d || c.shape != [n.clone(), n.clone()] {
        return err(format!(
            "{} accumulates into a {d}[{n}, {n}] matrix, got {c}",
            op.name()
        ));
    }
    if scalars.iter().any(|s| s.rank() != 0 || s.dtype != d) {
        return err(format!("{} scales by two {d} scalars", op.name()));
    }
    Ok(c.clone())
}

/// Checks that a solver's matrix operand is a square float matrix.
fn square_float_matrix(op: &Op, a: &Ty) -> Result<(), TypeError> {
    if a.rank() != 2 || a.shape[0] != a.shape[1] || !a.dtype.is_float() {
        return err(format!(
            "{} needs a square float matrix, got {a}",
            op.name()
        ));
    }
    Ok(())
}

fn infer_contraction(op: &Op, args: &[&Ty]) -> Result<Ty, TypeError> {
    let dtype = args[0].dtype;
    if args.iter().any(|a| a.dtype != dtype) || !dtype.is_numeric() {
        return err(format!(
            "{} operands must share one numeric element type",
            op.name()
        ));
    }
    if let Op::Tensordot { lhs_axes, rhs_axes } = op {
        if lhs_axes.len() != rhs_axes.len() {
            return err("tensordot axis lists differ in length".to_string());
        }
        check_axes("tensordot", lhs_axes, args[0].rank())?;
        check_axes("tensordot", rhs_axes, args[1].rank())?;
    }
    if matches!(op, Op::Outer) && args.iter().any(|a| a.rank() != 1) {
        return err("outer needs two vectors".to_string());
    }
    let ranks: Vec<usize> = args.iter().map(|a| a.rank()).collect();
    let spec = op.as_contraction(&ranks).ok_or_else(|| {
        TypeError::new(format!(
            "matmul needs 1-D or 2-D operands, got ranks {ranks:?}"
        ))
    })?;
    let sizes = einsum_sizes(&spec, args)?;
    let shape = spec
        .output
        .iter()
        .map(|c| sizes.iter().find(|(l, _)| l == c).map(|(_, d)| d.clone()))
        .collect::<Option<Vec<Dim>>>()
        .ok_or_else(|| TypeError::new("einsum output label does not occur in any operand"))?;
    Ok(Ty::tensor(dtype, shape))
}

/// The size of every einsum label, checking that operands agree.
pub fn einsum_sizes(spec: &EinsumSpec, args: &[&Ty]) -> Result<Vec<(char, Dim)>, TypeError> {
    if spec.inputs.is_empty() || spec.inputs.len() > 2 {
        return err("einsum takes one or two operands".to_string());
    }
    let mut sizes: Vec<(char, Dim)> = Vec::new();
    for (labels, ty) in spec.inputs.iter().zip(args) {
        if labels.len() != ty.rank() {
            return err(format!(
                "einsum subscript `{}` has {} labels for an operand of rank {}",
                labels.iter().collect::<String>(),
                labels.len(),
                ty.rank()
            ));
        }
        for (i, (c, d)) in labels.iter().zip(&ty.shape).enumerate() {
            if labels[..i].contains(c) {
                return err(format!(
                    "einsum label `{c}` repeats within one operand (use diag)"
                ));
            }
            match sizes.iter().find(|(l, _)| l == c) {
                Some((_, known)) if known != d => {
                    return err(format!("einsum label `{c}` has sizes {known} and {d}"))
                }
                Some(_) => {}
                None => sizes.push((*c, d.clone())),
            }
        }
    }
    for (i, c) in spec.output.iter().enumerate() {
        if spec.output[..i].contains(c) {
            return err(format!("einsum output label `{c}` repeats"));
        }
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat(n: &str, m: &str) -> Expr {
        Expr::var("A", Ty::tensor(DType::F64, vec![Dim::sym(n), Dim::sym(m)]))
    }

    #[test]
    fn matmul_shapes_follow_numpy() {
        let p = Expr::new(Op::Matmul, vec![mat("n", "k"), mat("k", "m")]).unwrap();
        assert_eq!(p.shape(), &[Dim::sym("n"), Dim::sym("m")]);
        let bad = Expr::new(Op::Matmul, vec![mat("n", "k"), mat("n", "m")]);
        assert!(bad.unwrap_err().message.contains("label `b`"));
    }

    #[test]
    fn mixed_element_types_are_rejected() {
        let x = Expr::lit(Lit::float(1.0, DType::F32));
        let y = Expr::lit(Lit::float(1.0, DType::F64));
        let e = Expr::binary(BinaryOp::Add, x, y).unwrap_err();
        assert!(e.message.contains("f32 and f64"));
    }

    #[test]
    fn equal_trees_hash_and_compare_equal() {
        let a = Expr::binary(BinaryOp::Add, mat("n", "m"), mat("n", "m")).unwrap();
        let b = Expr::binary(BinaryOp::Add, mat("n", "m"), mat("n", "m")).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.hash_value(), b.hash_value());
    }

    #[test]
    fn strided_slice_has_ceil_length() {
        let v = Expr::var("x", Ty::tensor(DType::F64, vec![Dim::sym("n")]));
        let s = Expr::new(
            Op::Slice(vec![SliceItem::Range {
                start: Dim::constant(1),
                stop: Dim::sym("n"),
                step: 2,
            }]),
            vec![v],
        )
        .unwrap();
        assert_eq!(s.shape()[0].eval(&|_| Some(6)).unwrap(), 3);
    }
}
