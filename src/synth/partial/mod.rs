//! Partial lifting: keep the loops that carry a dependency, lift their
//! bodies.
//!
//! A time-stepped stencil (`for t { B = f(A); A = g(B) }`) or a
//! triangular solver (`for i { x[i] = (b[i] - Σ_j<i L[i][j] x[j]) / L[i][i] }`)
//! has no loop-free tensor form: its outer loop feeds each iteration with
//! the previous one's results. Such a loop stays a TensIR `for` loop; its
//! variable becomes a size symbol of the body, and every statement of the
//! body is lifted on its own, as a kernel whose spec is that statement
//! alone with the current array contents as inputs (so later statements
//! read what earlier ones stored, exactly as in C). A statement that still
//! does not lift keeps its own outer loop the same way, up to
//! [`MAX_KEPT_DEPTH`] nested kept loops.
//!
//! Each lifted statement is checked against its statement kernel at
//! several values of the kept loop variables (first, middle, last of their
//! ranges) and at a second size tuple; the assembled program is accepted
//! only when it equals the whole kernel's spec at both size tuples.

mod bounds;
mod dependence;
mod locals;
mod recurrence;
pub mod restructure;
mod statement;
#[cfg(test)]
mod tests;
mod vectorise;

pub(crate) use vectorise::expression_over;

use std::sync::Arc;

use tenslift_frontend::ir::{self as loop_ir, Kernel, Loop};
use tenslift_targets::{self as tensir, Param, ParamKind, Program, Stmt};

pub use dependence::{any_loop_carries, carries_dependency};
use dependence::{carried_by, Scope};
use restructure::{LoopSite, Restructuring};

use super::options::{PartialError, PartialLift, SynthError};
use super::search::{Stats, Timings};
use super::signature::{dtype_of, infer_unknown_extents, params_of};
use super::stencil::{self, NestLoop};
use super::tactic::{KernelContext, KernelResult, KernelTactic};
use super::trace::Trace;
use crate::spec::tensir::{check_program_at_acceptance_sizes, Comparison};
use crate::spec::{choose_second_sizes, choose_sizes, Sizes};

/// Most loops kept one inside another (seidel-2d keeps `t`, `i` and `j`).
pub const MAX_KEPT_DEPTH: usize = 3;

/// Most restructurings applied to one kernel (each is a loop rewritten;
/// a count, like every limit of the search, so the result does not depend
/// on the machine).
pub const MAX_RESTRUCTURINGS: usize = 64;

/// The `kept-loops` kernel tactic; see the module documentation. Tried
/// after the whole-kernel tactics failed, for a kernel some loop of which
/// carries a dependency. `restructurings` are tried, in order, on a loop
/// that does not lift as one statement, before it is kept.
pub struct KeptLoops {
    pub restructurings: &'static [&'static dyn Restructuring],
}

impl KernelTactic for KeptLoops {
    fn name(&self) -> &'static str {
        "kept-loops"
    }

    fn summary(&self) -> &'static str {
        "keeps the loops that carry a dependency as TensIR for loops (the C locals they carry as `var`s) and lifts each statement of their bodies, restructuring a loop first where that lets it vectorise"
    }

    fn applies(&self, kernel: &Kernel) -> Result<(), String> {
        // A kernel no loop of which carries a dependency is still lifted
        // statement by statement: a statement's stencil form (shifted
        // slices, a region store) is found there, not by the whole-kernel
        // search (a 3-point average over the interior of a signal).
        if has_loop(&kernel.body) {
            Ok(())
        } else {
            Err("no loop in the kernel".into())
        }
    }

    fn run(&self, kernel: &Kernel, context: &KernelContext<'_>, _: &mut Trace) -> KernelResult {
        KernelResult::Kept(lift_partially(kernel, context, self.restructurings))
    }
}

/// Whether any statement is (or holds) a loop.
fn has_loop(stmts: &[loop_ir::Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        loop_ir::Stmt::Loop(_) => true,
        loop_ir::Stmt::If {
            then_body,
            else_body,
            ..
        } => has_loop(then_body) || has_loop(else_body),
        _ => false,
    })
}

struct Driver<'k> {
    /// The kernel with its local scalars as one-element local arrays (see
    /// `locals`), and the locals restructurings added.
    kernel: Kernel,
    /// The former local scalars (rank-0 values in TensIR).
    scalars: Vec<String>,
    /// The whole kernel's TensIR parameters.
    params: Vec<Param>,
    first: Sizes,
    second: Sizes,
    third: Option<Sizes>,
    context: &'k KernelContext<'k>,
    restructurings: &'k [&'k dyn Restructuring],
    restructured: usize,
    stats: Stats,
    timings: Timings,
    cost: f64,
    kept: Vec<String>,
    /// What carries a kept loop's dependency, in words, by its iterator
    /// (for the refusal of a program that vectorises nothing).
    why_kept: Vec<(String, String)>,
    vectorised: bool,
    /// Statement searches that found nothing (target, dtype, leaves): a
    /// restructuring that only reorders a nest (interchange) poses the
    /// same search again, which finds nothing again at the same work.
    failed_searches: Vec<statement::SearchKey>,
    /// Relations between sizes the restructured statements are exact
    /// under (`a <= b`; `guard-split`'s pieces in order), required by the
    /// program on entry.
    requires: Vec<(loop_ir::Affine, loop_ir::Affine)>,
}

/// `base` itself, else `base_1`, `base_2`, …: the first name `taken`
/// lacks (for the locals a restructuring or a lift introduces).
fn first_free_name(base: &str, taken: &[String]) -> String {
    std::iter::once(base.to_string())
        .chain((1..).map(|k| format!("{base}_{k}")))
        .find(|n| !taken.contains(n))
        .unwrap_or_else(|| base.to_string())
}

/// What a failed attempt at a loop must not leave behind.
struct Undo {
    cost: f64,
    kept: usize,
    vectorised: bool,
    locals: usize,
    requires: usize,
}

impl Driver<'_> {
    fn out_of_time(&self) -> bool {
        std::time::Instant::now() > self.context.deadline
    }

    /// The TensIR parameters of a statement program: the kernel's, with
    /// accesses as the statement uses them, its locals, plus the kept loop
    /// variables as sizes.
    fn statement_params(&self, scope: &Scope, written: &[String]) -> Vec<Param> {
        let mut params: Vec<Param> = self
            .params
            .iter()
            .cloned()
            .map(|mut p| {
                if let ParamKind::Array { access, .. } = &mut p.kind {
                    *access = if written.iter().any(|w| **w == *p.name) {
                        tensir::Access::InOut
                    } else {
                        tensir::Access::In
                    };
                }
                p
            })
            .collect();
        params.extend(
            locals::local_tensir_params(&self.kernel, &self.scalars, written).unwrap_or_default(),
        );
        for l in scope {
            params.push(Param {
                name: Arc::from(l.iter.as_str()),
                kind: ParamKind::Size,
            });
        }
        params
    }

    /// Lifts each statement; a loop that does not lift as one statement
    /// (or carries a dependency) is restructured, or kept and its body
    /// lifted in turn.
    fn lift_block(
        &mut self,
        stmts: &[loop_ir::Stmt],
        scope: &mut Scope,
    ) -> Result<Vec<Stmt>, PartialError> {
        let mut out = Vec::new();
        for stmt in stmts {
            if self.out_of_time() {
                return Err(SynthError::Timeout(self.context.options.timeout.as_secs_f64()).into());
            }
            match stmt {
                loop_ir::Stmt::Loop(l) => out.extend(self.lift_loop(l, scope)?),
                other => out.push(self.lift_statement(other, scope)?),
            }
        }
        Ok(out)
    }

    /// One loop: as one statement, else restructured, else as a linear
    /// recurrence, else kept with its body lifted.
    fn lift_loop(&mut self, l: &Loop, scope: &mut Scope) -> Result<Vec<Stmt>, PartialError> {
        let carried = l.step != 1 || carries_dependency(l, scope);
        // A carried innermost loop of one assignment (an in-place shift,
        // `x[n-1-i] = x[n-2-i]` walked from the end) may still equal one
        // region store: the statement check against its own C spec decides.
        let single = matches!(l.body.as_slice(), [loop_ir::Stmt::Assign { .. }]);
        let direct = if carried && !(single && l.step == 1) {
            Err(PartialError::Unsupported(if l.step != 1 {
                // The dependence test reads only unit steps: say which
                // limit stopped the loop.
                format!(
                    "loop `{}` steps by {} (only unit steps are vectorised; a step is \
                     folded into a dimension where the bound is a multiple of it, \
                     as in `i < 2*n`)",
                    l.iter, l.step
                )
            } else {
                format!("loop `{}` carries a dependency", l.iter)
            }))
        } else {
            self.lift_statement(&loop_ir::Stmt::Loop(l.clone()), scope)
        };
        let direct = match direct {
            Ok(s) => return Ok(vec![s]),
            Err(e) => e,
        };
        if let Some(restructured) = self.restructure(l, scope) {
            let undo = self.undo();
            match self.lift_block(&restructured, scope) {
                Ok(lifted) => return Ok(lifted),
                Err(e @ PartialError::Synth(_)) if self.out_of_time() => return Err(e),
                Err(_) => self.restore(undo),
            }
        }
        if l.step != 1 || scope.len() >= MAX_KEPT_DEPTH {
            return Err(direct);
        }
        if let Some(split) = self.lift_recurrence(l, scope) {
            self.kept.push(l.iter.clone());
            return Ok(split);
        }
        self.keep(l, scope)
    }

    /// `l` kept as a TensIR loop, its body lifted inside it.
    fn keep(&mut self, l: &Loop, scope: &mut Scope) -> Result<Vec<Stmt>, PartialError> {
        let (Some(start), Some(stop)) = (stencil::dim_of(&l.start), stencil::dim_of(&l.end)) else {
            return Err(PartialError::Unsupported(format!(
                "the bounds of loop `{}` are not sizes",
                l.iter
            )));
        };
        self.kept.push(l.iter.clone());
        if let Some(reason) = carried_by(l, scope, &self.scalars) {
            self.why_kept.push((l.iter.clone(), reason));
        }
        scope.push(NestLoop {
            iter: l.iter.clone(),
            start: l.start.clone(),
            end: l.end.clone(),
        });
        let body = self.lift_block(&l.body, scope);
        scope.pop();
        Ok(vec![Stmt::Loop {
            var: Arc::from(l.iter.as_str()),
            start,
            stop,
            body: body?,
        }])
    }

    /// The first restructuring of the registry that applies to `l`.
    fn restructure(&mut self, l: &Loop, scope: &Scope) -> Option<Vec<loop_ir::Stmt>> {
        if self.restructured >= MAX_RESTRUCTURINGS {
            return None;
        }
        let site = LoopSite {
            l,
            scope,
            kernel: &self.kernel,
            scalars: &self.scalars,
        };
        let found = self.restructurings.iter().find_map(|r| r.apply(&site))?;
        self.restructured += 1;
        self.kernel.locals.extend(found.locals);
        for r in found.requires {
            if !self.requires.contains(&r) {
                self.requires.push(r);
            }
        }
        Some(found.stmts)
    }

    fn undo(&self) -> Undo {
        Undo {
            cost: self.cost,
            kept: self.kept.len(),
            vectorised: self.vectorised,
            locals: self.kernel.locals.len(),
            requires: self.requires.len(),
        }
    }

    fn restore(&mut self, undo: Undo) {
        self.cost = undo.cost;
        self.kept.truncate(undo.kept);
        self.vectorised = undo.vectorised;
        self.kernel.locals.truncate(undo.locals);
        self.requires.truncate(undo.requires);
    }
}

/// Lifts `kernel` keeping the loops that carry dependencies; the program
/// is returned only when it equals the kernel's spec at two size tuples.
pub fn lift_partially(
    kernel: &Kernel,
    context: &KernelContext<'_>,
    restructurings: &[&dyn Restructuring],
) -> Result<PartialLift, PartialError> {
    let lifted = assemble(kernel, context, restructurings)?;
    accept(&lifted.program, kernel)?;
    Ok(lifted)
}

/// The acceptance: the program equals the kernel's spec at the acceptance
/// size tuples (smaller ones where the C spec is too large there).
fn accept(program: &Program, kernel: &Kernel) -> Result<(), PartialError> {
    match check_program_at_acceptance_sizes(program, kernel)? {
        (Comparison::Equal, _) => Ok(()),
        (other, sizes) => Err(SynthError::Rejected(format!(
            "at {}: {other}",
            crate::spec::format_sizes(&sizes)
        ))
        .into()),
    }
}

/// `kernel` with each array extent the frontend left unknown set to what
/// the whole kernel's accesses give it (when that is affine in the sizes):
/// a statement checked on its own (`y[0] = x[0]` before a recurrence) then
/// sees the arrays at their extent, not at the one element it touches.
fn known_extents(kernel: &mut Kernel, inferred: &super::signature::InferredExtents) {
    for p in &mut kernel.params {
        let tenslift_frontend::ir::ParamKind::Array(info) = &mut p.kind else {
            continue;
        };
        for (axis, dim) in info.dims.iter_mut().enumerate() {
            if dim.is_none() {
                *dim = inferred.get(&(p.name.clone(), axis)).and_then(affine_of);
            }
        }
    }
}

/// A dim as an affine extent, when it is one (no products, no divisor).
fn affine_of(d: &tenslift_targets::Dim) -> Option<tenslift_frontend::ir::Affine> {
    if d.divisor() != 1 {
        return None;
    }
    let mut a = tenslift_frontend::ir::Affine::constant(0);
    for (monomial, c) in d.terms() {
        match monomial {
            [] => a.constant = c,
            [name] => {
                a.terms.insert(name.to_string(), c);
            }
            _ => return None,
        }
    }
    Some(a)
}

/// The program with kept loops, each statement checked on its own but the
/// whole not yet compared with the kernel.
fn assemble(
    kernel: &Kernel,
    context: &KernelContext<'_>,
    restructurings: &[&dyn Restructuring],
) -> Result<PartialLift, PartialError> {
    let first = choose_sizes(kernel, &Sizes::new())?;
    let second = choose_second_sizes(kernel, &first)?;
    let inferred = infer_unknown_extents(kernel, &first)?;
    let params = params_of(kernel, &inferred)?;
    let (stored, returns) = locals::return_as_local(kernel).map_err(PartialError::Unsupported)?;
    let (mut arrays, scalars) = locals::scalars_as_arrays(&stored);
    known_extents(&mut arrays, &inferred);
    let third = crate::spec::sizes::choose_third_sizes(kernel, &first, &second);
    let mut driver = Driver {
        kernel: arrays,
        scalars,
        params: params.clone(),
        first,
        second,
        third,
        context,
        restructurings,
        restructured: 0,
        stats: Stats::default(),
        timings: Timings::default(),
        cost: 0.0,
        kept: Vec::new(),
        why_kept: Vec::new(),
        vectorised: false,
        failed_searches: Vec::new(),
        requires: Vec::new(),
    };
    let body = driver.lift_block(&driver.kernel.body.clone(), &mut Vec::new())?;
    let mut body = locals::declare_locals(body, &driver.kernel, &driver.scalars)
        .ok_or_else(|| PartialError::Unsupported("a local array whose extent is unknown".into()))?;
    if let Some(ty) = returns {
        body = locals::return_local(body, ty);
    }
    // Nothing kept: the kernel lifts whole (the driver reports it so), as
    // a sequence of statements (a dot product, then an in-place shift
    // of the delay line, then the new sample stored), which the
    // whole-kernel tactics, solving each output from the kernel's inputs
    // alone, cannot express.
    if driver.kept.is_empty() && !driver.vectorised {
        return Err(PartialError::NothingKept);
    }
    // A program that keeps every loop and stores single elements is a
    // transliteration of the C, not a lift.
    if !driver.vectorised {
        let why: String = driver
            .why_kept
            .iter()
            .filter(|(iter, _)| driver.kept.contains(iter))
            .map(|(iter, reason)| format!("; loop `{iter}`: {reason}"))
            .collect();
        return Err(PartialError::NothingVectorised {
            loops: driver.kept.join(", "),
            why,
        });
    }
    let mut meta = crate::synth::signature::program_meta(kernel)?;
    for (needed, declared) in &driver.requires {
        let r = crate::synth::signature::requirement(needed, declared)?;
        if !meta.requires.contains(&r) {
            meta.requires.push(r);
        }
    }
    let program = Program {
        meta,
        name: Arc::from(kernel.name.as_str()),
        params,
        ret: returns.map(dtype_of),
        body,
    };
    program
        .validate()
        .map_err(|e| SynthError::Rejected(e.to_string()))?;
    Ok(PartialLift {
        program,
        cost: driver.cost,
        stats: driver.stats,
        timings: driver.timings,
        kept_loops: driver.kept,
        vectorised: driver.vectorised,
    })
}
