//! Equality by linear normal form, before any solver call.
//!
//! Stencils iterated over time (fdtd-2d, heat-3d, jacobi, seidel) build
//! output terms that are deep DAGs of sums and of products by constants:
//! each element is a linear combination of the inputs, but as a Z3 term it
//! is a tree of shared sub-sums several time steps deep, and Z3's
//! arithmetic solver flattens it only at great cost (heat-3d at `n = 5,
//! tsteps = 4` exhausted a 30 s budget on a single element). Here both
//! sides are brought into the normal form `c0 + Σ cᵢ·atomᵢ` with exact
//! rational coefficients, memoised per DAG node, so shared sub-terms are
//! normalised once. Two equal forms prove the elements equal for every
//! input (the forms are polynomial identities: no premise is needed).
//!
//! An atom is any term that is not linear arithmetic: an input constant, an
//! array read, an uninterpreted function application, an `ite`, a product
//! of two unknowns, an integer division. Atoms are compared as Z3 terms, so
//! the check is sound but incomplete: different forms only mean that the
//! solver must decide. The work is bounded by a count of coefficient
//! operations ([`MAX_WORK`]), never by the clock, so the verdict does not
//! depend on the machine's load.

use std::collections::HashMap;
use std::rc::Rc;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use z3::ast::{Ast, Dynamic};
use z3::DeclKind;

/// Coefficient operations allowed over one check (all elements together),
/// copies of operand forms included: past it every further comparison is
/// left to the solver. Every memoised coefficient was counted once, so this
/// also bounds the memo's size (a few hundred MB at worst).
pub(super) const MAX_WORK: usize = 2_000_000;

/// Terms in one normal form past which a node counts as an atom (its form
/// would cost more to carry than the solver saves).
const MAX_TERMS: usize = 20_000;

/// `constant + Σ coefficient · atom`, zero coefficients dropped.
#[derive(Clone, Debug, PartialEq)]
struct Linear {
    constant: BigRational,
    terms: HashMap<Dynamic, BigRational>,
}

impl Linear {
    fn constant(c: BigRational) -> Linear {
        Linear {
            constant: c,
            terms: HashMap::new(),
        }
    }

    fn atom(t: &Dynamic) -> Linear {
        Linear {
            constant: BigRational::zero(),
            terms: HashMap::from([(t.clone(), BigRational::one())]),
        }
    }

    fn as_constant(&self) -> Option<&BigRational> {
        self.terms.is_empty().then_some(&self.constant)
    }
}

/// Normal forms of the terms seen so far, shared by every element of one
/// check (the two sides share sub-terms across elements too).
pub(super) struct LinearForms {
    memo: HashMap<Dynamic, Rc<Linear>>,
    work: usize,
}

impl LinearForms {
    pub fn new() -> LinearForms {
        LinearForms {
            memo: HashMap::new(),
            work: 0,
        }
    }

    /// Whether `a` and `b` have the same linear normal form (then they are
    /// equal for all inputs). `false` says nothing.
    pub fn equal(&mut self, a: &Dynamic, b: &Dynamic) -> bool {
        if self.work > MAX_WORK {
            return false;
        }
        let (fa, fb) = (self.form(a), self.form(b));
        fa == fb
    }

    /// The normal form of `t`, children first (an explicit stack: output
    /// terms are far deeper than the thread's stack allows to recurse).
    fn form(&mut self, t: &Dynamic) -> Rc<Linear> {
        let mut stack: Vec<(Dynamic, bool)> = vec![(t.clone(), false)];
        while let Some((node, expanded)) = stack.pop() {
            if self.memo.contains_key(&node) {
                continue;
            }
            let children = arithmetic_children(&node);
            if !expanded && !children.is_empty() {
                stack.push((node, true));
                for c in children {
                    if !self.memo.contains_key(&c) {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let f = self.combine(&node, &children);
            self.memo.insert(node, Rc::new(f));
        }
        self.memo[t].clone()
    }

    /// `node`'s form from its children's (all memoised).
    fn combine(&mut self, node: &Dynamic, children: &[Dynamic]) -> Linear {
        if children.is_empty() {
            return numeral_value(node).map_or_else(|| Linear::atom(node), Linear::constant);
        }
        let kids: Vec<Rc<Linear>> = children.iter().map(|c| self.memo[c].clone()).collect();
        let formed = if self.work > MAX_WORK {
            None
        } else {
            match node.decl().kind() {
                DeclKind::Add => Some(self.sum(&kids, false)),
                DeclKind::Sub => Some(self.sum(&kids, true)),
                DeclKind::Uminus => Some(self.scale(&kids[0], &-BigRational::one())),
                DeclKind::ToReal => Some(self.scale(&kids[0], &BigRational::one())),
                DeclKind::Mul => self.product(&kids),
                DeclKind::Div => self.quotient(&kids),
                _ => None,
            }
        };
        match formed {
            Some(f) if f.terms.len() <= MAX_TERMS => f,
            _ => Linear::atom(node),
        }
    }

    /// `k0 + k1 + …`, or `k0 - k1 - …` when `subtract`.
    fn sum(&mut self, kids: &[Rc<Linear>], subtract: bool) -> Linear {
        // The copy is work too: a left-deep chain of `k` additions copies
        // forms of 1, 2, …, k terms.
        self.work += kids[0].terms.len() + 1;
        let mut out = (*kids[0]).clone();
        for k in &kids[1..] {
            self.work += k.terms.len() + 1;
            if subtract {
                out.constant -= &k.constant;
            } else {
                out.constant += &k.constant;
            }
            for (atom, c) in &k.terms {
                let entry = out
                    .terms
                    .entry(atom.clone())
                    .or_insert_with(BigRational::zero);
                if subtract {
                    *entry -= c;
                } else {
                    *entry += c;
                }
            }
        }
        out.terms.retain(|_, c| !c.is_zero());
        out
    }

    fn scale(&mut self, f: &Linear, by: &BigRational) -> Linear {
        self.work += f.terms.len() + 1;
        if by.is_zero() {
            return Linear::constant(BigRational::zero());
        }
        Linear {
            constant: &f.constant * by,
            terms: f.terms.iter().map(|(a, c)| (a.clone(), c * by)).collect(),
        }
    }

    /// A product with at most one non-constant factor.
    fn product(&mut self, kids: &[Rc<Linear>]) -> Option<Linear> {
        let mut factor = BigRational::one();
        let mut unknown: Option<&Rc<Linear>> = None;
        for k in kids {
            match k.as_constant() {
                Some(c) => factor *= c,
                None if unknown.is_none() => unknown = Some(k),
                None => return None,
            }
        }
        Some(match unknown {
            Some(f) => self.scale(f, &factor),
            None => Linear::constant(factor),
        })
    }

    /// Real division by a non-zero constant.
    fn quotient(&mut self, kids: &[Rc<Linear>]) -> Option<Linear> {
        let [num, den] = kids else { return None };
        let d = den.as_constant().filter(|d| !d.is_zero())?;
        Some(self.scale(num, &d.recip()))
    }
}

/// The children of an arithmetic node whose form combines theirs; none for
/// a leaf or for anything treated as an atom.
fn arithmetic_children(t: &Dynamic) -> Vec<Dynamic> {
    if !t.is_app() || t.num_children() == 0 {
        return Vec::new();
    }
    // Only the arithmetic kinds: the crate's `DeclKind` numbering follows a
    // newer Z3 than Debian's 4.8.12 past them.
    match t.decl().kind() {
        DeclKind::Add
        | DeclKind::Sub
        | DeclKind::Uminus
        | DeclKind::ToReal
        | DeclKind::Mul
        | DeclKind::Div => t.children(),
        _ => Vec::new(),
    }
}

/// The exact value of a numeral (integer or real), or `None`.
fn numeral_value(t: &Dynamic) -> Option<BigRational> {
    if !t.is_app() || t.num_children() != 0 || t.decl().kind() != DeclKind::Anum {
        return None;
    }
    if let Some(i) = t.as_int() {
        return i
            .as_i128()
            .map(|v| BigRational::from_integer(BigInt::from(v)));
    }
    let r = t.as_real()?;
    if let Some((n, d)) = r.as_rational() {
        return (d != 0).then(|| BigRational::new(BigInt::from(n), BigInt::from(d)));
    }
    parse_smt_rational(&r.to_string())
}

/// A rational numeral as Z3 prints it: `5.0`, `0.25`, `(/ 7.0 10.0)`,
/// `(- 5.0)`, `(- (/ 7.0 10.0))`.
fn parse_smt_rational(s: &str) -> Option<BigRational> {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix("(-").and_then(|r| r.strip_suffix(')')) {
        return parse_smt_rational(inner).map(|v| -v);
    }
    if let Some(inner) = s.strip_prefix("(/").and_then(|r| r.strip_suffix(')')) {
        let mut parts = inner.split_whitespace();
        let (n, d) = (parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let d = parse_decimal(d)?;
        return (!d.is_zero()).then(|| parse_decimal(n).map(|n| n / d))?;
    }
    parse_decimal(s)
}

/// `123`, `123.0` or `1.25` exactly.
fn parse_decimal(s: &str) -> Option<BigRational> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits: BigInt = format!("{whole}{frac}").parse().ok()?;
    let scale = BigInt::from(10u32).pow(frac.len() as u32);
    Some(BigRational::new(digits, scale))
}

#[cfg(test)]
mod tests {
    use super::*;
    use z3::ast::{Int, Real};

    fn real(name: &str) -> Real {
        Real::new_const(name)
    }

    /// `Real::from_rational` needs `Z3_mk_real_int64`, which Debian's Z3
    /// 4.8.12 lacks: numerals go through strings, as the crate's own code.
    fn rat(n: i64, d: i64) -> Real {
        Real::from_rational_str(&n.to_string(), &d.to_string()).unwrap()
    }

    #[test]
    fn shared_linear_dags_normalise_to_the_same_form() {
        let (x, y, z) = (real("x"), real("y"), real("z"));
        let fifth = Real::from_rational_str("3602879701896397", "18014398509481984").unwrap();
        // Two time steps of a 3-point smoothing, evaluated in two orders.
        let s1 = |a: &Real, b: &Real, c: &Real| &fifth * &(a + b + c);
        let left = s1(&s1(&x, &y, &z), &s1(&y, &z, &x), &z);
        let right = &(&fifth * &(&(&(&fifth * &x) + &(&fifth * &y)) + &(&fifth * &z))) * &rat(2, 1)
            + &fifth * &z;
        let mut forms = LinearForms::new();
        assert!(forms.equal(&Dynamic::from_ast(&left), &Dynamic::from_ast(&right)));
        let off = &right + &rat(1, 1000000);
        assert!(!forms.equal(&Dynamic::from_ast(&left), &Dynamic::from_ast(&off)));
    }

    #[test]
    fn products_of_unknowns_and_integer_division_are_atoms() {
        let (x, y) = (real("x"), real("y"));
        let mut forms = LinearForms::new();
        // x*y is an atom: equal to itself, not to y*x (the solver decides).
        assert!(forms.equal(
            &Dynamic::from_ast(&(&x * &y)),
            &Dynamic::from_ast(&(&x * &y))
        ));
        assert!(!forms.equal(
            &Dynamic::from_ast(&(&x * &y)),
            &Dynamic::from_ast(&(&y * &x))
        ));
        let (i, j) = (Int::new_const("i"), Int::new_const("j"));
        let lhs = (&i + &j).div(Int::from_i64(2)) * Int::from_i64(2);
        let rhs = &i + &j;
        assert!(!forms.equal(&Dynamic::from_ast(&lhs), &Dynamic::from_ast(&rhs)));
        let twice = &i * Int::from_i64(2) - &j + &j;
        assert!(forms.equal(&Dynamic::from_ast(&twice), &Dynamic::from_ast(&(&i + &i))));
    }

    #[test]
    fn division_by_a_numeral_is_linear_and_by_zero_is_not() {
        let x = real("x");
        let mut forms = LinearForms::new();
        let half = x.div(rat(2, 1));
        let mul_half = &x * &rat(1, 2);
        assert!(forms.equal(&Dynamic::from_ast(&half), &Dynamic::from_ast(&mul_half)));
        let by_zero = x.div(rat(0, 1));
        let also = x.div(rat(0, 1)) + rat(0, 1);
        // Both are the same atom `x / 0` (plus zero): equal as terms.
        assert!(forms.equal(&Dynamic::from_ast(&by_zero), &Dynamic::from_ast(&also)));
        assert!(!forms.equal(&Dynamic::from_ast(&by_zero), &Dynamic::from_ast(&x)));
    }

    #[test]
    fn numerals_too_large_for_64_bits_are_read_exactly() {
        let big = "123456789012345678901234567890";
        let r = Real::from_rational_str(big, "7").unwrap();
        let v = numeral_value(&Dynamic::from_ast(&r)).unwrap();
        assert_eq!(v, BigRational::new(big.parse().unwrap(), BigInt::from(7)));
        let neg = Real::from_rational_str(&format!("-{big}"), "3").unwrap();
        let v = numeral_value(&Dynamic::from_ast(&neg)).unwrap();
        assert_eq!(
            v,
            BigRational::new(format!("-{big}").parse().unwrap(), BigInt::from(3))
        );
        assert_eq!(
            parse_smt_rational("(- (/ 7.0 10.0))"),
            Some(BigRational::new(BigInt::from(-7), BigInt::from(10)))
        );
        assert_eq!(parse_smt_rational("(/ 1.0 0.0)"), None);
        assert_eq!(parse_smt_rational("x"), None);
    }
}
