//! Short constructors for building TensIR by hand or in a synthesizer:
//! `add(x, y)?`, `matmul(a, b)?`, `sum(x, &[0])?`, `slice(x, vec![range(0, n, 2)])?`.
//! Each checks types like [`Expr::new`].

use crate::dim::Dim;
use crate::dtype::{DType, Lit};
use crate::expr::{Expr, Ty, TypeError};
use crate::ops::{BinaryOp, EinsumSpec, Op, ReduceKind, SliceItem, UnaryOp};

type R = Result<Expr, TypeError>;

pub fn var(name: &str, dtype: DType, shape: Vec<Dim>) -> Expr {
    Expr::var(name, Ty::tensor(dtype, shape))
}

pub fn f64_lit(v: f64) -> Expr {
    Expr::lit(Lit::float(v, DType::F64))
}

pub fn f32_lit(v: f64) -> Expr {
    Expr::lit(Lit::float(v, DType::F32))
}

pub fn int_lit(v: i64, dtype: DType) -> Expr {
    Expr::lit(Lit::int(v, dtype))
}

macro_rules! binary {
    ($($name:ident => $op:ident),* $(,)?) => {$(
        pub fn $name(a: Expr, b: Expr) -> R {
            Expr::binary(BinaryOp::$op, a, b)
        }
    )*};
}

binary! {
    add => Add, sub => Sub, mul => Mul, div => Div, trunc_div => TruncDiv, rem => Rem,
    pow => Pow, maximum => Maximum, minimum => Minimum, lt => Lt, le => Le, gt => Gt,
    ge => Ge, eq => Eq, ne => Ne, and => And, or => Or,
}

macro_rules! unary {
    ($($name:ident => $op:ident),* $(,)?) => {$(
        pub fn $name(a: Expr) -> R {
            Expr::unary(UnaryOp::$op, a)
        }
    )*};
}

unary! { neg => Neg, abs => Abs, sqrt => Sqrt, exp => Exp, log => Log, tanh => Tanh, not => Not }
unary! { round => Round, floor => Floor, ceil => Ceil, sin => Sin, cos => Cos }
unary! { cosh => Cosh, sinh => Sinh }

pub fn select(cond: Expr, then: Expr, otherwise: Expr) -> R {
    Expr::new(Op::Where, vec![cond, then, otherwise])
}

pub fn sum(a: Expr, axes: &[usize]) -> R {
    Expr::reduce(ReduceKind::Sum, a, axes.to_vec())
}

pub fn prod(a: Expr, axes: &[usize]) -> R {
    Expr::reduce(ReduceKind::Prod, a, axes.to_vec())
}

pub fn max(a: Expr, axes: &[usize]) -> R {
    Expr::reduce(ReduceKind::Max, a, axes.to_vec())
}

pub fn min(a: Expr, axes: &[usize]) -> R {
    Expr::reduce(ReduceKind::Min, a, axes.to_vec())
}

pub fn matmul(a: Expr, b: Expr) -> R {
    Expr::new(Op::Matmul, vec![a, b])
}

pub fn tensordot(a: Expr, b: Expr, lhs_axes: &[usize], rhs_axes: &[usize]) -> R {
    Expr::new(
        Op::Tensordot {
            lhs_axes: lhs_axes.to_vec(),
            rhs_axes: rhs_axes.to_vec(),
        },
        vec![a, b],
    )
}

pub fn outer(a: Expr, b: Expr) -> R {
    Expr::new(Op::Outer, vec![a, b])
}

/// `einsum("ij,jk->ik", vec![a, b])`.
pub fn einsum(spec: &str, args: Vec<Expr>) -> R {
    let spec = EinsumSpec::parse(spec)
        .ok_or_else(|| TypeError::new(format!("malformed einsum subscript \"{spec}\"")))?;
    Expr::new(Op::Einsum(spec), args)
}

pub fn transpose(a: Expr, perm: &[usize]) -> R {
    Expr::new(Op::Transpose(perm.to_vec()), vec![a])
}

pub fn broadcast(a: Expr, shape: Vec<Dim>) -> R {
    Expr::new(Op::Broadcast(shape), vec![a])
}

pub fn slice(a: Expr, items: Vec<SliceItem>) -> R {
    Expr::new(Op::Slice(items), vec![a])
}

/// `start:stop:step` with constant or symbolic bounds.
pub fn range(start: impl Into<Dim>, stop: impl Into<Dim>, step: i64) -> SliceItem {
    SliceItem::Range {
        start: start.into(),
        stop: stop.into(),
        step,
    }
}

pub fn flip(a: Expr, axes: &[usize]) -> R {
    Expr::new(Op::Flip(axes.to_vec()), vec![a])
}

pub fn reshape(a: Expr, shape: Vec<Dim>) -> R {
    Expr::new(Op::Reshape(shape), vec![a])
}

/// Sliding windows of sizes `sizes`, one per axis of `a`.
pub fn window(a: Expr, sizes: Vec<Dim>) -> R {
    Expr::new(Op::Window(sizes), vec![a])
}

pub fn concat(args: Vec<Expr>, axis: usize) -> R {
    Expr::new(Op::Concat { axis }, args)
}

pub fn triu(a: Expr, k: i64) -> R {
    Expr::new(Op::Triu(k), vec![a])
}

pub fn tril(a: Expr, k: i64) -> R {
    Expr::new(Op::Tril(k), vec![a])
}

pub fn diag(a: Expr) -> R {
    Expr::new(Op::Diag, vec![a])
}

pub fn full(shape: Vec<Dim>, value: Lit) -> R {
    Expr::new(Op::Full { shape, value }, vec![])
}

pub fn cast(a: Expr, to: DType) -> R {
    Expr::new(Op::Cast(to), vec![a])
}

impl From<i64> for Dim {
    fn from(c: i64) -> Dim {
        Dim::constant(c)
    }
}

impl From<&str> for Dim {
    fn from(s: &str) -> Dim {
        Dim::sym(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::print_expr;

    #[test]
    fn builds_a_gemm_body() -> Result<(), TypeError> {
        let (i, j, k) = (Dim::sym("ni"), Dim::sym("nj"), Dim::sym("nk"));
        let a = var("A", DType::F64, vec![i.clone(), k.clone()]);
        let b = var("B", DType::F64, vec![k, j.clone()]);
        let c = var("C", DType::F64, vec![i, j]);
        let body = add(mul(f64_lit(1.5), matmul(a, b)?)?, mul(f64_lit(1.2), c)?)?;
        assert_eq!(
            print_expr(&body),
            "add(mul(1.5, matmul(A, B)), mul(1.2, C))"
        );
        let every_other = slice(body, vec![range(0, "ni", 2)])?;
        assert_eq!(every_other.shape()[0].to_string(), "(ni + 1) / 2");
        Ok(())
    }
}
