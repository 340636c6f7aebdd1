//! Sketches read off the target's outermost function: when every element
//! is one application of an invertible wrapper, its argument becomes the
//! hole (`cast(?h, u8)` when every element wraps to `u8`, `sqrt(?h)`,
//! `exp(?h)`, `trunc_div(?h, 255)`, `maximum(?h, 0)` for a clamp).

use tenslift_targets::{build, BinaryOp, DType, Expr, Lit, UnaryOp};

use crate::algebra::{Func, Tensor, Value};
use crate::synth::search::{uniform, Found, Search, SketchFamily, Solved};

/// Rebuilds a sketch around its solved hole.
type Rebuild = Box<dyn Fn(Expr) -> Option<Expr>>;

/// The `pattern` family; see the module documentation.
pub struct Pattern;

impl SketchFamily for Pattern {
    fn name(&self) -> &'static str {
        "pattern"
    }

    fn summary(&self) -> &'static str {
        "f(?h) for an invertible outermost function: wrap-around cast, sqrt/exp/log/tanh/abs, trunc_div by a constant, clamp"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        let Some((hole, hole_dtype, wrap)) = sketch(target, dtype) else {
            return Ok(None);
        };
        let step = search.step_cost(BinaryOp::Mul, target, dtype);
        search.stats.pattern_match();
        match search.solve(&hole, hole_dtype, depth - 1, bound - step)? {
            Some(h) => Ok(wrap(h.expr).map(|expr| Found {
                expr,
                cost: h.cost + step,
            })),
            None => {
                search.stats.backtrack();
                Ok(None)
            }
        }
    }
}

/// The hole, its element type and the rebuild of the sketch that applies
/// to `target`, if any.
fn sketch(target: &Tensor, dtype: DType) -> Option<(Tensor, DType, Rebuild)> {
    let (func, args) = common_app(target)?;
    let arg = |i: usize| -> Option<Tensor> {
        let elems: Option<Vec<Value>> = args.iter().map(|a| a.get(i).cloned()).collect();
        Tensor::new(target.shape().to_vec(), elems?).ok()
    };
    match func {
        Func::Wrap { bits, signed } => {
            let to = DType::int_of(u32::from(bits), signed).filter(|d| *d == dtype)?;
            Some((
                arg(0)?,
                DType::I32,
                Box::new(move |e| build::cast(e, to).ok()),
            ))
        }
        Func::Sqrt
        | Func::Exp
        | Func::Log
        | Func::Tanh
        | Func::Abs
        | Func::Round
        | Func::Floor
        | Func::Ceil
        | Func::Sin
        | Func::Cos
        | Func::Cosh
        | Func::Sinh
            if dtype.is_float() =>
        {
            let op = match func {
                Func::Sqrt => UnaryOp::Sqrt,
                Func::Exp => UnaryOp::Exp,
                Func::Log => UnaryOp::Log,
                Func::Tanh => UnaryOp::Tanh,
                Func::Round => UnaryOp::Round,
                Func::Floor => UnaryOp::Floor,
                Func::Ceil => UnaryOp::Ceil,
                Func::Sin => UnaryOp::Sin,
                Func::Cos => UnaryOp::Cos,
                Func::Cosh => UnaryOp::Cosh,
                Func::Sinh => UnaryOp::Sinh,
                _ => UnaryOp::Abs,
            };
            Some((arg(0)?, dtype, Box::new(move |e| Expr::unary(op, e).ok())))
        }
        Func::TruncDiv if dtype.is_int() => {
            let c = uniform(&arg(1)?)?.as_constant()?.to_i64()?;
            let lit = Expr::lit(Lit::int(c, dtype));
            let rebuild: Rebuild = Box::new(move |e| build::trunc_div(e, lit.clone()).ok());
            Some((arg(0)?, dtype, rebuild))
        }
        Func::Max | Func::Min => clamp(target, &args, func, dtype),
        _ => None,
    }
}

/// `maximum(?h, c)` / `minimum(?h, c)` for a clamp by one constant.
fn clamp(
    target: &Tensor,
    args: &[Vec<Value>],
    func: Func,
    dtype: DType,
) -> Option<(Tensor, DType, Rebuild)> {
    let (hole, bound_value) = clamp_hole(target, args)?;
    let lit = if dtype.is_int() {
        Expr::lit(Lit::int(bound_value, dtype))
    } else {
        Expr::lit(Lit::float(bound_value as f64, dtype))
    };
    let op = if func == Func::Max {
        BinaryOp::Maximum
    } else {
        BinaryOp::Minimum
    };
    let rebuild: Rebuild = Box::new(move |e| Expr::binary(op, e, lit.clone()).ok());
    Some((hole, dtype, rebuild))
}

/// The function every element applies outermost, with each element's
/// arguments, when all elements are one application of one function.
fn common_app(t: &Tensor) -> Option<(Func, Vec<Vec<Value>>)> {
    let mut func = None;
    let mut args = Vec::new();
    for e in t.elems() {
        let (f, a) = e.as_atom()?.as_app()?;
        if func.is_some_and(|g| g != f) {
            return None;
        }
        func = Some(f);
        args.push(a.to_vec());
    }
    Some((func?, args))
}

/// For a clamp `max(x, c)` / `min(x, c)` in every element, with the same
/// integer constant `c` throughout: the tensor of the `x`s and `c`.
fn clamp_hole(target: &Tensor, args: &[Vec<Value>]) -> Option<(Tensor, i64)> {
    let mut bound = None;
    let mut holes = Vec::with_capacity(args.len());
    for a in args {
        let [x, y] = a.as_slice() else { return None };
        let (c, hole) = match (x.as_constant(), y.as_constant()) {
            (Some(c), None) => (c, y),
            (None, Some(c)) => (c, x),
            _ => return None,
        };
        let c = c.to_i64()?;
        if bound.is_some_and(|b| b != c) {
            return None;
        }
        bound = Some(c);
        holes.push(hole.clone());
    }
    Some((Tensor::new(target.shape().to_vec(), holes).ok()?, bound?))
}
