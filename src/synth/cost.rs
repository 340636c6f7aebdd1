//! The analytic cost model (STENSO's, simplified): every operation costs
//! the arithmetic it performs plus the bytes it reads and writes, with
//! shapes evaluated at the spec's sizes. Shared subexpressions are counted
//! once, as the emitters compute them once.

use std::collections::HashSet;

use tenslift_targets::{Expr, Op};

use crate::spec::Sizes;

/// Elements of a value of `expr`'s type at `sizes` (unknown dims count 1).
fn elements(expr: &Expr, sizes: &Sizes) -> f64 {
    expr.shape()
        .iter()
        .map(|d| d.eval(&|n| sizes.get(n).copied()).unwrap_or(1).max(1) as f64)
        .product()
}

/// The cost of one node, not counting its operands.
fn node_cost(expr: &Expr, sizes: &Sizes) -> f64 {
    let out = elements(expr, sizes);
    let bytes = expr.dtype().byte_size() as f64;
    let inputs: f64 = expr.args().iter().map(|a| elements(a, sizes)).sum();
    let flops = match expr.op() {
        Op::Var(_) | Op::Lit(_) => return 0.0,
        // A view costs nothing until it is read.
        Op::Slice(_) | Op::Transpose(_) | Op::Broadcast(_) => return 0.0,
        // Each output element of a contraction is a dot product over the
        // contracted extent: inputs' product over the output.
        Op::Matmul | Op::Tensordot { .. } | Op::Einsum(_) => {
            let product: f64 = expr.args().iter().map(|a| elements(a, sizes)).product();
            2.0 * (product / out).sqrt().max(1.0) * out
        }
        Op::Reduce { .. } => inputs,
        _ => out,
    };
    flops + bytes * (inputs + out) / 4.0
}

/// The cost of evaluating `exprs` once, sharing repeated subtrees.
pub fn cost_of(exprs: &[&Expr], sizes: &Sizes) -> f64 {
    let mut seen = HashSet::new();
    let mut total = 0.0;
    for e in exprs {
        e.walk(&mut |node| {
            if seen.insert(node.clone()) {
                total += node_cost(node, sizes);
            }
        });
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_targets::{build, DType, Dim};

    #[test]
    fn a_matrix_product_costs_more_than_an_addition_of_the_same_inputs() {
        let n = Dim::sym("n");
        let a = build::var("A", DType::F64, vec![n.clone(), n.clone()]);
        let b = build::var("B", DType::F64, vec![n.clone(), n]);
        let sizes: Sizes = [("n".to_string(), 8)].into_iter().collect();
        let product = build::matmul(a.clone(), b.clone()).unwrap();
        let sum = build::add(a, b).unwrap();
        assert!(cost_of(&[&product], &sizes) > cost_of(&[&sum], &sizes));
    }

    #[test]
    fn a_shared_subexpression_is_counted_once() {
        let n = Dim::sym("n");
        let a = build::var("A", DType::F64, vec![n]);
        let e = build::exp(a).unwrap();
        let sizes: Sizes = [("n".to_string(), 8)].into_iter().collect();
        assert!(cost_of(&[&e], &sizes) > 0.0);
        assert_eq!(cost_of(&[&e, &e], &sizes), cost_of(&[&e], &sizes));
    }
}
