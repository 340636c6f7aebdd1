//! Reusing a stored value: where one statement stores a value that
//! another statement of the same block computes again as part of its own
//! expression (equal in the saturated e-graph, not only in spelling), the
//! part is read back from the stored region instead.
//!
//! atax is the case that asked for it: its one loop nest gives
//! `y = matmul(matmul(x, transpose(A)), A)` and `tmp = matmul(A, x)`; the
//! rules put `matmul(x, transpose(A))` and `matmul(A, x)` in one class, so
//! `tmp` is stored first and `y = matmul(tmp, A)`: two passes over `A`
//! instead of three (and no transposed copy of `A` in XLA).
//!
//! Statements are moved only within one block, and only where the moved
//! store sees the same values it saw in its old place: a store
//! `T[R] = E` moves up before statement `i` when nothing from `i` to its
//! old place writes what `E` reads, and nothing there reads or writes `T`
//! (the earlier statements now see `T` written). A store that already
//! comes first is reused where nothing between writes what `E` reads or
//! `T` itself. Each reuse replaces an operation by a read, so the pass
//! ends; the caller's acceptance check re-proves the program as for every
//! rewrite.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use egg::Id;
use tenslift_targets::{Expr, Op, Program, Stmt, Ty};

use super::lang::{add_expr, EGraph};
use crate::cost::kind_of;

/// Names a statement reads (array, `let` and loop variable leaves of
/// its expressions, nested loops included).
fn reads(stmt: &Stmt, out: &mut HashSet<Arc<str>>) {
    let mut leaf = |e: &Expr| {
        if let Op::Var(name) = e.op() {
            out.insert(name.clone());
        }
    };
    match stmt {
        Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => {
            value.walk_unique(&mut leaf)
        }
        Stmt::Loop { body, .. } => body.iter().for_each(|s| reads(s, out)),
        Stmt::Var { .. } => {}
    }
}

/// Names a statement binds or writes (a `var` declaration zero-fills).
fn writes(stmt: &Stmt, out: &mut HashSet<Arc<str>>) {
    match stmt {
        Stmt::Let { name, .. } | Stmt::Var { name, .. } => {
            out.insert(name.clone());
        }
        Stmt::Store { target, .. } => {
            out.insert(target.clone());
        }
        Stmt::Loop { body, .. } => body.iter().for_each(|s| writes(s, out)),
        Stmt::Return(_) => {}
    }
}

fn names(stmts: &[Stmt], of: fn(&Stmt, &mut HashSet<Arc<str>>)) -> HashSet<Arc<str>> {
    let mut out = HashSet::new();
    stmts.iter().for_each(|s| of(s, &mut out));
    out
}

/// The expression of a statement that has one.
fn value_of(stmt: &Stmt) -> Option<&Expr> {
    match stmt {
        Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => Some(value),
        _ => None,
    }
}

fn value_of_mut(stmt: &mut Stmt) -> Option<&mut Expr> {
    match stmt {
        Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => Some(value),
        _ => None,
    }
}

/// A store worth reusing: its target, the read of its region (of the
/// stored value's type), and the value.
struct Stored {
    target: Arc<str>,
    read: Expr,
    value: Expr,
}

fn stored(program: &Program, stmt: &Stmt) -> Option<Stored> {
    let Stmt::Store {
        target,
        region,
        value,
    } = stmt
    else {
        return None;
    };
    // A copy or a view costs nothing to recompute, a scalar one operation:
    // reading either back gains nothing.
    kind_of(value)?;
    if value.shape().is_empty() {
        return None;
    }
    let (dtype, shape) = program.writable(target)?;
    let whole = Expr::var(target, Ty::tensor(dtype, shape.to_vec()));
    let read = match region {
        Some(items) => Expr::new(Op::Slice(items.clone()), vec![whole]).ok()?,
        None => whole,
    };
    (read.ty() == value.ty()).then(|| Stored {
        target: target.clone(),
        read,
        value: value.clone(),
    })
}

/// `program`'s body with stored values shared in every block, and how
/// many expressions now read a stored value.
pub(super) fn share_stored(program: &Program, egraph: &mut EGraph) -> (Vec<Stmt>, usize) {
    let mut body = program.body.clone();
    let shared = share_block(program, &mut body, egraph, &mut HashMap::new());
    (body, shared)
}

fn share_block(
    program: &Program,
    block: &mut Vec<Stmt>,
    egraph: &mut EGraph,
    memo: &mut HashMap<Expr, Id>,
) -> usize {
    let mut shared = 0;
    for stmt in block.iter_mut() {
        if let Stmt::Loop { body, .. } = stmt {
            shared += share_block(program, body, egraph, memo);
        }
    }
    // Each success turns an operation into a read: the loop ends.
    while let Some(()) = share_once(program, block, egraph, memo) {
        shared += 1;
    }
    shared
}

/// The class of `e` in the saturated e-graph (added when it is not there:
/// a new class then, equal to nothing else).
fn class(egraph: &mut EGraph, memo: &mut HashMap<Expr, Id>, e: &Expr) -> Id {
    let id = add_expr(egraph, e, memo);
    egraph.find(id)
}

/// One reuse in `block`, if any applies.
fn share_once(
    program: &Program,
    block: &mut Vec<Stmt>,
    egraph: &mut EGraph,
    memo: &mut HashMap<Expr, Id>,
) -> Option<()> {
    for j in 0..block.len() {
        let Some(store) = stored(program, &block[j]) else {
            continue;
        };
        let want = class(egraph, memo, &store.value);
        for i in 0..block.len() {
            if i == j || !legal(block, i, j, &store) {
                continue;
            }
            let Some(value) = value_of(&block[i]) else {
                continue;
            };
            let new = Substitution {
                want,
                read: &store.read,
                done: HashMap::new(),
            }
            .apply(value, egraph, memo);
            if new == *value {
                continue;
            }
            *value_of_mut(&mut block[i])? = new;
            if j > i {
                let moved = block.remove(j);
                block.insert(i, moved);
            }
            return Some(());
        }
    }
    None
}

/// Whether statement `i` may read what statement `j` stores instead of
/// computing it (statement `j` moved up before `i` when it comes later).
fn legal(block: &[Stmt], i: usize, j: usize, store: &Stored) -> bool {
    let value_reads = {
        let mut r = HashSet::new();
        reads(&block[j], &mut r);
        r
    };
    let (written, read) = if j < i {
        // j, ..., i-1 run between the store's value and the read; the
        // store itself writes T, which must not feed its own value.
        (names(&block[j..i], writes), HashSet::new())
    } else {
        (names(&block[i..j], writes), names(&block[i..j], reads))
    };
    let target_free = if j < i {
        !names(&block[j + 1..i], writes).contains(&store.target)
    } else {
        !written.contains(&store.target) && !read.contains(&store.target)
    };
    target_free && value_reads.iter().all(|n| !written.contains(n))
}

/// Replaces every subexpression in class `want` by `read`, each
/// distinct subexpression visited once (lifted programs share subtrees).
struct Substitution<'r> {
    want: Id,
    read: &'r Expr,
    done: HashMap<Expr, Expr>,
}

impl Substitution<'_> {
    fn apply(&mut self, e: &Expr, egraph: &mut EGraph, memo: &mut HashMap<Expr, Id>) -> Expr {
        if let Some(done) = self.done.get(e) {
            return done.clone();
        }
        let new = if kind_of(e).is_some()
            && e.ty() == self.read.ty()
            && class(egraph, memo, e) == self.want
        {
            self.read.clone()
        } else {
            let args: Vec<Expr> = e
                .args()
                .iter()
                .map(|a| self.apply(a, egraph, memo))
                .collect();
            if args.iter().zip(e.args()).all(|(a, b)| a == b) {
                e.clone()
            } else {
                // Same types in, same type out: rebuilding cannot fail; if
                // it did, the part stays as it was.
                Expr::new(e.op().clone(), args).unwrap_or_else(|_| e.clone())
            }
        };
        self.done.insert(e.clone(), new.clone());
        new
    }
}
