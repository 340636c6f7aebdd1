//! Storage layout of 2-D arrays: the emitter-side lowering that stores an
//! array transposed when the program's kept loops only walk its columns.
//!
//! Partial lifting keeps a recurrence's loop and vectorises the loop the C
//! nests around or inside it. When the recurrence runs along a row of a
//! row-major array (adi's `p[i][j]` from `p[i][j-1]`, deriche's first
//! filter along `j`), each step of the kept loop reads and writes a
//! *column*: one element per row, a cache line each. Every framework then
//! gathers and scatters strided elements in every iteration (adi at
//! PolyBench LARGE: 2 million such steps).
//!
//! [`lower_program`] finds each 2-D array that
//! - kept loops access by columns (`X[a:b, j]`) at least once, and
//! - kept loops never access by rows, blocks or as a whole (those would
//!   turn strided in their turn),
//!
//! and computes on `X_t`, its transpose, instead: a fresh local array filled
//! from `X` on entry (an `in`/`inout` parameter), every access of `X` turned
//! into the access of `X_t` with the two indices swapped (a column becomes a
//! contiguous row), and for an `inout` parameter `X = transpose(X_t)` on
//! exit. A local array (`var`) is simply declared transposed. The two copies
//! cost two passes over the array once per call.
//!
//! Like [`crate::narrow`], this is an emitter lowering: the program the
//! synthesizer found and the verifier proves is unchanged, and the lowered
//! program is valid TensIR with the same values (the tests run both through
//! the interpreter), so every emitter renders it as it would any program.
//! An `out` parameter is left alone by this rule: the program may write only
//! part of it, and the rest must keep the caller's values.
//!
//! An array that kept loops reach by rows too (deriche's `y1`: its first
//! filter runs along the rows, its second along the columns) still gets a
//! transposed copy for one loop at the top level that writes a column per
//! iteration and reads only what the same iteration wrote ([`phase`]): the
//! loop fills `X_t` row by row, and one transposed copy after it writes the
//! columns the loop covered into `X`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use crate::expr::{Expr, Ty, TypeError};
use crate::ops::{Op, SliceItem};
use crate::program::{Access, Program, Stmt};

/// The shape of one access to a 2-D array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access2 {
    /// `X[a:b, j]`: one element per row.
    Column,
    /// `X[i, a:b]`: contiguous already.
    Row,
    /// `X[i, j]`.
    Element,
    /// `X[a:b, c:d]`, or `X` itself.
    Block,
}

fn classify(items: &[SliceItem]) -> Access2 {
    let index = |it: &SliceItem| matches!(it, SliceItem::Index(_));
    match (index(&items[0]), index(&items[1])) {
        (false, true) => Access2::Column,
        (true, false) => Access2::Row,
        (true, true) => Access2::Element,
        (false, false) => Access2::Block,
    }
}

/// What the walk learned about one candidate array.
#[derive(Default)]
struct Uses {
    columns_in_loops: usize,
    /// A use the transposed layout would make worse or cannot express.
    excluded: bool,
}

/// `program` with each array that only its kept loops' columns touch stored
/// transposed (see the module doc); `program` itself when no array
/// qualifies or the rewrite cannot be built.
pub fn lower_program(program: &Program) -> Program {
    let mut uses: BTreeMap<Arc<str>, Uses> = candidates(program)
        .into_iter()
        .map(|n| (n, Uses::default()))
        .collect();
    if uses.is_empty() || !program.has_loops() {
        return program.clone();
    }
    survey(&program.body, 0, &mut uses);
    let chosen: HashSet<Arc<str>> = uses
        .into_iter()
        .filter(|(_, u)| u.columns_in_loops > 0 && !u.excluded)
        .map(|(n, _)| n)
        .collect();
    if chosen.is_empty() {
        return phase::lower_phases(program);
    }
    let whole = match Transposer::new(program, &chosen).program(program) {
        Ok(lowered) if lowered.validate().is_ok() => lowered,
        _ => program.clone(),
    };
    phase::lower_phases(&whole)
}

/// The 2-D arrays the lowering may move: `in`/`inout` parameters and the
/// program's local arrays.
fn candidates(program: &Program) -> Vec<Arc<str>> {
    typed_arrays(program)
        .into_iter()
        .filter(|(_, t, access)| t.rank() == 2 && *access != Some(Access::Out))
        .map(|(n, _, _)| n)
        .collect()
}

/// Records every access of a candidate in `body`, `depth` loops deep.
fn survey(body: &[Stmt], depth: usize, uses: &mut BTreeMap<Arc<str>, Uses>) {
    for s in body {
        match s {
            Stmt::Let { value, .. } | Stmt::Return(value) => survey_expr(value, depth, uses),
            Stmt::Store {
                target,
                region,
                value,
            } => {
                survey_expr(value, depth, uses);
                if let Some(u) = uses.get_mut(target) {
                    record(u, region.as_deref().map_or(Access2::Block, classify), depth);
                }
            }
            Stmt::Loop { body, .. } => survey(body, depth + 1, uses),
            Stmt::Var { .. } => {}
        }
    }
}

fn record(u: &mut Uses, kind: Access2, depth: usize) {
    match (kind, depth) {
        (Access2::Column, d) if d > 0 => u.columns_in_loops += 1,
        (Access2::Row | Access2::Block, d) if d > 0 => u.excluded = true,
        _ => {}
    }
}

fn survey_expr(e: &Expr, depth: usize, uses: &mut BTreeMap<Arc<str>, Uses>) {
    array_uses(e, &mut |name, items| {
        if let Some(u) = uses.get_mut(name) {
            let kind = match items {
                Some(items) if items.len() == 2 => classify(items),
                _ => Access2::Block,
            };
            record(u, kind, depth);
        }
    });
}

/// Calls `f` for each use of a variable in `e`, once per distinct node that
/// uses it (expressions share subtrees: a walk of every path could take
/// exponential time): with the slice items it is read through, or `None`
/// where the node reads the whole value.
/// What [`array_uses`] calls per use: the variable and the slice items.
type UseVisitor<'a> = dyn FnMut(&str, Option<&[SliceItem]>) + 'a;

fn array_uses(e: &Expr, f: &mut UseVisitor<'_>) {
    if let Op::Var(name) = e.op() {
        f(name, None);
    }
    e.walk_unique(&mut |node| {
        let through = match node.op() {
            Op::Slice(items) => Some(items.as_slice()),
            _ => None,
        };
        for a in node.args() {
            if let Op::Var(name) = a.op() {
                f(name, through);
            }
        }
    });
}

/// Rewrites accesses of the chosen arrays into accesses of their
/// transposes.
struct Transposer {
    /// Chosen array -> (its transposed copy's name, that copy's type).
    moved: HashMap<Arc<str>, (Arc<str>, Ty)>,
    memo: HashMap<Expr, Expr>,
}

impl Transposer {
    fn new(program: &Program, chosen: &HashSet<Arc<str>>) -> Transposer {
        let typed = typed_arrays(program);
        let mut taken = names_in(program);
        let mut moved = HashMap::new();
        for (name, ty, _) in typed.into_iter().filter(|(n, _, _)| chosen.contains(n)) {
            let fresh = fresh_name(&format!("{name}_t"), &taken);
            taken.insert(fresh.clone());
            let shape = vec![ty.shape[1].clone(), ty.shape[0].clone()];
            moved.insert(name, (Arc::from(fresh), Ty::tensor(ty.dtype, shape)));
        }
        Transposer {
            moved,
            memo: HashMap::new(),
        }
    }

    fn program(&mut self, program: &Program) -> Result<Program, TypeError> {
        let mut body = Vec::new();
        let mut copy_back = Vec::new();
        for p in &program.params {
            let Some((t_name, t_ty)) = self.moved.get(&p.name).cloned() else {
                continue;
            };
            body.push(Stmt::Var {
                name: t_name.clone(),
                ty: t_ty.clone(),
            });
            let from = transpose(Expr::var(&p.name, p.ty()))?;
            body.push(whole_store(&t_name, from));
            if p.access() == Some(Access::InOut) {
                copy_back.push(whole_store(&p.name, transpose(Expr::var(&t_name, t_ty))?));
            }
        }
        body.extend(self.block(&program.body)?);
        let at = match body.last() {
            Some(Stmt::Return(_)) => body.len() - 1,
            _ => body.len(),
        };
        body.splice(at..at, copy_back);
        Ok(Program {
            body,
            ..program.clone()
        })
    }

    fn block(&mut self, stmts: &[Stmt]) -> Result<Vec<Stmt>, TypeError> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Stmt, TypeError> {
        Ok(match s {
            Stmt::Let { name, value } => Stmt::Let {
                name: name.clone(),
                value: self.expr(value)?,
            },
            Stmt::Return(v) => Stmt::Return(self.expr(v)?),
            Stmt::Var { name, ty } => match self.moved.get(name) {
                Some((t_name, t_ty)) => Stmt::Var {
                    name: t_name.clone(),
                    ty: t_ty.clone(),
                },
                None => Stmt::Var {
                    name: name.clone(),
                    ty: ty.clone(),
                },
            },
            Stmt::Loop {
                var,
                start,
                stop,
                body,
            } => Stmt::Loop {
                var: var.clone(),
                start: start.clone(),
                stop: stop.clone(),
                body: self.block(body)?,
            },
            Stmt::Store {
                target,
                region,
                value,
            } => self.store(target, region.as_deref(), value)?,
        })
    }

    fn store(
        &mut self,
        target: &Arc<str>,
        region: Option<&[SliceItem]>,
        value: &Expr,
    ) -> Result<Stmt, TypeError> {
        let value = self.expr(value)?;
        let Some((t_name, _)) = self.moved.get(target).cloned() else {
            return Ok(Stmt::Store {
                target: target.clone(),
                region: region.map(<[SliceItem]>::to_vec),
                value,
            });
        };
        let items = region.map_or_else(|| vec![SliceItem::Full, SliceItem::Full], <[_]>::to_vec);
        // A store's value has its region's type: a block's turns with it, a
        // column's vector is the transposed array's row.
        let value = if classify(&items) == Access2::Block {
            transpose(value)?
        } else {
            value
        };
        Ok(Stmt::Store {
            target: t_name,
            region: Some(vec![items[1].clone(), items[0].clone()]),
            value,
        })
    }

    fn expr(&mut self, e: &Expr) -> Result<Expr, TypeError> {
        if let Some(done) = self.memo.get(e) {
            return Ok(done.clone());
        }
        let out = self.expr_node(e)?;
        self.memo.insert(e.clone(), out.clone());
        Ok(out)
    }

    fn expr_node(&mut self, e: &Expr) -> Result<Expr, TypeError> {
        let moved = |name: &Arc<str>| self.moved.get(name).cloned();
        match (e.op(), e.args().first().map(|a| a.op())) {
            (Op::Slice(items), Some(Op::Var(name))) if items.len() == 2 => {
                if let Some((t_name, t_ty)) = moved(name) {
                    let swapped = vec![items[1].clone(), items[0].clone()];
                    let read = Expr::new(Op::Slice(swapped), vec![Expr::var(&t_name, t_ty)])?;
                    return if read.ty().rank() == 2 {
                        transpose(read)
                    } else {
                        Ok(read)
                    };
                }
            }
            (Op::Var(name), _) => {
                if let Some((t_name, t_ty)) = moved(name) {
                    return transpose(Expr::var(&t_name, t_ty));
                }
                return Ok(e.clone());
            }
            _ => {}
        }
        if e.args().is_empty() {
            return Ok(e.clone());
        }
        let args = e
            .args()
            .iter()
            .map(|a| self.expr(a))
            .collect::<Result<Vec<_>, _>>()?;
        if args.iter().zip(e.args()).all(|(a, b)| a == b) {
            return Ok(e.clone());
        }
        Expr::new(e.op().clone(), args)
    }
}

fn transpose(e: Expr) -> Result<Expr, TypeError> {
    Expr::new(Op::Transpose(vec![1, 0]), vec![e])
}

/// `target[:, :] = value`: a copy into the array, never a rebinding.
fn whole_store(target: &Arc<str>, value: Expr) -> Stmt {
    Stmt::Store {
        target: target.clone(),
        region: Some(vec![SliceItem::Full, SliceItem::Full]),
        value,
    }
}

/// The program's array parameters (with their access) and `var` locals
/// (no access), with their types.
fn typed_arrays(program: &Program) -> Vec<(Arc<str>, Ty, Option<Access>)> {
    let params = program.params.iter().filter_map(|p| {
        p.access()
            .map(|access| (p.name.clone(), p.ty(), Some(access)))
    });
    let locals = program
        .vars()
        .into_iter()
        .map(|(n, t)| (n.clone(), t.clone(), None));
    params.chain(locals).collect()
}

/// Every name `program` binds: parameters, locals, `let`s, loop variables.
fn names_in(program: &Program) -> HashSet<String> {
    let mut taken: HashSet<String> = program.params.iter().map(|p| p.name.to_string()).collect();
    collect_loop_vars(&program.body, &mut taken);
    taken
}

fn collect_loop_vars(body: &[Stmt], out: &mut HashSet<String>) {
    for s in body {
        match s {
            Stmt::Loop { var, body, .. } => {
                out.insert(var.to_string());
                collect_loop_vars(body, out);
            }
            Stmt::Let { name, .. } | Stmt::Var { name, .. } => {
                out.insert(name.to_string());
            }
            Stmt::Store { .. } | Stmt::Return(_) => {}
        }
    }
}

fn fresh_name(base: &str, taken: &HashSet<String>) -> String {
    if !taken.contains(base) {
        return base.to_string();
    }
    (1..)
        .map(|k| format!("{base}{k}"))
        .find(|n| !taken.contains(n))
        .unwrap_or_else(|| base.to_string())
}

mod phase;

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
