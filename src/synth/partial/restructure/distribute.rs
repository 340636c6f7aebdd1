//! `distribute`: `for i { S1; S2; … }` becomes `for i { S1 }; for i { S2 };
//! …` (inside a loop around it alone, too: `for r { for i { S1; S2 } }`)
//! when every pair of accesses in two different statements touches one
//! element only within one iteration (or never), so running all of S1
//! before all of S2 reads and writes what the C does.
//!
//! A local scalar the loop privatises (every iteration writes it before
//! reading it, and nothing after the loop reads the last value) is first
//! expanded into a vector along the loop, `s` becoming `s_i[i - start]`:
//! deriche's `ym1 = 0; for j { … ym1 … }` inside `for i`. A scalar that
//! only one statement touches (an accumulator, `sum += y[i]` after
//! `y[i] = exp(x[i])`) needs no expansion: its statement's loop carries it.

use tenslift_frontend::ir::{
    self as loop_ir, Affine, ArrayInfo, ExprKind, Kernel, LValue, Local, LocalKind, Loop, Storage,
};

use super::{LoopSite, Restructured, Restructuring};
use crate::synth::partial::dependence::{difference, separated};
use crate::synth::stencil;
use tenslift_frontend::ir_rewrite::{iterators, rewrite_stmt, Rewrite};

pub struct Distribute;

impl Restructuring for Distribute {
    fn name(&self) -> &'static str {
        "distribute"
    }

    fn summary(&self) -> &'static str {
        "a loop whose statements depend on one another only within an iteration becomes one loop per statement, the scalars it privatises expanded along it (a perfect nest of such loops distributes as a whole, its scalars expanded along every loop of it; failing that, a loop around one such loop alone distributes that loop inside it)"
    }

    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured> {
        let l = site.l;
        if l.body.len() < 2 {
            return distribute_nest(site).or_else(|| distribute_inner(site));
        }
        let mut l = l.clone();
        let mut locals = Vec::new();
        for s in site.scalars {
            if !writes(&l.body, s) {
                continue;
            }
            // A scalar that one statement alone reads and writes (an
            // accumulator, `sum += y[i]`) stays as it is: that statement's
            // own loop carries it, in the C's order.
            if touching(&l.body, s) == 1 {
                continue;
            }
            let expanded = expand(&l, s, site)?;
            l = expanded.0;
            locals.push(expanded.1);
        }
        if !distributable(&l, site) {
            return None;
        }
        let stmts = l
            .body
            .iter()
            .map(|s| {
                loop_ir::Stmt::Loop(Loop {
                    body: vec![s.clone()],
                    ..l.clone()
                })
            })
            .collect();
        Some(Restructured {
            stmts,
            locals,
            requires: Vec::new(),
        })
    }
}

/// `for r { for i { S1; S2 } }` with the inner loop distributed inside the
/// outer one: `for r { for i { S1 }; for i { S2 } }`, which then
/// distributes in turn (llm.c's softmax rows: `p[i] = exp(l[i] - max);
/// sum += p[i]`, the exponentials of every row, then their sums, where
/// the inner loop alone would be kept around vectorised rows).
fn distribute_inner(site: &LoopSite<'_>) -> Option<Restructured> {
    let [loop_ir::Stmt::Loop(inner)] = site.l.body.as_slice() else {
        return None;
    };
    let done = Distribute.apply(&LoopSite { l: inner, ..*site })?;
    Some(Restructured {
        stmts: vec![loop_ir::Stmt::Loop(Loop {
            body: done.stmts,
            ..site.l.clone()
        })],
        locals: done.locals,
        requires: done.requires,
    })
}

/// Most loops of a perfect nest distributed together.
const MAX_NEST: usize = 3;

/// `for b { for g { S1; S2 } }`, a perfect nest of loops whose trip counts
/// are sizes, becomes `for b { for g { S1 } }; for b { for g { S2 } }` when
/// two statements touch one element only within one iteration of the whole
/// nest; the scalars the innermost body privatises are expanded along
/// every loop of the nest (`sum` becoming `sum_g[b][g]`). darknet's
/// `softmax_cpu` runs its row helper over batches and groups: distributed
/// inside `b` alone, `sum_g[g]` would still tie `b`'s iterations together.
fn distribute_nest(site: &LoopSite<'_>) -> Option<Restructured> {
    let mut nest = vec![site.l];
    while let [loop_ir::Stmt::Loop(inner)] = nest.last()?.body.as_slice() {
        nest.push(inner);
    }
    let innermost = *nest.last()?;
    let unit_steps = nest.iter().all(|l| l.step == 1);
    if nest.len() < 2 || nest.len() > MAX_NEST || innermost.body.len() < 2 || !unit_steps {
        return None;
    }
    let mut body = innermost.body.clone();
    let mut locals = Vec::new();
    for s in site.scalars {
        if !writes(&body, s) || touching(&body, s) == 1 {
            continue;
        }
        if classify(&body, s) != Use::Write || live_after(&site.kernel.body, &site.l.iter, s) {
            return None;
        }
        let (expanded, local) = expand_along(&body, s, &nest, site)?;
        body = expanded;
        locals.push(local);
    }
    let wrap = |stmt: &loop_ir::Stmt| {
        nest.iter().rev().fold(stmt.clone(), |inside, l| {
            loop_ir::Stmt::Loop(Loop {
                body: vec![inside],
                ..(*l).clone()
            })
        })
    };
    let stmts: Vec<loop_ir::Stmt> = body.iter().map(wrap).collect();
    let iters: Vec<&str> = nest.iter().map(|l| l.iter.as_str()).collect();
    nest_distributable(&stmts, &iters).then_some(Restructured {
        stmts,
        locals,
        requires: Vec::new(),
    })
}

/// `body` with the scalar `s` expanded along every loop of `nest` (`s_bt`
/// indexed `[b - b0][t - t0]`), and the new local; `None` when a trip count
/// is not a size expression.
fn expand_along(
    body: &[loop_ir::Stmt],
    s: &str,
    nest: &[&Loop],
    site: &LoopSite<'_>,
) -> Option<(Vec<loop_ir::Stmt>, Local)> {
    let mut names = Vec::new();
    iterators(&site.kernel.body, &mut names);
    let mut dims = Vec::new();
    let mut at = Vec::new();
    for l in nest {
        let trips = difference(&l.end, &l.start);
        let sizes_only = trips
            .terms
            .keys()
            .all(|k| !names.contains(k) && !site.scope.iter().any(|n| &n.iter == k));
        if !sizes_only {
            return None;
        }
        dims.push(Some(trips));
        at.push(difference(&Affine::var(l.iter.clone()), &l.start));
    }
    let local = site.kernel.locals.iter().find(|x| x.name == s)?;
    let LocalKind::Array(info) = &local.kind else {
        return None;
    };
    let suffix: Vec<&str> = nest.iter().map(|l| l.iter.as_str()).collect();
    let name = fresh(site.kernel, &format!("{s}_{}", suffix.join("")));
    let expanded = Local {
        name: name.clone(),
        kind: LocalKind::Array(ArrayInfo {
            elem: info.elem,
            dims,
            storage: Storage::Declared,
        }),
        loc: local.loc.clone(),
    };
    let rewrite = Expand {
        from: s,
        to: &name,
        at,
    };
    let body = body.iter().map(|b| rewrite_stmt(b, &rewrite)).collect();
    Some((body, expanded))
}

/// Whether every two accesses of different nests in `stmts` sharing an
/// array (one of them a store) have, for each loop of the nest, a
/// dimension whose subscript is the same in both and steps with that loop
/// alone: then they touch one element only within one iteration of the
/// whole nest.
fn nest_distributable(stmts: &[loop_ir::Stmt], iters: &[&str]) -> bool {
    let Some(per_statement) = stmts
        .iter()
        .map(|s| stencil::accesses(s).ok())
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    let pinned = |x: &stencil::Access, y: &stencil::Access, iter: &str| {
        x.index.len() == y.index.len()
            && x.index.iter().zip(&y.index).any(|(a, b)| {
                a == b
                    && a.terms.get(iter).is_some_and(|c| *c != 0)
                    && x.loops
                        .iter()
                        .all(|l| l.iter == iter || !a.terms.contains_key(&l.iter))
            })
    };
    per_statement.iter().enumerate().all(|(k, first)| {
        per_statement[k + 1..].iter().all(|second| {
            first.iter().all(|x| {
                second
                    .iter()
                    .filter(|y| y.array == x.array && (x.is_store || y.is_store))
                    .all(|y| iters.iter().all(|it| pinned(x, y, it)))
            })
        })
    })
}

/// Whether any two accesses of different statements of `l` that share an
/// array (one of them a write) touch one element only within an iteration.
fn distributable(l: &Loop, site: &LoopSite<'_>) -> bool {
    let per_statement: Option<Vec<Vec<stencil::Access>>> = l
        .body
        .iter()
        .map(|s| {
            let alone = loop_ir::Stmt::Loop(Loop {
                body: vec![s.clone()],
                ..l.clone()
            });
            stencil::accesses(&alone).ok()
        })
        .collect();
    let Some(per_statement) = per_statement else {
        return false;
    };
    for (a, first) in per_statement.iter().enumerate() {
        for second in &per_statement[a + 1..] {
            for x in first {
                for y in second.iter().filter(|y| y.array == x.array) {
                    let ordered = if x.is_store { (x, y) } else { (y, x) };
                    if (x.is_store || y.is_store)
                        && !separated(ordered.0, ordered.1, &l.iter, site.scope)
                    {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// `l` with the former scalar `s` expanded along it, and the new local;
/// `None` when `s` is not private to the loop or its trip count is not a
/// size expression.
fn expand(l: &Loop, s: &str, site: &LoopSite<'_>) -> Option<(Loop, Local)> {
    if classify(&l.body, s) != Use::Write || live_after(&site.kernel.body, &l.iter, s) {
        return None;
    }
    let (body, expanded) = expand_along(&l.body, s, &[l], site)?;
    Some((Loop { body, ..l.clone() }, expanded))
}

/// A name no parameter, local or iterator of `kernel` has.
fn fresh(kernel: &Kernel, base: &str) -> String {
    let mut taken: Vec<String> = kernel.params.iter().map(|p| p.name.clone()).collect();
    taken.extend(kernel.locals.iter().map(|l| l.name.clone()));
    iterators(&kernel.body, &mut taken);
    crate::synth::partial::first_free_name(base, &taken)
}

/// `from[0]` read and written as `to[at…]`.
struct Expand<'a> {
    from: &'a str,
    to: &'a str,
    at: Vec<Affine>,
}

impl Rewrite for Expand<'_> {
    fn expr(&self, e: &loop_ir::Expr) -> Option<loop_ir::Expr> {
        match &e.kind {
            ExprKind::Load { array, .. } if array == self.from => Some(loop_ir::Expr {
                ty: e.ty,
                kind: ExprKind::Load {
                    array: self.to.to_string(),
                    index: self.at.clone(),
                },
            }),
            _ => None,
        }
    }

    fn lvalue(&self, lv: LValue) -> LValue {
        match lv {
            LValue::Element { array, ty, .. } if array == self.from => LValue::Element {
                array: self.to.to_string(),
                index: self.at.clone(),
                ty,
            },
            other => other,
        }
    }
}

/// What a statement sequence does first with a one-element local: reads
/// the value it had before, surely overwrites it, or neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    Read,
    Write,
    Neither,
}

fn classify(stmts: &[loop_ir::Stmt], s: &str) -> Use {
    for stmt in stmts {
        match classify_one(stmt, s) {
            Use::Neither => continue,
            other => return other,
        }
    }
    Use::Neither
}

fn classify_one(stmt: &loop_ir::Stmt, s: &str) -> Use {
    match stmt {
        loop_ir::Stmt::Assign { target, value, .. } => {
            if reads(value, s) {
                Use::Read
            } else if matches!(target, LValue::Element { array, .. } if array == s) {
                Use::Write
            } else {
                Use::Neither
            }
        }
        // A loop may run no iteration: it never surely overwrites.
        loop_ir::Stmt::Loop(l) => match classify(&l.body, s) {
            Use::Read => Use::Read,
            _ => Use::Neither,
        },
        loop_ir::Stmt::If {
            cond,
            then_body,
            else_body,
            ..
        } => {
            if reads(cond, s) {
                return Use::Read;
            }
            match (classify(then_body, s), classify(else_body, s)) {
                (Use::Read, _) | (_, Use::Read) => Use::Read,
                (Use::Write, Use::Write) => Use::Write,
                _ => Use::Neither,
            }
        }
        loop_ir::Stmt::Return { value, .. } => {
            if reads(value, s) {
                Use::Read
            } else {
                Use::Neither
            }
        }
    }
}

/// Whether `e` loads `s` (an array or a former scalar).
pub(super) fn reads(e: &loop_ir::Expr, s: &str) -> bool {
    match &e.kind {
        ExprKind::Load { array, .. } => array == s,
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => reads(arg, s),
        ExprKind::Binary { lhs, rhs, .. } => reads(lhs, s) || reads(rhs, s),
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => reads(cond, s) || reads(then_value, s) || reads(else_value, s),
        ExprKind::Call { args, .. } => args.iter().any(|a| reads(a, s)),
        _ => false,
    }
}

/// How many statements of `stmts` read or write the scalar `s`.
fn touching(stmts: &[loop_ir::Stmt], s: &str) -> usize {
    stmts
        .iter()
        .filter(|stmt| {
            let one = std::slice::from_ref(*stmt);
            writes(one, s) || classify(one, s) == Use::Read || reads_anywhere(stmt, s)
        })
        .count()
}

/// Whether `stmt` reads `s` anywhere (a condition, a value, an index).
fn reads_anywhere(stmt: &loop_ir::Stmt, s: &str) -> bool {
    match stmt {
        loop_ir::Stmt::Assign { target, value, .. } => {
            reads(value, s)
                || matches!(target, LValue::Element { index, .. } if index.iter().any(|a| a.terms.contains_key(s)))
        }
        loop_ir::Stmt::Loop(l) => l.body.iter().any(|b| reads_anywhere(b, s)),
        loop_ir::Stmt::If {
            cond,
            then_body,
            else_body,
            ..
        } => {
            reads(cond, s)
                || then_body.iter().any(|b| reads_anywhere(b, s))
                || else_body.iter().any(|b| reads_anywhere(b, s))
        }
        loop_ir::Stmt::Return { value, .. } => reads(value, s),
    }
}

/// Whether any of the statements stores into `s` (an array or a former
/// scalar: the driver's locals are arrays).
pub(super) fn writes(stmts: &[loop_ir::Stmt], s: &str) -> bool {
    stmts.iter().any(|stmt| match stmt {
        loop_ir::Stmt::Assign { target, .. } => {
            matches!(target, LValue::Element { array, .. } if array == s)
        }
        loop_ir::Stmt::Loop(l) => writes(&l.body, s),
        loop_ir::Stmt::If {
            then_body,
            else_body,
            ..
        } => writes(then_body, s) || writes(else_body, s),
        loop_ir::Stmt::Return { .. } => false,
    })
}

/// Whether the value `s` has when loop `iter` ends may be read later: by
/// the statements after the loop, or by the next iterations of the loops
/// around it. `true` when the loop is not found once in `body`.
fn live_after(body: &[loop_ir::Stmt], iter: &str, s: &str) -> bool {
    let mut paths = Vec::new();
    find(body, iter, &mut Vec::new(), &mut paths);
    let [path] = paths.as_slice() else {
        return true;
    };
    // Innermost block first: what follows the loop there, then (for a
    // block that is a loop body) the next iteration from the top.
    for (block, at, in_loop) in path.iter().rev() {
        match classify(&block[at + 1..], s) {
            Use::Read => return true,
            Use::Write => return false,
            Use::Neither => {}
        }
        if *in_loop {
            match classify(&block[..=*at], s) {
                Use::Read => return true,
                Use::Write => return false,
                Use::Neither => {}
            }
        }
    }
    false
}

type Step<'a> = (&'a [loop_ir::Stmt], usize, bool);

/// Every path of blocks from `body` to a loop over `iter`: each block, the
/// position taken in it, and whether the block is a loop's body.
fn find<'a>(
    body: &'a [loop_ir::Stmt],
    iter: &str,
    path: &mut Vec<Step<'a>>,
    out: &mut Vec<Vec<Step<'a>>>,
) {
    let in_loop = path
        .last()
        .is_some_and(|(b, at, _)| matches!(b[*at], loop_ir::Stmt::Loop(_)));
    for (at, s) in body.iter().enumerate() {
        path.push((body, at, in_loop));
        match s {
            loop_ir::Stmt::Loop(l) if l.iter == iter => out.push(path.clone()),
            loop_ir::Stmt::Loop(l) => find(&l.body, iter, path, out),
            loop_ir::Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                find(then_body, iter, path, out);
                find(else_body, iter, path, out);
            }
            _ => {}
        }
        path.pop();
    }
}
