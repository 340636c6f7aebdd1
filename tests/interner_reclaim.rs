//! Interned nodes are freed (with their table entries) when the last
//! expression using them is dropped. Its own test binary, so no other test
//! creates nodes meanwhile.

use tenslift::algebra::atom::live_atom_count;
use tenslift::algebra::expr::live_expr_count;
use tenslift::algebra::{Expr, Symbol};

#[test]
fn dropping_expressions_frees_their_nodes() {
    let (atoms_before, exprs_before) = (live_atom_count(), live_expr_count());
    let held: Vec<Expr> = (0..5_000u32)
        .map(|i| {
            let x = Symbol::element("reclaim", &[i]).to_expr();
            (&x + &Expr::one()) * (&x - &Expr::one())
        })
        .collect();
    assert!(live_atom_count() >= atoms_before + 5_000);
    assert!(live_expr_count() >= exprs_before + 5_000);
    // Building the same values again shares the held nodes.
    let again = Symbol::element("reclaim", &[7]).to_expr().pow(2).unwrap() - Expr::one();
    assert!(again.ptr_eq(&held[7]));
    drop(again);
    drop(held);
    assert!(
        live_atom_count() <= atoms_before + 1,
        "{} atoms left",
        live_atom_count()
    );
    assert!(
        live_expr_count() <= exprs_before + 2,
        "{} expressions left",
        live_expr_count()
    );
}
