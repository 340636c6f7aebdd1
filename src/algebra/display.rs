//! Readable text for normal forms: `alpha*A[0,0]*B[0,1] - 2*C[0,1]/n`.
//!
//! Negative powers and reciprocal atoms print as a denominator; the printed
//! text is for people and snapshots, not a serialisation format.

use std::cmp::Ordering;
use std::fmt::{self, Write};

use super::atom::{Atom, AtomKind};
use super::expr::{Expr, Mono, Term};
use super::rational::Rat;

fn write_power(out: &mut String, atom: &Atom, exp: u32) {
    match atom.kind() {
        AtomKind::Recip(q) => {
            // Only reached for a reciprocal printed in a denominator.
            let _ = write!(out, "({q})");
        }
        _ => {
            let _ = write!(out, "{atom}");
        }
    }
    if exp != 1 {
        let _ = write!(out, "^{exp}");
    }
}

/// Graded lexicographic order with atoms in readable order: higher degree
/// is greater; at equal degree, the monomial with more of the earliest atom is
/// greater (so `x^2 > x*y > y^2 > x > 1`).
fn display_order(a: &Mono, b: &Mono) -> Ordering {
    let sorted = |m: &Mono| {
        let mut f: Vec<(Atom, i32)> = m.factors().to_vec();
        f.sort_by(|x, y| x.0.structural_cmp(&y.0));
        f
    };
    a.degree().cmp(&b.degree()).then_with(|| {
        let (x, y) = (sorted(a), sorted(b));
        for (p, q) in x.iter().zip(&y) {
            match p.0.structural_cmp(&q.0) {
                Ordering::Equal if p.1 == q.1 => continue,
                Ordering::Equal => return p.1.cmp(&q.1),
                // `a` has the earlier atom, `b` lacks it here.
                Ordering::Less => return Ordering::Greater,
                Ordering::Greater => return Ordering::Less,
            }
        }
        x.len().cmp(&y.len())
    })
}

/// A term split for printing: sign, numerator text, denominator factors.
struct Printed {
    negative: bool,
    numerator: String,
    denominator: Vec<String>,
}

fn split_term(term: &Term) -> Printed {
    let magnitude = term.coeff.abs();
    let (num, den) = match &magnitude {
        Rat::Small(n, d) => (n.to_string(), d.to_string()),
        Rat::Big(b) => (b.numer().to_string(), b.denom().to_string()),
    };
    let mut factors: Vec<&(Atom, i32)> = term.mono.factors().iter().collect();
    factors.sort_by(|a, b| a.0.structural_cmp(&b.0));
    let mut numerator: Vec<String> = Vec::new();
    let mut denominator: Vec<String> = Vec::new();
    if num != "1" {
        numerator.push(num);
    }
    for (atom, exp) in factors {
        let mut s = String::new();
        if *exp > 0 && !atom.is_recip() {
            write_power(&mut s, atom, *exp as u32);
            numerator.push(s);
        } else {
            write_power(&mut s, atom, exp.unsigned_abs());
            denominator.push(s);
        }
    }
    if numerator.is_empty() {
        numerator.push("1".into());
    }
    let mut numerator = numerator.join("*");
    if den != "1" {
        numerator = format!("{numerator}/{den}");
    }
    Printed {
        negative: term.coeff.is_negative(),
        numerator,
        denominator,
    }
}

fn denominator_text(factors: &[String]) -> String {
    match factors {
        [one] => one.clone(),
        many => format!("({})", many.join("*")),
    }
}

fn write_signed(f: &mut fmt::Formatter<'_>, negative: bool, first: bool) -> fmt::Result {
    match (first, negative) {
        (true, true) => f.write_str("-"),
        (true, false) => Ok(()),
        (false, true) => f.write_str(" - "),
        (false, false) => f.write_str(" + "),
    }
}

impl fmt::Display for Expr {
    /// Terms with the same denominator print together as `(a + b)/d`;
    /// within a group and between groups, highest degree first in readable
    /// atom order, as people write polynomials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_zero() {
            return f.write_str("0");
        }
        let mut terms: Vec<&Term> = self.terms().iter().collect();
        terms.sort_by(|a, b| display_order(&b.mono, &a.mono));
        let mut groups: Vec<(Vec<String>, Vec<Printed>)> = Vec::new();
        for term in terms {
            let printed = split_term(term);
            match groups.iter_mut().find(|(d, _)| *d == printed.denominator) {
                Some((_, members)) => members.push(printed),
                None => groups.push((printed.denominator.clone(), vec![printed])),
            }
        }
        // Terms without a denominator first.
        groups.sort_by_key(|(d, _)| !d.is_empty());
        for (gi, (den, members)) in groups.iter().enumerate() {
            let first = gi == 0;
            if den.is_empty() || members.len() == 1 {
                for (mi, m) in members.iter().enumerate() {
                    write_signed(f, m.negative, first && mi == 0)?;
                    f.write_str(&m.numerator)?;
                    if !den.is_empty() {
                        write!(f, "/{}", denominator_text(den))?;
                    }
                }
                continue;
            }
            // Pull a common minus sign out of an all-negative group.
            let all_negative = members.iter().all(|m| m.negative);
            write_signed(f, all_negative, first)?;
            f.write_str("(")?;
            for (mi, m) in members.iter().enumerate() {
                write_signed(f, m.negative != all_negative, mi == 0)?;
                f.write_str(&m.numerator)?;
            }
            write!(f, ")/{}", denominator_text(den))?;
        }
        Ok(())
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind() {
            AtomKind::Sym { .. } => match self.as_symbol() {
                Some(s) => write!(f, "{s}"),
                None => Ok(()),
            },
            AtomKind::App { func, args } => {
                write!(f, "{}(", func.name())?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{a}")?;
                }
                f.write_str(")")
            }
            AtomKind::Recip(q) => write!(f, "1/({q})"),
        }
    }
}

impl fmt::Debug for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
