//! Verification conditions from the C loop nest: symbolic execution of the
//! loop IR in which every loop is replaced by its invariant. At a loop the
//! state is described element by element ([`Exec::piece`]): an element
//! whose writes have all happened equals the lifted program there, one
//! whose accumulation is under way equals the lifted program with that
//! reduction cut at the number of iterations done, and one not reached yet
//! is as on entry. Scalar accumulators equal the matching lifted reduction
//! cut at the counter. Each loop yields an initiation and a preservation
//! condition; the end of the kernel yields the postconditions.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use tenslift_frontend::ir::{
    Affine, BinaryOp, Expr, ExprKind, IfKind, Kernel, LValue, Loop, MathFn, ScalarType, Stmt,
    UnaryOp,
};
use tenslift_targets as tensir;
use z3::ast::{Bool, Int};

use super::lifted::{math, Lifted, Symbols, Truncation};
use super::shape::{self, LoopInfo, Write};
use super::Unsupported;
use super::{dim_term, real_literal};
use crate::domain::value::{self, V};
use crate::domain::IntTy;

mod free_bounds;
mod own;
mod rewritten;

use free_bounds::FreeBounds;

/// One condition to discharge: `hyps ⇒ goal`.
pub(crate) struct Condition {
    pub name: String,
    pub hyps: Vec<Bool>,
    pub goal: Bool,
    /// Equalities among the hypotheses (a fresh element equal to the one
    /// the body wrote), to substitute into the query before Z3 sees it so
    /// that the same element has one name everywhere; valid without it.
    pub subst: Vec<(Int, Int)>,
}

/// One conjunct of a loop condition: its goal, the hypotheses it adds
/// (a fresh element's bounds), and the cases it is proved in (none: one
/// condition; else one per case, the cases covering every element).
struct Part {
    goal: Bool,
    hyps: Vec<Bool>,
    cases: Vec<Case>,
}

/// A case of a part: its hypothesis and the substitution it allows.
struct Case {
    hyp: Bool,
    subst: Vec<(Int, Int)>,
}

/// Most writes to one array in one loop body that are split into cases.
const MAX_CASE_WRITES: usize = 4;

/// The cases for fresh element `e` of an array the body wrote at
/// `written`: `e` is one of the written elements, or none of them (no
/// split past [`MAX_CASE_WRITES`] writes, or when nothing was written).
fn element_cases(e: &[Int], written: &[(Vec<Int>, V, Bool)]) -> Vec<Case> {
    let mut distinct: Vec<&Vec<Int>> = Vec::new();
    for (idx, ..) in written {
        if !distinct
            .iter()
            .any(|d| format!("{d:?}") == format!("{idx:?}"))
        {
            distinct.push(idx);
        }
    }
    if distinct.is_empty() || distinct.len() > MAX_CASE_WRITES {
        return Vec::new();
    }
    let same = |idx: &[Int]| {
        e.iter()
            .zip(idx)
            .fold(Bool::from_bool(true), |acc, (a, b)| acc & a.eq(b))
    };
    let mut cases: Vec<Case> = distinct
        .iter()
        .map(|idx| Case {
            hyp: same(idx),
            subst: e.iter().cloned().zip(idx.iter().cloned()).collect(),
        })
        .collect();
    let none = distinct
        .iter()
        .fold(Bool::from_bool(true), |acc, idx| acc & same(idx).not());
    cases.push(Case {
        hyp: none,
        subst: Vec::new(),
    });
    cases
}

/// The writes of an accumulating element in order: an init, the
/// accumulation (over loop `rho`), the post statements that follow it on
/// the same element.
struct Stages<'w> {
    init: Option<&'w Write>,
    /// The init follows the accumulation in the loop body: it writes the
    /// element at the iteration of `rho` its index names, before any
    /// accumulation into it (symm's `C[i][j] = beta * C[i][j] + ...` after
    /// `for (k = 0; k < i; k++) C[k][j] += ...`), and sums every term up
    /// to that iteration itself.
    late_init: bool,
    acc: &'w Write,
    rho: usize,
    posts: Vec<&'w Write>,
}

impl<'w> Stages<'w> {
    /// The accumulation groups of `writes` and the plain writes outside
    /// them.
    fn groups(
        name: &str,
        writes: &'w [Write],
    ) -> Result<(Vec<Stages<'w>>, Vec<&'w Write>), Unsupported> {
        let mut groups: Vec<Stages> = Vec::new();
        let mut claimed = vec![false; writes.len()];
        for (k, acc) in writes.iter().enumerate() {
            if acc.reduction_loops().is_empty() {
                continue;
            }
            let rho = match acc.reduction_loops().as_slice() {
                [rho] => *rho,
                reds => {
                    return Err(Unsupported(format!(
                        "`{name}` accumulates over {} loops at once",
                        reds.len()
                    )))
                }
            };
            claimed[k] = true;
            // The init is the unclaimed plain write just before, on the
            // same element; the posts follow on the same element.
            let init = k
                .checked_sub(1)
                .filter(|p| !claimed[*p] && writes[*p].reduction_loops().is_empty());
            if let Some(p) = init {
                claimed[p] = true;
            }
            let mut posts = Vec::new();
            for (m, w) in writes.iter().enumerate().skip(k + 1) {
                if !own::is_post_of(w, acc, rho) {
                    break;
                }
                claimed[m] = true;
                posts.push(w);
            }
            groups.push(Stages {
                init: init.map(|p| &writes[p]),
                late_init: false,
                acc,
                rho,
                posts,
            });
        }
        for stages in groups.iter_mut().filter(|s| s.init.is_none()) {
            let late = (0..writes.len())
                .find(|m| !claimed[*m] && Self::is_late_init(&writes[*m], stages.acc, stages.rho));
            if let Some(m) = late {
                claimed[m] = true;
                stages.init = Some(&writes[m]);
                stages.late_init = true;
            }
        }
        let others: Vec<&Write> = writes
            .iter()
            .zip(&claimed)
            .filter(|(_, c)| !**c)
            .map(|(w, _)| w)
            .collect();
        Ok((groups, others))
    }
}

impl Stages<'_> {
    /// Whether plain write `w` can be the late init of accumulation `acc`
    /// over loop `rho`: it follows `acc` in the same loops down to `rho`,
    /// and its index names the iteration of `rho` that writes it. Only a
    /// candidate: the invariant built on it is proved like any other.
    fn is_late_init(w: &Write, acc: &Write, rho: usize) -> bool {
        w.reduction_loops().is_empty()
            && w.path > acc.path
            && w.loops.len() > rho
            && w.roles[rho].is_some()
            && (0..=rho).all(|m| w.loops[m].path == acc.loops[m].path)
    }

    /// Whether the group's elements are those of its accumulation, or
    /// also those its late init alone writes (symm's last row, which no
    /// later iteration adds to).
    fn covers(&self, exec: &Exec, e: &[Int]) -> Result<Bool, Unsupported> {
        let acc = exec.coverage(self.acc, e)?.0;
        match self.init {
            Some(w) if self.late_init => Ok(acc | exec.coverage(w, e)?.0),
            _ => Ok(acc),
        }
    }
}

/// An accumulation stage's value at a point, and (for an own definition)
/// its value once every iteration is done.
struct Partial {
    value: V,
    complete: Option<V>,
}

/// A loop around the current point and its counter's value there.
#[derive(Clone)]
struct Frame {
    info: LoopInfo,
    counter: Int,
}

#[derive(Clone)]
enum Base {
    Initial,
    /// A local array whose writes are all done (its C definition).
    Closed,
    /// The invariant's description at the head of the innermost frame.
    Piece(Rc<Vec<Frame>>),
}

#[derive(Clone)]
struct ArrayState {
    base: Base,
    writes: Vec<(Vec<Int>, V, Bool)>,
}

#[derive(Clone)]
struct State {
    locals: HashMap<String, V>,
    arrays: HashMap<String, ArrayState>,
    returned: Option<V>,
    /// Accumulators described by how the statement after their loop uses
    /// them rather than by a value.
    relations: HashMap<String, Relation>,
}

/// "Storing the accumulator as the C does after the loop would give the
/// lifted element, with the reduction cut at the counter": the invariant
/// of an accumulator that is combined with the array it is stored to
/// (`C[i][j] += acc`), so scale factors inside the sum need no lemma.
///
/// By difference, the relation says only what the loop adds: storing the
/// accumulator minus storing its entry value equals the lifted element
/// cut at the counter minus cut at the loop's start. That holds where
/// the store adds terms the loop does not (symm's `C[i][j] = beta *
/// C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2`, whose diagonal
/// term lies past the cut); it is tried when the exact one fails.
#[derive(Clone)]
struct Relation {
    consumer: Expr,
    elem: ScalarType,
    frames: Vec<Frame>,
    target: V,
    /// The accumulator's entry value and the target cut at the start.
    base: Option<(V, V)>,
}

/// The invariant of an accumulating local.
enum Accumulator {
    Value(V),
    Relation(Relation),
}

struct Ctx {
    frames: Vec<Frame>,
    hyps: Vec<Bool>,
    guard: Bool,
}

pub(crate) struct Exec<'a> {
    kernel: &'a Kernel,
    lifted: &'a Lifted<'a>,
    symbols: &'a Symbols,
    writes: HashMap<String, Vec<Write>>,
    /// Local scalars assigned once, from inputs only (`a = A[i]`): their
    /// value wherever the loops of the definition have counters.
    scalar_definitions: Vec<(String, Expr)>,
    pub conditions: Vec<Condition>,
    pub invariants: Vec<String>,
    fresh: usize,
    /// How deep own definitions are nested now (see `own`).
    own_depth: std::cell::Cell<usize>,
    /// C local scalars that a segment of a partial lift shares with the
    /// program's `var` of the same name (see `loops::locals`): they start
    /// with that array's entry value and are compared with it at the end.
    shared_scalars: Vec<String>,
    /// Those the kernel never assigns, at their entry value: every point
    /// of the kernel sees them so (a write's value read off the C needs
    /// them). Computed once, in `share_scalars`.
    fixed_locals: HashMap<String, V>,
    /// Relate accumulators by what their loop adds (see [`Relation`]).
    pub relations_by_difference: bool,
    /// Whether some accumulator was described by a [`Relation`].
    pub related_any: std::cell::Cell<bool>,
}

impl<'a> Exec<'a> {
    pub fn new(
        kernel: &'a Kernel,
        lifted: &'a Lifted<'a>,
        symbols: &'a Symbols,
    ) -> Result<Exec<'a>, Unsupported> {
        Ok(Exec {
            kernel,
            lifted,
            symbols,
            writes: shape::array_writes(&kernel.body)?,
            scalar_definitions: shape::scalar_definitions(kernel),
            conditions: Vec::new(),
            invariants: Vec::new(),
            fresh: 0,
            own_depth: std::cell::Cell::new(0),
            shared_scalars: Vec::new(),
            fixed_locals: HashMap::new(),
            relations_by_difference: false,
            related_any: std::cell::Cell::new(false),
        })
    }

    /// The counter of the loop with role `r` at which a write reaches
    /// element `e` (the component is `step * counter + offset`). With a
    /// step other than ±1 the division is exact only for elements the loop
    /// writes; every use also checks the component equals the write's
    /// index at that counter (`coverage`), which fails for the others.
    fn counter_of(&self, r: &shape::Role, e: &[Int]) -> Result<Int, Unsupported> {
        let offset = self.affine(&r.offset, &HashMap::new())?;
        let x = e[r.pos].clone();
        Ok(match r.step {
            1 => x - offset,
            -1 => offset - x,
            step => (x - offset).div(Int::from_i64(step)),
        })
    }

    /// Makes the C local scalars `names` part of the compared state.
    pub fn share_scalars(&mut self, names: Vec<String>) {
        let mut written = Vec::new();
        shape::written_locals(&self.kernel.body, &mut written);
        self.fixed_locals = names
            .iter()
            .filter(|n| !written.contains(n))
            .filter_map(|n| Some((n.clone(), self.symbols.initial(n, &[]).ok()?)))
            .collect();
        self.shared_scalars = names;
    }

    /// Generates every condition, given the size hypotheses.
    pub fn run(&mut self, base_hyps: Vec<Bool>) -> Result<(), Unsupported> {
        let mut locals = HashMap::new();
        for name in &self.shared_scalars {
            locals.insert(name.clone(), self.symbols.initial(name, &[])?);
        }
        let state = State {
            locals,
            arrays: HashMap::new(),
            returned: None,
            relations: HashMap::new(),
        };
        let mut ctx = Ctx {
            frames: Vec::new(),
            hyps: base_hyps,
            guard: Bool::from_bool(true),
        };
        let body = self.kernel.body.clone();
        let end = self.block(&body, &[], state, &mut ctx)?;
        // Postconditions: every output equals the lifted program.
        let mut goals = Vec::new();
        let program = self.lifted.program();
        for p in &program.params {
            if let tensir::ParamKind::Array { shape, access, .. } = &p.kind {
                if !access.is_written() {
                    continue;
                }
                let extents = shape
                    .iter()
                    .map(|d| dim_term(d, &|s| self.symbols.size(s)))
                    .collect::<Result<Vec<_>, _>>()?;
                let (e, bounds) = self.element(&p.name, &extents)?;
                let c_side = if self.shared_scalars.iter().any(|n| **n == *p.name) {
                    end.locals.get(&*p.name).cloned().ok_or_else(|| {
                        Unsupported(format!("the C's local `{}` has no value", p.name))
                    })?
                } else {
                    self.read(&end, &p.name, &e)?
                };
                let lifted = self.lifted.output(&p.name, &e, &Truncation::new())?;
                goals.push((
                    format!("postcondition of `{}`", p.name),
                    bounds,
                    c_side.equal(&lifted),
                ));
            }
        }
        if program.ret.is_some() {
            let c_side = end
                .returned
                .clone()
                .ok_or_else(|| Unsupported("the program returns a value the C does not".into()))?;
            let lifted = self.lifted.returned(&Truncation::new())?;
            goals.push((
                "postcondition of the returned value".to_string(),
                Vec::new(),
                c_side.equal(&lifted),
            ));
        }
        for (name, bounds, goal) in goals {
            let mut hyps = ctx.hyps.clone();
            hyps.extend(bounds);
            self.conditions.push(Condition {
                name,
                hyps,
                goal,
                subst: Vec::new(),
            });
        }
        Ok(())
    }

    fn fresh_int(&mut self, base: &str) -> Int {
        self.fresh += 1;
        Int::new_const(format!("{base}!{}", self.fresh))
    }

    /// A fresh element of array `name` and its bounds.
    fn element(&mut self, name: &str, shape: &[Int]) -> Result<(Vec<Int>, Vec<Bool>), Unsupported> {
        let mut idx = Vec::new();
        let mut bounds = Vec::new();
        for (k, extent) in shape.iter().enumerate() {
            let e = self.fresh_int(&format!("{name}_e{k}"));
            bounds.push(e.ge(Int::from_i64(0)) & e.lt(extent));
            idx.push(e);
        }
        Ok((idx, bounds))
    }

    /// The extents of a parameter array (from the lifted program) or of a
    /// local array (from its C declaration).
    fn array_shape(&self, name: &str) -> Result<Vec<Int>, Unsupported> {
        if let Some(tensir::ParamKind::Array { shape, .. }) =
            self.lifted.program().param(name).map(|p| &p.kind)
        {
            return shape
                .iter()
                .map(|d| dim_term(d, &|s| self.symbols.size(s)))
                .collect();
        }
        match self.local_array(name) {
            Some(info) => info
                .dims
                .iter()
                .map(|d| {
                    d.as_ref()
                        .ok_or_else(|| Unsupported(format!("the local array `{name}` has an unknown extent")))
                        .and_then(|a| self.affine(a, &HashMap::new()))
                })
                .collect(),
            None => Err(Unsupported(format!(
                "the C array `{name}` is neither an array parameter of the lifted program nor a local array"
            ))),
        }
    }

    fn local_array(&self, name: &str) -> Option<&tenslift_frontend::ir::ArrayInfo> {
        self.kernel.locals.iter().find_map(|l| match &l.kind {
            tenslift_frontend::ir::LocalKind::Array(info) if l.name == name => Some(info),
            _ => None,
        })
    }

    /// Element `e` of what array `name` holds once its writes are done
    /// (reductions cut by `cut`): the lifted program for parameters; for a
    /// local array (a temporary the lifted program does not have) its
    /// definition read off the C: a plain write, or an init plus an
    /// accumulation `X[idx] = X[idx] + body` (a sum over the C's own body,
    /// with its unfold lemmas).
    fn lifted_elem(&self, name: &str, e: &[Int], cut: &Truncation) -> Result<V, Unsupported> {
        if self.local_array(name).is_none() {
            return self.lifted.output(name, e, cut);
        }
        let writes = self.writes.get(name).cloned().unwrap_or_default();
        let plain = |w: &Write, extra: Option<(usize, Int)>| self.write_value(name, w, e, extra);
        if let [w] = writes.as_slice() {
            if let Some(m) = overwrite_loop(name, w) {
                // Rewritten in every iteration of loop `m`: what its last
                // iteration wrote.
                let (covered, x) = self.coverage(w, e)?;
                let (lo, hi) = self.bounds_at(w, m, &x)?;
                let last = plain(w, Some((m, hi.clone() - Int::from_i64(1))))?;
                let initial = self.symbols.initial(name, e)?;
                return Ok(V::ite(&(covered & hi.gt(&lo)), &last, &initial));
            }
        }
        if writes.len() > 1 && writes.iter().all(|w| is_plain_write(name, w)) {
            // Several plain writes (slices of a stacked temporary): each
            // element holds what the last write covering it stores.
            let mut v = self.symbols.initial(name, e)?;
            for w in &writes {
                let (covered, _) = self.coverage(w, e)?;
                v = V::ite(&covered, &plain(w, None)?, &v);
            }
            return Ok(v);
        }
        match writes.as_slice() {
            [w] if w.reduction_loops().is_empty() => plain(w, None),
            [init, acc] if init.reduction_loops().is_empty() && acc.reduction_loops().len() == 1 => {
                let rho = acc.reduction_loops()[0];
                let body = accumulated_body(&acc.value, name, &acc.index).ok_or_else(|| {
                    Unsupported(format!("the accumulation into `{name}` is not `{name}[..] + body`"))
                })?;
                let start = init_value(self, init, &plain)?;
                let mut iters = HashMap::new();
                for (l, role) in acc.loops.iter().zip(&acc.roles) {
                    if let Some(r) = role {
                        iters.insert(l.iter.clone(), self.counter_of(r, e)?);
                    }
                }
                let lo = self.affine(&acc.loops[rho].start, &iters)?;
                let hi = match self.single_size(&acc.loops[rho].end).and_then(|s| cut.get(&s).cloned()) {
                    Some(h) => h,
                    None => self.affine(&acc.loops[rho].end, &iters)?,
                };
                let summand = |r: &Int| -> Result<V, Unsupported> {
                    let w = Write { value: body.clone(), ..acc.clone() };
                    plain(&w, Some((rho, r.clone())))
                };
                let real = acc.elem.is_float();
                let sum = self.local_sum(name, e, real, &lo, &hi, &summand)?;
                Ok(value::add(&start, &sum))
            }
            _ => Err(Unsupported(format!(
                "the local array `{name}` is written by {} statements in a shape without a definition",
                writes.len()
            ))),
        }
    }

    /// The value write `w` of local array `name` stores at element `e`,
    /// with reduction or overwrite loop `extra.0` at counter `extra.1`;
    /// other local arrays read as their definitions, local scalars with a
    /// single definition as that definition.
    fn write_value(
        &self,
        name: &str,
        w: &Write,
        e: &[Int],
        extra: Option<(usize, Int)>,
    ) -> Result<V, Unsupported> {
        let mut frames = Vec::new();
        for (m, (l, role)) in w.loops.iter().zip(&w.roles).enumerate() {
            let counter = match (role, &extra) {
                (Some(r), _) => self.counter_of(r, e)?,
                (None, Some((rho, r))) if *rho == m => r.clone(),
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
        let ctx = Ctx {
            frames,
            hyps: Vec::new(),
            guard: Bool::from_bool(true),
        };
        let mut state = State {
            locals: self.fixed_locals.clone(),
            arrays: HashMap::new(),
            returned: None,
            relations: HashMap::new(),
        };
        for l in &self.kernel.locals {
            if matches!(l.kind, tenslift_frontend::ir::LocalKind::Array(_)) {
                state.arrays.insert(
                    l.name.clone(),
                    ArrayState {
                        base: Base::Closed,
                        writes: Vec::new(),
                    },
                );
            }
        }
        for (local, def) in &self.scalar_definitions {
            // A definition outside the write's loops has no value here.
            if let Ok(v) = self.expr(def, &state, &ctx) {
                state
                    .locals
                    .insert(local.clone(), convert(&v, self.local_ty(local)));
            }
        }
        self.expr(&w.value, &state, &ctx)
            .map(|v| convert(&v, w.elem))
    }

    /// The bounds of loop `m` of write `w` for the parallel counters `x`.
    fn bounds_at(&self, w: &Write, m: usize, x: &[Option<Int>]) -> Result<(Int, Int), Unsupported> {
        let mut iters = HashMap::new();
        for (l, v) in w.loops.iter().zip(x) {
            if let Some(v) = v {
                iters.insert(l.iter.clone(), v.clone());
            }
        }
        Ok((
            self.affine(&w.loops[m].start, &iters)?,
            self.affine(&w.loops[m].end, &iters)?,
        ))
    }

    /// `sum over r in [lo, hi) of summand(r)` for local array `name` at
    /// `e`: a range function with its unfold lemmas at `hi`.
    fn local_sum(
        &self,
        name: &str,
        e: &[Int],
        real: bool,
        lo: &Int,
        hi: &Int,
        summand: &dyn Fn(&Int) -> Result<V, Unsupported>,
    ) -> Result<V, Unsupported> {
        let int = z3::Sort::int();
        let domain: Vec<&z3::Sort> = (0..=e.len()).map(|_| &int).collect();
        let range = if real {
            z3::Sort::real()
        } else {
            z3::Sort::int()
        };
        let f = Rc::new(z3::FuncDecl::new(
            format!("local_sum_{name}"),
            &domain,
            &range,
        ));
        let apply = |h: &Int| -> V {
            let mut args: Vec<&dyn z3::ast::Ast> = vec![h];
            args.extend(e.iter().map(|i| i as &dyn z3::ast::Ast));
            let v = f.apply(&args);
            match (v.as_real(), v.as_int()) {
                (Some(r), _) => V::R(r),
                (_, Some(i)) => V::I(i),
                _ => V::int(0),
            }
        };
        let at = apply(hi);
        let zero = if real {
            V::R(value::real_num(0))
        } else {
            V::int(0)
        };
        let one = Int::from_i64(1);
        let before = hi.clone() - one.clone();
        let after = hi.clone() + one;
        let lemmas = [
            apply(lo).equal(&zero),
            hi.le(lo).implies(at.equal(&zero)),
            hi.gt(lo)
                .implies(at.equal(&value::add(&apply(&before), &summand(&before)?))),
            hi.ge(lo)
                .implies(apply(&after).equal(&value::add(&at, &summand(hi)?))),
        ];
        self.lifted.lemmas.borrow_mut().extend(lemmas);
        let bound = super::extensionality::fresh_bound("local_r");
        let made = self.lifted.lemmas.borrow().len();
        let seen = self.lifted.unfolded.borrow().clone();
        let body = summand(&bound)?;
        let template_lemmas = self.lifted.lemmas.borrow_mut().split_off(made);
        *self.lifted.unfolded.borrow_mut() = seen;
        self.lifted
            .sums
            .borrow_mut()
            .push(super::extensionality::SumUse {
                value: at.clone(),
                lo: lo.clone(),
                hi: hi.clone(),
                bound,
                body,
                local: true,
                family: format!("local_{name}"),
                function: Some((f.clone(), e.to_vec())),
                lemmas: template_lemmas,
            });
        Ok(at)
    }

    fn read(&self, state: &State, name: &str, idx: &[Int]) -> Result<V, Unsupported> {
        let (base, writes) = match state.arrays.get(name) {
            Some(a) => (a.base.clone(), a.writes.as_slice()),
            None => (Base::Initial, &[][..]),
        };
        let mut v = match base {
            Base::Initial => self.symbols.initial(name, idx)?,
            Base::Piece(frames) => self.piece(name, &frames, idx)?,
            Base::Closed => self.lifted_elem(name, idx, &Truncation::new())?,
        };
        for (w, val, guard) in writes {
            let mut hit = guard.clone();
            for (a, b) in w.iter().zip(idx) {
                hit &= a.eq(b);
            }
            v = V::ite(&hit, val, &v);
        }
        Ok(v)
    }

    fn affine(&self, a: &Affine, iters: &HashMap<String, Int>) -> Result<Int, Unsupported> {
        let mut t = Int::from_i64(a.constant);
        for (name, c) in &a.terms {
            let v = iters
                .get(name)
                .cloned()
                .or_else(|| self.symbols.size(name))
                .or_else(|| match self.symbols.scalars.get(name) {
                    Some(V::I(i)) => Some(i.clone()),
                    _ => None,
                })
                .ok_or_else(|| {
                    Unsupported(format!("`{name}` in `{a}` is neither a loop nor a size"))
                })?;
            t += Int::from_i64(*c) * v;
        }
        Ok(t)
    }

    fn frame_iters(frames: &[Frame]) -> HashMap<String, Int> {
        frames
            .iter()
            .map(|f| (f.info.iter.clone(), f.counter.clone()))
            .collect()
    }

    /// The invariant's value of element `e` of `name` at the head of the
    /// innermost of `frames`.
    fn piece(&self, name: &str, frames: &[Frame], e: &[Int]) -> Result<V, Unsupported> {
        let writes = self.writes.get(name).cloned().unwrap_or_default();
        let initial = self.symbols.initial(name, e)?;
        let full = self.lifted_elem(name, e, &Truncation::new())?;
        if let [w] = writes.as_slice() {
            if let Some(m) = overwrite_loop(name, w) {
                return self.overwritten_piece(name, w, m, frames, e);
            }
        }
        if let Some(group) = rewritten::Rewritten::of(name, &writes) {
            return self.rewritten_piece(name, &group, frames, e);
        }
        let acc_at: Vec<usize> = (0..writes.len())
            .filter(|k| !writes[*k].reduction_loops().is_empty())
            .collect();
        if acc_at.is_empty() && !writes.is_empty() {
            // Plain writes only: an element equals its final value once a
            // write covering it is done (writes to one element in one loop
            // body are done together at a loop head).
            let mut v = initial;
            for w in &writes {
                let (covered, x) = self.coverage(w, e)?;
                let done = self.done(w, &x, frames, None)?;
                v = V::ite(&(covered & done), &full, &v);
            }
            return Ok(v);
        }
        // One group per accumulation (LU's two triangles), each on its own
        // elements; plain writes outside the groups (a diagonal, a mirrored
        // triangle) give their elements the final value.
        let (groups, others) = Stages::groups(name, &writes)?;
        let mut v = initial.clone();
        for stages in groups.iter().rev() {
            let here = self.group_value(name, stages, frames, e, &initial, &full)?;
            v = V::ite(&stages.covers(self, e)?, &here, &v);
        }
        for w in &others {
            let (covered, x) = self.coverage(w, e)?;
            let done = self.done(w, &x, frames, None)?;
            v = V::ite(&(covered & done), &full, &v);
        }
        Ok(v)
    }

    /// The value of element `e` (which accumulation group `stages` covers)
    /// at the point `frames`.
    fn group_value(
        &self,
        name: &str,
        stages: &Stages,
        frames: &[Frame],
        e: &[Int],
        initial: &V,
        full: &V,
    ) -> Result<V, Unsupported> {
        let partial = self.accumulation_stage(name, stages, frames, e)?;
        let mut v = match stages.init {
            Some(w) => {
                let (covered, x) = self.coverage(w, e)?;
                let done = self.done(w, &x, frames, None)?;
                V::ite(&(covered & done), &partial.value, initial)
            }
            None => partial.value.clone(),
        };
        // Each post statement done: the next stage of the chain, the last
        // one the lifted element.
        let mut chain = partial.complete;
        for (m, w) in stages.posts.iter().enumerate() {
            let (covered, x) = self.coverage(w, e)?;
            let done = self.done(w, &x, frames, None)?;
            let stage = if m + 1 == stages.posts.len() {
                full.clone()
            } else {
                let previous = chain.take().ok_or_else(|| {
                    Unsupported(format!(
                        "`{name}`: a chain of post statements without its start"
                    ))
                })?;
                let next = self.post_value(name, w, e, &previous)?;
                chain = Some(next.clone());
                next
            };
            v = V::ite(&(covered & done), &stage, &v);
        }
        Ok(v)
    }

    /// The accumulation stage of element `e` at the point `frames`: the
    /// lifted element cut at the iterations done, with a single post
    /// statement undone when it can be (exactly, or by the inverse
    /// operation); otherwise the C's own partial value (see `own`), with
    /// its complete value for the chain of post statements.
    fn accumulation_stage(
        &self,
        name: &str,
        stages: &Stages,
        frames: &[Frame],
        e: &[Int],
    ) -> Result<Partial, Unsupported> {
        let acc = stages.acc;
        let rho = stages.rho;
        let (_, x) = self.coverage(acc, e)?;
        let t = self.done_count(acc, &x, frames, rho)?;
        let lifted_cut = |t: &Int| -> Result<Option<Truncation>, Unsupported> {
            Ok(self.single_size(&acc.loops[rho].end).map(|size| {
                let mut cut = Truncation::new();
                cut.insert(size, t.clone());
                cut
            }))
        };
        match (stages.posts.as_slice(), lifted_cut(&t)?) {
            ([], Some(cut)) => {
                return Ok(Partial {
                    value: self.lifted_elem(name, e, &cut)?,
                    complete: None,
                })
            }
            ([w], Some(cut)) => {
                let target = self.lifted_elem(name, e, &cut)?;
                if let Some(v) = self.invert_post(w, name, e, &cut, &target)? {
                    return Ok(Partial {
                        value: v,
                        complete: None,
                    });
                }
            }
            _ => {}
        }
        if stages.late_init {
            return Err(Unsupported(format!(
                "`{name}`: an accumulation whose init follows it needs the lifted value cut at its loop"
            )));
        }
        let start = self.start_value(name, stages.init, e, &[])?;
        let (_, hi) = self.bounds_at(acc, rho, &x)?;
        let value = self.own_accumulation(name, acc, rho, &start, e, &t, &[])?;
        if stages.posts.is_empty() {
            // Complete, the element is final: say so, so that readers see
            // the lifted value and the link is proved once, at the step
            // that completes it.
            let full = self.lifted_elem(name, e, &Truncation::new())?;
            return Ok(Partial {
                value: V::ite(&t.ge(&hi), &full, &value),
                complete: None,
            });
        }
        Ok(Partial {
            value,
            complete: Some(self.own_accumulation(name, acc, rho, &start, e, &hi, &[])?),
        })
    }

    /// The invariant's value of element `e` of local array `name`, which
    /// write `w` rewrites in every iteration of loop `m` (a row buffer
    /// refilled per outer iteration): what the latest iteration done wrote.
    fn overwritten_piece(
        &self,
        name: &str,
        w: &Write,
        m: usize,
        frames: &[Frame],
        e: &[Int],
    ) -> Result<V, Unsupported> {
        let (covered, x) = self.coverage(w, e)?;
        let (lo, hi) = self.bounds_at(w, m, &x)?;
        let initial = self.symbols.initial(name, e)?;
        let at = |c: Int| self.write_value(name, w, e, Some((m, c)));
        let last = V::ite(&hi.gt(&lo), &at(hi.clone() - Int::from_i64(1))?, &initial);
        let (q, equal_done) = self.common(w, frames);
        let cs: Vec<Int> = frames.iter().map(|f| f.counter.clone()).collect();
        let xv = |k: usize| -> Result<Int, Unsupported> {
            x[k].clone()
                .ok_or_else(|| Unsupported(format!("`{name}` is rewritten in two loops")))
        };
        if m >= q {
            let xs = (0..q).map(xv).collect::<Result<Vec<_>, _>>()?;
            let done = if frames.is_empty() {
                Bool::from_bool(true)
            } else {
                lex(&xs, &cs[..q], equal_done)
            };
            return Ok(V::ite(&(covered & done), &last, &initial));
        }
        let before = (0..m).map(xv).collect::<Result<Vec<_>, _>>()?;
        let after = (m + 1..q).map(xv).collect::<Result<Vec<_>, _>>()?;
        let earlier = lex(&before, &cs[..m], false);
        let mut same = Bool::from_bool(true);
        for (a, b) in before.iter().zip(&cs[..m]) {
            same &= a.eq(b);
        }
        let c = cs[m].clone();
        let previous = V::ite(&c.gt(&lo), &at(c.clone() - Int::from_i64(1))?, &initial);
        let current = V::ite(&lex(&after, &cs[m + 1..q], equal_done), &at(c)?, &previous);
        let v = V::ite(&(covered.clone() & same), &current, &initial);
        Ok(V::ite(&(covered & earlier), &last, &v))
    }

    /// The value `v` with `post(v) = target` when the post statement `w`
    /// is `X[i] ± g`, `g + X[i]`, `X[i] * g`, `g * X[i]` or `X[i] / g` (the
    /// last three for reals only); `None` otherwise.
    fn invert_post(
        &self,
        w: &Write,
        name: &str,
        e: &[Int],
        cut: &Truncation,
        target: &V,
    ) -> Result<Option<V>, Unsupported> {
        let ExprKind::Binary { op, lhs, rhs } = &strip_casts(&w.value).kind else {
            return Ok(None);
        };
        let is_self = |x: &Expr| matches!(&strip_casts(x).kind, ExprKind::Load { array, index } if array == name && index == &w.index);
        let (self_left, g) = if is_self(lhs) {
            (true, rhs)
        } else if is_self(rhs) {
            (false, lhs)
        } else {
            return Ok(None);
        };
        let mut frames = Vec::new();
        for (l, role) in w.loops.iter().zip(&w.roles) {
            let Some(r) = role else { return Ok(None) };
            frames.push(Frame {
                info: l.clone(),
                counter: self.counter_of(r, e)?,
            });
        }
        let ctx = Ctx {
            frames,
            hyps: Vec::new(),
            guard: Bool::from_bool(true),
        };
        let state = State {
            locals: self.fixed_locals.clone(),
            arrays: HashMap::new(),
            returned: None,
            relations: HashMap::new(),
        };
        let g = self.expr(g, &state, &ctx)?;
        let step = match op {
            BinaryOp::Add | BinaryOp::Mul => Some(*op),
            BinaryOp::Sub | BinaryOp::Div if self_left => Some(*op),
            _ => None,
        };
        if let Some(step) = step {
            let lifted_op = match step {
                BinaryOp::Add => tenslift_targets::BinaryOp::Add,
                BinaryOp::Mul => tenslift_targets::BinaryOp::Mul,
                BinaryOp::Sub => tenslift_targets::BinaryOp::Sub,
                _ => tenslift_targets::BinaryOp::Div,
            };
            if let Some(v) = self.lifted.strip_step(name, e, cut, lifted_op, &g)? {
                return Ok(Some(v));
            }
        }
        let real = target.is_real() || g.is_real();
        Ok(match (op, self_left) {
            (BinaryOp::Add, _) => Some(value::sub(target, &g)),
            (BinaryOp::Sub, true) => Some(value::add(target, &g)),
            (BinaryOp::Sub, false) => Some(value::sub(&g, target)),
            (BinaryOp::Mul, _) if real => Some(V::R(target.as_real() / g.as_real())),
            (BinaryOp::Div, true) if real => Some(value::mul(target, &g)),
            _ => None,
        })
    }

    /// Whether statement `w` writes element `e` at all, and the values of
    /// its parallel loops for `e` (reduction loops get `None`).
    fn coverage(&self, w: &Write, e: &[Int]) -> Result<(Bool, Vec<Option<Int>>), Unsupported> {
        let mut x: Vec<Option<Int>> = Vec::new();
        let mut iters = HashMap::new();
        for (l, role) in w.loops.iter().zip(&w.roles) {
            let v = role.as_ref().map(|r| self.counter_of(r, e)).transpose()?;
            if let Some(v) = &v {
                iters.insert(l.iter.clone(), v.clone());
            }
            x.push(v);
        }
        let mut covered = Bool::from_bool(true);
        // Loops the element does not determine (a reduction, or symm's `i`
        // above `for (k = 0; k < i; k++) C[k][j] += ...`).
        let free: HashSet<String> = w
            .loops
            .iter()
            .zip(&x)
            .filter(|(_, v)| v.is_none())
            .map(|(l, _)| l.iter.clone())
            .collect();
        let eval = |a: &Affine| self.affine(a, &iters);
        let mut free_bounds = FreeBounds::default();
        for (l, v) in w.loops.iter().zip(&x) {
            if let Some(v) = v {
                covered &= free_bounds.bound(v, (&l.start, &l.end), &free, &eval)?;
            }
        }
        free_bounds.ranges(&w.loops, &free, &eval)?;
        covered &= free_bounds.exists();
        for (p, a) in w.index.iter().enumerate() {
            if a.terms
                .keys()
                .all(|n| iters.contains_key(n) || self.symbols.size(n).is_some())
            {
                covered &= e[p].eq(self.affine(a, &iters)?);
            }
        }
        Ok((covered, x))
    }

    /// How many loops `w` shares with the current point, and whether an
    /// instance with equal shared counters is already done.
    fn common(&self, w: &Write, frames: &[Frame]) -> (usize, bool) {
        let q = frames
            .iter()
            .zip(&w.loops)
            .take_while(|(f, l)| f.info.path == l.path)
            .count();
        if q == frames.len() {
            (q, false)
        } else {
            (q, w.path < frames[q].info.path)
        }
    }

    fn done(
        &self,
        w: &Write,
        x: &[Option<Int>],
        frames: &[Frame],
        _r: Option<Int>,
    ) -> Result<Bool, Unsupported> {
        let (q, equal_done) = self.common(w, frames);
        let xs: Vec<Int> = x[..q]
            .iter()
            .map(|v| {
                v.clone()
                    .ok_or_else(|| Unsupported("reduction loop in an init write".into()))
            })
            .collect::<Result<_, _>>()?;
        let cs: Vec<Int> = frames[..q].iter().map(|f| f.counter.clone()).collect();
        if frames.is_empty() {
            return Ok(Bool::from_bool(true));
        }
        Ok(lex(&xs, &cs, equal_done))
    }

    /// How many iterations of reduction loop `rho` of `w` have been applied
    /// to the element at the current point.
    fn done_count(
        &self,
        w: &Write,
        x: &[Option<Int>],
        frames: &[Frame],
        rho: usize,
    ) -> Result<Int, Unsupported> {
        let mut iters = HashMap::new();
        for (l, v) in w.loops.iter().zip(x) {
            if let Some(v) = v {
                iters.insert(l.iter.clone(), v.clone());
            }
        }
        let lo = self.affine(&w.loops[rho].start, &iters)?;
        let hi = self.affine(&w.loops[rho].end, &iters)?;
        let (q, equal_done) = self.common(w, frames);
        let xv = |m: usize| x[m].clone().unwrap_or_else(|| Int::from_i64(0));
        let cs: Vec<Int> = frames.iter().map(|f| f.counter.clone()).collect();
        if rho >= q {
            let xs: Vec<Int> = (0..q).map(xv).collect();
            let done = if frames.is_empty() {
                Bool::from_bool(true)
            } else {
                lex(&xs, &cs[..q], equal_done)
            };
            return Ok(done.ite(&hi, &lo));
        }
        let before: Vec<Int> = (0..rho).map(xv).collect();
        let after: Vec<Int> = (rho + 1..q).map(xv).collect();
        let lt = lex(&before, &cs[..rho], false);
        let mut eq = Bool::from_bool(true);
        for (a, b) in before.iter().zip(&cs[..rho]) {
            eq &= a.eq(b);
        }
        let rest = lex(&after, &cs[rho + 1..q], equal_done);
        let current = cs[rho].clone() + rest.ite(&Int::from_i64(1), &Int::from_i64(0));
        Ok(lt.ite(&hi, &eq.ite(&current, &lo)))
    }

    fn block(
        &mut self,
        stmts: &[Stmt],
        prefix: &[usize],
        mut state: State,
        ctx: &mut Ctx,
    ) -> Result<State, Unsupported> {
        for (k, stmt) in stmts.iter().enumerate() {
            state = match stmt {
                Stmt::Loop(l) => {
                    let path = [prefix, &[k]].concat();
                    self.for_loop(l, &path, &stmts[k + 1..], state, ctx)?
                }
                Stmt::Assign { target, value, .. } => {
                    let v = self.expr(value, &state, ctx)?;
                    let v = convert(&v, target_ty(target));
                    match target {
                        LValue::Scalar { name, .. } => {
                            let merged = match state.locals.get(name) {
                                Some(old) => V::ite(&ctx.guard, &v, old),
                                None => v,
                            };
                            state.locals.insert(name.clone(), merged);
                        }
                        LValue::Element { array, index, .. } => {
                            let iters = Self::frame_iters(&ctx.frames);
                            let idx = index
                                .iter()
                                .map(|a| self.affine(a, &iters))
                                .collect::<Result<Vec<_>, _>>()?;
                            let entry = state.arrays.entry(array.clone()).or_insert(ArrayState {
                                base: Base::Initial,
                                writes: Vec::new(),
                            });
                            entry.writes.push((idx, v, ctx.guard.clone()));
                        }
                    }
                    state
                }
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    kind,
                    ..
                } => {
                    if contains_loop(then_body)
                        || contains_loop(else_body)
                        || contains_return(then_body)
                        || contains_return(else_body)
                    {
                        return Err(Unsupported("a loop or return under an `if`".into()));
                    }
                    let _ = kind == &IfKind::Guard;
                    let c = self.expr(cond, &state, ctx)?.as_bool();
                    let outer = ctx.guard.clone();
                    ctx.guard = outer.clone() & c.clone();
                    let s = self.block(then_body, &[prefix, &[k, 0]].concat(), state, ctx)?;
                    ctx.guard = outer.clone() & c.not();
                    let s = self.block(else_body, &[prefix, &[k, 1]].concat(), s, ctx)?;
                    ctx.guard = outer;
                    s
                }
                Stmt::Return { value, .. } => {
                    if !ctx.frames.is_empty() {
                        return Err(Unsupported("a return inside a loop".into()));
                    }
                    let v = self.expr(value, &state, ctx)?;
                    let v = match self.kernel.returns {
                        Some(ty) => convert(&v, ty),
                        None => v,
                    };
                    state.returned = Some(v);
                    state
                }
            };
        }
        Ok(state)
    }

    /// The partial value an accumulating local holds at the head of loop
    /// `l` when its counter is `c`: the lifted value it flows into, with
    /// the reduction over the loop's size cut at `c`.
    fn accumulator(
        &self,
        local: &str,
        l: &Loop,
        rest: &[Stmt],
        counter: &Int,
        frames: &[Frame],
        state: &State,
    ) -> Result<Accumulator, Unsupported> {
        let entry = state.locals.get(local);
        if let Some(v) = self.stored_every_iteration(local, l, counter, frames, entry)? {
            return Ok(Accumulator::Value(v));
        }
        let size = self.accumulation_size(&l.end, frames).ok_or_else(|| {
            Unsupported(format!(
                "the accumulating loop `{}` ends at `{}`, not at a size parameter or a constant",
                l.iter, l.end
            ))
        })?;
        let mut cut = Truncation::new();
        cut.insert(size.clone(), counter.clone());
        let iters = Self::frame_iters(frames);
        let mut reads = Vec::new();
        shape::local_reads(&l.body, local, &mut reads);
        // Locals computed from the accumulator after the loop (`m = (float)s
        // / n; mean[r] = m;`): a store reading one of them holds the
        // accumulated reduction inside another expression.
        let mut flows = vec![local.to_string()];
        let reads_flow = |e: &Expr, flows: &[String]| flows.iter().any(|f| shape::reads(e, f));
        for stmt in rest {
            match stmt {
                Stmt::Assign {
                    target: LValue::Scalar { name, .. },
                    value,
                    ..
                } if name != local && reads_flow(value, &flows) => {
                    flows.push(name.clone());
                }
                Stmt::Assign {
                    target: LValue::Element { array, index, .. },
                    value,
                    ..
                } if flows.len() > 1 && reads_flow(value, &flows) => {
                    let idx = index
                        .iter()
                        .map(|a| self.affine(a, &iters))
                        .collect::<Result<Vec<_>, _>>()?;
                    return Ok(Accumulator::Value(self.lifted.first_reduction(
                        Some(array),
                        &idx,
                        &cut,
                        &reads,
                    )?));
                }
                Stmt::Assign {
                    target: LValue::Element { array, index, ty },
                    value,
                    ..
                } if shape::reads(value, local) => {
                    let idx = index
                        .iter()
                        .map(|a| self.affine(a, &iters))
                        .collect::<Result<Vec<_>, _>>()?;
                    let mut stored = Vec::new();
                    shape::loads(value, &mut stored);
                    // Stored through a conversion to an integer, the
                    // float accumulator holds the reduction inside the
                    // lifted cast, not the truncated element.
                    // The lifted value cut at the counter, or, where no cut
                    // reaches it (a solver's recurrence), the C's own sum.
                    let cut_or_own = |at: &dyn Fn(&Truncation) -> Result<V, Unsupported>| {
                        let cut_value = at(&cut)?;
                        let own = if same_term(&cut_value, &at(&Truncation::new())?) {
                            self.own_scalar_sum(local, l, counter, frames, state)?
                        } else {
                            None
                        };
                        Ok::<_, Unsupported>(Accumulator::Value(own.unwrap_or(cut_value)))
                    };
                    return if is_plain(value, local) && !truncates(value) {
                        cut_or_own(&|c| self.lifted_elem(array, &idx, c))
                    } else if stored.contains(array) {
                        self.related_any.set(true);
                        let base = match entry.filter(|_| self.relations_by_difference) {
                            Some(x0) => {
                                let mut at_start = Truncation::new();
                                at_start.insert(size, self.affine(&l.start, &iters)?);
                                Some((x0.clone(), self.lifted_elem(array, &idx, &at_start)?))
                            }
                            None => None,
                        };
                        Ok(Accumulator::Relation(Relation {
                            consumer: value.clone(),
                            elem: *ty,
                            frames: frames.to_vec(),
                            target: self.lifted_elem(array, &idx, &cut)?,
                            base,
                        }))
                    } else {
                        cut_or_own(&|c| self.lifted.first_reduction(Some(array), &idx, c, &reads))
                    };
                }
                Stmt::Return { value, .. } if shape::reads(value, local) => {
                    return Ok(Accumulator::Value(if is_plain(value, local) {
                        self.lifted.returned(&cut)?
                    } else {
                        self.lifted.first_reduction(None, &[], &cut, &reads)?
                    }));
                }
                Stmt::Assign { value, .. } if shape::reads(value, local) => {
                    return Err(Unsupported(format!(
                        "the accumulator `{local}` flows into another local"
                    )));
                }
                _ => {}
            }
        }
        // A local the segment shares with the program's `var` of the same
        // name is compared at the segment's end: its partial value is the
        // `var`'s, cut.
        if self.shared_scalars.iter().any(|n| n == local) {
            return Ok(Accumulator::Value(self.lifted.output(local, &[], &cut)?));
        }
        Err(Unsupported(format!(
            "the accumulator `{local}` of loop `{}` is not stored or returned after it",
            l.iter
        )))
    }

    /// A running value stored by every iteration after its update (`s +=
    /// x[i]; y[i] = s;`, a scan): at the head of the iteration whose
    /// iterator is `counter` it holds what the previous iteration stored,
    /// the lifted element there, or its value before the loop at the
    /// first iteration. Only for the stores [`stored_running_value`]
    /// finds.
    fn stored_every_iteration(
        &self,
        local: &str,
        l: &Loop,
        counter: &Int,
        frames: &[Frame],
        entry: Option<&V>,
    ) -> Result<Option<V>, Unsupported> {
        let (Some(entry), Some((array, index))) = (entry, stored_running_value(local, l)) else {
            return Ok(None);
        };
        let outer = Self::frame_iters(frames);
        let start = self.affine(&l.start, &outer)?;
        let mut iters = outer;
        iters.insert(l.iter.clone(), counter.clone() - Int::from_i64(l.step));
        let idx = index
            .iter()
            .map(|a| self.affine(a, &iters))
            .collect::<Result<Vec<_>, _>>()?;
        let previous = self.lifted_elem(array, &idx, &Truncation::new())?;
        Ok(Some(V::ite(&counter.eq(&start), entry, &previous)))
    }

    /// `entry ± Σ_{r ∈ [start, counter)} body(r)` for local `local`
    /// accumulated by loop `l`, when the loop's body is that one step
    /// (`w -= A[i][j] * y[j]`) and writes no array, so every iteration
    /// reads the arrays of `state`. For an element the lifted program
    /// computes by a recurrence that no cut reaches (a triangular solve):
    /// the sum is related to the lifted one by the extensionality lemmas.
    fn own_scalar_sum(
        &self,
        local: &str,
        l: &Loop,
        counter: &Int,
        frames: &[Frame],
        state: &State,
    ) -> Result<Option<V>, Unsupported> {
        let [Stmt::Assign {
            target: LValue::Scalar { name, ty },
            value,
            ..
        }] = l.body.as_slice()
        else {
            return Ok(None);
        };
        let Some(entry) = state.locals.get(local) else {
            return Ok(None);
        };
        let ExprKind::Binary { op, lhs, rhs } = &strip_casts(value).kind else {
            return Ok(None);
        };
        let (body, negate) = match op {
            BinaryOp::Sub if is_plain(lhs, local) => (rhs, true),
            BinaryOp::Add if is_plain(lhs, local) => (rhs, false),
            BinaryOp::Add if is_plain(rhs, local) => (lhs, false),
            _ => return Ok(None),
        };
        if name != local || shape::reads(body, local) {
            return Ok(None);
        }
        let iters = Self::frame_iters(frames);
        let start = self.affine(&l.start, &iters)?;
        // Counted from 0, as the lifted program's reductions are (a
        // back substitution's `for (j = i + 1; j < n; j++)` against
        // `matmul(A[i, i+1:n], x[i+1:n])`): the extensionality lemmas
        // relate sums over the same range.
        let summand = |r: &Int| -> Result<V, Unsupported> {
            let mut inner = frames.to_vec();
            inner.push(Frame {
                info: shape::loop_info(l, &[]),
                counter: r.clone() + start.clone(),
            });
            let ctx = Ctx {
                frames: inner,
                hyps: Vec::new(),
                guard: Bool::from_bool(true),
            };
            self.expr(body, state, &ctx)
        };
        let counters: Vec<Int> = frames.iter().map(|f| f.counter.clone()).collect();
        let family = format!("{local}_line{}_col{}", l.loc.line, l.loc.col);
        let zero = Int::from_i64(0);
        let done = counter.clone() - start.clone();
        let sum = self.local_sum(&family, &counters, ty.is_float(), &zero, &done, &summand)?;
        let total = if negate {
            value::sub(entry, &sum)
        } else {
            value::add(entry, &sum)
        };
        Ok(Some(convert(&total, *ty)))
    }

    fn for_loop(
        &mut self,
        l: &Loop,
        path: &[usize],
        rest: &[Stmt],
        entry: State,
        ctx: &mut Ctx,
    ) -> Result<State, Unsupported> {
        if l.step != 1 {
            return Err(Unsupported(format!(
                "loop `{}` steps by {}",
                l.iter, l.step
            )));
        }
        let info = shape::loop_info(l, path);
        let label = format!("loop {} (line {})", l.iter, l.loc.line);
        let iters = Self::frame_iters(&ctx.frames);
        let start = self.affine(&l.start, &iters)?;
        let end = self.affine(&l.end, &iters)?;
        // What the loop changes.
        let mut arrays: Vec<String> = Vec::new();
        collect_arrays(&l.body, &mut arrays);
        let mut locals = Vec::new();
        shape::written_locals(&l.body, &mut locals);
        let accumulators: Vec<String> = locals
            .iter()
            .filter(|n| shape::live_on_entry(&l.body, n))
            .cloned()
            .collect();
        let mut described = Vec::new();
        for a in &arrays {
            let writes = self.writes.get(a).map(Vec::as_slice).unwrap_or_default();
            described.push(if rewritten::Rewritten::of(a, writes).is_some() {
                format!("{a}: redone in every iteration of its outer loops: where this iteration's init is done, the C's partial sum; elsewhere the C's complete sum of the latest iteration done, or unchanged when none is")
            } else {
                format!("{a}: elements whose writes precede the point equal the lifted {a} (reductions cut at the iterations done), the rest are unchanged")
            });
        }
        for a in &accumulators {
            if let Some((array, _)) = stored_running_value(a, l) {
                described.push(format!(
                    "{a} = what the previous iteration stored into {array} (the lifted element), or its value before the loop"
                ));
                continue;
            }
            described.push(if self.relations_by_difference {
                format!(
                    "{a}: storing it adds to the element what the lifted reduction it feeds adds from the loop's start to {}",
                    l.iter
                )
            } else {
                format!("{a} = the lifted reduction it feeds, cut at {}", l.iter)
            });
        }
        self.invariants.push(format!(
            "{label}: {}",
            if described.is_empty() {
                "nothing changes".to_string()
            } else {
                described.join("; ")
            }
        ));
        let at = |this: &mut Self,
                  state: &State,
                  counter: &Int|
         -> Result<(State, Vec<Bool>), Unsupported> {
            let mut facts = Vec::new();
            let mut frames = ctx.frames.clone();
            frames.push(Frame {
                info: info.clone(),
                counter: counter.clone(),
            });
            let frames = Rc::new(frames);
            let mut s = state.clone();
            for a in &arrays {
                s.arrays.insert(
                    a.clone(),
                    ArrayState {
                        base: Base::Piece(frames.clone()),
                        writes: Vec::new(),
                    },
                );
            }
            for v in &locals {
                s.relations.remove(v);
                let value = if accumulators.contains(v) {
                    match this.accumulator(v, l, rest, counter, &ctx.frames, &s)? {
                        Accumulator::Value(x) => integral(x, this.local_ty(v)),
                        Accumulator::Relation(rel) => {
                            let ty = this.local_ty(v);
                            let x = fresh_value(this, v, ty);
                            facts.push(this.relation_holds(v, &rel, &x, &s)?);
                            s.relations.insert(v.clone(), rel);
                            x
                        }
                    }
                } else {
                    let ty = this.local_ty(v);
                    let name = format!("{v}_dead");
                    fresh_value(this, &name, ty)
                };
                s.locals.insert(v.clone(), value);
            }
            Ok((s, facts))
        };
        // Initiation.
        let (head, _) = at(self, &entry, &start)?;
        let parts = self.matches(&entry, &head, &arrays, &accumulators)?;
        self.push_parts(&format!("initiation of {label}"), &ctx.hyps, parts);
        // Preservation.
        let counter = self.fresh_int(&l.iter);
        let (head, facts) = at(self, &entry, &counter)?;
        let mut inner = Ctx {
            frames: ctx.frames.clone(),
            hyps: ctx.hyps.clone(),
            guard: Bool::from_bool(true),
        };
        inner.frames.push(Frame {
            info: info.clone(),
            counter: counter.clone(),
        });
        inner.hyps.push(counter.ge(&start) & counter.lt(&end));
        inner.hyps.extend(facts);
        let after_body = self.block(&l.body, path, head, &mut inner)?;
        let (next, _) = at(self, &entry, &(counter.clone() + Int::from_i64(1)))?;
        let parts = self.matches(&after_body, &next, &arrays, &accumulators)?;
        self.push_parts(&format!("preservation of {label}"), &inner.hyps, parts);
        // Exit.
        let last = start.le(&end).ite(&end, &start);
        let (exit, facts) = at(self, &entry, &last)?;
        ctx.hyps.extend(facts);
        Ok(exit)
    }

    /// Whether accumulator `local` holding `value` satisfies `rel` in
    /// `state`.
    fn relation_holds(
        &self,
        local: &str,
        rel: &Relation,
        value: &V,
        state: &State,
    ) -> Result<Bool, Unsupported> {
        let mut s = state.clone();
        s.locals.insert(local.to_string(), value.clone());
        let ctx = Ctx {
            frames: rel.frames.clone(),
            hyps: Vec::new(),
            guard: Bool::from_bool(true),
        };
        let stored = convert(&self.expr(&rel.consumer, &s, &ctx)?, rel.elem);
        let Some((x0, target0)) = &rel.base else {
            if let (V::R(stored), V::R(target)) = (&stored, &rel.target) {
                return Ok(quotients_equal(stored, target));
            }
            return Ok(stored.equal(&rel.target));
        };
        s.locals.insert(local.to_string(), x0.clone());
        let stored0 = convert(&self.expr(&rel.consumer, &s, &ctx)?, rel.elem);
        Ok(value::sub(&stored, &stored0).equal(&value::sub(&rel.target, target0)))
    }

    /// `actual` agrees with `expected` on a fresh element of every array in
    /// `arrays` and on every accumulator: one part per array (and one for
    /// the accumulators), each split into cases where the loop body wrote
    /// the array (the fresh element is one of the written ones, or none of
    /// them). A case's equalities decide where the element lies, so the
    /// invariant's `ite`s fall away before Z3 multiplies them out.
    fn matches(
        &mut self,
        actual: &State,
        expected: &State,
        arrays: &[String],
        accumulators: &[String],
    ) -> Result<Vec<Part>, Unsupported> {
        let mut parts = Vec::new();
        for a in arrays {
            let shape = self.array_shape(a)?;
            let (e, bounds) = self.element(a, &shape)?;
            let goal = self
                .read(actual, a, &e)?
                .equal(&self.read(expected, a, &e)?);
            let written = actual
                .arrays
                .get(a)
                .map(|s| s.writes.as_slice())
                .unwrap_or(&[]);
            parts.push(Part {
                goal,
                hyps: bounds,
                cases: element_cases(&e, written),
            });
        }
        let mut goal = Bool::from_bool(true);
        for v in accumulators {
            if let (Some(x), Some(rel)) = (actual.locals.get(v), expected.relations.get(v)) {
                goal &= self.relation_holds(v, rel, x, actual)?;
            } else if let (Some(x), Some(y)) = (actual.locals.get(v), expected.locals.get(v)) {
                goal &= x.equal(y);
            } else {
                return Err(Unsupported(format!(
                    "the accumulator `{v}` has no value before its loop"
                )));
            }
        }
        if !accumulators.is_empty() {
            parts.push(Part {
                goal,
                hyps: Vec::new(),
                cases: Vec::new(),
            });
        }
        Ok(parts)
    }

    /// One condition per part and case of `parts`, all named `name`.
    fn push_parts(&mut self, name: &str, hyps: &[Bool], parts: Vec<Part>) {
        for part in parts {
            let base = [hyps, &part.hyps].concat();
            if part.cases.is_empty() {
                self.conditions.push(Condition {
                    name: name.to_string(),
                    hyps: base,
                    goal: part.goal,
                    subst: Vec::new(),
                });
                continue;
            }
            for case in part.cases {
                let mut hyps = base.clone();
                hyps.push(case.hyp);
                self.conditions.push(Condition {
                    name: name.to_string(),
                    hyps,
                    goal: part.goal.clone(),
                    subst: case.subst,
                });
            }
        }
    }

    /// [`single_size`] when the name is a size parameter (a bound that is
    /// an enclosing loop's counter cuts no lifted reduction).
    fn single_size(&self, a: &Affine) -> Option<String> {
        single_size(a).filter(|s| s.starts_with('#') || self.symbols.size(s).is_some())
    }

    /// The size an accumulating loop's reduction is cut on: its end, or,
    /// for a triangular loop ending at an enclosing loop's iterator
    /// (symm's `for (k = 0; k < i; k++) temp2 += ...`), the size that loop
    /// runs to. The lifted reduction then runs over the whole size with
    /// the terms past `i` masked, and its cut at a counter below `i` is the
    /// C's partial sum; whether the mask holds is left to the conditions.
    fn accumulation_size(&self, end: &Affine, frames: &[Frame]) -> Option<String> {
        self.single_size(end).or_else(|| {
            let outer = single_size(end)?;
            let frame = frames.iter().find(|f| f.info.iter == outer)?;
            self.single_size(&frame.info.end)
        })
    }

    fn local_ty(&self, name: &str) -> ScalarType {
        self.kernel
            .locals
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| match &l.kind {
                tenslift_frontend::ir::LocalKind::Scalar { ty } => Some(*ty),
                _ => None,
            })
            .unwrap_or(ScalarType::F64)
    }

    fn expr(&self, e: &Expr, state: &State, ctx: &Ctx) -> Result<V, Unsupported> {
        let float = e.ty.is_float();
        Ok(match &e.kind {
            ExprKind::IntLit { value } => V::int(*value),
            ExprKind::FloatLit { value, .. } => V::R(real_literal(*value, e.ty.bits() == 32)?),
            ExprKind::Var { name, .. } => {
                if let Some(f) = ctx.frames.iter().rev().find(|f| &f.info.iter == name) {
                    V::I(f.counter.clone())
                } else if let Some(v) = state.locals.get(name) {
                    v.clone()
                } else if let Some(v) = self.symbols.scalars.get(name) {
                    v.clone()
                } else if let Some(s) = self.symbols.size(name) {
                    V::I(s)
                } else {
                    return Err(Unsupported(format!(
                        "`{name}` is read before it has a value"
                    )));
                }
            }
            ExprKind::Load { array, index } => {
                let iters = Self::frame_iters(&ctx.frames);
                let idx = index
                    .iter()
                    .map(|a| self.affine(a, &iters))
                    .collect::<Result<Vec<_>, _>>()?;
                self.read(state, array, &idx)?
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg, state, ctx)?;
                match op {
                    UnaryOp::Neg => value::sub(
                        &if float {
                            V::R(value::real_num(0))
                        } else {
                            V::int(0)
                        },
                        &a,
                    ),
                    UnaryOp::Not => V::B(a.as_bool().not()),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs, state, ctx)?;
                let b = self.expr(rhs, state, ctx)?;
                match op {
                    BinaryOp::Add => value::add(&a, &b),
                    BinaryOp::Sub => value::sub(&a, &b),
                    BinaryOp::Mul => value::mul(&a, &b),
                    BinaryOp::Div if float || a.is_real() || b.is_real() => {
                        V::R(a.as_real() / b.as_real())
                    }
                    BinaryOp::Div => V::I(value::trunc_div(&a.as_int(), &b.as_int())),
                    BinaryOp::Rem => V::I(value::trunc_rem(&a.as_int(), &b.as_int())),
                    BinaryOp::Lt => V::B(value::lt(&a, &b)),
                    BinaryOp::Le => V::B(value::ge(&b, &a)),
                    BinaryOp::Gt => V::B(value::lt(&b, &a)),
                    BinaryOp::Ge => V::B(value::ge(&a, &b)),
                    BinaryOp::Eq => V::B(a.equal(&b)),
                    BinaryOp::Ne => V::B(a.equal(&b).not()),
                    BinaryOp::And => V::B(a.as_bool() & b.as_bool()),
                    BinaryOp::Or => V::B(a.as_bool() | b.as_bool()),
                }
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let c = self.expr(cond, state, ctx)?.as_bool();
                V::ite(
                    &c,
                    &self.expr(then_value, state, ctx)?,
                    &self.expr(else_value, state, ctx)?,
                )
            }
            ExprKind::Cast { arg } => convert(&self.expr(arg, state, ctx)?, e.ty),
            ExprKind::Call { func, args } => {
                let vs = args
                    .iter()
                    .map(|a| self.expr(a, state, ctx))
                    .collect::<Result<Vec<_>, _>>()?;
                let arg = |k: usize| {
                    vs.get(k)
                        .cloned()
                        .ok_or_else(|| Unsupported("missing argument".into()))
                };
                match func {
                    MathFn::Sqrt => math("sqrt", &[arg(0)?]),
                    MathFn::Exp => math("exp", &[arg(0)?]),
                    MathFn::Log => math("log", &[arg(0)?]),
                    MathFn::Tanh => math("tanh", &[arg(0)?]),
                    MathFn::Round => math("round", &[arg(0)?]),
                    MathFn::Floor => math("floor", &[arg(0)?]),
                    MathFn::Ceil => math("ceil", &[arg(0)?]),
                    MathFn::Sin => math("sin", &[arg(0)?]),
                    MathFn::Cos => math("cos", &[arg(0)?]),
                    MathFn::Cosh => math("cosh", &[arg(0)?]),
                    MathFn::Sinh => math("sinh", &[arg(0)?]),
                    MathFn::Pow => super::libm::pow(&arg(0)?, &arg(1)?),
                    MathFn::Abs => {
                        let a = arg(0)?;
                        let zero = if a.is_real() {
                            V::R(value::real_num(0))
                        } else {
                            V::int(0)
                        };
                        V::ite(&value::lt(&a, &zero), &value::sub(&zero, &a), &a)
                    }
                    MathFn::Max => value::max_v(&arg(0)?, &arg(1)?),
                    MathFn::Min => value::min_v(&arg(0)?, &arg(1)?),
                }
            }
        })
    }
}

/// `stored = target`, where `stored` is `a / d`: `a = b` wherever `target`
/// (through its `ite`s) is `b / d` with the same `d`. Over the reals
/// `x / 0` is any value, so the quotients alone would not pin the
/// accumulator down where `d` is zero (ludcmp's `w / A[j][j]`); the
/// numerators do, and imply the quotients.
fn quotients_equal(stored: &z3::ast::Real, target: &z3::ast::Real) -> Bool {
    use z3::ast::{Ast, Real};
    use z3::DeclKind;
    /// The numerator and denominator of a quotient.
    fn quotient(x: &Real) -> Option<(Real, Real)> {
        if x.safe_decl().ok()?.kind() != DeclKind::Div {
            return None;
        }
        let [a, d] = x.children().try_into().ok()?;
        Some((a.as_real()?, d.as_real()?))
    }
    fn walk(stored: &Real, a: &Real, d: &Real, t: &Real) -> Bool {
        match quotient(t) {
            Some((b, e)) if e == *d => return a.eq(&b),
            _ => {}
        }
        let is_ite = t.safe_decl().is_ok_and(|f| f.kind() == DeclKind::Ite);
        if let (true, [c, x, y]) = (is_ite, t.children().as_slice()) {
            if let (Some(c), Some(x), Some(y)) = (c.as_bool(), x.as_real(), y.as_real()) {
                return c.ite(&walk(stored, a, d, &x), &walk(stored, a, d, &y));
            }
        }
        stored.eq(t)
    }
    match quotient(stored) {
        Some((a, d)) => walk(stored, &a, &d, target),
        None => stored.eq(target),
    }
}

/// Whether two values are the same Z3 term.
fn same_term(a: &V, b: &V) -> bool {
    match (a, b) {
        (V::I(x), V::I(y)) => x == y,
        (V::R(x), V::R(y)) => x == y,
        (V::B(x), V::B(y)) => x == y,
        _ => false,
    }
}

/// The value an integer local holds for `x`: the integer under a
/// conversion to real (a float sum of converted integers, which the C
/// accumulates in an `int`), so that the invariant stays in the integers.
fn integral(x: V, ty: ScalarType) -> V {
    use z3::ast::Ast;
    if let V::R(r) = &x {
        if !ty.is_float()
            && ty != ScalarType::Bool
            && r.is_app()
            && r.decl().kind() == z3::DeclKind::ToReal
        {
            if let Some(i) = r.children().first().and_then(|c| c.as_int()) {
                return V::I(i);
            }
        }
    }
    x
}

fn fresh_value(exec: &mut Exec, name: &str, ty: ScalarType) -> V {
    exec.fresh += 1;
    let n = format!("{name}!{}", exec.fresh);
    if ty.is_float() {
        V::R(z3::ast::Real::new_const(n))
    } else {
        V::I(Int::new_const(n))
    }
}

/// C conversion to `ty` (also applied on assignment).
fn convert(v: &V, ty: ScalarType) -> V {
    match ty {
        ScalarType::Bool => V::B(v.as_bool()),
        t if t.is_float() => V::R(v.as_real()),
        // C's signed overflow is undefined, so 32/64-bit results are exact.
        t if t.bits() >= 32 => V::I(v.as_int()),
        t => {
            if matches!(v, V::I(_) | V::B(_)) || v.is_real() {
                V::I(value::wrap(
                    &v.as_int(),
                    IntTy {
                        bits: t.bits(),
                        signed: t.is_signed(),
                    },
                ))
            } else {
                v.clone()
            }
        }
    }
}

fn target_ty(t: &LValue) -> ScalarType {
    match t {
        LValue::Scalar { ty, .. } | LValue::Element { ty, .. } => *ty,
    }
}

/// The truncation key of a loop bound: `a` when it is exactly one size
/// parameter, the constant's key when it is a constant (fixed-size kernels
/// cut their reductions at the loop counter the same way).
fn single_size(a: &Affine) -> Option<String> {
    if a.terms.is_empty() {
        return Some(super::lifted::constant_key(a.constant));
    }
    (a.constant == 0 && a.terms.len() == 1)
        .then(|| a.terms.iter().next())
        .flatten()
        .and_then(|(n, c)| (*c == 1).then(|| n.clone()))
}

/// Whether `e` converts a float to an integer at its root (through casts).
fn truncates(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Cast { arg } => (!e.ty.is_float() && arg.ty.is_float()) || truncates(arg),
        _ => false,
    }
}

/// The store of local `local` that every iteration of `l` makes after
/// updating it (`y[i] = s` after `s += x[i]`, or after `if (x[i] > s) s =
/// x[i];`): a top-level statement of a body without inner loops, with
/// nothing writing the local after it, at an element each iteration
/// writes anew (the index moves with the iterator: a store of `s` to one
/// element, overwritten every iteration, holds only the last partial
/// value, which the lifted element is not). The array and the index.
fn stored_running_value<'l>(local: &str, l: &'l Loop) -> Option<(&'l str, &'l [Affine])> {
    if contains_loop(&l.body) {
        return None;
    }
    let writes_local = |body: &[Stmt]| {
        let mut written = Vec::new();
        shape::written_locals(body, &mut written);
        written.iter().any(|w| w == local)
    };
    let (at, array, index) = l.body.iter().enumerate().find_map(|(k, s)| match s {
        Stmt::Assign {
            target: LValue::Element { array, index, .. },
            value,
            ..
        } if is_plain(value, local) && !truncates(value) => Some((k, array, index)),
        _ => None,
    })?;
    if !index.iter().any(|a| a.terms.contains_key(&l.iter)) {
        return None;
    }
    let updated_before = writes_local(&l.body[..at]);
    let kept_after = !writes_local(&l.body[at + 1..]);
    (updated_before && kept_after).then_some((array.as_str(), index.as_slice()))
}

fn is_plain(e: &Expr, local: &str) -> bool {
    match &e.kind {
        ExprKind::Var { name, .. } => name == local,
        ExprKind::Cast { arg } => is_plain(arg, local),
        _ => false,
    }
}

/// Lexicographic `xs < cs` (or `<=` with `or_equal`).
fn lex(xs: &[Int], cs: &[Int], or_equal: bool) -> Bool {
    match (xs.split_first(), cs.split_first()) {
        (Some((x, xr)), Some((c, cr))) => x.lt(c) | (x.eq(c) & lex(xr, cr, or_equal)),
        _ => Bool::from_bool(or_equal),
    }
}

fn collect_arrays(body: &[Stmt], out: &mut Vec<String>) {
    for s in body {
        match s {
            Stmt::Loop(l) => collect_arrays(&l.body, out),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                collect_arrays(then_body, out);
                collect_arrays(else_body, out);
            }
            Stmt::Assign {
                target: LValue::Element { array, .. },
                ..
            } if !out.contains(array) => out.push(array.clone()),
            _ => {}
        }
    }
}

fn contains_loop(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Loop(_) => true,
        Stmt::If {
            then_body,
            else_body,
            ..
        } => contains_loop(then_body) || contains_loop(else_body),
        _ => false,
    })
}

fn contains_return(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Return { .. } => true,
        Stmt::Loop(l) => contains_return(&l.body),
        Stmt::If {
            then_body,
            else_body,
            ..
        } => contains_return(then_body) || contains_return(else_body),
        _ => false,
    })
}

/// The init statement's value at the element.
/// Evaluates a write's value at an element (and reduction index).
type PlainWrite<'f> = dyn Fn(&Write, Option<(usize, Int)>) -> Result<V, Unsupported> + 'f;

fn init_value(_exec: &Exec, init: &Write, plain: &PlainWrite) -> Result<V, Unsupported> {
    plain(init, None)
}

/// `body` when `value` is `X[idx] + body` or `body + X[idx]`.
fn accumulated_body(value: &Expr, array: &str, index: &[Affine]) -> Option<Expr> {
    let ExprKind::Binary {
        op: BinaryOp::Add,
        lhs,
        rhs,
    } = &value.kind
    else {
        return None;
    };
    let is_self = |e: &Expr| matches!(&e.kind, ExprKind::Load { array: a, index: i } if a == array && i == index);
    if is_self(lhs) {
        Some((**rhs).clone())
    } else if is_self(rhs) {
        Some((**lhs).clone())
    } else {
        None
    }
}

fn strip_casts(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Cast { arg } => strip_casts(arg),
        _ => e,
    }
}

/// The loop of `w` absent from its index when `w` stores a value that does
/// not read `name` itself: the element is rewritten in every iteration.
fn overwrite_loop(name: &str, w: &Write) -> Option<usize> {
    match w.reduction_loops().as_slice() {
        [m] if !reads_array(&w.value, name) => Some(*m),
        _ => None,
    }
}

/// A write of `name` inside all its loops' index that does not read `name`.
fn is_plain_write(name: &str, w: &Write) -> bool {
    w.reduction_loops().is_empty() && !reads_array(&w.value, name)
}

fn reads_array(e: &Expr, name: &str) -> bool {
    let mut loads = Vec::new();
    shape::loads(e, &mut loads);
    loads.iter().any(|l| l == name)
}
