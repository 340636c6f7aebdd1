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
use tenslift_targets::{self as tensir, Access, Expr, Op, Param, ParamKind, Stmt, Ty};

use crate::synth::signature::dtype_of;
use crate::synth::stencil::dim_of;
use tenslift_frontend::ir_rewrite::{rewrite_stmt, Rewrite};

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
        let mut taken = taken_names(kernel, &body);
        taken.retain(|n| *n != l.name);
        if let Some(lets) = stores_as_lets(&body, &l.name, &mut taken) {
            body = lets;
            continue;
        }
        decls.push(Stmt::Var {
            name: Arc::from(l.name.as_str()),
            ty: local_ty(l, scalars)?,
        });
    }
    decls.extend(body);
    Some(decls)
}

/// A local stored only by whole stores at the top level (`y = 0;
/// y = h @ x + y`: a C accumulator set, then reduced into) as one `let`
/// per store (`y`, `y_1`, …), each read bound to the value stored last:
/// values rather than a variable, which the unbounded prover can relate to
/// the C. `None` when a loop stores it, a store is partial, or it is read
/// before its first store.
fn stores_as_lets(body: &[Stmt], name: &str, taken: &mut Vec<String>) -> Option<Vec<Stmt>> {
    let nested = body.iter().any(
        |s| matches!(s, Stmt::Loop { body, .. } if body.iter().any(|b| mentions_store(b, name))),
    );
    let partial = body
        .iter()
        .any(|s| matches!(s, Stmt::Store { target, region: Some(_), .. } if **target == *name));
    if nested || partial {
        return None;
    }
    let mut current: Option<Arc<str>> = None;
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        let read = |e: &Expr| match &current {
            Some(now) => rename(e, name, now),
            None if reads(e, name) => None,
            None => Some(e.clone()),
        };
        let stmt = match s {
            Stmt::Store {
                target,
                region: None,
                value,
            } if **target == *name => {
                let value = read(value)?;
                let fresh = fresh_name(name, taken);
                current = Some(Arc::from(fresh.as_str()));
                Stmt::Let {
                    name: Arc::from(fresh.as_str()),
                    value,
                }
            }
            other => tensir::program::try_map_values(std::slice::from_ref(other), &mut |_, e| {
                read(e).ok_or(())
            })
            .ok()?
            .pop()?,
        };
        out.push(stmt);
    }
    current.is_some().then_some(out)
}

fn mentions_store(s: &Stmt, name: &str) -> bool {
    match s {
        Stmt::Store { target, .. } => **target == *name,
        Stmt::Loop { body, .. } => body.iter().any(|b| mentions_store(b, name)),
        _ => false,
    }
}

/// [`super::first_free_name`], which is then taken.
fn fresh_name(name: &str, taken: &mut Vec<String>) -> String {
    let fresh = super::first_free_name(name, taken);
    taken.push(fresh.clone());
    fresh
}

/// Every name the kernel or the lifted body already uses (parameters,
/// locals, loop variables), for [`fresh_name`].
fn taken_names(kernel: &Kernel, body: &[Stmt]) -> Vec<String> {
    fn loops(stmts: &[Stmt], out: &mut Vec<String>) {
        for s in stmts {
            if let Stmt::Loop { var, body, .. } = s {
                out.push(var.to_string());
                loops(body, out);
            }
        }
    }
    let mut out: Vec<String> = kernel.params.iter().map(|p| p.name.clone()).collect();
    out.extend(kernel.locals.iter().map(|l| l.name.clone()));
    out.retain(|n| !n.is_empty());
    loops(body, &mut out);
    out
}

/// `e` with every read of `from` reading `to` instead.
fn rename(e: &Expr, from: &str, to: &Arc<str>) -> Option<Expr> {
    match e.op() {
        Op::Var(n) if **n == *from => Some(Expr::var(to, e.ty().clone())),
        _ if e.args().is_empty() => Some(e.clone()),
        op => {
            let args = e
                .args()
                .iter()
                .map(|a| rename(a, from, to))
                .collect::<Option<Vec<_>>>()?;
            Expr::new(op.clone(), args).ok()
        }
    }
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

/// The name the returned value is stored under while the statements are
/// lifted one by one: not a C identifier, so it meets no name of the kernel.
pub(super) const RETURNED: &str = "return";

/// `kernel` with its final `return e;` as a store of `e` into a local
/// scalar [`RETURNED`] (lifted like any statement; the assembled program
/// returns that local), and the returned type. Unchanged when the kernel
/// returns nothing; `Err` when it returns from anywhere but its last
/// top-level statement (an early return is control flow, not a value).
pub(super) fn return_as_local(
    kernel: &Kernel,
) -> Result<(Kernel, Option<loop_ir::ScalarType>), String> {
    let Some(ty) = kernel.returns else {
        return Ok((kernel.clone(), None));
    };
    let (last, rest) = kernel
        .body
        .split_last()
        .ok_or_else(|| "a kernel that returns without statements".to_string())?;
    let loop_ir::Stmt::Return { value, loc } = last else {
        return Err("the returned value is not the kernel's last statement".into());
    };
    if rest.iter().any(returns_inside) {
        return Err("a return before the kernel's last statement".into());
    }
    let mut out = kernel.clone();
    out.returns = None;
    out.locals.push(Local {
        name: RETURNED.to_string(),
        kind: LocalKind::Scalar { ty },
        loc: loc.clone(),
    });
    out.body = rest.to_vec();
    out.body.push(loop_ir::Stmt::Assign {
        target: LValue::Scalar {
            name: RETURNED.to_string(),
            ty,
        },
        value: value.clone(),
        loc: loc.clone(),
    });
    Ok((out, Some(ty)))
}

fn returns_inside(s: &loop_ir::Stmt) -> bool {
    match s {
        loop_ir::Stmt::Return { .. } => true,
        loop_ir::Stmt::Loop(l) => l.body.iter().any(returns_inside),
        loop_ir::Stmt::If {
            then_body,
            else_body,
            ..
        } => then_body.iter().chain(else_body).any(returns_inside),
        loop_ir::Stmt::Assign { .. } => false,
    }
}

/// `body` ending in the return of the local [`RETURNED`]: its value
/// returned directly where it is bound by the last `let` (stored once,
/// last, as the C's `return e;` was), else the local read.
pub(super) fn return_local(mut body: Vec<Stmt>, ty: loop_ir::ScalarType) -> Vec<Stmt> {
    if let Some(Stmt::Let { name, value }) = body.last() {
        if **name == *RETURNED {
            let value = value.clone();
            body.pop();
            body.push(Stmt::Return(value));
            return body;
        }
    }
    let ty = Ty::tensor(dtype_of(ty), Vec::new());
    body.push(Stmt::Return(Expr::var(RETURNED, ty)));
    body
}
