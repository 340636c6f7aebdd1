//! A data-dependent select: every element of the target is
//! `select(c, t, e)`; the sketch `where(cond(?c), ?t, ?e)` splits the
//! problem into the condition's compared value and the two branch values,
//! each solved as its own subproblem (TENSORIZE's `where` sketch).

use tenslift_targets::{build, DType, Expr};

use super::constant::solve_value;
use super::division::guard_divisions;
use super::{args_of_all, column, constant_term, literal, step_cost};
use crate::algebra::{Func, Rat, Tensor, Value};
use crate::synth::search::{Found, Search, SketchFamily, Solved};

/// The `where` family; see the module documentation.
pub struct WhereSelect;

impl SketchFamily for WhereSelect {
    fn name(&self) -> &'static str {
        "where"
    }

    fn summary(&self) -> &'static str {
        "where(cond(?d), ?t, ?e) when every element is a data-dependent select"
    }

    /// The compared value is solved without its shared constant term,
    /// which becomes the comparison's literal (`lt(x, 128)` rather than
    /// `lt(x - 128, 0)`). The branches keep the sketch's depth: each is a
    /// strictly smaller subproblem, not a nesting.
    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        let Some(select) = Select::read(target) else {
            return Ok(None);
        };
        let step = step_cost(target);
        if step >= bound {
            return Ok(None);
        }
        let Some((cond, cond_cost)) = select.condition(search, dtype, depth, bound - step)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        let rest = bound - cond_cost - step;
        let Some(then) = solve_value(search, &select.thens, dtype, depth, rest)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        let rest = rest - then.cost;
        let Some(otherwise) = solve_value(search, &select.elses, dtype, depth, rest)? else {
            search.stats.backtrack();
            return Ok(None);
        };
        search.stats.pattern_match();
        let (then_expr, then_guards) = guard_divisions(&then.expr);
        let (else_expr, else_guards) = guard_divisions(&otherwise.expr);
        let guard_cost = (then_guards + else_guards) as f64 * step;
        Ok(build::select(cond, then_expr, else_expr)
            .ok()
            .map(|expr| Found {
                expr,
                cost: cond_cost + step + then.cost + otherwise.cost + guard_cost,
            }))
    }
}

/// How a select's condition tests its compared value `d`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Test {
    /// `lt0(d)`: `d < 0`.
    Negative,
    /// A bare value: `d ≠ 0`.
    NonZero,
}

/// A target read as one select per element.
struct Select {
    test: Test,
    /// The compared values less their shared constant term.
    shifted: Tensor,
    /// That constant term.
    offset: Rat,
    thens: Tensor,
    elses: Tensor,
}

impl Select {
    /// The select every element of `target` is, if it is one.
    fn read(target: &Tensor) -> Option<Select> {
        let args = args_of_all(target, Func::Select)?;
        let conds = column(target, &args, 0)?;
        let thens = column(target, &args, 1)?;
        let elses = column(target, &args, 2)?;
        let (test, compared) = tested_values(&conds)?;
        // The constant term shared by every compared value moves into the
        // comparison. An empty target (a loop that runs zero times at these
        // sizes) has nothing to compare.
        let offset = constant_term(compared.first()?);
        let shared = compared.iter().all(|d| constant_term(d) == offset);
        let offset = if shared { offset } else { Rat::from(0) };
        let shifted: Vec<Value> = compared
            .iter()
            .map(|d| d.sub(&Value::constant(offset.clone())))
            .collect();
        let shifted = Tensor::new(target.shape().to_vec(), shifted).ok()?;
        Some(Select {
            test,
            shifted,
            offset,
            thens,
            elses,
        })
    }

    /// The condition and its cost: the compared value solved in the first
    /// element type that holds it, compared with the offset's literal.
    fn condition(
        &self,
        search: &Search<'_>,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<(Expr, f64)>, crate::synth::budget::Halt> {
        let step = step_cost(&self.shifted);
        for cmp_dtype in compare_dtypes(dtype) {
            let Some(rhs) = literal(&-&self.offset, cmp_dtype) else {
                continue;
            };
            if let Some(found) = solve_value(search, &self.shifted, cmp_dtype, depth, bound)? {
                let cond = match self.test {
                    Test::Negative => build::lt(found.expr.clone(), rhs),
                    Test::NonZero => build::ne(found.expr.clone(), rhs),
                };
                if let Ok(cond) = cond {
                    return Ok(Some((cond, found.cost + step)));
                }
            }
        }
        Ok(None)
    }
}

/// How the conditions test a value, and the values: `lt0(d)` in every
/// element, or no predicate at all (a bare value tested against zero).
fn tested_values(conds: &Tensor) -> Option<(Test, Vec<Value>)> {
    let negative: Option<Vec<Value>> = conds
        .elems()
        .iter()
        .map(|c| match c.as_atom().and_then(|a| a.as_app()) {
            Some((Func::Lt0, [d])) => Some(d.clone()),
            _ => None,
        })
        .collect();
    if let Some(ds) = negative {
        return Some((Test::Negative, ds));
    }
    let any_predicate = conds.elems().iter().any(|c| {
        c.as_atom()
            .and_then(|a| a.as_app())
            .is_some_and(|(f, _)| f.is_predicate())
    });
    (!any_predicate).then(|| (Test::NonZero, conds.elems().to_vec()))
}

/// The element types a condition's compared value may be computed in: C
/// compares narrow integers after promoting them to `int`.
fn compare_dtypes(dtype: DType) -> Vec<DType> {
    if dtype.is_int() && dtype != DType::I32 {
        vec![DType::I32, dtype]
    } else {
        vec![dtype]
    }
}
