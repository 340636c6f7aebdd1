use std::sync::Arc;

use tenslift_frontend::Options;
use tenslift_targets::{build, Access, Dim, Meta, Param};

use super::*;
use crate::synth::cost::BandwidthLevel;

fn sizes(pairs: &[(&str, i64)]) -> Sizes {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

fn array(name: &str, shape: &[&str], access: Access) -> Param {
    Param {
        name: Arc::from(name),
        kind: ParamKind::Array {
            dtype: DType::F64,
            shape: shape.iter().map(|d| Dim::sym(d)).collect(),
            access,
        },
    }
}

fn size(name: &str) -> Param {
    Param {
        name: Arc::from(name),
        kind: ParamKind::Size,
    }
}

/// `C = A @ B` with A n × k, B k × m, C n × m written.
fn gemm() -> Program {
    let a = build::var("A", DType::F64, vec![Dim::sym("n"), Dim::sym("k")]);
    let b = build::var("B", DType::F64, vec![Dim::sym("k"), Dim::sym("m")]);
    let product = build::matmul(a, b).expect("shapes agree");
    Program {
        meta: Meta::default(),
        name: Arc::from("gemm"),
        params: vec![
            size("n"),
            size("m"),
            size("k"),
            array("A", &["n", "k"], Access::In),
            array("B", &["k", "m"], Access::In),
            array("C", &["n", "m"], Access::Out),
        ],
        ret: None,
        body: vec![Stmt::Store {
            target: Arc::from("C"),
            region: None,
            value: product,
        }],
    }
}

#[test]
fn gemm_does_two_n_m_k_flops_and_moves_each_matrix_once() {
    let at = sizes(&[("n", 30), ("m", 20), ("k", 10)]);
    let work = program_traffic(&gemm(), &at);
    assert_eq!(work.flops, 2.0 * 30.0 * 20.0 * 10.0);
    assert_eq!(work.bytes, 8.0 * (30.0 * 10.0 + 10.0 * 20.0 + 30.0 * 20.0));
}

#[test]
fn an_inout_array_is_read_and_written() {
    let mut p = gemm();
    if let ParamKind::Array { access, .. } = &mut p.params[5].kind {
        *access = Access::InOut;
    }
    let work = program_traffic(&p, &sizes(&[("n", 4), ("m", 4), ("k", 4)]));
    assert_eq!(work.bytes, 8.0 * 16.0 * 4.0);
}

fn limits() -> MachineLimits {
    MachineLimits {
        numpy_triad_bytes_per_s: 5e8,
        c_triad_bytes_per_s: 1e9,
        dgemm_flops_per_s: 1e10,
        sgemm_flops_per_s: 2e10,
        bandwidth_levels: Vec::new(),
    }
}

#[test]
fn data_that_fits_a_cache_is_bounded_by_its_bandwidth() {
    let mut l = limits();
    l.bandwidth_levels = vec![
        BandwidthLevel {
            working_set_bytes: 1e6,
            bytes_per_s: 1e10,
        },
        BandwidthLevel {
            working_set_bytes: 1e5,
            bytes_per_s: 5e10,
        },
    ];
    assert_eq!(l.bandwidth_for(5e4), 5e10);
    assert_eq!(l.bandwidth_for(5e5), 1e10);
    assert_eq!(l.bandwidth_for(5e8), 1e9, "memory's beyond every level");
}

#[test]
fn the_roofline_bound_is_the_slower_of_memory_and_arithmetic() {
    let square = sizes(&[("n", 100), ("m", 100), ("k", 100)]);
    // 2e6 flops at 1e10/s = 2e-4 s; 2.4e5 bytes at 1e9 B/s = 2.4e-4 s.
    let (bound, _) = roofline_bound(&limits(), &gemm(), &square);
    assert!((bound - 2.4e-4).abs() < 1e-12, "{bound}");
    let big = sizes(&[("n", 1000), ("m", 1000), ("k", 1000)]);
    // 2e9 flops: 0.2 s; 2.4e7 bytes: 0.024 s.
    let (bound, _) = roofline_bound(&limits(), &gemm(), &big);
    assert!((bound - 0.2).abs() < 1e-9, "{bound}");
}

/// Every kind at the same coefficients per target.
fn table(targets: &[(&str, f64, f64)]) -> CostTable {
    let mut t = CostTable::default();
    for &(name, call, s_per_flop) in targets {
        let c = Coefficients {
            overhead_s: 1e-6,
            s_per_flop,
            s_per_byte: 1e-10,
        };
        t.targets.insert(
            name.to_string(),
            TargetCosts {
                call_overhead_s: call,
                ops: OpKind::ALL.into_iter().map(|k| (k, c)).collect(),
                curves: BTreeMap::new(),
            },
        );
    }
    t
}

#[test]
fn a_prediction_is_the_call_plus_each_operation() {
    let t = table(&[("numpy", 2e-6, 1e-9)]);
    let at = sizes(&[("n", 10), ("m", 10), ("k", 10)]);
    let predicted = predict_target(&t, "numpy", &gemm(), &at).expect("numpy priced");
    // One matmul: 2000 flops, 300 elements moved at 8 bytes; dispatched
    // from Python, its own overhead (1 us) is raised to the call's (2 us).
    let expected = 2e-6 + 2e-6 + 2000.0 * 1e-9 + 2400.0 * 1e-10;
    assert!((predicted - expected).abs() < 1e-15, "{predicted}");
    assert_eq!(predict_target(&t, "jax", &gemm(), &at), None);
}

#[test]
fn each_trip_of_a_kept_loop_pays_at_least_a_call_per_operation() {
    // durbin's shape: a kept loop of many trips over short vectors, whose
    // operations a calibration on large arrays prices at 0 overhead.
    let text = "func f(n: size, x: inout f64[n]) {\n  for k in 1..n {\n    x[k] = add(x[k - 1], 1.0);\n  }\n}\n";
    let p = tenslift_targets::parse_program("t.tensir", text).expect("parses");
    let mut t = table(&[("numpy", 1e-6, 0.0)]);
    for c in t.targets.get_mut("numpy").expect("numpy").ops.values_mut() {
        c.overhead_s = 0.0;
    }
    let trips = 1000.0;
    let predicted = predict_target(&t, "numpy", &p, &sizes(&[("n", 1001)])).expect("priced");
    assert!(predicted >= 1e-6 + trips * 1e-6, "{predicted}");
}

#[test]
fn a_large_call_overhead_loses_small_programs_and_wins_large_ones() {
    // jax: 1 ms per call but 10x cheaper flops than numpy.
    let t = table(&[("numpy", 1e-6, 1e-9), ("jax", 1e-3, 1e-10)]);
    let small = sizes(&[("n", 10), ("m", 10), ("k", 10)]);
    let large = sizes(&[("n", 500), ("m", 500), ("k", 500)]);
    let pick = |at: &Sizes| choose(&t, &gemm(), at, &AUTO_TARGETS).expect("a choice").0;
    assert_eq!(pick(&small), "numpy");
    assert_eq!(pick(&large), "jax");
    let (_, predicted) = choose(&t, &gemm(), &small, &AUTO_TARGETS).expect("a choice");
    assert_eq!(predicted.keys().collect::<Vec<_>>(), ["jax", "numpy"]);
}

fn kernel_of(c: &str) -> loop_ir::Kernel {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("k.c");
    std::fs::write(&path, c).expect("write");
    let unit = tenslift_frontend::extract(&path.to_string_lossy(), &Options::default())
        .expect("the C extracts");
    unit.kernels.into_iter().next().expect("one kernel")
}

#[test]
fn the_c_triple_loop_is_a_matrix_product_and_a_vector_loop_streams() {
    let mm = kernel_of(
        "void mm(int n, int m, int k, double C[n][m], double A[n][k], double B[k][m]) {\n\
         for (int i = 0; i < n; i++)\n  for (int j = 0; j < m; j++)\n\
         for (int l = 0; l < k; l++)\n   C[i][j] += A[i][l] * B[l][j];\n}\n",
    );
    let work = c_work(&mm, &sizes(&[("n", 30), ("m", 20), ("k", 10)])).expect("bounds known");
    assert_eq!(work.matmul_flops, 2.0 * 30.0 * 20.0 * 10.0);
    assert_eq!((work.stream_bytes, work.reduce_flops), (0.0, 0.0));
    let axpy = kernel_of(
        "void axpy(int n, double a, double *x, double *y) {\n\
         for (int i = 0; i < n; i++) y[i] = a * x[i] + y[i];\n}\n",
    );
    let work = c_work(&axpy, &sizes(&[("n", 1000)])).expect("bounds known");
    // Reads x and y, writes y: 24 bytes per element.
    assert_eq!(work.stream_bytes, 24.0 * 1000.0);
    let rates = CRates {
        stream_s_per_byte: 1e-9,
        reduce_s_per_flop: 0.0,
        matmul_s_per_flop: 0.0,
    };
    assert!((work.seconds(&rates) - 2.4e-5).abs() < 1e-15);
    assert_eq!(c_work(&axpy, &Sizes::new()), None, "n has no value");
}

#[test]
fn the_built_in_table_prices_every_auto_target() {
    let t = builtin_table();
    let at = sizes(&[("n", 64), ("m", 64), ("k", 64)]);
    for target in AUTO_TARGETS {
        assert!(predict_target(&t, target, &gemm(), &at).is_some_and(|s| s > 0.0));
    }
}

fn parsed(text: &str) -> Program {
    tenslift_targets::parse_program("test.tensir", text).expect("a valid program")
}

/// jacobi-1d's shape: a kept time loop around element-wise statements.
const SMOOTHING: &str = "func smooth(tsteps: size, n: size, A: inout f64[n], B: inout f64[n]) {
  for t in 0..tsteps {
    B[1:n - 1] = mul(0.5, add(A[0:n - 2], A[2:n]));
    A[1:n - 1] = mul(0.5, add(B[0:n - 2], B[2:n]));
  }
}";

/// A loop whose slices grow with its variable (durbin's, gramschmidt's).
const GROWING: &str = "func grow(n: size, A: inout f64[n], B: f64[n]) {
  for k in 1..n {
    A[0:k] = mul(0.5, add(A[0:k], B[0:k]));
  }
}";

#[test]
fn xla_fuses_element_wise_chains_of_a_loop_that_keeps_its_shapes() {
    // The same coefficients for both: only fusion tells them apart.
    let t = table(&[("numpy", 1e-6, 1e-9), ("jax", 1e-6, 1e-9)]);
    let at = sizes(&[("tsteps", 100), ("n", 1000)]);
    let program = parsed(SMOOTHING);
    let numpy = predict_target(&t, "numpy", &program, &at).expect("numpy priced");
    let jax = predict_target(&t, "jax", &program, &at).expect("jax priced");
    // Per statement NumPy pays two dispatches and writes the sum before
    // scaling it; XLA reads the two slices and writes the result once.
    assert!(jax < numpy, "jax {jax} numpy {numpy}");
    assert_eq!(
        choose(&t, &program, &at, &AUTO_TARGETS)
            .expect("a choice")
            .0,
        "jax"
    );
}

#[test]
fn a_loop_whose_shapes_change_is_not_a_jax_candidate() {
    // JAX would unroll it while tracing: not priced, never chosen; NumPy
    // still is.
    let t = table(&[("numpy", 1e-6, 1e-9), ("jax", 1e-9, 1e-12)]);
    let at = sizes(&[("n", 1000)]);
    let program = parsed(GROWING);
    assert!(predict_target(&t, "numpy", &program, &at).is_some());
    assert_eq!(predict_target(&t, "jax", &program, &at), None);
    let (best, predicted) = choose(&t, &program, &at, &AUTO_TARGETS).expect("a choice");
    assert_eq!(best, "numpy");
    assert!(!predicted.contains_key("jax"));
}

#[test]
fn a_measured_curve_prices_its_kind_past_the_fitted_line() {
    // Both targets' fitted coefficients agree; numpy's timed products ran
    // at half the seconds: the curve decides.
    let mut t = table(&[("numpy", 1e-6, 1e-9), ("jax", 1e-6, 1e-9)]);
    let flops = |n: f64| 2.0 * n * n * n;
    let fast: Vec<[f64; 2]> = [100.0, 1000.0]
        .iter()
        .map(|&n| [flops(n), 0.5e-9 * flops(n)])
        .collect();
    if let Some(numpy) = t.targets.get_mut("numpy") {
        numpy.curves.insert(OpKind::Matmul, fast);
    }
    let at = sizes(&[("n", 500), ("m", 500), ("k", 500)]);
    let numpy = predict_target(&t, "numpy", &gemm(), &at).expect("numpy priced");
    let jax = predict_target(&t, "jax", &gemm(), &at).expect("jax priced");
    assert!(numpy < 0.6 * jax, "numpy {numpy} jax {jax}");
    let (best, _) = choose(&t, &gemm(), &at, &AUTO_TARGETS).expect("a choice");
    assert_eq!(best, "numpy");
}

/// floyd-warshall's shape: each trip updates a block of the matrix in place
/// (`P[0:k, 0:k]` of an n x n `P`), reading a column and a row beside it.
const QUADRANT: &str = "func quad(n: size, P: inout f64[n, n]) {
  for k in 1..n {
    P[0:k, 0:k] = minimum(P[0:k, 0:k], add(P[0:k, k:k + 1], P[k, 0:k]));
  }
}";

#[test]
fn a_block_of_a_wider_array_is_strided_and_a_row_or_whole_rows_are_not() {
    let program = parsed(QUADRANT);
    let at = sizes(&[("n", 100), ("k", 50)]);
    let mut views = Vec::new();
    for s in program.statements() {
        if let Stmt::Store { value, .. } = s {
            value.walk(&mut |node| {
                if matches!(node.op(), Op::Slice(_)) {
                    views.push((
                        tenslift_targets::print_expr(node),
                        is_strided_block(node, &at),
                    ));
                }
            });
        }
    }
    let strided: Vec<&str> = views.iter().filter(|v| v.1).map(|v| &*v.0).collect();
    // The block and the column beside it; the row `P[k, 0:k]` is contiguous.
    assert_eq!(views.len(), 3, "{views:?}");
    assert_eq!(strided.len(), 2, "{views:?}");
    assert!(strided.iter().all(|v| v.contains("0:k, ")), "{views:?}");
    let whole_rows = parsed(
        "func rows(n: size, A: inout f64[n, n]) {\n  A[1:n, 0:n] = mul(2.0, A[1:n, 0:n]);\n}",
    );
    let at = sizes(&[("n", 100)]);
    for s in whole_rows.statements() {
        if let Stmt::Store { value, .. } = s {
            value.walk(&mut |node| {
                assert!(
                    !is_strided_block(node, &at),
                    "{}",
                    tenslift_targets::print_expr(node)
                )
            });
        }
    }
}

#[test]
fn a_block_update_costs_what_its_measured_curve_says_in_numpy_only() {
    // Block updates measured 4x dearer per byte than contiguous ones in
    // NumPy; PyTorch's measured as its contiguous kinds price them.
    let mut t = table(&[("numpy", 1e-6, 1e-9), ("pytorch", 1e-6, 1e-9)]);
    let bytes = |n: f64| 24.0 * n * n;
    let slow: Vec<[f64; 2]> = [100.0, 1000.0]
        .iter()
        .map(|&n| [bytes(n), 4e-9 * bytes(n)])
        .collect();
    if let Some(numpy) = t.targets.get_mut("numpy") {
        numpy.curves.insert(OpKind::Region, slow);
    }
    let program = parsed(QUADRANT);
    let at = sizes(&[("n", 1000)]);
    let numpy = predict_target(&t, "numpy", &program, &at).expect("numpy priced");
    let torch = predict_target(&t, "pytorch", &program, &at).expect("pytorch priced");
    // The `minimum` reads the block; the `add` of a column and a row writes
    // a fresh contiguous temporary and stays at its own kind's cost.
    assert!(numpy > 2.0 * torch, "numpy {numpy} pytorch {torch}");
    assert_eq!(
        choose(&t, &program, &at, &["numpy", "pytorch"])
            .expect("a choice")
            .0,
        "pytorch"
    );
    // Without the curve the two price alike and the tie goes to NumPy.
    let plain = table(&[("numpy", 1e-6, 1e-9), ("pytorch", 1e-6, 1e-9)]);
    let (best, _) = choose(&plain, &program, &at, &["numpy", "pytorch"]).expect("a choice");
    assert_eq!(best, "numpy");
}
