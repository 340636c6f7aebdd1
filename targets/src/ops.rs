//! The operator vocabulary of TensIR: one enum variant per operation, with
//! its attributes. Operands live in the expression node, not here.

use std::fmt;
use std::sync::Arc;

use crate::dim::Dim;
use crate::dtype::{DType, Lit};

/// Element-wise operations of one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnaryOp {
    Neg,
    Abs,
    Sqrt,
    Exp,
    Log,
    Tanh,
    Not,
}

/// Element-wise operations of two operands (NumPy broadcasting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// Real division (floats only).
    Div,
    /// C integer division: the quotient truncated toward zero.
    TruncDiv,
    /// C remainder: the sign follows the dividend.
    Rem,
    Pow,
    Maximum,
    Minimum,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

/// Reductions over a set of axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReduceKind {
    Sum,
    Prod,
    Max,
    Min,
}

/// One component of a slice: the whole axis, one index (drops the axis), or
/// `start:stop:step` with affine bounds and a positive constant step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SliceItem {
    Full,
    Index(Dim),
    Range { start: Dim, stop: Dim, step: i64 },
}

/// An einsum subscript: the labels of each operand and of the result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EinsumSpec {
    pub inputs: Vec<Vec<char>>,
    pub output: Vec<char>,
}

impl EinsumSpec {
    /// Parses `ij,jk->ik`.
    pub fn parse(text: &str) -> Option<EinsumSpec> {
        let (lhs, rhs) = text.split_once("->")?;
        let labels = |s: &str| -> Option<Vec<char>> {
            let v: Vec<char> = s.trim().chars().collect();
            v.iter().all(|c| c.is_ascii_alphabetic()).then_some(v)
        };
        let inputs = lhs.split(',').map(labels).collect::<Option<Vec<_>>>()?;
        Some(EinsumSpec {
            inputs,
            output: labels(rhs)?,
        })
    }
}

impl fmt::Display for EinsumSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inputs: Vec<String> = self.inputs.iter().map(|l| l.iter().collect()).collect();
        let output: String = self.output.iter().collect();
        write!(f, "{}->{}", inputs.join(","), output)
    }
}

/// A TensIR operation with its attributes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// A parameter or `let`-bound value.
    Var(Arc<str>),
    /// A typed scalar constant.
    Lit(Lit),
    /// A tensor of the given shape filled with one constant.
    Full {
        shape: Vec<Dim>,
        value: Lit,
    },
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// `where(cond, then, else)`, broadcasting all three.
    Where,
    Reduce {
        kind: ReduceKind,
        axes: Vec<usize>,
    },
    /// NumPy `matmul` on 1-D/2-D operands.
    Matmul,
    Tensordot {
        lhs_axes: Vec<usize>,
        rhs_axes: Vec<usize>,
    },
    /// Outer product of two vectors.
    Outer,
    /// General contraction of one or two operands.
    Einsum(EinsumSpec),
    /// Permutes axes: result axis `i` is operand axis `perm[i]`.
    Transpose(Vec<usize>),
    /// NumPy `broadcast_to` (right-aligned).
    Broadcast(Vec<Dim>),
    Slice(Vec<SliceItem>),
    Concat {
        axis: usize,
    },
    /// Keeps elements on and above diagonal `k`, zeroes the rest.
    Triu(i64),
    /// Keeps elements on and below diagonal `k`, zeroes the rest.
    Tril(i64),
    /// Main diagonal of a square matrix, or the diagonal matrix of a vector.
    Diag,
    /// C conversion (truncation toward zero from float, wrap-around to
    /// narrower or unsigned integers, nonzero-is-true to bool).
    Cast(DType),
}

impl UnaryOp {
    pub const ALL: [UnaryOp; 7] = [
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Sqrt,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Tanh,
        UnaryOp::Not,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Not => "not",
        }
    }
}

impl BinaryOp {
    pub const ALL: [BinaryOp; 17] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::TruncDiv,
        BinaryOp::Rem,
        BinaryOp::Pow,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::And,
        BinaryOp::Or,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::TruncDiv => "trunc_div",
            BinaryOp::Rem => "rem",
            BinaryOp::Pow => "pow",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        )
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }
}

impl ReduceKind {
    pub const ALL: [ReduceKind; 4] = [
        ReduceKind::Sum,
        ReduceKind::Prod,
        ReduceKind::Max,
        ReduceKind::Min,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "sum",
            ReduceKind::Prod => "prod",
            ReduceKind::Max => "max",
            ReduceKind::Min => "min",
        }
    }
}

impl Op {
    /// The operation's name in the TensIR syntax.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Var(_) => "var",
            Op::Lit(_) => "lit",
            Op::Full { .. } => "full",
            Op::Unary(u) => u.name(),
            Op::Binary(b) => b.name(),
            Op::Where => "where",
            Op::Reduce { kind, .. } => kind.name(),
            Op::Matmul => "matmul",
            Op::Tensordot { .. } => "tensordot",
            Op::Outer => "outer",
            Op::Einsum(_) => "einsum",
            Op::Transpose(_) => "transpose",
            Op::Broadcast(_) => "broadcast",
            Op::Slice(_) => "slice",
            Op::Concat { .. } => "concat",
            Op::Triu(_) => "triu",
            Op::Tril(_) => "tril",
            Op::Diag => "diag",
            Op::Cast(_) => "cast",
        }
    }

    /// The operands as an einsum when the op is a contraction
    /// (matmul, tensordot, outer, einsum), so that interpreters and
    /// lowerings handle all contractions with one piece of code.
    pub fn as_contraction(&self, ranks: &[usize]) -> Option<EinsumSpec> {
        let letters = |from: usize, n: usize| -> Vec<char> {
            (from..from + n).map(|i| (b'a' + i as u8) as char).collect()
        };
        match (self, ranks) {
            (Op::Einsum(spec), _) => Some(spec.clone()),
            (Op::Outer, _) => Some(EinsumSpec {
                inputs: vec![vec!['a'], vec!['b']],
                output: vec!['a', 'b'],
            }),
            (Op::Matmul, [l, r]) => {
                let (lhs, rhs, out) = match (l, r) {
                    (2, 2) => ("ab", "bc", "ac"),
                    (2, 1) => ("ab", "b", "a"),
                    (1, 2) => ("a", "ab", "b"),
                    (1, 1) => ("a", "a", ""),
                    _ => return None,
                };
                Some(EinsumSpec {
                    inputs: vec![lhs.chars().collect(), rhs.chars().collect()],
                    output: out.chars().collect(),
                })
            }
            (Op::Tensordot { lhs_axes, rhs_axes }, [l, r]) => {
                let lhs = letters(0, *l);
                let mut rhs = letters(*l, *r);
                for (la, ra) in lhs_axes.iter().zip(rhs_axes) {
                    rhs[*ra] = *lhs.get(*la)?;
                }
                let out = lhs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !lhs_axes.contains(i))
                    .map(|(_, c)| *c)
                    .chain(
                        rhs.iter()
                            .enumerate()
                            .filter(|(i, _)| !rhs_axes.contains(i))
                            .map(|(_, c)| *c),
                    )
                    .collect();
                Some(EinsumSpec {
                    inputs: vec![lhs, rhs],
                    output: out,
                })
            }
            _ => None,
        }
    }
}
