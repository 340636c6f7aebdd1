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
    /// A contraction with a vector operand or result (BLAS-2: `A @ x`,
    /// `x @ A`): bound by reading the matrix once, where a matrix product
    /// reuses each element; the libraries rank differently on the two
    /// (NumPy's gemv ran PolyBench's LARGE matrix-vector kernels 1.1-1.9x
    /// faster than XLA on the VM, where their matrix products tie).
    Matvec,
    /// A matrix times its own transpose (`X @ X.T`, `X.T @ X`): NumPy's
    /// matmul computes it by BLAS `syrk`, half the flops; the other
    /// libraries compute the full product.
    Gram,
    /// A triangular solve (`trsv`/`trsm`), priced per flop like a product
    /// but timed on its own: XLA's CPU solve of one right-hand side ran
    /// 12-20x slower than LAPACK's.
    #[serde(rename = "trisolve")]
    TriSolve,
    /// A Cholesky factorisation (LAPACK `potrf`; XLA's CPU expansion of
    /// `stablehlo.cholesky` ran 4x slower than LAPACK's at n = 2000).
    Cholesky,
    /// An LU without pivoting: each target's blocked program over BLAS
    /// (`targets::emit::lu_nopivot_helper`), Python recursion included.
    Lu,
    Einsum,
    TransposeCopy,
    SliceCopy,
    /// An element-wise operation updating a strided 2-D block of a wider
    /// array (`np.minimum(P[0:k, 0:k], T, out=P[0:k, 0:k])`): never what
    /// [`kind_of`] answers, but what [`crate::predict`] prices such a
    /// node at when it is dearer than the node's own kind. NumPy ran these
    /// 3-6x slower per element than the same operation on contiguous arrays
    /// on the VM (floyd-warshall's quadrant updates, gramschmidt's trailing
    /// columns), PyTorch 1.7x: the model priced both kernels' NumPy programs
    /// 2.4-3.5x under their measured times and `auto` chose NumPy there.
    Region,
}

impl OpKind {
    pub const ALL: [OpKind; 20] = [
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
        OpKind::Matvec,
        OpKind::Gram,
        OpKind::TriSolve,
        OpKind::Cholesky,
        OpKind::Lu,
        OpKind::Einsum,
        OpKind::TransposeCopy,
        OpKind::SliceCopy,
        OpKind::Region,
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
            OpKind::Matvec => "matvec",
            OpKind::Gram => "gram",
            OpKind::TriSolve => "trisolve",
            OpKind::Cholesky => "cholesky",
            OpKind::Lu => "lu",
            OpKind::Einsum => "einsum",
            OpKind::TransposeCopy => "transpose_copy",
            OpKind::SliceCopy => "slice_copy",
            OpKind::Region => "region",
        }
    }

    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kinds priced by their measured timings ([`TargetCosts::curves`]).
    /// A region update's too: its cost per element doubles once the
    /// block leaves the caches (NumPy: 0.17 ms at 512 x 512, 6.3 ms at
    /// 2048 x 2048, where a contiguous addition took 0.06 and 3.1 ms),
    /// which one line through its timings, weighted to small sizes, missed.
    pub const CURVED: [OpKind; 7] = [
        OpKind::Matvec,
        OpKind::TriSolve,
        OpKind::Matmul,
        OpKind::Gram,
        OpKind::Cholesky,
        OpKind::Lu,
        OpKind::Region,
    ];

    /// What a curve of this kind is read at: bytes for the kinds that read
    /// their operands once, flops for the others.
    pub fn curve_axis(self, work: Work) -> f64 {
        match self {
            OpKind::Matvec | OpKind::TriSolve | OpKind::Region => work.bytes,
            _ => work.flops,
        }
    }

    /// The kind whose coefficients stand in for this one in a calibration
    /// file measured before it was timed (`None`: timed from the start).
    pub(crate) fn stand_in(self) -> Option<OpKind> {
        match self {
            // A general power is priced as exponentials ([`POW_FLOPS`] each).
            OpKind::Pow => Some(OpKind::Exp),
            // A table without region timings prices a region update as
            // the contiguous addition it would be.
            OpKind::Region => Some(OpKind::Add),
            OpKind::Matvec | OpKind::Gram | OpKind::TriSolve | OpKind::Cholesky | OpKind::Lu => {
                Some(OpKind::Matmul)
            }
            _ => None,
        }
    }
}

/// The kind of a matrix product: a matrix-vector product when an operand
/// or the result is a vector, a Gram product when one operand is the
/// other's transpose, else a general one.
fn product_kind(expr: &Expr) -> OpKind {
    let args = expr.args();
    if expr.shape().len() <= 1 || args.iter().any(|a| a.shape().len() <= 1) {
        return OpKind::Matvec;
    }
    let transpose_of = |t: &Expr, x: &Expr| {
        matches!(t.op(), Op::Transpose(perm) if perm.as_slice() == [1, 0]) && t.args()[0] == *x
    };
    match (expr.op(), args) {
        (Op::Matmul, [a, b]) if transpose_of(a, b) || transpose_of(b, a) => OpKind::Gram,
        // `ka,kb->ab` of one operand twice: Xᵀ X (or X Xᵀ).
        (Op::Einsum(_), [a, b]) if a == b => OpKind::Gram,
        _ => OpKind::Matmul,
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
        // The transcendental functions cost about what exp does.
        Op::Unary(
            UnaryOp::Exp
            | UnaryOp::Tanh
            | UnaryOp::Sin
            | UnaryOp::Cos
            | UnaryOp::Cosh
            | UnaryOp::Sinh,
        ) => OpKind::Exp,
        Op::Unary(UnaryOp::Log) => OpKind::Log,
        Op::Unary(_) | Op::Full { .. } | Op::Cast(_) => OpKind::Add,
        Op::Binary(BinaryOp::Add | BinaryOp::Sub | BinaryOp::And | BinaryOp::Or) => OpKind::Add,
        Op::Binary(BinaryOp::Mul) | Op::Outer => OpKind::Mul,
        Op::Binary(BinaryOp::Div | BinaryOp::TruncDiv | BinaryOp::Rem) => OpKind::Div,
        Op::Binary(BinaryOp::Pow) => OpKind::Pow,
        Op::Binary(_) => OpKind::Maximum,
        Op::Where | Op::Triu(_) | Op::Tril(_) => OpKind::Where,
        // A comparison and a select per element, as a running maximum; a
        // scan is a reduction that stores every partial result.
        Op::Reduce { .. } | Op::Scan { .. } | Op::ArgExtreme { .. } => OpKind::Sum,
        Op::Matmul | Op::Tensordot { .. } => product_kind(expr),
        // Every target runs these through BLAS (NumPy's emitter as
        // `np.matmul` or with `optimize=True`), as fast as a product.
        Op::Einsum(spec) if spec.is_blas_contraction() => product_kind(expr),
        Op::Einsum(_) => OpKind::Einsum,
        Op::Concat { .. } | Op::Diag | Op::ScatterAdd => OpKind::SliceCopy,
        Op::TriSolve { .. } => OpKind::TriSolve,
        // Factorisations, timed on their own per target.
        Op::Cholesky => OpKind::Cholesky,
        Op::LuNoPivot => OpKind::Lu,
        // BLAS-3 work: priced as a matrix product of its flops.
        Op::Syr2k => OpKind::Matmul,
        // NumPy's is BLAS `syrk`, the others a full product: what `gram`
        // times (see [`timed_work`]).
        Op::Syrk => OpKind::Gram,
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
        // Whatever kind prices it (a BLAS-shaped einsum is a product).
        _ if matches!(expr.op(), Op::Einsum(_)) => match expr.op() {
            Op::Einsum(spec) => einsum_flops(spec, expr.args(), sizes),
            _ => 2.0 * out,
        },
        // Each output element of a contraction is a dot product over the
        // contracted extent: inputs' product over the output.
        OpKind::Matmul | OpKind::Matvec | OpKind::Gram => {
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

/// The work of one node counted as calibration counts the operation it
/// is timed by: a `syrk` (one triangle, [`node_work`]'s flops) as the
/// product `A @ A.T` that `gram` times, whose full flops its coefficients
/// are per (NumPy's measured rate then covers its own `syrk`, the other
/// targets' the full product they compute). The analytic model keeps
/// [`node_work`], so the search is priced as before.
pub fn timed_work(expr: &Expr, sizes: &Sizes) -> Work {
    let work = node_work(expr, sizes);
    match expr.op() {
        Op::Syrk => Work {
            flops: 2.0 * work.flops,
            ..work
        },
        _ => work,
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
    /// One target's [`TargetCosts::curves`] in the model
    /// [`crate::predict`] builds for it; a calibration file leaves it
    /// empty, so the search (`--cost-table`) prices with `ops` alone.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub curves: BTreeMap<OpKind, Vec<[f64; 2]>>,
}

/// One target's calibration: the fixed cost of one call of a program
/// (dispatch, for JAX and StableHLO the compiled executable's launch), and
/// each operation kind's coefficients beyond that.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetCosts {
    pub call_overhead_s: f64,
    pub ops: BTreeMap<OpKind, Coefficients>,
    /// The [`OpKind::CURVED`] kinds' timings beyond the call: `[work,
    /// seconds]` by growing size, the work on [`OpKind::curve_axis`].
    /// A line through them cannot follow the caches: NumPy's matrix-vector
    /// product ran 2-3x faster than XLA's on an 8 MB matrix and as fast on
    /// 33 MB ones, and PolyBench's LARGE matrix-vector kernels sit between;
    /// a product's rate grows with its size. Priced by [`MeasuredCurve`]
    /// where they have points, by the fitted coefficients below them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub curves: BTreeMap<OpKind, Vec<[f64; 2]>>,
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
        table.fill_later_kinds();
        if let Some(kind) = OpKind::ALL.iter().find(|k| !table.ops.contains_key(k)) {
            return Err(CostTableError::Missing {
                path: shown,
                kind: kind.name(),
            });
        }
        Ok(table)
    }

    /// Tables measured before a kind was timed lack it (`pow`; `matvec`,
    /// `gram` and `trisolve`): each set of coefficients (NumPy's, every
    /// target's) gets its stand-in's ([`OpKind::stand_in`]), so an older
    /// table prices as it did when it was measured. A general power stays
    /// costlier than a product chain: [`node_work`] charges it
    /// [`POW_FLOPS`] exponentials' flops per element.
    fn fill_later_kinds(&mut self) {
        let fill = |ops: &mut BTreeMap<OpKind, Coefficients>| {
            for kind in OpKind::ALL {
                let Some(stand_in) = kind.stand_in() else {
                    continue;
                };
                if let (false, Some(c)) = (ops.contains_key(&kind), ops.get(&stand_in)) {
                    let c = *c;
                    ops.insert(kind, c);
                }
            }
        };
        fill(&mut self.ops);
        for target in self.targets.values_mut() {
            fill(&mut target.ops);
        }
    }
}

/// Seconds measured at growing byte counts, read between its points on a
/// log-log line and past the last at the last one's seconds per byte;
/// below the first it prices nothing (`None`: the fitted coefficients,
/// whose per-call cost a small operation pays, take over).
pub struct MeasuredCurve<'a>(pub &'a [[f64; 2]]);

impl MeasuredCurve<'_> {
    pub fn seconds(&self, bytes: f64) -> Option<f64> {
        // Points a log cannot read (a hand-edited file's zeros) are skipped.
        let mut points = self.0.iter().filter(|[b, t]| *b > 0.0 && *t > 0.0);
        let mut below = *points.next()?;
        if bytes < below[0] {
            return None;
        }
        for &[b1, t1] in points {
            if b1 <= below[0] {
                continue; // not growing: no line between the two
            }
            if b1 >= bytes {
                let [b0, t0] = below;
                let at = (bytes.ln() - b0.ln()) / (b1.ln() - b0.ln());
                return Some((t0.ln() + at * (t1.ln() - t0.ln())).exp());
            }
            below = [b1, t1];
        }
        let [b, t] = below;
        Some(t * bytes / b)
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
            CostModel::Calibrated(table) => {
                let measured = table
                    .curves
                    .get(&kind)
                    .and_then(|c| MeasuredCurve(c).seconds(kind.curve_axis(work)));
                match measured {
                    Some(s) => s,
                    None => table
                        .ops
                        .get(&kind)
                        .map_or(work.flops + work.bytes / 4.0, |c| c.seconds(work)),
                }
            }
        }
    }

    /// The cost of one node, not counting its operands.
    pub fn node_cost(&self, expr: &Expr, sizes: &Sizes) -> f64 {
        kind_of(expr).map_or(0.0, |kind| self.node_cost_as(kind, expr, sizes))
    }

    /// The cost of `expr`'s node as an operation of `kind` rather than its
    /// own (its work counted as its own kind's is).
    pub fn node_cost_as(&self, kind: OpKind, expr: &Expr, sizes: &Sizes) -> f64 {
        match self {
            CostModel::Analytic => self.price(kind, node_work(expr, sizes)),
            CostModel::Calibrated(_) => self.price(kind, timed_work(expr, sizes)),
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
    #[test]
    fn products_are_told_apart_by_their_operands() {
        let a = square("A");
        let x = build::var("x", DType::F64, vec![Dim::sym("n")]);
        let at = build::transpose(a.clone(), &[1, 0]).unwrap();
        let kind = |e: Result<Expr, _>| kind_of(&e.unwrap());
        assert_eq!(
            kind(build::matmul(a.clone(), square("B"))),
            Some(OpKind::Matmul)
        );
        assert_eq!(
            kind(build::matmul(a.clone(), x.clone())),
            Some(OpKind::Matvec)
        );
        assert_eq!(kind(build::matmul(x, a.clone())), Some(OpKind::Matvec));
        assert_eq!(
            kind(build::matmul(a.clone(), at.clone())),
            Some(OpKind::Gram)
        );
        assert_eq!(kind(build::matmul(at, a)), Some(OpKind::Gram));
    }

    #[test]
    fn every_kind_is_written_under_its_calibration_name() {
        for kind in OpKind::ALL {
            let written = serde_json::to_string(&kind).unwrap();
            assert_eq!(written, format!("\"{}\"", kind.name()));
            assert_eq!(OpKind::from_name(kind.name()), Some(kind));
        }
    }

    #[test]
    fn an_older_table_prices_later_kinds_as_their_stand_ins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.json");
        let c = |s: f64| Coefficients {
            overhead_s: 0.0,
            s_per_flop: s,
            s_per_byte: 0.0,
        };
        let old: BTreeMap<OpKind, Coefficients> = OpKind::ALL
            .into_iter()
            .filter(|k| k.stand_in().is_none())
            .map(|k| (k, c(if k == OpKind::Matmul { 2.0 } else { 1.0 })))
            .collect();
        let json = serde_json::json!({"host": "h", "numpy_version": "2", "date": "d", "ops": old});
        std::fs::write(&path, json.to_string()).unwrap();
        let table = CostTable::load(&path).unwrap();
        for kind in [
            OpKind::Matvec,
            OpKind::Gram,
            OpKind::TriSolve,
            OpKind::Cholesky,
            OpKind::Lu,
        ] {
            assert_eq!(table.ops[&kind], c(2.0), "{kind:?}");
        }
        assert_eq!(table.ops[&OpKind::Pow], c(1.0));
    }
    #[test]
    fn a_measured_curve_reads_between_and_past_its_points() {
        let points = [[1e3, 1e-6], [1e5, 1e-5], [1e7, 4e-3]];
        let curve = MeasuredCurve(&points);
        assert_eq!(curve.seconds(10.0), None);
        assert!((curve.seconds(1e3).unwrap() - 1e-6).abs() < 1e-15);
        // Half-way in log between 1e3 and 1e5: the geometric mean.
        assert!((curve.seconds(1e4).unwrap() - (1e-6f64 * 1e-5).sqrt()).abs() < 1e-12);
        assert!((curve.seconds(2e7).unwrap() - 8e-3).abs() < 1e-12);
    }
}
