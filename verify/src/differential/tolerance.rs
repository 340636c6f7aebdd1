//! How far a floating-point result of a generated module may be from the
//! compiled C and still count as equal.
//!
//! The C adds its terms in loop order; NumPy, XLA and PyTorch add them in
//! pairwise or blocked order. Both are backward stable, so for an output
//! element computed by a reduction of length `K` each result is within
//! `K·u·Σ|terms|` of the exact value (`u` the unit round-off). We do not know
//! `Σ|terms|` at the element, so the output's largest magnitude stands in
//! for it, which also covers cancellation. The accepted difference is
//!
//! ```text
//! |program − C| ≤ 16 · (K + 2) · u · (|C| + max|C over the output|)
//! ```
//!
//! with `u = 2⁻²⁴` for `f32` and `2⁻⁵³` for `f64`, and `K` the longest
//! reduction in the kernel: for each assignment, the product of the trip
//! counts of its enclosing loops whose iterator does not index the target
//! (at the sizes of the run). Integers must match exactly.
//!
//! `tenslift bench` applies the same rule to the outputs it times
//! (`scripts/bench_runner.py` reads the factors from `call.json`); there only
//! the lifted program is at hand, so `K` is [`program_reduction_length`]:
//! the longest reduction or contraction of the program, times the trip
//! counts of the loops it keeps around it. A solver operation (`cholesky`,
//! `lu_nopivot`, `trisolve_*`) counts `n²` terms, a `scatter_add` the mean
//! load of a bin (its updates are summed by atomics in any order on a GPU):
//! see [`summed_terms`].

use std::collections::BTreeMap;

use tenslift_frontend::ir::{Affine, Expr, ExprKind, Kernel, LValue, ScalarType, Stmt};
use tenslift_targets::{self as tensir, DType, Dim, Op, Program};

/// The unit round-off of a float type (`None` for integers: exact).
pub fn unit_roundoff(dtype: DType) -> Option<f64> {
    match dtype {
        DType::F32 => Some(f64::powi(2.0, -24)),
        DType::F64 => Some(f64::powi(2.0, -53)),
        _ => None,
    }
}

/// The relative factor `16 · (K + 2) · u` for a reduction of length `k`.
pub fn relative_factor(dtype: DType, reduction_length: u64) -> Option<f64> {
    unit_roundoff(dtype).map(|u| 16.0 * (reduction_length as f64 + 2.0) * u)
}

/// Whether the kernel does float arithmetic in single precision (`x[i] *
/// y[i]` on `float` data): a `double` output of such a kernel (a double
/// accumulator over float products) is only as exact as single precision,
/// so its tolerance takes `f32`'s round-off.
pub fn computes_in_single(kernel: &Kernel) -> bool {
    let mut found = false;
    visit_exprs(&kernel.body, &mut |e| {
        found |= e.ty == ScalarType::F32
            && matches!(e.kind, ExprKind::Binary { .. } | ExprKind::Call { .. });
    });
    found
}

/// The element type whose round-off bounds an output of type `dtype`.
pub fn working_dtype(dtype: DType, single: bool) -> DType {
    if dtype == DType::F64 && single {
        DType::F32
    } else {
        dtype
    }
}

fn visit_exprs(body: &[Stmt], f: &mut impl FnMut(&Expr)) {
    for stmt in body {
        match stmt {
            Stmt::Loop(l) => visit_exprs(&l.body, f),
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                visit_expr(cond, f);
                visit_exprs(then_body, f);
                visit_exprs(else_body, f);
            }
            Stmt::Assign { value, .. } | Stmt::Return { value, .. } => visit_expr(value, f),
        }
    }
}

fn visit_expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => visit_expr(arg, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            visit_expr(lhs, f);
            visit_expr(rhs, f);
        }
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            visit_expr(cond, f);
            visit_expr(then_value, f);
            visit_expr(else_value, f);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| visit_expr(a, f)),
        _ => {}
    }
}

/// The longest reduction of the kernel at `sizes` (at least 1).
pub fn reduction_length(kernel: &Kernel, sizes: &BTreeMap<String, i64>) -> u64 {
    let mut longest = 1;
    walk(&kernel.body, sizes, &mut Vec::new(), &mut longest);
    longest
}

/// The longest reduction of `program` at `sizes` (at least 1): for every
/// reduction, matrix product, tensor contraction or einsum, the number of
/// terms each result element sums, multiplied by the trip counts of the
/// loops the program keeps around it (a kept loop accumulates once per trip).
pub fn program_reduction_length(program: &Program, sizes: &BTreeMap<String, i64>) -> u64 {
    let mut longest = 1;
    walk_program(&program.body, sizes, 1, &mut longest);
    longest
}

fn dim_value(d: &Dim, sizes: &BTreeMap<String, i64>) -> u64 {
    d.eval(&|name| sizes.get(name).copied())
        .map_or(1, |v| u64::try_from(v).unwrap_or(0))
}

fn walk_program(
    body: &[tensir::Stmt],
    sizes: &BTreeMap<String, i64>,
    trips: u64,
    longest: &mut u64,
) {
    for stmt in body {
        match stmt {
            tensir::Stmt::Let { value, .. }
            | tensir::Stmt::Store { value, .. }
            | tensir::Stmt::Return(value) => {
                value.walk(&mut |e| {
                    let terms = summed_terms(e, sizes);
                    *longest = (*longest).max(trips.saturating_mul(terms.max(1)));
                });
            }
            tensir::Stmt::Loop {
                start, stop, body, ..
            } => {
                // Loop variables are unknown here: take the count at the
                // outer loops' first iteration (sizes alone).
                let (a, b) = (dim_value(start, sizes), dim_value(stop, sizes));
                let count = b.saturating_sub(a).max(1);
                walk_program(body, sizes, trips.saturating_mul(count), longest);
            }
            tensir::Stmt::Var { .. } => {}
        }
    }
}

/// How many terms each element of `e` sums (1 when `e` sums nothing).
fn summed_terms(e: &tensir::Expr, sizes: &BTreeMap<String, i64>) -> u64 {
    let shape_of = |i: usize| -> Vec<u64> {
        e.args()
            .get(i)
            .map(|a| a.shape().iter().map(|d| dim_value(d, sizes)).collect())
            .unwrap_or_default()
    };
    match e.op() {
        Op::Reduce { axes, .. } => {
            let shape = shape_of(0);
            if axes.is_empty() {
                shape.iter().product()
            } else {
                axes.iter().filter_map(|&a| shape.get(a)).product()
            }
        }
        // The last element of a scan sums the whole axis.
        Op::Scan { axis, .. } => shape_of(0).get(*axis).copied().unwrap_or(1),
        // The contracted axis is the last of the left operand.
        Op::Matmul => shape_of(0).last().copied().unwrap_or(1),
        Op::Tensordot { lhs_axes, .. } => {
            let shape = shape_of(0);
            lhs_axes.iter().filter_map(|&a| shape.get(a)).product()
        }
        Op::Einsum(spec) => {
            let mut summed: BTreeMap<char, u64> = BTreeMap::new();
            for (i, letters) in spec.inputs.iter().enumerate() {
                for (letter, extent) in letters.iter().zip(shape_of(i)) {
                    if !spec.output.contains(letter) {
                        summed.insert(*letter, extent);
                    }
                }
            }
            summed.values().product()
        }
        // A rank-k update sums k products per element (a rank-2k update
        // 2k): the factors' columns.
        Op::Syrk => shape_of(0).last().copied().unwrap_or(1),
        Op::Syr2k => 2 * shape_of(0).last().copied().unwrap_or(1),
        // A histogram bin sums the updates that land in it, in no fixed
        // order on a GPU (atomics). The count is the data's: the mean load
        // of a bin stands for it (every update in one bin would make the
        // bound vacuous for f32 at LARGE sizes, and a bin shifted by one
        // would pass), so a skewed histogram may be reported as wrong.
        Op::ScatterAdd => {
            let updates: u64 = shape_of(2).iter().product();
            let bins: u64 = shape_of(0).iter().product();
            updates.div_ceil(bins.max(1))
        }
        // A factorisation's or substitution's element depends on a chain
        // through up to n² earlier elements, which LAPACK sums in blocked
        // order: its forward error is bounded by cond · n · u (Higham,
        // Accuracy and Stability, Thms. 8.5, 9.4, 10.3). The corpus' inits
        // (PolyBench's SPD and diagonally dominant matrices) are well
        // conditioned: `spd` is M Mᵀ / n + I with |m| ≤ 1, eigenvalues in
        // [1, 1 + n]; `diag_dominant` exceeds each row's and column's
        // off-diagonal sum by 1 (scripts/cref.py). n² terms stand for
        // cond · n with cond ≤ n.
        Op::Cholesky | Op::LuNoPivot | Op::TriSolve { .. } => {
            let n = shape_of(0).first().copied().unwrap_or(1);
            n.saturating_mul(n)
        }
        _ => 1,
    }
}

/// A loop being walked: its iterator and trip count.
struct Open {
    iter: String,
    trips: u64,
}

fn trip_count(start: &Affine, end: &Affine, step: i64, sizes: &BTreeMap<String, i64>) -> u64 {
    // Outer iterators are taken at 0: the count of the first (usually the
    // longest) instance of a triangular loop.
    let env = |v: &str| Some(sizes.get(v).copied().unwrap_or(0));
    let (Some(s), Some(e)) = (start.eval(&env), end.eval(&env)) else {
        return 1;
    };
    let span = if step > 0 { e - s } else { s - e };
    if span <= 0 || step == 0 {
        return 0;
    }
    let step = step.unsigned_abs();
    (span.unsigned_abs()).div_ceil(step)
}

fn walk(body: &[Stmt], sizes: &BTreeMap<String, i64>, open: &mut Vec<Open>, longest: &mut u64) {
    for stmt in body {
        match stmt {
            Stmt::Loop(l) => {
                open.push(Open {
                    iter: l.iter.clone(),
                    trips: trip_count(&l.start, &l.end, l.step, sizes),
                });
                walk(&l.body, sizes, open, longest);
                open.pop();
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                walk(then_body, sizes, open, longest);
                walk(else_body, sizes, open, longest);
            }
            Stmt::Assign { target, .. } => {
                let indexing: Vec<&str> = match target {
                    LValue::Element { index, .. } => index
                        .iter()
                        .flat_map(|a| a.terms.keys().map(String::as_str))
                        .collect(),
                    LValue::Scalar { .. } => Vec::new(),
                };
                let length = open
                    .iter()
                    .filter(|o| !indexing.contains(&o.iter.as_str()))
                    .fold(1u64, |acc, o| acc.saturating_mul(o.trips.max(1)));
                *longest = (*longest).max(length);
            }
            Stmt::Return { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_factors_grow_with_the_reduction_and_integers_are_exact() {
        let short = relative_factor(DType::F32, 1).unwrap_or(0.0);
        let long = relative_factor(DType::F32, 1000).unwrap_or(0.0);
        assert!(long > 300.0 * short);
        assert!(relative_factor(DType::F64, 1000).unwrap_or(1.0) < 1e-11);
        assert_eq!(relative_factor(DType::I32, 1000), None);
    }

    fn parse(text: &str) -> Program {
        tenslift_targets::parse_program("t.tensir", text).unwrap_or_else(|d| panic!("{d}"))
    }

    #[test]
    fn program_reductions_count_the_terms_each_element_sums() {
        let sizes: BTreeMap<String, i64> = [("m", 3), ("n", 5), ("k", 7)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let gemm = parse(
            "func f(m: size, n: size, k: size, a: f32[m, k], b: f32[k, n], c: out f32[m, n]) {\n  c = matmul(a, b);\n}\n",
        );
        assert_eq!(program_reduction_length(&gemm, &sizes), 7);
        let total = parse("func f(n: size, x: f32[n]) -> f32 {\n  return sum(x, axes=[0]);\n}\n");
        assert_eq!(program_reduction_length(&total, &sizes), 5);
        let copy = parse("func f(n: size, x: f32[n], y: out f32[n]) {\n  y = x;\n}\n");
        assert_eq!(program_reduction_length(&copy, &sizes), 1);
        // A bin sums its share of the updates (hist_weighted on CUDA):
        // 5 updates over 3 bins, 2 at most on average.
        let hist = parse(
            "func f(n: size, m: size, bin: i32[n], w: f32[n], h: inout f32[m]) {\n  h = scatter_add(h, bin, w);\n}\n",
        );
        assert_eq!(program_reduction_length(&hist, &sizes), 2);
    }
}
