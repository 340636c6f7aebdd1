//! `--assume-in-domain` in the bounded check: what the real functions are
//! where the C's (the input program's) `log` and `sqrt` arguments are
//! positive, as the user assumed.
//!
//! - Every `sqrt(u)`, on either side, gets the fact `u >= 0 → sqrt(u) >= 0
//!   ∧ sqrt(u)² = u` (true of the real square root; not an assumption).
//! - Every `log(u)` gets `u > 0 → exp(log u) = u` (likewise true).
//! - In the C only: `u > 0` is assumed for each `log(u)` and `sqrt(u)` it
//!   calls (on the path that calls it), and `exp(Σ cᵢ·log uᵢ + r)` is
//!   taken as `Π uᵢ^cᵢ · exp(r)` for small integer `cᵢ` — an identity
//!   wherever those `uᵢ` are positive, which the C's own assumption gives.
//!   The program's calls are never assumed in the domain: a program that
//!   takes `log` of something the C does not is not excused.

use z3::ast::{Ast, Int, Real};
use z3::DeclKind;

use super::{real_zero, SymDomain, SymVal};
use crate::domain::value::real_num;
use crate::domain::{Domain, Opaque};

/// The largest |cᵢ| of a logarithm taken out of an exponential.
const MAX_LOG_COEFFICIENT: i64 = 16;

impl SymDomain {
    /// `exp(arg)` with the C's logarithms taken out, `None` when `arg`
    /// has none (or this is not the C).
    pub(super) fn exp_of_logs(&mut self, arg: &Real) -> Option<SymVal> {
        if !(self.domain && self.in_kernel) {
            return None;
        }
        let (mut logs, mut rest) = (Vec::new(), Vec::new());
        split_logs(arg, 1, &mut logs, &mut rest, 0)?;
        if logs.is_empty() {
            return None;
        }
        let mut product = real_num(1);
        for (u, c) in logs {
            for _ in 0..c.abs() {
                product = if c > 0 {
                    Real::mul(&[&product, &u])
                } else {
                    product.div(&u)
                };
            }
        }
        if !rest.is_empty() {
            let rest = Real::add(&rest);
            let exp = self
                .function(Opaque::Exp)
                .apply(&[&rest as &dyn Ast])
                .as_real()?;
            product = Real::mul(&[&product, &exp]);
        }
        Some(SymDomain::real_val(product, true))
    }

    /// Records what is known of `result = f(args)`: the function's facts,
    /// and in the C the user's assumption on its argument.
    pub(super) fn domain_facts(&mut self, f: Opaque, args: &[Real], result: &Real) {
        let ([u], true) = (args, self.domain) else {
            return;
        };
        let zero = real_zero();
        match f {
            Opaque::Sqrt => {
                let root = result.ge(&zero) & Real::mul(&[result, result]).eq(u);
                self.input_facts.push(u.ge(&zero).implies(&root));
            }
            Opaque::Log => {
                let Some(back) = self
                    .function(Opaque::Exp)
                    .apply(&[result as &dyn Ast])
                    .as_real()
                else {
                    return;
                };
                self.input_facts.push(u.gt(&zero).implies(back.eq(u)));
            }
            _ => return,
        }
        if self.in_kernel {
            // A C precondition like any other: conditioned on its path.
            let positive = SymDomain::from_bool(u.gt(&zero), true);
            let _ = Domain::assume(self, &positive, "in the assumed domain");
        }
    }
}

/// Splits `c·term` into logarithms `(u, c)` and other summands, through
/// `+`, `-`, negation and products by an integer numeral. `None` past a
/// coefficient or depth that no program needs.
fn split_logs(
    term: &Real,
    c: i64,
    logs: &mut Vec<(Real, i64)>,
    rest: &mut Vec<Real>,
    depth: u32,
) -> Option<()> {
    if depth > 32 || c.abs() > MAX_LOG_COEFFICIENT {
        return None;
    }
    let kids: Vec<Real> = term.children().iter().filter_map(|k| k.as_real()).collect();
    let all_real = term.is_app() && kids.len() == term.num_children();
    match term.decl().kind() {
        DeclKind::Add if all_real => {
            for k in &kids {
                split_logs(k, c, logs, rest, depth + 1)?;
            }
        }
        DeclKind::Sub if all_real && !kids.is_empty() => {
            split_logs(&kids[0], c, logs, rest, depth + 1)?;
            for k in &kids[1..] {
                split_logs(k, -c, logs, rest, depth + 1)?;
            }
        }
        DeclKind::Uminus if all_real && kids.len() == 1 => {
            split_logs(&kids[0], -c, logs, rest, depth + 1)?;
        }
        DeclKind::Mul if all_real && kids.len() == 2 => match integral(&kids[0]) {
            Some(k) => split_logs(&kids[1], c * k, logs, rest, depth + 1)?,
            None => match integral(&kids[1]) {
                Some(k) => split_logs(&kids[0], c * k, logs, rest, depth + 1)?,
                None => rest.push(scaled(term, c)),
            },
        },
        _ if all_real && kids.len() == 1 && term.decl().name() == Opaque::Log.name() => {
            logs.push((kids[0].clone(), c));
        }
        _ => rest.push(scaled(term, c)),
    }
    Some(())
}

fn integral(r: &Real) -> Option<i64> {
    match r.as_rational() {
        Some((num, 1)) => Some(num),
        _ => None,
    }
}

fn scaled(term: &Real, c: i64) -> Real {
    if c == 1 {
        term.clone()
    } else {
        Real::mul(&[&Real::from_int(&Int::from_i64(c)), term])
    }
}
