//! Predicted run times per target, the C's predicted time, and the
//! roofline bound: what `lift --target auto` and the bench's `auto` and
//! roofline columns read. The search does not: it orders candidates with
//! [`crate::synth::cost`] alone, so nothing here changes what it finds.
//!
//! A target's time for a program is its calibrated call overhead plus each
//! operation's seconds (per call, per flop, per byte of its kind), a kept
//! loop's body once per trip ([`program_sum`]). The C's time comes from its
//! loop IR: every assignment, executed as often as its loops say, is a
//! streaming statement (its bytes at the C triad's rate), a reduction (its
//! flops at a scalar dot's rate) or a reduction three loops deep (its flops
//! at the triple-loop matrix product's rate). The roofline bound of a
//! program is the larger of its bytes moved (every input read and every
//! output written once, at its dtype) over the bandwidth measured at the
//! smallest working set that holds them (a cache's when they fit one) and
//! its flops over the BLAS peak at its float width.

use std::collections::BTreeMap;
use std::path::Path;

use tenslift_frontend::ir as loop_ir;
use tenslift_targets::{DType, Expr, Op, ParamKind, Program, SliceItem, Stmt};

use crate::spec::Sizes;
use crate::synth::cost::{
    kind_of, node_work, program_sum, CRates, Coefficients, CostModel, CostTable, MachineLimits,
    OpKind, TargetCosts, Work, COST_TABLE_SCHEMA,
};

/// The targets `--target auto` chooses among, in the order ties go.
pub const AUTO_TARGETS: [&str; 4] = ["numpy", "jax", "pytorch", "hlo"];

/// Elements of a shape at `sizes` (an unknown size counts 1).
fn elements(expr: &Expr, sizes: &Sizes) -> f64 {
    expr.shape()
        .iter()
        .map(|d| d.eval(&|n| sizes.get(n).copied()).unwrap_or(1).max(1) as f64)
        .product()
}

/// The flops of one evaluation of `expr` (shared subtrees once).
fn expr_flops(expr: &Expr, sizes: &Sizes) -> f64 {
    let mut seen = std::collections::HashSet::new();
    let mut flops = 0.0;
    expr.walk(&mut |node| {
        if seen.insert(node.clone()) {
            flops += node_work(node, sizes).flops;
        }
    });
    flops
}

/// The compulsory work of `program` at `sizes`: its flops (every TensIR
/// operation, a kept loop's body once per trip) and the bytes of its
/// inputs read once and its outputs written once.
pub fn program_traffic(program: &Program, sizes: &Sizes) -> Work {
    let flops = program_sum(program, sizes, &expr_flops);
    let mut bytes = 0.0;
    for p in &program.params {
        if let ParamKind::Array {
            dtype,
            shape,
            access,
        } = &p.kind
        {
            let n: f64 = shape
                .iter()
                .map(|d| d.eval(&|v| sizes.get(v).copied()).unwrap_or(1).max(1) as f64)
                .product();
            let passes = if access.is_written() { 1.0 } else { 0.0 }
                + if matches!(access, tenslift_targets::Access::Out) {
                    0.0
                } else {
                    1.0
                };
            bytes += passes * n * dtype.byte_size() as f64;
        }
    }
    for s in program.statements() {
        if let Stmt::Return(e) = s {
            bytes += elements(e, sizes) * e.dtype().byte_size() as f64;
        }
    }
    Work { flops, bytes }
}

/// The widest float the program's arrays hold (8 when none is a float).
fn float_width(program: &Program) -> usize {
    let widths: Vec<usize> = program
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Array { dtype, .. } | ParamKind::Scalar(dtype) => Some(*dtype),
            ParamKind::Size => None,
        })
        .filter(|d| matches!(d, DType::F32 | DType::F64))
        .map(DType::byte_size)
        .collect();
    widths.into_iter().max().unwrap_or(8)
}

/// The roofline's lower bound on `program`'s time at `sizes`, with the
/// work it is computed from.
pub fn roofline_bound(limits: &MachineLimits, program: &Program, sizes: &Sizes) -> (f64, Work) {
    let work = program_traffic(program, sizes);
    let memory = work.bytes / limits.bandwidth_for(work.bytes).max(1.0);
    let arithmetic = work.flops / limits.peak_flops(float_width(program)).max(1.0);
    (memory.max(arithmetic), work)
}

/// The table's costs for `target` (`torch-compile` is priced as PyTorch:
/// calibration does not time it).
fn target_costs<'a>(table: &'a CostTable, target: &str) -> Option<&'a TargetCosts> {
    let name = if target == "torch-compile" {
        "pytorch"
    } else {
        target
    };
    table.targets.get(name)
}

/// `target`'s predicted seconds for one call of `program` at `sizes`
/// (`None` when the table has no coefficients for it).
pub fn predict_target(
    table: &CostTable,
    target: &str,
    program: &Program,
    sizes: &Sizes,
) -> Option<f64> {
    let costs = target_costs(table, target)?;
    let whole = xla_compiles_whole(&program.body);
    if target == "jax" && !whole {
        // JAX traces such a loop trip by trip: its compile time grows with
        // the trip count (gramschmidt, floyd-warshall, durbin ran past
        // 120 s at LARGE), which no per-operation rate prices.
        return None;
    }
    let compiled = FUSING_TARGETS.contains(&target) && whole;
    let model = CostModel::Calibrated(CostTable {
        ops: if compiled {
            costs.ops.clone()
        } else {
            with_dispatch_floor(costs)
        },
        curves: costs.curves.clone(),
        ..CostTable::default()
    });
    let ops = if compiled {
        program_sum(program, sizes, &|e, s| fused_cost(&model, costs, e, s))
    } else {
        program_sum(program, sizes, &|e, s| eager_cost(&model, e, s))
    };
    Some(costs.call_overhead_s + ops)
}

/// `costs`' operations, each charged at least the target's call of a
/// trivial program per execution: an operation dispatched from Python
/// (NumPy, PyTorch, JAX run eagerly) never costs less. The calibration's
/// fit on large arrays leaves cheap operations' own overhead at 0 (their
/// bytes explain the timings), which priced a kept loop of 2000 trips
/// (durbin: about ten calls each) as if its calls were free.
fn with_dispatch_floor(costs: &TargetCosts) -> BTreeMap<OpKind, Coefficients> {
    costs
        .ops
        .iter()
        .map(|(k, c)| {
            let floor = c.overhead_s.max(costs.call_overhead_s);
            (
                *k,
                Coefficients {
                    overhead_s: floor,
                    ..*c
                },
            )
        })
        .collect()
}

/// One statement's expression run an operation at a time (NumPy, PyTorch):
/// each node at its kind's cost, but an element-wise node that updates a
/// strided block of a wider array ([`reads_strided_block`]) at least at
/// the measured cost of such an update ([`OpKind::Region`]).
fn eager_cost(model: &CostModel, expr: &Expr, sizes: &Sizes) -> f64 {
    let mut seen = std::collections::HashSet::new();
    let mut total = 0.0;
    expr.walk(&mut |node| {
        if !seen.insert(node.clone()) {
            return;
        }
        let own = model.node_cost(node, sizes);
        let block = kind_of(node).is_some_and(is_elementwise) && reads_strided_block(node, sizes);
        total += if block {
            own.max(model.node_cost_as(OpKind::Region, node, sizes))
        } else {
            own
        };
    });
    total
}

/// Whether an operand of `node` as large as its result is a strided block
/// (a broadcast column or row beside a block does not make the node one).
fn reads_strided_block(node: &Expr, sizes: &Sizes) -> bool {
    let out = elements(node, sizes);
    node.args()
        .iter()
        .any(|a| elements(a, sizes) >= out && is_strided_block(a, sizes))
}

/// Whether `view` is a slice whose rows are not contiguous in memory at
/// `sizes`: it keeps more than one row of an axis before one it trims
/// (`P[0:k, 0:k]` of an n x n `P`, `A[0:m, k + 1:n]`). A row (`P[k, 0:k]`)
/// and whole trailing rows (`A[1:n, :]`) are contiguous.
fn is_strided_block(view: &Expr, sizes: &Sizes) -> bool {
    let Op::Slice(items) = view.op() else {
        return false;
    };
    let Some(base) = view.args().first() else {
        return false;
    };
    let lookup = |n: &str| sizes.get(n).copied();
    let mut rows = 1i64;
    for (item, dim) in items.iter().zip(base.shape()) {
        let Ok(full) = dim.eval(&lookup) else {
            return false;
        };
        let kept = match item {
            SliceItem::Full => full,
            SliceItem::Index(_) => 1,
            SliceItem::Range { start, stop, step } => {
                let (Ok(lo), Ok(hi)) = (start.eval(&lookup), stop.eval(&lookup)) else {
                    return false;
                };
                let extent = (hi - lo).max(0);
                if rows >= 2 && (extent < full || *step != 1) {
                    return true;
                }
                extent
            }
        };
        rows = rows.saturating_mul(kept.max(0));
    }
    false
}

/// Targets that compile the whole program with XLA: a kept loop runs
/// inside the compiled program (`lax.fori_loop`, `stablehlo.while`) and
/// element-wise chains fuse into one loop over their elements.
const FUSING_TARGETS: [&str; 2] = ["jax", "hlo"];

/// One statement's expression under XLA's fusion: an element-wise node pays
/// its arithmetic and the bytes of the operands it reads from memory (those
/// that are not element-wise nodes themselves), the statement's root its
/// output too, and no node pays a dispatch of its own (the call overhead
/// is paid once per call). Everything else is priced as the calibration
/// measured it. Without this, NumPy, which materialises every intermediate,
/// was predicted cheaper than XLA exactly on the kept-loop stencils where
/// XLA's fused loops are 5-20x faster (results/bench-polybench-dist-large-2026-11-27).
fn fused_cost(model: &CostModel, costs: &TargetCosts, expr: &Expr, sizes: &Sizes) -> f64 {
    let mut seen = std::collections::HashSet::new();
    let mut total = 0.0;
    expr.walk(&mut |node| {
        if !seen.insert(node.clone()) {
            return;
        }
        match kind_of(node) {
            Some(kind) if is_elementwise(kind) => {
                let width = node.dtype().byte_size() as f64;
                let mut bytes: f64 = node
                    .args()
                    .iter()
                    .filter(|a| !kind_of(a).is_some_and(is_elementwise))
                    .map(|a| elements(a, sizes) * a.dtype().byte_size() as f64)
                    .sum();
                if node == expr {
                    bytes += elements(node, sizes) * width;
                }
                let flops = node_work(node, sizes).flops;
                if let Some(c) = costs.ops.get(&kind) {
                    total += c.s_per_flop * flops + c.s_per_byte * bytes;
                }
            }
            _ => total += model.node_cost(node, sizes),
        }
    });
    total
}

/// Whether XLA compiles `body` whole: every kept loop keeps its shapes
/// from one iteration to the next. Otherwise JAX unrolls the loop while
/// tracing (durbin and gramschmidt then run past any timeout) and
/// StableHLO is not emitted, so fusion prices nothing real.
fn xla_compiles_whole(body: &[Stmt]) -> bool {
    body.iter().all(|s| match s {
        Stmt::Loop { var, body, .. } => {
            !tenslift_targets::emit::mentions_in_shapes(body, var.as_ref())
                && xla_compiles_whole(body)
        }
        _ => true,
    })
}

/// Operations XLA fuses into the loop of their consumer.
fn is_elementwise(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::Add
            | OpKind::Mul
            | OpKind::Div
            | OpKind::Exp
            | OpKind::Log
            | OpKind::Sqrt
            | OpKind::Pow
            | OpKind::Maximum
            | OpKind::Where
    )
}

/// The target predicted fastest among `candidates`, with every
/// candidate's prediction (first in `candidates` order on a tie).
pub fn choose(
    table: &CostTable,
    program: &Program,
    sizes: &Sizes,
    candidates: &[&str],
) -> Option<(String, BTreeMap<String, f64>)> {
    let predicted: BTreeMap<String, f64> = candidates
        .iter()
        .filter_map(|t| Some((t.to_string(), predict_target(table, t, program, sizes)?)))
        .collect();
    let mut best: Option<(&str, f64)> = None;
    for t in candidates {
        if let Some(&s) = predicted.get(*t) {
            if best.is_none_or(|(_, b)| s < b) {
                best = Some((t, s));
            }
        }
    }
    best.map(|(t, _)| (t.to_string(), predicted))
}

/// What the C's loops do, by the rate each kind of statement runs at.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CWork {
    pub stream_bytes: f64,
    pub reduce_flops: f64,
    pub matmul_flops: f64,
}

impl CWork {
    pub fn seconds(&self, rates: &CRates) -> f64 {
        self.stream_bytes * rates.stream_s_per_byte
            + self.reduce_flops * rates.reduce_s_per_flop
            + self.matmul_flops * rates.matmul_s_per_flop
    }
}

/// The C's predicted seconds for one call of `kernel` at `sizes`.
pub fn predict_c(table: &CostTable, kernel: &loop_ir::Kernel, sizes: &Sizes) -> Option<f64> {
    let rates = table.c.as_ref()?;
    Some(c_work(kernel, sizes)?.seconds(rates))
}

/// The loop IR's work at `sizes`; `None` when a loop bound names a size
/// without a value.
pub fn c_work(kernel: &loop_ir::Kernel, sizes: &Sizes) -> Option<CWork> {
    let mut work = CWork::default();
    let mut env = sizes.clone();
    walk_c(&kernel.body, &mut env, &[], 1.0, &mut work)?;
    Some(work)
}

fn walk_c(
    body: &[loop_ir::Stmt],
    env: &mut Sizes,
    iters: &[&str],
    scale: f64,
    work: &mut CWork,
) -> Option<()> {
    for stmt in body {
        match stmt {
            loop_ir::Stmt::Loop(l) => {
                let lookup = |n: &str| env.get(n).copied();
                let (start, end) = (l.start.eval(&lookup)?, l.end.eval(&lookup)?);
                let span = if l.step > 0 { end - start } else { start - end };
                let step = l.step.unsigned_abs().max(1) as i64;
                let trips = if span > 0 {
                    (span + step - 1) / step
                } else {
                    0
                };
                if trips == 0 {
                    continue;
                }
                let saved = env.insert(l.iter.clone(), start + l.step * (trips / 2));
                let mut inner: Vec<&str> = iters.to_vec();
                inner.push(&l.iter);
                walk_c(&l.body, env, &inner, scale * trips as f64, work)?;
                match saved {
                    Some(v) => env.insert(l.iter.clone(), v),
                    None => env.remove(&l.iter),
                };
            }
            loop_ir::Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                walk_c(then_body, env, iters, scale, work)?;
                walk_c(else_body, env, iters, scale, work)?;
            }
            loop_ir::Stmt::Assign { target, value, .. } => {
                assign_work(target, value, iters, scale, work);
            }
            loop_ir::Stmt::Return { value, .. } => {
                let bytes = value.ty.bits() as f64 / 8.0;
                work.stream_bytes += scale * bytes * (1.0 + loads(value, iters.last()) as f64);
            }
        }
    }
    Some(())
}

fn mentions(index: &[loop_ir::Affine], iter: Option<&&str>) -> bool {
    iter.is_none_or(|i| index.iter().any(|a| a.terms.contains_key(*i)))
}

/// One assignment executed `scale` times: a reduction when what it writes
/// does not move with the innermost loop.
fn assign_work(
    target: &loop_ir::LValue,
    value: &loop_ir::Expr,
    iters: &[&str],
    scale: f64,
    work: &mut CWork,
) {
    let innermost = iters.last();
    let (reduction, stored) = match target {
        loop_ir::LValue::Scalar { .. } => (!iters.is_empty(), 0),
        loop_ir::LValue::Element { index, .. } => {
            let moves = mentions(index, innermost);
            (!moves, usize::from(moves))
        }
    };
    let flops = flops(value) as f64;
    if reduction && iters.len() >= 3 {
        work.matmul_flops += scale * flops.max(1.0);
    } else if reduction {
        work.reduce_flops += scale * flops.max(1.0);
    } else {
        let bytes = value.ty.bits() as f64 / 8.0;
        work.stream_bytes += scale * bytes * (loads(value, innermost) + stored) as f64;
    }
}

/// Loads that move with the innermost loop (the others are hoisted).
fn loads(expr: &loop_ir::Expr, innermost: Option<&&str>) -> usize {
    use loop_ir::ExprKind as K;
    match &expr.kind {
        K::Load { index, .. } => usize::from(mentions(index, innermost)),
        K::Unary { arg, .. } | K::Cast { arg } => loads(arg, innermost),
        K::Binary { lhs, rhs, .. } => loads(lhs, innermost) + loads(rhs, innermost),
        K::Select {
            cond,
            then_value,
            else_value,
        } => loads(cond, innermost) + loads(then_value, innermost) + loads(else_value, innermost),
        K::Call { args, .. } => args.iter().map(|a| loads(a, innermost)).sum(),
        K::IntLit { .. } | K::FloatLit { .. } | K::Var { .. } => 0,
    }
}

/// Arithmetic operations in a C expression.
fn flops(expr: &loop_ir::Expr) -> usize {
    use loop_ir::ExprKind as K;
    match &expr.kind {
        K::Binary { lhs, rhs, .. } => 1 + flops(lhs) + flops(rhs),
        K::Unary { arg, .. } | K::Cast { arg } => flops(arg),
        K::Select {
            cond,
            then_value,
            else_value,
        } => 1 + flops(cond) + flops(then_value) + flops(else_value),
        K::Call { args, .. } => 1 + args.iter().map(flops).sum::<usize>(),
        K::IntLit { .. } | K::FloatLit { .. } | K::Var { .. } | K::Load { .. } => 0,
    }
}

/// A table and where it came from (a path, or the built-in table).
pub struct AutoTable {
    pub table: CostTable,
    pub from: String,
}

/// `explicit` (it must have per-target costs), else the committed
/// results/calibration-<host>.json under `root` when it has them, else the
/// built-in conservative table.
pub fn load_table(explicit: Option<&Path>, root: &Path, host: &str) -> Result<AutoTable, String> {
    if let Some(path) = explicit {
        let table = CostTable::load(path).map_err(|e| e.to_string())?;
        if table.targets.is_empty() {
            return Err(format!(
                "{} has no per-target costs (schema {}): run `tenslift calibrate` again",
                path.display(),
                table.schema
            ));
        }
        return Ok(AutoTable {
            table,
            from: path.display().to_string(),
        });
    }
    let committed = root
        .join("results")
        .join(format!("calibration-{host}.json"));
    if let Ok(table) = CostTable::load(&committed) {
        if !table.targets.is_empty() {
            return Ok(AutoTable {
                table,
                from: committed.display().to_string(),
            });
        }
    }
    Ok(AutoTable {
        table: builtin_table(),
        from: format!(
            "the built-in conservative table (no calibration with per-target costs at {}; \
             run `tenslift calibrate`)",
            committed.display()
        ),
    })
}

/// The table used when no calibration is given and none is committed for
/// this host: deliberately conservative figures (a few GB/s, a few GFLOP/s,
/// tens of microseconds per JAX/StableHLO call), so that the choice it
/// makes is the cautious one. It is said so wherever it is used.
pub fn builtin_table() -> CostTable {
    let op = |overhead_s: f64, s_per_flop: f64| Coefficients {
        overhead_s,
        s_per_flop,
        s_per_byte: 2.5e-10,
    };
    let kinds = |overhead_s: f64, element_flop: f64, blas_flop: f64| -> BTreeMap<_, _> {
        OpKind::ALL
            .into_iter()
            .map(|k| {
                let per_flop = match k {
                    OpKind::Matmul | OpKind::Einsum => blas_flop,
                    OpKind::Exp | OpKind::Log | OpKind::Sqrt | OpKind::Pow => 10.0 * element_flop,
                    OpKind::TransposeCopy | OpKind::SliceCopy => 0.0,
                    _ => element_flop,
                };
                (k, op(overhead_s, per_flop))
            })
            .collect()
    };
    let target = |call: f64, per_op: f64, element: f64| TargetCosts {
        call_overhead_s: call,
        ops: kinds(per_op, element, 5e-10),
        curves: BTreeMap::new(),
    };
    CostTable {
        schema: COST_TABLE_SCHEMA,
        host: "built-in".into(),
        numpy_version: String::new(),
        date: String::new(),
        ops: kinds(1e-6, 1e-9, 5e-10),
        note: "built-in conservative table, not measured".into(),
        targets: [
            ("numpy", target(1e-6, 1e-6, 1e-9)),
            ("jax", target(3e-5, 0.0, 1e-9)),
            ("pytorch", target(5e-6, 4e-6, 1e-9)),
            ("hlo", target(3e-5, 0.0, 1e-9)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        machine: Some(MachineLimits {
            numpy_triad_bytes_per_s: 4e9,
            c_triad_bytes_per_s: 4e9,
            dgemm_flops_per_s: 1e10,
            sgemm_flops_per_s: 2e10,
            bandwidth_levels: Vec::new(),
        }),
        c: Some(CRates {
            stream_s_per_byte: 2.5e-10,
            reduce_s_per_flop: 1e-9,
            matmul_s_per_flop: 1e-9,
        }),
        curves: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests;
