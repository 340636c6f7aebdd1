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
//! Applied only where exact: the loop counts up by one from 0 (or down by
//! one to 1 with a body that does not read the counter), each factor
//! is an integer parameter or a field of one (a size the kernel does not
//! write), and the iterator is declared by the loop or in the block that
//! holds it, with nothing after the loop reading the value it leaves (a
//! later loop may set it again). A negative size would make C run the
//! product's count of trips and the nest none; sizes are extents, not
//! negative.

use crate::induction::{
    counted_for, iterator_start, paren, replace_reads, steps_by_one, steps_down_by_one, CountedFor,
};
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
    let mut factors = Vec::new();
    product_factors(count, &mut factors);
    if factors.len() < 2 || factors.len() > MAX_FACTORS || !factors.iter().all(is_size) {
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
    let mut flat = fresh[0].clone();
    for (k, f) in factors.iter().enumerate().skip(1) {
        let scaled = binary(CBinOp::Mul, paren(flat), paren((*f).clone()), &iter);
        flat = binary(CBinOp::Add, scaled, fresh[k].clone(), &iter);
    }
    let flat = paren(flat);
    let mut nest = body.map_exprs(&mut |e| replace_reads(e, &key, &flat));
    for (k, f) in factors.iter().enumerate().rev() {
        nest = counted(&fresh[k], (*f).clone(), nest, loc);
    }
    Some(nest)
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
    let mut x = e.stripped();
    while let CExprKind::Cast(inner) = &x.kind {
        x = inner.stripped();
    }
    x.ty.is_integer()
        && matches!(x.kind, CExprKind::Ref(_) | CExprKind::Member { .. })
        && base_is_param(x)
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
    fn a_product_local_set_twice_keeps_the_refusal() {
        let source = "void f(float *y, const float *x, int r, int c) {
            int n = r * c; int i;
            for (i = 0; i < n; i++) y[i] = 2 * x[i];
            n = 3;
        }";
        assert!(lowered(source).is_err());
    }
}
