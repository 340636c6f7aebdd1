//! `guards`: an iteration-space guard the loops around it decide is
//! replaced by the branch it always takes (nussinov's `j - 1 >= 0` inside
//! `j > i >= 0`), and a guarded assignment `if (g) t = a; [else t = b;]`
//! whose every read stays inside its array becomes `t = g ? a : b` (`t`
//! for a missing else), which a kept loop's statement lifts as `where`; so
//! does a data-dependent one (`if (x[i] > m) m = x[i];`).

use tenslift_frontend::ir::{
    self as loop_ir, Affine, ExprKind, IfKind, Kernel, LValue, LocalKind, Loop,
};

use super::{nest_of, LoopSite, Restructured, Restructuring};
use crate::synth::partial::bounds::{decide, Facts};
use crate::synth::partial::dependence::{difference, Scope};

pub struct Guards;

impl Restructuring for Guards {
    fn name(&self) -> &'static str {
        "guards"
    }

    fn summary(&self) -> &'static str {
        "a guard the enclosing loops decide (Fourier-Motzkin) is dropped for its branch; a guarded or data-dependent assignment whose reads stay in bounds becomes a select"
    }

    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured> {
        let mut loops: Scope = site.scope.clone();
        let mut changed = false;
        let stmt = loop_ir::Stmt::Loop(site.l.clone());
        let required = required(site.kernel);
        let out = block(&[stmt], &mut loops, site.kernel, &required, &mut changed);
        changed.then(|| Restructured::of(out))
    }
}

fn block(
    stmts: &[loop_ir::Stmt],
    loops: &mut Scope,
    kernel: &Kernel,
    required: &[Affine],
    changed: &mut bool,
) -> Vec<loop_ir::Stmt> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            loop_ir::Stmt::Loop(l) => {
                loops.push(nest_of(l));
                let body = block(&l.body, loops, kernel, required, changed);
                loops.pop();
                out.push(loop_ir::Stmt::Loop(Loop { body, ..l.clone() }));
            }
            loop_ir::Stmt::If {
                cond,
                kind: IfKind::Guard,
                then_body,
                else_body,
                loc,
            } => {
                let facts = facts_in(loops, required);
                match decide(&facts, cond) {
                    Some(taken) => {
                        *changed = true;
                        let branch = if taken { then_body } else { else_body };
                        out.extend(block(branch, loops, kernel, required, changed));
                    }
                    None => {
                        let then_body = block(then_body, loops, kernel, required, changed);
                        let else_body = block(else_body, loops, kernel, required, changed);
                        let guarded = loop_ir::Stmt::If {
                            cond: cond.clone(),
                            kind: IfKind::Guard,
                            then_body,
                            else_body,
                            loc: loc.clone(),
                        };
                        match as_select(&guarded, &facts, kernel, &[]) {
                            Some(select) => {
                                *changed = true;
                                out.push(select);
                            }
                            None => out.push(guarded),
                        }
                    }
                }
            }
            loop_ir::Stmt::If {
                cond,
                kind: IfKind::Data,
                then_body,
                else_body,
                loc,
            } => {
                let facts = facts_in(loops, required);
                let then_body = block(then_body, loops, kernel, required, changed);
                let else_body = block(else_body, loops, kernel, required, changed);
                out.push(data_select(
                    cond, then_body, else_body, loc, &facts, kernel, changed,
                ));
            }
            other => out.push(other.clone()),
        }
    }
    out
}

/// The relations between sizes the lifted program requires on entry
/// (`n <= ext_2500`: the loops' regions fit the declared arrays), as
/// `declared - needed >= 0` rows; computed once per restructuring.
pub(super) fn required(kernel: &Kernel) -> Vec<Affine> {
    crate::spec::region::relations(kernel)
        .iter()
        .map(|r| difference(&r.declared, &r.needed))
        .collect()
}

/// What holds inside `loops`: their ranges and the `required` relations,
/// so a read the loops keep inside the region is known to be inside the
/// array.
fn facts_in(loops: &Scope, required: &[Affine]) -> Facts {
    let mut facts = Facts::of_loops(loops.iter());
    required.iter().cloned().for_each(|r| facts.push(r));
    facts
}

/// A data-dependent choice (`if (x[i] > m) m = x[i];`, the running
/// maximum of llama.c's softmax) as a select: the C evaluates the
/// condition anyway, so the select reads nothing more than it does.
fn data_select(
    cond: &loop_ir::Expr,
    then_body: Vec<loop_ir::Stmt>,
    else_body: Vec<loop_ir::Stmt>,
    loc: &tenslift_frontend::ir::Loc,
    facts: &Facts,
    kernel: &Kernel,
    changed: &mut bool,
) -> loop_ir::Stmt {
    let data = loop_ir::Stmt::If {
        cond: cond.clone(),
        kind: IfKind::Data,
        then_body,
        else_body,
        loc: loc.clone(),
    };
    let mut read_anyway = Vec::new();
    loads(cond, &mut read_anyway);
    match as_select(&data, facts, kernel, &read_anyway) {
        Some(select) => {
            *changed = true;
            select
        }
        None => data,
    }
}

/// `if (g) t = a; else t = b;` (or no else) as `t = g ? a : b` (`t`),
/// when every element both branches read or write lies in its array (or
/// is among `read_anyway`, what the C reads whichever branch it takes),
/// so evaluating both is harmless.
fn as_select(
    stmt: &loop_ir::Stmt,
    facts: &Facts,
    kernel: &Kernel,
    read_anyway: &[(String, Vec<Affine>)],
) -> Option<loop_ir::Stmt> {
    let loop_ir::Stmt::If {
        cond,
        then_body,
        else_body,
        loc,
        ..
    } = stmt
    else {
        return None;
    };
    let [loop_ir::Stmt::Assign {
        target, value: a, ..
    }] = then_body.as_slice()
    else {
        return None;
    };
    let LValue::Element { array, index, ty } = target else {
        return None;
    };
    let current = loop_ir::Expr {
        ty: *ty,
        kind: ExprKind::Load {
            array: array.clone(),
            index: index.clone(),
        },
    };
    let b = match else_body.as_slice() {
        [] => current.clone(),
        [loop_ir::Stmt::Assign {
            target: other,
            value,
            ..
        }] if other == target => value.clone(),
        _ => return None,
    };
    let mut reads = Vec::new();
    loads(a, &mut reads);
    loads(&b, &mut reads);
    loads(&current, &mut reads);
    if !reads
        .iter()
        .all(|r| read_anyway.contains(r) || in_bounds(&r.0, &r.1, facts, kernel))
    {
        return None;
    }
    let value = loop_ir::Expr {
        ty: *ty,
        kind: ExprKind::Select {
            cond: Box::new(cond.clone()),
            then_value: Box::new(a.clone()),
            else_value: Box::new(b),
        },
    };
    Some(loop_ir::Stmt::Assign {
        target: target.clone(),
        value,
        loc: loc.clone(),
    })
}

fn loads(e: &loop_ir::Expr, out: &mut Vec<(String, Vec<Affine>)>) {
    match &e.kind {
        ExprKind::Load { array, index } => out.push((array.clone(), index.clone())),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => loads(arg, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            loads(lhs, out);
            loads(rhs, out);
        }
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            loads(cond, out);
            loads(then_value, out);
            loads(else_value, out);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| loads(a, out)),
        _ => {}
    }
}

/// Whether `array[index]` lies inside the array wherever the facts hold.
fn in_bounds(array: &str, index: &[Affine], facts: &Facts, kernel: &Kernel) -> bool {
    let Some(dims) = array_dims(kernel, array) else {
        return false;
    };
    dims.len() == index.len()
        && dims.iter().zip(index).all(|(d, i)| {
            let Some(d) = d else {
                return false;
            };
            let mut last = difference(d, i);
            last.constant -= 1;
            facts.implies(i) && facts.implies(&last)
        })
}

/// The declared extents of a parameter or local array.
pub(super) fn array_dims<'k>(kernel: &'k Kernel, name: &str) -> Option<&'k [Option<Affine>]> {
    let param = kernel
        .params
        .iter()
        .find(|p| p.name == name)
        .and_then(|p| match &p.kind {
            loop_ir::ParamKind::Array(info) => Some(info),
            loop_ir::ParamKind::Scalar { .. } => None,
        });
    let local = || {
        kernel
            .locals
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| match &l.kind {
                LocalKind::Array(info) => Some(info),
                LocalKind::Scalar { .. } => None,
            })
    };
    param.or_else(local).map(|info| info.dims.as_slice())
}
