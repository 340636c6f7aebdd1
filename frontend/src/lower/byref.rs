//! Scalars passed by reference, read as the values they point to.
//!
//! Fortran passes every argument by reference, so BLAS and LAPACK as f2c
//! translates them (CLAPACK, netlib's C BLAS) read each size, increment
//! and coefficient through a pointer:
//!
//! ```c
//! int saxpy_(integer *n, real *sa, real *sx, integer *incx, real *sy, integer *incy)
//! { … if (*n <= 0) return 0; i__1 = *n;
//!     for (i__ = 1; i__ <= i__1; ++i__) sy[i__] += *sa * sx[i__]; … }
//! ```
//!
//! A parameter `T *p` (`T` a scalar type) that the body only reads, and
//! only as `*p`, holds one value the whole call reads: it becomes
//! the scalar parameter `p` of type `T`, its reads the reference `p`, with
//! [`Origin::Pointee`] telling drivers to pass the address of a copy. The
//! rest of the lowering then sees `n` as a size and `sa` as a coefficient,
//! like any value parameter. Exact as long as no store of the kernel
//! reaches `*p`, which Fortran's rules for arguments promise and the
//! program states as a precondition: a written `*p`, an address taken, a
//! pointer moved, compared or passed on, and the parameter stays a pointer.
//!
//! [`Origin::Pointee`]: crate::ir::Origin::Pointee

use std::collections::HashSet;

use super::strip;
use crate::syntax::*;

/// `func` with its read-only scalars by reference read as values, and
/// their declaration keys; `None` when it has none.
pub(super) fn unwrap(func: &CFunction) -> Option<(CFunction, HashSet<String>)> {
    let keys: HashSet<String> = func
        .params
        .iter()
        .filter(|p| pointee_scalar(&p.ty).is_some() && only_read_as_value(&func.body, &p.key))
        .map(|p| p.key.clone())
        .collect();
    if keys.is_empty() {
        return None;
    }
    let mut out = func.clone();
    for p in out.params.iter_mut().filter(|p| keys.contains(&p.key)) {
        if let Some(t) = pointee_scalar(&p.ty) {
            p.ty = CType::Scalar(t);
        }
    }
    out.body = func
        .body
        .iter()
        .map(|s| s.map_exprs(&mut |e| as_value(e, &keys)))
        .collect();
    Some((out, keys))
}

/// `T` of a parameter typed `T *`.
fn pointee_scalar(t: &CType) -> Option<crate::ir::ScalarType> {
    match t {
        CType::Pointer { pointee, .. } => pointee.scalar(),
        _ => None,
    }
}

/// The parameter `e` dereferences (`*p`). `p[0]` is left alone: a
/// subscript says the pointer is an array's, of which the C reads one
/// element (`out[0] = a[0] + t * (b[0] - a[0])`).
fn dereferenced(e: &CExpr) -> Option<&DeclRef> {
    let CExprKind::Unary {
        op: CUnOp::Unsupported("*"),
        arg,
    } = &strip(e).kind
    else {
        return None;
    };
    match &strip(arg).kind {
        CExprKind::Ref(r) if r.target == RefTarget::Param => Some(r),
        _ => None,
    }
}

/// Whether every reference to `key` in `body` is a read of `*key`, never
/// stored to, stepped or its address taken, and there is
/// at least one.
fn only_read_as_value(body: &[CStmt], key: &str) -> bool {
    let mut total = 0usize;
    let mut as_values = 0usize;
    let mut written = false;
    for s in body {
        s.any_expr(&mut |e| {
            total += e.count_refs(key);
            count_value_reads(e, key, &mut as_values, &mut written);
            false
        });
    }
    total > 0 && total == as_values && !written
}

/// Counts the reads of `*key` in `e` (an outermost expression), and notes
/// a store, step or address taken of one.
fn count_value_reads(e: &CExpr, key: &str, reads: &mut usize, written: &mut bool) {
    if dereferenced(e).is_some_and(|r| r.key == key) {
        *reads += 1;
        return;
    }
    let target = match &e.kind {
        CExprKind::Binary {
            op: CBinOp::Assign | CBinOp::CompoundAssign(_),
            lhs,
            ..
        } => Some(&**lhs),
        CExprKind::Unary {
            op:
                CUnOp::PostInc
                | CUnOp::PostDec
                | CUnOp::PreInc
                | CUnOp::PreDec
                | CUnOp::Unsupported("&"),
            arg,
        } => Some(&**arg),
        _ => None,
    };
    if target.and_then(dereferenced).is_some_and(|r| r.key == key) {
        *written = true;
    }
    for c in e.children() {
        count_value_reads(c, key, reads, written);
    }
}

/// `e` with each `*p` of a parameter in `keys` read as `p`.
fn as_value(e: &CExpr, keys: &HashSet<String>) -> CExpr {
    if let Some(r) = dereferenced(e).filter(|r| keys.contains(&r.key)) {
        return CExpr {
            kind: CExprKind::Ref(r.clone()),
            ty: strip(e).ty.clone(),
            loc: e.loc.clone(),
        };
    }
    let mut out = e.clone();
    out.map_children(&mut |c| as_value(c, keys));
    out
}

#[cfg(test)]
mod tests {
    use crate::ir::{Origin, ParamKind};
    use crate::test_util::{extracted, lowered};
    use crate::Options;

    #[test]
    fn sizes_and_coefficients_by_reference_read_as_values() {
        let f2c = "typedef int integer; typedef float real;
            int sscal_(integer *n, real *sa, real *sx) {
                integer i__1, i__; --sx;
                if (*n <= 0) return 0;
                i__1 = *n;
                for (i__ = 1; i__ <= i__1; ++i__) sx[i__] = *sa * sx[i__];
                return 0; }";
        let by_value = "typedef int integer; typedef float real;
            int sscal_(integer n, real sa, real *sx) {
                integer i__1, i__; --sx;
                if (n <= 0) return 0;
                i__1 = n;
                for (i__ = 1; i__ <= i__1; ++i__) sx[i__] = sa * sx[i__];
                return 0; }";
        assert_eq!(lowered(f2c), lowered(by_value));
        let tu = extracted(f2c, &Options::default()).expect("lowers");
        let k = &tu.kernels[0];
        let by_reference: Vec<(&str, bool)> = k
            .params
            .iter()
            .filter(|p| p.origin == Origin::Pointee)
            .map(|p| {
                let ParamKind::Scalar { is_size, .. } = p.kind else {
                    panic!("{} is no scalar", p.name);
                };
                (p.name.as_str(), is_size)
            })
            .collect();
        assert_eq!(by_reference, [("n", true), ("sa", false)]);
    }

    #[test]
    fn a_subscripted_written_walked_or_indexed_pointer_stays_a_pointer() {
        for source in [
            "void lerp(const float *a, const float *b, float t, float *out) {
                 out[0] = a[0] + t * (b[0] - a[0]); }",
            "void sum(int n, const float *x, float *s) {
                 *s = 0.0f; for (int i = 0; i < n; i++) *s += x[i]; }",
            "void first(int n, const float *x, float *y) {
                 for (int i = 0; i < n; i++) y[i] = *x++; }",
            "void scale(int n, const float *a, float *y) {
                 for (int i = 0; i < n; i++) y[i] = a[0] * a[i]; }",
        ] {
            let tu = extracted(source, &Options::default()).expect("lowers");
            let k = &tu.kernels[0];
            assert!(
                k.params.iter().all(|p| p.origin != Origin::Pointee),
                "{source}"
            );
        }
    }
}
