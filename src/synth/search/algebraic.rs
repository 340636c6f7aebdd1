//! The arithmetic sketches `op(stub, ?h)`: for every library stub `s` of
//! the target's shape (or a scalar), the hole value that makes the sketch
//! equal the target is solved exactly with the algebra core (`t - s`,
//! `s - t`, `t / s`, `t * s` for `?h / s`), and the holes simpler than the
//! target (Simp score) are searched recursively, simplest first.

use rayon::prelude::*;
use tenslift_targets::{BinaryOp, DType, Expr};

use super::{Found, Search};
use crate::algebra::{Tensor, Value};
use crate::synth::budget::Halt;
use crate::synth::library::Stub;

/// One `op(stub, ?h)` sketch with its solved hole value.
struct Sketch {
    hole: Tensor,
    op: BinaryOp,
    stub_index: usize,
    hole_first: bool,
}

/// A level stopped early, with the best solution it had found.
pub(super) type Stopped = (Option<Found>, Halt);

impl Search<'_> {
    /// The cheapest arithmetic sketch below `bound`.
    pub(super) fn algebraic(
        &self,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Stopped> {
        let sketches = self
            .algebraic_sketches(target, dtype)
            .map_err(|h| (None, h))?;
        let mut best: Option<Found> = None;
        for sketch in &sketches {
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            match self.solve_sketch(sketch, target, dtype, depth, limit) {
                Ok(Some(f)) if f.cost < limit && !self.is_banned(depth, &f.expr) => {
                    best = Some(f);
                    if self.first {
                        return Ok(best);
                    }
                }
                Ok(_) => {}
                Err(halt) => return Err((best, halt)),
            }
        }
        Ok(best)
    }

    /// Solves one sketch's hole within `bound`: the whole sketch's solution.
    fn solve_sketch(
        &self,
        sketch: &Sketch,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Halt> {
        let stub = &self.library.stubs[sketch.stub_index];
        let op_cost = stub.cost + self.step_cost(sketch.op, target, dtype);
        if op_cost >= bound {
            return Ok(None);
        }
        self.stats.algebraic_solve();
        let Some(h) = self.solve(&sketch.hole, dtype, depth - 1, bound - op_cost)? else {
            self.stats.backtrack();
            return Ok(None);
        };
        let (a, b) = if sketch.hole_first {
            (h.expr, stub.expr.clone())
        } else {
            (stub.expr.clone(), h.expr)
        };
        Ok(Expr::binary(sketch.op, a, b).ok().map(|expr| Found {
            expr,
            cost: op_cost + h.cost,
        }))
    }

    /// The level's sketches ordered by the hole's Simp score (simplest
    /// first). A stub whose inputs are not all among the target's is
    /// rejected before any algebra. Each stub whose holes are computed
    /// costs the target's work ([`super::work_of`]), charged after the
    /// (parallel, indexed) map.
    fn algebraic_sketches(&self, target: &Tensor, dtype: DType) -> Result<Vec<Sketch>, Halt> {
        let target_vars = target.vars();
        let target_score = target.complexity();
        let deadline = self.meter.deadline();
        // `None`: the stub was rejected before any algebra.
        let per_stub = |(i, stub): (usize, &Stub)| -> Result<Option<Vec<_>>, Halt> {
            if std::time::Instant::now() > deadline {
                return Err(Halt::Deadline);
            }
            if stub.expr.dtype() != dtype || stub.depth > 1 {
                return Ok(None);
            }
            if !stub
                .vars
                .iter()
                .all(|v| target_vars.binary_search(v).is_ok())
            {
                return Ok(None);
            }
            let holes = holes_of(target, stub, dtype)
                .into_iter()
                .filter(|(h, _, _)| !h.elems().iter().all(|x| x.is_zero()))
                .filter_map(|(h, op, hole_first)| {
                    let score = h.complexity();
                    let simpler = score < target_score
                        || (score == target_score && h.vars().len() < target_vars.len());
                    simpler.then_some((score, h, op, i, hole_first))
                })
                .collect();
            Ok(Some(holes))
        };
        let chunks: Vec<Result<Option<Vec<_>>, Halt>> = self
            .library
            .stubs
            .par_iter()
            .enumerate()
            .map(per_stub)
            .collect();
        let mut out = Vec::new();
        let mut computed = 0;
        for chunk in chunks {
            if let Some(holes) = chunk? {
                computed += 1;
                out.extend(holes);
            }
        }
        self.meter.charge(computed * super::work_of(target))?;
        // A stable sort keeps library order among equal scores: the order
        // ties are broken in, so it must not depend on anything else.
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(out
            .into_iter()
            .map(|(_, hole, op, stub_index, hole_first)| Sketch {
                hole,
                op,
                stub_index,
                hole_first,
            })
            .collect())
    }
}

/// The hole values of `target = s + h`, `s - h`, `s * h` and `h / s` for
/// the stub's value `s` (a scalar stub broadcasts).
fn holes_of(target: &Tensor, stub: &Stub, dtype: DType) -> Vec<(Tensor, BinaryOp, bool)> {
    let s = if stub.value.shape() == target.shape() {
        stub.value.clone()
    } else if stub.value.shape().is_empty() {
        let v = stub.value.elems()[0].clone();
        target.map(|_| v.clone())
    } else {
        return Vec::new();
    };
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
        if let Some(q) = quotient.and_then(|q| Tensor::new(target.shape().to_vec(), q).ok()) {
            holes.push((q, BinaryOp::Mul, false));
        }
        if let Ok(p) = target.zip_with(&s, |t, s| t * s) {
            holes.push((p, BinaryOp::Div, true));
        }
    }
    holes
}
