//! Cost models (STENSO's, simplified). The analytic model charges every
//! operation the arithmetic it performs plus the bytes it reads and writes,
//! with shapes evaluated at the spec's sizes; a calibrated model
//! ([`CostTable`], written by `tenslift calibrate`) charges measured seconds
//! per call, per flop and per byte for each operation kind on this
//! machine's NumPy. Shared subexpressions are counted once, as the emitters
//! compute them once. [`complexity_degree`] gives a program's asymptotic
//! complexity: the degree of its analytic cost in the size parameters.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use tenslift_targets::{BinaryOp, DType, EinsumSpec, Expr, Op, ParamKind, Program, Stmt, UnaryOp};
use thiserror::Error;

use crate::spec::Sizes;

/// The operation kinds the calibrated model distinguishes (each is timed
/// by `tenslift calibrate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Add,
    Mul,
    Div,
    Exp,
    Log,
    Sqrt,
    /// `pow(x, y)` with a general exponent (libm's pow: a logarithm, a
    /// product and an exponential per element).
    Pow,
    Maximum,
    Where,
    Sum,
    Matmul,
    Einsum,
    TransposeCopy,
    SliceCopy,
}

impl OpKind {
    pub const ALL: [OpKind; 14] = [
        OpKind::Add,
        OpKind::Mul,
        OpKind::Div,
        OpKind::Exp,
        OpKind::Log,
        OpKind::Sqrt,
        OpKind::Pow,
        OpKind::Maximum,
        OpKind::Where,
        OpKind::Sum,
        OpKind::Matmul,
        OpKind::Einsum,
        OpKind::TransposeCopy,
        OpKind::SliceCopy,
    ];

    /// The name used in calibration files and by scripts/calibrate_numpy.py.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Add => "add",
            OpKind::Mul => "mul",
            OpKind::Div => "div",
            OpKind::Exp => "exp",
            OpKind::Log => "log",
            OpKind::Sqrt => "sqrt",
            OpKind::Pow => "pow",
            OpKind::Maximum => "maximum",
            OpKind::Where => "where",
            OpKind::Sum => "sum",
            OpKind::Matmul => "matmul",
            OpKind::Einsum => "einsum",
            OpKind::TransposeCopy => "transpose_copy",
            OpKind::SliceCopy => "slice_copy",
        }
    }

    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// The kind of one node, `None` for nodes that cost nothing (parameters,
/// literals, views).
pub(crate) fn kind_of(expr: &Expr) -> Option<OpKind> {
    Some(match expr.op() {
        Op::Var(_)
        | Op::Lit(_)
        | Op::Slice(_)
        | Op::Transpose(_)
        | Op::Broadcast(_)
        | Op::Flip(_)
        | Op::Reshape(_)
        | Op::Window(_) => return None,
        Op::Unary(UnaryOp::Sqrt) => OpKind::Sqrt,
        Op::Unary(UnaryOp::Exp | UnaryOp::Tanh) => OpKind::Exp,
        Op::Unary(UnaryOp::Log) => OpKind::Log,
        Op::Unary(_) | Op::Full { .. } | Op::Cast(_) => OpKind::Add,
        Op::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::And | BinaryOp::Or) => OpKind::Add,
        Op::Binary(BinaryOp::Mul) | Op::Outer => OpKind::Mul,
        Op::Binary(BinaryOp::Div | BinaryOp::TruncDiv | BinaryOp::Rem) => OpKind::Div,
        Op::Binary(BinaryOp::Pow) => OpKind::Pow,
        Op::Binary(_) => OpKind::Maximum,
        Op::Where | Op::Triu(_) | Op::Tril(_) => OpKind::Where,
        Op::Reduce { .. } => OpKind::Sum,
        Op::Matmul | Op::Tensordot { .. } => OpKind::Matmul,
        Op::Einsum(_) => OpKind::Einsum,
        Op::Concat { .. } | Op::Diag | Op::ScatterAdd => OpKind::SliceCopy,
        // BLAS-3 work in LAPACK: priced as a matrix product of its flops.
        Op::Cholesky | Op::TriSolve { .. } | Op::LuNoPivot | Op::Syrk | Op::Syr2k => OpKind::Matmul,
        // A copy of one triangle into the other.
        Op::MirrorLower => OpKind::Where,
    })
}

/// The flops of a solver operation: `n³/3` for Cholesky, `2n³/3` for LU,
/// `n²` per right-hand side column for a triangular solve.
fn solver_flops(expr: &Expr, sizes: &Sizes) -> Option<f64> {
    let n = || {
        expr.args()[0].shape()[0]
            .eval(&|s| sizes.get(s).copied())
            .unwrap_or(1)
            .max(1) as f64
    };
    match expr.op() {
        Op::Cholesky => Some(n().powi(3) / 3.0),
        Op::LuNoPivot => Some(2.0 * n().powi(3) / 3.0),
        Op::TriSolve { .. } => Some(n() * elements(&expr.args()[1], sizes)),
        // One triangle of an n x k by k x n product (twice for syr2k).
        Op::Syrk => Some(elements(&expr.args()[0], sizes) * (n() + 1.0)),
        Op::Syr2k => Some(2.0 * elements(&expr.args()[0], sizes) * (n() + 1.0)),
        _ => None,
    }
}

/// Elements of a value of `expr`'s type at `sizes` (unknown dims count 1).
fn elements(expr: &Expr, sizes: &Sizes) -> f64 {
    expr.shape()
        .iter()
        .map(|d| d.eval(&|n| sizes.get(n).copied()).unwrap_or(1).max(1) as f64)
        .product()
}

/// An einsum's multiply-adds: one per point of its iteration space, the
/// product of every distinct label's extent. (The matrix-product formula,
/// the operands' product over the output, counts a label shared by both
/// operands and the output — `ab,ab->a` — once too often.)
fn einsum_flops(spec: &EinsumSpec, args: &[Expr], sizes: &Sizes) -> f64 {
    let mut extents: BTreeMap<char, f64> = BTreeMap::new();
    for (labels, arg) in spec.inputs.iter().zip(args) {
        for (label, dim) in labels.iter().zip(arg.shape()) {
            let extent = dim.eval(&|n| sizes.get(n).copied()).unwrap_or(1).max(1) as f64;
            extents.insert(*label, extent);
        }
    }
    2.0 * extents.values().product::<f64>()
}

/// What one element of a general `pow` counts as, in flops. libm's pow is
/// a logarithm, a product and an exponential; NumPy's vectorised one took
/// about three streaming products' time on the VM (`np.power(A, 4.0)`
/// 16.3 ms, `A * A` 6.3 ms, `np.exp(A)` 6.9 ms at 2048 x 2048 f64), so a
/// product chain of a small integer power (eqsat's `pow-*` rules) is priced
/// below it, as it runs. Other transcendental functions stay at one flop:
/// NumPy's SIMD exp, log and sqrt ran at the speed of a streaming pass.
const POW_FLOPS: f64 = 16.0;

/// Arithmetic and memory traffic of one node, not counting its operands.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    pub flops: f64,
    pub bytes: f64,
}

/// The work of one node at `sizes` (zero for parameters, literals, views).
pub fn node_work(expr: &Expr, sizes: &Sizes) -> Work {
    let Some(kind) = kind_of(expr) else {
        return Work::default();
    };
    let out = elements(expr, sizes);
    let byte_size = expr.dtype().byte_size() as f64;
    let inputs: f64 = expr.args().iter().map(|a| elements(a, sizes)).sum();
    let flops = match kind {
        _ if matches!(
            expr.op(),
            Op::Cholesky | Op::TriSolve { .. } | Op::LuNoPivot | Op::Syrk | Op::Syr2k
        ) =>
        {
            solver_flops(expr, sizes).unwrap_or(0.0)
        }
        OpKind::Einsum => match expr.op() {
            Op::Einsum(spec) => einsum_flops(spec, expr.args(), sizes),
            _ => 2.0 * out,
        },
        // Each output element of a contraction is a dot product over the
        // contracted extent: inputs' product over the output.
        OpKind::Matmul => {
            let product: f64 = expr.args().iter().map(|a| elements(a, sizes)).product();
            2.0 * (product / out).sqrt().max(1.0) * out
        }
        OpKind::Sum => inputs,
        OpKind::TransposeCopy | OpKind::SliceCopy => 0.0,
        OpKind::Pow => POW_FLOPS * out,
        _ => out,
    };
    Work {
        flops,
        bytes: byte_size * (inputs + out),
    }
}

/// Measured coefficients of one operation kind: seconds per call, per flop
/// and per byte moved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Coefficients {
    pub overhead_s: f64,
    pub s_per_flop: f64,
    pub s_per_byte: f64,
}

impl Coefficients {
    pub fn seconds(&self, work: Work) -> f64 {
        self.overhead_s + self.s_per_flop * work.flops + self.s_per_byte * work.bytes
    }
}

/// The calibration schema `tenslift calibrate` writes now. Version 1 had
/// NumPy's `ops` only; version 2 adds `targets`, `machine` and `c` (read
/// by [`crate::predict`] for `--target auto` and the roofline). A version 1
/// file still loads: the search reads `ops` alone.
pub const COST_TABLE_SCHEMA: u32 = 2;

fn schema_v1() -> u32 {
    1
}

/// A calibration file (results/calibration-<host>.json), documented field
/// by field in results/README.md.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CostTable {
    #[serde(default = "schema_v1")]
    pub schema: u32,
    pub host: String,
    pub numpy_version: String,
    pub date: String,
    /// NumPy's coefficients: what `lift --cost-table` prices the search's
    /// candidates with.
    pub ops: BTreeMap<OpKind, Coefficients>,
    /// How the machine was when it was measured (load, other jobs).
    #[serde(default)]
    pub note: String,
    /// Per target (`numpy`, `jax`, `pytorch`, `hlo`): its coefficients.
    #[serde(default)]
    pub targets: BTreeMap<String, TargetCosts>,
    #[serde(default)]
    pub machine: Option<MachineLimits>,
    #[serde(default)]
    pub c: Option<CRates>,
}

/// One target's calibration: the fixed cost of one call of a program
/// (dispatch, for JAX and StableHLO the compiled executable's launch), and
/// each operation kind's coefficients beyond that.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetCosts {
    pub call_overhead_s: f64,
    pub ops: BTreeMap<OpKind, Coefficients>,
}

/// What this machine can do at all: memory bandwidth from a STREAM-like
/// triad (24 bytes per element) in NumPy and in C, and peak arithmetic
/// from BLAS matrix products through NumPy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineLimits {
    pub numpy_triad_bytes_per_s: f64,
    pub c_triad_bytes_per_s: f64,
    pub dgemm_flops_per_s: f64,
    pub sgemm_flops_per_s: f64,
    /// The C triad at growing working sets (the caches, then memory).
    #[serde(default)]
    pub bandwidth_levels: Vec<BandwidthLevel>,
}

/// The triad's bandwidth when its three arrays take `working_set_bytes`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BandwidthLevel {
    pub working_set_bytes: f64,
    pub bytes_per_s: f64,
}

impl MachineLimits {
    /// The best bandwidth measured either way at memory's working set.
    pub fn bandwidth(&self) -> f64 {
        self.numpy_triad_bytes_per_s.max(self.c_triad_bytes_per_s)
    }

    /// The bandwidth for `bytes` of data: that of the smallest measured
    /// working set that holds them (a cache's), else memory's.
    pub fn bandwidth_for(&self, bytes: f64) -> f64 {
        let mut levels = self.bandwidth_levels.clone();
        levels.sort_by(|a, b| a.working_set_bytes.total_cmp(&b.working_set_bytes));
        levels
            .iter()
            .find(|l| l.working_set_bytes >= bytes)
            .map_or(0.0, |l| l.bytes_per_s)
            .max(self.bandwidth())
    }

    /// Peak FLOP/s at a float width (single precision for 4-byte data).
    pub fn peak_flops(&self, byte_size: usize) -> f64 {
        if byte_size <= 4 {
            self.sgemm_flops_per_s.max(self.dgemm_flops_per_s)
        } else {
            self.dgemm_flops_per_s
        }
    }
}

/// The rates of plain C loops compiled with gcc -O3 (scripts/calibrate_c.c):
/// a streaming loop's seconds per byte, a scalar reduction's seconds per
/// flop, and a triple-loop matrix product's seconds per flop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CRates {
    pub stream_s_per_byte: f64,
    pub reduce_s_per_flop: f64,
    pub matmul_s_per_flop: f64,
}

#[derive(Debug, Error)]
pub enum CostTableError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a calibration file: {source}")]
    Parse {
        path: String,
        source: serde_json::Error,
    },
    #[error("{path} has no coefficients for `{kind}`")]
    Missing { path: String, kind: &'static str },
}

impl CostTable {
    /// Reads a calibration file; every operation kind must be present.
    pub fn load(path: &Path) -> Result<CostTable, CostTableError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| CostTableError::Read {
            path: shown.clone(),
            source,
        })?;
        let mut table: CostTable =
            serde_json::from_str(&text).map_err(|source| CostTableError::Parse {
                path: shown.clone(),
                source,
            })?;
        table.price_pow_from_exp();
        if let Some(kind) = OpKind::ALL.iter().find(|k| !table.ops.contains_key(k)) {
            return Err(CostTableError::Missing {
                path: shown,
                kind: kind.name(),
            });
        }
        Ok(table)
    }

    /// Tables measured before `pow` was timed lack it: each set of
    /// coefficients (NumPy's, every target's) gets `exp`'s, which
    /// [`node_work`] charges [`POW_FLOPS`] flops per element, so a general
    /// power still costs many exponentials and a product chain wins.
    fn price_pow_from_exp(&mut self) {
        let fill = |ops: &mut BTreeMap<OpKind, Coefficients>| {
            if let (false, Some(exp)) = (ops.contains_key(&OpKind::Pow), ops.get(&OpKind::Exp)) {
                let exp = *exp;
                ops.insert(OpKind::Pow, exp);
            }
        };
        fill(&mut self.ops);
        for target in self.targets.values_mut() {
            fill(&mut target.ops);
        }
    }
}

/// Which model prices programs.
// One model per lift, built once and borrowed: the calibrated table's size
// (per-target costs since schema 2) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Default)]
pub enum CostModel {
    /// Flops plus bytes/4 (the unit is one flop).
    #[default]
    Analytic,
    /// Measured seconds.
    Calibrated(CostTable),
}

impl CostModel {
    fn price(&self, kind: OpKind, work: Work) -> f64 {
        match self {
            CostModel::Analytic => work.flops + work.bytes / 4.0,
            CostModel::Calibrated(table) => table
                .ops
                .get(&kind)
                .map_or(work.flops + work.bytes / 4.0, |c| c.seconds(work)),
        }
    }

    /// The cost of one node, not counting its operands.
    pub fn node_cost(&self, expr: &Expr, sizes: &Sizes) -> f64 {
        match kind_of(expr) {
            Some(kind) => self.price(kind, node_work(expr, sizes)),
            None => 0.0,
        }
    }

    /// The cost of evaluating `exprs` once, sharing repeated subtrees.
    pub fn cost_of(&self, exprs: &[&Expr], sizes: &Sizes) -> f64 {
        let mut seen = HashSet::new();
        let mut total = 0.0;
        for e in exprs {
            e.walk(&mut |node| {
                if seen.insert(node.clone()) {
                    total += self.node_cost(node, sizes);
                }
            });
        }
        total
    }

    /// The cost of one element-wise step of `kind` with `elements` outputs
    /// of `dtype` reading two operands of that size (the search prices a
    /// sketch's own operation with it before its hole is solved).
    pub fn elementwise_cost(&self, kind: OpKind, elements: f64, dtype: DType) -> f64 {
        let work = Work {
            flops: elements,
            bytes: 3.0 * elements * dtype.byte_size() as f64,
        };
        self.price(kind, work)
    }
}

/// The cost of evaluating `exprs` once under the analytic model.
pub fn cost_of(exprs: &[&Expr], sizes: &Sizes) -> f64 {
    CostModel::Analytic.cost_of(exprs, sizes)
}

/// The analytic cost of running `program` once at `sizes`. A kept loop
/// costs its body (priced with the loop variable at the middle of its
/// range, as triangular bodies average there) times its trip count.
pub fn program_cost(program: &Program, sizes: &Sizes) -> f64 {
    statements_cost(&program.body, sizes)
}

fn statements_cost(body: &[Stmt], sizes: &Sizes) -> f64 {
    statements_sum(body, sizes, &|e, sizes| cost_of(&[e], sizes))
}

/// The sum of `price` over every statement's expression of `program` at
/// `sizes`, a kept loop's body counted once per trip with the loop
/// variable at the middle of its range (as [`program_cost`] counts).
pub fn program_sum(program: &Program, sizes: &Sizes, price: &dyn Fn(&Expr, &Sizes) -> f64) -> f64 {
    statements_sum(&program.body, sizes, price)
}

fn statements_sum(body: &[Stmt], sizes: &Sizes, price: &dyn Fn(&Expr, &Sizes) -> f64) -> f64 {
    body.iter()
        .map(|s| match s {
            Stmt::Let { value, .. } | Stmt::Store { value, .. } => price(value, sizes),
            Stmt::Return(e) => price(e, sizes),
            Stmt::Var { .. } => 0.0,
            Stmt::Loop {
                var,
                start,
                stop,
                body,
            } => {
                let lookup = |name: &str| sizes.get(name).copied();
                let (Ok(lo), Ok(hi)) = (start.eval(&lookup), stop.eval(&lookup)) else {
                    return 0.0;
                };
                let trips = (hi - lo).max(0);
                if trips == 0 {
                    return 0.0;
                }
                let mut inner = sizes.clone();
                inner.insert(var.to_string(), lo + trips / 2);
                trips as f64 * statements_sum(body, &inner, price)
            }
        })
        .sum()
}

/// The asymptotic complexity of `program`: the degree of the leading term
/// of its analytic cost when every size parameter grows together (`n` for
/// an element-wise program over vectors, `3` for a matrix product). `None`
/// for a program with no size parameter.
pub fn complexity_degree(program: &Program) -> Option<u32> {
    let names: Vec<&str> = program
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Size))
        .map(|p| &*p.name)
        .collect();
    if names.is_empty() {
        return None;
    }
    // The ratio of costs at 2N and N tends to 2^degree; at N = 2^12 lower
    // terms move it by well under half a degree.
    let at = |n: i64| -> Sizes { names.iter().map(|s| (s.to_string(), n)).collect() };
    let small = program_cost(program, &at(1 << 12));
    let large = program_cost(program, &at(1 << 13));
    if small <= 0.0 {
        return Some(0);
    }
    Some((large / small).log2().round().max(0.0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tenslift_targets::{build, Access, Dim, Meta, Param};

    fn square(name: &str) -> Expr {
        let n = Dim::sym("n");
        build::var(name, DType::F64, vec![n.clone(), n])
    }

    fn program_of(value: Expr) -> Program {
        let n = Dim::sym("n");
        let array = |name: &str, access| Param {
            name: Arc::from(name),
            kind: ParamKind::Array {
                dtype: DType::F64,
                shape: vec![n.clone(), n.clone()],
                access,
            },
        };
        Program {
            meta: Meta::default(),
            name: Arc::from("p"),
            params: vec![
                Param {
                    name: Arc::from("n"),
                    kind: ParamKind::Size,
                },
                array("A", Access::In),
                array("B", Access::In),
            ],
            ret: Some(value.dtype()),
            body: vec![Stmt::Return(value)],
        }
    }

    #[test]
    fn a_matrix_product_costs_more_than_an_addition_of_the_same_inputs() {
        let sizes: Sizes = [("n".to_string(), 8)].into_iter().collect();
        let product = build::matmul(square("A"), square("B")).unwrap();
        let sum = build::add(square("A"), square("B")).unwrap();
        assert!(cost_of(&[&product], &sizes) > cost_of(&[&sum], &sizes));
    }

    #[test]
    fn a_shared_subexpression_is_counted_once() {
        let a = build::var("A", DType::F64, vec![Dim::sym("n")]);
        let e = build::exp(a).unwrap();
        let sizes: Sizes = [("n".to_string(), 8)].into_iter().collect();
        assert!(cost_of(&[&e], &sizes) > 0.0);
        assert_eq!(cost_of(&[&e, &e], &sizes), cost_of(&[&e], &sizes));
    }

    #[test]
    fn diag_of_a_product_is_cubic_and_the_row_sum_form_is_quadratic() {
        let diag = build::diag(build::matmul(square("A"), square("B")).unwrap()).unwrap();
        let bt = build::transpose(square("B"), &[1, 0]).unwrap();
        let rows = build::sum(build::mul(square("A"), bt).unwrap(), &[1]).unwrap();
        assert_eq!(complexity_degree(&program_of(diag)), Some(3));
        assert_eq!(complexity_degree(&program_of(rows)), Some(2));
    }

    #[test]
    fn a_calibrated_table_prices_in_its_own_coefficients() {
        let slow_exp = Coefficients {
            overhead_s: 1e-6,
            s_per_flop: 1e-8,
            s_per_byte: 1e-10,
        };
        let cheap = Coefficients {
            overhead_s: 1e-6,
            s_per_flop: 1e-10,
            s_per_byte: 1e-10,
        };
        let ops = OpKind::ALL
            .into_iter()
            .map(|k| (k, if k == OpKind::Exp { slow_exp } else { cheap }))
            .collect();
        let model = CostModel::Calibrated(CostTable {
            host: "h".into(),
            numpy_version: "2".into(),
            date: "d".into(),
            ops,
            ..CostTable::default()
        });
        let sizes: Sizes = [("n".to_string(), 100)].into_iter().collect();
        let exp = build::exp(square("A")).unwrap();
        let add = build::add(square("A"), square("B")).unwrap();
        let (e, a) = (
            model.cost_of(&[&exp], &sizes),
            model.cost_of(&[&add], &sizes),
        );
        assert!(e > 4.0 * a, "exp {e} add {a}");
        // 10 000 elements: 1e-6 + 1e-8 * 1e4 + 1e-10 * 16e4.
        assert!((e - (1e-6 + 1e-4 + 1.6e-5)).abs() < 1e-12, "{e}");
    }
}
