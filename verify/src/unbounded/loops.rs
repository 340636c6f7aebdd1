//! Unbounded proofs for lifted programs that keep loops (partial lifts),
//! by simulation.
//!
//! A partial lift keeps some C loops as TensIR `for` loops and lifts their
//! bodies statement by statement, so each kept loop runs in lockstep with
//! the C loop of the same iterator. The proof follows that structure. The
//! program and the C are cut into segments at the kept loops: the
//! statements between two kept loops, and each kept loop's body. For every
//! segment we prove, with the loop-free machinery of this module's parent,
//! that the C statements and the TensIR statements map *any* array state
//! to the same array state: the segment's arrays start as fresh
//! uninterpreted functions, not the kernel's inputs, and the variables of
//! the enclosing kept loops are symbols constrained only to their ranges
//! (`start <= v < stop`, with bounds that may depend on outer kept loops,
//! as in triangular solvers). For each kept loop we also prove its bounds
//! equal the C loop's (or both ranges empty).
//!
//! Soundness: equal segments compose to equal sequences; a loop whose two
//! bodies agree on every state and every in-range iteration value, run
//! over the same range from the same state, ends in the same state (the
//! invariant "after every iteration, the program's arrays equal the C's",
//! by induction on the loop variable). C locals carry nothing across a
//! segment boundary: a segment reading a local before writing it is
//! refused by the loop-free machinery, and a kernel that assigns one of
//! its scalar parameters is refused here. The exception is a C local the
//! program keeps as a `var` of the same name and type (durbin's `alpha`,
//! `z`): the pair is part of the compared state, like the arrays (see
//! [`locals`]).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use tenslift_frontend::ir::{self as loop_ir, Affine, Kernel, LValue, Origin, Role, ScalarType};
use tenslift_targets::{self as tensir, Access, Dim, Expr, Op, Program, SliceItem, Stmt};
use z3::ast::{Ast, Bool, Int};
use z3::{SatResult, Solver};

mod frame;
mod hoisted;
mod locals;

use super::dim_term;
use super::extensionality::Tagged;
use super::lifted::Lifted;
use super::{relevance, vcgen, UnboundedOptions, UnboundedResult, Unsupported};
use frame::Snapshot;
use hoisted::Hoisted;
use locals::KeptVar;

/// A kept loop around a segment, as the program states it.
#[derive(Clone)]
struct Kept {
    var: String,
    start: Dim,
    stop: Dim,
}

/// C statements and TensIR statements to prove equal on every state.
struct Segment {
    label: String,
    c: Vec<loop_ir::Stmt>,
    t: Vec<Stmt>,
    scope: Vec<Kept>,
    /// `let`s bound just before the kept loop whose body this segment is,
    /// and read inside it.
    snapshot: Option<Snapshot>,
    /// How many statements at the start of `t` are hoisted `let`s (the
    /// snapshot's `let`s go after them: they may read them).
    hoisted_lets: usize,
}

/// A kept loop whose range must equal its C loop's.
struct Bounds {
    label: String,
    c_start: Affine,
    c_end: Affine,
    kept: Kept,
    scope: Vec<Kept>,
}

enum Obligation {
    Segment(Segment),
    /// A stretch proved statement by statement, or, failing that, whole
    /// (a C statement may match TensIR statements other than the ones the
    /// split pairs it with).
    Split {
        statements: Vec<Segment>,
        whole: Segment,
    },
    Bounds(Bounds),
}

/// The outcome of one obligation.
enum Verdict {
    Holds {
        conditions: usize,
    },
    Unknown {
        condition: String,
        reason: String,
    },
    /// Z3 found a model of the negated condition.
    Refuted {
        condition: String,
        model: Option<String>,
    },
}

/// Proves a program with kept loops equal to `kernel` for all sizes.
pub(super) fn prove(
    kernel: &Kernel,
    program: &Program,
    options: &UnboundedOptions,
) -> UnboundedResult {
    if let Some(name) = assigned_scalar_param(kernel) {
        return UnboundedResult::Unknown {
            condition: "splitting the kernel at its kept loops".to_string(),
            reason: format!(
                "the C assigns its scalar parameter `{name}`, whose value would cross the kept loops"
            ),
        };
    }
    let mut vars = match locals::kept_vars(kernel, program) {
        Ok(v) => v,
        Err(Unsupported(reason)) => {
            return UnboundedResult::Unknown {
                condition: "relating the program's `var`s to the C's locals".to_string(),
                reason,
            }
        }
    };
    let original = program;
    let stripped = locals::without_vars(program);
    let program = &stripped;
    let mut planner = Planner {
        kernel,
        program,
        paired: vars.iter().map(|v| v.name.to_string()).collect(),
        out: Vec::new(),
        invariants: Vec::new(),
    };
    let planned = planner.plan(
        &kernel.body,
        &program.body,
        &[],
        "the kernel",
        &Hoisted::default(),
    );
    let Planner {
        out: obligations,
        mut invariants,
        ..
    } = planner;
    if let Err(Unsupported(reason)) = planned {
        return UnboundedResult::Unknown {
            condition: "matching the kept TensIR loops to the C loops".to_string(),
            reason,
        };
    }
    locals::settle(&mut vars, &segment_bodies(&obligations));
    if let Some(line) = locals::invariant(&vars) {
        invariants.insert(0, line);
    }
    let mut conditions = 0;
    for obligation in &obligations {
        let verdict = match obligation {
            Obligation::Segment(s) => segment(kernel, program, &vars, s, options, &mut invariants),
            Obligation::Split { statements, whole } => {
                let kept = invariants.len();
                let mut total = 0;
                let mut failure = None;
                for s in statements {
                    match segment(kernel, program, &vars, s, options, &mut invariants) {
                        Verdict::Holds { conditions } => total += conditions,
                        other => {
                            failure = Some(other);
                            break;
                        }
                    }
                }
                match failure {
                    None => Verdict::Holds { conditions: total },
                    Some(first) => {
                        invariants.truncate(kept);
                        match segment(kernel, program, &vars, whole, options, &mut invariants) {
                            Verdict::Holds { conditions } => Verdict::Holds { conditions },
                            // The statement-level failure names the place.
                            _ => first,
                        }
                    }
                }
            }
            Obligation::Bounds(b) => bounds(kernel, program, b, options),
        };
        match verdict {
            Verdict::Holds { conditions: n } => conditions += n,
            Verdict::Unknown { condition, reason } => {
                return UnboundedResult::Unknown { condition, reason }
            }
            Verdict::Refuted { condition, model } => {
                // A segment is proved for every state, also states the
                // kernel never reaches; only a program that also fails a
                // bounded check is wrong.
                match super::bounded_verdict(kernel, original, options) {
                    super::Bounded::Fails(_) => {}
                    super::Bounded::Passes(sizes) => {
                        return UnboundedResult::Unknown {
                            condition,
                            reason: format!(
                                "the condition fails for some array state at the start of the segment, yet the bounded check passes at {sizes}: the segment may only hold on the states the kernel reaches"
                            ),
                        };
                    }
                    super::Bounded::Undecided(why) => {
                        return UnboundedResult::Unknown {
                            condition,
                            reason: format!(
                                "the condition fails for some array state at the start of the segment and the bounded check has no verdict ({why})"
                            ),
                        };
                    }
                }
                return UnboundedResult::Failed {
                    condition,
                    counterexample: model,
                };
            }
        }
    }
    UnboundedResult::Proved {
        invariants: super::assumed_lines(program).chain(invariants).collect(),
        conditions,
        arithmetic: super::arithmetic(program),
    }
}

/// The C statements of every segment an obligation may prove.
fn segment_bodies(obligations: &[Obligation]) -> Vec<&[loop_ir::Stmt]> {
    let mut out: Vec<&[loop_ir::Stmt]> = Vec::new();
    for o in obligations {
        match o {
            Obligation::Segment(s) => out.push(&s.c),
            Obligation::Split { statements, whole } => {
                out.extend(statements.iter().map(|s| s.c.as_slice()));
                out.push(&whole.c);
            }
            Obligation::Bounds(_) => {}
        }
    }
    out
}

/// A scalar parameter the kernel assigns, if any.
fn assigned_scalar_param(kernel: &Kernel) -> Option<String> {
    fn walk(body: &[loop_ir::Stmt], params: &HashSet<&str>) -> Option<String> {
        body.iter().find_map(|s| match s {
            loop_ir::Stmt::Assign {
                target: LValue::Scalar { name, .. },
                ..
            } if params.contains(name.as_str()) => Some(name.clone()),
            loop_ir::Stmt::Loop(l) => walk(&l.body, params),
            loop_ir::Stmt::If {
                then_body,
                else_body,
                ..
            } => walk(then_body, params).or_else(|| walk(else_body, params)),
            _ => None,
        })
    }
    let params: HashSet<&str> = kernel
        .params
        .iter()
        .filter(|p| matches!(p.kind, loop_ir::ParamKind::Scalar { .. }))
        .map(|p| p.name.as_str())
        .collect();
    walk(&kernel.body, &params)
}

/// The obligations of a kernel and its program, cut at the kept loops.
struct Planner<'a> {
    kernel: &'a Kernel,
    program: &'a Program,
    /// C locals paired with a program `var` (never hoisted: they are
    /// compared state).
    paired: HashSet<String>,
    out: Vec<Obligation>,
    invariants: Vec<String>,
}

impl Planner<'_> {
    /// Cuts a C block and a TensIR block at their kept loops into obligations;
    /// recurses into kept loop bodies, whose segments start with `hoisted`
    /// and the definitions before the loop that join it.
    fn plan(
        &mut self,
        c: &[loop_ir::Stmt],
        t: &[Stmt],
        scope: &[Kept],
        place: &str,
        hoisted: &Hoisted,
    ) -> Result<(), Unsupported> {
        let mut c_next = 0;
        let mut t_next = 0;
        for (tk, stmt) in t.iter().enumerate() {
            let Stmt::Loop {
                var,
                start,
                stop,
                body,
            } = stmt
            else {
                continue;
            };
            let found = c[c_next..]
                .iter()
                .position(|s| matches!(s, loop_ir::Stmt::Loop(l) if l.iter == **var))
                .map(|p| p + c_next);
            let Some(ck) = found else {
                return Err(Unsupported(format!(
                "the kept loop `{var}` has no C loop over `{var}` at the same level of {place} (after the loops already matched)"
            )));
            };
            let loop_ir::Stmt::Loop(l) = &c[ck] else {
                continue;
            };
            if l.step != 1 {
                return Err(Unsupported(format!(
                    "the C loop `{}` (line {}) steps by {}; kept loops step by 1",
                    l.iter, l.loc.line, l.step
                )));
            }
            segments(
                &c[c_next..ck],
                &t[t_next..tk],
                scope,
                place,
                hoisted,
                &mut self.out,
            );
            let inner_hoisted = hoisted.extend(
                self.kernel,
                self.program,
                &c[c_next..ck],
                &t[t_next..tk],
                &self.paired,
            );
            let snapshot =
                carried_lets(&t[t_next..tk], body, &inner_hoisted)?.map(|lets| Snapshot {
                    lets,
                    c_loop: l.clone(),
                });
            let kept = Kept {
                var: var.to_string(),
                start: start.clone(),
                stop: stop.clone(),
            };
            let label = format!("kept loop `{var}` (line {})", l.loc.line);
            self.out.push(Obligation::Bounds(Bounds {
                label: label.clone(),
                c_start: l.start.clone(),
                c_end: l.end.clone(),
                kept: kept.clone(),
                scope: scope.to_vec(),
            }));
            self.invariants.push(kept_invariant(&label, &kept, scope));
            let mut inner = scope.to_vec();
            inner.push(kept);
            let place = format!("the body of {label}");
            match snapshot {
                None => self.plan(&l.body, body, &inner, &place, &inner_hoisted)?,
                Some(snapshot) => {
                    self.invariants.push(frame_invariant(&label, &snapshot));
                    let (c, t) = inner_hoisted.around(&l.body, body);
                    self.out.push(Obligation::Segment(Segment {
                        label: format!("{place} (whole)"),
                        c,
                        t,
                        scope: inner,
                        snapshot: Some(snapshot),
                        hoisted_lets: inner_hoisted.t.len(),
                    }));
                }
            }
            c_next = ck + 1;
            t_next = tk + 1;
        }
        segments(
            &c[c_next..],
            &t[t_next..],
            scope,
            place,
            hoisted,
            &mut self.out,
        );
        Ok(())
    }
}

/// The simulation invariant of kept loop `kept` (labelled `label`) inside
/// the kept loops `scope`.
fn kept_invariant(label: &str, kept: &Kept, scope: &[Kept]) -> String {
    let outer = if scope.is_empty() {
        String::new()
    } else {
        let loops: Vec<String> = scope
            .iter()
            .map(|k| format!("{} in {}..{}", k.var, k.start, k.stop))
            .collect();
        format!(", inside {}", loops.join(", "))
    };
    let Kept { var, start, stop } = kept;
    format!(
        "{label}, for {var} in {start}..{stop} (the C loop's range){outer}: after every iteration every array equals the C's after the same iterations — by induction on {var}, since the loop bodies are proved to map every array state to the same state for every {var} in range"
    )
}

/// The frame invariant of kept loop `label` whose body reads the `let`s of
/// `snapshot`.
fn frame_invariant(label: &str, snapshot: &Snapshot) -> String {
    let lets: Vec<String> = snapshot
        .lets
        .iter()
        .filter_map(|s| match s {
            Stmt::Let { name, .. } => Some(name.to_string()),
            _ => None,
        })
        .collect();
    format!(
        "{label}, frame: at the head of every iteration, each array element that the C loop's earlier iterations did not write still holds the value it had where {} was bound",
        lets.join(", ")
    )
}

/// The obligations for a loop-free stretch: statement by statement when
/// each C statement has its own group of TensIR statements (one store or
/// return, with the `let`s before it, none of them used by another group),
/// otherwise the stretch as a whole.
fn segments(
    c: &[loop_ir::Stmt],
    t: &[Stmt],
    scope: &[Kept],
    place: &str,
    hoisted: &Hoisted,
    out: &mut Vec<Obligation>,
) {
    if c.is_empty() && t.iter().all(|s| matches!(s, Stmt::Let { .. })) {
        return;
    }
    let mut groups: Vec<Vec<Stmt>> = Vec::new();
    let mut pending = Vec::new();
    for s in t {
        pending.push(s.clone());
        if !matches!(s, Stmt::Let { .. }) {
            groups.push(std::mem::take(&mut pending));
        }
    }
    if let Some(last) = groups.last_mut() {
        last.append(&mut pending);
    }
    let lines = |stmts: &[loop_ir::Stmt]| -> String {
        let ls: Vec<u32> = stmts.iter().filter_map(c_line).collect();
        match (ls.iter().min(), ls.iter().max()) {
            (Some(a), Some(b)) if a == b => format!("line {a}"),
            (Some(a), Some(b)) => format!("lines {a}-{b}"),
            _ => "no C statement".to_string(),
        }
    };
    let (whole_c, whole_t) = hoisted.around(c, t);
    let whole = Segment {
        label: format!("statements ({}) of {place}", lines(c)),
        c: whole_c,
        t: whole_t,
        scope: scope.to_vec(),
        snapshot: None,
        hoisted_lets: hoisted.t.len(),
    };
    if c.len() > 1 && groups.len() == c.len() && lets_stay_in_group(&groups) {
        let statements = c
            .iter()
            .zip(groups)
            .enumerate()
            .map(|(k, (cs, ts))| {
                let (c, t) = hoisted.around(std::slice::from_ref(cs), &ts);
                Segment {
                    label: format!(
                        "statement {} ({}) of {place}",
                        k + 1,
                        lines(std::slice::from_ref(cs))
                    ),
                    c,
                    t,
                    scope: scope.to_vec(),
                    snapshot: None,
                    hoisted_lets: hoisted.t.len(),
                }
            })
            .collect();
        out.push(Obligation::Split { statements, whole });
        return;
    }
    out.push(Obligation::Segment(whole));
}

/// The `let`s of `before` (the statements between the previous kept loop
/// and this one) that the loop body reads, with every `let` after the
/// first of them; `None` when the body reads none. Refused when a store
/// comes between them and the loop (the `let` would not see the loop's
/// entry state) or when the body keeps loops of its own. `let`s that are
/// `hoisted` are not carried: every segment of the body starts with them.
fn carried_lets(
    before: &[Stmt],
    body: &[Stmt],
    hoisted: &Hoisted,
) -> Result<Option<Vec<Stmt>>, Unsupported> {
    let mut used = HashSet::new();
    for s in body {
        stmt_names(s, &mut used);
    }
    used.retain(|n| !hoisted.binds(n));
    let first = before
        .iter()
        .position(|s| matches!(s, Stmt::Let { name, .. } if used.contains(&**name)));
    let Some(first) = first else {
        return Ok(None);
    };
    if before[first..]
        .iter()
        .any(|s| !matches!(s, Stmt::Let { .. }))
    {
        return Err(Unsupported(
            "a `let` read inside a kept loop is bound before a store that precedes the loop".into(),
        ));
    }
    if body.iter().any(Stmt::has_loop) {
        return Err(Unsupported(
            "a `let` bound before a kept loop is read in a body that keeps loops of its own".into(),
        ));
    }
    Ok(Some(before[first..].to_vec()))
}

fn stmt_names(s: &Stmt, out: &mut HashSet<String>) {
    match s {
        Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => {
            names(value, out)
        }
        Stmt::Loop { body, .. } => body.iter().for_each(|b| stmt_names(b, out)),
        Stmt::Var { name, .. } => {
            out.insert(name.to_string());
        }
    }
}

fn c_line(s: &loop_ir::Stmt) -> Option<u32> {
    match s {
        loop_ir::Stmt::Loop(l) => Some(l.loc.line),
        loop_ir::Stmt::Assign { loc, .. }
        | loop_ir::Stmt::If { loc, .. }
        | loop_ir::Stmt::Return { loc, .. } => Some(loc.line),
    }
}

/// Whether no group reads a `let` another group binds.
fn lets_stay_in_group(groups: &[Vec<Stmt>]) -> bool {
    let bound: Vec<HashSet<String>> = groups
        .iter()
        .map(|g| {
            g.iter()
                .filter_map(|s| match s {
                    Stmt::Let { name, .. } => Some(name.to_string()),
                    _ => None,
                })
                .collect()
        })
        .collect();
    groups.iter().enumerate().all(|(k, g)| {
        let mut used = HashSet::new();
        for s in g {
            if let Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) = s {
                names(value, &mut used);
            }
        }
        bound
            .iter()
            .enumerate()
            .all(|(j, b)| j == k || b.is_disjoint(&used))
    })
}

fn names(e: &Expr, out: &mut HashSet<String>) {
    if let Op::Var(n) = e.op() {
        out.insert(n.to_string());
    }
    for a in e.args() {
        names(a, out);
    }
}

/// The hypotheses every obligation assumes: the kernel's sizes are at
/// least 1 (as [`super::prove`] assumes) and each enclosing kept loop's
/// variable lies in its range.
fn hypotheses(
    kernel: &Kernel,
    program: &Program,
    sizes: &[String],
    scope: &[Kept],
) -> Result<Vec<Bool>, Unsupported> {
    let mut hyps = Vec::new();
    for name in sizes {
        if scope.iter().any(|k| &k.var == name) {
            continue;
        }
        if super::is_size(program, kernel, name) {
            hyps.push(Int::new_const(name.as_str()).ge(Int::from_i64(1)));
        }
    }
    for k in scope {
        let v = Int::new_const(k.var.as_str());
        let lookup = |s: &str| Some(Int::new_const(s));
        hyps.push(v.ge(dim_term(&k.start, &lookup)?) & v.lt(dim_term(&k.stop, &lookup)?));
    }
    hyps.extend(super::preconditions(program, &|s| Some(Int::new_const(s)))?);
    Ok(hyps)
}

fn size_names(kernel: &Kernel, program: &Program) -> Vec<String> {
    let mut names: Vec<String> = program
        .params
        .iter()
        .filter(|p| matches!(p.kind, tensir::ParamKind::Size))
        .map(|p| p.name.to_string())
        .collect();
    for p in &kernel.params {
        if matches!(p.kind, loop_ir::ParamKind::Scalar { ty, .. } if !ty.is_float())
            && !names.contains(&p.name)
        {
            names.push(p.name.clone());
        }
    }
    names
}

/// The kept loop's range equals the C loop's, or both are empty.
fn bounds(kernel: &Kernel, program: &Program, b: &Bounds, options: &UnboundedOptions) -> Verdict {
    let condition = format!("bounds of {}", b.label);
    let terms = || -> Result<(Vec<Bool>, Bool), Unsupported> {
        let hyps = hypotheses(kernel, program, &size_names(kernel, program), &b.scope)?;
        let lookup = |s: &str| Some(Int::new_const(s));
        let ts = dim_term(&b.kept.start, &lookup)?;
        let tt = dim_term(&b.kept.stop, &lookup)?;
        let cs = affine_in(&b.c_start, &HashMap::new());
        let ce = affine_in(&b.c_end, &HashMap::new());
        let same = ts.eq(&cs) & tt.eq(&ce);
        let both_empty = tt.le(&ts) & ce.le(&cs);
        Ok((hyps, same | both_empty))
    };
    match terms() {
        Ok((hyps, goal)) => check(&condition, &hyps, &goal, &[], options),
        Err(Unsupported(reason)) => Verdict::Unknown { condition, reason },
    }
}

/// An affine expression with loop iterators from `env`, other names as
/// the shared size symbols.
pub(super) fn affine_in(a: &Affine, env: &std::collections::HashMap<String, Int>) -> Int {
    let mut t = Int::from_i64(a.constant);
    for (name, c) in &a.terms {
        let v = env
            .get(name)
            .cloned()
            .unwrap_or_else(|| Int::new_const(name.as_str()));
        t += Int::from_i64(*c) * v;
    }
    t
}

/// Proves one segment: the C statements and the TensIR statements, as a
/// kernel and a loop-free program over fresh array contents with the kept
/// loop variables as symbols, through the loop-free machinery.
fn segment(
    kernel: &Kernel,
    program: &Program,
    vars: &[KeptVar],
    s: &Segment,
    options: &UnboundedOptions,
    invariants: &mut Vec<String>,
) -> Verdict {
    let unknown = |what: &str, reason: String| Verdict::Unknown {
        condition: format!("{what}, in {}", s.label),
        reason,
    };
    let c_returns =
        s.c.iter()
            .any(|x| matches!(x, loop_ir::Stmt::Return { .. }));
    let t_returns = s.t.iter().any(|x| matches!(x, Stmt::Return(_)));
    if c_returns != t_returns {
        return unknown(
            "the returned value",
            "only one side returns in this segment".to_string(),
        );
    }
    let (mut part_kernel, mut part_program) = parts(kernel, program, s, c_returns);
    part_program.params.extend(locals::as_params(vars));
    locals::arrays_as_params(&mut part_kernel, vars);
    let mut entry_arrays = Vec::new();
    if let Some(snapshot) = &s.snapshot {
        match frame::entry_copies(program, snapshot) {
            Ok((params, lets, arrays)) => {
                part_program.params.extend(params);
                let at = s.hoisted_lets.min(part_program.body.len());
                part_program.body.splice(at..at, lets);
                entry_arrays = arrays;
            }
            Err(Unsupported(reason)) => return unknown("the `let`s read in the loop", reason),
        }
    }
    let symbols = super::symbols(&part_kernel, &part_program);
    let lifted = match Lifted::new(&part_program, &symbols) {
        Ok(l) => l,
        Err(Unsupported(reason)) => return unknown("encoding the lifted statements", reason),
    };
    let mut exec = match vcgen::Exec::new(&part_kernel, &lifted, &symbols) {
        Ok(e) => e,
        Err(Unsupported(reason)) => return unknown("the loop nest's shape", reason),
    };
    exec.share_scalars(locals::shared_scalars(vars));
    let sizes: Vec<String> = symbols.sizes.keys().cloned().collect();
    let hyps = match hypotheses(kernel, program, &sizes, &s.scope) {
        Ok(h) => h,
        Err(Unsupported(reason)) => return unknown("the kept loops' ranges", reason),
    };
    if let Err(Unsupported(reason)) = exec.run(hyps) {
        return unknown("generating the verification conditions", reason);
    }
    let facts: Vec<(Bool, HashSet<String>)> = lifted
        .lemmas
        .borrow()
        .iter()
        .chain(symbols.facts.borrow().iter())
        .map(|f| (f.clone(), relevance::fresh_constants(f)))
        .collect();
    // The extensionality tiers, made once a condition needs them.
    let mut with_sums: Option<Vec<Vec<Tagged>>> = None;
    for condition in &exec.conditions {
        let name = format!("{}, in {}", condition.name, s.label);
        let mut hyps = condition.hyps.clone();
        if let Some(snapshot) = &s.snapshot {
            match frame::frame(
                snapshot,
                &entry_arrays,
                &symbols,
                &condition.hyps,
                &condition.goal,
                &facts,
            ) {
                Ok(h) => hyps.extend(h),
                Err(Unsupported(reason)) => return unknown("the loop's frame", reason),
            }
        }
        let mut verdict = check(&name, &hyps, &condition.goal, &facts, options);
        if !matches!(verdict, Verdict::Holds { .. }) {
            let tiers = with_sums.get_or_insert_with(|| sum_tiers(&lifted, &facts));
            for tier in tiers.iter() {
                verdict = check(&name, &hyps, &condition.goal, tier, options);
                if matches!(verdict, Verdict::Holds { .. }) {
                    break;
                }
            }
        }
        match verdict {
            Verdict::Holds { .. } => {}
            other => return other,
        }
    }
    invariants.extend(
        exec.invariants
            .iter()
            .map(|i| format!("{i}, in {}", s.label)),
    );
    Verdict::Holds {
        conditions: exec.conditions.len(),
    }
}

/// The facts again with the extensionality lemmas of the sums met, tier
/// by tier as the loop-free proof tries them (the plain facts, tried
/// first, left out), the derived tier also with the lemmas between an own
/// sum and a lifted one whose bounds are written differently.
fn sum_tiers(lifted: &Lifted, facts: &[Tagged]) -> Vec<Vec<Tagged>> {
    let sums = lifted.sums.borrow();
    let (equal, mut derived) = super::extensionality::pair_lemmas(&sums);
    derived.extend(super::extensionality::bound_pair_lemmas(&sums));
    let mut tiers = super::extensionality::lemma_tiers(facts.to_vec(), &equal, &derived);
    tiers.remove(0);
    tiers
}

/// The segment as a kernel and a program of their own: the kernel's and
/// the program's parameters plus the enclosing kept loop variables as
/// sizes, every array readable and compared at the end.
fn parts(kernel: &Kernel, program: &Program, s: &Segment, returns: bool) -> (Kernel, Program) {
    let mut c_params = kernel.params.clone();
    let mut t_params: Vec<tensir::Param> = program
        .params
        .iter()
        .map(|p| match &p.kind {
            tensir::ParamKind::Array { dtype, shape, .. } => tensir::Param {
                name: p.name.clone(),
                kind: tensir::ParamKind::Array {
                    dtype: *dtype,
                    shape: shape.clone(),
                    access: Access::InOut,
                },
            },
            _ => p.clone(),
        })
        .collect();
    let loc = kernel
        .params
        .first()
        .map(|p| p.loc.clone())
        .unwrap_or_else(|| tenslift_frontend::ir::Loc {
            file: kernel.range.file.clone(),
            line: kernel.range.start_line,
            col: 1,
        });
    for k in &s.scope {
        c_params.push(loop_ir::Param {
            name: k.var.clone(),
            kind: loop_ir::ParamKind::Scalar {
                ty: ScalarType::I64,
                is_size: true,
            },
            role: Role::Input,
            origin: Origin::Argument,
            loc: loc.clone(),
        });
        t_params.push(tensir::Param {
            name: k.var.as_str().into(),
            kind: tensir::ParamKind::Size,
        });
    }
    let part_kernel = Kernel {
        name: kernel.name.clone(),
        range: kernel.range.clone(),
        params: c_params,
        locals: kernel.locals.clone(),
        body: s.c.clone(),
        returns: if returns { kernel.returns } else { None },
        histograms: kernel.histograms.clone(),
        assumed_set: kernel.assumed_set.clone(),
        negative_steps: kernel.negative_steps.clone(),
        guards: Vec::new(),
        struct_arrays: kernel.struct_arrays.clone(),
        asserted: kernel.asserted.clone(),
        entered: kernel.entered.clone(),
        case: kernel.case.clone(),
    };
    let part_program = Program {
        meta: program.meta.clone(),
        name: program.name.clone(),
        params: t_params,
        ret: if returns { program.ret } else { None },
        body: s.t.iter().map(|x| whole_store(program, x)).collect(),
    };
    (part_kernel, part_program)
}

/// A store whose region covers the whole array, written as a store of the
/// whole array (the same meaning; the loop-free machinery recognises a
/// final step such as `/ float_n` only on whole-array stores).
fn whole_store(program: &Program, stmt: &Stmt) -> Stmt {
    let Stmt::Store {
        target,
        region: Some(items),
        value,
    } = stmt
    else {
        return stmt.clone();
    };
    let Some(tensir::ParamKind::Array { shape, .. }) = program.param(target).map(|p| &p.kind)
    else {
        return stmt.clone();
    };
    let covers = items.len() <= shape.len()
        && items.iter().zip(shape).all(|(item, extent)| match item {
            SliceItem::Full => true,
            SliceItem::Range { start, stop, step } => {
                *step == 1 && start.as_const() == Some(0) && stop == extent
            }
            SliceItem::Index(_) => false,
        });
    if !covers {
        return stmt.clone();
    }
    Stmt::Store {
        target: target.clone(),
        region: None,
        value: value.clone(),
    }
}

/// Discharges `hyps ⇒ goal` (with the relevant facts) under the timeout.
fn check(
    name: &str,
    hyps: &[Bool],
    goal: &Bool,
    facts: &[(Bool, HashSet<String>)],
    options: &UnboundedOptions,
) -> Verdict {
    let timeout = Duration::from_millis(options.timeout_ms.max(1));
    let solver = Solver::new();
    let mut roots: Vec<&Bool> = hyps.iter().collect();
    roots.push(goal);
    for h in hyps.iter().chain(relevance::relevant(&roots, facts)) {
        solver.assert(h);
    }
    solver.assert(goal.not().simplify());
    match crate::z3_turn::check_within(&solver, timeout) {
        SatResult::Unsat => Verdict::Holds { conditions: 1 },
        SatResult::Sat => Verdict::Refuted {
            condition: name.to_string(),
            model: solver.get_model().map(|m| {
                let text = m.to_string();
                if text.len() > 2000 {
                    format!("{}…", &text[..text.floor_char_boundary(2000)])
                } else {
                    text
                }
            }),
        },
        SatResult::Unknown => Verdict::Unknown {
            condition: name.to_string(),
            reason: format!(
                "Z3 gave up ({}) within {} ms",
                solver
                    .get_reason_unknown()
                    .unwrap_or_else(|| "no reason given".to_string()),
                options.timeout_ms
            ),
        },
    }
}
