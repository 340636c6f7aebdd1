//! The value domain both interpreters run over. The loop-IR interpreter
//! (`kernel_eval`) and the TensIR interpreter (`program_eval`) are written
//! once against [`Domain`]; the symbolic domain (`symbolic`) builds Z3 terms,
//! the concrete domain (`concrete`) computes numbers, so the same code that
//! produces a proof obligation also re-runs a counterexample.
//!
//! Arithmetic primitives here are exact (mathematical integers, reals).
//! Where C and TensIR disagree on what happens at the edges (signed overflow
//! is undefined in C but wraps in TensIR), the interpreters decide, using
//! [`Domain::assume`] for C's preconditions and [`Domain::wrap`] for TensIR.
//!
//! [`value`] is verify's one Z3 encoding of C's values and operations
//! (truncating division and conversion, wrap-around, exact literals): the
//! symbolic domain of the bounded check builds its terms with it, and the
//! unbounded prover computes over its [`value::V`].

use tenslift_frontend::ir::ScalarType;
use tenslift_targets::DType;

use crate::error::Abort;

/// A fixed-width integer type, for wrap-around and range facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IntTy {
    pub bits: u32,
    pub signed: bool,
}

impl IntTy {
    pub fn min(self) -> i128 {
        if self.signed {
            -(1i128 << (self.bits - 1))
        } else {
            0
        }
    }

    pub fn max(self) -> i128 {
        if self.signed {
            (1i128 << (self.bits - 1)) - 1
        } else {
            (1i128 << self.bits) - 1
        }
    }

    /// The C type's integer description; `None` for floats.
    pub fn of_c(ty: ScalarType) -> Option<IntTy> {
        (!ty.is_float()).then(|| IntTy {
            bits: ty.bits(),
            signed: ty.is_signed(),
        })
    }

    /// The TensIR type's integer description; `None` for floats.
    pub fn of_tensir(ty: DType) -> Option<IntTy> {
        (!ty.is_float()).then(|| IntTy {
            bits: ty.bits(),
            signed: ty.is_signed_int(),
        })
    }
}

/// What kind of element an input constant is: which sort, and for integers
/// the range its type allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ElemKind {
    Int(IntTy),
    Real,
}

impl ElemKind {
    pub fn of_c(ty: ScalarType) -> ElemKind {
        IntTy::of_c(ty).map_or(ElemKind::Real, ElemKind::Int)
    }

    pub fn of_tensir(ty: DType) -> ElemKind {
        IntTy::of_tensir(ty).map_or(ElemKind::Real, ElemKind::Int)
    }
}

/// Comparisons; results are the integers 0 and 1, as in C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// Functions the symbolic domain treats as uninterpreted (the same symbol
/// on both sides, so structurally equal uses prove and nothing else does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Opaque {
    Sqrt,
    Exp,
    Log,
    Tanh,
    Pow,
    Round,
    Floor,
    Ceil,
    Sin,
    Cos,
    Cosh,
    Sinh,
}

impl Opaque {
    pub fn name(self) -> &'static str {
        match self {
            Opaque::Sqrt => "sqrt",
            Opaque::Exp => "exp",
            Opaque::Log => "log",
            Opaque::Tanh => "tanh",
            Opaque::Pow => "pow",
            Opaque::Round => "round",
            Opaque::Floor => "floor",
            Opaque::Ceil => "ceil",
            Opaque::Sin => "sin",
            Opaque::Cos => "cos",
            Opaque::Cosh => "cosh",
            Opaque::Sinh => "sinh",
        }
    }
}

/// Values and the operations both interpreters need. Integer and boolean
/// types are integers (booleans 0 or 1), float types are reals.
pub(crate) trait Domain {
    type V: Clone;

    /// A fresh input (array element, scalar argument, uninitialised local)
    /// named so that a counterexample can be read and replayed.
    fn input(&mut self, name: &str, kind: ElemKind) -> Result<Self::V, Abort>;
    fn int(&mut self, v: i128) -> Self::V;
    /// The exact value of a finite double.
    fn real(&mut self, v: f64) -> Result<Self::V, Abort>;
    /// A float literal of the C or the program (`single`: of type f32):
    /// in reals, the decimal it is written as (see [`value::decimal_real`]);
    /// concretely, its value.
    fn literal(&mut self, v: f64, _single: bool) -> Result<Self::V, Abort> {
        self.real(v)
    }

    fn add(&mut self, a: &Self::V, b: &Self::V) -> Self::V;
    fn sub(&mut self, a: &Self::V, b: &Self::V) -> Self::V;
    fn mul(&mut self, a: &Self::V, b: &Self::V) -> Self::V;
    fn neg(&mut self, a: &Self::V) -> Self::V;
    /// Real division (the caller deals with a zero divisor).
    fn div_real(&mut self, a: &Self::V, b: &Self::V) -> Self::V;
    /// Integer quotient truncated toward zero (C `/`); the caller guarantees
    /// or assumes a non-zero divisor.
    fn trunc_div(&mut self, a: &Self::V, b: &Self::V) -> Self::V;
    /// Remainder with the sign of the dividend (C `%`).
    fn trunc_rem(&mut self, a: &Self::V, b: &Self::V) -> Self::V;
    fn cmp(&mut self, op: Cmp, a: &Self::V, b: &Self::V) -> Self::V;
    /// 1 when `a` is non-zero, else 0.
    fn truth(&mut self, a: &Self::V) -> Self::V;
    /// `c ? t : e` with C's truth (non-zero is true).
    fn select(&mut self, c: &Self::V, t: &Self::V, e: &Self::V) -> Self::V;
    fn to_real(&mut self, a: &Self::V) -> Self::V;
    /// Truncation toward zero of a real to an integer.
    fn trunc_to_int(&mut self, a: &Self::V) -> Self::V;
    /// Two's complement wrap-around into `ty` (C conversion to an integer
    /// type, TensIR integer arithmetic).
    fn wrap(&mut self, a: &Self::V, ty: IntTy) -> Self::V;
    /// 1 when `a` lies within `ty`'s range, else 0.
    fn fits(&mut self, a: &Self::V, ty: IntTy) -> Self::V;
    /// Records that `a` lies within `ty`'s range because a precondition
    /// already assumed it (lets later wraps vanish).
    fn known_within(&mut self, a: &Self::V, ty: IntTy) -> Self::V;
    /// Rounds to single precision (concrete f32 arithmetic); exact reals
    /// ignore it.
    fn round_single(&mut self, a: &Self::V) -> Self::V;
    fn apply(&mut self, f: Opaque, args: &[Self::V]) -> Result<Self::V, Abort>;

    /// A precondition of the C program (no division by zero, no signed
    /// overflow) holding on the current path.
    fn assume(&mut self, cond: &Self::V, why: &str) -> Result<(), Abort>;
    /// A condition the TensIR program needs to run (its divisors are not
    /// zero); a violation is a failure of the program.
    fn require(&mut self, cond: &Self::V, what: String) -> Result<(), Abort>;
    /// The truth of a condition when it is known without case splitting.
    fn decide(&mut self, c: &Self::V) -> Option<bool>;
    /// Enters a branch taken when `cond` is non-zero (`taken`) or zero.
    fn push_path(&mut self, cond: &Self::V, taken: bool);
    fn pop_path(&mut self);
    /// Whether two values are certainly the same (structurally).
    fn same(&self, a: &Self::V, b: &Self::V) -> bool;
}

/// The Z3 encoding of C values: mathematical integers (C integer semantics,
/// exact), reals (the arithmetic float kernels are proved in) and booleans,
/// with C's conversions and operations over them. Both Z3 paths use these
/// terms, so that they cannot disagree on what C computes.
pub(crate) mod value {
    use num_bigint::BigInt;
    use z3::ast::{Bool, Int, Real};

    use super::IntTy;

    /// One scalar value, as the unbounded prover computes it.
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
                V::I(i) => int_to_real(i),
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

    /// An integer term as a real, the conversion pushed through `+`, `-`,
    /// `*` and `ite` down to the leaves: exact, since C's 32/64-bit
    /// integer arithmetic is exact in this encoding (narrow types wrap
    /// with `mod`, a leaf), and it keeps Z3 in one sort, where it proves
    /// `(float)(a * b) = (float)a * (float)b` at once instead of mixing
    /// integer and real nonlinear arithmetic.
    pub(crate) fn int_to_real(i: &Int) -> Real {
        use z3::ast::{Ast, Dynamic};
        use z3::DeclKind;
        if let Some(v) = i.as_i64() {
            return Real::from_int(&Int::from_i64(v));
        }
        if !i.is_app() {
            return Real::from_int(i);
        }
        let kids: Vec<Int> = i.children().iter().filter_map(Dynamic::as_int).collect();
        let reals = || kids.iter().map(int_to_real).collect::<Vec<Real>>();
        match i.decl().kind() {
            DeclKind::Add if kids.len() == i.num_children() => Real::add(&reals()),
            DeclKind::Sub if kids.len() == i.num_children() => Real::sub(&reals()),
            DeclKind::Mul if kids.len() == i.num_children() => Real::mul(&reals()),
            DeclKind::Uminus if kids.len() == 1 => -int_to_real(&kids[0]),
            DeclKind::Ite if kids.len() == 2 => match i.children()[0].as_bool() {
                Some(c) => c.ite(&int_to_real(&kids[0]), &int_to_real(&kids[1])),
                None => Real::from_int(i),
            },
            _ => Real::from_int(i),
        }
    }

    /// Float to integer conversion in C: truncation toward zero (`to_int`
    /// is the floor; truncation mirrors it for negatives).
    pub(crate) fn trunc_real(r: &Real) -> Int {
        r.ge(real_num(0))
            .ite(&r.to_int(), &-((-r.clone()).to_int()))
    }

    /// C `/` on integers: the quotient truncated toward zero. Z3's `div`
    /// rounds so that the remainder is non-negative; that is truncation
    /// exactly when the dividend is non-negative, and trunc(a / b) =
    /// -trunc(-a / b) covers the rest.
    pub(crate) fn trunc_div(a: &Int, b: &Int) -> Int {
        a.ge(Int::from_i64(0))
            .ite(&a.div(b), &-((-a.clone()).div(b)))
    }

    /// C `%` on integers: the sign of the dividend (Z3's `mod` is
    /// non-negative).
    pub(crate) fn trunc_rem(a: &Int, b: &Int) -> Int {
        a.ge(Int::from_i64(0))
            .ite(&a.modulo(b), &-((-a.clone()).modulo(b)))
    }

    /// Two's complement wrap-around into `ty` (C conversion to an integer
    /// type, TensIR integer arithmetic).
    pub(crate) fn wrap(a: &Int, ty: IntTy) -> Int {
        let modulus = Int::from_i128(1i128 << ty.bits);
        if ty.signed {
            let half = Int::from_i128(1i128 << (ty.bits - 1));
            (a.clone() + half.clone()).modulo(&modulus) - half
        } else {
            a.modulo(&modulus)
        }
    }

    /// A float literal in reals: the shortest decimal that round-trips in
    /// its type (f32 when `single`), as the spec reads C literals and the
    /// program's. A literal's rounding to its type (`.1` is not 1/10 in
    /// binary, and `np.float32(0.1)` is another number again) is thereby
    /// abstracted like every other rounding of the reals model, so a
    /// program that spells the C's `double` literal in `float`, or folds
    /// `.001*(x-1) + 1` into `.001*x + .999`, compares equal; the
    /// differential runs still see the rounding. `None` for infinities
    /// and NaN.
    pub(crate) fn decimal_real(v: f64, single: bool) -> Option<Real> {
        if !v.is_finite() {
            return None;
        }
        // Display never uses an exponent: `0.001`, `1000000`.
        let text = if single {
            format!("{}", v as f32)
        } else {
            format!("{v}")
        };
        let (sign, digits) = match text.strip_prefix('-') {
            Some(rest) => ("-", rest),
            None => ("", text.as_str()),
        };
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let numerator = format!("{sign}{whole}{fraction}");
        let denominator = format!("1{}", "0".repeat(fraction.len()));
        Real::from_rational_str(&numerator, &denominator)
    }

    /// The exact rational value of a finite double as a Z3 real; `None`
    /// for infinities and NaN (or a numeral Z3 rejects).
    pub(crate) fn exact_real(v: f64) -> Option<Real> {
        let (num, den) = exact_rational(v)?;
        Real::from_rational_str(&num, &den)
    }

    /// The exact rational value of a finite double as numerator and
    /// denominator strings, in lowest terms.
    pub(crate) fn exact_rational(v: f64) -> Option<(String, String)> {
        if !v.is_finite() {
            return None;
        }
        if v == 0.0 {
            return Some(("0".to_string(), "1".to_string()));
        }
        let bits = v.to_bits();
        let negative = bits >> 63 == 1;
        let exponent = ((bits >> 52) & 0x7ff) as i64;
        let fraction = bits & ((1u64 << 52) - 1);
        let (mut mantissa, mut exp2) = if exponent == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1u64 << 52), exponent - 1075)
        };
        // Lowest terms: the denominator is a power of two.
        while exp2 < 0 && mantissa & 1 == 0 {
            mantissa >>= 1;
            exp2 += 1;
        }
        let mut num = BigInt::from(mantissa);
        let mut den = BigInt::from(1u8);
        if exp2 >= 0 {
            num <<= exp2 as usize;
        } else {
            den <<= (-exp2) as usize;
        }
        if negative {
            num = -num;
        }
        Some((num.to_string(), den.to_string()))
    }

    /// A small integral real. (`Real::from_rational` calls a function newer
    /// than Debian's libz3 4.8.12, so the numeral goes through an integer.)
    pub(crate) fn real_num(n: i32) -> Real {
        Real::from_int(&Int::from_i64(i64::from(n)))
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

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn doubles_become_their_exact_rationals() {
            assert_eq!(exact_rational(0.5), Some(("1".into(), "2".into())));
            assert_eq!(exact_rational(-3.0), Some(("-3".into(), "1".into())));
            let (n, d) = exact_rational(0.1).unwrap_or_default();
            assert_eq!(n, "3602879701896397");
            assert_eq!(d, "36028797018963968");
            assert_eq!(exact_rational(f64::NAN), None);
            assert!(exact_real(1e300).is_some());
        }

        #[test]
        fn literals_read_as_the_decimals_they_round_trip_as() {
            let tenth = Real::from_rational_str("1", "10");
            // `.1`, and `0.1f` read in its own type, are both 1/10.
            assert_eq!(decimal_real(0.1, false), tenth);
            assert_eq!(decimal_real(f64::from(0.1f32), true), tenth);
            // The float's value read as a double is another decimal.
            assert_ne!(decimal_real(f64::from(0.1f32), false), tenth);
            // Long spellings: pi as a float is 3.1415927.
            let pi = Real::from_rational_str("31415927", "10000000");
            assert_eq!(decimal_real(f64::from(std::f32::consts::PI), true), pi);
            assert_eq!(
                decimal_real(-2.5, false),
                Real::from_rational_str("-25", "10")
            );
            assert!(decimal_real(1e22, false).is_some());
            assert_eq!(decimal_real(f64::INFINITY, false), None);
        }
    }
}
