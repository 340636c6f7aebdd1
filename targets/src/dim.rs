//! Symbolic dimensions: polynomials over size parameters with integer
//! coefficients, optionally floor-divided by a positive constant
//! (`n`, `n - 1`, `2*n + 1`, `m*lda`, `(n + 1) / 2`).
//!
//! Dims are kept in a normal form so that structural equality is the shape
//! checker's notion of "same size".

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A product of size parameters (sorted; empty for the constant term).
type Monomial = Vec<Arc<str>>;

/// A symbolic size: `floor(sum(coeff * monomial) / divisor)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dim {
    terms: BTreeMap<Monomial, i64>,
    divisor: i64,
}

/// Why a dim could not be built or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DimError {
    #[error("unknown size parameter `{0}`")]
    Unbound(String),
    #[error("dimension arithmetic on a divided dimension `{0}` is not supported")]
    DividedOperand(String),
    #[error("division of a dimension by {0}: the divisor must be a positive constant")]
    BadDivisor(i64),
    #[error("dimension arithmetic overflows")]
    Overflow,
}

impl Dim {
    pub fn constant(c: i64) -> Dim {
        let mut terms = BTreeMap::new();
        if c != 0 {
            terms.insert(Vec::new(), c);
        }
        Dim { terms, divisor: 1 }
    }

    pub fn sym(name: &str) -> Dim {
        let mut terms = BTreeMap::new();
        terms.insert(vec![Arc::from(name)], 1);
        Dim { terms, divisor: 1 }
    }

    /// The value when the dim does not depend on any size parameter.
    pub fn as_const(&self) -> Option<i64> {
        if self.terms.keys().all(|m| m.is_empty()) {
            let c = self.terms.get(&Vec::new()).copied().unwrap_or(0);
            Some(c.div_euclid(self.divisor))
        } else {
            None
        }
    }

    /// Size parameters the dim mentions.
    pub fn symbols(&self) -> impl Iterator<Item = &str> {
        self.terms.keys().flat_map(|m| m.iter().map(|s| &**s))
    }

    /// The terms `(monomial, coefficient)` of the numerator; a monomial is
    /// a sorted product of symbols, empty for the constant term.
    pub fn terms(&self) -> impl Iterator<Item = (&[Arc<str>], i64)> {
        self.terms.iter().map(|(m, c)| (m.as_slice(), *c))
    }

    /// The positive constant the numerator is floor-divided by.
    pub fn divisor(&self) -> i64 {
        self.divisor
    }

    fn undivided(&self) -> Result<&BTreeMap<Monomial, i64>, DimError> {
        if self.divisor == 1 {
            Ok(&self.terms)
        } else {
            Err(DimError::DividedOperand(self.to_string()))
        }
    }

    pub fn add(&self, other: &Dim) -> Result<Dim, DimError> {
        self.combine(other, 1)
    }

    pub fn sub(&self, other: &Dim) -> Result<Dim, DimError> {
        self.combine(other, -1)
    }

    fn combine(&self, other: &Dim, sign: i64) -> Result<Dim, DimError> {
        let mut terms = self.undivided()?.clone();
        for (m, c) in other.undivided()? {
            let entry = terms.entry(m.clone()).or_insert(0);
            *entry = c
                .checked_mul(sign)
                .and_then(|v| entry.checked_add(v))
                .ok_or(DimError::Overflow)?;
        }
        terms.retain(|_, c| *c != 0);
        Ok(Dim { terms, divisor: 1 })
    }

    pub fn mul(&self, other: &Dim) -> Result<Dim, DimError> {
        let mut terms: BTreeMap<Monomial, i64> = BTreeMap::new();
        for (ma, ca) in self.undivided()? {
            for (mb, cb) in other.undivided()? {
                let mut m: Monomial = ma.iter().chain(mb.iter()).cloned().collect();
                m.sort();
                let c = ca.checked_mul(*cb).ok_or(DimError::Overflow)?;
                let entry = terms.entry(m).or_insert(0);
                *entry = entry.checked_add(c).ok_or(DimError::Overflow)?;
            }
        }
        terms.retain(|_, c| *c != 0);
        Ok(Dim { terms, divisor: 1 })
    }

    /// `floor(self / d)` for a positive constant `d`.
    pub fn floor_div(&self, d: i64) -> Result<Dim, DimError> {
        if d <= 0 {
            return Err(DimError::BadDivisor(d));
        }
        let divisor = self.divisor.checked_mul(d).ok_or(DimError::Overflow)?;
        let g = self.terms.values().fold(divisor, |g, c| gcd(g, c.abs()));
        let terms = self.terms.iter().map(|(m, c)| (m.clone(), c / g)).collect();
        Ok(Dim {
            terms,
            divisor: divisor / g,
        })
    }

    /// `ceil(self / d)` for a positive constant `d`.
    pub fn ceil_div(&self, d: i64) -> Result<Dim, DimError> {
        self.add(&Dim::constant(d - 1))?.floor_div(d)
    }

    /// Evaluates the dim for concrete size parameters.
    pub fn eval(&self, sizes: &dyn Fn(&str) -> Option<i64>) -> Result<i64, DimError> {
        let mut total: i64 = 0;
        for (m, c) in &self.terms {
            let mut v = *c;
            for s in m {
                let x = sizes(s).ok_or_else(|| DimError::Unbound(s.to_string()))?;
                v = v.checked_mul(x).ok_or(DimError::Overflow)?;
            }
            total = total.checked_add(v).ok_or(DimError::Overflow)?;
        }
        Ok(total.div_euclid(self.divisor))
    }

    /// Renders the dim with a caller-chosen spelling of each size parameter
    /// (emitters rename parameters that clash with target keywords).
    pub fn render(&self, name: &dyn Fn(&str) -> String, floor_div_op: &str) -> String {
        let mut out = String::new();
        // Constant term last: `2*n - 1` reads better than `-1 + 2*n`.
        let ordered = self
            .terms
            .iter()
            .filter(|(m, _)| !m.is_empty())
            .chain(self.terms.iter().filter(|(m, _)| m.is_empty()));
        for (i, (m, c)) in ordered.enumerate() {
            let (sign, mag) = if *c < 0 { ("-", -c) } else { ("+", *c) };
            if i == 0 {
                if sign == "-" {
                    out.push('-');
                }
            } else {
                out.push_str(&format!(" {sign} "));
            }
            let factors: Vec<String> = m.iter().map(|s| name(s)).collect();
            match (mag, factors.is_empty()) {
                (_, true) => out.push_str(&mag.to_string()),
                (1, false) => out.push_str(&factors.join("*")),
                _ => out.push_str(&format!("{mag}*{}", factors.join("*"))),
            }
        }
        if out.is_empty() {
            out.push('0');
        }
        if self.divisor != 1 {
            format!("({out}) {floor_div_op} {}", self.divisor)
        } else {
            out
        }
    }

    /// Whether the dim is a single term (no parentheses needed when it is
    /// an operand).
    pub fn is_atomic(&self) -> bool {
        self.divisor == 1
            && self.terms.len() <= 1
            && self
                .terms
                .iter()
                .all(|(m, c)| *c > 0 && (m.is_empty() || *c == 1))
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(&|s| s.to_string(), "/"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n() -> Dim {
        Dim::sym("n")
    }

    #[test]
    fn normal_form_makes_equal_sizes_equal() {
        let a = n()
            .sub(&Dim::constant(1))
            .unwrap()
            .add(&Dim::constant(1))
            .unwrap();
        assert_eq!(a, n());
        let two_n = n().add(&n()).unwrap();
        assert_eq!(two_n.floor_div(2).unwrap(), n());
    }

    #[test]
    fn evaluates_floor_and_ceil_division() {
        let len = n().ceil_div(2).unwrap();
        let at = |v: i64| len.eval(&|_| Some(v)).unwrap();
        assert_eq!((at(5), at(6), at(0)), (3, 3, 0));
    }

    #[test]
    fn renders_readably() {
        let d = Dim::constant(2)
            .mul(&n())
            .unwrap()
            .sub(&Dim::constant(1))
            .unwrap();
        assert_eq!(d.to_string(), "2*n - 1");
        assert_eq!(n().ceil_div(2).unwrap().to_string(), "(n + 1) / 2");
        assert_eq!(n().mul(&Dim::sym("m")).unwrap().to_string(), "m*n");
    }

    #[test]
    fn unbound_symbol_is_an_error() {
        assert_eq!(n().eval(&|_| None), Err(DimError::Unbound("n".into())));
    }
}
