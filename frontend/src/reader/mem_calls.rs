//! `memset(p, 0, N * sizeof(T))` and `memcpy(dst, src, N * sizeof(T))`
//! as statements: the loops they are, `for (k = 0; k < N; ++k) p[k] = 0;`
//! and `… dst[k] = src[k];`, over a fresh iterator `k`.
//!
//! Exact when the byte count is `N` elements of the pointer's scalar type:
//! the size is a product of `N` and a `sizeof` (of any operand) whose value
//! is the element's size in bytes; all-zero bytes are `0` (and `+0.0`) in
//! every scalar type; `memcpy` copies between pointers of one element type
//! and its regions may not overlap (C leaves that undefined), so the copy
//! order does not matter. The pointers and `N` must have no side effects
//! (the loop evaluates them once per element); pointers may be offset
//! (`p + off`), which the pointer normalisation reads as `p[off + k]`.
//! Anything else stays a call to an unknown function (TL030).

use clang_sys as sys;

use super::{loc_of, Reader};
use crate::ir::ScalarType;
use crate::libclang::{Cursor, EvaluatedInt};
use crate::syntax::*;

/// Key prefix of the fresh iterators.
const FRESH_KEY: &str = "\u{1}mem:";

/// The cursor under parentheses and implicit conversions.
fn bare<'tu>(c: &Cursor<'tu>) -> Cursor<'tu> {
    let mut cur = *c;
    while matches!(
        cur.kind(),
        sys::CXCursor_ParenExpr | sys::CXCursor_UnexposedExpr
    ) {
        match cur.children().as_slice() {
            [only] => cur = *only,
            _ => break,
        }
    }
    cur
}

/// The value of `sizeof …` (not `_Alignof`, which shares its cursor kind).
fn sizeof_value(c: &Cursor<'_>) -> Option<u64> {
    let c = bare(c);
    if c.kind() != sys::CXCursor_UnaryExpr
        || c.tokens().first().map(String::as_str) != Some("sizeof")
    {
        return None;
    }
    match c.evaluate_int()? {
        EvaluatedInt::Unsigned(v) => Some(v),
        EvaluatedInt::Signed(v) => u64::try_from(v).ok(),
    }
}

/// A pointer argument without its conversion to `void *`, with its
/// element type.
fn element_pointer(arg: &CExpr) -> Option<(CExpr, ScalarType)> {
    let p = arg.stripped();
    let elem = match &p.ty {
        CType::Pointer { pointee, .. } => pointee.scalar()?,
        CType::Array { elem, .. } => elem.scalar()?,
        _ => return None,
    };
    p.is_pure().then(|| (p.clone(), elem))
}

fn bytes(t: ScalarType) -> u64 {
    u64::from(t.bits().max(8) / 8)
}

impl Reader {
    /// The loop a statement-level `memset`/`memcpy` call `c` is, when it
    /// is one of the exact forms; `None` leaves the call as read.
    pub(super) fn read_mem_call(&mut self, c: &Cursor<'_>, depth: usize) -> Option<CStmt> {
        // A declined call is read again as a call: forget this reading.
        let mark = (self.diagnostics.len(), self.inline_expansions);
        let read = self.mem_call_loop(c, depth);
        if read.is_none() {
            self.diagnostics.truncate(mark.0);
            self.inline_expansions = mark.1;
        }
        read
    }

    fn mem_call_loop(&mut self, c: &Cursor<'_>, depth: usize) -> Option<CStmt> {
        let copy = match c.spelling().as_str() {
            "memset" | "__builtin_memset" => false,
            "memcpy" | "__builtin_memcpy" => true,
            _ => return None,
        };
        let children = c.children();
        let [_, dst, value, size] = children.as_slice() else {
            return None;
        };
        let (dst, elem) = element_pointer(&self.read_expr(dst, depth + 1))?;
        let count = self.element_count(size, bytes(elem), depth)?;
        let value = self.read_expr(value, depth + 1);
        // The source pointer of a copy; `None` for a memset to zero.
        let source = if copy {
            let (src, src_elem) = element_pointer(&value)?;
            (src_elem == elem).then_some(Some(src))?
        } else {
            matches!(value.stripped().kind, CExprKind::Int(IntValue::Fits(0))).then_some(None)?
        };
        let loc = loc_of(c);
        let key = format!("{FRESH_KEY}{}:{}:{}", loc.file, loc.line, loc.col);
        Some(CStmt::counted_loop(key, &loc, count, |k| {
            let stored = match &source {
                Some(src) => subscript(src.clone(), k.clone(), elem),
                None => value.clone(),
            };
            CStmt::Compound(
                vec![assign(subscript(dst.clone(), k, elem), stored)],
                loc.clone(),
            )
        }))
    }

    /// `N` of a byte count `N * sizeof(…)` or `sizeof(…) * N` whose
    /// `sizeof` is `elem_bytes`, in `N`'s own integer type.
    fn element_count(&mut self, size: &Cursor<'_>, elem_bytes: u64, depth: usize) -> Option<CExpr> {
        let product = bare(size);
        if product.kind() != sys::CXCursor_BinaryOperator
            || product.binary_operator() != sys::CXBinaryOperator_Mul
        {
            return None;
        }
        let children = product.children();
        let [lhs, rhs] = children.as_slice() else {
            return None;
        };
        let n = match (sizeof_value(lhs), sizeof_value(rhs)) {
            (_, Some(b)) if b == elem_bytes => lhs,
            (Some(b), _) if b == elem_bytes => rhs,
            _ => return None,
        };
        let n = self.read_expr(n, depth + 1);
        // Without the conversion to `size_t`: a negative `N` is undefined
        // in the C (a huge count), and runs no iteration here.
        let n = n.stripped().clone();
        (n.ty.is_integer() && n.is_pure()).then_some(n)
    }
}

fn subscript(base: CExpr, index: CExpr, elem: ScalarType) -> CExpr {
    let loc = base.loc.clone();
    CExpr {
        kind: CExprKind::Subscript {
            base: Box::new(base),
            index: Box::new(index),
        },
        ty: CType::Scalar(elem),
        loc,
    }
}

fn assign(target: CExpr, value: CExpr) -> CStmt {
    CStmt::Expr(CExpr {
        ty: target.ty.clone(),
        loc: target.loc.clone(),
        kind: CExprKind::Binary {
            op: CBinOp::Assign,
            lhs: Box::new(target),
            rhs: Box::new(value),
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn memset_to_zero_and_memcpy_are_element_loops() {
        let body = lowered(
            "#include <string.h>
             void k(float *y, const float *x, double *z, int n, int m) {
               memset(y, 0, n * sizeof(float));
               memset(z + m, 0, sizeof(z[0]) * n);
               memcpy(y + 1, x, sizeof(*y) * (n - 1));
             }",
        )
        .expect("lifts");
        assert_eq!(
            body,
            "for k in 0..n step 1 y[k] = f32(0) \
             for k_1 in 0..n step 1 z[k_1 + m] = f64(0) \
             for k_2 in 0..n - 1 step 1 y[k_2 + 1] = x[k_2]"
        );
    }

    #[test]
    fn other_byte_counts_and_values_stay_unknown_calls() {
        for call in [
            // Not zero.
            "memset(y, 1, n * sizeof(float))",
            // A byte count that is not n elements.
            "memset(y, 0, n * sizeof(double))",
            "memset(y, 0, n)",
            "memset(y, 0, n * _Alignof(float))",
            // Element types differ.
            "memcpy(y, w, n * sizeof(float))",
        ] {
            let source = format!(
                "#include <string.h>
                 void k(float *y, const int *w, int n) {{ {call}; }}"
            );
            assert_eq!(lowered(&source), Err(vec!["TL030"]), "{call}");
        }
        // A pointer that moves is a call's argument still (and escapes).
        let moving = "void k(float *y, int n) { __builtin_memset(y++, 0, n * sizeof(float)); }";
        assert_eq!(lowered(moving), Err(vec!["TL026"]));
    }
}
