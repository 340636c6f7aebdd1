//! Numeric evaluation at concrete inputs, for testing specs against compiled C.
//!
//! Real operations evaluate in `f64`; the C integer operations keep C
//! semantics (`tdiv` truncates toward zero, `rem` takes the dividend's sign,
//! `trunc` drops the fraction, `wrap` reduces modulo 2^bits).

use std::collections::HashMap;

use thiserror::Error;

use super::atom::{Atom, AtomKind, Func, Symbol};
use super::expr::Expr;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum EvalError {
    #[error("no value given for symbol `{0}`")]
    Unbound(String),
    #[error("integer division or remainder by zero")]
    IntegerDivisionByZero,
}

/// Evaluates expressions with one binding function, remembering atom values.
pub struct Evaluator<'a> {
    env: &'a dyn Fn(&Symbol) -> Option<f64>,
    memo: HashMap<Atom, f64>,
}

impl<'a> Evaluator<'a> {
    pub fn new(env: &'a dyn Fn(&Symbol) -> Option<f64>) -> Self {
        Evaluator {
            env,
            memo: HashMap::new(),
        }
    }

    pub fn eval(&mut self, e: &Expr) -> Result<f64, EvalError> {
        let mut total = 0.0;
        for term in e.terms() {
            let mut value = term.coeff.to_f64();
            for (atom, exp) in term.mono.factors() {
                value *= self.atom(atom)?.powi(*exp);
            }
            total += value;
        }
        Ok(total)
    }

    fn atom(&mut self, atom: &Atom) -> Result<f64, EvalError> {
        if let Some(v) = self.memo.get(atom) {
            return Ok(*v);
        }
        let value = match atom.kind() {
            AtomKind::Sym { .. } => {
                let symbol = atom
                    .as_symbol()
                    .ok_or_else(|| EvalError::Unbound(atom.to_string()))?;
                (self.env)(&symbol).ok_or_else(|| EvalError::Unbound(symbol.to_string()))?
            }
            AtomKind::Recip(q) => 1.0 / self.eval(q)?,
            AtomKind::App { func, args } => {
                let values = args
                    .iter()
                    .map(|a| self.eval(a))
                    .collect::<Result<Vec<f64>, _>>()?;
                apply_numeric(*func, &values)?
            }
        };
        self.memo.insert(atom.clone(), value);
        Ok(value)
    }
}

fn apply_numeric(func: Func, v: &[f64]) -> Result<f64, EvalError> {
    let arg = |i: usize| v.get(i).copied().unwrap_or(f64::NAN);
    Ok(match func {
        Func::Sqrt => arg(0).sqrt(),
        Func::Exp => arg(0).exp(),
        Func::Log => arg(0).ln(),
        Func::Tanh => arg(0).tanh(),
        Func::Round => arg(0).round(),
        Func::Floor => arg(0).floor(),
        Func::Ceil => arg(0).ceil(),
        Func::Sin => arg(0).sin(),
        Func::Cos => arg(0).cos(),
        Func::Cosh => arg(0).cosh(),
        Func::Sinh => arg(0).sinh(),
        Func::Abs => arg(0).abs(),
        Func::Pow => arg(0).powf(arg(1)),
        Func::Max => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Func::Min => v.iter().copied().fold(f64::INFINITY, f64::min),
        Func::Select => {
            if arg(0) != 0.0 {
                arg(1)
            } else {
                arg(2)
            }
        }
        Func::Lt0 => (arg(0) < 0.0) as i32 as f64,
        Func::Eq0 => (arg(0) == 0.0) as i32 as f64,
        Func::TruncDiv => {
            if arg(1) == 0.0 {
                return Err(EvalError::IntegerDivisionByZero);
            }
            (arg(0) / arg(1)).trunc()
        }
        Func::Rem => {
            if arg(1) == 0.0 {
                return Err(EvalError::IntegerDivisionByZero);
            }
            arg(0) % arg(1)
        }
        Func::Trunc => arg(0).trunc(),
        Func::Wrap { bits, signed } => {
            let modulus = 2f64.powi(bits as i32);
            let mut r = arg(0).trunc().rem_euclid(modulus);
            if signed && r >= modulus / 2.0 {
                r -= modulus;
            }
            r
        }
    })
}

impl Expr {
    /// The value at the inputs `env` gives; an unbound symbol is an error.
    pub fn eval(&self, env: &dyn Fn(&Symbol) -> Option<f64>) -> Result<f64, EvalError> {
        Evaluator::new(env).eval(self)
    }
}
