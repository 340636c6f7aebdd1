//! Where each array of the C is written: every assignment with the loops
//! around it, its position in the statement tree, and which of those loops
//! index the element (parallel) and which accumulate into it (reduction).
//! The invariant of a loop is derived from this and the lifted program.

use std::collections::HashMap;

use tenslift_frontend::ir::{Affine, LValue, Loop, Stmt};

use super::Unsupported;

/// A loop and its place in the statement tree.
#[derive(Clone, Debug)]
pub(crate) struct LoopInfo {
    pub iter: String,
    pub start: Affine,
    pub end: Affine,
    /// Indices from the kernel body down to this loop (an `if` adds its
    /// branch number).
    pub path: Vec<usize>,
}

/// One assignment to an array element.
#[derive(Clone, Debug)]
pub(crate) struct Write {
    pub loops: Vec<LoopInfo>,
    pub path: Vec<usize>,
    pub index: Vec<Affine>,
    /// For each loop: how it runs along an index component (`None` for a
    /// reduction loop).
    pub roles: Vec<Option<Role>>,
    pub value: tenslift_frontend::ir::Expr,
    pub elem: tenslift_frontend::ir::ScalarType,
}

/// How a loop runs along a write's index: component `pos` is
/// `step * iter + offset`, `step` a nonzero constant (`x[N - 1 - i]` walks
/// backwards, `x[2*i + 1]` every other element), `offset` a constant plus
/// sizes (no loop counter).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Role {
    pub pos: usize,
    pub step: i64,
    pub offset: Affine,
}

impl Write {
    pub fn reduction_loops(&self) -> Vec<usize> {
        (0..self.loops.len())
            .filter(|m| self.roles[*m].is_none())
            .collect()
    }
}

/// Every array write of a kernel, by array name.
pub(crate) fn array_writes(body: &[Stmt]) -> Result<HashMap<String, Vec<Write>>, Unsupported> {
    let mut out: HashMap<String, Vec<Write>> = HashMap::new();
    walk(body, &mut Vec::new(), &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn walk(
    body: &[Stmt],
    loops: &mut Vec<LoopInfo>,
    path: &mut Vec<usize>,
    out: &mut HashMap<String, Vec<Write>>,
) -> Result<(), Unsupported> {
    for (k, stmt) in body.iter().enumerate() {
        path.push(k);
        match stmt {
            Stmt::Loop(l) => {
                loops.push(loop_info(l, path));
                walk(&l.body, loops, path, out)?;
                loops.pop();
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                for (b, branch) in [then_body, else_body].into_iter().enumerate() {
                    path.push(b);
                    walk(branch, loops, path, out)?;
                    path.pop();
                }
            }
            Stmt::Assign {
                target: LValue::Element { array, index, ty },
                value,
                ..
            } => {
                let counters: Vec<&str> = loops.iter().map(|l| l.iter.as_str()).collect();
                let roles = loops
                    .iter()
                    .map(|l| role(&l.iter, index, &counters))
                    .collect::<Result<Vec<_>, _>>()?;
                out.entry(array.clone()).or_default().push(Write {
                    loops: loops.clone(),
                    path: path.clone(),
                    index: index.clone(),
                    roles,
                    value: value.clone(),
                    elem: *ty,
                });
            }
            _ => {}
        }
        path.pop();
    }
    Ok(())
}

pub(crate) fn loop_info(l: &Loop, path: &[usize]) -> LoopInfo {
    LoopInfo {
        iter: l.iter.clone(),
        start: l.start.clone(),
        end: l.end.clone(),

        path: path.to_vec(),
    }
}

/// The index component loop `iter` runs along: one of the form
/// `step * iter + offset` with no other loop counter in it. A loop absent
/// from the index accumulates.
fn role(iter: &str, index: &[Affine], counters: &[&str]) -> Result<Option<Role>, Unsupported> {
    let mut found = None;
    for (pos, a) in index.iter().enumerate() {
        let others_free = a
            .terms
            .keys()
            .all(|t| t == iter || !counters.contains(&t.as_str()));
        match a.terms.get(iter) {
            None | Some(0) => {}
            Some(&step) if others_free => {
                if found.is_none() {
                    let mut offset = a.clone();
                    offset.terms.remove(iter);
                    found = Some(Role { pos, step, offset });
                }
            }
            Some(_) => {
                if found.is_none() {
                    return Err(Unsupported(format!(
                        "the write index `{a}` mixes loop `{iter}` with other terms"
                    )));
                }
            }
        }
    }
    Ok(found)
}

/// Scalars assigned anywhere in `body`.
pub(crate) fn written_locals(body: &[Stmt], out: &mut Vec<String>) {
    for stmt in body {
        match stmt {
            Stmt::Loop(l) => written_locals(&l.body, out),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                written_locals(then_body, out);
                written_locals(else_body, out);
            }
            Stmt::Assign {
                target: LValue::Scalar { name, .. },
                ..
            } if !out.contains(name) => out.push(name.clone()),
            _ => {}
        }
    }
}

/// Whether local `name` may be read in `body` before being assigned
/// (it then carries a value from one iteration to the next).
pub(crate) fn live_on_entry(body: &[Stmt], name: &str) -> bool {
    for stmt in body {
        match stmt {
            Stmt::Assign { target, value, .. } => {
                if reads(value, name) {
                    return true;
                }
                if let LValue::Scalar { name: n, .. } = target {
                    if n == name {
                        return false;
                    }
                }
            }
            // A nested loop that defines the local before reading it in
            // every iteration does not make it live (its value after the
            // loop is judged by what follows).
            Stmt::Loop(l) => {
                if live_on_entry(&l.body, name) {
                    return true;
                }
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                if reads(cond, name)
                    || live_on_entry(then_body, name)
                    || live_on_entry(else_body, name)
                {
                    return true;
                }
                if defines(then_body, name) && defines(else_body, name) {
                    return false;
                }
            }
            Stmt::Return { value, .. } => return reads(value, name),
        }
    }
    false
}

/// Whether `body` assigns local `name` on every path at its top level.
fn defines(body: &[Stmt], name: &str) -> bool {
    body.iter().any(
        |s| matches!(s, Stmt::Assign { target: LValue::Scalar { name: n, .. }, .. } if n == name),
    )
}

pub(crate) fn reads(e: &tenslift_frontend::ir::Expr, name: &str) -> bool {
    use tenslift_frontend::ir::ExprKind as K;
    match &e.kind {
        K::Var { name: n, .. } => n == name,
        K::IntLit { .. } | K::FloatLit { .. } | K::Load { .. } => false,
        K::Unary { arg, .. } | K::Cast { arg } => reads(arg, name),
        K::Binary { lhs, rhs, .. } => reads(lhs, name) || reads(rhs, name),
        K::Select {
            cond,
            then_value,
            else_value,
        } => reads(cond, name) || reads(then_value, name) || reads(else_value, name),
        K::Call { args, .. } => args.iter().any(|a| reads(a, name)),
    }
}

/// The arrays an expression loads from.
pub(crate) fn loads(e: &tenslift_frontend::ir::Expr, out: &mut Vec<String>) {
    use tenslift_frontend::ir::ExprKind as K;
    match &e.kind {
        K::Load { array, .. } => {
            if !out.contains(array) {
                out.push(array.clone());
            }
        }
        K::Var { .. } | K::IntLit { .. } | K::FloatLit { .. } => {}
        K::Unary { arg, .. } | K::Cast { arg } => loads(arg, out),
        K::Binary { lhs, rhs, .. } => {
            loads(lhs, out);
            loads(rhs, out);
        }
        K::Select {
            cond,
            then_value,
            else_value,
        } => {
            loads(cond, out);
            loads(then_value, out);
            loads(else_value, out);
        }
        K::Call { args, .. } => args.iter().for_each(|a| loads(a, out)),
    }
}

/// The arrays read by the assignments to local `name` in `body`.
pub(crate) fn local_reads(body: &[Stmt], name: &str, out: &mut Vec<String>) {
    for stmt in body {
        match stmt {
            Stmt::Loop(l) => local_reads(&l.body, name, out),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                local_reads(then_body, name, out);
                local_reads(else_body, name, out);
            }
            Stmt::Assign {
                target: LValue::Scalar { name: n, .. },
                value,
                ..
            } if n == name => loads(value, out),
            _ => {}
        }
    }
}

/// Local scalars assigned exactly once, by a value that reads no local
/// scalar and no array the kernel writes (`double a = A[i];`): such a local
/// equals its definition wherever the definition's loops have counters.
pub(crate) fn scalar_definitions(
    kernel: &tenslift_frontend::ir::Kernel,
) -> Vec<(String, tenslift_frontend::ir::Expr)> {
    let mut assigned: Vec<(String, tenslift_frontend::ir::Expr)> = Vec::new();
    scalar_assignments(&kernel.body, &mut assigned);
    let written = array_writes(&kernel.body)
        .map(|w| w.into_keys().collect::<Vec<_>>())
        .unwrap_or_default();
    let locals: Vec<&str> = kernel.locals.iter().map(|l| l.name.as_str()).collect();
    assigned
        .iter()
        .filter(|(name, value)| {
            let once = assigned.iter().filter(|(n, _)| n == name).count() == 1;
            let mut arrays = Vec::new();
            loads(value, &mut arrays);
            once && locals.contains(&name.as_str())
                && !locals.iter().any(|l| reads(value, l))
                && !arrays.iter().any(|a| written.contains(a))
        })
        .cloned()
        .collect()
}

fn scalar_assignments(body: &[Stmt], out: &mut Vec<(String, tenslift_frontend::ir::Expr)>) {
    for stmt in body {
        match stmt {
            Stmt::Loop(l) => scalar_assignments(&l.body, out),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                scalar_assignments(then_body, out);
                scalar_assignments(else_body, out);
            }
            Stmt::Assign {
                target: LValue::Scalar { name, .. },
                value,
                ..
            } => out.push((name.clone(), value.clone())),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn affine(terms: &[(&str, i64)], constant: i64) -> Affine {
        let mut a = Affine::constant(constant);
        for (name, c) in terms {
            a.terms.insert(name.to_string(), *c);
        }
        a
    }

    #[test]
    fn a_loop_runs_forwards_or_backwards_along_one_component() {
        let counters = ["i", "j"];
        let forward = role(
            "i",
            &[affine(&[("j", 1)], 0), affine(&[("i", 1)], 2)],
            &counters,
        );
        assert_eq!(
            forward.ok().flatten(),
            Some(Role {
                pos: 1,
                step: 1,
                offset: Affine::constant(2)
            })
        );
        // fir_delay's `x[N - i - 1]`: backwards, the size in the offset.
        let backward = role("i", &[affine(&[("i", -1), ("N", 1)], -1)], &counters);
        assert_eq!(
            backward.ok().flatten(),
            Some(Role {
                pos: 0,
                step: -1,
                offset: affine(&[("N", 1)], -1)
            })
        );
    }

    #[test]
    fn a_loop_may_stride_along_its_component() {
        // n_complex_updates' imaginary parts, `c[2*i + 1]`.
        let strided = role("i", &[affine(&[("i", 2)], 1)], &["i"]);
        assert_eq!(
            strided.ok().flatten(),
            Some(Role {
                pos: 0,
                step: 2,
                offset: Affine::constant(1)
            })
        );
    }

    #[test]
    fn a_component_mixing_two_counters_is_refused() {
        let counters = ["i", "j"];
        assert!(role("i", &[affine(&[("i", 1), ("j", 1)], 0)], &counters).is_err());
        assert_eq!(
            role("i", &[affine(&[("j", 1)], 0)], &counters)
                .ok()
                .flatten(),
            None
        );
    }
}
