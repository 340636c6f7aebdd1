//! The opt-in domain identities of `algebra::domain` (`--assume-in-domain`).
//! The switch is process-wide, so these tests run in their own binary and
//! every test here turns it on: none expects it off.

use tenslift::algebra::domain::set_assume_in_domain;
use tenslift::algebra::{Expr, Symbol};

fn sym(name: &str) -> Expr {
    set_assume_in_domain(true);
    Symbol::element(name, &[0]).to_expr()
}

#[test]
fn exp_of_a_logarithm_is_its_argument() {
    let (a, b) = (sym("A"), sym("B"));
    let sum = &a + &b;
    assert_eq!(sum.log().exp(), sum);
    // log_exp_2: exp(log A - log B) = A / B.
    let quotient = a.div(&b).expect("B is a symbol");
    assert_eq!((&a.log() - &b.log()).exp(), quotient);
    // Integer multiples are powers; the rest stays under exp.
    let mixed = (&(&a.log() * &Expr::int(2)) + &b).exp();
    assert_eq!(mixed, &(&a * &a) * &b.exp());
    assert_eq!(a.exp().log(), a);
}

#[test]
fn square_roots_take_their_smallest_exponents() {
    let (a, b) = (sym("A"), sym("B"));
    let s = a.sqrt();
    // synth_5: sqrt(A)^4 = A^2; synth_6: (sqrt A + sqrt A)^2 = 4 A.
    assert_eq!(s.pow(4).expect("power"), &a * &a);
    assert_eq!((&s + &s).pow(2).expect("power"), &a * &Expr::int(4));
    // synth_3: (A + B) / sqrt(A + B) = sqrt(A + B).
    let t = &a + &b;
    assert_eq!(t.div(&t.sqrt()).expect("non-zero"), t.sqrt());
    assert_eq!(a.div(&s).expect("non-zero"), s);
    // 1 / sqrt(A)^2 = 1 / A; a root that does not divide stays.
    assert_eq!(
        Expr::one().div(&(&s * &s)).expect("non-zero"),
        Expr::one().div(&a).expect("non-zero")
    );
    let kept = b.div(&s).expect("non-zero");
    assert_ne!(kept, &b * &s);
    assert_eq!(&kept * &s, b);
}
