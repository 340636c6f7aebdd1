//! The one reference for C's arithmetic semantics that every evaluator is
//! checked against: conversions, integer promotions, division, remainder
//! and wrap-around, as types × operations × edge values.
//!
//! The evaluators stay independent (that independence is what verification
//! is worth): the algebra's exact evaluation, TensIR's interpreter, the
//! NumPy/PyTorch/JAX code the emitters write, and verify's Z3 encodings of
//! both the C and the TensIR side each implement these rules on their own.
//! This table is the one thing they share; `tests/c_semantics.rs` runs all
//! of them, and gcc-compiled C as ground truth, against every case.
//!
//! Each case renders as a C expression over literals (what the frontend
//! lowers) and as a TensIR expression that spells the same computation with
//! C's promotions explicit (`u8 + u8` is `int` arithmetic converted back).
//! Undefined behaviour is listed with its reason and never evaluated: no
//! evaluator is required to agree on it.

use crate::{BinaryOp, DType};

/// An operation of the table.
#[derive(Clone, Copy, Debug)]
pub enum COp {
    /// `(to)x`: truncation toward zero from floats, wrap-around to narrower
    /// or unsigned integers, exact to floats where representable.
    Convert { from: DType, to: DType },
    /// `(result)(a op b)` with both operands of type `operand`, computed in
    /// C's promoted type (`int` for narrower integers) and converted to
    /// `result`.
    Binary {
        op: BinaryOp,
        operand: DType,
        result: DType,
    },
}

/// What C gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expected {
    Value(f64),
    /// Undefined behaviour in C: no evaluator must agree.
    Undefined(&'static str),
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub name: &'static str,
    pub op: COp,
    pub args: &'static [f64],
    pub expected: Expected,
}

const fn convert(name: &'static str, from: DType, to: DType, x: &'static [f64], e: f64) -> Case {
    Case {
        name,
        op: COp::Convert { from, to },
        args: x,
        expected: Expected::Value(e),
    }
}

const fn binary(
    name: &'static str,
    op: BinaryOp,
    (operand, result): (DType, DType),
    args: &'static [f64],
    expected: Expected,
) -> Case {
    Case {
        name,
        op: COp::Binary {
            op,
            operand,
            result,
        },
        args,
        expected,
    }
}

use BinaryOp::{Add, Div, Mul, Rem, Sub, TruncDiv};
use DType::{F32, F64, I32, I8, U32, U8};
use Expected::{Undefined, Value};

/// The table. Case names are C identifiers (they name outputs).
pub const CASES: &[Case] = &[
    convert("f32_to_i32_neg", F32, I32, &[-2.7], -2.0),
    convert("f32_to_i32_pos", F32, I32, &[2.7], 2.0),
    convert("f64_to_i32_half", F64, I32, &[2.5], 2.0),
    convert("f64_to_i32_neg_half", F64, I32, &[-2.5], -2.0),
    convert("f32_to_u8", F32, U8, &[200.75], 200.0),
    convert("i32_to_u32_minus_one", I32, U32, &[-1.0], 4294967295.0),
    convert("i32_to_u8_300", I32, U8, &[300.0], 44.0),
    convert("i32_to_u8_minus_one", I32, U8, &[-1.0], 255.0),
    // Implementation-defined before C23; gcc and every target wrap.
    convert("i32_to_i8_200", I32, I8, &[200.0], -56.0),
    convert("u8_to_i32", U8, I32, &[255.0], 255.0),
    convert("i32_to_f32_exact", I32, F32, &[16777216.0], 16777216.0),
    convert("i32_to_f64", I32, F64, &[-7.0], -7.0),
    convert("f32_to_f64", F32, F64, &[0.25], 0.25),
    Case {
        name: "f32_to_i32_too_large",
        op: COp::Convert { from: F32, to: I32 },
        args: &[3.0e9],
        expected: Undefined("a float outside int's range converted to int (C11 6.3.1.4)"),
    },
    binary(
        "div_neg_by_pos",
        TruncDiv,
        (I32, I32),
        &[-7.0, 2.0],
        Value(-3.0),
    ),
    binary(
        "div_pos_by_neg",
        TruncDiv,
        (I32, I32),
        &[7.0, -2.0],
        Value(-3.0),
    ),
    binary(
        "div_neg_by_neg",
        TruncDiv,
        (I32, I32),
        &[-7.0, -2.0],
        Value(3.0),
    ),
    binary("rem_neg_by_pos", Rem, (I32, I32), &[-7.0, 2.0], Value(-1.0)),
    binary("rem_pos_by_neg", Rem, (I32, I32), &[7.0, -2.0], Value(1.0)),
    binary("div_u32", TruncDiv, (U32, U32), &[7.0, 2.0], Value(3.0)),
    binary(
        "div_int_min_by_minus_one",
        TruncDiv,
        (I32, I32),
        &[-2147483648.0, -1.0],
        Undefined("INT_MIN / -1 overflows int (C11 6.5.5)"),
    ),
    binary("add_u8_wraps", Add, (U8, U8), &[255.0, 1.0], Value(0.0)),
    binary(
        "add_u8_promoted",
        Add,
        (U8, I32),
        &[255.0, 1.0],
        Value(256.0),
    ),
    binary(
        "mul_u8_promoted",
        Mul,
        (U8, I32),
        &[200.0, 200.0],
        Value(40000.0),
    ),
    binary(
        "add_u32_wraps",
        Add,
        (U32, U32),
        &[4294967295.0, 1.0],
        Value(0.0),
    ),
    binary(
        "sub_u32_wraps",
        Sub,
        (U32, U32),
        &[0.0, 1.0],
        Value(4294967295.0),
    ),
    binary("div_f32", Div, (F32, F32), &[1.0, 4.0], Value(0.25)),
    binary("mul_f64", Mul, (F64, F64), &[-2.5, 4.0], Value(-10.0)),
];

/// C's spelling of a type.
pub fn c_type(d: DType) -> &'static str {
    match d {
        DType::Bool => "_Bool",
        DType::I8 => "signed char",
        DType::U8 => "unsigned char",
        DType::I16 => "short",
        DType::U16 => "unsigned short",
        DType::I32 => "int",
        DType::U32 => "unsigned int",
        DType::I64 => "long long",
        DType::F32 => "float",
        DType::F64 => "double",
    }
}

/// A literal of type `d` in C (`((unsigned char)255)`, `(-2.7f)`).
pub fn c_literal(v: f64, d: DType) -> String {
    match d {
        DType::F32 => format!("({v:?}f)"),
        DType::F64 => format!("({v:?})"),
        // Parenthesised so that `-x` never meets a minus before it; INT_MIN
        // has no literal (2147483648 is a long).
        _ if v == -2147483648.0 => "(-2147483647 - 1)".to_string(),
        DType::U32 => format!("({}u)", v as i64),
        _ => format!("(({})({}))", c_type(d), v as i64),
    }
}

/// A literal of type `d` in TensIR (`255u8`, `-2.7f32`).
pub fn tensir_literal(v: f64, d: DType) -> String {
    if d.is_float() {
        format!("{v:?}{d}")
    } else {
        format!("{}{d}", v as i64)
    }
}

/// C's integer promotion of an operand type.
pub fn promoted(d: DType) -> DType {
    match d {
        DType::Bool | DType::I8 | DType::U8 | DType::I16 | DType::U16 => DType::I32,
        other => other,
    }
}

fn c_operator(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div | BinaryOp::TruncDiv => "/",
        BinaryOp::Rem => "%",
        _ => "?",
    }
}

impl Case {
    /// The type of the case's result.
    pub fn result(&self) -> DType {
        match self.op {
            COp::Convert { to, .. } => to,
            COp::Binary { result, .. } => result,
        }
    }

    /// The case as a C expression over literals.
    pub fn c_expr(&self) -> String {
        match self.op {
            COp::Convert { from, to } => {
                format!("({})({})", c_type(to), c_literal(self.args[0], from))
            }
            COp::Binary {
                op,
                operand,
                result,
            } => format!(
                "({})({} {} {})",
                c_type(result),
                c_literal(self.args[0], operand),
                c_operator(op),
                c_literal(self.args[1], operand)
            ),
        }
    }

    /// The case as a TensIR expression with C's promotions explicit.
    pub fn tensir_expr(&self) -> String {
        match self.op {
            COp::Convert { from, to } => {
                format!("cast({}, {to})", tensir_literal(self.args[0], from))
            }
            COp::Binary {
                op,
                operand,
                result,
            } => {
                let wide = promoted(operand);
                let arg = |v: f64| {
                    let lit = tensir_literal(v, operand);
                    if wide == operand {
                        lit
                    } else {
                        format!("cast({lit}, {wide})")
                    }
                };
                let value = format!(
                    "{}({}, {})",
                    op.name(),
                    arg(self.args[0]),
                    arg(self.args[1])
                );
                if wide == result {
                    value
                } else {
                    format!("cast({value}, {result})")
                }
            }
        }
    }
}

/// The cases C defines (the ones every evaluator must agree on).
pub fn defined_cases() -> impl Iterator<Item = &'static Case> {
    CASES
        .iter()
        .filter(|c| matches!(c.expected, Expected::Value(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_names_are_distinct_c_identifiers() {
        let mut names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
        assert!(names
            .iter()
            .all(|n| n.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')));
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before);
    }

    #[test]
    fn every_case_renders_in_c_and_in_tensir() {
        let u8_add = CASES.iter().find(|c| c.name == "add_u8_wraps");
        let u8_add = u8_add.map(Case::tensir_expr).unwrap_or_default();
        assert_eq!(u8_add, "cast(add(cast(255u8, i32), cast(1u8, i32)), u8)");
        let trunc = CASES.iter().find(|c| c.name == "f32_to_i32_neg");
        assert_eq!(
            trunc.map(Case::c_expr).unwrap_or_default(),
            "(int)((-2.7f))"
        );
        // Every defined case's TensIR text parses in a program.
        for case in defined_cases() {
            let text = format!(
                "func f(n: size, y: out {}[n]) {{\n  y = broadcast({}, [n]);\n}}\n",
                case.result(),
                case.tensir_expr()
            );
            crate::parse_program("case.tensir", &text)
                .unwrap_or_else(|d| panic!("{}: {d}\n{text}", case.name));
        }
    }
}
