//! Constant folding of found programs: an element-wise operation on float
//! literals (`add(2.0, 2.0)`, which the search builds when a constant is
//! not a library leaf) becomes one literal, computed exactly over the
//! rationals. A result with no exact decimal literal of its type (`1/3`)
//! stays unfolded, so the program keeps denoting exactly the same value.

use tenslift_targets::{BinaryOp, DType, Expr, Lit, Op, UnaryOp};

use super::stencil::exact_literal;
use crate::algebra::Rat;
use crate::spec::tensir::float_literal_value;

/// The exact value of a float literal, read as the TensIR semantics read it.
fn literal_value(lit: Lit) -> Option<(Rat, DType)> {
    let Lit::Float(bits, dtype) = lit else {
        return None;
    };
    Some((float_literal_value(f64::from_bits(bits), dtype)?, dtype))
}

/// The literal `expr` evaluates to, when it is an operation on literals
/// whose exact result has one.
fn fold_node(expr: &Expr) -> Option<Expr> {
    let value = |e: &Expr| match e.op() {
        Op::Lit(lit) => literal_value(*lit),
        _ => None,
    };
    let (result, dtype) = match (expr.op(), expr.args()) {
        (Op::Unary(UnaryOp::Neg), [a]) => {
            let (a, dtype) = value(a)?;
            (-&a, dtype)
        }
        (Op::Binary(op), [a, b]) => {
            let ((a, dtype), (b, other)) = (value(a)?, value(b)?);
            if dtype != other {
                return None;
            }
            let result = match op {
                BinaryOp::Add => &a + &b,
                BinaryOp::Sub => &a - &b,
                BinaryOp::Mul => &a * &b,
                BinaryOp::Div => a.checked_div(&b)?,
                _ => return None,
            };
            (result, dtype)
        }
        _ => return None,
    };
    exact_literal(&result, dtype)
}

/// `expr` with every constant sub-expression folded, bottom up.
pub fn fold_constants(expr: &Expr) -> Expr {
    let args: Vec<Expr> = expr.args().iter().map(fold_constants).collect();
    let rebuilt = if args.as_slice() == expr.args() {
        expr.clone()
    } else {
        Expr::new(expr.op().clone(), args).unwrap_or_else(|_| expr.clone())
    };
    fold_node(&rebuilt).unwrap_or(rebuilt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_targets::{build, print_expr, Dim};

    fn a() -> Expr {
        build::var("A", DType::F64, vec![Dim::sym("n")])
    }

    #[test]
    fn a_sum_of_literals_becomes_one_literal() {
        let two = build::f64_lit(2.0);
        let four = build::add(two.clone(), two).expect("add");
        let e = build::mul(a(), four).expect("mul");
        assert_eq!(print_expr(&fold_constants(&e)), "mul(A, 4.0)");
    }

    #[test]
    fn decimal_fractions_fold_exactly() {
        // 0.1 + 0.2 is exactly 0.3 over the rationals (not 0.30000000000000004).
        let sum = build::add(build::f64_lit(0.1), build::f64_lit(0.2)).expect("add");
        assert_eq!(print_expr(&fold_constants(&sum)), "0.3");
    }

    #[test]
    fn a_quotient_without_an_exact_literal_stays_a_quotient() {
        let third = build::div(build::f64_lit(1.0), build::f64_lit(3.0)).expect("div");
        assert_eq!(fold_constants(&third), third);
        let e = build::mul(a(), third.clone()).expect("mul");
        assert_eq!(fold_constants(&e), e);
    }
}
