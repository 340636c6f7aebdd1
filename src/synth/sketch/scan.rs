//! Running sums and extremes. A running sum is `cumsum(?h, axis)` for a
//! target whose every element along `axis` is its predecessor plus new
//! terms (`y[i] = y[i-1] + x[i]`, a C loop's `s += x[i]; y[i] = s`), the
//! hole the differences
//! (`?h[0] = y[0]`, `?h[i] = y[i] - y[i-1]`). No other sketch states a
//! prefix: without it such a kernel is refused as a recurrence, or found
//! as a triangular product (`tril(1) @ x`, quadratic work).
//!
//! A running maximum (`if (x[i] > m) m = x[i]; y[i] = m;`, whose spec
//! the search sees as `max(x[0], …, x[i])`) is `cummax(?h, axis)`, the
//! hole each element's new argument; a constant every element holds
//! (C's `m = -FLT_MAX` start) is applied after, `maximum(cummax(?h), c)`.
//! Likewise for minima.
//!
//! An exclusive scan (`off[0] = 0; off[i+1] = off[i] + cnt[i]`, a CSR
//! matrix's row offsets) starts each line with zero: it is
//! `concat(0, cumsum(?h))`, the hole the differences after the first.
//!
//! The family only fires where the differences are exact: every term of
//! `y[i-1]` appears in `y[i]` with its coefficient, and `y[i]` has more
//! terms (a prefix of a triangular matrix-vector product, whose rows hold
//! different monomials, is not a scan and is left to `contraction`).

use tenslift_targets::ops::scan_predecessor;
use tenslift_targets::{build, BinaryOp, DType, Dim, Expr, Lit, ReduceKind};

use super::{literal, step_cost};
use crate::algebra::{Func, Rat, Tensor, Value};
use crate::synth::search::{Found, Search, SketchFamily, Solved};

/// The `scan` family; see the module documentation.
pub struct Scan;

impl SketchFamily for Scan {
    fn name(&self) -> &'static str {
        "scan"
    }

    fn summary(&self) -> &'static str {
        "cumsum(?h, axis) when each element along an axis adds terms to its predecessor (?h the differences; concat(0, cumsum) from a zero start), cummax/cummin(?h, axis) when it adds one argument to its predecessor's max/min"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        if depth == 0 || dtype == DType::Bool {
            return Ok(None);
        }
        let mut best: Option<Found> = None;
        for axis in 0..target.shape().len() {
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            if let Some(found) = running_sum(search, target, dtype, axis, (depth, limit))? {
                best = Some(found);
            }
            for (kind, func) in [(ReduceKind::Max, Func::Max), (ReduceKind::Min, Func::Min)] {
                let limit = best.as_ref().map_or(bound, |b| b.cost);
                let at = (depth, limit);
                if let Some(found) = running_extreme(search, target, dtype, axis, (kind, func), at)?
                {
                    best = Some(found);
                }
            }
        }
        Ok(best)
    }
}

/// `cumsum(?h, axis)` (or `concat(0, cumsum(?h))` when every line starts
/// at zero) below `limit`, solving the hole at `depth - 1`.
fn running_sum(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    axis: usize,
    (depth, limit): (u32, f64),
) -> Solved {
    let Some(steps) = differences(target, axis) else {
        return Ok(None);
    };
    let step = step_cost(target);
    let tail = after_leading_zeros(&steps, axis);
    search.stats.pattern_match();
    let hole = tail.as_ref().unwrap_or(&steps);
    let Some(h) = search.solve(hole, dtype, depth - 1, limit - step)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let scanned = Expr::scan(ReduceKind::Sum, h.expr, axis);
    let expr = match tail {
        Some(_) => scanned.and_then(|s| with_leading_zeros(s, axis, dtype)),
        None => scanned,
    };
    Ok(accepted(search, depth, expr, h.cost + step, limit))
}

/// `cummax(?h, axis)` (`cummin`), then `maximum(…, c)` when every element
/// holds the constant `c` too (C's `m = -FLT_MAX` start), below `limit`.
fn running_extreme(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    axis: usize,
    (kind, func): (ReduceKind, Func),
    (depth, limit): (u32, f64),
) -> Solved {
    let Some((new, constant)) = new_extremum_args(target, axis, func) else {
        return Ok(None);
    };
    let step = step_cost(target);
    // A constant the element type cannot hold exactly is no literal.
    let bound_lit = match constant.as_ref().map(|c| literal(c, dtype)) {
        Some(None) => return Ok(None),
        other => other.flatten(),
    };
    let steps = if bound_lit.is_some() { 2.0 } else { 1.0 } * step;
    search.stats.pattern_match();
    let Some(h) = search.solve(&new, dtype, depth - 1, limit - steps)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let scanned = Expr::scan(kind, h.expr, axis);
    let op = if kind == ReduceKind::Max {
        BinaryOp::Maximum
    } else {
        BinaryOp::Minimum
    };
    let expr = match bound_lit {
        Some(c) => scanned.and_then(|s| Expr::binary(op, s, c)),
        None => scanned,
    };
    Ok(accepted(search, depth, expr, h.cost + steps, limit))
}

fn accepted(
    search: &Search<'_>,
    depth: u32,
    expr: Result<Expr, tenslift_targets::TypeError>,
    cost: f64,
    limit: f64,
) -> Option<Found> {
    let expr = expr.ok()?;
    (cost < limit && !search.is_banned(depth, &expr)).then_some(Found { expr, cost })
}

/// The arguments of `e` as an extremum `func` (`e` itself when it is no
/// such application), its constant argument apart.
fn extremum_args(e: &Value, func: Func) -> (Vec<Value>, Option<Rat>) {
    let args = match e.as_atom().and_then(|a| a.as_app()) {
        Some((f, args)) if f == func && e.terms().len() == 1 && e.terms()[0].coeff.is_one() => {
            args.to_vec()
        }
        _ => vec![e.clone()],
    };
    let (constants, rest): (Vec<Value>, Vec<Value>) =
        args.into_iter().partition(|a| a.as_constant().is_some());
    (rest, constants.first().and_then(Value::as_constant))
}

/// For a target whose every element along `axis` is a `max` (`min`) of
/// its predecessor's arguments and one more, the first element of each
/// line a single argument, and every element holding the same constant
/// argument or none: the new arguments (a running extreme's operand) and
/// that constant.
pub(crate) fn new_extremum_args(
    target: &Tensor,
    axis: usize,
    func: Func,
) -> Option<(Tensor, Option<Rat>)> {
    let shape = target.shape();
    if *shape.get(axis)? < 2 {
        return None;
    }
    // Asked at every node of the search: the last element (the end of a
    // line) must be such an extremum before anything is taken apart.
    let last = target.elems().last()?;
    if !matches!(last.as_atom().and_then(|a| a.as_app()), Some((f, _)) if f == func) {
        return None;
    }
    let predecessor = scan_predecessor(shape, axis);
    let parts: Vec<(Vec<Value>, Option<Rat>)> = target
        .elems()
        .iter()
        .map(|e| extremum_args(e, func))
        .collect();
    let constant = parts.first()?.1.clone();
    if parts.iter().any(|(_, c)| *c != constant) {
        return None;
    }
    let mut new = Vec::with_capacity(parts.len());
    for (flat, (args, _)) in parts.iter().enumerate() {
        let Some(p) = predecessor(flat) else {
            let [only] = args.as_slice() else {
                return None;
            };
            new.push(only.clone());
            continue;
        };
        let prev = &parts[p].0;
        let added: Vec<&Value> = args.iter().filter(|a| !prev.contains(a)).collect();
        match added.as_slice() {
            [one] if args.len() == prev.len() + 1 => new.push((*one).clone()),
            _ => return None,
        }
    }
    Some((Tensor::new(shape.to_vec(), new).ok()?, constant))
}

/// `steps` without its first slice along `axis`, when that slice is all
/// zero (an exclusive scan's start).
fn after_leading_zeros(steps: &Tensor, axis: usize) -> Option<Tensor> {
    let shape = steps.shape();
    let predecessor = scan_predecessor(shape, axis);
    let leading = |flat: usize| predecessor(flat).is_none();
    let elems = steps.elems();
    if !(0..elems.len())
        .filter(|f| leading(*f))
        .all(|f| elems[f].is_zero())
    {
        return None;
    }
    let rest: Vec<_> = (0..elems.len())
        .filter(|f| !leading(*f))
        .map(|f| elems[f].clone())
        .collect();
    let mut tail_shape = shape.to_vec();
    tail_shape[axis] -= 1;
    Tensor::new(tail_shape, rest).ok()
}

/// `concat(full(0), scanned)` along `axis`: one slice of zeros first.
fn with_leading_zeros(
    scanned: Expr,
    axis: usize,
    dtype: DType,
) -> Result<Expr, tenslift_targets::TypeError> {
    let mut shape: Vec<Dim> = scanned.shape().to_vec();
    shape[axis] = Dim::constant(1);
    let zeros = build::full(shape, Lit::zero(dtype))?;
    build::concat(vec![zeros, scanned], axis)
}

/// `target`'s differences along `axis` (the first element of each line
/// kept), when `target` is their running sum with no term cancelled: each
/// element has more terms than its predecessor, all of the predecessor's
/// among them. `None` when the axis has fewer than two elements.
pub(crate) fn differences(target: &Tensor, axis: usize) -> Option<Tensor> {
    let shape = target.shape();
    if *shape.get(axis)? < 2 {
        return None;
    }
    let predecessor = scan_predecessor(shape, axis);
    let elems = target.elems();
    // Term counts first: asked at every node of the search, most targets
    // fail here without any algebra.
    let grows = (0..elems.len())
        .filter_map(|f| Some((f, predecessor(f)?)))
        .all(|(f, p)| elems[f].len() > elems[p].len());
    if !grows {
        return None;
    }
    let mut steps = Vec::with_capacity(elems.len());
    for (flat, e) in elems.iter().enumerate() {
        let Some(p) = predecessor(flat) else {
            steps.push(e.clone());
            continue;
        };
        let prev = &elems[p];
        let d = e.sub(prev);
        if d.len() + prev.len() != e.len() {
            return None;
        }
        steps.push(d);
    }
    Tensor::new(shape.to_vec(), steps).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::Value;

    fn prefix_sums(x: &Tensor, axis: usize) -> Tensor {
        let shape = x.shape().to_vec();
        Tensor::from_fn(&shape, |idx| {
            let mut sum = Value::zero();
            for k in 0..=idx[axis] {
                let mut at = idx.to_vec();
                at[axis] = k;
                sum = sum.add(x.get(&at).expect("in range"));
            }
            sum
        })
    }

    #[test]
    fn a_running_sum_has_its_summands_as_differences() {
        let x = Tensor::of_symbols("x", &[4], false);
        assert_eq!(differences(&prefix_sums(&x, 0), 0), Some(x.clone()));
        let a = Tensor::of_symbols("A", &[3, 4], false);
        // Along rows and along columns.
        assert_eq!(differences(&prefix_sums(&a, 1), 1), Some(a.clone()));
        assert_eq!(differences(&prefix_sums(&a, 0), 0), Some(a.clone()));
        // A running sum along the other axis is no scan along this one.
        assert_eq!(differences(&prefix_sums(&a, 1), 0), None);
    }

    #[test]
    fn an_exclusive_scan_drops_its_leading_zeros() {
        let c = Tensor::of_symbols("c", &[3], false);
        let mut offsets = vec![Value::zero()];
        offsets.extend(prefix_sums(&c, 0).elems().iter().cloned());
        let target = Tensor::new(vec![4], offsets).expect("tensor");
        let steps = differences(&target, 0).expect("a running sum");
        assert_eq!(after_leading_zeros(&steps, 0), Some(c.clone()));
        // An inclusive scan starts with its first summand.
        let inclusive = differences(&prefix_sums(&c, 0), 0).expect("a running sum");
        assert_eq!(after_leading_zeros(&inclusive, 0), None);
    }

    #[test]
    fn a_running_maximum_has_the_new_arguments_as_operand() {
        let x = Tensor::of_symbols("x", &[2, 3], false);
        let running = |bound: Option<Value>| {
            Tensor::from_fn(&[2, 3], |idx| {
                let mut args: Vec<Value> = (0..=idx[1])
                    .map(|k| x.get(&[idx[0], k]).expect("in range").clone())
                    .collect();
                args.extend(bound.clone());
                Value::max_of(&args)
            })
        };
        assert_eq!(
            new_extremum_args(&running(None), 1, Func::Max),
            Some((x.clone(), None))
        );
        let floor = Value::constant(Rat::int(-100));
        assert_eq!(
            new_extremum_args(&running(Some(floor)), 1, Func::Max),
            Some((x.clone(), Some(Rat::int(-100))))
        );
        // Not along the other axis, and not as a minimum.
        assert_eq!(new_extremum_args(&running(None), 0, Func::Max), None);
        assert_eq!(new_extremum_args(&running(None), 1, Func::Min), None);
    }

    #[test]
    fn a_triangular_product_is_no_scan() {
        // y[i] = sum_{k <= i} L[i][k] x[k]: the rows hold different
        // monomials, so y[i] - y[i-1] cancels nothing.
        let l = Tensor::of_symbols("L", &[3, 3], false);
        let x = Tensor::of_symbols("x", &[3], false);
        let y = Tensor::from_fn(&[3], |idx| {
            let mut sum = Value::zero();
            for k in 0..=idx[0] {
                let lk = l.get(&[idx[0], k]).expect("in range");
                sum = sum.add(&lk.mul(x.get(&[k]).expect("in range")));
            }
            sum
        });
        assert_eq!(differences(&y, 0), None);
        // Nor is a constant or a copy along the axis.
        let same = Tensor::from_fn(&[3], |_| x.get(&[0]).expect("x0").clone());
        assert_eq!(differences(&same, 0), None);
    }
}
