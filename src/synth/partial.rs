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

use std::sync::Arc;
use std::time::{Duration, Instant};

use tenslift_frontend::ir::{
    Affine, Expr as CExpr, ExprKind, Kernel, Loc, Loop, Param as CParam, ParamKind as CParamKind,
    Role, ScalarType, Stmt as CStmt, VarClass,
};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{Access as TAccess, Expr, Lit, Meta, Param, ParamKind, Program, Stmt};

use super::library::{Evaluator, Library};
use super::search::{Counters, Reductions, Search, Stats};
use super::signature::{dtype_of, infer_unknown_extents, params_of};
use super::stencil::{self, Access, NestLoop};
use super::{lift_kernel, Lifted, SynthError, SynthOptions};
use crate::algebra::Tensor;
use crate::spec::tensir::TensirSpecError;
use crate::spec::tensir::{
    canonical_extrema, check_program_against_kernel, check_program_at_both_sizes, Comparison,
};
use crate::spec::SpecError;
use crate::spec::{choose_second_sizes, choose_sizes, spec_of_kernel, Sizes};

/// Most loops kept one inside another (seidel-2d keeps `t`, `i` and `j`).
pub const MAX_KEPT_DEPTH: usize = 3;

/// Longest search for one statement, so one hard statement cannot eat the
/// budget of the loops that would be kept instead.
const STATEMENT_SEARCH_LIMIT: Duration = Duration::from_secs(8);

/// Why a kernel could not be lifted with loops kept.
#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    // Boxed: the wrapped errors are large and this one travels through
    // every recursive call.
    #[error("{0}")]
    Synth(Box<SynthError>),
    #[error("spec: {0}")]
    Spec(Box<SpecError>),
    #[error("checking a statement: {0}")]
    Check(Box<TensirSpecError>),
    #[error("statement storing into `{array}` has no tensor form: {reason}")]
    Statement { array: String, reason: String },
    #[error("{0}")]
    Unsupported(String),
    #[error("every statement needs its loops kept ({0}): nothing vectorises")]
    NothingVectorised(String),
    #[error("no loop needed keeping")]
    NothingKept,
    #[error("partial lifting not tried: no loop carries a dependency")]
    NotTried,
}

impl From<SynthError> for PartialError {
    fn from(e: SynthError) -> PartialError {
        PartialError::Synth(Box::new(e))
    }
}

impl From<SpecError> for PartialError {
    fn from(e: SpecError) -> PartialError {
        PartialError::Spec(Box::new(e))
    }
}

impl From<TensirSpecError> for PartialError {
    fn from(e: TensirSpecError) -> PartialError {
        PartialError::Check(Box::new(e))
    }
}

/// A kernel lifted with some loops kept.
#[derive(Debug)]
pub struct PartialLift {
    pub program: Program,
    pub cost: f64,
    pub stats: Stats,
    /// The C iterators kept as loops, outermost first, in program order.
    pub kept_loops: Vec<String>,
    /// Whether any statement became a whole-slice (vectorised) operation;
    /// false when every kept loop nest ends in single-element stores.
    pub vectorised: bool,
}

/// Whether `l` carries a dependency: some element one iteration writes is
/// read or written by another iteration. Pairs of accesses with identical
/// subscripts (an accumulator `x[i] -= …` inside a reduction over `j`) do
/// not count; a pair whose subscripts differ is independent only when some
/// dimension separates the iterations (both subscripts are the loop
/// variable plus the same offset) or their value ranges are provably
/// disjoint. Anything the analysis does not understand counts as carried.
pub fn carries_dependency(l: &Loop, scope: &[NestLoop]) -> bool {
    let Ok(accesses) = stencil::accesses(&CStmt::Loop(l.clone())) else {
        return true;
    };
    let writes = accesses.iter().filter(|a| a.is_store);
    for w in writes {
        for r in accesses.iter().filter(|r| r.array == w.array) {
            if r.index == w.index {
                continue;
            }
            if !separated(w, r, &l.iter, scope) {
                return true;
            }
        }
    }
    false
}

/// Whether two accesses of one array can never touch the same element in
/// different iterations of the loop `iter`.
fn separated(w: &Access, r: &Access, iter: &str, scope: &[NestLoop]) -> bool {
    if w.index.len() != r.index.len() {
        return false;
    }
    w.index.iter().zip(&r.index).any(|(a, b)| {
        let same_iteration_only = a.terms.get(iter).is_some_and(|c| *c != 0) && a == b;
        let disjoint = match (range_of(a, &w.loops), range_of(b, &r.loops)) {
            (Some((lo_a, hi_a)), Some((lo_b, hi_b))) => {
                positive(&difference(&lo_a, &hi_b), scope)
                    || positive(&difference(&lo_b, &hi_a), scope)
            }
            _ => false,
        };
        same_iteration_only || disjoint
    })
}

/// Whether `d` is above zero for every value of the kept loop variables:
/// each one, innermost first, is replaced by the end of its range that
/// makes `d` smallest (its bounds may use the outer ones).
fn positive(d: &Affine, scope: &[NestLoop]) -> bool {
    let mut d = d.clone();
    for l in scope.iter().rev() {
        let Some(&c) = d.terms.get(&l.iter) else {
            continue;
        };
        d.terms.remove(&l.iter);
        let mut bound = if c > 0 {
            l.start.clone()
        } else {
            let mut last = l.end.clone();
            last.constant -= 1;
            last
        };
        bound.constant *= c;
        bound.terms.values_mut().for_each(|v| *v *= c);
        d = add(&d, &bound);
    }
    d.as_constant().is_some_and(|v| v > 0)
}

fn difference(a: &Affine, b: &Affine) -> Affine {
    let mut out = a.clone();
    out.constant -= b.constant;
    for (k, c) in &b.terms {
        let e = out.terms.entry(k.clone()).or_insert(0);
        *e -= c;
        if *e == 0 {
            out.terms.remove(k);
        }
    }
    out
}

/// The smallest and largest value of a subscript over its loops, when it
/// uses at most one loop variable with coefficient 1 whose bounds use no
/// other loop variable.
fn range_of(sub: &Affine, loops: &[NestLoop]) -> Option<(Affine, Affine)> {
    let inner: Vec<&NestLoop> = loops
        .iter()
        .filter(|l| sub.terms.contains_key(&l.iter))
        .collect();
    match inner.as_slice() {
        [] => Some((sub.clone(), sub.clone())),
        [l] if sub.terms.get(&l.iter) == Some(&1) => {
            let free = |a: &Affine| loops.iter().all(|m| !a.terms.contains_key(&m.iter));
            if !free(&l.start) || !free(&l.end) {
                return None;
            }
            let mut rest = sub.clone();
            rest.terms.remove(&l.iter);
            let lo = add(&l.start, &rest);
            let mut hi = add(&l.end, &rest);
            hi.constant -= 1;
            Some((lo, hi))
        }
        _ => None,
    }
}

fn add(a: &Affine, b: &Affine) -> Affine {
    let mut neg = b.clone();
    neg.constant = -neg.constant;
    neg.terms.values_mut().for_each(|c| *c = -*c);
    difference(a, &neg)
}

/// Whether some loop in `stmts` (inside the loops of `scope`) carries a
/// dependency: only then can keeping a loop be necessary.
fn any_loop_carries(stmts: &[CStmt], scope: &mut Scope) -> bool {
    stmts.iter().any(|s| match s {
        CStmt::Loop(l) => {
            if carries_dependency(l, scope) {
                return true;
            }
            scope.push(NestLoop {
                iter: l.iter.clone(),
                start: l.start.clone(),
                end: l.end.clone(),
            });
            let inner = any_loop_carries(&l.body, scope);
            scope.pop();
            inner
        }
        CStmt::If {
            then_body,
            else_body,
            ..
        } => any_loop_carries(then_body, scope) || any_loop_carries(else_body, scope),
        _ => false,
    })
}

/// Whether read `r` in the body of loop `iter` sees an element that store
/// `w` wrote in an earlier iteration: the same array, the store's own
/// subscripts but a constant step back along `iter`. `None` when the two
/// are not comparable that simply (an unknown distance).
fn reads_an_earlier_iteration(w: &Access, r: &Access, iter: &str) -> Option<bool> {
    if r.array != w.array {
        return Some(false);
    }
    if r.index.len() != w.index.len() {
        return None;
    }
    let mut along = None;
    let mut elsewhere_same = true;
    for (a, b) in w.index.iter().zip(&r.index) {
        let d = difference(b, a).as_constant()?;
        if a.terms.get(iter) == Some(&1) {
            along = Some(d);
        } else if d != 0 {
            elsewhere_same = false;
        }
    }
    Some(elsewhere_same && along? < 0)
}

/// Kept loop variables with their ranges, outermost first.
type Scope = Vec<NestLoop>;

/// The values a kept loop variable takes in the checks of one statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pick {
    First,
    Middle,
    Last,
}

/// Binds every kept loop variable of `scope` to a value inside its range
/// at `sizes` (each range may use the outer kept variables); `None` when
/// some range is empty there. Variables get distinct values where their
/// ranges allow, so a program that confuses `path[i][k]` with `path[i][j]`
/// cannot pass a check.
fn bind_scope(scope: &Scope, sizes: &Sizes, pick: Pick) -> Option<Sizes> {
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

/// Whether `e` computes anything on more than one element (a slice, a
/// contraction), not only scalars.
fn is_vectorised(e: &Expr) -> bool {
    match e.op() {
        // A variable is only a name; a slice vectorises what it selects.
        tenslift_targets::Op::Var(_) => false,
        tenslift_targets::Op::Slice(_) => !e.shape().is_empty(),
        _ => !e.shape().is_empty() || e.args().iter().any(is_vectorised),
    }
}

/// The kernel that runs `stmt` alone: kept loop variables are size
/// parameters, arrays `stmt` stores into are in/out, every other array is
/// an input.
fn statement_kernel(kernel: &Kernel, scope: &Scope, stmt: &CStmt, written: &[String]) -> Kernel {
    let loc = Loc {
        file: kernel.range.file.clone(),
        line: kernel.range.start_line,
        col: 1,
    };
    let mut params: Vec<CParam> = kernel
        .params
        .iter()
        .cloned()
        .map(|mut p| {
            if matches!(p.kind, CParamKind::Array(_)) {
                p.role = if written.contains(&p.name) {
                    Role::InOut
                } else {
                    Role::Input
                };
            }
            p
        })
        .collect();
    for l in scope {
        params.push(CParam {
            name: l.iter.clone(),
            kind: CParamKind::Scalar {
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
        locals: kernel.locals.clone(),
        body: vec![iterators_as_params(stmt, &names)],
        returns: None,
        histograms: kernel.histograms.clone(),
    }
}

/// `stmt` with the kept loop variables read as parameters, not iterators.
fn iterators_as_params(stmt: &CStmt, names: &[&str]) -> CStmt {
    fn expr(e: &CExpr, names: &[&str]) -> CExpr {
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
        CExpr { ty: e.ty, kind }
    }
    match stmt {
        CStmt::Loop(l) => CStmt::Loop(Loop {
            body: l
                .body
                .iter()
                .map(|s| iterators_as_params(s, names))
                .collect(),
            ..l.clone()
        }),
        CStmt::Assign { target, value, loc } => CStmt::Assign {
            target: target.clone(),
            value: expr(value, names),
            loc: loc.clone(),
        },
        CStmt::If {
            cond,
            kind,
            then_body,
            else_body,
            loc,
        } => CStmt::If {
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
        CStmt::Return { value, loc } => CStmt::Return {
            value: expr(value, names),
            loc: loc.clone(),
        },
    }
}

struct Driver<'k> {
    kernel: &'k Kernel,
    /// The whole kernel's TensIR parameters.
    params: Vec<Param>,
    first: Sizes,
    second: Sizes,
    options: &'k SynthOptions,
    deadline: Instant,
    stats: Stats,
    cost: f64,
    kept: Vec<String>,
    vectorised: bool,
}

impl Driver<'_> {
    fn out_of_time(&self) -> bool {
        Instant::now() > self.deadline
    }

    /// The TensIR parameters of a statement program: the kernel's, with
    /// accesses as the statement uses them, plus the kept loop variables
    /// as sizes.
    fn statement_params(&self, scope: &Scope, written: &[String]) -> Vec<Param> {
        let mut params: Vec<Param> = self
            .params
            .iter()
            .cloned()
            .map(|mut p| {
                if let ParamKind::Array { access, .. } = &mut p.kind {
                    *access = if written.iter().any(|w| **w == *p.name) {
                        TAccess::InOut
                    } else {
                        TAccess::In
                    };
                }
                p
            })
            .collect();
        for l in scope {
            params.push(Param {
                name: Arc::from(l.iter.as_str()),
                kind: ParamKind::Size,
            });
        }
        params
    }

    fn lift_block(
        &mut self,
        stmts: &[CStmt],
        scope: &mut Scope,
    ) -> Result<Vec<Stmt>, PartialError> {
        let mut out = Vec::new();
        for stmt in stmts {
            if self.out_of_time() {
                return Err(SynthError::Timeout(self.options.timeout.as_secs_f64()).into());
            }
            let carried = matches!(stmt, CStmt::Loop(l) if carries_dependency(l, scope));
            let direct = if carried {
                Err(PartialError::Unsupported(
                    "a loop that carries a dependency".into(),
                ))
            } else {
                self.lift_statement(stmt, scope)
            };
            match (direct, stmt) {
                (Ok(s), _) => out.push(s),
                (Err(_), CStmt::Loop(l)) if l.step == 1 && scope.len() < MAX_KEPT_DEPTH => {
                    if let Some(split) = self.lift_recurrence(l, scope) {
                        self.kept.push(l.iter.clone());
                        out.extend(split);
                        continue;
                    }
                    let (Some(start), Some(stop)) =
                        (stencil::dim_of(&l.start), stencil::dim_of(&l.end))
                    else {
                        return Err(PartialError::Unsupported(format!(
                            "the bounds of loop `{}` are not sizes",
                            l.iter
                        )));
                    };
                    self.kept.push(l.iter.clone());
                    scope.push(NestLoop {
                        iter: l.iter.clone(),
                        start: l.start.clone(),
                        end: l.end.clone(),
                    });
                    let body = self.lift_block(&l.body, scope);
                    scope.pop();
                    out.push(Stmt::Loop {
                        var: Arc::from(l.iter.as_str()),
                        start,
                        stop,
                        body: body?,
                    });
                }
                (Err(e), _) => return Err(e),
            }
        }
        Ok(out)
    }

    /// One statement as one region store, checked at several bindings of
    /// the kept loop variables.
    fn lift_statement(&mut self, stmt: &CStmt, scope: &Scope) -> Result<Stmt, PartialError> {
        let invalid = |e: stencil::StencilError| PartialError::Unsupported(e.to_string());
        let accesses = stencil::accesses(stmt).map_err(invalid)?;
        let (array, region) = stencil::store_region(&accesses).map_err(invalid)?;
        let written = vec![array.clone()];
        let skernel = statement_kernel(self.kernel, scope, stmt, &written);
        let params = self.statement_params(scope, &written);
        // The larger tuple, so that loops inside the statement whose bounds
        // are kept variables (`k < j`) run at least once.
        let sizes = bind_scope(scope, &self.second, Pick::Middle).ok_or_else(|| {
            PartialError::Statement {
                array: array.clone(),
                reason: "a kept loop range is empty at the sizes chosen".into(),
            }
        })?;
        let spec = spec_of_kernel(&skernel, &sizes)?;
        let output = spec.output(&array).ok_or_else(|| PartialError::Statement {
            array: array.clone(),
            reason: "no such output".into(),
        })?;
        let target = stencil::region_value(&output.value, &region, &sizes)
            .ok_or_else(|| PartialError::Statement {
                array: array.clone(),
                reason: "the store region is outside the array".into(),
            })?
            .map(canonical_extrema);
        let dtype = dtype_of(output.elem);
        let param =
            params
                .iter()
                .find(|p| *p.name == *array)
                .ok_or_else(|| PartialError::Statement {
                    array: array.clone(),
                    reason: "no such output".into(),
                })?;
        let region_shape = tenslift_targets::expr::slice_shape(&param.ty().shape, &region)
            .map_err(|e| PartialError::Unsupported(e.to_string()))?;

        let leaves = self.leaves(stmt, &accesses, &params, dtype);
        let mut evaluator = Evaluator::new(sizes.clone(), params.clone(), Vec::new());
        let values: Vec<Tensor> = leaves
            .iter()
            .map(|l| {
                evaluator
                    .value(l)
                    .unwrap_or_else(|| Tensor::scalar(crate::algebra::Expr::zero()))
            })
            .collect();
        let mut candidate = stencil::derive_linear_stencil(&target, &values)
            .and_then(|s| stencil::linear_combination(&s, &leaves, dtype));
        if candidate.is_none() {
            candidate = self.search(&mut evaluator, leaves, &sizes, &target, dtype)?;
        }
        let value = candidate.ok_or_else(|| PartialError::Statement {
            array: array.clone(),
            reason: "no linear stencil and no search result".into(),
        })?;
        let value =
            stencil::broadcast_to(value, &region_shape).ok_or_else(|| PartialError::Statement {
                array: array.clone(),
                reason: "the value does not broadcast to the region".into(),
            })?;
        let full = region.iter().all(|i| matches!(i, SliceItem::Full));
        let store = Stmt::Store {
            target: Arc::from(array.as_str()),
            region: (!full).then_some(region.clone()),
            value,
        };
        self.check_statement(vec![store.clone()], &skernel, params, scope)?;
        self.cost += super::cost::cost_of(&[&store_value(&store)], &sizes);
        if is_vectorised(&store_value(&store)) {
            self.vectorised = true;
        }
        Ok(store)
    }

    /// A loop whose one statement is a linear recurrence along the loop
    /// (Gauss-Seidel: `A[i][j]` reads the `A[i][j-1]` the previous
    /// iteration stored) keeps the loop only for the recurrent terms: the
    /// terms that read elements no earlier iteration wrote are computed
    /// for every iteration at once into a `let` before the loop.
    fn lift_recurrence(&mut self, l: &Loop, scope: &Scope) -> Option<Vec<Stmt>> {
        let [stmt @ CStmt::Assign { .. }] = l.body.as_slice() else {
            return None;
        };
        let accesses = stencil::accesses(stmt).ok()?;
        let (array, region) = stencil::store_region(&accesses).ok()?;
        let store = accesses.iter().find(|a| a.is_store)?;
        let reads: Vec<&Access> = accesses.iter().filter(|a| !a.is_store).collect();
        let mut recurrent = Vec::with_capacity(reads.len());
        for r in &reads {
            recurrent.push(reads_an_earlier_iteration(store, r, &l.iter)?);
        }
        if !recurrent.iter().any(|&r| r) || recurrent.iter().all(|&r| r) {
            return None;
        }
        let this = NestLoop {
            iter: l.iter.clone(),
            start: l.start.clone(),
            end: l.end.clone(),
        };
        let mut inner_scope = scope.clone();
        inner_scope.push(this.clone());
        let written = vec![array.clone()];
        let inner_kernel = statement_kernel(self.kernel, &inner_scope, stmt, &written);
        let inner_params = self.statement_params(&inner_scope, &written);
        let sizes = bind_scope(&inner_scope, &self.second, Pick::Middle)?;
        let spec = spec_of_kernel(&inner_kernel, &sizes).ok()?;
        let target = stencil::region_value(&spec.output(&array)?.value, &region, &sizes)?;
        let dtype = dtype_of(spec.output(&array)?.elem);
        let slice_leaf = |a: &Access, params: &[Param]| -> Option<Expr> {
            let p = params.iter().find(|p| *p.name == *a.array)?;
            tenslift_targets::build::slice(Expr::var(&p.name, p.ty()), stencil::slice_of(a)?).ok()
        };
        let scalar_leaves: Vec<Expr> = reads
            .iter()
            .map(|r| slice_leaf(r, &inner_params))
            .collect::<Option<_>>()?;
        let mut evaluator = Evaluator::new(sizes.clone(), inner_params, Vec::new());
        let values: Vec<Tensor> = scalar_leaves
            .iter()
            .map(|e| evaluator.value(e))
            .collect::<Option<_>>()?;
        let linear = stencil::derive_linear_stencil(&target, &values)?;
        // The hoisted reads run over the whole loop range at once.
        let outer_params = self.statement_params(scope, &written);
        let vector_leaves: Vec<Expr> = reads
            .iter()
            .map(|r| {
                let mut swept = (*r).clone();
                swept.loops.push(this.clone());
                slice_leaf(&swept, &outer_params)
            })
            .collect::<Option<_>>()?;
        let (rec_terms, rest_terms): (Vec<_>, Vec<_>) = linear
            .terms
            .iter()
            .cloned()
            .partition(|(k, _)| recurrent[*k]);
        let rest = stencil::linear_combination(
            &stencil::LinearStencil {
                terms: rest_terms,
                constant: linear.constant.clone(),
            },
            &vector_leaves,
            dtype,
        )?;
        let recurrence = stencil::linear_combination(
            &stencil::LinearStencil {
                terms: rec_terms,
                constant: crate::algebra::Rat::int(0),
            },
            &scalar_leaves,
            dtype,
        )?;
        let name = format!("{array}_{}_terms", l.iter);
        let hoisted = Expr::var(
            &name,
            tenslift_targets::Ty::tensor(dtype, rest.shape().to_vec()),
        );
        let offset = stencil::dim_of(&difference(&Affine::var(l.iter.clone()), &l.start))?;
        let element =
            tenslift_targets::build::slice(hoisted, vec![SliceItem::Index(offset)]).ok()?;
        let value = Expr::binary(tenslift_targets::BinaryOp::Add, recurrence, element).ok()?;
        let body = vec![
            Stmt::Let {
                name: Arc::from(name.as_str()),
                value: rest,
            },
            Stmt::Loop {
                var: Arc::from(l.iter.as_str()),
                start: stencil::dim_of(&l.start)?,
                stop: stencil::dim_of(&l.end)?,
                body: vec![Stmt::Store {
                    target: Arc::from(array.as_str()),
                    region: Some(region),
                    value,
                }],
            },
        ];
        let loop_kernel = statement_kernel(self.kernel, scope, &CStmt::Loop(l.clone()), &written);
        self.check_statement(body.clone(), &loop_kernel, outer_params, scope)
            .ok()?;
        for s in &body {
            self.cost += super::cost::cost_of(&[&store_value(s)], &sizes);
        }
        self.vectorised = true;
        Some(body)
    }

    /// Shifted slices of every read, the current store region, scalar
    /// parameters, kept loop variables and sizes as floats, the
    /// statement's constants and 1.
    fn leaves(
        &self,
        stmt: &CStmt,
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
        for a in accesses {
            let Some(items) = stencil::slice_of(a) else {
                continue;
            };
            let Some(p) = params.iter().find(|p| *p.name == *a.array) else {
                continue;
            };
            if let Ok(e) = tenslift_targets::build::slice(Expr::var(&p.name, p.ty()), items) {
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
    /// per-statement time limit.
    fn search(
        &mut self,
        evaluator: &mut Evaluator,
        leaves: Vec<Expr>,
        sizes: &Sizes,
        target: &Tensor,
        dtype: tenslift_targets::DType,
    ) -> Result<Option<Expr>, PartialError> {
        let deadline = self.deadline.min(Instant::now() + STATEMENT_SEARCH_LIMIT);
        let Ok(library) = Library::build(
            evaluator,
            leaves,
            sizes,
            deadline,
            self.options.library_limit,
            target,
        ) else {
            return Ok(None);
        };
        self.stats.stubs += library.stubs.len();
        let reductions = Reductions::build(&library, target.shape(), deadline);
        let search = Search {
            library: &library,
            reductions: &reductions,
            model: &self.options.model,
            sizes,
            deadline,
            first: self.options.first,
            stats: Counters::default(),
            banned: &[],
            top_depth: self.options.depth,
        };
        let found = search
            .solve(target, dtype, self.options.depth, f64::INFINITY)
            .ok()
            .flatten();
        self.stats.absorb(&search.stats.snapshot());
        Ok(found.map(|f| f.expr))
    }

    /// The statement program must equal the statement kernel with the kept
    /// variables at the first, middle and last values of their ranges, and
    /// at the second size tuple.
    fn check_statement(
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
        let tuples = [
            (&self.first, Pick::First),
            (&self.first, Pick::Middle),
            (&self.first, Pick::Last),
            (&self.second, Pick::Last),
        ];
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

fn store_value(s: &Stmt) -> Expr {
    match s {
        Stmt::Store { value, .. } | Stmt::Let { value, .. } | Stmt::Return(value) => value.clone(),
        Stmt::Loop { .. } => Expr::lit(Lit::int(0, tenslift_targets::DType::I64)),
    }
}

/// Lifts `kernel` keeping the loops that carry dependencies; the program
/// is returned only when it equals the kernel's spec at two size tuples.
pub fn lift_partially(
    kernel: &Kernel,
    options: &SynthOptions,
) -> Result<PartialLift, PartialError> {
    let lifted = assemble(kernel, options)?;
    match check_program_at_both_sizes(&lifted.program, kernel)? {
        (Comparison::Equal, _) => Ok(lifted),
        (other, sizes) => Err(SynthError::Rejected(format!(
            "at {}: {other}",
            crate::spec::format_sizes(&sizes)
        ))
        .into()),
    }
}

/// The program with kept loops, each statement checked on its own but the
/// whole not yet compared with the kernel.
fn assemble(kernel: &Kernel, options: &SynthOptions) -> Result<PartialLift, PartialError> {
    let deadline = Instant::now() + options.timeout;
    if kernel.returns.is_some() {
        return Err(PartialError::Unsupported(
            "partial lifting keeps no returned scalar".into(),
        ));
    }
    let first = choose_sizes(kernel, &Sizes::new())?;
    let second = choose_second_sizes(kernel, &first)?;
    let params = params_of(kernel, &infer_unknown_extents(kernel, &first)?)?;
    let mut driver = Driver {
        kernel,
        params: params.clone(),
        first,
        second,
        options,
        deadline,
        stats: Stats::default(),
        cost: 0.0,
        kept: Vec::new(),
        vectorised: false,
    };
    let body = driver.lift_block(&kernel.body, &mut Vec::new())?;
    if driver.kept.is_empty() {
        return Err(PartialError::NothingKept);
    }
    // A program that keeps every loop and stores single elements is a
    // transliteration of the C, not a lift.
    if !driver.vectorised {
        return Err(PartialError::NothingVectorised(driver.kept.join(", ")));
    }
    let program = Program {
        meta: Meta {
            source_file: Some(kernel.range.file.clone()),
            lines: Some((kernel.range.start_line, kernel.range.end_line)),
            status: "unverified".to_string(),
            requires: super::signature::requirements(kernel)?,
            preconditions: kernel.preconditions(),
            extents: super::signature::declared_extents(kernel),
        },
        name: Arc::from(kernel.name.as_str()),
        params,
        ret: None,
        body,
    };
    program
        .validate()
        .map_err(|e| SynthError::Rejected(e.to_string()))?;
    Ok(PartialLift {
        program,
        cost: driver.cost,
        stats: driver.stats,
        kept_loops: driver.kept,
        vectorised: driver.vectorised,
    })
}

/// What lifting one kernel gave: the whole-kernel attempt (when made) and
/// the partial lift (when the whole one failed or was not tried).
#[derive(Debug)]
pub struct Outcome {
    pub whole: Option<Lifted>,
    pub partial: Result<PartialLift, PartialError>,
}

impl Outcome {
    /// The program found, whole or with loops kept.
    pub fn program(&self) -> Option<&Program> {
        match (&self.whole, &self.partial) {
            (Some(w), _) if w.program.is_some() => w.program.as_ref(),
            (_, Ok(p)) => Some(&p.program),
            _ => None,
        }
    }

    /// Why partial lifting failed, when it was tried and failed (not when
    /// no loop carried a dependency, or the whole kernel lifted first).
    pub fn partial_failure(&self) -> Option<String> {
        match &self.partial {
            Err(PartialError::NotTried) => None,
            Err(e) => Some(e.to_string()),
            Ok(_) => None,
        }
    }

    /// The whole-kernel error, when neither attempt produced a program.
    pub fn error(&self) -> Option<&SynthError> {
        match (&self.whole, &self.partial) {
            (_, Ok(_)) => None,
            (Some(w), Err(_)) => w.error.as_ref(),
            (None, Err(_)) => None,
        }
    }
}

/// Share of the timeout a whole lift gets before partial lifting, for a
/// kernel whose top-level loop carries a dependency. Half: the kernels that
/// need partial lifting fail the whole search in under a second (PolyBench's
/// stencils and solvers), while darknet's GEMMs, whose flat `C[i*ldc + j]`
/// only looks carried, need 10 to 13 s of whole search on an idle machine
/// and did not lift in 18 s (0.3 of 60) on a busy one.
const WHOLE_SHARE_WHEN_CARRIED: f64 = 0.5;

/// Lifts `kernel` whole, or with loops kept. The whole search goes first;
/// where the top-level loop carries a dependency (a time loop, a solver's
/// row loop) it gets only a share of the time, as a loop-free form is rare
/// there, and partial lifting the rest.
pub fn lift_whole_or_partially(kernel: &Kernel, options: &SynthOptions) -> Outcome {
    if !any_loop_carries(&kernel.body, &mut Vec::new()) {
        return Outcome {
            whole: Some(lift_kernel(kernel, options)),
            partial: Err(PartialError::NotTried),
        };
    }
    let carried_at_top = kernel
        .body
        .iter()
        .any(|s| matches!(s, CStmt::Loop(l) if carries_dependency(l, &[])));
    if carried_at_top {
        // A loop carrying a dependency does not rule out a whole lift (trmm's
        // row loop reads rows it has not written yet: one matmul), so the
        // whole kernel gets a share of the time first; partial lifting, which
        // usually succeeds here, gets the rest.
        let start = Instant::now();
        let first_try = SynthOptions {
            timeout: options.timeout.mul_f64(WHOLE_SHARE_WHEN_CARRIED),
            ..options.clone()
        };
        let whole = lift_kernel(kernel, &first_try);
        if whole.program.is_some() {
            return Outcome {
                whole: Some(whole),
                partial: Err(PartialError::NotTried),
            };
        }
        let rest = SynthOptions {
            timeout: options.timeout.saturating_sub(start.elapsed()),
            ..options.clone()
        };
        return Outcome {
            partial: lift_partially(kernel, &rest),
            whole: Some(whole),
        };
    }
    let whole = lift_kernel(kernel, options);
    if whole.program.is_some() {
        return Outcome {
            whole: Some(whole),
            partial: Err(PartialError::NotTried),
        };
    }
    Outcome {
        partial: lift_partially(kernel, options),
        whole: Some(whole),
    }
}

#[cfg(test)]
mod tests;
