//! The histogram tactic: a kernel whose body is histogram writes
//! (`h[x[i]] += v`, `h[x[i]]++`, which the frontend holds as a loop over
//! the bins with a data-dependent `if`, see [`Kernel::histograms`]),
//! optionally after loops that clear the bins, lifts to one
//! `scatter_add(h, x, vals)` per write: NumPy's `np.add.at`, PyTorch's
//! `index_add`, JAX's `.at[].add`, a StableHLO `scatter` with an add.
//!
//! The program is not searched for: it is read off the loop IR's shape,
//! then accepted like every other program, by equality with the C spec at
//! two size tuples ([`check_program_at_both_sizes`]). The general search
//! cannot find it (no sketch has a data-dependent index) and would spend
//! its whole budget on the bins' nested selects, so a kernel with a
//! histogram write is decided here, with a reason when its shape is not
//! one this tactic reads.

use std::sync::Arc;

use tenslift_frontend::ir::{self as loop_ir, Affine, ExprKind, IfKind, Kernel, LValue, Loop};
use tenslift_frontend::ir_rewrite;
use tenslift_targets::{Dim, Expr, Lit, Op, Param, ParamKind, Program, Stmt, Ty};

use super::cost;
use super::options::{Lifted, SynthError};
use super::signature::{self, infer_unknown_extents, params_of};
use super::tactic::{KernelContext, KernelResult, KernelTactic};
use super::trace::Trace;
use crate::spec::tensir::{check_program_at_both_sizes, Comparison};
use crate::spec::{spec_at_chosen_sizes, Sizes};

/// The `histogram` kernel tactic; see the module documentation. It
/// decides a kernel with a histogram write, program or reason.
pub struct Histogram;

impl KernelTactic for Histogram {
    fn name(&self) -> &'static str {
        "histogram"
    }

    fn summary(&self) -> &'static str {
        "h[x[i]] += v read off the loop IR as scatter_add(h, x, v), accepted against the spec"
    }

    fn applies(&self, kernel: &Kernel) -> Result<(), String> {
        if kernel.histograms.is_empty() {
            Err("no store through an index read from an array (`h[x[i]] += v`)".into())
        } else {
            Ok(())
        }
    }

    fn decides(&self) -> bool {
        true
    }

    fn run(&self, kernel: &Kernel, _: &KernelContext<'_>, _: &mut Trace) -> KernelResult {
        let outputs = kernel.histograms.len();
        KernelResult::Whole(match program_of(kernel) {
            Ok((program, cost)) => Lifted::whole(program, cost, outputs),
            Err(e) => Lifted::failed(e, outputs),
        })
    }
}

/// The program of the whole kernel, accepted at two size tuples.
fn program_of(kernel: &Kernel) -> Result<(Program, f64), SynthError> {
    let spec = spec_at_chosen_sizes(kernel, &Sizes::new())?;
    let params = params_of(kernel, &infer_unknown_extents(kernel, &spec.sizes)?)?;
    let mut values: Vec<(String, Expr)> = Vec::new();
    let mut iterators = Vec::new();
    ir_rewrite::iterators(&kernel.body, &mut iterators);
    for s in &kernel.body {
        // A pixel loop counting down (`while (n-- > 0) h[*p++]++;`) walks
        // the same pixels in the same order ascending.
        let (s, _) = ir_rewrite::ascend(s, &iterators);
        let (target, value) = statement(&s, kernel, &params, &values)?;
        match values.iter_mut().find(|(t, _)| *t == target) {
            Some(slot) => slot.1 = value,
            None => values.push((target, value)),
        }
    }
    let exprs: Vec<&Expr> = values.iter().map(|(_, e)| e).collect();
    let cost = cost::cost_of(&exprs, &spec.sizes);
    let body = values
        .into_iter()
        .map(|(target, value)| Stmt::Store {
            target: Arc::from(target.as_str()),
            region: None,
            value,
        })
        .collect();
    let program = Program {
        meta: signature::program_meta(kernel)?,
        name: Arc::from(kernel.name.as_str()),
        params,
        ret: None,
        body,
    };
    program
        .validate()
        .map_err(|e| SynthError::Rejected(e.to_string()))?;
    match check_program_at_both_sizes(&program, kernel)? {
        (Comparison::Equal, _) => Ok((program, cost)),
        (other, sizes) => Err(SynthError::Rejected(format!(
            "the histogram program differs from the C at {}: {other}",
            crate::spec::format_sizes(&sizes)
        ))),
    }
}

/// One top-level statement: a loop clearing the bins (`h[b] = c`) or a
/// histogram nest, as the new value of the array it writes.
fn statement(
    s: &loop_ir::Stmt,
    kernel: &Kernel,
    params: &[Param],
    values: &[(String, Expr)],
) -> Result<(String, Expr), SynthError> {
    let refuse = |why: &str| SynthError::NotFound {
        output: "(histogram kernel)".to_string(),
        tried: why.to_string(),
    };
    let loop_ir::Stmt::Loop(outer) = s else {
        return Err(refuse("a top-level statement outside a loop"));
    };
    if let Some((target, value)) = clearing(outer, params) {
        return Ok((target, value));
    }
    let mut iters: Vec<&Loop> = Vec::new();
    let mut cur = outer;
    loop {
        if let Some(h) = kernel.histograms.iter().find(|h| h.bin_iter == cur.iter) {
            return histogram_nest(cur, h, &iters, params, values).ok_or_else(|| {
                refuse(&format!(
                    "the histogram `{}[{}]` is not a whole-array walk over its index (each loop from 0 by 1, the index read at the loop iterators in order, the added value a constant or read at the same position)",
                    h.target, h.index
                ))
            });
        }
        iters.push(cur);
        match cur.body.as_slice() {
            [loop_ir::Stmt::Loop(inner)] if cur.start == Affine::constant(0) && cur.step == 1 => {
                cur = inner
            }
            _ => {
                return Err(refuse(
                    "a statement that is neither a histogram write nor clears its bins",
                ))
            }
        }
    }
}

/// `for (b = 0; b < K; b++) h[b] = c;` over the whole of `h`.
fn clearing(l: &Loop, params: &[Param]) -> Option<(String, Expr)> {
    let [loop_ir::Stmt::Assign {
        target: LValue::Element { array, index, .. },
        value,
        ..
    }] = l.body.as_slice()
    else {
        return None;
    };
    let shape = array_shape(params, array)?;
    let whole = l.start == Affine::constant(0) && l.step == 1 && shape.len() == 1;
    if !whole || index.as_slice() != [Affine::var(l.iter.clone())] || !extent_is(&shape[0], &l.end)
    {
        return None;
    }
    let dtype = array_dtype(params, array)?;
    let lit = literal(value, dtype)?;
    Some((
        array.clone(),
        Expr::new(Op::Full { shape, value: lit }, vec![]).ok()?,
    ))
}

/// The loops `iters` around the bin loop `bins` of histogram `h`:
/// `scatter_add(h, x, vals)` when they walk all of `x` in row-major order.
fn histogram_nest(
    bins: &Loop,
    h: &tenslift_frontend::ir::Histogram,
    iters: &[&Loop],
    params: &[Param],
    values: &[(String, Expr)],
) -> Option<(String, Expr)> {
    let [loop_ir::Stmt::If {
        cond,
        kind: IfKind::Data,
        then_body,
        else_body,
        ..
    }] = bins.body.as_slice()
    else {
        return None;
    };
    let [loop_ir::Stmt::Assign { value: sum, .. }] = then_body.as_slice() else {
        return None;
    };
    if !else_body.is_empty() {
        return None;
    }
    let ExprKind::Binary { lhs, .. } = &cond.kind else {
        return None;
    };
    let walk: Vec<Affine> = iters.iter().map(|l| Affine::var(l.iter.clone())).collect();
    let (index_array, index_at) = load_through_casts(lhs)?;
    let idx_shape = array_shape(params, index_array)?;
    let covers = iters.len() == idx_shape.len()
        && iters
            .iter()
            .zip(&idx_shape)
            .all(|(l, d)| l.start == Affine::constant(0) && l.step == 1 && extent_is(d, &l.end));
    if !covers || index_at != walk.as_slice() {
        return None;
    }
    let dtype = array_dtype(params, &h.target)?;
    let ExprKind::Binary { rhs: added, .. } = &strip_casts(sum).kind else {
        return None;
    };
    let vals = match load_through_casts(added) {
        Some((w, at)) if at == walk.as_slice() && array_dtype(params, w)? == dtype => {
            Expr::var(w, Ty::tensor(dtype, idx_shape.clone()))
        }
        Some(_) => return None,
        None => Expr::new(
            Op::Full {
                shape: idx_shape.clone(),
                value: literal(added, dtype)?,
            },
            vec![],
        )
        .ok()?,
    };
    let start = match values.iter().find(|(t, _)| *t == h.target) {
        Some((_, v)) => v.clone(),
        None => Expr::var(
            &h.target,
            Ty::tensor(dtype, array_shape(params, &h.target)?),
        ),
    };
    let idx_dtype = array_dtype(params, index_array)?;
    let idx = Expr::var(index_array, Ty::tensor(idx_dtype, idx_shape));
    let value = Expr::new(Op::ScatterAdd, vec![start, idx, vals]).ok()?;
    Some((h.target.clone(), value))
}

fn strip_casts(e: &loop_ir::Expr) -> &loop_ir::Expr {
    let mut cur = e;
    while let ExprKind::Cast { arg } = &cur.kind {
        if arg.ty.is_float() != cur.ty.is_float() {
            break;
        }
        cur = arg;
    }
    cur
}

/// `x[index]` under widening integer (or float-to-float) conversions.
fn load_through_casts(e: &loop_ir::Expr) -> Option<(&str, &[Affine])> {
    match &strip_casts(e).kind {
        ExprKind::Load { array, index } => Some((array, index)),
        _ => None,
    }
}

/// A literal value as the bins' element type.
fn literal(e: &loop_ir::Expr, dtype: tenslift_targets::DType) -> Option<Lit> {
    match &strip_casts(e).kind {
        ExprKind::IntLit { value } if dtype.is_float() => Some(Lit::float(*value as f64, dtype)),
        ExprKind::IntLit { value } => Some(Lit::int(*value, dtype)),
        ExprKind::FloatLit { value, .. } if dtype.is_float() => Some(Lit::float(*value, dtype)),
        _ => None,
    }
}

fn array_param<'p>(params: &'p [Param], name: &str) -> Option<&'p Param> {
    params.iter().find(|p| &*p.name == name)
}

fn array_shape(params: &[Param], name: &str) -> Option<Vec<Dim>> {
    match &array_param(params, name)?.kind {
        ParamKind::Array { shape, .. } => Some(shape.clone()),
        _ => None,
    }
}

fn array_dtype(params: &[Param], name: &str) -> Option<tenslift_targets::DType> {
    match &array_param(params, name)?.kind {
        ParamKind::Array { dtype, .. } => Some(*dtype),
        _ => None,
    }
}

/// Whether the TensIR extent `d` is the loop end `end`.
fn extent_is(d: &Dim, end: &Affine) -> bool {
    super::stencil::dim_of(end).is_some_and(|e| e == *d)
}
