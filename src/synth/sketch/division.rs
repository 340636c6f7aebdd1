//! C integer division and remainder by a tensor (`tdiv(?n, ?d)`,
//! `rem(?n, ?d)`), which the branches of the blend kernels compute, for
//! integer targets whose every element is that C operation. (Division by
//! one shared constant is the `pattern` family's.) Also the guard a
//! `where` branch puts on such a divisor.

use tenslift_targets::{build, BinaryOp, DType, Expr, Lit, Op};

use super::constant::solve_value;
use super::{args_of_all, column, step_cost, uniform};
use crate::algebra::{Func, Tensor, Value};
use crate::synth::search::{Found, Search, SketchFamily, Solved};

/// The `division` family; see the module documentation.
pub struct Division;

impl SketchFamily for Division {
    fn name(&self) -> &'static str {
        "division"
    }

    fn summary(&self) -> &'static str {
        "trunc_div(?n, ?d) / rem(?n, ?d) by a non-constant divisor (C integer division)"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        division_sketch(search, target, dtype, depth, bound)
    }
}

/// The family's sketch; see the module documentation.
fn division_sketch(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Solved {
    if !dtype.is_int() {
        return Ok(None);
    }
    for func in [Func::TruncDiv, Func::Rem] {
        let Some(args) = args_of_all(target, func) else {
            continue;
        };
        let (Some(num), Some(den)) = (column(target, &args, 0), column(target, &args, 1)) else {
            return Ok(None);
        };
        let constant_den = uniform(&den).and_then(Value::as_constant).is_some();
        if func == Func::TruncDiv && constant_den {
            return Ok(None);
        }
        let step = step_cost(target);
        let Some(d) = solve_value(search, &den, dtype, depth - 1, bound - step)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        let Some(n) = search.solve(&num, dtype, depth - 1, bound - step - d.cost)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        let expr = match func {
            Func::TruncDiv => build::trunc_div(n.expr, d.expr),
            _ => build::rem(n.expr, d.expr),
        };
        search.stats.pattern_match();
        return Ok(expr.ok().map(|expr| Found {
            expr,
            cost: step + n.cost + d.cost,
        }));
    }
    Ok(None)
}

/// `where(d != 0, d, 1)`: `d` wherever dividing by it is defined.
fn guarded_divisor(d: Expr) -> Option<Expr> {
    let dtype = d.dtype();
    let zero = Expr::lit(Lit::int(0, dtype));
    let one = Expr::lit(Lit::int(1, dtype));
    let nonzero = build::ne(d.clone(), zero).ok()?;
    build::select(nonzero, d, one).ok()
}

/// Whether `d` is already `where(d != 0, d, 1)`.
fn is_guarded(d: &Expr) -> bool {
    matches!(d.op(), Op::Where)
        && d.args()
            .get(2)
            .is_some_and(|e| matches!(e.op(), Op::Lit(Lit::Int(1, _))))
}

/// `e` with the divisor of every integer division and remainder by a
/// non-literal guarded against zero, and how many guards were added.
///
/// A `where` branch holds a division C performs only where its divisor is
/// non-zero (a zero one would be undefined), but a tensor program evaluates
/// both branches everywhere: NumPy warns, PyTorch raises on an integer
/// division by zero, and a solver sees a division by zero. The acceptance
/// compares the guarded divisor as the divisor itself
/// ([`canonical_extrema`](crate::spec::tensir::canonical_extrema)).
pub(super) fn guard_divisions(e: &Expr) -> (Expr, usize) {
    let mut guards = 0;
    let args: Vec<Expr> = e
        .args()
        .iter()
        .map(|a| {
            let (a, n) = guard_divisions(a);
            guards += n;
            a
        })
        .collect();
    let rebuilt = if args.as_slice() == e.args() {
        e.clone()
    } else {
        match Expr::new(e.op().clone(), args) {
            Ok(rebuilt) => rebuilt,
            Err(_) => return (e.clone(), 0),
        }
    };
    let guarded = match (rebuilt.op(), rebuilt.args()) {
        (Op::Binary(op @ (BinaryOp::TruncDiv | BinaryOp::Rem)), [n, d])
            if !matches!(d.op(), Op::Lit(_)) && !is_guarded(d) =>
        {
            guarded_divisor(d.clone()).and_then(|d| Expr::binary(*op, n.clone(), d).ok())
        }
        _ => None,
    };
    match guarded {
        Some(g) => (g, guards + 1),
        None => (rebuilt, guards),
    }
}
