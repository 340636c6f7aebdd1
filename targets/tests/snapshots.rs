//! Snapshots of the generated code of representative programs, one per
//! target (review changes with `cargo insta review`).

mod common;

use std::collections::BTreeMap;

use tenslift_targets::{emit, EmitOptions, Target};

const REPRESENTATIVE: &[&str] = &[
    "gemm",
    "blend_screen_u8",
    "blend_multiply_u8",
    "jacobi_1d",
    "softmax_rows",
    "keyword_names",
    "divmod_i8",
    "strided_writeback",
    "einsum_scaled_rows",
    "loop_jacobi_1d_time",
    "loop_trisolv",
    "block_slice_store",
    "window_fir",
    "reshape_interleave",
    "flip_vec",
    "loop_column_sweep",
    "rounding",
];

#[test]
fn generated_code_snapshots() {
    let dir = common::programs_dir();
    for name in REPRESENTATIVE {
        let f = common::load_fixture(&dir.join(format!("{name}.tensir")));
        let sizes: BTreeMap<String, i64> = f.sizes.clone();
        for target in Target::ALL {
            let code = emit(
                &f.program,
                target,
                &EmitOptions {
                    sizes: sizes.clone(),
                },
            )
            .unwrap_or_else(|e| panic!("{name} {target}: {e}"));
            insta::assert_snapshot!(format!("{name}__{target}"), code);
        }
    }
}
