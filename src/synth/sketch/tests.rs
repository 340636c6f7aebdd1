//! The sketch families through a whole search over a small library.

use std::time::{Duration, Instant};

use tenslift_targets::{print_expr, Access, DType, Dim, Expr, Lit, Param, ParamKind};

use super::constant::constant_fill;
use super::literal;
use super::region::{splits_by_formula, triangle_leaves, Triangle};
use crate::algebra::{Rat, Tensor, Value};
use crate::spec::Sizes;
use crate::synth::budget::{Limits, Meter};
use crate::synth::cost::CostModel;
use crate::synth::library::{Evaluator, Library};
use crate::synth::registry::SKETCH_FAMILIES;
use crate::synth::search::{Counters, Reductions, Search};

fn array(name: &str, dtype: DType, rank: usize) -> Param {
    let dims = ["n", "n"];
    Param {
        name: name.into(),
        kind: ParamKind::Array {
            dtype,
            shape: dims[..rank].iter().map(|d| Dim::sym(d)).collect(),
            access: Access::In,
        },
    }
}

fn element(name: &str, index: &[u32]) -> Value {
    Value::symbol(&crate::algebra::Symbol::element(name, index))
}

/// Searches `target` over a library built from `params` (with their
/// triangle leaves, as `lift_kernel` builds it) at `n = 3`, with the
/// search's default depth.
fn solve(params: Vec<Param>, target: &Tensor, dtype: DType) -> Option<Expr> {
    let sizes: Sizes = [("n".to_string(), 3)].into_iter().collect();
    solve_at(params, target, dtype, sizes)
}

fn solve_at(params: Vec<Param>, target: &Tensor, dtype: DType, sizes: Sizes) -> Option<Expr> {
    let limits = Limits::default();
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut evaluator = Evaluator::new(sizes.clone(), params.clone(), Vec::new());
    let leaves: Vec<Expr> = crate::synth::library::leaves(&params, &|_| vec![None], &[], dtype)
        .into_iter()
        .chain(triangle_leaves(&params, target))
        .collect();
    let library_meter = Meter::new(limits.library_evaluations, deadline);
    let library = Library::build(
        &mut evaluator,
        leaves,
        &sizes,
        &library_meter,
        20_000,
        target,
    )
    .ok()?;
    let reductions = Reductions::build(&library, target.shape());
    let model = CostModel::Analytic;
    let meter = Meter::new(limits.search_work, deadline);
    let search = Search {
        library: &library,
        reductions: &reductions,
        model: &model,
        sizes: &sizes,
        meter: &meter,
        first: false,
        stats: Counters::new(SKETCH_FAMILIES.iter().map(|f| f.name())),
        banned: &[],
        top_depth: 3,
        families: SKETCH_FAMILIES,
    };
    search
        .solve(target, dtype, 3, f64::INFINITY)
        .ok()?
        .map(|f| f.expr)
}

#[test]
fn a_data_dependent_select_becomes_a_where_over_its_branches() {
    // out[i] = a[i] != 0 ? b[i] / a[i] : 7   (C int division)
    let target = Tensor::from_fn(&[3], |i| {
        let (a, b) = (element("a", &[i[0] as u32]), element("b", &[i[0] as u32]));
        Value::select(&a, &Value::trunc_div(&b, &a), &Value::int(7))
    });
    let params = vec![array("a", DType::I32, 1), array("b", DType::I32, 1)];
    let expr = solve(params, &target, DType::I32).expect("a program");
    assert_eq!(
        print_expr(&expr),
        "where(ne(a, 0i32), trunc_div(b, where(ne(a, 0i32), a, 1i32)), 7i32)"
    );
}

#[test]
fn an_ordering_condition_keeps_its_constant_as_the_compared_literal() {
    // out[i] = a[i] < 5 ? a[i] : b[i]
    let target = Tensor::from_fn(&[3], |i| {
        let (a, b) = (element("a", &[i[0] as u32]), element("b", &[i[0] as u32]));
        Value::select(&Value::lt(&a, &Value::int(5)), &a, &b)
    });
    let params = vec![array("a", DType::I32, 1), array("b", DType::I32, 1)];
    let expr = solve(params, &target, DType::I32).expect("a program");
    assert_eq!(print_expr(&expr), "where(lt(a, 5i32), a, b)");
}

#[test]
fn two_formulas_split_by_the_diagonal_become_tril_plus_triu() {
    // out[i][j] = j <= i ? a[i][j] + b[i][j] : a[i][j] * b[i][j]
    let target = Tensor::from_fn(&[3, 3], |i| {
        let (r, c) = (i[0] as u32, i[1] as u32);
        let (a, b) = (element("a", &[r, c]), element("b", &[r, c]));
        if c <= r {
            a.add(&b)
        } else {
            a.mul(&b)
        }
    });
    let params = vec![array("a", DType::F64, 2), array("b", DType::F64, 2)];
    let expr = solve(params, &target, DType::F64).expect("a program");
    let text = print_expr(&expr);
    assert!(
        text == "add(tril(add(a, b), k=0), triu(mul(a, b), k=1))"
            || text == "add(tril(add(a, b), k=0), triu(mul(b, a), k=1))",
        "{text}"
    );
}

#[test]
fn a_square_input_read_on_its_lower_triangle_gets_tril_and_symmetric_leaves() {
    let params = vec![array("A", DType::F64, 2)];
    let lower = Tensor::from_fn(&[2], |i| element("A", &[1, i[0] as u32]));
    let leaves: Vec<String> = triangle_leaves(&params, &lower)
        .iter()
        .map(print_expr)
        .collect();
    assert_eq!(
        leaves,
        vec![
            "tril(A, k=0)".to_string(),
            "add(tril(A, k=0), transpose(tril(A, k=-1), perm=[1, 0]))".to_string()
        ]
    );
    let strictly_lower = Tensor::scalar(element("A", &[1, 0]));
    let leaves = triangle_leaves(&params, &strictly_lower);
    assert_eq!(leaves.len(), 1);
    assert_eq!(print_expr(&leaves[0]), "tril(A, k=-1)");
}

#[test]
fn a_lower_triangle_summing_two_contractions_of_one_operand_is_peeled() {
    // syr2k at n = 3, m = 2: C[i][j] (j <= i) += Σ_k A[j,k]·B[i,k] + B[j,k]·A[i,k].
    let rect = |name: &str| Param {
        name: name.into(),
        kind: ParamKind::Array {
            dtype: DType::F64,
            shape: vec![Dim::sym("n"), Dim::sym("m")],
            access: Access::In,
        },
    };
    let target = Tensor::from_fn(&[3, 3], |t| {
        let (i, j) = (t[0] as u32, t[1] as u32);
        let c = element("C", &[i, j]);
        if j > i {
            return c;
        }
        (0..2).fold(c, |acc, k| {
            let ab = element("A", &[j, k]).mul(&element("B", &[i, k]));
            let ba = element("B", &[j, k]).mul(&element("A", &[i, k]));
            acc.add(&ab).add(&ba)
        })
    });
    let params = vec![array("C", DType::F64, 2), rect("A"), rect("B")];
    let sizes: Sizes = [("n".to_string(), 3), ("m".to_string(), 2)]
        .into_iter()
        .collect();
    let expr = solve_at(params, &target, DType::F64, sizes).expect("a program");
    let text = print_expr(&expr);
    assert!(text.starts_with("add(tril("), "{text}");
    assert!(text.ends_with("triu(C, k=1))"), "{text}");
    assert_eq!(text.matches("matmul(").count(), 2, "{text}");
}

#[test]
fn a_decimal_constant_is_the_literal_c_wrote() {
    let tenth = Rat::new(1, 10).expect("a rational");
    let lit = literal(&tenth, DType::F64).expect("0.1 denotes 1/10");
    assert_eq!(lit, Expr::lit(Lit::float(0.1, DType::F64)));
    assert!(literal(&-&tenth, DType::F64).is_some());
    // A third has no finite decimal: no literal denotes it.
    assert!(literal(&Rat::new(1, 3).expect("a rational"), DType::F64).is_none());
}

#[test]
fn an_integer_product_with_a_common_factor_is_factored() {
    // out[i] = 2 * (a[i] - b[i]) * b[i]
    let target = Tensor::from_fn(&[3], |i| {
        let (a, b) = (element("a", &[i[0] as u32]), element("b", &[i[0] as u32]));
        a.sub(&b).mul(&b).scale(&Rat::from(2))
    });
    let params = vec![array("a", DType::I32, 1), array("b", DType::I32, 1)];
    let expr = solve(params, &target, DType::I32).expect("a program");
    let text = print_expr(&expr);
    assert!(text.starts_with("mul(2i32, mul("), "{text}");
}

#[test]
fn lower_triangle_masks_follow_the_diagonal_offset() {
    let on_and_below = Triangle { k: 0 }.lower_mask(3);
    assert_eq!(
        on_and_below,
        vec![true, false, false, true, true, false, true, true, true]
    );
    let strictly_below = Triangle { k: -1 }.lower_mask(2);
    assert_eq!(strictly_below, vec![false, false, true, false]);
}

#[test]
fn a_triangle_split_needs_two_distinct_formulas() {
    let x = Value::symbol(&crate::algebra::Symbol::new(
        crate::algebra::SymbolKind::Input,
        "x",
        &[0],
    ));
    let lower = Triangle { k: 0 }.lower_mask(2);
    let split = Tensor::new(
        vec![2, 2],
        vec![
            x.add(&Value::one()),
            x.clone(),
            x.add(&Value::one()),
            x.add(&Value::one()),
        ],
    )
    .expect("tensor");
    assert!(splits_by_formula(&split, &lower));
    let same = split.map(|_| x.clone());
    assert!(!splits_by_formula(&same, &lower));
    // Terms merged on the diagonal (syr2k's `2·A[i,k]·B[i,k]`) do not
    // make the lower triangle two formulas.
    let y = Value::symbol(&crate::algebra::Symbol::new(
        crate::algebra::SymbolKind::Input,
        "y",
        &[0],
    ));
    let merged = Tensor::from_fn(&[3, 3], |i| match i[1].cmp(&i[0]) {
        std::cmp::Ordering::Equal => x.scale(&Rat::from(2)),
        std::cmp::Ordering::Less => x.add(&y),
        std::cmp::Ordering::Greater => y.clone(),
    });
    assert!(splits_by_formula(&merged, &Triangle { k: 0 }.lower_mask(3)));
}

#[test]
fn constants_become_literals_of_the_target_type() {
    let fill = Tensor::from_fn(&[3], |_| Value::int(1));
    let found = constant_fill(&fill, DType::I32).expect("a literal");
    assert_eq!(found.expr, Expr::lit(Lit::int(1, DType::I32)));
    let half = Tensor::from_fn(&[2], |_| {
        Value::constant(Rat::new(1, 3).expect("a rational"))
    });
    assert!(constant_fill(&half, DType::I32).is_none());
    assert!(constant_fill(&half, DType::F64).is_none());
}

/// An input array of `dtype` with these dims.
fn input(name: &str, dtype: DType, shape: Vec<Dim>) -> Param {
    Param {
        name: name.into(),
        kind: ParamKind::Array {
            dtype,
            shape,
            access: Access::In,
        },
    }
}

fn sizes_of(pairs: &[(&str, i64)]) -> Sizes {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn a_reversed_operand_is_read_through_flip() {
    // convolution: y = Σ_i x[i] · h[n - 1 - i]
    let target = Tensor::scalar((0..4).fold(Value::zero(), |acc, i| {
        acc.add(&element("x", &[i]).mul(&element("h", &[3 - i])))
    }));
    let params = vec![array("x", DType::I32, 1), array("h", DType::I32, 1)];
    let expr = solve_at(params, &target, DType::I32, sizes_of(&[("n", 4)])).expect("a program");
    let text = print_expr(&expr);
    assert!(
        text == "matmul(x, flip(h, axes=[0]))" || text == "matmul(h, flip(x, axes=[0]))",
        "{text}"
    );
}

#[test]
fn interleaved_complex_updates_are_solved_part_by_part() {
    // D[2i] = A[2i]·B[2i] - A[2i+1]·B[2i+1], D[2i+1] = A[2i]·B[2i+1] + A[2i+1]·B[2i]
    let target = Tensor::from_fn(&[6], |m| {
        let (i, c) = (m[0] as u32 / 2, m[0] % 2);
        let (re_a, im_a) = (element("A", &[2 * i]), element("A", &[2 * i + 1]));
        let (re_b, im_b) = (element("B", &[2 * i]), element("B", &[2 * i + 1]));
        if c == 0 {
            re_a.mul(&re_b).sub(&im_a.mul(&im_b))
        } else {
            re_a.mul(&im_b).add(&im_a.mul(&re_b))
        }
    });
    let two_n = Dim::sym("n").mul(&Dim::constant(2)).expect("a dim");
    let params = vec![
        input("A", DType::I32, vec![two_n.clone()]),
        input("B", DType::I32, vec![two_n]),
    ];
    let expr = solve_at(params, &target, DType::I32, sizes_of(&[("n", 3)])).expect("a program");
    let text = print_expr(&expr);
    assert!(text.starts_with("reshape(concat([reshape("), "{text}");
    assert!(text.ends_with("], axis=1), [2*n])"), "{text}");
    assert!(
        text.contains("A[0:2*n - 1:2]") && text.contains("B[1:2*n:2]"),
        "{text}"
    );
}
