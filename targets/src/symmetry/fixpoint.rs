//! The analysis of a whole program: the symmetry of every name before
//! every statement, loops solved by a fixpoint.
//!
//! Straight-line code is one forward pass: a `let` or a whole-array store
//! binds the name to its value's symmetry. A region store breaks every
//! claim on its array (the written part and the rest need not match). A
//! kept loop (`for t in a..b`) may run any number of times, so the state
//! at its head is the join of the state on entry and the state after each
//! pass of the body; it is found by iterating from the entry state until
//! the join stops changing (each name's partition only moves up, losing
//! claims, so this ends after at most the sum of the ranks' heights). The body's
//! statements are then annotated with the state of the final pass, which
//! holds for every iteration.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use super::lattice::Symmetry;
use super::relation::Facts;
use super::transfer::transfer;
use crate::expr::Expr;
use crate::program::{Program, Stmt};

/// What the analysis knows of each name at one point of the program;
/// a name absent here is a parameter never stored so far (no claim).
pub type Env = HashMap<Arc<str>, Symmetry>;

/// Passes over one loop's body after which the analysis gives up on the
/// names the body writes (claims nothing of them): a bound counted in
/// work, never reached by a lattice this shallow, kept so that a defect
/// cannot loop forever.
const MAX_LOOP_PASSES: usize = 64;

/// Symmetries of the sub-expressions of values read in one environment.
pub struct Analyzer<'e> {
    env: &'e Env,
    memo: RefCell<HashMap<Expr, Symmetry>>,
}

impl<'e> Analyzer<'e> {
    pub fn new(env: &'e Env) -> Analyzer<'e> {
        Analyzer {
            env,
            memo: RefCell::new(HashMap::new()),
        }
    }
}

impl Facts for Analyzer<'_> {
    fn of(&self, e: &Expr) -> Symmetry {
        if let Some(s) = self.memo.borrow().get(e) {
            return s.clone();
        }
        let args: Vec<Symmetry> = e.args().iter().map(|a| self.of(a)).collect();
        let var = |name: &str| self.env.get(name).cloned();
        let s = transfer(e, &args, &var, self);
        self.memo.borrow_mut().insert(e.clone(), s.clone());
        s
    }
}

/// The analysis of a program.
#[derive(Clone, Debug, Default)]
pub struct ProgramFacts {
    /// The state before each statement, in pre-order (see
    /// [`Stmt::preorder`]).
    pub before: Vec<Env>,
    /// Every name bound or stored with a whole value, and that value's
    /// symmetry (the join over all the places it is bound).
    pub bound: BTreeMap<String, Symmetry>,
    /// Passes over loop bodies, all loops together.
    pub loop_passes: usize,
}

impl ProgramFacts {
    /// The names bound to symmetric values, with their symmetry.
    pub fn symmetric(&self) -> Vec<(&str, &Symmetry)> {
        self.bound
            .iter()
            .filter(|(_, s)| s.is_symmetric())
            .map(|(n, s)| (n.as_str(), s))
            .collect()
    }
}

/// Runs the analysis over `program`.
pub fn analyze(program: &Program) -> ProgramFacts {
    let mut facts = ProgramFacts {
        before: vec![Env::new(); program.statements().len()],
        ..ProgramFacts::default()
    };
    let mut next = 0;
    block(
        program,
        &program.body,
        &mut Env::new(),
        &mut facts,
        &mut next,
    );
    facts
}

/// Runs `stmts` from `env`, recording the state before each statement at
/// its pre-order index (`next` is the index of the first).
fn block(
    program: &Program,
    stmts: &[Stmt],
    env: &mut Env,
    facts: &mut ProgramFacts,
    next: &mut usize,
) {
    for s in stmts {
        facts.before[*next] = env.clone();
        *next += 1;
        match s {
            Stmt::Let { name, value } => {
                let sym = Analyzer::new(env).of(value);
                note(facts, name, &sym);
                env.insert(name.clone(), sym);
            }
            Stmt::Store {
                target,
                region: None,
                value,
            } => {
                let sym = Analyzer::new(env).of(value);
                note(facts, target, &sym);
                env.insert(target.clone(), sym);
            }
            Stmt::Store { target, .. } => {
                // A parameter's rank, else a `var`'s (bound when declared).
                let rank = program
                    .param(target)
                    .map(|p| p.ty().rank())
                    .or_else(|| env.get(target).map(Symmetry::rank))
                    .unwrap_or(0);
                note(facts, target, &Symmetry::none(rank));
                env.insert(target.clone(), Symmetry::none(rank));
            }
            Stmt::Var { name, ty } => {
                // Zero-filled, then written by stores: no symmetry is
                // assumed, as for an element store.
                note(facts, name, &Symmetry::none(ty.rank()));
                env.insert(name.clone(), Symmetry::none(ty.rank()));
            }
            Stmt::Return(_) => {}
            Stmt::Loop { var, body, .. } => {
                let first = *next;
                *env = loop_head(program, (var, body), env, facts, first);
                *next = first + count(body);
            }
        }
    }
}

/// The state at a loop's head: the entry state joined with the state after
/// every pass of the body, iterated to a fixpoint.
fn loop_head(
    program: &Program,
    (var, body): (&Arc<str>, &[Stmt]),
    entry: &Env,
    facts: &mut ProgramFacts,
    first: usize,
) -> Env {
    let locals = body_lets(body);
    let mut head = entry.clone();
    for _ in 0..MAX_LOOP_PASSES {
        facts.loop_passes += 1;
        let mut state = head.clone();
        state.insert(var.clone(), Symmetry::none(0));
        let mut next = first;
        block(program, body, &mut state, facts, &mut next);
        let mut joined = head.clone();
        for (name, after) in state {
            if &name == var || locals.contains(&name) {
                continue;
            }
            let before = head
                .get(&name)
                .cloned()
                .unwrap_or_else(|| Symmetry::none(after.rank()));
            joined.insert(name, before.join(&after));
        }
        if joined == head {
            return head;
        }
        head = joined;
    }
    // Past the bound: no claim on anything the body writes.
    for name in written(body) {
        if let Some(s) = head.get_mut(&name) {
            *s = Symmetry::none(s.rank());
        }
    }
    head
}

fn note(facts: &mut ProgramFacts, name: &Arc<str>, sym: &Symmetry) {
    let entry = facts
        .bound
        .entry(name.to_string())
        .or_insert_with(|| sym.clone());
    *entry = entry.join(sym);
}

/// Statements in `body`, nested ones included, in pre-order.
fn preorder(body: &[Stmt]) -> Vec<&Stmt> {
    let mut all = Vec::new();
    for s in body {
        s.preorder(&mut all);
    }
    all
}

fn count(body: &[Stmt]) -> usize {
    preorder(body).len()
}

/// Names bound by `let` anywhere in `body` (they live for one pass).
fn body_lets(body: &[Stmt]) -> HashSet<Arc<str>> {
    preorder(body)
        .into_iter()
        .filter_map(|s| match s {
            Stmt::Let { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// Arrays stored anywhere in `body`.
fn written(body: &[Stmt]) -> Vec<Arc<str>> {
    preorder(body)
        .into_iter()
        .filter_map(|s| match s {
            Stmt::Store { target, .. } => Some(target.clone()),
            _ => None,
        })
        .collect()
}
