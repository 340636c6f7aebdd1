//! A loop over a product of sizes, `for (i = 0; i < l.batch*l.outputs; ++i)`
//! (darknet's layers walk their whole output so; also `(long)n * m`): the
//! bound is not affine, but the loop is the nest over the factors with
//! `i = i_0*E_1 + i_1` (for two factors; row-major in general), which runs
//! the same iterations in the same order for non-negative sizes. The nest
//! replaces it, and the flat subscripts delinearize as any `b*n + j` does.
//!
//! DSP code counts the same walk down, with the product in a local:
//! `n = A->numRows * A->numCols; blkCnt = n; while (blkCnt > 0U) { *pOut++ =
//! …; blkCnt--; }`. A count-down loop whose body never reads its counter
//! only runs its count of trips, so it is the same nest (the pointer walks
//! in the body then count the nest's trips); the local is read through its
//! one assignment in the block.
//!
//! The iterator divided by a factor (`j / stride`, `i % c`: darknet's
//! upsampling walks `j < h*stride` and reads `in[…(j/stride)*w…]`; a flat
//! bias add reads `b[i % c]`) is that factor's outer index and its own
//! index: with the divisor taken as the innermost factor, `i / E_k` is the
//! nest over the other factors and `i % E_k` is `i_k`, exact because `0 <=
//! i_k < E_k`. A literal factor (`i < 2*n` with `i / 2`) counts then too.
//!
//! Applied only where exact: the loop counts up by one from 0 (or down by
//! one to 1 with a body that does not read the counter), each factor
//! is an integer parameter or a field of one (a size the kernel does not
//! write), and the iterator is declared by the loop or in the block that
//! holds it, with nothing after the loop reading the value it leaves (a
//! later loop may set it again), or, anywhere in the function, an iterator
//! only (every reference inside a `for` that sets it first, so no loop's
//! final value is read: [`split_iterator_loops`]). The body must not write
//! the iterator. A negative size would make C run the product's count of
//! trips and the nest none; sizes are extents, not negative.

use crate::induction::{
    counted_for, iterator_start, paren, replace_reads, steps_by_one, steps_down_by_one, CountedFor,
};
use std::collections::HashSet;

use crate::syntax::{
    CBinOp, CExpr, CExprKind, CStmt, CUnOp, CVarDecl, DeclRef, IntValue, RefTarget,
};

/// Most factors a flat bound is split into.
const MAX_FACTORS: usize = 4;

/// `stmts` (one block) with each loop over a product of sizes written as
/// the nest over its factors, where that is exact.
pub(crate) fn split_product_bounds(mut stmts: Vec<CStmt>) -> Vec<CStmt> {
    for at in 0..stmts.len() {
        let Some(iter) = loop_iterator(&stmts[at]) else {
            continue;
        };
        let declared_here = matches!(&stmts[at], CStmt::For { init, .. } if matches!(**init, CStmt::Decl(..)))
            || declares(&stmts[..at], &iter);
        if !declared_here || read_after(&stmts[at + 1..], &iter) {
            continue;
        }
        if let Some(nest) = nest_of(&stmts[at], &stmts) {
            stmts[at] = nest;
        }
    }
    stmts
}

/// The function body `body` with each loop over a product of sizes whose
/// iterator is an iterator only (see [`pure_iterators`]) written as the nest
/// over its factors, at any depth: the per-block pass
/// ([`split_product_bounds`]) needs the iterator declared beside its loop,
/// and C89 code declares `int i, j, k, b;` once at the top.
pub(crate) fn split_iterator_loops(body: CStmt) -> CStmt {
    let pure = pure_iterators(&body);
    if pure.is_empty() {
        return body;
    }
    split_inside(body, &pure)
}

/// `s` as the nest over its bound's factors, when it is a loop over a pure
/// iterator (held by `block`, whose locals may give its bound) and splits.
fn split_loop(s: &CStmt, block: &[CStmt], pure: &HashSet<String>) -> Option<CStmt> {
    loop_iterator(s)
        .filter(|iter| pure.contains(iter))
        .and_then(|_| nest_of(s, block))
}

/// `s` split if it is such a loop, then the loops inside it, outer loops
/// first (a split rewrites the reads of inner loops' bounds).
fn split_at(s: CStmt, block: &[CStmt], pure: &HashSet<String>) -> CStmt {
    let s = split_loop(&s, block, pure).unwrap_or(s);
    split_inside(s, pure)
}

/// The loops nested in `s` split, `s` itself left as it is.
fn split_inside(s: CStmt, pure: &HashSet<String>) -> CStmt {
    match s {
        CStmt::Compound(mut stmts, loc) => {
            for at in 0..stmts.len() {
                let split = split_loop(&stmts[at], &stmts, pure);
                let s = split
                    .unwrap_or_else(|| std::mem::replace(&mut stmts[at], CStmt::Null(loc.clone())));
                stmts[at] = split_inside(s, pure);
            }
            CStmt::Compound(stmts, loc)
        }
        CStmt::For {
            init,
            cond,
            inc,
            body,
            loc,
        } => CStmt::For {
            init,
            cond,
            inc,
            body: Box::new(split_at(*body, &[], pure)),
            loc,
        },
        CStmt::If {
            cond,
            then_branch,
            else_branch,
            loc,
        } => CStmt::If {
            cond,
            then_branch: Box::new(split_at(*then_branch, &[], pure)),
            else_branch: else_branch.map(|e| Box::new(split_at(*e, &[], pure))),
            loc,
        },
        other => other,
    }
}

/// The locals of `body` used as loop iterators only: some `for` sets each
/// first (`i = 0`, not from itself), and every reference to it lies in
/// such a loop, so the value a loop leaves is never read.
fn pure_iterators(body: &CStmt) -> HashSet<String> {
    let mut iterators = HashSet::new();
    collect_iterators(body, &mut iterators);
    iterators.retain(|key| !referred_outside_loops(body, key));
    iterators
}

fn collect_iterators(s: &CStmt, out: &mut HashSet<String>) {
    match s {
        CStmt::For { init, body, .. } => {
            if let Some((it, start)) = iterator_start(init) {
                if let Some(key) = it.ref_key().filter(|k| !start.refers_to(k)) {
                    out.insert(key.to_string());
                }
            }
            collect_iterators(body, out);
        }
        CStmt::Compound(stmts, _) => stmts.iter().for_each(|x| collect_iterators(x, out)),
        CStmt::If {
            then_branch,
            else_branch,
            ..
        } => {
            collect_iterators(then_branch, out);
            if let Some(e) = else_branch {
                collect_iterators(e, out);
            }
        }
        _ => {}
    }
}

/// Whether `s` refers to `key` outside every `for` that sets it first.
fn referred_outside_loops(s: &CStmt, key: &str) -> bool {
    match s {
        CStmt::For {
            init,
            cond,
            inc,
            body,
            ..
        } => {
            let sets_first = iterator_start(init)
                .is_some_and(|(it, start)| it.ref_key() == Some(key) && !start.refers_to(key));
            !sets_first
                && (referred_outside_loops(init, key)
                    || cond.refers_to(key)
                    || inc.refers_to(key)
                    || referred_outside_loops(body, key))
        }
        CStmt::Compound(stmts, _) => stmts.iter().any(|x| referred_outside_loops(x, key)),
        CStmt::If {
            cond,
            then_branch,
            else_branch,
            ..
        } => {
            cond.refers_to(key)
                || referred_outside_loops(then_branch, key)
                || else_branch
                    .as_ref()
                    .is_some_and(|e| referred_outside_loops(e, key))
        }
        other => other.refers_to(key),
    }
}

/// The value of the local `key` where `block` sets it exactly once, by an
/// initialiser or a plain assignment, and writes it nowhere else.
fn set_once<'b>(block: &'b [CStmt], key: &str) -> Option<&'b CExpr> {
    let mut value = None;
    for s in block {
        let set = match s {
            CStmt::Decl(vars, _) => vars
                .iter()
                .find(|v| v.key == key)
                .and_then(|v| v.init.as_ref()),
            CStmt::Expr(e) => match &e.stripped().kind {
                CExprKind::Binary {
                    op: CBinOp::Assign,
                    lhs,
                    rhs,
                } if lhs.ref_key() == Some(key) => Some(&**rhs),
                _ => None,
            },
            _ => None,
        };
        match set {
            Some(v) if value.is_none() && !v.refers_to(key) => value = Some(v),
            Some(_) => return None,
            None if s.any_expr(&mut |e| e.writes(key)) => return None,
            None => {}
        }
    }
    value
}

/// The trip count of a loop that only counts: `for (i = 0; i < E; i++)`,
/// or `for (c = E; c > 0; c--)` (also `c != 0`, `c >= 1`) whose body does
/// not read `c`.
fn trip_count<'s>(f: &CountedFor<'s>, key: &str) -> Option<&'s CExpr> {
    let CExprKind::Binary { op, lhs, rhs } = &f.cond.stripped().kind else {
        return None;
    };
    if lhs.ref_key() != Some(key) {
        return None;
    }
    let int = |e: &CExpr, v: i64| matches!(e.stripped().kind, CExprKind::Int(IntValue::Fits(x)) if x == v);
    if *op == CBinOp::Lt && int(&f.start, 0) && steps_by_one(f.inc, key) {
        return Some(&**rhs);
    }
    let to_one =
        matches!(op, CBinOp::Gt | CBinOp::Ne) && int(rhs, 0) || *op == CBinOp::Ge && int(rhs, 1);
    (to_one && steps_down_by_one(f.inc, key) && !f.body.refers_to(key)).then_some(match f.init {
        CStmt::Expr(e) => match &e.stripped().kind {
            CExprKind::Binary { rhs, .. } => &**rhs,
            _ => return None,
        },
        CStmt::Decl(vars, _) => vars.first()?.init.as_ref()?,
        _ => return None,
    })
}

/// The iterator a `for` statement sets in its header.
fn loop_iterator(s: &CStmt) -> Option<String> {
    let CStmt::For { init, .. } = s else {
        return None;
    };
    Some(iterator_start(init)?.0.ref_key()?.to_string())
}

fn declares(stmts: &[CStmt], key: &str) -> bool {
    stmts
        .iter()
        .any(|s| matches!(s, CStmt::Decl(vars, _) if vars.iter().any(|v| v.key == key)))
}

/// Whether a statement after the loop reads `key` before setting it again
/// (a later `for (i = 0; …)` sets it first).
fn read_after(rest: &[CStmt], key: &str) -> bool {
    for s in rest {
        if let CStmt::For { init, .. } = s {
            let sets_first = iterator_start(init)
                .is_some_and(|(it, start)| it.ref_key() == Some(key) && !start.refers_to(key));
            if sets_first {
                return false;
            }
        }
        if s.refers_to(key) {
            return true;
        }
    }
    false
}

/// The nest standing for `for (i = 0; i < E_0*…*E_k; i++) body` (or the
/// count-down loop of [`trip_count`]) in `block`, which holds it.
fn nest_of(stmt: &CStmt, block: &[CStmt]) -> Option<CStmt> {
    let header = counted_for(stmt)?;
    let key = header.iter.ref_key()?.to_string();
    let mut count = trip_count(&header, &key)?;
    let CountedFor {
        iter, body, loc, ..
    } = header;
    if let CExprKind::Ref(r) = &count.stripped().kind {
        if r.target == RefTarget::Local {
            count = set_once(block, &r.key)?;
        }
    }
    if body.any_expr(&mut |e| e.writes(&key)) {
        return None;
    }
    let mut factors = Vec::new();
    product_factors(count, &mut factors);
    // The factor the body divides the iterator by goes innermost.
    let divisor = factors.iter().position(|f| divides_iterator(body, &key, f));
    if let Some(at) = divisor {
        let f = factors.remove(at);
        factors.push(f);
    }
    let literal_divisor = |k: usize, f: &&CExpr| {
        divisor.is_some() && k + 1 == factors.len() && f.int_constant().is_some_and(|v| v > 0)
    };
    let sizes = factors
        .iter()
        .enumerate()
        .all(|(k, f)| is_size(f) || literal_divisor(k, f));
    if factors.len() < 2 || factors.len() > MAX_FACTORS || !sizes {
        return None;
    }
    let name = match &iter.stripped().kind {
        CExprKind::Ref(r) => r.name.clone(),
        _ => return None,
    };
    let fresh: Vec<CExpr> = (0..factors.len())
        .map(|k| {
            let r = DeclRef {
                name: format!("{name}_{k}"),
                key: format!("{key}\u{1}flat{k}"),
                target: RefTarget::Local,
            };
            CExpr {
                kind: CExprKind::Ref(r),
                ty: iter.ty.clone(),
                loc: loc.clone(),
            }
        })
        .collect();
    // i = ((i_0*E_1 + i_1)*E_2 + i_2)…, row-major over the factors.
    let flat = paren(outer_index(&fresh, &factors, &iter));
    let last = factors.len() - 1;
    let outer = paren(outer_index(&fresh[..last], &factors[..last], &iter));
    let body =
        body.map_exprs(&mut |e| replace_divisions(e, &key, factors[last], &outer, &fresh[last]));
    let mut nest = body.map_exprs(&mut |e| replace_reads(e, &key, &flat));
    for (k, f) in factors.iter().enumerate().rev() {
        nest = counted(&fresh[k], (*f).clone(), nest, loc);
    }
    Some(nest)
}

/// `i_0*E_1 + … + i_k` over the given indices and factors, row-major (the
/// first factor's extent is not needed).
fn outer_index(fresh: &[CExpr], factors: &[&CExpr], like: &CExpr) -> CExpr {
    let mut flat = fresh[0].clone();
    for (k, f) in factors.iter().enumerate().skip(1) {
        let scaled = binary(CBinOp::Mul, paren(flat), paren((*f).clone()), like);
        flat = binary(CBinOp::Add, scaled, fresh[k].clone(), like);
    }
    flat
}

/// `iter / d` or `iter % d` with `d` the same size or literal as `factor`,
/// in integer arithmetic (`i / (float)c` divides the converted value).
fn division_of(e: &CExpr, key: &str, factor: &CExpr) -> Option<CBinOp> {
    let e = e.stripped();
    match &e.kind {
        CExprKind::Binary {
            op: op @ (CBinOp::Div | CBinOp::Rem),
            lhs,
            rhs,
        } if e.ty.is_integer()
            && lhs.ref_key() == Some(key)
            && lhs.stripped().ty.is_integer()
            && same_size(rhs, factor) =>
        {
            Some(*op)
        }
        _ => None,
    }
}

/// Whether `body` divides the iterator `key` by `factor` (or takes it
/// modulo `factor`) anywhere.
fn divides_iterator(body: &CStmt, key: &str, factor: &CExpr) -> bool {
    fn within(e: &CExpr, key: &str, factor: &CExpr) -> bool {
        division_of(e, key, factor).is_some()
            || e.children().into_iter().any(|c| within(c, key, factor))
    }
    body.any_expr(&mut |e| within(e, key, factor))
}

/// `e` with `key / factor` replaced by `outer` and `key % factor` by `inner`.
fn replace_divisions(e: &CExpr, key: &str, factor: &CExpr, outer: &CExpr, inner: &CExpr) -> CExpr {
    match division_of(e, key, factor) {
        Some(CBinOp::Div) => return outer.clone(),
        Some(_) => return inner.clone(),
        None => {}
    }
    let mut out = e.clone();
    out.map_children(&mut |c| replace_divisions(c, key, factor, outer, inner));
    out
}

/// Whether two size expressions name the same value: the same variable,
/// field path or literal (locations and conversions aside).
fn same_size(a: &CExpr, b: &CExpr) -> bool {
    let (a, b) = (uncast(a), uncast(b));
    match (&a.kind, &b.kind) {
        (CExprKind::Ref(x), CExprKind::Ref(y)) => x.key == y.key,
        (
            CExprKind::Member {
                base: p, field: f, ..
            },
            CExprKind::Member {
                base: q, field: g, ..
            },
        ) => f == g && same_size(p, q),
        _ => a.int_constant().is_some() && a.int_constant() == b.int_constant(),
    }
}

/// The factors of a product (`a*b*c` → `[a, b, c]`), through parentheses,
/// implicit conversions and casts.
fn product_factors<'e>(e: &'e CExpr, out: &mut Vec<&'e CExpr>) {
    let inner = match &e.kind {
        CExprKind::Cast(x) => x,
        _ => e,
    };
    match &inner.stripped().kind {
        CExprKind::Binary {
            op: CBinOp::Mul,
            lhs,
            rhs,
        } => {
            product_factors(lhs, out);
            product_factors(rhs, out);
        }
        CExprKind::Cast(x) => product_factors(x, out),
        _ => out.push(e),
    }
}

/// An integer parameter, or a field of one (`l.outputs`, `l->batch`).
fn is_size(e: &&CExpr) -> bool {
    fn base_is_param(e: &CExpr) -> bool {
        match &e.stripped().kind {
            CExprKind::Ref(r) => r.target == RefTarget::Param,
            CExprKind::Member { base, .. } => base_is_param(base),
            CExprKind::Cast(x) => base_is_param(x),
            _ => false,
        }
    }
    let x = uncast(e);
    x.ty.is_integer()
        && matches!(x.kind, CExprKind::Ref(_) | CExprKind::Member { .. })
        && base_is_param(x)
}

/// `e` without parentheses, implicit conversions and casts.
fn uncast(e: &CExpr) -> &CExpr {
    let mut x = e.stripped();
    while let CExprKind::Cast(inner) = &x.kind {
        x = inner.stripped();
    }
    x
}

fn binary(op: CBinOp, lhs: CExpr, rhs: CExpr, like: &CExpr) -> CExpr {
    CExpr {
        kind: CExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        ty: like.ty.clone(),
        loc: like.loc.clone(),
    }
}

/// `for (T it = 0; it < bound; it++) body`.
fn counted(it: &CExpr, bound: CExpr, body: CStmt, loc: &crate::ir::Loc) -> CStmt {
    let CExprKind::Ref(r) = &it.kind else {
        return body;
    };
    let zero = CExpr {
        kind: CExprKind::Int(IntValue::Fits(0)),
        ty: it.ty.clone(),
        loc: loc.clone(),
    };
    let init = CStmt::Decl(
        vec![CVarDecl {
            name: r.name.clone(),
            key: r.key.clone(),
            ty: it.ty.clone(),
            dims: Vec::new(),
            init: Some(zero),
            is_static: false,
            loc: loc.clone(),
        }],
        loc.clone(),
    );
    let step = CExpr {
        kind: CExprKind::Unary {
            op: CUnOp::PostInc,
            arg: Box::new(it.clone()),
        },
        ty: it.ty.clone(),
        loc: loc.clone(),
    };
    CStmt::For {
        init: Box::new(init),
        cond: binary(CBinOp::Lt, it.clone(), bound, it),
        inc: step,
        body: Box::new(body),
        loc: loc.clone(),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn a_loop_over_a_product_of_sizes_is_the_nest_over_its_factors() {
        let source = "void f(float *c, const float *a, int n, int m) {
            for (long i = 0; i < (long)n * m; i++) c[i] = 2 * a[i];
        }";
        let body = lowered(source).expect("lowers");
        assert!(
            body.starts_with("for i_0 in 0..n step 1 for i_1 in 0..m step 1"),
            "{body}"
        );
    }

    #[test]
    fn struct_fields_and_an_iterator_declared_in_the_block_split_too() {
        let source = "typedef struct { int batch, outputs; float *output; } layer;
        void f(layer l) { int i; for (i = 0; i < l.batch * l.outputs; ++i) l.output[i] = 0; }";
        assert!(lowered(source).is_ok());
    }

    #[test]
    fn an_iterator_read_after_the_loop_keeps_the_refusal() {
        let source = "int f(float *c, int n, int m) {
            int i;
            for (i = 0; i < n * m; i++) c[i] = 0;
            return i;
        }";
        assert!(lowered(source).is_err());
    }

    #[test]
    fn a_count_down_walk_over_a_local_product_is_the_nest() {
        let source = "typedef struct { unsigned short numRows, numCols; float *pData; } mat;
        void f(const mat *a, mat *d) {
            float *pIn = a->pData; float *pOut = d->pData;
            unsigned int numSamples, blkCnt;
            numSamples = (unsigned int) a->numRows * a->numCols;
            blkCnt = numSamples;
            while (blkCnt > 0U) { *pOut++ = 2 * (*pIn++); blkCnt--; }
        }";
        let body = lowered(source).expect("lowers");
        assert!(body.starts_with("for blkCnt_0 in 0..a_numRows"), "{body}");
    }

    #[test]
    fn a_count_down_loop_whose_body_reads_its_counter_keeps_the_refusal() {
        let source = "void f(float *y, const float *x, int r, int c) {
            int n = r * c; int k;
            for (k = n; k > 0; k--) y[k - 1] = x[n - k];
        }";
        assert!(lowered(source).is_err());
    }

    #[test]
    fn an_iterator_divided_by_a_factor_is_that_factors_outer_index() {
        let source = "void f(float *y, const float *x, const float *b, int n, int c) {
            for (int i = 0; i < n * c; i++) y[i] = x[i] * b[i / c] + b[i % c];
        }";
        let body = lowered(source).expect("lowers");
        assert!(
            body.starts_with("for i_0 in 0..n step 1 for i_1 in 0..c step 1"),
            "{body}"
        );
        assert!(body.contains("b[i_0]") && body.contains("b[i_1]"), "{body}");
    }

    #[test]
    fn the_divisor_goes_innermost_and_may_be_a_literal() {
        let source = "void f(float *y, const float *x, int n) {
            for (int i = 0; i < 2 * n; i++) y[i] = x[i / 2];
        }";
        let body = lowered(source).expect("lowers");
        assert!(
            body.starts_with("for i_0 in 0..n step 1 for i_1 in 0..2 step 1"),
            "{body}"
        );
    }

    #[test]
    fn a_float_division_of_the_iterator_is_left_alone() {
        // `i / (float)c` divides the converted value: not the row index.
        let source = "void f(float *y, int n, int c) {
            for (int i = 0; i < n * c; i++) y[i] = i / (float)c;
        }";
        let body = lowered(source).expect("lowers");
        assert!(
            body.contains("((i_0 * c):i32 + i_1):i32) / f32(c)"),
            "{body}"
        );
    }

    #[test]
    fn iterators_declared_at_the_top_split_at_any_depth() {
        // darknet's upsample_cpu walks the output at `stride` times the
        // input's resolution and reads the input at `j / stride`.
        let source = "void f(float *in, int w, int h, int c, int s, float *out) {
            int i, j, k;
            for (k = 0; k < c; ++k)
                for (j = 0; j < h * s; ++j) {
                    for (i = 0; i < w * s; ++i) {
                        int in_index = k*w*h + (j/s)*w + i/s;
                        out[k*w*h*s*s + j*w*s + i] = in[in_index];
                    }
                }
        }";
        let body = lowered(source).expect("lowers");
        assert!(
            body.contains("for j_0 in 0..h step 1 for j_1 in 0..s step 1"),
            "{body}"
        );
        assert!(
            body.contains("for i_0 in 0..w step 1 for i_1 in 0..s step 1"),
            "{body}"
        );
    }

    #[test]
    fn an_iterator_read_outside_its_loops_is_not_split_below_the_top() {
        let source = "int f(float *y, int n, int m, int r) {
            int i, k;
            for (k = 0; k < r; k++)
                for (i = 0; i < n * m; i++) y[i] = 1;
            return i;
        }";
        assert!(lowered(source).is_err());
    }

    #[test]
    fn a_body_that_writes_the_iterator_is_not_split() {
        let source = "void f(float *y, int n, int m) {
            for (int i = 0; i < n * m; i++) { y[i] = 1; i += 0; }
        }";
        assert!(lowered(source).is_err());
    }

    #[test]
    fn a_product_local_set_twice_keeps_the_refusal() {
        let source = "void f(float *y, const float *x, int r, int c) {
            int n = r * c; int i;
            for (i = 0; i < n; i++) y[i] = 2 * x[i];
            n = 3;
        }";
        assert!(lowered(source).is_err());
    }
}
