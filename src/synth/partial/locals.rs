//! C locals under partial lifting: a local scalar a kept loop carries
//! (Levinson-Durbin's `alpha` and `beta`, a scan's previous value) and a
//! local array (a scratch vector) become TensIR `var`s, updated by the
//! stores of the lifted statements.
//!
//! Before anything else the kernel's local scalars are read and written
//! as one-element local arrays (`s` is `s[0]`), so that the dependence
//! analysis, the statement kernels and the stencil leaves see only arrays:
//! a scalar written in every iteration is a dependency like any array
//! element (`s[0]` against `s[0]`), and a statement writing a scalar is a
//! statement with an output. In a statement kernel every local is a
//! parameter (its current contents the statement's input); in TensIR a
//! former scalar is a rank-0 value. The assembled program declares a `var`
//! for every local it stores into; a `var` stored once, at the top level,
//! before anything reads it, is a `let` instead (deriche's coefficients).

use std::sync::Arc;

use tenslift_frontend::ir::{
    self as loop_ir, Affine, ArrayInfo, ExprKind, Kernel, LValue, Loc, Local, LocalKind, Origin,
    Role, Storage,
};
use tenslift_targets::{Access, Expr, Op, Param, ParamKind, Stmt, Ty};

use super::rewrite::{rewrite_stmt, Rewrite};
use crate::synth::signature::dtype_of;
use crate::synth::stencil::dim_of;

/// Reads and writes of the named local scalars as `s[0]`.
struct ScalarsAsArrays<'a> {
    names: &'a [String],
}

impl Rewrite for ScalarsAsArrays<'_> {
    fn expr(&self, e: &loop_ir::Expr) -> Option<loop_ir::Expr> {
        match &e.kind {
            ExprKind::Var { name, .. } if self.names.contains(name) => Some(loop_ir::Expr {
                ty: e.ty,
                kind: ExprKind::Load {
                    array: name.clone(),
                    index: vec![Affine::constant(0)],
                },
            }),
            _ => None,
        }
    }

    fn lvalue(&self, lv: LValue) -> LValue {
        match lv {
            LValue::Scalar { name, ty } if self.names.contains(&name) => LValue::Element {
                array: name,
                index: vec![Affine::constant(0)],
                ty,
            },
            other => other,
        }
    }
}

/// `kernel` with its local scalars as one-element local arrays, and the
/// names of those scalars.
pub(super) fn scalars_as_arrays(kernel: &Kernel) -> (Kernel, Vec<String>) {
    let names: Vec<String> = kernel
        .locals
        .iter()
        .filter(|l| matches!(l.kind, LocalKind::Scalar { .. }))
        .map(|l| l.name.clone())
        .collect();
    let rewrite = ScalarsAsArrays { names: &names };
    let locals = kernel
        .locals
        .iter()
        .map(|l| match &l.kind {
            LocalKind::Scalar { ty } => Local {
                name: l.name.clone(),
                kind: LocalKind::Array(ArrayInfo {
                    elem: *ty,
                    dims: vec![Some(Affine::constant(1))],
                    storage: Storage::Declared,
                }),
                loc: l.loc.clone(),
            },
            LocalKind::Array(_) => l.clone(),
        })
        .collect();
    let body = kernel
        .body
        .iter()
        .map(|s| rewrite_stmt(s, &rewrite))
        .collect();
    let rewritten = Kernel {
        locals,
        body,
        ..kernel.clone()
    };
    (rewritten, names)
}

/// The locals of `kernel` as parameters of a statement kernel: the arrays
/// in `written` are in/out, the others inputs.
pub(super) fn local_params(kernel: &Kernel, written: &[String], loc: &Loc) -> Vec<loop_ir::Param> {
    kernel
        .locals
        .iter()
        .filter_map(|l| match &l.kind {
            LocalKind::Array(info) => Some(loop_ir::Param {
                name: l.name.clone(),
                kind: loop_ir::ParamKind::Array(info.clone()),
                role: if written.contains(&l.name) {
                    Role::InOut
                } else {
                    Role::Input
                },
                origin: Origin::Argument,
                loc: loc.clone(),
            }),
            LocalKind::Scalar { .. } => None,
        })
        .collect()
}

/// The TensIR type of local `l`: rank 0 for a former scalar.
fn local_ty(l: &Local, scalars: &[String]) -> Option<Ty> {
    let LocalKind::Array(info) = &l.kind else {
        return None;
    };
    let shape = if scalars.contains(&l.name) {
        Vec::new()
    } else {
        info.dims
            .iter()
            .map(|d| d.as_ref().and_then(dim_of))
            .collect::<Option<Vec<_>>>()?
    };
    Some(Ty::tensor(dtype_of(info.elem), shape))
}

/// The locals as TensIR parameters of a statement program (`None` when
/// some local's extent is unknown).
pub(super) fn local_tensir_params(
    kernel: &Kernel,
    scalars: &[String],
    written: &[String],
) -> Option<Vec<Param>> {
    kernel
        .locals
        .iter()
        .map(|l| {
            let ty = local_ty(l, scalars)?;
            let access = if written.contains(&l.name) {
                Access::InOut
            } else {
                Access::In
            };
            Some(Param {
                name: Arc::from(l.name.as_str()),
                kind: ParamKind::Array {
                    dtype: ty.dtype,
                    shape: ty.shape,
                    access,
                },
            })
        })
        .collect()
}

/// `body` with a `var` declared first for every local it stores into, and
/// each such `var` stored exactly once, at the top level, before any
/// statement mentions it, bound by a `let` there instead.
pub(super) fn declare_locals(
    body: Vec<Stmt>,
    kernel: &Kernel,
    scalars: &[String],
) -> Option<Vec<Stmt>> {
    let mut stored = Vec::new();
    stores(&body, &mut stored);
    let mut decls = Vec::new();
    let mut body = body;
    for l in &kernel.locals {
        if !stored.iter().any(|s| **s == *l.name) {
            continue;
        }
        if let Some(at) = single_top_level_store(&body, &l.name, &stored) {
            if let Stmt::Store { value, .. } = &body[at] {
                body[at] = Stmt::Let {
                    name: Arc::from(l.name.as_str()),
                    value: value.clone(),
                };
                continue;
            }
        }
        decls.push(Stmt::Var {
            name: Arc::from(l.name.as_str()),
            ty: local_ty(l, scalars)?,
        });
    }
    decls.extend(body);
    Some(decls)
}

fn stores(stmts: &[Stmt], out: &mut Vec<Arc<str>>) {
    for s in stmts {
        match s {
            Stmt::Store { target, .. } => out.push(target.clone()),
            Stmt::Loop { body, .. } => stores(body, out),
            _ => {}
        }
    }
}

/// The position of the one whole store into `name` when it is at the top
/// level and no earlier statement mentions `name`.
fn single_top_level_store(body: &[Stmt], name: &str, stored: &[Arc<str>]) -> Option<usize> {
    if stored.iter().filter(|s| ***s == *name).count() != 1 {
        return None;
    }
    let at = body
        .iter()
        .position(|s| matches!(s, Stmt::Store { target, region: None, .. } if **target == *name))?;
    let Stmt::Store { value, .. } = &body[at] else {
        return None;
    };
    let earlier = body[..at].iter().any(|s| mentions(s, name)) || reads(value, name);
    (!earlier).then_some(at)
}

fn mentions(s: &Stmt, name: &str) -> bool {
    match s {
        Stmt::Let { value, .. } | Stmt::Return(value) => reads(value, name),
        Stmt::Store { target, value, .. } => **target == *name || reads(value, name),
        Stmt::Loop { body, .. } => body.iter().any(|b| mentions(b, name)),
        Stmt::Var { name: n, .. } => **n == *name,
    }
}

fn reads(e: &Expr, name: &str) -> bool {
    let mut found = false;
    e.walk_unique(&mut |node| {
        found |= matches!(node.op(), Op::Var(n) if **n == *name);
    });
    found
}
