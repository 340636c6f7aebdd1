//! Exact rational numbers with a machine-word fast path.
//!
//! Almost every coefficient in a spec is a small integer or a small fraction
//! (`1/n`), so [`Rat`] keeps numerator and denominator in `i64` and does the
//! arithmetic in `i128`, reducing afterwards; only when a result does not fit
//! does it fall back to `num_rational::BigRational`. The representation is
//! canonical (reduced, positive denominator, `Big` only when `Small` cannot
//! hold the value), so derived equality and hashing are value equality.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// An exact rational number.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Rat {
    /// `num / den`, reduced, `den > 0`.
    Small(i64, i64),
    /// A value that does not fit [`Rat::Small`].
    Big(Arc<BigRational>),
}

fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

impl Rat {
    pub const ZERO: Rat = Rat::Small(0, 1);
    pub const ONE: Rat = Rat::Small(1, 1);
    pub const MINUS_ONE: Rat = Rat::Small(-1, 1);

    pub fn int(n: i64) -> Rat {
        Rat::Small(n, 1)
    }

    /// `num / den`; `None` when `den` is zero.
    pub fn new(num: i64, den: i64) -> Option<Rat> {
        (den != 0).then(|| Rat::from_i128(num as i128, den as i128))
    }

    /// Reduces `num / den` (den ≠ 0) into canonical form.
    fn from_i128(num: i128, den: i128) -> Rat {
        debug_assert!(den != 0);
        let g = gcd_u128(num.unsigned_abs(), den.unsigned_abs()).max(1);
        // Dividing by g (≥ 1) cannot overflow except for i128::MIN / 1, which
        // the products of two i64 never reach.
        let (mut n, mut d) = (num / g as i128, den / g as i128);
        if d < 0 {
            n = -n;
            d = -d;
        }
        match (i64::try_from(n), i64::try_from(d)) {
            (Ok(n), Ok(d)) => Rat::Small(n, d),
            _ => Rat::Big(Arc::new(BigRational::new_raw(
                BigInt::from(n),
                BigInt::from(d),
            ))),
        }
    }

    /// Canonicalises a big rational, demoting it when it fits.
    pub fn from_big(value: BigRational) -> Rat {
        let value = value.reduced();
        match (value.numer().to_i64(), value.denom().to_i64()) {
            (Some(n), Some(d)) => Rat::Small(n, d),
            _ => Rat::Big(Arc::new(value)),
        }
    }

    pub fn to_big(&self) -> BigRational {
        match self {
            Rat::Small(n, d) => BigRational::new_raw(BigInt::from(*n), BigInt::from(*d)),
            Rat::Big(b) => (**b).clone(),
        }
    }

    /// The exact value of a finite `f64` (every finite double is a dyadic rational).
    pub fn from_f64(value: f64) -> Option<Rat> {
        BigRational::from_float(value).map(Rat::from_big)
    }

    /// Parses a C floating literal such as `0.1f`, `1e-3`, `2.`, `.5L` exactly
    /// as the decimal number it spells. Hexadecimal floats are not handled.
    pub fn parse_decimal(text: &str) -> Option<Rat> {
        let t = text.trim().trim_end_matches(['f', 'F', 'l', 'L']);
        if t.is_empty() || t.starts_with("0x") || t.starts_with("0X") {
            return None;
        }
        let (mantissa, exponent) = match t.find(['e', 'E']) {
            Some(pos) => (&t[..pos], t[pos + 1..].parse::<i32>().ok()?),
            None => (t, 0),
        };
        let (int_part, frac_part) = match mantissa.find('.') {
            Some(pos) => (&mantissa[..pos], &mantissa[pos + 1..]),
            None => (mantissa, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let digits = format!("{int_part}{frac_part}");
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mantissa: BigInt = digits.parse().ok()?;
        let scale = exponent.checked_sub(i32::try_from(frac_part.len()).ok()?)?;
        if scale.unsigned_abs() > 4096 {
            return None;
        }
        let ten_pow = num_traits::pow(BigInt::from(10), scale.unsigned_abs() as usize);
        let value = if scale >= 0 {
            BigRational::from_integer(mantissa * ten_pow)
        } else {
            BigRational::new(mantissa, ten_pow)
        };
        Some(Rat::from_big(value))
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, Rat::Small(0, _))
    }

    pub fn is_one(&self) -> bool {
        matches!(self, Rat::Small(1, 1))
    }

    pub fn is_integer(&self) -> bool {
        match self {
            Rat::Small(_, d) => *d == 1,
            Rat::Big(b) => b.is_integer(),
        }
    }

    pub fn is_negative(&self) -> bool {
        match self {
            Rat::Small(n, _) => *n < 0,
            Rat::Big(b) => b.is_negative(),
        }
    }

    /// The value as an `i64` when it is an integer that fits.
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Rat::Small(n, 1) => Some(*n),
            _ => None,
        }
    }

    /// The value as an integer (any size) when it is one.
    pub fn to_bigint(&self) -> Option<BigInt> {
        match self {
            Rat::Small(n, 1) => Some(BigInt::from(*n)),
            Rat::Small(..) => None,
            Rat::Big(b) => b.is_integer().then(|| b.to_integer()),
        }
    }

    pub fn to_f64(&self) -> f64 {
        match self {
            Rat::Small(n, d) => *n as f64 / *d as f64,
            Rat::Big(b) => b.to_f64().unwrap_or(f64::NAN),
        }
    }

    pub fn abs(&self) -> Rat {
        if self.is_negative() {
            -self
        } else {
            self.clone()
        }
    }

    /// `1 / self`; `None` for zero.
    pub fn recip(&self) -> Option<Rat> {
        match self {
            Rat::Small(0, _) => None,
            Rat::Small(n, d) => Some(Rat::from_i128(*d as i128, *n as i128)),
            Rat::Big(b) => Some(Rat::from_big(b.recip())),
        }
    }

    /// `self / other`; `None` when `other` is zero.
    pub fn checked_div(&self, other: &Rat) -> Option<Rat> {
        Some(self * &other.recip()?)
    }

    /// `self^exp`; `None` for a negative power of zero.
    pub fn pow(&self, exp: i32) -> Option<Rat> {
        let base = if exp < 0 { self.recip()? } else { self.clone() };
        let mut result = Rat::ONE;
        let mut square = base;
        let mut e = exp.unsigned_abs();
        while e > 0 {
            if e & 1 == 1 {
                result = &result * &square;
            }
            e >>= 1;
            if e > 0 {
                square = &square * &square;
            }
        }
        Some(result)
    }

    /// Integer part, rounding toward zero (C's float-to-int conversion).
    pub fn trunc(&self) -> Rat {
        match self {
            Rat::Small(n, d) => Rat::int(n / d),
            Rat::Big(b) => Rat::from_big(b.trunc()),
        }
    }

    /// The greatest integer at or below.
    pub fn floor(&self) -> Rat {
        Rat::from_big(self.to_big().floor())
    }

    /// The least integer at or above.
    pub fn ceil(&self) -> Rat {
        Rat::from_big(self.to_big().ceil())
    }

    /// The nearest integer, halves away from zero (C's `round`).
    pub fn round_half_away(&self) -> Rat {
        Rat::from_big(self.to_big().round())
    }

    /// The exact square root when both numerator and denominator are perfect squares.
    pub fn exact_sqrt(&self) -> Option<Rat> {
        if self.is_negative() {
            return None;
        }
        let big = self.to_big();
        let (n, d) = (big.numer().sqrt(), big.denom().sqrt());
        (&n * &n == *big.numer() && &d * &d == *big.denom())
            .then(|| Rat::from_big(BigRational::new(n, d)))
    }

    fn slow<F: FnOnce(BigRational, BigRational) -> BigRational>(a: &Rat, b: &Rat, op: F) -> Rat {
        Rat::from_big(op(a.to_big(), b.to_big()))
    }

    /// C truncating division of two integers; `None` unless both are integers
    /// and the divisor is non-zero.
    pub fn trunc_div(&self, other: &Rat) -> Option<Rat> {
        let (a, b) = (self.to_bigint()?, other.to_bigint()?);
        if b.is_zero() {
            return None;
        }
        Some(Rat::from_big(BigRational::from_integer(a / b)))
    }

    /// C remainder (sign of the dividend) of two integers.
    pub fn c_rem(&self, other: &Rat) -> Option<Rat> {
        let (a, b) = (self.to_bigint()?, other.to_bigint()?);
        if b.is_zero() {
            return None;
        }
        Some(Rat::from_big(BigRational::from_integer(a % b)))
    }

    /// Reduces an integer into the range of a `bits`-wide C integer type
    /// (modulo 2^bits, two's complement when `signed`).
    pub fn wrap_int(&self, bits: u32, signed: bool) -> Option<Rat> {
        let value = self.to_bigint()?;
        let modulus = BigInt::one() << bits;
        let mut reduced = value.mod_floor(&modulus);
        if signed && reduced >= (&modulus >> 1usize) {
            reduced -= &modulus;
        }
        Some(Rat::from_big(BigRational::from_integer(reduced)))
    }
}

impl From<i64> for Rat {
    fn from(n: i64) -> Rat {
        Rat::int(n)
    }
}

impl std::ops::Add for &Rat {
    type Output = Rat;
    fn add(self, other: &Rat) -> Rat {
        match (self, other) {
            (Rat::Small(a, b), Rat::Small(c, d)) => {
                if *b == 1 && *d == 1 {
                    if let Some(s) = a.checked_add(*c) {
                        return Rat::Small(s, 1);
                    }
                }
                let (a, b, c, d) = (*a as i128, *b as i128, *c as i128, *d as i128);
                Rat::from_i128(a * d + c * b, b * d)
            }
            _ => Rat::slow(self, other, |x, y| x + y),
        }
    }
}

impl std::ops::Sub for &Rat {
    type Output = Rat;
    fn sub(self, other: &Rat) -> Rat {
        self + &-other
    }
}

impl std::ops::Mul for &Rat {
    type Output = Rat;
    fn mul(self, other: &Rat) -> Rat {
        match (self, other) {
            (Rat::Small(a, b), Rat::Small(c, d)) => {
                if *b == 1 && *d == 1 {
                    if let Some(p) = a.checked_mul(*c) {
                        return Rat::Small(p, 1);
                    }
                }
                let (a, b, c, d) = (*a as i128, *b as i128, *c as i128, *d as i128);
                Rat::from_i128(a * c, b * d)
            }
            _ => Rat::slow(self, other, |x, y| x * y),
        }
    }
}

impl std::ops::Neg for &Rat {
    type Output = Rat;
    fn neg(self) -> Rat {
        match self {
            Rat::Small(n, d) => match n.checked_neg() {
                Some(m) => Rat::Small(m, *d),
                None => Rat::from_big(-self.to_big()),
            },
            Rat::Big(b) => Rat::from_big(-(**b).clone()),
        }
    }
}

impl Ord for Rat {
    fn cmp(&self, other: &Rat) -> Ordering {
        match (self, other) {
            (Rat::Small(a, b), Rat::Small(c, d)) => {
                (*a as i128 * *d as i128).cmp(&(*c as i128 * *b as i128))
            }
            _ => self.to_big().cmp(&other.to_big()),
        }
    }
}

impl PartialOrd for Rat {
    fn partial_cmp(&self, other: &Rat) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Rat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rat::Small(n, 1) => write!(f, "{n}"),
            Rat::Small(n, d) => write!(f, "{n}/{d}"),
            Rat::Big(b) => write!(f, "{b}"),
        }
    }
}

impl fmt::Debug for Rat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_reduces_and_overflows_into_big_integers() {
        let third = Rat::new(1, 3).unwrap();
        let sixth = Rat::new(1, 6).unwrap();
        assert_eq!(&third + &sixth, Rat::new(1, 2).unwrap());
        let big = Rat::int(i64::MAX);
        let square = &big * &big;
        assert!(matches!(square, Rat::Big(_)));
        // Dividing back demotes to the small form again.
        assert_eq!(square.checked_div(&big).unwrap(), big);
        assert_eq!(
            -&Rat::int(i64::MIN),
            Rat::from_big(-Rat::int(i64::MIN).to_big())
        );
    }

    #[test]
    fn c_integer_semantics_truncate_toward_zero() {
        let (a, b) = (Rat::int(-7), Rat::int(2));
        assert_eq!(a.trunc_div(&b), Some(Rat::int(-3)));
        assert_eq!(a.c_rem(&b), Some(Rat::int(-1)));
        assert_eq!(a.trunc_div(&Rat::ZERO), None);
        assert_eq!(Rat::int(300).wrap_int(8, false), Some(Rat::int(44)));
        assert_eq!(Rat::int(200).wrap_int(8, true), Some(Rat::int(-56)));
        assert_eq!(Rat::new(-7, 2).unwrap().trunc(), Rat::int(-3));
    }

    #[test]
    fn decimal_literals_parse_exactly() {
        assert_eq!(Rat::parse_decimal("0.1f"), Rat::new(1, 10));
        assert_eq!(Rat::parse_decimal("1e-3"), Rat::new(1, 1000));
        assert_eq!(Rat::parse_decimal("2."), Some(Rat::int(2)));
        assert_eq!(Rat::parse_decimal("1.5E2"), Some(Rat::int(150)));
        assert_eq!(Rat::parse_decimal("0x1p3"), None);
        assert_eq!(Rat::new(9, 4).unwrap().exact_sqrt(), Rat::new(3, 2));
        assert_eq!(Rat::int(2).exact_sqrt(), None);
    }
}
