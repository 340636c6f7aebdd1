//! Element types of TensIR values and typed scalar literals.

use std::fmt;

/// The element type of a tensor (or of a scalar, which is a rank-0 tensor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    F32,
    F64,
}

impl DType {
    /// All element types, in the order the syntax lists them.
    pub const ALL: [DType; 10] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::F32,
        DType::F64,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The integer type `bits` wide, signed or not (`None`: no such
    /// TensIR type, e.g. a 64-bit unsigned).
    pub fn int_of(bits: u32, signed: bool) -> Option<DType> {
        Some(match (bits, signed) {
            (8, true) => DType::I8,
            (8, false) => DType::U8,
            (16, true) => DType::I16,
            (16, false) => DType::U16,
            (32, true) => DType::I32,
            (32, false) => DType::U32,
            (64, true) => DType::I64,
            _ => return None,
        })
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != DType::Bool
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    pub fn is_numeric(self) -> bool {
        self != DType::Bool
    }

    /// Bit width of an integer type (1 for bool).
    pub fn bits(self) -> u32 {
        match self {
            DType::Bool => 1,
            DType::I8 | DType::U8 => 8,
            DType::I16 | DType::U16 => 16,
            DType::I32 | DType::U32 | DType::F32 => 32,
            DType::I64 | DType::F64 => 64,
        }
    }

    /// Size of one element in bytes (bool counts as one byte).
    pub fn byte_size(self) -> usize {
        (self.bits().max(8) / 8) as usize
    }

    /// Wraps an integer to this type the way a C conversion does
    /// (two's complement truncation); bools become 0 or 1.
    pub fn wrap_int(self, v: i128) -> i64 {
        match self {
            DType::Bool => i64::from(v != 0),
            DType::I8 => v as i8 as i64,
            DType::I16 => v as i16 as i64,
            DType::I32 => v as i32 as i64,
            DType::I64 => v as i64,
            DType::U8 => v as u8 as i64,
            DType::U16 => v as u16 as i64,
            DType::U32 => v as u32 as i64,
            DType::F32 | DType::F64 => v as i64,
        }
    }

    /// Rounds a float to this type's precision (f32 values are kept in f64
    /// storage but rounded after every operation).
    pub fn round_float(self, v: f64) -> f64 {
        if self == DType::F32 {
            v as f32 as f64
        } else {
            v
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A typed scalar constant. Floats are stored as bits so literals can be
/// hashed and compared exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lit {
    Bool(bool),
    Int(i64, DType),
    Float(u64, DType),
}

impl Lit {
    pub fn float(v: f64, dtype: DType) -> Lit {
        Lit::Float(dtype.round_float(v).to_bits(), dtype)
    }

    /// Zero of `dtype` (`false` for `bool`).
    pub fn zero(dtype: DType) -> Lit {
        match dtype {
            DType::Bool => Lit::Bool(false),
            d if d.is_float() => Lit::float(0.0, d),
            d => Lit::int(0, d),
        }
    }

    pub fn int(v: i64, dtype: DType) -> Lit {
        Lit::Int(v, dtype)
    }

    /// The least (`largest = false`) or greatest value of `d` (floats:
    /// ∓∞, `bool`: `false`/`true`): the identity of `max` (resp. `min`), so
    /// that a `max` over no elements leaves whatever it is combined with
    /// unchanged, as the C's `if (x[i] > m) m = x[i]` over an empty range does.
    pub fn extreme(d: DType, largest: bool) -> Lit {
        if d == DType::Bool {
            return Lit::Bool(largest);
        }
        if d.is_float() {
            let v = if largest {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            };
            return Lit::Float(v.to_bits(), d);
        }
        let bits = d.bits();
        let (lo, hi): (i64, i64) = if d.is_signed_int() {
            let hi = if bits == 64 {
                i64::MAX
            } else {
                (1i64 << (bits - 1)) - 1
            };
            (-hi - 1, hi)
        } else {
            (0, (1i64 << bits) - 1)
        };
        Lit::Int(if largest { hi } else { lo }, d)
    }

    pub fn dtype(self) -> DType {
        match self {
            Lit::Bool(_) => DType::Bool,
            Lit::Int(_, d) | Lit::Float(_, d) => d,
        }
    }

    pub fn as_f64(self) -> f64 {
        match self {
            Lit::Bool(b) => f64::from(u8::from(b)),
            Lit::Int(v, _) => v as f64,
            Lit::Float(bits, _) => f64::from_bits(bits),
        }
    }

    pub fn as_i64(self) -> i64 {
        match self {
            Lit::Bool(b) => i64::from(b),
            Lit::Int(v, _) => v,
            Lit::Float(bits, _) => f64::from_bits(bits) as i64,
        }
    }

    /// The value as shortest round-tripping decimal text, no type suffix.
    pub fn value_text(self) -> String {
        match self {
            Lit::Bool(b) => b.to_string(),
            Lit::Int(v, _) => v.to_string(),
            Lit::Float(bits, DType::F32) => format_float(f64::from_bits(bits) as f32 as f64, true),
            Lit::Float(bits, _) => format_float(f64::from_bits(bits), false),
        }
    }

    /// Whether the value fits the literal's type (e.g. `300u8` does not).
    pub fn in_range(self) -> bool {
        match self {
            Lit::Bool(_) => true,
            Lit::Int(v, d) => d.is_int() && d.wrap_int(i128::from(v)) == v,
            Lit::Float(bits, d) => d.is_float() && f64::from_bits(bits).is_finite(),
        }
    }
}

/// Formats a float so that both Rust and Python parse it back to the same
/// value and it always reads as a float (`1.0`, not `1`).
pub fn format_float(v: f64, single: bool) -> String {
    let text = if single {
        format!("{:?}", v as f32)
    } else {
        format!("{v:?}")
    };
    if text.contains(['.', 'e', 'E', 'n', 'i']) {
        text
    } else {
        format!("{text}.0")
    }
}

impl fmt::Display for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lit::Bool(b) => write!(f, "{b}"),
            Lit::Int(v, DType::I64) => write!(f, "{v}"),
            Lit::Float(_, DType::F64) => f.write_str(&self.value_text()),
            other => write!(f, "{}{}", other.value_text(), other.dtype()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_like_c_conversions() {
        assert_eq!(DType::U8.wrap_int(256 + 7), 7);
        assert_eq!(DType::U8.wrap_int(-1), 255);
        assert_eq!(DType::I8.wrap_int(128), -128);
        assert_eq!(DType::U32.wrap_int(-1), 4_294_967_295);
    }

    #[test]
    fn literal_text_keeps_type() {
        assert_eq!(Lit::float(1.0, DType::F64).to_string(), "1.0");
        assert_eq!(Lit::float(0.1, DType::F32).to_string(), "0.1f32");
        assert_eq!(Lit::int(255, DType::U8).to_string(), "255u8");
        assert!(!Lit::int(300, DType::U8).in_range());
    }
}
