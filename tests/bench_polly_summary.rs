//! summary.md's Polly figures stand only on Polly variants that transformed
//! the kernel: the "vs best Polly" geomean, the per-kernel column and the
//! "Polly per kernel" table, snapshotted from one runtime.csv that holds
//! every case (transformed, not transformed with a reason, analysis failed,
//! a transformed variant that timed out, no Polly row at all).

use tenslift::bench::csv::parse;
use tenslift::bench::summary::{render, RunInfo};

const RUNTIME: &str = "\
kernel,suite,variant,dataset,median_s,status,note,polly_transformed,polly_what
gemm,pb,gcc,L,8,ok,,,
gemm,pb,polly,L,2,ok,,yes,scop+rescheduled+tiled+matmul-pattern+codegen
gemm,pb,polly-parallel,L,1,ok,,no,SCoP kept its schedule (only versioned)
gemm,pb,numpy,L,0.5,ok,,,
chase,pb,gcc,L,4,ok,,,
chase,pb,polly,L,0.1,ok,,no,no SCoP: Failed to derive an affine function from the loop bounds.
chase,pb,polly-parallel,L,0.1,ok,,unknown,Polly analysis failed
chase,pb,numpy,L,2,ok,,,
jacobi,pb,gcc,L,6,ok,,,
jacobi,pb,polly,L,3,ok,,yes,scop+rescheduled+stripmined+codegen
jacobi,pb,polly-parallel,L,,timeout,over 60 s,yes,scop+rescheduled+tiled+parallel+codegen
jacobi,pb,numpy,L,1,ok,,,
dot,blas,gcc,L,1,ok,,,
dot,blas,numpy,L,0.5,ok,,,
";

fn summary() -> String {
    let lift = parse("kernel,suite,status,time_s\n").expect("lift.csv");
    let runtime = parse(RUNTIME).expect("runtime.csv");
    let info = RunInfo {
        command: "tenslift bench --suite polybench-dist".into(),
        dataset: "LARGE".into(),
        ..RunInfo::default()
    };
    render(&info, &lift, Some(&runtime))
}

#[test]
fn best_polly_counts_only_variants_that_transformed_the_kernel() {
    let md = summary();
    // gemm: best Polly is `polly` (2 s), not the faster untransformed
    // polly-parallel (1 s): 2 / 0.5 = 4; jacobi: polly 3 / 1 = 3 (the
    // transformed polly-parallel timed out); chase has no best Polly.
    let expected = format!(
        "vs best Polly: {:.2}× geomean** over 2 kernels",
        12f64.sqrt()
    );
    assert!(md.contains(&expected), "{md}");
    // Polly vs gcc over the same two: gemm 8/2 = 4, jacobi 6/3 = 2.
    let polly = format!(
        "Best Polly vs gcc -O3: {:.2}× geomean over 2 kernels",
        8f64.sqrt()
    );
    assert!(md.contains(&polly), "{md}");
    assert!(md.contains("Polly transformed 2 of 3 kernels"), "{md}");
}

#[test]
fn polly_section_says_per_kernel_what_polly_did_or_why_not() {
    let md = summary();
    let start = md.find("### Per kernel").expect("per-kernel table");
    let end = md[start..]
        .find("### Measurements that did not count")
        .map_or(md.len(), |e| start + e);
    insta::assert_snapshot!("bench_polly_summary", &md[start..end]);
}

#[test]
fn without_a_transformed_polly_the_summary_says_so() {
    let runtime = parse(
        "kernel,suite,variant,dataset,median_s,status,polly_transformed,polly_what\n\
         a,s,gcc,L,2,ok,,\n\
         a,s,polly,L,1,ok,no,no SCoP\n\
         a,s,numpy,L,1,ok,,\n",
    )
    .expect("runtime.csv");
    let lift = parse("kernel,suite,status,time_s\n").expect("lift.csv");
    let md = render(&RunInfo::default(), &lift, Some(&runtime));
    assert!(
        md.contains("vs best Polly: no kernel has both a lifted time and a Polly variant"),
        "{md}"
    );
    assert!(md.contains("| a | no: no SCoP | – | – |"), "{md}");
    assert!(md.contains("Polly did not transform"), "{md}");
}
