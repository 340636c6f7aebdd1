//! NumPy: one readable function; arrays updated in place.

use super::python::{
    doc_params, guard_prologue, precondition_checks, py_value, render_python_block, PyFunction,
    PyStmt, PyTable,
};
use super::{solvers, symmetric, Target};
use crate::dtype::{DType, Lit};
use crate::expr::Expr;
use crate::ops::{BinaryOp as B, Op, ReduceKind as R, UnaryOp as U};
use crate::program::ParamKind;

pub struct NumpyTable;

const IMPORTS: &str = "import numpy as np\n";

const TRUNC_DIV: &str = r#"def _trunc_div(a, b):
    """C integer division: the quotient is truncated toward zero."""
    r = np.fmod(a, b)
    return (a - r) // b
"#;

const TRUNC_DIV_BY_POSITIVE: &str = r#"def _trunc_div_by_positive(a, c):
    """C division of signed integers by a constant c > 0: a negative
    dividend is moved up by c - 1 (which cannot overflow), then floored."""
    a = np.asarray(a)
    q = a >> (8 * a.dtype.itemsize - 1)
    q &= c - 1
    q += a
    q //= c
    return q
"#;

const SCATTER_ADD: &str = r#"def _scatter_add(h, idx, vals):
    """h with vals[k] added to bin idx[k] (row-major order). np.add.at is
    unbuffered and adds in index order, so repeated bins accumulate in the
    order the C loop adds them, each sum rounded to h's type as C does."""
    out = np.array(h, copy=True)
    np.add.at(out, np.ravel(idx), np.ravel(vals))
    return out
"#;

/// C's `round` (halves away from zero); `np.round` rounds halves to even,
/// and `floor(x + 0.5)` is off where `x + 0.5` itself rounds
/// (0.49999997f). `x - trunc(x)` is exact for every float.
const ROUND_AFZ: &str = r#"def _round_afz(x):
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)
"#;

/// A scan along `axis` in C's order (each element combined with its
/// predecessor). Along an axis with wide slices after it, a loop over the
/// slices, each combined with the one before in one whole-slice operation:
/// NumPy's `accumulate` walks such an axis element by element across the
/// slices (`np.cumsum(a, axis=0)` of a 4096 x 4096 f32 array took 348 ms,
/// the loop 36 ms on the VM). Narrow slices keep `accumulate`, whose cost
/// per element beats the loop's per slice.
const SCAN: &str = r#"def _scan(op, a, axis, dtype):
    a = np.asarray(a)
    if int(np.prod(a.shape[axis + 1:], dtype=np.int64)) < 128:
        return op.accumulate(a, axis=axis, dtype=dtype)
    out = np.array(a, dtype=dtype, copy=True)
    v = np.moveaxis(out, axis, 0)
    for i in range(1, v.shape[0]):
        op(v[i - 1], v[i], out=v[i])
    return out
"#;

const ARG_LAST: &str = r#"def _arg_last(x, axis, largest):
    # The position of the last greatest (least) element along axis: the
    # first one of the reversed axis, counted from the end.
    find = np.argmax if largest else np.argmin
    return x.shape[axis] - 1 - find(np.flip(x, axis), axis=axis)
"#;

impl PyTable for NumpyTable {
    fn target(&self) -> Target {
        Target::Numpy
    }

    fn imports(&self) -> &'static str {
        IMPORTS
    }

    fn helpers(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("_trunc_div", TRUNC_DIV),
            ("_trunc_div_by_positive", TRUNC_DIV_BY_POSITIVE),
            ("_trisolve", solvers::NUMPY_TRISOLVE),
            ("_lu_nopivot", solvers::NUMPY_LU_NOPIVOT),
            ("_scatter_add", SCATTER_ADD),
            ("_arg_last", ARG_LAST),
            ("_scan", SCAN),
            ("_round_afz", ROUND_AFZ),
            ("_syrk", symmetric::NUMPY_SYRK),
            ("_syrk0", symmetric::NUMPY_SYRK0),
            ("_syr2k", symmetric::NUMPY_SYR2K),
            ("_syr2k0", symmetric::NUMPY_SYR2K0),
            ("_mirror_lower", symmetric::NUMPY_MIRROR),
        ]
    }

    fn dtype(&self, d: DType) -> String {
        match d {
            DType::Bool => "np.bool_".to_string(),
            d => format!("np.{}", numpy_name(d)),
        }
    }

    fn lit(&self, l: Lit) -> String {
        match l.dtype() {
            // A Python float is an f64 and, under NumPy 2's promotion
            // rules, never changes the type of the f64 values it meets.
            DType::F64 => py_value(l),
            d => format!("{}({})", self.dtype(d), py_value(l)),
        }
    }

    fn size_value(&self, name: &str) -> String {
        format!("np.int64({name})")
    }

    fn rule(&self, op: &Op, _operand: DType) -> &'static str {
        match op {
            Op::Unary(U::Neg) => "(-{0})",
            Op::Unary(U::Abs) => "np.abs({0})",
            Op::Unary(U::Sqrt) => "np.sqrt({0})",
            Op::Unary(U::Exp) => "np.exp({0})",
            Op::Unary(U::Log) => "np.log({0})",
            Op::Unary(U::Tanh) => "np.tanh({0})",
            Op::Unary(U::Not) => "np.logical_not({0})",
            Op::Unary(U::Round) => "_round_afz({0})",
            Op::Unary(U::Floor) => "np.floor({0})",
            Op::Unary(U::Ceil) => "np.ceil({0})",
            Op::Unary(U::Sin) => "np.sin({0})",
            Op::Unary(U::Cos) => "np.cos({0})",
            Op::Unary(U::Cosh) => "np.cosh({0})",
            Op::Unary(U::Sinh) => "np.sinh({0})",
            Op::Binary(B::Add) => "({0} + {1})",
            Op::Binary(B::Sub) => "({0} - {1})",
            Op::Binary(B::Mul) => "({0} * {1})",
            Op::Binary(B::Div) => "({0} / {1})",
            Op::Binary(B::TruncDiv) => "_trunc_div({0}, {1})",
            // np.fmod keeps the dividend's sign, like C's `%`.
            Op::Binary(B::Rem) => "np.fmod({0}, {1})",
            Op::Binary(B::Pow) => "np.power({0}, {1})",
            Op::Binary(B::Maximum) => "np.maximum({0}, {1})",
            Op::Binary(B::Minimum) => "np.minimum({0}, {1})",
            Op::Binary(B::Lt) => "({0} < {1})",
            Op::Binary(B::Le) => "({0} <= {1})",
            Op::Binary(B::Gt) => "({0} > {1})",
            Op::Binary(B::Ge) => "({0} >= {1})",
            Op::Binary(B::Eq) => "({0} == {1})",
            Op::Binary(B::Ne) => "({0} != {1})",
            Op::Binary(B::And) => "np.logical_and({0}, {1})",
            Op::Binary(B::Or) => "np.logical_or({0}, {1})",
            Op::Where => "np.where({0}, {1}, {2})",
            Op::Reduce { kind: R::Sum, .. } => "np.sum({0}, axis={axes}, dtype={dtype})",
            Op::Reduce { kind: R::Prod, .. } => "np.prod({0}, axis={axes}, dtype={dtype})",
            Op::Reduce { kind: R::Max, .. } => "np.max({0}, axis={axes}, initial={init})",
            Op::Reduce { kind: R::Min, .. } => "np.min({0}, axis={axes}, initial={init})",
            Op::Scan { kind: R::Sum, .. } => "_scan(np.add, {0}, {axis}, {dtype})",
            Op::Scan { kind: R::Prod, .. } => "_scan(np.multiply, {0}, {axis}, {dtype})",
            Op::Scan { kind: R::Max, .. } => "_scan(np.maximum, {0}, {axis}, {dtype})",
            Op::Scan { kind: R::Min, .. } => "_scan(np.minimum, {0}, {axis}, {dtype})",
            Op::ArgExtreme { last: true, .. } => {
                "_arg_last({0}, {axis}, {largest}).astype({dtype})"
            }
            Op::ArgExtreme { largest: true, .. } => "np.argmax({0}, axis={axis}).astype({dtype})",
            Op::ArgExtreme { largest: false, .. } => "np.argmin({0}, axis={axis}).astype({dtype})",
            Op::Matmul => "np.matmul({0}, {1})",
            Op::Tensordot { .. } => "np.tensordot({0}, {1}, axes=({lhs_axes}, {rhs_axes}))",
            Op::Outer => "np.outer({0}, {1})",
            Op::Einsum(_) => "np.einsum({spec}, {args})",
            Op::Transpose(_) => "np.transpose({0}, {perm})",
            Op::Broadcast(_) => "np.broadcast_to({0}, {shape})",
            Op::Slice(_) => "{0}[{slice}]",
            Op::Flip(_) => "np.flip({0}, axis={axes})",
            Op::Reshape(_) => "np.reshape({0}, {shape})",
            // A read-only view: no element is copied before the product
            // that consumes it.
            Op::Window(_) => "np.lib.stride_tricks.sliding_window_view({0}, {shape})",
            Op::Concat { .. } => "np.concatenate(({args},), axis={axis})",
            Op::Triu(_) => "np.triu({0}, {k})",
            Op::Tril(_) => "np.tril({0}, {k})",
            Op::Diag => "np.diag({0})",
            Op::Full { .. } => "np.full({shape}, {value}, dtype={dtype})",
            Op::Cast(_) => "np.asarray({0}).astype({dtype})",
            Op::Cholesky => "np.linalg.cholesky({0})",
            Op::TriSolve { lower, unit } => solvers::trisolve_rule(*lower, *unit),
            Op::LuNoPivot => "_lu_nopivot({0})",
            Op::ScatterAdd => "_scatter_add({0}, {1}, {2})",
            Op::Syrk => "_syrk({args})",
            Op::Syr2k => "_syr2k({args})",
            Op::MirrorLower => "_mirror_lower({0})",
            Op::Var(_) | Op::Lit(_) => "{0}",
        }
    }

    fn copy_rule(&self) -> Option<&'static str> {
        Some("np.copy({0})")
    }

    fn out_rule(&self, op: &Op) -> Option<&'static str> {
        Some(match op {
            Op::Unary(U::Neg) => "np.negative({0}, out={out})",
            Op::Unary(U::Abs) => "np.absolute({0}, out={out})",
            Op::Unary(U::Sqrt) => "np.sqrt({0}, out={out})",
            Op::Unary(U::Exp) => "np.exp({0}, out={out})",
            Op::Unary(U::Log) => "np.log({0}, out={out})",
            Op::Unary(U::Tanh) => "np.tanh({0}, out={out})",
            Op::Unary(U::Floor) => "np.floor({0}, out={out})",
            Op::Unary(U::Ceil) => "np.ceil({0}, out={out})",
            Op::Unary(U::Sin) => "np.sin({0}, out={out})",
            Op::Unary(U::Cos) => "np.cos({0}, out={out})",
            Op::Unary(U::Cosh) => "np.cosh({0}, out={out})",
            Op::Unary(U::Sinh) => "np.sinh({0}, out={out})",
            Op::Binary(B::Add) => "np.add({0}, {1}, out={out})",
            Op::Binary(B::Sub) => "np.subtract({0}, {1}, out={out})",
            Op::Binary(B::Mul) => "np.multiply({0}, {1}, out={out})",
            Op::Binary(B::Div) => "np.divide({0}, {1}, out={out})",
            Op::Binary(B::Rem) => "np.fmod({0}, {1}, out={out})",
            Op::Binary(B::Pow) => "np.power({0}, {1}, out={out})",
            Op::Binary(B::Maximum) => "np.maximum({0}, {1}, out={out})",
            Op::Binary(B::Minimum) => "np.minimum({0}, {1}, out={out})",
            _ => return None,
        })
    }

    /// `np.matmul(..., out=)`: BLAS writes the product straight into the
    /// destination (no product temporary copied over it).
    fn product_out_rule(&self, e: &Expr) -> Option<&'static str> {
        match e.op() {
            Op::Matmul if !e.shape().is_empty() => Some("np.matmul({0}, {1}, out={out})"),
            Op::Einsum(spec) => MatmulForm::of(spec)
                .map(|form| form.template(true))
                .or_else(|| outer_into(spec)),
            _ => None,
        }
    }

    /// NumPy promotes a (`from`, `to`) operand pair to `to` exactly when
    /// `from` converts to `to` without loss, and then converts inside the
    /// ufunc loop. Scalars are typed (NumPy 2), so ranks do not matter.
    fn converts_operand(&self, from: DType, to: DType, _other_rank: usize) -> bool {
        use DType::*;
        match to {
            I16 => matches!(from, I8 | U8),
            U16 => matches!(from, U8),
            I32 => matches!(from, I8 | U8 | I16 | U16),
            U32 => matches!(from, U8 | U16),
            I64 => matches!(from, I8 | U8 | I16 | U16 | I32 | U32),
            F32 => matches!(from, I8 | U8 | I16 | U16),
            F64 => matches!(from, I8 | U8 | I16 | U16 | I32 | U32 | F32),
            _ => false,
        }
    }

    /// Signed division by a positive constant, the common case (averages,
    /// 8-bit blends), avoids the remainder pass of the general helper; an
    /// unsigned quotient, or one of a dividend proven non-negative
    /// ([`crate::narrow`]), is the floor quotient; over a power of two,
    /// a shift.
    fn special_rule(&self, e: &Expr) -> Option<&'static str> {
        if let Some(rule) = symmetric::zero_update_rule(e) {
            return Some(rule);
        }
        if let Op::Einsum(spec) = e.op() {
            if let Some(form) = MatmulForm::of(spec) {
                return Some(form.template(false));
            }
            // NumPy's einsum runs its own loops unless asked for a path:
            // a matrix product in einsum form is many times slower than
            // BLAS without `optimize=True`, which costs a few microseconds.
            return spec
                .is_blas_contraction()
                .then_some("np.einsum({spec}, {args}, optimize=True)");
        }
        if !matches!(e.op(), Op::Binary(B::TruncDiv)) {
            return None;
        }
        if crate::narrow::shift_amount(e).is_some() {
            return Some("({0} >> {shift})");
        }
        if crate::narrow::nonneg_by_positive(e) {
            return Some("({0} // {1})");
        }
        let positive_constant = matches!(e.args()[1].op(), Op::Lit(Lit::Int(v, _)) if *v > 0);
        match e.dtype() {
            d if !d.is_signed_int() => Some("({0} // {1})"),
            _ if positive_constant => Some("_trunc_div_by_positive({0}, {1})"),
            _ => None,
        }
    }

    /// 256 KiB per operand: level with 512 KiB and 2-3x faster than whole
    /// arrays on 2048 × 2048 chains (results/numpy-blocked-2026-11-29.md);
    /// a chain's few operands and temporaries stay in the L2/L3 caches.
    fn block_bytes(&self) -> Option<usize> {
        Some(1 << 18)
    }

    fn function(&self, f: &PyFunction) -> String {
        let mut out = format!(
            "def {}({}):\n    \"\"\"{}\n\n    Arrays are NumPy arrays; out and inout arrays are updated in place.\n    \"\"\"\n",
            f.names.get(&f.program.name),
            super::python::signature(f),
            doc_params(f)
        );
        out.push_str(&super::python::extent_defaults(f, "    "));
        for (n, p) in &f.params {
            match &p.kind {
                ParamKind::Size => out.push_str(&format!("    {n} = int({n})\n")),
                ParamKind::Scalar(d) => {
                    out.push_str(&format!("    {n} = {}({n})\n", self.dtype(*d)))
                }
                ParamKind::Array { .. } => {}
            }
        }
        let returned = |v: &str, d: DType| format!("np.{}({v})", numpy_name(d));
        out.push_str(&guard_prologue(f, "    ", &returned));
        out.push_str(&precondition_checks(f, "    "));
        // C wraps integers and divides by zero silently; so do we.
        out.push_str("    with np.errstate(all=\"ignore\"):\n");
        render_python_block(&f.body, "        ", &numpy_line, &mut out);
        out
    }
}

/// One NumPy statement (loops are rendered by the caller).
fn numpy_line(s: &PyStmt) -> String {
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

/// NumPy's name of a numeric element type.
pub fn numpy_name(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool_",
        DType::I8 => "int8",
        DType::I16 => "int16",
        DType::I32 => "int32",
        DType::I64 => "int64",
        DType::U8 => "uint8",
        DType::U16 => "uint16",
        DType::U32 => "uint32",
        DType::F32 => "float32",
        DType::F64 => "float64",
    }
}

/// An einsum that is the outer product of two vectors (`a,b->ab`, or
/// `b,a->ab` with the factors swapped) written into `{out}`: one pass over
/// the destination, where einsum's result is a fresh array copied after.
fn outer_into(spec: &crate::ops::EinsumSpec) -> Option<&'static str> {
    let ([a, b], [o0, o1]) = (spec.inputs.as_slice(), spec.output.as_slice()) else {
        return None;
    };
    let ([a], [b]) = (a.as_slice(), b.as_slice()) else {
        return None;
    };
    match (o0 != o1, [a, b] == [o0, o1], [a, b] == [o1, o0]) {
        (true, true, _) => Some("np.multiply.outer({0}, {1}, out={out})"),
        (true, _, true) => Some("np.multiply.outer({1}, {0}, out={out})"),
        _ => None,
    }
}

/// A two-operand einsum that is one matrix product of possibly transposed
/// operands (`bc,ca->ab` is `Aᵀ·Xᵀ`): `np.matmul` hands the transposed
/// views to BLAS as they are, where einsum's path ends with a transposed
/// result that a store then copies element by element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct MatmulForm {
    /// The second operand is the product's left factor.
    swap: bool,
    /// The left / right factor is its operand transposed.
    left_t: bool,
    right_t: bool,
}

impl MatmulForm {
    fn of(spec: &crate::ops::EinsumSpec) -> Option<MatmulForm> {
        let ([a, b], [o0, o1]) = (spec.inputs.as_slice(), spec.output.as_slice()) else {
            return None;
        };
        let ([a0, a1], [b0, b1]) = (a.as_slice(), b.as_slice()) else {
            return None;
        };
        let shared: Vec<char> = a.iter().filter(|l| b.contains(l)).copied().collect();
        let [c] = shared.as_slice() else {
            return None;
        };
        if a0 == a1 || b0 == b1 || o0 == o1 || spec.output.contains(c) {
            return None;
        }
        let p = if a0 == c { a1 } else { a0 };
        let q = if b0 == c { b1 } else { b0 };
        // out[p, q] = Σ a·b = (a as [p, c]) @ (b as [c, q]); out[q, p]
        // swaps the factors.
        let (swap, left, right) = match (o0 == p && o1 == q, o0 == q && o1 == p) {
            (true, _) => (false, (a0 != p), (b0 != c)),
            (_, true) => (true, (b0 != q), (a0 != c)),
            _ => return None,
        };
        Some(MatmulForm {
            swap,
            left_t: left,
            right_t: right,
        })
    }

    /// The `np.matmul` template, writing into `{out}` when `into`.
    fn template(self, into: bool) -> &'static str {
        match (self.swap, self.left_t, self.right_t, into) {
            (false, false, false, false) => "np.matmul({0}, {1})",
            (false, true, false, false) => "np.matmul(np.transpose({0}), {1})",
            (false, false, true, false) => "np.matmul({0}, np.transpose({1}))",
            (false, true, true, false) => "np.matmul(np.transpose({0}), np.transpose({1}))",
            (true, false, false, false) => "np.matmul({1}, {0})",
            (true, true, false, false) => "np.matmul(np.transpose({1}), {0})",
            (true, false, true, false) => "np.matmul({1}, np.transpose({0}))",
            (true, true, true, false) => "np.matmul(np.transpose({1}), np.transpose({0}))",
            (false, false, false, true) => "np.matmul({0}, {1}, out={out})",
            (false, true, false, true) => "np.matmul(np.transpose({0}), {1}, out={out})",
            (false, false, true, true) => "np.matmul({0}, np.transpose({1}), out={out})",
            (false, true, true, true) => {
                "np.matmul(np.transpose({0}), np.transpose({1}), out={out})"
            }
            (true, false, false, true) => "np.matmul({1}, {0}, out={out})",
            (true, true, false, true) => "np.matmul(np.transpose({1}), {0}, out={out})",
            (true, false, true, true) => "np.matmul({1}, np.transpose({0}), out={out})",
            (true, true, true, true) => {
                "np.matmul(np.transpose({1}), np.transpose({0}), out={out})"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::MatmulForm;
    use crate::ops::EinsumSpec;
    use std::collections::HashMap;

    /// Extent of each label: p = 2, c = 3, q = 4 (distinct, so a wrong
    /// transpose would not even have the right shape).
    fn extent(l: char) -> usize {
        match l {
            'p' => 2,
            'c' => 3,
            _ => 4,
        }
    }

    /// A matrix with labels `ls`, its elements numbered distinctly.
    fn matrix(ls: &[char], seed: i64) -> Vec<Vec<i64>> {
        (0..extent(ls[0]))
            .map(|i| {
                (0..extent(ls[1]))
                    .map(|j| seed * 100 + (i * 10 + j) as i64)
                    .collect()
            })
            .collect()
    }

    fn einsum(spec: &EinsumSpec, x: &[Vec<i64>], y: &[Vec<i64>]) -> Vec<Vec<i64>> {
        let (a, b, o) = (&spec.inputs[0], &spec.inputs[1], &spec.output);
        (0..extent(o[0]))
            .map(|i| {
                (0..extent(o[1]))
                    .map(|j| {
                        (0..extent('c'))
                            .map(|k| {
                                let at: HashMap<char, usize> =
                                    HashMap::from([(o[0], i), (o[1], j), ('c', k)]);
                                x[at[&a[0]]][at[&a[1]]] * y[at[&b[0]]][at[&b[1]]]
                            })
                            .sum()
                    })
                    .collect()
            })
            .collect()
    }

    fn transpose(m: &[Vec<i64>]) -> Vec<Vec<i64>> {
        (0..m[0].len())
            .map(|j| m.iter().map(|row| row[j]).collect())
            .collect()
    }

    fn matmul(l: &[Vec<i64>], r: &[Vec<i64>]) -> Vec<Vec<i64>> {
        l.iter()
            .map(|row| {
                (0..r[0].len())
                    .map(|j| row.iter().zip(r).map(|(a, rr)| a * rr[j]).sum())
                    .collect()
            })
            .collect()
    }

    /// Every operand and output order of a one-contraction product: the
    /// form's `np.matmul` of (transposed) operands equals the einsum.
    #[test]
    fn matmul_forms_equal_their_einsum() {
        let mut seen = 0;
        for a in [['p', 'c'], ['c', 'p']] {
            for b in [['c', 'q'], ['q', 'c']] {
                for o in [['p', 'q'], ['q', 'p']] {
                    let text = format!("{}{},{}{}->{}{}", a[0], a[1], b[0], b[1], o[0], o[1]);
                    let spec = EinsumSpec::parse(&text).expect("spec");
                    let form = MatmulForm::of(&spec).expect("a matrix product");
                    let (x, y) = (matrix(&a, 1), matrix(&b, 2));
                    let (l, r) = if form.swap { (&y, &x) } else { (&x, &y) };
                    let l = if form.left_t { transpose(l) } else { l.clone() };
                    let r = if form.right_t {
                        transpose(r)
                    } else {
                        r.clone()
                    };
                    assert_eq!(matmul(&l, &r), einsum(&spec, &x, &y), "{text}");
                    let factor = |slot: &str, t: bool| match t {
                        true => format!("np.transpose({slot})"),
                        false => slot.to_string(),
                    };
                    let (ls, rs) = if form.swap {
                        ("{1}", "{0}")
                    } else {
                        ("{0}", "{1}")
                    };
                    let call = format!(
                        "np.matmul({}, {}",
                        factor(ls, form.left_t),
                        factor(rs, form.right_t)
                    );
                    assert_eq!(form.template(false), format!("{call})"), "{text}");
                    assert_eq!(
                        form.template(true),
                        format!("{call}, out={{out}})"),
                        "{text}"
                    );
                    seen += 1;
                }
            }
        }
        assert_eq!(seen, 8);
        for other in [
            "ab,ab->ab",
            "ab,bc->abc",
            "ab,cd->ad",
            "abc,cd->abd",
            "ab,ba->",
        ] {
            let spec = EinsumSpec::parse(other).expect("spec");
            assert_eq!(MatmulForm::of(&spec), None, "{other}");
        }
    }
}
