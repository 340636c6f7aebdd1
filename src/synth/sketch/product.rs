//! An integer product `g · stub · ?q`: an integer polynomial of degree at
//! least two with a common integer factor `g` and a library stub dividing
//! it exactly, as polynomials (`2*(255 - a)*(255 - b)`). The search's own
//! product sketch is for floats only, as integer quotients are rarely
//! polynomials.

use tenslift_targets::{build, DType, Expr, Lit};

use super::constant::solve_value;
use super::step_cost;
use crate::algebra::{Rat, Tensor, Value};
use crate::synth::budget::Halt;
use crate::synth::search::{work_of, Found, Search, SketchFamily, Solved};

/// Stub divisors an integer product sketch tries, simplest quotient first.
const PRODUCT_CANDIDATES: usize = 16;

/// The `product` family; see the module documentation.
pub struct IntegerProduct;

impl SketchFamily for IntegerProduct {
    fn name(&self) -> &'static str {
        "product"
    }

    fn summary(&self) -> &'static str {
        "g * stub * ?q for an integer polynomial a stub divides exactly"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        let nonlinear = || {
            target
                .elems()
                .iter()
                .all(|e| e.terms().iter().any(|t| t.mono.degree() >= 2))
        };
        if !dtype.is_int() || !nonlinear() {
            return Ok(None);
        }
        let Some(g) = integer_content(target) else {
            return Ok(None);
        };
        let Some(g_rat) = Rat::new(1, g) else {
            return Ok(None);
        };
        let reduced = target.map(|e| e.scale(&g_rat));
        let candidates = divisors(search, &reduced, dtype)?;
        let step = step_cost(target) * if g > 1 { 2.0 } else { 1.0 };
        let mut best: Option<Found> = None;
        for (_, quotient, index) in candidates {
            let stub = &search.library.stubs[index];
            let limit = best.as_ref().map_or(bound, |b| b.cost) - step - stub.cost;
            if limit <= 0.0 {
                continue;
            }
            let Some(q) = solve_value(search, &quotient, dtype, depth - 1, limit)? else {
                search.stats.backtrack();
                continue;
            };
            let product = build::mul(stub.expr.clone(), q.expr);
            let expr = if g > 1 {
                product.and_then(|p| build::mul(Expr::lit(Lit::int(g, dtype)), p))
            } else {
                product
            };
            if let Ok(expr) = expr {
                search.stats.pattern_match();
                let cost = step + stub.cost + q.cost;
                best = Some(Found { expr, cost });
                if search.first {
                    break;
                }
            }
        }
        Ok(best)
    }
}

/// The greatest common divisor of the integer coefficients of every term
/// of every element (positive), when all coefficients are integers.
fn integer_content(target: &Tensor) -> Option<i64> {
    let mut g: i64 = 0;
    for e in target.elems() {
        for t in e.terms() {
            let c = t.coeff.to_i64()?;
            g = num_integer::Integer::gcd(&g, &c);
        }
    }
    (g > 0).then_some(g)
}

/// The stubs that divide `reduced` exactly with a quotient of integer
/// coefficients and positive exponents, with that quotient: at most
/// [`PRODUCT_CANDIDATES`], simplest quotient first. Each stub tried costs
/// one unit of work.
fn divisors(
    search: &Search<'_>,
    reduced: &Tensor,
    dtype: DType,
) -> Result<Vec<(f64, Tensor, usize)>, Halt> {
    let target_vars = reduced.vars();
    let mut candidates = Vec::new();
    for (index, stub) in search.library.stubs.iter().enumerate() {
        if stub.expr.dtype() != dtype || stub.depth > 1 || stub.value.shape() != reduced.shape() {
            continue;
        }
        if !stub
            .vars
            .iter()
            .all(|v| target_vars.binary_search(v).is_ok())
        {
            continue;
        }
        search.meter.charge(work_of(reduced))?;
        let quotient: Option<Vec<Value>> = reduced
            .elems()
            .iter()
            .zip(stub.value.elems())
            .map(|(t, s)| {
                if s.as_constant().is_some() {
                    return None;
                }
                let q = t.divide_polynomial(s)?;
                q.terms()
                    .iter()
                    .all(|t| t.coeff.is_integer() && t.mono.factors().iter().all(|(_, e)| *e > 0))
                    .then_some(q)
            })
            .collect();
        if let Some(q) = quotient.and_then(|q| Tensor::new(reduced.shape().to_vec(), q).ok()) {
            candidates.push((q.complexity(), q, index));
        }
    }
    candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
    candidates.truncate(PRODUCT_CANDIDATES);
    Ok(candidates)
}
