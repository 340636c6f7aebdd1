//! Syntax-directed vectorisation of one statement of a kept loop's body: a
//! perfect nest of step-1 loops around one assignment becomes one region
//! store whose value is the assignment's expression, operation for
//! operation, over slices of the arrays it reads. The nest's loops that
//! the store's subscripts name are the region's axes; the others reduce
//! (`t = t + e`, `t = t - e`, `t = t * e`, `t = max(t, e)`, `t = min(t, e)`).
//!
//! Each read becomes the slice its subscripts cover (a subscript `k - 1 -
//! i` reads a slice backwards: `flip`), laid out so that NumPy's
//! broadcasting lines its axes up with the region's: an axis the read does
//! not vary along is a length-1 slice of an index where one is there
//! (`path[0:k, k:k + 1]`), a broadcast otherwise. This is what a compiler
//! vectoriser does; the result is accepted only by the statement check
//! against the spec, like every other candidate.

use tenslift_frontend::ir::{self as loop_ir, Affine, ExprKind, LValue, MathFn, ScalarType};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, BinaryOp, DType, Dim, Expr, Lit, Param, ParamKind, UnaryOp};

use super::bounds::Facts;
use super::dependence::{difference, Scope};
use crate::synth::signature::dtype_of;
use crate::synth::stencil::{dim_of, NestLoop};

/// A read's slice: the items, the nest variable of each range axis, and
/// the axes read backwards.
struct ReadSlice {
    items: Vec<SliceItem>,
    labels: Vec<String>,
    flipped: Vec<usize>,
}

/// `array[index]` over `nest` as the search's leaf: a rank-0 value for a
/// C scalar, else its slice (flipped where read backwards), axes in the
/// array's order.
pub(super) fn plain_read(
    array: &str,
    index: &[Affine],
    nest: &[NestLoop],
    params: &[Param],
) -> Option<Expr> {
    let p = params.iter().find(|p| &*p.name == array)?;
    let var = Expr::var(&p.name, p.ty());
    if p.ty().rank() == 0 {
        return index
            .iter()
            .all(|a| a.as_constant() == Some(0))
            .then_some(var);
    }
    let read = read_slice(index, nest)?;
    flip(build::slice(var, read.items).ok()?, &read.flipped)
}

/// Whether `stmt` is a perfect nest whose store names every loop of the
/// nest (nothing is reduced).
pub(super) fn is_pointwise(stmt: &loop_ir::Stmt) -> bool {
    let Some((nest, LValue::Element { index, .. }, _)) = perfect_nest(stmt) else {
        return false;
    };
    nest.iter()
        .all(|l| index.iter().any(|a| a.terms.contains_key(&l.iter)))
}

/// The slice of `array[index]` over the nest loops `nest`: a subscript
/// `v + c` (or `c - v`) of one nest variable is a range, any other an
/// index. `None` for a diagonal, a coefficient other than ±1, or a bound
/// that depends on another nest variable.
fn read_slice(index: &[Affine], nest: &[NestLoop]) -> Option<ReadSlice> {
    let is_nest = |v: &str| nest.iter().any(|l| l.iter == v);
    let mut out = ReadSlice {
        items: Vec::new(),
        labels: Vec::new(),
        flipped: Vec::new(),
    };
    for sub in index {
        let vars: Vec<(&String, &i64)> = sub.terms.iter().filter(|(v, _)| is_nest(v)).collect();
        let (v, c) = match vars.as_slice() {
            [] => {
                out.items.push(SliceItem::Index(dim_of(sub)?));
                continue;
            }
            [(v, c)] if c.abs() == 1 && !out.labels.contains(v) => ((*v).clone(), **c),
            _ => return None,
        };
        let l = nest.iter().find(|l| l.iter == v)?;
        let free = |a: &Affine| a.terms.keys().all(|k| !is_nest(k));
        if !free(&l.start) || !free(&l.end) {
            return None;
        }
        let mut rest = sub.clone();
        rest.terms.remove(&v);
        let (lo, hi) = if c == 1 {
            (add(&l.start, &rest), add(&l.end, &rest))
        } else {
            // c - v for v in [s, e): from c - e + 1 up to c - s.
            let mut lo = difference(&rest, &l.end);
            lo.constant += 1;
            let mut hi = difference(&rest, &l.start);
            hi.constant += 1;
            out.flipped.push(out.labels.len());
            (lo, hi)
        };
        out.items.push(SliceItem::Range {
            start: dim_of(&lo)?,
            stop: dim_of(&hi)?,
            step: 1,
        });
        out.labels.push(v);
    }
    Some(out)
}

fn add(a: &Affine, b: &Affine) -> Affine {
    super::dependence::add(a, b)
}

/// The read `array[index]` as a value whose axes follow `order` (the nest
/// variables of the value being built), right-aligned for broadcasting: a
/// missing variable is a length-1 axis or a leading axis left out.
pub(super) fn aligned_read(
    array: &str,
    index: &[Affine],
    nest: &[NestLoop],
    order: &[String],
    params: &[Param],
) -> Option<Expr> {
    let p = params.iter().find(|p| &*p.name == array)?;
    let var = Expr::var(&p.name, p.ty());
    if p.ty().rank() == 0 {
        // A C scalar (read as `s[0]` in the loop IR) is a rank-0 value.
        return index
            .iter()
            .all(|a| a.as_constant() == Some(0))
            .then_some(var);
    }
    let read = read_slice(index, nest)?;
    if let Some(items) = unit_axes(&read, order) {
        let flips = flips_after_units(&read, &items);
        let sliced = build::slice(var, items).ok()?;
        return flip(sliced, &flips);
    }
    let sliced = flip(build::slice(var, read.items.clone()).ok()?, &read.flipped)?;
    align(sliced, &read.labels, nest, order)
}

/// The read's items with some indices turned into length-1 ranges so that
/// its axes line up with the suffix of `order` (`path[0:k, k:k + 1]` in
/// an `(i, j)` nest); `None` when the axes are not in `order`'s order.
fn unit_axes(read: &ReadSlice, order: &[String]) -> Option<Vec<SliceItem>> {
    let mut items = read.items.clone();
    let mut next = order.len();
    let mut label = read.labels.len();
    for k in (0..items.len()).rev() {
        // An index between two axes becomes a length-1 axis where `order`
        // has a variable the read lacks; a leading one just drops.
        let range_before = items[..k]
            .iter()
            .any(|i| matches!(i, SliceItem::Range { .. }));
        match &items[k] {
            SliceItem::Range { .. } => {
                label -= 1;
                if next == 0 || order[next - 1] != read.labels[label] {
                    return None;
                }
                next -= 1;
            }
            SliceItem::Index(d)
                if range_before && next > 0 && !read.labels.contains(&order[next - 1]) =>
            {
                let stop = d.add(&Dim::constant(1)).ok()?;
                items[k] = SliceItem::Range {
                    start: d.clone(),
                    stop,
                    step: 1,
                };
                next -= 1;
            }
            SliceItem::Index(_) => {}
            SliceItem::Full => return None,
        }
    }
    // Variables left before the first axis broadcast from the left.
    order[..next]
        .iter()
        .all(|v| !read.labels.contains(v))
        .then_some(items)
}

/// The flipped axes of `read` renumbered among `items` (where some
/// indices became length-1 axes).
fn flips_after_units(read: &ReadSlice, items: &[SliceItem]) -> Vec<usize> {
    let mut axis = 0;
    let mut range = 0;
    let mut out = Vec::new();
    for (k, item) in items.iter().enumerate() {
        if let SliceItem::Range { .. } = item {
            if matches!(read.items[k], SliceItem::Range { .. }) {
                if read.flipped.contains(&range) {
                    out.push(axis);
                }
                range += 1;
            }
            axis += 1;
        }
    }
    out
}

fn flip(e: Expr, axes: &[usize]) -> Option<Expr> {
    if axes.is_empty() {
        Some(e)
    } else {
        build::flip(e, axes).ok()
    }
}

/// `e` (axes labelled `labels`) transposed into `order` and broadcast over
/// the variables of `order` it lacks.
fn align(e: Expr, labels: &[String], nest: &[NestLoop], order: &[String]) -> Option<Expr> {
    let position = |v: &String| order.iter().position(|o| o == v);
    let mut perm: Vec<usize> = (0..labels.len()).collect();
    perm.sort_by_key(|&k| position(&labels[k]));
    let present: Vec<&String> = perm.iter().map(|&k| &labels[k]).collect();
    let mut e = if perm.iter().enumerate().all(|(i, &p)| i == p) {
        e
    } else {
        build::transpose(e, &perm).ok()?
    };
    let first = present
        .first()
        .and_then(|v| position(v))
        .unwrap_or(order.len());
    let missing: Vec<&String> = order[first..]
        .iter()
        .filter(|v| !present.contains(v))
        .collect();
    if missing.is_empty() {
        return Some(e);
    }
    // broadcast to [missing..., present...], then into `order`'s order.
    let mut shape = Vec::new();
    for v in missing.iter().chain(present.iter()) {
        shape.push(extent_of(v, nest)?);
    }
    e = build::broadcast(e, shape).ok()?;
    let ranked: Vec<&String> = missing.iter().chain(present.iter()).copied().collect();
    let mut perm: Vec<usize> = (0..ranked.len()).collect();
    perm.sort_by_key(|&k| position(ranked[k]));
    build::transpose(e, &perm).ok()
}

fn extent_of(v: &str, nest: &[NestLoop]) -> Option<Dim> {
    let l = nest.iter().find(|l| l.iter == v)?;
    dim_of(&difference(&l.end, &l.start))
}

/// The whole shape of a value over `order` (each variable's trip count).
fn full_shape(order: &[String], nest: &[NestLoop]) -> Option<Vec<Dim>> {
    order.iter().map(|v| extent_of(v, nest)).collect()
}

/// The value of the loop-IR expression `e` at every point of `nest`, one
/// axis per nest loop in order: what [`vectorise`] does to an assignment's
/// right-hand side, for a tactic that has the expression alone.
pub(crate) fn expression_over(
    e: &loop_ir::Expr,
    nest: &[NestLoop],
    params: &[Param],
) -> Option<Expr> {
    let order: Vec<String> = nest.iter().map(|l| l.iter.clone()).collect();
    Translator {
        nest,
        order: &order,
        params,
    }
    .expr(e)
}

/// Translates loop-IR expressions over one nest.
struct Translator<'a> {
    nest: &'a [NestLoop],
    order: &'a [String],
    params: &'a [Param],
}

impl Translator<'_> {
    fn expr(&self, e: &loop_ir::Expr) -> Option<Expr> {
        let dtype = scalar_dtype(e.ty)?;
        match &e.kind {
            ExprKind::IntLit { value } if dtype.is_float() => {
                Some(Expr::lit(Lit::float(*value as f64, dtype)))
            }
            ExprKind::IntLit { value } => Some(Expr::lit(Lit::int(*value, dtype))),
            ExprKind::FloatLit { value, .. } => Some(Expr::lit(Lit::float(*value, dtype))),
            ExprKind::Var { name, .. } => {
                let p = self.params.iter().find(|p| &*p.name == name.as_str())?;
                match p.kind {
                    ParamKind::Size | ParamKind::Scalar(_) => {
                        convert(Expr::var(&p.name, p.ty()), dtype)
                    }
                    ParamKind::Array { .. } => None,
                }
            }
            ExprKind::Load { array, index } => {
                aligned_read(array, index, self.nest, self.order, self.params)
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg)?;
                match op {
                    loop_ir::UnaryOp::Neg => build::neg(a).ok(),
                    loop_ir::UnaryOp::Not => {
                        let zero = Expr::lit(Lit::zero(a.dtype()));
                        convert(build::eq(a, zero).ok()?, dtype)
                    }
                }
            }
            // A converted integer literal is the literal of the new type.
            ExprKind::Cast { arg } => match arg.kind {
                ExprKind::IntLit { value } if dtype.is_float() => {
                    Some(Expr::lit(Lit::float(value as f64, dtype)))
                }
                _ => convert(self.expr(arg)?, dtype),
            },
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, dtype),
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => self.select(cond, then_value, else_value),
            ExprKind::Call { func, args } => self.call(*func, args),
        }
    }

    fn binary(
        &self,
        op: loop_ir::BinaryOp,
        lhs: &loop_ir::Expr,
        rhs: &loop_ir::Expr,
        dtype: DType,
    ) -> Option<Expr> {
        use loop_ir::BinaryOp as B;
        if matches!(op, B::And | B::Or) {
            let (a, b) = (self.truth(lhs)?, self.truth(rhs)?);
            let t = if op == B::And {
                BinaryOp::And
            } else {
                BinaryOp::Or
            };
            return convert(Expr::binary(t, a, b).ok()?, dtype);
        }
        let a = self.expr(lhs)?;
        let b = convert(self.expr(rhs)?, a.dtype())?;
        let t = match op {
            B::Add => BinaryOp::Add,
            B::Sub => BinaryOp::Sub,
            B::Mul => BinaryOp::Mul,
            B::Div if a.dtype().is_float() => BinaryOp::Div,
            B::Div => BinaryOp::TruncDiv,
            B::Rem => BinaryOp::Rem,
            B::Lt => BinaryOp::Lt,
            B::Le => BinaryOp::Le,
            B::Gt => BinaryOp::Gt,
            B::Ge => BinaryOp::Ge,
            B::Eq => BinaryOp::Eq,
            B::Ne => BinaryOp::Ne,
            B::And | B::Or => return None,
        };
        convert(Expr::binary(t, a, b).ok()?, dtype)
    }

    /// A C condition as a `bool` value: a comparison directly, anything
    /// else compared with zero.
    fn truth(&self, e: &loop_ir::Expr) -> Option<Expr> {
        let v = self.expr(e)?;
        if let ExprKind::Binary { op, .. } = &e.kind {
            if op.is_comparison() || matches!(op, loop_ir::BinaryOp::And | loop_ir::BinaryOp::Or) {
                // The comparison's bool, before its conversion to `int`.
                if let Some(inner) = v.args().first().filter(|_| v.dtype() != DType::Bool) {
                    if inner.dtype() == DType::Bool {
                        return Some(inner.clone());
                    }
                }
            }
        }
        if v.dtype() == DType::Bool {
            return Some(v);
        }
        let zero = Expr::lit(Lit::zero(v.dtype()));
        build::ne(v, zero).ok()
    }

    /// `c ? a : b`; `a < b ? a : b` and its mirror images are `minimum`
    /// and `maximum`.
    fn select(&self, c: &loop_ir::Expr, a: &loop_ir::Expr, b: &loop_ir::Expr) -> Option<Expr> {
        if let Some((largest, x, y)) = extremum(c, a, b) {
            let (x, y) = (self.expr(x)?, self.expr(y)?);
            let op = if largest {
                BinaryOp::Maximum
            } else {
                BinaryOp::Minimum
            };
            return Expr::binary(op, x, y).ok();
        }
        build::select(self.truth(c)?, self.expr(a)?, self.expr(b)?).ok()
    }

    fn call(&self, func: MathFn, args: &[loop_ir::Expr]) -> Option<Expr> {
        let mut v: Vec<Expr> = args.iter().map(|a| self.expr(a)).collect::<Option<_>>()?;
        let unary = |op| Expr::unary(op, v[0].clone()).ok();
        match (func, v.len()) {
            (MathFn::Sqrt, 1) => unary(UnaryOp::Sqrt),
            (MathFn::Exp, 1) => unary(UnaryOp::Exp),
            (MathFn::Log, 1) => unary(UnaryOp::Log),
            (MathFn::Tanh, 1) => unary(UnaryOp::Tanh),
            (MathFn::Round, 1) => unary(UnaryOp::Round),
            (MathFn::Floor, 1) => unary(UnaryOp::Floor),
            (MathFn::Ceil, 1) => unary(UnaryOp::Ceil),
            (MathFn::Sin, 1) => unary(UnaryOp::Sin),
            (MathFn::Cos, 1) => unary(UnaryOp::Cos),
            (MathFn::Cosh, 1) => unary(UnaryOp::Cosh),
            (MathFn::Sinh, 1) => unary(UnaryOp::Sinh),
            (MathFn::Abs, 1) => unary(UnaryOp::Abs),
            (MathFn::Pow | MathFn::Max | MathFn::Min, 2) => {
                let op = match func {
                    MathFn::Pow => BinaryOp::Pow,
                    MathFn::Max => BinaryOp::Maximum,
                    _ => BinaryOp::Minimum,
                };
                let b = v.pop()?;
                let a = v.pop()?;
                let b = convert(b, a.dtype())?;
                Expr::binary(op, a, b).ok()
            }
            _ => None,
        }
    }
}

/// `Some((largest, x, y))` when `c ? a : b` is `max(x, y)` (largest) or
/// `min(x, y)`: the condition compares the two branches.
fn extremum<'e>(
    c: &'e loop_ir::Expr,
    a: &'e loop_ir::Expr,
    b: &'e loop_ir::Expr,
) -> Option<(bool, &'e loop_ir::Expr, &'e loop_ir::Expr)> {
    use loop_ir::BinaryOp as B;
    let ExprKind::Binary { op, lhs, rhs } = &c.kind else {
        return None;
    };
    let greater = match op {
        B::Gt | B::Ge => true,
        B::Lt | B::Le => false,
        _ => return None,
    };
    if **lhs == *a && **rhs == *b {
        Some((greater, a, b))
    } else if **lhs == *b && **rhs == *a {
        Some((!greater, a, b))
    } else {
        None
    }
}

/// The TensIR type of a C scalar type the vectoriser handles (not `u64`,
/// which TensIR would compute as `i64`).
fn scalar_dtype(t: ScalarType) -> Option<DType> {
    (t != ScalarType::U64).then(|| dtype_of(t))
}

fn convert(e: Expr, to: DType) -> Option<Expr> {
    if e.dtype() == to {
        Some(e)
    } else {
        build::cast(e, to).ok()
    }
}

/// A perfect nest: loops with one statement each around one assignment.
fn perfect_nest(stmt: &loop_ir::Stmt) -> Option<(Vec<NestLoop>, &LValue, &loop_ir::Expr)> {
    let mut loops = Vec::new();
    let mut s = stmt;
    loop {
        match s {
            loop_ir::Stmt::Loop(l) if l.step == 1 => {
                loops.push(NestLoop {
                    iter: l.iter.clone(),
                    start: l.start.clone(),
                    end: l.end.clone(),
                });
                let [inner] = l.body.as_slice() else {
                    return None;
                };
                s = inner;
            }
            loop_ir::Stmt::Assign { target, value, .. } => return Some((loops, target, value)),
            _ => return None,
        }
    }
}

/// A reduction's operation and its operand: `t = t ⊕ e`.
enum Reduction<'e> {
    None,
    Sum(&'e loop_ir::Expr, bool),
    Prod(&'e loop_ir::Expr),
    Extreme(&'e loop_ir::Expr, bool),
}

fn reduction<'e>(value: &'e loop_ir::Expr, target: &loop_ir::Expr) -> Option<Reduction<'e>> {
    use loop_ir::BinaryOp as B;
    // `t = (float)((double)t + e)`: darknet's `variance[i] += pow(x - m, 2)`
    // adds a double to a float accumulator. Over the reals the widening
    // and narrowing are the identity; the sum is taken in the wider type
    // and narrowed once, where the C narrows after every step.
    if let ExprKind::Cast { arg } = &value.kind {
        if value.ty == target.ty {
            if let ExprKind::Binary { op, lhs, rhs } = &arg.kind {
                let widened = |e: &loop_ir::Expr| {
                    matches!(&e.kind, ExprKind::Cast { arg } if **arg == *target)
                        && e.ty.is_float()
                        && e.ty.bits() >= target.ty.bits()
                };
                return match op {
                    B::Add if widened(lhs) => Some(Reduction::Sum(rhs, false)),
                    B::Add if widened(rhs) => Some(Reduction::Sum(lhs, false)),
                    B::Sub if widened(lhs) => Some(Reduction::Sum(rhs, true)),
                    _ => None,
                };
            }
        }
    }
    match &value.kind {
        ExprKind::Binary { op, lhs, rhs } => match op {
            B::Add if **lhs == *target => Some(Reduction::Sum(rhs, false)),
            B::Add if **rhs == *target => Some(Reduction::Sum(lhs, false)),
            B::Sub if **lhs == *target => Some(Reduction::Sum(rhs, true)),
            B::Mul if **lhs == *target => Some(Reduction::Prod(rhs)),
            B::Mul if **rhs == *target => Some(Reduction::Prod(lhs)),
            _ => None,
        },
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            let (largest, x, y) = extremum(cond, then_value, else_value)?;
            match (*x == *target, *y == *target) {
                (true, false) => Some(Reduction::Extreme(y, largest)),
                (false, true) => Some(Reduction::Extreme(x, largest)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The value of the region store for `stmt`, vectorised over its nest;
/// `scope` holds the kept loops around it (for a reduction's range).
pub(super) fn vectorise(stmt: &loop_ir::Stmt, params: &[Param], scope: &Scope) -> Option<Expr> {
    let (nest, target, value) = perfect_nest(stmt)?;
    let LValue::Element { array, index, ty } = target else {
        return None;
    };
    let is_nest = |v: &str| nest.iter().any(|l| l.iter == v);
    let free = |a: &Affine| a.terms.keys().all(|k| !is_nest(k));
    if !nest.iter().all(|l| free(&l.start) && free(&l.end)) {
        return None;
    }
    let store = read_slice(index, &nest)?;
    if !store.flipped.is_empty() {
        return None;
    }
    let reduced: Vec<String> = nest
        .iter()
        .map(|l| l.iter.clone())
        .filter(|v| !store.labels.contains(v))
        .collect();
    let loaded = loop_ir::Expr {
        ty: *ty,
        kind: ExprKind::Load {
            array: array.clone(),
            index: index.clone(),
        },
    };
    let kind = if reduced.is_empty() {
        Reduction::None
    } else {
        reduction(value, &loaded)?
    };
    let mut order = reduced.clone();
    order.extend(store.labels.iter().cloned());
    let tr = Translator {
        nest: &nest,
        order: &order,
        params,
    };
    let current = || aligned_read(array, index, &nest, &store.labels, params);
    let whole = |e: Expr| -> Option<Expr> {
        let shape = full_shape(&order, &nest)?;
        if e.shape() == shape.as_slice() {
            Some(e)
        } else {
            build::broadcast(e, shape).ok()
        }
    };
    let axes: Vec<usize> = (0..reduced.len()).collect();
    match kind {
        Reduction::None => tr.expr(value),
        Reduction::Sum(e, negative) => {
            let summed = build::sum(whole(tr.expr(e)?)?, &axes).ok()?;
            let op = if negative {
                BinaryOp::Sub
            } else {
                BinaryOp::Add
            };
            // A sum in a wider type than the accumulator's (see
            // `reduction`) is added in that type, then narrowed.
            let acc = current()?;
            let narrow = acc.dtype();
            let total = Expr::binary(op, convert(acc, summed.dtype())?, summed).ok()?;
            convert(total, narrow)
        }
        Reduction::Prod(e) => {
            let product = build::prod(whole(tr.expr(e)?)?, &axes).ok()?;
            Expr::binary(BinaryOp::Mul, current()?, product).ok()
        }
        Reduction::Extreme(e, largest) => {
            let terms = whole(tr.expr(e)?)?;
            extreme(terms, current()?, largest, &nest, &reduced, scope)
        }
    }
}

/// `max(t, max over the reduced axes of terms)` (or `min`): when the
/// reduction's range may be empty, `t` joins the terms along the one
/// reduced axis, so the reduction never runs over nothing.
fn extreme(
    terms: Expr,
    current: Expr,
    largest: bool,
    nest: &[NestLoop],
    reduced: &[String],
    scope: &Scope,
) -> Option<Expr> {
    let axes: Vec<usize> = (0..reduced.len()).collect();
    let reduce = |e: Expr| {
        if largest {
            build::max(e, &axes).ok()
        } else {
            build::min(e, &axes).ok()
        }
    };
    let op = if largest {
        BinaryOp::Maximum
    } else {
        BinaryOp::Minimum
    };
    let facts = Facts::of_loops(
        scope
            .iter()
            .chain(nest.iter().filter(|l| !reduced.contains(&l.iter))),
    );
    let nonempty = nest.iter().filter(|l| reduced.contains(&l.iter)).all(|l| {
        let mut d = difference(&l.end, &l.start);
        d.constant -= 1;
        facts.implies(&d)
    });
    if nonempty {
        return Expr::binary(op, current, reduce(terms)?).ok();
    }
    let [_] = reduced else {
        return None;
    };
    // [1, region...] beside [trips, region...], joined along axis 0.
    let mut one = vec![Dim::constant(1)];
    one.extend(terms.shape()[1..].iter().cloned());
    let head = build::broadcast(current, one).ok()?;
    reduce(build::concat(vec![head, terms], 0).ok()?)
}
