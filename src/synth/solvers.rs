//! Solvers as library operations: proposes TensIR programs over
//! `cholesky`, `trisolve_*` and `lu_nopivot` for a kernel that computes
//! one of the dense factorisations or substitutions in place, and keeps
//! the first that equals the C spec at every acceptance size tuple.
//!
//! The proposals come from the kernel's signature (a written square float
//! matrix, vectors of its size): Cholesky (`A`'s lower triangle replaced
//! by its factor, the strict upper triangle kept), LU without pivoting
//! (packed `L\U`), LU followed by forward and back substitution (PolyBench
//! ludcmp), and one forward or back substitution (trisolv). They are tried
//! only for a kernel whose loop IR has the shape of a substitution: a loop
//! bounded by an enclosing loop's iterator (a triangle) and a float
//! division. Nothing here decides equality: the acceptance check compares
//! the program's exact symbolic value, the TensIR recurrence of each
//! operation (`tenslift_targets::solvers`), with the C's, element by
//! element, as for any other candidate.

use std::sync::Arc;

use tenslift_frontend::ir::{self as loop_ir, ExprKind, Kernel};
use tenslift_targets::{DType, Dim, Expr, Op, Param, ParamKind, Program, Stmt};

use super::options::{Lifted, SynthOptions};
use super::signature::{
    infer_unknown_extents, params_of, rebase_onto_regions, region_views, search_params,
};
use super::tactic::{KernelContext, KernelResult, KernelTactic};
use super::trace::Trace;
use crate::spec::tensir::{check_program_at_both_sizes, Comparison};
use crate::spec::{spec_at_chosen_sizes, Sizes};

/// The `solver` kernel tactic; see the module documentation.
pub struct Solver;

impl KernelTactic for Solver {
    fn name(&self) -> &'static str {
        "solver"
    }

    fn summary(&self) -> &'static str {
        "whole programs over cholesky, trisolve_* and lu_nopivot for a substitution-shaped kernel, accepted against the spec"
    }

    fn applies(&self, kernel: &Kernel) -> Result<(), String> {
        if kernel.returns.is_some() {
            Err("the kernel returns a value".into())
        } else if !looks_like_substitution(&kernel.body) {
            Err("no loop bounded by an enclosing iterator with a float division".into())
        } else {
            Ok(())
        }
    }

    fn run(&self, kernel: &Kernel, context: &KernelContext<'_>, _: &mut Trace) -> KernelResult {
        match lift_as_solver(kernel, context.options) {
            Some(lifted) => KernelResult::Whole(lifted),
            None => KernelResult::Nothing,
        }
    }
}

/// Lifts `kernel` whole to solver operations, or `None` when no proposal
/// equals its spec.
fn lift_as_solver(kernel: &Kernel, options: &SynthOptions) -> Option<Lifted> {
    let spec = spec_at_chosen_sizes(kernel, &Sizes::new()).ok()?;
    let declared = params_of(kernel, &infer_unknown_extents(kernel, &spec.sizes).ok()?).ok()?;
    let regions = region_views(kernel, &declared);
    let params = search_params(&declared, &regions);
    for mut body in proposals(&params) {
        // A region array's store writes its region (the distributed form).
        for stmt in &mut body {
            if let Stmt::Store { target, region, .. } = stmt {
                *region = regions.get(target).cloned();
            }
        }
        let program = Program {
            meta: super::signature::program_meta(kernel).ok()?,
            name: Arc::from(kernel.name.as_str()),
            params: declared.clone(),
            ret: None,
            body: rebase_onto_regions(&body, &regions).ok()?,
        };
        if program.validate().is_err() {
            continue;
        }
        if let Ok((Comparison::Equal, _)) = check_program_at_both_sizes(&program, kernel) {
            let values: Vec<&Expr> = body
                .iter()
                .filter_map(|s| match s {
                    Stmt::Store { value, .. } => Some(value),
                    _ => None,
                })
                .collect();
            let outputs = values.len();
            let cost = options.model.cost_of(&values, &spec.sizes);
            let mut lifted = Lifted::whole(program, cost, spec.outputs.len());
            lifted.solved = outputs;
            return Some(lifted);
        }
    }
    None
}

/// Whether some loop is bounded by an enclosing loop's iterator and some
/// assignment divides floats: every substitution and factorisation does.
fn looks_like_substitution(body: &[loop_ir::Stmt]) -> bool {
    let mut triangle = false;
    let mut divides = false;
    walk(body, &mut Vec::new(), &mut triangle, &mut divides);
    triangle && divides
}

fn walk(body: &[loop_ir::Stmt], iters: &mut Vec<String>, triangle: &mut bool, divides: &mut bool) {
    for s in body {
        match s {
            loop_ir::Stmt::Loop(l) => {
                let bounded =
                    |a: &tenslift_frontend::ir::Affine| a.terms.keys().any(|t| iters.contains(t));
                *triangle |= bounded(&l.start) || bounded(&l.end);
                iters.push(l.iter.clone());
                walk(&l.body, iters, triangle, divides);
                iters.pop();
            }
            loop_ir::Stmt::Assign { value, .. } => *divides |= float_division(value),
            loop_ir::Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                walk(then_body, iters, triangle, divides);
                walk(else_body, iters, triangle, divides);
            }
            loop_ir::Stmt::Return { .. } => {}
        }
    }
}

fn float_division(e: &loop_ir::Expr) -> bool {
    match &e.kind {
        ExprKind::Binary { op, lhs, rhs } => {
            (*op == loop_ir::BinaryOp::Div && e.ty.is_float())
                || float_division(lhs)
                || float_division(rhs)
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => float_division(arg),
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => float_division(cond) || float_division(then_value) || float_division(else_value),
        ExprKind::Call { args, .. } => args.iter().any(float_division),
        _ => false,
    }
}

/// A float array parameter: its name, shape and whether the kernel writes it.
struct FloatArray<'p> {
    name: &'p str,
    shape: &'p [Dim],
    written: bool,
    param: &'p Param,
}

fn float_arrays(params: &[Param]) -> Vec<FloatArray<'_>> {
    params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Array {
                dtype: DType::F32 | DType::F64,
                shape,
                access,
            } => Some(FloatArray {
                name: &p.name,
                shape,
                written: access.is_written(),
                param: p,
            }),
            _ => None,
        })
        .collect()
}

/// The candidate bodies, cheapest kinds first.
fn proposals(params: &[Param]) -> Vec<Vec<Stmt>> {
    let arrays = float_arrays(params);
    let var = |a: &FloatArray| Expr::var(a.name, a.param.ty());
    let square = |a: &FloatArray| matches!(a.shape, [r, c] if r == c);
    let vector_of = |a: &FloatArray, m: &FloatArray| a.shape.len() == 1 && a.shape[0] == m.shape[0];
    let written: Vec<&FloatArray> = arrays.iter().filter(|a| a.written).collect();
    let mut out = Vec::new();
    for m in arrays.iter().filter(|a| square(a)) {
        let vectors = |w: bool| -> Vec<&FloatArray> {
            arrays
                .iter()
                .filter(|v| v.written == w && vector_of(v, m))
                .collect()
        };
        let (read_vectors, written_vectors) = (vectors(false), vectors(true));
        if m.written && written.len() == 1 {
            out.extend(cholesky_and_lu(m.name, var(m)));
        }
        if m.written && written.len() == 3 && written_vectors.len() == 2 {
            for b in &read_vectors {
                for (y, x) in [(0, 1), (1, 0)] {
                    let (y, x) = (written_vectors[y], written_vectors[x]);
                    out.extend(ludcmp(m, b, y, x, &var));
                }
            }
        }
        if !m.written && written.len() == 1 && written_vectors.len() == 1 {
            let x = written_vectors[0];
            for b in &read_vectors {
                for lower in [true, false] {
                    let op = Op::TriSolve { lower, unit: false };
                    if let Ok(value) = Expr::new(op, vec![var(m), var(b)]) {
                        out.push(vec![store(x.name, value)]);
                    }
                }
            }
        }
    }
    out
}

fn store(target: &str, value: Expr) -> Stmt {
    Stmt::Store {
        target: Arc::from(target),
        region: None,
        value,
    }
}

/// `A = cholesky(A) + triu(A, 1)` (the C leaves the strict upper triangle
/// as it was) and `A = lu_nopivot(A)`.
fn cholesky_and_lu(name: &str, a: Expr) -> Vec<Vec<Stmt>> {
    let mut out = Vec::new();
    let chol = Expr::new(Op::Cholesky, vec![a.clone()])
        .and_then(|l| Ok((l, Expr::new(Op::Triu(1), vec![a.clone()])?)))
        .and_then(|(l, upper)| {
            Expr::new(Op::Binary(tenslift_targets::BinaryOp::Add), vec![l, upper])
        });
    if let Ok(value) = chol {
        out.push(vec![store(name, value)]);
    }
    if let Ok(value) = Expr::new(Op::LuNoPivot, vec![a]) {
        out.push(vec![store(name, value)]);
    }
    out
}

/// PolyBench ludcmp: `A = lu_nopivot(A)`, then `L y = b` (unit lower) and
/// `U x = y` (upper), both reading the packed factors.
fn ludcmp(
    m: &FloatArray,
    b: &FloatArray,
    y: &FloatArray,
    x: &FloatArray,
    var: &dyn Fn(&FloatArray) -> Expr,
) -> Option<Vec<Stmt>> {
    let lu = Expr::new(Op::LuNoPivot, vec![var(m)]).ok()?;
    let forward = Op::TriSolve {
        lower: true,
        unit: true,
    };
    let back = Op::TriSolve {
        lower: false,
        unit: false,
    };
    let yv = Expr::new(forward, vec![var(m), var(b)]).ok()?;
    let xv = Expr::new(back, vec![var(m), var(y)]).ok()?;
    Some(vec![
        store(m.name, lu),
        store(y.name, yv),
        store(x.name, xv),
    ])
}
