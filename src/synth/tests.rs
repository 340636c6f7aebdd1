//! The driver end to end on small kernels.

use std::time::{Duration, Instant};

use tenslift_frontend::ir::Kernel;
use tenslift_targets::print_program;

use super::*;
use crate::spec::examples;
use crate::spec::tensir::check_program_at_both_sizes;

fn whole(outcome: &Outcome) -> &Lifted {
    outcome.whole.as_ref().expect("a whole attempt")
}

#[test]
fn gemm_is_lifted_and_the_program_passes_both_size_tuples() {
    let kernel = examples::gemm();
    let outcome = lift_kernel(&kernel, &SynthOptions::default());
    let lifted = whole(&outcome);
    assert!(lifted.error.is_none(), "{:?}", lifted.error);
    let program = lifted.program.as_ref().expect("a program");
    let text = print_program(program);
    // The product of A and B (with alpha folded into either factor).
    assert!(text.contains("matmul("), "{text}");
    assert!(lifted.cost > 0.0);
    assert!(lifted.stats.steps > 0 && lifted.stats.stubs > 0 && lifted.stats.work > 0);
    let (outcome, _) = check_program_at_both_sizes(program, &kernel).expect("check");
    assert!(outcome.is_equal());
}

#[test]
fn best_mode_is_never_costlier_than_first_mode() {
    let kernel = examples::gemm();
    let first = SynthOptions {
        first: true,
        ..SynthOptions::default()
    };
    let first = lift_kernel(&kernel, &first);
    let best = lift_kernel(&kernel, &SynthOptions::default());
    let (first, best) = (whole(&first), whole(&best));
    assert!(first.program.is_some() && best.program.is_some());
    assert!(
        best.cost <= first.cost,
        "best {} first {}",
        best.cost,
        first.cost
    );
}

fn corpus_kernel(file: &str) -> Kernel {
    let path = format!("{}/benchmarks/{file}", env!("CARGO_MANIFEST_DIR"));
    let unit = tenslift_frontend::extract(&path, &tenslift_frontend::Options::default())
        .expect("extracts");
    unit.kernels.into_iter().next().expect("one kernel")
}

#[test]
fn diag_dot_gets_stensos_quadratic_program_every_time() {
    let kernel = corpus_kernel("stenso/diag_dot.c");
    let runs: Vec<Outcome> = (0..2)
        .map(|_| lift_kernel(&kernel, &SynthOptions::default()))
        .collect();
    let texts: Vec<String> = runs
        .iter()
        .map(|r| print_program(r.program().expect("diag_dot lifts")))
        .collect();
    // Parallel workers finish in any order; the program must not change.
    assert_eq!(texts[0], texts[1]);
    assert!(!texts[0].contains("matmul"), "{}", texts[0]);
    assert_eq!(whole(&runs[0]).complexity, Some(2), "{}", texts[0]);
}

#[test]
fn the_same_kernel_gives_the_same_statistics_and_trace() {
    let kernel = corpus_kernel("polybench/atax.c");
    let a = lift_kernel(&kernel, &SynthOptions::default());
    let b = lift_kernel(&kernel, &SynthOptions::default());
    assert_eq!(whole(&a).stats, whole(&b).stats);
    assert_eq!(a.trace, b.trace);
}

#[test]
fn a_work_limit_stops_the_search_with_a_reason_not_a_timeout() {
    let kernel = examples::three_mm();
    let options = SynthOptions {
        limits: Limits {
            library_evaluations: 50,
            search_work: 10,
            ..Limits::default()
        },
        ..SynthOptions::default()
    };
    let outcome = lift_kernel(&kernel, &options);
    assert!(outcome.program().is_none());
    let error = outcome.error().expect("an error").to_string();
    assert!(error.starts_with("no program found for output"), "{error}");
    assert!(error.contains("enumerative"), "{error}");
    let explained = outcome.trace.render("kernel_3mm");
    assert!(explained.contains("per-output"), "{explained}");
}

#[test]
fn an_exhausted_deadline_is_a_timeout_not_a_hang() {
    let kernel = examples::three_mm();
    let start = Instant::now();
    let outcome = lift_kernel(
        &kernel,
        &SynthOptions {
            timeout: Duration::from_millis(1),
            ..SynthOptions::default()
        },
    );
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(outcome.program().is_none());
    assert!(
        matches!(outcome.error(), Some(SynthError::Timeout(_))),
        "{:?}",
        outcome.error()
    );
}

/// llm.c's linear layer, `y = x @ w.T + bias` over rows of a size other
/// than the product's: the bias repeats along the rows, so it is its own
/// row broadcast (it was no program at all, or `x - (x - bias)` for a
/// square product, which rounds a small bias away).
#[test]
fn a_bias_added_to_every_row_of_a_product_is_broadcast_from_its_row() {
    let path = format!(
        "{}/tests/fixtures/probe/matmul_bias2.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let unit = tenslift_frontend::extract(&path, &tenslift_frontend::Options::default())
        .expect("extracts");
    let kernel = unit.kernels.into_iter().next().expect("one kernel");
    let outcome = lift_kernel(&kernel, &SynthOptions::default());
    let lifted = whole(&outcome);
    assert!(lifted.error.is_none(), "{:?}", lifted.error);
    let text = print_program(lifted.program.as_ref().expect("a program"));
    assert!(text.contains("bias") && !text.contains("sub("), "{text}");
}

#[test]
fn a_target_repeated_along_leading_axes_offers_each_trailing_block() {
    use crate::algebra::Tensor;
    let b = Tensor::of_symbols("b", &[8], false);
    let row = |i: usize| b.elems()[i].clone();
    // [2, 3, 4]: every (i, j) holds the same row of 4; the [3, 4] block
    // repeats along the first axis too.
    let t = Tensor::from_fn(&[2, 3, 4], |ix| row(ix[2]));
    let blocks = super::search::repeated_blocks(&t);
    let shapes: Vec<Vec<usize>> = blocks.iter().map(|b| b.shape().to_vec()).collect();
    assert_eq!(shapes, vec![vec![3, 4], vec![4]]);
    // A target whose rows differ repeats nothing.
    let varied = Tensor::from_fn(&[2, 4], |ix| row(ix[0] * 4 + ix[1]));
    assert!(super::search::repeated_blocks(&varied).is_empty());
}
