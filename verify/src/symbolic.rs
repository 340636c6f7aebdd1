//! The symbolic domain: values are Z3 terms over the integers and the
//! reals. Integer values carry an interval when one is known (from input
//! types, literals and the operations applied), which folds constants and
//! removes wrap-arounds and overflow preconditions that cannot matter, so
//! the u8 arithmetic of image kernels stays linear where it can.
//!
//! Must be used inside one Z3 context (the caller wraps a whole check in
//! `z3::with_z3_config`); terms never leave it.

use std::collections::HashMap;

use z3::ast::{Ast, Bool, Dynamic, Int, Real};
use z3::{FuncDecl, Sort as Z3Sort};

use crate::domain::{value, Cmp, Domain, ElemKind, IntTy, Opaque};
use crate::error::Abort;

mod in_domain;

/// A Z3 term of integer or real sort.
#[derive(Clone, Debug)]
pub(crate) enum Term {
    Int(Int),
    Real(Real),
}

/// A symbolic value.
#[derive(Clone, Debug)]
pub(crate) struct SymVal {
    pub term: Term,
    /// Bounds of an integer value, when known.
    range: Option<(i128, i128)>,
    /// The boolean this 0/1 value was made from (comparisons, logic), so
    /// conditions do not go through `ite(b, 1, 0) != 0`.
    truth: Option<Bool>,
    /// Whether an uninterpreted function (sqrt, exp, …) occurs in the term.
    pub opaque: bool,
}

/// One input constant: its name (as in counterexamples), term and kind.
pub(crate) struct SymInput {
    pub name: String,
    pub term: Term,
    pub kind: ElemKind,
}

/// The symbolic domain with the facts gathered while interpreting.
#[derive(Default)]
pub(crate) struct SymDomain {
    inputs: Vec<SymInput>,
    by_name: HashMap<String, SymVal>,
    /// Type ranges of integer inputs.
    input_facts: Vec<Bool>,
    /// C preconditions, each already conditioned on its path.
    assumptions: Vec<Bool>,
    /// Conditions the TensIR program needs to run, with a description.
    obligations: Vec<(Bool, String)>,
    path: Vec<Bool>,
    functions: HashMap<Opaque, FuncDecl>,
    /// Integer terms the C's preconditions keep within a range on every
    /// path (signed arithmetic, which may not overflow). The program's
    /// wrap-around of such a term is the term itself; left as `mod 2^32`
    /// it makes a cube nonlinear integer arithmetic Z3 gives up on.
    assumed_ranges: HashMap<Int, (i128, i128)>,
    /// `--assume-in-domain` (module `in_domain`).
    domain: bool,
    /// Whether the C (not the program) is being interpreted.
    in_kernel: bool,
}

/// Exponents up to this bound in `pow(x, k)` (k a literal natural number)
/// are expanded into products; beyond it `pow` stays uninterpreted.
const MAX_EXPANDED_POWER: i64 = 16;

impl SymDomain {
    pub fn new() -> SymDomain {
        SymDomain::default()
    }

    /// Turns on the `--assume-in-domain` facts (module `in_domain`).
    pub fn assume_in_domain(&mut self, on: bool) {
        self.domain = on;
    }

    /// Says whether the C (`true`) or the program is interpreted next.
    pub fn set_in_kernel(&mut self, on: bool) {
        self.in_kernel = on;
    }

    /// The range the C's unconditional preconditions give `a`'s term.
    fn assumed_range(&self, a: &SymVal) -> Option<(i128, i128)> {
        // Every integer operation asks; float kernels assume nothing.
        if self.assumed_ranges.is_empty() {
            return None;
        }
        match &a.term {
            Term::Int(term) => self.assumed_ranges.get(term).copied(),
            Term::Real(_) => None,
        }
    }

    /// `a`'s own range narrowed by what the preconditions assume of it.
    fn known_range(&self, a: &SymVal) -> Option<(i128, i128)> {
        intersect(a.range, self.assumed_range(a))
    }

    /// Records that `term` lies in `range` on every path, and what that
    /// says of the factor of a square: `x*x <= h` bounds `|x|` by
    /// `isqrt(h)`, which is how `int sq = x*x; sq*sq` bounds `x` and lets
    /// the program's `((x*x)*x)*x` stay free of wrap-around.
    fn assume_range(&mut self, term: &Int, range: (i128, i128)) {
        let mut next = Some((term.clone(), range));
        while let Some((term, range)) = next.take() {
            let known = self.assumed_ranges.entry(term.clone()).or_insert(range);
            *known = intersect(Some(*known), Some(range)).unwrap_or(range);
            let hi = known.1;
            let children = term.children();
            if hi >= 0
                && term.decl().name() == "*"
                && children.len() == 2
                && children[0] == children[1]
            {
                if let Some(factor) = children[0].as_int() {
                    let root = isqrt(hi);
                    next = Some((factor, (-root, root)));
                }
            }
        }
    }

    pub fn inputs(&self) -> &[SymInput] {
        &self.inputs
    }

    /// Everything the check may assume: input ranges and C preconditions.
    pub fn premises(&self) -> impl Iterator<Item = &Bool> {
        self.input_facts.iter().chain(&self.assumptions)
    }

    pub fn obligations(&self) -> &[(Bool, String)] {
        &self.obligations
    }

    /// The formula "`a` and `b` differ".
    pub fn differ(&self, a: &SymVal, b: &SymVal) -> Bool {
        match (&a.term, &b.term) {
            (Term::Int(x), Term::Int(y)) => x.eq(y).not(),
            _ => self.real_of(a).eq(self.real_of(b)).not(),
        }
    }

    /// Both values as terms of one sort (integers when both are, reals
    /// otherwise), as `differ` compares them.
    pub fn comparable(&self, a: &SymVal, b: &SymVal) -> (Dynamic, Dynamic) {
        match (&a.term, &b.term) {
            (Term::Int(x), Term::Int(y)) => (Dynamic::from_ast(x), Dynamic::from_ast(y)),
            _ => (
                Dynamic::from_ast(&self.real_of(a)),
                Dynamic::from_ast(&self.real_of(b)),
            ),
        }
    }

    fn real_of(&self, v: &SymVal) -> Real {
        match &v.term {
            Term::Real(r) => r.clone(),
            Term::Int(i) => i.to_real(),
        }
    }

    fn int_of(v: &SymVal) -> Int {
        match &v.term {
            Term::Int(i) => i.clone(),
            Term::Real(r) => r.to_int(),
        }
    }

    fn point(v: &SymVal) -> Option<i128> {
        match v.range {
            Some((lo, hi)) if lo == hi => Some(lo),
            _ => None,
        }
    }

    fn int_val(term: Int, range: Option<(i128, i128)>, opaque: bool) -> SymVal {
        SymVal {
            term: Term::Int(term),
            range,
            truth: None,
            opaque,
        }
    }

    fn real_val(term: Real, opaque: bool) -> SymVal {
        SymVal {
            term: Term::Real(term),
            range: None,
            truth: None,
            opaque,
        }
    }

    fn const_int(v: i128) -> SymVal {
        SymDomain::int_val(Int::from_i128(v), Some((v, v)), false)
    }

    fn from_bool(b: Bool, opaque: bool) -> SymVal {
        if let Some(k) = b.as_bool() {
            let mut v = SymDomain::const_int(i128::from(k));
            v.truth = Some(b);
            return v;
        }
        SymVal {
            term: Term::Int(b.ite(&Int::from_i64(1), &Int::from_i64(0))),
            range: Some((0, 1)),
            truth: Some(b),
            opaque,
        }
    }

    /// The condition "`v` is non-zero".
    fn nonzero(&self, v: &SymVal) -> Bool {
        if let Some(b) = &v.truth {
            return b.clone();
        }
        if let Some(k) = SymDomain::point(v) {
            return Bool::from_bool(k != 0);
        }
        match &v.term {
            Term::Int(i) => i.eq(Int::from_i64(0)).not(),
            Term::Real(r) => r.eq(real_zero()).not(),
        }
    }

    fn both_int(a: &SymVal, b: &SymVal) -> bool {
        matches!((&a.term, &b.term), (Term::Int(_), Term::Int(_)))
    }

    fn function(&mut self, f: Opaque) -> &FuncDecl {
        self.functions.entry(f).or_insert_with(|| {
            let real = Z3Sort::real();
            let domain: Vec<&Z3Sort> = match f {
                Opaque::Pow => vec![&real, &real],
                _ => vec![&real],
            };
            FuncDecl::new(f.name(), &domain, &real)
        })
    }

    /// The integer `k`, of small magnitude, when `v` is the literal `k` (an
    /// integer or a real numeral with an integral value).
    fn small_integral(v: &SymVal) -> Option<i64> {
        let k = match &v.term {
            Term::Int(_) => i64::try_from(SymDomain::point(v)?).ok()?,
            Term::Real(r) => {
                let (num, den) = r.simplify().as_rational()?;
                if den != 1 {
                    return None;
                }
                num
            }
        };
        (-MAX_EXPANDED_POWER..=MAX_EXPANDED_POWER)
            .contains(&k)
            .then_some(k)
    }
}

fn real_zero() -> Real {
    Real::from_rational_str("0", "1").unwrap_or_else(|| Int::from_i64(0).to_real())
}

fn add_ranges(a: Option<(i128, i128)>, b: Option<(i128, i128)>) -> Option<(i128, i128)> {
    let ((al, ah), (bl, bh)) = (a?, b?);
    Some((al.checked_add(bl)?, ah.checked_add(bh)?))
}

fn neg_range(a: Option<(i128, i128)>) -> Option<(i128, i128)> {
    let (l, h) = a?;
    Some((h.checked_neg()?, l.checked_neg()?))
}

fn mul_ranges(a: Option<(i128, i128)>, b: Option<(i128, i128)>) -> Option<(i128, i128)> {
    let ((al, ah), (bl, bh)) = (a?, b?);
    let products = [
        al.checked_mul(bl)?,
        al.checked_mul(bh)?,
        ah.checked_mul(bl)?,
        ah.checked_mul(bh)?,
    ];
    Some((*products.iter().min()?, *products.iter().max()?))
}

/// The range of `x*x` for `x` in `a`.
fn square_range(a: Option<(i128, i128)>) -> Option<(i128, i128)> {
    let (l, h) = a?;
    let top = l.checked_mul(l)?.max(h.checked_mul(h)?);
    let bottom = if l <= 0 && h >= 0 {
        0
    } else {
        l.checked_mul(l)?.min(h.checked_mul(h)?)
    };
    Some((bottom, top))
}

/// Both ranges at once (either alone when the other is unknown).
fn intersect(a: Option<(i128, i128)>, b: Option<(i128, i128)>) -> Option<(i128, i128)> {
    match (a, b) {
        (Some((al, ah)), Some((bl, bh))) => Some((al.max(bl), ah.min(bh))),
        (x, None) | (None, x) => x,
    }
}

/// The largest `r` with `r*r <= n` (`n >= 0`).
fn isqrt(n: i128) -> i128 {
    let mut r = (n as f64).sqrt() as i128;
    while r > 0 && r.checked_mul(r).is_none_or(|sq| sq > n) {
        r -= 1;
    }
    while (r + 1).checked_mul(r + 1).is_some_and(|sq| sq <= n) {
        r += 1;
    }
    r
}

fn hull(a: Option<(i128, i128)>, b: Option<(i128, i128)>) -> Option<(i128, i128)> {
    let ((al, ah), (bl, bh)) = (a?, b?);
    Some((al.min(bl), ah.max(bh)))
}

fn within(r: Option<(i128, i128)>, ty: IntTy) -> bool {
    r.is_some_and(|(lo, hi)| lo >= ty.min() && hi <= ty.max())
}

fn wrap_value(v: i128, ty: IntTy) -> i128 {
    let modulus = 1i128 << ty.bits;
    let r = v.rem_euclid(modulus);
    if ty.signed && r > ty.max() {
        r - modulus
    } else {
        r
    }
}

impl Domain for SymDomain {
    type V = SymVal;

    fn input(&mut self, name: &str, kind: ElemKind) -> Result<SymVal, Abort> {
        if let Some(v) = self.by_name.get(name) {
            return Ok(v.clone());
        }
        let (value, term) = match kind {
            ElemKind::Int(ty) => {
                let c = Int::new_const(name);
                self.input_facts
                    .push(c.ge(Int::from_i128(ty.min())) & c.le(Int::from_i128(ty.max())));
                (
                    SymDomain::int_val(c.clone(), Some((ty.min(), ty.max())), false),
                    Term::Int(c),
                )
            }
            ElemKind::Real => {
                let c = Real::new_const(name);
                (SymDomain::real_val(c.clone(), false), Term::Real(c))
            }
        };
        self.inputs.push(SymInput {
            name: name.to_string(),
            term,
            kind,
        });
        self.by_name.insert(name.to_string(), value.clone());
        Ok(value)
    }

    fn int(&mut self, v: i128) -> SymVal {
        SymDomain::const_int(v)
    }

    fn literal(&mut self, v: f64, single: bool) -> Result<SymVal, Abort> {
        let r = value::decimal_real(v, single).ok_or_else(|| {
            Abort::Unsupported(format!("the non-finite constant {v} has no real value"))
        })?;
        Ok(SymDomain::real_val(r, false))
    }

    fn real(&mut self, v: f64) -> Result<SymVal, Abort> {
        let r = value::exact_real(v).ok_or_else(|| {
            Abort::Unsupported(format!("the non-finite constant {v} has no real value"))
        })?;
        Ok(SymDomain::real_val(r, false))
    }

    fn add(&mut self, a: &SymVal, b: &SymVal) -> SymVal {
        let opaque = a.opaque || b.opaque;
        if SymDomain::both_int(a, b) {
            if let (Some(x), Some(y)) = (SymDomain::point(a), SymDomain::point(b)) {
                if let Some(s) = x.checked_add(y) {
                    return SymDomain::const_int(s);
                }
            }
            if SymDomain::point(b) == Some(0) {
                return a.clone();
            }
            if SymDomain::point(a) == Some(0) {
                return b.clone();
            }
            let term = SymDomain::int_of(a) + SymDomain::int_of(b);
            let range = add_ranges(self.known_range(a), self.known_range(b));
            return SymDomain::int_val(term, range, opaque);
        }
        SymDomain::real_val(self.real_of(a) + self.real_of(b), opaque)
    }

    fn sub(&mut self, a: &SymVal, b: &SymVal) -> SymVal {
        let nb = self.neg(b);
        if SymDomain::both_int(a, b) {
            if let (Some(x), Some(y)) = (SymDomain::point(a), SymDomain::point(b)) {
                if let Some(s) = x.checked_sub(y) {
                    return SymDomain::const_int(s);
                }
            }
            let term = SymDomain::int_of(a) - SymDomain::int_of(b);
            let range = add_ranges(self.known_range(a), self.known_range(&nb));
            return SymDomain::int_val(term, range, a.opaque || b.opaque);
        }
        SymDomain::real_val(self.real_of(a) - self.real_of(b), a.opaque || b.opaque)
    }

    fn mul(&mut self, a: &SymVal, b: &SymVal) -> SymVal {
        let opaque = a.opaque || b.opaque;
        if SymDomain::both_int(a, b) {
            if let (Some(x), Some(y)) = (SymDomain::point(a), SymDomain::point(b)) {
                if let Some(p) = x.checked_mul(y) {
                    return SymDomain::const_int(p);
                }
            }
            if SymDomain::point(a) == Some(1) {
                return b.clone();
            }
            if SymDomain::point(b) == Some(1) {
                return a.clone();
            }
            let term = SymDomain::int_of(a) * SymDomain::int_of(b);
            let range = if matches!((&a.term, &b.term), (Term::Int(x), Term::Int(y)) if x == y) {
                square_range(self.known_range(a))
            } else {
                mul_ranges(self.known_range(a), self.known_range(b))
            };
            return SymDomain::int_val(term, range, opaque);
        }
        SymDomain::real_val(self.real_of(a) * self.real_of(b), opaque)
    }

    fn neg(&mut self, a: &SymVal) -> SymVal {
        match &a.term {
            Term::Int(i) => match SymDomain::point(a).and_then(i128::checked_neg) {
                Some(k) => SymDomain::const_int(k),
                None => SymDomain::int_val(-i.clone(), neg_range(self.known_range(a)), a.opaque),
            },
            Term::Real(r) => SymDomain::real_val(-r.clone(), a.opaque),
        }
    }

    fn div_real(&mut self, a: &SymVal, b: &SymVal) -> SymVal {
        SymDomain::real_val(self.real_of(a) / self.real_of(b), a.opaque || b.opaque)
    }

    fn trunc_div(&mut self, a: &SymVal, b: &SymVal) -> SymVal {
        let opaque = a.opaque || b.opaque;
        if let (Some(x), Some(y)) = (SymDomain::point(a), SymDomain::point(b)) {
            if y != 0 {
                if let Some(q) = x.checked_div(y) {
                    return SymDomain::const_int(q);
                }
            }
        }
        let (x, y) = (SymDomain::int_of(a), SymDomain::int_of(b));
        // Z3's `div` is C's `/` when the dividend is non-negative.
        let term = match a.range {
            Some((lo, _)) if lo >= 0 => x.div(&y),
            _ => value::trunc_div(&x, &y),
        };
        let range = match (a.range, SymDomain::point(b)) {
            (Some((lo, hi)), Some(c)) if c != 0 => {
                let (p, q) = (lo / c, hi / c);
                Some((p.min(q), p.max(q)))
            }
            (Some((lo, hi)), _) => {
                let m = lo.unsigned_abs().max(hi.unsigned_abs());
                i128::try_from(m).ok().map(|m| {
                    if lo >= 0 && b.range.is_some_and(|(bl, _)| bl > 0) {
                        (0, m)
                    } else {
                        (-m, m)
                    }
                })
            }
            _ => None,
        };
        SymDomain::int_val(term, range, opaque)
    }

    fn trunc_rem(&mut self, a: &SymVal, b: &SymVal) -> SymVal {
        let opaque = a.opaque || b.opaque;
        if let (Some(x), Some(y)) = (SymDomain::point(a), SymDomain::point(b)) {
            if y != 0 {
                if let Some(r) = x.checked_rem(y) {
                    return SymDomain::const_int(r);
                }
            }
        }
        let (x, y) = (SymDomain::int_of(a), SymDomain::int_of(b));
        // Z3's `mod` is C's `%` when the dividend is non-negative.
        let term = match a.range {
            Some((lo, _)) if lo >= 0 => x.modulo(&y),
            _ => value::trunc_rem(&x, &y),
        };
        let range = b.range.and_then(|(bl, bh)| {
            let m = i128::try_from(bl.unsigned_abs().max(bh.unsigned_abs()))
                .ok()?
                .checked_sub(1)?
                .max(0);
            Some(match a.range {
                Some((lo, _)) if lo >= 0 => (0, m),
                Some((_, hi)) if hi <= 0 => (-m, 0),
                _ => (-m, m),
            })
        });
        SymDomain::int_val(term, range, opaque)
    }

    fn cmp(&mut self, op: Cmp, a: &SymVal, b: &SymVal) -> SymVal {
        let opaque = a.opaque || b.opaque;
        if let (Some(x), Some(y)) = (SymDomain::point(a), SymDomain::point(b)) {
            let k = match op {
                Cmp::Lt => x < y,
                Cmp::Le => x <= y,
                Cmp::Gt => x > y,
                Cmp::Ge => x >= y,
                Cmp::Eq => x == y,
                Cmp::Ne => x != y,
            };
            return SymDomain::from_bool(Bool::from_bool(k), false);
        }
        let b = if SymDomain::both_int(a, b) {
            let (x, y) = (SymDomain::int_of(a), SymDomain::int_of(b));
            match op {
                Cmp::Lt => x.lt(&y),
                Cmp::Le => x.le(&y),
                Cmp::Gt => x.gt(&y),
                Cmp::Ge => x.ge(&y),
                Cmp::Eq => x.eq(&y),
                Cmp::Ne => x.eq(&y).not(),
            }
        } else {
            let (x, y) = (self.real_of(a), self.real_of(b));
            match op {
                Cmp::Lt => x.lt(&y),
                Cmp::Le => x.le(&y),
                Cmp::Gt => x.gt(&y),
                Cmp::Ge => x.ge(&y),
                Cmp::Eq => x.eq(&y),
                Cmp::Ne => x.eq(&y).not(),
            }
        };
        SymDomain::from_bool(b, opaque)
    }

    fn truth(&mut self, a: &SymVal) -> SymVal {
        let b = self.nonzero(a);
        SymDomain::from_bool(b, a.opaque)
    }

    fn select(&mut self, c: &SymVal, t: &SymVal, e: &SymVal) -> SymVal {
        let b = self.nonzero(c);
        match b.as_bool() {
            Some(true) => return t.clone(),
            Some(false) => return e.clone(),
            None => {}
        }
        if self.same(t, e) {
            return t.clone();
        }
        let opaque = c.opaque || t.opaque || e.opaque;
        let truth = match (&t.truth, &e.truth) {
            (Some(x), Some(y)) => Some(b.ite(x, y)),
            _ => None,
        };
        let mut v = if SymDomain::both_int(t, e) {
            SymDomain::int_val(
                b.ite(&SymDomain::int_of(t), &SymDomain::int_of(e)),
                hull(t.range, e.range),
                opaque,
            )
        } else {
            SymDomain::real_val(b.ite(&self.real_of(t), &self.real_of(e)), opaque)
        };
        v.truth = truth;
        v
    }

    fn to_real(&mut self, a: &SymVal) -> SymVal {
        match SymDomain::point(a).and_then(|k| Real::from_rational_str(&k.to_string(), "1")) {
            Some(r) => SymDomain::real_val(r, false),
            None => SymDomain::real_val(self.real_of(a), a.opaque),
        }
    }

    fn trunc_to_int(&mut self, a: &SymVal) -> SymVal {
        let term = value::trunc_real(&self.real_of(a));
        SymDomain::int_val(term, None, a.opaque)
    }

    fn wrap(&mut self, a: &SymVal, ty: IntTy) -> SymVal {
        if within(a.range, ty) {
            return a.clone();
        }
        if let Some(range) = self.known_range(a).filter(|r| within(Some(*r), ty)) {
            let mut v = a.clone();
            v.range = Some(range);
            return v;
        }
        if let Some(k) = SymDomain::point(a) {
            return SymDomain::const_int(wrap_value(k, ty));
        }
        let term = value::wrap(&SymDomain::int_of(a), ty);
        SymDomain::int_val(term, Some((ty.min(), ty.max())), a.opaque)
    }

    fn fits(&mut self, a: &SymVal, ty: IntTy) -> SymVal {
        if within(self.known_range(a), ty) {
            return SymDomain::const_int(1);
        }
        let x = SymDomain::int_of(a);
        let b = x.ge(Int::from_i128(ty.min())) & x.le(Int::from_i128(ty.max()));
        SymDomain::from_bool(b, a.opaque)
    }

    fn known_within(&mut self, a: &SymVal, ty: IntTy) -> SymVal {
        let mut v = a.clone();
        let range = match self.known_range(a) {
            Some((lo, hi)) => (lo.max(ty.min()), hi.min(ty.max())),
            None => (ty.min(), ty.max()),
        };
        v.range = Some(range);
        // Only an unconditional precondition holds wherever the term recurs.
        if let (true, Term::Int(term)) = (self.path.is_empty(), &a.term) {
            self.assume_range(term, range);
        }
        v
    }

    fn round_single(&mut self, a: &SymVal) -> SymVal {
        a.clone()
    }

    fn apply(&mut self, f: Opaque, args: &[SymVal]) -> Result<SymVal, Abort> {
        if f == Opaque::Pow {
            if let [base, exponent] = args {
                if let Some(k) = SymDomain::small_integral(exponent) {
                    if k == 0 {
                        return self.real(1.0);
                    }
                    let mut product = base.clone();
                    for _ in 1..k.abs() {
                        product = self.mul(&product, base);
                    }
                    if k < 0 {
                        // pow(x, -k) is 1/x^k, at zero too: IEEE gives the
                        // same infinity for both, and Z3's quotient by
                        // zero is one function shared with the program's
                        // division.
                        let one = self.real(1.0)?;
                        return Ok(self.div_real(&one, &product));
                    }
                    return Ok(product);
                }
            }
        }
        let reals: Vec<Real> = args.iter().map(|a| self.real_of(a)).collect();
        // A function of numerals (`sqrt(5)` from `sqrtf(head_size)` at
        // pinned sizes) is one unknown constant, named by its arguments so
        // both sides share it: Z3 stalls on quotients by an application
        // term that it decides at once for a plain constant.
        let numerals: Option<Vec<String>> = reals
            .iter()
            .map(|r| {
                r.simplify()
                    .as_rational()
                    .map(|(num, den)| format!("{num}/{den}"))
            })
            .collect();
        if let Some(numerals) = numerals {
            let name = format!("{}({})", f.name(), numerals.join(","));
            return Ok(SymDomain::real_val(Real::new_const(name), true));
        }
        if let (Opaque::Exp, [x]) = (f, reals.as_slice()) {
            if let Some(v) = self.exp_of_logs(x) {
                return Ok(v);
            }
        }
        let refs: Vec<&dyn Ast> = reals.iter().map(|r| r as &dyn Ast).collect();
        let decl = self.function(f);
        if decl.arity() != refs.len() {
            return Err(Abort::Unsupported(format!(
                "{} called with {} arguments",
                f.name(),
                refs.len()
            )));
        }
        let r = decl
            .apply(&refs)
            .as_real()
            .ok_or_else(|| Abort::Unsupported(format!("{} is not real-valued", f.name())))?;
        self.domain_facts(f, &reals, &r);
        Ok(SymDomain::real_val(r, true))
    }

    fn assume(&mut self, cond: &SymVal, _why: &str) -> Result<(), Abort> {
        let b = self.nonzero(cond);
        if b.as_bool() == Some(true) {
            return Ok(());
        }
        let fact = if self.path.is_empty() {
            b
        } else {
            Bool::and(&self.path).implies(&b)
        };
        self.assumptions.push(fact);
        Ok(())
    }

    fn require(&mut self, cond: &SymVal, what: String) -> Result<(), Abort> {
        let b = self.nonzero(cond);
        if b.as_bool() != Some(true) {
            self.obligations.push((b, what));
        }
        Ok(())
    }

    fn decide(&mut self, c: &SymVal) -> Option<bool> {
        if let Some(k) = SymDomain::point(c) {
            return Some(k != 0);
        }
        self.nonzero(c).simplify().as_bool()
    }

    fn push_path(&mut self, cond: &SymVal, taken: bool) {
        let b = self.nonzero(cond);
        self.path.push(if taken { b } else { b.not() });
    }

    fn pop_path(&mut self) {
        self.path.pop();
    }

    fn same(&self, a: &SymVal, b: &SymVal) -> bool {
        match (&a.term, &b.term) {
            (Term::Int(x), Term::Int(y)) => x.ast_eq(y),
            (Term::Real(x), Term::Real(y)) => x.ast_eq(y),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::concrete::{CVal, ConcreteDomain};
    use z3::{SatResult, Solver};

    const I32: IntTy = IntTy {
        bits: 32,
        signed: true,
    };

    /// The integer operations whose encodings have edge cases.
    fn int_ops<D: Domain>(d: &mut D, a: &D::V, b: &D::V) -> Vec<D::V> {
        let i8t = IntTy {
            bits: 8,
            signed: true,
        };
        let u8t = IntTy {
            bits: 8,
            signed: false,
        };
        let neg = d.neg(a);
        let sum = d.add(a, b);
        let lt = d.cmp(Cmp::Lt, a, b);
        vec![
            d.trunc_div(a, b),
            d.trunc_rem(a, b),
            d.wrap(a, i8t),
            d.wrap(&sum, u8t),
            d.wrap(&neg, i8t),
            d.fits(a, i8t),
            d.truth(a),
            d.select(&lt, a, b),
        ]
    }

    #[test]
    fn integer_encodings_agree_with_c_arithmetic() {
        let mut sym = SymDomain::new();
        let x = sym
            .input("x", ElemKind::Int(I32))
            .unwrap_or_else(|_| unreachable!());
        let y = sym
            .input("y", ElemKind::Int(I32))
            .unwrap_or_else(|_| unreachable!());
        let terms = int_ops(&mut sym, &x, &y);
        let solver = Solver::new();
        for a in [-300i128, -128, -7, -1, 0, 1, 7, 127, 300] {
            for b in [-7i128, -2, -1, 1, 2, 7] {
                let mut conc = ConcreteDomain::new(HashMap::new());
                let want = int_ops(&mut conc, &CVal::Int(a), &CVal::Int(b));
                solver.push();
                solver.assert(SymDomain::int_of(&x).eq(Int::from_i128(a)));
                solver.assert(SymDomain::int_of(&y).eq(Int::from_i128(b)));
                assert_eq!(solver.check(), SatResult::Sat);
                let model = solver.get_model().unwrap_or_else(|| unreachable!());
                for (k, (t, w)) in terms.iter().zip(&want).enumerate() {
                    let got = model
                        .eval(&SymDomain::int_of(t), true)
                        .and_then(|v| v.as_i128());
                    assert_eq!(
                        got,
                        Some(match w {
                            CVal::Int(i) => *i,
                            CVal::Real(_) => unreachable!(),
                        }),
                        "operation {k} at a={a}, b={b}"
                    );
                }
                solver.pop(1);
            }
        }
    }

    #[test]
    fn float_to_int_truncates_toward_zero() {
        let mut sym = SymDomain::new();
        let x = sym
            .input("x", ElemKind::Real)
            .unwrap_or_else(|_| unreachable!());
        let t = sym.trunc_to_int(&x);
        let solver = Solver::new();
        for (v, want) in [
            (-2.5, -2),
            (-0.5, 0),
            (0.0, 0),
            (0.5, 0),
            (2.5, 2),
            (-3.0, -3),
        ] {
            solver.push();
            let r = sym.real(v).unwrap_or_else(|_| unreachable!());
            solver.assert(sym.real_of(&x).eq(sym.real_of(&r)));
            assert_eq!(solver.check(), SatResult::Sat);
            let model = solver.get_model().unwrap_or_else(|| unreachable!());
            let got = model
                .eval(&SymDomain::int_of(&t), true)
                .and_then(|v| v.as_i64());
            assert_eq!(got, Some(want), "trunc({v})");
            solver.pop(1);
        }
    }

    #[test]
    fn a_bounded_square_bounds_its_factor_and_the_program_needs_no_wrap() {
        let mut sym = SymDomain::new();
        let i32t = IntTy {
            bits: 32,
            signed: true,
        };
        let x = sym
            .input("x", ElemKind::Int(i32t))
            .unwrap_or_else(|_| unreachable!());
        // The C: `int sq = x*x; return sq*sq;`, both products defined.
        let sq = sym.mul(&x, &x);
        let sq = sym.known_within(&sq, i32t);
        let fourth = sym.mul(&sq, &sq);
        sym.known_within(&fourth, i32t);
        // |x| <= 215, so the program's x*x*x stays inside i32 and its
        // wrap-around is the identity.
        assert_eq!(sym.known_range(&x), Some((-215, 215)));
        let square = sym.mul(&x, &x);
        let cube = sym.mul(&square, &x);
        let wrapped = sym.wrap(&cube, i32t);
        assert!(sym.same(&wrapped, &cube));
        // Without the C's precondition the same product must wrap.
        let mut fresh = SymDomain::new();
        let y = fresh
            .input("y", ElemKind::Int(i32t))
            .unwrap_or_else(|_| unreachable!());
        let square = fresh.mul(&y, &y);
        let cube = fresh.mul(&square, &y);
        let wrapped = fresh.wrap(&cube, i32t);
        assert!(!fresh.same(&wrapped, &cube));
    }

    #[test]
    fn integer_square_roots_round_down() {
        assert_eq!(isqrt(0), 0);
        assert_eq!(isqrt(2_147_483_647), 46_340);
        assert_eq!(isqrt(46_340), 215);
        assert_eq!(isqrt(i128::MAX), 13_043_817_825_332_782_212);
    }

    #[test]
    fn ranges_fold_constants_and_drop_needless_wraps() {
        let mut sym = SymDomain::new();
        let u8t = IntTy {
            bits: 8,
            signed: false,
        };
        let a = sym
            .input("a", ElemKind::Int(u8t))
            .unwrap_or_else(|_| unreachable!());
        let k = sym.int(255);
        let p = sym.mul(&a, &k);
        let q = sym.trunc_div(&p, &k);
        // (a * 255) / 255 lies in [0, 255]: wrapping to u8 changes nothing.
        let w = sym.wrap(&q, u8t);
        assert!(sym.same(&w, &q));
        let two = sym.int(2);
        let three = sym.int(3);
        let five = sym.add(&two, &three);
        assert_eq!(SymDomain::point(&five), Some(5));
        assert_eq!(sym.decide(&five), Some(true));
    }

    #[test]
    fn wrap_follows_twos_complement() {
        let i8t = IntTy {
            bits: 8,
            signed: true,
        };
        let u8t = IntTy {
            bits: 8,
            signed: false,
        };
        assert_eq!(wrap_value(128, i8t), -128);
        assert_eq!(wrap_value(300, u8t), 44);
        assert_eq!(wrap_value(-1, u8t), 255);
    }
}
