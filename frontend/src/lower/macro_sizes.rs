//! Overridable macros that size loops or arrays become size parameters.
//!
//! The reader marks literals spelled with an overridable macro
//! ([`CExprKind::MacroInt`]). A macro that appears in a `for` header or in
//! an array declaration's extent sizes the kernel: every use of it, in
//! bounds and in values alike, becomes a reference to a parameter of that
//! name with [`crate::ir::Origin::Macro`], so later stages trace the
//! kernel at small sizes and the lifted program takes the size as an
//! argument. Any other macro literal is left as it is, and the lowering
//! reads it as its plain value.

use std::collections::BTreeMap;

use crate::ir::Loc;
use crate::syntax::*;

/// Declaration keys of macro parameters start with this (no C
/// declaration key can: those start with the declared name).
pub(super) const MACRO_KEY_PREFIX: &str = "macro:";

/// The function with its macro sizes resolved, and the size macros to
/// declare as parameters (in name order) with the values they have here.
pub(super) struct MacroSizes {
    pub func: CFunction,
    pub params: Vec<(CVarDecl, i64)>,
}

/// `None` when no macro sizes `func` (the common case: it is lowered as read).
pub(super) fn promote(func: &CFunction) -> Option<MacroSizes> {
    // Each sizing macro with its first use and value.
    let mut sizing: BTreeMap<String, (Loc, i64)> = BTreeMap::new();
    let mut note = |e: &CExpr| {
        walk_expr(e, &mut |n| {
            if let CExprKind::MacroInt { name, value } = &n.kind {
                sizing
                    .entry(name.clone())
                    .or_insert_with(|| (n.loc.clone(), *value));
            }
        })
    };
    for d in func.params.iter().chain(&func.globals) {
        d.dims.iter().flatten().for_each(&mut note);
    }
    walk_stmts(&func.body, &mut |s| match s {
        CStmt::For { init, cond, .. } => {
            match &**init {
                CStmt::Expr(e) => note(e),
                CStmt::Decl(vars, _) => vars
                    .iter()
                    .filter_map(|v| v.init.as_ref())
                    .for_each(&mut note),
                _ => {}
            }
            note(cond);
        }
        CStmt::Decl(vars, _) => vars
            .iter()
            .flat_map(|d| d.dims.iter().flatten())
            .for_each(&mut note),
        _ => {}
    });
    if sizing.is_empty() {
        return None;
    }
    let mut out = func.clone();
    let resolve = &mut |e: &mut CExpr| {
        if let CExprKind::MacroInt { name, .. } = &e.kind {
            if sizing.contains_key(name) {
                e.kind = CExprKind::Ref(DeclRef {
                    name: name.clone(),
                    key: format!("{MACRO_KEY_PREFIX}{name}"),
                    target: RefTarget::Param,
                });
            }
        }
    };
    for d in out.params.iter_mut().chain(out.globals.iter_mut()) {
        decl_exprs_mut(d, resolve);
    }
    walk_stmts_mut(&mut out.body, resolve);
    let params = sizing
        .into_iter()
        .map(|(name, (loc, value))| {
            let decl = CVarDecl {
                key: format!("{MACRO_KEY_PREFIX}{name}"),
                name,
                ty: CType::Scalar(crate::ir::ScalarType::I32),
                dims: Vec::new(),
                init: None,
                is_static: false,
                loc,
            };
            (decl, value)
        })
        .collect();
    Some(MacroSizes { func: out, params })
}

/// Whether `e` reads a macro size parameter (after [`promote`]).
pub(super) fn mentions_macro_size(e: &CExpr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |n| {
        if let CExprKind::Ref(r) = &n.kind {
            found |= r.key.starts_with(MACRO_KEY_PREFIX);
        }
    });
    found
}

pub(super) fn walk_stmts(stmts: &[CStmt], f: &mut impl FnMut(&CStmt)) {
    for s in stmts {
        f(s);
        match s {
            CStmt::Compound(inner, _) => walk_stmts(inner, f),
            CStmt::If {
                then_branch,
                else_branch,
                ..
            } => {
                walk_stmts(std::slice::from_ref(then_branch), f);
                if let Some(e) = else_branch {
                    walk_stmts(std::slice::from_ref(e), f);
                }
            }
            CStmt::For { init, body, .. } => {
                walk_stmts(std::slice::from_ref(init), f);
                walk_stmts(std::slice::from_ref(body), f);
            }
            _ => {}
        }
    }
}

pub(super) fn walk_expr(e: &CExpr, f: &mut impl FnMut(&CExpr)) {
    f(e);
    match &e.kind {
        CExprKind::Subscript { base, index } => {
            walk_expr(base, f);
            walk_expr(index, f);
        }
        CExprKind::Binary { lhs, rhs, .. } => {
            walk_expr(lhs, f);
            walk_expr(rhs, f);
        }
        CExprKind::Unary { arg, .. }
        | CExprKind::Implicit(arg)
        | CExprKind::Cast(arg)
        | CExprKind::Paren(arg) => walk_expr(arg, f),
        CExprKind::Conditional {
            cond,
            then_value,
            else_value,
        } => {
            walk_expr(cond, f);
            walk_expr(then_value, f);
            walk_expr(else_value, f);
        }
        CExprKind::Call { args, inline, .. } => {
            args.iter().for_each(|a| walk_expr(a, f));
            if let Some(body) = inline {
                walk_expr(&body.value, f);
            }
        }
        _ => {}
    }
}

pub(super) fn walk_expr_mut(e: &mut CExpr, f: &mut impl FnMut(&mut CExpr)) {
    f(e);
    match &mut e.kind {
        CExprKind::Subscript { base, index } => {
            walk_expr_mut(base, f);
            walk_expr_mut(index, f);
        }
        CExprKind::Binary { lhs, rhs, .. } => {
            walk_expr_mut(lhs, f);
            walk_expr_mut(rhs, f);
        }
        CExprKind::Unary { arg, .. }
        | CExprKind::Implicit(arg)
        | CExprKind::Cast(arg)
        | CExprKind::Paren(arg) => walk_expr_mut(arg, f),
        CExprKind::Conditional {
            cond,
            then_value,
            else_value,
        } => {
            walk_expr_mut(cond, f);
            walk_expr_mut(then_value, f);
            walk_expr_mut(else_value, f);
        }
        CExprKind::Call { args, inline, .. } => {
            args.iter_mut().for_each(|a| walk_expr_mut(a, f));
            if let Some(body) = inline {
                walk_expr_mut(&mut body.value, f);
            }
        }
        _ => {}
    }
}

fn decl_exprs_mut(d: &mut CVarDecl, f: &mut impl FnMut(&mut CExpr)) {
    for dim in d.dims.iter_mut().flatten() {
        walk_expr_mut(dim, f);
    }
    if let Some(init) = &mut d.init {
        walk_expr_mut(init, f);
    }
}

pub(super) fn walk_stmts_mut(stmts: &mut [CStmt], f: &mut impl FnMut(&mut CExpr)) {
    for s in stmts {
        match s {
            CStmt::Compound(inner, _) => walk_stmts_mut(inner, f),
            CStmt::Decl(vars, _) => vars.iter_mut().for_each(|d| decl_exprs_mut(d, f)),
            CStmt::Expr(e) => walk_expr_mut(e, f),
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                ..
            } => {
                walk_expr_mut(cond, f);
                walk_stmts_mut(std::slice::from_mut(then_branch.as_mut()), f);
                if let Some(e) = else_branch {
                    walk_stmts_mut(std::slice::from_mut(e.as_mut()), f);
                }
            }
            CStmt::For {
                init,
                cond,
                inc,
                body,
                ..
            } => {
                walk_stmts_mut(std::slice::from_mut(init.as_mut()), f);
                walk_expr_mut(cond, f);
                walk_expr_mut(inc, f);
                walk_stmts_mut(std::slice::from_mut(body.as_mut()), f);
            }
            CStmt::Return(Some(e), _) => walk_expr_mut(e, f),
            CStmt::Return(None, _) | CStmt::Null(_) | CStmt::Rejected(_) => {}
        }
    }
}
