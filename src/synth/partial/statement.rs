//! One statement of a kept loop's body lifted on its own: its kernel
//! (the statement alone, the current arrays as inputs, the kept loop
//! variables as sizes), a linear stencil read off its accesses or the
//! enumerative search within the statement's work limit, and the check at
//! several bindings of the kept variables.

use std::sync::Arc;

use tenslift_frontend::ir::{
    self as loop_ir, ExprKind, Kernel, Loc, Loop, Role, ScalarType, VarClass,
};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{Expr, Lit, Meta, Param, ParamKind, Program, Stmt};

use super::dependence::Scope;
use super::vectorise;
use super::Driver;
use crate::algebra::Tensor;
use crate::spec::tensir::{canonical_extrema, check_program_against_kernel, Comparison};
use crate::spec::{spec_of_kernel, Sizes};
use crate::synth::budget::{Halt, Meter};
use crate::synth::library::{Evaluator, Library};
use crate::synth::options::{PartialError, SynthError};
use crate::synth::search::{Counters, Reductions, Search};
use crate::synth::signature::dtype_of;
use crate::synth::stencil::{self, Access};

/// What decides a statement search's outcome: its target, dtype, leaves
/// and sizes.
pub(super) type SearchKey = (Tensor, tenslift_targets::DType, Vec<Expr>, Sizes);

/// The values a kept loop variable takes in the checks of one statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pick {
    First,
    Middle,
    Last,
}

/// Binds every kept loop variable of `scope` to a value inside its range
/// at `sizes` (each range may use the outer kept variables); `None` when
/// some range is empty there. Variables get distinct values where their
/// ranges allow, so a program that confuses `path[i][k]` with `path[i][j]`
/// cannot pass a check.
pub(super) fn bind_scope(scope: &Scope, sizes: &Sizes, pick: Pick) -> Option<Sizes> {
    let mut bound = sizes.clone();
    let mut taken: Vec<i64> = Vec::new();
    for l in scope {
        let env = |n: &str| bound.get(n).copied();
        let start = l.start.eval(&env)?;
        let end = l.end.eval(&env)?;
        if end <= start {
            return None;
        }
        let preferred = match pick {
            Pick::First => start,
            Pick::Middle => start + (end - start) / 2,
            Pick::Last => end - 1,
        };
        // The preferred value, else the nearest free one in the range.
        let value = (0..end - start)
            .flat_map(|d| [preferred - d, preferred + d])
            .find(|v| (start..end).contains(v) && !taken.contains(v))
            .unwrap_or(preferred);
        taken.push(value);
        bound.insert(l.iter.clone(), value);
    }
    Some(bound)
}

/// The fewest iterations a loop inside `stmt` runs at `sizes` (`None`
/// without a loop whose bounds the sizes and kept variables decide).
fn fewest_trips(stmt: &loop_ir::Stmt, sizes: &Sizes) -> Option<i64> {
    let inner = |body: &[loop_ir::Stmt]| body.iter().filter_map(|s| fewest_trips(s, sizes)).min();
    match stmt {
        loop_ir::Stmt::Loop(l) => {
            let env = |n: &str| sizes.get(n).copied();
            // `start`, `start + step`, ... short of `end` (below it going
            // down).
            let span = (l.end.eval(&env)? - l.start.eval(&env)?) * l.step.signum();
            let step = l.step.abs().max(1);
            let here = Some((span.max(0) + step - 1) / step);
            here.into_iter().chain(inner(&l.body)).min()
        }
        loop_ir::Stmt::If {
            then_body,
            else_body,
            ..
        } => inner(then_body).into_iter().chain(inner(else_body)).min(),
        _ => None,
    }
}

/// Whether `e` computes anything on more than one element (a slice, a
/// contraction), not only scalars.
pub(super) fn is_vectorised(e: &Expr) -> bool {
    match e.op() {
        // A variable is only a name; a slice vectorises what it selects.
        tenslift_targets::Op::Var(_) => false,
        tenslift_targets::Op::Slice(_) => !e.shape().is_empty(),
        _ => !e.shape().is_empty() || e.args().iter().any(is_vectorised),
    }
}

/// The kernel that runs `stmt` alone: kept loop variables are size
/// parameters, arrays `stmt` stores into are in/out, every other array is
/// an input, and the kernel's locals (all arrays by now, see `locals`)
/// are parameters too: their current contents are the statement's input.
pub(super) fn statement_kernel(
    kernel: &Kernel,
    scope: &Scope,
    stmt: &loop_ir::Stmt,
    written: &[String],
) -> Kernel {
    let loc = Loc {
        file: kernel.range.file.clone(),
        line: kernel.range.start_line,
        col: 1,
    };
    let mut params: Vec<loop_ir::Param> = kernel
        .params
        .iter()
        .cloned()
        .map(|mut p| {
            if matches!(p.kind, loop_ir::ParamKind::Array(_)) {
                p.role = if written.contains(&p.name) {
                    Role::InOut
                } else {
                    Role::Input
                };
            }
            p
        })
        .collect();
    params.extend(super::locals::local_params(kernel, written, &loc));
    for l in scope {
        params.push(loop_ir::Param {
            name: l.iter.clone(),
            kind: loop_ir::ParamKind::Scalar {
                ty: ScalarType::I64,
                is_size: true,
            },
            role: Role::Input,
            origin: tenslift_frontend::ir::Origin::Argument,
            loc: loc.clone(),
        });
    }
    let names: Vec<&str> = scope.iter().map(|l| l.iter.as_str()).collect();
    Kernel {
        name: format!("{}_statement", kernel.name),
        range: kernel.range.clone(),
        params,
        locals: Vec::new(),
        body: vec![iterators_as_params(stmt, &names)],
        returns: None,
        histograms: kernel.histograms.clone(),
        assumed_set: kernel.assumed_set.clone(),
        negative_steps: kernel.negative_steps.clone(),
        guards: Vec::new(),
        struct_arrays: kernel.struct_arrays.clone(),
        asserted: kernel.asserted.clone(),
        entered: kernel.entered.clone(),
        case: kernel.case.clone(),
    }
}

/// `stmt` with the kept loop variables read as parameters, not iterators.
pub(super) fn iterators_as_params(stmt: &loop_ir::Stmt, names: &[&str]) -> loop_ir::Stmt {
    fn expr(e: &loop_ir::Expr, names: &[&str]) -> loop_ir::Expr {
        let kind = match &e.kind {
            ExprKind::Var { name, class }
                if *class == VarClass::Iter && names.contains(&name.as_str()) =>
            {
                ExprKind::Var {
                    name: name.clone(),
                    class: VarClass::Param,
                }
            }
            ExprKind::Unary { op, arg } => ExprKind::Unary {
                op: *op,
                arg: Box::new(expr(arg, names)),
            },
            ExprKind::Cast { arg } => ExprKind::Cast {
                arg: Box::new(expr(arg, names)),
            },
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: Box::new(expr(lhs, names)),
                rhs: Box::new(expr(rhs, names)),
            },
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => ExprKind::Select {
                cond: Box::new(expr(cond, names)),
                then_value: Box::new(expr(then_value, names)),
                else_value: Box::new(expr(else_value, names)),
            },
            ExprKind::Call { func, args } => ExprKind::Call {
                func: *func,
                args: args.iter().map(|a| expr(a, names)).collect(),
            },
            other => other.clone(),
        };
        loop_ir::Expr { ty: e.ty, kind }
    }
    match stmt {
        loop_ir::Stmt::Loop(l) => loop_ir::Stmt::Loop(Loop {
            body: l
                .body
                .iter()
                .map(|s| iterators_as_params(s, names))
                .collect(),
            ..l.clone()
        }),
        loop_ir::Stmt::Assign { target, value, loc } => loop_ir::Stmt::Assign {
            target: target.clone(),
            value: expr(value, names),
            loc: loc.clone(),
        },
        loop_ir::Stmt::If {
            cond,
            kind,
            then_body,
            else_body,
            loc,
        } => loop_ir::Stmt::If {
            cond: expr(cond, names),
            kind: *kind,
            then_body: then_body
                .iter()
                .map(|s| iterators_as_params(s, names))
                .collect(),
            else_body: else_body
                .iter()
                .map(|s| iterators_as_params(s, names))
                .collect(),
            loc: loc.clone(),
        },
        loop_ir::Stmt::Return { value, loc } => loop_ir::Stmt::Return {
            value: expr(value, names),
            loc: loc.clone(),
        },
    }
}

pub(super) fn store_value(s: &Stmt) -> Expr {
    match s {
        Stmt::Store { value, .. } | Stmt::Let { value, .. } | Stmt::Return(value) => value.clone(),
        Stmt::Loop { .. } | Stmt::Var { .. } => {
            Expr::lit(Lit::int(0, tenslift_targets::DType::I64))
        }
    }
}

/// One statement's store and what it must hold.
pub(super) struct StatementGoal {
    array: String,
    accesses: Vec<Access>,
    /// The TensIR store region (empty for a rank-0 value).
    region: Vec<SliceItem>,
    region_shape: Vec<tenslift_targets::Dim>,
    skernel: Kernel,
    params: Vec<Param>,
    sizes: Sizes,
    target: Tensor,
    dtype: tenslift_targets::DType,
}

impl Driver<'_> {
    /// One statement as one region store, checked at several bindings of
    /// the kept loop variables.
    pub(super) fn lift_statement(
        &mut self,
        stmt: &loop_ir::Stmt,
        scope: &Scope,
    ) -> Result<Stmt, PartialError> {
        let middle = bind_scope(scope, &self.second, Pick::Middle);
        let once = middle
            .as_ref()
            .and_then(|s| fewest_trips(stmt, s))
            .is_some_and(|t| t < 2);
        match self.lift_statement_at(stmt, scope, middle) {
            // A loop inside the statement that ran once where its value was
            // sought (nussinov's `k` from `i + 1` to `j`) left a fold that
            // looks like one term: seek it again where that loop runs more.
            Err(e) if once => match self.wider_binding(stmt, scope) {
                Some(at) => self.lift_statement_at(stmt, scope, Some(at)).map_err(|_| e),
                None => Err(e),
            },
            done => done,
        }
    }

    /// A binding of the kept variables, at the ends of their ranges, where
    /// every loop inside `stmt` runs at least twice: the second size tuple
    /// with its sizes doubled (up to three times) until one is.
    fn wider_binding(&self, stmt: &loop_ir::Stmt, scope: &Scope) -> Option<Sizes> {
        let mut sizes = self.second.clone();
        (0..3).find_map(|_| {
            sizes.values_mut().for_each(|v| *v *= 2);
            let bound = bind_scope(scope, &sizes, Pick::Last)?;
            fewest_trips(stmt, &bound)
                .is_some_and(|t| t >= 2)
                .then_some(bound)
        })
    }

    fn lift_statement_at(
        &mut self,
        stmt: &loop_ir::Stmt,
        scope: &Scope,
        at: Option<Sizes>,
    ) -> Result<Stmt, PartialError> {
        let goal = self.statement_goal(stmt, scope, at)?;
        let value = self.statement_value(stmt, scope, &goal)?;
        let store = match self.checked_store(value.clone(), &goal, scope) {
            Ok(store) => store,
            // A linear stencil or the search fit their values at one size
            // tuple, where two sizes may be the same number (`m / N` read
            // as `m / C` where N = C): a pointwise statement's own
            // expression, vectorised, is then checked instead.
            Err(e) => match vectorise::vectorise(stmt, &goal.params, scope)
                .filter(|v| vectorise::is_pointwise(stmt) && *v != value)
            {
                Some(own) => self.checked_store(own, &goal, scope).map_err(|_| e)?,
                None => return Err(e),
            },
        };
        self.cost += crate::synth::cost::cost_of(&[&store_value(&store)], &goal.sizes);
        if is_vectorised(&store_value(&store)) {
            self.vectorised = true;
        }
        Ok(store)
    }

    /// `value` stored into the statement's region, checked against the
    /// statement's kernel at several bindings of the kept variables.
    fn checked_store(
        &mut self,
        value: Expr,
        goal: &StatementGoal,
        scope: &Scope,
    ) -> Result<Stmt, PartialError> {
        let value = stencil::broadcast_to(value, &goal.region_shape).ok_or_else(|| {
            PartialError::Statement {
                array: goal.array.clone(),
                reason: "the value does not broadcast to the region".into(),
            }
        })?;
        let full = goal.region.iter().all(|i| matches!(i, SliceItem::Full));
        let store = Stmt::Store {
            target: Arc::from(goal.array.as_str()),
            region: (!full).then_some(goal.region.clone()),
            value,
        };
        self.check_statement(
            vec![store.clone()],
            &goal.skernel,
            goal.params.clone(),
            scope,
        )?;
        Ok(store)
    }

    /// What one statement must compute: its store, its kernel and TensIR
    /// parameters, and the value its region must hold at `at` (sizes and
    /// kept loop variables bound: the second size tuple, the variables in
    /// the middle of their ranges, unless a retry asks for more).
    fn statement_goal(
        &self,
        stmt: &loop_ir::Stmt,
        scope: &Scope,
        at: Option<Sizes>,
    ) -> Result<StatementGoal, PartialError> {
        let invalid = |e: stencil::StencilError| PartialError::Unsupported(e.to_string());
        let accesses = stencil::accesses(stmt).map_err(invalid)?;
        let (array, spec_region) = stencil::store_region(&accesses).map_err(invalid)?;
        let written = vec![array.clone()];
        let skernel = statement_kernel(&self.kernel, scope, stmt, &written);
        let params = self.statement_params(scope, &written);
        let failed = |reason: &str| PartialError::Statement {
            array: array.clone(),
            reason: reason.into(),
        };
        // The larger tuple, so that loops inside the statement whose bounds
        // are kept variables (`k < j`) run at least once.
        let sizes = at.ok_or_else(|| failed("a kept loop range is empty at the sizes chosen"))?;
        let spec = spec_of_kernel(&skernel, &sizes)?;
        let output = spec
            .output(&array)
            .ok_or_else(|| failed("no such output"))?;
        let target = stencil::region_value(&output.value, &spec_region, &sizes)
            .ok_or_else(|| failed("the store region is outside the array"))?
            .map(canonical_extrema);
        let param = params
            .iter()
            .find(|p| *p.name == *array)
            .ok_or_else(|| failed("no such output"))?;
        // A C scalar (`s[0]` in the loop IR) is a rank-0 TensIR value,
        // stored whole.
        let region = if param.ty().rank() == 0 {
            Vec::new()
        } else {
            spec_region
        };
        let region_shape = tenslift_targets::expr::slice_shape(&param.ty().shape, &region)
            .map_err(|e| PartialError::Unsupported(e.to_string()))?;
        Ok(StatementGoal {
            dtype: dtype_of(output.elem),
            array,
            accesses,
            region,
            region_shape,
            skernel,
            params,
            sizes,
            target,
        })
    }

    /// The statement's value: a linear stencil of its reads, else its own
    /// expression vectorised (first, for a statement that reduces nothing:
    /// its syntax is already its vector form), else the search.
    fn statement_value(
        &mut self,
        stmt: &loop_ir::Stmt,
        scope: &Scope,
        goal: &StatementGoal,
    ) -> Result<Expr, PartialError> {
        let leaves = self.leaves(stmt, &goal.accesses, &goal.params, goal.dtype);
        let mut evaluator = Evaluator::new(goal.sizes.clone(), goal.params.clone(), Vec::new());
        let values: Vec<Tensor> = leaves
            .iter()
            .map(|l| {
                evaluator
                    .value(l)
                    .unwrap_or_else(|| Tensor::scalar(crate::algebra::Expr::zero()))
            })
            .collect();
        let vectorised = vectorise::vectorise(stmt, &goal.params, scope);
        // A statement outside any loop is its own best form; the values a
        // stencil or the search fit read sizes as the numbers they are at
        // one tuple (`1.0 / n` and `1.0 / tsteps` agree where n = tsteps).
        if let (loop_ir::Stmt::Assign { .. }, Some(value)) = (stmt, &vectorised) {
            return Ok(value.clone());
        }
        let linear = stencil::derive_linear_stencil(&goal.target, &values)
            .and_then(|s| stencil::linear_combination(&s, &leaves, goal.dtype));
        if let Some(value) = linear {
            return Ok(value);
        }
        if vectorise::is_pointwise(stmt) {
            if let Some(value) = vectorised {
                return Ok(value);
            }
        }
        if let Some(found) = self.search(
            &mut evaluator,
            leaves,
            &goal.sizes,
            &goal.target,
            goal.dtype,
        )? {
            return Ok(found);
        }
        vectorised.ok_or_else(|| PartialError::Statement {
            array: goal.array.clone(),
            reason: "no linear stencil, no vector form and no search result".into(),
        })
    }

    /// Shifted slices of every read, the current store region, scalar
    /// parameters, kept loop variables and sizes as floats, the
    /// statement's constants and 1.
    pub(super) fn leaves(
        &self,
        stmt: &loop_ir::Stmt,
        accesses: &[Access],
        params: &[Param],
        dtype: tenslift_targets::DType,
    ) -> Vec<Expr> {
        let mut out: Vec<Expr> = Vec::new();
        let mut push = |e: Expr| {
            if !out.contains(&e) {
                out.push(e);
            }
        };
        // A store walking down its loop (`x[n-1-i] = x[n-2-i]`) holds its
        // region in ascending order; reads walking down with it are read
        // in that order too.
        let down = accesses
            .iter()
            .any(|a| a.is_store && stencil::walks_down(a));
        for a in accesses {
            let Some(p) = params.iter().find(|p| *p.name == *a.array) else {
                continue;
            };
            let covered = if down {
                stencil::covered_slice(a)
            } else {
                stencil::slice_of(a)
            };
            let sliced = covered.filter(|_| p.ty().rank() > 0).and_then(|items| {
                tenslift_targets::build::slice(Expr::var(&p.name, p.ty()), items).ok()
            });
            // A read backwards (`y[k - 1 - i]`) is a flipped slice; a C
            // scalar a rank-0 value.
            if let Some(e) =
                sliced.or_else(|| vectorise::plain_read(&a.array, &a.index, &a.loops, params))
            {
                push(e);
            }
        }
        for p in params {
            match &p.kind {
                ParamKind::Scalar(d) if *d == dtype => push(Expr::var(&p.name, p.ty())),
                ParamKind::Size if dtype.is_float() => {
                    if let Ok(e) = tenslift_targets::build::cast(Expr::var(&p.name, p.ty()), dtype)
                    {
                        push(e);
                    }
                }
                _ => {}
            }
        }
        if dtype.is_float() {
            for c in stencil::float_constants(stmt).into_iter().chain([1.0, 2.0]) {
                push(Expr::lit(Lit::float(c, dtype)));
            }
        }
        out
    }

    /// The general search over the statement's leaves, within the
    /// per-statement work limit; a search that found nothing before is
    /// not run again.
    pub(super) fn search(
        &mut self,
        evaluator: &mut Evaluator,
        leaves: Vec<Expr>,
        sizes: &Sizes,
        target: &Tensor,
        dtype: tenslift_targets::DType,
    ) -> Result<Option<Expr>, PartialError> {
        let key: SearchKey = (target.clone(), dtype, leaves.clone(), sizes.clone());
        if self.failed_searches.contains(&key) {
            return Ok(None);
        }
        let found = self.search_afresh(evaluator, leaves, sizes, target, dtype)?;
        if found.is_none() {
            self.failed_searches.push(key);
        }
        Ok(found)
    }

    /// [`Self::search`] without its memory of failed searches.
    fn search_afresh(
        &mut self,
        evaluator: &mut Evaluator,
        leaves: Vec<Expr>,
        sizes: &Sizes,
        target: &Tensor,
        dtype: tenslift_targets::DType,
    ) -> Result<Option<Expr>, PartialError> {
        let (options, deadline) = (self.context.options, self.context.deadline);
        let timeout = || PartialError::from(SynthError::Timeout(options.timeout.as_secs_f64()));
        let library_meter = Meter::new(options.limits.library_evaluations, deadline);
        let library = Library::build(
            evaluator,
            leaves,
            sizes,
            &library_meter,
            options.library_limit,
            target,
        );
        self.stats.evaluations += library_meter.used();
        let library = match library {
            Ok(library) => library,
            Err(Halt::Budget) => return Ok(None),
            Err(Halt::Deadline) => return Err(timeout()),
        };
        self.stats.stubs += library.stubs.len();
        let reductions = Reductions::build(&library, target.shape());
        let meter = Meter::new(options.limits.statement_work, deadline);
        let families = self.context.families;
        let search = Search {
            library: &library,
            reductions: &reductions,
            model: &options.model,
            sizes,
            meter: &meter,
            first: options.first,
            stats: Counters::new(families.iter().map(|f| f.name())),
            banned: &[],
            top_depth: options.depth,
            families,
        };
        let found = search.solve(target, dtype, options.depth, f64::INFINITY);
        let mut searched = search.stats.snapshot();
        searched.work = meter.used();
        searched.budget_exhausted = meter.exhausted();
        self.stats.absorb(&searched);
        match found {
            Ok(found) => Ok(found.map(|f| f.expr)),
            Err(Halt::Budget) => Ok(None),
            Err(Halt::Deadline) => Err(timeout()),
        }
    }

    /// The statement program must equal the statement kernel with the kept
    /// variables at the first, middle and last values of their ranges, and
    /// at the second size tuple.
    pub(super) fn check_statement(
        &self,
        body: Vec<Stmt>,
        skernel: &Kernel,
        params: Vec<Param>,
        scope: &Scope,
    ) -> Result<(), PartialError> {
        let program = Program {
            meta: Meta::default(),
            name: Arc::from(skernel.name.as_str()),
            params,
            ret: None,
            body,
        };
        program
            .validate()
            .map_err(|e| SynthError::Rejected(e.to_string()))?;
        let mut tuples = vec![
            (&self.first, Pick::First),
            (&self.first, Pick::Middle),
            (&self.first, Pick::Last),
            (&self.second, Pick::Last),
        ];
        // Off every line through the first two, as the final acceptance.
        if let Some(third) = &self.third {
            tuples.push((third, Pick::Middle));
        }
        for (sizes, pick) in tuples {
            let Some(bound) = bind_scope(scope, sizes, pick) else {
                continue;
            };
            match check_program_against_kernel(&program, skernel, &bound)? {
                Comparison::Equal => {}
                other => {
                    return Err(SynthError::Rejected(format!(
                        "at {}: {other}",
                        crate::spec::format_sizes(&bound)
                    ))
                    .into())
                }
            }
        }
        Ok(())
    }
}
