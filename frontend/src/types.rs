//! C's arithmetic conversions on [`ScalarType`]: integer promotion and the
//! usual arithmetic conversions, used to desugar `x op= e` and `x++` with
//! every conversion explicit.

use crate::ir::ScalarType;

/// Integer promotion: types narrower than `int` become `int`.
pub fn promote(t: ScalarType) -> ScalarType {
    match t {
        ScalarType::Bool | ScalarType::I8 | ScalarType::U8 | ScalarType::I16 | ScalarType::U16 => {
            ScalarType::I32
        }
        other => other,
    }
}

fn to_unsigned(t: ScalarType) -> ScalarType {
    match t {
        ScalarType::I32 => ScalarType::U32,
        ScalarType::I64 => ScalarType::U64,
        other => other,
    }
}

/// The common type of a binary arithmetic operation (C11 6.3.1.8).
pub fn usual_arithmetic(a: ScalarType, b: ScalarType) -> ScalarType {
    if a == ScalarType::F64 || b == ScalarType::F64 {
        return ScalarType::F64;
    }
    if a == ScalarType::F32 || b == ScalarType::F32 {
        return ScalarType::F32;
    }
    let (a, b) = (promote(a), promote(b));
    if a == b {
        return a;
    }
    if a.is_signed() == b.is_signed() {
        return if a.bits() >= b.bits() { a } else { b };
    }
    let (signed, unsigned) = if a.is_signed() { (a, b) } else { (b, a) };
    if unsigned.bits() >= signed.bits() {
        unsigned
    } else if signed.bits() > unsigned.bits() {
        signed
    } else {
        to_unsigned(signed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn conversions_follow_c() {
        assert_eq!(usual_arithmetic(U8, U8), I32);
        assert_eq!(usual_arithmetic(U8, F32), F32);
        assert_eq!(usual_arithmetic(I32, U32), U32);
        assert_eq!(usual_arithmetic(I64, U32), I64);
        assert_eq!(usual_arithmetic(U64, I64), U64);
        assert_eq!(usual_arithmetic(F32, F64), F64);
        assert_eq!(usual_arithmetic(I16, Bool), I32);
    }
}
