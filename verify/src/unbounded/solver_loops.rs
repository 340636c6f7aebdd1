//! Solver operations proved through their defining loops.
//!
//! `lu_nopivot` and `cholesky` are defined by recurrences over all earlier
//! elements (`targets::solvers`); unfolded per element they make queries
//! too large to state (see `lifted.rs`). But a statement that factors a
//! matrix in place, `A[0:n, 0:n] = lu_nopivot(A[0:n, 0:n])`, is the same
//! as the recurrence written as row-by-row loops over `A` — the very
//! order `targets::solvers` computes it in, reading the rows it already
//! finished — and a program with those loops kept is proved against the
//! C by simulation (`loops`), like a partial lift. The loops take the C's
//! iterator names, so they line up with the C's loops when the C factors
//! row by row (PolyBench's `lu`, `cholesky`); a C written another way
//! (right-looking, column by column) is not proved this way.
//!
//! The factorisation may be followed by statements that are no
//! factorisations (ludcmp's two triangular solves): they stay as they are,
//! and the simulation proves them against the C's loops after the
//! factoring one, on whatever the factorisation left.

use tenslift_frontend::ir::{self as loop_ir, Kernel};
use tenslift_targets::{
    parse_program, print_expr, print_program, print_slice, BinaryOp, Expr, Op, ParamKind, Program,
    SliceItem, Stmt,
};

/// Which factorisation the statement is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Factor {
    /// `A = lu_nopivot(A)`.
    Lu,
    /// `A = add(cholesky(A), triu(A, k=1))`: the lower triangle
    /// factored, the upper one left as it was.
    CholeskyKeepUpper,
}

/// The program with its in-place factorisation (its first statement)
/// written as loops named after the C's, and the invariant line that says
/// so; `None` when the program does not start with one such statement,
/// factors twice, or the C has no loops to name them after.
pub(super) fn expand(kernel: &Kernel, program: &Program) -> Option<(Program, String)> {
    let [Stmt::Store {
        target,
        region,
        value,
    }, rest @ ..] = program.body.as_slice()
    else {
        return None;
    };
    if rest.iter().any(|s| s.has_loop() || factors(s)) {
        return None;
    }
    let (whole, n) = square_region(program, target, region.as_deref())?;
    let factor = factor_of(value, &whole)?;
    let names = c_iterators(kernel, factor, rest.is_empty())?;
    let rest_text = rest_text(kernel, program, rest, &n)?;
    let looped = with_loops(program, factor, target, &n, &names, &rest_text)?;
    let op = match factor {
        Factor::Lu => "lu_nopivot",
        Factor::CholeskyKeepUpper => "cholesky",
    };
    let line = format!(
        "`{target}{} = {}` is `{op}`'s defining recurrence written as loops over `{target}` (row by row, as targets::solvers computes it), proved against the C's loops `{}` by simulation",
        region.as_deref().map(print_slice).unwrap_or_default(),
        print_expr(value),
        names.join("`, `"),
    );
    Some((looped, line))
}

/// `program` with its body replaced by the factorisation's loops.
fn with_loops(
    program: &Program,
    factor: Factor,
    target: &str,
    n: &str,
    names: &[String],
    rest_text: &str,
) -> Option<Program> {
    let mut empty = program.clone();
    empty.body.clear();
    let head = print_program(&empty);
    let body = loops_text(factor, target, n, names) + rest_text;
    let text = format!("{}{body}}}\n", head.strip_suffix("}\n")?);
    parse_program("<expanded>", &text).ok()
}

/// The stored operand as text (`A[0:n, 0:n]`, or `A` stored whole) and
/// the matrix's order `n`, when the store covers a square block at the
/// origin.
fn square_region(
    program: &Program,
    target: &str,
    region: Option<&[SliceItem]>,
) -> Option<(String, String)> {
    match region {
        Some(
            items @ [SliceItem::Range {
                start: s0,
                stop: n0,
                step: 1,
            }, SliceItem::Range {
                start: s1,
                stop: n1,
                step: 1,
            }],
        ) if s0.as_const() == Some(0) && s1.as_const() == Some(0) && n0 == n1 => {
            Some((format!("{target}{}", print_slice(items)), n0.to_string()))
        }
        None => match program.param(target).map(|p| &p.kind) {
            Some(ParamKind::Array { shape, .. }) if shape.len() == 2 && shape[0] == shape[1] => {
                Some((target.to_string(), shape[0].to_string()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The factorisation `value` is, of the operand printed `whole`.
fn factor_of(value: &Expr, whole: &str) -> Option<Factor> {
    let of_whole = |e: &Expr| e.args().len() == 1 && print_expr(&e.args()[0]) == whole;
    match value.op() {
        Op::LuNoPivot if of_whole(value) => Some(Factor::Lu),
        Op::Binary(BinaryOp::Add) => {
            let [a, b] = value.args() else { return None };
            let chol = |e: &Expr| matches!(e.op(), Op::Cholesky) && of_whole(e);
            let upper = |e: &Expr| matches!(e.op(), Op::Triu(1)) && of_whole(e);
            ((chol(a) && upper(b)) || (chol(b) && upper(a))).then_some(Factor::CholeskyKeepUpper)
        }
        _ => None,
    }
}

/// The C's iterators for the loops: its first top-level loop (rows; the
/// only one when nothing follows the factorisation), then the loops
/// directly inside it that the expansion keeps (the strict lower part; for
/// LU also the upper part).
fn c_iterators(kernel: &Kernel, factor: Factor, alone: bool) -> Option<Vec<String>> {
    let mut loops = kernel.body.iter().filter_map(|s| match s {
        loop_ir::Stmt::Loop(l) => Some(l),
        _ => None,
    });
    let rows = loops.next()?;
    if alone && loops.next().is_some() {
        return None;
    }
    let inner: Vec<String> = rows
        .body
        .iter()
        .filter_map(|s| match s {
            loop_ir::Stmt::Loop(l) => Some(l.iter.clone()),
            _ => None,
        })
        .collect();
    // LU keeps both inner loops; Cholesky keeps the first (the diagonal's
    // reduction after it stays a statement of the row's body).
    let kept = match (factor, inner.len()) {
        (Factor::Lu, 2) => 2,
        (Factor::CholeskyKeepUpper, 1..) => 1,
        _ => return None,
    };
    Some(
        std::iter::once(rows.iter.clone())
            .chain(inner.into_iter().take(kept))
            .collect(),
    )
}

/// The statements after the factorisation as TensIR text: each as it is,
/// but a back substitution `X[0:n] = trisolve_upper(A[0:n, 0:n], Y[0:n])`
/// as its defining loop, named after the C's top-level loop in the same
/// place (one C loop per statement), which runs it ascending once
/// descending loops are turned around: `X[n-1-i] = (Y[n-1-i] - A[n-1-i,
/// n-i:n] · X[n-i:n]) / A[n-1-i, n-1-i]`. Its element definition is a
/// recurrence in descending order, which the element encoding lacks.
fn rest_text(kernel: &Kernel, program: &Program, rest: &[Stmt], n: &str) -> Option<String> {
    let c_loops: Vec<&loop_ir::Loop> = kernel
        .body
        .iter()
        .filter_map(|s| match s {
            loop_ir::Stmt::Loop(l) => Some(l),
            _ => None,
        })
        .collect();
    let mut empty = program.clone();
    empty.body.clear();
    let head_len = print_program(&empty).strip_suffix("}\n")?.len();
    let mut out = String::new();
    for (k, stmt) in rest.iter().enumerate() {
        let looped = (c_loops.len() == rest.len() + 1)
            .then(|| back_substitution(program, stmt, n, &c_loops[k + 1].iter))
            .flatten();
        match looped {
            Some(text) => out.push_str(&text),
            None => {
                let mut one = program.clone();
                one.body = vec![stmt.clone()];
                let text = print_program(&one);
                out.push_str(text.get(head_len..)?.strip_suffix("}\n")?);
            }
        }
    }
    Some(out)
}

/// `stmt` as its defining loop over `i` when it is a back substitution of
/// order `n` on operands at the origin (blocks `A[0:n, 0:n]` or arrays of
/// that shape).
fn back_substitution(program: &Program, stmt: &Stmt, n: &str, i: &str) -> Option<String> {
    let Stmt::Store {
        target,
        region,
        value,
    } = stmt
    else {
        return None;
    };
    let Op::TriSolve { lower: false, unit } = value.op() else {
        return None;
    };
    let [a, y] = value.args() else { return None };
    // The name of an operand that is the block of order `n` at the origin.
    let block = |text: &str, rank: usize| -> Option<String> {
        let slice = vec![format!("0:{n}"); rank].join(", ");
        if let Some(name) = text.strip_suffix(&format!("[{slice}]")) {
            return Some(name.to_string());
        }
        match program.param(text).map(|p| &p.kind) {
            Some(ParamKind::Array { shape, .. })
                if shape.len() == rank && shape.iter().all(|d| d.to_string() == n) =>
            {
                Some(text.to_string())
            }
            _ => None,
        }
    };
    let a_name = block(&print_expr(a), 2)?;
    let y_name = block(&print_expr(y), 1)?;
    let stored = match region {
        Some(items) => format!("{target}{}", print_slice(items)),
        None => target.to_string(),
    };
    block(&stored, 1)?;
    let row = format!("{n} - 1 - {i}");
    let residual = format!(
        "sub({y_name}[{row}], matmul({a_name}[{row}, {n} - {i}:{n}], {target}[{n} - {i}:{n}]))"
    );
    let solved = if *unit {
        residual
    } else {
        format!("div({residual}, {a_name}[{row}, {row}])")
    };
    Some(format!(
        "  for {i} in 0..{n} {{\n    {target}[{row}] = {solved};\n  }}\n"
    ))
}

/// Whether statement `s` computes a factorisation anywhere in its value.
fn factors(s: &Stmt) -> bool {
    fn has(e: &Expr) -> bool {
        matches!(e.op(), Op::LuNoPivot | Op::Cholesky) || e.args().iter().any(has)
    }
    match s {
        Stmt::Store { value, .. } | Stmt::Let { value, .. } | Stmt::Return(value) => has(value),
        _ => false,
    }
}

/// The loops, as TensIR text, indented for a function body.
fn loops_text(factor: Factor, a: &str, n: &str, names: &[String]) -> String {
    let (i, j) = (&names[0], &names[1]);
    let lower = format!(
        "    for {j} in 0..{i} {{\n\
         \x20     {a}[{i}, {j}] = div(add(matmul({a}[{i}, 0:{j}], neg({rows})), {a}[{i}, {j}]), {a}[{j}, {j}]);\n\
         \x20   }}\n",
        rows = match factor {
            Factor::Lu => format!("{a}[0:{j}, {j}]"),
            Factor::CholeskyKeepUpper => format!("{a}[{j}, 0:{j}]"),
        },
    );
    let rest = match factor {
        Factor::Lu => {
            let k = &names[2];
            format!(
                "    for {k} in {i}..{n} {{\n\
                 \x20     {a}[{i}, {k}] = sub({a}[{i}, {k}], matmul({a}[{i}, 0:{i}], {a}[0:{i}, {k}]));\n\
                 \x20   }}\n"
            )
        }
        Factor::CholeskyKeepUpper => format!(
            "    {a}[{i}, {i}] = sub({a}[{i}, {i}], matmul({a}[{i}, 0:{i}], {a}[{i}, 0:{i}]));\n\
             \x20   {a}[{i}, {i}] = sqrt({a}[{i}, {i}]);\n"
        ),
    };
    format!("  for {i} in 0..{n} {{\n{lower}{rest}  }}\n")
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use tenslift_targets::interp::{self, Array};
    use tenslift_targets::DType;

    /// Runs `text`'s program on a diagonally dominant symmetric matrix of
    /// order 5 (both factorisations exist) and returns `A` afterwards.
    fn run(program: &Program) -> Vec<f64> {
        let n = 5usize;
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let v = 1.0 / (1.0 + (i + j) as f64) + ((i * 7 + j * 3) % 5) as f64 * 0.01;
                a[i * n + j] += v;
                a[j * n + i] += v;
            }
            a[i * n + i] += 2.0 * n as f64;
        }
        let sizes = HashMap::from([("n".to_string(), n as i64)]);
        let args = HashMap::from([("A".to_string(), Array::from_f64(DType::F64, vec![n, n], a))]);
        let out = interp::run(program, &sizes, &args).unwrap_or_else(|e| panic!("{e}"));
        let a = &out.arrays["A"];
        (0..n * n).map(|k| a.get_f64(k)).collect()
    }

    fn program(body: &str) -> Program {
        let text = format!("func f(n: size, A: inout f64[n, n]) {{\n  {body}\n}}\n");
        parse_program("test.tensir", &text).unwrap_or_else(|d| panic!("{d}"))
    }

    /// The loops compute what the operation's reference implementation
    /// does (the same recurrence; a dot product in one step instead of
    /// subtracted term by term, so equal up to rounding).
    #[test]
    fn the_loops_compute_the_operation() {
        let names: Vec<String> = ["i", "j", "j_1"].iter().map(|s| s.to_string()).collect();
        for (body, factor) in [
            ("A = lu_nopivot(A);", Factor::Lu),
            (
                "A = add(cholesky(A), triu(A, k=1));",
                Factor::CholeskyKeepUpper,
            ),
        ] {
            let op = program(body);
            let Stmt::Store { value, .. } = &op.body[0] else {
                panic!("{body}")
            };
            assert_eq!(factor_of(value, "A"), Some(factor), "{body}");
            let looped = with_loops(&op, factor, "A", "n", &names, "")
                .unwrap_or_else(|| panic!("{body}: no loops"));
            for (l, o) in run(&looped).iter().zip(run(&op)) {
                assert!(
                    (l - o).abs() <= 1e-12 * o.abs().max(1.0),
                    "{body}: {l} vs {o}"
                );
            }
        }
    }

    /// Only the exact in-place forms are expanded: another operand, or the
    /// diagonal counted twice, is left to the element encoding.
    #[test]
    fn other_statements_are_not_factorisations() {
        for body in [
            "A = add(cholesky(A), triu(A, k=0));",
            "A = lu_nopivot(transpose(A, perm=[1, 0]));",
            "A = cholesky(A);",
        ] {
            let p = program(body);
            let Stmt::Store { value, .. } = &p.body[0] else {
                panic!("{body}")
            };
            assert_eq!(factor_of(value, "A"), None, "{body}");
        }
    }
}
