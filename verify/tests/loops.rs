//! Unbounded proofs of partial lifts: programs that keep C loops as TensIR
//! `for` loops (tests/fixtures/partial, as `tenslift lift` printed them
//! for the PolyBench kernels) against the real kernels from the real
//! frontend; and wrong partial programs, which must be refuted.

mod common;

use tenslift_frontend::ir::Kernel;
use tenslift_targets::Program;
use tenslift_verify::unbounded::{prove, UnboundedOptions, UnboundedResult};

fn options() -> UnboundedOptions {
    UnboundedOptions { timeout_ms: 10_000 }
}

/// The partial program of fixture `name` and the C kernel its `source`
/// line names.
fn partial(name: &str) -> (Kernel, Program) {
    let program = common::program(&format!("partial/{name}"));
    let source = program
        .meta
        .source_file
        .clone()
        .unwrap_or_else(|| panic!("{name} names no source"));
    let kernel = common::kernel(&source, &program.name);
    (kernel, program)
}

fn short(r: &UnboundedResult) -> String {
    match r {
        UnboundedResult::Proved { conditions, .. } => format!("proved ({conditions} conditions)"),
        UnboundedResult::Unknown { condition, reason } => format!("unknown: {condition}: {reason}"),
        UnboundedResult::Failed { condition, .. } => format!("FAILED: {condition}"),
    }
}

fn proved(name: &str) -> Vec<String> {
    let (kernel, program) = partial(name);
    let started = std::time::Instant::now();
    let r = prove(&kernel, &program, &options());
    eprintln!(
        "[loops] {name}: {} ({:.0} ms)",
        short(&r),
        started.elapsed().as_secs_f64() * 1000.0
    );
    match r {
        UnboundedResult::Proved { invariants, .. } => invariants,
        other => panic!("{name} should be proved, got {}", short(&other)),
    }
}

#[test]
fn time_stepped_stencils_are_proved_by_simulating_the_time_loop() {
    for name in ["jacobi_1d", "jacobi_2d", "heat_3d", "fdtd_2d"] {
        let invariants = proved(name);
        assert!(
            invariants
                .iter()
                .any(|i| i.starts_with("kept loop `t`") && i.contains("induction on t")),
            "{name}: no invariant for the kept time loop in {invariants:?}"
        );
    }
}

#[test]
fn triangular_solvers_are_proved_with_bounds_on_outer_kept_loops() {
    for name in ["trisolv", "lu", "cholesky"] {
        let invariants = proved(name);
        assert!(
            invariants.iter().any(|i| i.starts_with("kept loop `i`")),
            "{name}: {invariants:?}"
        );
    }
}

#[test]
fn covariance_is_proved_with_two_kept_loops_after_lifted_statements() {
    let invariants = proved("covariance");
    assert!(invariants.iter().any(|i| i.starts_with("kept loop `j_2`")
        && i.contains("inside i_2 in 0..m")));
}
