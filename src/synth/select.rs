//! Select and region sketches (TENSORIZE's `where` sketches with density
//! accounting), tried by the search beside its arithmetic sketches:
//!
//! * a *data-dependent select*: every element of the target is
//!   `select(c, t, e)`; the sketch `where(cond(?c), ?t, ?e)` splits the
//!   problem into the condition's compared value and the two branch values,
//!   each solved as its own subproblem;
//! * a *static region*: the elements of a square target on and below a
//!   diagonal follow one formula and the rest another (PolyBench's
//!   `j <= i` updates); the sketch `tril(?x, k) + triu(?y, k + 1)` solves
//!   each hole only on its own triangle (its density), the other
//!   triangle's values of the hole being free;
//! * C integer division and remainder by a tensor or a constant
//!   (`tdiv(?n, ?d)`, `rem(?n, ?d)`), which the branches of the blend
//!   kernels compute;
//! * an application split `?p ± ?x`: every element is a polynomial plus
//!   one application of one opaque function (`255 - tdiv(255 - b, a)`);
//!   the application and the rest are separate subproblems (the
//!   arithmetic sketches cannot take it apart, as no stub alone lowers the
//!   number of inputs the hole reads);
//! * triangular operands: a square input read only on or below (above) a
//!   diagonal enters the library as `tril(A, k)` (`triu(A, k)`) and, read
//!   on a whole triangle with its diagonal, as the symmetric matrix that
//!   triangle stores (PolyBench's `symm`, `trmm`);
//! * an integer product `g · stub · ?q`: an integer polynomial with a
//!   common integer factor `g` and a stub dividing it exactly
//!   (`2*(255 - a)*(255 - b)`); the search's own product sketch is for
//!   floats only, as integer quotients are rarely polynomials;
//! * a constant fill (`x[i] = 1`): a literal of the target's type.

use std::time::Instant;

use tenslift_targets::{build, BinaryOp, DType, Expr, Lit, Op, Param, ParamKind};

use super::contraction::Peel;
use super::search::{Found, Search, Timeout};
use crate::algebra::{Expr as Value, Func, Rat, Tensor};
use crate::spec::tensir::float_literal_value;

/// Candidates a masked (region) hole tries per level, simplest first.
const MASKED_CANDIDATES_PER_LEVEL: usize = 64;

/// Depth of the masked search below a region sketch.
const MASKED_DEPTH: u32 = 2;

/// The per-element cost of one element-wise step, as the search counts it.
fn step_cost(target: &Tensor) -> f64 {
    target.len().max(1) as f64 * 2.0
}

/// Every sketch of this module that applies to `target`, the cheapest
/// solution below `bound`.
pub fn sketches(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
    if depth == 0 {
        return Ok(None);
    }
    let mut best: Option<Found> = None;
    let consider = |best: &mut Option<Found>, found: Option<Found>| {
        if let Some(f) = found {
            if f.cost < best.as_ref().map_or(bound, |b| b.cost) {
                *best = Some(f);
            }
        }
    };
    if let Some(found) = constant_fill(target, dtype) {
        consider(&mut best, Some(found));
        return Ok(best);
    }
    let limit = |best: &Option<Found>| best.as_ref().map_or(bound, |b| b.cost);
    let found = where_sketch(search, target, dtype, depth, limit(&best))?;
    consider(&mut best, found);
    let found = division_sketch(search, target, dtype, depth, limit(&best))?;
    consider(&mut best, found);
    let found = application_split(search, target, dtype, depth, limit(&best))?;
    consider(&mut best, found);
    let found = integer_product(search, target, dtype, depth, limit(&best))?;
    consider(&mut best, found);
    // A region is a property of a whole output, not of the holes below it.
    if depth == search.top_depth {
        let found = region_sketch(search, target, dtype, limit(&best))?;
        consider(&mut best, found);
    }
    Ok(best)
}

/// The literal of `dtype` equal to `value`, when it has one.
fn literal(value: &Rat, dtype: DType) -> Option<Expr> {
    if dtype.is_int() {
        // Only values the type holds: a literal never wraps.
        if value.wrap_int(dtype.bits(), dtype.is_signed_int()).as_ref() != Some(value) {
            return None;
        }
        Some(Expr::lit(Lit::int(value.to_i64()?, dtype)))
    } else if dtype.is_float() {
        let v = value.to_f64();
        // Only constants the literal denotes exactly: the spec compares
        // exactly, and reads a literal as the shortest decimal that
        // round-trips (`0.1` is 1/10, as in the C source) or as the binary
        // value itself.
        let lit = Lit::float(v, dtype);
        let exact = Rat::from_f64(v).as_ref() == Some(value)
            || float_literal_value(v, dtype).as_ref() == Some(value);
        exact.then(|| Expr::lit(lit))
    } else {
        None
    }
}

/// Whether every element is the same expression.
fn uniform(t: &Tensor) -> Option<&Value> {
    let first = t.elems().first()?;
    t.elems().iter().all(|e| e == first).then_some(first)
}

/// A target whose elements are all one constant: that literal.
fn constant_fill(target: &Tensor, dtype: DType) -> Option<Found> {
    let c = uniform(target)?.as_constant()?;
    Some(Found {
        expr: literal(&c, dtype)?,
        cost: 1.0,
    })
}

/// The arguments of `f` in every element, when every element is one
/// application of `f`.
fn args_of_all(target: &Tensor, f: Func) -> Option<Vec<Vec<Value>>> {
    target
        .elems()
        .iter()
        .map(|e| {
            let (g, args) = e.as_atom()?.as_app()?;
            (g == f).then(|| args.to_vec())
        })
        .collect()
}

/// The tensor of argument `i` of each element's application.
fn column(target: &Tensor, args: &[Vec<Value>], i: usize) -> Option<Tensor> {
    let elems: Option<Vec<Value>> = args.iter().map(|a| a.get(i).cloned()).collect();
    Tensor::new(target.shape().to_vec(), elems?).ok()
}

/// The constant term of a polynomial value.
fn constant_term(v: &Value) -> Rat {
    v.terms()
        .iter()
        .find(|t| t.mono.is_one())
        .map_or(Rat::from(0), |t| t.coeff.clone())
}

/// How a select's condition tests its compared value `d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Test {
    /// `lt0(d)`: `d < 0`.
    Negative,
    /// A bare value: `d ≠ 0`.
    NonZero,
}

/// The element types a condition's compared value may be computed in: C
/// compares narrow integers after promoting them to `int`.
fn compare_dtypes(dtype: DType) -> Vec<DType> {
    if dtype.is_int() && dtype != DType::I32 {
        vec![DType::I32, dtype]
    } else {
        vec![dtype]
    }
}

/// Solves a value either exactly (a literal when uniform and constant) or
/// through the search.
fn solve_value(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
    if let Some(found) = constant_fill(target, dtype) {
        return Ok((found.cost < bound).then_some(found));
    }
    search.solve(target, dtype, depth, bound)
}

/// `where(test(?d), ?t, ?e)` for a target whose every element is a select.
/// The compared value is solved without its shared constant term, which
/// becomes the comparison's literal (`lt(x, 128)` rather than
/// `lt(x - 128, 0)`). The branches keep the sketch's depth: each is a
/// strictly smaller subproblem, not a nesting.
fn where_sketch(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
    let Some(args) = args_of_all(target, Func::Select) else {
        return Ok(None);
    };
    let (Some(conds), Some(thens), Some(elses)) = (
        column(target, &args, 0),
        column(target, &args, 1),
        column(target, &args, 2),
    ) else {
        return Ok(None);
    };
    let negative: Option<Vec<Value>> = conds
        .elems()
        .iter()
        .map(|c| match c.as_atom().and_then(|a| a.as_app()) {
            Some((Func::Lt0, [d])) => Some(d.clone()),
            _ => None,
        })
        .collect();
    let (test, compared) = match negative {
        Some(ds) => (Test::Negative, ds),
        None => {
            let any_predicate = conds.elems().iter().any(|c| {
                c.as_atom()
                    .and_then(|a| a.as_app())
                    .is_some_and(|(f, _)| f.is_predicate())
            });
            if any_predicate {
                return Ok(None);
            }
            (Test::NonZero, conds.elems().to_vec())
        }
    };
    // The constant term shared by every compared value moves into the
    // comparison. An empty target (a loop that runs zero times at these
    // sizes) has nothing to compare.
    let Some(first) = compared.first() else {
        return Ok(None);
    };
    let offset = constant_term(first);
    let shared = compared.iter().all(|d| constant_term(d) == offset);
    let offset = if shared { offset } else { Rat::from(0) };
    let shifted: Vec<Value> = compared
        .iter()
        .map(|d| d.sub(&Value::constant(offset.clone())))
        .collect();
    let Ok(shifted) = Tensor::new(target.shape().to_vec(), shifted) else {
        return Ok(None);
    };
    let step = step_cost(target);
    if step >= bound {
        return Ok(None);
    }
    let mut condition = None;
    for cmp_dtype in compare_dtypes(dtype) {
        let Some(rhs) = literal(&-&offset, cmp_dtype) else {
            continue;
        };
        if let Some(found) = solve_value(search, &shifted, cmp_dtype, depth, bound - step)? {
            let cond = match test {
                Test::Negative => build::lt(found.expr.clone(), rhs),
                Test::NonZero => build::ne(found.expr.clone(), rhs),
            };
            if let Ok(cond) = cond {
                condition = Some((cond, found.cost + step));
                break;
            }
        }
    }
    let Some((cond, cond_cost)) = condition else {
        search.stats.backtrack();
        return Ok(None);
    };
    let Some(then) = solve_value(search, &thens, dtype, depth, bound - cond_cost - step)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let rest = bound - cond_cost - step - then.cost;
    let Some(otherwise) = solve_value(search, &elses, dtype, depth, rest)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    search.stats.pattern_match();
    let (then_expr, then_guards) = guard_divisions(&then.expr);
    let (else_expr, else_guards) = guard_divisions(&otherwise.expr);
    let guard_cost = (then_guards + else_guards) as f64 * step;
    Ok(build::select(cond, then_expr, else_expr)
        .ok()
        .map(|expr| Found {
            expr,
            cost: cond_cost + step + then.cost + otherwise.cost + guard_cost,
        }))
}

/// `tdiv(?n, ?d)` / `rem(?n, ?d)` for integer targets whose every element
/// is that C operation; a divisor shared by all elements becomes a
/// literal. (Division by one shared constant is also the search's own
/// pattern; it is left to it.)
fn division_sketch(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
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
fn guard_divisions(e: &Expr) -> (Expr, usize) {
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

/// `?p + c·?x` for targets whose every element is a polynomial plus one
/// term `c·f(…)` (the same function `f` and coefficient `c` throughout).
fn application_split(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
    let mut shared: Option<(Func, Rat)> = None;
    let mut apps = Vec::with_capacity(target.len());
    let mut rests = Vec::with_capacity(target.len());
    for e in target.elems() {
        if e.len() < 2 {
            return Ok(None);
        }
        let mut found = None;
        for t in e.terms() {
            let [(atom, 1)] = t.mono.factors() else {
                continue;
            };
            let Some((f, _)) = atom.as_app() else {
                continue;
            };
            if found.is_some() {
                return Ok(None);
            }
            found = Some((f, t.coeff.clone(), Value::atom(atom.clone())));
        }
        let Some((f, c, app)) = found else {
            return Ok(None);
        };
        match &shared {
            None => shared = Some((f, c.clone())),
            Some((g, d)) if *g == f && *d == c => {}
            Some(_) => return Ok(None),
        }
        rests.push(e.sub(&app.scale(&c)));
        apps.push(app);
    }
    let Some((_, coeff)) = shared else {
        return Ok(None);
    };
    let (Ok(apps), Ok(rests)) = (
        Tensor::new(target.shape().to_vec(), apps),
        Tensor::new(target.shape().to_vec(), rests),
    ) else {
        return Ok(None);
    };
    let step = step_cost(target);
    if step >= bound {
        return Ok(None);
    }
    // Like a where's branches, both parts are strictly smaller problems
    // (fewer terms), not a nesting: they keep the depth.
    let Some(rest) = solve_value(search, &rests, dtype, depth, bound - step)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let Some(app) = search.solve(&apps, dtype, depth, bound - step - rest.cost)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let expr = if coeff.is_one() {
        build::add(rest.expr, app.expr)
    } else if coeff == Rat::from(-1) {
        build::sub(rest.expr, app.expr)
    } else {
        let Some(c) = literal(&coeff, dtype) else {
            return Ok(None);
        };
        build::mul(c, app.expr).and_then(|scaled| build::add(rest.expr, scaled))
    };
    search.stats.pattern_match();
    Ok(expr.ok().map(|expr| Found {
        expr,
        cost: step + rest.cost + app.cost,
    }))
}

/// Stub divisors an integer product sketch tries, simplest quotient first.
const PRODUCT_CANDIDATES: usize = 16;

/// The greatest common divisor of the integer coefficients of every term
/// of every element (positive), when all coefficients are integers.
fn integer_content(target: &Tensor) -> Option<i64> {
    let mut g: i64 = 0;
    for e in target.elems() {
        for t in e.terms() {
            let c = t.coeff.to_i64()?;
            g = num_integer::Integer::gcd(&g, &c);
        }
    }
    (g > 0).then_some(g)
}

/// `g * (stub * ?q)` for an integer target of degree ≥ 2 whose elements
/// share the integer factor `g` and are divided exactly, as polynomials,
/// by a library stub's elements.
fn integer_product(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
    if !dtype.is_int() {
        return Ok(None);
    }
    let nonlinear = target
        .elems()
        .iter()
        .all(|e| e.terms().iter().any(|t| t.mono.degree() >= 2));
    if !nonlinear {
        return Ok(None);
    }
    let Some(g) = integer_content(target) else {
        return Ok(None);
    };
    let Some(g_rat) = Rat::new(1, g) else {
        return Ok(None);
    };
    let reduced = target.map(|e| e.scale(&g_rat));
    let target_vars = reduced.vars();
    let mut candidates = Vec::new();
    for (index, stub) in search.library.stubs.iter().enumerate() {
        if Instant::now() > search.deadline {
            return Err(Timeout);
        }
        if stub.expr.dtype() != dtype || stub.depth > 1 || stub.value.shape() != target.shape() {
            continue;
        }
        if !stub
            .vars
            .iter()
            .all(|v| target_vars.binary_search(v).is_ok())
        {
            continue;
        }
        let quotient: Option<Vec<Value>> = reduced
            .elems()
            .iter()
            .zip(stub.value.elems())
            .map(|(t, s)| {
                if s.as_constant().is_some() {
                    return None;
                }
                let q = t.divide_polynomial(s)?;
                q.terms()
                    .iter()
                    .all(|t| t.coeff.is_integer() && t.mono.factors().iter().all(|(_, e)| *e > 0))
                    .then_some(q)
            })
            .collect();
        if let Some(q) = quotient.and_then(|q| Tensor::new(target.shape().to_vec(), q).ok()) {
            candidates.push((q.complexity(), q, index));
        }
    }
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
    candidates.truncate(PRODUCT_CANDIDATES);
    let step = step_cost(target) * if g > 1 { 2.0 } else { 1.0 };
    let mut best: Option<Found> = None;
    for (_, quotient, index) in candidates {
        let stub = &search.library.stubs[index];
        let (stub_expr, stub_cost) = (stub.expr.clone(), stub.cost);
        let limit = best.as_ref().map_or(bound, |b| b.cost) - step - stub_cost;
        if limit <= 0.0 {
            continue;
        }
        let Some(q) = solve_value(search, &quotient, dtype, depth - 1, limit)? else {
            search.stats.backtrack();
            continue;
        };
        let product = build::mul(stub_expr, q.expr);
        let expr = if g > 1 {
            product.and_then(|p| build::mul(Expr::lit(Lit::int(g, dtype)), p))
        } else {
            product
        };
        if let Ok(expr) = expr {
            search.stats.pattern_match();
            best = Some(Found {
                expr,
                cost: step + stub_cost + q.cost,
            });
            if search.first {
                break;
            }
        }
    }
    Ok(best)
}

/// A triangle of a square matrix: the elements with `j - i <= k`
/// (`tril(·, k)`), the rest being `triu(·, k + 1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Triangle {
    k: i64,
}

impl Triangle {
    fn lower_mask(self, n: usize) -> Vec<bool> {
        (0..n * n)
            .map(|o| ((o % n) as i64 - (o / n) as i64) <= self.k)
            .collect()
    }
}

/// A cheap structural fingerprint of an element: two elements computed by
/// the same formula at different indices share it.
fn fingerprint(v: &Value) -> (usize, i64) {
    let degree = v.terms().iter().map(|t| t.mono.degree()).max().unwrap_or(0);
    (v.len(), degree)
}

/// Whether the mask splits the target's elements into two parts, each of
/// one fingerprint, that differ from each other: a region the spec
/// computes with two formulas. Diagonal elements are left out: there the
/// formula's index pairs coincide and terms merge (`A[i,k]·B[j,k] +
/// B[i,k]·A[j,k]` is one term `2·A[i,k]·B[i,k]` at `i = j`).
fn splits_by_formula(target: &Tensor, mask: &[bool]) -> bool {
    let cols = target.shape().get(1).copied().unwrap_or(1).max(1);
    let mut inside = None;
    let mut outside = None;
    for (offset, (e, &m)) in target.elems().iter().zip(mask).enumerate() {
        if offset / cols == offset % cols {
            continue;
        }
        let part = if m { &mut inside } else { &mut outside };
        let f = fingerprint(e);
        match part {
            None => *part = Some(f),
            Some(g) if *g == f => {}
            Some(_) => return false,
        }
    }
    matches!((inside, outside), (Some(a), Some(b)) if a != b)
}

/// `tril(?x, k) + triu(?y, k + 1)` for a square 2-D target whose two
/// triangles follow different formulas; each hole is solved on its own
/// triangle only.
fn region_sketch(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
    let [n, m] = target.shape() else {
        return Ok(None);
    };
    if n != m || *n < 2 || !dtype.is_numeric() {
        return Ok(None);
    }
    let n = *n;
    let mut best: Option<Found> = None;
    for k in [0, -1] {
        let triangle = Triangle { k };
        let lower = triangle.lower_mask(n);
        if !splits_by_formula(target, &lower) {
            continue;
        }
        let upper: Vec<bool> = lower.iter().map(|b| !b).collect();
        let limit = best.as_ref().map_or(bound, |b| b.cost);
        // Two triangle ops and the add.
        let step = 3.0 * step_cost(target);
        if step >= limit {
            continue;
        }
        let Some(x) = masked_solve(search, target, &lower, dtype, MASKED_DEPTH, limit - step)?
        else {
            search.stats.backtrack();
            continue;
        };
        let Some(y) = masked_solve(
            search,
            target,
            &upper,
            dtype,
            MASKED_DEPTH,
            limit - step - x.cost,
        )?
        else {
            search.stats.backtrack();
            continue;
        };
        let expr = square_pair(x.expr, y.expr).and_then(|(x, y)| {
            build::add(build::tril(x, k).ok()?, build::triu(y, k + 1).ok()?).ok()
        });
        if let Some(expr) = expr {
            search.stats.pattern_match();
            best = Some(Found {
                expr,
                cost: step + x.cost + y.cost,
            });
        }
    }
    Ok(best)
}

/// Both holes as full squares: a scalar solution broadcasts to the other
/// hole's (symbolic) shape, so the program stays size-generic.
fn square_pair(x: Expr, y: Expr) -> Option<(Expr, Expr)> {
    let shape = [&x, &y]
        .into_iter()
        .find(|e| e.shape().len() == 2)?
        .shape()
        .to_vec();
    let widen = |e: Expr| {
        if e.shape().len() == 2 {
            Some(e)
        } else {
            build::broadcast(e, shape.clone()).ok()
        }
    };
    Some((widen(x)?, widen(y)?))
}

/// Whether `value` (a tensor of the target's shape, or a scalar) equals
/// `target` on every masked element.
fn agrees_on(value: &Tensor, target: &Tensor, mask: &[bool]) -> bool {
    if value.shape().is_empty() {
        let v = &value.elems()[0];
        return target.elems().iter().zip(mask).all(|(t, &m)| !m || t == v);
    }
    value.shape() == target.shape()
        && value
            .elems()
            .iter()
            .zip(target.elems())
            .zip(mask)
            .all(|((v, t), &m)| !m || v == t)
}

/// The target restricted to the mask (zero elsewhere): its Simp score and
/// inputs count only the elements the hole must compute.
fn masked(target: &Tensor, mask: &[bool]) -> Tensor {
    let elems = target
        .elems()
        .iter()
        .zip(mask)
        .map(|(t, &m)| if m { t.clone() } else { Value::zero() })
        .collect();
    Tensor::new(target.shape().to_vec(), elems).unwrap_or_else(|_| target.clone())
}

/// A library expression equal to `target` on the masked elements, or an
/// `op(stub, ?h)` sketch whose hole is solved on the same elements,
/// simplest holes first, within `depth`.
fn masked_solve(
    search: &Search<'_>,
    target: &Tensor,
    mask: &[bool],
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
    if Instant::now() > search.deadline {
        return Err(Timeout);
    }
    search.stats.step();
    let part = masked(target, mask);
    if let Some(found) = constant_on(&part, mask, dtype) {
        return Ok((found.cost < bound).then_some(found));
    }
    let library = search.library;
    let mut best: Option<Found> = None;
    for stub in &library.stubs {
        if stub.expr.dtype() == dtype
            && stub.cost < best.as_ref().map_or(bound, |b| b.cost)
            && agrees_on(&stub.value, target, mask)
        {
            best = Some(Found {
                expr: stub.expr.clone(),
                cost: stub.cost,
            });
        }
    }
    if best.is_some() && search.first || depth == 0 {
        return Ok(best);
    }
    // A sum of contractions is peeled at the region's own level (and in
    // the remainders it leaves), not below every stub sketch.
    if depth == MASKED_DEPTH {
        let limit = best.as_ref().map_or(bound, |b| b.cost);
        if let Some(found) = masked_contraction(search, &part, mask, dtype, depth, limit)? {
            best = Some(found);
            if search.first {
                return Ok(best);
            }
        }
    }
    let part_vars = part.vars();
    let part_score = part.complexity();
    let mut holes = Vec::new();
    for (index, stub) in library.stubs.iter().enumerate() {
        if stub.expr.dtype() != dtype || stub.depth > 1 {
            continue;
        }
        let s = if stub.value.shape() == target.shape() {
            let s = masked(&stub.value, mask);
            // Only the inputs the stub reads inside the region count.
            if !s.vars().iter().all(|v| part_vars.binary_search(v).is_ok()) {
                continue;
            }
            s
        } else if stub.value.shape().is_empty() {
            if !stub.vars.iter().all(|v| part_vars.binary_search(v).is_ok()) {
                continue;
            }
            let v = stub.value.elems()[0].clone();
            masked(&part.map(|_| v.clone()), mask)
        } else {
            continue;
        };
        let mut candidates = Vec::new();
        if let Ok(h) = part.zip_with(&s, |t, s| t - s) {
            candidates.push((h, tenslift_targets::BinaryOp::Add));
        }
        // Scale factors (`alpha * ?h`) are scalars; dividing by every
        // tensor stub would dominate the time for nothing.
        if dtype.is_float() && stub.value.shape().is_empty() {
            let quotient: Option<Vec<Value>> = part
                .elems()
                .iter()
                .zip(s.elems())
                .zip(mask)
                .map(|((t, s), &m)| {
                    if m {
                        t.div(s).ok()
                    } else {
                        Some(Value::zero())
                    }
                })
                .collect();
            if let Some(q) = quotient.and_then(|q| Tensor::new(part.shape().to_vec(), q).ok()) {
                candidates.push((q, tenslift_targets::BinaryOp::Mul));
            }
        }
        for (h, op) in candidates {
            if h.elems().iter().all(Value::is_zero) {
                continue;
            }
            let score = h.complexity();
            if score < part_score {
                holes.push((score, h, op, index));
            }
        }
    }
    holes.sort_by(|a, b| a.0.total_cmp(&b.0));
    holes.truncate(MASKED_CANDIDATES_PER_LEVEL);
    let step = step_cost(target);
    for (_, hole, op, index) in holes {
        let stub = &library.stubs[index];
        let op_cost = stub.cost + step;
        let limit = best.as_ref().map_or(bound, |b| b.cost);
        if op_cost >= limit {
            continue;
        }
        if let Some(h) = masked_solve(search, &hole, mask, dtype, depth - 1, limit - op_cost)? {
            if let Ok(expr) = tenslift_targets::Expr::binary(op, stub.expr.clone(), h.expr) {
                best = Some(Found {
                    expr,
                    cost: op_cost + h.cost,
                });
                if search.first {
                    break;
                }
            }
        }
    }
    Ok(best)
}

/// `einsum(X, ?h) + ?r` on the masked elements, for a leaf `X` the part is
/// linear in and that meets the part under several index maps (a sum of
/// contractions of `X`, like syr2k's `A @ B.T + B @ A.T`): one contraction
/// is peeled ([`Peel`]), its hole filled by the cheapest stub agreeing
/// with it where it is known, and the exact remainder (strictly simpler)
/// solved on the same mask.
fn masked_contraction(
    search: &Search<'_>,
    part: &Tensor,
    mask: &[bool],
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Result<Option<Found>, Timeout> {
    if !dtype.is_float() || part.shape().len() < 2 {
        return Ok(None);
    }
    let library = search.library;
    let part_vars = part.vars();
    // The remainder reads the same inputs (syr2k's other product reads A
    // and B too): progress is counted in terms, which a peel must lower.
    let part_terms = term_count(part);
    let mut best: Option<Found> = None;
    for operand in &library.stubs {
        if operand.depth != 0
            || operand.expr.dtype() != dtype
            || operand.value.shape().is_empty()
            || !operand
                .vars
                .iter()
                .all(|v| part_vars.binary_search(v).is_ok())
        {
            continue;
        }
        if Instant::now() > search.deadline {
            return Err(Timeout);
        }
        for peel in Peel::candidates(part, Some(mask), &operand.value) {
            let op_cost =
                operand.cost + part.len() as f64 * 2.0 * peel.contracted_len() + step_cost(part);
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            if op_cost >= limit {
                continue;
            }
            let Some(hole) =
                stub_agreeing(search, peel.hole(), &peel.known, dtype, limit - op_cost)
            else {
                continue;
            };
            let Some(value) = peel.contribution(&operand.value, &hole.value, part.shape()) else {
                continue;
            };
            let Ok(remainder) = part.zip_with(&value, |t, c| t - c) else {
                continue;
            };
            let remainder = masked(&remainder, mask);
            if term_count(&remainder) >= part_terms {
                continue;
            }
            let Some(contraction) =
                peel.rebuild(&operand.expr, operand.value.shape(), hole.expr.clone())
            else {
                continue;
            };
            search.stats.coefficient_solve();
            let cost = op_cost + hole.cost;
            let found = if remainder.elems().iter().all(Value::is_zero) {
                Some(Found {
                    expr: contraction,
                    cost,
                })
            } else {
                let rest = masked_solve(search, &remainder, mask, dtype, depth, limit - cost)?;
                rest.and_then(|r| {
                    build::add(contraction, r.expr).ok().map(|expr| Found {
                        expr,
                        cost: cost + r.cost,
                    })
                })
            };
            match found {
                Some(f) if f.cost < best.as_ref().map_or(bound, |b| b.cost) => {
                    best = Some(f);
                    if search.first {
                        return Ok(best);
                    }
                }
                Some(_) => {}
                None => search.stats.backtrack(),
            }
        }
    }
    Ok(best)
}

/// The number of terms of all elements.
fn term_count(t: &Tensor) -> usize {
    t.elems().iter().map(Value::len).sum()
}

/// The cheapest stub of `value`'s shape equal to it on the `known`
/// elements, cheaper than `bound`.
fn stub_agreeing<'l>(
    search: &Search<'l>,
    value: &Tensor,
    known: &[bool],
    dtype: DType,
    bound: f64,
) -> Option<&'l crate::synth::library::Stub> {
    let mut best: Option<&crate::synth::library::Stub> = None;
    for stub in &search.library.stubs {
        if stub.expr.dtype() == dtype
            && stub.value.shape() == value.shape()
            && stub.cost < best.map_or(bound, |b| b.cost)
            && agrees_on(&stub.value, value, known)
        {
            best = Some(stub);
        }
    }
    best
}

/// A literal equal to every masked element, when they share one constant.
fn constant_on(part: &Tensor, mask: &[bool], dtype: DType) -> Option<Found> {
    let mut value: Option<&Value> = None;
    for (e, &m) in part.elems().iter().zip(mask) {
        if !m {
            continue;
        }
        match value {
            None => value = Some(e),
            Some(v) if v == e => {}
            Some(_) => return None,
        }
    }
    let c = value?.as_constant()?;
    Some(Found {
        expr: literal(&c, dtype)?,
        cost: 1.0,
    })
}

/// The diagonal offsets `q - p` of the elements `A[p, q]` the target
/// reads from each 2-D input, as (least, greatest).
fn read_offsets(target: &Tensor, name: &str) -> Option<(i64, i64)> {
    let offsets: Vec<i64> = target
        .vars()
        .iter()
        .filter(|v| !v.is_hole() && v.name() == name)
        .filter_map(|v| match v.index() {
            [p, q] => Some(i64::from(*q) - i64::from(*p)),
            _ => None,
        })
        .collect();
    Some((*offsets.iter().min()?, *offsets.iter().max()?))
}

/// Extra library leaves for square float inputs the target reads only on
/// one triangle: the triangle itself, and when the triangle includes the
/// diagonal, the symmetric matrix it stores. Without them the library's
/// view of such an input reads elements the target never mentions, and is
/// discarded.
pub fn triangle_leaves(params: &[Param], target: &Tensor) -> Vec<Expr> {
    let mut out = Vec::new();
    for p in params {
        let ParamKind::Array { dtype, shape, .. } = &p.kind else {
            continue;
        };
        if shape.len() != 2 || shape[0] != shape[1] || !dtype.is_float() {
            continue;
        }
        let Some((least, greatest)) = read_offsets(target, &p.name) else {
            continue;
        };
        let var = Expr::var(&p.name, p.ty());
        let symmetric = |keep: fn(Expr, i64) -> Result<Expr, _>, mirror: i64| {
            let triangle = keep(var.clone(), 0).ok()?;
            let strict = keep(var.clone(), mirror).ok()?;
            build::add(triangle, build::transpose(strict, &[1, 0]).ok()?).ok()
        };
        if greatest <= 0 {
            out.extend(build::tril(var.clone(), greatest).ok());
            if greatest == 0 {
                out.extend(symmetric(build::tril, -1));
            }
        }
        if least >= 0 {
            out.extend(build::triu(var.clone(), least).ok());
            if least == 0 {
                out.extend(symmetric(build::triu, 1));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Sizes;
    use crate::synth::cost::CostModel;
    use crate::synth::library::{Evaluator, Library};
    use crate::synth::search::{Counters, Reductions};
    use std::time::Duration;
    use tenslift_targets::{print_expr, Access, Dim};

    fn array(name: &str, dtype: DType, rank: usize) -> Param {
        let dims = ["n", "n"];
        Param {
            name: name.into(),
            kind: ParamKind::Array {
                dtype,
                shape: dims[..rank].iter().map(|d| Dim::sym(d)).collect(),
                access: Access::In,
            },
        }
    }

    fn element(name: &str, index: &[u32]) -> Value {
        Value::symbol(&crate::algebra::Symbol::element(name, index))
    }

    /// Searches `target` over a library built from `params` (with their
    /// triangle leaves, as `lift_kernel` builds it) at `n = 3`, with the
    /// search's default depth.
    fn solve(params: Vec<Param>, target: &Tensor, dtype: DType) -> Option<Expr> {
        let sizes: Sizes = [("n".to_string(), 3)].into_iter().collect();
        solve_at(params, target, dtype, sizes)
    }

    fn solve_at(params: Vec<Param>, target: &Tensor, dtype: DType, sizes: Sizes) -> Option<Expr> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut evaluator = Evaluator::new(sizes.clone(), params.clone(), Vec::new());
        let leaves: Vec<Expr> = super::super::library::leaves(&params, &|_| vec![None], &[], dtype)
            .into_iter()
            .chain(triangle_leaves(&params, target))
            .collect();
        let library =
            Library::build(&mut evaluator, leaves, &sizes, deadline, 20_000, target).ok()?;
        let reductions = Reductions::build(&library, target.shape(), deadline);
        let model = CostModel::Analytic;
        let search = Search {
            library: &library,
            reductions: &reductions,
            model: &model,
            sizes: &sizes,
            deadline,
            first: false,
            stats: Counters::default(),
            banned: &[],
            top_depth: 3,
        };
        search
            .solve(target, dtype, 3, f64::INFINITY)
            .ok()?
            .map(|f| f.expr)
    }

    #[test]
    fn a_data_dependent_select_becomes_a_where_over_its_branches() {
        // out[i] = a[i] != 0 ? b[i] / a[i] : 7   (C int division)
        let target = Tensor::from_fn(&[3], |i| {
            let (a, b) = (element("a", &[i[0] as u32]), element("b", &[i[0] as u32]));
            Value::select(&a, &Value::trunc_div(&b, &a), &Value::int(7))
        });
        let params = vec![array("a", DType::I32, 1), array("b", DType::I32, 1)];
        let expr = solve(params, &target, DType::I32).expect("a program");
        assert_eq!(
            print_expr(&expr),
            "where(ne(a, 0i32), trunc_div(b, where(ne(a, 0i32), a, 1i32)), 7i32)"
        );
    }

    #[test]
    fn an_ordering_condition_keeps_its_constant_as_the_compared_literal() {
        // out[i] = a[i] < 5 ? a[i] : b[i]
        let target = Tensor::from_fn(&[3], |i| {
            let (a, b) = (element("a", &[i[0] as u32]), element("b", &[i[0] as u32]));
            Value::select(&Value::lt(&a, &Value::int(5)), &a, &b)
        });
        let params = vec![array("a", DType::I32, 1), array("b", DType::I32, 1)];
        let expr = solve(params, &target, DType::I32).expect("a program");
        assert_eq!(print_expr(&expr), "where(lt(a, 5i32), a, b)");
    }

    #[test]
    fn two_formulas_split_by_the_diagonal_become_tril_plus_triu() {
        // out[i][j] = j <= i ? a[i][j] + b[i][j] : a[i][j] * b[i][j]
        let target = Tensor::from_fn(&[3, 3], |i| {
            let (r, c) = (i[0] as u32, i[1] as u32);
            let (a, b) = (element("a", &[r, c]), element("b", &[r, c]));
            if c <= r {
                a.add(&b)
            } else {
                a.mul(&b)
            }
        });
        let params = vec![array("a", DType::F64, 2), array("b", DType::F64, 2)];
        let expr = solve(params, &target, DType::F64).expect("a program");
        let text = print_expr(&expr);
        assert!(
            text == "add(tril(add(a, b), k=0), triu(mul(a, b), k=1))"
                || text == "add(tril(add(a, b), k=0), triu(mul(b, a), k=1))",
            "{text}"
        );
    }

    #[test]
    fn a_square_input_read_on_its_lower_triangle_gets_tril_and_symmetric_leaves() {
        let params = vec![array("A", DType::F64, 2)];
        let lower = Tensor::from_fn(&[2], |i| element("A", &[1, i[0] as u32]));
        let leaves: Vec<String> = triangle_leaves(&params, &lower)
            .iter()
            .map(print_expr)
            .collect();
        assert_eq!(
            leaves,
            vec![
                "tril(A, k=0)".to_string(),
                "add(tril(A, k=0), transpose(tril(A, k=-1), perm=[1, 0]))".to_string()
            ]
        );
        let strictly_lower = Tensor::scalar(element("A", &[1, 0]));
        let leaves = triangle_leaves(&params, &strictly_lower);
        assert_eq!(leaves.len(), 1);
        assert_eq!(print_expr(&leaves[0]), "tril(A, k=-1)");
    }

    #[test]
    fn a_lower_triangle_summing_two_contractions_of_one_operand_is_peeled() {
        // syr2k at n = 3, m = 2: C[i][j] (j <= i) += Σ_k A[j,k]·B[i,k] + B[j,k]·A[i,k].
        let rect = |name: &str| Param {
            name: name.into(),
            kind: ParamKind::Array {
                dtype: DType::F64,
                shape: vec![Dim::sym("n"), Dim::sym("m")],
                access: Access::In,
            },
        };
        let target = Tensor::from_fn(&[3, 3], |t| {
            let (i, j) = (t[0] as u32, t[1] as u32);
            let c = element("C", &[i, j]);
            if j > i {
                return c;
            }
            (0..2).fold(c, |acc, k| {
                let ab = element("A", &[j, k]).mul(&element("B", &[i, k]));
                let ba = element("B", &[j, k]).mul(&element("A", &[i, k]));
                acc.add(&ab).add(&ba)
            })
        });
        let params = vec![array("C", DType::F64, 2), rect("A"), rect("B")];
        let sizes: Sizes = [("n".to_string(), 3), ("m".to_string(), 2)]
            .into_iter()
            .collect();
        let expr = solve_at(params, &target, DType::F64, sizes).expect("a program");
        let text = print_expr(&expr);
        assert!(text.starts_with("add(tril("), "{text}");
        assert!(text.ends_with("triu(C, k=1))"), "{text}");
        assert_eq!(text.matches("matmul(").count(), 2, "{text}");
    }

    #[test]
    fn a_decimal_constant_is_the_literal_c_wrote() {
        let tenth = Rat::new(1, 10).expect("a rational");
        let lit = literal(&tenth, DType::F64).expect("0.1 denotes 1/10");
        assert_eq!(lit, Expr::lit(Lit::float(0.1, DType::F64)));
        assert!(literal(&-&tenth, DType::F64).is_some());
        // A third has no finite decimal: no literal denotes it.
        assert!(literal(&Rat::new(1, 3).expect("a rational"), DType::F64).is_none());
    }

    #[test]
    fn an_integer_product_with_a_common_factor_is_factored() {
        // out[i] = 2 * (a[i] - b[i]) * b[i]
        let target = Tensor::from_fn(&[3], |i| {
            let (a, b) = (element("a", &[i[0] as u32]), element("b", &[i[0] as u32]));
            a.sub(&b).mul(&b).scale(&Rat::from(2))
        });
        let params = vec![array("a", DType::I32, 1), array("b", DType::I32, 1)];
        let expr = solve(params, &target, DType::I32).expect("a program");
        let text = print_expr(&expr);
        assert!(text.starts_with("mul(2i32, mul("), "{text}");
    }

    #[test]
    fn lower_triangle_masks_follow_the_diagonal_offset() {
        let on_and_below = Triangle { k: 0 }.lower_mask(3);
        assert_eq!(
            on_and_below,
            vec![true, false, false, true, true, false, true, true, true]
        );
        let strictly_below = Triangle { k: -1 }.lower_mask(2);
        assert_eq!(strictly_below, vec![false, false, true, false]);
    }

    #[test]
    fn a_triangle_split_needs_two_distinct_formulas() {
        let x = Value::symbol(&crate::algebra::Symbol::new(
            crate::algebra::SymbolKind::Input,
            "x",
            &[0],
        ));
        let lower = Triangle { k: 0 }.lower_mask(2);
        let split = Tensor::new(
            vec![2, 2],
            vec![
                x.add(&Value::one()),
                x.clone(),
                x.add(&Value::one()),
                x.add(&Value::one()),
            ],
        )
        .expect("tensor");
        assert!(splits_by_formula(&split, &lower));
        let same = split.map(|_| x.clone());
        assert!(!splits_by_formula(&same, &lower));
        // Terms merged on the diagonal (syr2k's `2·A[i,k]·B[i,k]`) do not
        // make the lower triangle two formulas.
        let y = Value::symbol(&crate::algebra::Symbol::new(
            crate::algebra::SymbolKind::Input,
            "y",
            &[0],
        ));
        let merged = Tensor::from_fn(&[3, 3], |i| match i[1].cmp(&i[0]) {
            std::cmp::Ordering::Equal => x.scale(&Rat::from(2)),
            std::cmp::Ordering::Less => x.add(&y),
            std::cmp::Ordering::Greater => y.clone(),
        });
        assert!(splits_by_formula(&merged, &Triangle { k: 0 }.lower_mask(3)));
    }

    #[test]
    fn constants_become_literals_of_the_target_type() {
        let fill = Tensor::from_fn(&[3], |_| Value::int(1));
        let found = constant_fill(&fill, DType::I32).expect("a literal");
        assert_eq!(found.expr, Expr::lit(Lit::int(1, DType::I32)));
        let half = Tensor::from_fn(&[2], |_| {
            Value::constant(Rat::new(1, 3).expect("a rational"))
        });
        assert!(constant_fill(&half, DType::I32).is_none());
        assert!(constant_fill(&half, DType::F64).is_none());
    }
}
