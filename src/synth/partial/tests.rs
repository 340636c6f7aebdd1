use std::time::{Duration, Instant};

use tenslift_frontend::ir::{self as loop_ir, Kernel, Loop};
use tenslift_frontend::Options;
use tenslift_targets::print_program;

use super::*;
use crate::synth::registry::{OUTPUT_TACTICS, RESTRUCTURINGS, SKETCH_FAMILIES};
use crate::synth::{lift_kernel, SynthOptions};

fn polybench(name: &str) -> Kernel {
    let path = format!(
        "{}/benchmarks/polybench/{name}.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let unit = tenslift_frontend::extract(&path, &Options::default()).expect("extracts");
    unit.kernels.into_iter().next().expect("one kernel")
}

fn top_loop(kernel: &Kernel) -> &Loop {
    match kernel.body.first() {
        Some(loop_ir::Stmt::Loop(l)) => l,
        other => panic!("expected a loop, got {other:?}"),
    }
}

fn inner_loop(l: &Loop, at: usize) -> &Loop {
    match l.body.get(at) {
        Some(loop_ir::Stmt::Loop(inner)) => inner,
        other => panic!("expected a loop, got {other:?}"),
    }
}

fn scope_of(l: &Loop) -> NestLoop {
    NestLoop {
        iter: l.iter.clone(),
        start: l.start.clone(),
        end: l.end.clone(),
    }
}

fn options() -> SynthOptions {
    SynthOptions {
        timeout: Duration::from_secs(60),
        ..SynthOptions::default()
    }
}

/// Keeps loops in `kernel` as the driver would.
fn kept(kernel: &Kernel) -> Result<PartialLift, PartialError> {
    let options = options();
    let context = KernelContext {
        options: &options,
        deadline: Instant::now() + options.timeout,
        output_tactics: OUTPUT_TACTICS,
        families: SKETCH_FAMILIES,
    };
    lift_partially(kernel, &context, RESTRUCTURINGS)
}

#[test]
fn a_time_loop_carries_a_dependency_and_its_sweeps_do_not() {
    let kernel = polybench("jacobi-1d");
    let time = top_loop(&kernel);
    assert!(carries_dependency(time, &[]));
    let scope = vec![scope_of(time)];
    assert!(!carries_dependency(inner_loop(time, 0), &scope));
    assert!(!carries_dependency(inner_loop(time, 1), &scope));
}

#[test]
fn forward_substitution_carries_but_its_row_reduction_does_not() {
    let kernel = polybench("trisolv");
    let rows = top_loop(&kernel);
    assert!(carries_dependency(rows, &[]));
    // `x[i] -= L[i][j] * x[j]` for j < i: x[i] is never an x[j].
    let reduction = rows
        .body
        .iter()
        .find_map(|s| match s {
            loop_ir::Stmt::Loop(l) => Some(l),
            _ => None,
        })
        .expect("the j loop");
    assert!(!carries_dependency(reduction, &[scope_of(rows)]));
}

#[test]
fn gauss_seidel_sweeps_carry_dependencies_in_both_space_loops() {
    let kernel = polybench("seidel-2d");
    let time = top_loop(&kernel);
    let rows = inner_loop(time, 0);
    let cols = inner_loop(rows, 0);
    let scope = vec![scope_of(time)];
    assert!(carries_dependency(rows, &scope));
    let scope = vec![scope_of(time), scope_of(rows)];
    assert!(carries_dependency(cols, &scope));
}

#[test]
fn an_update_of_the_upper_row_is_independent_of_the_lower_columns_it_reads() {
    // lu: for j in i..n, k < i: A[i][j] -= A[i][k] * A[k][j]; the k < i
    // columns are below every j >= i only once i is known.
    let kernel = polybench("lu");
    let rows = top_loop(&kernel);
    let upper = inner_loop(rows, 1);
    assert!(!carries_dependency(upper, &[scope_of(rows)]));
}

#[test]
fn jacobi_1d_keeps_only_the_time_loop_and_slices_the_sweeps() {
    let kernel = polybench("jacobi-1d");
    let lifted = kept(&kernel).expect("lifts partially");
    assert_eq!(lifted.kept_loops, vec!["t".to_string()]);
    assert!(lifted.vectorised);
    let text = print_program(&lifted.program);
    assert!(text.contains("for t in 0..tsteps {"), "{text}");
    assert!(text.contains("B[1:n - 1] = "), "{text}");
    assert!(
        text.contains("A[0:n - 2]") && text.contains("A[2:n]"),
        "{text}"
    );
}

#[test]
fn trisolv_keeps_the_row_loop_and_lifts_each_row_as_a_dot_product() {
    let kernel = polybench("trisolv");
    let lifted = kept(&kernel).expect("lifts partially");
    assert_eq!(lifted.kept_loops, vec!["i".to_string()]);
    let text = print_program(&lifted.program);
    assert!(text.contains("matmul(L[i, 0:i], x[0:i])"), "{text}");
}

#[test]
fn floyd_warshall_keeps_k_and_splits_the_rows_into_min_plus_blocks() {
    // For fixed k, row k and column k are read while written; split at
    // i = k and j = k, each block reads a row or column it does not write.
    let kernel = polybench("floyd-warshall");
    let lifted = kept(&kernel).expect("lifts partially");
    assert_eq!(lifted.kept_loops, vec!["k".to_string()]);
    let text = print_program(&lifted.program);
    assert!(text.contains("path[0:k, k:k + 1]"), "{text}");
}

#[test]
fn nussinov_keeps_i_and_j_and_vectorises_the_split_point_maximum() {
    // table[i][j] reads table[i][j - 1] and table[i][k], k < j, of its own
    // row: i and j stay; the k loop is a maximum over the split points.
    // Its guards are decided by the loops (`j - 1 >= 0`) or become selects
    // (`i < j - 1`); at the sizes first tried `k` ran once, so the value
    // was sought again where it runs more.
    let kernel = polybench("nussinov");
    let lifted = kept(&kernel).expect("lifts partially");
    assert_eq!(lifted.kept_loops, vec!["i".to_string(), "j".to_string()]);
    let text = print_program(&lifted.program);
    assert!(text.contains("max(concat("), "{text}");
}

#[test]
fn a_kernel_whose_every_loop_must_stay_is_refused_not_transliterated() {
    // A quadratic recurrence along each row of a sweep that reads the row
    // before: i and j stay and nothing is left to vectorise; a program
    // storing single elements is not a lift.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("sweep.c");
    std::fs::write(
        &path,
        "void sweep(int n, double A[n][n]) {\n  for (int i = 1; i < n; i++)\n    \
         for (int j = 1; j < n; j++)\n      A[i][j] = A[i][j - 1] * A[i][j - 1] + A[i - 1][j];\n}\n",
    )
    .expect("writes");
    let path = path.to_str().expect("a UTF-8 path");
    let unit = tenslift_frontend::extract(path, &Options::default()).expect("extracts");
    let kernel = unit.kernels.into_iter().next().expect("one kernel");
    let err = kept(&kernel).expect_err("nothing vectorises");
    let message = err.to_string();
    assert!(message.contains("i, j"), "{message}");
    assert!(message.contains("nothing vectorises"), "{message}");
}

#[test]
fn a_kernel_without_carried_dependencies_is_only_lifted_whole() {
    let kernel = crate::spec::examples::gemm();
    let outcome = lift_kernel(&kernel, &options());
    assert!(outcome.whole.as_ref().is_some_and(|w| w.program.is_some()));
    assert!(outcome.partial.is_err());
}

#[test]
fn a_returned_sum_beside_a_shift_walked_down_lifts_as_statements_in_order() {
    // fir_delay: y = Σ h[i]·x[i], then the delay line x[N-1-i] = x[N-2-i]
    // walked from the end, then x[0] = sample, return y. Each statement
    // lifts on its own, nothing is kept, and the return comes last.
    let path = format!(
        "{}/benchmarks/dspstone-ptr/fir_delay.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let unit = tenslift_frontend::extract(&path, &Options::default()).expect("extracts");
    let kernel = unit.kernels.into_iter().next().expect("one kernel");
    let lifted = kept(&kernel).expect("lifts statement by statement");
    assert!(lifted.kept_loops.is_empty(), "{:?}", lifted.kept_loops);
    let text = print_program(&lifted.program);
    assert!(text.contains("x[1:N] = x[0:N - 1];"), "{text}");
    let shift = text
        .find("x[0] = sample;")
        .expect("the new sample is stored");
    let ret = text.find("return y_1;").expect("the sum is returned");
    assert!(shift < ret, "{text}");
    assert!(!text.contains("for "), "{text}");
}

fn from_source(source: &str) -> Kernel {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.c");
    std::fs::write(&path, source).expect("write");
    let unit =
        tenslift_frontend::extract(&path.to_string_lossy(), &Options::default()).expect("extracts");
    unit.kernels.into_iter().next().expect("one kernel")
}

/// `y[i] = exp(x[i]); sum += y[i]` distributes: the accumulator is touched
/// by its own statement only, so it needs no expansion, and both loops
/// vectorise (nothing kept).
#[test]
fn an_accumulator_does_not_stop_distribution() {
    let kernel = from_source(
        "#include <math.h>\nvoid f(const float *x, float *y, int n) {\n  float sum = 0.0f;\n  \
         for (int i = 0; i < n; i++) {\n    y[i] = expf(x[i]);\n    sum += y[i];\n  }\n  \
         for (int i = 0; i < n; i++) y[i] /= sum;\n}\n",
    );
    let lifted = kept(&kernel).expect("lifts with its loops distributed");
    assert!(lifted.kept_loops.is_empty(), "{:?}", lifted.kept_loops);
    let text = print_program(&lifted.program);
    assert!(text.contains("exp(x[0:n])"), "{text}");
    assert!(text.contains("sum(y[0:n]"), "{text}");
}

/// A data-dependent `if (x[i] > m) m = x[i];` becomes a select, which the
/// statement search lifts as a maximum.
#[test]
fn a_data_dependent_assignment_becomes_a_select() {
    let kernel = from_source(
        "void f(float *x, int n) {\n  float m = x[0];\n  for (int i = 1; i < n; i++) {\n    \
         if (x[i] > m) m = x[i];\n  }\n  for (int i = 0; i < n; i++) x[i] -= m;\n}\n",
    );
    let lifted = kept(&kernel).expect("lifts");
    let text = print_program(&lifted.program);
    assert!(text.contains("max(x[1:n]"), "{text}");
}

/// `y[0] = x[0]` before a recurrence over pointers of unknown extent: the
/// statement checked on its own sees `x` and `y` at the whole kernel's
/// extent `n` (it once saw them at the one element it touches, and the
/// kept-loop program was refused as "does not generalise"), so the reason
/// given is the real one: nothing vectorises.
#[test]
fn a_statement_before_a_recurrence_sees_the_arrays_at_their_extent() {
    let kernel = from_source(
        "void f(const float *x, float *y, int n, float a) {\n  y[0] = x[0];\n  \
         for (int i = 1; i < n; i++) y[i] = a * x[i] + (1.0f - a) * y[i - 1];\n}\n",
    );
    match kept(&kernel) {
        Err(PartialError::NothingVectorised { loops, why }) => {
            assert_eq!(loops, "i");
            assert!(why.contains("`y[i - 1]`"), "{why}");
        }
        Err(other) => panic!("expected nothing vectorised, got: {other}"),
        Ok(lifted) => panic!("expected a refusal, got {:?}", lifted.kept_loops),
    }
}

/// A running sum stored at every step (a prefix sum) keeps its loop and
/// vectorises nothing; the refusal names the local that carries it.
#[test]
fn a_prefix_sum_is_refused_naming_the_running_local() {
    let kernel = from_source(
        "void f(const int *x, int *y, int n) {\n  int s = 0;\n  \
         for (int i = 0; i < n; i++) { s += x[i]; y[i] = s; }\n}\n",
    );
    let Err(err) = kept(&kernel) else {
        panic!("expected a refusal");
    };
    let message = err.to_string();
    assert!(
        message.contains("loop `i`: `s` is computed from its value in the previous iteration"),
        "{message}"
    );
}

/// A two-pass variance per row through a temporary (`xshift = x - m;
/// v += xshift * xshift`): the temporary is substituted where it is read,
/// so the row loop keeps nothing; the mean's division by a size is the
/// statement's own expression where the search, at a tuple where two sizes
/// are equal, divided by the other.
#[test]
fn a_temporary_read_after_it_is_set_is_substituted_and_the_rows_vectorise() {
    let kernel = from_source(
        "void f(float *var, const float *x, int n, int c) {\n  \
         for (int r = 0; r < n; r++) {\n    float m = 0.0f;\n    \
         for (int i = 0; i < c; i++) m += x[r * c + i];\n    m = m / n;\n    \
         float v = 0.0f;\n    for (int i = 0; i < c; i++) {\n      \
         float xshift = x[r * c + i] - m;\n      v += xshift * xshift;\n    }\n    \
         var[r] = v;\n  }\n}\n",
    );
    let lifted = kept(&kernel).expect("lifts with the temporary substituted");
    assert!(lifted.kept_loops.is_empty(), "{:?}", lifted.kept_loops);
    let text = print_program(&lifted.program);
    assert!(!text.contains("xshift"), "{text}");
    assert!(!text.contains("for "), "{text}");
    assert!(text.contains("cast(n, i32)"), "{text}");
}

/// `substitute` applied to the first loop of `source`'s kernel, its local
/// scalars made one-element arrays as the driver makes them.
fn substitute_in_first_loop(source: &str) -> Option<super::restructure::Restructured> {
    use super::locals::scalars_as_arrays;
    use super::restructure::{LoopSite, Restructuring, Substitute};
    let (kernel, scalars) = scalars_as_arrays(&from_source(source));
    let site = LoopSite {
        l: top_loop(&kernel),
        scope: &vec![],
        kernel: &kernel,
        scalars: &scalars,
    };
    Substitute.apply(&site)
}

/// A temporary whose value reads an array written after it in the same
/// iteration is not substituted (the later read would see the new value);
/// one whose inputs stay as they were is.
#[test]
fn a_temporary_whose_inputs_change_after_it_is_set_stays() {
    let substitutes = |source: &str| substitute_in_first_loop(source).is_some();
    let head = "void f(float *y, float *z, int n) {\n  for (int i = 0; i < n; i++) {\n    \
                float t = y[i] * 2.0f;\n";
    assert!(!substitutes(&format!(
        "{head}    y[i] = 0.0f;\n    z[i] = t;\n  }}\n}}\n"
    )));
    assert!(substitutes(&format!(
        "{head}    z[i] = t;\n    z[i] += t;\n  }}\n}}\n"
    )));
}

/// Integer temporaries are put in like float ones (a Sobel filter's `int
/// gx = …; int gy = …;` on 8-bit pixels), the conversion a narrowing
/// assignment makes staying in the value, while an `int` temporary the C
/// sets from a float keeps its cast too; the row loop then keeps nothing.
#[test]
fn integer_temporaries_are_substituted_with_their_conversions() {
    let kernel = from_source(
        "void f(const unsigned char *a, const unsigned char *b, unsigned char *o, int n) {\n  \
         for (int i = 0; i < n; i++) {\n    int d = a[i] - b[i];\n    \
         unsigned char s = a[i] + b[i];\n    o[i] = (d > 0 ? d : -d) + s;\n  }\n}\n",
    );
    let lifted = kept(&kernel).expect("lifts with the temporaries substituted");
    assert!(lifted.kept_loops.is_empty(), "{:?}", lifted.kept_loops);
    let r = substitute_in_first_loop(
        "void f(const unsigned char *a, const unsigned char *b, unsigned char *o, int n) {\n  \
         for (int i = 0; i < n; i++) {\n    unsigned char s = a[i] + b[i];\n    \
         o[i] = s / 2;\n  }\n}\n",
    )
    .expect("substitutes the narrowing temporary");
    let loop_ir::Stmt::Loop(l) = &r.stmts[0] else {
        panic!("a loop");
    };
    let [loop_ir::Stmt::Assign { value, .. }] = &l.body[..] else {
        panic!("one assignment left: {:?}", l.body);
    };
    assert_eq!(
        tenslift_frontend::dump::expr(value),
        "u8((i32(u8((i32(a[i]) + i32(b[i])):i32)) / 2):i32)"
    );
}

/// A window summed term by term (`t = 0; t += a; t += b; z[i] = t`) is
/// one expression, the C's additions in the C's order; a chain one of
/// whose terms is overwritten after it is read stays.
#[test]
fn a_chain_of_assignments_to_a_temporary_is_one_expression() {
    let substituted = |source: &str| {
        substitute_in_first_loop(source).map(|r| {
            let loop_ir::Stmt::Loop(l) = &r.stmts[0] else {
                panic!("a loop");
            };
            tenslift_frontend::dump::expr(match &l.body[..] {
                [loop_ir::Stmt::Assign { value, .. }] => value,
                other => panic!("one assignment left: {other:?}"),
            })
        })
    };
    let head = "void f(float *x, float *z, int n) {\n  for (int i = 1; i < n - 1; i++) {\n    \
                float t = 0.0f;\n    t += x[i - 1];\n    t += x[i];\n";
    let sum = substituted(&format!(
        "{head}    t += x[i + 1];\n    z[i] = t;\n  }}\n}}\n"
    ));
    assert_eq!(
        sum.as_deref(),
        Some("(((0.0f + x[i - 1]):f32 + x[i]):f32 + x[i + 1]):f32"),
    );
    let overwritten = format!("{head}    x[i] = 1.0f;\n    z[i] = t;\n  }}\n}}\n");
    assert_eq!(substituted(&overwritten), None);
}

/// Softmax over rows: `p[i] = exp(l[i] - max); sum += p[i]` inside the row
/// loop distributes inside it, then the row loop distributes, and every
/// statement vectorises over rows and columns (the inner loop was kept,
/// around vectorised rows).
#[test]
fn an_inner_loop_of_two_statements_distributes_inside_its_row_loop() {
    let path = format!(
        "{}/tests/fixtures/probe/softmax_rows.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let unit = tenslift_frontend::extract(&path, &Options::default()).expect("extracts");
    let kernel = unit.kernels.into_iter().next().expect("one kernel");
    let lifted = kept(&kernel).expect("lifts with its loops distributed");
    assert!(lifted.kept_loops.is_empty(), "{:?}", lifted.kept_loops);
    let text = print_program(&lifted.program);
    assert!(!text.contains("for "), "{text}");
    assert!(text.contains("exp("), "{text}");
}

/// llm.c's softmax over `(b, t)`: the row helper's locals (`maxval`,
/// `sum`) are private to the innermost body of a two-loop nest; expanded
/// along both loops (`sum_bt[b][t]`) the nest distributes as a whole and
/// nothing is kept. Distributed inside `b` alone, `sum_t[t]` would tie
/// `b`'s iterations together and `b` was kept.
#[test]
fn a_perfect_nest_distributes_with_its_locals_expanded_along_every_loop() {
    let path = format!(
        "{}/tests/fixtures/probe/llm_softmax_forward.c",
        env!("CARGO_MANIFEST_DIR")
    );
    let unit = tenslift_frontend::extract(&path, &Options::default()).expect("extracts");
    let kernel = unit.kernels.into_iter().next().expect("one kernel");
    let lifted = kept(&kernel).expect("lifts with its nest distributed");
    assert!(lifted.kept_loops.is_empty(), "{:?}", lifted.kept_loops);
    let text = print_program(&lifted.program);
    assert!(!text.contains("for "), "{text}");
    assert!(text.contains("sum_bt"), "{text}");
}
