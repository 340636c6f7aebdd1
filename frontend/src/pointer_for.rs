//! A `for` whose iterator is a pointer walking an array:
//!
//! ```c
//! for (p = x; p < x + n; p++) *p *= s;
//! ```
//!
//! is `for (k = 0; k < n; ++k) *(x + k) *= s;` over a fresh integer `k`,
//! which the pointer normalisation reads as `x[k]`. Exact when the start
//! `x` and the count `n` are pure and the body writes neither them nor
//! `p` (so `p == x + k` at every trip), the condition is `p < x + n` or
//! `p != x + n` with the same `x`, the step is `p++`, `++p` or `p += 1`,
//! and nothing after the loop in its block reads `p` (its final value is
//! not rebuilt). Anything else is left as written, and the lowering refuses
//! the pointer used as a value (TL026) as before.

use crate::induction::{counted_for, paren, replace_reads, steps_by_one, CountedFor};
use crate::syntax::*;

/// Key prefix of the fresh counters.
const FRESH_KEY: &str = "\u{1}ptr-for:";

/// `stmts` (one block) with each pointer-walking `for` counted by an
/// integer where that is exact (see the module documentation).
pub(crate) fn count_pointer_loops(mut stmts: Vec<CStmt>) -> Vec<CStmt> {
    for at in 0..stmts.len() {
        let Some((rewritten, key)) = counted(&stmts[at]) else {
            continue;
        };
        if stmts[at + 1..].iter().any(|s| s.refers_to(&key)) {
            continue;
        }
        stmts[at] = rewritten;
    }
    stmts
}

/// The counted form of `s` and the pointer's key, when `s` is such a loop.
fn counted(s: &CStmt) -> Option<(CStmt, String)> {
    let CountedFor {
        iter: pointer,
        start: base,
        cond,
        inc,
        body,
        loc,
        ..
    } = counted_for(s)?;
    if !matches!(pointer.ty, CType::Pointer { .. }) {
        return None;
    }
    let key = pointer.ref_key()?.to_string();
    let count = count_of(cond, &key, &base)?;
    let untouched = |e: &CExpr| {
        let mut keys = Vec::new();
        collect_refs(e, &mut keys);
        e.is_pure() && keys.iter().all(|k| !body.writes(k))
    };
    if !steps_by_one(inc, &key) || body.writes(&key) || !untouched(&base) || !untouched(&count) {
        return None;
    }
    let fresh = format!("{FRESH_KEY}{}:{}:{}", loc.file, loc.line, loc.col);
    let counted = CStmt::counted_loop(fresh, loc, count, |k| {
        let walked = paren(CExpr {
            kind: CExprKind::Binary {
                op: CBinOp::Add,
                lhs: Box::new(base.clone()),
                rhs: Box::new(k),
            },
            ty: pointer.ty.clone(),
            loc: loc.clone(),
        });
        body.map_exprs(&mut |e| replace_reads(e, &key, &walked))
    });
    Some((counted, key))
}

/// `n` from `p < base + n` or `p != base + n` (`base` as the loop started).
fn count_of(cond: &CExpr, key: &str, base: &CExpr) -> Option<CExpr> {
    let CExprKind::Binary {
        op: CBinOp::Lt | CBinOp::Ne,
        lhs,
        rhs,
    } = &cond.stripped().kind
    else {
        return None;
    };
    if lhs.ref_key() != Some(key) {
        return None;
    }
    let CExprKind::Binary {
        op: CBinOp::Add,
        lhs: end_base,
        rhs: count,
    } = &rhs.stripped().kind
    else {
        return None;
    };
    let same_base = end_base.ref_key().is_some() && end_base.ref_key() == base.ref_key();
    (same_base && count.ty.is_integer()).then(|| (**count).clone())
}

fn collect_refs(e: &CExpr, out: &mut Vec<String>) {
    if let CExprKind::Ref(r) = &e.kind {
        out.push(r.key.clone());
    }
    for c in e.children() {
        collect_refs(c, out);
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{diagnostics, lowered};

    #[test]
    fn a_pointer_walking_to_the_end_is_a_counted_loop() {
        let body = lowered(
            "void f(float *x, int n, float s) { float *p; for (p = x; p < x + n; p++) *p *= s; }",
        )
        .expect("lowers");
        assert!(body.contains("x[k] ="), "{body}");
    }

    #[test]
    fn a_declared_pointer_and_a_not_equal_test_too() {
        let body = lowered(
            "float f(const float *x, int n) {\n\
             float s = 0;\n\
             for (const float *p = x; p != x + n; ++p) s += *p;\n\
             return s;\n}",
        )
        .expect("lowers");
        assert!(body.contains("x[k]"), "{body}");
    }

    #[test]
    fn a_pointer_read_after_the_loop_is_left_alone() {
        let text = diagnostics(
            "float f(float *x, int n) { float *p; for (p = x; p < x + n; p++) *p = 0; return *p; }",
        );
        assert!(text.contains("TL026"), "{text}");
    }
}
