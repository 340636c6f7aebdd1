//! Golden lifted TensIR programs (`tests/fixtures/lifted/`) against the
//! specs of their C kernels, extracted with the real frontend: each program
//! must compute exactly the C spec at the chosen sizes and at the second
//! size tuple, and deliberately wrong variants of them must be told apart.

mod tensir_spec_common;

use std::time::Instant;

use tensir_spec_common::{golden, load_golden, GOLDEN};
use tenslift::spec::spec_of_kernel;
use tenslift::spec::tensir::{
    check_program_against_kernel, check_program_at_both_sizes, equal_to_spec, execute, Comparison,
    Executor,
};
use tenslift_targets::{
    parse_program, BinaryOp, DType, Dim, Expr, Lit, Op, Program, ReduceKind, SliceItem, Stmt,
    TypeError,
};

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
fn the_acceptance_check_uses_both_size_tuples() {
    let g = golden("syrk");
    let (outcome, _) = check_program_at_both_sizes(&g.program, &g.kernel).expect("runs");
    assert!(outcome.is_equal(), "{outcome}");
    // Fitted to the first size tuple: `C[n-1, 0]` at n = 3 is the literal
    // index `C[2, 0]`, which is the last row only there.
    let fitted = parse_program(
        "fitted.tensir",
        "func kernel_syrk(n: size, m: size, alpha: f64, beta: f64, C: inout f64[n, n], A: f64[n, m]) {
  let updated = add(mul(beta, C), mul(alpha, matmul(A, transpose(A, perm=[1, 0]))));
  C = add(tril(updated, k=0), triu(C, k=1));
  C[2, 0] = updated[n - 1, 0];
}
",
    )
    .expect("parses");
    assert_eq!(
        g.sizes.get("n"),
        Some(&3),
        "the fitted program assumes n = 3"
    );
    let at_first = check_program_against_kernel(&fitted, &g.kernel, &g.sizes).expect("runs");
    assert!(at_first.is_equal(), "{at_first}");
    let (outcome, sizes) = check_program_at_both_sizes(&fitted, &g.kernel).expect("runs");
    assert!(!outcome.is_equal());
    assert_eq!(sizes, g.second_sizes);
}

#[test]
fn gemm_executes_quickly_at_spec_sizes() {
    let g = golden("gemm");
    let c_spec = spec_of_kernel(&g.kernel, &g.sizes).expect("C spec of gemm");
    let runs = 200;
    let start = Instant::now();
    for _ in 0..runs {
        let spec = execute(&g.program, &g.sizes).expect("gemm executes");
        assert_eq!(spec.outputs.len(), 1);
    }
    let per_execute = start.elapsed() / runs;
    let spec = execute(&g.program, &g.sizes).expect("gemm executes");
    let start = Instant::now();
    for _ in 0..runs {
        assert!(equal_to_spec(&spec, &c_spec).is_equal());
    }
    let per_compare = start.elapsed() / runs;
    let start = Instant::now();
    for _ in 0..runs {
        spec_of_kernel(&g.kernel, &g.sizes).expect("C spec of gemm");
    }
    let per_c_spec = start.elapsed() / runs;
    // A search evaluates many candidates that share pieces: with one
    // executor, `matmul(A, B)` of the golden is reused by a candidate that
    // scales it differently (and is wrong).
    let candidate = parse_program(
        "candidate.tensir",
        "func kernel_gemm(ni: size, nj: size, nk: size, alpha: f64, beta: f64,
                 C: inout f64[ni, nj], A: f64[ni, nk], B: f64[nk, nj]) {
  C = add(mul(beta, matmul(A, B)), mul(alpha, C));
}
",
    )
    .expect("parses");
    let mut executor = Executor::new(g.sizes.clone());
    executor.execute(&g.program).expect("gemm executes");
    let start = Instant::now();
    for _ in 0..runs {
        let spec = executor.execute(&candidate).expect("candidate executes");
        assert!(!equal_to_spec(&spec, &c_spec).is_equal());
    }
    let per_warm_candidate = start.elapsed() / runs;
    eprintln!(
        "gemm at {:?}: {per_execute:?} per execute, {per_compare:?} per comparison \
         ({per_c_spec:?} per C spec); {per_warm_candidate:?} per execute + compare of a \
         candidate sharing matmul(A, B) through an Executor",
        g.sizes
    );
    let per_run = per_execute + per_compare;
    assert!(per_run.as_millis() < 50, "{per_run:?} per execute");
}

/// Rebuilds `e` bottom-up through the type checker, letting `replace`
/// substitute any rebuilt node.
fn rewrite(e: &Expr, replace: &dyn Fn(&Expr) -> Option<Expr>) -> Result<Expr, TypeError> {
    let node = if e.args().is_empty() {
        e.clone()
    } else {
        let args = e
            .args()
            .iter()
            .map(|a| rewrite(a, replace))
            .collect::<Result<Vec<_>, _>>()?;
        Expr::new(e.op().clone(), args)?
    };
    Ok(replace(&node).unwrap_or(node))
}

/// The program with `replace` applied to every statement's value; panics
/// when the mutation does not apply or leaves an invalid program, so every
/// variant below really is a different, well-typed program.
fn mutate(program: &Program, what: &str, replace: &dyn Fn(&Expr) -> Option<Expr>) -> Program {
    let fix = |v: &Expr| {
        rewrite(v, replace).unwrap_or_else(|e| panic!("{}: {what}: ill-typed: {e}", program.name))
    };
    let body = rebuild_stmts(&program.body, &fix);
    let variant = Program {
        body,
        ..program.clone()
    };
    assert_ne!(
        &variant, program,
        "{}: {what} changed nothing",
        program.name
    );
    variant
        .validate()
        .unwrap_or_else(|e| panic!("{}: {what}: invalid: {e}", program.name));
    variant
}

fn is_var(e: &Expr, name: &str) -> bool {
    matches!(e.op(), Op::Var(v) if &**v == name)
}

fn lit_i32(v: i64) -> Expr {
    Expr::lit(Lit::int(v, DType::I32))
}

fn binary(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr::binary(op, a, b).expect("well-typed helper expression")
}

/// Python's `a // b` written in TensIR: C's quotient, minus one when the
/// division is inexact and the operands' signs differ.
fn floor_div(a: &Expr, b: &Expr) -> Expr {
    let quotient = binary(BinaryOp::TruncDiv, a.clone(), b.clone());
    let remainder = binary(BinaryOp::Rem, a.clone(), b.clone());
    let inexact = binary(BinaryOp::Ne, remainder, lit_i32(0));
    let signs_differ = binary(
        BinaryOp::Ne,
        binary(BinaryOp::Lt, a.clone(), lit_i32(0)),
        binary(BinaryOp::Lt, b.clone(), lit_i32(0)),
    );
    let adjust = Expr::new(
        Op::Cast(DType::I32),
        vec![binary(BinaryOp::And, inexact, signs_differ)],
    )
    .expect("cast to i32");
    binary(BinaryOp::Sub, quotient, adjust)
}

type Mutation = Box<dyn Fn(&Expr) -> Option<Expr>>;

/// Deliberately wrong variants: (golden, what is wrong, the rewrite).
fn wrong_variants() -> Vec<(&'static str, &'static str, Mutation)> {
    vec![
        (
            "gemm",
            "missing alpha",
            Box::new(|e: &Expr| match (e.op(), e.args()) {
                (Op::Binary(BinaryOp::Mul), [a, b]) if is_var(a, "alpha") => Some(b.clone()),
                _ => None,
            }),
        ),
        (
            "mvt",
            "A used untransposed (swapped indices)",
            Box::new(|e: &Expr| match e.op() {
                Op::Transpose(_) => Some(e.args()[0].clone()),
                _ => None,
            }),
        ),
        (
            "mvt",
            "wrong reduction axis",
            Box::new(|e: &Expr| match e.op() {
                Op::Reduce { kind, axes } if axes == &[1] => {
                    Expr::reduce(*kind, e.args()[0].clone(), vec![0]).ok()
                }
                _ => None,
            }),
        ),
        (
            "gemver",
            "matmul operands swapped (A instead of A^T)",
            Box::new(|e: &Expr| match (e.op(), e.args()) {
                (Op::Matmul, [y, a]) if is_var(y, "y") => {
                    Expr::new(Op::Matmul, vec![a.clone(), y.clone()]).ok()
                }
                _ => None,
            }),
        ),
        (
            "doitgen",
            "off-by-one row index",
            Box::new(|e: &Expr| match e.op() {
                Op::Slice(items) => {
                    let shifted = items
                        .iter()
                        .map(|it| match it {
                            SliceItem::Index(d) => d.sub(&Dim::constant(1)).map(SliceItem::Index),
                            other => Ok(other.clone()),
                        })
                        .collect::<Result<Vec<_>, _>>()
                        .ok()?;
                    Expr::new(Op::Slice(shifted), vec![e.args()[0].clone()]).ok()
                }
                _ => None,
            }),
        ),
        (
            "gemm_nt",
            "off-by-one column slice of B",
            Box::new(|e: &Expr| match (e.op(), e.args()) {
                (Op::Slice(items), [b]) if is_var(b, "B") => {
                    let shifted = items
                        .iter()
                        .map(|it| match it {
                            SliceItem::Range { start, stop, step } => Ok(SliceItem::Range {
                                start: start.add(&Dim::constant(1))?,
                                stop: stop.add(&Dim::constant(1))?,
                                step: *step,
                            }),
                            other => Ok(other.clone()),
                        })
                        .collect::<Result<Vec<_>, tenslift_targets::DimError>>()
                        .ok()?;
                    Expr::new(Op::Slice(shifted), vec![b.clone()]).ok()
                }
                _ => None,
            }),
        ),
        (
            "trmm",
            "off-by-one diagonal (k >= i instead of k > i)",
            Box::new(|e: &Expr| match e.op() {
                Op::Triu(k) => Expr::new(Op::Triu(k - 1), e.args().to_vec()).ok(),
                _ => None,
            }),
        ),
        (
            "syrk",
            "upper triangle updated instead of the lower one",
            Box::new(|e: &Expr| match e.op() {
                Op::Tril(k) => Expr::new(Op::Triu(-k), e.args().to_vec()).ok(),
                Op::Triu(k) => Expr::new(Op::Tril(-k), e.args().to_vec()).ok(),
                _ => None,
            }),
        ),
        (
            "color_burn_8",
            "floor division instead of C's truncating division",
            Box::new(|e: &Expr| match (e.op(), e.args()) {
                (Op::Binary(BinaryOp::TruncDiv), [a, b]) => Some(floor_div(a, b)),
                _ => None,
            }),
        ),
        (
            "linear_burn_8",
            "clamped from above instead of below (minimum for maximum)",
            Box::new(|e: &Expr| match (e.op(), e.args()) {
                (Op::Binary(BinaryOp::Maximum), [a, b]) => {
                    Expr::binary(BinaryOp::Minimum, a.clone(), b.clone()).ok()
                }
                _ => None,
            }),
        ),
        (
            "softmax_part1",
            "minimum instead of maximum of a running comparison",
            Box::new(|e: &Expr| match e.op() {
                Op::Reduce {
                    kind: ReduceKind::Max,
                    axes,
                } => Expr::reduce(ReduceKind::Min, e.args()[0].clone(), axes.clone()).ok(),
                _ => None,
            }),
        ),
        (
            "darken_blend_8",
            "select branches swapped",
            Box::new(|e: &Expr| match (e.op(), e.args()) {
                (Op::Where, [c, a, b]) => {
                    Expr::new(Op::Where, vec![c.clone(), b.clone(), a.clone()]).ok()
                }
                _ => None,
            }),
        ),
        (
            "multiply_blend_8",
            "widening casts dropped (the product wraps in uint8)",
            Box::new(|e: &Expr| match (e.op(), e.args()) {
                (Op::Cast(DType::I32), [x]) if x.dtype() == DType::U8 => Some(x.clone()),
                (Op::Lit(Lit::Int(v, DType::I32)), _) => Some(Expr::lit(Lit::int(*v, DType::U8))),
                _ => None,
            }),
        ),
    ]
}

#[test]
fn wrong_variants_of_golden_programs_are_caught() {
    let variants = wrong_variants();
    let mut programs: Vec<&str> = variants.iter().map(|(stem, _, _)| *stem).collect();
    programs.dedup();
    assert!(programs.len() >= 6);
    for (stem, what, mutation) in &variants {
        let g = golden(stem);
        let variant = mutate(&g.program, what, mutation.as_ref());
        let c_spec = spec_of_kernel(&g.kernel, &g.sizes).expect("C spec");
        let spec = execute(&variant, &g.sizes)
            .unwrap_or_else(|e| panic!("{stem} ({what}): the variant does not execute: {e}"));
        match equal_to_spec(&spec, &c_spec) {
            Comparison::Differs {
                output, program, c, ..
            } => {
                assert_ne!(program, c, "{stem} ({what})");
                assert!(!output.is_empty());
            }
            other => panic!("{stem} ({what}) was not caught: {other:?}"),
        }
        // The unmutated golden program still passes: the rewrite machinery
        // itself changes nothing when it matches nothing.
        let same = mutate_identity(&g.program);
        assert!(equal_to_spec(&execute(&same, &g.sizes).expect("runs"), &c_spec).is_equal());
    }
}

/// A rebuild with no replacement: must give back an equal program.
fn mutate_identity(program: &Program) -> Program {
    let body = rebuild_stmts(&program.body, &|v| rewrite(v, &|_| None).expect("rebuilds"));
    let rebuilt = Program {
        body,
        ..program.clone()
    };
    assert_eq!(&rebuilt, program);
    rebuilt
}

#[test]
fn a_difference_report_names_the_element_and_both_expressions() {
    let g = golden("gemm");
    let variant = mutate(
        &g.program,
        "missing alpha",
        &|e: &Expr| match (e.op(), e.args()) {
            (Op::Binary(BinaryOp::Mul), [a, b]) if is_var(a, "alpha") => Some(b.clone()),
            _ => None,
        },
    );
    let c_spec = spec_of_kernel(&g.kernel, &g.sizes).expect("C spec");
    let outcome = equal_to_spec(&execute(&variant, &g.sizes).expect("runs"), &c_spec);
    let text = outcome.to_string();
    assert!(text.starts_with("C[0,0] differs"), "{text}");
    assert!(text.contains("alpha"), "{text}");
}

/// The statements with `fix` applied to every value, loop bodies included.
fn rebuild_stmts(stmts: &[Stmt], fix: &dyn Fn(&Expr) -> Expr) -> Vec<Stmt> {
    tenslift_targets::map_values(stmts, &mut |value| fix(value))
}

/// The golden program's text with `from` replaced by `to` (which must occur).
fn text_variant(stem: &'static str, from: &str, to: &str) -> Program {
    let path = tensir_spec_common::fixture_path(stem);
    let text = std::fs::read_to_string(&path).expect("readable golden program");
    assert!(text.contains(from), "{stem}: `{from}` does not occur");
    parse_program("variant.tensir", &text.replacen(from, to, 1))
        .unwrap_or_else(|d| panic!("{stem}: variant does not parse: {d}"))
}

#[test]
fn loop_programs_run_every_iteration_in_order() {
    for stem in ["jacobi_1d", "jacobi_2d", "trisolv"] {
        let g = golden(stem);
        for sizes in [&g.sizes, &g.second_sizes] {
            let trips = sizes.get("tsteps").or(sizes.get("n")).copied();
            assert!(
                trips.is_some_and(|t| t >= 2),
                "{stem}: {sizes:?} runs too few iterations"
            );
        }
    }
    let variants = [
        // One time step too few.
        ("jacobi_1d", "0..tsteps", "0..tsteps - 1"),
        // The second half-step reads A instead of the B just computed.
        (
            "jacobi_2d",
            "add(B[1:n - 1, 1:n - 1]",
            "add(A[1:n - 1, 1:n - 1]",
        ),
        // The first row is never solved.
        ("trisolv", "0..n", "1..n"),
        // The recurrence reads b instead of the solved prefix of x.
        ("trisolv", "x[0:i]", "b[0:i]"),
    ];
    for (stem, from, to) in variants {
        let g = golden(stem);
        let variant = text_variant(stem, from, to);
        match check_program_against_kernel(&variant, &g.kernel, &g.sizes) {
            Ok(Comparison::Differs { .. }) => {}
            other => panic!("{stem} with `{to}` was not caught: {other:?}"),
        }
    }
}
