//! A power of a monomial: `?h * ?h * … * ?h` for a target whose every
//! element is one monomial with every exponent a multiple of `k`
//! (`A*A*A*A*A`), the hole its `k`-th root.

use tenslift_targets::{BinaryOp, DType, Expr};

use crate::algebra::Tensor;
use crate::synth::search::{Found, Search, SketchFamily, Solved};

/// The `power` family; see the module documentation.
pub struct Power;

impl SketchFamily for Power {
    fn name(&self) -> &'static str {
        "power"
    }

    fn summary(&self) -> &'static str {
        "?h * ... * ?h (k factors) when every element is a monomial whose exponents k divides"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        let Some((root, k)) = monomial_root(target).filter(|_| depth > 0) else {
            return Ok(None);
        };
        let step = target.len() as f64 * f64::from(k - 1);
        search.stats.pattern_match();
        let Some(h) = search.solve(&root, dtype, depth - 1, bound - step)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        let mut expr = h.expr.clone();
        for _ in 1..k {
            match Expr::binary(BinaryOp::Mul, expr, h.expr.clone()) {
                Ok(e) => expr = e,
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(Found {
            expr,
            cost: h.cost + step,
        }))
    }
}

/// For a target whose every element is one monomial with every exponent a
/// multiple of `k` (the largest such `k` ≤ 5, at least 2), its `k`-th root
/// and `k`: `x**4` is `(x)` multiplied four times.
fn monomial_root(target: &Tensor) -> Option<(Tensor, u32)> {
    let mut gcd = 0i32;
    for e in target.elems() {
        let [term] = e.terms() else { return None };
        if !term.coeff.is_one() {
            return None;
        }
        for (_, exp) in term.mono.factors() {
            if *exp <= 0 {
                return None;
            }
            gcd = num_integer::Integer::gcd(&gcd, exp);
        }
    }
    let k = (2..=5).rev().find(|k| gcd % k == 0)?;
    let root = target.map(|e| {
        let term = &e.terms()[0];
        let factors = term
            .mono
            .factors()
            .iter()
            .map(|(a, x)| (a.clone(), x / k))
            .collect();
        crate::algebra::Mono::from_factors(factors).to_expr()
    });
    Some((root, k as u32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::{Symbol, Value};

    fn sym(name: &str) -> Value {
        Value::symbol(&Symbol::scalar(name))
    }

    #[test]
    fn a_fifth_power_has_its_base_as_root() {
        let a = Tensor::of_symbols("A", &[2, 2], false);
        let fifth = a.map(|e| e.pow(5).expect("pow"));
        assert_eq!(monomial_root(&fifth), Some((a.clone(), 5)));
        let square_of_product = a.map(|e| e.mul(e).mul(&sym("x").mul(&sym("x"))));
        let (root, k) = monomial_root(&square_of_product).expect("a square");
        assert_eq!(k, 2);
        assert_eq!(root, a.map(|e| e.mul(&sym("x"))));
        // A sum is no monomial power.
        assert!(monomial_root(&a.map(|e| e.add(&Value::one()))).is_none());
    }
}
