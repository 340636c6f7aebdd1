//! Index variables stepped once per trip: `dy[iy] += da * dx[ix];
//! ix += incx; iy += incy;` in the body of `for (i = a; …; i++)`, the way
//! strided BLAS kernels (reference and generic OpenBLAS) and DSP code walk
//! arrays by an increment. Each such variable `v` is a closed form of the
//! loop's iterator: `v + s*(i - a)` where the body reads it before its step
//! and `v + s*(i - a + 1)` after, with `v` its value on entry to the loop.
//! The step statement goes, `v` is no longer written in the loop, and the
//! subscripts become affine in the iterator.
//!
//! That reading is exact when
//! - `v` is an integer local declared in the block that holds the loop,
//!   before it (so each run of that block starts it afresh: no enclosing
//!   loop carries its value from one run of the loop to the next),
//! - nothing after the loop in that block mentions `v` (its final value is
//!   not rebuilt),
//! - the loop counts up by one from `a`, its header does not mention `v`,
//! - the body steps `v` exactly once, by a top-level statement
//!   (`v += s`, `v -= s`, `v = v + s`, `v++`, `++v`, `v--`, `--v`), writes it
//!   nowhere else, and the step `s` reads no variable the loop writes
//!   (numbers, parameters and locals the loop leaves alone).
//!
//! Anything else is left as written, and the lowering refuses the
//! non-affine subscript as before.

use crate::ir::Loc;
use crate::syntax::{
    ArithOp, CBinOp, CExpr, CExprKind, CStmt, CUnOp, CVarDecl, IntValue, RefTarget,
};

/// `stmts` (one block) with each loop's index variables replaced by their
/// closed forms where that is exact (see the module documentation).
pub(crate) fn substitute_inductions(stmts: Vec<CStmt>) -> Vec<CStmt> {
    let mut stmts = merge_steps(stmts);
    for at in 0..stmts.len() {
        if !matches!(stmts[at], CStmt::For { .. }) {
            continue;
        }
        for local in integer_locals(&stmts[..at]) {
            if stmts[at + 1..].iter().any(|s| s.refers_to(&local.key)) {
                continue;
            }
            if let Some(rewritten) = close_induction(&stmts[at], &local) {
                stmts[at] = rewritten;
            }
        }
    }
    stmts
}

/// `v = e0; …; v = e(v);` in one block, where nothing between reads or
/// writes `v` or writes what `e0` reads: one assignment `v = e(e0)` where
/// the second was, so that a loop after it sees `v` set once (LINPACK's
/// `idamax` starts its walk `ix = 0; dmax = fabs(dx[0]); ix = ix + incx;`).
fn merge_steps(mut stmts: Vec<CStmt>) -> Vec<CStmt> {
    let mut at = 0;
    while at < stmts.len() {
        let merged = integer_assignment(&stmts[at]).and_then(|(key, first)| {
            let mut reads = Vec::new();
            if first.refers_to(&key) || !crate::reader::variables_only(&first, &mut reads) {
                return None;
            }
            let next = (at + 1..stmts.len()).find(|&j| stmts[j].refers_to(&key))?;
            let (again, then) = integer_assignment(&stmts[next])?;
            let between = &stmts[at + 1..next];
            let untouched = reads.iter().all(|r| !between.iter().any(|s| s.writes(r)));
            (again == key && then.refers_to(&key) && untouched).then(|| {
                (
                    next,
                    with_value(&stmts[next], replace_reads(&then, &key, &first)),
                )
            })
        });
        match merged {
            Some((next, stmt)) => {
                stmts[next] = stmt;
                stmts.remove(at);
            }
            None => at += 1,
        }
    }
    stmts
}

/// `(key, e)` of `v = e;` with `v` an integer local.
fn integer_assignment(s: &CStmt) -> Option<(String, CExpr)> {
    let CStmt::Expr(e) = s else { return None };
    let CExprKind::Binary {
        op: CBinOp::Assign,
        lhs,
        rhs,
    } = &e.stripped().kind
    else {
        return None;
    };
    match &lhs.stripped().kind {
        CExprKind::Ref(r) if r.target == RefTarget::Local && lhs.ty.is_integer() => {
            Some((r.key.clone(), (**rhs).clone()))
        }
        _ => None,
    }
}

/// The assignment `s` (`v = …;`) assigning `value` instead.
fn with_value(s: &CStmt, value: CExpr) -> CStmt {
    let mut value = Some(value);
    s.map_exprs(&mut |e| match (&e.stripped().kind, value.take()) {
        (CExprKind::Binary { op, lhs, .. }, Some(v)) => CExpr {
            kind: CExprKind::Binary {
                op: *op,
                lhs: lhs.clone(),
                rhs: Box::new(v),
            },
            ..e.clone()
        },
        _ => e.clone(),
    })
}

/// The integer scalars the statements declare.
fn integer_locals(stmts: &[CStmt]) -> Vec<CVarDecl> {
    stmts
        .iter()
        .filter_map(|s| match s {
            CStmt::Decl(vars, _) => Some(vars),
            _ => None,
        })
        .flatten()
        .filter(|v| v.dims.is_empty() && v.ty.is_integer())
        .cloned()
        .collect()
}

/// The loop with `local` closed over its iterator, when it is an index
/// variable of it.
fn close_induction(stmt: &CStmt, local: &CVarDecl) -> Option<CStmt> {
    let key = local.key.as_str();
    let CountedFor {
        iter,
        start,
        init,
        cond,
        inc,
        body,
        loc,
    } = counted_for(stmt)?;
    let iter_key = iter.ref_key()?;
    // A loop counting down (a DSP `while (blkCnt > 0U) { …; blkCnt--; }`
    // read as a `for`) makes trip `a - i` where one counting up makes
    // `i - a`.
    let down = unit_step(inc, iter_key)? < 0;
    if init.refers_to(key) {
        return None;
    }
    if cond.refers_to(key) || inc.refers_to(key) {
        return None;
    }
    let CStmt::Compound(items, body_loc) = body else {
        return None;
    };
    let steps: Vec<(usize, CExpr)> = items
        .iter()
        .enumerate()
        .filter_map(|(p, s)| step_of(s, key).map(|d| (p, d)))
        .collect();
    let [(at, step)] = steps.as_slice() else {
        return None;
    };
    let others = items.iter().enumerate().filter(|(p, _)| p != at);
    if others.clone().any(|(_, s)| s.writes(key)) || !invariant(step, stmt) {
        return None;
    }
    let offset = |extra: i64| {
        let (from, to) = if down {
            (&iter, &start)
        } else {
            (&start, &iter)
        };
        closed_form(local, step, to, from, extra, &step.loc)
    };
    let rewritten: Vec<CStmt> = others
        .map(|(p, s)| {
            let value = offset(i64::from(p > *at));
            s.map_exprs(&mut |e| replace_reads(e, key, &value))
        })
        .collect();
    Some(CStmt::For {
        init: Box::new(init.clone()),
        cond: cond.clone(),
        inc: inc.clone(),
        body: Box::new(CStmt::Compound(rewritten, body_loc.clone())),
        loc: loc.clone(),
    })
}

/// `v + s*(to - from + extra)` (the trips so far: `i - a` counting up,
/// `a - i` counting down), in the iterator's type.
fn closed_form(
    local: &CVarDecl,
    step: &CExpr,
    to: &CExpr,
    from: &CExpr,
    extra: i64,
    loc: &Loc,
) -> CExpr {
    let ty = to.ty.clone();
    let node = |kind| CExpr {
        kind,
        ty: ty.clone(),
        loc: loc.clone(),
    };
    let binary = |op, lhs: CExpr, rhs: CExpr| {
        node(CExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        })
    };
    let mut trips = binary(CBinOp::Sub, paren(to.clone()), paren(from.clone()));
    if extra != 0 {
        trips = binary(
            CBinOp::Add,
            trips,
            node(CExprKind::Int(IntValue::Fits(extra))),
        );
    }
    let variable = CExpr {
        kind: CExprKind::Ref(crate::syntax::DeclRef {
            name: local.name.clone(),
            key: local.key.clone(),
            target: crate::syntax::RefTarget::Local,
        }),
        ty: local.ty.clone(),
        loc: loc.clone(),
    };
    let scaled = binary(CBinOp::Mul, paren(step.clone()), paren(trips));
    paren(binary(CBinOp::Add, variable, scaled))
}

pub(crate) fn paren(e: CExpr) -> CExpr {
    CExpr {
        ty: e.ty.clone(),
        loc: e.loc.clone(),
        kind: CExprKind::Paren(Box::new(e)),
    }
}

/// A `for` whose initialiser sets its iterator (`i = a` / `int i = a`):
/// the iterator's reference and start beside the header and body.
pub(crate) struct CountedFor<'s> {
    pub iter: CExpr,
    pub start: CExpr,
    pub init: &'s CStmt,
    pub cond: &'s CExpr,
    pub inc: &'s CExpr,
    pub body: &'s CStmt,
    pub loc: &'s Loc,
}

/// `s` as a [`CountedFor`], when it is a `for` with such an initialiser.
pub(crate) fn counted_for(s: &CStmt) -> Option<CountedFor<'_>> {
    let CStmt::For {
        init,
        cond,
        inc,
        body,
        loc,
    } = s
    else {
        return None;
    };
    let (iter, start) = iterator_start(init)?;
    Some(CountedFor {
        iter,
        start,
        init,
        cond,
        inc,
        body,
        loc,
    })
}

/// The iterator reference and start value of `i = a` / `int i = a`.
pub(crate) fn iterator_start(init: &CStmt) -> Option<(CExpr, CExpr)> {
    match init {
        CStmt::Expr(e) => match &e.stripped().kind {
            CExprKind::Binary {
                op: CBinOp::Assign,
                lhs,
                rhs,
            } => Some(((**lhs).clone(), (**rhs).clone())),
            _ => None,
        },
        CStmt::Decl(vars, loc) => {
            let [v] = vars.as_slice() else {
                return None;
            };
            let reference = CExpr {
                kind: CExprKind::Ref(crate::syntax::DeclRef {
                    name: v.name.clone(),
                    key: v.key.clone(),
                    target: crate::syntax::RefTarget::Local,
                }),
                ty: v.ty.clone(),
                loc: loc.clone(),
            };
            Some((reference, v.init.clone()?))
        }
        _ => None,
    }
}

/// Whether `inc` is `i++`, `++i` or `i += 1`.
pub(crate) fn steps_by_one(inc: &CExpr, iter: &str) -> bool {
    unit_step(inc, iter) == Some(1)
}

/// Whether `inc` is `i--`, `--i` or `i -= 1`.
pub(crate) fn steps_down_by_one(inc: &CExpr, iter: &str) -> bool {
    unit_step(inc, iter) == Some(-1)
}

/// `Some(1)` for `i++`, `++i`, `i += 1`; `Some(-1)` for `i--`, `--i`,
/// `i -= 1`; `None` for any other step.
pub(crate) fn unit_step(inc: &CExpr, iter: &str) -> Option<i64> {
    let (sign, target) = match &inc.stripped().kind {
        CExprKind::Unary {
            op: op @ (CUnOp::PostInc | CUnOp::PreInc | CUnOp::PostDec | CUnOp::PreDec),
            arg,
        } => (
            if matches!(op, CUnOp::PostInc | CUnOp::PreInc) {
                1
            } else {
                -1
            },
            arg,
        ),
        CExprKind::Binary {
            op: CBinOp::CompoundAssign(op @ (ArithOp::Add | ArithOp::Sub)),
            lhs,
            rhs,
        } if matches!(rhs.stripped().kind, CExprKind::Int(IntValue::Fits(1))) => {
            (if *op == ArithOp::Add { 1 } else { -1 }, lhs)
        }
        _ => return None,
    };
    (target.ref_key() == Some(iter)).then_some(sign)
}

/// The signed step when `s` is a step statement of `key`.
fn step_of(s: &CStmt, key: &str) -> Option<CExpr> {
    let CStmt::Expr(e) = s else {
        return None;
    };
    let one = |sign: i64| CExpr {
        kind: CExprKind::Int(IntValue::Fits(sign)),
        ty: e.ty.clone(),
        loc: e.loc.clone(),
    };
    let negated = |x: &CExpr| CExpr {
        kind: CExprKind::Unary {
            op: CUnOp::Minus,
            arg: Box::new(paren(x.clone())),
        },
        ty: x.ty.clone(),
        loc: x.loc.clone(),
    };
    match &e.stripped().kind {
        CExprKind::Unary { op, arg } if arg.ref_key() == Some(key) => match op {
            CUnOp::PostInc | CUnOp::PreInc => Some(one(1)),
            CUnOp::PostDec | CUnOp::PreDec => Some(one(-1)),
            _ => None,
        },
        CExprKind::Binary { op, lhs, rhs } if lhs.ref_key() == Some(key) => match op {
            CBinOp::CompoundAssign(ArithOp::Add) => Some((**rhs).clone()),
            CBinOp::CompoundAssign(ArithOp::Sub) => Some(negated(rhs)),
            CBinOp::Assign => match &rhs.stripped().kind {
                CExprKind::Binary {
                    op: CBinOp::Add,
                    lhs: a,
                    rhs: b,
                } if a.ref_key() == Some(key) => Some((**b).clone()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// Whether the step reads only numbers and variables `loop_stmt` never
/// writes (no loads, no calls).
fn invariant(step: &CExpr, loop_stmt: &CStmt) -> bool {
    let mut ok = true;
    visit(step, &mut |e| match &e.kind {
        CExprKind::Ref(r) => ok &= !loop_stmt.writes(&r.key),
        CExprKind::Int(_)
        | CExprKind::MacroInt { .. }
        | CExprKind::Paren(_)
        | CExprKind::Implicit(_)
        | CExprKind::Cast(_) => {}
        CExprKind::Binary { op, .. } => ok &= matches!(op, CBinOp::Add | CBinOp::Sub | CBinOp::Mul),
        CExprKind::Unary { op, .. } => ok &= matches!(op, CUnOp::Minus | CUnOp::Plus),
        _ => ok = false,
    });
    ok
}

fn visit(e: &CExpr, f: &mut dyn FnMut(&CExpr)) {
    f(e);
    for c in e.children() {
        visit(c, f);
    }
}

/// `e` with every reference to `key` replaced by `value`.
pub(crate) fn replace_reads(e: &CExpr, key: &str, value: &CExpr) -> CExpr {
    if matches!(&e.kind, CExprKind::Ref(r) if r.key == key) {
        return value.clone();
    }
    let mut out = e.clone();
    out.map_children(&mut |c| replace_reads(c, key, value));
    out
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    const AXPY: &str = "void f(int n, double a, const double *x, int incx, double *y, int incy) {
        int i, ix = 0, iy = 0;
        for (i = 0; i < n; i++) { y[iy] += a * x[ix]; ix += incx; iy += incy; }
    }";

    /// LINPACK's `idamax` steps its index once before the loop that steps
    /// it again: the two assignments are one, and the index closes.
    #[test]
    fn an_index_stepped_before_its_loop_closes_over_it() {
        let body = lowered(
            "float f(int n, const float *x, int inc) {
               int i, ix; float s;
               ix = 0;
               s = x[0];
               ix = ix + inc;
               for (i = 1; i < n; i++) { s += x[ix]; ix = ix + inc; }
               return s;
             }",
        )
        .expect("lowers");
        assert!(body.contains("s = (s + x[i][0]):f32"), "{body}");
    }

    #[test]
    fn index_variables_stepped_by_increments_become_affine_subscripts() {
        let body = lowered(AXPY).expect("lowers");
        // Each row of the strided views is one trip (`1 <= incx` is a
        // precondition of that view).
        assert_eq!(
            body,
            "for i in 0..n step 1 y[i][0] = (y[i][0] + (a * x[i][0]):f64):f64"
        );
    }

    #[test]
    fn a_read_after_the_step_sees_the_next_value() {
        let source = "void f(int n, float *y, const float *x) {
            int j = 0;
            for (int i = 0; i < n; i++) { j += 2; y[i] = x[j - 1]; }
        }";
        let body = lowered(source).expect("lowers");
        // j - 1 after the step at trip i is 2*(i + 1) - 1 = 2*i + 1.
        assert_eq!(body, "for i in 0..n step 1 y[i] = x[2*i + 1]");
    }

    #[test]
    fn a_variable_read_after_the_loop_or_carried_by_an_outer_loop_is_left_alone() {
        let after = "int f(int n, float *y, const float *x) {
            int j = 0;
            for (int i = 0; i < n; i++) { y[i] = x[j]; j += 2; }
            return j;
        }";
        assert!(lowered(after).is_err());
        let carried = "void f(int n, int m, float *y, const float *x) {
            int j = 0;
            for (int k = 0; k < m; k++)
                for (int i = 0; i < n; i++) { y[j] = x[i]; j++; }
        }";
        assert!(lowered(carried).is_err());
    }

    #[test]
    fn a_step_read_from_memory_or_written_in_the_loop_is_left_alone() {
        let loaded = "void f(int n, float *y, const float *x, const int *s) {
            int j = 0;
            for (int i = 0; i < n; i++) { y[j] = x[i]; j += s[0]; }
        }";
        assert!(lowered(loaded).is_err());
        let written = "void f(int n, float *y, const float *x, int s) {
            int j = 0;
            for (int i = 0; i < n; i++) { y[j] = x[i]; j += s; s = 1; }
        }";
        assert!(lowered(written).is_err());
    }
}
