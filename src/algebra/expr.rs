//! Expressions in normal form: interned Laurent polynomials over atoms.
//!
//! An [`Expr`] is a sum of [`Term`]s, each a non-zero rational coefficient
//! times a [`Mono`] (a product of atoms raised to non-zero integer powers).
//! Terms are sorted by monomial and no two share one, so the representation
//! is canonical: two expressions built in any order from the same operations
//! are the same interned node, and `==` is a pointer comparison.
//!
//! Every constructor returns normal form; there is no separate
//! "unsimplified" tree. See [`crate::algebra`] for the rules.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock, OnceLock};

use super::atom::{Atom, AtomKind, Symbol};
use super::intern::{Fx, Interner};
use super::rational::Rat;

/// A product of atoms with non-zero integer exponents, sorted by atom.
/// Reciprocal atoms only ever carry positive exponents.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Mono(pub(crate) Arc<[(Atom, i32)]>);

impl Mono {
    pub fn one() -> Mono {
        Mono(Arc::new([]))
    }

    pub fn factors(&self) -> &[(Atom, i32)] {
        &self.0
    }

    pub fn is_one(&self) -> bool {
        self.0.is_empty()
    }

    /// The monomial as an expression (coefficient 1).
    pub fn to_expr(&self) -> Expr {
        Expr::from_canonical(vec![Term {
            coeff: Rat::ONE,
            mono: self.clone(),
        }])
    }

    /// Total degree (sum of exponents).
    pub fn degree(&self) -> i64 {
        self.0.iter().map(|(_, e)| *e as i64).sum()
    }

    /// The monomial with `atom`'s factor removed.
    pub fn without(&self, atom: &Atom) -> Mono {
        Mono(self.0.iter().filter(|(a, _)| a != atom).cloned().collect())
    }

    /// The exponent of `atom` (0 when absent).
    pub fn exponent(&self, atom: &Atom) -> i32 {
        self.0
            .iter()
            .find(|(a, _)| a == atom)
            .map_or(0, |(_, e)| *e)
    }

    /// Builds a monomial from factors in any order, merging repeats and
    /// dropping zero exponents.
    pub fn from_factors(mut factors: Vec<(Atom, i32)>) -> Mono {
        factors.sort_by(|a, b| a.0.cmp(&b.0));
        let mut merged: Vec<(Atom, i32)> = Vec::with_capacity(factors.len());
        for (atom, exp) in factors {
            match merged.last_mut() {
                Some((last, e)) if *last == atom => *e += exp,
                _ => merged.push((atom, exp)),
            }
        }
        merged.retain(|(_, e)| *e != 0);
        Mono(merged.into())
    }
}

impl Ord for Mono {
    /// Term order inside a sum: lexicographic over (atom, exponent) pairs,
    /// the constant monomial first.
    fn cmp(&self, other: &Mono) -> Ordering {
        for (x, y) in self.0.iter().zip(other.0.iter()) {
            let c = x.0.cmp(&y.0).then_with(|| x.1.cmp(&y.1));
            if c != Ordering::Equal {
                return c;
            }
        }
        self.0.len().cmp(&other.0.len())
    }
}

impl PartialOrd for Mono {
    fn partial_cmp(&self, other: &Mono) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One term of a normal form: `coeff * mono`, `coeff ≠ 0`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Term {
    pub coeff: Rat,
    pub mono: Mono,
}

pub(crate) struct ExprNode {
    hash: u64,
    pub(crate) terms: Box<[Term]>,
    /// Whether some term has a reciprocal atom at top level.
    pub(crate) has_recip: bool,
    /// Every symbol occurring anywhere inside, sorted (computed on demand).
    pub(crate) symbols: OnceLock<Arc<[Symbol]>>,
}

impl Drop for ExprNode {
    fn drop(&mut self) {
        EXPRS.release(self.hash);
    }
}

impl PartialEq for ExprNode {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.terms == other.terms
    }
}

static EXPRS: LazyLock<Interner<ExprNode>> = LazyLock::new(Interner::new);
static ZERO: LazyLock<Expr> = LazyLock::new(|| Expr::from_canonical_raw(Vec::new()));
static ONE: LazyLock<Expr> = LazyLock::new(|| Expr::constant(Rat::ONE));

/// An expression in normal form. Cloning is a reference-count increment;
/// `==` and hashing are O(1).
#[derive(Clone)]
pub struct Expr(pub(crate) Arc<ExprNode>);

impl Expr {
    /// Interns terms already in canonical order (sorted by monomial, distinct
    /// monomials, non-zero coefficients) without cancelling reciprocals.
    pub(crate) fn from_canonical_raw(terms: Vec<Term>) -> Expr {
        debug_assert!(terms.windows(2).all(|w| w[0].mono < w[1].mono));
        debug_assert!(terms.iter().all(|t| !t.coeff.is_zero()));
        let mut h = Fx::default();
        let mut has_recip = false;
        for term in &terms {
            term.coeff.hash(&mut h);
            h.write_usize(term.mono.0.len());
            for (atom, exp) in term.mono.0.iter() {
                h.write_u64(atom.hash_value());
                h.write_i32(*exp);
                has_recip |= atom.is_recip();
            }
        }
        let hash = h.finish();
        // Look up by the borrowed terms; build a node only when absent.
        let pending = std::cell::RefCell::new(Some(terms));
        let matches = |node: &ExprNode| {
            pending
                .borrow()
                .as_ref()
                .is_some_and(|t| node.hash == hash && *node.terms == t[..])
        };
        let make = || {
            pending.borrow_mut().take().map(|terms| ExprNode {
                hash,
                terms: terms.into_boxed_slice(),
                has_recip,
                symbols: OnceLock::new(),
            })
        };
        match EXPRS.intern_with(hash, matches, make) {
            Some(node) => Expr(node),
            None => unreachable!("the pending terms are only taken once"),
        }
    }

    /// Interns canonical terms, then cancels reciprocals where a numerator
    /// part is divisible by the reciprocal's polynomial.
    pub(crate) fn from_canonical(terms: Vec<Term>) -> Expr {
        let e = Expr::from_canonical_raw(terms);
        let e = if e.0.has_recip {
            super::poly::cancel_reciprocals(e)
        } else {
            e
        };
        if super::domain::assume_in_domain() && super::domain::has_square_root(&e) {
            super::domain::reduce_square_roots(e)
        } else {
            e
        }
    }

    /// Builds the normal form of a sum of terms given in any order.
    pub fn from_terms(mut terms: Vec<Term>) -> Expr {
        terms.sort_by(|a, b| a.mono.cmp(&b.mono));
        Expr::from_canonical(super::poly::combine_sorted(terms))
    }

    pub fn zero() -> Expr {
        ZERO.clone()
    }

    pub fn one() -> Expr {
        ONE.clone()
    }

    pub fn int(n: i64) -> Expr {
        Expr::constant(Rat::int(n))
    }

    pub fn constant(c: Rat) -> Expr {
        if c.is_zero() {
            return Expr::zero();
        }
        Expr::from_canonical_raw(vec![Term {
            coeff: c,
            mono: Mono::one(),
        }])
    }

    /// The expression consisting of one atom. Looked up without allocating
    /// when it already exists (symbols are turned into expressions often).
    pub fn atom(atom: Atom) -> Expr {
        if atom.is_recip() {
            return Expr::from_canonical(vec![Term {
                coeff: Rat::ONE,
                mono: Mono(Arc::new([(atom, 1)])),
            }]);
        }
        // Same hash as `from_canonical_raw` computes for this single term.
        let mut h = Fx::default();
        Rat::ONE.hash(&mut h);
        h.write_usize(1);
        h.write_u64(atom.hash_value());
        h.write_i32(1);
        let hash = h.finish();
        let matches = |node: &ExprNode| match &*node.terms {
            [t] => t.coeff.is_one() && matches!(&*t.mono.0, [(a, 1)] if *a == atom),
            _ => false,
        };
        let make = || {
            Some(ExprNode {
                hash,
                terms: Box::new([Term {
                    coeff: Rat::ONE,
                    mono: Mono(Arc::new([(atom.clone(), 1)])),
                }]),
                has_recip: false,
                symbols: OnceLock::new(),
            })
        };
        match EXPRS.intern_with(hash, matches, make) {
            Some(node) => Expr(node),
            None => unreachable!("make always builds a node"),
        }
    }

    pub fn symbol(symbol: &Symbol) -> Expr {
        symbol.to_expr()
    }

    pub fn terms(&self) -> &[Term] {
        &self.0.terms
    }

    pub fn hash_value(&self) -> u64 {
        self.0.hash
    }

    pub fn is_zero(&self) -> bool {
        self.0.terms.is_empty()
    }

    pub fn is_one(&self) -> bool {
        matches!(&*self.0.terms, [t] if t.mono.is_one() && t.coeff.is_one())
    }

    /// The value when the expression is a rational constant.
    pub fn as_constant(&self) -> Option<Rat> {
        match &*self.0.terms {
            [] => Some(Rat::ZERO),
            [t] if t.mono.is_one() => Some(t.coeff.clone()),
            _ => None,
        }
    }

    /// The atom when the expression is exactly one atom (coefficient 1, power 1).
    pub fn as_atom(&self) -> Option<&Atom> {
        match &*self.0.terms {
            [t] if t.coeff.is_one() => match &*t.mono.0 {
                [(a, 1)] => Some(a),
                _ => None,
            },
            _ => None,
        }
    }

    /// The symbol when the expression is exactly one symbol.
    pub fn as_symbol(&self) -> Option<Symbol> {
        self.as_atom().and_then(Atom::as_symbol)
    }

    /// Whether this expression is the same interned node as `other` (same as `==`).
    pub fn ptr_eq(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Number of terms of the normal form.
    pub fn len(&self) -> usize {
        self.0.terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.is_zero()
    }

    /// The coefficient of the first non-constant term in canonical order
    /// (the constant for a constant): what normalising scalings divide by.
    pub fn leading_coeff(&self) -> Rat {
        self.0
            .terms
            .iter()
            .find(|t| !t.mono.is_one())
            .or(self.0.terms.first())
            .map_or(Rat::ZERO, |t| t.coeff.clone())
    }

    /// Every atom occurring at top level of some term.
    pub fn top_atoms(&self) -> impl Iterator<Item = &Atom> {
        self.0
            .terms
            .iter()
            .flat_map(|t| t.mono.0.iter().map(|(a, _)| a))
    }

    /// Total size of the expression tree (terms, factors, nested arguments):
    /// a cost measure for search heuristics.
    pub fn size(&self) -> usize {
        self.0
            .terms
            .iter()
            .map(|t| {
                1 + t
                    .mono
                    .0
                    .iter()
                    .map(|(a, _)| match a.kind() {
                        AtomKind::Sym { .. } => 1,
                        AtomKind::App { args, .. } => {
                            1 + args.iter().map(Expr::size).sum::<usize>()
                        }
                        AtomKind::Recip(q) => 1 + q.size(),
                    })
                    .sum::<usize>()
            })
            .sum()
    }
}

impl PartialEq for Expr {
    fn eq(&self, other: &Expr) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for Expr {}

impl Hash for Expr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl Ord for Expr {
    fn cmp(&self, other: &Expr) -> Ordering {
        if self.ptr_eq(other) {
            return Ordering::Equal;
        }
        for (x, y) in self.0.terms.iter().zip(other.0.terms.iter()) {
            let c = x.mono.cmp(&y.mono).then_with(|| x.coeff.cmp(&y.coeff));
            if c != Ordering::Equal {
                return c;
            }
        }
        self.0.terms.len().cmp(&other.0.terms.len())
    }
}

impl PartialOrd for Expr {
    fn partial_cmp(&self, other: &Expr) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl From<i64> for Expr {
    fn from(n: i64) -> Expr {
        Expr::int(n)
    }
}

impl From<Rat> for Expr {
    fn from(c: Rat) -> Expr {
        Expr::constant(c)
    }
}

impl From<&Symbol> for Expr {
    fn from(s: &Symbol) -> Expr {
        s.to_expr()
    }
}

/// Live interned expressions (for tests of memory reclamation).
pub fn live_expr_count() -> usize {
    EXPRS.live_count()
}
