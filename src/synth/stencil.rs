//! Stencil sketches: shifted-slice leaves, region stores and the linear
//! stencil solver.
//!
//! One statement of a loop body (a loop nest that stores into one array)
//! reads its inputs at fixed offsets from the element it writes: jacobi-1d's
//! `B[i] = 0.33333*(A[i-1] + A[i] + A[i+1])` over `1 <= i < n-1`. Each
//! access becomes a slice over the nest's iteration box (`A[0:n-2]`,
//! `A[1:n-1]`, `A[2:n]`), the store becomes a region store (`B[1:n-1]`), and
//! loop variables the store does not mention (reductions) span their whole
//! range in the reads. [`derive_linear_stencil`] then reads, from the spec,
//! which current input elements each output element depends on and with
//! which coefficient; when every element uses the same coefficients on the
//! same shifted slices, the value is that linear combination, built
//! directly ([`linear_combination`]). Other bodies go to the general search
//! with the slices as its leaves.

use std::collections::HashMap;

use tenslift_frontend::ir::{self as loop_ir, Affine, ExprKind, LValue};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, BinaryOp, DType, Dim, Expr, Lit, UnaryOp};

use crate::algebra::{Rat, Symbol, Tensor, Value};
use crate::spec::tensir::float_literal_value;
use crate::spec::Sizes;

/// One loop around an access, inside the statement being lifted.
#[derive(Clone, Debug, PartialEq)]
pub struct NestLoop {
    pub iter: String,
    pub start: Affine,
    pub end: Affine,
}

/// An array access of a statement with the loops that enclose it there.
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    pub array: String,
    pub index: Vec<Affine>,
    pub loops: Vec<NestLoop>,
    pub is_store: bool,
}

/// Why a statement has no stencil form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StencilError {
    #[error("a loop with step {0} (only step 1 is sliced)")]
    Step(i64),
    #[error("a guarded or data-dependent `if` inside the statement")]
    Conditional,
    #[error("a store into the local scalar `{0}`")]
    LocalStore(String),
    #[error("stores into more than one array element pattern")]
    SeveralStores,
    #[error("no array store")]
    NoStore,
    #[error(
        "the subscripts of `{0}` are not a box of the loops (diagonal, strided or triangular)"
    )]
    NotABox(String),
}

/// Every array access in `stmt`, with its enclosing loops (outermost first).
pub fn accesses(stmt: &loop_ir::Stmt) -> Result<Vec<Access>, StencilError> {
    let mut out = Vec::new();
    collect_stmt(stmt, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn collect_stmt(
    stmt: &loop_ir::Stmt,
    loops: &mut Vec<NestLoop>,
    out: &mut Vec<Access>,
) -> Result<(), StencilError> {
    match stmt {
        loop_ir::Stmt::Loop(l) => {
            if l.step != 1 {
                return Err(StencilError::Step(l.step));
            }
            loops.push(NestLoop {
                iter: l.iter.clone(),
                start: l.start.clone(),
                end: l.end.clone(),
            });
            for s in &l.body {
                collect_stmt(s, loops, out)?;
            }
            loops.pop();
        }
        loop_ir::Stmt::Assign { target, value, .. } => {
            collect_expr(value, loops, out);
            match target {
                LValue::Element { array, index, .. } => out.push(Access {
                    array: array.clone(),
                    index: index.clone(),
                    loops: loops.clone(),
                    is_store: true,
                }),
                LValue::Scalar { name, .. } => return Err(StencilError::LocalStore(name.clone())),
            }
        }
        loop_ir::Stmt::If { .. } => return Err(StencilError::Conditional),
        loop_ir::Stmt::Return { value, .. } => collect_expr(value, loops, out),
    }
    Ok(())
}

fn collect_expr(e: &loop_ir::Expr, loops: &[NestLoop], out: &mut Vec<Access>) {
    match &e.kind {
        ExprKind::Load { array, index } => out.push(Access {
            array: array.clone(),
            index: index.clone(),
            loops: loops.to_vec(),
            is_store: false,
        }),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => collect_expr(arg, loops, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            collect_expr(lhs, loops, out);
            collect_expr(rhs, loops, out);
        }
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            collect_expr(cond, loops, out);
            collect_expr(then_value, loops, out);
            collect_expr(else_value, loops, out);
        }
        ExprKind::Call { args, .. } => {
            for a in args {
                collect_expr(a, loops, out);
            }
        }
        ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } | ExprKind::Var { .. } => {}
    }
}

/// The literal floating-point constants of `stmt` (`0.33333`), each once.
pub fn float_constants(stmt: &loop_ir::Stmt) -> Vec<f64> {
    fn walk_expr(e: &loop_ir::Expr, out: &mut Vec<f64>) {
        match &e.kind {
            ExprKind::FloatLit { value, .. } if !out.contains(value) => out.push(*value),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => walk_expr(arg, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                walk_expr(lhs, out);
                walk_expr(rhs, out);
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                walk_expr(cond, out);
                walk_expr(then_value, out);
                walk_expr(else_value, out);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|a| walk_expr(a, out)),
            _ => {}
        }
    }
    fn walk(s: &loop_ir::Stmt, out: &mut Vec<f64>) {
        match s {
            loop_ir::Stmt::Loop(l) => l.body.iter().for_each(|b| walk(b, out)),
            loop_ir::Stmt::Assign { value, .. } | loop_ir::Stmt::Return { value, .. } => {
                walk_expr(value, out)
            }
            loop_ir::Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                walk_expr(cond, out);
                then_body.iter().chain(else_body).for_each(|b| walk(b, out));
            }
        }
    }
    let mut out = Vec::new();
    walk(stmt, &mut out);
    out
}

/// `a` as a TensIR dim (sizes and kept loop variables are its symbols).
pub fn dim_of(a: &Affine) -> Option<Dim> {
    let mut d = Dim::constant(a.constant);
    for (name, &c) in &a.terms {
        let term = Dim::constant(c).mul(&Dim::sym(name)).ok()?;
        d = d.add(&term).ok()?;
    }
    Some(d)
}

/// The slice an access covers over its loops: a subscript `v + c` of a
/// nest loop `v` in `[s, e)` is `s+c : e+c`; a subscript without nest
/// loops is an index. `None` when the access is not such a box (a loop in
/// two subscripts, a coefficient other than 1, a bound that depends on
/// another nest loop).
pub fn slice_of(access: &Access) -> Option<Vec<SliceItem>> {
    slice_walked(access, false)
}

/// As [`slice_of`], and also for a subscript that walks down its loop
/// (`x[n - 1 - i]`): the elements it covers, as an ascending range. Only
/// for a statement whose store and reads all walk down: there position
/// `k` of every ascending range is the same iteration.
pub fn covered_slice(access: &Access) -> Option<Vec<SliceItem>> {
    slice_walked(access, true)
}

/// Whether some subscript of `access` walks down one of its loops.
pub fn walks_down(access: &Access) -> bool {
    access.index.iter().any(|sub| {
        access
            .loops
            .iter()
            .any(|l| sub.terms.get(&l.iter) == Some(&-1))
    })
}

fn slice_walked(access: &Access, descending: bool) -> Option<Vec<SliceItem>> {
    let nest: Vec<&str> = access.loops.iter().map(|l| l.iter.as_str()).collect();
    let mut used: Vec<&str> = Vec::new();
    let mut items = Vec::new();
    for sub in &access.index {
        let inner: Vec<(&String, &i64)> = sub
            .terms
            .iter()
            .filter(|(v, _)| nest.contains(&v.as_str()))
            .collect();
        match inner.as_slice() {
            [] => items.push(SliceItem::Index(dim_of(sub)?)),
            [(v, c)] if **c == 1 || (descending && **c == -1) => {
                let c = **c;
                if used.contains(&v.as_str()) {
                    return None;
                }
                used.push(v.as_str());
                let l = access.loops.iter().find(|l| &l.iter == *v)?;
                let bounds_free = |a: &Affine| a.terms.keys().all(|k| !nest.contains(&k.as_str()));
                if !bounds_free(&l.start) || !bounds_free(&l.end) {
                    return None;
                }
                let mut rest = sub.clone();
                rest.terms.remove(*v);
                // rest + c·i over i in [start, end): for c = -1 that is
                // [rest - (end - 1), rest - start + 1).
                let shift = |bound: &Affine| -> Option<Dim> {
                    let mut b = bound.clone();
                    if c == -1 {
                        b.constant = b.constant.checked_neg()?.checked_add(1)?;
                        b.terms.values_mut().for_each(|t| *t = -*t);
                    }
                    b.constant = b.constant.checked_add(rest.constant)?;
                    for (k, c) in &rest.terms {
                        let e = b.terms.entry(k.clone()).or_insert(0);
                        *e += c;
                        if *e == 0 {
                            b.terms.remove(k);
                        }
                    }
                    dim_of(&b)
                };
                let (low, high) = if c == 1 {
                    (&l.start, &l.end)
                } else {
                    (&l.end, &l.start)
                };
                items.push(SliceItem::Range {
                    start: shift(low)?,
                    stop: shift(high)?,
                    step: 1,
                });
            }
            _ => return None,
        }
    }
    Some(items)
}

/// The store region of a statement: every store must write the same
/// subscripts of the same array (`x[i] = b[i]; x[i] -= …` in one nest is
/// fine; two arrays or two patterns are not).
pub fn store_region(accesses: &[Access]) -> Result<(String, Vec<SliceItem>), StencilError> {
    let stores: Vec<&Access> = accesses.iter().filter(|a| a.is_store).collect();
    let first = stores.first().ok_or(StencilError::NoStore)?;
    if stores
        .iter()
        .any(|s| s.array != first.array || s.index != first.index)
    {
        return Err(StencilError::SeveralStores);
    }
    // Only the loops a store subscript mentions shape the region; the
    // others are reductions and may be nested in any order.
    let region = covered_slice(first).ok_or_else(|| StencilError::NotABox(first.array.clone()))?;
    Ok((first.array.clone(), region))
}

/// The elements of `value` inside `region` (step-1 ranges and indices).
pub fn region_value(value: &Tensor, region: &[SliceItem], sizes: &Sizes) -> Option<Tensor> {
    if region.len() != value.shape().len() {
        return None;
    }
    let env = |n: &str| sizes.get(n).copied();
    // Per dimension: the first index and the extent (None = dropped index).
    let mut starts = Vec::new();
    let mut kept = Vec::new();
    for (item, &extent) in region.iter().zip(value.shape()) {
        let (start, len, keep) = match item {
            SliceItem::Full => (0, extent as i64, true),
            SliceItem::Index(d) => (d.eval(&env).ok()?, 1, false),
            SliceItem::Range { start, stop, step } if *step == 1 => {
                let s = start.eval(&env).ok()?;
                (s, stop.eval(&env).ok()? - s, true)
            }
            SliceItem::Range { .. } => return None,
        };
        if start < 0 || len < 0 || start + len > extent as i64 {
            return None;
        }
        starts.push(start as usize);
        kept.push(keep.then_some(len as usize));
    }
    let shape: Vec<usize> = kept.iter().flatten().copied().collect();
    let mut elems = Vec::with_capacity(shape.iter().product());
    let total: usize = shape.iter().product();
    let sub = Tensor::from_fn(&shape, |_| Value::zero());
    for offset in 0..total {
        let idx = sub.index_of(offset);
        let mut k = idx.iter();
        let full: Vec<usize> = starts
            .iter()
            .zip(&kept)
            .map(|(s, keep)| s + keep.map_or(0, |_| k.next().copied().unwrap_or(0)))
            .collect();
        elems.push(value.get(&full)?.clone());
    }
    Tensor::new(shape, elems).ok()
}

/// A literal whose exact value (the shortest round-tripping decimal, as
/// the TensIR spec reads literals) is `r`, when there is one.
pub fn exact_literal(r: &Rat, dtype: DType) -> Option<Expr> {
    if !dtype.is_float() {
        return r.to_i64().map(|v| Expr::lit(Lit::int(v, dtype)));
    }
    let v = r.to_f64();
    (float_literal_value(v, dtype)? == *r).then(|| Expr::lit(Lit::float(v, dtype)))
}

/// The coefficient of each leaf in `target = c0 + Σ c_k · leaf_k`, when
/// every element of the target is such a linear combination of the leaves'
/// elements at the same position, with the same coefficients everywhere.
/// Only leaves whose every element is one input symbol take part (a
/// shifted slice, a scalar parameter); the first of equal leaves is used.
pub struct LinearStencil {
    pub terms: Vec<(usize, Rat)>,
    pub constant: Rat,
}

pub fn derive_linear_stencil(target: &Tensor, leaves: &[Tensor]) -> Option<LinearStencil> {
    let shape = target.shape();
    // For each usable leaf: its symbol at every target position.
    let mut usable: Vec<(usize, Vec<Symbol>)> = Vec::new();
    for (k, v) in leaves.iter().enumerate() {
        let symbols: Option<Vec<Symbol>> = if v.shape() == shape {
            v.elems().iter().map(Value::as_symbol).collect()
        } else if v.shape().is_empty() {
            v.elems()[0].as_symbol().map(|s| vec![s; target.len()])
        } else {
            None
        };
        if let Some(symbols) = symbols {
            if !usable.iter().any(|(_, s)| *s == symbols) {
                usable.push((k, symbols));
            }
        }
    }
    let mut coeffs: HashMap<usize, Rat> = HashMap::new();
    let mut constant: Option<Rat> = None;
    for (pos, elem) in target.elems().iter().enumerate() {
        let mut seen: HashMap<usize, Rat> = HashMap::new();
        let mut c0 = Rat::int(0);
        for term in elem.terms() {
            if term.mono.is_one() {
                c0 = term.coeff.clone();
                continue;
            }
            let symbol = term.mono.to_expr().as_symbol()?;
            let (k, _) = usable.iter().find(|(_, s)| s[pos] == symbol)?;
            if seen.insert(*k, term.coeff.clone()).is_some() {
                return None;
            }
        }
        if constant.as_ref().is_some_and(|c| *c != c0) {
            return None;
        }
        constant = Some(c0);
        if pos == 0 {
            coeffs = seen;
        } else if seen != coeffs {
            return None;
        }
    }
    let mut terms: Vec<(usize, Rat)> = coeffs.into_iter().collect();
    terms.sort_by_key(|(k, _)| *k);
    Some(LinearStencil {
        terms,
        constant: constant.unwrap_or_else(|| Rat::int(0)),
    })
}

/// `Σ c_k · leaf_k + c0` as TensIR: leaves with the same coefficient
/// magnitude are summed first and scaled once (`0.33333 * (a + b + c)`);
/// a magnitude whose literal is inexact but whose reciprocal is exact
/// divides instead (`(…) / 9.0`).
pub fn linear_combination(stencil: &LinearStencil, leaves: &[Expr], dtype: DType) -> Option<Expr> {
    let mut groups: Vec<(Rat, Vec<(bool, Expr)>)> = Vec::new();
    for (k, c) in &stencil.terms {
        let leaf = leaves.get(*k)?.clone();
        let magnitude = c.abs();
        match groups.iter_mut().find(|(m, _)| *m == magnitude) {
            Some((_, members)) => members.push((c.is_negative(), leaf)),
            None => groups.push((magnitude, vec![(c.is_negative(), leaf)])),
        }
    }
    // Larger groups first: the common scale of a stencil leads.
    groups.sort_by_key(|(_, members)| std::cmp::Reverse(members.len()));
    let mut total: Option<Expr> = None;
    for (magnitude, mut members) in groups {
        // A positive member first, so the group needs no leading negation.
        members.sort_by_key(|(negative, _)| *negative);
        let all_negative = members.iter().all(|(n, _)| *n);
        let mut sum: Option<Expr> = None;
        for (negative, leaf) in members {
            let negative = negative != all_negative;
            sum = Some(match sum {
                None if negative => Expr::unary(UnaryOp::Neg, leaf).ok()?,
                None => leaf,
                Some(s) => {
                    let op = if negative {
                        BinaryOp::Sub
                    } else {
                        BinaryOp::Add
                    };
                    Expr::binary(op, s, leaf).ok()?
                }
            });
        }
        let sum = sum?;
        let scaled = if magnitude.is_one() {
            sum
        } else if let Some(lit) = exact_literal(&magnitude, dtype) {
            Expr::binary(BinaryOp::Mul, lit, sum).ok()?
        } else {
            let lit = exact_literal(&magnitude.recip()?, dtype)?;
            Expr::binary(BinaryOp::Div, sum, lit).ok()?
        };
        total = Some(match total {
            None if all_negative => Expr::unary(UnaryOp::Neg, scaled).ok()?,
            None => scaled,
            Some(t) => {
                let op = if all_negative {
                    BinaryOp::Sub
                } else {
                    BinaryOp::Add
                };
                Expr::binary(op, t, scaled).ok()?
            }
        });
    }
    if !stencil.constant.is_zero() {
        let lit = exact_literal(&stencil.constant, dtype)?;
        total = Some(match total {
            None => lit,
            Some(t) => Expr::binary(BinaryOp::Add, t, lit).ok()?,
        });
    }
    total
}

/// `expr` broadcast to `shape` when it is a scalar and the region is not.
pub fn broadcast_to(expr: Expr, shape: &[Dim]) -> Option<Expr> {
    if expr.shape() == shape {
        Some(expr)
    } else {
        build::broadcast(expr, shape.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests;
