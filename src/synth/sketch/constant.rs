//! A constant fill (`x[i] = 1`): a target whose elements are all one
//! constant is a literal of the target's type. Nothing is cheaper, so a
//! fill ends its level.

use tenslift_targets::DType;

use super::{literal, uniform};
use crate::algebra::Tensor;
use crate::synth::search::{Found, Search, SketchFamily, Solved};

/// The `constant` family; see the module documentation.
pub struct ConstantFill;

impl SketchFamily for ConstantFill {
    fn name(&self) -> &'static str {
        "constant"
    }

    fn summary(&self) -> &'static str {
        "a literal of the target's type when every element is one constant"
    }

    fn conclusive(&self) -> bool {
        true
    }

    fn solve(&self, _: &Search<'_>, target: &Tensor, dtype: DType, _: u32, bound: f64) -> Solved {
        Ok(constant_fill(target, dtype).filter(|f| f.cost < bound))
    }
}

/// A target whose elements are all one constant: that literal.
pub(super) fn constant_fill(target: &Tensor, dtype: DType) -> Option<Found> {
    let c = uniform(target)?.as_constant()?;
    Some(Found {
        expr: literal(&c, dtype)?,
        cost: 1.0,
    })
}

/// Solves a value either exactly (a literal when uniform and constant) or
/// through the search.
pub(super) fn solve_value(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Solved {
    if let Some(found) = constant_fill(target, dtype) {
        return Ok((found.cost < bound).then_some(found));
    }
    search.solve(target, dtype, depth, bound)
}
