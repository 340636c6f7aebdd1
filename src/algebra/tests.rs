//! Unit tests of the normal form (property tests live in tests/algebra_props.rs).
use std::collections::HashMap;

use super::*;

fn s(name: &str) -> Expr {
    Symbol::scalar(name).to_expr()
}

fn el(name: &str, index: &[u32]) -> Expr {
    Symbol::element(name, index).to_expr()
}

fn q(n: i64, d: i64) -> Expr {
    Expr::constant(Rat::new(n, d).unwrap())
}

#[test]
fn products_expand_and_terms_merge_in_one_canonical_order() {
    let (x, y) = (s("x"), s("y"));
    let lhs = (&x + &y) * (&x + &y);
    let rhs = &x * &x + Expr::int(2) * &x * &y + &y * &y;
    assert_eq!(lhs, rhs);
    assert_eq!(lhs.to_string(), "x^2 + 2*x*y + y^2");
    assert_eq!((&x - &x), Expr::zero());
    assert_eq!((&x * &y).to_string(), (&y * &x).to_string());
    assert_eq!(el("A", &[0, 1]).to_string(), "A[0,1]");
    assert_eq!(Symbol::hole("X", &[2]).to_string(), "?X[2]");
}

#[test]
fn division_by_atoms_gives_laurent_monomials_that_cancel() {
    let (x, y, n) = (s("x"), s("y"), s("n"));
    let quotient = (&x * &y).div(&y).unwrap();
    assert_eq!(quotient, x);
    let ratio = x.div(&n).unwrap();
    assert_eq!(ratio.to_string(), "x/n");
    assert_eq!(ratio.mul(&n), x);
    assert_eq!(
        (&x + &y).div(&Expr::int(2)).unwrap().to_string(),
        "x/2 + y/2"
    );
    assert_eq!(x.div(&Expr::zero()), Err(AlgebraError::DivisionByZero));
    assert_eq!(n.pow(-2).unwrap().mul(&n.pow(3).unwrap()), n);
}

#[test]
fn division_by_polynomials_is_exact_when_possible_else_a_reciprocal_atom() {
    let (x, y) = (s("x"), s("y"));
    let diff_squares = &x * &x - &y * &y;
    assert_eq!(diff_squares.div(&(&x - &y)).unwrap(), &x + &y);
    assert_eq!(diff_squares.divide_exact(&(&x + &y)), Some(&x - &y));
    assert_eq!((&x + &Expr::one()).divide_exact(&(&x - &y)), None);

    let one_plus_x = &x + &Expr::one();
    let frac = x.div(&one_plus_x).unwrap();
    assert_eq!(frac.to_string(), "x/(x + 1)");
    // q·(1/q) cancels, and associates of q give the same reciprocal atom.
    assert_eq!(frac.mul(&one_plus_x), x);
    let scaled = (&x * &Expr::int(2))
        .div(&(&x * &Expr::int(2) + Expr::int(2)))
        .unwrap();
    assert_eq!(scaled, frac);
    let sum = frac.add(&Expr::one().div(&one_plus_x).unwrap());
    assert_eq!(sum, Expr::one());
    // Dividing a sum by x·(x+1) keeps x as a Laurent factor of the atom.
    let mixed = y.div(&(&x * &one_plus_x)).unwrap();
    assert_eq!(mixed.mul(&x).mul(&one_plus_x), y);
}

#[test]
fn divide_polynomial_refuses_new_negative_exponents() {
    let (x, y) = (s("x"), s("y"));
    assert_eq!((&x * &y).divide_polynomial(&y), Some(x.clone()));
    assert_eq!(x.divide_polynomial(&y), None);
    assert_eq!(x.divide_exact(&y), Some(x.div(&y).unwrap()));
}

#[test]
fn applications_fold_only_exact_constants() {
    assert_eq!(q(9, 4).sqrt(), q(3, 2));
    assert_eq!(Expr::int(2).sqrt().to_string(), "sqrt(2)");
    assert_eq!(Expr::zero().exp(), Expr::one());
    assert_eq!(Expr::one().log(), Expr::zero());
    assert_eq!(Expr::int(-3).abs(), Expr::int(3));
    let x = s("x");
    assert_eq!(x.scale(&Rat::int(-2)).abs(), x.abs().scale(&Rat::int(2)));
    assert_eq!(x.pow_real(&Expr::int(3)), x.pow(3).unwrap());
    // A half-integer power is a power of the square root.
    assert_eq!(x.pow_real(&q(1, 2)), x.sqrt());
    assert_eq!(x.pow_real(&q(3, 2)), x.sqrt().pow(3).unwrap());
    assert_eq!(x.pow_real(&q(1, 3)).to_string(), "pow(x, 1/3)");
}

#[test]
fn max_and_min_flatten_sort_deduplicate_and_fold_constants() {
    let (a, b) = (s("a"), s("b"));
    let nested = Expr::max_of(&[
        a.clone(),
        Expr::max_of(&[b.clone(), Expr::int(1)]),
        Expr::int(3),
        a.clone(),
    ]);
    let flat = Expr::max_of(&[Expr::int(3), b.clone(), a.clone()]);
    assert_eq!(nested, flat);
    assert_eq!(flat.to_string(), "max(3, a, b)");
    assert_eq!(Expr::min_of(&[Expr::int(4), Expr::int(-2)]), Expr::int(-2));
    assert_eq!(Expr::min_of(&[a.clone(), a.clone()]), a);
    assert_ne!(Expr::max_of(&[a.clone(), b.clone()]), Expr::min_of(&[a, b]));
}

#[test]
fn comparisons_and_selects_have_one_form_each() {
    let (a, b, x, y) = (s("a"), s("b"), s("x"), s("y"));
    assert_eq!(Expr::gt(&a, &b), Expr::lt(&b, &a));
    assert_eq!(Expr::lt(&Expr::int(1), &Expr::int(2)), Expr::one());
    // 2a < 2b is a < b.
    assert_eq!(
        Expr::lt(&a.scale(&Rat::int(2)), &b.scale(&Rat::int(2))),
        Expr::lt(&a, &b)
    );
    assert_eq!(Expr::equals(&a, &b), Expr::equals(&b, &a));
    // a >= b ? x : y  ==  a < b ? y : x
    assert_eq!(
        Expr::select(&Expr::ge(&a, &b), &x, &y),
        Expr::select(&Expr::lt(&a, &b), &y, &x)
    );
    // a == b ? x : y  tests a - b with swapped branches.
    assert_eq!(
        Expr::select(&Expr::equals(&a, &b), &x, &y),
        Expr::select(&(&a - &b), &y, &x)
    );
    assert_eq!(Expr::select(&a, &x, &x), x);
    assert_eq!(Expr::select(&Expr::int(0), &x, &y), y);
    assert_eq!(Expr::select(&q(1, 2), &x, &y), x);
    assert_eq!(Expr::logical_not(&Expr::lt(&a, &b)), Expr::le(&b, &a));
}

#[test]
fn a_guard_whose_failure_changes_nothing_is_no_select() {
    let (a, b, x, y) = (s("a"), s("b"), s("x"), s("y"));
    // if (x != 0) y += x*a: at x = 0 the update is y itself.
    assert_eq!(Expr::select(&x, &(&y + &(&x * &a)), &y), &y + &(&x * &a));
    // beta == 0 ? 0 : beta*y, and beta != 1 ? beta*y : y.
    assert_eq!(
        Expr::select(&Expr::equals(&b, &Expr::zero()), &Expr::zero(), &(&b * &y)),
        &b * &y
    );
    let b_minus_1 = &b - &Expr::one();
    assert_eq!(Expr::select(&b_minus_1, &(&b * &y), &y), &b * &y);
    // 2x - 4 != 0: the root is x = 2.
    let shifted = &x.scale(&Rat::int(2)) - &Expr::int(4);
    let two_more = &y + &(&x - &Expr::int(2));
    assert_eq!(Expr::select(&shifted, &two_more, &y), two_more);
    // Where the branches differ at the root, or the then-branch is not
    // defined there, the select stays.
    let kept = Expr::select(&x, &(&y + &a), &y);
    assert!(kept.to_string().starts_with("select("), "{kept}");
    let undefined = Expr::select(&x, &Expr::one().div(&x).expect("1/x"), &Expr::zero());
    assert!(undefined.to_string().starts_with("select("), "{undefined}");
    // A condition over two symbols is not solved for one of them.
    let two = Expr::select(&(&x - &a), &(&y + &(&x - &a)), &y);
    assert!(two.to_string().starts_with("select("), "{two}");
}

#[test]
fn c_integer_operations_fold_with_c_semantics_and_stay_distinct_from_real_division() {
    let (seven, two) = (Expr::int(-7), Expr::int(2));
    assert_eq!(Expr::trunc_div(&seven, &two), Expr::int(-3));
    assert_eq!(Expr::rem(&seven, &two), Expr::int(-1));
    assert_eq!(seven.div(&two).unwrap(), q(-7, 2));
    assert_eq!(q(-7, 2).trunc(), Expr::int(-3));
    assert_eq!(Expr::int(300).wrap(8, false), Expr::int(44));
    let x = s("x");
    assert_eq!(x.wrap(8, false).wrap(8, false), x.wrap(8, false));
    assert_ne!(Expr::trunc_div(&x, &two), x.div(&two).unwrap());
    assert_eq!(Expr::trunc_div(&x, &Expr::one()), x);
}

#[test]
fn rounding_folds_constants_as_c_does_and_keeps_integers() {
    let f = |func, e: &Expr| Expr::integral(e, func);
    // C's round: halves away from zero (2.5 -> 3, -2.5 -> -3), not to even.
    assert_eq!(f(Func::Round, &q(5, 2)), Expr::int(3));
    assert_eq!(f(Func::Round, &q(-5, 2)), Expr::int(-3));
    assert_eq!(f(Func::Round, &q(7, 20)), Expr::int(0));
    assert_eq!(f(Func::Floor, &q(-1, 4)), Expr::int(-1));
    assert_eq!(f(Func::Ceil, &q(-1, 4)), Expr::int(0));
    assert_eq!(f(Func::Ceil, &q(9, 4)), Expr::int(3));
    // A value that already is an integer is its own rounding.
    let t = s("x").trunc();
    assert_eq!(f(Func::Floor, &t), t);
    assert_eq!(
        f(Func::Round, &f(Func::Ceil, &s("x"))),
        f(Func::Ceil, &s("x"))
    );
    // Otherwise three distinct atoms.
    let x = s("x");
    assert_ne!(f(Func::Round, &x), f(Func::Floor, &x));
    assert_ne!(f(Func::Floor, &x), f(Func::Ceil, &x));
    assert_eq!(Expr::zero().sin(), Expr::zero());
    assert_eq!(Expr::zero().cos(), Expr::one());
}

#[test]
fn symbols_vars_and_holes_are_collected_through_applications() {
    let (a, h) = (el("A", &[0, 0]), Symbol::hole("v", &[]).to_expr());
    let e = (&a * &h).sqrt() + s("alpha");
    assert_eq!(e.var_count(), 2);
    assert_eq!(e.holes(), vec![Symbol::hole("v", &[])]);
    assert!(e.contains_symbol(&Symbol::element("A", &[0, 0])));
}

#[test]
fn coefficient_extraction_separates_monomials_in_the_chosen_symbols() {
    let (a, b, c) = (s("a"), s("b"), s("c"));
    let x = Symbol::scalar("x");
    let xe = x.to_expr();
    let e = Expr::int(2) * &a * &xe + Expr::int(3) * &b * &xe * &xe + &c;
    let coeffs = e.coefficients(std::slice::from_ref(&x)).unwrap();
    let printed: Vec<String> = coeffs
        .iter()
        .map(|(m, c)| format!("{}: {c}", m.to_expr()))
        .collect();
    assert_eq!(printed, vec!["1: c", "x: 2*a", "x^2: 3*b"]);
    assert_eq!(e.coefficient_of(&x, 2).unwrap(), Expr::int(3) * &b);
    assert!(matches!(
        xe.sqrt().coefficients(&[x]),
        Err(AlgebraError::NotPolynomial { .. })
    ));
}

#[test]
fn substitution_renormalises_and_folds() {
    let x = Symbol::scalar("x");
    let y = s("y");
    let e = x.to_expr().pow(2).unwrap();
    assert_eq!(
        e.substitute_one(&x, &(&y + &Expr::one())).unwrap(),
        &y * &y + Expr::int(2) * &y + Expr::one()
    );
    assert_eq!(
        x.to_expr()
            .sqrt()
            .substitute_one(&x, &Expr::int(4))
            .unwrap(),
        Expr::int(2)
    );
    let recip = Expr::one().div(&(x.to_expr() + Expr::one())).unwrap();
    assert_eq!(
        recip.substitute_one(&x, &Expr::zero()).unwrap(),
        Expr::one()
    );
    assert_eq!(
        recip.substitute_one(&x, &Expr::int(-1)),
        Err(AlgebraError::DivisionByZero)
    );
    let unrelated = s("z");
    assert!(unrelated.substitute_one(&x, &y).unwrap().ptr_eq(&unrelated));
}

#[test]
fn solving_holes_matches_the_paper_example_and_linear_systems() {
    // 2A + 2B = 2v  ⇒  v = A + B
    let (a, b) = (el("A", &[0]), el("B", &[0]));
    let v = Symbol::hole("v", &[]);
    let spec = Expr::int(2) * &a + Expr::int(2) * &b;
    let sketch = Expr::int(2) * v.to_expr();
    assert_eq!(solve_hole(&spec, &sketch, &v).unwrap(), &a + &b);
    // div(X, C): spec / C
    let c = s("C");
    let spec2 = (&a * &a).div(&c).unwrap();
    assert_eq!(
        solve_hole(&spec2, &v.to_expr().div(&c).unwrap(), &v).unwrap(),
        &a * &a
    );
    // x + y = 3, x - y = 1
    let (x, y) = (Symbol::hole("x", &[]), Symbol::hole("y", &[]));
    let eqs = [
        x.to_expr() + y.to_expr() - Expr::int(3),
        x.to_expr() - y.to_expr() - Expr::int(1),
    ];
    assert_eq!(
        solve_linear(&eqs, &[x.clone(), y.clone()]).unwrap(),
        vec![Expr::int(2), Expr::int(1)]
    );
    // symbolic coefficients: a·x = b  ⇒  x = b/a
    let (sa, sb) = (s("a"), s("b"));
    let sol = solve_linear(&[&sa * &x.to_expr() - &sb], std::slice::from_ref(&x)).unwrap();
    assert_eq!(sol[0], sb.div(&sa).unwrap());
    assert_eq!(
        solve_linear(&[x.to_expr() + y.to_expr()], &[x.clone(), y.clone()]),
        Err(SolveError::Underdetermined(vec!["?y".into()]))
    );
    assert_eq!(
        solve_linear(
            &[x.to_expr(), x.to_expr() - Expr::one()],
            std::slice::from_ref(&x)
        ),
        Err(SolveError::Inconsistent)
    );
    assert!(matches!(
        solve_linear(&[x.to_expr() * x.to_expr()], std::slice::from_ref(&x)),
        Err(SolveError::NonLinear(_))
    ));
}

#[test]
fn identities_are_solved_by_matching_coefficients() {
    // (p·t + r) = 3t + 5 for all t  ⇒  p = 3, r = 5
    let t = Symbol::scalar("t");
    let (p, r) = (Symbol::hole("p", &[]), Symbol::hole("r", &[]));
    let eq = p.to_expr() * t.to_expr() + r.to_expr() - (Expr::int(3) * t.to_expr() + Expr::int(5));
    assert_eq!(
        solve_identity(&eq, &[p, r], &[t]).unwrap(),
        vec![Expr::int(3), Expr::int(5)]
    );
}

#[test]
fn density_and_simp_score_follow_the_tensorize_example() {
    let a = |i, j| el("A", &[i, j]);
    let b = |i, j| el("B", &[i, j]);
    let spec = Tensor::new(
        vec![2, 2],
        vec![
            a(0, 0) + b(0, 0),
            b(0, 1),
            a(1, 0) + b(1, 0),
            a(1, 1) + b(1, 1),
        ],
    )
    .unwrap();
    assert_eq!(spec.complexity(), 7.0);
    let masked = Tensor::new(vec![2, 2], vec![a(0, 0), Expr::zero(), a(1, 0), a(1, 1)]).unwrap();
    assert_eq!(masked.density(), 0.75);
    assert_eq!(simp_score(&[masked]), 2.25);
    assert!(Tensor::new(vec![3], vec![Expr::zero()]).is_err());
}

#[test]
fn numeric_evaluation_uses_c_semantics_for_integer_operations() {
    let x = Symbol::scalar("x");
    let e = Expr::trunc_div(&x.to_expr(), &Expr::int(2))
        + Expr::rem(&x.to_expr(), &Expr::int(4))
        + x.to_expr().wrap(8, false);
    let v = e.eval(&|s| (s == &x).then_some(-7.0)).unwrap();
    assert_eq!(v, -3.0 + -3.0 + 249.0);
    let unbound = s("zz").eval(&|_| None);
    assert_eq!(unbound, Err(EvalError::Unbound("zz".into())));
    let frac = Expr::one().div(&(x.to_expr() + Expr::one())).unwrap();
    assert_eq!(frac.eval(&|_| Some(3.0)).unwrap(), 0.25);
}

#[test]
fn huge_coefficients_stay_exact() {
    let x = s("x");
    let big = Expr::int(i64::MAX);
    let p = (&x * &big) * &big;
    assert!(matches!(p.leading_coeff(), Rat::Big(_)));
    assert_eq!(p.div(&big).unwrap().div(&big).unwrap(), x);
}

#[test]
fn interned_nodes_are_shared_and_freed() {
    let a = s("shared_a") + s("shared_b");
    let b = s("shared_b") + s("shared_a");
    assert!(a.ptr_eq(&b));
    let mut m = HashMap::new();
    m.insert(a.clone(), 1);
    assert_eq!(m.get(&b), Some(&1));
}

#[test]
fn all_rayon_threads_build_identical_normal_forms() {
    use rayon::prelude::*;
    // Every thread builds the same overlapping expressions in a different order.
    let build = |seed: usize| -> Vec<String> {
        let n = 12;
        let mut out = Vec::new();
        for i in 0..n {
            let i = (i + seed) % n;
            let mut acc = Expr::zero();
            for k in 0..n {
                let k = (k * 7 + seed) % n;
                acc = acc + el("A", &[i as u32, k as u32]) * el("B", &[k as u32, 0]);
            }
            let squared = &acc * &acc;
            out.push(format!("{i}:{}", squared.len()));
            out.push(format!("{i}:{acc}"));
        }
        out.sort();
        out
    };
    let reference = build(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(8)
        .build()
        .unwrap();
    let results: Vec<Vec<String>> = pool.install(|| (0..64).into_par_iter().map(build).collect());
    assert!(results.iter().all(|r| *r == reference));
}

#[test]
fn atoms_looked_up_directly_are_the_same_node_as_built_ones() {
    let x = Symbol::scalar("lookup_x");
    let built = Expr::from_terms(vec![Term {
        coeff: Rat::ONE,
        mono: Mono::from_factors(vec![(x.atom().clone(), 1)]),
    }]);
    assert!(built.ptr_eq(&x.to_expr()));
    assert!((x.to_expr() * Expr::int(2))
        .div(&Expr::int(2))
        .unwrap()
        .ptr_eq(&x.to_expr()));
}

#[test]
fn the_core_types_cross_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Expr>();
    assert_send_sync::<Symbol>();
    assert_send_sync::<Atom>();
    assert_send_sync::<Tensor>();
    assert_send_sync::<Rat>();
}

#[test]
fn element_wise_sketches_are_solved_without_a_dense_matrix() {
    // spec = A + B (2x2); sketch = ?X + B  ⇒  X = A
    let spec = Tensor::from_fn(&[2, 2], |i| {
        let idx = [i[0] as u32, i[1] as u32];
        el("A", &idx) + el("B", &idx)
    });
    let holes = Tensor::of_symbols("X", &[2, 2], true);
    let sketch = Tensor::from_fn(&[2, 2], |i| {
        let idx = [i[0] as u32, i[1] as u32];
        holes.get(i).unwrap() + &el("B", &idx)
    });
    let hole_symbols: Vec<Symbol> = holes.elems().iter().filter_map(Expr::as_symbol).collect();
    let solution = solve_tensor_holes(&spec, &sketch, &hole_symbols).unwrap();
    assert_eq!(solution[&Symbol::hole("X", &[1, 0])], el("A", &[1, 0]));
    let solved = Tensor::from_fn(&[2, 2], |i| {
        solution[&Symbol::hole("X", &[i[0] as u32, i[1] as u32])].clone()
    });
    assert_eq!(simp_score(&[solved]), 4.0);
    assert!(simp_score(&[spec]) > 4.0);
    // A coupled system: x + y = a, x - y = b.
    let (x, y) = (Symbol::hole("x", &[]), Symbol::hole("y", &[]));
    let (a, b) = (s("a"), s("b"));
    let sol = solve_system(
        &[
            x.to_expr() + y.to_expr() - &a,
            x.to_expr() - y.to_expr() - &b,
        ],
        &[x.clone(), y.clone()],
    )
    .unwrap();
    assert_eq!(sol[&x], (&a + &b).div(&Expr::int(2)).unwrap());
    // A chain: y = 2x, x = a.
    let sol = solve_system(
        &[y.to_expr() - Expr::int(2) * x.to_expr(), x.to_expr() - &a],
        &[x.clone(), y.clone()],
    )
    .unwrap();
    assert_eq!(sol[&y], Expr::int(2) * &a);
}

#[test]
fn shared_inputs_are_detected_across_applications() {
    let (a, b, h) = (
        el("A", &[0]),
        el("B", &[0]),
        Symbol::hole("v", &[]).to_expr(),
    );
    assert!((&a + &h).shares_var_with(&(a.sqrt() * &b)));
    assert!(!(&a + &h).shares_var_with(&(&b + &h)));
}

#[test]
fn concurrent_builders_get_the_very_same_interned_nodes() {
    use rayon::prelude::*;
    let build = |seed: usize| -> Vec<Expr> {
        (0..6)
            .map(|i| {
                let mut acc = Expr::zero();
                for k in 0..6 {
                    let k = (k + seed) % 6;
                    acc =
                        acc + el("P", &[i, k as u32]) * el("Q", &[k as u32]).div(&s("r")).unwrap();
                }
                (&acc * &acc).sqrt() + Expr::max_of(&[acc.clone(), Expr::int(seed as i64 % 2)])
            })
            .collect()
    };
    let reference: Vec<Vec<Expr>> = (0..2).map(build).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(8)
        .build()
        .unwrap();
    let results: Vec<Vec<Expr>> = pool.install(|| (0..200).into_par_iter().map(build).collect());
    for (seed, r) in results.iter().enumerate() {
        for (a, b) in r.iter().zip(&reference[seed % 2]) {
            assert!(a.ptr_eq(b), "seed {seed}: {a} vs {b}");
        }
    }
}
