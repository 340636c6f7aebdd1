//! The top-down search (TENSORIZE's simplification-guided synthesis,
//! simplified): a target value is either a library stub's value (base
//! case), or the value of a sketch whose holes are solved recursively.
//! The sketches come from [`SketchFamily`] values the caller hands in (the
//! registry's list, `synth::registry::SKETCH_FAMILIES`), tried in order at
//! every level, then the arithmetic sketches `op(stub, ?h)` whose hole
//! value the algebra core solves exactly ([`algebraic`]), simplest hole
//! first (Simp score). In best mode the search continues after a solution,
//! pruning sketches that already cost as much as the best one (branch and
//! bound).
//!
//! Every level is explored in a fixed order, and the work it does is
//! counted on a [`Meter`]: a search stopped by its work limit returns the
//! cheapest solution found within it, the same on every machine. The
//! algebra over the library's stubs runs on rayon workers as an indexed
//! map, whose result does not depend on the workers' timing.

mod algebraic;
mod reductions;
mod stats;

use tenslift_targets::{BinaryOp, DType, Expr};

pub use reductions::Reductions;
pub use stats::{Counters, Stats, Timings};

use super::budget::{Halt, Meter};
use super::cost::{CostModel, OpKind};
use super::library::Library;
use crate::algebra::Tensor;
use crate::spec::Sizes;

/// A solved target: the expression and its cost.
#[derive(Clone, Debug)]
pub struct Found {
    pub expr: Expr,
    pub cost: f64,
}

/// What a search or sketch returns: its cheapest solution below the bound
/// (`None`: there is none), or why it stopped early.
pub type Solved = Result<Option<Found>, Halt>;

/// A family of sketches the search tries at every level (a registry entry,
/// see `synth::registry`). A family knows how to recognise its shape in a
/// target value and which holes that leaves; it solves the holes by calling
/// back into [`Search::solve`].
pub trait SketchFamily: Sync {
    /// Its name in traces, statistics and ARCHITECTURE.md.
    fn name(&self) -> &'static str;
    /// One line: the sketch it tries.
    fn summary(&self) -> &'static str;
    /// Whether a solution from it ends the level: nothing else can be
    /// cheaper (a literal fill).
    fn conclusive(&self) -> bool {
        false
    }
    /// Its cheapest solution of `target` (element type `dtype`, `depth`
    /// levels of nesting left) costing less than `bound`.
    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved;
}

/// One output's top-down search over one library.
pub struct Search<'a> {
    pub library: &'a Library,
    pub reductions: &'a Reductions,
    pub model: &'a CostModel,
    pub sizes: &'a Sizes,
    /// Counts the work; its limit stops the search.
    pub meter: &'a Meter,
    /// Stop at the first solution instead of minimising cost.
    pub first: bool,
    pub stats: Counters,
    /// Whole-output expressions already rejected by the generalisation
    /// check; a solution at `top_depth` equal to one of them is skipped, so
    /// the search yields the next candidate instead.
    pub banned: &'a [Expr],
    /// The depth of the outermost `solve` call.
    pub top_depth: u32,
    /// The sketch families tried at every level, in order.
    pub families: &'a [&'a dyn SketchFamily],
}

/// Slack added to a bound before pruning with it, so a sketch that ties
/// the current best (up to rounding) is still solved.
pub(crate) fn with_tie_slack(bound: f64) -> f64 {
    bound + 1e-9 * bound.abs().max(1.0)
}

/// The cost model's name for an element-wise binary operation.
fn op_kind(op: BinaryOp) -> OpKind {
    match op {
        BinaryOp::Add | BinaryOp::Sub => OpKind::Add,
        BinaryOp::Mul => OpKind::Mul,
        BinaryOp::Div | BinaryOp::TruncDiv | BinaryOp::Rem => OpKind::Div,
        BinaryOp::Maximum | BinaryOp::Minimum => OpKind::Maximum,
        _ => OpKind::Where,
    }
}

/// The cheapest of the solutions seen at one level, below a bound; in
/// best mode a candidate replaces the best only when strictly cheaper, so
/// ties go to the earliest (the order is fixed).
struct Best<'s> {
    found: Option<Found>,
    bound: f64,
    banned: &'s [Expr],
    /// Called when the best solution improves.
    on_improve: &'s dyn Fn(),
}

impl Best<'_> {
    fn limit(&self) -> f64 {
        self.found.as_ref().map_or(self.bound, |b| b.cost)
    }

    fn consider(&mut self, found: Option<Found>) {
        if let Some(f) = found {
            if f.cost < self.limit() && !self.banned.contains(&f.expr) {
                self.found = Some(f);
                (self.on_improve)();
            }
        }
    }
}

impl Search<'_> {
    /// The cost of one element-wise step producing `target`'s shape.
    pub(crate) fn step_cost(&self, op: BinaryOp, target: &Tensor, dtype: DType) -> f64 {
        self.model
            .elementwise_cost(op_kind(op), target.len() as f64, dtype)
    }

    /// An expression of element type `dtype` computing `target` (or a
    /// uniform target's scalar), cheaper than `bound`, within `depth`.
    ///
    /// In best mode a work limit that hits after some solution was found
    /// returns that solution (the cheapest so far) instead of failing; in
    /// first mode it fails. The user's deadline always fails.
    pub fn solve(&self, target: &Tensor, dtype: DType, depth: u32, bound: f64) -> Solved {
        self.meter.charge(work_of(target))?;
        self.stats.step();
        let banned = if depth == self.top_depth {
            self.banned
        } else {
            &[]
        };
        let on_improve = || self.note_improvement(depth);
        let mut best = Best {
            found: None,
            bound,
            banned,
            on_improve: &on_improve,
        };
        self.base_cases(target, dtype, &mut best);
        if best.found.is_some() && self.first || depth == 0 {
            return Ok(best.found);
        }
        for (index, family) in self.families.iter().enumerate() {
            match family.solve(self, target, dtype, depth, best.limit()) {
                Ok(Some(found)) => {
                    self.stats.family_found(index);
                    best.consider(Some(found));
                    if self.first || family.conclusive() {
                        return Ok(best.found);
                    }
                }
                Ok(None) => {}
                Err(halt) => return self.halted(best.found, halt),
            }
        }
        match self.algebraic(target, dtype, depth, best.limit()) {
            Ok(found) => best.consider(found),
            Err((found, halt)) => {
                best.consider(found);
                return self.halted(best.found, halt);
            }
        }
        Ok(best.found)
    }

    /// Records, at the top level, the work spent when the best solution
    /// improved.
    fn note_improvement(&self, depth: u32) {
        if depth == self.top_depth {
            self.stats.improved_at(self.meter.used());
        }
    }

    /// The library's own answers: a stub of the target's value, a stub of
    /// a uniform target's scalar, a sum of a deeper stub.
    fn base_cases(&self, target: &Tensor, dtype: DType, best: &mut Best<'_>) {
        if let Some(stub) = self.library.lookup(dtype, target) {
            best.consider(Some(Found {
                expr: stub.expr.clone(),
                cost: stub.cost,
            }));
        }
        if let Some(v) = uniform(target).filter(|_| !target.shape().is_empty()) {
            if let Some(stub) = self.library.lookup(dtype, &Tensor::scalar(v)) {
                best.consider(Some(Found {
                    expr: stub.expr.clone(),
                    cost: stub.cost,
                }));
            }
        }
        for block in repeated_blocks(target) {
            if let Some(stub) = self.library.lookup(dtype, &block) {
                best.consider(Some(Found {
                    expr: stub.expr.clone(),
                    cost: stub.cost,
                }));
            }
        }
        if let Some(expr) = self.reductions.lookup(self.library, dtype, target) {
            let cost = self.model.cost_of(&[&expr], self.sizes);
            best.consider(Some(Found { expr, cost }));
        }
    }

    /// What a search stopped early returns: in best mode and at its work
    /// limit, its best solution; otherwise the stop.
    fn halted(&self, best: Option<Found>, halt: Halt) -> Solved {
        match best {
            Some(found) if !self.first && halt == Halt::Budget => Ok(Some(found)),
            _ => Err(halt),
        }
    }

    /// Whether `expr`, a solution at `depth`, was rejected before.
    pub(crate) fn is_banned(&self, depth: u32, expr: &Expr) -> bool {
        depth == self.top_depth && self.banned.contains(expr)
    }
}

/// The work one algebra operation over `t` counts: one unit plus one per
/// sixteen terms of its elements, so that a unit of work costs about the
/// same time on a small and on a large target (issue 15: the limits must
/// bound the time as well as fix the result).
pub(crate) fn work_of(t: &Tensor) -> u64 {
    let terms: usize = t.elems().iter().map(|e| e.len()).sum();
    1 + terms as u64 / 16
}

/// The trailing blocks `t` repeats along its leading axes, widest first:
/// for each `k` from 1 below its rank, `t[0, .., 0, ...]` (its last
/// `rank - k` axes) when every index of the first `k` axes holds the same
/// block. A stub of such a block is a solution as it is, as a uniform
/// target's scalar is: operations and stores broadcast trailing axes. A
/// bias added to every row of a product (`x @ w.T + bias`, llm.c's
/// linear layer) is the row `bias` (without this it was found only for
/// square products, as `x - (x - bias)`, which rounds away small biases).
pub(crate) fn repeated_blocks(t: &Tensor) -> Vec<Tensor> {
    let shape = t.shape();
    let mut out = Vec::new();
    for k in 1..shape.len() {
        let block: usize = shape[k..].iter().product();
        if block == 0 || t.len() <= block {
            continue;
        }
        let first = &t.elems()[..block];
        // A target that does not repeat along its first `k` axes repeats
        // along no more of them: asked at every node of the search, the
        // check stops at the first axis that differs.
        if !t.elems().chunks(block).all(|c| c == first) {
            break;
        }
        if let Ok(b) = Tensor::new(shape[k..].to_vec(), first.to_vec()) {
            out.push(b);
        }
    }
    out
}

/// Whether every element of `t` is the same expression.
pub(crate) fn uniform(t: &Tensor) -> Option<crate::algebra::Expr> {
    let first = t.elems().first()?;
    t.elems().iter().all(|e| e == first).then(|| first.clone())
}
