//! Cost-lowering identities applied to a solved expression (STENSO's
//! "recognised rewrite rules", Section VII-D): the library enumerates only
//! two levels, so a cheaper equivalent that is one level deeper (the row
//! sums of an element-wise product instead of the diagonal of a matrix
//! product) is reached by rewriting the solution. Every rule is an exact
//! identity, and the rewritten program still passes the acceptance check
//! at two size tuples; a rewrite is kept only when the cost model prices it
//! lower.

use tenslift_targets::{build, Expr, Op};

use super::cost::CostModel;
use crate::spec::Sizes;

/// `diag(X @ Y)` with `X: [a, b]`, `Y: [b, a]` is `sum(X * Y.T, axis=1)`:
/// a·b products instead of a·b·a.
fn diag_of_product(expr: &Expr) -> Option<Expr> {
    let Op::Diag = expr.op() else { return None };
    let product = expr.args().first()?;
    let Op::Matmul = product.op() else {
        return None;
    };
    let [x, y] = product.args() else { return None };
    if x.shape().len() != 2 || y.shape().len() != 2 {
        return None;
    }
    let y_t = build::transpose(y.clone(), &[1, 0]).ok()?;
    build::sum(build::mul(x.clone(), y_t).ok()?, &[1]).ok()
}

/// `expr` with every rule applied bottom up.
fn rewrite_all(expr: &Expr) -> Expr {
    let args: Vec<Expr> = expr.args().iter().map(rewrite_all).collect();
    let rebuilt = if args.as_slice() == expr.args() {
        expr.clone()
    } else {
        Expr::new(expr.op().clone(), args).unwrap_or_else(|_| expr.clone())
    };
    diag_of_product(&rebuilt).unwrap_or(rebuilt)
}

/// The cheaper of `expr` and its rewrite under `model` at `sizes`, with the
/// cost saved (zero when nothing changed).
pub fn cheapest(expr: &Expr, model: &CostModel, sizes: &Sizes) -> (Expr, f64) {
    let rewritten = rewrite_all(expr);
    if &rewritten == expr {
        return (expr.clone(), 0.0);
    }
    let before = model.cost_of(&[expr], sizes);
    let after = model.cost_of(&[&rewritten], sizes);
    if after < before {
        (rewritten, before - after)
    } else {
        (expr.clone(), 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_targets::{print_expr, DType, Dim};

    #[test]
    fn the_diagonal_of_a_product_becomes_row_sums_of_an_elementwise_product() {
        let (n, k) = (Dim::sym("n"), Dim::sym("k"));
        let a = build::var("A", DType::F64, vec![n.clone(), k.clone()]);
        let b = build::var("B", DType::F64, vec![k, n]);
        let diag = build::diag(build::matmul(a, b).unwrap()).unwrap();
        let total = build::sum(diag, &[0]).unwrap();
        let sizes: Sizes = [("n".to_string(), 50), ("k".to_string(), 40)]
            .into_iter()
            .collect();
        let (better, saved) = cheapest(&total, &CostModel::Analytic, &sizes);
        assert!(saved > 0.0);
        let text = print_expr(&better);
        assert!(!text.contains("matmul") && !text.contains("diag"), "{text}");
        assert_eq!(better.shape(), total.shape());
    }
}
