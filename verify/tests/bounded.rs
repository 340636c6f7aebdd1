//! Bounded checks of hand-written TensIR programs (tests/fixtures) against
//! real corpus kernels extracted by the real frontend. Correct programs must
//! pass; each deliberately wrong one must fail with a counterexample that
//! really distinguishes the two sides, which these tests confirm on their
//! own by running the C (the concrete loop-IR interpreter) and the program
//! (the TensIR reference interpreter) on it.

mod common;

use std::time::Instant;

use common::{kernel, program, sizes};
use tenslift_frontend::ir::Kernel;
use tenslift_targets::interp::{self, Array};
use tenslift_targets::{DType, Program};
use tenslift_verify::bounded::{check, BoundedOptions};
use tenslift_verify::concrete::run_kernel;
use tenslift_verify::{BoundedResult, Counterexample, Difference};

/// Runs a check and prints its timing (`--nocapture` shows them; speed is
/// reported, not asserted, so a loaded machine cannot fail the suite).
fn run(k: &Kernel, fixture: &str, s: &[(&str, i64)]) -> BoundedResult {
    let started = Instant::now();
    let result = check(k, &program(fixture), &sizes(s), &BoundedOptions::default())
        .unwrap_or_else(|e| panic!("{fixture}: {e}"));
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "[timing] {fixture}: {:.0} ms, {} solver calls\n{result}",
        seconds * 1000.0,
        result.stats().solver_calls
    );
    result
}

fn assert_pass(k: &Kernel, fixture: &str, s: &[(&str, i64)]) -> String {
    match run(k, fixture, s) {
        BoundedResult::Pass { summary, .. } => summary,
        other => panic!("{fixture} should pass:\n{other}"),
    }
}

/// Asserts a failure and confirms its counterexample independently.
fn assert_fail(k: &Kernel, fixture: &str, s: &[(&str, i64)]) -> Counterexample {
    let cex = match run(k, fixture, s) {
        BoundedResult::Fail { counterexample, .. } => *counterexample,
        other => panic!("{fixture} should fail:\n{other}"),
    };
    confirm(k, &program(fixture), &cex);
    cex
}

fn element(a: &Array, i: usize) -> f64 {
    a.get_f64(i)
}

fn distinct(c: f64, p: f64, dtype: DType) -> bool {
    if c.is_nan() || p.is_nan() {
        return c.is_nan() != p.is_nan();
    }
    if c == p {
        return false;
    }
    if c.is_infinite() || p.is_infinite() {
        return true;
    }
    let tolerance = if dtype == DType::F32 { 1e-5 } else { 1e-9 };
    (c - p).abs() > tolerance * c.abs().max(p.abs()).max(1.0)
}

/// Runs both sides on the counterexample and asserts that they really part
/// where the counterexample says.
fn confirm(k: &Kernel, p: &Program, cex: &Counterexample) {
    let args = cex.program_args();
    let c_run = run_kernel(k, &cex.sizes, &args);
    let p_run = interp::run(p, &cex.size_args(), &args);
    match &cex.difference {
        Difference::Element { array, index, .. } => {
            let c_run = c_run.unwrap_or_else(|e| panic!("C on the counterexample: {e}"));
            let p_run = p_run.unwrap_or_else(|e| panic!("program on the counterexample: {e}"));
            let shape = &args[array].shape;
            let flat = index.iter().zip(shape).fold(0, |acc, (i, n)| acc * n + i);
            let (c, q) = (
                element(&c_run.arrays[array], flat),
                element(&p_run.arrays[array], flat),
            );
            assert!(
                distinct(c, q, args[array].dtype),
                "{array}{index:?}: C {c} and program {q} agree on the counterexample"
            );
        }
        Difference::Returned { .. } => {
            let c = c_run.expect("C runs").returned.expect("C returns");
            let q = p_run
                .expect("program runs")
                .returned
                .expect("program returns");
            assert!(
                distinct(element(&c, 0), element(&q, 0), c.dtype),
                "returned values agree on the counterexample"
            );
        }
        Difference::Scalar { name, .. } => {
            let c = c_run.expect("C runs").scalars[name].get_f64(0);
            let q = p_run.expect("program runs").arrays[name].get_f64(0);
            assert!(distinct(c, q, args[name].dtype));
        }
        Difference::ProgramError { .. } => {
            assert!(c_run.is_ok(), "the C should run on the counterexample");
            assert!(
                p_run.is_err(),
                "the program should fail on the counterexample"
            );
        }
    }
    let replay = cex
        .replay
        .as_ref()
        .expect("the checker replays counterexamples");
    assert!(
        replay.differs,
        "the checker's own replay should confirm: {cex}"
    );
}

fn input<'a>(cex: &'a Counterexample, name: &str) -> &'a [tenslift_verify::Value] {
    &cex.inputs[name].values
}

#[test]
fn polybench_gemm_passes_and_a_missing_scale_factor_fails() {
    let k = kernel("benchmarks/polybench/gemm.c", "kernel_gemm");
    let s = [("ni", 3), ("nj", 4), ("nk", 5)];
    let summary = assert_pass(&k, "gemm", &s);
    assert!(
        summary.contains("over the reals at sizes ni=3, nj=4, nk=5"),
        "{summary}"
    );
    let cex = assert_fail(&k, "gemm_no_alpha", &s);
    // Without alpha the program can only be wrong when alpha is not 1.
    assert_ne!(input(&cex, "alpha")[0].as_f64(), 1.0);
}

#[test]
fn polybench_atax_with_its_temporary_passes() {
    let k = kernel("benchmarks/polybench/atax.c", "kernel_atax");
    assert_pass(&k, "atax", &[("m", 3), ("n", 4)]);
}

#[test]
fn polybench_syrk_lower_triangle_passes_and_dropping_the_diagonal_fails() {
    let k = kernel("benchmarks/polybench/syrk.c", "kernel_syrk");
    let s = [("n", 4), ("m", 3)];
    assert_pass(&k, "syrk", &s);
    let cex = assert_fail(&k, "syrk_strict_lower", &s);
    match &cex.difference {
        Difference::Element { array, index, .. } => {
            assert_eq!(array, "C");
            assert_eq!(
                index[0], index[1],
                "the first difference is on the diagonal"
            );
        }
        other => panic!("unexpected difference {other:?}"),
    }
}

#[test]
fn polybench_covariance_passes_and_a_missing_normalisation_fails() {
    let k = kernel("benchmarks/polybench/covariance.c", "kernel_covariance");
    let s = [("m", 3), ("n", 4)];
    assert_pass(&k, "covariance", &s);
    let cex = assert_fail(&k, "covariance_no_scale", &s);
    assert!(matches!(&cex.difference, Difference::Element { array, .. } if array == "cov"));
}

#[test]
fn polybench_mvt_wrong_axis_and_swapped_indices_fail() {
    let k = kernel("benchmarks/polybench/mvt.c", "kernel_mvt");
    let s = [("n", 3)];
    assert_pass(&k, "mvt", &s);
    let cex = assert_fail(&k, "mvt_wrong_axis", &s);
    assert!(matches!(&cex.difference, Difference::Element { array, .. } if array == "x1"));
    let cex = assert_fail(&k, "mvt_swapped_indices", &s);
    assert!(matches!(&cex.difference, Difference::Element { array, .. } if array == "x2"));
}

#[test]
fn blas_dot_returned_scalar_passes_and_a_shifted_slice_fails() {
    let k = kernel("benchmarks/blas/dot.c", "dot");
    let s = [("n", 5)];
    assert_pass(&k, "dot", &s);
    let cex = assert_fail(&k, "dot_shifted", &s);
    assert!(matches!(cex.difference, Difference::Returned { .. }));
}

#[test]
fn darknet_gemm_nt_with_leading_dimensions_passes_and_an_untransposed_operand_fails() {
    let k = kernel("benchmarks/darknet/gemm_nt.c", "gemm_nt");
    // Leading dimensions larger than the rows the loops touch.
    let s = [
        ("m", 2),
        ("n", 4),
        ("k", 3),
        ("lda", 5),
        ("ldb", 6),
        ("ldc", 7),
    ];
    assert_pass(&k, "gemm_nt", &s);
    let cex = assert_fail(&k, "gemm_nt_untransposed", &s);
    assert!(matches!(&cex.difference, Difference::Element { array, .. } if array == "C"));
}

#[test]
fn blend_color_burn_passes_and_an_unguarded_division_fails() {
    let k = kernel("benchmarks/blend/color_burn_8.c", "color_burn_8");
    let s = [("m", 2), ("n", 3)];
    let summary = assert_pass(&k, "color_burn_8", &s);
    assert!(summary.contains("C integer semantics"), "{summary}");
    let cex = assert_fail(&k, "color_burn_8_unsafe", &s);
    assert!(matches!(cex.difference, Difference::ProgramError { .. }));
    // The program divides by a zero active pixel, which the C never does.
    assert!(input(&cex, "active").contains(&tenslift_verify::Value::Int(0)));
}

#[test]
fn blend_multiply_passes_and_dividing_by_256_fails() {
    let k = kernel("benchmarks/blend/multiply_blend_8.c", "multiply_blend_8");
    let s = [("m", 2), ("n", 3)];
    assert_pass(&k, "multiply_blend_8", &s);
    assert_fail(&k, "multiply_blend_8_by_256", &s);
}

#[test]
fn a_u8_sum_that_wraps_passes_and_dropping_the_wrap_fails() {
    let k = kernel("verify/tests/fixtures/half_sum_u8.c", "half_sum_u8");
    let s = [("n", 3)];
    assert_pass(&k, "half_sum_u8", &s);
    let cex = assert_fail(&k, "half_sum_u8_no_wrap", &s);
    let Difference::Element { index, .. } = &cex.difference else {
        panic!("unexpected difference {:?}", cex.difference);
    };
    let (a, b) = (&input(&cex, "a")[index[0]], &input(&cex, "b")[index[0]]);
    assert!(
        a.as_f64() + b.as_f64() >= 256.0,
        "only a wrapped sum differs"
    );
}

#[test]
fn c_division_passes_and_floor_division_fails_on_negative_operands() {
    let k = kernel("verify/tests/fixtures/quot_rem.c", "quot_rem");
    let s = [("n", 2)];
    assert_pass(&k, "quot_rem", &s);
    let cex = assert_fail(&k, "quot_rem_floor", &s);
    let Difference::Element { index, .. } = &cex.difference else {
        panic!("unexpected difference {:?}", cex.difference);
    };
    let (a, d) = (
        input(&cex, "a")[index[0]].as_f64(),
        input(&cex, "d")[index[0]].as_f64(),
    );
    assert!(
        a * d < 0.0,
        "floor and truncation only differ when the signs differ"
    );
}

#[test]
fn llama_softmax_max_with_a_data_if_passes_and_skipping_x0_fails() {
    let k = kernel("benchmarks/llama/softmax_part1.c", "softmax_part1");
    let s = [("size", 4)];
    assert_pass(&k, "softmax_part1", &s);
    let cex = assert_fail(&k, "softmax_part1_skip_first", &s);
    let x = input(&cex, "x");
    assert!(
        x[1..].iter().all(|v| v.as_f64() < x[0].as_f64()),
        "only a strict maximum at x[0] is missed"
    );
}

#[test]
fn llama_softmax_exp_matches_structurally_and_a_flipped_shift_fails() {
    let k = kernel("benchmarks/llama/softmax_part2.c", "softmax_part2");
    let s = [("size", 3)];
    assert_pass(&k, "softmax_part2", &s);
    assert_fail(&k, "softmax_part2_flipped", &s);
}

#[test]
fn an_exp_identity_the_solver_cannot_see_is_unknown_not_fail() {
    let k = kernel("benchmarks/llama/softmax_part2.c", "softmax_part2");
    match run(&k, "softmax_part2_quotient", &[("size", 3)]) {
        BoundedResult::Unknown {
            reason, candidate, ..
        } => {
            assert!(reason.contains("uninterpreted"), "{reason}");
            let replay = candidate
                .and_then(|c| c.replay)
                .expect("the candidate was replayed");
            assert!(!replay.differs);
        }
        other => panic!("expected unknown, got:\n{other}"),
    }
}

#[test]
fn stenso_diag_dot_with_a_local_temporary_passes_two_ways() {
    let k = kernel("benchmarks/stenso/diag_dot.c", "diag_dot");
    let s = [("n", 3), ("k", 4)];
    assert_pass(&k, "diag_dot", &s);
    assert_pass(&k, "diag_dot_transposed", &s);
}

#[test]
fn stenso_euclidian_dist_pow_two_equals_a_product() {
    let k = kernel("benchmarks/stenso/euclidian_dist.c", "euclidian_dist");
    assert_pass(&k, "euclidian_dist", &[("n", 3), ("m", 4)]);
}

#[test]
fn stenso_power_neg_is_a_quotient_and_the_inverse_square_fails() {
    let k = kernel("benchmarks/stenso/power_neg.c", "power_neg");
    let s = [("n", 2), ("m", 3)];
    assert_pass(&k, "power_neg", &s);
    let cex = assert_fail(&k, "power_neg_squared", &s);
    let Difference::Element { index, .. } = &cex.difference else {
        panic!("unexpected difference {:?}", cex.difference);
    };
    let a = input(&cex, "A")[index[0] * 3 + index[1]].as_f64();
    assert!(a != 1.0 && a != -1.0, "1/a and 1/a² differ at {a}");
}

#[test]
fn fourth_power_in_place_passes_without_wrap_around_and_the_cube_fails() {
    let k = kernel(
        "benchmarks/simpl_array/fourth_in_place.c",
        "fourth_in_place",
    );
    let s = [("n", 3)];
    assert_pass(&k, "fourth_in_place", &s);
    let cex = assert_fail(&k, "fourth_in_place_cube", &s);
    let Difference::Element { index, .. } = &cex.difference else {
        panic!("unexpected difference {:?}", cex.difference);
    };
    let x = input(&cex, "arr")[index[0]].as_f64();
    assert!(
        x != 0.0 && x != 1.0 && x.abs() <= 215.0,
        "x^4 is defined in C and differs from x^3 at {x}"
    );
}

#[test]
fn a_global_the_c_updates_is_compared_as_a_scalar() {
    let k = kernel("verify/tests/fixtures/accumulate_global.c", "accumulate");
    let s = [("n", 4)];
    assert_pass(&k, "accumulate_global", &s);
    let cex = assert_fail(&k, "accumulate_global_reset", &s);
    assert!(matches!(&cex.difference, Difference::Scalar { name, .. } if name == "total"));
    assert_ne!(input(&cex, "total")[0].as_f64(), 0.0);
}

#[test]
fn signed_overflow_is_undefined_so_only_defined_inputs_are_compared() {
    let k = kernel("verify/tests/fixtures/scale_i32.c", "scale_i32");
    let s = [("n", 3)];
    assert_pass(&k, "scale_i32", &s);
    // Would differ from a wrapping C on overflowing inputs, but C has none.
    assert_pass(&k, "scale_i32_saturating", &s);
    let cex = assert_fail(&k, "scale_i32_plus_one", &s);
    let Difference::Element { index, .. } = &cex.difference else {
        panic!("unexpected difference {:?}", cex.difference);
    };
    let product = input(&cex, "x")[index[0]].as_f64() * input(&cex, "k")[0].as_f64();
    assert!(
        product.abs() < 2147483648.0,
        "the counterexample is defined in C"
    );
}

#[test]
fn polybench_trisolv_as_a_kept_loop_passes_and_reading_b_for_x_fails() {
    let k = kernel("benchmarks/polybench/trisolv.c", "kernel_trisolv");
    let s = [("n", 4)];
    assert_pass(&k, "trisolv", &s);
    let cex = assert_fail(&k, "trisolv_reads_b", &s);
    assert!(matches!(cex.difference, Difference::Element { ref array, .. } if array == "x"));
}

#[test]
fn polybench_jacobi_1d_time_loop_passes_and_one_step_short_fails() {
    let k = kernel("benchmarks/polybench/jacobi-1d.c", "kernel_jacobi_1d");
    let s = [("tsteps", 2), ("n", 5)];
    assert_pass(&k, "jacobi_1d", &s);
    assert_fail(&k, "jacobi_1d_one_step_short", &s);
}

/// llama's scores of one head with the query scaled before the product:
/// `sqrt(5)` is one constant on both sides, so Z3 decides the reordered
/// quotient at once; the root of the wrong size is a real difference.
#[test]
fn llama_attention_scores_scaled_before_the_product_pass_and_a_wrong_root_fails() {
    let k = kernel("benchmarks/llama/transformer_part1.c", "transformer_part1");
    let s = [("pos", 3), ("head", 2), ("head_size", 5), ("kv_dim", 17)];
    assert_pass(&k, "attention_scores_scaled_query", &s);
    let wrong = run(&k, "attention_scores_wrong_root", &s);
    assert!(
        !matches!(wrong, BoundedResult::Pass { .. }),
        "sqrt(kv_dim) must not pass for sqrt(head_size):\n{wrong}"
    );
}

/// heat-3d as distributed, six time steps: every element is a linear
/// combination of the inputs, but as Z3 terms the two sides are deep DAGs
/// that Z3's arithmetic solver could not equate within 30 s. Their linear
/// normal forms are equal, so no solver call is needed; a stencil that reads
/// one neighbour twice has different forms and the solver refutes it.
#[test]
fn heat_3d_six_steps_pass_by_linear_normal_form_and_a_doubled_neighbour_fails() {
    let k = kernel(
        "benchmarks/polybench-dist/stencils/heat-3d/heat-3d.c",
        "kernel_heat_3d",
    );
    let s = [("tsteps", 6), ("n", 5), ("ext_10", 7)];
    let result = run(&k, "heat_3d_dist", &s);
    let stats = result.stats().clone();
    assert!(
        matches!(result, BoundedResult::Pass { .. }),
        "heat-3d should pass:\n{result}"
    );
    assert!(stats.normalised > 0, "{stats:?}");
    assert_eq!(stats.solver_calls, 0, "{stats:?}");
    assert_fail(&k, "heat_3d_dist_neighbour_twice", &s);
}

/// Isolated checks (each real query decided in a `z3` child first, as for a
/// user's `--program`) reach the same verdicts: the right gemm passes, the
/// wrong one fails with a counterexample the interpreters confirm (the
/// model comes from asking this process again).
#[test]
fn isolated_checks_give_the_same_verdicts() {
    let k = kernel("benchmarks/polybench/gemm.c", "kernel_gemm");
    let s = sizes(&[("ni", 3), ("nj", 4), ("nk", 5)]);
    let options = BoundedOptions {
        isolated: true,
        ..BoundedOptions::default()
    };
    let right = check(&k, &program("gemm"), &s, &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(right, BoundedResult::Pass { .. }), "{right}");
    let wrong = program("gemm_no_alpha");
    match check(&k, &wrong, &s, &options).unwrap_or_else(|e| panic!("{e}")) {
        BoundedResult::Fail { counterexample, .. } => confirm(&k, &wrong, &counterexample),
        other => panic!("gemm_no_alpha should fail:\n{other}"),
    }
}

/// floyd-warshall's min-plus updates nest `n` levels deep; the C's
/// `a < b ? a : b` and the program's `minimum` are one term, so the
/// bounded query stays small and is decided (it ran out of budget while
/// `minimum` compared with `<=`). Reading the row one column to the left
/// is a real difference.
#[test]
fn polybench_floyd_warshall_passes_and_a_shifted_row_fails() {
    let k = kernel(
        "benchmarks/polybench/floyd-warshall.c",
        "kernel_floyd_warshall",
    );
    let s = [("n", 3)];
    assert_pass(&k, "floyd_warshall", &s);
    assert_fail(&k, "floyd_warshall_shifted", &s);
}
