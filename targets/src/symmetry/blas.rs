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
//! syrk(a, c, α, β)     = tril(c·β + α·(a aᵀ)) + triu(c, 1)
//! syr2k(a, b, c, α, β) = tril(c·β + α·(X + Xᵀ)) + triu(c, 1),  X = a bᵀ
//! mirror_lower(x)      = tril(x) + tril(x, -1)ᵀ
//! ```
//!
//! `syr2k` reads `b aᵀ` as `(a bᵀ)ᵀ`: element `(i, j)` of both is
//! `Σ_k b[i,k]·a[j,k]`, the same products in the same order, so even f32
//! round-off is that of the two-product form.

use std::collections::HashMap;

use crate::build;
use crate::dim::Dim;
use crate::expr::{Expr, TypeError};
use crate::ops::Op;
use crate::program::{try_map_values, Program};

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

/// `tril(c·β + α·p) + triu(c, 1)`: BLAS's update of a lower triangle, the
/// strict upper triangle of `c` left as it is. The terms are in the order
/// C code scales and then accumulates (`C[i][j] *= beta; C[i][j] += …`),
/// which is the order the unbounded prover's invariants follow best.
pub fn lower_update(p: Expr, c: &Expr, alpha: &Expr, beta: &Expr) -> Result<Expr, TypeError> {
    let scaled = build::mul(alpha.clone(), p)?;
    let updated = build::add(build::mul(c.clone(), beta.clone())?, scaled)?;
    build::add(build::tril(updated, 0)?, build::triu(c.clone(), 1)?)
}

/// Products at least this many rows high are split in halves by
/// [`lower_gram_blocks`].
pub const BLOCK_ROWS: i64 = 512;

/// `tril(a aᵀ)` for an `a` of `rows` rows (a constant: the emitter knows
/// the sizes) by 2 x 2 blocks: the two diagonal blocks recursively, the
/// lower off-diagonal block `a₂ a₁ᵀ` by one product, the upper one zero.
/// Each level saves a quarter of the remaining flops (5/8 of the product
/// at two levels); XLA runs the smaller products at full speed.
pub fn lower_gram_blocks(a: &Expr, rows: i64) -> Result<Expr, TypeError> {
    let t = |x: &Expr| build::transpose(x.clone(), &[1, 0]);
    if rows < BLOCK_ROWS {
        return build::tril(build::matmul(a.clone(), t(a)?)?, 0);
    }
    let h = rows / 2;
    let a1 = build::slice(a.clone(), vec![build::range(0, h, 1)])?;
    let a2 = build::slice(a.clone(), vec![build::range(h, rows, 1)])?;
    let top = lower_gram_blocks(&a1, h)?;
    let bottom = lower_gram_blocks(&a2, rows - h)?;
    let off = build::matmul(a2, t(&a1)?)?;
    let zero = crate::dtype::Lit::float(0.0, a.dtype());
    let upper = build::full(vec![Dim::constant(h), Dim::constant(rows - h)], zero)?;
    build::concat(
        vec![
            build::concat(vec![top, upper], 1)?,
            build::concat(vec![off, bottom], 1)?,
        ],
        0,
    )
}

/// `e` with every symmetric BLAS node replaced by its definition, for
/// analyses that read a program's structure rather than evaluate it (the
/// unbounded prover matches the C loops to the reductions it sees). One
/// identity is applied on the way: `mirror_lower(syrk(a, 0, α, 0))` is
/// `α·a aᵀ` (the product is symmetric, so mirroring its lower triangle
/// gives it back; the bounded check evaluates the definition itself).
pub fn expand(e: &Expr) -> Result<Expr, TypeError> {
    fn go(e: &Expr, memo: &mut HashMap<Expr, Expr>) -> Result<Expr, TypeError> {
        if let Some(r) = memo.get(e) {
            return Ok(r.clone());
        }
        let args = e
            .args()
            .iter()
            .map(|a| go(a, memo))
            .collect::<Result<Vec<_>, _>>()?;
        let rebuilt = if args == e.args() {
            e.clone()
        } else {
            Expr::new(e.op().clone(), args)?
        };
        let r = match (mirrored_gram(e)?, definition(&rebuilt)) {
            (Some(whole), _) => go(&whole, memo)?,
            (None, Some(d)) => d?,
            (None, None) => rebuilt,
        };
        memo.insert(e.clone(), r.clone());
        Ok(r)
    }
    go(e, &mut HashMap::new())
}

/// `α·a aᵀ` for `mirror_lower(syrk(a, 0, α, 0))`.
fn mirrored_gram(e: &Expr) -> Result<Option<Expr>, TypeError> {
    let (Op::MirrorLower, [inner]) = (e.op(), e.args()) else {
        return Ok(None);
    };
    let (Op::Syrk, [a, c, alpha, beta]) = (inner.op(), inner.args()) else {
        return Ok(None);
    };
    if !starts_from_zero(c, beta) {
        return Ok(None);
    }
    let product = build::matmul(a.clone(), build::transpose(a.clone(), &[1, 0])?)?;
    Ok(Some(build::mul(alpha.clone(), product)?))
}

/// Whether an update's `c` is the constant zero and its `beta` the literal
/// 0: the update is then `α·(product)` below the diagonal, zero above.
pub fn starts_from_zero(c: &Expr, beta: &Expr) -> bool {
    let zero = |l: &crate::dtype::Lit| l.dtype().is_float() && l.as_f64() == 0.0;
    matches!(c.op(), Op::Full { value, .. } if zero(value))
        && matches!(beta.op(), Op::Lit(l) if zero(l))
}

/// [`expand`] over every statement of a program.
pub fn expand_program(program: &Program) -> Result<Program, TypeError> {
    Ok(Program {
        body: try_map_values(&program.body, &mut |_, v| expand(v))?,
        ..program.clone()
    })
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
            Some(Ok(
                "add(tril(add(mul(C, 0.5), mul(1.5, matmul(A, transpose(A, \
                 perm=[1, 0])))), k=0), triu(C, k=1))"
                    .to_string()
            ))
        );
        let syr2k = Expr::new(Op::Syr2k, vec![a, b, c.clone(), alpha, beta])?;
        let text = definition(&syr2k)
            .and_then(Result::ok)
            .map(|d| print_expr(&d));
        assert!(text.is_some_and(|t| t.contains(
            "add(matmul(A, transpose(B, perm=[1, 0])), transpose(matmul(A, transpose(B, \
             perm=[1, 0])), perm=[1, 0]))"
        )));
        let mirror = Expr::new(Op::MirrorLower, vec![c])?;
        let text = definition(&mirror)
            .and_then(Result::ok)
            .map(|d| print_expr(&d));
        assert_eq!(
            text.as_deref(),
            Some("add(tril(C, k=0), transpose(tril(C, k=-1), perm=[1, 0]))")
        );
        Ok(())
    }

    /// The prover's expansion: definitions inline, and a mirrored Gram
    /// matrix read as the product, equal to the definition on values.
    #[test]
    fn expansion_reads_a_mirrored_gram_matrix_as_the_product() -> Result<(), TypeError> {
        let (a, n) = (mat("A", "n", "k"), Dim::sym("n"));
        let zero = crate::dtype::Lit::float(0.0, DType::F64);
        let zeros = build::full(vec![n.clone(), n], zero)?;
        let alpha = build::f64_lit(0.5);
        let syrk = Expr::new(Op::Syrk, vec![a, zeros, alpha, build::f64_lit(0.0)])?;
        let mirrored = Expr::new(Op::MirrorLower, vec![syrk])?;
        let expanded = expand(&mirrored)?;
        assert_eq!(
            print_expr(&expanded),
            "mul(0.5, matmul(A, transpose(A, perm=[1, 0])))"
        );
        let values: Vec<f64> = (0..12).map(|i| (i * 7 % 5) as f64 - 1.5).collect();
        let env = crate::interp::Env {
            sizes: [("n".to_string(), 4), ("k".to_string(), 3)].into(),
            values: [(
                "A".to_string(),
                crate::interp::Array::from_f64(DType::F64, vec![4, 3], values),
            )]
            .into(),
        };
        let (x, y) = (
            crate::interp::eval(&mirrored, &env),
            crate::interp::eval(&expanded, &env),
        );
        assert_eq!(x.ok(), y.ok());
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
