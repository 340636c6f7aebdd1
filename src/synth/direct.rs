//! Direct translation of point-wise outputs: when every element of an
//! output is one expression template applied to the same position of its
//! inputs (identity, transposed or broadcast index maps, plus scalar
//! parameters, sizes and constants), the template is written straight
//! into a TensIR element-wise expression instead of being searched for.
//!
//! The template is read off one element's normal form. Normal forms are
//! expanded polynomials, so the translation factors them back where that
//! reads better and costs less: a common monomial is pulled out of a sum
//! (`(A + B) / sqrt(A + B)`, not `A / sqrt(…) + B / sqrt(…)`), and a sum
//! that is a constant times the square of a linear form is written as that
//! square (`(truth - pred) * (truth - pred)`). A constant that depends on
//! the sizes (`1/3` for `ss / size` at `size = 3`) is found by trying its
//! size-dependent spellings against the spec at a second size tuple; the
//! candidate is kept only when it equals the output at both tuples. The
//! caller still runs the normal acceptance and cost accounting.

use std::cmp::Ordering;
use std::collections::HashMap;

use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, BinaryOp, DType, Dim, Expr, Lit, Param, ParamKind, Stmt, UnaryOp};

use super::convert;
use super::library::Evaluator;
use super::problem::{region_target, Goal};
use super::search::Found;
use super::stencil::exact_literal;
use super::tactic::{Attempt, Candidate, OutputTactic};
use crate::algebra::{Atom, AtomKind, Func, Mono, Rat, SymbolKind, Tensor, Value};
use crate::spec::tensir::canonical_extrema;
use crate::spec::Sizes;

/// Most combinations of constant spellings tried for one output.
const MAX_COMBINATIONS: usize = 64;

/// Largest integer multiplier of a size tried for a size-dependent constant
/// (`2 / n`, `3 * n`).
const MAX_SIZE_MULTIPLIER: i64 = 16;

/// The `direct` output tactic; see the module documentation.
pub struct Direct;

impl OutputTactic for Direct {
    fn name(&self) -> &'static str {
        "direct"
    }

    fn summary(&self) -> &'static str {
        "a point-wise output written straight from its spec template (first mode keeps it, best mode searches below its cost)"
    }

    fn applies(&self, goal: &Goal<'_>) -> Result<(), String> {
        if goal.dtype == DType::Bool {
            Err("a boolean output".into())
        } else {
            Ok(())
        }
    }

    fn run(
        &self,
        goal: &Goal<'_>,
        _: Option<&Found>,
        _: &mut Evaluator,
    ) -> Result<Attempt, super::options::SynthError> {
        let found = translation(goal).map(|found| Candidate {
            found,
            region: goal.region.clone(),
        });
        let mut attempt = Attempt {
            candidates: 1,
            ..Attempt::of(found)
        };
        attempt.stats.direct = u64::from(attempt.found.is_some());
        Ok(attempt)
    }
}

/// The direct translation of the goal's output with its cost, unless the
/// generalisation check already rejected it.
fn translation(goal: &Goal<'_>) -> Option<Found> {
    let problem = goal.problem;
    let first = goal.target()?;
    let second = problem.second_spec().as_ref().and_then(|spec| {
        let output = spec.output(goal.name())?;
        let value = region_target(&output.value, &goal.region, &spec.sizes)?;
        let value = if goal.peeled {
            convert::strip_truncation(&value)?
        } else {
            value
        };
        Some((value.map(canonical_extrema), spec.sizes.clone()))
    });
    let out_shape = output_dims(&problem.params, goal.name(), &goal.region);
    let targets = Targets {
        first: &first,
        first_sizes: &problem.sizes,
        second: second.as_ref().map(|(value, sizes)| (value, sizes)),
        out_shape: out_shape.as_deref(),
    };
    let expr = translate(&targets, goal.dtype, &problem.params, &goal.pass.body)?;
    if goal.memory.banned(goal.name()).contains(&expr) {
        return None;
    }
    let cost = problem.options.model.cost_of(&[&expr], &problem.sizes);
    Some(Found { expr, cost })
}

/// Where the translation is checked: the output's values at the chosen
/// sizes, and (when the second spec could be built) at a second size tuple.
pub struct Targets<'a> {
    pub first: &'a Tensor,
    pub first_sizes: &'a Sizes,
    pub second: Option<(&'a Tensor, &'a Sizes)>,
    /// The output's extents, where known: a template that reads no input
    /// along some output axes (nearest-neighbour upsampling's
    /// `out[b][c][y][dy][x][dx] = in[b][c][y][x]`) is broadcast to them.
    pub out_shape: Option<&'a [Dim]>,
}

/// The extents of the output `name` (through its region).
fn output_dims(params: &[Param], name: &str, region: &Option<Vec<SliceItem>>) -> Option<Vec<Dim>> {
    let param = params.iter().find(|p| &*p.name == name)?;
    let var = Expr::var(&param.name, param.ty());
    let view = match region {
        None => var,
        Some(items) => build::slice(var, items.clone()).ok()?,
    };
    Some(view.shape().to_vec())
}

/// `expr` broadcast to `shape` where it has unit extents there (a scalar
/// stays: stores broadcast it).
fn filled(expr: Expr, shape: Option<&[Dim]>) -> Expr {
    let Some(shape) = shape else {
        return expr;
    };
    let unit = Dim::constant(1);
    let widens = expr.shape().len() == shape.len()
        && expr.shape() != shape
        && expr
            .shape()
            .iter()
            .zip(shape)
            .all(|(have, want)| have == want || *have == unit);
    if !widens {
        return expr;
    }
    build::broadcast(expr.clone(), shape.to_vec()).unwrap_or(expr)
}

/// The translated expression for an output of element type `dtype`, or
/// `None` when the output is not a point-wise template or the template
/// uses something with no element-wise TensIR form (selects, integer
/// wrap-around, reductions).
pub fn translate(
    targets: &Targets<'_>,
    dtype: DType,
    params: &[Param],
    prefix: &[Stmt],
) -> Option<Expr> {
    if dtype == DType::Bool {
        return None;
    }
    let target = targets.first;
    let last = target.len().checked_sub(1)?;
    let index: Vec<u32> = target
        .index_of(last)
        .into_iter()
        .map(|i| u32::try_from(i).ok())
        .collect::<Option<_>>()?;
    let template = target.elems().get(last)?;
    let mut checker = Checker::new(targets, params, prefix);
    if target.shape().is_empty() {
        let found = extremum_with_start(dtype, params, template)
            .filter(|expr| checker.accepts(targets, expr));
        if found.is_some() {
            return found;
        }
    }
    let mut constants = Vec::new();
    collect_constants(template, &mut constants);
    let spellings: Vec<Vec<Spelling>> = constants
        .iter()
        .map(|c| spellings_of(c, params, targets.first_sizes, dtype))
        .collect();
    for choice in combinations(&spellings).take(MAX_COMBINATIONS) {
        let chosen: HashMap<Rat, Spelling> = choice
            .iter()
            .map(|&(i, j)| (constants[i].clone(), spellings[i][j].clone()))
            .collect();
        let writer = Writer {
            params,
            dtype,
            rank: target.shape().len(),
            index: &index,
            chosen: &chosen,
        };
        let Some(expr) = writer.sum(template) else {
            // The template itself has no translation; other spellings of
            // its constants will not give it one.
            return None;
        };
        let expr = filled(expr, targets.out_shape);
        if checker.accepts(targets, &expr) {
            return Some(expr);
        }
    }
    None
}

/// Evaluates candidates against the output at both size tuples, each
/// evaluator built once for all the candidates of one output.
struct Checker {
    first: Evaluator,
    second: Option<Evaluator>,
}

impl Checker {
    fn new(targets: &Targets<'_>, params: &[Param], prefix: &[Stmt]) -> Checker {
        let at = |sizes: &Sizes| Evaluator::new(sizes.clone(), params.to_vec(), prefix.to_vec());
        Checker {
            first: at(targets.first_sizes),
            second: targets.second.map(|(_, sizes)| at(sizes)),
        }
    }

    /// Whether `expr` equals the output at the first size tuple and, when
    /// there is one, at the second.
    fn accepts(&mut self, targets: &Targets<'_>, expr: &Expr) -> bool {
        if !evaluates_to(&mut self.first, expr, targets.first) {
            return false;
        }
        match (&mut self.second, targets.second) {
            (Some(evaluator), Some((second, _))) => evaluates_to(evaluator, expr, second),
            _ => true,
        }
    }
}

/// A scalar `max`/`min` of one template over a 1-D input and numbers
/// (`m = fmaxf(m, fabsf(x[i]))` from `m = 0`: `max(0, |x0|, |x1|, …)`):
/// the template is written over the whole input, reduced, and combined
/// with each number (which also gives the C's value over no elements).
fn extremum_with_start(dtype: DType, params: &[Param], template: &Value) -> Option<Expr> {
    let atom = template.as_atom()?;
    let (func @ (Func::Max | Func::Min), args) = atom.as_app()? else {
        return None;
    };
    let (numbers, elements): (Vec<&Value>, Vec<&Value>) =
        args.iter().partition(|a| a.as_constant().is_some());
    // The element read at the largest position stands for the template.
    let (arg, position) = elements
        .iter()
        .filter_map(|a| Some((*a, single_position(a)?)))
        .max_by_key(|(_, p)| *p)?;
    let no_choices = HashMap::new();
    let writer = Writer {
        params,
        dtype,
        rank: 1,
        index: &[position],
        chosen: &no_choices,
    };
    let over = writer.sum(arg)?;
    let (reduce, combine) = if func == Func::Max {
        (build::max(over, &[0]).ok()?, BinaryOp::Maximum)
    } else {
        (build::min(over, &[0]).ok()?, BinaryOp::Minimum)
    };
    numbers.iter().try_fold(reduce, |acc, c| {
        let number = exact_literal(&c.as_constant()?, dtype)?;
        Expr::binary(combine, number, acc).ok()
    })
}

/// The one position every input element of `v` is read at, when they are
/// all 1-D reads at the same index.
fn single_position(v: &Value) -> Option<u32> {
    let mut found: Option<u32> = None;
    let mut consistent = true;
    visit_inputs(v, &mut |_, index| match (index, found) {
        ([i], None) => found = Some(*i),
        ([i], Some(f)) if *i == f => {}
        _ => consistent = false,
    });
    found.filter(|_| consistent)
}

/// Calls `f` with the name and index of every input element (or scalar)
/// `v` reads, descending into applications and reciprocals.
fn visit_inputs(v: &Value, f: &mut dyn FnMut(&str, &[u32])) {
    for term in v.terms() {
        for (atom, _) in term.mono.factors() {
            match atom.kind() {
                AtomKind::Sym { kind, name, index } if *kind == SymbolKind::Input => f(name, index),
                AtomKind::App { args, .. } => args.iter().for_each(|a| visit_inputs(a, f)),
                AtomKind::Recip(q) => visit_inputs(q, f),
                _ => {}
            }
        }
    }
}

/// Every way to pick one spelling per constant, literal spellings first.
fn combinations(spellings: &[Vec<Spelling>]) -> impl Iterator<Item = Vec<(usize, usize)>> + '_ {
    let total: usize = spellings
        .iter()
        .map(Vec::len)
        .try_fold(1usize, |acc, n| acc.checked_mul(n))
        .unwrap_or(usize::MAX);
    (0..total).map(move |mut k| {
        spellings
            .iter()
            .enumerate()
            .map(|(i, options)| {
                let j = k % options.len();
                k /= options.len();
                (i, j)
            })
            .collect()
    })
}

/// Whether `expr` evaluates to `target` (a uniform scalar expression also
/// counts: stores broadcast it).
fn evaluates_to(evaluator: &mut Evaluator, expr: &Expr, target: &Tensor) -> bool {
    let Some(value) = evaluator.value(expr) else {
        return false;
    };
    let value = value.map(canonical_extrema);
    if value.shape() == target.shape() {
        return value == *target;
    }
    value.shape().is_empty() && target.elems().iter().all(|e| *e == value.elems()[0])
}

/// How a positive constant is written.
#[derive(Clone, Debug)]
enum Spelling {
    /// As a number.
    Literal,
    /// `multiplier · size`, or `multiplier / size` when `divides`.
    Size {
        size: Expr,
        multiplier: i64,
        divides: bool,
    },
}

/// The positive magnitudes (other than 1) of the constants `e` holds, in
/// first-seen order, descending into applications and reciprocals.
fn collect_constants(e: &Value, out: &mut Vec<Rat>) {
    for term in e.terms() {
        let magnitude = term.coeff.abs();
        if !magnitude.is_one() && !out.contains(&magnitude) {
            out.push(magnitude);
        }
        for (atom, _) in term.mono.factors() {
            match atom.kind() {
                AtomKind::Sym { .. } => {}
                AtomKind::App { args, .. } => args.iter().for_each(|a| collect_constants(a, out)),
                AtomKind::Recip(q) => collect_constants(q, out),
            }
        }
    }
}

/// The spellings of `c`: the literal first, then its readings as a small
/// multiple or fraction of a size (or of a size less one) at `sizes`.
fn spellings_of(c: &Rat, params: &[Param], sizes: &Sizes, dtype: DType) -> Vec<Spelling> {
    let mut out = vec![Spelling::Literal];
    if !dtype.is_float() {
        // Integer constants are the C's own literals (`>> 15`, `/ 255`).
        return out;
    }
    for p in params.iter().filter(|p| matches!(p.kind, ParamKind::Size)) {
        let Some(&value) = sizes.get(&*p.name) else {
            continue;
        };
        let Ok(size) = build::cast(Expr::var(&p.name, p.ty()), dtype) else {
            continue;
        };
        let Ok(size_less_one) = build::sub(size.clone(), float_lit(1.0, dtype)) else {
            continue;
        };
        for (size, value) in [(size, value), (size_less_one, value - 1)] {
            if value < 2 {
                continue;
            }
            let v = Rat::int(value);
            for (divides, ratio) in [(false, c.checked_div(&v)), (true, Some(c * &v))] {
                let multiplier = ratio
                    .filter(Rat::is_integer)
                    .and_then(|r| r.to_i64())
                    .filter(|m| (1..=MAX_SIZE_MULTIPLIER).contains(m));
                if let Some(multiplier) = multiplier {
                    out.push(Spelling::Size {
                        size: size.clone(),
                        multiplier,
                        divides,
                    });
                }
            }
        }
    }
    out
}

fn float_lit(v: f64, dtype: DType) -> Expr {
    Expr::lit(Lit::float(v, dtype))
}

/// The small whole number `v` as a literal of `dtype`.
fn number(v: i64, dtype: DType) -> Expr {
    if dtype.is_float() {
        float_lit(v as f64, dtype)
    } else {
        Expr::lit(Lit::int(v, dtype))
    }
}

/// Writes normal forms as TensIR for one output position.
struct Writer<'a> {
    params: &'a [Param],
    dtype: DType,
    rank: usize,
    /// The position whose element is the template.
    index: &'a [u32],
    chosen: &'a HashMap<Rat, Spelling>,
}

impl Writer<'_> {
    /// A sum of terms, with a shared monomial factored out and a square of
    /// a linear form written as a square.
    fn sum(&self, e: &Value) -> Option<Expr> {
        let terms = e.terms();
        match terms {
            [] => Some(number(0, self.dtype)),
            [term] => {
                let magnitude = self.term(&term.coeff.abs(), &term.mono, None)?;
                if term.coeff.is_negative() {
                    build::neg(magnitude).ok()
                } else {
                    Some(magnitude)
                }
            }
            _ => {
                if let Some((common, rest)) = common_factor(e) {
                    let inner = self.sum(&rest)?;
                    return self.term(&Rat::ONE, &common, Some(inner));
                }
                if let Some((scale, root)) = square_of_linear(e) {
                    let root = self.sum(&root)?;
                    let square = build::mul(root.clone(), root).ok()?;
                    return self.scaled(&scale, square);
                }
                self.plain_sum(e)
            }
        }
    }

    /// Terms joined by `+` and `-`: positive terms first, each group in
    /// display order.
    fn plain_sum(&self, e: &Value) -> Option<Expr> {
        let mut terms: Vec<_> = e.terms().iter().collect();
        terms.sort_by(|a, b| {
            a.coeff
                .is_negative()
                .cmp(&b.coeff.is_negative())
                .then_with(|| display_cmp(&a.mono, &b.mono))
        });
        let mut acc: Option<Expr> = None;
        for term in terms {
            let magnitude = self.term(&term.coeff.abs(), &term.mono, None)?;
            acc = Some(match acc {
                None if term.coeff.is_negative() => build::neg(magnitude).ok()?,
                None => magnitude,
                Some(a) if term.coeff.is_negative() => build::sub(a, magnitude).ok()?,
                Some(a) => build::add(a, magnitude).ok()?,
            });
        }
        acc
    }

    /// `c · mono · extra` for a positive `c`, as a numerator over a
    /// denominator.
    fn term(&self, c: &Rat, mono: &Mono, extra: Option<Expr>) -> Option<Expr> {
        let mut factors: Vec<&(Atom, i32)> = mono.factors().iter().collect();
        factors.sort_by(|a, b| a.0.structural_cmp(&b.0));
        let mut numerator = Vec::new();
        let mut denominator = Vec::new();
        for (atom, exp) in factors {
            let (base, exp) = match atom.kind() {
                AtomKind::Recip(q) => (self.sum(q)?, -exp),
                _ => (self.atom(atom)?, *exp),
            };
            let power = power(base, exp.unsigned_abs())?;
            if exp > 0 {
                numerator.push(power);
            } else {
                denominator.push(power);
            }
        }
        numerator.extend(extra);
        let product = |items: Vec<Expr>| -> Option<Option<Expr>> {
            let mut it = items.into_iter();
            let Some(first) = it.next() else {
                return Some(None);
            };
            it.try_fold(first, |acc, x| build::mul(acc, x).ok())
                .map(Some)
        };
        let num = product(numerator)?;
        let den = product(denominator)?;
        let body = match (num, den) {
            (Some(n), Some(d)) => build::div(n, d).ok()?,
            (Some(n), None) => n,
            (None, Some(d)) => {
                // `c / d`: the constant is the numerator.
                let c_expr = self.constant(c)?;
                return build::div(c_expr, d).ok();
            }
            (None, None) => return self.constant(c),
        };
        self.scaled(c, body)
    }

    /// `c · body` for a positive constant `c`, spelled as chosen.
    fn scaled(&self, c: &Rat, body: Expr) -> Option<Expr> {
        if c.is_one() {
            return Some(body);
        }
        match self.chosen.get(c) {
            Some(Spelling::Size {
                size,
                multiplier,
                divides,
            }) => {
                let body = if *multiplier == 1 {
                    body
                } else {
                    build::mul(float_lit(*multiplier as f64, self.dtype), body).ok()?
                };
                if *divides {
                    build::div(body, size.clone()).ok()
                } else {
                    build::mul(size.clone(), body).ok()
                }
            }
            _ if !self.dtype.is_float() => build::mul(
                exact_literal(c.is_integer().then_some(c)?, self.dtype)?,
                body,
            )
            .ok(),
            _ => {
                // A fraction p/q multiplies by p and divides by q, so both
                // literals are exact integers.
                if let Some(lit) = exact_literal(c, self.dtype) {
                    return build::mul(lit, body).ok();
                }
                let big = c.to_big();
                let numer = Rat::from_big(big.numer().clone().into());
                let denom = Rat::from_big(big.denom().clone().into());
                let body = if numer.is_one() {
                    body
                } else {
                    build::mul(exact_literal(&numer, self.dtype)?, body).ok()?
                };
                build::div(body, exact_literal(&denom, self.dtype)?).ok()
            }
        }
    }

    /// A positive constant on its own.
    fn constant(&self, c: &Rat) -> Option<Expr> {
        if c.is_one() {
            return Some(number(1, self.dtype));
        }
        match self.chosen.get(c) {
            Some(Spelling::Size { .. }) => self.scaled(c, number(1, self.dtype)),
            _ => exact_literal(c, self.dtype).or_else(|| {
                let big = c.to_big();
                let numer = Rat::from_big(big.numer().clone().into());
                let denom = Rat::from_big(big.denom().clone().into());
                build::div(
                    exact_literal(&numer, self.dtype)?,
                    exact_literal(&denom, self.dtype)?,
                )
                .ok()
            }),
        }
    }

    /// An input element, a scalar parameter or an application.
    fn atom(&self, atom: &Atom) -> Option<Expr> {
        match atom.kind() {
            AtomKind::Sym { kind, name, index } => {
                if *kind != SymbolKind::Input {
                    return None;
                }
                self.input(name, index)
            }
            AtomKind::App {
                func: Func::Wrap { bits, signed },
                args,
            } => self.wrapped(*bits, *signed, args.first()?),
            AtomKind::App {
                func: Func::Select,
                args,
            } => match &args[..] {
                // Both branches are computed: an integer division by a
                // variable in one would divide by zero where the test
                // excludes it (PyTorch raises), so that select is left to
                // the search, which guards the divisor.
                [_, a, b] if divides_by_variable(a) || divides_by_variable(b) => None,
                [c, a, b] => build::select(self.condition(c)?, self.sum(a)?, self.sum(b)?).ok(),
                _ => None,
            },
            AtomKind::App {
                func: Func::Lt0 | Func::Eq0,
                ..
            } => build::cast(self.predicate(atom)?, self.dtype).ok(),
            AtomKind::App { func, args } => {
                let args: Vec<Expr> = args.iter().map(|a| self.sum(a)).collect::<Option<_>>()?;
                let unary = |op| Expr::unary(op, args.first()?.clone()).ok();
                match func {
                    Func::Sqrt => unary(UnaryOp::Sqrt),
                    Func::Exp => unary(UnaryOp::Exp),
                    Func::Log => unary(UnaryOp::Log),
                    Func::Tanh => unary(UnaryOp::Tanh),
                    Func::Abs => unary(UnaryOp::Abs),
                    Func::Round => unary(UnaryOp::Round),
                    Func::Floor => unary(UnaryOp::Floor),
                    Func::Ceil => unary(UnaryOp::Ceil),
                    Func::Sin => unary(UnaryOp::Sin),
                    Func::Cos => unary(UnaryOp::Cos),
                    Func::Cosh => unary(UnaryOp::Cosh),
                    Func::Sinh => unary(UnaryOp::Sinh),
                    Func::Pow => match args.as_slice() {
                        [x, y] => build::pow(x.clone(), y.clone()).ok(),
                        _ => None,
                    },
                    Func::TruncDiv | Func::Rem if !self.dtype.is_float() => {
                        let [n, d] = args.as_slice() else {
                            return None;
                        };
                        let op = if *func == Func::TruncDiv {
                            BinaryOp::TruncDiv
                        } else {
                            BinaryOp::Rem
                        };
                        Expr::binary(op, n.clone(), d.clone()).ok()
                    }
                    Func::Max | Func::Min => {
                        let op = if *func == Func::Max {
                            BinaryOp::Maximum
                        } else {
                            BinaryOp::Minimum
                        };
                        let mut it = args.into_iter();
                        let first = it.next()?;
                        it.try_fold(first, |acc, x| Expr::binary(op, acc, x).ok())
                    }
                    _ => None,
                }
            }
            AtomKind::Recip(_) if !self.dtype.is_float() => None,
            AtomKind::Recip(q) => build::div(float_lit(1.0, self.dtype), self.sum(q)?).ok(),
        }
    }

    /// The boolean TensIR value of C's test `c ≠ 0`: over at most
    /// [`MAX_CONDITION_ATOMS`] comparisons, the conjunction or disjunction
    /// of comparisons and their negations with the same truth table (the
    /// normal form of `a >= 0 && a != t` is a polynomial in `lt0` and
    /// `eq0`); anything else compared with zero.
    fn condition(&self, c: &Value) -> Option<Expr> {
        logic_of(c)
            .and_then(|(atoms, form)| {
                let literal = |(k, positive): (usize, bool)| -> Option<Expr> {
                    let p = self.predicate(atoms.get(k)?)?;
                    if positive {
                        Some(p)
                    } else {
                        Expr::unary(UnaryOp::Not, p).ok()
                    }
                };
                let op = if form.is_and {
                    BinaryOp::And
                } else {
                    BinaryOp::Or
                };
                let mut it = form.literals.into_iter();
                let first = literal(it.next()?)?;
                it.try_fold(first, |acc, l| Expr::binary(op, acc, literal(l)?).ok())
            })
            .or_else(|| {
                let writer = self.comparing(c);
                let zero = number(0, writer.dtype);
                Expr::binary(BinaryOp::Ne, writer.sum(c)?, zero).ok()
            })
    }

    /// `lt0(d)` as `P < N` and `eq0(d)` as `P == N`, where `d = P - N`
    /// splits `d`'s terms by sign: no subtraction that could wrap, and the
    /// comparison reads as the C wrote it.
    fn predicate(&self, atom: &Atom) -> Option<Expr> {
        let (func, [d]) = atom.as_app()? else {
            return None;
        };
        let op = match func {
            Func::Lt0 => BinaryOp::Lt,
            Func::Eq0 => BinaryOp::Eq,
            _ => return None,
        };
        let writer = self.comparing(d);
        let side = |negative: bool| -> Option<Expr> {
            let mut acc: Option<Expr> = None;
            for term in d
                .terms()
                .iter()
                .filter(|t| t.coeff.is_negative() == negative)
            {
                let magnitude = writer.term(&term.coeff.abs(), &term.mono, None)?;
                acc = Some(match acc {
                    None => magnitude,
                    Some(a) => build::add(a, magnitude).ok()?,
                });
            }
            Some(acc.unwrap_or_else(|| number(0, writer.dtype)))
        };
        Expr::binary(op, side(false)?, side(true)?).ok()
    }

    /// The writer for the operands of a comparison of `v`: C compares in
    /// the operands' type, so a float input makes it the widest float one
    /// reads, and integers compare in `int` (wider where an input is).
    fn comparing(&self, v: &Value) -> Writer<'_> {
        let mut names = Vec::new();
        collect_inputs(v, &mut names);
        let dtypes = names.iter().filter_map(|n| {
            let p = self.params.iter().find(|p| &*p.name == n.as_str())?;
            Some(p.ty().dtype)
        });
        let mut dtype = if self.dtype.is_float() {
            self.dtype
        } else {
            DType::I32
        };
        for d in dtypes {
            dtype = match (dtype.is_float(), d.is_float()) {
                (false, true) => d,
                (true, true) | (false, false) if d.bits() > dtype.bits() => d,
                _ => dtype,
            };
        }
        Writer { dtype, ..*self }
    }

    /// `wrap(x)`, the C's conversion to a `bits`-wide integer: `x` computed
    /// in the type C computes it in (`int` for narrower operands, which
    /// promote; the wrap's own type at 32 and 64 bits, whose arithmetic
    /// wraps there), then converted. The evaluation against the spec
    /// decides whether that reproduces the C.
    fn wrapped(&self, bits: u8, signed: bool, x: &Value) -> Option<Expr> {
        let to = DType::int_of(u32::from(bits), signed)?;
        let inner = if bits < 32 { DType::I32 } else { to };
        let writer = Writer {
            dtype: inner,
            ..*self
        };
        let value = build::cast(writer.sum(x)?, to).ok()?;
        if to == self.dtype {
            Some(value)
        } else {
            build::cast(value, self.dtype).ok()
        }
    }

    /// The view of input `name` whose element at the output position is
    /// `name[index]`.
    fn input(&self, name: &str, index: &[u32]) -> Option<Expr> {
        let param = self.params.iter().find(|p| &*p.name == name)?;
        let var = Expr::var(&param.name, param.ty());
        let view = match &param.kind {
            ParamKind::Scalar(_) if index.is_empty() => var,
            ParamKind::Array { shape, .. } => {
                let at = self.index;
                if shape.len() == self.rank && index == at {
                    var
                } else if shape.len() == 2 && self.rank == 2 && index == [at[1], at[0]] {
                    build::transpose(var, &[1, 0]).ok()?
                } else if shape.len() == 1 && self.rank == 2 && index == [at[1]] {
                    // Broadcasting aligns trailing axes: a row of the output.
                    var
                } else if let Some(view) = interleaved(&var, shape, index, at) {
                    view
                } else {
                    aligned(var, shape, index, at)?
                }
            }
            _ => return None,
        };
        if view.dtype() == self.dtype {
            Some(view)
        } else {
            build::cast(view, self.dtype).ok()
        }
    }
}

/// Whether `v` holds an integer division or remainder whose divisor is
/// not a number.
fn divides_by_variable(v: &Value) -> bool {
    v.terms().iter().any(|term| {
        term.mono
            .factors()
            .iter()
            .any(|(atom, _)| match atom.kind() {
                AtomKind::App {
                    func: Func::TruncDiv | Func::Rem,
                    args,
                } => {
                    args.get(1).is_none_or(|d| d.as_constant().is_none())
                        || args.iter().any(divides_by_variable)
                }
                AtomKind::App { args, .. } => args.iter().any(divides_by_variable),
                AtomKind::Recip(q) => divides_by_variable(q),
                AtomKind::Sym { .. } => false,
            })
    })
}

/// Most comparisons a condition's truth table is read over.
const MAX_CONDITION_ATOMS: usize = 3;

/// A conjunction or disjunction of literals: (atom number, positive).
struct Logic {
    is_and: bool,
    literals: Vec<(usize, bool)>,
}

/// The comparison atoms of `c` and the shortest conjunction or
/// disjunction of them (or their negations) that is true exactly where
/// `c ≠ 0`, when `c` is a polynomial in at most [`MAX_CONDITION_ATOMS`]
/// comparisons.
fn logic_of(c: &Value) -> Option<(Vec<Atom>, Logic)> {
    let mut atoms: Vec<Atom> = Vec::new();
    for term in c.terms() {
        for (atom, exp) in term.mono.factors() {
            let is_predicate = atom.as_app().is_some_and(|(f, _)| f.is_predicate());
            if !is_predicate || *exp < 1 {
                return None;
            }
            if !atoms.contains(atom) {
                atoms.push(atom.clone());
            }
        }
    }
    if atoms.is_empty() || atoms.len() > MAX_CONDITION_ATOMS {
        return None;
    }
    let truth = |mask: usize| -> bool {
        let mut total = Rat::ZERO;
        for term in c.terms() {
            let on = term.mono.factors().iter().all(|(a, _)| {
                atoms
                    .iter()
                    .position(|x| x == a)
                    .is_some_and(|k| mask >> k & 1 == 1)
            });
            if on {
                total = &total + &term.coeff;
            }
        }
        !total.is_zero()
    };
    let table: Vec<bool> = (0..1usize << atoms.len()).map(truth).collect();
    let form = shortest_logic(atoms.len(), &table)?;
    Some((atoms, form))
}

/// The conjunction or disjunction with fewest literals over `n` atoms
/// whose truth table is `table` (indexed by the atoms' bit mask).
fn shortest_logic(n: usize, table: &[bool]) -> Option<Logic> {
    let mut best: Option<Logic> = None;
    // Each atom: absent (0), positive (1) or negated (2).
    for choice in 0..3usize.pow(n as u32) {
        let literals: Vec<(usize, bool)> = (0..n)
            .filter_map(|k| match choice / 3usize.pow(k as u32) % 3 {
                1 => Some((k, true)),
                2 => Some((k, false)),
                _ => None,
            })
            .collect();
        if literals.is_empty()
            || best
                .as_ref()
                .is_some_and(|b| b.literals.len() <= literals.len())
        {
            continue;
        }
        let value = |mask: usize, l: &(usize, bool)| (mask >> l.0 & 1 == 1) == l.1;
        for is_and in [true, false] {
            let matches = table.iter().enumerate().all(|(mask, t)| {
                let v = if is_and {
                    literals.iter().all(|l| value(mask, l))
                } else {
                    literals.iter().any(|l| value(mask, l))
                };
                v == *t
            });
            if matches {
                best = Some(Logic {
                    is_and,
                    literals: literals.clone(),
                });
                break;
            }
        }
    }
    best
}

/// The names of the input elements and scalars `v` reads, in first-seen
/// order.
fn collect_inputs(v: &Value, out: &mut Vec<String>) {
    visit_inputs(v, &mut |name, _| {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    });
}

/// Most interleaved channels [`interleaved`] tries (RGB, complex pairs).
const MAX_INTERLEAVE: u32 = 4;

/// The strided view of an input of the output's rank read at
/// `stride·position + channel` along each axis (`pSrc[2*i + 1]`, the
/// imaginary parts of interleaved complex samples; `rgb[3*i + c]`): each
/// axis sliced `channel::stride` up to the input's extent. The template is
/// read at one position only, so the stride is a guess; the caller's
/// evaluation against the whole output (at both size tuples) decides.
fn interleaved(var: &Expr, shape: &[Dim], index: &[u32], at: &[u32]) -> Option<Expr> {
    if shape.len() != at.len() || index.len() != at.len() || index == at {
        return None;
    }
    let mut items = Vec::with_capacity(at.len());
    for ((&q, &p), extent) in index.iter().zip(at).zip(shape) {
        if q == p {
            items.push(SliceItem::Full);
            continue;
        }
        let stride = (2..=MAX_INTERLEAVE).find(|a| {
            let base = a * p;
            q >= base && q - base < *a
        })?;
        // Stopping `stride - 1 - channel` short of the extent keeps the
        // view's length `extent / stride` exactly (`2*n / 2` is `n`).
        let channel = i64::from(q - stride * p);
        let stop = extent
            .add(&Dim::constant(channel + 1 - i64::from(stride)))
            .ok()?;
        items.push(SliceItem::Range {
            start: Dim::constant(channel),
            stop,
            step: i64::from(stride),
        });
    }
    build::slice(var.clone(), items).ok()
}

/// An input of lower rank read along some axes of the output, in order
/// (`mean[f]` in `x[b][f][i]`): reshaped with unit axes where the output
/// has axes it does not (`mean` as `[filters, 1]`), so that broadcasting
/// lines its axes up with the output's. `None` unless each index names one
/// output axis, the axes increasing.
fn aligned(var: Expr, shape: &[Dim], index: &[u32], at: &[u32]) -> Option<Expr> {
    let mut axes = Vec::with_capacity(index.len());
    for i in index {
        let mut hits = at.iter().enumerate().filter(|(_, a)| *a == i);
        let (axis, _) = hits.next()?;
        if hits.next().is_some() || axes.last().is_some_and(|l| *l >= axis) {
            return None;
        }
        axes.push(axis);
    }
    let first = *axes.first()?;
    let mut target = Vec::new();
    for axis in first..at.len() {
        match axes.iter().position(|a| *a == axis) {
            Some(k) => target.push(shape.get(k)?.clone()),
            None => target.push(Dim::constant(1)),
        }
    }
    if target.len() == shape.len() {
        return Some(var);
    }
    build::reshape(var, target).ok()
}

/// `base^exp` for `exp ≥ 1`: a product for squares, a power beyond.
fn power(base: Expr, exp: u32) -> Option<Expr> {
    match exp {
        0 => None,
        1 => Some(base),
        2 => build::mul(base.clone(), base).ok(),
        _ if !base.dtype().is_float() => {
            let mut acc = base.clone();
            for _ in 1..exp {
                acc = build::mul(acc, base.clone()).ok()?;
            }
            Some(acc)
        }
        _ => {
            let dtype = base.dtype();
            build::pow(base, float_lit(f64::from(exp), dtype)).ok()
        }
    }
}

/// Monomials in the order the algebra prints them.
fn display_cmp(a: &Mono, b: &Mono) -> Ordering {
    for (x, y) in a.factors().iter().zip(b.factors()) {
        let c = x.0.structural_cmp(&y.0).then_with(|| y.1.cmp(&x.1));
        if c != Ordering::Equal {
            return c;
        }
    }
    // Constants last.
    b.factors().len().cmp(&a.factors().len())
}

/// The monomial every term of `e` shares (smallest exponent of each atom
/// that appears with the same sign in every term), with `e` divided by it;
/// `None` when it is 1.
fn common_factor(e: &Value) -> Option<(Mono, Value)> {
    let (first, rest) = e.terms().split_first()?;
    let mut common: Vec<(Atom, i32)> = Vec::new();
    for (atom, exp) in first.mono.factors() {
        let mut shared = *exp;
        for term in rest {
            let other = term.mono.exponent(atom);
            if other == 0 || other.signum() != exp.signum() {
                shared = 0;
                break;
            }
            if other.abs() < shared.abs() {
                shared = other;
            }
        }
        if shared != 0 {
            common.push((atom.clone(), shared));
        }
    }
    if common.is_empty() {
        return None;
    }
    let mono = Mono::from_factors(common);
    let rest = e.div(&mono.to_expr()).ok()?;
    (rest.terms().len() > 1).then_some((mono, rest))
}

/// `e = c · l²` for a constant `c` and a linear form `l` (over atoms, with
/// a constant term) of at least two terms. The pivot, whose coefficient in
/// `l` is 1, is the atom printed last, so `(t - p)²` reads `(t - p)`.
fn square_of_linear(e: &Value) -> Option<(Rat, Value)> {
    let squares: Vec<(&Atom, &Rat)> = e
        .terms()
        .iter()
        .filter_map(|t| match t.mono.factors() {
            [(atom, 2)] if !atom.is_recip() => Some((atom, &t.coeff)),
            _ => None,
        })
        .collect();
    let (pivot, c) = squares.into_iter().max_by(|a, b| a.0.structural_cmp(b.0))?;
    let pivot_value = Value::atom(pivot.clone());
    let two_c = c * &Rat::int(2);
    let mut root = pivot_value.clone();
    for term in e.terms() {
        if term.mono.exponent(pivot) != 1 {
            continue;
        }
        let other = term.mono.to_expr().div(&pivot_value).ok()?;
        let coefficient = term.coeff.checked_div(&two_c)?;
        root = root.add(&other.scale(&coefficient));
    }
    if root.terms().len() < 2 {
        return None;
    }
    let square = root.mul(&root).scale(c);
    (square == *e).then(|| (c.clone(), root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::Symbol;
    use tenslift_targets::{print_expr, Access, Dim};

    fn array(name: &str, shape: &[&str]) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::Array {
                dtype: DType::F32,
                shape: shape.iter().map(|d| Dim::sym(d)).collect(),
                access: Access::In,
            },
        }
    }

    fn size(name: &str) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::Size,
        }
    }

    fn scalar(name: &str) -> Param {
        Param {
            name: name.into(),
            kind: ParamKind::Scalar(DType::F32),
        }
    }

    fn el(name: &str, i: usize) -> Value {
        Symbol::element(name, &[i as u32]).to_expr()
    }

    fn sizes(n: i64) -> Sizes {
        [("n".to_string(), n)].into_iter().collect()
    }

    /// Translates the 1-D output `f(i)` at n = 3, checked at n = 5.
    fn lift(params: &[Param], f: impl Fn(usize, i64) -> Value) -> Option<String> {
        let (s1, s2) = (sizes(3), sizes(5));
        let first = Tensor::from_fn(&[3], |i| f(i[0], 3));
        let second = Tensor::from_fn(&[5], |i| f(i[0], 5));
        let targets = Targets {
            first: &first,
            first_sizes: &s1,
            second: Some((&second, &s2)),
            out_shape: None,
        };
        translate(&targets, DType::F32, params, &[]).map(|e| print_expr(&e))
    }

    #[test]
    fn a_squared_difference_is_written_as_a_product_not_the_expanded_polynomial() {
        let params = [array("pred", &["n"]), array("truth", &["n"]), size("n")];
        let text = lift(&params, |i, _| {
            let d = el("truth", i).sub(&el("pred", i));
            d.mul(&d)
        })
        .expect("translates");
        assert_eq!(text, "mul(sub(truth, pred), sub(truth, pred))");
    }

    #[test]
    fn a_size_dependent_constant_is_spelled_with_the_size() {
        // o[j] = w[j] * x[j] / sqrt(ss / n + 1e-5)
        let params = [
            array("w", &["n"]),
            array("x", &["n"]),
            scalar("ss"),
            size("n"),
        ];
        let text = lift(&params, |i, n| {
            let ss = Symbol::scalar("ss").to_expr();
            let inner = ss
                .div(&Value::int(n))
                .expect("div")
                .add(&Value::constant(Rat::new(1, 100_000).expect("rat")));
            el("w", i).mul(&el("x", i)).div(&inner.sqrt()).expect("div")
        })
        .expect("translates");
        assert!(text.contains("div(ss, cast(n, f32))"), "{text}");
        assert!(text.contains("sqrt("), "{text}");
    }

    #[test]
    fn a_shared_factor_is_pulled_out_of_a_sum() {
        let params = [array("A", &["n"]), array("B", &["n"]), size("n")];
        let text = lift(&params, |i, _| {
            let s = el("A", i).add(&el("B", i));
            s.div(&s.sqrt()).expect("div")
        })
        .expect("translates");
        assert_eq!(text, "div(add(A, B), sqrt(add(A, B)))");
    }

    #[test]
    fn silu_keeps_its_reciprocal_form() {
        let params = [array("hb", &["n"]), size("n")];
        let text = lift(&params, |i, _| {
            let v = el("hb", i);
            v.div(&v.neg().exp().add(&Value::one())).expect("div")
        })
        .expect("translates");
        assert_eq!(text, "div(hb, add(exp(neg(hb)), 1.0f32))");
    }

    #[test]
    fn a_neighbour_read_is_not_point_wise() {
        let params = [array("A", &["n"]), size("n")];
        // out[i] = A[i] + A[0]: not one template under an identity map.
        assert!(lift(&params, |i, _| el("A", i).add(&el("A", 0))).is_none());
    }

    #[test]
    fn a_lower_rank_input_along_a_middle_axis_gets_unit_axes() {
        // `mean[f]` in `x[b][f][i]` at the output position [2, 3, 4].
        let mean = Expr::var("mean", array("mean", &["filters"]).ty());
        let view =
            aligned(mean.clone(), &[Dim::sym("filters")], &[3], &[2, 3, 4]).expect("aligned");
        assert_eq!(print_expr(&view), "reshape(mean, [filters, 1])");
        // The last axis needs nothing: broadcasting aligns trailing axes.
        let w = aligned(mean.clone(), &[Dim::sym("filters")], &[4], &[2, 3, 4]).expect("w");
        assert_eq!(print_expr(&w), "mean");
        // An index met twice at the position is ambiguous.
        assert!(aligned(mean, &[Dim::sym("filters")], &[2], &[2, 2, 4]).is_none());
    }

    #[test]
    fn a_template_reading_no_input_along_an_axis_is_broadcast_to_the_output() {
        // Nearest-neighbour upsampling, `y[i][r] = 2 * x[i]`: the template
        // reads `x` along the first axis only.
        let x = array("x", &["n"]);
        let params = [x.clone(), size("n"), size("f")];
        let shape = [Dim::sym("n"), Dim::sym("f")];
        let at = |n: i64, f: i64| -> (Tensor, Sizes) {
            let t = Tensor::from_fn(&[n as usize, f as usize], |i| {
                el("x", i[0]).scale(&Rat::int(2))
            });
            let s = [("n".to_string(), n), ("f".to_string(), f)]
                .into_iter()
                .collect();
            (t, s)
        };
        let ((first, s1), (second, s2)) = (at(3, 4), at(5, 2));
        let targets = Targets {
            first: &first,
            first_sizes: &s1,
            second: Some((&second, &s2)),
            out_shape: Some(&shape),
        };
        let expr = translate(&targets, DType::F32, &params, &[]).expect("translates");
        assert_eq!(expr.shape(), &shape);
        assert!(
            print_expr(&expr).starts_with("broadcast("),
            "{}",
            print_expr(&expr)
        );
        // Without the output's extents the template stays a column.
        let narrow = Targets {
            out_shape: None,
            ..targets
        };
        assert!(translate(&narrow, DType::F32, &params, &[]).is_none());
    }

    #[test]
    fn a_per_element_select_is_a_where_over_the_comparison_as_written() {
        // out[i] = x[i] > t ? x[i] : 2 * x[i]
        let params = [array("x", &["n"]), scalar("t"), size("n")];
        let text = lift(&params, |i, _| {
            let (x, t) = (el("x", i), Symbol::scalar("t").to_expr());
            Value::select(&Value::gt(&x, &t), &x, &x.scale(&Rat::from(2)))
        })
        .expect("translates");
        assert_eq!(text, "where(lt(t, x), x, mul(2.0f32, x))");
    }

    #[test]
    fn a_conjunction_and_a_negated_test_keep_their_logic() {
        // out[i] = (x[i] >= 0 && x[i] != t) ? x[i] : t
        let params = [array("x", &["n"]), scalar("t"), size("n")];
        let text = lift(&params, |i, _| {
            let (x, t) = (el("x", i), Symbol::scalar("t").to_expr());
            let cond =
                Value::logical_and(&Value::ge(&x, &Value::zero()), &Value::not_equals(&x, &t));
            Value::select(&cond, &x, &t)
        })
        .expect("translates");
        assert!(text.starts_with("where(and("), "{text}");
        assert!(text.contains("not("), "{text}");
    }

    #[test]
    fn a_comparison_used_as_a_number_is_converted() {
        // out[i] = (x[i] < t) * 3
        let params = [array("x", &["n"]), scalar("t"), size("n")];
        let text = lift(&params, |i, _| {
            let (x, t) = (el("x", i), Symbol::scalar("t").to_expr());
            Value::lt(&x, &t).scale(&Rat::from(3))
        })
        .expect("translates");
        assert_eq!(text, "mul(3.0f32, cast(lt(x, t), f32))");
    }

    #[test]
    fn interleaved_channels_are_strided_views_of_their_exact_length() {
        // |z[i]| over interleaved complex samples `x[2*i]`, `x[2*i + 1]`.
        let twice_n = Dim::sym("n").mul(&Dim::constant(2)).expect("2*n");
        let params = [
            Param {
                name: "x".into(),
                kind: ParamKind::Array {
                    dtype: DType::F32,
                    shape: vec![twice_n],
                    access: Access::In,
                },
            },
            size("n"),
        ];
        let text = lift(&params, |i, _| {
            let (re, im) = (el("x", 2 * i), el("x", 2 * i + 1));
            re.mul(&re).add(&im.mul(&im)).sqrt()
        })
        .expect("translates");
        assert_eq!(
            text,
            "sqrt(add(mul(x[0:2*n - 1:2], x[0:2*n - 1:2]), mul(x[1:2*n:2], x[1:2*n:2])))"
        );
    }

    #[test]
    fn a_scalar_extremum_from_a_start_value_reduces_then_combines() {
        // m = 0; for i: m = fmaxf(m, fabsf(x[i]))
        let params = [array("x", &["n"]), size("n")];
        let (s1, s2) = (sizes(3), sizes(5));
        let target = |n: usize| {
            let mut args = vec![Value::zero()];
            args.extend((0..n).map(|i| el("x", i).abs()));
            Tensor::from_fn(&[], |_| Value::max_of(&args))
        };
        let (first, second) = (target(3), target(5));
        let targets = Targets {
            first: &first,
            first_sizes: &s1,
            second: Some((&second, &s2)),
            out_shape: None,
        };
        let expr = translate(&targets, DType::F32, &params, &[]).expect("translates");
        assert_eq!(print_expr(&expr), "maximum(0.0f32, max(abs(x), axes=[0]))");
    }
}
