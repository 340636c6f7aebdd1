//! A transposed copy for one loop: the column writes of a top-level kept
//! loop land in a local `X_t` row by row, and one transposed copy after the
//! loop stores the columns the loop covered into `X`.
//!
//! The loop qualifies for `X` when, in its own body (no nested loop touches
//! `X`), every store to `X` has one region `[R, D]` — `R` a row range that
//! does not move with the loop, `D` the loop variable plus or minus a
//! constant offset (deriche's `y2[0:w, h - j - 1]`) — and every read of `X`
//! reads that same region after a store to it: each iteration then only
//! reads its own column, so `X_t` needs no copy of `X` before the loop, and
//! the loop writes exactly the columns `D` takes on `start..stop`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::dim::Dim;
use crate::expr::{Expr, Ty, TypeError};
use crate::ops::{Op, SliceItem};
use crate::program::{Program, Stmt};

/// `program` with every qualifying (loop, array) pair rewritten; `program`
/// itself when none qualifies or a rewrite does not validate.
pub fn lower_phases(program: &Program) -> Program {
    // Written parameters and locals: the loop stores into them.
    let arrays: Vec<(Arc<str>, Ty)> = super::typed_arrays(program)
        .into_iter()
        .filter(|(_, t, access)| t.rank() == 2 && access.is_none_or(|a| a.is_written()))
        .map(|(n, t, _)| (n, t))
        .collect();
    let mut taken = super::names_in(program);
    let mut locals = Vec::new();
    let mut body = Vec::new();
    for s in &program.body {
        let Stmt::Loop {
            var,
            start,
            stop,
            body: inner,
        } = s
        else {
            body.push(s.clone());
            continue;
        };
        let mut inner = inner.clone();
        let mut after = Vec::new();
        for (name, ty) in &arrays {
            let Some(region) = column_region(&inner, name, var) else {
                continue;
            };
            let Some(cols) = covered(&region.1, var, start, stop) else {
                continue;
            };
            let local = Arc::<str>::from(super::fresh_name(&format!("{name}_t"), &taken));
            taken.insert(local.to_string());
            let t_ty = Ty::tensor(ty.dtype, vec![ty.shape[1].clone(), ty.shape[0].clone()]);
            let Ok(copy) = copy_out(name, &local, &t_ty, &region.0, &cols) else {
                continue;
            };
            let Ok(redirected) = redirect(&inner, name, &local, &t_ty) else {
                continue;
            };
            inner = redirected;
            locals.push(Stmt::Var {
                name: local,
                ty: t_ty,
            });
            after.push(copy);
        }
        body.push(Stmt::Loop {
            var: var.clone(),
            start: start.clone(),
            stop: stop.clone(),
            body: inner,
        });
        body.extend(after);
    }
    if locals.is_empty() {
        return program.clone();
    }
    let lowered = Program {
        body: locals.into_iter().chain(body).collect(),
        ..program.clone()
    };
    if lowered.validate().is_ok() {
        lowered
    } else {
        program.clone()
    }
}

/// The one region `[R, D]` every access of `name` in `body` has, when the
/// loop qualifies (see the module doc).
fn column_region(body: &[Stmt], name: &str, var: &str) -> Option<(SliceItem, Dim)> {
    let mut region: Option<Vec<SliceItem>> = None;
    let mut stored = false;
    for s in body {
        match s {
            Stmt::Loop { body, .. } => {
                if mentions(body, name) {
                    return None;
                }
            }
            Stmt::Var { .. } => {}
            Stmt::Let { value, .. } | Stmt::Return(value) => {
                if !reads_only(value, name, &region, stored) {
                    return None;
                }
            }
            Stmt::Store {
                target,
                region: r,
                value,
            } => {
                if !reads_only(value, name, &region, stored) {
                    return None;
                }
                if &**target == name {
                    let r = r.as_ref()?;
                    if region.as_ref().is_some_and(|known| known != r) {
                        return None;
                    }
                    region = Some(r.clone());
                    stored = true;
                }
            }
        }
    }
    let region = region?;
    let (SliceItem::Range { step: 1, .. } | SliceItem::Full, SliceItem::Index(d)) =
        (&region[0], &region[1])
    else {
        return None;
    };
    let fixed = match &region[0] {
        SliceItem::Range { start, stop, .. } => {
            !mentions_dim(start, var) && !mentions_dim(stop, var)
        }
        _ => true,
    };
    fixed.then(|| (region[0].clone(), d.clone()))
}

/// Whether every reference to `name` in `e` is a slice at `region`, which
/// the iteration has already stored.
fn reads_only(e: &Expr, name: &str, region: &Option<Vec<SliceItem>>, stored: bool) -> bool {
    let mut only = true;
    super::array_uses(e, &mut |v, items| {
        if v == name {
            only &= stored && items.is_some() && region.as_deref() == items;
        }
    });
    only
}

fn mentions(body: &[Stmt], name: &str) -> bool {
    let mut found = false;
    for s in body {
        match s {
            Stmt::Loop { body, .. } => found |= mentions(body, name),
            Stmt::Store { target, value, .. } => {
                found |= &**target == name;
                value.walk_unique(&mut |x| found |= matches!(x.op(), Op::Var(v) if &**v == name));
            }
            Stmt::Let { value, .. } | Stmt::Return(value) => {
                value.walk_unique(&mut |x| found |= matches!(x.op(), Op::Var(v) if &**v == name));
            }
            Stmt::Var { .. } => {}
        }
    }
    found
}

fn mentions_dim(d: &Dim, var: &str) -> bool {
    d.symbols().any(|s| s == var)
}

/// `lo..hi`: the values `d` takes for `var` in `start..stop`, when `d` is
/// `var` plus or minus a constant-free offset of other sizes.
fn covered(d: &Dim, var: &str, start: &Dim, stop: &Dim) -> Option<(Dim, Dim)> {
    let mut coefficient = None;
    for (monomial, c) in d.terms() {
        if monomial.iter().any(|s| &**s == var) {
            if monomial.len() != 1 || coefficient.is_some() {
                return None;
            }
            coefficient = Some(c);
        }
    }
    if d.divisor() != 1 {
        return None;
    }
    let (v, one) = (Dim::sym(var), Dim::constant(1));
    match coefficient? {
        // d = v + c: c + start .. c + stop.
        1 => {
            let offset = d.sub(&v).ok()?;
            Some((offset.add(start).ok()?, offset.add(stop).ok()?))
        }
        // d = c - v: c - stop + 1 .. c - start + 1.
        -1 => {
            let offset = d.add(&v).ok()?;
            let lo = offset.sub(stop).ok()?.add(&one).ok()?;
            Some((lo, offset.sub(start).ok()?.add(&one).ok()?))
        }
        _ => None,
    }
}

/// `X[R, lo:hi] = transpose(X_t[lo:hi, R])`.
fn copy_out(
    name: &Arc<str>,
    local: &Arc<str>,
    t_ty: &Ty,
    rows: &SliceItem,
    (lo, hi): &(Dim, Dim),
) -> Result<Stmt, TypeError> {
    let cols = SliceItem::Range {
        start: lo.clone(),
        stop: hi.clone(),
        step: 1,
    };
    let read = Expr::new(
        Op::Slice(vec![cols.clone(), rows.clone()]),
        vec![Expr::var(local, t_ty.clone())],
    )?;
    Ok(Stmt::Store {
        target: name.clone(),
        region: Some(vec![rows.clone(), cols]),
        value: Expr::new(Op::Transpose(vec![1, 0]), vec![read])?,
    })
}

/// `body` with `name[R, D]` (stores and reads) turned into `local[D, R]`.
fn redirect(
    body: &[Stmt],
    name: &str,
    local: &Arc<str>,
    t_ty: &Ty,
) -> Result<Vec<Stmt>, TypeError> {
    let mut memo = HashMap::new();
    let mut value = |e: &Expr| rewrite(e, name, local, t_ty, &mut memo);
    body.iter()
        .map(|s| {
            Ok(match s {
                Stmt::Store {
                    target,
                    region,
                    value: v,
                } => {
                    let (target, region) = match region {
                        Some(items) if &**target == name => (
                            local.clone(),
                            Some(vec![items[1].clone(), items[0].clone()]),
                        ),
                        _ => (target.clone(), region.clone()),
                    };
                    Stmt::Store {
                        target,
                        region,
                        value: value(v)?,
                    }
                }
                Stmt::Let { name: n, value: v } => Stmt::Let {
                    name: n.clone(),
                    value: value(v)?,
                },
                Stmt::Return(v) => Stmt::Return(value(v)?),
                other => other.clone(),
            })
        })
        .collect()
}

fn rewrite(
    e: &Expr,
    name: &str,
    local: &Arc<str>,
    t_ty: &Ty,
    memo: &mut HashMap<Expr, Expr>,
) -> Result<Expr, TypeError> {
    if let Some(done) = memo.get(e) {
        return Ok(done.clone());
    }
    let out = match (e.op(), e.args().first().map(|a| a.op())) {
        (Op::Slice(items), Some(Op::Var(v))) if &**v == name => Expr::new(
            Op::Slice(vec![items[1].clone(), items[0].clone()]),
            vec![Expr::var(local, t_ty.clone())],
        )?,
        _ if e.args().is_empty() => e.clone(),
        _ => {
            let args = e
                .args()
                .iter()
                .map(|a| rewrite(a, name, local, t_ty, memo))
                .collect::<Result<Vec<_>, _>>()?;
            Expr::new(e.op().clone(), args)?
        }
    };
    memo.insert(e.clone(), out.clone());
    Ok(out)
}
