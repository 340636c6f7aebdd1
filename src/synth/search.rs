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

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;
use tenslift_targets::{build, BinaryOp, DType, Expr, Lit, ReduceKind, UnaryOp};

use super::cost::{CostModel, OpKind};
use super::library::Library;
use crate::algebra::{Expr as Value, Func, Tensor};
use crate::spec::Sizes;

/// Rebuilds a sketch around its solved hole.
type Rebuild = Box<dyn Fn(Expr) -> Option<Expr>>;

/// Counters reported per kernel (TENSORIZE Table 2's columns, plus the
/// library size).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Library stubs enumerated.
    pub stubs: usize,
    /// Targets visited (base-case lookups): TENSORIZE's exploration steps.
    pub steps: u64,
    /// Sketches whose hole search failed.
    pub backtracks: u64,
    /// Sketches derived from the target's outermost function.
    pub pattern_matched: u64,
    /// Outputs translated directly from their point-wise template.
    pub direct: u64,
    /// Sketches whose hole value was solved algebraically.
    pub solved_algebraically: u64,
    /// Contraction sketches whose tensor hole was solved by coefficient
    /// extraction (see `contraction`).
    pub solved_by_coefficients: u64,
    /// Seconds spent enumerating libraries.
    pub library_s: f64,
    /// Seconds spent in the top-down search.
    pub search_s: f64,
    /// Whether the deadline cut the search short (in best mode the program
    /// is then the cheapest one found before it).
    pub deadline_hit: bool,
    /// Whether a library was cut short by its share of the deadline.
    pub library_truncated: bool,
}

impl Stats {
    /// Adds another search's counters (outputs are searched one by one).
    pub fn absorb(&mut self, other: &Stats) {
        self.stubs += other.stubs;
        self.steps += other.steps;
        self.backtracks += other.backtracks;
        self.pattern_matched += other.pattern_matched;
        self.direct += other.direct;
        self.solved_algebraically += other.solved_algebraically;
        self.solved_by_coefficients += other.solved_by_coefficients;
        self.library_s += other.library_s;
        self.search_s += other.search_s;
        self.deadline_hit |= other.deadline_hit;
        self.library_truncated |= other.library_truncated;
    }
}

/// The counters one search updates from many rayon workers at once.
#[derive(Debug, Default)]
pub struct Counters {
    steps: AtomicU64,
    backtracks: AtomicU64,
    pattern_matched: AtomicU64,
    solved_algebraically: AtomicU64,
    solved_by_coefficients: AtomicU64,
    deadline_hit: AtomicBool,
}

impl Counters {
    fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// One exploration step (a target visited).
    pub(crate) fn step(&self) {
        Self::bump(&self.steps);
    }

    /// A sketch or hole that led nowhere.
    pub(crate) fn backtrack(&self) {
        Self::bump(&self.backtracks);
    }

    /// A sketch whose holes were filled by pattern matching.
    pub(crate) fn pattern_match(&self) {
        Self::bump(&self.pattern_matched);
    }

    /// A contraction sketch solved by coefficient extraction.
    pub(crate) fn coefficient_solve(&self) {
        Self::bump(&self.solved_by_coefficients);
    }

    /// The counters as plain numbers.
    pub fn snapshot(&self) -> Stats {
        Stats {
            steps: self.steps.load(Ordering::Relaxed),
            backtracks: self.backtracks.load(Ordering::Relaxed),
            pattern_matched: self.pattern_matched.load(Ordering::Relaxed),
            solved_algebraically: self.solved_algebraically.load(Ordering::Relaxed),
            solved_by_coefficients: self.solved_by_coefficients.load(Ordering::Relaxed),
            deadline_hit: self.deadline_hit.load(Ordering::Relaxed),
            ..Stats::default()
        }
    }
}

/// The search ran past its deadline.
#[derive(Debug)]
pub struct Timeout;

/// A solved target: the expression and its cost.
#[derive(Clone, Debug)]
pub struct Found {
    pub expr: Expr,
    pub cost: f64,
}

/// Below this depth a level's sketches are searched one after another:
/// their subtrees are too small to pay for rayon's task overhead.
const PARALLEL_MIN_DEPTH: u32 = 2;

/// Fewest sketches at one level worth splitting over threads.
const PARALLEL_MIN_SKETCHES: usize = 4;

/// Sums of the library's deepest stubs (one level past the library) that
/// have the searched output's shape: `sum(A * B.T, axis=1)` for a vector
/// target, `sum(A * B.T)` for a scalar one. Targets of one output's search
/// all have its shape (holes keep the target's shape), so the index is
/// built once per output region, keyed like the library by value.
#[derive(Default)]
pub struct Reductions {
    by_value: HashMap<(DType, Tensor), (usize, Vec<usize>)>,
}

/// The axes of a rank-≤2 `shape` whose sum leaves `target` (in order).
fn reduction_axes(shape: &[usize], target: &[usize]) -> Vec<Vec<usize>> {
    match (shape, target) {
        ([_], []) => vec![vec![0]],
        ([_, _], []) => vec![vec![0, 1]],
        ([rows, cols], [len]) => {
            let mut out = Vec::new();
            if rows == len {
                out.push(vec![1]);
            }
            if cols == len && cols != rows {
                out.push(vec![0]);
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The exact sum of `t`'s elements over `axes` (rank ≤ 2).
fn sum_over(t: &Tensor, axes: &[usize]) -> Option<Tensor> {
    let shape = t.shape();
    let add_all =
        |items: &mut dyn Iterator<Item = &Value>| items.fold(Value::zero(), |acc, e| &acc + e);
    match (shape, axes) {
        (_, [0]) if shape.len() == 1 => Some(Tensor::scalar(add_all(&mut t.elems().iter()))),
        (_, [0, 1]) => Some(Tensor::scalar(add_all(&mut t.elems().iter()))),
        ([rows, cols], [1]) => {
            let elems = (0..*rows)
                .map(|i| add_all(&mut t.elems()[i * cols..(i + 1) * cols].iter()))
                .collect();
            Tensor::new(vec![*rows], elems).ok()
        }
        ([rows, cols], [0]) => {
            let elems = (0..*cols)
                .map(|j| add_all(&mut (0..*rows).map(|i| &t.elems()[i * cols + j])))
                .collect();
            Tensor::new(vec![*cols], elems).ok()
        }
        _ => None,
    }
}

impl Reductions {
    /// Indexes the sums of `library`'s depth-2 numeric stubs whose result
    /// has shape `target_shape`, until `deadline` (a partial index is only
    /// a smaller one). Shallower stubs' sums are library stubs already.
    pub fn build(library: &Library, target_shape: &[usize], deadline: Instant) -> Reductions {
        if target_shape.len() > 1 {
            return Reductions::default();
        }
        let sums: Vec<Vec<(Tensor, usize, Vec<usize>)>> = library
            .stubs
            .par_iter()
            .enumerate()
            .map(|(i, stub)| {
                if stub.depth != 2 || !stub.expr.dtype().is_numeric() || Instant::now() > deadline {
                    return Vec::new();
                }
                reduction_axes(stub.value.shape(), target_shape)
                    .into_iter()
                    .filter_map(|axes| Some((sum_over(&stub.value, &axes)?, i, axes)))
                    .collect()
            })
            .collect();
        let mut by_value: HashMap<(DType, Tensor), (usize, Vec<usize>)> = HashMap::new();
        for (value, i, axes) in sums.into_iter().flatten() {
            let key = (library.stubs[i].expr.dtype(), value);
            let cheaper = by_value
                .get(&key)
                .is_none_or(|&(j, _)| library.stubs[i].cost < library.stubs[j].cost);
            if cheaper {
                by_value.insert(key, (i, axes));
            }
        }
        Reductions { by_value }
    }

    fn lookup(&self, library: &Library, dtype: DType, value: &Tensor) -> Option<Expr> {
        let (i, axes) = self.by_value.get(&(dtype, value.clone()))?;
        Expr::reduce(
            ReduceKind::Sum,
            library.stubs[*i].expr.clone(),
            axes.clone(),
        )
        .ok()
    }
}

pub struct Search<'a> {
    pub library: &'a Library,
    pub reductions: &'a Reductions,
    pub model: &'a CostModel,
    pub sizes: &'a Sizes,
    pub deadline: Instant,
    /// Stop at the first solution instead of minimising cost.
    pub first: bool,
    pub stats: Counters,
    /// Whole-output expressions already rejected by the generalisation
    /// check; a solution at `top_depth` equal to one of them is skipped, so
    /// the search yields the next candidate instead.
    pub banned: &'a [Expr],
    /// The depth of the outermost `solve` call.
    pub top_depth: u32,
}

/// One `op(stub, ?h)` sketch with its solved hole value.
struct Sketch {
    hole: Tensor,
    op: BinaryOp,
    stub_index: usize,
    hole_first: bool,
}

/// A cost bound shared by parallel workers: the cheapest complete solution
/// any of them has found (stored as `f64` bits; costs are non-negative, so
/// the bit patterns order like the numbers).
struct SharedBound(AtomicU64);

impl SharedBound {
    fn new(bound: f64) -> SharedBound {
        SharedBound(AtomicU64::new(bound.max(0.0).to_bits()))
    }

    fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }

    fn lower_to(&self, cost: f64) {
        self.0.fetch_min(cost.max(0.0).to_bits(), Ordering::Relaxed);
    }
}

/// Slack added to a shared bound before pruning with it, so a sketch that
/// ties the current best (up to rounding) is still solved: the winner is
/// then the cheapest, ties going to the earliest sketch, whatever order the
/// threads finished in.
pub(crate) fn with_tie_slack(bound: f64) -> f64 {
    bound + 1e-9 * bound.abs().max(1.0)
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

/// A level's sketch loop stopped by the deadline, with the best solution
/// it had found.
struct Partial(Option<Found>);

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

impl Search<'_> {
    fn check_time(&self) -> Result<(), Timeout> {
        if Instant::now() > self.deadline {
            self.stats.deadline_hit.store(true, Ordering::Relaxed);
            Err(Timeout)
        } else {
            Ok(())
        }
    }

    /// The cost of one element-wise step producing `target`'s shape.
    fn step_cost(&self, op: BinaryOp, target: &Tensor, dtype: DType) -> f64 {
        self.model
            .elementwise_cost(op_kind(op), target.len() as f64, dtype)
    }

    /// An expression of element type `dtype` computing `target` (or a
    /// uniform target's scalar), cheaper than `bound`, within `depth`.
    ///
    /// In best mode a deadline that hits after some solution was found
    /// returns that solution (the cheapest so far) instead of failing; in
    /// first mode it fails.
    pub fn solve(
        &self,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Timeout> {
        self.check_time()?;
        Counters::bump(&self.stats.steps);
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
        if let Some(expr) = self.reductions.lookup(self.library, dtype, target) {
            let cost = self.model.cost_of(&[&expr], self.sizes);
            consider(&mut best, Found { expr, cost });
        }
        if best.is_some() && self.first || depth == 0 {
            return Ok(best);
        }
        let limit = |best: &Option<Found>| best.as_ref().map_or(bound, |b| b.cost);
        match self.pattern(target, dtype, depth, limit(&best)) {
            Ok(Some(found)) => {
                consider(&mut best, found);
                if self.first {
                    return Ok(best);
                }
            }
            Ok(None) => {}
            Err(Timeout) => return self.at_deadline(best),
        }
        match super::select::sketches(self, target, dtype, depth, limit(&best)) {
            Ok(Some(found)) => {
                consider(&mut best, found);
                if self.first {
                    return Ok(best);
                }
            }
            Ok(None) => {}
            Err(Timeout) => return self.at_deadline(best),
        }
        match self.power(target, dtype, depth, limit(&best)) {
            Ok(Some(found)) => consider(&mut best, found),
            Ok(None) => {}
            Err(Timeout) => return self.at_deadline(best),
        }
        match self.contraction(target, dtype, depth, limit(&best)) {
            Ok(Some(found)) => {
                consider(&mut best, found);
                if self.first {
                    return Ok(best);
                }
            }
            Ok(None) => {}
            Err(Timeout) => return self.at_deadline(best),
        }
        let sketches = match self.algebraic_sketches(target, dtype) {
            Ok(s) => s,
            Err(Timeout) => return self.at_deadline(best),
        };
        let outcome = if depth >= PARALLEL_MIN_DEPTH && sketches.len() >= PARALLEL_MIN_SKETCHES {
            self.sketches_in_parallel(&sketches, target, dtype, depth, limit(&best))
        } else {
            self.sketches_in_order(&sketches, target, dtype, depth, limit(&best))
        };
        match outcome {
            Ok(Some(found)) => consider(&mut best, found),
            Ok(None) => {}
            Err(Partial(found)) => {
                if let Some(found) = found {
                    consider(&mut best, found);
                }
                return self.at_deadline(best);
            }
        }
        Ok(best)
    }

    /// What a search cut by the deadline returns: its best solution in best
    /// mode, a timeout otherwise.
    fn at_deadline(&self, best: Option<Found>) -> Result<Option<Found>, Timeout> {
        match best {
            Some(found) if !self.first => Ok(Some(found)),
            _ => Err(Timeout),
        }
    }

    /// Solves one sketch's hole within `bound`: the whole sketch's solution.
    fn solve_sketch(
        &self,
        sketch: &Sketch,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Timeout> {
        let stub = &self.library.stubs[sketch.stub_index];
        let op_cost = stub.cost + self.step_cost(sketch.op, target, dtype);
        if op_cost >= bound {
            return Ok(None);
        }
        Counters::bump(&self.stats.solved_algebraically);
        match self.solve(&sketch.hole, dtype, depth - 1, bound - op_cost)? {
            Some(h) => {
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
            None => {
                Counters::bump(&self.stats.backtracks);
                Ok(None)
            }
        }
    }

    /// The sequential loop over a level's sketches (branch and bound on the
    /// best so far; first mode stops at the first solution).
    fn sketches_in_order(
        &self,
        sketches: &[Sketch],
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Partial> {
        let mut best: Option<Found> = None;
        for sketch in sketches {
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            let found = self
                .check_time()
                .and_then(|()| self.solve_sketch(sketch, target, dtype, depth, limit));
            match found {
                Ok(Some(f)) if f.cost < limit && !self.is_banned(depth, &f.expr) => {
                    best = Some(f);
                    if self.first {
                        return Ok(best);
                    }
                }
                Ok(_) => {}
                Err(Timeout) => return Err(Partial(best)),
            }
        }
        Ok(best)
    }

    /// The same loop split over rayon workers. Workers prune with a bound
    /// they share; the result is the same as [`Self::sketches_in_order`]'s
    /// (cheapest, ties to the earliest sketch; in first mode the earliest
    /// sketch with a solution), whatever order the workers finish in.
    fn sketches_in_parallel(
        &self,
        sketches: &[Sketch],
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Partial> {
        if self.first {
            let found = sketches.par_iter().find_map_first(|sketch| {
                match self
                    .check_time()
                    .and_then(|()| self.solve_sketch(sketch, target, dtype, depth, bound))
                {
                    Ok(Some(f)) if f.cost < bound && !self.is_banned(depth, &f.expr) => Some(Ok(f)),
                    Ok(_) => None,
                    Err(Timeout) => Some(Err(Timeout)),
                }
            });
            return match found {
                Some(Ok(f)) => Ok(Some(f)),
                Some(Err(Timeout)) => Err(Partial(None)),
                None => Ok(None),
            };
        }
        let shared = SharedBound::new(bound);
        let results: Vec<Result<Option<Found>, Timeout>> = sketches
            .par_iter()
            .map(|sketch| {
                self.check_time()?;
                let limit = with_tie_slack(shared.get()).min(bound);
                let found = self.solve_sketch(sketch, target, dtype, depth, limit)?;
                Ok(found
                    .filter(|f| f.cost < bound && !self.is_banned(depth, &f.expr))
                    .inspect(|f| shared.lower_to(f.cost)))
            })
            .collect();
        let mut best: Option<Found> = None;
        let mut timed_out = false;
        for result in results {
            match result {
                Ok(Some(f)) if best.as_ref().is_none_or(|b| f.cost < b.cost) => best = Some(f),
                Ok(_) => {}
                Err(Timeout) => timed_out = true,
            }
        }
        if timed_out {
            Err(Partial(best))
        } else {
            Ok(best)
        }
    }

    fn is_banned(&self, depth: u32, expr: &Expr) -> bool {
        depth == self.top_depth && self.banned.contains(expr)
    }

    /// Sketches from the target's outermost function: invertible wrappers
    /// whose argument becomes the hole.
    fn pattern(
        &self,
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
        let step = self.step_cost(BinaryOp::Mul, target, dtype);
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
        Counters::bump(&self.stats.pattern_matched);
        match self.solve(&hole, hole_dtype, depth - 1, bound - step)? {
            Some(h) => Ok(wrap(h.expr).map(|expr| Found {
                expr,
                cost: h.cost + step,
            })),
            None => {
                Counters::bump(&self.stats.backtracks);
                Ok(None)
            }
        }
    }

    /// `op(stub, ?h)` sketches with the hole value solved exactly, ordered
    /// by the hole's Simp score (simplest first). A stub whose inputs are
    /// not all among the target's is rejected before any algebra.
    fn algebraic_sketches(&self, target: &Tensor, dtype: DType) -> Result<Vec<Sketch>, Timeout> {
        let target_vars = target.vars();
        let target_score = target.complexity();
        // Stubs are independent: their holes are computed on rayon
        // workers; the indexed collect keeps library order.
        let per_stub = |(i, stub): (usize, &super::library::Stub)| {
            let mut out = Vec::new();
            if self.check_time().is_err() {
                return Err(Timeout);
            }
            if stub.expr.dtype() != dtype || stub.depth > 1 {
                return Ok(out);
            }
            if !stub
                .vars
                .iter()
                .all(|v| target_vars.binary_search(v).is_ok())
            {
                return Ok(out);
            }
            let s = if stub.value.shape() == target.shape() {
                stub.value.clone()
            } else if stub.value.shape().is_empty() {
                let v = stub.value.elems()[0].clone();
                target.map(|_| v.clone())
            } else {
                return Ok(out);
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
            Ok(out)
        };
        let chunks: Vec<Result<Vec<_>, Timeout>> = self
            .library
            .stubs
            .par_iter()
            .enumerate()
            .map(per_stub)
            .collect();
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(chunk?);
        }
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
