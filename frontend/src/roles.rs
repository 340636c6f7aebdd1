//! Parameter roles: whether the kernel reads an array's (or a global
//! scalar's) initial contents.
//!
//! The analysis is conservative. Walking statements in order, a write of
//! `A[idx]` makes the pattern `(A, idx)` *defined* for the rest of the
//! enclosing block (including loops nested later in it, whose iterators
//! cannot change `idx`). Writes inside a loop body or one branch of an `if`
//! do not outlive it; writes of the same pattern in both branches do. A
//! read of a pattern that is not defined at that point may see the initial
//! contents, so the array is `InOut`; an array whose every read is
//! defined is `Output`; one never written is `Input`.

use std::collections::{HashMap, HashSet};

use crate::ir::*;

#[derive(Default, Clone, Copy)]
struct Usage {
    written: bool,
    read_initial: bool,
}

type Pattern = (String, Vec<Affine>);

/// Roles for the named arrays and scalars (`tracked`), from `body`.
pub fn compute_roles(body: &[Stmt], tracked: &HashSet<String>) -> HashMap<String, Role> {
    let mut usage: HashMap<String, Usage> = HashMap::new();
    let mut defined: Vec<Pattern> = Vec::new();
    walk(body, tracked, &mut defined, &mut usage);
    tracked
        .iter()
        .map(|name| {
            let u = usage.get(name).copied().unwrap_or_default();
            let role = match (u.written, u.read_initial) {
                (false, _) => Role::Input,
                (true, false) => Role::Output,
                (true, true) => Role::InOut,
            };
            (name.clone(), role)
        })
        .collect()
}

fn walk(
    stmts: &[Stmt],
    tracked: &HashSet<String>,
    defined: &mut Vec<Pattern>,
    usage: &mut HashMap<String, Usage>,
) {
    let scope = defined.len();
    for s in stmts {
        match s {
            Stmt::Assign { target, value, .. } => {
                reads(value, tracked, defined, usage);
                let pattern = match target {
                    LValue::Scalar { name, .. } => (name.clone(), Vec::new()),
                    LValue::Element { array, index, .. } => (array.clone(), index.clone()),
                };
                if tracked.contains(&pattern.0) {
                    usage.entry(pattern.0.clone()).or_default().written = true;
                }
                defined.push(pattern);
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                reads(cond, tracked, defined, usage);
                let before = defined.len();
                walk(then_body, tracked, defined, usage);
                let mut then_defs = direct_writes(then_body);
                walk(else_body, tracked, defined, usage);
                let else_defs = direct_writes(else_body);
                defined.truncate(before);
                then_defs.retain(|p| else_defs.contains(p));
                defined.extend(then_defs);
            }
            Stmt::Loop(l) => {
                let before = defined.len();
                walk(&l.body, tracked, defined, usage);
                defined.truncate(before);
            }
            Stmt::Return { value, .. } => reads(value, tracked, defined, usage),
        }
    }
    defined.truncate(scope);
}

/// Patterns written unconditionally at the top level of a block.
fn direct_writes(stmts: &[Stmt]) -> Vec<Pattern> {
    stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Assign { target, .. } => Some(match target {
                LValue::Scalar { name, .. } => (name.clone(), Vec::new()),
                LValue::Element { array, index, .. } => (array.clone(), index.clone()),
            }),
            _ => None,
        })
        .collect()
}

fn reads(
    e: &Expr,
    tracked: &HashSet<String>,
    defined: &[Pattern],
    usage: &mut HashMap<String, Usage>,
) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        let pattern = match &e.kind {
            ExprKind::Load { array, index } => Some((array.clone(), index.clone())),
            ExprKind::Var { name, .. } => Some((name.clone(), Vec::new())),
            _ => None,
        };
        if let Some(p) = pattern {
            if tracked.contains(&p.0) && !defined.contains(&p) {
                usage.entry(p.0).or_default().read_initial = true;
            }
        }
        match &e.kind {
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => stack.push(arg),
            ExprKind::Binary { lhs, rhs, .. } => {
                stack.push(lhs);
                stack.push(rhs);
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                stack.push(cond);
                stack.push(then_value);
                stack.push(else_value);
            }
            ExprKind::Call { args, .. } => stack.extend(args.iter()),
            _ => {}
        }
    }
}
