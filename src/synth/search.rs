//! The top-down search (TENSORIZE's simplification-guided synthesis,
//! simplified): a target value is either a library stub's value (base
//! case), or the value of a sketch `op(stub, ?h)` whose hole value is
//! solved exactly with the algebra core and searched recursively, or of a
//! sketch pattern-matched from the target's own outermost function
//! (`cast(?h, u8)` when every element wraps to `u8`, `sqrt(?h)`,
//! `trunc_div(?h, 255)`, `maximum(?h, 0)` for a clamp). Candidate holes are tried simplest first (Simp
//! score), within a depth limit and a deadline; in best mode the search
//! continues after a solution, pruning sketches that already cost as much
//! as the best one (branch and bound).

use std::time::Instant;

use serde::Serialize;
use tenslift_targets::{build, BinaryOp, DType, Expr, Lit, UnaryOp};

use super::library::Library;
use crate::algebra::{Expr as Value, Func, Tensor};

/// Rebuilds a sketch around its solved hole.
type Rebuild = Box<dyn Fn(Expr) -> Option<Expr>>;

/// Counters reported per kernel.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Library stubs enumerated.
    pub stubs: usize,
    /// Targets visited (base-case lookups).
    pub steps: u64,
    /// Sketches whose hole search failed.
    pub backtracks: u64,
    /// Sketches derived from the target's outermost function.
    pub pattern_matched: u64,
    /// Sketches whose hole value was solved algebraically.
    pub solved_algebraically: u64,
    /// Contraction sketches whose tensor hole was solved by coefficient
    /// extraction (see `contraction`).
    pub solved_by_coefficients: u64,
}

/// The search ran past its deadline.
#[derive(Debug)]
pub struct Timeout;

/// A solution: the expression and its cost.
#[derive(Clone, Debug)]
pub struct Found {
    pub expr: Expr,
    pub cost: f64,
}

pub struct Search<'a> {
    pub library: &'a Library,
    pub deadline: Instant,
    /// Stop at the first solution instead of minimising cost.
    pub first: bool,
    pub stats: Stats,
    /// Whole-output expressions already rejected by the generalisation
    /// check; a solution at `top_depth` equal to one of them is skipped, so
    /// the search yields the next candidate instead.
    pub banned: &'a [Expr],
    /// The depth of the outermost `solve` call.
    pub top_depth: u32,
}

/// Whether every element of `t` is the same expression.
fn uniform(t: &Tensor) -> Option<Value> {
    let first = t.elems().first()?;
    t.elems().iter().all(|e| e == first).then(|| first.clone())
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

fn wrap_dtype(bits: u8, signed: bool) -> Option<DType> {
    Some(match (bits, signed) {
        (8, false) => DType::U8,
        (8, true) => DType::I8,
        (16, false) => DType::U16,
        (16, true) => DType::I16,
        (32, false) => DType::U32,
        _ => return None,
    })
}

impl Search<'_> {
    fn check_time(&self) -> Result<(), Timeout> {
        if Instant::now() > self.deadline {
            Err(Timeout)
        } else {
            Ok(())
        }
    }

    /// An expression of element type `dtype` computing `target` (or a
    /// uniform target's scalar), cheaper than `bound`, within `depth`.
    pub fn solve(
        &mut self,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Timeout> {
        self.check_time()?;
        self.stats.steps += 1;
        let mut best: Option<Found> = None;
        let banned: &[Expr] = if depth == self.top_depth {
            self.banned
        } else {
            &[]
        };
        let consider = |best: &mut Option<Found>, found: Found| {
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            if found.cost < limit && !banned.contains(&found.expr) {
                *best = Some(found);
            }
        };
        if let Some(stub) = self.library.lookup(dtype, target) {
            consider(
                &mut best,
                Found {
                    expr: stub.expr.clone(),
                    cost: stub.cost,
                },
            );
        }
        if !target.shape().is_empty() {
            if let Some(v) = uniform(target) {
                if let Some(stub) = self.library.lookup(dtype, &Tensor::scalar(v)) {
                    consider(
                        &mut best,
                        Found {
                            expr: stub.expr.clone(),
                            cost: stub.cost,
                        },
                    );
                }
            }
        }
        if best.is_some() && self.first || depth == 0 {
            return Ok(best);
        }
        let limit = |best: &Option<Found>| best.as_ref().map_or(bound, |b| b.cost);
        if let Some(found) = self.pattern(target, dtype, depth, limit(&best))? {
            consider(&mut best, found);
            if self.first {
                return Ok(best);
            }
        }
        if let Some(found) = self.power(target, dtype, depth, limit(&best))? {
            consider(&mut best, found);
        }
        if let Some(found) = self.contraction(target, dtype, depth, limit(&best))? {
            consider(&mut best, found);
            if self.first {
                return Ok(best);
            }
        }
        for (hole, op, stub_index, hole_first) in self.algebraic_sketches(target, dtype)? {
            self.check_time()?;
            let stub = &self.library.stubs[stub_index];
            let op_cost = stub.cost + target.len() as f64 * 2.0;
            if op_cost >= limit(&best) {
                continue;
            }
            self.stats.solved_algebraically += 1;
            let stub_expr = stub.expr.clone();
            match self.solve(&hole, dtype, depth - 1, limit(&best) - op_cost)? {
                Some(h) => {
                    let (a, b) = if hole_first {
                        (h.expr, stub_expr)
                    } else {
                        (stub_expr, h.expr)
                    };
                    if let Ok(expr) = Expr::binary(op, a, b) {
                        consider(
                            &mut best,
                            Found {
                                expr,
                                cost: op_cost + h.cost,
                            },
                        );
                        if self.first {
                            return Ok(best);
                        }
                    }
                }
                None => self.stats.backtracks += 1,
            }
        }
        Ok(best)
    }

    /// Sketches from the target's outermost function: invertible wrappers
    /// whose argument becomes the hole.
    fn pattern(
        &mut self,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Timeout> {
        let Some((func, args)) = common_app(target) else {
            return Ok(None);
        };
        let arg = |i: usize| -> Option<Tensor> {
            let elems: Option<Vec<Value>> = args.iter().map(|a| a.get(i).cloned()).collect();
            Tensor::new(target.shape().to_vec(), elems?).ok()
        };
        let step = target.len() as f64 * 2.0;
        let (hole, hole_dtype, wrap): (Tensor, DType, Rebuild) = match func {
            Func::Wrap { bits, signed } => {
                let Some(to) = wrap_dtype(bits, signed).filter(|d| *d == dtype) else {
                    return Ok(None);
                };
                let Some(h) = arg(0) else { return Ok(None) };
                (h, DType::I32, Box::new(move |e| build::cast(e, to).ok()))
            }
            Func::Sqrt | Func::Exp | Func::Log | Func::Tanh | Func::Abs if dtype.is_float() => {
                let op = match func {
                    Func::Sqrt => UnaryOp::Sqrt,
                    Func::Exp => UnaryOp::Exp,
                    Func::Log => UnaryOp::Log,
                    Func::Tanh => UnaryOp::Tanh,
                    _ => UnaryOp::Abs,
                };
                let Some(h) = arg(0) else { return Ok(None) };
                (h, dtype, Box::new(move |e| Expr::unary(op, e).ok()))
            }
            Func::TruncDiv if dtype.is_int() => {
                let (Some(num), Some(den)) = (arg(0), arg(1)) else {
                    return Ok(None);
                };
                let Some(c) = uniform(&den).and_then(|d| d.as_constant()) else {
                    return Ok(None);
                };
                let Some(c) = c.to_i64() else {
                    return Ok(None);
                };
                let lit = Expr::lit(Lit::int(c, dtype));
                (
                    num,
                    dtype,
                    Box::new(move |e| build::trunc_div(e, lit.clone()).ok()),
                )
            }
            Func::Max | Func::Min => {
                let Some((hole, bound_value)) = clamp_hole(target, &args) else {
                    return Ok(None);
                };
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
                (
                    hole,
                    dtype,
                    Box::new(move |e| Expr::binary(op, e, lit.clone()).ok()),
                )
            }
            _ => return Ok(None),
        };
        self.stats.pattern_matched += 1;
        match self.solve(&hole, hole_dtype, depth - 1, bound - step)? {
            Some(h) => Ok(wrap(h.expr).map(|expr| Found {
                expr,
                cost: h.cost + step,
            })),
            None => {
                self.stats.backtracks += 1;
                Ok(None)
            }
        }
    }

    /// `op(stub, ?h)` sketches with the hole value solved exactly, ordered
    /// by the hole's Simp score (simplest first). A stub whose inputs are
    /// not all among the target's is rejected before any algebra.
    fn algebraic_sketches(
        &self,
        target: &Tensor,
        dtype: DType,
    ) -> Result<Vec<(Tensor, BinaryOp, usize, bool)>, Timeout> {
        let target_vars = target.vars();
        let target_score = target.complexity();
        let mut out = Vec::new();
        for (i, stub) in self.library.stubs.iter().enumerate() {
            self.check_time()?;
            if stub.expr.dtype() != dtype || stub.depth > 1 {
                continue;
            }
            if !stub
                .vars
                .iter()
                .all(|v| target_vars.binary_search(v).is_ok())
            {
                continue;
            }
            let s = if stub.value.shape() == target.shape() {
                stub.value.clone()
            } else if stub.value.shape().is_empty() {
                let v = stub.value.elems()[0].clone();
                target.map(|_| v.clone())
            } else {
                continue;
            };
            // target = s + h; target = s * h; target = h / s; target = s - h.
            let mut holes = Vec::new();
            if let Ok(h) = target.zip_with(&s, |t, s| t - s) {
                holes.push((h, BinaryOp::Add, false));
            }
            if let Ok(h) = target.zip_with(&s, |t, s| s - t) {
                holes.push((h, BinaryOp::Sub, false));
            }
            if dtype.is_float() && s.elems().iter().all(|x| !x.is_zero()) {
                let quotient: Option<Vec<Value>> = target
                    .elems()
                    .iter()
                    .zip(s.elems())
                    .map(|(t, s)| t.div(s).ok())
                    .collect();
                if let Some(q) = quotient.and_then(|q| Tensor::new(target.shape().to_vec(), q).ok())
                {
                    holes.push((q, BinaryOp::Mul, false));
                }
                if let Ok(p) = target.zip_with(&s, |t, s| t * s) {
                    holes.push((p, BinaryOp::Div, true));
                }
            }
            for (h, op, hole_first) in holes {
                if h.elems().iter().all(|x| x.is_zero()) {
                    continue;
                }
                let score = h.complexity();
                if score < target_score
                    || (score == target_score && h.vars().len() < target_vars.len())
                {
                    out.push((score, h, op, i, hole_first));
                }
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(out
            .into_iter()
            .map(|(_, h, op, i, f)| (h, op, i, f))
            .collect())
    }
}
