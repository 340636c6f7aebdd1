//! Cost-lowering identities applied to a solved expression (STENSO's
//! "recognised rewrite rules", Section VII-D): the library enumerates only
//! two levels, so a cheaper equivalent that is one level deeper (the row
//! sums of an element-wise product instead of the diagonal of a matrix
//! product) is reached by rewriting the solution. Every rule is an exact
//! identity, and the rewritten program still passes the acceptance check
//! at two size tuples; a rewrite is kept only when the cost model prices it
//! lower.

use tenslift_targets::{build, BinaryOp, Expr, Op};

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

/// How much larger than the traced sizes (3 to 8) programs are compared
/// when the order of a product chain is chosen: at the traced sizes
/// `x @ (A.T @ A)` (n·m·n products) and `(x @ A.T) @ A` (2·n·m) cost
/// about the same, at a dataset's sizes the first is hundreds of times
/// slower (PolyBench atax and gemver were lifted that way).
const ASYMPTOTIC_SCALE: i64 = 256;

/// `sizes` with every size scaled by [`ASYMPTOTIC_SCALE`].
fn asymptotic(sizes: &Sizes) -> Sizes {
    sizes
        .iter()
        .map(|(name, &v)| (name.clone(), v.saturating_mul(ASYMPTOTIC_SCALE)))
        .collect()
}

/// `c * m` (either order) with `c` a scalar: `(c, m)`.
fn scalar_factor(expr: &Expr) -> Option<(Expr, Expr)> {
    let Op::Binary(BinaryOp::Mul) = expr.op() else {
        return None;
    };
    let [a, b] = expr.args() else { return None };
    match (a.shape().is_empty(), b.shape().is_empty()) {
        (true, false) => Some((a.clone(), b.clone())),
        (false, true) => Some((b.clone(), a.clone())),
        _ => None,
    }
}

/// The cheapest way to compute `x @ y` at `sizes`: scalar factors of
/// either operand are applied to the product instead (a scalar times the
/// smaller result), and a product operand is re-associated,
/// `x @ (y1 @ y2)` against `(x @ y1) @ y2` and `(x1 @ x2) @ y` against
/// `x1 @ (x2 @ y)`. Every step is an exact identity of the algebra.
fn cheapest_product(x: &Expr, y: &Expr, model: &CostModel, sizes: &Sizes) -> Option<Expr> {
    if let Some((c, m)) = scalar_factor(x) {
        return build::mul(c, cheapest_product(&m, y, model, sizes)?).ok();
    }
    if let Some((c, m)) = scalar_factor(y) {
        return build::mul(c, cheapest_product(x, &m, model, sizes)?).ok();
    }
    let mut candidates = vec![build::matmul(x.clone(), y.clone()).ok()?];
    if let (Op::Matmul, [y1, y2]) = (y.op(), y.args()) {
        let left =
            build::matmul(x.clone(), y1.clone()).and_then(|xy| build::matmul(xy, y2.clone()));
        candidates.extend(left.ok());
    }
    if let (Op::Matmul, [x1, x2]) = (x.op(), x.args()) {
        let right =
            build::matmul(x2.clone(), y.clone()).and_then(|xy| build::matmul(x1.clone(), xy));
        candidates.extend(right.ok());
    }
    candidates
        .into_iter()
        .map(|c| (model.cost_of(&[&c], sizes), c))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// A product in a cheaper order ([`cheapest_product`]), if one exists.
fn reassociated(expr: &Expr, model: &CostModel, sizes: &Sizes) -> Option<Expr> {
    let (Op::Matmul, [x, y]) = (expr.op(), expr.args()) else {
        return None;
    };
    cheapest_product(x, y, model, sizes).filter(|better| better != expr)
}

/// `expr` with every rule applied bottom up (`sizes` prices the choices).
fn rewrite_all(expr: &Expr, model: &CostModel, sizes: &Sizes) -> Expr {
    let args: Vec<Expr> = expr
        .args()
        .iter()
        .map(|a| rewrite_all(a, model, sizes))
        .collect();
    let rebuilt = if args.as_slice() == expr.args() {
        expr.clone()
    } else {
        Expr::new(expr.op().clone(), args).unwrap_or_else(|_| expr.clone())
    };
    let rebuilt = reassociated(&rebuilt, model, sizes).unwrap_or(rebuilt);
    diag_of_product(&rebuilt).unwrap_or(rebuilt)
}

/// The cheaper of `expr` and its rewrite under `model`, compared at sizes
/// far larger than the traced `sizes` ([`ASYMPTOTIC_SCALE`]), with the cost
/// saved at the traced sizes (zero when nothing changed; negative when the
/// program that is cheaper at scale costs more at the traced sizes).
pub fn cheapest(expr: &Expr, model: &CostModel, sizes: &Sizes) -> (Expr, f64) {
    let at_scale = asymptotic(sizes);
    let rewritten = rewrite_all(expr, model, &at_scale);
    if &rewritten == expr {
        return (expr.clone(), 0.0);
    }
    let before = model.cost_of(&[expr], &at_scale);
    let after = model.cost_of(&[&rewritten], &at_scale);
    if after < before {
        let saved = model.cost_of(&[expr], sizes) - model.cost_of(&[&rewritten], sizes);
        (rewritten, saved)
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

    fn sizes(pairs: &[(&str, i64)]) -> Sizes {
        pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
    }

    #[test]
    fn a_vector_times_a_gram_matrix_is_two_matrix_vector_products() {
        // PolyBench atax: y = x @ (A.T @ A), n·m·n products, is
        // (x @ A.T) @ A, 2·n·m, even at the traced sizes where both cost
        // about the same.
        let (m, n) = (Dim::sym("m"), Dim::sym("n"));
        let a = build::var("A", DType::F64, vec![m.clone(), n.clone()]);
        let x = build::var("x", DType::F64, vec![n]);
        let gram = build::matmul(build::transpose(a.clone(), &[1, 0]).unwrap(), a).unwrap();
        let y = build::matmul(x, gram).unwrap();
        let (better, _) = cheapest(&y, &CostModel::Analytic, &sizes(&[("m", 4), ("n", 5)]));
        assert_eq!(
            print_expr(&better),
            "matmul(matmul(x, transpose(A, perm=[1, 0])), A)"
        );
    }

    #[test]
    fn a_scalar_factor_moves_out_of_a_product_chain() {
        // PolyBench gemver: y @ ((alpha*beta) * (A @ A.T)).
        let n = Dim::sym("n");
        let a = build::var("A", DType::F64, vec![n.clone(), n.clone()]);
        let y = build::var("y", DType::F64, vec![n]);
        let alpha = build::var("alpha", DType::F64, vec![]);
        let beta = build::var("beta", DType::F64, vec![]);
        let outer = build::matmul(a.clone(), build::transpose(a, &[1, 0]).unwrap()).unwrap();
        let scaled = build::mul(build::mul(alpha, beta).unwrap(), outer).unwrap();
        let w = build::matmul(y, scaled).unwrap();
        let (better, _) = cheapest(&w, &CostModel::Analytic, &sizes(&[("n", 4)]));
        assert_eq!(
            print_expr(&better),
            "mul(mul(alpha, beta), matmul(matmul(y, A), transpose(A, perm=[1, 0])))"
        );
    }

    #[test]
    fn a_product_already_in_its_cheapest_order_is_kept() {
        let (m, n) = (Dim::sym("m"), Dim::sym("n"));
        let a = build::var("A", DType::F64, vec![m.clone(), n.clone()]);
        let x = build::var("x", DType::F64, vec![n]);
        let ax = build::matmul(a.clone(), x).unwrap();
        let y = build::matmul(build::transpose(a, &[1, 0]).unwrap(), ax).unwrap();
        let (same, saved) = cheapest(&y, &CostModel::Analytic, &sizes(&[("m", 4), ("n", 5)]));
        assert_eq!(same, y);
        assert_eq!(saved, 0.0);
    }
}
