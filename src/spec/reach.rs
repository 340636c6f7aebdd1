//! How far a kernel's accesses reach over its loops: the size search
//! prefers tuples at which no guard hides part of an array from the spec
//! ([`reached`]), and the synthesiser's signature names each extent the
//! frontend left unknown (`float *x` read as `x[i + k]`) by a size
//! expression ([`reaches`] gives the loop-bound ones).
//!
//! Takes the loop-IR kernel (and, for the check, a size tuple and its
//! [`Layout`]); hands on affine reaches over the size parameters.

use tenslift_frontend::ir::{self as loop_ir, Affine, IfKind, Kernel};

use super::blocks::block_view;
use super::sizes::{Layout, Sizes};

/// The (array, axis) pairs whose extent the frontend left unknown.
pub fn unknown_extents(kernel: &Kernel) -> Vec<(String, usize)> {
    kernel
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            loop_ir::ParamKind::Array(info) => Some((p, info)),
            _ => None,
        })
        .flat_map(|(p, info)| {
            // A block-selected array's axes from the selector on are one
            // physical axis whose extent the block view gives.
            let logical_axes = block_view(kernel, &p.name).map_or(info.dims.len(), |v| v.axis);
            info.dims[..logical_axes]
                .iter()
                .enumerate()
                .filter(|(_, d)| d.is_none())
                .map(|(axis, _)| (p.name.clone(), axis))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `1 +` the largest index each access of `array` reaches on `axis`, as
/// an affine size expression: each loop iterator replaced by the end of
/// its range that maximises the index, innermost first (`in[i + k]` for
/// `i < n_out`, `k < n_taps` reaches `n_out + n_taps - 2`; `c[2*i + 1]`
/// for `i < n` reaches `2*n - 1`). Guards are ignored: one may keep an
/// access below this.
pub fn reaches(kernel: &Kernel, array: &str, axis: usize) -> Vec<Affine> {
    let mut found = Vec::new();
    let mut loops = Vec::new();
    collect_reaches(&kernel.body, array, axis, &mut loops, &mut found);
    found
        .into_iter()
        .filter_map(|mut r| {
            r.constant = r.constant.checked_add(1)?;
            Some(r)
        })
        .collect()
}

/// An array axis accessed under a guard: the array, the axis, and its
/// [`reaches`].
pub(crate) type GuardedAxis = (String, usize, Vec<Affine>);

/// Every axis of every array some access reaches under a guard
/// (`if (i - k >= 0) acc += h[k] * x[i - k];`). Where the guard cuts the loops short
/// (n = 3 < taps = 4 reads 3 of the 4 taps of `h`), a spec says nothing of
/// the rest of the array.
pub(crate) fn guarded_axes(kernel: &Kernel) -> Vec<GuardedAxis> {
    let mut guarded = Vec::new();
    collect_guarded(&kernel.body, false, &mut guarded);
    guarded.sort();
    guarded.dedup();
    let rank = |name: &str| {
        let params = kernel.params.iter().filter_map(|p| match &p.kind {
            loop_ir::ParamKind::Array(info) => Some((&p.name, info.dims.len())),
            _ => None,
        });
        let locals = kernel.locals.iter().filter_map(|l| match &l.kind {
            loop_ir::LocalKind::Array(info) => Some((&l.name, info.dims.len())),
            _ => None,
        });
        params
            .chain(locals)
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, r)| r)
    };
    guarded
        .into_iter()
        .flat_map(|array| {
            (0..rank(&array))
                .map(|axis| {
                    let r = reaches(kernel, &array, axis);
                    (array.clone(), axis, r)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// How many guarded axes are touched at `sizes` up to their largest reach
/// there (the guard hides no part of them).
pub(crate) fn reached(guarded: &[GuardedAxis], sizes: &Sizes, layout: &Layout) -> usize {
    let lookup = |n: &str| sizes.get(n).copied();
    guarded
        .iter()
        .filter(|(array, axis, reach)| {
            let touched = layout.touched.get(array).and_then(|e| e.get(*axis));
            let largest = reach.iter().filter_map(|r| r.eval(&lookup)).max();
            matches!((touched, largest), (Some(&t), Some(l)) if t == l)
        })
        .count()
}

/// Collects the arrays accessed inside the bodies of guards (`IfKind::Guard`).
fn collect_guarded(body: &[loop_ir::Stmt], inside: bool, out: &mut Vec<String>) {
    for s in body {
        match s {
            loop_ir::Stmt::Loop(l) => collect_guarded(&l.body, inside, out),
            loop_ir::Stmt::If {
                kind,
                then_body,
                else_body,
                ..
            } => {
                let inside = inside || *kind == IfKind::Guard;
                collect_guarded(then_body, inside, out);
                collect_guarded(else_body, inside, out);
            }
            loop_ir::Stmt::Assign { target, value, .. } if inside => {
                if let loop_ir::LValue::Element { array, .. } = target {
                    out.push(array.clone());
                }
                expr_loads(value, &mut |array, _| out.push(array.to_string()));
            }
            loop_ir::Stmt::Assign { .. } | loop_ir::Stmt::Return { .. } => {}
        }
    }
}

fn collect_reaches<'k>(
    body: &'k [loop_ir::Stmt],
    array: &str,
    axis: usize,
    loops: &mut Vec<&'k loop_ir::Loop>,
    out: &mut Vec<Affine>,
) {
    for s in body {
        let mut indices: Vec<Vec<Affine>> = Vec::new();
        match s {
            loop_ir::Stmt::Loop(l) => {
                loops.push(l);
                collect_reaches(&l.body, array, axis, loops, out);
                loops.pop();
            }
            loop_ir::Stmt::Assign { target, value, .. } => {
                if let loop_ir::LValue::Element {
                    array: a, index, ..
                } = target
                {
                    if a == array {
                        indices.push(index.clone());
                    }
                }
                expr_loads(value, &mut |a, ix| {
                    if a == array {
                        indices.push(ix.to_vec())
                    }
                });
            }
            loop_ir::Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                expr_loads(cond, &mut |a, ix| {
                    if a == array {
                        indices.push(ix.to_vec())
                    }
                });
                collect_reaches(then_body, array, axis, loops, out);
                collect_reaches(else_body, array, axis, loops, out);
            }
            loop_ir::Stmt::Return { value, .. } => expr_loads(value, &mut |a, ix| {
                if a == array {
                    indices.push(ix.to_vec())
                }
            }),
        }
        out.extend(
            indices
                .iter()
                .filter_map(|ix| ix.get(axis).and_then(|a| largest(a, loops))),
        );
    }
}

/// Calls `f` with the array and index of every load in `e`.
fn expr_loads(e: &loop_ir::Expr, f: &mut dyn FnMut(&str, &[Affine])) {
    use loop_ir::ExprKind as K;
    match &e.kind {
        K::Load { array, index } => f(array, index),
        K::Unary { arg, .. } | K::Cast { arg } => expr_loads(arg, f),
        K::Binary { lhs, rhs, .. } => {
            expr_loads(lhs, f);
            expr_loads(rhs, f);
        }
        K::Select {
            cond,
            then_value,
            else_value,
        } => {
            expr_loads(cond, f);
            expr_loads(then_value, f);
            expr_loads(else_value, f);
        }
        K::Call { args, .. } => args.iter().for_each(|a| expr_loads(a, f)),
        _ => {}
    }
}

/// The largest value of `a` over `loops` (outermost first), each iterator
/// at the end of its range that maximises `a`; `None` on overflow.
fn largest(a: &Affine, loops: &[&loop_ir::Loop]) -> Option<Affine> {
    let mut a = a.clone();
    for l in loops.iter().rev() {
        let Some(&c) = a.terms.get(&l.iter) else {
            continue;
        };
        // Upward loops reach `end - 1`, downward ones `end + 1`; the
        // other end is `start`.
        let last = {
            let mut e = l.end.clone();
            e.constant = e.constant.checked_add(if l.step > 0 { -1 } else { 1 })?;
            e
        };
        let (low, high) = if l.step > 0 {
            (&l.start, &last)
        } else {
            (&last, &l.start)
        };
        let at = if c > 0 { high } else { low };
        a.terms.remove(&l.iter);
        for (name, k) in &at.terms {
            let v = a.terms.entry(name.clone()).or_insert(0);
            *v = v.checked_add(c.checked_mul(*k)?)?;
        }
        a.terms.retain(|_, k| *k != 0);
        a.constant = a.constant.checked_add(c.checked_mul(at.constant)?)?;
    }
    Some(a)
}
