//! PyTorch: torch operations on the device of the input tensors (CPU or
//! CUDA), arrays updated in place, plus a lazily built `torch.compile`
//! entry.

use super::python::{
    doc_params, guard_prologue, precondition_checks, py_value, render_python_block, PyFunction,
    PyStmt, PyTable,
};
use super::{solvers, symmetric, Target};
use crate::dtype::{DType, Lit};
use crate::ops::{BinaryOp as B, Op, ReduceKind as R, UnaryOp as U};
use crate::program::ParamKind;

pub struct TorchTable;

const IMPORTS: &str = "import torch\n";

const PROD: &str = r#"def _prod(x, dims, dtype):
    """Product over several axes (torch.prod takes one axis at a time)."""
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, dim=d, dtype=dtype)
    return x
"#;

const EXTREME: &str = r#"def _extreme(x, dims, is_max, init):
    """torch.amax / torch.amin, which refuse to reduce no elements: there
    the result is init, the identity (-inf for max), as in NumPy's
    `initial=` and the C's loop over an empty range."""
    if x.numel() == 0:
        shape = [s for d, s in enumerate(x.shape) if d not in dims]
        return torch.full(shape, init, dtype=x.dtype, device=x.device)
    return torch.amax(x, dim=dims) if is_max else torch.amin(x, dim=dims)
"#;

/// C's `round` (halves away from zero); `torch.round` rounds halves to
/// even. `x - trunc(x)` is exact for every float.
const ROUND_AFZ: &str = r#"def _round_afz(x):
    t = torch.trunc(x)
    return torch.where(torch.abs(x - t) >= 0.5, t + torch.sign(x), t)
"#;

const ARG_LAST: &str = r#"def _arg_last(x, axis, largest):
    # The position of the last greatest (least) element along axis: the
    # first one of the reversed axis, counted from the end.
    find = torch.argmax if largest else torch.argmin
    return x.shape[axis] - 1 - find(torch.flip(x, (axis,)), dim=axis)
"#;

const SCATTER_ADD: &str = r#"def _scatter_add(h, idx, vals):
    """h with vals[k] added to bin idx[k] (index_add: repeated bins
    accumulate; sequentially on the CPU, by atomics on CUDA)."""
    return h.index_add(0, idx.reshape(-1).to(torch.int64), vals.reshape(-1))
"#;

const INT_MATMUL: &str = r#"def _int_matmul(a, b):
    """torch.matmul of integer tensors. CUDA has no integer matrix product
    (its dot, addmv and addmm are floating-point only): there it is
    _blocked_int_matmul."""
    if a.device.type == "cpu" or a.dim() > 2 or b.dim() > 2:
        return torch.matmul(a, b)
    return _blocked_int_matmul(a, b)
"#;

const BLOCKED_INT_MATMUL: &str = r#"def _blocked_int_matmul(a, b):
    """matmul of 1-D/2-D integer tensors by elementwise products summed in
    int64 over blocks of the contracted axis (at most 2^24 products at a
    time), converted back, which wraps like the C's arithmetic."""
    a2 = a.reshape(1, -1) if a.dim() == 1 else a
    b2 = b.reshape(-1, 1) if b.dim() == 1 else b
    m, k = a2.shape
    n = b2.shape[1]
    acc = torch.zeros((m, n), dtype=torch.int64, device=a.device)
    step = max(1, (1 << 24) // max(1, m * n))
    for k0 in range(0, k, step):
        acc += (a2[:, k0:k0 + step, None].to(torch.int64)
                * b2[None, k0:k0 + step, :].to(torch.int64)).sum(dim=1)
    acc = acc.to(torch.promote_types(a.dtype, b.dtype))
    shape = [s for s, keep in ((m, a.dim() == 2), (n, b.dim() == 2)) if keep]
    return acc.reshape(shape)
"#;

const INT_TENSORDOT: &str = r#"def _int_tensordot(a, b, dims):
    """torch.tensordot of integer tensors, as one _int_matmul of the
    tensors with their contracted axes gathered and flattened."""
    ca, cb = [d % a.dim() for d in dims[0]], [d % b.dim() for d in dims[1]]
    fa = [d for d in range(a.dim()) if d not in ca]
    fb = [d for d in range(b.dim()) if d not in cb]
    k = 1
    for d in ca:
        k *= a.shape[d]
    a2 = a.permute(fa + ca).reshape(-1, k)
    b2 = b.permute(cb + fb).reshape(k, -1)
    shape = [a.shape[d] for d in fa] + [b.shape[d] for d in fb]
    return _int_matmul(a2, b2).reshape(shape)
"#;

const WINDOW: &str = r#"def _window(x, sizes):
    """Sliding windows of x (NumPy's sliding_window_view): unfold views
    each axis' windows and appends their offsets as a trailing axis, so
    unfolding the axes in order gives positions first, then offsets."""
    for d, t in enumerate(sizes):
        x = x.unfold(d, t, 1)
    return x
"#;

impl PyTable for TorchTable {
    fn target(&self) -> Target {
        Target::Pytorch
    }

    fn imports(&self) -> &'static str {
        IMPORTS
    }

    fn helpers(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("_prod", PROD),
            ("_extreme", EXTREME),
            ("_trisolve", solvers::TORCH_TRISOLVE),
            ("_lu_nopivot", solvers::TORCH_LU_NOPIVOT),
            ("_scatter_add", SCATTER_ADD),
            ("_arg_last", ARG_LAST),
            ("_round_afz", ROUND_AFZ),
            ("_int_tensordot", INT_TENSORDOT),
            ("_int_matmul", INT_MATMUL),
            ("_blocked_int_matmul", BLOCKED_INT_MATMUL),
            ("_window", WINDOW),
            ("_syrk", symmetric::TORCH_SYRK),
            ("_syr2k", symmetric::TORCH_SYR2K),
            ("_mirror_lower", symmetric::TORCH_MIRROR),
        ]
    }

    fn dtype(&self, d: DType) -> String {
        let name = match d {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::F32 => "float32",
            DType::F64 => "float64",
        };
        format!("torch.{name}")
    }

    fn lit(&self, l: Lit) -> String {
        format!(
            "torch.tensor({}, dtype={}, device=_dev)",
            py_value(l),
            self.dtype(l.dtype())
        )
    }

    fn size_value(&self, name: &str) -> String {
        format!("torch.tensor({name}, dtype=torch.int64, device=_dev)")
    }

    fn rule(&self, op: &Op, operand: DType) -> &'static str {
        match op {
            // CUDA has no integer matrix product.
            Op::Matmul if operand.is_int() => "_int_matmul({0}, {1})",
            Op::Tensordot { .. } if operand.is_int() => {
                "_int_tensordot({0}, {1}, ({lhs_axes}, {rhs_axes}))"
            }
            Op::Unary(U::Neg) => "(-{0})",
            Op::Unary(U::Abs) => "torch.abs({0})",
            Op::Unary(U::Sqrt) => "torch.sqrt({0})",
            Op::Unary(U::Exp) => "torch.exp({0})",
            Op::Unary(U::Log) => "torch.log({0})",
            Op::Unary(U::Tanh) => "torch.tanh({0})",
            Op::Unary(U::Not) => "torch.logical_not({0})",
            Op::Unary(U::Round) => "_round_afz({0})",
            Op::Unary(U::Floor) => "torch.floor({0})",
            Op::Unary(U::Ceil) => "torch.ceil({0})",
            Op::Unary(U::Sin) => "torch.sin({0})",
            Op::Unary(U::Cos) => "torch.cos({0})",
            Op::Unary(U::Cosh) => "torch.cosh({0})",
            Op::Unary(U::Sinh) => "torch.sinh({0})",
            Op::Binary(B::Add) => "({0} + {1})",
            Op::Binary(B::Sub) => "({0} - {1})",
            Op::Binary(B::Mul) => "({0} * {1})",
            Op::Binary(B::Div) => "({0} / {1})",
            Op::Binary(B::TruncDiv) => "torch.div({0}, {1}, rounding_mode=\"trunc\")",
            Op::Binary(B::Rem) => "torch.fmod({0}, {1})",
            Op::Binary(B::Pow) => "torch.pow({0}, {1})",
            Op::Binary(B::Maximum) => "torch.maximum({0}, {1})",
            Op::Binary(B::Minimum) => "torch.minimum({0}, {1})",
            Op::Binary(B::Lt) => "({0} < {1})",
            Op::Binary(B::Le) => "({0} <= {1})",
            Op::Binary(B::Gt) => "({0} > {1})",
            Op::Binary(B::Ge) => "({0} >= {1})",
            Op::Binary(B::Eq) => "({0} == {1})",
            Op::Binary(B::Ne) => "({0} != {1})",
            Op::Binary(B::And) => "torch.logical_and({0}, {1})",
            Op::Binary(B::Or) => "torch.logical_or({0}, {1})",
            Op::Where => "torch.where({0}, {1}, {2})",
            Op::Reduce { kind: R::Sum, .. } => "torch.sum({0}, dim={axes}, dtype={dtype})",
            Op::Reduce { kind: R::Prod, .. } => "_prod({0}, {axes}, {dtype})",
            Op::Reduce { kind: R::Max, .. } => "_extreme({0}, {axes}, True, {init})",
            Op::Reduce { kind: R::Min, .. } => "_extreme({0}, {axes}, False, {init})",
            // Integer scans would be promoted to int64 without `dtype`.
            Op::Scan { kind: R::Sum, .. } => "torch.cumsum({0}, dim={axis}, dtype={dtype})",
            Op::Scan { kind: R::Prod, .. } => "torch.cumprod({0}, dim={axis}, dtype={dtype})",
            Op::Scan { kind: R::Max, .. } => "torch.cummax({0}, dim={axis}).values",
            Op::Scan { kind: R::Min, .. } => "torch.cummin({0}, dim={axis}).values",
            Op::ArgExtreme { last: true, .. } => "_arg_last({0}, {axis}, {largest}).to({dtype})",
            Op::ArgExtreme { largest: true, .. } => "torch.argmax({0}, dim={axis}).to({dtype})",
            Op::ArgExtreme { largest: false, .. } => "torch.argmin({0}, dim={axis}).to({dtype})",
            Op::Matmul => "torch.matmul({0}, {1})",
            Op::Tensordot { .. } => "torch.tensordot({0}, {1}, dims=({lhs_axes}, {rhs_axes}))",
            Op::Outer => "torch.outer({0}, {1})",
            // torch.einsum sums integers in int64; converting back keeps
            // the wrap-around of the element type.
            Op::Einsum(_) => "torch.einsum({spec}, {args}).to({dtype})",
            Op::Transpose(_) => "torch.permute({0}, {perm})",
            Op::Broadcast(_) => "torch.broadcast_to({0}, {shape})",
            Op::Slice(_) => "{0}[{slice}]",
            Op::Flip(_) => "torch.flip({0}, dims={axes})",
            Op::Reshape(_) => "torch.reshape({0}, {shape})",
            Op::Window(_) => "_window({0}, {shape})",
            Op::Concat { .. } => "torch.cat(({args},), dim={axis})",
            Op::Triu(_) => "torch.triu({0}, diagonal={k})",
            Op::Tril(_) => "torch.tril({0}, diagonal={k})",
            Op::Diag => "torch.diag({0})",
            Op::ScatterAdd => "_scatter_add({0}, {1}, {2})",
            Op::Syrk => "_syrk({args})",
            Op::Syr2k => "_syr2k({args})",
            Op::MirrorLower => "_mirror_lower({0})",
            Op::Full { .. } => "torch.full({shape}, {value}, dtype={dtype}, device=_dev)",
            Op::Cast(_) => "{0}.to({dtype})",
            Op::Cholesky => "torch.linalg.cholesky({0})",
            Op::TriSolve { lower, unit } => solvers::trisolve_rule(*lower, *unit),
            Op::LuNoPivot => "_lu_nopivot({0})",
            Op::Var(_) | Op::Lit(_) => "{0}",
        }
    }

    /// PyTorch has few kernels for uint16/uint32; compute in int64.
    fn compute_dtype(&self, d: DType) -> Option<DType> {
        matches!(d, DType::U16 | DType::U32).then_some(DType::I64)
    }

    /// A non-negative dividend over 2^k (narrow lowering) is a shift.
    fn special_rule(&self, e: &crate::expr::Expr) -> Option<&'static str> {
        crate::narrow::shift_amount(e).map(|_| "({0} >> {shift})")
    }

    fn copy_rule(&self) -> Option<&'static str> {
        Some("{0}.clone()")
    }

    /// Torch promotes a tensor pair to the wider type when both have
    /// dimensions; a 0-dim tensor of the same kind defers to the other
    /// operand's type, so the other operand must have dimensions.
    /// uint16/uint32 have too few kernels to be mixed in.
    fn converts_operand(&self, from: DType, to: DType, other_rank: usize) -> bool {
        use DType::*;
        other_rank > 0
            && match to {
                I16 => matches!(from, I8 | U8),
                I32 => matches!(from, I8 | U8 | I16),
                I64 => matches!(from, I8 | U8 | I16 | I32),
                F32 => matches!(from, I8 | U8 | I16),
                F64 => matches!(from, I8 | U8 | I16 | I32 | F32),
                _ => false,
            }
    }

    fn out_rule(&self, op: &Op) -> Option<&'static str> {
        Some(match op {
            Op::Unary(U::Neg) => "torch.neg({0}, out={out})",
            Op::Unary(U::Abs) => "torch.abs({0}, out={out})",
            Op::Unary(U::Sqrt) => "torch.sqrt({0}, out={out})",
            Op::Unary(U::Exp) => "torch.exp({0}, out={out})",
            Op::Unary(U::Log) => "torch.log({0}, out={out})",
            Op::Unary(U::Tanh) => "torch.tanh({0}, out={out})",
            Op::Unary(U::Floor) => "torch.floor({0}, out={out})",
            Op::Unary(U::Ceil) => "torch.ceil({0}, out={out})",
            Op::Unary(U::Sin) => "torch.sin({0}, out={out})",
            Op::Unary(U::Cos) => "torch.cos({0}, out={out})",
            Op::Unary(U::Cosh) => "torch.cosh({0}, out={out})",
            Op::Unary(U::Sinh) => "torch.sinh({0}, out={out})",
            Op::Binary(B::Add) => "torch.add({0}, {1}, out={out})",
            Op::Binary(B::Sub) => "torch.sub({0}, {1}, out={out})",
            Op::Binary(B::Mul) => "torch.mul({0}, {1}, out={out})",
            Op::Binary(B::Div) => "torch.div({0}, {1}, out={out})",
            Op::Binary(B::TruncDiv) => "torch.div({0}, {1}, rounding_mode=\"trunc\", out={out})",
            Op::Binary(B::Rem) => "torch.fmod({0}, {1}, out={out})",
            Op::Binary(B::Pow) => "torch.pow({0}, {1}, out={out})",
            Op::Binary(B::Maximum) => "torch.maximum({0}, {1}, out={out})",
            Op::Binary(B::Minimum) => "torch.minimum({0}, {1}, out={out})",
            _ => return None,
        })
    }

    fn function(&self, f: &PyFunction) -> String {
        let fname = f.names.get(&f.program.name);
        let mut out = format!(
            "@torch.no_grad()\ndef {fname}({}):\n    \"\"\"{}\n\n    Arrays are torch tensors on one device (CPU or CUDA); out and inout\n    arrays are updated in place.\n    \"\"\"\n",
            super::python::signature(f),
            doc_params(f)
        );
        let first_array = f
            .params
            .iter()
            .find(|(_, p)| matches!(p.kind, ParamKind::Array { .. }));
        match first_array {
            Some((n, _)) => out.push_str(&format!("    _dev = {n}.device\n")),
            None => out.push_str("    _dev = torch.device(\"cpu\")\n"),
        }
        out.push_str(&super::python::extent_defaults(f, "    "));
        for (n, p) in &f.params {
            match &p.kind {
                ParamKind::Size => out.push_str(&format!("    {n} = int({n})\n")),
                ParamKind::Scalar(d) => out.push_str(&format!(
                    "    {n} = torch.as_tensor({n}, dtype={}, device=_dev)\n",
                    self.dtype(*d)
                )),
                ParamKind::Array { .. } => {}
            }
        }
        let returned =
            |v: &str, d: DType| format!("torch.tensor({v}, dtype={}, device=_dev)", self.dtype(d));
        out.push_str(&guard_prologue(f, "    ", &returned));
        out.push_str(&precondition_checks(f, "    "));
        if !f.body.is_empty() {
            render_python_block(&f.body, "    ", &torch_line, &mut out);
        }
        out.push_str(&format!(
            "\n\n_compiled = []\n\n\ndef {fname}_compiled({sig}):\n    \"\"\"{fname} through torch.compile (compiled on the first call).\"\"\"\n    if not _compiled:\n        _compiled.append(torch.compile({fname}))\n    return _compiled[0]({args})\n",
            sig = super::python::signature(f),
            args = f
                .params
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        out
    }
}

/// One PyTorch statement (loops are rendered by the caller).
fn torch_line(s: &PyStmt) -> String {
    match s {
        PyStmt::Let { name, value } => format!("{name} = {value}"),
        PyStmt::Store {
            target,
            region,
            value,
            ..
        } => format!("{target}[{}] = {value}", region.as_deref().unwrap_or("...")),
        PyStmt::Return(v) => format!("return {v}"),
        PyStmt::Call(c) => c.clone(),
        PyStmt::Loop(_) => String::new(),
    }
}
