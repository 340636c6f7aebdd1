//! The sketch library: typed, shape-checked TensIR stubs enumerated bottom
//! up (depth ≤ 2) over a kernel's arrays, scalars and small constants, each
//! with its symbolic value at the spec's sizes. Values are the lookup key
//! of the search's base case: a hole whose required value equals a stub's
//! value is filled by that stub (the cheapest one, when several compute
//! the same thing).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tenslift_targets::ops::{Op, SliceItem};
use tenslift_targets::{
    build, Access, BinaryOp, DType, Expr, Lit, Meta, Param, ParamKind, Program, ReduceKind, Stmt,
    UnaryOp,
};

use super::budget::{Halt, Meter, ELEMENTS_PER_UNIT};
use super::cost::cost_of;
use crate::algebra::{AtomKind, Func, Rat, Symbol, Tensor};
use crate::spec::tensir::{canonical_extrema, Executor};
use crate::spec::Sizes;

/// The name of the scratch output a stub is stored into to evaluate it.
const PROBE: &str = "__probe";

/// Evaluates stubs symbolically after a program prefix (earlier outputs'
/// stores), sharing work across stubs through one [`Executor`].
pub struct Evaluator {
    executor: Executor,
    params: Vec<Param>,
    prefix: Vec<Stmt>,
}

impl Evaluator {
    pub fn new(sizes: Sizes, params: Vec<Param>, prefix: Vec<Stmt>) -> Evaluator {
        Evaluator {
            executor: Executor::new(sizes),
            params,
            prefix,
        }
    }

    /// The value of `expr`, or `None` when it cannot be run at these sizes.
    pub fn value(&mut self, expr: &Expr) -> Option<Tensor> {
        let mut params = self.params.clone();
        params.push(Param {
            name: Arc::from(PROBE),
            kind: ParamKind::Array {
                dtype: expr.dtype(),
                shape: expr.shape().to_vec(),
                access: Access::Out,
            },
        });
        let mut body = self.prefix.clone();
        body.push(Stmt::Store {
            target: Arc::from(PROBE),
            region: None,
            value: expr.clone(),
        });
        let program = Program {
            meta: Meta::default(),
            name: Arc::from("probe"),
            params,
            ret: None,
            body,
        };
        let spec = self.executor.execute(&program).ok()?;
        spec.output(PROBE).map(|o| o.value.clone())
    }
}

/// One enumerated stub.
#[derive(Clone, Debug)]
pub struct Stub {
    pub expr: Expr,
    pub value: Tensor,
    pub cost: f64,
    pub depth: u8,
    /// The inputs its value reads (for the search's early rejection).
    pub vars: Vec<Symbol>,
}

/// All stubs, indexed by (element type, value).
pub struct Library {
    pub stubs: Vec<Stub>,
    by_value: HashMap<(DType, Tensor), usize>,
    /// Leaves reading inputs the target never mentions: never combined into
    /// stubs, but a slice of one may still be the target (a scratch array's
    /// last row).
    wide_leaves: Vec<Stub>,
    /// Whether its evaluation limit stopped the enumeration early (the
    /// stubs built until then are kept: a smaller library, not a failure).
    pub truncated: bool,
}

impl Library {
    /// The cheapest stub of element type `dtype` whose value is `value`.
    pub fn lookup(&self, dtype: DType, value: &Tensor) -> Option<&Stub> {
        self.by_value
            .get(&(dtype, value.clone()))
            .map(|&i| &self.stubs[i])
    }

    /// Every leaf: the depth-0 stubs, then the wide leaves.
    pub fn leaves_all(&self) -> impl Iterator<Item = &Stub> {
        self.stubs
            .iter()
            .filter(|s| s.depth == 0)
            .chain(&self.wide_leaves)
    }

    /// Of the leaves reading one array through different views, keeps
    /// those reading the most of the inputs the target mentions (`A[:, 0:k]`
    /// when the target reads `k` columns, not also `A[:, 0:n]` for a smaller
    /// `n`): a narrower view's stubs multiply the library for nothing the
    /// search cannot reach through the wider one's coefficients.
    fn keep_widest_views(&mut self) {
        let array_of = |s: &Stub| -> Option<String> {
            let first = s.vars.first()?.name().to_string();
            (s.depth == 0 && !s.value.shape().is_empty())
                .then_some(())
                .filter(|_| s.vars.iter().all(|v| v.name() == first))
                .map(|_| first)
        };
        let mut widest: HashMap<(String, DType), usize> = HashMap::new();
        for s in &self.stubs {
            if let Some(name) = array_of(s) {
                let w = widest.entry((name, s.expr.dtype())).or_default();
                *w = (*w).max(s.vars.len());
            }
        }
        // An array the target reads whole (the output's own old value) keeps
        // every view: the store's region is one of them.
        let whole: HashSet<(String, DType)> = self
            .stubs
            .iter()
            .filter(|s| matches!(s.expr.op(), Op::Var(_)))
            .filter_map(|s| array_of(s).map(|name| (name, s.expr.dtype())))
            .collect();
        let is_widest =
            |s: &Stub, name: String| widest.get(&(name, s.expr.dtype())) == Some(&s.vars.len());
        // Extents the other arrays' widest reads span: a view of the
        // whole-read array with one of them is a candidate store region.
        let spans: Vec<(String, usize)> = self
            .stubs
            .iter()
            .filter_map(|s| {
                let name = array_of(s)?;
                is_widest(s, name.clone()).then_some((name, s.value.shape().to_vec()))
            })
            .flat_map(|(name, shape)| shape.into_iter().map(move |e| (name.clone(), e)))
            .collect();
        let kept: Vec<Stub> = self
            .stubs
            .drain(..)
            .filter(|s| {
                array_of(s).is_none_or(|name| {
                    if whole.contains(&(name.clone(), s.expr.dtype())) {
                        matches!(s.expr.op(), Op::Var(_))
                            || s.value.shape().last().is_some_and(|c| {
                                spans
                                    .iter()
                                    .any(|(other, last)| *other != name && last == c)
                            })
                    } else {
                        is_widest(s, name)
                    }
                })
            })
            .collect();
        self.by_value.clear();
        for s in kept {
            self.insert(s);
        }
    }

    fn insert(&mut self, stub: Stub) -> bool {
        let key = (stub.expr.dtype(), stub.value.clone());
        match self.by_value.get(&key) {
            Some(&i) if self.stubs[i].cost <= stub.cost => false,
            Some(&i) => {
                self.stubs[i] = stub;
                true
            }
            None => {
                self.by_value.insert(key, self.stubs.len());
                self.stubs.push(stub);
                true
            }
        }
    }

    /// Enumerates stubs over `leaves` up to depth 2, each candidate
    /// evaluated counting one unit of work on `meter`: at its limit the
    /// enumeration stops with the stubs so far (`truncated`; an error only
    /// when not even a leaf was evaluated, or at the user's deadline), as
    /// it does after `limit` stubs. Only stubs whose inputs are among the
    /// target's are kept.
    pub fn build(
        evaluator: &mut Evaluator,
        leaves: Vec<Expr>,
        sizes: &Sizes,
        meter: &Meter,
        limit: usize,
        target: &Tensor,
    ) -> Result<Library, Halt> {
        let mut builder = Builder {
            lib: Library {
                stubs: Vec::new(),
                by_value: HashMap::new(),
                wide_leaves: Vec::new(),
                truncated: false,
            },
            evaluator,
            sizes,
            meter,
            limit,
            allowed: target.vars(),
            traits: TargetTraits::of(target),
        };
        match builder.fill(&leaves) {
            Ok(()) => Ok(builder.lib),
            Err(Halt::Budget) if !builder.lib.stubs.is_empty() => {
                builder.lib.truncated = true;
                Ok(builder.lib)
            }
            Err(halt) => Err(halt),
        }
    }
}

/// The state of one library's enumeration.
struct Builder<'a> {
    lib: Library,
    evaluator: &'a mut Evaluator,
    sizes: &'a Sizes,
    meter: &'a Meter,
    limit: usize,
    /// The target's inputs (sorted).
    allowed: Vec<Symbol>,
    traits: TargetTraits,
}

impl Builder<'_> {
    /// Evaluates `e` and keeps it as a stub of `depth` when it computes
    /// something new from the target's inputs.
    fn add(&mut self, e: Expr, depth: u8) -> Result<(), Halt> {
        if self.lib.stubs.len() >= self.limit || !self.traits.admits(&e) {
            return Ok(());
        }
        self.meter.charge(1)?;
        let Some(value) = self.evaluator.value(&e) else {
            return Ok(());
        };
        // Selects that are extrema compare as `max`/`min`, as the
        // acceptance test compares them.
        let value = value.map(canonical_extrema);
        // A large value costs more than one unit to compute and to keep
        // (fixed extents of a thousand elements make outer products of a
        // million): charged by its size, so such a library stops at its
        // limit in the same bounded work as a small one.
        self.meter.charge(value.len() as u64 / ELEMENTS_PER_UNIT)?;
        // Stubs whose value is all zeros or unchanged carry nothing.
        if value.elems().iter().all(|x| x.is_zero()) && depth > 0 {
            return Ok(());
        }
        let vars = value.vars();
        let cost = cost_of(&[&e], self.sizes);
        let stub = Stub {
            expr: e,
            value,
            cost,
            depth,
            vars,
        };
        // A stub reading an input the target never mentions cannot
        // be part of it (exact algebra: nothing cancels it).
        if !stub
            .vars
            .iter()
            .all(|v| self.allowed.binary_search(v).is_ok())
        {
            if depth == 0 {
                self.lib.wide_leaves.push(stub);
            }
            return Ok(());
        }
        self.lib.insert(stub);
        Ok(())
    }

    fn fill(&mut self, leaves: &[Expr]) -> Result<(), Halt> {
        for leaf in leaves {
            self.add(leaf.clone(), 0)?;
        }
        self.lib.keep_widest_views();
        self.add_size_roots()?;
        self.add_size_products()?;
        let level0: Vec<Expr> = self.lib.stubs.iter().map(|s| s.expr.clone()).collect();
        // Dividing by a polynomial makes reciprocal atoms, slow to normalise
        // and rare in kernels: divisors are leaves whose elements are
        // monomials (not an earlier output holding a sum).
        let divisors: HashSet<Expr> = self
            .lib
            .stubs
            .iter()
            .filter(|s| s.value.elems().iter().all(|e| e.len() <= 1))
            .map(|s| s.expr.clone())
            .collect();
        for e in &level0 {
            for u in unary_stubs(e) {
                self.add(u, 1)?;
            }
        }
        for a in &level0 {
            for b in &level0 {
                for c in binary_stubs(a, b, &divisors) {
                    self.add(c, 1)?;
                }
            }
        }
        self.fill_depth_two(&level0, &divisors)
    }

    /// `x / sqrtf(n)` scales by a function of a size: the root is a
    /// number like the size itself, so it joins the leaves (and the
    /// monomial divisors) instead of costing a level.
    fn add_size_roots(&mut self) -> Result<(), Halt> {
        if !self.traits.sqrt_of_number {
            return Ok(());
        }
        let roots: Vec<Expr> = self
            .lib
            .stubs
            .iter()
            .filter(|s| s.vars.is_empty() && s.expr.dtype().is_float())
            .filter(|s| reads_a_size(&s.expr))
            .filter_map(|s| Expr::unary(UnaryOp::Sqrt, s.expr.clone()).ok())
            .collect();
        for root in roots {
            self.add(root, 0)?;
        }
        Ok(())
    }

    /// `mean[i] *= 1./(batch*spatial)` scales by a product of two sizes
    /// (`1./(batch*spatial - 1)` by one less):
    /// where the target has its reciprocal as a coefficient at the spec's
    /// sizes, the product joins the leaves, like
    /// a root of a size. Only then: products of sizes are otherwise a
    /// flood of numbers.
    fn add_size_products(&mut self) -> Result<(), Halt> {
        if !self.traits.division {
            return Ok(());
        }
        let numbers: Vec<(Expr, Rat)> = self
            .lib
            .stubs
            .iter()
            .filter(|s| s.vars.is_empty() && s.expr.dtype().is_float())
            .filter(|s| is_size_cast(&s.expr))
            .filter_map(|s| Some((s.expr.clone(), s.value.elems().first()?.as_constant()?)))
            .collect();
        // Only as a divisor: a whole-number coefficient equal to some
        // product of sizes is mostly a coincidence of the traced sizes.
        let wanted = |v: &Rat| {
            v.recip()
                .is_some_and(|r| !r.is_integer() && self.traits.coefficients.contains(&r))
        };
        let mut products = Vec::new();
        for (i, (a, va)) in numbers.iter().enumerate() {
            for (b, vb) in &numbers[i..] {
                let p = va * vb;
                let Ok(product) = Expr::binary(BinaryOp::Mul, a.clone(), b.clone()) else {
                    continue;
                };
                // `batch * spatial - 1`: the unbiased variance's divisor.
                let one = Expr::lit(Lit::float(1.0, product.dtype()));
                if wanted(&(&p - &Rat::ONE)) {
                    products.extend(Expr::binary(BinaryOp::Sub, product.clone(), one).ok());
                }
                if wanted(&p) {
                    products.push(product);
                }
            }
        }
        for product in products {
            self.add(product, 0)?;
        }
        Ok(())
    }

    /// Depth-2 stubs: unary operations of the new depth-1 stubs, and
    /// binary operations of a depth-1 stub with a leaf.
    fn fill_depth_two(&mut self, level0: &[Expr], divisors: &HashSet<Expr>) -> Result<(), Halt> {
        let level1: Vec<Expr> = self.lib.stubs.iter().map(|s| s.expr.clone()).collect();
        // Stubs reading no input are numbers (sizes, constants); numbers
        // built from sizes two levels deep only flood the library (a
        // constant like 5 = 2 + 2 + 1 is still built from literals).
        let numbers: HashSet<Expr> = self
            .lib
            .stubs
            .iter()
            .filter(|s| s.vars.is_empty())
            .map(|s| s.expr.clone())
            .collect();
        for e in level1
            .iter()
            .filter(|e| !level0.contains(e) && !numbers.contains(*e))
        {
            for u in unary_stubs(e) {
                self.add(u, 2)?;
            }
        }
        for a in &level1 {
            for b in level0 {
                let sizes_only = numbers.contains(a)
                    && numbers.contains(b)
                    && (reads_a_size(a) || reads_a_size(b));
                if level0.contains(a) || sizes_only {
                    continue;
                }
                for c in binary_stubs(a, b, divisors)
                    .into_iter()
                    .chain(binary_stubs(b, a, divisors))
                {
                    // Products of products are contraction sketches, solved
                    // by coefficient extraction instead of enumerated —
                    // except over whole arrays, which region sketches need.
                    if is_contraction(&c) && !c.args().iter().all(is_whole_array) {
                        continue;
                    }
                    self.add(c, 2)?;
                }
            }
        }
        Ok(())
    }
}

/// Most distinct coefficient magnitudes [`TargetTraits`] keeps.
const MAX_COEFFICIENTS: usize = 64;

/// The functions a target's elements apply. A stub applying one the target
/// never does cannot be part of it (exact algebra: no cancellation brings a
/// `sqrt` or a `max` back out), so it is not evaluated at all.
#[derive(Default)]
struct TargetTraits {
    sqrt: bool,
    /// Whether some element takes the root of a number (`sqrt(5)` from
    /// `sqrtf(head_size)` at the spec's sizes).
    sqrt_of_number: bool,
    exp: bool,
    abs: bool,
    extrema: bool,
    division: bool,
    /// The magnitudes of the target's coefficients (`1/15` in
    /// `x[0,0,0]/15 + ...`).
    coefficients: HashSet<Rat>,
}

impl TargetTraits {
    fn of(target: &Tensor) -> TargetTraits {
        let mut traits = TargetTraits::default();
        for e in target.elems() {
            traits.visit(e);
        }
        traits
    }

    fn visit(&mut self, e: &crate::algebra::Expr) {
        for term in e.terms() {
            if self.coefficients.len() < MAX_COEFFICIENTS {
                self.coefficients.insert(term.coeff.abs());
            }
            if !term.coeff.is_integer() {
                self.division = true;
            }
            for (atom, exp) in term.mono.factors() {
                if *exp < 0 {
                    self.division = true;
                }
                match atom.kind() {
                    AtomKind::Sym { .. } => {}
                    AtomKind::Recip(q) => {
                        self.division = true;
                        self.visit(q);
                    }
                    AtomKind::App { func, args } => {
                        match func {
                            Func::Sqrt => {
                                self.sqrt = true;
                                self.sqrt_of_number |= args.iter().all(|a| a.vars().is_empty());
                            }
                            Func::Exp => self.exp = true,
                            Func::Abs => self.abs = true,
                            Func::Max | Func::Min | Func::Select | Func::Lt0 => self.extrema = true,
                            Func::TruncDiv | Func::Pow => self.division = true,
                            _ => {}
                        }
                        for a in args.iter() {
                            self.visit(a);
                        }
                    }
                }
            }
        }
    }

    /// Whether the outermost operation of `e` may occur in the target.
    fn admits(&self, e: &Expr) -> bool {
        match e.op() {
            Op::Unary(UnaryOp::Sqrt) => self.sqrt,
            Op::Unary(UnaryOp::Exp) => self.exp,
            Op::Unary(UnaryOp::Abs) => self.abs,
            Op::Binary(BinaryOp::Maximum | BinaryOp::Minimum) => self.extrema,
            Op::Reduce {
                kind: ReduceKind::Max | ReduceKind::Min,
                ..
            } => self.extrema,
            // Dividing by a literal only makes a rational coefficient
            // (`1.0 / 2.0` builds constants like 2.5).
            Op::Binary(BinaryOp::Div | BinaryOp::TruncDiv) => {
                self.division || matches!(e.args().get(1).map(Expr::op), Some(Op::Lit(_)))
            }
            _ => true,
        }
    }
}

/// Whether `e` is a size parameter cast to an element type.
fn is_size_cast(e: &Expr) -> bool {
    matches!(e.op(), Op::Cast(_)) && matches!(e.args().first().map(Expr::op), Some(Op::Var(_)))
}

/// Whether `e` reads a size parameter (through a cast).
fn reads_a_size(e: &Expr) -> bool {
    is_size_cast(e) || e.args().iter().any(reads_a_size)
}

/// A whole array, possibly transposed, masked to a triangle or made
/// symmetric from one: products of these are few (no views multiply them)
/// and region sketches need them as stubs, since they scan the library on
/// one triangle instead of solving contraction holes.
fn is_whole_array(e: &Expr) -> bool {
    match e.op() {
        Op::Var(_) => true,
        Op::Transpose(_) | Op::Tril(_) | Op::Triu(_) | Op::Binary(BinaryOp::Add) => {
            e.args().iter().all(is_whole_array)
        }
        _ => false,
    }
}

/// Whether `e` is a contraction (matmul, outer product, einsum).
fn is_contraction(e: &Expr) -> bool {
    matches!(
        e.op(),
        Op::Matmul | Op::Outer | Op::Einsum(_) | Op::Tensordot { .. }
    )
}

/// One-operand stubs: element-wise functions, reductions, transposes,
/// triangular masks.
fn unary_stubs(e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    let rank = e.shape().len();
    if e.dtype().is_float() {
        for op in [UnaryOp::Neg, UnaryOp::Sqrt, UnaryOp::Exp, UnaryOp::Abs] {
            out.extend(Expr::unary(op, e.clone()).ok());
        }
    }
    if e.dtype().is_numeric() && rank > 0 {
        for kind in [ReduceKind::Sum, ReduceKind::Max] {
            for axis in 0..rank {
                out.extend(Expr::reduce(kind, e.clone(), vec![axis]).ok());
            }
            if rank > 1 {
                out.extend(Expr::reduce(kind, e.clone(), (0..rank).collect()).ok());
            }
        }
    }
    if rank == 2 {
        out.extend(build::transpose(e.clone(), &[1, 0]).ok());
        if e.shape()[0] == e.shape()[1] {
            out.extend(build::triu(e.clone(), 0).ok());
            out.extend(build::tril(e.clone(), 0).ok());
            out.extend(build::diag(e.clone()).ok());
        }
    }
    out
}

/// Two-operand stubs: element-wise arithmetic and contractions (the type
/// checker refuses what does not fit).
fn binary_stubs(a: &Expr, b: &Expr, monomial_divisors: &HashSet<Expr>) -> Vec<Expr> {
    let mut out = Vec::new();
    if a.dtype() != b.dtype() || !a.dtype().is_numeric() {
        return out;
    }
    let both_scalars = a.shape().is_empty() && b.shape().is_empty();
    // Commutative operations once per unordered pair.
    let ordered = a.hash_value() <= b.hash_value();
    let mut ops = vec![BinaryOp::Sub];
    if ordered {
        ops.extend([
            BinaryOp::Add,
            BinaryOp::Mul,
            BinaryOp::Maximum,
            BinaryOp::Minimum,
        ]);
    }
    if monomial_divisors.contains(b) {
        ops.push(if a.dtype().is_float() {
            BinaryOp::Div
        } else {
            BinaryOp::TruncDiv
        });
    }
    for op in ops {
        out.extend(Expr::binary(op, a.clone(), b.clone()).ok());
    }
    if !both_scalars && a.dtype().is_float() {
        out.extend(build::matmul(a.clone(), b.clone()).ok());
        if a.shape().len() == 1 && b.shape().len() == 1 {
            out.extend(build::outer(a.clone(), b.clone()).ok());
        }
    }
    out
}

/// The leaves of a search: every readable array (through each view),
/// scalar parameter, size (as the element types in use), narrow integers
/// widened to `i32` as C promotes them, and small constants. For a float
/// `target` type, inputs of another type come converted to it as well (C's
/// usual arithmetic conversions: `int` data summed in a `float`, `float`
/// data accumulated in a `double`).
pub fn leaves(
    params: &[Param],
    views: &dyn Fn(&str) -> Vec<Option<Vec<SliceItem>>>,
    written: &[String],
    target: DType,
) -> Vec<Expr> {
    let converts = |d: DType| target.is_float() && d != target && (d.is_float() || d.is_int());
    let mut out = Vec::new();
    let mut dtypes = Vec::new();
    for p in params {
        let readable = match &p.kind {
            ParamKind::Array { access, .. } => {
                *access != Access::Out || written.iter().any(|w| **w == *p.name)
            }
            _ => true,
        };
        if !readable {
            continue;
        }
        let var = Expr::var(&p.name, p.ty());
        match &p.kind {
            ParamKind::Size => continue,
            ParamKind::Scalar(d) => {
                dtypes.push(*d);
                if converts(*d) {
                    out.extend(build::cast(var.clone(), target).ok());
                }
                out.push(var);
            }
            ParamKind::Array { dtype, .. } => {
                dtypes.push(*dtype);
                for view in views(&p.name) {
                    let v = match view {
                        None => var.clone(),
                        Some(items) => match build::slice(var.clone(), items) {
                            Ok(v) => v,
                            Err(_) => continue,
                        },
                    };
                    if matches!(dtype, DType::U8 | DType::I8 | DType::U16 | DType::I16) {
                        out.extend(build::cast(v.clone(), DType::I32).ok());
                    }
                    if converts(*dtype) {
                        out.extend(build::cast(v.clone(), target).ok());
                    }
                    out.push(v);
                }
            }
        }
    }
    out.extend(constant_leaves(params, dtypes, target));
    out
}

/// Small constants of every element type in use (and `i32`, C's promotion
/// of narrow integers), and sizes converted to the float types: a float
/// target over other types' inputs still gets its constants and sizes.
fn constant_leaves(params: &[Param], mut dtypes: Vec<DType>, target: DType) -> Vec<Expr> {
    if target.is_float() && !dtypes.is_empty() && !dtypes.contains(&target) {
        dtypes.push(target);
    }
    dtypes.sort_by_key(|d| d.name());
    dtypes.dedup();
    if dtypes
        .iter()
        .any(|d| matches!(d, DType::U8 | DType::I8 | DType::U16 | DType::I16))
    {
        dtypes.push(DType::I32);
    }
    let mut out = Vec::new();
    for d in dtypes {
        let constants: &[f64] = if d.is_float() {
            &[1.0, 2.0]
        } else if d == DType::I32 {
            &[1.0, 255.0]
        } else {
            &[]
        };
        for &c in constants {
            let lit = if d.is_float() {
                Lit::float(c, d)
            } else {
                Lit::int(c as i64, d)
            };
            out.push(Expr::lit(lit));
        }
        if d.is_float() {
            for p in params.iter().filter(|p| matches!(p.kind, ParamKind::Size)) {
                out.extend(build::cast(Expr::var(&p.name, p.ty()), d).ok());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::Value;
    use std::time::{Duration, Instant};
    use tenslift_targets::Dim;

    fn array(name: &str, shape: Vec<Dim>) -> Param {
        Param {
            name: Arc::from(name),
            kind: ParamKind::Array {
                dtype: DType::F32,
                shape,
                access: Access::In,
            },
        }
    }

    fn size(name: &str) -> Param {
        Param {
            name: Arc::from(name),
            kind: ParamKind::Size,
        }
    }

    fn library_for(target: &Tensor, params: &[Param], sizes: &Sizes) -> Library {
        let mut evaluator = Evaluator::new(sizes.clone(), params.to_vec(), Vec::new());
        let leaves = leaves(params, &|_| vec![None], &[], DType::F32);
        let meter = Meter::new(u64::MAX, Instant::now() + Duration::from_secs(600));
        Library::build(&mut evaluator, leaves, sizes, &meter, 100_000, target)
            .unwrap_or_else(|_| panic!("library out of work"))
    }

    /// `x[i] / sqrtf(n)`: the root of a size is a leaf, so the scaled
    /// vector is a stub (one level), not out of reach.
    #[test]
    fn a_vector_scaled_by_the_root_of_a_size_is_a_stub() {
        let params = vec![size("n"), size("m"), array("x", vec![Dim::sym("n")])];
        let sizes: Sizes = [("n".to_string(), 3), ("m".to_string(), 4)].into();
        let root = Value::int(3).sqrt();
        let target =
            Tensor::of_symbols("x", &[3], false).map(|e| e.div(&root).expect("a nonzero root"));
        let library = library_for(&target, &params, &sizes);
        let stub = library.lookup(DType::F32, &target).expect("a stub");
        assert_eq!(
            tenslift_targets::print_expr(&stub.expr),
            "div(x, sqrt(cast(n, f32)))"
        );
    }

    /// A target without roots of numbers gets no root leaves.
    #[test]
    fn roots_of_sizes_stay_out_of_a_library_without_them() {
        let params = vec![size("n"), array("x", vec![Dim::sym("n")])];
        let sizes: Sizes = [("n".to_string(), 3)].into();
        let target =
            Tensor::of_symbols("x", &[3], false).map(|e| e.div(&Value::int(3)).expect("nonzero"));
        let library = library_for(&target, &params, &sizes);
        assert!(library
            .leaves_all()
            .all(|s| !matches!(s.expr.op(), Op::Unary(UnaryOp::Sqrt))));
    }
}
