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
//! is never returned. Costs come from the analytic model in [`cost`].

pub mod cost;
pub mod library;
pub mod partial;
pub mod search;
pub mod signature;
pub mod stencil;

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
use crate::spec::{spec_at_chosen_sizes, Sizes, Spec, SpecError};
use library::{leaves, Evaluator, Library};
pub use search::Stats;
use search::{Search, Timeout};
use signature::{dtype_of, infer_unknown_extents, params_of, views_of};

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
}

impl Default for SynthOptions {
    fn default() -> SynthOptions {
        SynthOptions {
            timeout: Duration::from_secs(60),
            first: false,
            depth: 3,
            library_limit: 20_000,
        }
    }
}

/// The outcome of lifting one kernel.
#[derive(Debug)]
pub struct Lifted {
    pub program: Option<Program>,
    pub cost: f64,
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

/// The target values of one output through one region.
fn region_target(value: &Tensor, region: &Option<Vec<SliceItem>>, sizes: &Sizes) -> Option<Tensor> {
    let Some(items) = region else {
        return Some(value.clone());
    };
    // Only `[:, 0:s]` regions are produced by `views_of`.
    let [SliceItem::Full, SliceItem::Range { stop, .. }] = items.as_slice() else {
        return None;
    };
    let cols = stop.eval(&|n| sizes.get(n).copied()).ok()? as usize;
    let shape = value.shape();
    if shape.len() != 2 || cols > shape[1] {
        return None;
    }
    Some(Tensor::from_fn(&[shape[0], cols], |idx| {
        value
            .get(idx)
            .cloned()
            .unwrap_or_else(crate::algebra::Expr::zero)
    }))
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

/// Searches a program for `kernel` whose spec at the chosen sizes is `spec`.
pub fn lift_kernel(kernel: &Kernel, options: &SynthOptions) -> Lifted {
    let start = Instant::now();
    let deadline = start + options.timeout;
    let mut stats = Stats::default();
    let mut solved_outputs = 0;
    let mut output_count = 0;
    let outcome = (|| -> Result<(Program, f64), SynthError> {
        let spec: Spec = spec_at_chosen_sizes(kernel, &Sizes::new())?;
        output_count = spec.outputs.len();
        let params = params_of(kernel, &infer_unknown_extents(kernel, &spec.sizes)?)?;
        let sizes = spec.sizes.clone();
        let timeout = |_: Timeout| SynthError::Timeout(start.elapsed().as_secs_f64());
        // Expressions the generalisation check rejected, per output name.
        let mut banned: HashMap<String, Vec<Expr>> = HashMap::new();
        let mut retries_left = MAX_GENERALISATION_RETRIES;
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
                for out in pending {
                    let mut evaluator = Evaluator::new(sizes.clone(), params.clone(), body.clone());
                    let views = |name: &str| views_of(kernel, name);
                    let library = Library::build(
                        &mut evaluator,
                        leaves(&params, &views, &written),
                        &sizes,
                        deadline,
                        options.library_limit,
                        &out.value.vars(),
                    )
                    .map_err(|_| SynthError::Timeout(start.elapsed().as_secs_f64()))?;
                    stats.stubs += library.stubs.len();
                    let dtype = dtype_of(out.elem);
                    let regions = if out.name == "return" {
                        vec![None]
                    } else {
                        views_of(kernel, &out.name)
                    };
                    let mut search = Search {
                        library: &library,
                        deadline,
                        first: options.first,
                        stats: Stats::default(),
                        banned: banned.get(&out.name).map_or(&[], |b| b.as_slice()),
                        top_depth: options.depth,
                    };
                    let mut found = None;
                    for region in regions {
                        let Some(target) = region_target(&out.value, &region, &sizes) else {
                            continue;
                        };
                        let target = target.map(canonical_extrema);
                        if let Some(f) = search
                            .solve(&target, dtype, options.depth, f64::INFINITY)
                            .map_err(timeout)?
                        {
                            found = Some((f, region));
                            break;
                        }
                    }
                    let s = search.stats;
                    stats.steps += s.steps;
                    stats.backtracks += s.backtracks;
                    stats.pattern_matched += s.pattern_matched;
                    stats.solved_algebraically += s.solved_algebraically;
                    match found {
                        Some((f, region)) => {
                            chosen.insert(out.name.clone(), f.expr.clone());
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
                        None => still.push(out),
                    }
                }
                if !progress {
                    return Err(SynthError::NotFound(still[0].name.clone()));
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
                },
                name: Arc::from(kernel.name.as_str()),
                params: params.clone(),
                ret,
                body,
            };
            program
                .validate()
                .map_err(|e| SynthError::Rejected(e.to_string()))?;
            let (other, sizes) = match check_program_at_both_sizes(&program, kernel)? {
                (Comparison::Equal, _) => return Ok((program, total_cost)),
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
            stats,
            error: None,
            solved: solved_outputs,
            outputs: output_count,
        },
        Err(e) => Lifted {
            program: None,
            cost: 0.0,
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
        assert!(text.contains("matmul(A, B)"), "{text}");
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
