//! Unit tests of the normal form (property tests live in tests/algebra_props.rs).
use super::*;

fn s(name: &str) -> Expr {
    Symbol::scalar(name).to_expr()
}

#[test]
fn placeholder_builds() {
    assert_eq!(s("x") + s("y"), s("y") + s("x"));
}
