//! JAX: a `jax.jit` entry that returns new arrays, and a wrapper that
//! writes them back into the caller's NumPy arrays.

use super::numpy::numpy_name;
use super::python::{
    doc_params, guard_prologue, precondition_checks, py_tuple, py_value, PyFunction, PyLoop,
    PyStmt, PyTable,
};
use super::{solvers, symmetric, Target};
use crate::dtype::{DType, Lit};
use crate::expr::Expr;
use crate::ops::{BinaryOp as B, Op, ReduceKind as R, UnaryOp as U};
use crate::program::ParamKind;

pub struct JaxTable;

const IMPORTS: &str = r#"import functools

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)
"#;

const TRUNC_DIV: &str = r#"def _trunc_div(a, b):
    """C integer division: lax.div truncates toward zero."""
    a, b = jnp.broadcast_arrays(a, b)
    return jax.lax.div(a, b)
"#;

const C_REM: &str = r#"def _c_rem(a, b):
    """C remainder: lax.rem keeps the dividend's sign."""
    a, b = jnp.broadcast_arrays(a, b)
    return jax.lax.rem(a, b)
"#;

const DIV: &str = r#"def _div(a, b):
    """a / b correctly rounded: XLA turns a division by a broadcast divisor
    into a product with its reciprocal, which is not (x / 1.2345f differs
    from C's in about one element of nine); behind a barrier the divisor
    is an array and the division stays one."""
    shape = jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b))
    if jnp.shape(b) != shape:
        b = jax.lax.optimization_barrier(jnp.broadcast_to(b, shape))
    return a / b
"#;

const ARG_LAST: &str = r#"def _arg_last(x, axis, largest):
    # The position of the last greatest (least) element along axis: the
    # first one of the reversed axis, counted from the end.
    find = jnp.argmax if largest else jnp.argmin
    return x.shape[axis] - 1 - find(jnp.flip(x, axis), axis=axis)
"#;

const SCATTER_ADD: &str = r#"def _scatter_add(h, idx, vals):
    """h with vals[k] added to bin idx[k] (an XLA scatter with an add:
    repeated bins accumulate, in an order XLA chooses)."""
    return h.at[jnp.ravel(idx)].add(jnp.ravel(vals))
"#;

const WINDOW: &str = r#"def _window(x, sizes):
    """Sliding windows of x (NumPy's sliding_window_view) as one gather:
    element [i..., k...] is x[i + k], the index grids broadcast against
    each other (positions on the leading axes, offsets on the trailing)."""
    rank = len(sizes)
    grids = []
    for d, t in enumerate(sizes):
        at = [1] * (2 * rank)
        at[d] = x.shape[d] - t + 1
        by = [1] * (2 * rank)
        by[rank + d] = t
        grids.append(jnp.arange(at[d]).reshape(at) + jnp.arange(t).reshape(by))
    return x[tuple(grids)]
"#;

impl PyTable for JaxTable {
    fn target(&self) -> Target {
        Target::Jax
    }

    fn imports(&self) -> &'static str {
        IMPORTS
    }

    fn helpers(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("_trunc_div", TRUNC_DIV),
            ("_c_rem", C_REM),
            ("_div", DIV),
            ("_trisolve", solvers::JAX_TRISOLVE),
            ("_lu_nopivot", solvers::JAX_LU_NOPIVOT),
            ("_scatter_add", SCATTER_ADD),
            ("_arg_last", ARG_LAST),
            ("_window", WINDOW),
            ("_syrk", symmetric::JAX_SYRK),
            ("_syrk0", symmetric::JAX_SYRK0),
            ("_lower_gram", symmetric::JAX_LOWER_GRAM),
            ("_syr2k", symmetric::JAX_SYR2K),
            ("_mirror_lower", symmetric::JAX_MIRROR),
            ("_pad_store", PAD_STORE),
            ("_sum_lead", SUM_LEAD),
        ]
    }

    fn dtype(&self, d: DType) -> String {
        format!("jnp.{}", numpy_name(d))
    }

    fn lit(&self, l: Lit) -> String {
        format!(
            "jnp.asarray({}, dtype={})",
            py_value(l),
            self.dtype(l.dtype())
        )
    }

    fn size_value(&self, name: &str) -> String {
        format!("jnp.asarray({name}, dtype=jnp.int64)")
    }

    fn rule(&self, op: &Op, _operand: DType) -> &'static str {
        match op {
            Op::Unary(U::Neg) => "(-{0})",
            Op::Unary(U::Abs) => "jnp.abs({0})",
            Op::Unary(U::Sqrt) => "jnp.sqrt({0})",
            Op::Unary(U::Exp) => "jnp.exp({0})",
            Op::Unary(U::Log) => "jnp.log({0})",
            Op::Unary(U::Tanh) => "jnp.tanh({0})",
            Op::Unary(U::Not) => "jnp.logical_not({0})",
            // jnp.round rounds halves to even; C's round goes away from zero.
            Op::Unary(U::Round) => "jax.lax.round({0}, jax.lax.RoundingMethod.AWAY_FROM_ZERO)",
            Op::Unary(U::Floor) => "jnp.floor({0})",
            Op::Unary(U::Ceil) => "jnp.ceil({0})",
            Op::Unary(U::Sin) => "jnp.sin({0})",
            Op::Unary(U::Cos) => "jnp.cos({0})",
            Op::Unary(U::Cosh) => "jnp.cosh({0})",
            Op::Unary(U::Sinh) => "jnp.sinh({0})",
            Op::Binary(B::Add) => "({0} + {1})",
            Op::Binary(B::Sub) => "({0} - {1})",
            Op::Binary(B::Mul) => "({0} * {1})",
            Op::Binary(B::Div) => "_div({0}, {1})",
            Op::Binary(B::TruncDiv) => "_trunc_div({0}, {1})",
            Op::Binary(B::Rem) => "_c_rem({0}, {1})",
            Op::Binary(B::Pow) => "jnp.power({0}, {1})",
            Op::Binary(B::Maximum) => "jnp.maximum({0}, {1})",
            Op::Binary(B::Minimum) => "jnp.minimum({0}, {1})",
            Op::Binary(B::Lt) => "({0} < {1})",
            Op::Binary(B::Le) => "({0} <= {1})",
            Op::Binary(B::Gt) => "({0} > {1})",
            Op::Binary(B::Ge) => "({0} >= {1})",
            Op::Binary(B::Eq) => "({0} == {1})",
            Op::Binary(B::Ne) => "({0} != {1})",
            Op::Binary(B::And) => "jnp.logical_and({0}, {1})",
            Op::Binary(B::Or) => "jnp.logical_or({0}, {1})",
            Op::Where => "jnp.where({0}, {1}, {2})",
            Op::Reduce { kind: R::Sum, .. } => "jnp.sum({0}, axis={axes}, dtype={dtype})",
            Op::Reduce { kind: R::Prod, .. } => "jnp.prod({0}, axis={axes}, dtype={dtype})",
            Op::Reduce { kind: R::Max, .. } => "jnp.max({0}, axis={axes}, initial={init})",
            Op::Reduce { kind: R::Min, .. } => "jnp.min({0}, axis={axes}, initial={init})",
            Op::Scan { kind: R::Sum, .. } => "jnp.cumsum({0}, axis={axis}, dtype={dtype})",
            Op::Scan { kind: R::Prod, .. } => "jnp.cumprod({0}, axis={axis}, dtype={dtype})",
            Op::Scan { kind: R::Max, .. } => "jax.lax.cummax({0}, axis={axis})",
            Op::Scan { kind: R::Min, .. } => "jax.lax.cummin({0}, axis={axis})",
            Op::ArgExtreme { last: true, .. } => {
                "_arg_last({0}, {axis}, {largest}).astype({dtype})"
            }
            Op::ArgExtreme { largest: true, .. } => "jnp.argmax({0}, axis={axis}).astype({dtype})",
            Op::ArgExtreme { largest: false, .. } => "jnp.argmin({0}, axis={axis}).astype({dtype})",
            Op::Matmul => "jnp.matmul({0}, {1})",
            Op::Tensordot { .. } => "jnp.tensordot({0}, {1}, axes=({lhs_axes}, {rhs_axes}))",
            Op::Outer => "jnp.outer({0}, {1})",
            Op::Einsum(_) => "jnp.einsum({spec}, {args})",
            Op::Transpose(_) => "jnp.transpose({0}, {perm})",
            Op::Broadcast(_) => "jnp.broadcast_to({0}, {shape})",
            Op::Slice(_) => "{0}[{slice}]",
            Op::Flip(_) => "jnp.flip({0}, axis={axes})",
            Op::Reshape(_) => "jnp.reshape({0}, {shape})",
            Op::Window(_) => "_window({0}, {shape})",
            Op::Concat { .. } => "jnp.concatenate(({args},), axis={axis})",
            Op::Triu(_) => "jnp.triu({0}, {k})",
            Op::Tril(_) => "jnp.tril({0}, {k})",
            Op::Diag => "jnp.diag({0})",
            Op::ScatterAdd => "_scatter_add({0}, {1}, {2})",
            Op::Syrk => "_syrk({args})",
            Op::Syr2k => "_syr2k({args})",
            Op::MirrorLower => "_mirror_lower({0})",
            Op::Full { .. } => "jnp.full({shape}, {value}, dtype={dtype})",
            Op::Cast(_) => "jnp.asarray({0}).astype({dtype})",
            // Only the lower triangle is read, as TensIR's cholesky does.
            Op::Cholesky => "jnp.tril(jax.lax.linalg.cholesky({0}, symmetrize_input=False))",
            Op::TriSolve { lower, unit } => solvers::trisolve_rule(*lower, *unit),
            Op::LuNoPivot => "_lu_nopivot({0})",
            Op::Var(_) | Op::Lit(_) => "{0}",
        }
    }

    /// XLA's simplifier assumes signed squares are non-negative (it treats
    /// signed overflow as impossible) and folds `abs(x * x)` to `x * x`;
    /// TensIR integers wrap, so hide the second factor behind a barrier.
    fn special_rule(&self, e: &Expr) -> Option<&'static str> {
        if let Some(rule) = symmetric::zero_update_rule(e).filter(|r| r.starts_with("_syrk0")) {
            return Some(rule);
        }
        if sums_leading_axis_of_an_array(e) {
            return Some("_sum_lead({0})");
        }
        if crate::narrow::shift_amount(e).is_some() {
            // A non-negative dividend over 2^k (narrow lowering).
            return Some("({0} >> {shift})");
        }
        let square = matches!(e.op(), Op::Binary(B::Mul))
            && e.dtype().is_signed_int()
            && e.args()[0] == e.args()[1];
        square.then_some("({0} * jax.lax.optimization_barrier({1}))")
    }

    fn copy_rule(&self) -> Option<&'static str> {
        None
    }

    fn function(&self, f: &PyFunction) -> String {
        let fname = f.names.get(&f.program.name);
        let names: Vec<&str> = f.params.iter().map(|(n, _)| n.as_str()).collect();
        let statics: Vec<String> = f
            .params
            .iter()
            .filter(|(_, p)| p.kind == ParamKind::Size)
            .map(|(n, _)| format!("\"{n}\""))
            .collect();
        let written: Vec<&str> = f
            .params
            .iter()
            .filter(|(_, p)| p.access().is_some_and(|a| a.is_written()))
            .map(|(n, _)| n.as_str())
            .collect();
        // Tracing a loop whose variable sets shapes unrolls every iteration
        // into one XLA program (minutes and gigabytes at PolyBench sizes);
        // such a function runs eagerly instead, each operation compiled once
        // per shape and cached by JAX.
        let decorator = if f.body.iter().any(has_shape_varying_loop) {
            "# Not jitted as a whole: a loop variable sets shapes below, and tracing would\n# unroll every iteration. JAX runs each operation eagerly (compiled and cached per shape).\n".to_string()
        } else {
            format!(
                "@functools.partial(jax.jit, static_argnames=({}))\n",
                if statics.len() == 1 {
                    format!("{},", statics[0])
                } else {
                    statics.join(", ")
                }
            )
        };
        // The C's guards are Python `if`s on concrete values: the wrapper
        // below checks them, this traced function does not.
        let guarded = match f.program.meta.guards.is_empty() {
            true => "",
            false => "\n    It computes the C past its leading guards, which only the wrapper\n    below checks.",
        };
        let mut out = format!(
            "{decorator}def {fname}_jit({}):\n    \"\"\"{}\n\n    Pure: returns (new values of the out/inout arrays, returned scalar).{guarded}\n    \"\"\"\n",
            names.join(", "),
            doc_params(f)
        );
        for (n, p) in &f.params {
            match &p.kind {
                ParamKind::Size => {}
                ParamKind::Scalar(d) | ParamKind::Array { dtype: d, .. } => {
                    out.push_str(&format!(
                        "    {n} = jnp.asarray({n}, dtype={})\n",
                        self.dtype(*d)
                    ));
                }
            }
        }
        let mut returned = "None".to_string();
        let mut loops = 0usize;
        jax_block(&f.body, "    ", false, &mut loops, &mut returned, &mut out);
        let tuple = match written.len() {
            1 => format!("({},)", written[0]),
            _ => format!("({})", written.join(", ")),
        };
        out.push_str(&format!("    return {tuple}, {returned}\n\n\n"));
        out.push_str(&format!(
            "def {fname}({}):\n    \"\"\"Runs {fname}_jit and writes the results into the caller's NumPy arrays.\"\"\"\n",
            super::python::signature(f)
        ));
        out.push_str(&super::python::extent_defaults(f, "    "));
        // Checked on the concrete values, before anything is traced.
        let returned = |v: &str, d: DType| format!("np.{}({v})", numpy_name(d));
        out.push_str(&guard_prologue(f, "    ", &returned));
        out.push_str(&precondition_checks(f, "    "));
        out.push_str(&format!(
            "    _outputs, _result = {fname}_jit({})\n",
            names.join(", ")
        ));
        for (i, n) in written.iter().enumerate() {
            out.push_str(&format!("    {n}[...] = np.asarray(_outputs[{i}])\n"));
        }
        out.push_str("    return None if _result is None else np.asarray(_result)[()]\n");
        out
    }
}

const SUM_LEAD: &str = r#"def _sum_lead(a):
    """The sum over a's leading axis as a product with ones, which XLA runs
    as a matrix-vector product: its own reduction over a leading axis ran
    1.4-4x (2-D) and up to 48x (3-D) slower on CPU."""
    lead, rest = a.shape[0], int(np.prod(a.shape[1:]))
    ones = jnp.ones((lead,), dtype=a.dtype)
    return jnp.matmul(ones, a.reshape(lead, rest)).reshape(a.shape[1:])
"#;

/// A float sum over the leading axis (only) of an array read as it is
/// stored (a parameter or a slice of one), of rank >= 2, in its own
/// element type: XLA's CPU column reduction of a 4096 x 4096 array took
/// 17.5 ms against 4.1 ms as a product with ones, of a 128 x 128 x 256
/// one 33 ms against 0.7 ms (results/jax-sum-lead-2026-11-29.md). Over a
/// computed operand (`sum(A * x, 0)`) the reduction fuses with it and is
/// faster, and over two leading axes it was too: both keep `jnp.sum`.
fn sums_leading_axis_of_an_array(e: &Expr) -> bool {
    let Op::Reduce { kind: R::Sum, axes } = e.op() else {
        return false;
    };
    let a = &e.args()[0];
    let stored = match a.op() {
        Op::Var(_) => true,
        Op::Slice(_) => matches!(a.args()[0].op(), Op::Var(_)),
        _ => false,
    };
    axes.as_slice() == [0]
        && a.shape().len() >= 2
        && stored
        && e.dtype() == a.dtype()
        && matches!(a.dtype(), DType::F32 | DType::F64)
}

const PAD_STORE: &str = r#"def _pad_store(a, v, box):
    """a with v written into `box` ((start, stop) per axis): v padded to a's
    shape and selected by a mask, which XLA fuses into one pass."""
    mask = None
    for axis, (lo, hi) in enumerate(box):
        idx = jnp.arange(a.shape[axis]).reshape([-1 if i == axis else 1 for i in range(a.ndim)])
        inside = (idx >= lo) & (idx < hi)
        mask = inside if mask is None else mask & inside
    pads = [(lo, a.shape[axis] - hi) for axis, (lo, hi) in enumerate(box)]
    return jnp.where(mask, jnp.pad(v, pads).astype(a.dtype), a)
"#;

/// Renders statements of the jitted function at `indent`. Stores become
/// functional updates; `loops` numbers the loop body functions. In a
/// compiled loop (`compiled`), a store into a stencil's interior
/// ([`super::is_interior_box`], the rule the StableHLO emitter shares) is
/// a select over the whole array (`_pad_store`); any other store is an
/// in-place `.at[].set`.
fn jax_block(
    body: &[PyStmt],
    indent: &str,
    compiled: bool,
    loops: &mut usize,
    returned: &mut String,
    out: &mut String,
) {
    if body.is_empty() {
        out.push_str(&format!("{indent}pass\n"));
    }
    for s in body {
        match s {
            PyStmt::Let { name, value } => out.push_str(&format!("{indent}{name} = {value}\n")),
            PyStmt::Store {
                target,
                region: None,
                value,
                ..
            } => out.push_str(&format!("{indent}{target} = {value}\n")),
            PyStmt::Store {
                target,
                boxed: Some(b),
                value,
                ..
            } if compiled => out.push_str(&format!(
                "{indent}{target} = _pad_store({target}, {value}, {b})\n"
            )),
            PyStmt::Store {
                target,
                region: Some(r),
                value,
                ..
            } => out.push_str(&format!(
                "{indent}{target} = {target}.at[{r}].set({value})\n"
            )),
            PyStmt::Call(c) => out.push_str(&format!("{indent}{c}\n")),
            PyStmt::Return(v) => {
                out.push_str(&format!("{indent}_result = {v}\n"));
                *returned = "_result".to_string();
            }
            PyStmt::Loop(l) if l.shapes_invariant => jax_fori(l, indent, loops, returned, out),
            PyStmt::Loop(l) => {
                out.push_str(&format!(
                    "{indent}# `{}` sets shapes, slice ranges or loop bounds here: a Python loop.\n",
                    l.var
                ));
                out.push_str(&format!(
                    "{indent}for {} in range({}, {}):\n",
                    l.var, l.start, l.stop
                ));
                jax_block(
                    &l.body,
                    &format!("{indent}    "),
                    compiled,
                    loops,
                    returned,
                    out,
                );
            }
        }
    }
}

/// Whether `s` is, or contains, a loop whose variable sets a shape.
fn has_shape_varying_loop(s: &PyStmt) -> bool {
    match s {
        PyStmt::Loop(l) => !l.shapes_invariant || l.body.iter().any(has_shape_varying_loop),
        _ => false,
    }
}

/// A loop whose shapes do not change between iterations, as one
/// `jax.lax.fori_loop` carrying the arrays the body writes.
fn jax_fori(l: &PyLoop, indent: &str, loops: &mut usize, returned: &mut String, out: &mut String) {
    let body_fn = format!("_loop{}_body", *loops);
    *loops += 1;
    let state = py_tuple(&l.written);
    let unpack = if l.written.is_empty() {
        "_".to_string()
    } else {
        format!("{},", l.written.join(", "))
    };
    let inner = format!("{indent}    ");
    out.push_str(&format!("{indent}def {body_fn}({}, _state):\n", l.var));
    out.push_str(&format!("{inner}{unpack} = _state\n"));
    jax_block(&l.body, &inner, true, loops, returned, out);
    out.push_str(&format!("{inner}return {state}\n"));
    out.push_str(&format!(
        "{indent}{unpack} = jax.lax.fori_loop({}, {}, {body_fn}, {state})\n",
        l.start, l.stop
    ));
}
