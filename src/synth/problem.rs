//! What the output tactics work on: the kernel's spec and TensIR
//! signature ([`Problem`], built once per kernel), what earlier passes
//! learned ([`Memory`]: rejected expressions, outputs that failed), the
//! program assembled so far in this pass ([`Pass`]), and the one output
//! being solved ([`Goal`]).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::time::Instant;

use tenslift_frontend::ir::{self as loop_ir, Kernel, Origin};
use tenslift_targets::ops::SliceItem;
use tenslift_targets::{DType, Expr, Param, Stmt};

use super::options::{SynthError, SynthOptions};
use super::search::SketchFamily;
use super::signature::{
    infer_unknown_extents, params_of, region_views, search_params, views_of, Regions,
};
use crate::algebra::Tensor;
use crate::spec::tensir::canonical_extrema;
use crate::spec::{spec_at_chosen_sizes, spec_at_second_sizes, Output, Sizes, Spec};

/// One kernel's search problem, fixed across passes.
pub struct Problem<'k> {
    pub kernel: &'k Kernel,
    pub options: &'k SynthOptions,
    /// The spec at the chosen sizes.
    pub spec: Spec,
    pub sizes: Sizes,
    /// The spec at the acceptance's second size tuple, built on first use:
    /// direct translations spell size-dependent constants with it.
    second_spec: OnceCell<Option<Spec>>,
    /// The TensIR parameters as the C declares them.
    pub declared_params: Vec<Param>,
    /// The parameters the search sees: each region array as the array of
    /// its region (`C: f64[ni, nj]`, as a VLA would declare it); the
    /// program found is rebased onto the declared arrays at the end.
    pub params: Vec<Param>,
    pub regions: Regions,
    /// Sizes that stand for declared constant extents (`ext_1000`).
    pub extent_sizes: Vec<String>,
    /// The user's outer deadline (`--timeout`).
    pub deadline: Instant,
    /// The sketch families the search tries, in order.
    pub families: &'k [&'k dyn SketchFamily],
}

impl<'k> Problem<'k> {
    pub fn new(
        kernel: &'k Kernel,
        options: &'k SynthOptions,
        families: &'k [&'k dyn SketchFamily],
        deadline: Instant,
    ) -> Result<Problem<'k>, SynthError> {
        let spec = spec_at_chosen_sizes(kernel, &Sizes::new())?;
        let declared_params = params_of(kernel, &infer_unknown_extents(kernel, &spec.sizes)?)?;
        let regions = region_views(kernel, &declared_params);
        let params = search_params(&declared_params, &regions);
        let extent_sizes = kernel
            .params
            .iter()
            .filter(|p| matches!(p.origin, Origin::Extent { .. }))
            .map(|p| p.name.clone())
            .collect();
        Ok(Problem {
            kernel,
            options,
            sizes: spec.sizes.clone(),
            spec,
            second_spec: OnceCell::new(),
            declared_params,
            params,
            regions,
            extent_sizes,
            deadline,
            families,
        })
    }

    /// The outputs in the order the C finishes writing them (the last
    /// top-level statement that writes each; the returned value last), the
    /// spec's order among ties: an output that reads what another one
    /// stores is then solved after it, and its library holds that array
    /// (gemver's `w = w + alpha * A @ x` after `A` and `x`).
    pub fn ordered_outputs(&self) -> Vec<&Output> {
        let last = last_writes(&self.kernel.body);
        let mut outputs: Vec<(usize, &Output)> = self
            .spec
            .outputs
            .iter()
            .map(|o| (last.get(&*o.name).copied().unwrap_or(usize::MAX), o))
            .collect();
        outputs.sort_by_key(|(at, _)| *at);
        outputs.into_iter().map(|(_, o)| o).collect()
    }

    /// The spec of the statements after the ones whose stores the pass has
    /// already assembled, the arrays' contents at that point as inputs:
    /// what `output` must be computed from the stored arrays, small where
    /// the whole kernel's spec repeats the stored values (`w = w + alpha *
    /// A @ x` after gemver's `A` and `x`). `None` when nothing is stored,
    /// when the statements before that point write anything but stored
    /// arrays, or when a later one writes a stored array again (then the
    /// program's stored value is not the value at that point).
    pub fn spec_after_stores(&self, pass: &Pass, output: &str) -> Option<Spec> {
        if pass.written.is_empty() {
            return None;
        }
        let body = &self.kernel.body;
        let writes: Vec<Vec<String>> = body.iter().map(statement_writes).collect();
        let stored = |name: &String| pass.written.contains(name);
        // The first statement after every write of a stored array.
        let split = writes
            .iter()
            .rposition(|w| w.iter().any(stored))
            .map_or(0, |i| i + 1);
        let before_only_stored = writes[..split].iter().flatten().all(stored);
        let output_after = writes[split..].iter().flatten().any(|n| n == output);
        if split == 0 || !before_only_stored || !output_after {
            return None;
        }
        let suffix = Kernel {
            body: body[split..].to_vec(),
            ..self.kernel.clone()
        };
        crate::spec::spec_of_kernel(&suffix, &self.sizes).ok()
    }

    /// The spec at the second size tuple (`None` when it has none).
    pub fn second_spec(&self) -> &Option<Spec> {
        self.second_spec
            .get_or_init(|| spec_at_second_sizes(self.kernel, &self.sizes).ok())
    }

    /// The views of `name` a search reads: a region array whole (its
    /// search type is its region), others through [`search_views`].
    pub fn views(&self, name: &str) -> Vec<Option<Vec<SliceItem>>> {
        if self.regions.contains_key(name) {
            vec![None]
        } else {
            search_views(self.kernel, name)
        }
    }

    /// The regions an output may be stored through: its region, or each
    /// view of it (the returned scalar: none). Views are tried fewest
    /// unchanged elements first: a view that holds elements the kernel
    /// never writes (darknet's `C[:, n:ldc]`) can only be matched by a
    /// program that leaves them as they are, which the search would look
    /// for in vain before the view of what changed.
    pub fn store_regions(&self, output: &Output) -> Vec<Option<Vec<SliceItem>>> {
        let name = &*output.name;
        if name == "return" {
            return vec![None];
        }
        if let Some(region) = self.regions.get(name) {
            return vec![Some(region.clone())];
        }
        let unchanged = unchanged_elements(output);
        let mut views: Vec<(usize, Option<Vec<SliceItem>>)> = search_views(self.kernel, name)
            .into_iter()
            .map(|view| {
                let count = region_target(&unchanged, &view, &self.sizes).map_or(usize::MAX, |t| {
                    t.elems().iter().filter(|e| !e.is_zero()).count()
                });
                (count, view)
            })
            .collect();
        views.sort_by_key(|(count, _)| *count);
        views.into_iter().map(|(_, view)| view).collect()
    }
}

/// What earlier passes learned, per output name.
#[derive(Default)]
pub struct Memory {
    /// Expressions the generalisation check rejected.
    pub banned: HashMap<String, Vec<Expr>>,
    /// Size casts a rejected expression read: left out of that output's
    /// next library.
    pub fitted_sizes: HashMap<String, Vec<Expr>>,
    /// Outputs the tactics failed, with how many arrays were stored then:
    /// their next tries start with the sketches over stored intermediates,
    /// and add its leaves to the library only when nothing was stored
    /// since (an output waiting for another one's result keeps the plain,
    /// faster library).
    pub failed_with: HashMap<String, usize>,
}

impl Memory {
    pub fn banned(&self, name: &str) -> &[Expr] {
        self.banned.get(name).map_or(&[], |b| b.as_slice())
    }
}

/// The program assembled so far in one pass over the outputs.
#[derive(Default)]
pub struct Pass {
    pub number: u32,
    pub body: Vec<Stmt>,
    /// Arrays stored so far.
    pub written: Vec<String>,
    /// The search's own expression per solved output (what a retry bans).
    pub chosen: HashMap<String, Expr>,
    pub returned: Option<Expr>,
    pub cost: f64,
    pub solved: usize,
}

/// One output to solve in one pass.
pub struct Goal<'a> {
    pub problem: &'a Problem<'a>,
    pub pass: &'a Pass,
    pub memory: &'a Memory,
    /// The output's spec (after peeling a store conversion).
    pub output: &'a Output,
    /// Solved through its store's conversion (`convert`): the second
    /// spec's elements lose their `trunc` too.
    pub peeled: bool,
    pub dtype: DType,
    /// A region array's output is its region: every tactic solves that
    /// part and the store writes only it.
    pub region: Option<Vec<SliceItem>>,
}

impl Goal<'_> {
    pub fn name(&self) -> &str {
        &self.output.name
    }

    /// The values to compute: the output through its region, extrema in
    /// canonical form (as the acceptance compares them).
    pub fn target(&self) -> Option<Tensor> {
        region_target(&self.output.value, &self.region, &self.problem.sizes)
            .map(|t| t.map(canonical_extrema))
    }

    /// When the output failed in an earlier pass, how many arrays were
    /// stored then.
    pub fn retried(&self) -> Option<usize> {
        self.memory.failed_with.get(self.name()).copied()
    }
}

/// 1 where the output still holds its initial element, 0 where the kernel
/// changed it.
fn unchanged_elements(output: &Output) -> Tensor {
    use crate::algebra::{Symbol, Value};
    let value = &output.value;
    Tensor::from_fn(value.shape(), |index| {
        let at: Vec<u32> = index.iter().map(|&i| i as u32).collect();
        let initial = Value::symbol(&Symbol::element(&output.name, &at));
        match value.get(index) {
            Some(e) if *e == initial => Value::one(),
            _ => Value::zero(),
        }
    })
}

/// Per array or scalar written, the index of the last top-level statement
/// writing it.
fn last_writes(body: &[loop_ir::Stmt]) -> HashMap<String, usize> {
    let mut last = HashMap::new();
    for (i, stmt) in body.iter().enumerate() {
        for name in statement_writes(stmt) {
            last.insert(name, i);
        }
    }
    last
}

/// The arrays and scalars one statement writes (nested statements too).
fn statement_writes(stmt: &loop_ir::Stmt) -> Vec<String> {
    fn collect(stmt: &loop_ir::Stmt, out: &mut Vec<String>) {
        match stmt {
            loop_ir::Stmt::Assign { target, .. } => out.push(match target {
                loop_ir::LValue::Scalar { name, .. } => name.clone(),
                loop_ir::LValue::Element { array, .. } => array.clone(),
            }),
            loop_ir::Stmt::Loop(l) => l.body.iter().for_each(|s| collect(s, out)),
            loop_ir::Stmt::If {
                then_body,
                else_body,
                ..
            } => then_body
                .iter()
                .chain(else_body)
                .for_each(|s| collect(s, out)),
            loop_ir::Stmt::Return { .. } => {}
        }
    }
    let mut out = Vec::new();
    collect(stmt, &mut out);
    out
}

/// The target values of one output through one region (`[:, 0:s]`, a
/// block `[s*b:(s + 1)*b]`; the region's bounds evaluated at `sizes`).
pub fn region_target(
    value: &Tensor,
    region: &Option<Vec<SliceItem>>,
    sizes: &Sizes,
) -> Option<Tensor> {
    match region {
        None => Some(value.clone()),
        Some(items) => crate::spec::tensir::slice_at(value, items, sizes).ok(),
    }
}

/// Size parameters that are some flat array's leading dimension (`lda` in
/// `A[i*lda + k]`): the row pitch of a buffer, never an extent of the
/// computation.
fn leading_dimensions(kernel: &Kernel) -> Vec<String> {
    use tenslift_frontend::ir::{ParamKind, Storage};
    kernel
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Array(info) if matches!(info.storage, Storage::Flat { .. }) => {
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
    let cut_at_a_pitch = |items: &Vec<SliceItem>| {
        items.iter().any(|item| match item {
            SliceItem::Range { stop, .. } => pitches
                .iter()
                .any(|p| *stop == tenslift_targets::Dim::sym(p)),
            _ => false,
        })
    };
    views_of(kernel, name)
        .into_iter()
        .filter(|view| !view.as_ref().is_some_and(cut_at_a_pitch))
        .collect()
}
