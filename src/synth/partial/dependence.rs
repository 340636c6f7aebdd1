//! Which loops carry a dependency: some element one iteration writes is
//! read or written by another iteration.

use tenslift_frontend::ir::{self as loop_ir, Affine, Loop};

use crate::synth::stencil::{self, Access, NestLoop};

/// Kept loop variables with their ranges, outermost first.
pub(super) type Scope = Vec<NestLoop>;

/// Whether `l` carries a dependency: some element one iteration writes is
/// read or written by another iteration. Pairs of accesses with identical
/// subscripts (an accumulator `x[i] -= …` inside a reduction over `j`) do
/// not count; a pair whose subscripts differ is independent only when some
/// dimension separates the iterations (both subscripts are the loop
/// variable plus the same offset) or their value ranges are provably
/// disjoint. Anything the analysis does not understand counts as carried.
pub fn carries_dependency(l: &Loop, scope: &[NestLoop]) -> bool {
    let Ok(accesses) = stencil::accesses(&loop_ir::Stmt::Loop(l.clone())) else {
        return true;
    };
    carrying_pair(&accesses, &l.iter, scope).is_some()
}

/// The first store and other access of one array, at different
/// subscripts, that nothing keeps to one iteration of the loop `iter`.
fn carrying_pair<'a>(
    accesses: &'a [Access],
    iter: &str,
    scope: &[NestLoop],
) -> Option<(&'a Access, &'a Access)> {
    accesses.iter().filter(|a| a.is_store).find_map(|w| {
        accesses
            .iter()
            .filter(|r| r.array == w.array && r.index != w.index)
            .find(|r| !separated(w, r, iter, scope))
            .map(|r| (w, r))
    })
}

/// What makes `l` carry a dependency, in words, where the analysis can
/// name it: a local updated from its own value (`s = s + x[i]`, a running
/// sum), or an element read where another iteration writes (`y[i - 1]`
/// beside `y[i]`, a recurrence). For the reason a kernel whose every loop
/// is kept is refused: a scan stays a loop in C.
pub fn carried_by(l: &Loop, scope: &[NestLoop], scalars: &[String]) -> Option<String> {
    let running = |name: &str| {
        format!(
            "`{name}` is computed from its value in the previous iteration \
             (a running value: a scan or recurrence, which stays a loop in C)"
        )
    };
    if let Some(name) = self_updated_local(&l.body) {
        return Some(running(&name));
    }
    let accesses = stencil::accesses(&loop_ir::Stmt::Loop(l.clone())).ok()?;
    if let Some((w, r)) = carrying_pair(&accesses, &l.iter, scope) {
        let (verb, why) = if r.is_store {
            ("written", "the iterations' order decides the value left")
        } else {
            (
                "read",
                "a recurrence: each iteration needs an earlier one's result",
            )
        };
        return Some(format!(
            "`{}` is {verb} where another iteration writes `{}` ({why}, which stays a loop in C)",
            element(r),
            element(w)
        ));
    }
    // The same element read and written in every iteration: a local
    // (a 0-D array here) or an element the loop's variable does not pick.
    let mentions_iter = |a: &Access| a.index.iter().any(|x| x.terms.contains_key(&l.iter));
    let reread = |w: &Access| {
        accesses
            .iter()
            .any(|r| !r.is_store && r.array == w.array && r.index == w.index)
    };
    accesses
        .iter()
        .find(|w| w.is_store && !mentions_iter(w) && reread(w))
        .map(|w| {
            // A local scalar is a one-element array here: name it as C does.
            if scalars.contains(&w.array) {
                running(&w.array)
            } else {
                running(&element(w))
            }
        })
}

/// The first local a statement of `body` assigns from an expression
/// reading it before any statement of the body set it: the value comes
/// from the previous iteration. Inner loops are not entered (their
/// accumulators are theirs).
fn self_updated_local(body: &[loop_ir::Stmt]) -> Option<String> {
    let mut set: Vec<&str> = Vec::new();
    for s in body {
        if let loop_ir::Stmt::Assign {
            target: loop_ir::LValue::Scalar { name, .. },
            value,
            ..
        } = s
        {
            if value.mentions(name) && !set.contains(&name.as_str()) {
                return Some(name.clone());
            }
            set.push(name);
        }
    }
    None
}

/// `a[i - 1]` for an access.
fn element(a: &Access) -> String {
    if a.index.is_empty() {
        return a.array.clone();
    }
    let index: Vec<String> = a.index.iter().map(|x| x.to_string()).collect();
    format!("{}[{}]", a.array, index.join("]["))
}

/// Whether two accesses of one array can never touch the same element in
/// different iterations of the loop `iter`.
pub(super) fn separated(w: &Access, r: &Access, iter: &str, scope: &[NestLoop]) -> bool {
    if w.index.len() != r.index.len() {
        return false;
    }
    w.index.iter().zip(&r.index).any(|(a, b)| {
        let same_iteration_only = a.terms.get(iter).is_some_and(|c| *c != 0) && a == b;
        let disjoint = match (range_of(a, &w.loops), range_of(b, &r.loops)) {
            (Some((lo_a, hi_a)), Some((lo_b, hi_b))) => {
                positive(&difference(&lo_a, &hi_b), scope)
                    || positive(&difference(&lo_b, &hi_a), scope)
            }
            _ => false,
        };
        same_iteration_only || disjoint
    })
}

/// Whether `d` is above zero for every value of the kept loop variables:
/// each one, innermost first, is replaced by the end of its range that
/// makes `d` smallest (its bounds may use the outer ones).
pub(super) fn positive(d: &Affine, scope: &[NestLoop]) -> bool {
    let mut d = d.clone();
    for l in scope.iter().rev() {
        let Some(&c) = d.terms.get(&l.iter) else {
            continue;
        };
        d.terms.remove(&l.iter);
        let mut bound = if c > 0 {
            l.start.clone()
        } else {
            let mut last = l.end.clone();
            last.constant -= 1;
            last
        };
        bound.constant *= c;
        bound.terms.values_mut().for_each(|v| *v *= c);
        d = add(&d, &bound);
    }
    d.as_constant().is_some_and(|v| v > 0)
}

pub(super) use tenslift_frontend::ir_rewrite::{add, difference};

/// The smallest and largest value of a subscript over its loops, when it
/// uses at most one loop variable with coefficient 1 whose bounds use no
/// other loop variable.
pub(super) fn range_of(sub: &Affine, loops: &[NestLoop]) -> Option<(Affine, Affine)> {
    let inner: Vec<&NestLoop> = loops
        .iter()
        .filter(|l| sub.terms.contains_key(&l.iter))
        .collect();
    match inner.as_slice() {
        [] => Some((sub.clone(), sub.clone())),
        [l] if sub.terms.get(&l.iter) == Some(&1) => {
            let free = |a: &Affine| loops.iter().all(|m| !a.terms.contains_key(&m.iter));
            if !free(&l.start) || !free(&l.end) {
                return None;
            }
            let mut rest = sub.clone();
            rest.terms.remove(&l.iter);
            let lo = add(&l.start, &rest);
            let mut hi = add(&l.end, &rest);
            hi.constant -= 1;
            Some((lo, hi))
        }
        _ => None,
    }
}

/// Whether some loop in `stmts` (inside the loops of `scope`) carries a
/// dependency: only then can keeping a loop be necessary.
pub fn any_loop_carries(stmts: &[loop_ir::Stmt], scope: &mut Scope) -> bool {
    stmts.iter().any(|s| match s {
        loop_ir::Stmt::Loop(l) => {
            if carries_dependency(l, scope) {
                return true;
            }
            scope.push(NestLoop {
                iter: l.iter.clone(),
                start: l.start.clone(),
                end: l.end.clone(),
            });
            let inner = any_loop_carries(&l.body, scope);
            scope.pop();
            inner
        }
        loop_ir::Stmt::If {
            then_body,
            else_body,
            ..
        } => any_loop_carries(then_body, scope) || any_loop_carries(else_body, scope),
        _ => false,
    })
}

/// Whether read `r` in the body of loop `iter` sees an element that store
/// `w` wrote in an earlier iteration: the same array, the store's own
/// subscripts but a constant step back along `iter`. `None` when the two
/// are not comparable that simply (an unknown distance).
pub(super) fn reads_an_earlier_iteration(w: &Access, r: &Access, iter: &str) -> Option<bool> {
    if r.array != w.array {
        return Some(false);
    }
    if r.index.len() != w.index.len() {
        return None;
    }
    let mut along = None;
    let mut elsewhere_same = true;
    for (a, b) in w.index.iter().zip(&r.index) {
        let d = difference(b, a).as_constant()?;
        if a.terms.get(iter) == Some(&1) {
            along = Some(d);
        } else if d != 0 {
            elsewhere_same = false;
        }
    }
    Some(elsewhere_same && along? < 0)
}

/// Whether the iterations of `l` touch disjoint elements: every write
/// against every access of its array, identical subscripts included, is
/// separated along `l` (a one-element local written in every iteration is
/// not). Stricter than [`carries_dependency`], which lets an accumulator
/// of an inner reduction pass; reordering `l`'s iterations (interchange,
/// distribution) needs this one.
pub(super) fn independent(l: &Loop, scope: &[NestLoop]) -> bool {
    let Ok(accesses) = stencil::accesses(&loop_ir::Stmt::Loop(l.clone())) else {
        return false;
    };
    accesses.iter().filter(|a| a.is_store).all(|w| {
        accesses
            .iter()
            .filter(|r| r.array == w.array)
            .all(|r| separated(w, r, &l.iter, scope))
    })
}
