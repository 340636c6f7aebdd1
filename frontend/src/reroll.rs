//! Loops unrolled by hand, rolled back.
//!
//! Reference BLAS and DSP libraries unroll their loops in the source: a
//! main loop that does four (or five) elements a trip and a clean-up loop
//! for the rest. Lifted as written, the main loop's step and the clean-up's
//! bound `n % 4` are not affine. Each form below runs the same statement
//! for every element, in element order, so it is exactly the plain loop:
//!
//! ```c
//! // counted (DSP): blockSize >> 2 trips of S;S;S;S, then blockSize % 4 of S
//! cnt = blockSize >> 2U; while (cnt > 0U) { S; S; S; S; cnt--; }
//! cnt = blockSize % 0x4U; while (cnt > 0U) { S; cnt--; }
//! //   is  cnt = blockSize; while (cnt > 0U) { S; cnt--; }
//!
//! // clean-up first (reference BLAS): S(0..m), then S(i), …, S(i+3) from m
//! m = n % 4;
//! if (m != 0) { for (i = 0; i < m; i++) S(i); if (n < 4) return; }
//! for (i = m; i < n; i += 4) { S(i); S(i + 1); S(i + 2); S(i + 3); }
//! //   is  for (i = 0; i < n; i++) S(i);
//!
//! // remainder after: groups of four while they fit, then the rest
//! for (i = 0; i + 3 < n; i += 4) { S(i); …; S(i + 3); }
//! for (; i < n; i++) S(i);
//! //   is  for (i = 0; i < n; i++) S(i);
//! ```
//!
//! `S` is a list of statements, and the unrolled body is four copies of it,
//! the `j`-th with the iterator's integer expressions shifted by `j`
//! (compared as polynomials, so `x[i + 1]` matches `x[1 + i]`), the DSP
//! form's copies identical (its pointers walk). An accumulation unrolled
//! into one chain, `s = s + t(i) + t(i + 1) + … + t(i + 4)` (reference
//! `ddot`), is the same as `s = s + t(i)` five times, since C adds left to
//! right, as long as every addition is in `s`'s own type.
//!
//! Each rewrite holds only when nothing in the bodies writes the trip
//! count's variables or the clean-up's bound, nothing reads the counter,
//! the iterator is not read after the loops (its final value differs), and
//! an `if (n < 4) return;` inside the clean-up is the last thing the
//! function does but for the main loop (it returns exactly when the main
//! loop would not run). A form that is not exactly one of these is left
//! as written, for the lowering to accept or explain.

use crate::affine::{poly_of, AffineName, Poly};
use crate::induction::{counted_for, CountedFor};
use crate::reader::variables_only;
use crate::syntax::{ArithOp, CBinOp, CExpr, CExprKind, CStmt, CUnOp, IntValue};

/// `stmts` (one block's, in order) with each hand-unrolled loop pair
/// rolled back into one loop; `function_body` says whether the block is
/// the function's own (an early `return` ends the function only there).
pub(crate) fn reroll(mut stmts: Vec<CStmt>, function_body: bool) -> Vec<CStmt> {
    let mut at = 0;
    while at < stmts.len() {
        if let Some(rolled) = counted(&stmts, at) {
            stmts.splice(at..at + 4, rolled);
        } else if let Some((from, m, rolled)) = cleanup_first(&stmts, at, function_body) {
            stmts.splice(from..=at, [rolled]);
            at = from - usize::from(drop_unread_remainder(&mut stmts, from, &m));
        } else if let Some(rolled) = remainder_after(&stmts, at) {
            stmts.splice(at..at + 2, [rolled]);
        }
        at += 1;
    }
    stmts
}

/// The DSP form at `stmts[at..at + 4]`: `cnt = X >> s` (or `X / K`), a
/// counted loop of `K` copies of `S`, `cnt = X % K` (or `X & (K - 1)`), a
/// counted loop of `S`. Both loops are the reader's pending `for`s of
/// `while (cnt > 0) { …; cnt--; }`.
fn counted(stmts: &[CStmt], at: usize) -> Option<Vec<CStmt>> {
    let [first, main, second, rest] = stmts.get(at..at + 4)? else {
        return None;
    };
    let (counter, total, k) = counter_set(first, quotient)?;
    let (counter2, total2, k2) = counter_set(second, remainder)?;
    let (main_body, rest_body) = (
        pending_countdown(main, counter)?,
        pending_countdown(rest, counter)?,
    );
    let same_header = same_stmt_header(main, rest);
    if counter2 != counter || k2 != k || !same_expr(total, total2, &Shift::NONE) || !same_header {
        return None;
    }
    let group = body_items(rest_body);
    let copies = body_items(main_body);
    let mut vars = Vec::new();
    if group.is_empty()
        || !variables_only(total, &mut vars)
        || group
            .iter()
            .any(|s| s.refers_to(counter) || vars.iter().any(|v| s.writes(v)))
        || !repeats(&copies, &group, k, None)
    {
        return None;
    }
    Some(vec![with_value(first, total)?, rest.clone()])
}

/// `(counter, X, K)` when `s` sets an integer variable to `op(X)` (`s` is
/// `c = …;` or the declaration `T c = …;`).
fn counter_set(s: &CStmt, op: fn(&CExpr) -> Option<(&CExpr, i64)>) -> Option<(&str, &CExpr, i64)> {
    let (key, value) = assignment(s)?;
    let (total, k) = op(value)?;
    (k >= 2).then_some((key, total, k))
}

/// `X >> s` as `(X, 2^s)`, `X / K` as `(X, K)`.
fn quotient(e: &CExpr) -> Option<(&CExpr, i64)> {
    let CExprKind::Binary { op, lhs, rhs } = &e.stripped().kind else {
        return None;
    };
    let c = rhs.int_constant()?;
    match op {
        CBinOp::Shr if (1..=8).contains(&c) => Some((lhs, 1 << c)),
        CBinOp::Div => Some((lhs, c)),
        _ => None,
    }
}

/// `X % K` as `(X, K)`, `X & (K - 1)` for a power of two `K` too.
fn remainder(e: &CExpr) -> Option<(&CExpr, i64)> {
    let CExprKind::Binary { op, lhs, rhs } = &e.stripped().kind else {
        return None;
    };
    let c = rhs.int_constant()?;
    match op {
        CBinOp::Rem => Some((lhs, c)),
        CBinOp::Unsupported("&") if c > 0 && (c + 1) & c == 0 => Some((lhs, c + 1)),
        _ => None,
    }
}

/// The body of the reader's pending `for` of a count-down `while` on
/// `counter` (no initialiser yet, `counter > 0` or `counter != 0`,
/// stepped by `counter--`).
fn pending_countdown<'a>(s: &'a CStmt, counter: &str) -> Option<&'a CStmt> {
    let CStmt::For {
        init,
        cond,
        inc,
        body,
        ..
    } = s
    else {
        return None;
    };
    let CExprKind::Binary { op, lhs, rhs } = &cond.stripped().kind else {
        return None;
    };
    let tests_positive = matches!(op, CBinOp::Gt | CBinOp::Ne)
        && lhs.ref_key() == Some(counter)
        && rhs.int_constant() == Some(0);
    let decrements = matches!(&inc.stripped().kind, CExprKind::Unary {
            op: CUnOp::PostDec | CUnOp::PreDec,
            arg,
        } if arg.ref_key() == Some(counter));
    (matches!(**init, CStmt::Null(_)) && tests_positive && decrements).then_some(body)
}

/// Whether two loops' headers (condition and step) are the same.
fn same_stmt_header(a: &CStmt, b: &CStmt) -> bool {
    match (a, b) {
        (
            CStmt::For {
                cond: c1, inc: i1, ..
            },
            CStmt::For {
                cond: c2, inc: i2, ..
            },
        ) => same_expr(c1, c2, &Shift::NONE) && same_expr(i1, i2, &Shift::NONE),
        _ => false,
    }
}

/// The reference-BLAS form whose main loop is `stmts[at]`: `for (i = m; i
/// < n; i += K)` over `K` shifted copies of the clean-up's body, the
/// clean-up `for (i = 0; i < m; i++)` (perhaps inside `if (m != 0) { …;
/// if (n < K) return; }`) the statement before it, and `m = n % K` before
/// that. Returns where the clean-up is, `m`, and the rolled loop.
fn cleanup_first(
    stmts: &[CStmt],
    at: usize,
    function_body: bool,
) -> Option<(usize, String, CStmt)> {
    let main = stepped_loop(stmts.get(at)?)?;
    let (iter, k) = (main.iter.as_str(), main.k);
    let bound = group_bound(main.cond, iter, k)?;
    let m = main.start.ref_key()?;
    let from = at.checked_sub(1)?;
    let (cleanup, returns_early) = cleanup_of(&stmts[from], bound, k)?;
    let rest = stepped_loop(cleanup).filter(|c| c.k == 1)?;
    let citer = rest.iter.as_str();
    if plain_bound(rest.cond, citer)?.ref_key() != Some(m) || rest.start.int_constant() != Some(0) {
        return None;
    }
    if let Some(value) = returns_early {
        // Falling off the function's end returns; a nested block must
        // return the same value itself (a branch ending `return dtemp;`).
        let rest = &stmts[at + 1..];
        let returns_itself = rest.iter().any(|s| matches!(s, CStmt::Return(..)));
        if !(nothing_after(rest, value) && (function_body || returns_itself)) {
            return None;
        }
    }
    let set = stmts[..from].iter().rposition(|s| s.writes(m))?;
    let (total, k2) = remainder(assigned(&stmts[set], m)?)?;
    let mut vars = Vec::new();
    if k < 2 || k2 != k || !same_expr(total, bound, &Shift::NONE) {
        return None;
    }
    if !variables_only(bound, &mut vars) {
        return None;
    }
    vars.extend([m, iter, citer].map(String::from));
    let bodies = [main.body, rest.body];
    let untouched = |s: &CStmt| vars.iter().all(|v| !s.writes(v));
    if !stmts[set + 1..from].iter().all(untouched) || !bodies.iter().all(|b| untouched(b)) {
        return None;
    }
    if [iter, citer]
        .iter()
        .any(|i| stmts[at + 1..].iter().any(|s| s.refers_to(i)))
    {
        return None;
    }
    let shift = Shift::renaming(citer, iter);
    let group = body_items(rest.body);
    if !repeats(&body_items(main.body), &group, k, Some(&shift)) {
        return None;
    }
    Some((from, m.to_string(), with_bound(cleanup, bound)?))
}

/// The clean-up loop of [`cleanup_first`] in `s`, and what it returns
/// early when it sits in `if (m != 0) { loop; if (n < K) return v; }`
/// (`m` is the loop's bound; `Some(None)`: a bare `return;`).
fn cleanup_of<'a>(s: &'a CStmt, n: &CExpr, k: i64) -> Option<(&'a CStmt, Early<'a>)> {
    let Some((cond, then_branch)) = if_without_else(s) else {
        return matches!(s, CStmt::For { .. }).then_some((s, None));
    };
    let inner = body_items(then_branch);
    let (cleanup, tail) = inner.split_first()?;
    let looped = stepped_loop(cleanup)?;
    let m = plain_bound(looped.cond, &looped.iter)?.ref_key()?;
    let guards_nonzero = match &cond.stripped().kind {
        CExprKind::Ref(r) => r.key == m,
        CExprKind::Binary { op, lhs, rhs } => {
            matches!(op, CBinOp::Ne | CBinOp::Gt)
                && lhs.ref_key() == Some(m)
                && rhs.int_constant() == Some(0)
        }
        _ => false,
    };
    let returns_early = match tail {
        [] => None,
        [ret] => Some(returns_below(ret, n, k)?),
        _ => return None,
    };
    guards_nonzero.then_some((*cleanup, returns_early))
}

/// The condition and branch of an `if` without `else`.
fn if_without_else(s: &CStmt) -> Option<(&CExpr, &CStmt)> {
    match s {
        CStmt::If {
            cond,
            then_branch,
            else_branch: None,
            ..
        } => Some((cond, then_branch)),
        _ => None,
    }
}

/// What `if (n < K) return v;` returns (`Some(None)` for a bare `return;`).
fn returns_below<'a>(s: &'a CStmt, n: &CExpr, k: i64) -> Option<Option<&'a CExpr>> {
    let (cond, then_branch) = if_without_else(s)?;
    let (lhs, rhs) = compared(cond, CBinOp::Lt)?;
    let [CStmt::Return(value, _)] = body_items(then_branch).as_slice() else {
        return None;
    };
    let below = same_expr(lhs, n, &Shift::NONE) && rhs.int_constant() == Some(k);
    below.then_some(value.as_ref())
}

/// The form whose unrolled loop is `stmts[at]`: `for (i = s; i + K - 1 <
/// n; i += K)` (or `i < n - (K - 1)`, `i <= n - K`), then `for (; i < n;
/// i++)` over its body's first copy. Rolled: `for (i = s; i < n; i++)`.
fn remainder_after(stmts: &[CStmt], at: usize) -> Option<CStmt> {
    let [main, rest] = stmts.get(at..at + 2)? else {
        return None;
    };
    // `int i = 0; for (; i + 3 < n; i += 4)`: read with the statement
    // before it as its initialiser, which stays where it is (and moves
    // into the rolled loop as into any counted `while`).
    let before = at.checked_sub(1).map(|b| &stmts[b]);
    let (main, set_before) = match (main, before) {
        (CStmt::For { init, .. }, Some(set)) if matches!(**init, CStmt::Null(_)) => {
            (with_init(main, set), true)
        }
        _ => (main.clone(), false),
    };
    let main = stepped_loop(&main).filter(|m| m.k >= 2)?;
    let (iter, k) = (main.iter.as_str(), main.k);
    let CStmt::For {
        init: rest_init,
        cond: rest_cond,
        inc: rest_inc,
        body: rest_body,
        ..
    } = rest
    else {
        return None;
    };
    let n = plain_bound(rest_cond, iter)?;
    let continues = matches!(**rest_init, CStmt::Null(_)) && step(rest_inc, iter) == Some(1);
    let mut vars = Vec::new();
    let set_outside = set_before || matches!(main.header.init, CStmt::Expr(_));
    if !continues || !set_outside || !variables_only(n, &mut vars) {
        return None;
    }
    if !fits_groups(main.cond, iter, n, k) || stmts[at + 2..].iter().any(|s| s.refers_to(iter)) {
        return None;
    }
    vars.push(iter.to_string());
    if [main.body, &**rest_body]
        .iter()
        .any(|b| vars.iter().any(|v| b.writes(v)))
    {
        return None;
    }
    let shift = Shift::renaming(iter, iter);
    if !repeats(
        &body_items(main.body),
        &body_items(rest_body),
        k,
        Some(&shift),
    ) {
        return None;
    }
    let init = match set_before {
        true => CStmt::Null(main.header.loc.clone()),
        false => main.header.init.clone(),
    };
    Some(CStmt::For {
        init: Box::new(init),
        cond: rest_cond.clone(),
        inc: rest_inc.clone(),
        body: rest_body.clone(),
        loc: main.header.loc.clone(),
    })
}

/// The `for` `s` with `init` as its initialiser.
fn with_init(s: &CStmt, init: &CStmt) -> CStmt {
    let mut out = s.clone();
    if let CStmt::For { init: slot, .. } = &mut out {
        **slot = init.clone();
    }
    out
}

/// Whether `cond` says a whole group `i, …, i + K - 1` is below `n`.
fn fits_groups(cond: &CExpr, iter: &str, n: &CExpr, k: i64) -> bool {
    let CExprKind::Binary { op, lhs, rhs } = &cond.stripped().kind else {
        return false;
    };
    let (Some(l), Some(r), Some(n)) = (poly_any(lhs), poly_any(rhs), poly_any(n)) else {
        return false;
    };
    let Ok(last) = Poly::var(iter).add(&Poly::constant(k - 1)) else {
        return false;
    };
    let slack = match op {
        CBinOp::Lt => l.sub(&r),
        CBinOp::Le => l.sub(&r).and_then(|d| d.sub(&Poly::constant(1))),
        _ => return false,
    };
    // `l < r` (or `l + 1 <= r`) is `last < n` when `l - r == last - n`:
    // only the plain, overflow-free difference, so a subtraction in an
    // unsigned bound (`i < n - 3` with `size_t n`) is refused below.
    let unsigned_sub = [lhs, rhs].iter().any(|e| has_unsigned_sub(e));
    !unsigned_sub && matches!((slack, last.sub(&n)), (Ok(a), Ok(b)) if a == b)
}

/// Whether `e` subtracts in an unsigned type (it would wrap below zero).
fn has_unsigned_sub(e: &CExpr) -> bool {
    let own = matches!(
        &e.kind,
        CExprKind::Binary {
            op: CBinOp::Sub,
            ..
        }
    ) && e
        .ty
        .scalar()
        .is_some_and(|t| !t.is_float() && !t.is_signed());
    own || e.children().into_iter().any(has_unsigned_sub)
}

/// A `for` that sets its iterator and steps it by a constant.
struct Stepped<'s> {
    iter: String,
    start: CExpr,
    cond: &'s CExpr,
    k: i64,
    body: &'s CStmt,
    header: CountedFor<'s>,
}

/// `s` as a [`Stepped`] loop (`for (i = start; …; i += K)`, `i++` for
/// `K = 1`; the start assigned or declared).
fn stepped_loop(s: &CStmt) -> Option<Stepped<'_>> {
    let header = counted_for(s)?;
    let iter = header.iter.ref_key()?.to_string();
    let k = step(header.inc, &iter)?;
    Some(Stepped {
        start: header.start.clone(),
        cond: header.cond,
        body: header.body,
        iter,
        k,
        header,
    })
}

/// The `n` of a condition `iter < n`.
fn plain_bound<'e>(cond: &'e CExpr, iter: &str) -> Option<&'e CExpr> {
    let (lhs, rhs) = compared(cond, CBinOp::Lt)?;
    (lhs.ref_key() == Some(iter)).then_some(rhs)
}

/// The `n` of a main loop's condition: `i < n`, or a test that the whole
/// group `i, …, i + K - 1` is below `n` (`i + K - 1 < n`, `i < n - (K -
/// 1)`, `i <= n - K`), the same trips when `n - start` is a multiple of `K`.
fn group_bound<'e>(cond: &'e CExpr, iter: &str, k: i64) -> Option<&'e CExpr> {
    if let Some(n) = plain_bound(cond, iter) {
        return Some(n);
    }
    let CExprKind::Binary { rhs, .. } = &cond.stripped().kind else {
        return None;
    };
    let minuend = match &rhs.stripped().kind {
        CExprKind::Binary {
            op: CBinOp::Sub,
            lhs,
            ..
        } => Some(&**lhs),
        _ => None,
    };
    [Some(&**rhs), minuend]
        .into_iter()
        .flatten()
        .find(|n| fits_groups(cond, iter, n, k))
}

/// `(lhs, rhs)` of `lhs op rhs` (through parentheses and conversions).
fn compared(e: &CExpr, op: CBinOp) -> Option<(&CExpr, &CExpr)> {
    match &e.stripped().kind {
        CExprKind::Binary { op: o, lhs, rhs } if *o == op => Some((lhs, rhs)),
        _ => None,
    }
}

/// The constant `K` of a step `i++`, `++i`, `i += K` of `iter`.
fn step(inc: &CExpr, iter: &str) -> Option<i64> {
    match &inc.stripped().kind {
        CExprKind::Unary {
            op: CUnOp::PostInc | CUnOp::PreInc,
            arg,
        } if arg.ref_key() == Some(iter) => Some(1),
        CExprKind::Binary {
            op: CBinOp::CompoundAssign(ArithOp::Add),
            lhs,
            rhs,
        } if lhs.ref_key() == Some(iter) => rhs.int_constant().filter(|k| *k >= 1),
        // `i = i + K` (LINPACK's C spells its steps so).
        CExprKind::Binary {
            op: CBinOp::Assign,
            lhs,
            rhs,
        } if lhs.ref_key() == Some(iter) => match &rhs.stripped().kind {
            CExprKind::Binary {
                op: CBinOp::Add,
                lhs: a,
                rhs: k,
            } if a.ref_key() == Some(iter) => k.int_constant().filter(|k| *k >= 1),
            _ => None,
        },
        _ => None,
    }
}

/// `(variable, value)` of `v = value;` or the declaration `T v = value;`.
fn assignment(s: &CStmt) -> Option<(&str, &CExpr)> {
    match s {
        CStmt::Expr(e) => match &e.stripped().kind {
            CExprKind::Binary {
                op: CBinOp::Assign,
                lhs,
                rhs,
            } => Some((lhs.ref_key()?, rhs)),
            _ => None,
        },
        CStmt::Decl(vars, _) => match vars.as_slice() {
            [v] if v.dims.is_empty() => Some((&v.key, v.init.as_ref()?)),
            _ => None,
        },
        _ => None,
    }
}

/// The value `s` gives `key`: `key = value;`, or `value` as its
/// initialiser in a declaration (of one or more variables).
fn assigned<'a>(s: &'a CStmt, key: &str) -> Option<&'a CExpr> {
    match s {
        CStmt::Decl(vars, _) => vars.iter().find(|v| v.key == key)?.init.as_ref(),
        _ => assignment(s).filter(|(k, _)| *k == key).map(|(_, v)| v),
    }
}

/// `s` (an assignment or declaration, [`assignment`]) setting `value` instead.
fn with_value(s: &CStmt, value: &CExpr) -> Option<CStmt> {
    let mut out = s.clone();
    match &mut out {
        CStmt::Expr(e) => match &mut e.kind {
            CExprKind::Binary { rhs, .. } => **rhs = value.clone(),
            _ => return None,
        },
        CStmt::Decl(vars, _) => vars.first_mut()?.init = Some(value.clone()),
        _ => return None,
    }
    Some(out)
}

/// The loop `s` (`for (i = …; i < m; …)`) bounded by `bound` instead.
fn with_bound(s: &CStmt, bound: &CExpr) -> Option<CStmt> {
    let mut out = s.clone();
    let CStmt::For { cond, .. } = &mut out else {
        return None;
    };
    let CExprKind::Binary { rhs, .. } = &mut cond.kind else {
        return None;
    };
    **rhs = bound.clone();
    Some(out)
}

/// Removes the value `m = n % K` of the clean-up's bound `m` (set in
/// `stmts[..upto]`) when nothing reads `m` any more: it is not affine, and
/// only the clean-up read it. Returns whether a statement went.
fn drop_unread_remainder(stmts: &mut Vec<CStmt>, upto: usize, m: &str) -> bool {
    let Some(set) = stmts[..upto].iter().rposition(|s| s.writes(m)) else {
        return false;
    };
    if assigned(&stmts[set], m).is_none_or(|v| remainder(v).is_none()) {
        return false;
    }
    let read_elsewhere = stmts
        .iter()
        .enumerate()
        .any(|(at, s)| at != set && s.refers_to(m));
    if read_elsewhere {
        return false;
    }
    match &mut stmts[set] {
        CStmt::Decl(vars, _) => {
            for v in vars.iter_mut().filter(|v| v.key == m) {
                v.init = None;
            }
            false
        }
        _ => {
            stmts.remove(set);
            true
        }
    }
}

/// An early `return` in a clean-up: `None` when there is none,
/// `Some(None)` for `return;`, `Some(Some(v))` for `return v;`.
type Early<'a> = Option<Option<&'a CExpr>>;

/// Whether the rest of the function, `stmts`, only returns `value` (a
/// pure expression; empty statements aside, and falling off the end when
/// `value` is `None`).
fn nothing_after(stmts: &[CStmt], value: Option<&CExpr>) -> bool {
    let returns = |s: &CStmt| match (s, value) {
        (CStmt::Return(None, _), None) => true,
        (CStmt::Return(Some(v), _), Some(w)) => w.is_pure() && same_expr(w, v, &Shift::NONE),
        _ => false,
    };
    let mut rest = stmts.iter().filter(|s| !matches!(s, CStmt::Null(_)));
    match (rest.next(), value) {
        (None, None) => true,
        (Some(s), _) => returns(s) && rest.next().is_none(),
        (None, Some(_)) => false,
    }
}

/// A block's statements (a single statement as a list of one), without
/// empty statements.
fn body_items(s: &CStmt) -> Vec<&CStmt> {
    match s {
        CStmt::Compound(items, _) => items
            .iter()
            .filter(|s| !matches!(s, CStmt::Null(_)))
            .collect(),
        other => vec![other],
    }
}

/// Whether `copies` is `k` copies of `group`, the `j`-th shifted by `j`
/// along `shift`'s iterator (identical copies without one), or (for a
/// one-statement group `s = s + t(i)`) the one chain `s = s + t(i) + … +
/// t(i + k - 1)`.
fn repeats(copies: &[&CStmt], group: &[&CStmt], k: i64, shift: Option<&Shift>) -> bool {
    let g = group.len();
    if g == 0 {
        return false;
    }
    if copies.len() == g * k as usize {
        return copies.chunks(g).zip(0..).all(|(copy, j)| {
            let at = shift.map_or(Shift::NONE, |s| s.by(j));
            copy.iter().zip(group).all(|(c, s)| same_stmt(s, c, &at))
        });
    }
    match (copies, group, shift) {
        ([CStmt::Expr(chain)], [CStmt::Expr(one)], Some(shift)) => is_chain(one, chain, k, shift),
        _ => false,
    }
}

/// Whether `chain` is `s = s + t(i) + … + t(i + k - 1)` where `one` is
/// `s = s + t(i)` or `s += t(i)`, every addition in `s`'s type.
fn is_chain(one: &CExpr, chain: &CExpr, k: i64, shift: &Shift) -> bool {
    let Some((acc, term)) = accumulation(one) else {
        return false;
    };
    let Some((target, value)) = compared(chain, CBinOp::Assign) else {
        return false;
    };
    if target.ref_key() != Some(acc) {
        return false;
    }
    let mut terms = Vec::new();
    let mut cur = value.stripped();
    while let CExprKind::Binary {
        op: CBinOp::Add,
        lhs,
        rhs,
    } = &cur.kind
    {
        if cur.ty != target.ty {
            return false;
        }
        terms.push(&**rhs);
        cur = lhs.stripped();
    }
    terms.reverse();
    cur.ref_key() == Some(acc)
        && terms.len() == k as usize
        && terms
            .iter()
            .zip(0..)
            .all(|(t, j)| same_expr(term, t, &shift.by(j)))
}

/// `(s, t)` of `s = s + t` or `s += t` over a variable `s`, `t` in `s`'s type.
fn accumulation(e: &CExpr) -> Option<(&str, &CExpr)> {
    let CExprKind::Binary { op, lhs, rhs } = &e.stripped().kind else {
        return None;
    };
    let acc = lhs.ref_key()?;
    let term = match op {
        CBinOp::CompoundAssign(ArithOp::Add) => &**rhs,
        CBinOp::Assign => match &rhs.stripped().kind {
            CExprKind::Binary {
                op: CBinOp::Add,
                lhs: base,
                rhs: term,
            } if base.ref_key() == Some(acc) && rhs.stripped().ty == lhs.ty => &**term,
            _ => return None,
        },
        _ => return None,
    };
    (term.stripped().ty == lhs.ty).then_some((acc, term))
}

/// How a copy's iterator relates to the clean-up's: the clean-up's `from`
/// is the copy's `to` plus `by`.
#[derive(Clone, Copy)]
struct Shift<'a> {
    from: &'a str,
    to: &'a str,
    by: i64,
}

impl<'a> Shift<'a> {
    const NONE: Shift<'static> = Shift {
        from: "",
        to: "",
        by: 0,
    };

    fn renaming(from: &'a str, to: &'a str) -> Shift<'a> {
        Shift { from, to, by: 0 }
    }

    fn by(&self, j: i64) -> Shift<'a> {
        Shift { by: j, ..*self }
    }

    /// `a` read as a polynomial, the iterator `from` as `to + by`.
    fn poly(&self, a: &CExpr) -> Option<Poly> {
        let name = |r: &crate::syntax::DeclRef| {
            if !self.from.is_empty() && r.key == self.from {
                Poly::var(self.to)
                    .add(&Poly::constant(self.by))
                    .map_or(AffineName::Opaque(r.name.clone()), AffineName::Poly)
            } else {
                AffineName::Var(r.key.clone())
            }
        };
        poly_of(a, &name).ok()
    }
}

/// An integer expression as a polynomial over its variables' keys.
fn poly_any(e: &CExpr) -> Option<Poly> {
    Shift::NONE.poly(e)
}

/// Whether statement `b` is `a` with `shift` applied (locations aside).
fn same_stmt(a: &CStmt, b: &CStmt, shift: &Shift) -> bool {
    match (a, b) {
        (CStmt::Expr(x), CStmt::Expr(y)) => same_expr(x, y, shift),
        (CStmt::Compound(..), CStmt::Compound(..)) => {
            let (x, y) = (body_items(a), body_items(b));
            x.len() == y.len() && x.iter().zip(&y).all(|(s, t)| same_stmt(s, t, shift))
        }
        (
            CStmt::If {
                cond: c1,
                then_branch: t1,
                else_branch: e1,
                ..
            },
            CStmt::If {
                cond: c2,
                then_branch: t2,
                else_branch: e2,
                ..
            },
        ) => {
            let elses = match (e1, e2) {
                (None, None) => true,
                (Some(x), Some(y)) => same_stmt(x, y, shift),
                _ => false,
            };
            same_expr(c1, c2, shift) && same_stmt(t1, t2, shift) && elses
        }
        _ => false,
    }
}

/// Whether expression `b` is `a` with `shift` applied: integer
/// sub-expressions compare as polynomials, the rest node by node
/// (locations and literal spellings aside).
fn same_expr(a: &CExpr, b: &CExpr, shift: &Shift) -> bool {
    if a.ty != b.ty {
        return false;
    }
    if a.ty.is_integer() && [a, b].iter().all(|e| e.is_pure() && ring_exact(e)) {
        if let (Some(x), Some(y)) = (shift.poly(a), poly_any(b)) {
            return x == y;
        }
    }
    let (xs, ys) = (a.children(), b.children());
    same_head(a, b)
        && xs.len() == ys.len()
        && xs.iter().zip(&ys).all(|(x, y)| same_expr(x, y, shift))
}

/// Whether equal polynomials mean equal values for `e`: `+`, `-`, `*`
/// are exact modulo `2^bits` (signed overflow is undefined), so only an
/// integer conversion that is not a ring map between results can tell two
/// equal polynomials apart (`(long)(u - 1)` and `(long)u - 1` for an
/// `unsigned u` at 0): a narrowing one, or one widening an unsigned result
/// of `int`'s width or more (narrower values are promoted before any
/// arithmetic, so those convert a leaf).
fn ring_exact(e: &CExpr) -> bool {
    let own = match &e.kind {
        CExprKind::Cast(inner) | CExprKind::Implicit(inner) => {
            match (inner.ty.scalar(), e.ty.scalar()) {
                (Some(from), Some(to)) if !from.is_float() && !to.is_float() => {
                    from.bits() == to.bits()
                        || (to.bits() > from.bits() && (from.is_signed() || from.bits() < 32))
                }
                _ => true,
            }
        }
        _ => true,
    };
    own && e.children().into_iter().all(ring_exact)
}

/// Whether two nodes are the same operation on their children.
fn same_head(a: &CExpr, b: &CExpr) -> bool {
    use CExprKind as K;
    match (&a.kind, &b.kind) {
        (K::Int(x), K::Int(y)) => x == y && !matches!(x, IntValue::TooLarge),
        (
            K::MacroInt {
                name: n1,
                value: v1,
            },
            K::MacroInt {
                name: n2,
                value: v2,
            },
        ) => n1 == n2 && v1 == v2,
        (K::Float { value: x, .. }, K::Float { value: y, .. }) => x.to_bits() == y.to_bits(),
        (K::Ref(x), K::Ref(y)) => x.key == y.key,
        (K::Binary { op: x, .. }, K::Binary { op: y, .. }) => x == y,
        (K::Unary { op: x, .. }, K::Unary { op: y, .. }) => x == y,
        (K::Member { field: x, .. }, K::Member { field: y, .. }) => x == y,
        (
            K::Call {
                callee: Some(x), ..
            },
            K::Call {
                callee: Some(y), ..
            },
        ) => x.key == y.key,
        (K::Subscript { .. }, K::Subscript { .. })
        | (K::Implicit(_), K::Implicit(_))
        | (K::Cast(_), K::Cast(_))
        | (K::Paren(_), K::Paren(_))
        | (K::Conditional { .. }, K::Conditional { .. }) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    fn rolled(source: &str) -> String {
        lowered(source).unwrap_or_else(|codes| panic!("refused: {codes:?}"))
    }

    /// The codes `source` is refused with (it must be).
    fn refused(source: &str) -> Vec<&'static str> {
        lowered(source).expect_err("the loops stay unrolled, and are refused")
    }

    #[test]
    fn a_counted_dsp_loop_unrolled_by_four_is_one_loop() {
        let unrolled = "void f(const float *a, float *b, unsigned n) {
            unsigned c = n >> 2U;
            while (c > 0U) { *b++ = *a++ * 2.0f; *b++ = *a++ * 2.0f;
                             *b++ = *a++ * 2.0f; *b++ = *a++ * 2.0f; c--; }
            c = n % 0x4U;
            while (c > 0U) { *b++ = *a++ * 2.0f; c--; }
        }";
        let plain = "void f(const float *a, float *b, unsigned n) {
            unsigned c = n;
            while (c > 0U) { *b++ = *a++ * 2.0f; c--; }
        }";
        assert_eq!(rolled(unrolled), rolled(plain));
    }

    #[test]
    fn a_blas_cleanup_then_main_loop_is_one_loop() {
        let unrolled = "void f(int n, double a, double *x) {
            int i, m;
            if (n <= 0) return;
            m = n % 3;
            if (m != 0) {
                for (i = 0; i < m; i++) x[i] = a * x[i];
                if (n < 3) return;
            }
            for (i = m; i < n; i += 3) {
                x[i] = a * x[i]; x[i + 1] = a * x[i + 1]; x[2 + i] = a * x[i + 2];
            }
        }";
        let plain = "void f(int n, double a, double *x) {
            int i, m;
            if (n <= 0) return;
            for (i = 0; i < n; i++) x[i] = a * x[i];
        }";
        assert_eq!(rolled(unrolled), rolled(plain));
    }

    #[test]
    fn a_main_loop_testing_its_whole_group_after_the_cleanup_is_one_loop() {
        // The clean-up declared in a block, the main loop `i + 3 < n`.
        let unrolled = "void f(int n, float a, const float *x, float *y) {
            int i;
            {
                const int m = n % 4;
                for (i = 0; i < m; i++) y[i] += a * x[i];
                for (i = m; i + 3 < n; i += 4) {
                    y[i] += a * x[i]; y[i + 1] += a * x[i + 1];
                    y[i + 2] += a * x[i + 2]; y[i + 3] += a * x[i + 3];
                }
            }
        }";
        let plain = "void f(int n, float a, const float *x, float *y) {
            int i;
            {
                const int m;
                for (i = 0; i < n; i++) y[i] += a * x[i];
            }
        }";
        assert_eq!(rolled(unrolled), rolled(plain));
    }

    #[test]
    fn an_unrolled_sum_chain_is_one_accumulation_a_trip() {
        let unrolled = "double f(int n, const double *x, const double *y) {
            double s = 0.0; int i, m = n % 2;
            for (i = 0; i < m; i++) s = s + x[i] * y[i];
            for (i = m; i < n; i += 2) s = s + x[i] * y[i] + x[i + 1] * y[i + 1];
            return s;
        }";
        let plain = "double f(int n, const double *x, const double *y) {
            double s = 0.0; int i, m;
            for (i = 0; i < n; i++) s = s + x[i] * y[i];
            return s;
        }";
        assert_eq!(rolled(unrolled), rolled(plain));
    }

    #[test]
    fn groups_then_the_rest_is_one_loop() {
        let unrolled = "void f(int n, const float *x, float *y) {
            int i;
            for (i = 0; i + 1 < n; i += 2) { y[i] = x[i] + 1.0f; y[i + 1] = x[i + 1] + 1.0f; }
            for (; i < n; i++) y[i] = x[i] + 1.0f;
        }";
        let plain = "void f(int n, const float *x, float *y) {
            int i;
            for (i = 0; i < n; i++) y[i] = x[i] + 1.0f;
        }";
        assert_eq!(rolled(unrolled), rolled(plain));
    }

    #[test]
    fn groups_after_a_declared_counter_then_the_rest_is_one_loop() {
        let unrolled = "void f(int n, const float *x, float *y) {
            int i = 0;
            for (; i + 1 < n; i += 2) { y[i] = x[i]; y[i + 1] = x[i + 1]; }
            for (; i < n; i++) y[i] = x[i];
        }";
        let plain = "void f(int n, const float *x, float *y) {
            for (int i = 0; i < n; i++) y[i] = x[i];
        }";
        assert_eq!(rolled(unrolled), rolled(plain));
    }

    #[test]
    fn copies_that_differ_stay_unrolled() {
        // The second copy scales by 3: not the clean-up's statement.
        let unrolled = "void f(int n, double *x) {
            int i, m = n % 2;
            for (i = 0; i < m; i++) x[i] = 2.0 * x[i];
            for (i = m; i < n; i += 2) { x[i] = 2.0 * x[i]; x[i + 1] = 3.0 * x[i + 1]; }
        }";
        assert_eq!(refused(unrolled), ["TL015", "TL015"]);
    }

    #[test]
    fn a_sum_chain_in_a_wider_type_stays_unrolled() {
        // `s + t0 + t1` in double rounds once where `s += t` rounds to
        // float after every term: not the same.
        let unrolled = "float f(int n, const float *x) {
            float s = 0.0f; int i, m = n % 2;
            for (i = 0; i < m; i++) s += x[i];
            for (i = m; i < n; i += 2) s = s + (double)x[i] + x[i + 1];
            return s;
        }";
        assert_eq!(refused(unrolled), ["TL015", "TL015"]);
    }

    #[test]
    fn an_iterator_read_after_the_loops_keeps_them() {
        let unrolled = "int f(int n, float *y) {
            int i;
            for (i = 0; i + 1 < n; i += 2) { y[i] = 0.0f; y[i + 1] = 0.0f; }
            for (; i < n; i++) y[i] = 0.0f;
            return i;
        }";
        assert!(refused(unrolled).contains(&"TL014"));
    }

    #[test]
    fn an_early_return_of_the_final_value_in_the_cleanup_is_dropped() {
        let unrolled = "double f(int n, const double *x) {
            double s = 0.0; int i, m;
            m = n % 2;
            if (m != 0) {
                for (i = 0; i < m; i++) s = s + x[i];
                if (n < 2) return s;
            }
            for (i = m; i < n; i += 2) s = s + x[i] + x[i + 1];
            return s;
        }";
        let plain = "double f(int n, const double *x) {
            double s = 0.0; int i, m;
            for (i = 0; i < n; i++) s = s + x[i];
            return s;
        }";
        assert_eq!(rolled(unrolled), rolled(plain));
    }

    #[test]
    fn an_early_return_with_work_after_the_main_loop_keeps_it() {
        // Returning when n < 2 skips the scaling after the main loop.
        let unrolled = "void f(int n, double *x, double *y) {
            int i, m;
            m = n % 2;
            if (m != 0) {
                for (i = 0; i < m; i++) x[i] = 0.0;
                if (n < 2) return;
            }
            for (i = m; i < n; i += 2) { x[i] = 0.0; x[i + 1] = 0.0; }
            y[0] = 1.0;
        }";
        assert!(refused(unrolled).contains(&"TL015"));
    }

    #[test]
    fn indices_equal_only_as_polynomials_through_a_narrowing_cast_stay_unrolled() {
        // `(unsigned char)(i + 1)` is not `(unsigned char)i + 1` at 255.
        let unrolled = "void f(int n, float *y, const float *x) {
            int i;
            for (i = 0; i + 1 < n; i += 2) {
                y[i] = x[(unsigned char)i];
                y[i + 1] = x[(unsigned char)i + 1];
            }
            for (; i < n; i++) y[i] = x[(unsigned char)i];
        }";
        assert!(refused(unrolled).contains(&"TL014"));
    }

    #[test]
    fn a_for_without_initialiser_takes_the_assignment_before_it() {
        let late = "void f(int n, float *y) { int i; i = 0; for (; i < n; i++) y[i] = 1.0f; }";
        let plain = "void f(int n, float *y) { int i; for (i = 0; i < n; i++) y[i] = 1.0f; }";
        assert_eq!(rolled(late), rolled(plain));
    }
}
