//! Solving for sketch holes: linear equations by exact Gauss–Jordan
//! elimination over the field of normal forms, identities by coefficient
//! matching, and the common one-hole case `a·v + b = spec`.
//!
//! Every solution returned is checked by substituting it back into the
//! original equations; a solution that does not normalise every equation to
//! zero is reported as [`SolveError::Unverified`] rather than returned.

use std::collections::HashMap;

use thiserror::Error;

use super::atom::Symbol;
use super::expr::{Expr, Mono};
use super::AlgebraError;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum SolveError {
    #[error("unknown `{0}` occurs non-linearly")]
    NonLinear(String),
    #[error("the equations are inconsistent")]
    Inconsistent,
    #[error("the equations do not determine {0:?}")]
    Underdetermined(Vec<String>),
    #[error("a candidate solution did not satisfy the equations")]
    Unverified,
    #[error(transparent)]
    Algebra(#[from] AlgebraError),
}

/// One linear equation `Σ coeffs[j]·x_j = rhs`.
struct Row {
    coeffs: Vec<Expr>,
    rhs: Expr,
}

/// Splits `equation = 0` into coefficients of each unknown and the rest.
fn linear_row(equation: &Expr, unknowns: &[Symbol]) -> Result<Row, SolveError> {
    let parts = equation.coefficients(unknowns).map_err(|e| match e {
        AlgebraError::NotPolynomial { symbol } => SolveError::NonLinear(symbol),
        other => SolveError::Algebra(other),
    })?;
    let mut coeffs = vec![Expr::zero(); unknowns.len()];
    let mut rhs = Expr::zero();
    for (mono, c) in parts {
        match mono.factors() {
            [] => rhs = c.neg(),
            [(atom, 1)] => {
                let pos = unknowns
                    .iter()
                    .position(|u| u.atom() == atom)
                    .ok_or(SolveError::Inconsistent)?;
                coeffs[pos] = coeffs[pos].add(&c);
            }
            [(atom, _), ..] => {
                return Err(SolveError::NonLinear(atom.to_string()));
            }
        }
    }
    Ok(Row { coeffs, rhs })
}

/// Pivot preference: constants first, then the fewest terms.
fn pivot_cost(e: &Expr) -> usize {
    if e.as_constant().is_some() {
        0
    } else {
        1 + e.size()
    }
}

/// Solves `equations[i] = 0` for `unknowns`, which must occur linearly (not
/// inside applications or denominators). Returns the unique solution in the
/// order of `unknowns`.
pub fn solve_linear(equations: &[Expr], unknowns: &[Symbol]) -> Result<Vec<Expr>, SolveError> {
    let mut rows = equations
        .iter()
        .map(|e| linear_row(e, unknowns))
        .collect::<Result<Vec<_>, _>>()?;
    let mut pivot_rows: Vec<Option<usize>> = vec![None; unknowns.len()];
    let mut used = vec![false; rows.len()];
    for (col, pivot_row) in pivot_rows.iter_mut().enumerate() {
        let Some(p) = (0..rows.len())
            .filter(|&r| !used[r] && !rows[r].coeffs[col].is_zero())
            .min_by_key(|&r| pivot_cost(&rows[r].coeffs[col]))
        else {
            continue;
        };
        used[p] = true;
        *pivot_row = Some(p);
        let pivot = rows[p].coeffs[col].clone();
        // Normalise the pivot row to a leading 1.
        let normalised: Vec<Expr> = rows[p]
            .coeffs
            .iter()
            .map(|c| c.div(&pivot))
            .collect::<Result<_, _>>()?;
        rows[p].coeffs = normalised;
        rows[p].rhs = rows[p].rhs.div(&pivot)?;
        for r in 0..rows.len() {
            if r == p || rows[r].coeffs[col].is_zero() {
                continue;
            }
            let factor = rows[r].coeffs[col].clone();
            for j in 0..unknowns.len() {
                let update = factor.mul(&rows[p].coeffs[j]);
                rows[r].coeffs[j] = rows[r].coeffs[j].sub(&update);
            }
            rows[r].rhs = rows[r].rhs.sub(&factor.mul(&rows[p].rhs));
        }
    }
    if rows
        .iter()
        .enumerate()
        .any(|(r, row)| !used[r] && row.coeffs.iter().all(Expr::is_zero) && !row.rhs.is_zero())
    {
        return Err(SolveError::Inconsistent);
    }
    let free: Vec<String> = unknowns
        .iter()
        .zip(&pivot_rows)
        .filter(|(_, p)| p.is_none())
        .map(|(u, _)| u.to_string())
        .collect();
    if !free.is_empty() {
        return Err(SolveError::Underdetermined(free));
    }
    let solution: Vec<Expr> = pivot_rows
        .iter()
        .map(|p| p.map_or_else(Expr::zero, |r| rows[r].rhs.clone()))
        .collect();
    verify(equations, unknowns, &solution)?;
    Ok(solution)
}

fn verify(equations: &[Expr], unknowns: &[Symbol], solution: &[Expr]) -> Result<(), SolveError> {
    let map: HashMap<Symbol, Expr> = unknowns
        .iter()
        .cloned()
        .zip(solution.iter().cloned())
        .collect();
    for eq in equations {
        if !eq.substitute(&map)?.is_zero() {
            return Err(SolveError::Unverified);
        }
    }
    Ok(())
}

/// Solves `equation = 0` as an identity in the symbols `wrt`: every
/// coefficient of a monomial over `wrt` must vanish, giving a linear system in
/// `unknowns` (which must be free of `wrt`).
pub fn solve_identity(
    equation: &Expr,
    unknowns: &[Symbol],
    wrt: &[Symbol],
) -> Result<Vec<Expr>, SolveError> {
    let parts: Vec<(Mono, Expr)> = equation.coefficients(wrt)?;
    let equations: Vec<Expr> = parts.into_iter().map(|(_, c)| c).collect();
    solve_linear(&equations, unknowns)
}

/// Solves `sketch[hole := v] = spec` for `v` when `hole` occurs linearly in
/// `sketch` (`sketch = a·hole + b`, `a ≠ 0`): `v = (spec - b) / a`.
pub fn solve_hole(spec: &Expr, sketch: &Expr, hole: &Symbol) -> Result<Expr, SolveError> {
    let equation = sketch.sub(spec);
    let mut v = solve_linear(&[equation], std::slice::from_ref(hole))?;
    v.pop().ok_or(SolveError::Inconsistent)
}

/// Solves `equations[i] = 0` for `unknowns` (each occurring linearly), the
/// way element-wise sketches produce them: equations with a single unknown
/// are solved and substituted first (one pass per equation, no matrix), and
/// only what remains goes through Gauss–Jordan elimination. Returns every
/// unknown's value; all equations are checked at the end.
pub fn solve_system(
    equations: &[Expr],
    unknowns: &[Symbol],
) -> Result<HashMap<Symbol, Expr>, SolveError> {
    let mut wanted: Vec<Symbol> = unknowns.to_vec();
    wanted.sort();
    let unknowns_in = |e: &Expr| -> Vec<Symbol> {
        e.symbols()
            .iter()
            .filter(|s| wanted.binary_search(s).is_ok())
            .cloned()
            .collect()
    };
    let mut solved: HashMap<Symbol, Expr> = HashMap::new();
    let mut pending: Vec<Expr> = equations.to_vec();
    loop {
        let mut progress = false;
        let mut still: Vec<Expr> = Vec::with_capacity(pending.len());
        for eq in pending {
            let eq = eq.substitute(&solved)?;
            let present = unknowns_in(&eq);
            match present.as_slice() {
                [] if eq.is_zero() => {}
                [] => return Err(SolveError::Inconsistent),
                [single] => {
                    let value =
                        solve_linear(std::slice::from_ref(&eq), std::slice::from_ref(single))?;
                    if let Some(v) = value.into_iter().next() {
                        solved.insert(single.clone(), v);
                        progress = true;
                    }
                }
                _ => still.push(eq),
            }
        }
        pending = still;
        if !progress || pending.is_empty() {
            break;
        }
    }
    if !pending.is_empty() {
        let rest: Vec<Symbol> = unknowns
            .iter()
            .filter(|u| !solved.contains_key(*u))
            .cloned()
            .collect();
        let pending: Vec<Expr> = pending
            .iter()
            .map(|e| e.substitute(&solved))
            .collect::<Result<_, _>>()?;
        let values = solve_linear(&pending, &rest)?;
        solved.extend(rest.into_iter().zip(values));
    }
    let free: Vec<String> = unknowns
        .iter()
        .filter(|u| !solved.contains_key(*u))
        .map(|u| u.to_string())
        .collect();
    if !free.is_empty() {
        return Err(SolveError::Underdetermined(free));
    }
    // Earlier solutions may mention later unknowns: resolve fully.
    for _ in 0..unknowns.len() {
        let snapshot = solved.clone();
        let mut changed = false;
        for value in solved.values_mut() {
            let next = value.substitute(&snapshot)?;
            changed |= next != *value;
            *value = next;
        }
        if !changed {
            break;
        }
    }
    let ordered: Vec<Expr> = unknowns.iter().map(|u| solved[u].clone()).collect();
    verify(equations, unknowns, &ordered)?;
    Ok(solved)
}

/// Solves a tensor sketch against a tensor spec element by element:
/// `sketch[i] = spec[i]` for every `i`, for the hole symbols `holes`.
pub fn solve_tensor_holes(
    spec: &super::Tensor,
    sketch: &super::Tensor,
    holes: &[Symbol],
) -> Result<HashMap<Symbol, Expr>, SolveError> {
    if spec.shape() != sketch.shape() {
        return Err(SolveError::Inconsistent);
    }
    let equations: Vec<Expr> = sketch
        .elems()
        .iter()
        .zip(spec.elems())
        .map(|(k, s)| k.sub(s))
        .collect();
    solve_system(&equations, holes)
}
