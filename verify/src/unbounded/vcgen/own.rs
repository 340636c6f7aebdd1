//! An element's value read off the C itself ("own" definitions), for the
//! stages of an accumulation that the lifted program does not show: the
//! partial sum under a post statement that cannot be undone exactly
//! (`y[i] = alpha * tmp[i] + beta * y[i]` after `y[i] += B[i][j] * x[j]`),
//! and every stage but the last of a chain of post statements
//! (`s[j] /= n; s[j] = sqrt(s[j]); s[j] = s[j] <= eps ? 1 : s[j]`).
//!
//! The accumulation stage is `start ± Σ_{r ∈ [lo, t)} body(r)`, a range
//! function of its own with its unfold lemmas; the extensionality lemmas
//! relate it to the lifted program's sums where the last post statement
//! makes the element equal the lifted one. Every read in `body` or in a
//! post statement is the invariant's value at the moment the statement
//! runs (a point just before it), so reads of arrays written earlier, in
//! the same loop nest or before it, see what the C sees.

use std::collections::HashMap;
use std::rc::Rc;

use tenslift_frontend::ir::{BinaryOp, Expr, ExprKind};
use z3::ast::{Bool, Int};

use super::{convert, Base, Ctx, Exec, Frame, State};
use crate::domain::value::{self, V};
use crate::unbounded::shape::{LoopInfo, Write};
use crate::unbounded::Unsupported;

/// How deep own definitions may nest through reads of other arrays (an
/// array read by another's own definition may have one too).
const MAX_DEPTH: usize = 3;

/// The C's accumulation step `X[i] = X[i] ± body` (or `body + X[i]`): the
/// body and whether it is subtracted.
pub(super) fn accumulation_step(value: &Expr, array: &str, w: &Write) -> Option<(Expr, bool)> {
    let ExprKind::Binary { op, lhs, rhs } = &super::strip_casts(value).kind else {
        return None;
    };
    let is_self = |e: &Expr| {
        matches!(&super::strip_casts(e).kind, ExprKind::Load { array: a, index: i }
            if a == array && *i == w.index)
    };
    match op {
        BinaryOp::Add if is_self(lhs) => Some(((**rhs).clone(), false)),
        BinaryOp::Add if is_self(rhs) => Some(((**lhs).clone(), false)),
        BinaryOp::Sub if is_self(lhs) => Some(((**rhs).clone(), true)),
        _ => None,
    }
}

impl Exec<'_> {
    /// The loops of `w` at the counters element `e` gives them (a loop not
    /// in the index takes its counter from `extra`), and a last pseudo-frame at
    /// `w`'s own place: the point just before `w` runs, where the writes
    /// before it in the same iteration are done.
    fn point_frames(
        &self,
        name: &str,
        w: &Write,
        e: &[Int],
        extra: &[(usize, Int)],
    ) -> Result<Vec<Frame>, Unsupported> {
        let mut frames = Vec::new();
        for (m, (l, role)) in w.loops.iter().zip(&w.roles).enumerate() {
            let given = extra.iter().find(|(k, _)| *k == m).map(|(_, c)| c);
            let counter = match (role, given) {
                (Some(r), _) => self.counter_of(r, e)?,
                (None, Some(c)) => c.clone(),
                _ => {
                    return Err(Unsupported(format!(
                        "`{name}` is rewritten in loop `{}`",
                        l.iter
                    )))
                }
            };
            frames.push(Frame {
                info: l.clone(),
                counter,
            });
        }
        frames.push(Frame {
            info: LoopInfo {
                iter: String::new(),
                start: Default::default(),
                end: Default::default(),
                path: w.path.clone(),
            },
            counter: Int::from_i64(0),
        });
        Ok(frames)
    }

    /// The value `expr` has when write `w` of `name` runs for element `e`
    /// (the loops not in the index at the counters `extra` gives: loop
    /// position, counter): other arrays read
    /// as the invariant has them at that point, `name` itself at `e` as
    /// `own` (else as its final value, which the elements it reads have
    /// reached in the recurrences this covers).
    pub(super) fn at_statement(
        &self,
        name: &str,
        w: &Write,
        expr: &Expr,
        e: &[Int],
        extra: &[(usize, Int)],
        own: Option<&V>,
    ) -> Result<V, Unsupported> {
        let depth = self.own_depth.get();
        if depth >= MAX_DEPTH {
            return Err(Unsupported(format!(
                "the own definition of `{name}` reads arrays with own definitions {MAX_DEPTH} deep"
            )));
        }
        self.own_depth.set(depth + 1);
        let value = self.at_statement_inner(name, w, expr, e, extra, own);
        self.own_depth.set(depth);
        value
    }

    fn at_statement_inner(
        &self,
        name: &str,
        w: &Write,
        expr: &Expr,
        e: &[Int],
        extra: &[(usize, Int)],
        own: Option<&V>,
    ) -> Result<V, Unsupported> {
        let frames = Rc::new(self.point_frames(name, w, e, extra)?);
        let mut state = State {
            locals: self.fixed_locals.clone(),
            arrays: HashMap::new(),
            returned: None,
            relations: HashMap::new(),
        };
        for array in self.writes.keys() {
            let base = if array == name || self.local_array(array).is_some() {
                Base::Closed
            } else {
                Base::Piece(frames.clone())
            };
            let writes = match (array == name, own) {
                (true, Some(v)) => vec![(e.to_vec(), v.clone(), Bool::from_bool(true))],
                _ => Vec::new(),
            };
            state
                .arrays
                .insert(array.clone(), super::ArrayState { base, writes });
        }
        let ctx = Ctx {
            frames: frames[..frames.len() - 1].to_vec(),
            hyps: Vec::new(),
            guard: Bool::from_bool(true),
        };
        for (local, def) in &self.scalar_definitions {
            if let Ok(v) = self.expr(def, &state, &ctx) {
                state
                    .locals
                    .insert(local.clone(), convert(&v, self.local_ty(local)));
            }
        }
        Ok(convert(&self.expr(expr, &state, &ctx)?, w.elem))
    }

    /// `start ± Σ_{r ∈ [lo, count)} body(r)` for accumulation `acc` of
    /// `name` at element `e` (`lo` the reduction loop's start for `e`), in
    /// the iteration `outer` names of the loops that rewrite the element
    /// (none: it is accumulated once).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn own_accumulation(
        &self,
        name: &str,
        acc: &Write,
        rho: usize,
        start: &V,
        e: &[Int],
        count: &Int,
        outer: &[(usize, Int)],
    ) -> Result<V, Unsupported> {
        let (body, negate) = accumulation_step(&acc.value, name, acc).ok_or_else(|| {
            Unsupported(format!(
                "the accumulation into `{name}` is not `{name}[..] ± body`"
            ))
        })?;
        let (_, x) = self.coverage(acc, e)?;
        let (lo, _) = self.bounds_at(acc, rho, &x)?;
        let summand = |r: &Int| {
            let mut extra = outer.to_vec();
            extra.push((rho, r.clone()));
            self.at_statement(name, acc, &body, e, &extra, None)
        };
        let family = format!("{name}_{}", path_key(&acc.path));
        let real = acc.elem.is_float();
        let args: Vec<Int> = e
            .iter()
            .chain(outer.iter().map(|(_, c)| c))
            .cloned()
            .collect();
        let sum = self.local_sum(&family, &args, real, &lo, count, &summand)?;
        let total = if negate {
            value::sub(start, &sum)
        } else {
            value::add(start, &sum)
        };
        Ok(convert(&total, acc.elem))
    }

    /// What post statement `w` stores at element `e` of `name` when the
    /// element held `previous`.
    pub(super) fn post_value(
        &self,
        name: &str,
        w: &Write,
        e: &[Int],
        previous: &V,
    ) -> Result<V, Unsupported> {
        self.at_statement(name, w, &w.value, e, &[], Some(previous))
    }

    /// The value element `e` holds before accumulation `acc` starts: what
    /// `init` stored (reading the element as it was), or the initial one.
    pub(super) fn start_value(
        &self,
        name: &str,
        init: Option<&Write>,
        e: &[Int],
        outer: &[(usize, Int)],
    ) -> Result<V, Unsupported> {
        let initial = self.symbols.initial(name, e)?;
        match init {
            Some(w) => self.at_statement(name, w, &w.value, e, outer, Some(&initial)),
            None => Ok(initial),
        }
    }
}

/// A statement path as a name part.
pub(super) fn path_key(path: &[usize]) -> String {
    path.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join("_")
}

/// Whether `w` stores to `name` at the same index as `acc`, in the same
/// loops but the reduction one, or in a later loop nest of the same shape:
/// a post statement of the accumulation (`x[i] = x[i] + z[i]` in gemver's
/// loop after the one that accumulates `x[i]`).
pub(super) fn is_post_of(w: &Write, acc: &Write, rho: usize) -> bool {
    if !w.reduction_loops().is_empty() {
        return false;
    }
    let outer: Vec<usize> = (0..acc.loops.len()).filter(|m| *m != rho).collect();
    let same_nest = outer
        .iter()
        .map(|m| &acc.loops[*m].path)
        .eq(w.loops.iter().map(|l| &l.path));
    if same_nest {
        return w.index == acc.index;
    }
    w.path > acc.path && same_shape(w, acc, &outer)
}

/// Whether `w`'s loops run like `acc`'s loops `outer` (same bounds, free of
/// loop counters) and index the element the same way, every index component
/// along one of them: then iteration for iteration they store the same
/// element, whatever the counters are called.
fn same_shape(w: &Write, acc: &Write, outer: &[usize]) -> bool {
    let counters: Vec<&String> = acc.loops.iter().chain(&w.loops).map(|l| &l.iter).collect();
    let free = |a: &tenslift_frontend::ir::Affine| a.terms.keys().all(|t| !counters.contains(&t));
    let bounds = outer.iter().zip(&w.loops).all(|(m, l)| {
        let a = &acc.loops[*m];
        free(&a.start) && free(&a.end) && a.start == l.start && a.end == l.end
    });
    let roles = outer
        .iter()
        .zip(&w.roles)
        .all(|(m, r)| acc.roles[*m] == *r && r.is_some());
    let covered = (0..w.index.len()).all(|p| {
        w.roles
            .iter()
            .any(|r| matches!(r, Some(role) if role.pos == p))
    });
    w.loops.len() == outer.len() && w.index.len() == acc.index.len() && bounds && roles && covered
}
