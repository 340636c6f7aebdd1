//! Golden lifted TensIR programs (`tests/fixtures/lifted/`) against the
//! specs of their C kernels, extracted with the real frontend: each program
//! must compute exactly the C spec at the chosen sizes and at the second
//! size tuple, and deliberately wrong variants of them must be told apart.

mod tensir_spec_common;

use std::time::Instant;

use tensir_spec_common::{golden, load_golden, GOLDEN};
use tenslift::spec::spec_of_kernel;
use tenslift::spec::tensir::{check_program_against_kernel, equal_to_spec, execute, Comparison};

#[test]
fn every_golden_program_equals_its_c_spec_at_both_size_tuples() {
    let mut failures = Vec::new();
    for (stem, file) in GOLDEN {
        let g = load_golden(stem, file);
        for sizes in [&g.sizes, &g.second_sizes] {
            match check_program_against_kernel(&g.program, &g.kernel, sizes) {
                Ok(Comparison::Equal) => {}
                Ok(other) => failures.push(format!("{stem} at {sizes:?}: {other}")),
                Err(e) => failures.push(format!("{stem} at {sizes:?}: {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden programs differ from their C specs:\n{}",
        failures.len(),
        GOLDEN.len(),
        failures.join("\n")
    );
}

#[test]
fn the_sizes_differ_between_the_two_tuples() {
    let g = golden("gemm");
    assert_ne!(g.sizes, g.second_sizes);
}

#[test]
fn gemm_executes_quickly_at_spec_sizes() {
    let g = golden("gemm");
    let c_spec = spec_of_kernel(&g.kernel, &g.sizes).expect("C spec of gemm");
    let runs = 200;
    let start = Instant::now();
    for _ in 0..runs {
        let spec = execute(&g.program, &g.sizes).expect("gemm executes");
        assert!(equal_to_spec(&spec, &c_spec).is_equal());
    }
    let per_run = start.elapsed() / runs;
    eprintln!("gemm at {:?}: {per_run:?} per execute + compare", g.sizes);
    // Generous: a debug build on a shared machine; the point is that
    // candidates cost milliseconds, not seconds.
    assert!(per_run.as_millis() < 50, "{per_run:?} per execute");
}
