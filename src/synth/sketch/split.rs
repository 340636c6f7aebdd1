//! An application split `?p + c·?x`: every element is a polynomial plus
//! one term `c·f(…)` (the same opaque function `f` and coefficient `c`
//! throughout, as in `255 - tdiv(255 - b, a)`); the application and the
//! rest are separate subproblems. The arithmetic sketches cannot take it
//! apart, as no stub alone lowers the number of inputs the hole reads.

use tenslift_targets::{build, DType};

use super::constant::solve_value;
use super::{literal, step_cost};
use crate::algebra::{Func, Rat, Tensor, Value};
use crate::synth::search::{Found, Search, SketchFamily, Solved};

/// The `split` family; see the module documentation.
pub struct ApplicationSplit;

impl SketchFamily for ApplicationSplit {
    fn name(&self) -> &'static str {
        "split"
    }

    fn summary(&self) -> &'static str {
        "?p + c*?x when every element is a polynomial plus one application of one function"
    }

    fn solve(
        &self,
        search: &Search<'_>,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Solved {
        application_split(search, target, dtype, depth, bound)
    }
}

/// The family's sketch; see the module documentation.
fn application_split(
    search: &Search<'_>,
    target: &Tensor,
    dtype: DType,
    depth: u32,
    bound: f64,
) -> Solved {
    let mut shared: Option<(Func, Rat)> = None;
    let mut apps = Vec::with_capacity(target.len());
    let mut rests = Vec::with_capacity(target.len());
    for e in target.elems() {
        if e.len() < 2 {
            return Ok(None);
        }
        let mut found = None;
        for t in e.terms() {
            let [(atom, 1)] = t.mono.factors() else {
                continue;
            };
            let Some((f, _)) = atom.as_app() else {
                continue;
            };
            if found.is_some() {
                return Ok(None);
            }
            found = Some((f, t.coeff.clone(), Value::atom(atom.clone())));
        }
        let Some((f, c, app)) = found else {
            return Ok(None);
        };
        match &shared {
            None => shared = Some((f, c.clone())),
            Some((g, d)) if *g == f && *d == c => {}
            Some(_) => return Ok(None),
        }
        rests.push(e.sub(&app.scale(&c)));
        apps.push(app);
    }
    let Some((_, coeff)) = shared else {
        return Ok(None);
    };
    let (Ok(apps), Ok(rests)) = (
        Tensor::new(target.shape().to_vec(), apps),
        Tensor::new(target.shape().to_vec(), rests),
    ) else {
        return Ok(None);
    };
    let step = step_cost(target);
    if step >= bound {
        return Ok(None);
    }
    // Like a where's branches, both parts are strictly smaller problems
    // (fewer terms), not a nesting: they keep the depth.
    let Some(rest) = solve_value(search, &rests, dtype, depth, bound - step)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let Some(app) = search.solve(&apps, dtype, depth, bound - step - rest.cost)? else {
        search.stats.backtrack();
        return Ok(None);
    };
    let expr = if coeff.is_one() {
        build::add(rest.expr, app.expr)
    } else if coeff == Rat::from(-1) {
        build::sub(rest.expr, app.expr)
    } else {
        let Some(c) = literal(&coeff, dtype) else {
            return Ok(None);
        };
        build::mul(c, app.expr).and_then(|scaled| build::add(rest.expr, scaled))
    };
    search.stats.pattern_match();
    Ok(expr.ok().map(|expr| Found {
        expr,
        cost: step + rest.cost + app.cost,
    }))
}
