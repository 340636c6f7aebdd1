//! StableHLO: MLIR text with one `func.func @main` that XLA compiles.
//! Shapes are static, so size parameters are bound to constants at
//! emission. Every array parameter is an argument; the results are the
//! final values of the `out`/`inout` arrays (in parameter order) followed
//! by the returned scalar. Contractions lower to `stablehlo.dot_general`,
//! reductions to `stablehlo.reduce` with a region, region writes to
//! `stablehlo.pad` + `stablehlo.select`. A `for` loop becomes a
//! `stablehlo.while` when its shapes do not depend on its variable
//! (indices by the variable become dynamic slices), and is unrolled
//! otherwise.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{header_lines, EmitError, Target};
use crate::dim::Dim;
use crate::dtype::{DType, Lit};
use crate::expr::Expr;
use crate::ops::{BinaryOp as B, EinsumSpec, Op, ReduceKind, SliceItem, UnaryOp as U};
use crate::program::{ParamKind, Program, Requirement, Stmt};
use crate::symmetry::blas;

/// A lowered value: its SSA name and static type.
#[derive(Clone, Debug)]
struct Val {
    ssa: String,
    dtype: DType,
    shape: Vec<i64>,
}

fn elem(d: DType) -> &'static str {
    match d {
        DType::Bool => "i1",
        DType::I8 => "i8",
        DType::I16 => "i16",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::U8 => "ui8",
        DType::U16 => "ui16",
        DType::U32 => "ui32",
        DType::F32 => "f32",
        DType::F64 => "f64",
    }
}

fn tensor(d: DType, shape: &[i64]) -> String {
    let mut s = String::from("tensor<");
    for x in shape {
        s.push_str(&format!("{x}x"));
    }
    s.push_str(elem(d));
    s.push('>');
    s
}

fn ty(v: &Val) -> String {
    tensor(v.dtype, &v.shape)
}

fn i64_list(v: &[i64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A dense-attribute literal. Decimal where MLIR's float syntax reads it
/// back exactly, otherwise the bit pattern in hex.
fn dense_value(l: Lit) -> String {
    match l {
        Lit::Bool(b) => b.to_string(),
        Lit::Int(v, _) => v.to_string(),
        Lit::Float(bits, d) => {
            let v = f64::from_bits(bits);
            let text = if d == DType::F32 {
                format!("{:?}", v as f32)
            } else {
                format!("{v:?}")
            };
            if text.contains('.') && !text.contains(['e', 'E', 'n', 'i']) {
                text
            } else if d == DType::F32 {
                format!("0x{:08X}", (v as f32).to_bits())
            } else {
                format!("0x{bits:016X}")
            }
        }
    }
}

fn zero_of(d: DType) -> Lit {
    Lit::zero(d)
}

fn compare_type(d: DType) -> &'static str {
    if d.is_float() {
        "FLOAT"
    } else if d.is_signed_int() {
        "SIGNED"
    } else {
        "UNSIGNED"
    }
}

struct Lowering {
    lines: Vec<String>,
    next: usize,
    /// Size parameters and the current values of unrolled loop variables.
    sizes: BTreeMap<String, i64>,
    env: HashMap<String, Val>,
    /// Variables of the `stablehlo.while` loops being lowered: their
    /// counters, usable as dynamic slice offsets.
    dynamic: HashMap<String, Val>,
    memo: HashMap<Expr, Val>,
}

type LResult<T> = Result<T, EmitError>;

impl Lowering {
    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%{}", self.next - 1)
    }

    /// Appends `%r = <text> : <type suffix>` and returns `%r` as a value.
    fn push(&mut self, text: String, dtype: DType, shape: Vec<i64>) -> Val {
        let ssa = self.fresh();
        self.lines.push(format!("    {ssa} = {text}"));
        Val { ssa, dtype, shape }
    }

    fn dim(&self, d: &Dim) -> LResult<i64> {
        d.eval(&|s| self.sizes.get(s).copied())
            .map_err(|e| EmitError::Unsupported(format!("dimension `{d}`: {e}")))
    }

    fn shape(&self, ds: &[Dim]) -> LResult<Vec<i64>> {
        ds.iter()
            .map(|d| {
                let v = self.dim(d)?;
                if v < 0 {
                    return Err(EmitError::Unsupported(format!(
                        "dimension `{d}` is negative ({v}) for the given sizes"
                    )));
                }
                Ok(v)
            })
            .collect()
    }

    fn constant(&mut self, l: Lit, shape: &[i64]) -> Val {
        let t = tensor(l.dtype(), shape);
        self.push(
            format!("stablehlo.constant dense<{}> : {t}", dense_value(l)),
            l.dtype(),
            shape.to_vec(),
        )
    }

    /// NumPy-style right-aligned broadcast.
    fn broadcast(&mut self, v: &Val, shape: &[i64]) -> Val {
        if v.shape == shape {
            return v.clone();
        }
        let offset = (shape.len() - v.shape.len()) as i64;
        let dims: Vec<i64> = (0..v.shape.len() as i64).map(|i| i + offset).collect();
        let out = tensor(v.dtype, shape);
        self.push(
            format!(
                "stablehlo.broadcast_in_dim {}, dims = [{}] : ({}) -> {out}",
                v.ssa,
                i64_list(&dims),
                ty(v)
            ),
            v.dtype,
            shape.to_vec(),
        )
    }

    /// `cosh(a)` (`sinh(a)` when not `cosh`) written out, StableHLO
    /// having no op for either: `(exp(a) ± exp(-a)) * 0.5`.
    fn hyperbolic(&mut self, a: &Val, cosh: bool) -> Val {
        let up = self.elementwise("exponential", &[a]);
        let negated = self.elementwise("negate", &[a]);
        let down = self.elementwise("exponential", &[&negated]);
        let sum = self.elementwise(if cosh { "add" } else { "subtract" }, &[&up, &down]);
        let half = self.constant(Lit::float(0.5, a.dtype), &[]);
        let half = self.broadcast(&half, &a.shape);
        self.elementwise("multiply", &[&sum, &half])
    }

    fn elementwise(&mut self, op: &str, args: &[&Val]) -> Val {
        let operands: Vec<&str> = args.iter().map(|a| a.ssa.as_str()).collect();
        let (d, s) = (args[0].dtype, args[0].shape.clone());
        self.push(
            format!("stablehlo.{op} {} : {}", operands.join(", "), tensor(d, &s)),
            d,
            s,
        )
    }

    fn compare(&mut self, dir: &str, a: &Val, b: &Val) -> Val {
        let out = tensor(DType::Bool, &a.shape);
        self.push(
            format!(
                "stablehlo.compare {dir}, {}, {}, {} : ({}, {}) -> {out}",
                a.ssa,
                b.ssa,
                compare_type(a.dtype),
                ty(a),
                ty(b)
            ),
            DType::Bool,
            a.shape.clone(),
        )
    }

    fn select(&mut self, c: &Val, t: &Val, f: &Val) -> Val {
        self.push(
            format!(
                "stablehlo.select {}, {}, {} : {}, {}",
                c.ssa,
                t.ssa,
                f.ssa,
                ty(c),
                ty(t)
            ),
            t.dtype,
            t.shape.clone(),
        )
    }

    fn convert(&mut self, v: &Val, to: DType) -> Val {
        if to == DType::Bool {
            let zero = self.constant(zero_of(v.dtype), &v.shape);
            return self.compare("NE", v, &zero);
        }
        let out = tensor(to, &v.shape);
        self.push(
            format!("stablehlo.convert {} : ({}) -> {out}", v.ssa, ty(v)),
            to,
            v.shape.clone(),
        )
    }

    fn reshape(&mut self, v: &Val, shape: &[i64]) -> Val {
        if v.shape == shape {
            return v.clone();
        }
        let out = tensor(v.dtype, shape);
        self.push(
            format!("stablehlo.reshape {} : ({}) -> {out}", v.ssa, ty(v)),
            v.dtype,
            shape.to_vec(),
        )
    }

    fn transpose(&mut self, v: &Val, perm: &[usize]) -> Val {
        if perm.iter().enumerate().all(|(i, p)| i == *p) {
            return v.clone();
        }
        let shape: Vec<i64> = perm.iter().map(|&p| v.shape[p]).collect();
        let perm64: Vec<i64> = perm.iter().map(|&p| p as i64).collect();
        let out = tensor(v.dtype, &shape);
        self.push(
            format!(
                "stablehlo.transpose {}, dims = [{}] : ({}) -> {out}",
                v.ssa,
                i64_list(&perm64),
                ty(v)
            ),
            v.dtype,
            shape,
        )
    }

    /// `stablehlo.reduce` over `axes` with the body `op` and `init`.
    fn reduce(&mut self, v: &Val, axes: &[usize], op: &str, init: Lit) -> Val {
        if axes.is_empty() {
            return v.clone();
        }
        let init = self.constant(init, &[]);
        let shape: Vec<i64> = (0..v.shape.len())
            .filter(|i| !axes.contains(i))
            .map(|i| v.shape[i])
            .collect();
        let scalar = tensor(v.dtype, &[]);
        let (a, b, s) = (self.fresh(), self.fresh(), self.fresh());
        let mut sorted: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
        sorted.sort_unstable();
        let out = tensor(v.dtype, &shape);
        let text = format!(
            "\"stablehlo.reduce\"({}, {}) ({{\n      ^bb0({a}: {scalar}, {b}: {scalar}):\n        {s} = stablehlo.{op} {a}, {b} : {scalar}\n        \"stablehlo.return\"({s}) : ({scalar}) -> ()\n    }}) {{dimensions = array<i64: {}>}} : ({}, {scalar}) -> {out}",
            v.ssa,
            init.ssa,
            i64_list(&sorted),
            ty(v)
        );
        self.push(text, v.dtype, shape)
    }

    fn reduce_kind(&mut self, v: &Val, axes: &[usize], kind: ReduceKind) -> Val {
        let (op, init) = combiner(kind, v.dtype);
        self.reduce(v, axes, op, init)
    }

    /// An inclusive scan along `axis` as JAX lowers `cumsum`: a
    /// `stablehlo.reduce_window` whose window spans the whole axis, padded
    /// by its length less one before the start, so that window `i` holds
    /// the elements `0..=i` (XLA rewrites such a window into a scan).
    fn scan(&mut self, v: &Val, axis: usize, kind: ReduceKind) -> Val {
        let (op, init) = combiner(kind, v.dtype);
        let init = self.constant(init, &[]);
        let rank = v.shape.len();
        let window: Vec<i64> = (0..rank)
            .map(|d| if d == axis { v.shape[d].max(1) } else { 1 })
            .collect();
        let padding: Vec<String> = (0..rank)
            .map(|d| format!("[{}, 0]", if d == axis { window[d] - 1 } else { 0 }))
            .collect();
        let scalar = tensor(v.dtype, &[]);
        let (a, b, s) = (self.fresh(), self.fresh(), self.fresh());
        let text = format!(
            "\"stablehlo.reduce_window\"({}, {}) ({{\n      ^bb0({a}: {scalar}, {b}: {scalar}):\n        {s} = stablehlo.{op} {a}, {b} : {scalar}\n        \"stablehlo.return\"({s}) : ({scalar}) -> ()\n    }}) {{window_dimensions = array<i64: {}>, window_strides = array<i64: {}>, padding = dense<[{}]> : tensor<{rank}x2xi64>}} : ({}, {scalar}) -> {}",
            v.ssa,
            init.ssa,
            i64_list(&window),
            i64_list(&vec![1; rank]),
            padding.join(", "),
            ty(v),
            ty(v)
        );
        self.push(text, v.dtype, v.shape.clone())
    }

    /// `argmax`/`argmin` along `axis`: one `stablehlo.reduce` over the
    /// values and their positions (an iota), the body keeping the greater
    /// (lesser) value and, on a tie, the smaller position, so the order in
    /// which the reduction combines elements does not matter. The initial
    /// pair (the type's extreme, position 0) only ever wins where every
    /// element equals that extreme, and 0 is then C's answer too.
    fn arg_extreme(
        &mut self,
        v: &Val,
        axis: usize,
        (largest, last): (bool, bool),
        to: DType,
    ) -> Val {
        let pos = self.push(
            format!(
                "stablehlo.iota dim = {axis} : {}",
                tensor(DType::I64, &v.shape)
            ),
            DType::I64,
            v.shape.clone(),
        );
        let init_v = self.constant(Lit::extreme(v.dtype, !largest), &[]);
        let init_i = self.constant(Lit::int(0, DType::I64), &[]);
        let mut shape = v.shape.clone();
        shape.remove(axis);
        let (scalar, index) = (tensor(v.dtype, &[]), tensor(DType::I64, &[]));
        let body = self.arg_extreme_body(v.dtype, largest, last);
        let ssa = self.fresh();
        self.lines.push(format!(
            "    {ssa}:2 = \"stablehlo.reduce\"({}, {}, {}, {}) ({{\n{body}\n    }}) {{dimensions = array<i64: {axis}>}} : ({}, {}, {scalar}, {index}) -> ({}, {})",
            v.ssa,
            pos.ssa,
            init_v.ssa,
            init_i.ssa,
            ty(v),
            ty(&pos),
            tensor(v.dtype, &shape),
            tensor(DType::I64, &shape),
        ));
        let found = Val {
            ssa: format!("{ssa}#1"),
            dtype: DType::I64,
            shape,
        };
        if to == DType::I64 {
            return found;
        }
        self.convert(&found, to)
    }

    /// The region of [`Self::arg_extreme`]'s reduce: of two (value,
    /// position) pairs, the greater (lesser) value, on a tie the position
    /// the C keeps (the first, or with `last` the last).
    fn arg_extreme_body(&mut self, d: DType, largest: bool, last: bool) -> String {
        let (scalar, index, truth) = (
            tensor(d, &[]),
            tensor(DType::I64, &[]),
            tensor(DType::Bool, &[]),
        );
        let [a, ai, b, bi, wins, tie, first, both, take, rv, ri] = [(); 11].map(|_| self.fresh());
        let dir = if largest { "GT" } else { "LT" };
        let tie_dir = if last { "GT" } else { "LT" };
        let kind = compare_type(d);
        [
            format!("^bb0({a}: {scalar}, {ai}: {index}, {b}: {scalar}, {bi}: {index}):"),
            format!("  {wins} = stablehlo.compare {dir}, {a}, {b}, {kind} : ({scalar}, {scalar}) -> {truth}"),
            format!("  {tie} = stablehlo.compare EQ, {a}, {b}, {kind} : ({scalar}, {scalar}) -> {truth}"),
            format!("  {first} = stablehlo.compare {tie_dir}, {ai}, {bi}, SIGNED : ({index}, {index}) -> {truth}"),
            format!("  {both} = stablehlo.and {tie}, {first} : {truth}"),
            format!("  {take} = stablehlo.or {wins}, {both} : {truth}"),
            format!("  {rv} = stablehlo.select {take}, {a}, {b} : {truth}, {scalar}"),
            format!("  {ri} = stablehlo.select {take}, {ai}, {bi} : {truth}, {index}"),
            format!("  \"stablehlo.return\"({rv}, {ri}) : ({scalar}, {index}) -> ()"),
        ]
        .map(|l| format!("      {l}"))
        .join("\n")
    }

    fn slice_raw(&mut self, v: &Val, start: &[i64], limit: &[i64], step: &[i64]) -> Val {
        let shape: Vec<i64> = (0..start.len())
            .map(|i| {
                let len = limit[i] - start[i];
                if len <= 0 {
                    0
                } else {
                    (len + step[i] - 1) / step[i]
                }
            })
            .collect();
        let out = tensor(v.dtype, &shape);
        self.push(
            format!(
                "\"stablehlo.slice\"({}) {{start_indices = array<i64: {}>, limit_indices = array<i64: {}>, strides = array<i64: {}>}} : ({}) -> {out}",
                v.ssa,
                i64_list(start),
                i64_list(limit),
                i64_list(step),
                ty(v)
            ),
            v.dtype,
            shape,
        )
    }

    /// Per axis: (start, length, step) of a slice, and whether the axis is
    /// kept in the result (false for a single index).
    fn region(&self, shape: &[i64], items: &[SliceItem]) -> LResult<Vec<(i64, i64, i64, bool)>> {
        let mut out = Vec::new();
        for (axis, len) in shape.iter().enumerate() {
            let r = match items.get(axis).unwrap_or(&SliceItem::Full) {
                SliceItem::Full => (0, *len, 1, true),
                SliceItem::Index(d) => (self.dim(d)?, 1, 1, false),
                SliceItem::Range { start, stop, step } => {
                    let (a, b) = (self.dim(start)?, self.dim(stop)?);
                    let n = if b > a { (b - a + step - 1) / step } else { 0 };
                    (a, n, *step, true)
                }
            };
            let last = r.0 + (r.1 - 1).max(0) * r.2;
            if r.0 < 0 || (r.1 > 0 && last >= *len) || r.0 > *len {
                return Err(EmitError::Unsupported(format!(
                    "slice of axis {axis} (start {}, {} elements, step {}) is out of bounds for length {len}",
                    r.0, r.1, r.2
                )));
            }
            out.push(r);
        }
        Ok(out)
    }

    fn lower(&mut self, e: &Expr) -> LResult<Val> {
        if let Some(v) = self.memo.get(e) {
            return Ok(v.clone());
        }
        let v = self.lower_uncached(e)?;
        self.memo.insert(e.clone(), v.clone());
        Ok(v)
    }

    fn lower_uncached(&mut self, e: &Expr) -> LResult<Val> {
        let args = e
            .args()
            .iter()
            .map(|a| self.lower(a))
            .collect::<LResult<Vec<Val>>>()?;
        let out_shape = self.shape(e.shape())?;
        let d = e.dtype();
        let v = match e.op() {
            Op::Var(name) => match self.env.get(&**name) {
                Some(v) => v.clone(),
                None => match self.sizes.get(&**name) {
                    Some(n) => self.constant(Lit::int(*n, DType::I64), &[]),
                    None => return Err(EmitError::Unsupported(format!("`{name}` is not bound"))),
                },
            },
            Op::Lit(l) => self.constant(*l, &[]),
            Op::Full { value, .. } => self.constant(*value, &out_shape),
            Op::Unary(u) => {
                let a = &args[0];
                match u {
                    U::Abs if !a.dtype.is_signed_int() && !a.dtype.is_float() => a.clone(),
                    _ => match hlo_unary(*u) {
                        Some(name) => self.elementwise(name, &[a]),
                        // StableHLO has neither: (e^x ± e^-x) / 2.
                        None => self.hyperbolic(a, *u == U::Cosh),
                    },
                }
            }
            Op::Binary(b) => {
                let x = self.broadcast(&args[0], &out_shape);
                if let Some(k) = crate::narrow::shift_amount(e) {
                    // A non-negative dividend over 2^k (narrow lowering).
                    let amount = self.constant(Lit::int(i64::from(k), d), &[]);
                    let amount = self.broadcast(&amount, &out_shape);
                    return Ok(self.elementwise("shift_right_logical", &[&x, &amount]));
                }
                let mut y = self.broadcast(&args[1], &out_shape);
                if *b == B::Div && args[1].shape != out_shape {
                    // XLA turns a division by a broadcast into a product
                    // with its reciprocal, which is not correctly rounded
                    // (x / 1.2345f differs from C's in about one element
                    // of nine): the barrier keeps it a division.
                    y = self.push(
                        format!("stablehlo.optimization_barrier {} : {}", y.ssa, ty(&y)),
                        y.dtype,
                        y.shape.clone(),
                    );
                }
                if *b == B::Mul && d.is_signed_int() && e.args()[0] == e.args()[1] {
                    // XLA folds `abs(x * x)` to `x * x`, assuming signed
                    // squares cannot wrap; TensIR integers wrap.
                    y = self.push(
                        format!("stablehlo.optimization_barrier {} : {}", y.ssa, ty(&y)),
                        y.dtype,
                        y.shape.clone(),
                    );
                }
                let cmp = match b {
                    B::Lt => Some("LT"),
                    B::Le => Some("LE"),
                    B::Gt => Some("GT"),
                    B::Ge => Some("GE"),
                    B::Eq => Some("EQ"),
                    B::Ne => Some("NE"),
                    _ => None,
                };
                match cmp {
                    Some(dir) => self.compare(dir, &x, &y),
                    None => {
                        let name = match b {
                            B::Add => "add",
                            B::Sub => "subtract",
                            B::Mul => "multiply",
                            // stablehlo.divide truncates integers toward zero.
                            B::Div | B::TruncDiv => "divide",
                            // stablehlo.remainder takes the dividend's sign.
                            B::Rem => "remainder",
                            B::Pow => "power",
                            B::Maximum => "maximum",
                            B::Minimum => "minimum",
                            B::And => "and",
                            B::Or => "or",
                            _ => "unreachable",
                        };
                        self.elementwise(name, &[&x, &y])
                    }
                }
            }
            Op::Where => {
                let c = self.broadcast(&args[0], &out_shape);
                let t = self.broadcast(&args[1], &out_shape);
                let f = self.broadcast(&args[2], &out_shape);
                self.select(&c, &t, &f)
            }
            Op::Reduce { kind, axes } => self.reduce_kind(&args[0], axes, *kind),
            Op::Scan { kind, axis } => self.scan(&args[0], *axis, *kind),
            Op::ArgExtreme {
                largest,
                axis,
                dtype,
                last,
            } => self.arg_extreme(&args[0], *axis, (*largest, *last), *dtype),
            Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::Einsum(_) => {
                let ranks: Vec<usize> = args.iter().map(|a| a.shape.len()).collect();
                let spec = e.op().as_contraction(&ranks).ok_or_else(|| {
                    EmitError::Unsupported(format!("{} of ranks {ranks:?}", e.op().name()))
                })?;
                self.contraction(&spec, &args)?
            }
            Op::Transpose(perm) => self.transpose(&args[0], perm),
            Op::Broadcast(_) => self.broadcast(&args[0], &out_shape),
            Op::Slice(items) if self.has_dynamic_index(items) => {
                self.dynamic_slice(&args[0], items, &out_shape)?
            }
            Op::Slice(items) => {
                let a = &args[0];
                let reg = self.region(&a.shape, items)?;
                let start: Vec<i64> = reg.iter().map(|r| r.0).collect();
                let step: Vec<i64> = reg.iter().map(|r| r.2).collect();
                let limit: Vec<i64> = reg
                    .iter()
                    .map(|r| r.0 + (r.1 - 1).max(0) * r.2 + i64::from(r.1 > 0))
                    .collect();
                let s = self.slice_raw(a, &start, &limit, &step);
                self.reshape(&s, &out_shape)
            }
            Op::Flip(axes) => self.reverse(&args[0], axes),
            Op::Reshape(_) => self.reshape(&args[0], &out_shape),
            Op::Window(_) => self.window(&args[0], &out_shape),
            Op::Concat { axis } => {
                let operands: Vec<&str> = args.iter().map(|a| a.ssa.as_str()).collect();
                let types: Vec<String> = args.iter().map(ty).collect();
                let out = tensor(d, &out_shape);
                self.push(
                    format!(
                        "stablehlo.concatenate {}, dim = {axis} : ({}) -> {out}",
                        operands.join(", "),
                        types.join(", ")
                    ),
                    d,
                    out_shape.clone(),
                )
            }
            Op::Triu(k) | Op::Tril(k) => {
                let diff = self.column_minus_row(&out_shape);
                let kk = self.constant(Lit::int(*k, DType::I64), &out_shape);
                let dir = if matches!(e.op(), Op::Triu(_)) {
                    "GE"
                } else {
                    "LE"
                };
                let keep = self.compare(dir, &diff, &kk);
                let zero = self.constant(zero_of(d), &out_shape);
                self.select(&keep, &args[0], &zero)
            }
            Op::Diag => {
                let a = &args[0];
                let n = a.shape[0];
                let square = vec![n, n];
                let diff = self.column_minus_row(&square);
                let zero_i = self.constant(Lit::int(0, DType::I64), &square);
                let on_diag = self.compare("EQ", &diff, &zero_i);
                let zero = self.constant(zero_of(d), &square);
                if a.shape.len() == 1 {
                    let rows = self.broadcast_axis0(a, &square);
                    self.select(&on_diag, &rows, &zero)
                } else {
                    let kept = self.select(&on_diag, a, &zero);
                    let op = if d == DType::Bool { "or" } else { "add" };
                    self.reduce(&kept, &[1], op, zero_of(d))
                }
            }
            Op::Cast(to) => {
                if args[0].dtype == *to {
                    args[0].clone()
                } else {
                    self.convert(&args[0], *to)
                }
            }
            Op::Cholesky => {
                let a = &args[0];
                let l = self.push(
                    format!(
                        "\"stablehlo.cholesky\"({}) {{lower = true}} : ({}) -> {}",
                        a.ssa,
                        ty(a),
                        ty(a)
                    ),
                    d,
                    a.shape.clone(),
                );
                // The other triangle of the result is implementation-defined.
                let diff = self.column_minus_row(&out_shape);
                let zero_i = self.constant(Lit::int(0, DType::I64), &out_shape);
                let keep = self.compare("LE", &diff, &zero_i);
                let zero = self.constant(zero_of(d), &out_shape);
                self.select(&keep, &l, &zero)
            }
            Op::TriSolve { lower, unit } => {
                self.triangular_solve(&args[0], &args[1], *lower, *unit)
            }
            Op::LuNoPivot => {
                return Err(EmitError::Unsupported(
                    "lu_nopivot: StableHLO has no LU without pivoting (use numpy, pytorch or jax)"
                        .to_string(),
                ))
            }
            Op::ScatterAdd => self.scatter_add(&args[0], &args[1], &args[2]),
            Op::Syrk => return self.syrk_blocks(e, out_shape[0]),
            // No StableHLO op computes one triangle: the definition (masks
            // around one dot_general; syr2k's second product is the first
            // one transposed), over the operands lowered above.
            Op::Syr2k | Op::MirrorLower => match crate::symmetry::blas::definition(e) {
                Some(Ok(d)) => return self.lower(&d),
                Some(Err(err)) => return Err(EmitError::Unsupported(err.message)),
                None => return Err(EmitError::Unsupported(e.op().name().to_string())),
            },
        };
        Ok(v)
    }

    /// `syrk(a, c, α, β)` with `a aᵀ`'s lower triangle by 2 x 2 blocks
    /// ([`blas::lower_gram_blocks`], sizes being known here), bound to a
    /// fresh name that the definition's update then reads.
    fn syrk_blocks(&mut self, e: &Expr, rows: i64) -> LResult<Val> {
        let unsupported = |err: crate::expr::TypeError| EmitError::Unsupported(err.message);
        let a = &e.args()[0];
        let gram = self.lower(&blas::lower_gram_blocks(a, rows).map_err(unsupported)?)?;
        let name = format!("_gram{}", self.next);
        self.env.insert(name.clone(), gram);
        let placeholder = Expr::var(&name, e.ty().clone());
        let [_, c, alpha, beta] = e.args() else {
            return Err(EmitError::Unsupported("syrk takes 4 operands".to_string()));
        };
        let update = blas::lower_update(placeholder, c, alpha, beta).map_err(unsupported)?;
        self.lower(&update)
    }

    /// `stablehlo.triangular_solve` of `t x = b`; a vector `b` is solved as
    /// one column.
    fn triangular_solve(&mut self, t: &Val, b: &Val, lower: bool, unit: bool) -> Val {
        let column = b.shape.len() == 1;
        let rhs = if column {
            self.reshape(b, &[b.shape[0], 1])
        } else {
            b.clone()
        };
        let x = self.push(
            format!(
                "\"stablehlo.triangular_solve\"({}, {}) {{left_side = true, lower = {lower}, \
                 unit_diagonal = {unit}, transpose_a = #stablehlo<transpose NO_TRANSPOSE>}} : \
                 ({}, {}) -> {}",
                t.ssa,
                rhs.ssa,
                ty(t),
                ty(&rhs),
                ty(&rhs)
            ),
            b.dtype,
            rhs.shape.clone(),
        );
        if column {
            self.reshape(&x, &b.shape)
        } else {
            x
        }
    }

    /// `stablehlo.scatter` of `vals` into the bins `h` at `idx` with an
    /// add region. The indices are not checked here (XLA drops an update
    /// whose index is out of range, where C would write outside `h`):
    /// the caller guarantees the precondition the module states.
    fn scatter_add(&mut self, h: &Val, idx: &Val, vals: &Val) -> Val {
        let idx = if idx.dtype == DType::I64 {
            idx.clone()
        } else {
            self.convert(idx, DType::I64)
        };
        let scalar = tensor(h.dtype, &[]);
        let (a, b, s) = (self.fresh(), self.fresh(), self.fresh());
        let rank = idx.shape.len();
        let text = format!(
            "\"stablehlo.scatter\"({}, {}, {}) ({{\n      ^bb0({a}: {scalar}, {b}: {scalar}):\n        {s} = stablehlo.add {a}, {b} : {scalar}\n        \"stablehlo.return\"({s}) : ({scalar}) -> ()\n    }}) {{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = {rank}>, indices_are_sorted = false, unique_indices = false}} : ({}, {}, {}) -> {}",
            h.ssa,
            idx.ssa,
            vals.ssa,
            ty(h),
            ty(&idx),
            ty(vals),
            ty(h)
        );
        self.push(text, h.dtype, h.shape.clone())
    }

    /// `stablehlo.reverse` of `axes`.
    fn reverse(&mut self, v: &Val, axes: &[usize]) -> Val {
        if axes.is_empty() {
            return v.clone();
        }
        let dims: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
        self.push(
            format!(
                "stablehlo.reverse {}, dims = [{}] : {}",
                v.ssa,
                i64_list(&dims),
                ty(v)
            ),
            v.dtype,
            v.shape.clone(),
        )
    }

    /// Sliding windows as one `stablehlo.gather`: the start of window
    /// `[i0, i1, ...]` is that index (an iota per axis), and each start
    /// reads a slice of the window's sizes; `out_shape` is the window
    /// positions, then the sizes.
    fn window(&mut self, v: &Val, out_shape: &[i64]) -> Val {
        let rank = v.shape.len();
        let mut starts_shape = out_shape[..rank].to_vec();
        starts_shape.push(1);
        let iota_ty = tensor(DType::I64, &starts_shape);
        let iotas: Vec<Val> = (0..rank)
            .map(|d| {
                self.push(
                    format!("stablehlo.iota dim = {d} : {iota_ty}"),
                    DType::I64,
                    starts_shape.clone(),
                )
            })
            .collect();
        let starts = if rank == 1 {
            iotas[0].clone()
        } else {
            let mut shape = starts_shape.clone();
            shape[rank] = rank as i64;
            let names: Vec<&str> = iotas.iter().map(|i| i.ssa.as_str()).collect();
            let types = vec![iota_ty.clone(); rank];
            self.push(
                format!(
                    "stablehlo.concatenate {}, dim = {rank} : ({}) -> {}",
                    names.join(", "),
                    types.join(", "),
                    tensor(DType::I64, &shape)
                ),
                DType::I64,
                shape,
            )
        };
        let offsets: Vec<i64> = (rank..2 * rank).map(|d| d as i64).collect();
        let index_map: Vec<i64> = (0..rank).map(|d| d as i64).collect();
        self.push(
            format!(
                "\"stablehlo.gather\"({}, {}) {{dimension_numbers = #stablehlo.gather<offset_dims = [{}], start_index_map = [{}], index_vector_dim = {rank}>, indices_are_sorted = true, slice_sizes = array<i64: {}>}} : ({}, {}) -> {}",
                v.ssa,
                starts.ssa,
                i64_list(&offsets),
                i64_list(&index_map),
                i64_list(&out_shape[rank..]),
                ty(v),
                ty(&starts),
                tensor(v.dtype, out_shape)
            ),
            v.dtype,
            out_shape.to_vec(),
        )
    }

    /// `b[i][j] = v[i]`.
    fn broadcast_axis0(&mut self, v: &Val, shape: &[i64]) -> Val {
        let out = tensor(v.dtype, shape);
        self.push(
            format!(
                "stablehlo.broadcast_in_dim {}, dims = [0] : ({}) -> {out}",
                v.ssa,
                ty(v)
            ),
            v.dtype,
            shape.to_vec(),
        )
    }

    /// The matrix `j - i` of a 2-D shape, for triangular and diagonal masks.
    fn column_minus_row(&mut self, shape: &[i64]) -> Val {
        let t = tensor(DType::I64, shape);
        let rows = self.push(
            format!("stablehlo.iota dim = 0 : {t}"),
            DType::I64,
            shape.to_vec(),
        );
        let cols = self.push(
            format!("stablehlo.iota dim = 1 : {t}"),
            DType::I64,
            shape.to_vec(),
        );
        self.elementwise("subtract", &[&cols, &rows])
    }

    /// One- or two-operand einsum via reductions, `dot_general` and a final
    /// transpose into the output's label order.
    fn contraction(&mut self, spec: &EinsumSpec, args: &[Val]) -> LResult<Val> {
        // First sum away labels that occur in one operand only and not in
        // the output.
        let mut operands: Vec<(Vec<char>, Val)> = Vec::new();
        for (j, (labels, v)) in spec.inputs.iter().zip(args).enumerate() {
            let elsewhere = |c: &char| {
                spec.output.contains(c)
                    || spec
                        .inputs
                        .iter()
                        .enumerate()
                        .any(|(k, ls)| k != j && ls.contains(c))
            };
            let axes: Vec<usize> = (0..labels.len())
                .filter(|&i| !elsewhere(&labels[i]))
                .collect();
            let reduced = self.reduce_kind(v, &axes, ReduceKind::Sum);
            let kept: Vec<char> = labels.iter().filter(|c| elsewhere(c)).copied().collect();
            operands.push((kept, reduced));
        }
        let (labels, v) = if operands.len() == 1 {
            operands.remove(0)
        } else {
            let (ll, lv) = &operands[0];
            let (rl, rv) = &operands[1];
            let pos = |ls: &[char], c: char| ls.iter().position(|x| *x == c).unwrap_or(0) as i64;
            let batch: Vec<char> = ll
                .iter()
                .filter(|c| rl.contains(c) && spec.output.contains(c))
                .copied()
                .collect();
            let contract: Vec<char> = ll
                .iter()
                .filter(|c| rl.contains(c) && !spec.output.contains(c))
                .copied()
                .collect();
            let lfree: Vec<char> = ll.iter().filter(|c| !rl.contains(c)).copied().collect();
            let rfree: Vec<char> = rl.iter().filter(|c| !ll.contains(c)).copied().collect();
            let result_labels: Vec<char> =
                batch.iter().chain(&lfree).chain(&rfree).copied().collect();
            let size = |c: char| -> i64 {
                ll.iter()
                    .position(|x| *x == c)
                    .map(|i| lv.shape[i])
                    .or_else(|| rl.iter().position(|x| *x == c).map(|i| rv.shape[i]))
                    .unwrap_or(1)
            };
            let shape: Vec<i64> = result_labels.iter().map(|c| size(*c)).collect();
            let lb: Vec<i64> = batch.iter().map(|c| pos(ll, *c)).collect();
            let rb: Vec<i64> = batch.iter().map(|c| pos(rl, *c)).collect();
            let lc: Vec<i64> = contract.iter().map(|c| pos(ll, *c)).collect();
            let rc: Vec<i64> = contract.iter().map(|c| pos(rl, *c)).collect();
            let out = tensor(lv.dtype, &shape);
            let text = format!(
                "stablehlo.dot_general {}, {}, batching_dims = [{}] x [{}], contracting_dims = [{}] x [{}] : ({}, {}) -> {out}",
                lv.ssa,
                rv.ssa,
                i64_list(&lb),
                i64_list(&rb),
                i64_list(&lc),
                i64_list(&rc),
                ty(lv),
                ty(rv)
            );
            let dtype = lv.dtype;
            (result_labels, self.push(text, dtype, shape))
        };
        let perm: Vec<usize> = spec
            .output
            .iter()
            .map(|c| labels.iter().position(|x| x == c).unwrap_or(0))
            .collect();
        Ok(self.transpose(&v, &perm))
    }

    /// `target[items] = value` as `select(mask, pad(value), target)`.
    fn store_region(&mut self, target: &Val, items: &[SliceItem], value: &Val) -> LResult<Val> {
        let reg = self.region(&target.shape, items)?;
        if reg.iter().any(|r| r.1 == 0) {
            return Ok(target.clone());
        }
        let region_shape: Vec<i64> = reg.iter().map(|r| r.1).collect();
        let value = self.reshape(value, &region_shape);
        let low: Vec<i64> = reg.iter().map(|r| r.0).collect();
        let interior: Vec<i64> = reg.iter().map(|r| r.2 - 1).collect();
        let high: Vec<i64> = reg
            .iter()
            .zip(&target.shape)
            .map(|(r, len)| len - (r.0 + (r.1 - 1) * r.2 + 1))
            .collect();
        let pad = |me: &mut Self, v: &Val, fill: Lit| -> Val {
            let f = me.constant(fill, &[]);
            let out = tensor(v.dtype, &target.shape);
            me.push(
                format!(
                    "\"stablehlo.pad\"({}, {}) {{edge_padding_low = array<i64: {}>, edge_padding_high = array<i64: {}>, interior_padding = array<i64: {}>}} : ({}, {}) -> {out}",
                    v.ssa,
                    f.ssa,
                    i64_list(&low),
                    i64_list(&high),
                    i64_list(&interior),
                    ty(v),
                    tensor(v.dtype, &[])
                ),
                v.dtype,
                target.shape.clone(),
            )
        };
        let placed = pad(self, &value, zero_of(value.dtype));
        let ones = self.constant(Lit::Bool(true), &region_shape);
        let mask = pad(self, &ones, Lit::Bool(false));
        Ok(self.select(&mask, &placed, target))
    }
}

/// Most statements unrolled loops may produce in one function: beyond it
/// the module is too large to compile in reasonable time.
const MAX_UNROLLED_STATEMENTS: usize = 2_000;

impl Lowering {
    /// Lowers statements in order; `unrolled` counts statements produced by
    /// unrolling, against [`MAX_UNROLLED_STATEMENTS`].
    fn block(
        &mut self,
        stmts: &[Stmt],
        returned: &mut Option<Val>,
        unrolled: &mut usize,
    ) -> LResult<()> {
        for stmt in stmts {
            match stmt {
                Stmt::Let { name, value } => {
                    let v = self.lower(value)?;
                    self.env.insert(name.to_string(), v);
                }
                Stmt::Var { name, ty } => {
                    let shape = ty
                        .shape
                        .iter()
                        .map(|d| self.dim(d))
                        .collect::<LResult<Vec<i64>>>()?;
                    let zeros = self.constant(zero_of(ty.dtype), &shape);
                    self.env.insert(name.to_string(), zeros);
                }
                Stmt::Store {
                    target,
                    region,
                    value,
                } => {
                    let v = self.lower(value)?;
                    let old = self.env.get(&**target).cloned().ok_or_else(|| {
                        EmitError::Unsupported(format!("`{target}` is not bound"))
                    })?;
                    let new = match region {
                        None => v,
                        Some(items)
                            if self.has_dynamic_index(items)
                                || self.updates_in_place(items, value.shape().len()) =>
                        {
                            self.dynamic_store(&old, items, &v)?
                        }
                        Some(items) => self.store_region(&old, items, &v)?,
                    };
                    self.env.insert(target.to_string(), new);
                    // Later reads of the array see the stored value: forget
                    // lowerings that read the old one.
                    self.memo.clear();
                }
                Stmt::Return(value) => *returned = Some(self.lower(value)?),
                Stmt::Loop {
                    var,
                    start,
                    stop,
                    body,
                } => {
                    let (first, end) = (self.dim(start)?, self.dim(stop)?);
                    if end <= first || !writes_any(body) {
                        // No iterations, or none with an effect.
                        continue;
                    }
                    if needs_unrolling(body, var) {
                        self.unroll(var, first, end, body, returned, unrolled)?;
                    } else {
                        self.while_loop(var, first, end, body, unrolled)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// A loop whose variable sets shapes or slice ranges: one copy of the
    /// body per iteration, with the variable a constant in each.
    fn unroll(
        &mut self,
        var: &str,
        first: i64,
        end: i64,
        body: &[Stmt],
        returned: &mut Option<Val>,
        unrolled: &mut usize,
    ) -> LResult<()> {
        let trips = usize::try_from(end - first).unwrap_or(usize::MAX);
        let total = trips
            .saturating_mul(count_statements(body))
            .saturating_add(*unrolled);
        if total > MAX_UNROLLED_STATEMENTS {
            return Err(EmitError::Unsupported(format!(
                "the loop over `{var}` has shapes or slice offsets that depend on `{var}`, so StableHLO needs it unrolled, \
                 which would take {total} statements at these sizes (limit {MAX_UNROLLED_STATEMENTS}); \
                 use a Python target or smaller sizes"
            )));
        }
        *unrolled = total;
        for t in first..end {
            self.sizes.insert(var.to_string(), t);
            // Lowerings that read the variable or its slices are stale.
            self.memo.clear();
            self.block(body, returned, unrolled)?;
            forget_lets(&mut self.env, body);
        }
        self.sizes.remove(var);
        self.memo.clear();
        Ok(())
    }

    /// A loop whose shapes do not depend on its variable (a scalar value or
    /// a single index at most): one `stablehlo.while` carrying a counter
    /// and every array and value the body uses, so its regions capture
    /// nothing implicitly; indices become dynamic slices.
    fn while_loop(
        &mut self,
        var: &str,
        first: i64,
        end: i64,
        body: &[Stmt],
        unrolled: &mut usize,
    ) -> LResult<()> {
        let mut used = BTreeSet::new();
        names_used(body, &mut used);
        // Counters of enclosing while loops that the body uses as offsets.
        used.extend(
            self.dynamic
                .keys()
                .filter(|k| mentions_in_any_dim(body, k))
                .cloned(),
        );
        let carried: Vec<(String, Val)> = used
            .into_iter()
            .filter_map(|n| self.env.get(&n).cloned().map(|v| (n, v)))
            .collect();
        let counter = self.constant(Lit::int(first, DType::I64), &[]);
        let mut operands = vec![counter.clone()];
        operands.extend(carried.iter().map(|(_, v)| v.clone()));
        let types: Vec<String> = operands.iter().map(ty).collect();
        let types = types.join(", ");
        let outer_lines = std::mem::take(&mut self.lines);
        // Values lowered outside the loop are not visible in its regions.
        self.memo.clear();

        // cond: counter < end
        let cond_args: Vec<String> = operands.iter().map(|_| self.fresh()).collect();
        let limit = self.constant(Lit::int(end, DType::I64), &[]);
        let i64_scalar = tensor(DType::I64, &[]);
        let less = self.push(
            format!(
                "stablehlo.compare LT, {}, {}, SIGNED : ({i64_scalar}, {i64_scalar}) -> tensor<i1>",
                cond_args[0], limit.ssa
            ),
            DType::Bool,
            vec![],
        );
        self.lines.push(format!(
            "    \"stablehlo.return\"({}) : (tensor<i1>) -> ()",
            less.ssa
        ));
        let cond_lines = std::mem::take(&mut self.lines);

        // body: the statements on the carried values, then counter + 1
        let body_args: Vec<String> = operands.iter().map(|_| self.fresh()).collect();
        let outer_env = self.env.clone();
        let outer_dynamic = self.dynamic.clone();
        let arg = |i: usize, v: &Val| Val {
            ssa: body_args[i].clone(),
            dtype: v.dtype,
            shape: v.shape.clone(),
        };
        self.env.insert(var.to_string(), arg(0, &counter));
        self.dynamic.insert(var.to_string(), arg(0, &counter));
        for (i, (name, v)) in carried.iter().enumerate() {
            self.env.insert(name.clone(), arg(i + 1, v));
            if self.dynamic.contains_key(name) {
                self.dynamic.insert(name.clone(), arg(i + 1, v));
            }
        }
        let mut no_return = None;
        self.block(body, &mut no_return, unrolled)?;
        let one = self.constant(Lit::int(1, DType::I64), &[]);
        let next = self.push(
            format!("stablehlo.add {}, {} : {i64_scalar}", body_args[0], one.ssa),
            DType::I64,
            vec![],
        );
        let mut results = vec![next.ssa];
        for (name, _) in &carried {
            let v = self.env.get(name).ok_or_else(|| {
                EmitError::Unsupported(format!("`{name}` is not bound after the loop body"))
            })?;
            results.push(v.ssa.clone());
        }
        self.lines.push(format!(
            "    \"stablehlo.return\"({}) : ({types}) -> ()",
            results.join(", ")
        ));
        let body_lines = std::mem::take(&mut self.lines);
        self.env = outer_env;
        self.dynamic = outer_dynamic;
        self.lines = outer_lines;
        // Lowerings inside the regions are not visible after the loop.
        self.memo.clear();

        let result = self.fresh();
        let block_args = |args: &[String]| {
            args.iter()
                .zip(&operands)
                .map(|(a, v)| format!("{a}: {}", ty(v)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = format!(
            "    {result}:{} = \"stablehlo.while\"({}) ({{\n    ^bb0({}):\n",
            operands.len(),
            operands
                .iter()
                .map(|v| v.ssa.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            block_args(&cond_args)
        );
        for line in cond_lines {
            text.push_str(&format!("  {line}\n"));
        }
        text.push_str(&format!(
            "    }}, {{\n    ^bb0({}):\n",
            block_args(&body_args)
        ));
        for line in body_lines {
            text.push_str(&format!("  {line}\n"));
        }
        text.push_str(&format!("    }}) : ({types}) -> ({types})"));
        self.lines.push(text);
        for (i, (name, v)) in carried.iter().enumerate() {
            self.env.insert(
                name.clone(),
                Val {
                    ssa: format!("{result}#{}", i + 1),
                    dtype: v.dtype,
                    shape: v.shape.clone(),
                },
            );
        }
        Ok(())
    }
}

impl Lowering {
    /// Whether a slice has an index that is a while loop's counter.
    fn has_dynamic_index(&self, items: &[SliceItem]) -> bool {
        items.iter().any(|it| match it {
            SliceItem::Index(d) => d.symbols().any(|s| self.dynamic.contains_key(s)),
            SliceItem::Full | SliceItem::Range { .. } => false,
        })
    }

    /// An `i64` scalar holding the value of `d`, computed from the loop
    /// counters it mentions (constant when it mentions none).
    fn dim_value(&mut self, d: &Dim) -> LResult<Val> {
        if !d.symbols().any(|s| self.dynamic.contains_key(s)) {
            let v = self.dim(d)?;
            return Ok(self.constant(Lit::int(v, DType::I64), &[]));
        }
        let scalar = tensor(DType::I64, &[]);
        let mut total: Option<Val> = None;
        for (monomial, coeff) in d.terms() {
            // The coefficient is a factor only when it is not 1.
            let mut term: Option<Val> = (coeff != 1 || monomial.is_empty())
                .then(|| self.constant(Lit::int(coeff, DType::I64), &[]));
            for sym in monomial {
                let factor = match self.dynamic.get(&**sym) {
                    Some(v) => v.clone(),
                    None => {
                        let v = self.sizes.get(&**sym).copied().ok_or_else(|| {
                            EmitError::Unsupported(format!("`{sym}` in `{d}` is not bound"))
                        })?;
                        self.constant(Lit::int(v, DType::I64), &[])
                    }
                };
                term = Some(match term {
                    None => factor,
                    Some(t) => self.push(
                        format!("stablehlo.multiply {}, {} : {scalar}", t.ssa, factor.ssa),
                        DType::I64,
                        vec![],
                    ),
                });
            }
            let Some(term) = term else { continue };
            total = Some(match total {
                None => term,
                Some(t) => self.push(
                    format!("stablehlo.add {}, {} : {scalar}", t.ssa, term.ssa),
                    DType::I64,
                    vec![],
                ),
            });
        }
        let total = match total {
            Some(t) => t,
            None => self.constant(Lit::int(0, DType::I64), &[]),
        };
        if d.divisor() == 1 {
            return Ok(total);
        }
        // Offsets of valid programs are non-negative, where truncating
        // division is floor division.
        let divisor = self.constant(Lit::int(d.divisor(), DType::I64), &[]);
        Ok(self.push(
            format!("stablehlo.divide {}, {} : {scalar}", total.ssa, divisor.ssa),
            DType::I64,
            vec![],
        ))
    }

    /// Per axis: the start offset and the extent a slice covers.
    fn dynamic_window(
        &mut self,
        shape: &[i64],
        items: &[SliceItem],
    ) -> LResult<(Vec<Val>, Vec<i64>, Vec<i64>)> {
        let (mut starts, mut extents, mut steps) = (Vec::new(), Vec::new(), Vec::new());
        for (axis, len) in shape.iter().enumerate() {
            let (start, extent, step) = match items.get(axis).unwrap_or(&SliceItem::Full) {
                SliceItem::Full => (self.constant(Lit::int(0, DType::I64), &[]), *len, 1),
                SliceItem::Index(d) => (self.dim_value(d)?, 1, 1),
                SliceItem::Range { start, stop, step } => {
                    let (a, b) = (self.dim(start)?, self.dim(stop)?);
                    let n = if b > a { (b - a + step - 1) / step } else { 0 };
                    let extent = if n > 0 { (n - 1) * step + 1 } else { 0 };
                    (self.constant(Lit::int(a, DType::I64), &[]), extent, *step)
                }
            };
            starts.push(start);
            extents.push(extent);
            steps.push(step);
        }
        Ok((starts, extents, steps))
    }

    /// A slice at offsets that depend on while loop counters.
    fn dynamic_slice(&mut self, a: &Val, items: &[SliceItem], out_shape: &[i64]) -> LResult<Val> {
        let (starts, extents, steps) = self.dynamic_window(&a.shape, items)?;
        let scalar = tensor(DType::I64, &[]);
        let operands: Vec<&str> = std::iter::once(a.ssa.as_str())
            .chain(starts.iter().map(|v| v.ssa.as_str()))
            .collect();
        let types: Vec<String> = std::iter::once(ty(a))
            .chain(starts.iter().map(|_| scalar.clone()))
            .collect();
        let window = self.push(
            format!(
                "\"stablehlo.dynamic_slice\"({}) {{slice_sizes = array<i64: {}>}} : ({}) -> {}",
                operands.join(", "),
                i64_list(&extents),
                types.join(", "),
                tensor(a.dtype, &extents)
            ),
            a.dtype,
            extents.clone(),
        );
        let strided = if steps.iter().any(|s| *s != 1) {
            let zeros = vec![0; extents.len()];
            self.slice_raw(&window, &zeros, &extents, &steps)
        } else {
            window
        };
        Ok(self.reshape(&strided, out_shape))
    }

    /// Whether a store at constant offsets inside a `stablehlo.while` is
    /// written as an in-place `dynamic_update_slice` rather than a select
    /// over the whole array: unit steps, and not a stencil's interior
    /// (where the select is faster, [`super::is_interior_box`]). Outside
    /// loops a store runs once and keeps its select.
    fn updates_in_place(&self, items: &[SliceItem], value_rank: usize) -> bool {
        !self.dynamic.is_empty()
            && items
                .iter()
                .all(|it| !matches!(it, SliceItem::Range { step, .. } if *step != 1))
            && !super::is_interior_box(items, value_rank)
    }

    /// A region write at offsets that depend on while loop counters, or at
    /// constant offsets where it updates in place (unit steps only; see
    /// [`needs_unrolling`] and [`Self::updates_in_place`]).
    fn dynamic_store(&mut self, target: &Val, items: &[SliceItem], value: &Val) -> LResult<Val> {
        let (starts, extents, steps) = self.dynamic_window(&target.shape, items)?;
        if steps.iter().any(|s| *s != 1) {
            return Err(EmitError::Unsupported(
                "a strided region write at a loop-dependent index".to_string(),
            ));
        }
        if extents.contains(&0) {
            return Ok(target.clone());
        }
        let update = self.reshape(value, &extents);
        let scalar = tensor(DType::I64, &[]);
        let operands: Vec<&str> = [target.ssa.as_str(), update.ssa.as_str()]
            .into_iter()
            .chain(starts.iter().map(|v| v.ssa.as_str()))
            .collect();
        let types: Vec<String> = [ty(target), ty(&update)]
            .into_iter()
            .chain(starts.iter().map(|_| scalar.clone()))
            .collect();
        Ok(self.push(
            format!(
                "\"stablehlo.dynamic_update_slice\"({}) : ({}) -> {}",
                operands.join(", "),
                types.join(", "),
                ty(target)
            ),
            target.dtype,
            target.shape.clone(),
        ))
    }
}

/// Whether the loop over `var` must be unrolled rather than lowered to a
/// `stablehlo.while`: `var` sets a shape, a slice range or a nested loop's
/// bounds, or indexes a strided region write. Single indices (`x[i]`,
/// `A[i - 1, 0:n]`) become dynamic slices.
fn needs_unrolling(stmts: &[Stmt], var: &str) -> bool {
    let in_dim = |d: &Dim| d.symbols().any(|s| s == var);
    let in_ranges = |items: &[SliceItem]| {
        items.iter().any(|it| match it {
            SliceItem::Range { start, stop, .. } => in_dim(start) || in_dim(stop),
            SliceItem::Full | SliceItem::Index(_) => false,
        })
    };
    let strided_dynamic_write = |items: &[SliceItem]| {
        let indexed = items
            .iter()
            .any(|it| matches!(it, SliceItem::Index(d) if in_dim(d)));
        let strided = items
            .iter()
            .any(|it| matches!(it, SliceItem::Range { step, .. } if *step != 1));
        indexed && strided
    };
    let in_expr = |e: &Expr| {
        let mut found = false;
        e.walk_unique(&mut |node| {
            found |= match node.op() {
                Op::Full { shape, .. }
                | Op::Broadcast(shape)
                | Op::Reshape(shape)
                | Op::Window(shape) => shape.iter().any(in_dim),
                Op::Slice(items) => in_ranges(items),
                _ => false,
            }
        });
        found
    };
    stmts.iter().any(|s| match s {
        Stmt::Let { value, .. } | Stmt::Return(value) => in_expr(value),
        Stmt::Store { region, value, .. } => {
            region
                .as_deref()
                .is_some_and(|r| in_ranges(r) || strided_dynamic_write(r))
                || in_expr(value)
        }
        Stmt::Loop {
            start, stop, body, ..
        } => in_dim(start) || in_dim(stop) || needs_unrolling(body, var),
        Stmt::Var { .. } => false,
    })
}

/// Whether any statement in `stmts` stores into an array.
fn writes_any(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Store { .. } => true,
        Stmt::Loop { body, .. } => writes_any(body),
        Stmt::Let { .. } | Stmt::Var { .. } | Stmt::Return(_) => false,
    })
}

/// Statements in `stmts`, loop bodies counted once.
fn count_statements(stmts: &[Stmt]) -> usize {
    stmts
        .iter()
        .map(|s| match s {
            Stmt::Loop { body, .. } => 1 + count_statements(body),
            _ => 1,
        })
        .sum()
}

/// Removes a loop body's `let`s from the environment (they live for one
/// iteration).
fn forget_lets(env: &mut HashMap<String, Val>, body: &[Stmt]) {
    for s in body {
        if let Stmt::Let { name, .. } = s {
            env.remove(&**name);
        }
    }
}

/// Names the statements read or store into.
fn names_used(stmts: &[Stmt], out: &mut BTreeSet<String>) {
    let mut read = |e: &Expr| {
        e.walk_unique(&mut |node| {
            if let Op::Var(n) = node.op() {
                out.insert(n.to_string());
            }
        })
    };
    let mut targets = Vec::new();
    for s in stmts {
        match s {
            Stmt::Let { value, .. } | Stmt::Return(value) => read(value),
            Stmt::Store { target, value, .. } => {
                read(value);
                targets.push(target.to_string());
            }
            Stmt::Loop { body, .. } => {
                let mut inner = BTreeSet::new();
                names_used(body, &mut inner);
                targets.extend(inner);
            }
            Stmt::Var { .. } => {}
        }
    }
    out.extend(targets);
}

/// Whether `var` occurs in any dim of `stmts`: shapes, slices (indices
/// too: StableHLO slices need constant offsets), nested loop bounds.
fn mentions_in_any_dim(stmts: &[Stmt], var: &str) -> bool {
    let in_dim = |d: &Dim| d.symbols().any(|s| s == var);
    let in_items = |items: &[SliceItem]| {
        items.iter().any(|it| match it {
            SliceItem::Full => false,
            SliceItem::Index(d) => in_dim(d),
            SliceItem::Range { start, stop, .. } => in_dim(start) || in_dim(stop),
        })
    };
    let in_expr = |e: &Expr| {
        let mut found = false;
        e.walk_unique(&mut |node| {
            found |= match node.op() {
                Op::Full { shape, .. }
                | Op::Broadcast(shape)
                | Op::Reshape(shape)
                | Op::Window(shape) => shape.iter().any(in_dim),
                Op::Slice(items) => in_items(items),
                _ => false,
            }
        });
        found
    };
    stmts.iter().any(|s| match s {
        Stmt::Let { value, .. } | Stmt::Return(value) => in_expr(value),
        Stmt::Store { region, value, .. } => {
            region.as_deref().is_some_and(in_items) || in_expr(value)
        }
        Stmt::Loop {
            start, stop, body, ..
        } => in_dim(start) || in_dim(stop) || mentions_in_any_dim(body, var),
        Stmt::Var { .. } => false,
    })
}

pub fn emit_hlo(p: &Program, sizes: &BTreeMap<String, i64>) -> Result<String, EmitError> {
    // A module has no early exit, and one that left its outputs as they
    // were would need their old values as inputs: not done yet.
    if let Some(g) = p.meta.guards.first() {
        return Err(EmitError::Unsupported(format!(
            "the C returns early when `{}`; a StableHLO module cannot (lift to numpy, jax or pytorch)",
            g.cond.replace(['{', '}'], "")
        )));
    }
    let mut bound = BTreeMap::new();
    for prm in &p.params {
        if prm.kind == ParamKind::Size {
            let v = sizes
                .get(&*prm.name)
                .ok_or_else(|| EmitError::MissingSize {
                    target: Target::Hlo,
                    name: prm.name.to_string(),
                })?;
            // Static shapes beyond 2^40 elements per axis are not real
            // programs, and bounding them keeps index arithmetic exact.
            if *v < 0 || *v > 1 << 40 {
                return Err(EmitError::BadSize {
                    name: prm.name.to_string(),
                    value: *v,
                });
            }
            bound.insert(prm.name.to_string(), *v);
        }
    }
    // Static shapes: the preconditions are decided here, once.
    if let Some(r) = Requirement::first_violated(&p.meta.requires, &|n| bound.get(n).copied()) {
        let values: Vec<String> = bound.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        return Err(EmitError::Precondition {
            relation: r.to_string(),
            values: values.join(", "),
        });
    }
    let mut l = Lowering {
        lines: Vec::new(),
        next: 0,
        sizes: bound,
        env: HashMap::new(),
        dynamic: HashMap::new(),
        memo: HashMap::new(),
    };
    let mut signature = Vec::new();
    for prm in &p.params {
        let t = prm.ty();
        if prm.kind == ParamKind::Size {
            continue;
        }
        let shape = l.shape(&t.shape)?;
        let v = Val {
            ssa: format!("%{}", prm.name),
            dtype: t.dtype,
            shape,
        };
        signature.push(format!("{}: {}", v.ssa, ty(&v)));
        l.env.insert(prm.name.to_string(), v);
    }
    let mut returned = None;
    let mut unrolled = 0usize;
    l.block(&p.body, &mut returned, &mut unrolled)?;
    let mut results: Vec<Val> = p
        .params
        .iter()
        .filter(|prm| prm.access().is_some_and(|a| a.is_written()))
        .filter_map(|prm| l.env.get(&*prm.name).cloned())
        .collect();
    results.extend(returned);
    let result_types: Vec<String> = results.iter().map(ty).collect();
    let result_names: Vec<&str> = results.iter().map(|v| v.ssa.as_str()).collect();
    let mut out = header_lines(p, Target::Hlo, "//");
    out.push_str(&format!(
        "// results: {}\n",
        p.params
            .iter()
            .filter(|prm| prm.access().is_some_and(|a| a.is_written()))
            .map(|prm| prm.name.to_string())
            .chain(returned_name(p))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    out.push_str(&format!(
        "func.func public @main({}) -> ({}) {{\n",
        signature.join(", "),
        result_types.join(", ")
    ));
    for line in &l.lines {
        out.push_str(line);
        out.push('\n');
    }
    if results.is_empty() {
        out.push_str("    return\n");
    } else {
        out.push_str(&format!(
            "    return {} : {}\n",
            result_names.join(", "),
            result_types.join(", ")
        ));
    }
    out.push_str("}\n");
    Ok(out)
}

fn returned_name(p: &Program) -> Option<String> {
    p.ret.map(|_| "<return>".to_string())
}

/// The StableHLO op of a unary TensIR op; `None` for `cosh` and `sinh`,
/// which StableHLO does not have (written out from exponentials).
fn hlo_unary(u: U) -> Option<&'static str> {
    Some(match u {
        U::Neg => "negate",
        U::Abs => "abs",
        U::Sqrt => "sqrt",
        U::Exp => "exponential",
        U::Log => "log",
        U::Tanh => "tanh",
        U::Not => "not",
        U::Round => "round_nearest_afz",
        U::Floor => "floor",
        U::Ceil => "ceil",
        U::Sin => "sine",
        U::Cos => "cosine",
        U::Cosh | U::Sinh => return None,
    })
}

/// The body operation and initial value of a reduction or scan `kind`
/// over element type `d`.
fn combiner(kind: ReduceKind, d: DType) -> (&'static str, Lit) {
    match kind {
        ReduceKind::Sum => ("add", zero_of(d)),
        ReduceKind::Prod => (
            "multiply",
            if d.is_float() {
                Lit::float(1.0, d)
            } else {
                Lit::int(1, d)
            },
        ),
        ReduceKind::Max => ("maximum", Lit::extreme(d, false)),
        ReduceKind::Min => ("minimum", Lit::extreme(d, true)),
    }
}
