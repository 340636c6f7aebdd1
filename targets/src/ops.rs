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
    /// C's `round`: to the nearest integer, halves away from zero.
    Round,
    Floor,
    Ceil,
    Sin,
    Cos,
    Cosh,
    Sinh,
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

/// The flat position of each element's predecessor along `axis` in a
/// row-major array of `shape`, the element an inclusive scan combines it
/// with: `None` at the start of a line. Every scan (the interpreter, the
/// verifier's evaluation, the search's scan sketch) walks lines with it.
pub fn scan_predecessor(shape: &[usize], axis: usize) -> impl Fn(usize) -> Option<usize> {
    let stride: usize = shape.get(axis + 1..).unwrap_or_default().iter().product();
    let extent = shape.get(axis).copied().unwrap_or(0);
    move |flat| {
        let first = stride == 0 || extent == 0 || (flat / stride).is_multiple_of(extent);
        (!first).then(|| flat - stride)
    }
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
    /// Whether a two-operand einsum is a matrix product BLAS can run: some
    /// label is summed and some operand has a label of its own in the
    /// result (`ij,jk->ik`, `abcd,d->abc`); not a product summed element
    /// by element (`ab,ba->a`, `ab,ab->`), where BLAS has nothing to do.
    pub fn is_blas_contraction(&self) -> bool {
        let [a, b] = self.inputs.as_slice() else {
            return false;
        };
        let summed = a.iter().chain(b).any(|l| !self.output.contains(l));
        let own =
            |x: &[char], y: &[char]| x.iter().any(|l| !y.contains(l) && self.output.contains(l));
        summed && (own(a, b) || own(b, a))
    }

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
    /// Reverses the listed axes: `flip(x, axes=[0])[i] = x[n - 1 - i]`.
    Flip(Vec<usize>),
    /// The elements in row-major order laid out in a new shape of the same
    /// number of elements (NumPy `reshape` of a C-ordered array).
    Reshape(Vec<Dim>),
    /// Sliding windows over every axis: `window(x, [t0, t1])` of an
    /// `[n0, n1]` operand is `[n0 - t0 + 1, n1 - t1 + 1, t0, t1]` with
    /// element `[i0, i1, k0, k1] = x[i0 + k0, i1 + k1]` (NumPy's
    /// `sliding_window_view`); each window must fit (`1 <= t <= n`, checked
    /// when run).
    Window(Vec<Dim>),
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
    /// `scatter_add(h, idx, vals)`: `h` (a vector of bins) with each
    /// `vals[k]` added to bin `idx[k]`, the elements of `idx` and `vals`
    /// (same shape, any rank) taken in row-major order, so duplicates
    /// accumulate in the order a C loop over them does (NumPy's
    /// `np.add.at`). Every index must lie in `[0, len(h))`: emitted code
    /// checks it and raises `ValueError`.
    ScatterAdd,
    /// The Cholesky factor `L` of a symmetric positive definite matrix
    /// (its lower triangle read, the result's strict upper triangle zero);
    /// semantics in [`crate::solvers::cholesky`].
    Cholesky,
    /// `T X = B` solved for `X` (a vector or a matrix of columns) with `T`
    /// lower or upper triangular, unit diagonal or not; semantics in
    /// [`crate::solvers::trisolve`].
    TriSolve {
        lower: bool,
        unit: bool,
    },
    /// LU factorisation without pivoting, unit-lower `L` and `U` packed in
    /// one matrix; semantics in [`crate::solvers::lu_nopivot`].
    LuNoPivot,
    /// `syrk(a, c, alpha, beta)`: BLAS's symmetric rank-k update of a lower
    /// triangle, `alpha * a aᵀ + beta * c` on and below the diagonal and
    /// `c` above it; definition in [`crate::symmetry::blas`].
    Syrk,
    /// `syr2k(a, b, c, alpha, beta)`: the rank-2k update, `alpha * (a bᵀ +
    /// b aᵀ) + beta * c` on and below the diagonal and `c` above it;
    /// definition in [`crate::symmetry::blas`].
    Syr2k,
    /// `mirror_lower(x)`: the symmetric matrix whose lower triangle (with
    /// the diagonal) is `x`'s; definition in [`crate::symmetry::blas`].
    MirrorLower,
    /// `argmax(x, axis=a, dtype=d)` (`largest`) or `argmin`: along axis `a`,
    /// the position of the first greatest (least) element, as an integer of
    /// type `d`. "First" is C's running search `if (x[k] > m) { m = x[k];
    /// best = k; }` from `best = 0, m = x[0]`, which NumPy's, PyTorch's and
    /// JAX's `argmax` agree with on numbers (on NaN they differ: C never
    /// picks a NaN after the first element, the libraries pick the first
    /// NaN). An empty axis has no position (an error, as for `max`).
    /// `last`: the last extreme instead (`if (x[k] >= m)`), a later element
    /// taken when at least as great.
    ArgExtreme {
        largest: bool,
        axis: usize,
        dtype: DType,
        last: bool,
    },
    /// Inclusive scan along one axis: element `[.., i, ..]` is the
    /// reduction `kind` of the operand's `[.., 0..=i, ..]`, combined in
    /// index order (NumPy's `np.cumsum`, `np.maximum.accumulate`): a C
    /// loop's running value (`s += x[i]; y[i] = s`). Last, so that the
    /// hashes of the variants before it, which order some ties, stay.
    Scan {
        kind: ReduceKind,
        axis: usize,
    },
}

/// The TensIR name of a triangular solve with these attributes.
pub fn trisolve_name(lower: bool, unit: bool) -> &'static str {
    match (lower, unit) {
        (true, false) => "trisolve_lower",
        (true, true) => "trisolve_lower_unit",
        (false, false) => "trisolve_upper",
        (false, true) => "trisolve_upper_unit",
    }
}

/// The triangular solve a TensIR name denotes (`trisolve_lower_unit`).
pub fn trisolve_of_name(name: &str) -> Option<Op> {
    [(true, false), (true, true), (false, false), (false, true)]
        .into_iter()
        .find(|&(lower, unit)| trisolve_name(lower, unit) == name)
        .map(|(lower, unit)| Op::TriSolve { lower, unit })
}

impl UnaryOp {
    pub const ALL: [UnaryOp; 14] = [
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Sqrt,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Tanh,
        UnaryOp::Not,
        UnaryOp::Round,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Cosh,
        UnaryOp::Sinh,
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
            UnaryOp::Round => "round",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Cosh => "cosh",
            UnaryOp::Sinh => "sinh",
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

    /// The name of the inclusive scan of this reduction ([`Op::Scan`]).
    pub fn scan_name(self) -> &'static str {
        match self {
            ReduceKind::Sum => "cumsum",
            ReduceKind::Prod => "cumprod",
            ReduceKind::Max => "cummax",
            ReduceKind::Min => "cummin",
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
            Op::Scan { kind, .. } => kind.scan_name(),
            Op::ArgExtreme { largest: true, .. } => "argmax",
            Op::ArgExtreme { largest: false, .. } => "argmin",
            Op::Matmul => "matmul",
            Op::Tensordot { .. } => "tensordot",
            Op::Outer => "outer",
            Op::Einsum(_) => "einsum",
            Op::Transpose(_) => "transpose",
            Op::Broadcast(_) => "broadcast",
            Op::Slice(_) => "slice",
            Op::Flip(_) => "flip",
            Op::Reshape(_) => "reshape",
            Op::Window(_) => "window",
            Op::Concat { .. } => "concat",
            Op::Triu(_) => "triu",
            Op::Tril(_) => "tril",
            Op::Diag => "diag",
            Op::Cast(_) => "cast",
            Op::Cholesky => "cholesky",
            Op::TriSolve { lower, unit } => trisolve_name(*lower, *unit),
            Op::LuNoPivot => "lu_nopivot",
            Op::ScatterAdd => "scatter_add",
            Op::Syrk => "syrk",
            Op::Syr2k => "syr2k",
            Op::MirrorLower => "mirror_lower",
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

/// Where every element of an einsum's operands lives: the shapes of the
/// output and of the summed index space, and for each operand the stride of
/// each output label and each summed label (0 where the operand lacks it),
/// so an operand's element for an (output, summed) index pair is two dot
/// products. Every evaluator of einsum — the interpreter, the symbolic spec,
/// the Z3 encoding — shares this layout; only their arithmetic differs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EinsumLayout {
    pub out_shape: Vec<usize>,
    pub sum_shape: Vec<usize>,
    operand_strides: Vec<(Vec<usize>, Vec<usize>)>,
}

impl EinsumLayout {
    /// The layout for operands of `shapes`; an error names an operand whose
    /// rank differs from its subscript, a label bound to two sizes, or an
    /// output label no operand has.
    pub fn new(inputs: &[Vec<char>], output: &[char], shapes: &[&[usize]]) -> Result<Self, String> {
        let mut labels: Vec<(char, usize)> = Vec::new();
        for (ls, shape) in inputs.iter().zip(shapes) {
            if ls.len() != shape.len() {
                return Err(format!(
                    "einsum subscript {ls:?} for an operand of rank {}",
                    shape.len()
                ));
            }
            for (&c, &n) in ls.iter().zip(shape.iter()) {
                match labels.iter().find(|(l, _)| *l == c) {
                    Some(&(_, m)) if m != n => {
                        return Err(format!("einsum label `{c}` is both {m} and {n} long"))
                    }
                    Some(_) => {}
                    None => labels.push((c, n)),
                }
            }
        }
        let size_of = |c: &char| labels.iter().find(|(l, _)| l == c).map(|(_, n)| *n);
        let out_shape = output
            .iter()
            .map(|c| {
                size_of(c).ok_or_else(|| format!("einsum output label `{c}` is on no operand"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let summed: Vec<char> = labels
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| !output.contains(c))
            .collect();
        let sum_shape = summed.iter().filter_map(size_of).collect();
        let operand_strides = inputs
            .iter()
            .zip(shapes)
            .map(|(ls, shape)| {
                let mut strides = vec![1; shape.len()];
                for axis in (0..shape.len().saturating_sub(1)).rev() {
                    strides[axis] = strides[axis + 1] * shape[axis + 1];
                }
                let stride_of = |c: &char| ls.iter().position(|l| l == c).map_or(0, |p| strides[p]);
                (
                    output.iter().map(stride_of).collect(),
                    summed.iter().map(stride_of).collect(),
                )
            })
            .collect();
        Ok(EinsumLayout {
            out_shape,
            sum_shape,
            operand_strides,
        })
    }

    /// The row-major offset in operand `operand` of the element that the
    /// output index `out_idx` and summed index `sum_idx` select.
    pub fn offset(&self, operand: usize, out_idx: &[usize], sum_idx: &[usize]) -> usize {
        let (out_strides, sum_strides) = &self.operand_strides[operand];
        let dot =
            |idx: &[usize], st: &[usize]| -> usize { idx.iter().zip(st).map(|(i, s)| i * s).sum() };
        dot(out_idx, out_strides) + dot(sum_idx, sum_strides)
    }
}

#[cfg(test)]
mod einsum_layout_tests {
    use super::EinsumLayout;

    #[test]
    fn matmul_offsets_walk_rows_of_a_and_columns_of_b() {
        // ij,jk->ik with A: 2x3, B: 3x4.
        let inputs = vec![vec!['i', 'j'], vec!['j', 'k']];
        let layout = EinsumLayout::new(&inputs, &['i', 'k'], &[&[2, 3], &[3, 4]]).unwrap();
        assert_eq!(layout.out_shape, vec![2, 4]);
        assert_eq!(layout.sum_shape, vec![3]);
        // Output (1, 2), summed j = 1: A[1,1] at 4, B[1,2] at 6.
        assert_eq!(layout.offset(0, &[1, 2], &[1]), 4);
        assert_eq!(layout.offset(1, &[1, 2], &[1]), 6);
    }

    #[test]
    fn inconsistent_subscripts_are_errors() {
        let err = |inputs: Vec<Vec<char>>, output: &[char], shapes: &[&[usize]]| {
            EinsumLayout::new(&inputs, output, shapes).unwrap_err()
        };
        assert!(err(vec![vec!['i']], &['i'], &[&[2, 3]]).contains("rank 2"));
        assert!(err(vec![vec!['i'], vec!['i']], &['i'], &[&[2], &[3]]).contains("both 2 and 3"));
        assert!(err(vec![vec!['i']], &['k'], &[&[2]]).contains("`k`"));
    }
}

#[cfg(test)]
mod scan_tests {
    use super::scan_predecessor;

    #[test]
    fn a_predecessor_is_the_element_before_along_the_axis() {
        // A 2 x 3 array: along axis 1 each row is a line, along axis 0
        // each column.
        let rows = scan_predecessor(&[2, 3], 1);
        let by_row: Vec<Option<usize>> = (0..6).map(&rows).collect();
        assert_eq!(by_row, [None, Some(0), Some(1), None, Some(3), Some(4)]);
        let cols = scan_predecessor(&[2, 3], 0);
        let by_col: Vec<Option<usize>> = (0..6).map(&cols).collect();
        assert_eq!(by_col, [None, None, None, Some(0), Some(1), Some(2)]);
        // An empty axis or one out of range has no lines to walk.
        assert_eq!(scan_predecessor(&[0, 3], 1)(0), None);
        assert_eq!(scan_predecessor(&[2], 5)(1), None);
    }
}
