//! Specs: what a kernel computes, as one exact expression per output element.
//!
//! [`spec_of_kernel`] symbolically executes a loop-IR [`Kernel`] at a
//! concrete size tuple: every input (and in/out) array becomes a tensor of
//! fresh symbols named after it (`A[0,1]`), every non-size scalar parameter a
//! symbol (`alpha`), and the loops run exactly as in C — in-place updates,
//! temporaries, triangular bounds, guards; data-dependent `if`s become
//! `select`s on every location either branch assigns. The result maps every
//! output (arrays with role `Output`/`InOut`, and `return`) to a symbolic
//! tensor of its final values as functions of the initial ones.
//!
//! Arrays with role `Output` start as symbols too, so an element the kernel
//! never writes reads as its own initial value (as memory would); such
//! symbols only appear in [`Spec::inputs`] when some output depends on them.
//!
//! [`sizes`] chooses the size tuple (distinct small values that keep every
//! access in bounds) and a second, different tuple for generalisation checks.

pub mod blocks;
pub mod build;
pub mod examples;
pub mod exec;
pub mod numeric;
pub mod reach;
pub mod region;
pub mod sizes;
pub mod tensir;

use std::collections::BTreeMap;
use std::fmt;

use thiserror::Error;

use crate::algebra::Tensor;
use tenslift_frontend::ir::{Kernel, Loc, ScalarType};

pub use sizes::{choose_second_sizes, choose_sizes, size_params, Sizes};

/// Renders a location as clang does (`file:line:col`).
pub fn at(loc: &Loc) -> String {
    format!("{}:{}:{}", loc.file, loc.line, loc.col)
}

/// Why a spec could not be computed.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SpecError {
    #[error("no value for size parameter `{name}`")]
    MissingSize { name: String },
    #[error("`{name}` is not a size parameter of kernel `{kernel}` (size parameters: {known})")]
    NotASize {
        name: String,
        kernel: String,
        known: String,
    },
    #[error("malformed size list `{text}`: expected `name=value,name=value` with integer values")]
    BadSizeList { text: String },
    #[error("no size tuple with distinct small values keeps every access of `{kernel}` in bounds; at the first candidate: {first_failure}")]
    NoValidSizes {
        kernel: String,
        first_failure: String,
    },
    #[error("{at}: error: access {array}{index:?} is out of bounds for extents {extents:?} at sizes {sizes}")]
    OutOfBounds {
        at: String,
        array: String,
        index: Vec<i64>,
        extents: Vec<i64>,
        sizes: String,
    },
    #[error("{at}: error: rows of `{array}` overlap: stride {stride} of dimension {dim} is below the {needed} elements the next dimensions span")]
    OverlappingStrides {
        at: String,
        array: String,
        dim: usize,
        stride: i64,
        needed: i64,
    },
    #[error("{at}: error: extent of dimension {dim} of `{array}` is {extent}")]
    BadExtent {
        at: String,
        array: String,
        dim: usize,
        extent: i64,
    },
    #[error(
        "{at}: error: `{name}` has no value here (not an iterator or size parameter in scope)"
    )]
    Unbound { at: String, name: String },
    #[error("{at}: error: `{name}` is read before it is written")]
    UninitializedRead { at: String, name: String },
    #[error("{at}: error: unknown array or variable `{name}`")]
    Unknown { at: String, name: String },
    #[error("{at}: error: loop step is zero")]
    ZeroStep { at: String },
    #[error("{at}: error: division by the constant zero")]
    DivisionByZero { at: String },
    #[error("{at}: error: `{func}` takes {expected} arguments, got {given}")]
    Arity {
        at: String,
        func: String,
        expected: usize,
        given: usize,
    },
    #[error("{at}: error: `{array}` would have {elements} elements, over the limit of {limit}; choose smaller sizes")]
    TooManyElements {
        at: String,
        array: String,
        elements: i64,
        limit: i64,
    },
    #[error("{at}: error: a product here would expand to {terms} terms, over the limit of {limit}; choose smaller sizes")]
    ExpressionTooLarge {
        at: String,
        terms: usize,
        limit: usize,
    },
    #[error("{at}: error: this sum of fractions would bring {terms} terms over a common denominator of {denominator} terms, over the limit of {limit} (a recurrence dividing by its own value grows so), too large to check any program against; keep this loop in C, or see its spec at smaller sizes (`--size`) where the arrays are not fixed")]
    DenominatorTooLarge {
        at: String,
        terms: usize,
        denominator: usize,
        limit: usize,
    },
    #[error("execution exceeds {limit} statements at sizes {sizes}; choose smaller sizes")]
    TooLarge { limit: u64, sizes: String },
}

/// A kernel input as the spec names it.
#[derive(Clone, Debug, PartialEq)]
pub struct InputInfo {
    pub name: String,
    pub elem: ScalarType,
    /// Extents at the spec's sizes; empty for a scalar.
    pub shape: Vec<usize>,
}

/// One output: its final values.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The array name, or `return`.
    pub name: String,
    pub elem: ScalarType,
    pub value: Tensor,
}

/// The symbolic semantics of one kernel at one size tuple.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub kernel: String,
    pub sizes: Sizes,
    /// Arrays and scalar parameters whose initial values appear as symbols.
    pub inputs: Vec<InputInfo>,
    pub outputs: Vec<Output>,
}

impl Spec {
    pub fn output(&self, name: &str) -> Option<&Output> {
        self.outputs.iter().find(|o| o.name == name)
    }
}

/// Renders sizes as `n=3, m=4`.
pub fn format_sizes(sizes: &Sizes) -> String {
    sizes
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Spec {
    /// One line per output element: `C[0,1] = …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "// spec of {} at {}",
            self.kernel,
            format_sizes(&self.sizes)
        )?;
        for out in &self.outputs {
            let t = &out.value;
            for (offset, e) in t.elems().iter().enumerate() {
                let idx = t.index_of(offset);
                if idx.is_empty() {
                    writeln!(f, "{} = {e}", out.name)?;
                } else {
                    let list: Vec<String> = idx.iter().map(usize::to_string).collect();
                    writeln!(f, "{}[{}] = {e}", out.name, list.join(","))?;
                }
            }
        }
        Ok(())
    }
}

/// Symbolically executes `kernel` at `sizes` (every size parameter bound).
///
/// The last few results are remembered: the tactics of one lift each ask
/// for the spec at the same tuples, and a spec that turns out too large
/// (gramschmidt's division and square-root recurrence) costs seconds
/// before it fails.
pub fn spec_of_kernel(kernel: &Kernel, sizes: &Sizes) -> Result<Spec, SpecError> {
    memo::remembered(kernel, sizes, || exec::execute(kernel, sizes))
}

mod memo {
    use std::cell::RefCell;
    use std::collections::VecDeque;

    use super::{Sizes, Spec, SpecError};
    use tenslift_frontend::ir::Kernel;

    /// How many (kernel, sizes) results are kept: enough for the tuples of
    /// one lift (chosen, second, third and the smaller fallbacks).
    const KEPT: usize = 16;

    /// How many failures are kept besides: an error is small, and a spec
    /// too large to build is the expensive one to repeat (it fails only
    /// after building a million-term product), while the successful specs
    /// of the statement-by-statement partial lift would evict it from
    /// [`KEPT`] entries between the tactics that ask for it.
    const KEPT_FAILURES: usize = 64;

    type Entry = (String, Sizes, Result<Spec, SpecError>);

    thread_local! {
        /// Per thread: kernels lifted in parallel (the corpus) do not
        /// evict one another's entries.
        static RECENT: RefCell<VecDeque<Entry>> = const { RefCell::new(VecDeque::new()) };
        static FAILED: RefCell<VecDeque<Entry>> = const { RefCell::new(VecDeque::new()) };
    }

    /// `run()`'s result, or the one remembered for the same kernel (its
    /// whole printed IR, so equal kernels share it) and sizes.
    pub(super) fn remembered(
        kernel: &Kernel,
        sizes: &Sizes,
        run: impl FnOnce() -> Result<Spec, SpecError>,
    ) -> Result<Spec, SpecError> {
        let key = format!("{kernel:?}");
        let lookup = |store: &VecDeque<Entry>| {
            store
                .iter()
                .find(|(k, s, _)| *k == key && s == sizes)
                .map(|(_, _, r)| r.clone())
        };
        let found = RECENT
            .with_borrow(lookup)
            .or_else(|| FAILED.with_borrow(lookup));
        if let Some(result) = found {
            return result;
        }
        let result = run();
        let (store, kept) = if result.is_ok() {
            (&RECENT, KEPT)
        } else {
            (&FAILED, KEPT_FAILURES)
        };
        store.with_borrow_mut(|entries| {
            if entries.len() == kept {
                entries.pop_front();
            }
            entries.push_back((key, sizes.clone(), result.clone()));
        });
        result
    }
}

/// Chooses sizes (honouring `fixed` ones) and executes. When the spec at
/// the chosen sizes is too large to build (a division/square-root recurrence
/// such as gramschmidt's grows exponentially in the normal form), the
/// smallest valid tuples from 2 up are tried instead: see [`spec_smaller`].
pub fn spec_at_chosen_sizes(kernel: &Kernel, fixed: &Sizes) -> Result<Spec, SpecError> {
    let sizes = choose_sizes(kernel, fixed)?;
    match spec_of_kernel(kernel, &sizes) {
        Err(e) if is_too_large(&e) => spec_smaller(kernel, fixed, 2, &|_| true).ok_or(e),
        other => other,
    }
}

/// The spec at the second size tuple (every size different from `first`),
/// with the same fallback to smaller tuples (from 1 up) as
/// [`spec_at_chosen_sizes`].
pub fn spec_at_second_sizes(kernel: &Kernel, first: &Sizes) -> Result<Spec, SpecError> {
    let sizes = choose_second_sizes(kernel, first)?;
    let breaks = |c: &Sizes| sizes::breaks_relations(first, c);
    let differs = |c: &Sizes| sizes::differs_everywhere(first, c);
    let spec = match too_large_below(kernel, &sizes) {
        Some(e) => Err(e),
        None => spec_of_kernel(kernel, &sizes),
    };
    match spec {
        Err(e) if is_too_large(&e) => spec_smaller(kernel, &Sizes::new(), 1, &breaks)
            .or_else(|| spec_smaller(kernel, &Sizes::new(), 1, &differs))
            .ok_or(e),
        other => other,
    }
}

/// The error of the kernel's first-choice tuple when that spec is too
/// large and `sizes` is nowhere smaller: a normal form only grows with the
/// sizes, so executing at `sizes` would fail the same way, only later
/// (gramschmidt's second tuple ran 3.8 s before failing). A function of
/// the kernel alone, never of what happens to be remembered, so the
/// outcome stays the same on every run.
fn too_large_below(kernel: &Kernel, sizes: &Sizes) -> Option<SpecError> {
    let chosen = choose_sizes(kernel, &Sizes::new()).ok()?;
    let dominates = chosen
        .iter()
        .all(|(name, v)| sizes.get(name).is_some_and(|w| w >= v));
    if !dominates || chosen == *sizes {
        return None;
    }
    match spec_of_kernel(kernel, &chosen) {
        Err(e) if is_too_large(&e) => Some(e),
        _ => None,
    }
}

pub(crate) fn is_too_large(e: &SpecError) -> bool {
    matches!(
        e,
        SpecError::ExpressionTooLarge { .. }
            | SpecError::TooLarge { .. }
            | SpecError::DenominatorTooLarge { .. }
    )
}

/// Total number of terms over all output elements: how big a spec is.
pub fn spec_terms(spec: &Spec) -> usize {
    spec.outputs
        .iter()
        .flat_map(|o| o.value.elems().iter())
        .map(|e| e.len())
        .sum()
}

/// Among the valid tuples with values from `base` whose spec can be built,
/// those with the smallest largest value; of these, the one with the
/// fewest terms (e.g. gramschmidt's `m=3, n=2` over `m=2, n=3`, whose
/// third column is a rank-deficient, all-rounding-noise case). Deterministic:
/// candidates come in a fixed order and ties keep the first.
pub fn spec_smaller(
    kernel: &Kernel,
    fixed: &Sizes,
    base: i64,
    accept: &dyn Fn(&Sizes) -> bool,
) -> Option<Spec> {
    let largest = |s: &Sizes| s.values().copied().max().unwrap_or(0);
    let mut best: Option<(i64, usize, Spec)> = None;
    for sizes in sizes::smaller_candidates(kernel, fixed, base, accept).ok()? {
        if best
            .as_ref()
            .is_some_and(|(top, _, _)| largest(&sizes) > *top)
        {
            break;
        }
        let Ok(spec) = spec_of_kernel(kernel, &sizes) else {
            continue;
        };
        let terms = spec_terms(&spec);
        if best.as_ref().is_none_or(|(_, t, _)| terms < *t) {
            best = Some((largest(&sizes), terms, spec));
        }
    }
    best.map(|(_, _, spec)| spec)
}

/// Parses `n=4,m=5`.
pub fn parse_sizes(text: &str) -> Result<Sizes, SpecError> {
    let bad = || SpecError::BadSizeList { text: text.into() };
    let mut sizes = BTreeMap::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, value) = item.split_once('=').ok_or_else(bad)?;
        let value: i64 = value.trim().parse().map_err(|_| bad())?;
        if name.trim().is_empty() {
            return Err(bad());
        }
        sizes.insert(name.trim().to_string(), value);
    }
    Ok(sizes)
}

#[cfg(test)]
mod differential_tests;
#[cfg(test)]
mod tests;
