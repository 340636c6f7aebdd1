//! The search over a lowered NumPy function, guarded by the input itself:
//! the program the search finds is kept only when it costs no more than
//! the input's own TensIR at sizes where asymptotic order decides, so
//! `optimize` never hands back a costlier program than it was given.

use tenslift_targets::Program;

use super::kernel::Lowered;
use super::tensir::input_program;
use crate::cost::{program_sum, CostModel};
use crate::spec::tensir::check_program_at_both_sizes;
use crate::spec::Sizes;
use crate::synth::{lift_kernel, Outcome, SynthOptions};

/// Every size is this large when costs are compared (as `rewrite` prices
/// at sizes far above the traced ones: the leading term decides).
pub const COMPARE_EXTENT: i64 = 1024;

/// Which program `optimize` hands back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chosen {
    /// The search's program (cheaper than the input, or the input had no
    /// TensIR form).
    Search,
    /// The input as written (the search found nothing cheaper).
    Input,
    /// Neither.
    None,
}

impl Chosen {
    pub fn name(self) -> &'static str {
        match self {
            Chosen::Search => "search",
            Chosen::Input => "input",
            Chosen::None => "none",
        }
    }
}

/// What optimising one function gave.
pub struct Optimized {
    pub outcome: Outcome,
    /// The input as TensIR, when it has that form and matches the spec.
    pub input: Option<Program>,
    /// Why the input has no TensIR form here, if it has none.
    pub input_note: Option<String>,
    pub chosen: Chosen,
    /// Costs at [`COMPARE_EXTENT`] under the search's cost model.
    pub cost_before: Option<f64>,
    pub cost_after: Option<f64>,
}

impl Optimized {
    /// The program handed back.
    pub fn program(&self) -> Option<&Program> {
        match self.chosen {
            Chosen::Search => self.outcome.program(),
            Chosen::Input => self.input.as_ref(),
            Chosen::None => None,
        }
    }
}

/// The sizes costs are compared at.
pub fn compare_sizes(l: &Lowered) -> Sizes {
    crate::spec::sizes::size_params(&l.kernel)
        .into_iter()
        .map(|s| (s, COMPARE_EXTENT))
        .collect()
}

/// The cost of `p` at `sizes` under `model`.
pub fn cost(p: &Program, model: &CostModel, sizes: &Sizes) -> f64 {
    program_sum(p, sizes, &|e, s| model.cost_of(&[e], s))
}

/// Searches a program for `l` and keeps the cheaper of it and the input.
pub fn optimize(l: &Lowered, options: &SynthOptions) -> Optimized {
    let outcome = lift_kernel(&l.kernel, options);
    let (input, input_note) = match input_program(l) {
        None => (
            None,
            Some("TensIR cannot spell the input as written".to_string()),
        ),
        Some(p) => match check_program_at_both_sizes(&p, &l.kernel) {
            Ok((c, _)) if c.is_equal() => (Some(p), None),
            Ok((c, sizes)) => (
                None,
                Some(format!(
                    "the input's TensIR differs from its spec at {sizes:?}: {c:?}"
                )),
            ),
            Err(e) => (
                None,
                Some(format!("the input's TensIR could not be checked: {e}")),
            ),
        },
    };
    let sizes = compare_sizes(l);
    let model = &options.model;
    let cost_before = input.as_ref().map(|p| cost(p, model, &sizes));
    let found = outcome.program().map(|p| cost(p, model, &sizes));
    let chosen = match (found, cost_before) {
        (Some(after), Some(before)) if before < after => Chosen::Input,
        (Some(_), _) => Chosen::Search,
        (None, Some(_)) => Chosen::Input,
        (None, None) => Chosen::None,
    };
    let cost_after = match chosen {
        Chosen::Search => found,
        Chosen::Input => cost_before,
        Chosen::None => None,
    };
    Optimized {
        outcome,
        input,
        input_note,
        chosen,
        cost_before,
        cost_after,
    }
}
