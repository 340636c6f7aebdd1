//! Arithmetic on normal forms: sums, products, powers, exact division,
//! division with reciprocal atoms, and cancellation of reciprocals.
//!
//! Sums merge two sorted term lists; products multiply every pair of terms
//! and re-sort. Division by a single term multiplies by its Laurent inverse.
//! Division by a polynomial `q` with several terms first tries exact
//! multivariate division (graded-lex leading terms, after removing each
//! side's monomial content); when `q` does not divide, the quotient keeps the
//! atom `1/q'` where `q'` is `q` with its monomial content and leading
//! coefficient removed, so every associate of `q` yields the same atom.

use std::cmp::Ordering;
use std::sync::Arc;

use super::atom::{Atom, AtomKind};
use super::expr::{Expr, Mono, Term};
use super::rational::Rat;
use super::AlgebraError;

/// Merges adjacent terms with equal monomials of a list sorted by monomial
/// and drops zero coefficients.
pub(crate) fn combine_sorted(terms: Vec<Term>) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::with_capacity(terms.len());
    for term in terms {
        match out.last_mut() {
            Some(last) if last.mono == term.mono => {
                last.coeff = &last.coeff + &term.coeff;
                if last.coeff.is_zero() {
                    out.pop();
                }
            }
            _ => {
                if !term.coeff.is_zero() {
                    out.push(term);
                }
            }
        }
    }
    out
}

/// Product of two monomials (exponents add; zero exponents vanish).
pub(crate) fn mono_mul(a: &Mono, b: &Mono) -> Mono {
    if a.is_one() {
        return b.clone();
    }
    if b.is_one() {
        return a.clone();
    }
    let (x, y) = (a.factors(), b.factors());
    let mut out = Vec::with_capacity(x.len() + y.len());
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        match x[i].0.cmp(&y[j].0) {
            Ordering::Less => {
                out.push(x[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(y[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                let e = x[i].1 + y[j].1;
                if e != 0 {
                    out.push((x[i].0.clone(), e));
                }
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&x[i..]);
    out.extend_from_slice(&y[j..]);
    Mono(out.into())
}

/// The monomial with every exponent negated.
fn mono_inverse(m: &Mono) -> Mono {
    Mono(m.factors().iter().map(|(a, e)| (a.clone(), -e)).collect())
}

fn add_terms(a: &[Term], b: &[Term]) -> Vec<Term> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].mono.cmp(&b[j].mono) {
            Ordering::Less => {
                out.push(a[i].clone());
                i += 1;
            }
            Ordering::Greater => {
                out.push(b[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                let c = &a[i].coeff + &b[j].coeff;
                if !c.is_zero() {
                    out.push(Term {
                        coeff: c,
                        mono: a[i].mono.clone(),
                    });
                }
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

fn scale_terms(a: &[Term], c: &Rat) -> Vec<Term> {
    if c.is_zero() {
        return Vec::new();
    }
    a.iter()
        .map(|t| Term {
            coeff: &t.coeff * c,
            mono: t.mono.clone(),
        })
        .collect()
}

/// `a * (coeff·mono)`, re-sorted (multiplying by a monomial need not keep
/// the term order).
fn mul_by_term(a: &[Term], coeff: &Rat, mono: &Mono) -> Vec<Term> {
    let mut out: Vec<Term> = a
        .iter()
        .map(|t| Term {
            coeff: &t.coeff * coeff,
            mono: mono_mul(&t.mono, mono),
        })
        .collect();
    if !out.windows(2).all(|w| w[0].mono < w[1].mono) {
        out.sort_by(|x, y| x.mono.cmp(&y.mono));
        out = combine_sorted(out);
    }
    out
}

fn mul_terms(a: &[Term], b: &[Term]) -> Vec<Term> {
    match (a, b) {
        ([], _) | (_, []) => return Vec::new(),
        ([x], [y]) => {
            // Monomial times monomial: no sorting or merging needed.
            return vec![Term {
                coeff: &x.coeff * &y.coeff,
                mono: mono_mul(&x.mono, &y.mono),
            }];
        }
        ([x], many) | (many, [x]) => return mul_by_term(many, &x.coeff, &x.mono),
        _ => {}
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            out.push(Term {
                coeff: &x.coeff * &y.coeff,
                mono: mono_mul(&x.mono, &y.mono),
            });
        }
    }
    out.sort_by(|x, y| x.mono.cmp(&y.mono));
    combine_sorted(out)
}

/// Builds an expression from terms whose monomials may hold reciprocal atoms
/// with negative exponents: `(1/q)^-k` is rewritten as `q^k`.
fn from_laurent_terms(terms: Vec<Term>) -> Expr {
    let mut plain = Vec::with_capacity(terms.len());
    let mut rewritten = Expr::zero();
    for term in terms {
        if term
            .mono
            .factors()
            .iter()
            .all(|(a, e)| *e > 0 || !a.is_recip())
        {
            plain.push(term);
            continue;
        }
        let mut factors = Vec::new();
        let mut product = Expr::constant(term.coeff.clone());
        for (atom, exp) in term.mono.factors() {
            match atom.kind() {
                AtomKind::Recip(q) if *exp < 0 => {
                    product = product.mul(&q.pow_nonneg(exp.unsigned_abs()));
                }
                _ => factors.push((atom.clone(), *exp)),
            }
        }
        let rest = Expr::from_canonical(vec![Term {
            coeff: Rat::ONE,
            mono: Mono(factors.into()),
        }]);
        rewritten = rewritten.add(&product.mul(&rest));
    }
    Expr::from_terms(plain).add(&rewritten)
}

/// Graded lexicographic order on monomials with non-negative exponents
/// (atoms earlier in atom order are more significant).
pub(crate) fn grlex_cmp(a: &Mono, b: &Mono) -> Ordering {
    a.degree().cmp(&b.degree()).then_with(|| {
        let (x, y) = (a.factors(), b.factors());
        let (mut i, mut j) = (0, 0);
        loop {
            match (x.get(i), y.get(j)) {
                (None, None) => return Ordering::Equal,
                (Some(_), None) => return Ordering::Greater,
                (None, Some(_)) => return Ordering::Less,
                (Some((p, ep)), Some((q, eq))) => match p.cmp(q) {
                    Ordering::Equal if ep == eq => {
                        i += 1;
                        j += 1;
                    }
                    Ordering::Equal => return ep.cmp(eq),
                    Ordering::Less => return Ordering::Greater,
                    Ordering::Greater => return Ordering::Less,
                },
            }
        }
    })
}

fn leading_term(terms: &[Term]) -> Option<&Term> {
    terms.iter().max_by(|x, y| grlex_cmp(&x.mono, &y.mono))
}

/// `a / b` for monomials with non-negative exponents, when `b` divides `a`.
fn mono_div_nonneg(a: &Mono, b: &Mono) -> Option<Mono> {
    let quotient = mono_mul(a, &mono_inverse(b));
    quotient
        .factors()
        .iter()
        .all(|(_, e)| *e > 0)
        .then_some(quotient)
}

/// For each atom, the least exponent over all terms (0 where absent): the
/// monomial content. Dividing by it leaves non-negative exponents and no atom
/// common to every term.
fn monomial_content(terms: &[Term]) -> Mono {
    let mut seen: std::collections::BTreeMap<Atom, (i32, usize)> = Default::default();
    for term in terms {
        for (atom, e) in term.mono.factors() {
            let entry = seen.entry(atom.clone()).or_insert((*e, 0));
            entry.0 = entry.0.min(*e);
            entry.1 += 1;
        }
    }
    Mono::from_factors(
        seen.into_iter()
            .map(|(atom, (min, count))| (atom, if count < terms.len() { min.min(0) } else { min }))
            .collect(),
    )
}

const DIVISION_STEP_LIMIT: usize = 200_000;

/// Exact multivariate division of polynomials (non-negative exponents);
/// `None` when `q` does not divide `p`, or the step limit is hit.
fn polynomial_divide(p: &[Term], q: &[Term]) -> Option<Vec<Term>> {
    let lead_q = leading_term(q)?.clone();
    let mut remainder = p.to_vec();
    let mut quotient = Vec::new();
    for _ in 0..DIVISION_STEP_LIMIT {
        let Some(lead_r) = leading_term(&remainder) else {
            quotient.sort_by(|x: &Term, y: &Term| x.mono.cmp(&y.mono));
            return Some(combine_sorted(quotient));
        };
        let mono = mono_div_nonneg(&lead_r.mono, &lead_q.mono)?;
        let coeff = lead_r.coeff.checked_div(&lead_q.coeff)?;
        let subtrahend = mul_by_term(q, &-&coeff, &mono);
        remainder = add_terms(&remainder, &subtrahend);
        quotient.push(Term { coeff, mono });
    }
    None
}

/// `1 / (coeff·mono)`; `None` for a zero coefficient.
fn inverse_of_term(term: &Term) -> Option<Expr> {
    let coeff = term.coeff.recip()?;
    Some(from_laurent_terms(vec![Term {
        coeff,
        mono: mono_inverse(&term.mono),
    }]))
}

fn shift(terms: &[Term], content: &Mono) -> Vec<Term> {
    if content.is_one() {
        return terms.to_vec();
    }
    mul_by_term(terms, &Rat::ONE, &mono_inverse(content))
}

/// `p / q` when it is a Laurent polynomial over the atoms (division by a
/// single term always is).
pub(crate) fn divide_exact(p: &Expr, q: &Expr) -> Option<Expr> {
    match q.terms() {
        [] => None,
        [single] => Some(p.mul(&inverse_of_term(single)?)),
        _ if p.is_zero() => Some(Expr::zero()),
        _ => {
            let (content_p, content_q) = (monomial_content(p.terms()), monomial_content(q.terms()));
            let (p_shifted, q_shifted) =
                (shift(p.terms(), &content_p), shift(q.terms(), &content_q));
            let quotient = polynomial_divide(&p_shifted, &q_shifted)?;
            let unit = mono_mul(&content_p, &mono_inverse(&content_q));
            Some(from_laurent_terms(
                quotient
                    .into_iter()
                    .map(|t| Term {
                        coeff: t.coeff,
                        mono: mono_mul(&t.mono, &unit),
                    })
                    .collect(),
            ))
        }
    }
}

/// Splits `terms` by the exponent of `atom`: `(k, terms with atom^k removed)`.
fn split_by_exponent(terms: &[Term], atom: &Atom) -> Vec<(i32, Vec<Term>)> {
    let mut parts: Vec<(i32, Vec<Term>)> = Vec::new();
    for term in terms {
        let k = term.mono.exponent(atom);
        let entry = Term {
            coeff: term.coeff.clone(),
            mono: term.mono.without(atom),
        };
        match parts.iter_mut().find(|(e, _)| *e == k) {
            Some((_, list)) => list.push(entry),
            None => parts.push((k, vec![entry])),
        }
    }
    parts.sort_by_key(|(k, _)| std::cmp::Reverse(*k));
    parts
}

/// Brings every reciprocal atom `r = 1/q` into a single power: a sum
/// `Σ c_k·r^k` (each `c_k` free of `r`) becomes `N·r^K` with
/// `N = Σ c_k·q^(K-k)`, then `q` is divided out of `N` while it divides
/// exactly. Since `q ∤ N` afterwards (unless `K = 0`), the result is the
/// unique such form of the value: sums over a common denominator compare
/// equal however they were built.
pub(crate) fn cancel_reciprocals(mut e: Expr) -> Expr {
    'restart: loop {
        let mut recips: Vec<Atom> = e.top_atoms().filter(|a| a.is_recip()).cloned().collect();
        recips.sort();
        recips.dedup();
        for atom in recips {
            let AtomKind::Recip(q) = atom.kind() else {
                continue;
            };
            let parts = split_by_exponent(e.terms(), &atom);
            let Some(&(top, _)) = parts.first() else {
                continue;
            };
            let single_power = parts.len() == 1;
            let mut numerator = Expr::zero();
            for (k, terms) in parts {
                let c = Expr::from_terms(terms);
                numerator = numerator.add(&c.mul(&q.pow_nonneg((top - k) as u32)));
            }
            let mut power = top;
            while power > 0 {
                match divide_exact(&numerator, q) {
                    Some(quotient) => {
                        numerator = quotient;
                        power -= 1;
                    }
                    None => break,
                }
            }
            if single_power && power == top {
                continue;
            }
            let atom_power = Expr::from_canonical_raw(vec![Term {
                coeff: Rat::ONE,
                mono: Mono(Arc::new([(atom.clone(), power)])),
            }]);
            e = if power == 0 {
                numerator
            } else {
                numerator.mul_raw(&atom_power)
            };
            continue 'restart;
        }
        return e;
    }
}

impl Expr {
    pub fn add(&self, other: &Expr) -> Expr {
        if self.is_zero() {
            return other.clone();
        }
        if other.is_zero() {
            return self.clone();
        }
        Expr::from_canonical(add_terms(self.terms(), other.terms()))
    }

    fn mul_raw(&self, other: &Expr) -> Expr {
        Expr::from_canonical_raw(mul_terms(self.terms(), other.terms()))
    }

    pub fn sub(&self, other: &Expr) -> Expr {
        self.add(&other.neg())
    }

    pub fn neg(&self) -> Expr {
        self.scale(&Rat::MINUS_ONE)
    }

    /// `c · self`.
    pub fn scale(&self, c: &Rat) -> Expr {
        if c.is_one() {
            return self.clone();
        }
        Expr::from_canonical_raw(scale_terms(self.terms(), c))
    }

    pub fn mul(&self, other: &Expr) -> Expr {
        if let Some(c) = other.as_constant() {
            return self.scale(&c);
        }
        if let Some(c) = self.as_constant() {
            return other.scale(&c);
        }
        Expr::from_canonical(mul_terms(self.terms(), other.terms()))
    }

    /// Sum of many expressions (one merge pass per operand).
    pub fn sum<'a>(items: impl IntoIterator<Item = &'a Expr>) -> Expr {
        let mut terms = Vec::new();
        for e in items {
            terms.extend_from_slice(e.terms());
        }
        Expr::from_terms(terms)
    }

    pub(crate) fn pow_nonneg(&self, exp: u32) -> Expr {
        let mut result = Expr::one();
        let mut square = self.clone();
        let mut e = exp;
        while e > 0 {
            if e & 1 == 1 {
                result = result.mul(&square);
            }
            e >>= 1;
            if e > 0 {
                square = square.mul(&square);
            }
        }
        result
    }

    /// `self^exp`; a negative power divides.
    pub fn pow(&self, exp: i32) -> Result<Expr, AlgebraError> {
        if exp >= 0 {
            return Ok(self.pow_nonneg(exp as u32));
        }
        // (1/q)^n rather than 1/(q^n): the reciprocal atom is that of `q`,
        // the same one repeated division by `q` produces.
        Ok(Expr::one().div(self)?.pow_nonneg(exp.unsigned_abs()))
    }

    /// `self / divisor` over the reals. Dividing by an atom or monomial gives
    /// negative exponents; dividing by a polynomial that does not divide
    /// `self` introduces a reciprocal atom. Both assume the divisor non-zero.
    pub fn div(&self, divisor: &Expr) -> Result<Expr, AlgebraError> {
        if divisor.is_zero() {
            return Err(AlgebraError::DivisionByZero);
        }
        if let Some(q) = divide_exact(self, divisor) {
            return Ok(q);
        }
        let content = monomial_content(divisor.terms());
        let shifted = shift(divisor.terms(), &content);
        let lead = shifted
            .iter()
            .find(|t| !t.mono.is_one())
            .unwrap_or(&shifted[0])
            .coeff
            .clone();
        let lead_inv = lead.recip().ok_or(AlgebraError::DivisionByZero)?;
        let monic = Expr::from_canonical(scale_terms(&shifted, &lead_inv));
        let unit = from_laurent_terms(vec![Term {
            coeff: lead_inv,
            mono: mono_inverse(&content),
        }]);
        let reciprocal = Expr::atom(Atom::recip(monic));
        Ok(self.mul(&unit).mul(&reciprocal))
    }

    /// The quotient `self / divisor` when it is a Laurent polynomial (no new
    /// reciprocal atom), else `None`.
    pub fn divide_exact(&self, divisor: &Expr) -> Option<Expr> {
        divide_exact(self, divisor)
    }

    /// The quotient `self / divisor` when it is a polynomial: no atom gets a
    /// more negative exponent than it has in `self`.
    pub fn divide_polynomial(&self, divisor: &Expr) -> Option<Expr> {
        let q = divide_exact(self, divisor)?;
        let allowed = monomial_content(self.terms());
        let ok = q.terms().iter().all(|t| {
            t.mono
                .factors()
                .iter()
                .all(|(a, e)| *e > 0 || *e >= allowed.exponent(a))
        });
        ok.then_some(q)
    }
}

macro_rules! binary_op {
    ($trait:ident, $method:ident) => {
        impl std::ops::$trait<&Expr> for &Expr {
            type Output = Expr;
            fn $method(self, other: &Expr) -> Expr {
                Expr::$method(self, other)
            }
        }
        impl std::ops::$trait<Expr> for Expr {
            type Output = Expr;
            fn $method(self, other: Expr) -> Expr {
                Expr::$method(&self, &other)
            }
        }
        impl std::ops::$trait<&Expr> for Expr {
            type Output = Expr;
            fn $method(self, other: &Expr) -> Expr {
                Expr::$method(&self, other)
            }
        }
    };
}

binary_op!(Add, add);
binary_op!(Sub, sub);
binary_op!(Mul, mul);

impl std::ops::Neg for &Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::neg(self)
    }
}

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::neg(&self)
    }
}
