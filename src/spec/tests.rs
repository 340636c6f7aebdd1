//! Symbolic execution of hand-built kernels, checked against hand-derived
//! formulas for concrete entries.
use tenslift_frontend::ir::{BinaryOp, IfKind, Kernel, Role, ScalarType::*};

use super::build::*;
use super::examples::{covariance, gemm, three_mm};
use super::*;
use crate::algebra::{Rat, Symbol, Value};

fn sym(name: &str, index: &[u32]) -> Value {
    Symbol::element(name, index).to_expr()
}

fn scalar(name: &str) -> Value {
    Symbol::scalar(name).to_expr()
}

fn entry(spec: &Spec, name: &str, index: &[usize]) -> Value {
    spec.output(name)
        .and_then(|o| o.value.get(index))
        .cloned()
        .unwrap_or_else(|| panic!("no output {name}{index:?}"))
}

fn sizes(pairs: &[(&str, i64)]) -> Sizes {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn gemm_entries_are_beta_c_plus_alpha_row_times_column() {
    let k = gemm();
    let chosen = choose_sizes(&k, &Sizes::new()).unwrap();
    assert_eq!(chosen, sizes(&[("ni", 3), ("nj", 4), ("nk", 5)]));
    let spec = spec_of_kernel(&k, &chosen).unwrap();
    let c = spec.output("C").unwrap();
    assert_eq!(c.value.shape(), &[3, 4]);
    for (i, j) in [(0u32, 1u32), (2, 3)] {
        let mut expected = scalar("beta") * sym("C", &[i, j]);
        for kk in 0..5 {
            expected = expected + scalar("alpha") * sym("A", &[i, kk]) * sym("B", &[kk, j]);
        }
        assert_eq!(entry(&spec, "C", &[i as usize, j as usize]), expected);
    }
    let names: Vec<&str> = spec.inputs.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, vec!["alpha", "beta", "C", "A", "B"]);
    let text = spec.to_string();
    assert!(text.starts_with("// spec of gemm at ni=3, nj=4, nk=5\nC[0,0] = "));
    assert_eq!(text.lines().count(), 1 + 12);
}

#[test]
fn covariance_is_the_centred_product_over_n_minus_one() {
    let k = covariance();
    let spec = spec_of_kernel(&k, &sizes(&[("m", 3), ("n", 4)])).unwrap();
    let fl = scalar("float_n");
    let mean = |j: u32| {
        let total = Value::sum(&(0..4).map(|i| sym("data", &[i, j])).collect::<Vec<_>>());
        total.div(&fl).unwrap()
    };
    assert_eq!(entry(&spec, "mean", &[2]), mean(2));
    assert_eq!(
        entry(&spec, "data", &[1, 2]),
        sym("data", &[1, 2]) - mean(2)
    );
    let mut centred_product = Value::zero();
    for kk in 0..4 {
        centred_product =
            centred_product + (sym("data", &[kk, 0]) - mean(0)) * (sym("data", &[kk, 1]) - mean(1));
    }
    let expected = centred_product.div(&(&fl - &Value::one())).unwrap();
    assert_eq!(entry(&spec, "cov", &[0, 1]), expected);
    assert_eq!(entry(&spec, "cov", &[1, 0]), expected);
    assert_ne!(entry(&spec, "cov", &[0, 0]), expected);
    // cov·(float_n − 1) is a polynomial again: the reciprocal cancels.
    let times = entry(&spec, "cov", &[0, 1]).mul(&(&fl - &Value::one()));
    assert_eq!(times, centred_product);
}

#[test]
fn three_mm_chains_products_of_sums() {
    let k = three_mm();
    let chosen = choose_sizes(&k, &Sizes::new()).unwrap();
    let spec = spec_of_kernel(&k, &chosen).unwrap();
    let (nj, nk, nm) = (
        chosen["nj"] as u32,
        chosen["nk"] as u32,
        chosen["nm"] as u32,
    );
    let (i, j) = (1u32, 2u32);
    let mut expected = Value::zero();
    for kk in 0..nj {
        let e_ik = Value::sum(
            &(0..nk)
                .map(|a| sym("A", &[i, a]) * sym("B", &[a, kk]))
                .collect::<Vec<_>>(),
        );
        let f_kj = Value::sum(
            &(0..nm)
                .map(|b| sym("C", &[kk, b]) * sym("D", &[b, j]))
                .collect::<Vec<_>>(),
        );
        expected = expected + e_ik * f_kj;
    }
    assert_eq!(entry(&spec, "G", &[1, 2]), expected);
    assert_eq!(expected.len() as u32, nj * nk * nm);
    assert_eq!(spec.outputs.len(), 3);
}

#[test]
fn triangular_syrk_updates_only_the_lower_triangle() {
    let k = KernelBuilder::new("syrk")
        .size("n")
        .size("m")
        .scalar("alpha", F64)
        .scalar("beta", F64)
        .array("C", F64, &["n", "n"], Role::InOut)
        .array("A", F64, &["n", "m"], Role::Input)
        .body(vec![for_(
            "i",
            "0",
            "n",
            vec![
                for_(
                    "j",
                    "0",
                    "i+1",
                    vec![assign(
                        el("C", &["i", "j"], F64),
                        mul(load("C", &["i", "j"], F64), param("beta", F64)),
                    )],
                ),
                for_(
                    "k",
                    "0",
                    "m",
                    vec![for_(
                        "j",
                        "0",
                        "i+1",
                        vec![assign(
                            el("C", &["i", "j"], F64),
                            add(
                                load("C", &["i", "j"], F64),
                                mul(
                                    mul(param("alpha", F64), load("A", &["i", "k"], F64)),
                                    load("A", &["j", "k"], F64),
                                ),
                            ),
                        )],
                    )],
                ),
            ],
        )])
        .build();
    let spec = spec_at_chosen_sizes(&k, &Sizes::new()).unwrap();
    assert_eq!(spec.sizes, sizes(&[("n", 3), ("m", 4)]));
    let mut expected = scalar("beta") * sym("C", &[2, 1]);
    for kk in 0..4 {
        expected = expected + scalar("alpha") * sym("A", &[2, kk]) * sym("A", &[1, kk]);
    }
    assert_eq!(entry(&spec, "C", &[2, 1]), expected);
    assert_eq!(entry(&spec, "C", &[1, 2]), sym("C", &[1, 2]));
    let upper_untouched = (0..3).flat_map(|i| (i + 1..3).map(move |j| (i, j)));
    for (i, j) in upper_untouched {
        assert_eq!(entry(&spec, "C", &[i, j]), sym("C", &[i as u32, j as u32]));
    }
}

#[test]
fn uint8_blend_with_a_data_if_becomes_selects_with_c_integer_semantics() {
    let widen = |e| cast(I32, e);
    let k = KernelBuilder::new("blend")
        .size("n")
        .flat_array("a", U8, &["n"], &["1"], Role::Input)
        .flat_array("b", U8, &["n"], &["1"], Role::Input)
        .flat_array("out", U8, &["n"], &["1"], Role::Output)
        .body(vec![for_(
            "i",
            "0",
            "n",
            vec![
                if_(
                    IfKind::Data,
                    binary(
                        BinaryOp::Gt,
                        widen(load("a", &["i"], U8)),
                        widen(load("b", &["i"], U8)),
                    ),
                    vec![assign(el("out", &["i"], U8), load("a", &["i"], U8))],
                    vec![assign(
                        el("out", &["i"], U8),
                        cast(
                            U8,
                            div(
                                add(widen(load("a", &["i"], U8)), widen(load("b", &["i"], U8))),
                                lit(2),
                            ),
                        ),
                    )],
                ),
                // Brighten: only one branch writes, the other keeps the value.
                if_(
                    IfKind::Data,
                    binary(BinaryOp::Gt, widen(load("out", &["i"], U8)), lit(200)),
                    vec![assign(el("out", &["i"], U8), cast(U8, lit(255)))],
                    vec![],
                ),
            ],
        )])
        .build();
    let spec = spec_at_chosen_sizes(&k, &Sizes::new()).unwrap();
    let (a, b) = (sym("a", &[1]), sym("b", &[1]));
    let average = Value::trunc_div(&(&a + &b), &Value::int(2)).wrap(8, false);
    let first = Value::select(&Value::gt(&a, &b), &a, &average);
    let expected = Value::select(
        &Value::gt(&first, &Value::int(200)),
        &Value::int(255),
        &first,
    );
    assert_eq!(entry(&spec, "out", &[1]), expected);
    assert_eq!(expected.to_string(), entry(&spec, "out", &[1]).to_string());
    // The numeric value follows C: a=250, b=240 → 250 → 255; a=3, b=10 → 6.
    let at = |av: f64, bv: f64| {
        entry(&spec, "out", &[1])
            .eval(&|s| match s.name() {
                "a" => Some(av),
                "b" => Some(bv),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(at(250.0, 240.0), 255.0);
    assert_eq!(at(3.0, 10.0), 6.0);
    // `out` is write-only: its initial contents do not reach the spec.
    assert!(spec.inputs.iter().all(|i| i.name != "out"));
}

fn jacobi_1d() -> Kernel {
    let third = || flit("0.33333", F64);
    let avg3 = |arr: &str| {
        mul(
            third(),
            add(
                add(load(arr, &["i-1"], F64), load(arr, &["i"], F64)),
                load(arr, &["i+1"], F64),
            ),
        )
    };
    KernelBuilder::new("jacobi_1d")
        .size("tsteps")
        .size("n")
        .array("A", F64, &["n"], Role::InOut)
        .array("B", F64, &["n"], Role::InOut)
        .body(vec![for_(
            "t",
            "0",
            "tsteps",
            vec![
                for_(
                    "i",
                    "1",
                    "n-1",
                    vec![assign(el("B", &["i"], F64), avg3("A"))],
                ),
                for_(
                    "i",
                    "1",
                    "n-1",
                    vec![assign(el("A", &["i"], F64), avg3("B"))],
                ),
            ],
        )])
        .build()
}

#[test]
fn stencil_time_steps_compose() {
    let k = jacobi_1d();
    let one = spec_of_kernel(&k, &sizes(&[("tsteps", 1), ("n", 4)])).unwrap();
    let c = Value::constant(Rat::parse_decimal("0.33333").unwrap());
    let a = |i| sym("A", &[i]);
    let b1 = c.mul(&(a(0) + a(1) + a(2)));
    let b2 = c.mul(&(a(1) + a(2) + a(3)));
    assert_eq!(entry(&one, "B", &[1]), b1);
    assert_eq!(entry(&one, "A", &[1]), c.mul(&(sym("B", &[0]) + &b1 + &b2)));
    assert_eq!(entry(&one, "A", &[0]), a(0));
    // Two steps = one step applied to the result of one step.
    let two = spec_of_kernel(&k, &sizes(&[("tsteps", 2), ("n", 4)])).unwrap();
    let mut step: std::collections::HashMap<Symbol, Value> = Default::default();
    for i in 0..4u32 {
        step.insert(Symbol::element("A", &[i]), entry(&one, "A", &[i as usize]));
        step.insert(Symbol::element("B", &[i]), entry(&one, "B", &[i as usize]));
    }
    for i in 0..4usize {
        let composed = entry(&one, "A", &[i]).substitute(&step).unwrap();
        assert_eq!(entry(&two, "A", &[i]), composed);
    }
}

#[test]
fn returned_dot_product_through_a_local_accumulator_and_temporary_array() {
    let k = KernelBuilder::new("dot")
        .size("n")
        .flat_array("x", F32, &["n"], &["1"], Role::Input)
        .flat_array("y", F32, &["n"], &["1"], Role::Input)
        .local_scalar("s", F32)
        .local_array("tmp", F32, &["8"])
        .returns(F32)
        .body(vec![
            assign(sc("s", F32), flit("0.0f", F32)),
            for_(
                "i",
                "0",
                "n",
                vec![assign(
                    el("tmp", &["i"], F32),
                    mul(load("x", &["i"], F32), load("y", &["i"], F32)),
                )],
            ),
            for_(
                "i",
                "0",
                "n",
                vec![assign(
                    sc("s", F32),
                    add(local("s", F32), load("tmp", &["i"], F32)),
                )],
            ),
            ret(local("s", F32)),
        ])
        .build();
    let spec = spec_at_chosen_sizes(&k, &Sizes::new()).unwrap();
    let expected = Value::sum(
        &(0..3)
            .map(|i| sym("x", &[i]) * sym("y", &[i]))
            .collect::<Vec<_>>(),
    );
    assert_eq!(entry(&spec, "return", &[]), expected);
    assert!(spec
        .to_string()
        .contains("return = x[0]*y[0] + x[1]*y[1] + x[2]*y[2]"));
}

#[test]
fn reading_an_unwritten_local_is_a_located_error() {
    let k = KernelBuilder::new("bad")
        .size("n")
        .local_scalar("s", F64)
        .array("out", F64, &["n"], Role::Output)
        .body(vec![for_(
            "i",
            "0",
            "n",
            vec![assign(el("out", &["i"], F64), local("s", F64))],
        )])
        .build();
    let err = spec_at_chosen_sizes(&k, &Sizes::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "<builder>:1:1: error: `s` is read before it is written"
    );
}

fn strided_row_sums(param_order: &[&str]) -> Kernel {
    let mut b = KernelBuilder::new("rowsum");
    for p in param_order {
        b = b.size(p);
    }
    b.flat_array("A", F32, &["m", "k"], &["lda", "1"], Role::Input)
        .flat_array("y", F32, &["m"], &["1"], Role::InOut)
        .body(vec![for_(
            "i",
            "0",
            "m",
            vec![for_(
                "j",
                "0",
                "k",
                vec![assign(
                    el("y", &["i"], F32),
                    add(load("y", &["i"], F32), load("A", &["i", "j"], F32)),
                )],
            )],
        )])
        .build()
}

#[test]
fn sizes_are_distinct_and_respect_leading_dimensions() {
    let k = strided_row_sums(&["lda", "m", "k"]);
    let first = choose_sizes(&k, &Sizes::new()).unwrap();
    assert!(first["lda"] >= first["k"], "{first:?}");
    let mut values: Vec<i64> = first.values().copied().collect();
    values.dedup();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), 3);
    let second = choose_second_sizes(&k, &first).unwrap();
    assert!(
        second.iter().all(|(name, v)| first[name] != *v),
        "{first:?} {second:?}"
    );
    assert!(second["lda"] >= second["k"]);
    // A user-chosen lda below the row length is reported, not accepted.
    let err = spec_of_kernel(&k, &sizes(&[("lda", 2), ("m", 3), ("k", 4)])).unwrap_err();
    assert!(
        matches!(err, SpecError::OverlappingStrides { ref array, .. } if array == "A"),
        "{err}"
    );
    // Explicit sizes are honoured for the named parameters.
    let fixed = choose_sizes(&k, &sizes(&[("k", 6)])).unwrap();
    assert_eq!(fixed["k"], 6);
    assert!(fixed["lda"] >= 6);
}

#[test]
fn out_of_bounds_accesses_are_reported_with_their_location() {
    let k = KernelBuilder::new("shift")
        .size("n")
        .array("A", F64, &["n"], Role::Input)
        .array("B", F64, &["n"], Role::Output)
        .body(vec![for_(
            "i",
            "0",
            "n",
            vec![assign(el("B", &["i"], F64), load("A", &["i+1"], F64))],
        )])
        .build();
    let err = spec_of_kernel(&k, &sizes(&[("n", 3)])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "<builder>:1:1: error: access A[3] is out of bounds for extents [3] at sizes n=3"
    );
    assert!(matches!(
        choose_sizes(&k, &Sizes::new()),
        Err(SpecError::NoValidSizes { .. })
    ));
    assert!(matches!(
        choose_sizes(&k, &sizes(&[("q", 3)])),
        Err(SpecError::NotASize { .. })
    ));
    assert!(matches!(
        spec_of_kernel(&k, &Sizes::new()),
        Err(SpecError::MissingSize { .. })
    ));
}

#[test]
fn size_lists_parse_or_explain() {
    assert_eq!(
        parse_sizes("n=4, m=5").unwrap(),
        sizes(&[("n", 4), ("m", 5)])
    );
    assert!(matches!(
        parse_sizes("n=four"),
        Err(SpecError::BadSizeList { .. })
    ));
    assert!(matches!(
        parse_sizes("=3"),
        Err(SpecError::BadSizeList { .. })
    ));
}

#[test]
fn guards_ternaries_and_constant_casts_follow_c() {
    // for i, j: B[i][j] = (i == j) ? A[i][j] : 0;  if (i < j) B[i][j] = (int)2.7 + (uint8_t)300;
    let k = KernelBuilder::new("guards")
        .size("n")
        .array("A", F64, &["n", "n"], Role::Input)
        .array("B", F64, &["n", "n"], Role::Output)
        .body(vec![for_(
            "i",
            "0",
            "n",
            vec![for_(
                "j",
                "0",
                "n",
                vec![
                    assign(
                        el("B", &["i", "j"], F64),
                        select(
                            binary(BinaryOp::Eq, it("i"), it("j")),
                            load("A", &["i", "j"], F64),
                            flit("0.0", F64),
                        ),
                    ),
                    if_(
                        IfKind::Guard,
                        binary(BinaryOp::Lt, it("i"), it("j")),
                        vec![assign(
                            el("B", &["i", "j"], F64),
                            cast(
                                F64,
                                add(cast(I32, flit("2.7", F64)), cast(I32, cast(U8, lit(300)))),
                            ),
                        )],
                        vec![],
                    ),
                ],
            )],
        )])
        .build();
    let spec = spec_at_chosen_sizes(&k, &Sizes::new()).unwrap();
    assert_eq!(entry(&spec, "B", &[1, 1]), sym("A", &[1, 1]));
    assert_eq!(entry(&spec, "B", &[2, 1]), Value::zero());
    assert_eq!(entry(&spec, "B", &[0, 2]), Value::int(2 + 44));
    // Only the diagonal depends on A.
    let vars = spec.output("B").unwrap().value.vars();
    assert_eq!(vars.len(), 3);
}

#[test]
fn a_data_dependent_ternary_on_integers_keeps_truncating_division() {
    // out[i] = x[i] > 0 ? x[i] / 2 : -x[i] % 3   (int)
    let k = KernelBuilder::new("ints")
        .size("n")
        .array("x", I32, &["n"], Role::Input)
        .array("out", I32, &["n"], Role::Output)
        .body(vec![for_(
            "i",
            "0",
            "n",
            vec![assign(
                el("out", &["i"], I32),
                select(
                    binary(BinaryOp::Gt, load("x", &["i"], I32), lit(0)),
                    div(load("x", &["i"], I32), lit(2)),
                    binary(BinaryOp::Rem, neg(load("x", &["i"], I32)), lit(3)),
                ),
            )],
        )])
        .build();
    let spec = spec_at_chosen_sizes(&k, &Sizes::new()).unwrap();
    let e = entry(&spec, "out", &[0]);
    let at = |v: f64| e.eval(&|_| Some(v)).unwrap();
    assert_eq!(at(7.0), 3.0);
    assert_eq!(at(-7.0), 1.0);
    assert_eq!(at(-8.0), 2.0);
    assert_eq!(
        e.to_string(),
        "select(lt0(-x[0]), tdiv(x[0], 2), rem(-x[0], 3))"
    );
}

#[test]
fn huge_sizes_are_refused_before_allocating() {
    let k = KernelBuilder::new("big")
        .size("n")
        .array("A", F64, &["n", "n"], Role::InOut)
        .body(vec![for_(
            "i",
            "0",
            "n",
            vec![assign(el("A", &["i", "i"], F64), flit("1.0", F64))],
        )])
        .build();
    let err = spec_of_kernel(&k, &sizes(&[("n", 1 << 40)])).unwrap_err();
    assert!(matches!(err, SpecError::TooManyElements { .. }), "{err}");
    let looping = KernelBuilder::new("long")
        .size("n")
        .local_scalar("s", F64)
        .returns(F64)
        .body(vec![
            assign(sc("s", F64), flit("0.0", F64)),
            for_(
                "i",
                "0",
                "n",
                vec![assign(sc("s", F64), add(local("s", F64), flit("1.0", F64)))],
            ),
            ret(local("s", F64)),
        ])
        .build();
    let err = spec_of_kernel(&looping, &sizes(&[("n", i64::MAX)])).unwrap_err();
    assert!(matches!(err, SpecError::TooLarge { .. }), "{err}");
    let spec = spec_of_kernel(&looping, &sizes(&[("n", 7)])).unwrap();
    assert_eq!(entry(&spec, "return", &[]), Value::int(7));
}

#[test]
fn data_branches_around_loops_merge_every_written_location() {
    // if (alpha > 0) for i: y[i] = x[i]; else for i: y[i] = -x[i];  then y[0] += 1
    let k = KernelBuilder::new("sign")
        .size("n")
        .scalar("alpha", F64)
        .array("x", F64, &["n"], Role::Input)
        .array("y", F64, &["n"], Role::Output)
        .body(vec![
            if_(
                IfKind::Data,
                binary(BinaryOp::Gt, param("alpha", F64), flit("0.0", F64)),
                vec![for_(
                    "i",
                    "0",
                    "n",
                    vec![assign(el("y", &["i"], F64), load("x", &["i"], F64))],
                )],
                vec![for_(
                    "i",
                    "0",
                    "n",
                    vec![
                        assign(el("y", &["i"], F64), neg(load("x", &["i"], F64))),
                        assign(
                            el("y", &["i"], F64),
                            mul(load("y", &["i"], F64), flit("2", F64)),
                        ),
                    ],
                )],
            ),
            assign(
                el("y", &["0"], F64),
                add(load("y", &["0"], F64), flit("1", F64)),
            ),
        ])
        .build();
    let spec = spec_at_chosen_sizes(&k, &Sizes::new()).unwrap();
    let cond = Value::gt(&scalar("alpha"), &Value::zero());
    for i in 0..3u32 {
        let x = sym("x", &[i]);
        let mut expected = Value::select(&cond, &x, &(x.scale(&Rat::int(-2))));
        if i == 0 {
            expected = expected + Value::one();
        }
        assert_eq!(entry(&spec, "y", &[i as usize]), expected);
    }
    assert_eq!(
        entry(&spec, "y", &[1]).to_string(),
        "select(lt0(-alpha), x[1], -2*x[1])"
    );
}

#[test]
fn spec_text_groups_terms_over_a_common_denominator() {
    let spec = spec_of_kernel(&covariance(), &sizes(&[("m", 2), ("n", 3)])).unwrap();
    let text = spec.to_string();
    assert!(
        text.contains("\nmean[0] = (data[0,0] + data[1,0] + data[2,0])/float_n\n"),
        "{text}"
    );
    assert!(
        text.contains("\ndata[1,0] = data[1,0] - (data[0,0] + data[1,0] + data[2,0])/float_n\n"),
        "{text}"
    );
}

#[test]
fn specs_computed_on_many_threads_are_identical() {
    use rayon::prelude::*;
    let kernels = [covariance(), three_mm(), gemm()];
    let single: Vec<Spec> = kernels
        .iter()
        .map(|k| spec_at_chosen_sizes(k, &Sizes::new()).unwrap())
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(8)
        .build()
        .unwrap();
    let parallel: Vec<Spec> = pool.install(|| {
        (0..24)
            .into_par_iter()
            .map(|i| spec_at_chosen_sizes(&kernels[i % 3], &Sizes::new()).unwrap())
            .collect()
    });
    for (i, spec) in parallel.iter().enumerate() {
        assert_eq!(*spec, single[i % 3]);
    }
}

#[test]
fn exploding_products_are_refused_with_a_location() {
    // x = x·x + Σ a, repeated: the number of terms squares every step.
    let k = KernelBuilder::new("blowup")
        .size("n")
        .array("a", F64, &["n"], Role::Input)
        .local_scalar("x", F64)
        .local_scalar("s", F64)
        .returns(F64)
        .body(vec![
            assign(sc("x", F64), flit("1.0", F64)),
            for_(
                "t",
                "0",
                "40",
                vec![
                    assign(sc("s", F64), flit("0.0", F64)),
                    for_(
                        "i",
                        "0",
                        "n",
                        vec![assign(
                            sc("s", F64),
                            add(local("s", F64), load("a", &["i"], F64)),
                        )],
                    ),
                    assign(
                        sc("x", F64),
                        add(mul(local("x", F64), local("x", F64)), local("s", F64)),
                    ),
                ],
            ),
            ret(local("x", F64)),
        ])
        .build();
    let err = spec_of_kernel(&k, &sizes(&[("n", 8)])).unwrap_err();
    assert!(matches!(err, SpecError::ExpressionTooLarge { .. }), "{err}");
}

#[test]
fn a_recurrence_dividing_by_itself_is_refused_at_once() {
    // acc = x[i] / acc + acc: every step doubles the numerator's degree
    // over a common denominator; the sixth step would take minutes.
    let k = KernelBuilder::new("running_mix")
        .size("n")
        .array("x", F64, &["n"], Role::Input)
        .local_scalar("acc", F64)
        .returns(F64)
        .body(vec![
            assign(sc("acc", F64), flit("1.0", F64)),
            for_(
                "i",
                "0",
                "n",
                vec![assign(
                    sc("acc", F64),
                    add(
                        div(load("x", &["i"], F64), local("acc", F64)),
                        local("acc", F64),
                    ),
                )],
            ),
            ret(local("acc", F64)),
        ])
        .build();
    assert!(spec_of_kernel(&k, &sizes(&[("n", 4)])).is_ok());
    let err = spec_of_kernel(&k, &sizes(&[("n", 64)])).unwrap_err();
    assert!(
        matches!(err, SpecError::DenominatorTooLarge { .. }),
        "{err}"
    );
}

/// `att[t] = Σ_i q[i] * cache[t*kv + head*hs + i]`: a general strided view
/// whose middle index is the size parameter `head`.
fn one_head_scores() -> Kernel {
    KernelBuilder::new("scores")
        .size("pos")
        .size("head")
        .size("hs")
        .size("kv")
        .flat_array(
            "cache",
            F32,
            &["pos+1", "?", "hs"],
            &["kv", "hs", "1"],
            Role::Input,
        )
        .flat_array("q", F32, &["hs"], &["1"], Role::Input)
        .flat_array("att", F32, &["pos+1"], &["1"], Role::Output)
        .body(vec![for_(
            "t",
            "0",
            "pos+1",
            vec![
                assign(el("att", &["t"], F32), flit("0.0f", F32)),
                for_(
                    "i",
                    "0",
                    "hs",
                    vec![assign(
                        el("att", &["t"], F32),
                        add(
                            load("att", &["t"], F32),
                            mul(
                                load("q", &["i"], F32),
                                load("cache", &["t", "head", "i"], F32),
                            ),
                        ),
                    )],
                ),
            ],
        )])
        .build()
}

#[test]
fn general_strided_views_get_sizes_that_keep_elements_apart() {
    let k = one_head_scores();
    let chosen = choose_sizes(&k, &Sizes::new()).unwrap();
    // Strictly wider: a row exactly `(head + 1)*hs` wide would let `kv`
    // stand for that product in a lifted program.
    assert!(
        chosen["kv"] > (chosen["head"] + 1) * chosen["hs"],
        "{chosen:?}"
    );
    let mut values: Vec<i64> = chosen.values().copied().collect();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), 4, "distinct sizes {chosen:?}");
    let spec = spec_of_kernel(&k, &chosen).unwrap();
    // The block-selected cache is named by physical coordinates: row `t`,
    // flat column `head*hs + i`, in a row `kv` wide.
    let first_column = (chosen["head"] * chosen["hs"]) as u32;
    let expected = (0..chosen["hs"] as u32).fold(Value::zero(), |acc, i| {
        &acc + &(&sym("q", &[i]) * &sym("cache", &[1, first_column + i]))
    });
    assert_eq!(entry(&spec, "att", &[1]), expected);
    let cache = spec.inputs.iter().find(|i| i.name == "cache").unwrap();
    assert_eq!(
        cache.shape,
        vec![chosen["pos"] as usize + 1, chosen["kv"] as usize]
    );
    let second = choose_second_sizes(&k, &chosen).unwrap();
    assert!(
        second["kv"] > (second["head"] + 1) * second["hs"],
        "{second:?}"
    );
    // The user's `kv` below the slice `head` needs is refused, not repaired.
    let err = choose_sizes(&k, &sizes(&[("kv", 5)])).unwrap_err();
    assert!(err.to_string().contains("overlap"), "{err}");
}

/// `B[i] = Σ_{j<2} A[i][j][0…]` for i < 3 over a flat `A` of these
/// strides (`sizes` declared first).
fn skewed_row_sums(sizes: &[&str], strides: &[&str]) -> Kernel {
    let dims = vec!["?"; strides.len()];
    let mut index = vec!["i", "j"];
    index.resize(strides.len(), "0");
    let builder = sizes
        .iter()
        .fold(KernelBuilder::new("skew"), |b, s| b.size(s));
    builder
        .flat_array("A", F64, &dims, strides, Role::Input)
        .array("B", F64, &["3"], Role::Output)
        .body(vec![for_(
            "i",
            "0",
            "3",
            vec![
                assign(el("B", &["i"], F64), flit("0.0", F64)),
                for_(
                    "j",
                    "0",
                    "2",
                    vec![assign(
                        el("B", &["i"], F64),
                        add(load("B", &["i"], F64), load("A", &index, F64)),
                    )],
                ),
            ],
        )])
        .build()
}

/// `B[i] = Σ_j A[i*2 + j*3]` for i < 3, j < 2: strides that are no mixed
/// radix (2 < 1 + 3) but still give the six touched elements six offsets.
#[test]
fn non_nested_strides_pass_when_touched_offsets_are_distinct() {
    let k = |strides: &[&str]| skewed_row_sums(&[], strides);
    let spec = spec_of_kernel(&k(&["2", "3"]), &Sizes::new()).unwrap();
    assert_eq!(
        entry(&spec, "B", &[2]),
        &sym("A", &[2, 0]) + &sym("A", &[2, 1])
    );
    // Strides 1 and 1 put A[0,1] and A[1,0] at the same offset.
    let err = spec_of_kernel(&k(&["1", "1"]), &Sizes::new()).unwrap_err();
    assert!(
        matches!(err, SpecError::OverlappingStrides { ref array, .. } if array == "A"),
        "{err}"
    );
}

/// `B[i] = Σ_j A[i*a + j*b]` with parameter strides: the first tuple in
/// candidate order (`a = 3, b = 4`) maps the touched box one-to-one but
/// interleaves rows (`3 < 1 + 4`); a tuple where the strides nest comes
/// first, so the spec's rows are the layout's rows.
#[test]
fn nested_strides_are_preferred_to_merely_distinct_offsets() {
    let k = skewed_row_sums(&["a", "b"], &["a", "b", "1"]);
    let chosen = choose_sizes(&k, &Sizes::new()).unwrap();
    assert!(chosen["a"] > chosen["b"], "{chosen:?}");
    // A user's tuple that only maps the box one-to-one is still accepted.
    let spec = spec_of_kernel(&k, &sizes(&[("a", 3), ("b", 4)])).unwrap();
    assert_eq!(
        entry(&spec, "B", &[2]),
        &sym("A", &[2, 0, 0]) + &sym("A", &[2, 1, 0])
    );
}

/// `y[head*hs + i] = x[i] / 2` on `int`s: the output is a strided slice of a
/// larger buffer, and division truncates toward zero as in C.
#[test]
fn numeric_values_land_in_the_c_buffer_with_c_integer_division() {
    use tenslift_targets::dtype::DType;
    use tenslift_targets::interp::{Array, Data};
    use tenslift_targets::npy;

    let k = KernelBuilder::new("halve_slice")
        .size("head")
        .size("hs")
        .flat_array("x", I32, &["hs"], &["1"], Role::Input)
        .flat_array("y", I32, &["?", "hs"], &["hs", "1"], Role::InOut)
        .body(vec![for_(
            "i",
            "0",
            "hs",
            vec![assign(
                el("y", &["head", "i"], I32),
                binary(BinaryOp::Div, load("x", &["i"], I32), lit(2)),
            )],
        )])
        .build();
    let at = sizes(&[("head", 1), ("hs", 3)]);
    let spec = spec_of_kernel(&k, &at).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, values: Vec<i64>| {
        let n = values.len();
        npy::write(
            &dir.path().join(format!("{name}.npy")),
            &Array::from_i64(DType::I32, vec![n], values),
        )
        .unwrap();
    };
    write("x", vec![-7, 5, 0]);
    // The whole buffer: two heads of three, plus one element past them.
    write("y", vec![10, 11, 12, 13, 14, 15, 16]);
    let outputs = numeric::evaluate(&k, &spec, dir.path()).unwrap();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0].array.shape, vec![7]);
    assert_eq!(
        outputs[0].array.data,
        Data::Int(vec![10, 11, 12, -3, 2, 0, 16])
    );
    // A buffer too short for the view is an error, not a wrong answer.
    write("y", vec![10, 11, 12, 13]);
    let err = numeric::evaluate(&k, &spec, dir.path()).err().unwrap();
    assert!(
        matches!(err, numeric::NumericError::BufferTooSmall { .. }),
        "{err}"
    );
}

/// `out[i] += 1` for `k in 2..n-2` inside `j in 0..m`: found by the
/// differential fuzzer (fz109), whose inner loop is empty at n = 3 or 4.
fn inner_loop_from_two_to_n_minus_two() -> Kernel {
    KernelBuilder::new("fz109")
        .size("n")
        .size("m")
        .array("out", F32, &["n"], Role::InOut)
        .body(vec![for_(
            "i",
            "0",
            "n",
            vec![for_(
                "j",
                "0",
                "m",
                vec![for_(
                    "k",
                    "2",
                    "n-2",
                    vec![assign(
                        el("out", &["i"], F32),
                        add(load("out", &["i"], F32), load("out", &["i"], F32)),
                    )],
                )],
            )],
        )])
        .build()
}

#[test]
fn chosen_sizes_run_every_loop_body() {
    let k = inner_loop_from_two_to_n_minus_two();
    let first = choose_sizes(&k, &Sizes::new()).unwrap();
    assert!(first["n"] >= 5, "k in 2..n-2 never runs at {first:?}");
    assert_eq!(sizes::check_sizes(&k, &first).unwrap().idle_loops, 0);
    let second = choose_second_sizes(&k, &first).unwrap();
    assert!(second["n"] >= 5, "k in 2..n-2 never runs at {second:?}");
    // The fallback still gives a tuple when no small one enters a loop.
    let dead = KernelBuilder::new("dead")
        .size("n")
        .array("out", F32, &["n"], Role::InOut)
        .body(vec![for_(
            "i",
            "n",
            "n",
            vec![assign(el("out", &["i"], F32), load("out", &["i"], F32))],
        )])
        .build();
    let sizes = choose_sizes(&dead, &Sizes::new()).unwrap();
    assert_eq!(sizes::check_sizes(&dead, &sizes).unwrap().idle_loops, 1);
}

#[test]
fn second_sizes_break_every_difference_of_two_sizes() {
    // fz17/fz37/fz170: with m = n + 1 at both tuples, `n` passed for `m - 1`.
    let k = strided_row_sums(&["lda", "m", "k"]);
    let first = choose_sizes(&k, &Sizes::new()).unwrap();
    let second = choose_second_sizes(&k, &first).unwrap();
    for (a, va) in &first {
        for (b, vb) in &first {
            if a < b {
                assert_ne!(
                    second[a] - second[b],
                    va - vb,
                    "{a}-{b}: {first:?} {second:?}"
                );
            }
        }
    }
    assert!(second["lda"] >= second["k"]);
    let three = three_mm();
    let first = choose_sizes(&three, &Sizes::new()).unwrap();
    let second = choose_second_sizes(&three, &first).unwrap();
    assert!(
        sizes::breaks_relations(&first, &second),
        "{first:?} {second:?}"
    );
}

#[test]
fn third_sizes_are_off_every_line_through_the_first_two() {
    // fz21: `2(n - 1)` for `m` fits n=3, m=4 and n=4, m=6.
    let k = strided_row_sums(&["lda", "m", "k"]);
    let first = choose_sizes(&k, &Sizes::new()).unwrap();
    let second = choose_second_sizes(&k, &first).unwrap();
    let third = sizes::choose_third_sizes(&k, &first, &second).unwrap();
    for a in first.keys() {
        for b in first.keys() {
            if a < b {
                let (da, db) = (second[a] - first[a], second[b] - first[b]);
                let (ea, eb) = (third[a] - first[a], third[b] - first[b]);
                assert_ne!(
                    ea * db,
                    eb * da,
                    "{a},{b} collinear: {first:?} {second:?} {third:?}"
                );
            }
        }
        assert_ne!(third[a], first[a]);
        assert_ne!(third[a], second[a]);
    }
    assert!(third["lda"] >= third["k"]);
}
