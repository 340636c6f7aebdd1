//! libm calls both sides share. Most stay uninterpreted (the same symbol
//! on both sides), but `pow` with a small integral constant exponent is
//! exactly repeated multiplication over the reals (`pow(x, 2.0) = x * x`,
//! `pow(x, -1.0) = 1 / x`), so C written with `pow` can be proved equal to
//! a lifted program written with products and quotients.

use z3::ast::Ast;

use super::lifted::math;
use crate::domain::value::{self, real_num, V};

/// The largest exponent magnitude expanded into products; beyond it the
/// product terms grow without helping any kernel of the corpus.
const MAX_EXPANDED_EXPONENT: i64 = 8;

/// `pow(base, exponent)`: a product of `base` for an integral constant
/// exponent in `[-8, 8]` (its reciprocal for a negative one), else the
/// uninterpreted `pow`.
pub(crate) fn pow(base: &V, exponent: &V) -> V {
    match integral_constant(exponent) {
        Some(k) if k.abs() <= MAX_EXPANDED_EXPONENT => {
            let x = V::R(base.as_real());
            let mut product = if k == 0 { V::R(real_num(1)) } else { x.clone() };
            for _ in 1..k.abs() {
                product = value::mul(&product, &x);
            }
            if k < 0 {
                V::R(real_num(1) / product.as_real())
            } else {
                product
            }
        }
        _ => math("pow", &[base.clone(), exponent.clone()]),
    }
}

/// The value of `v` when it is a numeral with an integral value.
fn integral_constant(v: &V) -> Option<i64> {
    match v {
        V::I(i) => i.simplify().as_i64(),
        V::R(r) => match r.simplify().as_rational() {
            Some((num, 1)) => Some(num),
            _ => None,
        },
        V::B(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::{Bool, Real};
    use z3::{SatResult, Solver};

    fn valid(claim: &Bool) -> bool {
        let solver = Solver::new();
        solver.assert(claim.not());
        solver.check() == SatResult::Unsat
    }

    fn x() -> V {
        V::R(Real::new_const("x"))
    }

    fn real(num: i64, den: i64) -> V {
        V::R(
            Real::from_int(&z3::ast::Int::from_i64(num))
                / Real::from_int(&z3::ast::Int::from_i64(den)),
        )
    }

    #[test]
    fn integral_exponents_are_products() {
        let x = x();
        let square = value::mul(&x, &x);
        assert!(valid(&pow(&x, &real(2, 1)).equal(&square)));
        assert!(valid(
            &pow(&x, &real(4, 1)).equal(&value::mul(&square, &square))
        ));
        assert!(valid(&pow(&x, &real(0, 1)).equal(&real(1, 1))));
        assert!(valid(
            &pow(&x, &real(-1, 1)).equal(&V::R(real_num(1) / x.as_real()))
        ));
    }

    #[test]
    fn wrong_exponent_is_not_a_square() {
        let x = x();
        let square = value::mul(&x, &x);
        assert!(!valid(&pow(&x, &real(3, 1)).equal(&square)));
        assert!(!valid(&pow(&x, &real(-1, 1)).equal(&x)));
    }

    #[test]
    fn fractional_exponent_stays_uninterpreted() {
        let x = x();
        // pow(x, 0.5) is only sqrt for x >= 0; nothing is claimed about it.
        assert!(!valid(
            &pow(&x, &real(1, 2)).equal(&math("sqrt", std::slice::from_ref(&x)))
        ));
        assert!(valid(
            &pow(&x, &real(1, 2)).equal(&math("pow", &[x.clone(), real(1, 2)]))
        ));
    }
}
