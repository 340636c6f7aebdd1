//! Opaque applications and their normalisation rules.
//!
//! Applications are atoms whose arguments are normal forms. Each constructor
//! here first folds rational constants where the result is exact (never an
//! approximation: `sqrt(9/4) = 3/2` folds, `sqrt(2)` stays), then brings the
//! application into a canonical shape so that equal applications intern to
//! the same atom:
//!
//! - `abs(c·x) = |c|·abs(x)` with `x`'s first non-constant coefficient 1;
//! - `max`/`min` flatten nested applications of themselves, keep only the
//!   extreme constant, sort and deduplicate, and collapse to a lone argument;
//! - comparisons become the predicates `lt0(d)` (`d < 0`) and `eq0(d)`
//!   (`d = 0`) on the difference `d`, scaled by a positive constant (`lt0`) or
//!   any non-zero constant (`eq0`) so that the coefficient of `d`'s first
//!   non-constant term is ±1 (`lt0`) or 1 (`eq0`);
//!   `a ≤ b` is `1 - lt0(b - a)`, `a ≠ b` is `1 - eq0(a - b)`;
//! - `select(c, a, b)` tests `c ≠ 0`: a constant `c` picks a branch, equal
//!   branches collapse, `c` is scaled to first non-constant coefficient 1,
//!   and the conditions `eq0(d)` and `p - 1` (for a predicate `p`) swap the
//!   branches;
//! - C integer operations `tdiv`, `rem`, `trunc` and `wrap` fold on integer
//!   constants with C semantics; `wrap(wrap(x))` of one type is one `wrap`.

use super::atom::{Atom, Func};
use super::expr::Expr;
use super::rational::Rat;

fn app(func: Func, args: Vec<Expr>) -> Expr {
    Expr::atom(Atom::app(func, args))
}

/// `x = c · x'` with `x'`'s first coefficient 1; `None` for zero.
fn split_leading(x: &Expr) -> Option<(Rat, Expr)> {
    let c = x.leading_coeff();
    let inv = c.recip()?;
    Some((c, x.scale(&inv)))
}

/// Whether `select(cond, then_value, else_value)` is `then_value`: the
/// condition is one symbol minus a constant, `v - r`, and at `v = r` the
/// then-branch is the else-branch. Reference BLAS skips work that would
/// change nothing (`if (x[j] != 0.0) { temp = alpha*x[j]; a[i][j] += x[i]*temp;
/// }`, `if (beta == 0.0) y[i] = 0.0; else y[i] = beta*y[i];`): over the
/// reals the guarded update is the identity where the guard fails, so the
/// guard is no part of what the loop computes. A then-branch undefined at
/// `v = r` (`1/x`) keeps the select.
fn removable_guard(cond: &Expr, then_value: &Expr, else_value: &Expr) -> bool {
    let symbols = cond.symbols();
    let [v] = &symbols[..] else {
        return false;
    };
    if !then_value.contains_symbol(v) && !else_value.contains_symbol(v) {
        return false;
    }
    // The root of a condition linear in `v` (none where `v` sits inside an
    // application, `lt0(x)`, or the condition is not linear).
    let Ok(roots) = super::solve::solve_linear(std::slice::from_ref(cond), std::slice::from_ref(v))
    else {
        return false;
    };
    let [root] = roots.as_slice() else {
        return false;
    };
    match (
        then_value.substitute_one(v, root),
        else_value.substitute_one(v, root),
    ) {
        (Ok(t), Ok(e)) => t == e,
        _ => false,
    }
}

fn from_bool(b: bool) -> Expr {
    Expr::int(b as i64)
}

impl Expr {
    pub fn sqrt(&self) -> Expr {
        if let Some(root) = self.as_constant().and_then(|c| c.exact_sqrt()) {
            return Expr::constant(root);
        }
        app(Func::Sqrt, vec![self.clone()])
    }

    pub fn exp(&self) -> Expr {
        if self.is_zero() {
            return Expr::one();
        }
        if super::domain::assume_in_domain() {
            if let Some(e) = super::domain::exp_of_logs(self) {
                return e;
            }
        }
        app(Func::Exp, vec![self.clone()])
    }

    pub fn log(&self) -> Expr {
        if self.is_one() {
            return Expr::zero();
        }
        if super::domain::assume_in_domain() {
            if let Some(x) = super::domain::log_of_exp(self) {
                return x;
            }
        }
        app(Func::Log, vec![self.clone()])
    }

    pub fn tanh(&self) -> Expr {
        if self.is_zero() {
            return Expr::zero();
        }
        app(Func::Tanh, vec![self.clone()])
    }

    /// `round`, `floor` or `ceil` of the expression: folded on a constant,
    /// the identity on a value that already is an integer (a truncation,
    /// an integer division, another rounding), an atom otherwise.
    pub fn integral(&self, func: Func) -> Expr {
        if let Some(c) = self.as_constant() {
            let rounded = match func {
                Func::Round => c.round_half_away(),
                Func::Floor => c.floor(),
                _ => c.ceil(),
            };
            return Expr::constant(rounded);
        }
        let integral = matches!(
            self.as_atom().and_then(Atom::as_app),
            Some((
                Func::Trunc
                    | Func::TruncDiv
                    | Func::Rem
                    | Func::Wrap { .. }
                    | Func::Round
                    | Func::Floor
                    | Func::Ceil,
                _
            ))
        );
        if integral {
            return self.clone();
        }
        app(func, vec![self.clone()])
    }

    pub fn sin(&self) -> Expr {
        if self.is_zero() {
            return Expr::zero();
        }
        app(Func::Sin, vec![self.clone()])
    }

    pub fn cos(&self) -> Expr {
        if self.is_zero() {
            return Expr::constant(Rat::ONE);
        }
        app(Func::Cos, vec![self.clone()])
    }

    pub fn cosh(&self) -> Expr {
        if self.is_zero() {
            return Expr::constant(Rat::ONE);
        }
        app(Func::Cosh, vec![self.clone()])
    }

    pub fn sinh(&self) -> Expr {
        if self.is_zero() {
            return Expr::zero();
        }
        app(Func::Sinh, vec![self.clone()])
    }

    pub fn abs(&self) -> Expr {
        if let Some(c) = self.as_constant() {
            return Expr::constant(c.abs());
        }
        match split_leading(self) {
            Some((c, rest)) => app(Func::Abs, vec![rest]).scale(&c.abs()),
            None => Expr::zero(),
        }
    }

    /// `pow(self, exponent)` for a real exponent: an integer constant
    /// exponent becomes a polynomial power, anything else stays opaque.
    pub fn pow_real(&self, exponent: &Expr) -> Expr {
        // Expanding huge powers of sums would exhaust memory; those stay opaque.
        const EXPAND_LIMIT: i64 = 64;
        if let Some(n) = exponent
            .as_constant()
            .and_then(|c| c.to_i64())
            .filter(|n| n.abs() <= EXPAND_LIMIT)
            .and_then(|n| i32::try_from(n).ok())
        {
            if let Ok(p) = self.pow(n) {
                return p;
            }
        }
        if exponent.is_one() {
            return self.clone();
        }
        // A half-integer power is a power of the square root over the
        // reals (both sides defined for `self >= 0` only): `pow(x, 0.5)`
        // and `sqrt(x)` must meet as one atom.
        if let Some(n) = exponent
            .as_constant()
            .map(|c| &c * &Rat::int(2))
            .and_then(|c| c.to_i64())
            .filter(|n| n.abs() <= EXPAND_LIMIT && n % 2 != 0)
            .and_then(|n| i32::try_from(n).ok())
        {
            if let Ok(p) = self.sqrt().pow(n) {
                return p;
            }
        }
        app(Func::Pow, vec![self.clone(), exponent.clone()])
    }

    fn extremum(func: Func, args: &[Expr]) -> Expr {
        let mut flat: Vec<Expr> = Vec::with_capacity(args.len());
        let mut best_constant: Option<Rat> = None;
        let mut pending: Vec<Expr> = args.to_vec();
        while let Some(arg) = pending.pop() {
            if let Some(c) = arg.as_constant() {
                best_constant = Some(match best_constant {
                    Some(b) if (func == Func::Max) == (b >= c) => b,
                    _ => c,
                });
                continue;
            }
            match arg
                .as_atom()
                .and_then(|a| a.as_app().map(|(f, xs)| (f, xs.to_vec())))
            {
                Some((f, inner)) if f == func => pending.extend(inner),
                _ => flat.push(arg),
            }
        }
        if let Some(c) = best_constant {
            flat.push(Expr::constant(c));
        }
        flat.sort();
        flat.dedup();
        match flat.len() {
            0 => Expr::zero(),
            1 => flat.swap_remove(0),
            _ => app(func, flat),
        }
    }

    /// `max` of any number of arguments (at least one).
    pub fn max_of(args: &[Expr]) -> Expr {
        Expr::extremum(Func::Max, args)
    }

    /// `min` of any number of arguments (at least one).
    pub fn min_of(args: &[Expr]) -> Expr {
        Expr::extremum(Func::Min, args)
    }

    /// `lt0(d)`: 1 when `d < 0`, else 0.
    pub fn lt0(d: &Expr) -> Expr {
        if let Some(c) = d.as_constant() {
            return from_bool(c.is_negative());
        }
        let lead = d.leading_coeff().abs();
        match lead.recip() {
            Some(inv) => app(Func::Lt0, vec![d.scale(&inv)]),
            None => Expr::zero(),
        }
    }

    /// `eq0(d)`: 1 when `d = 0`, else 0.
    pub fn eq0(d: &Expr) -> Expr {
        if let Some(c) = d.as_constant() {
            return from_bool(c.is_zero());
        }
        match split_leading(d) {
            Some((_, rest)) => app(Func::Eq0, vec![rest]),
            None => Expr::one(),
        }
    }

    /// C `a < b` (0 or 1).
    pub fn lt(a: &Expr, b: &Expr) -> Expr {
        Expr::lt0(&a.sub(b))
    }

    /// C `a <= b`.
    pub fn le(a: &Expr, b: &Expr) -> Expr {
        Expr::one().sub(&Expr::lt0(&b.sub(a)))
    }

    /// C `a > b`.
    pub fn gt(a: &Expr, b: &Expr) -> Expr {
        Expr::lt(b, a)
    }

    /// C `a >= b`.
    pub fn ge(a: &Expr, b: &Expr) -> Expr {
        Expr::le(b, a)
    }

    /// C `a == b`.
    pub fn equals(a: &Expr, b: &Expr) -> Expr {
        Expr::eq0(&a.sub(b))
    }

    /// C `a != b`.
    pub fn not_equals(a: &Expr, b: &Expr) -> Expr {
        Expr::one().sub(&Expr::equals(a, b))
    }

    /// Whether the value is known to be 0 or 1: a 0/1 constant, a product
    /// of predicates, or one minus such a product.
    pub fn is_boolean(&self) -> bool {
        let is_pred_product = |t: &super::expr::Term| {
            t.mono
                .factors()
                .iter()
                .all(|(a, e)| *e > 0 && a.as_app().is_some_and(|(f, _)| f.is_predicate()))
        };
        match self.terms() {
            [] => true,
            [t] => t.coeff.is_one() && is_pred_product(t),
            [one, t] => {
                one.mono.is_one()
                    && one.coeff.is_one()
                    && t.coeff == Rat::MINUS_ONE
                    && is_pred_product(t)
            }
            _ => false,
        }
    }

    /// C truthiness as a 0/1 value: `x` itself when already boolean, else `x ≠ 0`.
    pub fn truth(&self) -> Expr {
        if self.is_boolean() {
            self.clone()
        } else {
            Expr::one().sub(&Expr::eq0(self))
        }
    }

    /// C `!x`.
    pub fn logical_not(&self) -> Expr {
        Expr::one().sub(&self.truth())
    }

    /// C `a && b` (no short-circuit effects exist in expressions here).
    pub fn logical_and(a: &Expr, b: &Expr) -> Expr {
        a.truth().mul(&b.truth())
    }

    /// C `a || b`.
    pub fn logical_or(a: &Expr, b: &Expr) -> Expr {
        let (x, y) = (a.truth(), b.truth());
        x.add(&y).sub(&x.mul(&y))
    }

    /// `cond ? then_value : else_value` with C's test `cond ≠ 0`.
    pub fn select(cond: &Expr, then_value: &Expr, else_value: &Expr) -> Expr {
        if then_value == else_value {
            return then_value.clone();
        }
        if let Some(c) = cond.as_constant() {
            return if c.is_zero() {
                else_value.clone()
            } else {
                then_value.clone()
            };
        }
        let Some((_, cond)) = split_leading(cond) else {
            return else_value.clone();
        };
        // `eq0(d) ≠ 0` is `d = 0`: test `d` with swapped branches.
        if let Some((Func::Eq0, [d])) = cond.as_atom().and_then(Atom::as_app) {
            return Expr::select(d, else_value, then_value);
        }
        // `p - 1 ≠ 0` for a predicate `p` is `p = 0`.
        let plus_one = cond.add(&Expr::one());
        if let Some((f, _)) = plus_one.as_atom().and_then(Atom::as_app) {
            if f.is_predicate() {
                return Expr::select(&plus_one, else_value, then_value);
            }
        }
        if removable_guard(&cond, then_value, else_value) {
            return then_value.clone();
        }
        app(
            Func::Select,
            vec![cond, then_value.clone(), else_value.clone()],
        )
    }

    /// C integer division `a / b`, truncating toward zero.
    pub fn trunc_div(a: &Expr, b: &Expr) -> Expr {
        if let (Some(x), Some(y)) = (a.as_constant(), b.as_constant()) {
            if let Some(q) = x.trunc_div(&y) {
                return Expr::constant(q);
            }
        }
        if b.is_one() || a.is_zero() && !b.is_zero() {
            return a.clone();
        }
        if b.as_constant() == Some(Rat::MINUS_ONE) {
            return a.neg();
        }
        app(Func::TruncDiv, vec![a.clone(), b.clone()])
    }

    /// C integer remainder `a % b` (sign of `a`).
    pub fn rem(a: &Expr, b: &Expr) -> Expr {
        if let (Some(x), Some(y)) = (a.as_constant(), b.as_constant()) {
            if let Some(r) = x.c_rem(&y) {
                return Expr::constant(r);
            }
        }
        if matches!(b.as_constant(), Some(c) if c.is_one() || c == Rat::MINUS_ONE) {
            return Expr::zero();
        }
        app(Func::Rem, vec![a.clone(), b.clone()])
    }

    /// C conversion of a real to an integer (truncation toward zero).
    pub fn trunc(&self) -> Expr {
        if let Some(c) = self.as_constant() {
            return Expr::constant(c.trunc());
        }
        if let Some((Func::Trunc | Func::TruncDiv | Func::Rem | Func::Wrap { .. }, _)) =
            self.as_atom().and_then(Atom::as_app)
        {
            return self.clone();
        }
        app(Func::Trunc, vec![self.clone()])
    }

    /// C conversion of an integer to a `bits`-wide integer type.
    pub fn wrap(&self, bits: u8, signed: bool) -> Expr {
        if let Some(c) = self.as_constant() {
            if let Some(w) = c.wrap_int(bits as u32, signed) {
                return Expr::constant(w);
            }
        }
        let func = Func::Wrap { bits, signed };
        if let Some((inner, _)) = self.as_atom().and_then(Atom::as_app) {
            if inner == func || inner.is_predicate() {
                return self.clone();
            }
        }
        app(func, vec![self.clone()])
    }
}
