//! Shared by the TensIR-spec tests: the golden lifted programs and the C
//! kernels they were lifted from.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use tenslift::spec::{choose_second_sizes, choose_sizes, Sizes};
use tenslift_frontend::ir::Kernel;
use tenslift_frontend::{extract, Options};
use tenslift_targets::{parse_program, Program};

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every golden program: fixture stem and the corpus file it lifts.
pub const GOLDEN: &[(&str, &str)] = &[
    ("gemm", "polybench/gemm.c"),
    ("2mm", "polybench/2mm.c"),
    ("3mm", "polybench/3mm.c"),
    ("atax", "polybench/atax.c"),
    ("bicg", "polybench/bicg.c"),
    ("mvt", "polybench/mvt.c"),
    ("gesummv", "polybench/gesummv.c"),
    ("gemver", "polybench/gemver.c"),
    ("syrk", "polybench/syrk.c"),
    ("syr2k", "polybench/syr2k.c"),
    ("trmm", "polybench/trmm.c"),
    ("symm", "polybench/symm.c"),
    ("covariance", "polybench/covariance.c"),
    ("correlation", "polybench/correlation.c"),
    ("doitgen", "polybench/doitgen.c"),
    ("dot", "blas/dot.c"),
    ("gemv", "blas/gemv.c"),
    ("ger", "blas/ger.c"),
    ("gemm_nt", "darknet/gemm_nt.c"),
    ("mse_array", "darknet/mse_array.c"),
    ("scale_array", "darknet/scale_array.c"),
    ("color_burn_8", "blend/color_burn_8.c"),
    ("multiply_blend_8", "blend/multiply_blend_8.c"),
    ("darken_blend_8", "blend/darken_blend_8.c"),
    ("overlay_blend_8", "blend/overlay_blend_8.c"),
    ("softmax_part1", "llama/softmax_part1.c"),
    ("softmax_part2", "llama/softmax_part2.c"),
    ("softmax_part3", "llama/softmax_part3.c"),
    ("softmax_part4", "llama/softmax_part4.c"),
    ("rmsnorm_part1", "llama/rmsnorm_part1.c"),
    ("rmsnorm_part2", "llama/rmsnorm_part2.c"),
    ("vadd", "dsp/vadd.c"),
    ("matmul", "dsp/matmul.c"),
    ("lerp", "mathfu/lerp.c"),
    ("diag_dot", "stenso/diag_dot.c"),
    ("fir_small", "utdsp/fir_small.c"),
    ("sum_diag_dot", "stenso/sum_diag_dot.c"),
    ("trace_dot", "stenso/trace_dot.c"),
    ("vec_lerp", "stenso/vec_lerp.c"),
    ("euclidian_dist", "stenso/euclidian_dist.c"),
    ("max_stack", "stenso/max_stack.c"),
    ("log_exp_1", "stenso/log_exp_1.c"),
    ("power_neg", "stenso/power_neg.c"),
    ("screen_blend_8", "blend/screen_blend_8.c"),
    ("linear_burn_8", "blend/linear_burn_8.c"),
    ("color_dodge_8", "blend/color_dodge_8.c"),
    ("gemm_tn", "darknet/gemm_tn.c"),
    // Partial lifting: loops kept as `for` loops, their bodies lifted.
    ("jacobi_1d", "polybench/jacobi-1d.c"),
    ("jacobi_2d", "polybench/jacobi-2d.c"),
    ("trisolv", "polybench/trisolv.c"),
];

pub fn fixture_path(stem: &str) -> PathBuf {
    Path::new(ROOT)
        .join("tests/fixtures/lifted")
        .join(format!("{stem}.tensir"))
}

/// Parses a golden program (its function name is the C function's).
pub fn load_program(stem: &str) -> Program {
    let path = fixture_path(stem);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse_program(&path.display().to_string(), &text).unwrap_or_else(|d| panic!("{d}"))
}

/// Extracts the C kernel `function` from a corpus file with the real frontend.
pub fn load_kernel(file: &str, function: &str) -> Kernel {
    let path = Path::new(ROOT).join("benchmarks").join(file);
    let options = Options {
        functions: vec![function.to_string()],
        ..Options::default()
    };
    let unit = extract(&path.display().to_string(), &options)
        .unwrap_or_else(|e| panic!("{file}: extraction failed: {e}"));
    unit.kernels
        .into_iter()
        .find(|k| k.name == function)
        .unwrap_or_else(|| panic!("{file}: no kernel `{function}`"))
}

/// The golden program, its C kernel, and the two size tuples specs use.
pub struct Golden {
    pub stem: &'static str,
    pub program: Program,
    pub kernel: Kernel,
    pub sizes: Sizes,
    pub second_sizes: Sizes,
}

pub fn load_golden(stem: &'static str, file: &str) -> Golden {
    let program = load_program(stem);
    let kernel = load_kernel(file, &program.name);
    let sizes =
        choose_sizes(&kernel, &Sizes::new()).unwrap_or_else(|e| panic!("{stem}: no sizes: {e}"));
    let second_sizes = choose_second_sizes(&kernel, &sizes)
        .unwrap_or_else(|e| panic!("{stem}: no second sizes: {e}"));
    Golden {
        stem,
        program,
        kernel,
        sizes,
        second_sizes,
    }
}

pub fn golden(stem: &'static str) -> Golden {
    let (_, file) = GOLDEN
        .iter()
        .find(|(s, _)| *s == stem)
        .unwrap_or_else(|| panic!("no golden program `{stem}`"));
    load_golden(stem, file)
}
