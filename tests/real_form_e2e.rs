//! End-to-end tests of C in the forms public code writes it (the fixtures
//! of `tests/fixtures/wild/` and the probe set `tests/fixtures/probe/`):
//! each kernel lifts with the real binary and
//! passes `tenslift verify` (Z3 bounded check and a differential run of
//! the generated NumPy against the gcc-compiled C), and the forms the
//! frontend now reads (shifts, counted `while`, subscripts through a local,
//! literal 64-element sizes) lower as the C means them.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const WILD: &str = "tests/fixtures/wild";
const FIXTURES: &str = "tests/fixtures";

fn tenslift_in(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tenslift"));
    cmd.current_dir(dir).args(args);
    if std::env::var_os("TENSLIFT_PYTHON").is_none() {
        let local = Path::new(ROOT).join(".venv/bin/python");
        if local.exists() {
            cmd.env("TENSLIFT_PYTHON", local);
        } else {
            cmd.env("TENSLIFT_PYTHON", "/work/main/.venv/bin/python");
        }
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run tenslift: {e}"))
}

fn tenslift(args: &[&str]) -> Output {
    tenslift_in(Path::new(ROOT), args)
}

fn fixture(stem: &str) -> String {
    format!("{WILD}/{stem}.c")
}

/// The diagnostics of extracting `source` (as a fresh file), asserting
/// that it is refused.
fn refusal_of(source: &str) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.c");
    std::fs::write(&path, source).expect("write");
    let out = tenslift(&["extract", path.to_str().expect("utf-8")]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_ne!(out.status.code(), Some(0), "{err}");
    err
}

/// (file under `tests/fixtures` without `.c`, how it lifts: `lifted` or
/// `partial`).
const KERNELS: &[(&str, &str)] = &[
    ("wild/softmax", "lifted"),
    ("wild/fir_q15", "partial"),
    ("wild/cmul", "lifted"),
    ("wild/transpose64", "lifted"),
    ("wild/scale_while", "lifted"),
    ("wild/mean_index", "lifted"),
    // darknet's blas.c stride, `1./(batch*spatial)`, per-channel statistics.
    ("probe/axpy_inc", "lifted"),
    ("probe/mean_cpu", "lifted"),
    ("probe/normalize_cpu", "lifted"),
    ("probe/dn_softmax", "lifted"),
    // Element-wise Q15 and 8-bit products through `>>`.
    ("probe/q15_mul", "lifted"),
    ("probe/blend_shift", "lifted"),
    // `while (n--)`, walking pointers and reading the counter.
    ("probe/while_ptr", "lifted"),
    ("probe/while_rev", "lifted"),
    // `out[y*OW + x]` with a local `OW = W - KW + 1`: one stride.
    ("probe/conv2d", "lifted"),
    // A leading `if (n <= 0) return;` that changes nothing.
    ("probe/saxpy_guard", "lifted"),
    ("probe/sdot_guard", "lifted"),
    // CMSIS-style `uint16_t size` bounding the loop is a size.
    ("probe/relu_q", "lifted"),
    // Per-element selects written directly; a stencil over the interior.
    ("probe/threshold_u8", "lifted"),
    ("probe/smooth_l1", "lifted"),
    ("probe/box3", "lifted"),
    // Index variables stepped by increments; pointers tested against NULL.
    ("probe/daxpy_ix", "lifted"),
    ("probe/weighted_delta", "lifted"),
    // `continue`, `memset`, struct sizes copied to locals, a counter set
    // two statements before its `while`.
    ("probe/mask_continue", "lifted"),
    ("probe/attn_mix", "lifted"),
    ("probe/cm_mat_mult", "lifted"),
    ("probe/cm_mean", "lifted"),
    // Interleaved channels as strided views: complex pairs, RGB triples.
    ("probe/cmplx_mag", "lifted"),
    ("probe/rgb2gray", "lifted"),
    // A loop over a product of sizes (darknet's `l.outputs*l.batch`), an
    // extremum from a start value.
    ("probe/flat_long", "lifted"),
    ("probe/dn_layer_grad", "lifted"),
    ("probe/fmax_reduce", "lifted"),
    // Helpers that return from several places (darknet's lhtan) or switch
    // over an enum parameter (its activate), double literals on float data.
    ("probe/lhtan", "lifted"),
    ("probe/dn_activate_switch", "lifted"),
    ("probe/leaky", "lifted"),
    ("probe/pi_scale", "lifted"),
    // A pointer walking from the start to one past the end as the iterator.
    ("probe/for_ptr", "lifted"),
    // A strictly lower triangular product (`k < i`): `tril` of the
    // `n x (n-1)` rectangle it reads.
    ("probe/trmv_lower", "lifted"),
    // llm.c's linear layer: `x @ w.T + bias` over (batch, time) rows, the
    // bias pointer tested against NULL or not.
    ("probe/matmul_bias", "lifted"),
    ("probe/matmul_bias2", "lifted"),
    // A per-row layer normalisation whose variance goes through a
    // temporary (`xshift`): substituted, the row loop vectorises.
    ("probe/layernorm_rows", "lifted"),
    // A perfect nest distributed as a whole, its scalars expanded along
    // both loops (darknet-style l2 normalisation over batch and position);
    // darknet's variance_cpu adding `pow` in double to a float sum.
    ("probe/l2norm", "lifted"),
    ("probe/variance_cpu", "lifted"),
    // Loops unrolled by hand, rolled back by the reader: reference BLAS
    // (clean-up loop for `n % 5` first, a sum chain in `ddot`), DSP
    // blocks of four with the remainder after, groups then the rest.
    ("probe/ddot_ref", "lifted"),
    // A length tested against a literal where it also bounds the loops:
    // one case per branch (the first with the length fixed).
    ("probe/len_special", "lifted"),
    ("probe/small_case", "lifted"),
    ("probe/dscal_ref", "lifted"),
    ("probe/cm_dot_unroll", "lifted"),
    ("probe/cm_add_unroll", "lifted"),
    ("probe/cm_mean_unroll", "lifted"),
    ("probe/saxpy_unroll4", "lifted"),
    // Guards that change what the kernel does run ahead of the program:
    // reference daxpy's `if (da == 0.0) return;` (after a size guard and
    // before loops unrolled by four), a sample variance's `blockSize <= 1`.
    ("probe/daxpy_ref", "lifted"),
    ("probe/var_f32", "lifted"),
    // Arrays of structs of one field type, read as the flat arrays of
    // their fields (`c[i].re` is `c[2*i]`).
    ("probe/aos_cmplx", "lifted"),
    ("probe/aos_norm", "lifted"),
    // A `vec4` array times the `float m[4][4]` of a `mat4` passed by
    // pointer: the stored array is a read-only parameter of constant
    // extents, the blocks of four rows of a matmul.
    ("probe/mat_vec_struct", "lifted"),
    // BLAS as f2c translates Fortran: every argument by reference
    // (`integer *n`, `real *alpha`), 1-based subscripts through pointers
    // moved back (`--x; a -= a_offset;`), bounds copied to `i__1`, `i__2`
    // (the inner one restated in the outer loop).
    ("probe/sdot_f2c", "lifted"),
    ("probe/sgemv_f2c", "lifted"),
    ("probe/sger_f2c", "lifted"),
    // Its 1-based pointers moved back before the quick return.
    ("probe/sswap_f2c", "lifted"),
    // `abs` of an element through a temporary, `(r__1 = sx[i__],
    // fabsf(r__1))`: set by a statement of its own.
    ("probe/sasum_f2c", "lifted"),
    // `for (i = 0; i < n*incx; i += incx)` behind `if (n <= 0 || incx <=
    // 0) return;`: counted by one, the guard ahead of the program.
    ("probe/dscal_inc", "lifted"),
    // Running searches for the position of the largest (smallest)
    // element: darknet's `max_index`, a DSP library's max/min with index
    // (a descending `while` counter, the candidate read into a temporary),
    // BLAS's `idamax` on magnitudes, unsigned bytes with ties.
    ("probe/argmax", "lifted"),
    ("probe/max_index", "lifted"),
    ("probe/cm_max", "lifted"),
    ("probe/cm_min_q15", "lifted"),
    ("probe/idamax_unit", "lifted"),
    ("probe/argmax_u8", "lifted"),
    // A search per row (and per column) of a matrix.
    ("probe/argmax_rows", "lifted"),
    // `>=` keeps the last extreme: argmax with `last=true`.
    ("probe/argmax_ge", "lifted"),
    ("probe/col_min_index", "lifted"),
    // darknet's `matrix_add_matrix` as distributed, opening with
    // `assert(from.rows == to.rows && from.cols == to.cols);`.
    ("probe/dn_matrix_add_assert", "lifted"),
    // A histogram counting its pixels down (`while (n-- > 0) h[*p++]++;`).
    ("probe/hist_ptr", "lifted"),
    // A `void` helper called per row (`scale(m + r*cols, cols, a)`): its
    // statements are hoisted in place of the call.
    ("probe/void_helper_rows", "lifted"),
    // DSP max of magnitudes with its index.
    ("probe/cm_absmax", "lifted"),
    // `do … while` loops read as the `while` they equal from a first test
    // that holds (a stated precondition): a pre-decrement in the test, a
    // count-down with a second index counting up, declared together.
    ("probe/do_scale", "lifted"),
    ("probe/do_count_index", "lifted"),
    // DSP matrix functions through instance structs: a flat count-down
    // walk over `numRows * numCols` samples (the product in a local or in
    // the counter's assignment), a transpose walked by `px += nRows`, a
    // product whose column pointer is reset after each column to the next
    // one's top, a `do … while` stepping its counter before reading it.
    ("probe/cm_mat_add_inst", "lifted"),
    ("probe/cm_mat_sub_inst", "lifted"),
    ("probe/cm_mat_scale_inst", "lifted"),
    ("probe/cm_mat_trans", "lifted"),
    ("probe/cm_mat_trans_q15", "lifted"),
    ("probe/cm_mat_mult_do", "lifted"),
    ("probe/cm_mat_vec_mult_inst", "lifted"),
    // `roundf` (halves away from zero), `floor`/`ceil`, `sinf`/`cosf`.
    ("probe/quantize_i8", "lifted"),
    ("probe/round_q8", "lifted"),
    ("probe/floor_ceil_bins", "lifted"),
    ("probe/rotate_points", "lifted"),
    // Guards on where the iterator is: the loop cut at their points.
    ("probe/stencil_edges", "lifted"),
    ("probe/diff_first", "lifted"),
    ("probe/gradient_1d", "lifted"),
    ("probe/blur3_border", "lifted"),
    // Tiled loops clipped by `&&` or a `MIN` macro: the clip is a guard.
    ("probe/tiled_transpose", "lifted"),
    ("probe/tiled_matmul", "lifted"),
    ("probe/tiled_scale", "lifted"),
    // Integer temporaries put in where they are read (`int gx = …`).
    ("probe/sobel_u8", "lifted"),
    // A flag read only by its tests: one case each (the first checked
    // here), the loop unswitched, a branch's `return` folded.
    ("probe/norm_mode", "lifted"),
    ("probe/scale_sat_flag", "lifted"),
    // A flat walk over a product of sizes whose iterator is divided by a
    // factor: `bias[i % c]`, `x[i / factor]`, `s[i / cols]`.
    ("probe/bias_channels_last", "lifted"),
    ("probe/hold_upsample", "lifted"),
    ("probe/row_scale_flat", "lifted"),
    // Interleaved RGB samples: rows of `3*w` (`img[(y*w + x)*3 + c]`, and
    // `rgb[3*i + c]` over a flat `width*height` walk).
    ("probe/rgb_rows_gray", "lifted"),
    ("probe/rgb_flat_y", "lifted"),
    // Reference BLAS skipping a column whose scalar is zero (`if (x[j] !=
    // 0.0)`): the guarded update changes nothing there.
    ("probe/dsyr_l", "lifted"),
    ("probe/dtrmv_un", "lifted"),
    // A parameter counted down in place (`while (blockSize > 0) { …;
    // blockSize--; }`, `for (; n > 0; n--)`), the body reading it.
    ("probe/cm_euclid_while", "lifted"),
    ("probe/count_param_body", "lifted"),
    ("probe/count_param_for", "lifted"),
    // A full convolution whose guards leave out the taps off the signal's
    // ends: a window over the signal padded with zeros.
    ("probe/conv_full", "lifted"),
    // Reference `dgemv`: `leny = trans == 'N' ? m : n`, `beta` tested
    // against 0 and 1, `if (alpha == 0.0) return;` (first case checked).
    ("probe/dgemv_ref", "lifted"),
    // Interleaved complex samples whose parts differ by more than their
    // position: a conjugate (`-*pSrc++` every other sample) and a dot
    // product's real part (`re -= b0*d0`).
    ("probe/cm_cmplx_conj", "lifted"),
    ("probe/cm_cmplx_dot", "lifted"),
    // Guarded taps at the signal's borders: a centred 'same' convolution
    // testing a local `j = i + k`, a causal FIR from a zero state (sizes
    // chosen so the guard hides no tap), zero padding by a parameter in
    // 1-D and 2-D, and a 3x3 neighbourhood sum and box blur (`s / 9.0f`)
    // with zero borders (`continue` past the image).
    ("probe/conv_same", "lifted"),
    ("probe/fir_causal", "lifted"),
    ("probe/conv1d_pad", "lifted"),
    ("probe/conv2d_pad", "lifted"),
    ("probe/box3_sum", "lifted"),
    ("probe/box3_blur", "lifted"),
];

/// Running values stored at every step, lifted to scans (`cumsum`,
/// `cummax`): (fixture under `tests/fixtures/probe`, the scan the program
/// holds, whether the unbounded proof goes through; a summed-area table
/// adds the previous row's stored value to the running sum, which the
/// invariants do not state).
const SCANS: &[(&str, &str, bool)] = &[
    ("cumsum", "cumsum(x, axis=0)", true),
    ("running_sum_ptr", "cumsum(x, axis=0)", true),
    ("row_cumsum", "cumsum(a, axis=1)", true),
    ("col_cumsum", "cumsum(a, axis=0)", true),
    ("integral_image", "cumsum(cumsum(", false),
    (
        "csr_offsets",
        "concat([full([1], 0i32), cumsum(counts, axis=0)], axis=0)",
        true,
    ),
    ("peak_hold", "cummax(x, axis=0)", true),
    ("running_max", "maximum(cummax(x, axis=0), ", true),
    ("weighted_cumsum", "cumsum(", true),
];

fn verify_json(dir: &Path, file: &str) -> Value {
    verify_json_with(dir, file, &[])
}

fn verify_json_with(dir: &Path, file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["verify", file, "--targets", "numpy", "--json"];
    args.extend_from_slice(extra);
    let out = tenslift_in(dir, &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with('{')).unwrap_or("");
    serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "{file}: no JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Lifts one kernel of [`KERNELS`] and checks it bounded and differential
/// (the unbounded prover is tested elsewhere; here it only cost time).
fn check_real_form(stem: &str, status: &str) {
    let file = format!("{FIXTURES}/{stem}.c");
    let lift = tenslift(&["lift", &file, "--json", "-q"]);
    let stdout = String::from_utf8_lossy(&lift.stdout);
    assert_eq!(lift.status.code(), Some(0), "{stem}: {stdout}");
    let report: Value = serde_json::from_str(stdout.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{stem}: {e}: {stdout}"));
    assert_eq!(report["status"], status, "{stem}: {report}");
    let v = verify_json_with(Path::new(ROOT), &file, &["--no-unbounded"]);
    assert_eq!(v["bounded"], "pass", "{stem}: {v}");
    assert_eq!(v["differential"], "pass", "{stem}: {v}");
}

#[test]
fn real_form_kernels_lift_and_pass_bounded_and_differential_checks() {
    // Two kernels at a time (each check is one child process at a time): a
    // serial loop made this the longest test of the suite.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(stem, status)) = KERNELS.get(i) else {
                    break;
                };
                let checked = std::panic::catch_unwind(|| check_real_form(stem, status));
                if let Err(e) = checked {
                    let why = e
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default();
                    failures.lock().unwrap_or_else(|p| p.into_inner()).push(why);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn running_values_lift_to_scans_and_are_proved() {
    for &(stem, scan, unbounded) in SCANS {
        let v = verify_json(Path::new(ROOT), &format!("{FIXTURES}/probe/{stem}.c"));
        let program = v["details"]["program"].as_str().unwrap_or("");
        assert!(program.contains(scan), "{stem}: {program}");
        assert_eq!(v["bounded"], "pass", "{stem}: {v}");
        assert_eq!(v["differential"], "pass", "{stem}: {v}");
        if unbounded {
            assert_eq!(v["unbounded"], "proved", "{stem}: {v}");
        }
    }
}

/// A `double` literal on `float` data (darknet's `.1*x`), a `float`
/// literal spelled to more digits than a float holds, and a helper's
/// constants folded by the search (`.001*(x-1) + 1` as `.001*x + .999`):
/// the spec and the verifier read every literal as the decimal it
/// round-trips as in its type, so these are proved, not refuted by the
/// literal's own rounding.
#[test]
fn float_literals_read_as_their_decimals_are_proved() {
    for stem in ["leaky", "lhtan", "pi_scale"] {
        let v = verify_json(Path::new(ROOT), &format!("{FIXTURES}/probe/{stem}.c"));
        assert_eq!(v["unbounded"], "proved", "{stem}: {v}");
    }
}

/// `tenslift verify k.c` run from the file's own directory: the C driver
/// is compiled with `-I.`, not with a bare `-I` that swallowed the driver
/// (the differential run was skipped: "undefined reference to `main`").
#[test]
fn verify_of_a_bare_file_name_runs_the_differential_check() {
    let dir = Path::new(ROOT).join(WILD);
    let v = verify_json(&dir, "scale_while.c");
    assert_eq!(v["differential"], "pass", "{v}");
}

/// A kernel sized by a plain `#define N 64` is traced at small sizes (its
/// extents become the size `ext_64`), and the generated function still
/// takes what the C takes: `ext_64` defaults to the extent of the array it
/// was declared with (64 for the C's arrays).
#[test]
fn literal_sizes_become_extent_sizes_with_their_value_as_default() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("transpose64.py");
    let lift = tenslift(&[
        "lift",
        &fixture("transpose64"),
        "-o",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(
        lift.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&lift.stderr)
    );
    let code = std::fs::read_to_string(&out).expect("generated file");
    assert!(code.contains("def transpose(a, b, ext_64=None):"), "{code}");
    assert!(code.contains("ext_64 = a.shape[0]"), "{code}");
    let python =
        std::env::var("TENSLIFT_PYTHON").unwrap_or_else(|_| format!("{ROOT}/.venv/bin/python"));
    let script = format!(
        "import importlib.util, numpy as np\n\
         s = importlib.util.spec_from_file_location('m', {out:?})\n\
         m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n\
         a = np.arange(64 * 64, dtype=np.float64).reshape(64, 64); b = np.zeros((64, 64))\n\
         m.transpose(a, b)\n\
         assert (b == a.T).all()\n\
         print('ok')\n"
    );
    let ran = Command::new(&python)
        .args(["-c", &script])
        .output()
        .expect("python runs");
    assert!(
        String::from_utf8_lossy(&ran.stdout).contains("ok"),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
}

/// Shifts by constants lower to the arithmetic they are: a signed `>>` to
/// floor division (gcc's arithmetic shift), an unsigned one to division,
/// `<<` to a multiplication, also inside a subscript.
#[test]
fn shifts_lower_to_exact_arithmetic() {
    let out = tenslift(&["extract", &fixture("shifts")]);
    let ir = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{ir}");
    assert!(
        ir.contains("y[i] = ((x[i] - (((x[i] % 8):i32 + 8):i32 % 8):i32):i32 / 8):i32"),
        "{ir}"
    );
    assert!(ir.contains("v[i] = (u[i] / 4:u32):u32"), "{ir}");
    assert!(ir.contains("w[i] = (x[2*i] * 4):i32"), "{ir}");
}

/// A shift by a variable, or by the sign bit, is refused with its reason.
#[test]
fn shifts_out_of_reach_are_refused_with_the_reason() {
    let err = refusal_of(
        "void f(const int *x, int *y, int n, int s) {\n  for (int i = 0; i < n; i++) y[i] = (x[i] >> s) + (x[i] >> 31);\n}\n",
    );
    assert!(err.contains("the shift count is not a constant"), "{err}");
    assert!(
        err.contains("the shift count 31 is outside 0..=30"),
        "{err}"
    );
}

/// `while (n--)` is the `for` counting the decremented counter down from
/// `n - 1` to 0 (the body sees it decremented); `n` stays a size. Inside an
/// outer loop, on a counter declared outside it, the C runs the count down
/// once only: that is still refused.
#[test]
fn count_down_whiles_read_as_for_loops_where_exact() {
    let out = tenslift(&["extract", &format!("{FIXTURES}/probe/while_rev.c")]);
    let ir = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{ir}");
    assert!(ir.contains("param n: i32 size"), "{ir}");
    assert!(ir.contains("for n_1 in n - 1..-1 step -1"), "{ir}");
    assert!(ir.contains("y[n_1] = (2.0f * x[n_1]):f32"), "{ir}");
    let err = refusal_of(
        "void f(float *y, int m, int n) {\n  for (int i = 0; i < m; i++) {\n    while (n--) y[n] += 1.0f;\n  }\n}\n",
    );
    assert!(err.contains("error[TL010]"), "{err}");
    // A parameter counted down after the body (`while (n > 0) { …; n--; }`):
    // the body reads the counter before its step.
    let out = tenslift(&["extract", &format!("{FIXTURES}/probe/count_param_body.c")]);
    let ir = String::from_utf8_lossy(&out.stdout);
    assert!(ir.contains("for n_1 in n - 1..-1 step -1"), "{ir}");
    assert!(ir.contains("y[n_1] = (2.0f * x[n_1]):f32"), "{ir}");
    // Read after the loop (where the C leaves it 0), it stays refused.
    let err = refusal_of(
        "float f(const float *x, float *y, int n) {\n  while (n > 0) { y[n - 1] = x[n - 1]; n--; }\n  return (float)n;\n}\n",
    );
    assert!(err.contains("error[TL010]"), "{err}");
}

/// A leading guard is dropped where it changes nothing; where it does (an
/// element written outside the loops it empties, a returned value other
/// than the guard's, a condition on a float, a store before the return),
/// every guard runs ahead of the program, as the C's statements; the
/// differential run against the compiled C passes.
#[test]
fn guards_that_matter_run_ahead_of_the_program() {
    let cases = [
        (
            "void f(float *y, const float *x, int n) {\n  if (n < 1) return;\n  y[0] = 0;\n  for (int i = 1; i < n; i++) y[i] = x[i];\n}\n",
            "    if (n < 1):\n        return None\n",
        ),
        (
            "float f(const float *x, int n) {\n  float s = 1.0f;\n  if (n <= 0) return 0.0f;\n  for (int i = 0; i < n; i++) s += x[i];\n  return s;\n}\n",
            "    if (n <= 0):\n        return np.float32(0.0)\n",
        ),
        (
            "void f(int n, float a, const float *x, float *y, float *done) {\n  if (n <= 0) return;\n  if (a == 0.0f) { *done = 0; return; }\n  for (int i = 0; i < n; i++) y[i] += a * x[i];\n  done[0] = 1;\n}\n",
            "    if (n <= 0):\n        return None\n    if (a == 0.0):\n        done[0] = 0.0\n        return None\n",
        ),
    ];
    for (source, prologue) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("k.c"), source).expect("write");
        let lift = tenslift_in(dir.path(), &["lift", "k.c", "-o", "k.py", "-q"]);
        assert_eq!(lift.status.code(), Some(0), "{source}: {lift:?}");
        let py = std::fs::read_to_string(dir.path().join("k.py")).expect("k.py");
        assert!(py.contains(prologue), "{source}:\n{py}");
        let v = verify_json(dir.path(), "k.c");
        assert_eq!(v["differential"], "pass", "{source}: {v}");
    }
    // A guard reading an array cannot run ahead of the program.
    let err = refusal_of(
        "void f(float *y, const float *x, int n) {\n  if (x[0] > 0) return;\n  for (int i = 0; i < n; i++) y[i] = x[i];\n}\n",
    );
    assert!(
        err.contains("error[TL037]") && err.contains("reads more than scalar parameters"),
        "{err}"
    );
}

/// A `while` whose condition does not compare its counter has no trip
/// count: still refused, with the advice to write a counted `for`.
#[test]
fn a_while_without_a_counted_condition_is_still_refused() {
    let err = refusal_of(
        "void f(float *x) {\n  int i = 0;\n  while (x[i] > 0) {\n    x[i] = 0;\n    i++;\n  }\n}\n",
    );
    assert!(err.contains("error[TL010]"), "{err}");
}

/// A kernel that tests an optional buffer (`if (da) da[i] += …`) lifts for
/// the case where it is set, and the generated code says so.
#[test]
fn a_pointer_tested_against_null_is_a_stated_precondition() {
    let file = format!("{FIXTURES}/probe/weighted_delta.c");
    let lift = tenslift(&["lift", &file, "-q"]);
    let text = String::from_utf8_lossy(&lift.stdout);
    assert_eq!(lift.status.code(), Some(0), "{text}");
    for name in ["da", "db"] {
        assert!(text.contains(&format!("- `{name}` is not NULL")), "{text}");
    }
    assert!(!text.contains("`ds` is not NULL"), "{text}");
}

/// darknet's `backward_bias` calls a helper with a loop (`sum_array` on a
/// pointer into `delta`): the call is hoisted and the kernel lifts whole.
#[test]
fn a_helper_with_a_loop_is_hoisted_and_the_caller_lifts() {
    let file = format!("{FIXTURES}/probe/backward_bias.c");
    let lift = tenslift(&["lift", &file, "--function", "backward_bias", "--json", "-q"]);
    let stdout = String::from_utf8_lossy(&lift.stdout);
    assert_eq!(lift.status.code(), Some(0), "{stdout}");
    let report: Value = serde_json::from_str(stdout.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(report["status"], "lifted", "{report}");
}

/// Global arrays of a literal size (`#define N 256`, no parameters): traced
/// at small extents, proved for every extent; the differential run is
/// skipped with its reason (the C can only run at 256, past the reference
/// interpreter's statement limit).
#[test]
fn global_arrays_of_a_literal_size_lift_and_are_proved() {
    let file = format!("{FIXTURES}/probe/global_mm.c");
    let v = verify_json(Path::new(ROOT), &file);
    assert_eq!(v["bounded"], "pass", "{v}");
    assert_eq!(v["unbounded"], "proved", "{v}");
    let why = v["reason"].as_str().unwrap_or_default();
    assert!(why.contains("declared extents"), "{v}");
}

/// `assert(cond)` computes nothing when `cond` holds and aborts the C
/// otherwise: the program assumes it, and says so in its header; with
/// `-DNDEBUG` the C asserts nothing and neither does the header.
#[test]
fn assertions_are_stated_preconditions() {
    let file = format!("{FIXTURES}/probe/dn_matrix_add_assert.c");
    let dir = tempfile::tempdir().expect("temp dir");
    for (defines, stated) in [(&[][..], true), (&["-D", "NDEBUG"][..], false)] {
        let out = dir.path().join("m.py");
        let out_s = out.display().to_string();
        let mut args = vec!["lift", file.as_str(), "-o", out_s.as_str(), "-q"];
        args.extend_from_slice(defines);
        let lift = tenslift(&args);
        assert_eq!(lift.status.code(), Some(0), "{lift:?}");
        let text = std::fs::read_to_string(&out).expect("module written");
        let says =
            text.contains("`from.rows == to.rows && from.cols == to.cols` holds: the C asserts it");
        assert_eq!(says, stated, "{text}");
    }
}

/// BLAS's `sgemv` picks `A x` or `Aᵀ x` by testing its `trans` character,
/// and `y` has `m` elements in one case, `n` in the other: lifted case by
/// case (one JSON record each, the flag values the C takes it at), each
/// case proved on its own, with a dispatcher in the module that runs the
/// C's test; StableHLO, one module per computation, is refused before
/// anything is written.
#[test]
fn a_function_testing_its_flag_is_lifted_and_verified_case_by_case() {
    let file = format!("{FIXTURES}/probe/gemv_trans.c");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("gemv.py");
    let lift = tenslift(&[
        "lift",
        &file,
        "--json",
        "-q",
        "-o",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(lift.status.code(), Some(0), "{lift:?}");
    let records: Vec<Value> = String::from_utf8_lossy(&lift.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let cases: Vec<(&str, &Value)> = records
        .iter()
        .map(|r| (r["status"].as_str().unwrap_or(""), &r["case"]))
        .collect();
    assert_eq!(cases.len(), 2, "{records:?}");
    assert!(cases.iter().all(|(s, _)| *s == "lifted"), "{records:?}");
    assert_eq!(cases[0].1["flags"][0]["value"], 78, "{records:?}");
    let module = std::fs::read_to_string(&out).expect("module written");
    for needle in [
        "def sgemv_rm_case1(",
        "def sgemv_rm_case2(",
        "def sgemv_rm(",
        "if (trans == 78):",
    ] {
        assert!(module.contains(needle), "{needle}: {module}");
    }
    assert_cases_proved(&file, 2);
    let hlo_out = dir.path().join("gemv.mlir");
    let hlo = tenslift(&[
        "lift",
        &file,
        "--target",
        "hlo",
        "-o",
        hlo_out.to_str().expect("utf-8"),
    ]);
    assert_eq!(hlo.status.code(), Some(2), "{hlo:?}");
    assert!(String::from_utf8_lossy(&hlo.stderr).contains("testing trans: 2 cases"));
    assert!(!hlo_out.exists());
}

/// A loop bound chosen by a flag (`leny = (trans == 'N' || trans == 'n')
/// ? m : n`) unswitches the statements reading it; the cases split the
/// test, decided once per case though the C tests it twice. A full
/// convolution is a window over its zero-padded signal.
#[test]
fn a_size_chosen_by_a_flag_and_guarded_taps_lift() {
    let file = format!("{FIXTURES}/probe/dgemv_ref.c");
    let lift = tenslift(&["lift", &file, "--json", "-q"]);
    let records: Vec<Value> = String::from_utf8_lossy(&lift.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(
        records.iter().all(|r| r["status"] == "lifted"),
        "{records:?}"
    );
    let v = verify_json(Path::new(ROOT), &format!("{FIXTURES}/probe/conv_full.c"));
    let program = v["details"]["program"].as_str().unwrap_or("");
    for needle in [
        "window(concat([full([srcALen - 1], 0.0f32), pSrcB, full(",
        "flip(pSrcA",
    ] {
        assert!(program.contains(needle), "{needle}: {program}");
    }
}

/// An image filtered with zero borders (`if (r < 0 || c < 0 || r >= h
/// || c >= w) continue;` on locals `r = y + i - pad`) is a 2-D window over
/// the image padded by `pad` on both axes: the guard's own bound gives the
/// image its extent, and the program is proved equal to the C.
#[test]
fn an_image_filtered_with_zero_borders_is_a_window_over_its_padding() {
    let v = verify_json(Path::new(ROOT), &format!("{FIXTURES}/probe/conv2d_pad.c"));
    let program = v["details"]["program"].as_str().unwrap_or("");
    for needle in ["full([pad, w], 0.0f32)", "window(concat(", "[k, k]"] {
        assert!(program.contains(needle), "{needle}: {program}");
    }
    assert_eq!(v["bounded"], "pass", "{v}");
}

/// Reference BLAS tests its increments and walks its arrays by them
/// (`ddot`: unit increments unrolled by five, returning, then any
/// increment with the start for a negative one; LINPACK's `daxpy` the
/// other way round; `dscal` with an `else`): one kernel per case, each
/// with its own layouts, each proved, and a dispatcher that runs the C's
/// test and reshapes the caller's arrays to its case's shapes.
#[test]
fn reference_blas_testing_its_increments_is_lifted_case_by_case() {
    for (stem, function, test) in [
        ("ddot_incs", "ddot", "if ((incx == 1) and (incy == 1)):"),
        ("daxpy_linpack", "daxpy", "if ((incx != 1) or (incy != 1)):"),
        ("dscal_incs", "dscal", "if (incx == 1):"),
    ] {
        let file = format!("{FIXTURES}/probe/{stem}.c");
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join("blas.py");
        let path = out.to_str().expect("utf-8");
        let lift = tenslift(&["lift", &file, "--json", "-q", "-o", path]);
        assert_eq!(lift.status.code(), Some(0), "{stem}: {lift:?}");
        let records: Vec<Value> = String::from_utf8_lossy(&lift.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON"))
            .collect();
        assert_eq!(records.len(), 2, "{stem}: {records:?}");
        assert!(
            records.iter().all(|r| r["status"] == "lifted"),
            "{records:?}"
        );
        let module = std::fs::read_to_string(&out).expect("module written");
        for needle in [
            format!("def {function}_case1("),
            format!("def {function}_case2("),
            format!("def {function}("),
            test.to_string(),
            "_tenslift_case_view(dx, (n, incx))".to_string(),
        ] {
            assert!(module.contains(&needle), "{stem}: {needle}: {module}");
        }
        assert_cases_proved(&file, 2);
    }
}

/// f2c's saxpy reads its size, coefficient and increments by reference
/// and tests the increments: two cases, each taking those as values (the
/// precondition says so), each passing bounded and differential checks
/// against the C called with their addresses.
#[test]
fn f2c_blas_arguments_by_reference_arrive_as_values() {
    let file = format!("{FIXTURES}/probe/saxpy_f2c.c");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("saxpy.py");
    let path = out.to_str().expect("utf-8");
    let lift = tenslift(&["lift", &file, "--json", "-q", "-o", path]);
    assert_eq!(lift.status.code(), Some(0), "{lift:?}");
    let module = std::fs::read_to_string(&out).expect("module written");
    for needle in [
        "def saxpy__case1(n, sa, sx, incx, sy, incy):",
        "def saxpy__case2(n, sa, sx, incx, sy, incy):",
        "`n`, `sa`, `incx`, `incy` arrive by value",
    ] {
        assert!(module.contains(needle), "{needle}: {module}");
    }
    let verdicts = case_verdicts(&file, &["--no-unbounded"]);
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    for v in verdicts {
        assert_eq!(v["bounded"], "pass", "{v}");
        assert_eq!(v["differential"], "pass", "{v}");
    }
}

/// The verdicts of `tenslift verify FILE --targets numpy --json EXTRA`,
/// one per case.
fn case_verdicts(file: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["verify", file, "--targets", "numpy", "--json"];
    args.extend_from_slice(extra);
    let verify = tenslift(&args);
    String::from_utf8_lossy(&verify.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect()
}

/// `tenslift verify FILE --json` gives `count` verdicts (one per case),
/// each proved for every size and passing its differential run.
fn assert_cases_proved(file: &str, count: usize) {
    let verdicts = case_verdicts(file, &[]);
    assert_eq!(verdicts.len(), count, "{file}: {verdicts:?}");
    for v in &verdicts {
        assert_eq!(v["differential"], "pass", "{file}: {v}");
        assert_eq!(v["unbounded"], "proved", "{file}: {v}");
    }
}
