//! Z3 values of both sides: mathematical integers (C integer semantics,
//! exact), reals (the arithmetic float kernels are proved in) and booleans,
//! with the conversions and operations both encoders share.

use z3::ast::{Bool, Int, Real};

use super::Unsupported;

/// One scalar value.
#[derive(Clone, Debug)]
pub(crate) enum V {
    I(Int),
    R(Real),
    B(Bool),
}

impl V {
    pub fn int(v: i64) -> V {
        V::I(Int::from_i64(v))
    }

    pub fn as_int(&self) -> Int {
        match self {
            V::I(i) => i.clone(),
            V::R(r) => trunc_real(r),
            V::B(b) => b.ite(&Int::from_i64(1), &Int::from_i64(0)),
        }
    }

    pub fn as_real(&self) -> Real {
        match self {
            V::I(i) => Real::from_int(i),
            V::R(r) => r.clone(),
            V::B(b) => b.ite(&real_num(1), &real_num(0)),
        }
    }

    pub fn as_bool(&self) -> Bool {
        match self {
            V::I(i) => i.eq(Int::from_i64(0)).not(),
            V::R(r) => r.eq(real_num(0)).not(),
            V::B(b) => b.clone(),
        }
    }

    /// Equality of two values, comparing in the richer sort.
    pub fn equal(&self, other: &V) -> Bool {
        match (self, other) {
            (V::B(a), V::B(b)) => a.eq(b),
            (V::I(a), V::I(b)) => a.eq(b),
            (V::B(_), V::I(_)) | (V::I(_), V::B(_)) => self.as_int().eq(other.as_int()),
            _ => self.as_real().eq(other.as_real()),
        }
    }

    pub fn ite(cond: &Bool, a: &V, b: &V) -> V {
        match (a, b) {
            (V::B(x), V::B(y)) => V::B(cond.ite(x, y)),
            (V::I(x), V::I(y)) => V::I(cond.ite(x, y)),
            (V::B(_), V::I(_)) | (V::I(_), V::B(_)) => V::I(cond.ite(&a.as_int(), &b.as_int())),
            _ => V::R(cond.ite(&a.as_real(), &b.as_real())),
        }
    }

    pub fn is_real(&self) -> bool {
        matches!(self, V::R(_))
    }
}

/// Float to integer conversion in C: truncation toward zero.
pub(crate) fn trunc_real(r: &Real) -> Int {
    let zero = real_num(0);
    r.ge(&zero).ite(&r.to_int(), &-(-r.clone()).to_int())
}

/// C `/` on integers: the quotient truncated toward zero.
pub(crate) fn trunc_div(a: &Int, b: &Int) -> Int {
    let zero = Int::from_i64(0);
    let abs = |x: &Int| x.ge(&zero).ite(x, &-x.clone());
    let q = abs(a).div(abs(b));
    let same_sign = a.ge(&zero).iff(b.ge(&zero));
    same_sign.ite(&q, &-q.clone())
}

/// C `%` on integers: the sign of the dividend.
pub(crate) fn trunc_rem(a: &Int, b: &Int) -> Int {
    a.clone() - b.clone() * trunc_div(a, b)
}

/// Wrap-around to a fixed-width integer type.
pub(crate) fn wrap(a: &Int, bits: u32, signed: bool) -> Int {
    let modulus = Int::from_u64(1u64 << bits);
    if signed {
        let half = Int::from_u64(1u64 << (bits - 1));
        (a.clone() + half.clone()).modulo(&modulus) - half
    } else {
        a.modulo(&modulus)
    }
}

/// The exact rational value of a finite double as a Z3 real.
pub(crate) fn real_literal(v: f64) -> Result<Real, Unsupported> {
    if !v.is_finite() {
        return Err(Unsupported(format!("the non-finite constant {v}")));
    }
    // v = mantissa * 2^exp exactly; scale down by powers of two until the
    // mantissa is an integer.
    let mut num = v;
    let mut den: u128 = 1;
    while num.fract() != 0.0 && den < (1u128 << 100) {
        num *= 2.0;
        den *= 2;
    }
    if num.fract() != 0.0 || num.abs() > 1e30 {
        return Err(Unsupported(format!(
            "the constant {v} has no short exact form"
        )));
    }
    Real::from_rational_str(&format!("{}", num as i128), &den.to_string())
        .ok_or_else(|| Unsupported(format!("Z3 rejected the constant {v}")))
}

/// `max`/`min` as a select, identical on both sides.
pub(crate) fn max_v(a: &V, b: &V) -> V {
    V::ite(&ge(a, b), a, b)
}

pub(crate) fn min_v(a: &V, b: &V) -> V {
    V::ite(&ge(b, a), a, b)
}

pub(crate) fn ge(a: &V, b: &V) -> Bool {
    if a.is_real() || b.is_real() {
        a.as_real().ge(b.as_real())
    } else {
        a.as_int().ge(b.as_int())
    }
}

pub(crate) fn lt(a: &V, b: &V) -> Bool {
    ge(a, b).not()
}

pub(crate) fn add(a: &V, b: &V) -> V {
    if a.is_real() || b.is_real() {
        V::R(a.as_real() + b.as_real())
    } else {
        V::I(a.as_int() + b.as_int())
    }
}

pub(crate) fn sub(a: &V, b: &V) -> V {
    if a.is_real() || b.is_real() {
        V::R(a.as_real() - b.as_real())
    } else {
        V::I(a.as_int() - b.as_int())
    }
}

pub(crate) fn mul(a: &V, b: &V) -> V {
    if a.is_real() || b.is_real() {
        V::R(a.as_real() * b.as_real())
    } else {
        V::I(a.as_int() * b.as_int())
    }
}

/// A dim (polynomial over sizes, rendered by the targets crate) as a Z3
/// integer, each size read through `size`.
pub(crate) fn dim_term(
    dim: &tenslift_targets::Dim,
    size: &dyn Fn(&str) -> Option<Int>,
) -> Result<Int, Unsupported> {
    let text = dim.render(&|s| s.to_string(), "//");
    let (poly, divisor) = match text.rsplit_once(") // ") {
        Some((p, d)) => (
            p.trim_start_matches('('),
            d.trim()
                .parse::<i64>()
                .map_err(|_| Unsupported(format!("dim {text}")))?,
        ),
        None => (text.as_str(), 1),
    };
    let mut total = Int::from_i64(0);
    let mut sign = 1i64;
    for token in poly.split(' ') {
        match token {
            "+" => sign = 1,
            "-" => sign = -1,
            "" => {}
            term => {
                let (neg, term) = match term.strip_prefix('-') {
                    Some(t) => (-1, t),
                    None => (1, term),
                };
                let mut product = Int::from_i64(sign * neg);
                for factor in term.split('*') {
                    product = match factor.parse::<i64>() {
                        Ok(c) => product * Int::from_i64(c),
                        Err(_) => {
                            product
                                * size(factor).ok_or_else(|| {
                                    Unsupported(format!("unknown size `{factor}` in dim {text}"))
                                })?
                        }
                    };
                }
                total += product;
            }
        }
    }
    Ok(if divisor == 1 {
        total
    } else {
        total.div(Int::from_i64(divisor))
    })
}

/// A small integral real. (`Real::from_rational` calls a function newer
/// than Debian's libz3 4.8.12, so the numeral goes through an integer.)
pub(crate) fn real_num(n: i32) -> Real {
    Real::from_int(&Int::from_i64(i64::from(n)))
}
