//! Unbounded proofs of partial lifts: programs that keep C loops as TensIR
//! `for` loops (tests/fixtures/partial, as `tenslift lift` printed them
//! for the PolyBench kernels) against the real kernels from the real
//! frontend; and wrong partial programs, which must be refuted.

mod common;

use tenslift_frontend::ir::Kernel;
use tenslift_targets::Program;
use tenslift_verify::unbounded::{prove, UnboundedOptions, UnboundedResult};

fn options() -> UnboundedOptions {
    UnboundedOptions {
        timeout_ms: 10_000,
        assume_in_domain: false,
    }
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
    assert!(invariants
        .iter()
        .any(|i| i.starts_with("kept loop `j_2`") && i.contains("inside i_2 in 0..m")));
}

/// Fixture `name` with `from` replaced by `to` (which must occur).
fn variant(name: &str, from: &str, to: &str) -> (Kernel, Program) {
    let (kernel, _) = partial(name);
    let path = common::crate_dir()
        .join("tests/fixtures/partial")
        .join(format!("{name}.tensir"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(text.contains(from), "{name} has no `{from}`");
    (kernel, common::program_text(&text.replacen(from, to, 1)))
}

/// A wrong partial program must be refuted, naming the failing condition.
fn refuted(kernel: &Kernel, program: &Program) -> String {
    let r = prove(kernel, program, &options());
    eprintln!("[loops] wrong {}: {}", program.name, short(&r));
    match r {
        UnboundedResult::Failed {
            condition,
            counterexample,
        } => {
            assert!(counterexample.is_some(), "no model for {condition}");
            condition
        }
        other => panic!("must be refuted, got {}", short(&other)),
    }
}

#[test]
fn wrong_shift_in_a_kept_loop_body_is_refuted() {
    let (kernel, program) = variant(
        "jacobi_1d",
        "A[1:n - 1] = mul(0.33333, add(add(B[0:n - 2]",
        "A[1:n - 1] = mul(0.33333, add(add(B[1:n - 1]",
    );
    let condition = refuted(&kernel, &program);
    assert!(
        condition.contains(" of loop i_1 (line 36), in statement 2 (line 36) of the body of kept loop `t` (line 33)"),
        "{condition}"
    );
}

#[test]
fn wrong_bound_of_a_kept_loop_is_refuted() {
    let (kernel, program) = variant("jacobi_1d", "for t in 0..tsteps", "for t in 0..tsteps - 1");
    let condition = refuted(&kernel, &program);
    assert!(
        condition.starts_with("bounds of kept loop `t`"),
        "{condition}"
    );
}

#[test]
fn wrong_triangular_bound_of_an_inner_kept_loop_is_refuted() {
    let (kernel, program) = variant("lu", "for j_1 in i..n", "for j_1 in i + 1..n");
    let condition = refuted(&kernel, &program);
    assert!(
        condition.starts_with("bounds of kept loop `j_1`"),
        "{condition}"
    );
}

/// A body right only for the first iteration (`_fict_[0]` for
/// `_fict_[t]`): the body proof must hold for every `t` in range.
#[test]
fn a_body_right_only_at_the_first_iteration_is_refuted() {
    let (kernel, program) = variant("fdtd_2d", "_fict_[t]", "_fict_[0]");
    let condition = refuted(&kernel, &program);
    assert!(
        condition.ends_with("in statement 1 (line 41) of the body of kept loop `t` (line 40)"),
        "{condition}"
    );
}

/// seidel-2d keeps `t`, `i` and `j`; a `let` bound before the `j` loop
/// reads row `i` as it was on entry, which the proof may only use where
/// the `j` loop's earlier iterations wrote nothing.
#[test]
fn seidel_is_proved_with_a_frame_for_the_let_before_the_j_loop() {
    let invariants = proved("seidel_2d");
    assert!(
        invariants
            .iter()
            .any(|i| i.starts_with("kept loop `j`") && i.contains("frame")),
        "{invariants:?}"
    );
}

/// The same program reading `A[i, j - 1]` through the `let` (its value on
/// entry to the `j` loop, before iteration `j - 1` overwrote it): wrong,
/// and only visible from n = 4 on, so a bounded check at small sizes
/// passes; the proof must not go through.
#[test]
fn a_let_reading_an_element_the_loop_already_overwrote_is_not_proved() {
    let (kernel, _) = partial("seidel_2d");
    let path = common::crate_dir().join("tests/fixtures/partial/seidel_2d.tensir");
    let text = std::fs::read_to_string(path).expect("seidel_2d fixture");
    let stale = text
        .replacen(
            "A[i, 1:n - 1]), A[i, 2:n])",
            "A[i, 0:n - 2]), A[i, 2:n])",
            1,
        )
        .replacen("div(A[i, j - 1], 9.0)", "div(A[i, j], 9.0)", 1);
    assert_ne!(stale, text);
    let r = prove(&kernel, &common::program_text(&stale), &options());
    eprintln!("[loops] stale seidel: {}", short(&r));
    assert!(
        !matches!(r, UnboundedResult::Proved { .. }),
        "{}",
        short(&r)
    );
}

/// covariance's centring statement reading the column means recomputed
/// rather than `mean`: equal to the C only after the C's first statement
/// (the means), so the statement-by-statement pairing fails and the two
/// statements are tried whole. The program is right, so it must never be
/// refuted; when the whole stretch is not proved either, the statement
/// whose pairing failed is named.
#[test]
fn a_statement_right_only_after_the_previous_one_is_never_refuted() {
    let (kernel, program) = variant(
        "covariance",
        "data[0:n, 0:m] = sub(data[0:n, 0:m], mean[0:m]);",
        "data[0:n, 0:m] = sub(data[0:n, 0:m], div(sum(data[0:n, 0:m], axes=[0]), float_n));",
    );
    let r = prove(&kernel, &program, &options());
    eprintln!(
        "[loops] covariance centring on recomputed means: {}",
        short(&r)
    );
    match r {
        UnboundedResult::Proved { .. } => {}
        UnboundedResult::Unknown { condition, .. } => {
            assert!(
                condition.ends_with("in statement 2 (line 52) of the kernel"),
                "{condition}"
            )
        }
        other => panic!("a right program was refuted: {}", short(&other)),
    }
}

/// durbin keeps `alpha`, `beta` (carried from one `k` iteration to the
/// next), `sum` and `z[n]` as `var`s with the C locals' names: each pair
/// joins the state the simulation compares.
#[test]
fn durbin_is_proved_with_its_locals_paired_with_the_programs_vars() {
    let invariants = proved("durbin");
    let line = invariants
        .iter()
        .find(|i| i.contains("equal the C's locals of the same names"))
        .unwrap_or_else(|| panic!("no invariant for the paired locals in {invariants:?}"));
    for name in ["`alpha`", "`beta`", "`sum`", "`z`"] {
        assert!(line.contains(name), "{name} is not paired: {line}");
    }
}

/// gramschmidt's `nrm` is set at the top of every `k` iteration before it
/// is read: the `var` carries nothing between segments, so the proof takes
/// it as the program's own, at any value on entry.
#[test]
fn gramschmidt_is_proved_with_nrm_as_the_programs_own_local() {
    let invariants = proved("gramschmidt");
    assert!(
        invariants
            .iter()
            .any(|i| i.contains("own locals `nrm` carry nothing between segments")),
        "{invariants:?}"
    );
}

/// A paired scalar stored wrong (`y[k]` gets `beta`, not `alpha`) is
/// refuted, like an array.
#[test]
fn a_wrong_value_from_a_paired_local_is_refuted() {
    let (kernel, program) = variant("durbin", "y[k] = alpha;", "y[k] = beta;");
    let condition = refuted(&kernel, &program);
    assert!(
        condition.contains("of the body of kept loop `k`"),
        "{condition}"
    );
}

/// A hand-written partial program (tests/fixtures/partial/colscale) whose
/// `var acc` is reset at the top of every iteration, as gramschmidt's `nrm`.
/// Proved statement by statement, where the accumulation reads `acc` on
/// entry, so `acc` is paired with the C's local.
#[test]
fn a_var_reset_in_every_iteration_is_proved() {
    let invariants = proved("colscale");
    assert!(
        invariants
            .iter()
            .any(|i| i.contains("locals `acc` equal the C's locals")),
        "{invariants:?}"
    );
}

/// With its reset moved before the loop, the program's `acc` accumulates
/// over every earlier column: the proof takes the program's own `var` at
/// any value on entry, so the body is refuted (and the bounded check,
/// which runs the whole loop, confirms it).
#[test]
fn a_var_that_carries_a_stale_value_is_refuted() {
    let (kernel, program) = variant(
        "colscale",
        "  for j in 0..n {\n    acc = 0.0;\n",
        "  acc = 0.0;\n  for j in 0..n {\n",
    );
    let condition = refuted(&kernel, &program);
    assert!(
        condition.contains("of the body of kept loop `j`"),
        "{condition}"
    );
}

/// A paired scalar that a segment leaves stale for the next (`beta` no
/// longer updated, so the next iteration reads last iteration's value on
/// the C side only) is not proved.
#[test]
fn a_paired_local_the_program_forgets_to_update_is_not_proved() {
    let (kernel, program) = variant(
        "durbin",
        "    beta = mul(sub(1.0, mul(alpha, alpha)), beta);\n",
        "",
    );
    let r = prove(&kernel, &program, &options());
    eprintln!("[loops] durbin without the beta update: {}", short(&r));
    assert!(
        !matches!(r, UnboundedResult::Proved { .. }),
        "{}",
        short(&r)
    );
}

/// A solver operation and the C kernel of the distributed PolyBench file
/// its `source` line names (MINI dataset).
fn solver_op(name: &str) -> (Kernel, Program) {
    let program = common::program(&format!("solver_ops/{name}"));
    let source = program.meta.source_file.clone().unwrap_or_default();
    (common::kernel(&source, &program.name), program)
}

/// `lu_nopivot` and `cholesky` in place, as `tenslift lift` prints them for
/// the distributed PolyBench files, are proved through their defining
/// loops (simulated against the C's rows), where unfolding the recurrence
/// per element is too large a query.
#[test]
fn in_place_factorisations_are_proved_through_their_defining_loops() {
    for (name, op) in [("lu_dist", "lu_nopivot"), ("cholesky_dist", "cholesky")] {
        let (kernel, program) = solver_op(name);
        let r = prove(&kernel, &program, &options());
        eprintln!("[loops] {name}: {}", short(&r));
        let UnboundedResult::Proved { invariants, .. } = r else {
            panic!("{name} should be proved, got {}", short(&r))
        };
        assert!(
            invariants[0].contains(&format!("is `{op}`'s defining recurrence written as loops")),
            "{invariants:?}"
        );
    }
}

/// The LU program held against the Cholesky kernel: the expansion takes
/// the C's loop names but the bodies differ, so it is not proved.
#[test]
fn a_factorisation_of_the_wrong_kind_is_not_proved() {
    let (kernel, _) = solver_op("cholesky_dist");
    let (_, lu) = solver_op("lu_dist");
    let text = tenslift_targets::print_program(&lu).replace("kernel_lu", "kernel_cholesky");
    let r = prove(&kernel, &common::program_text(&text), &options());
    eprintln!("[loops] lu against cholesky: {}", short(&r));
    assert!(
        !matches!(r, UnboundedResult::Proved { .. }),
        "{}",
        short(&r)
    );
}
