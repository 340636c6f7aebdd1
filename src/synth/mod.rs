//! The synthesizer: finds a TensIR program equal to a C kernel's spec.
//!
//! For each output of the spec (arrays the kernel changes, then the
//! returned scalar) a sketch library is enumerated over the kernel's inputs
//! ([`library`]), and a top-down search ([`search`]) solves the output's
//! value: a stub's value, or a sketch whose hole value the algebra core
//! solves exactly. Outputs are solved one at a time; later ones may read
//! the arrays earlier ones wrote. A program is accepted only when it equals
//! the C spec at the chosen sizes and at a second, different size tuple
//! ([`check_program_at_both_sizes`]), so a program fitted to one size tuple
//! is never returned. Costs come from [`cost`]: the analytic model, or a
//! table calibrated on this machine. Each search level's sketches run on
//! rayon workers; the result does not depend on their timing. When the
//! deadline hits, best mode returns the cheapest program found so far.

pub mod contraction;
pub mod convert;
pub mod cost;
pub mod direct;
pub mod fold;
pub mod library;
pub mod moments;
pub mod partial;
pub mod rewrite;
pub mod scatter;
pub mod search;
pub mod select;
pub mod signature;
pub mod solvers;
pub mod stencil;

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tenslift_frontend::ir::Kernel;
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{Expr, Meta, Program, Stmt};
use thiserror::Error;

use crate::algebra::Tensor;
use crate::spec::tensir::{
    canonical_extrema, check_program_at_both_sizes, Comparison, TensirSpecError,
};
use crate::spec::{spec_at_chosen_sizes, spec_at_second_sizes, Sizes, Spec, SpecError};
use cost::CostModel;
use library::{leaves, Evaluator, Library};
pub use search::Stats;
use search::{Counters, Reductions, Search, Timeout};
use signature::{
    dtype_of, infer_unknown_extents, params_of, rebase_onto_regions, region_views, search_params,
    views_of,
};

/// Why a kernel could not be lifted.
#[derive(Debug, Error)]
pub enum SynthError {
    #[error("the kernel's signature has no TensIR form: {0}")]
    Signature(String),
    #[error("spec: {0}")]
    Spec(#[from] SpecError),
    #[error("timeout after {0:.1} s")]
    Timeout(f64),
    #[error("no program found for output `{0}` within the search bounds")]
    NotFound(String),
    #[error("the candidate is not a valid program: {0}")]
    Invalid(String),
    #[error("the candidate does not generalise: {0}")]
    Rejected(String),
    #[error("checking the candidate: {0}")]
    Check(#[from] TensirSpecError),
}

/// How to search.
#[derive(Clone, Debug)]
pub struct SynthOptions {
    pub timeout: Duration,
    /// Return the first solution instead of the cheapest found in time.
    pub first: bool,
    /// Depth of the top-down search (sketch nesting above the library).
    pub depth: u32,
    /// Most stubs in one library.
    pub library_limit: usize,
    /// Prices candidates (analytic unless a calibration file is given).
    pub model: CostModel,
}

impl Default for SynthOptions {
    fn default() -> SynthOptions {
        SynthOptions {
            timeout: Duration::from_secs(60),
            first: false,
            depth: 3,
            library_limit: 20_000,
            model: CostModel::Analytic,
        }
    }
}

/// The outcome of lifting one kernel.
#[derive(Debug)]
pub struct Lifted {
    pub program: Option<Program>,
    pub cost: f64,
    /// The program's asymptotic complexity ([`cost::complexity_degree`]).
    pub complexity: Option<u32>,
    pub stats: Stats,
    pub error: Option<SynthError>,
    /// Outputs solved, of all outputs (a failure after some are solved is
    /// a partial result).
    pub solved: usize,
    pub outputs: usize,
}

/// How many rejected candidates the search replaces with the next one
/// before giving up on a kernel.
const MAX_GENERALISATION_RETRIES: usize = 4;

/// The output a failed comparison names, when it names one.
fn differing_output(comparison: &Comparison) -> Option<&str> {
    match comparison {
        Comparison::Differs { output, .. } | Comparison::ShapeMismatch { output, .. } => {
            Some(output)
        }
        _ => None,
    }
}

/// The target values of one output through one region (`[:, 0:s]`, a
/// block `[s*b:(s + 1)*b]`; the region's bounds evaluated at `sizes`).
fn region_target(value: &Tensor, region: &Option<Vec<SliceItem>>, sizes: &Sizes) -> Option<Tensor> {
    match region {
        None => Some(value.clone()),
        Some(items) => crate::spec::tensir::slice_at(value, items, sizes).ok(),
    }
}

/// `expr` broadcast to the shape of the store's target when it is a
/// uniform value of lower rank (`x = 0` fills an array); TensIR stores need
/// exactly the target's type.
fn broadcast_to_store(
    params: &[tenslift_targets::Param],
    name: &str,
    region: &Option<Vec<SliceItem>>,
    expr: Expr,
) -> Expr {
    let Some(param) = params.iter().find(|p| &*p.name == name) else {
        return expr;
    };
    let ty = param.ty();
    let shape = match region {
        None => Some(ty.shape.clone()),
        Some(items) => tenslift_targets::expr::slice_shape(&ty.shape, items).ok(),
    };
    match shape {
        Some(shape) if shape.as_slice() != expr.shape() => {
            tenslift_targets::build::broadcast(expr.clone(), shape).unwrap_or(expr)
        }
        _ => expr,
    }
}

/// Size parameters that are some flat array's leading dimension (`lda` in
/// `A[i*lda + k]`): the row pitch of a buffer, never an extent of the
/// computation.
fn leading_dimensions(kernel: &Kernel) -> Vec<String> {
    use tenslift_frontend::ir::{ParamKind as CParam, Storage};
    kernel
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            CParam::Array(info) if matches!(info.storage, Storage::Flat { .. }) => {
                let inner = info.dims.get(1)?.as_ref()?;
                let (name, &coefficient) = inner.terms.iter().next()?;
                (inner.terms.len() == 1 && coefficient == 1 && inner.constant == 0)
                    .then(|| name.clone())
            }
            _ => None,
        })
        .collect()
}

/// The views of `name` a search reads: [`views_of`]'s, less column slices
/// cut at another array's leading dimension (`A[:, 0:ldb]`), which no
/// kernel computes with and which multiply the library (darknet's gemm
/// has three leading dimensions).
fn search_views(kernel: &Kernel, name: &str) -> Vec<Option<Vec<SliceItem>>> {
    let pitches = leading_dimensions(kernel);
    views_of(kernel, name)
        .into_iter()
        .filter(|view| {
            !view.as_ref().is_some_and(|items| {
                items.iter().any(|item| match item {
                    SliceItem::Range { stop, .. } => pitches
                        .iter()
                        .any(|p| *stop == tenslift_targets::Dim::sym(p)),
                    _ => false,
                })
            })
        })
        .collect()
}

/// Whether `leaf` is an extent size (`ext_1000`) cast to an element type.
fn reads_extent_size(leaf: &Expr, extents: &[&str]) -> bool {
    matches!(leaf.op(), tenslift_targets::Op::Cast(_))
        && leaf.args().first().is_some_and(
            |a| matches!(a.op(), tenslift_targets::Op::Var(n) if extents.contains(&&**n)),
        )
}

/// The casts of size parameters to element types inside `expr`.
fn size_casts(expr: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    expr.walk(&mut |node| {
        if let tenslift_targets::Op::Cast(_) = node.op() {
            // Scalar integer variables cast to an element type are sizes
            // (the only such leaves); narrow arrays widened to i32 are not.
            let reads_size = node.args().first().is_some_and(|a| {
                matches!(a.op(), tenslift_targets::Op::Var(_))
                    && a.shape().is_empty()
                    && a.dtype().is_int()
            });
            if reads_size && !out.contains(node) {
                out.push(node.clone());
            }
        }
    });
    out
}

/// The output a direct translation is attempted for.
struct DirectOutput<'a> {
    name: &'a str,
    /// The whole output's spec value; `region` is the part to translate.
    value: &'a Tensor,
    region: &'a Option<Vec<SliceItem>>,
    dtype: tenslift_targets::DType,
    /// Solved through its store's conversion ([`convert`]): the second
    /// spec's elements lose their `trunc` too.
    peeled: bool,
}

/// The direct translation of a whole point-wise output ([`direct`]), with
/// its cost, unless the generalisation check already rejected it.
#[allow(clippy::too_many_arguments)]
fn direct_translation<'s>(
    output: DirectOutput<'_>,
    sizes: &Sizes,
    second_spec: impl FnOnce() -> &'s Option<Spec>,
    params: &[tenslift_targets::Param],
    prefix: &[Stmt],
    banned: &[Expr],
    model: &CostModel,
) -> Option<search::Found> {
    if !output.dtype.is_float() {
        return None;
    }
    let first = region_target(output.value, output.region, sizes)?.map(canonical_extrema);
    let second = second_spec().as_ref().and_then(|spec| {
        let value = region_target(&spec.output(output.name)?.value, output.region, &spec.sizes)?;
        let value = if output.peeled {
            convert::strip_truncation(&value)?
        } else {
            value
        };
        Some((value.map(canonical_extrema), spec.sizes.clone()))
    });
    let targets = direct::Targets {
        first: &first,
        first_sizes: sizes,
        second: second.as_ref().map(|(value, sizes)| (value, sizes)),
    };
    let expr = direct::translate(&targets, output.dtype, params, prefix)?;
    if banned.contains(&expr) {
        return None;
    }
    let cost = model.cost_of(&[&expr], sizes);
    Some(search::Found { expr, cost })
}

/// The share of the time left that one output's library may take; the
/// rest is the search's.
const LIBRARY_SHARE: f64 = 0.5;

/// The most time one output's search with the [`moments`] leaves may take.
const MOMENT_BUDGET: Duration = Duration::from_secs(3);

/// Searches a program for `kernel` whose spec at the chosen sizes is `spec`.
pub fn lift_kernel(kernel: &Kernel, options: &SynthOptions) -> Lifted {
    // hook(idioms): histogram writes lift to scatter_add, read off the loop IR.
    if let Some(lifted) = scatter::lift_histogram(kernel, options) {
        return lifted;
    }
    // hook(solvers): factorisations and substitutions as library operations.
    if let Some(lifted) = solvers::lift_as_solver(kernel, options) {
        return lifted;
    }
    let start = Instant::now();
    let deadline = start + options.timeout;
    let mut stats = Stats::default();
    let mut complexity = None;
    let mut solved_outputs = 0;
    let mut output_count = 0;
    let outcome = (|| -> Result<(Program, f64), SynthError> {
        let spec: Spec = spec_at_chosen_sizes(kernel, &Sizes::new())?;
        output_count = spec.outputs.len();
        let params = params_of(kernel, &infer_unknown_extents(kernel, &spec.sizes)?)?;
        // The search sees each region array as the array of its region
        // (`C: f64[ni, nj]`, as a VLA would declare it); the program found
        // is rebased onto the declared arrays at the end.
        let regions = region_views(kernel, &params);
        let declared_params = params;
        let params = search_params(&declared_params, &regions);
        let extent_sizes: Vec<&str> = kernel
            .params
            .iter()
            .filter(|p| matches!(p.origin, tenslift_frontend::ir::Origin::Extent { .. }))
            .map(|p| p.name.as_str())
            .collect();
        let sizes = spec.sizes.clone();
        // The spec at the acceptance's second size tuple, built on first
        // use: direct translations spell size-dependent constants with it.
        let second_spec: OnceCell<Option<Spec>> = OnceCell::new();
        let timeout = |_: Timeout| SynthError::Timeout(start.elapsed().as_secs_f64());
        // Expressions the generalisation check rejected, per output name.
        let mut banned: HashMap<String, Vec<Expr>> = HashMap::new();
        // Size casts a rejected expression read, per output name: left out
        // of that output's next library.
        let mut fitted_sizes: HashMap<String, Vec<Expr>> = HashMap::new();
        let mut retries_left = MAX_GENERALISATION_RETRIES;
        // Outputs the plain library failed, with how many arrays were
        // stored then: their next tries start with the sketches over stored
        // intermediates ([`moments`]), and add its leaves to the library
        // only when nothing was stored since (an output waiting for another
        // one's result keeps the plain, faster library).
        let mut failed_with: HashMap<String, usize> = HashMap::new();
        loop {
            solved_outputs = 0;
            let mut chosen: HashMap<String, Expr> = HashMap::new();
            let mut body: Vec<Stmt> = Vec::new();
            let mut written: Vec<String> = Vec::new();
            let mut returned: Option<Expr> = None;
            let mut total_cost = 0.0;
            let mut pending: Vec<_> = spec.outputs.iter().collect();
            // Solve outputs in C order; one that reads another's result waits
            // for a later pass.
            while !pending.is_empty() {
                let mut progress = false;
                let mut still = Vec::new();
                let mut outputs_left = pending.len() as u32;
                for out_spec in pending {
                    // An integer output that truncates float values is
                    // solved as those values, then cast back ([`convert`]).
                    let peeled = convert::peel_store_conversion(kernel, out_spec);
                    let out = peeled.as_ref().map_or(out_spec, |p| &p.output);
                    // Best mode shares the time among the outputs still to
                    // solve: branch-and-bound on one output must not starve
                    // the next. Past its share an output keeps the cheapest
                    // program found, or, with none yet, is searched again
                    // for a first one in the time left.
                    let output_deadline = if options.first {
                        deadline
                    } else {
                        let now = Instant::now();
                        // A tenth stays for the acceptance check and retries.
                        let left = deadline.saturating_duration_since(now).mul_f64(0.9);
                        now + left / outputs_left.max(1)
                    };
                    outputs_left = outputs_left.saturating_sub(1);
                    let dtype = dtype_of(out.elem);
                    // A region array's output is its region: every sketch
                    // solves that part and the store writes only it.
                    let out_region: Option<Vec<SliceItem>> = regions.get(&out.name).cloned();
                    // A point-wise output is translated directly; first
                    // mode keeps that translation, best mode searches for a
                    // strictly cheaper program below its cost.
                    let direct = direct_translation(
                        DirectOutput {
                            name: &out.name,
                            value: &out.value,
                            region: &out_region,
                            dtype,
                            peeled: peeled.is_some(),
                        },
                        &sizes,
                        || second_spec.get_or_init(|| spec_at_second_sizes(kernel, &sizes).ok()),
                        &params,
                        &body,
                        banned.get(&out.name).map_or(&[], |b| b.as_slice()),
                        &options.model,
                    );
                    let found = 'solve: {
                        if let Some(found) = direct.as_ref() {
                            stats.direct += 1;
                            if options.first {
                                break 'solve Some((found.clone(), out_region.clone()));
                            }
                        }
                        // A search program as cheap as the translation is
                        // kept (the slack admits ties): the search's programs
                        // are the ones best mode has always produced.
                        let bound = direct
                            .as_ref()
                            .map_or(f64::INFINITY, |f| search::with_tie_slack(f.cost));
                        let mut evaluator =
                            Evaluator::new(sizes.clone(), params.clone(), body.clone());
                        // A region array is read whole: its search type
                        // is its region.
                        let views = |name: &str| {
                            if regions.contains_key(name) {
                                vec![None]
                            } else {
                                search_views(kernel, name)
                            }
                        };
                        // Sketches over stored intermediates that need no
                        // library: a square output may be a stored matrix's
                        // Gram matrix times a scalar (tried first: the library
                        // would evaluate every stub over the stored values, which
                        // is slow); an output that failed once tries the others.
                        let retried = failed_with.get(&out.name).copied();
                        let sketched_target = region_target(&out.value, &out_region, &sizes);
                        let square = sketched_target
                            .as_ref()
                            .is_some_and(|t| matches!(t.shape(), [a, b] if a == b));
                        if let Some(target) = sketched_target
                            .filter(|_| (square && !written.is_empty()) || retried.is_some())
                        {
                            let target = target.map(canonical_extrema);
                            let sketched = moments::scaled_gram(
                                &mut evaluator,
                                &params,
                                &written,
                                &target,
                                &sizes,
                            )
                            .or_else(|| {
                                retried.and_then(|_| {
                                    moments::direct(
                                        &mut evaluator,
                                        &params,
                                        &written,
                                        &target,
                                        &sizes,
                                    )
                                })
                            });
                            if let Some(sketch) = sketched {
                                let cheaper = match direct {
                                    Some(d) if d.cost <= sketch.cost => d,
                                    _ => sketch,
                                };
                                break 'solve Some((cheaper, out_region.clone()));
                            }
                        }
                        let moment_leaves = if retried == Some(written.len()) {
                            moments::leaves(&params, &written)
                        } else {
                            Vec::new()
                        };
                        // The moment sketches get a short budget of their
                        // own: an output they cannot solve either must not
                        // hold up the kept-loops fallback.
                        let capped = !moment_leaves.is_empty();
                        let (output_deadline, retry_deadline) = if capped {
                            let cap = output_deadline.min(Instant::now() + MOMENT_BUDGET);
                            (cap, cap)
                        } else {
                            (output_deadline, deadline)
                        };
                        let library_start = Instant::now();
                        let library_deadline = library_start
                            + output_deadline
                                .saturating_duration_since(library_start)
                                .mul_f64(LIBRARY_SHARE);
                        let library = Library::build(
                            &mut evaluator,
                            leaves(&params, &views, &written, dtype)
                                .into_iter()
                                // Beside the moment leaves only scalars stay:
                                // the plain library already failed this output.
                                .filter(|leaf| moment_leaves.is_empty() || leaf.shape().is_empty())
                                .filter(|leaf| {
                                    !fitted_sizes
                                        .get(&out.name)
                                        .is_some_and(|casts| casts.contains(leaf))
                                })
                                // An extent size only sizes arrays: the C
                                // never computes with it.
                                .filter(|leaf| !reads_extent_size(leaf, &extent_sizes))
                                .chain(select::triangle_leaves(&params, &out.value))
                                .chain(moment_leaves.iter().cloned())
                                .collect(),
                            &sizes,
                            library_deadline,
                            options.library_limit,
                            &out.value,
                        );
                        let mut library = match library {
                            Ok(library) => library,
                            Err(_) => match direct {
                                Some(found) => break 'solve Some((found, out_region.clone())),
                                None => {
                                    return Err(SynthError::Timeout(start.elapsed().as_secs_f64()))
                                }
                            },
                        };
                        // The library prices stubs analytically; a calibrated
                        // model re-prices them (stubs keep their slots).
                        if let CostModel::Calibrated(_) = &options.model {
                            for stub in &mut library.stubs {
                                stub.cost = options.model.cost_of(&[&stub.expr], &sizes);
                            }
                        }
                        stats.stubs += library.stubs.len();
                        stats.library_truncated |= library.truncated;
                        stats.library_s += library_start.elapsed().as_secs_f64();
                        let search_start = Instant::now();
                        let regions = if out.name == "return" {
                            vec![None]
                        } else if let Some(region) = regions.get(&out.name) {
                            vec![Some(region.clone())]
                        } else {
                            search_views(kernel, &out.name)
                        };
                        let mut found = None;
                        let mut timed_out = false;
                        for region in regions {
                            let Some(target) = region_target(&out.value, &region, &sizes) else {
                                continue;
                            };
                            let target = target.map(canonical_extrema);
                            let reductions =
                                Reductions::build(&library, target.shape(), output_deadline);
                            let search_with = |deadline: Instant, first: bool| {
                                let search = Search {
                                    library: &library,
                                    reductions: &reductions,
                                    model: &options.model,
                                    sizes: &sizes,
                                    deadline,
                                    first,
                                    stats: Counters::default(),
                                    banned: banned.get(&out.name).map_or(&[], |b| b.as_slice()),
                                    top_depth: options.depth,
                                };
                                let outcome = search.solve(&target, dtype, options.depth, bound);
                                (outcome, search.stats.snapshot())
                            };
                            let (mut outcome, searched) =
                                search_with(output_deadline, options.first);
                            stats.absorb(&searched);
                            if matches!(outcome, Err(Timeout)) && output_deadline < retry_deadline {
                                let (again, searched) = search_with(retry_deadline, true);
                                stats.absorb(&searched);
                                outcome = again;
                            }
                            match outcome {
                                Ok(Some(f)) => {
                                    found = Some((f, region));
                                    break;
                                }
                                Ok(None) => {}
                                Err(Timeout) => {
                                    timed_out = !capped;
                                    break;
                                }
                            }
                        }
                        stats.search_s += search_start.elapsed().as_secs_f64();
                        match (found, direct) {
                            (Some(searched), _) => Some(searched),
                            (None, Some(direct)) => Some((direct, out_region.clone())),
                            (None, None) if timed_out => return Err(timeout(Timeout)),
                            (None, None) => None,
                        }
                    };
                    match found {
                        Some((mut f, region)) => {
                            // The search's own expression is what a retry
                            // bans (it would find it again otherwise).
                            chosen.insert(out.name.clone(), f.expr.clone());
                            let (expr, saved) = rewrite::cheapest(&f.expr, &options.model, &sizes);
                            f.expr = expr;
                            f.cost -= saved;
                            // Literal arithmetic (`2.0 + 2.0`) is folded
                            // exactly before anything is emitted.
                            let folded = fold::fold_constants(&f.expr);
                            if folded != f.expr {
                                let before = options.model.cost_of(&[&f.expr], &sizes);
                                let after = options.model.cost_of(&[&folded], &sizes);
                                f.cost -= (before - after).max(0.0);
                                f.expr = folded;
                            }
                            if let Some(p) = &peeled {
                                let before = options.model.cost_of(&[&f.expr], &sizes);
                                f.expr = convert::convert_back(p, f.expr);
                                f.cost += options.model.cost_of(&[&f.expr], &sizes) - before;
                            }
                            total_cost += f.cost;
                            progress = true;
                            solved_outputs += 1;
                            if out.name == "return" {
                                returned = Some(f.expr);
                            } else {
                                let expr = broadcast_to_store(&params, &out.name, &region, f.expr);
                                body.push(Stmt::Store {
                                    target: Arc::from(out.name.as_str()),
                                    region,
                                    value: expr,
                                });
                                written.push(out.name.clone());
                            }
                        }
                        None => {
                            failed_with.insert(out.name.clone(), written.len());
                            still.push(out_spec);
                        }
                    }
                }
                if !progress {
                    let name = still
                        .first()
                        .map_or_else(String::new, |o| o.name.to_string());
                    return Err(SynthError::NotFound(name));
                }
                pending = still;
            }
            let ret = returned.as_ref().map(|e| e.dtype());
            if let Some(e) = returned {
                body.push(Stmt::Return(e));
            }
            let program = Program {
                meta: Meta {
                    source_file: Some(kernel.range.file.clone()),
                    lines: Some((kernel.range.start_line, kernel.range.end_line)),
                    status: "unverified".to_string(),
                    requires: signature::requirements(kernel)?,
                    preconditions: kernel.preconditions(),
                    extents: signature::declared_extents(kernel),
                },
                name: Arc::from(kernel.name.as_str()),
                params: declared_params.clone(),
                ret,
                body: rebase_onto_regions(&body, &regions)?,
            };
            program
                .validate()
                .map_err(|e| SynthError::Rejected(e.to_string()))?;
            let (other, sizes) = match check_program_at_both_sizes(&program, kernel)? {
                (Comparison::Equal, _) => {
                    complexity = cost::complexity_degree(&program);
                    return Ok((program, total_cost));
                }
                rejected => rejected,
            };
            let rejection =
                SynthError::Rejected(format!("at {}: {other}", crate::spec::format_sizes(&sizes)));
            // Retry with the differing output's expression banned: the next
            // candidate may generalise (a size read as a constant, say).
            let culprit = differing_output(&other)
                .and_then(|name| chosen.get(name).map(|e| (name.to_string(), e.clone())));
            match culprit {
                Some((name, expr)) if retries_left > 0 && Instant::now() < deadline => {
                    retries_left -= 1;
                    // A size read as a constant (`cast(m)` where m = 4 at
                    // the first sizes standing for the literal 4) comes
                    // back in many spellings; dropping the size leaves it
                    // read makes the next library build the constant.
                    fitted_sizes
                        .entry(name.clone())
                        .or_default()
                        .extend(size_casts(&expr));
                    banned.entry(name).or_default().push(expr);
                }
                _ => return Err(rejection),
            }
        }
    })();
    match outcome {
        Ok((program, cost)) => Lifted {
            program: Some(program),
            cost,
            complexity,
            stats,
            error: None,
            solved: solved_outputs,
            outputs: output_count,
        },
        Err(e) => Lifted {
            program: None,
            cost: 0.0,
            complexity: None,
            stats,
            error: Some(e),
            solved: solved_outputs,
            outputs: output_count,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::examples;
    use tenslift_targets::print_program;

    #[test]
    fn gemm_is_lifted_and_the_program_passes_both_size_tuples() {
        let kernel = examples::gemm();
        let lifted = lift_kernel(&kernel, &SynthOptions::default());
        assert!(lifted.error.is_none(), "{:?}", lifted.error);
        let program = lifted.program.expect("a program");
        let text = print_program(&program);
        // The product of A and B (with alpha folded into either factor).
        assert!(text.contains("matmul("), "{text}");
        assert!(lifted.cost > 0.0);
        assert!(lifted.stats.steps > 0 && lifted.stats.stubs > 0);
        let (outcome, _) = check_program_at_both_sizes(&program, &kernel).expect("check");
        assert!(outcome.is_equal());
    }

    #[test]
    fn best_mode_is_never_costlier_than_first_mode() {
        let kernel = examples::gemm();
        let first = lift_kernel(
            &kernel,
            &SynthOptions {
                first: true,
                ..SynthOptions::default()
            },
        );
        let best = lift_kernel(&kernel, &SynthOptions::default());
        assert!(first.program.is_some() && best.program.is_some());
        assert!(
            best.cost <= first.cost,
            "best {} first {}",
            best.cost,
            first.cost
        );
    }

    fn corpus_kernel(file: &str) -> Kernel {
        let path = format!("{}/benchmarks/{file}", env!("CARGO_MANIFEST_DIR"));
        let unit = tenslift_frontend::extract(&path, &tenslift_frontend::Options::default())
            .expect("extracts");
        unit.kernels.into_iter().next().expect("one kernel")
    }

    #[test]
    fn diag_dot_gets_stensos_quadratic_program_every_time() {
        let kernel = corpus_kernel("stenso/diag_dot.c");
        let runs: Vec<Lifted> = (0..2)
            .map(|_| lift_kernel(&kernel, &SynthOptions::default()))
            .collect();
        let texts: Vec<String> = runs
            .iter()
            .map(|r| print_program(r.program.as_ref().expect("diag_dot lifts")))
            .collect();
        // Parallel workers finish in any order; the program must not change.
        assert_eq!(texts[0], texts[1]);
        assert!(!texts[0].contains("matmul"), "{}", texts[0]);
        assert_eq!(runs[0].complexity, Some(2), "{}", texts[0]);
    }

    #[test]
    fn a_timeout_is_honoured_within_half_a_second() {
        let kernel = corpus_kernel("darknet/gemm_nn.c");
        let start = Instant::now();
        let lifted = lift_kernel(
            &kernel,
            &SynthOptions {
                timeout: Duration::from_secs(2),
                ..SynthOptions::default()
            },
        );
        let elapsed = start.elapsed().as_secs_f64();
        assert!(elapsed < 2.5, "took {elapsed:.2} s for a 2 s timeout");
        // Either a program (the best found in time) or a timeout, never
        // another failure.
        assert!(
            lifted.program.is_some() || matches!(lifted.error, Some(SynthError::Timeout(_))),
            "{:?}",
            lifted.error
        );
    }

    #[test]
    fn an_exhausted_deadline_is_a_timeout_not_a_hang() {
        let kernel = examples::three_mm();
        let lifted = lift_kernel(
            &kernel,
            &SynthOptions {
                timeout: Duration::from_millis(1),
                ..SynthOptions::default()
            },
        );
        assert!(lifted.program.is_none());
        assert!(
            matches!(lifted.error, Some(SynthError::Timeout(_))),
            "{:?}",
            lifted.error
        );
    }
}
