use super::*;
use crate::spec::build::aff;
use tenslift_frontend::Options;

fn polybench_body(name: &str) -> Vec<loop_ir::Stmt> {
    let path = format!(
        "{}/benchmarks/polybench/{name}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let unit = tenslift_frontend::extract(&path, &Options::default()).expect("extracts");
    let kernel = unit.kernels.into_iter().next().expect("one kernel");
    match kernel.body.into_iter().next() {
        Some(loop_ir::Stmt::Loop(time)) => time.body,
        other => panic!("expected a time loop, got {other:?}"),
    }
}

fn range(start: &str, stop: &str) -> SliceItem {
    SliceItem::Range {
        start: dim_of(&aff(start)).expect("dim"),
        stop: dim_of(&aff(stop)).expect("dim"),
        step: 1,
    }
}

fn element(name: &str, i: u32) -> Value {
    Symbol::element(name, &[i]).to_expr()
}

#[test]
fn jacobi_1d_reads_are_three_shifted_slices_and_the_store_is_the_interior() {
    let body = polybench_body("jacobi-1d");
    let accesses = accesses(&body[0]).expect("a box nest");
    let reads: Vec<Vec<SliceItem>> = accesses
        .iter()
        .filter(|a| !a.is_store)
        .map(|a| slice_of(a).expect("a box"))
        .collect();
    assert_eq!(
        reads,
        vec![
            vec![range("0", "n - 2")],
            vec![range("1", "n - 1")],
            vec![range("2", "n")],
        ]
    );
    let (array, region) = store_region(&accesses).expect("one store");
    assert_eq!(array, "B");
    assert_eq!(region, vec![range("1", "n - 1")]);
}

#[test]
fn jacobi_2d_shifts_move_one_dimension_at_a_time() {
    let body = polybench_body("jacobi-2d");
    let accesses = accesses(&body[0]).expect("a box nest");
    let reads: Vec<Vec<SliceItem>> = accesses
        .iter()
        .filter(|a| !a.is_store)
        .map(|a| slice_of(a).expect("a box"))
        .collect();
    let interior = range("1", "n - 1");
    assert_eq!(reads.len(), 5);
    assert!(reads.contains(&vec![interior.clone(), interior.clone()]));
    assert!(reads.contains(&vec![range("0", "n - 2"), interior.clone()]));
    assert!(reads.contains(&vec![range("2", "n"), interior.clone()]));
    assert!(reads.contains(&vec![interior.clone(), range("0", "n - 2")]));
    assert!(reads.contains(&vec![interior.clone(), range("2", "n")]));
}

#[test]
fn a_subscript_using_the_loop_variable_twice_is_not_a_box() {
    let access = Access {
        array: "A".into(),
        index: vec![aff("i"), aff("i")],
        loops: vec![NestLoop {
            iter: "i".into(),
            start: aff("0"),
            end: aff("n"),
        }],
        is_store: false,
    };
    assert_eq!(slice_of(&access), None);
}

#[test]
fn a_subscript_walking_down_covers_an_ascending_range() {
    // x[n - 1 - i] over i in [0, n - 1) covers x[1 : n]; x[n - 2 - i]
    // covers x[0 : n - 1]. Only covered_slice sees them; slice_of keeps
    // its one-direction contract.
    let walk = |index: &str| Access {
        array: "x".into(),
        index: vec![aff(index)],
        loops: vec![NestLoop {
            iter: "i".into(),
            start: aff("0"),
            end: aff("n - 1"),
        }],
        is_store: false,
    };
    let store = walk("n - 1 - i");
    assert!(walks_down(&store));
    assert_eq!(slice_of(&store), None);
    assert_eq!(covered_slice(&store), Some(vec![range("1", "n")]));
    assert_eq!(
        covered_slice(&walk("n - 2 - i")),
        Some(vec![range("0", "n - 1")])
    );
    assert!(!walks_down(&walk("i")));
}

#[test]
fn a_three_point_average_is_derived_with_its_shared_coefficient() {
    // target[e] = (A[e] + A[e+1] + A[e+2]) / 3 over four elements.
    let third = Rat::new(1, 3).expect("rational");
    let target = Tensor::from_fn(&[4], |idx| {
        let e = idx[0] as u32;
        element("A", e)
            .add(&element("A", e + 1))
            .add(&element("A", e + 2))
            .scale(&third)
    });
    let shifted = |k: u32| Tensor::from_fn(&[4], |idx| element("A", idx[0] as u32 + k));
    let leaves = vec![
        shifted(2),
        Tensor::scalar(element("alpha", 0)),
        shifted(0),
        shifted(1),
    ];
    let stencil = derive_linear_stencil(&target, &leaves).expect("a linear stencil");
    assert_eq!(
        stencil.terms,
        vec![(0, third.clone()), (2, third.clone()), (3, third)]
    );
    assert!(stencil.constant.is_zero());
    // 1/3 has no exact decimal literal: the sum is divided by 3.
    let exprs: Vec<Expr> = ["a", "alpha", "b", "c"]
        .iter()
        .map(|n| {
            Expr::var(
                n,
                tenslift_targets::Ty::tensor(DType::F64, vec![Dim::constant(4)]),
            )
        })
        .collect();
    let combined = linear_combination(&stencil, &exprs, DType::F64).expect("an expression");
    let text = tenslift_targets::print_expr(&combined);
    assert_eq!(text, "div(add(add(a, b), c), 3.0)");
}

#[test]
fn coefficients_that_change_along_the_output_are_not_a_stencil() {
    // The first element weighs its neighbour differently (a boundary).
    let target = Tensor::from_fn(&[3], |idx| {
        let e = idx[0] as u32;
        let weight = Rat::int(if e == 0 { 2 } else { 1 });
        element("A", e).add(&element("A", e + 1).scale(&weight))
    });
    let shifted = |k: u32| Tensor::from_fn(&[3], |idx| element("A", idx[0] as u32 + k));
    assert!(derive_linear_stencil(&target, &[shifted(0), shifted(1)]).is_none());
}

#[test]
fn region_values_are_the_interior_elements() {
    let whole = Tensor::from_fn(&[5], |idx| element("B", idx[0] as u32));
    let sizes: Sizes = [("n".to_string(), 5)].into_iter().collect();
    let inner = region_value(&whole, &[range("1", "n - 1")], &sizes).expect("in range");
    assert_eq!(inner.shape(), &[3]);
    assert_eq!(inner.elems()[0], element("B", 1));
    assert_eq!(inner.elems()[2], element("B", 3));
    assert!(region_value(&whole, &[range("1", "n + 1")], &sizes).is_none());
}

#[test]
fn only_decimal_coefficients_become_literals() {
    assert!(exact_literal(&Rat::new(1, 8).expect("r"), DType::F64).is_some());
    assert!(exact_literal(&Rat::new(33333, 100000).expect("r"), DType::F64).is_some());
    assert!(exact_literal(&Rat::new(1, 9).expect("r"), DType::F64).is_none());
}
