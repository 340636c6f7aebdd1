//! `while (n--) body`, the count-down loop of DSP and string code: the
//! body runs once for each value `n - 1, …, 0` of the counter, which it
//! sees already decremented (`while (n--) y[n] = x[n];` walks backwards).
//! It is read as `for (int n' = n - 1; n' >= 0; n'--) body[n := n']` with
//! a fresh counter `n'`, so that `n` itself is never written and stays a
//! size. Also `while (n-- > 0)` and `while (n-- != 0)`.
//!
//! That reading is exact when the loop runs once per entry of the block
//! that holds it: the counter is a parameter read in the function body
//! itself, or a local declared earlier in the same block
//! (`int k = taps; while (k--) …` inside an outer loop). The reader checks
//! that with the block at hand ([`valid_in_block`]); a count-down `while`
//! anywhere else keeps its refusal. After the loop the C's counter is -1:
//! where the block reads it later, that assignment follows the loop.
//! A negative start runs the C loop until the counter wraps (undefined
//! behaviour for `int`); the `for` runs no iteration then.

use crate::ir::Loc;
use crate::syntax::RefTarget;
use crate::syntax::{CBinOp, CExpr, CExprKind, CStmt, CType, CUnOp, CVarDecl, DeclRef, IntValue};

/// Prefix of the fresh counter's key; what follows is the counter's.
const FRESH_KEY: &str = "\u{1}countdown:";

/// The pending `for` of `while (cond) body` when `cond` is a count-down
/// test of an integer variable; `None` otherwise.
pub(crate) fn count_down(cond: &CExpr, body: &CStmt, loc: &Loc) -> Option<CStmt> {
    let counter = counted_down(cond)?;
    if !matches!(&counter.ty, CType::Scalar(t) if !t.is_float()) {
        return None;
    }
    let CExprKind::Ref(r) = &counter.kind else {
        return None;
    };
    let fresh = DeclRef {
        name: r.name.clone(),
        key: format!("{FRESH_KEY}{}", r.key),
        target: RefTarget::Local,
    };
    let fresh_ref = |loc: &Loc| CExpr {
        kind: CExprKind::Ref(fresh.clone()),
        ty: counter.ty.clone(),
        loc: loc.clone(),
    };
    let int = |v: i64| CExpr {
        kind: CExprKind::Int(IntValue::Fits(v)),
        ty: counter.ty.clone(),
        loc: loc.clone(),
    };
    let binary = |op, lhs: CExpr, rhs: CExpr| CExpr {
        kind: CExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        ty: counter.ty.clone(),
        loc: loc.clone(),
    };
    let init = CStmt::Decl(
        vec![CVarDecl {
            name: r.name.clone(),
            key: fresh.key.clone(),
            ty: counter.ty.clone(),
            dims: Vec::new(),
            init: Some(binary(CBinOp::Sub, counter.clone(), int(1))),
            is_static: false,
            loc: loc.clone(),
        }],
        loc.clone(),
    );
    let step = CExpr {
        kind: CExprKind::Unary {
            op: CUnOp::PostDec,
            arg: Box::new(fresh_ref(loc)),
        },
        ty: counter.ty.clone(),
        loc: loc.clone(),
    };
    Some(CStmt::For {
        init: Box::new(init),
        cond: binary(CBinOp::Ge, fresh_ref(loc), int(0)),
        inc: step,
        body: Box::new(rename_stmt(body, &r.key, &fresh)),
        loc: loc.clone(),
    })
}

/// `while (n > 0) { body; n--; }` (also `n != 0`, `n >= 1`, `0 < n`) with
/// no statement before it to start a counted `for` from: the counter is a
/// parameter counted down in place (`while (blockSize > 0U) { …;
/// blockSize--; }`). The body sees the counter before its step, so the
/// loop is `while (n--) body[n := n + 1]`, read as [`count_down`] reads
/// that. The caller keeps it only where nothing after the loop reads the
/// counter (it is 0 there, not the -1 of `while (n--)`).
pub(crate) fn stepped_last(cond: &CExpr, inc: &CExpr, body: &CStmt, loc: &Loc) -> Option<CStmt> {
    let counter = tested_positive(cond)?;
    let key = counter.ref_key()?;
    if crate::induction::unit_step(inc, key) != Some(-1) {
        return None;
    }
    let one = CExpr {
        kind: CExprKind::Int(IntValue::Fits(1)),
        ty: counter.ty.clone(),
        loc: loc.clone(),
    };
    let before_step = crate::induction::paren(CExpr {
        kind: CExprKind::Binary {
            op: CBinOp::Add,
            lhs: Box::new(counter.clone()),
            rhs: Box::new(one),
        },
        ty: counter.ty.clone(),
        loc: loc.clone(),
    });
    let body = body.map_exprs(&mut |e| crate::induction::replace_reads(e, key, &before_step));
    let post_dec = CExpr {
        kind: CExprKind::Unary {
            op: CUnOp::PostDec,
            arg: Box::new(counter.clone()),
        },
        ty: counter.ty.clone(),
        loc: loc.clone(),
    };
    count_down(&post_dec, &body, loc)
}

/// The variable `n` of `n > 0`, `n != 0`, `n >= 1`, `0 < n` or `0 != n`.
fn tested_positive(cond: &CExpr) -> Option<&CExpr> {
    let int = |e: &CExpr, v: i64| matches!(e.stripped().kind, CExprKind::Int(IntValue::Fits(x)) if x == v);
    let CExprKind::Binary { op, lhs, rhs } = &cond.stripped().kind else {
        return None;
    };
    let var = match op {
        CBinOp::Gt | CBinOp::Ne if int(rhs, 0) => lhs,
        CBinOp::Ge if int(rhs, 1) => lhs,
        CBinOp::Lt | CBinOp::Ne if int(lhs, 0) => rhs,
        _ => return None,
    };
    let var = var.stripped();
    matches!(var.kind, CExprKind::Ref(_)).then_some(var)
}

/// The counter `n` of `n--`, `n-- > 0` or `n-- != 0`.
fn counted_down(cond: &CExpr) -> Option<&CExpr> {
    fn post_dec(e: &CExpr) -> Option<&CExpr> {
        match &e.stripped().kind {
            CExprKind::Unary {
                op: CUnOp::PostDec,
                arg,
            } => Some(arg.stripped()),
            _ => None,
        }
    }
    let is_zero = |e: &CExpr| matches!(e.stripped().kind, CExprKind::Int(IntValue::Fits(0)));
    match &cond.stripped().kind {
        CExprKind::Binary { op, lhs, rhs }
            if matches!(op, CBinOp::Gt | CBinOp::Ne) && is_zero(rhs) =>
        {
            post_dec(lhs)
        }
        _ => post_dec(cond),
    }
    .filter(|c| matches!(c.kind, CExprKind::Ref(_)))
}

/// The counter's key when `s` is a pending count-down `for`.
pub(crate) fn pending_counter(s: &CStmt) -> Option<&str> {
    let CStmt::For { init, .. } = s else {
        return None;
    };
    let CStmt::Decl(vars, _) = &**init else {
        return None;
    };
    match vars.as_slice() {
        [v] => v.key.strip_prefix(FRESH_KEY),
        _ => None,
    }
}

/// Whether the count-down loop `stmts[at]` reads exactly: its counter is
/// declared earlier in the block, or the block is the function body and
/// the counter a parameter (`is_param`).
pub(crate) fn valid_in_block(
    stmts: &[CStmt],
    at: usize,
    function_body: bool,
    is_param: bool,
) -> bool {
    let Some(key) = stmts.get(at).and_then(pending_counter) else {
        return false;
    };
    let declared = stmts[..at]
        .iter()
        .any(|s| matches!(s, CStmt::Decl(vars, _) if vars.iter().any(|v| v.key == key)));
    declared || (function_body && is_param)
}

/// `key = -1;`, the C counter's value after a count-down loop (its
/// reference copied from the loop's initialiser).
pub(crate) fn final_value(s: &CStmt) -> Option<CStmt> {
    let CStmt::For { init, loc, .. } = s else {
        return None;
    };
    let CStmt::Decl(vars, _) = &**init else {
        return None;
    };
    let CExprKind::Binary { lhs, .. } = &vars.first()?.init.as_ref()?.kind else {
        return None;
    };
    let minus_one = CExpr {
        kind: CExprKind::Int(IntValue::Fits(-1)),
        ty: lhs.ty.clone(),
        loc: loc.clone(),
    };
    Some(CStmt::Expr(CExpr {
        kind: CExprKind::Binary {
            op: CBinOp::Assign,
            lhs: lhs.clone(),
            rhs: Box::new(minus_one),
        },
        ty: lhs.ty.clone(),
        loc: loc.clone(),
    }))
}

fn rename_stmt(s: &CStmt, key: &str, to: &DeclRef) -> CStmt {
    s.map_exprs(&mut |e| rename_expr(e, key, to))
}

fn rename_expr(x: &CExpr, key: &str, to: &DeclRef) -> CExpr {
    if matches!(&x.kind, CExprKind::Ref(d) if d.key == key) {
        return CExpr {
            kind: CExprKind::Ref(to.clone()),
            ..x.clone()
        };
    }
    let mut out = x.clone();
    out.map_children(&mut |c| rename_expr(c, key, to));
    out
}
