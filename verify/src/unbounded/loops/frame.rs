//! Frames for `let`s that a kept loop's body reads but that are bound
//! before the loop (seidel-2d's row terms): they hold the arrays as they
//! were on loop entry. The body is proved with those `let`s reading a copy
//! of each array (`X__entry`), plus, for every element of a copy a
//! condition reads, the fact that the copy equals the current array there
//! unless an earlier iteration of the C loop writes that element. The C's
//! writes are read off its affine subscripts with guards ignored (more
//! elements than written, never fewer), so the fact holds in every state
//! the loop reaches: it is true on entry (nothing written yet) and stays
//! true because an iteration changes only elements it writes.

use std::collections::{HashMap, HashSet};

use tenslift_frontend::ir::{self as loop_ir, LValue, Loop};
use tenslift_targets::{self as tensir, Access, Expr, Op, Program, Stmt};
use z3::ast::{exists_const, Ast, Bool, Dynamic, Int};

use super::super::lifted::Symbols;
use super::super::Unsupported;
use super::{affine_in, stmt_names};

/// `let`s a kept loop's body reads, bound before the loop: they see the
/// arrays as they were on loop entry. The body is proved with them reading
/// a copy of the arrays (`X__entry`) that agrees with the current arrays
/// wherever the C loop's earlier iterations wrote nothing.
#[derive(Clone)]
pub(super) struct Snapshot {
    pub lets: Vec<Stmt>,
    pub c_loop: Loop,
}

/// For a snapshot: the `X__entry` array parameters (one per array the
/// `let`s read), the `let`s reading them instead of the arrays, and the
/// pairs (array, copy).
#[allow(clippy::type_complexity)]
pub(super) fn entry_copies(
    program: &Program,
    snapshot: &Snapshot,
) -> Result<(Vec<tensir::Param>, Vec<Stmt>, Vec<(String, String)>), Unsupported> {
    let mut read = HashSet::new();
    for l in &snapshot.lets {
        stmt_names(l, &mut read);
    }
    let mut params = Vec::new();
    let mut pairs = Vec::new();
    let mut renames = HashMap::new();
    for p in &program.params {
        let tensir::ParamKind::Array { dtype, shape, .. } = &p.kind else {
            continue;
        };
        if !read.contains(&*p.name) {
            continue;
        }
        let copy = format!("{}__entry", p.name);
        if program.param(&copy).is_some() {
            return Err(Unsupported(format!("the program already has a `{copy}`")));
        }
        params.push(tensir::Param {
            name: copy.as_str().into(),
            kind: tensir::ParamKind::Array {
                dtype: *dtype,
                shape: shape.clone(),
                access: Access::In,
            },
        });
        pairs.push((p.name.to_string(), copy.clone()));
        renames.insert(p.name.to_string(), copy);
    }
    let lets = snapshot
        .lets
        .iter()
        .map(|l| match l {
            Stmt::Let { name, value } => Ok(Stmt::Let {
                name: name.clone(),
                value: rename(value, &renames)?,
            }),
            other => Ok(other.clone()),
        })
        .collect::<Result<Vec<_>, Unsupported>>()?;
    Ok((params, lets, pairs))
}

fn rename(e: &Expr, renames: &HashMap<String, String>) -> Result<Expr, Unsupported> {
    if let Op::Var(n) = e.op() {
        return Ok(match renames.get(&**n) {
            Some(to) => Expr::var(to, e.ty().clone()),
            None => e.clone(),
        });
    }
    let args = e
        .args()
        .iter()
        .map(|a| rename(a, renames))
        .collect::<Result<Vec<_>, _>>()?;
    Expr::new(e.op().clone(), args)
        .map_err(|t| Unsupported(format!("renaming arrays in a `let`: {t}")))
}

/// The frame facts one condition needs: for every element `k` of a copy
/// `X__entry` the condition reads, `X[k] = X__entry[k]` unless some earlier
/// iteration of the C loop writes `X[k]` (guards ignored: an over-
/// approximation of what was written, so the fact is sound).
pub(super) fn frame(
    snapshot: &Snapshot,
    entry_arrays: &[(String, String)],
    symbols: &Symbols,
    hyps: &[Bool],
    goal: &Bool,
    facts: &[(Bool, HashSet<String>)],
) -> Result<Vec<Bool>, Unsupported> {
    let mut roots: Vec<Dynamic> = hyps.iter().map(|h| Dynamic::from_ast(h)).collect();
    roots.push(Dynamic::from_ast(goal));
    roots.extend(facts.iter().map(|(f, _)| Dynamic::from_ast(f)));
    let mut out = Vec::new();
    for (array, copy) in entry_arrays {
        let (Some((current, _)), Some((entry, _))) =
            (symbols.arrays.get(array), symbols.arrays.get(copy.as_str()))
        else {
            return Err(Unsupported(format!("no symbols for `{array}`")));
        };
        let entry_name = entry.name();
        let mut seen = HashSet::new();
        let mut reads: Vec<Vec<Int>> = Vec::new();
        let mut stack = roots.clone();
        while let Some(t) = stack.pop() {
            if !seen.insert(t.clone()) {
                continue;
            }
            if t.is_app() {
                let children = t.children();
                if t.decl().name() == entry_name {
                    reads.push(children.iter().filter_map(|c| c.as_int()).collect());
                }
                stack.extend(children);
            }
        }
        for k in reads {
            let args: Vec<&dyn Ast> = k.iter().map(|i| i as &dyn Ast).collect();
            let same = Ast::eq(&current.apply(&args), entry.apply(&args));
            out.push(written(&snapshot.c_loop, array, &k)? | same);
        }
    }
    Ok(out)
}

/// Whether some iteration of `l` before the current one (its iterator is
/// the symbol of the same name) writes element `k` of `array`, ignoring
/// guards.
fn written(l: &Loop, array: &str, k: &[Int]) -> Result<Bool, Unsupported> {
    let current = Int::new_const(l.iter.as_str());
    let earlier = Int::new_const(format!("{}!earlier", l.iter));
    let mut env = HashMap::new();
    env.insert(l.iter.clone(), earlier.clone());
    let range = earlier.ge(affine_in(&l.start, &env)) & earlier.lt(&current);
    let mut any = Bool::from_bool(false);
    writes_in(
        &l.body,
        array,
        k,
        &mut env,
        &mut vec![earlier],
        range,
        &mut any,
    );
    Ok(any)
}

/// Adds to `any` one `exists` per write of `array[k]` in `body`.
fn writes_in(
    body: &[loop_ir::Stmt],
    array: &str,
    k: &[Int],
    env: &mut HashMap<String, Int>,
    bound: &mut Vec<Int>,
    range: Bool,
    any: &mut Bool,
) {
    for s in body {
        match s {
            loop_ir::Stmt::Loop(inner) => {
                let it = Int::new_const(format!("{}!inner", inner.iter));
                let (lo, hi) = (affine_in(&inner.start, env), affine_in(&inner.end, env));
                // Over the values between start and end, whatever the step.
                let r = if inner.step > 0 {
                    it.ge(&lo) & it.lt(&hi)
                } else {
                    it.le(&lo) & it.gt(&hi)
                };
                env.insert(inner.iter.clone(), it.clone());
                bound.push(it);
                writes_in(&inner.body, array, k, env, bound, range.clone() & r, any);
                bound.pop();
                env.remove(&inner.iter);
            }
            loop_ir::Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                writes_in(then_body, array, k, env, bound, range.clone(), any);
                writes_in(else_body, array, k, env, bound, range.clone(), any);
            }
            loop_ir::Stmt::Assign {
                target: LValue::Element {
                    array: a, index, ..
                },
                ..
            } if a == array => {
                let mut hit = range.clone();
                for (kp, ip) in k.iter().zip(index) {
                    hit &= kp.eq(affine_in(ip, env));
                }
                let vars: Vec<&dyn Ast> = bound.iter().map(|b| b as &dyn Ast).collect();
                *any = any.clone() | exists_const(&vars, &[], &hit);
            }
            _ => {}
        }
    }
}
