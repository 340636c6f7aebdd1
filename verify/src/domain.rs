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
}

impl Opaque {
    pub fn name(self) -> &'static str {
        match self {
            Opaque::Sqrt => "sqrt",
            Opaque::Exp => "exp",
            Opaque::Log => "log",
            Opaque::Tanh => "tanh",
            Opaque::Pow => "pow",
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
