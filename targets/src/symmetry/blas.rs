//! The symmetric BLAS-3 operations of TensIR (`syrk`, `syr2k`,
//! `mirror_lower`), defined by the core operations they abbreviate.
//!
//! Every evaluator (the interpreter, the symbolic spec, both Z3 encodings)
//! evaluates [`definition`] of such a node instead of carrying its own
//! semantics, so the operations mean exactly what TENSIR.md states and
//! nothing can drift between evaluators. Targets are free to compute them
//! faster (NumPy: one BLAS `syrk`/`syr2k` call, half the flops of the
//! product): the results agree in real arithmetic, which is what
//! verification decides, and to round-off in floating point.
//!
//! ```text
//! syrk(a, c, α, β)     = tril(α·(a aᵀ) + β·c) + triu(c, 1)
//! syr2k(a, b, c, α, β) = tril(α·(X + Xᵀ) + β·c) + triu(c, 1),  X = a bᵀ
//! mirror_lower(x)      = tril(x) + tril(x, -1)ᵀ
//! ```
//!
//! `syr2k` reads `b aᵀ` as `(a bᵀ)ᵀ`: element `(i, j)` of both is
//! `Σ_k b[i,k]·a[j,k]`, the same products in the same order, so even f32
//! round-off is that of the two-product form.

use crate::build;
use crate::expr::{Expr, TypeError};
use crate::ops::Op;

/// The core-operation expression a symmetric BLAS node stands for; `None`
/// for every other operation.
pub fn definition(e: &Expr) -> Option<Result<Expr, TypeError>> {
    let a = e.args();
    let t = |x: &Expr| build::transpose(x.clone(), &[1, 0]);
    Some(match e.op() {
        Op::Syrk => t(&a[0])
            .and_then(|at| build::matmul(a[0].clone(), at))
            .and_then(|p| lower_update(p, &a[1], &a[2], &a[3])),
        Op::Syr2k => t(&a[1])
            .and_then(|bt| build::matmul(a[0].clone(), bt))
            .and_then(|x| build::add(x.clone(), t(&x)?))
            .and_then(|p| lower_update(p, &a[2], &a[3], &a[4])),
        Op::MirrorLower => build::tril(a[0].clone(), 0).and_then(|lower| {
            let strict = build::tril(a[0].clone(), -1)?;
            build::add(lower, t(&strict)?)
        }),
        _ => return None,
    })
}

/// `tril(α·p + β·c) + triu(c, 1)`: BLAS's update of a lower triangle, the
/// strict upper triangle of `c` left as it is.
fn lower_update(p: Expr, c: &Expr, alpha: &Expr, beta: &Expr) -> Result<Expr, TypeError> {
    let scaled = build::mul(alpha.clone(), p)?;
    let updated = build::add(scaled, build::mul(beta.clone(), c.clone())?)?;
    build::add(build::tril(updated, 0)?, build::triu(c.clone(), 1)?)
}

/// Whether `op` is one of the symmetric BLAS operations.
pub fn is_symmetric_blas(op: &Op) -> bool {
    matches!(op, Op::Syrk | Op::Syr2k | Op::MirrorLower)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dim::Dim;
    use crate::dtype::DType;
    use crate::syntax::print_expr;

    fn mat(name: &str, rows: &str, cols: &str) -> Expr {
        build::var(name, DType::F64, vec![Dim::sym(rows), Dim::sym(cols)])
    }

    #[test]
    fn definitions_spell_the_blas_updates() -> Result<(), TypeError> {
        let (a, b, c) = (mat("A", "n", "k"), mat("B", "n", "k"), mat("C", "n", "n"));
        let (alpha, beta) = (build::f64_lit(1.5), build::f64_lit(0.5));
        let syrk = Expr::new(
            Op::Syrk,
            vec![a.clone(), c.clone(), alpha.clone(), beta.clone()],
        )?;
        let text = definition(&syrk).map(|d| d.map(|d| print_expr(&d)));
        assert_eq!(
            text,
            Some(Ok("add(tril(add(mul(1.5, matmul(A, transpose(A, perm=[1, 0]))), \
                 mul(0.5, C)), k=0), triu(C, k=1))"
                .to_string()))
        );
        let syr2k = Expr::new(Op::Syr2k, vec![a, b, c.clone(), alpha, beta])?;
        let text = definition(&syr2k).and_then(Result::ok).map(|d| print_expr(&d));
        assert!(text.is_some_and(|t| t.contains(
            "add(matmul(A, transpose(B, perm=[1, 0])), transpose(matmul(A, transpose(B, \
             perm=[1, 0])), perm=[1, 0]))"
        )));
        let mirror = Expr::new(Op::MirrorLower, vec![c])?;
        let text = definition(&mirror).and_then(Result::ok).map(|d| print_expr(&d));
        assert_eq!(
            text.as_deref(),
            Some("add(tril(C, k=0), transpose(tril(C, k=-1), perm=[1, 0]))")
        );
        Ok(())
    }

    #[test]
    fn ill_shaped_updates_are_type_errors() {
        let (a, c) = (mat("A", "n", "k"), mat("C", "k", "k"));
        let one = build::f64_lit(1.0);
        let e = Expr::new(Op::Syrk, vec![a, c, one.clone(), one]).unwrap_err();
        assert!(e.message.contains("f64[n, n]"), "{}", e.message);
        let v = build::var("v", DType::F64, vec![Dim::sym("n")]);
        assert!(Expr::new(Op::MirrorLower, vec![v]).is_err());
    }
}
