//! The NumPy program as a graph of typed, shaped operations ("npir"):
//! what the Python means, before it becomes loops ([`super::loops`]) or
//! the input's TensIR ([`super::tensir`]).
//!
//! Every node knows its shape (extents affine in the size names) and its
//! dtype; the constructors here check NumPy's rules (broadcasting, dtype
//! promotion with NEP 50's weak Python scalars, contracted extents) and
//! refuse with a located diagnostic. Nodes are shared (`Rc`), so a value
//! used twice is one node, which the lowering materialises once.

use std::rc::Rc;

use tenslift_frontend::diagnostics::Diagnostic;
use tenslift_frontend::ir::{Affine, Loc, ScalarType};

use super::diagnostics::{error, SHAPE_MISMATCH, UNSUPPORTED_DTYPE};

/// A shared value of the program.
pub type T = Rc<Tensor>;

/// One operation with its result's shape and dtype.
#[derive(Debug)]
pub struct Tensor {
    pub node: Node,
    /// Extents, outermost first (empty: a 0-d value).
    pub shape: Vec<Affine>,
    /// `F64`/`F32` for data, `Bool` for comparisons, `I64` for Python ints.
    pub dtype: ScalarType,
    /// A Python scalar (NEP 50): takes the dtype of the array it meets.
    pub weak: bool,
    /// Where the Python wrote it.
    pub loc: Loc,
}

#[derive(Debug)]
pub enum Node {
    /// A parameter (array or scalar).
    Input(String),
    /// A Python number as written.
    Literal(String),
    /// A Python int computed from sizes (`A.shape[0]`, `n - 1`).
    Size(Affine),
    /// The operand broadcast to this shape (`np.full`, `np.broadcast_to`).
    Broadcast(T),
    /// The operand converted to this dtype.
    Cast(T),
    Unary(UnaryFn, T),
    /// Element-wise with NumPy broadcasting of the operands.
    Binary(BinaryFn, T, T),
    Where(T, T, T),
    View(T, View),
    Reduce(ReduceFn, T, Vec<usize>),
    Contract(Contraction),
    /// `np.diag` of a vector: the square matrix with it on the diagonal.
    DiagMatrix(T),
    /// `np.stack(items, axis)`.
    Stack(Vec<T>, usize),
    /// `np.stack([body for iter in ...], axis)`: `body` may use `iter`.
    Comprehension(Box<Comprehension>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryFn {
    Neg,
    Exp,
    Log,
    Sqrt,
    Abs,
    Tanh,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryFn {
    Add,
    Sub,
    Mul,
    Div,
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

impl BinaryFn {
    pub fn is_comparison(self) -> bool {
        use BinaryFn::*;
        matches!(self, Lt | Le | Gt | Ge | Eq | Ne)
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinaryFn::And | BinaryFn::Or)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceFn {
    Sum,
    Prod,
    Max,
    Min,
}

/// A view of one operand: its elements, re-indexed.
#[derive(Clone, Debug, PartialEq)]
pub enum View {
    /// Result axis `i` is operand axis `perm[i]`.
    Transpose(Vec<usize>),
    /// Basic indexing: one item per operand axis, plus new axes.
    Index(Vec<IndexItem>),
    /// The diagonal of a square matrix.
    Diagonal,
    /// Axes of extent 1 added or dropped: per result axis, the operand
    /// axis it is (`None`: a new axis); operand axes not named are 1.
    Reshape(Vec<Option<usize>>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum IndexItem {
    /// `start + step * i` for `i` in the result axis.
    Slice { start: Affine, step: i64 },
    /// One position: the axis is dropped.
    At(Affine),
    /// `None` / `np.newaxis`: a result axis of extent 1.
    NewAxis,
}

/// `Σ a[labels_a] * b[labels_b]` over the labels missing from `out`.
#[derive(Debug)]
pub struct Contraction {
    pub kind: ContractKind,
    pub a: T,
    pub b: T,
    pub labels_a: Vec<char>,
    pub labels_b: Vec<char>,
    pub out: Vec<char>,
}

/// Which NumPy function the contraction came from (the input's TensIR
/// spells it the same way).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContractKind {
    Dot,
    Matmul,
    Tensordot(Vec<usize>, Vec<usize>),
    Outer,
    Einsum,
}

#[derive(Debug)]
pub struct Comprehension {
    /// The loop variable's name (fresh in the kernel).
    pub iter: String,
    pub start: Affine,
    pub stop: Affine,
    pub body: T,
    pub axis: usize,
}

/// `a + b` on affine forms.
pub fn aff_add(a: &Affine, b: &Affine) -> Affine {
    let mut out = a.clone();
    for (v, c) in &b.terms {
        *out.terms.entry(v.clone()).or_insert(0) += c;
    }
    out.constant += b.constant;
    out.terms.retain(|_, c| *c != 0);
    out
}

/// `k * a`.
pub fn aff_scale(a: &Affine, k: i64) -> Affine {
    let mut out = Affine::constant(a.constant * k);
    for (v, c) in &a.terms {
        out.terms.insert(v.clone(), c * k);
    }
    out.terms.retain(|_, c| *c != 0);
    out
}

/// `a - b`.
pub fn aff_sub(a: &Affine, b: &Affine) -> Affine {
    aff_add(a, &aff_scale(b, -1))
}

pub fn is_one(a: &Affine) -> bool {
    a.as_constant() == Some(1)
}

/// Renders a shape as NumPy prints it: `(n, m)`, `(n,)`, `()`.
pub fn shape_text(shape: &[Affine]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}

/// The broadcast of two shapes (NumPy's rule, extents compared as
/// written).
pub fn broadcast_shapes(a: &[Affine], b: &[Affine], loc: &Loc) -> Result<Vec<Affine>, Diagnostic> {
    let rank = a.len().max(b.len());
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let pick = |s: &[Affine]| (i + s.len()).checked_sub(rank).map(|k| s[k].clone());
        let dim = match (pick(a), pick(b)) {
            (Some(x), None) | (None, Some(x)) => x,
            (Some(x), Some(y)) if x == y || is_one(&y) => x,
            (Some(x), Some(y)) if is_one(&x) => y,
            (Some(_), Some(_)) | (None, None) => {
                return Err(error(
                    SHAPE_MISMATCH,
                    loc.clone(),
                    format!(
                        "operands with shapes {} and {} do not broadcast",
                        shape_text(a),
                        shape_text(b)
                    ),
                ))
            }
        };
        out.push(dim);
    }
    Ok(out)
}

/// The index of an operand of shape `operand` read at `index` of the
/// broadcast result: leading axes dropped, extent-1 axes at 0.
pub fn broadcast_index(operand: &[Affine], result: &[Affine], index: &[Affine]) -> Vec<Affine> {
    let skip = result.len() - operand.len();
    operand
        .iter()
        .enumerate()
        .map(|(d, extent)| {
            if is_one(extent) && !is_one(&result[skip + d]) {
                Affine::constant(0)
            } else {
                index[skip + d].clone()
            }
        })
        .collect()
}

/// A new node.
pub fn node(node: Node, shape: Vec<Affine>, dtype: ScalarType, weak: bool, loc: &Loc) -> T {
    Rc::new(Tensor {
        node,
        shape,
        dtype,
        weak,
        loc: loc.clone(),
    })
}

/// The dtype two operands compute in, NumPy 2's rules for our dtypes:
/// strong floats promote to the wider one, a weak Python scalar takes the
/// other operand's dtype, two Python scalars stay Python (float if either
/// is).
pub fn common_dtype(a: &T, b: &T, loc: &Loc) -> Result<(ScalarType, bool), Diagnostic> {
    for t in [a, b] {
        if t.dtype == ScalarType::Bool {
            return Err(error(
                UNSUPPORTED_DTYPE,
                loc.clone(),
                "a boolean array in arithmetic (booleans may only be np.where conditions)",
            ));
        }
    }
    let wider = |x: ScalarType, y: ScalarType| {
        if x == ScalarType::F64 || y == ScalarType::F64 {
            ScalarType::F64
        } else if x.is_float() || y.is_float() {
            ScalarType::F32
        } else {
            ScalarType::I64
        }
    };
    Ok(match (a.weak, b.weak) {
        (false, false) => (wider(a.dtype, b.dtype), false),
        (true, false) => (b.dtype, false),
        (false, true) => (a.dtype, false),
        (true, true) => (wider(a.dtype, b.dtype), true),
    })
}

/// `t` as `dtype` (itself when it already is).
pub fn cast(t: &T, dtype: ScalarType, weak: bool) -> T {
    if t.dtype == dtype {
        return t.clone();
    }
    node(Node::Cast(t.clone()), t.shape.clone(), dtype, weak, &t.loc)
}

/// A float dtype for a math function's result (Python ints become f64).
pub fn float_dtype(t: &T) -> ScalarType {
    if t.dtype.is_float() {
        t.dtype
    } else {
        ScalarType::F64
    }
}

/// Applies `f` element-wise, broadcasting and promoting the operands.
pub fn binary(f: BinaryFn, a: &T, b: &T, loc: &Loc) -> Result<T, Diagnostic> {
    let shape = broadcast_shapes(&a.shape, &b.shape, loc)?;
    if f.is_logical() {
        if a.dtype != ScalarType::Bool || b.dtype != ScalarType::Bool {
            return Err(error(
                UNSUPPORTED_DTYPE,
                loc.clone(),
                "`&` and `|` combine boolean arrays (comparisons) only",
            ));
        }
        let n = Node::Binary(f, a.clone(), b.clone());
        return Ok(node(n, shape, ScalarType::Bool, false, loc));
    }
    let (mut dtype, weak) = common_dtype(a, b, loc)?;
    if f == BinaryFn::Div && !dtype.is_float() {
        dtype = ScalarType::F64;
    }
    let (x, y) = (cast(a, dtype, weak), cast(b, dtype, weak));
    let (result, weak) = if f.is_comparison() {
        (ScalarType::Bool, false)
    } else {
        (dtype, weak)
    };
    Ok(node(Node::Binary(f, x, y), shape, result, weak, loc))
}

/// Applies a math function element-wise.
pub fn unary(f: UnaryFn, a: &T, loc: &Loc) -> Result<T, Diagnostic> {
    match (f, a.dtype) {
        (UnaryFn::Not, ScalarType::Bool) => {
            let n = Node::Unary(f, a.clone());
            Ok(node(n, a.shape.clone(), ScalarType::Bool, false, loc))
        }
        (UnaryFn::Not, _) | (_, ScalarType::Bool) => Err(error(
            UNSUPPORTED_DTYPE,
            loc.clone(),
            "`~` applies to boolean arrays, math functions to numbers",
        )),
        (UnaryFn::Neg, _) => {
            let n = Node::Unary(f, a.clone());
            Ok(node(n, a.shape.clone(), a.dtype, a.weak, loc))
        }
        _ => {
            let dtype = float_dtype(a);
            let n = Node::Unary(f, cast(a, dtype, false));
            Ok(node(n, a.shape.clone(), dtype, false, loc))
        }
    }
}

/// `np.where(cond, x, y)`.
pub fn select(cond: &T, x: &T, y: &T, loc: &Loc) -> Result<T, Diagnostic> {
    if cond.dtype != ScalarType::Bool {
        return Err(error(
            UNSUPPORTED_DTYPE,
            cond.loc.clone(),
            "the condition of np.where must be a comparison",
        ));
    }
    let shape = broadcast_shapes(
        &cond.shape,
        &broadcast_shapes(&x.shape, &y.shape, loc)?,
        loc,
    )?;
    let (dtype, weak) = common_dtype(x, y, loc)?;
    let n = Node::Where(cond.clone(), cast(x, dtype, weak), cast(y, dtype, weak));
    Ok(node(n, shape, dtype, weak, loc))
}

/// A reduction over `axes` (sorted, distinct, in range).
pub fn reduce(f: ReduceFn, a: &T, axes: Vec<usize>, loc: &Loc) -> Result<T, Diagnostic> {
    if a.dtype == ScalarType::Bool {
        return Err(error(
            UNSUPPORTED_DTYPE,
            loc.clone(),
            "reductions of boolean arrays are not supported",
        ));
    }
    let shape = a
        .shape
        .iter()
        .enumerate()
        .filter(|(d, _)| !axes.contains(d))
        .map(|(_, e)| e.clone())
        .collect();
    let dtype = a.dtype;
    Ok(node(
        Node::Reduce(f, a.clone(), axes),
        shape,
        dtype,
        false,
        loc,
    ))
}

/// A contraction; checks that every label has one extent.
pub fn contract(c: Contraction, loc: &Loc) -> Result<T, Diagnostic> {
    let (dtype, _) = common_dtype(&c.a, &c.b, loc)?;
    let mut extents: Vec<(char, Affine)> = Vec::new();
    for (labels, t) in [(&c.labels_a, &c.a), (&c.labels_b, &c.b)] {
        for (l, e) in labels.iter().zip(&t.shape) {
            match extents.iter().find(|(k, _)| k == l) {
                Some((_, known)) if known != e => {
                    return Err(error(
                        SHAPE_MISMATCH,
                        loc.clone(),
                        format!(
                            "contracted axes differ in extent ({known} and {e}): shapes {} and {}",
                            shape_text(&c.a.shape),
                            shape_text(&c.b.shape)
                        ),
                    ))
                }
                Some(_) => {}
                None => extents.push((*l, e.clone())),
            }
        }
    }
    let shape = c
        .out
        .iter()
        .filter_map(|l| extents.iter().find(|(k, _)| k == l).map(|(_, e)| e.clone()))
        .collect();
    let c = Contraction {
        a: cast(&c.a, dtype, false),
        b: cast(&c.b, dtype, false),
        ..c
    };
    Ok(node(Node::Contract(c), shape, dtype, false, loc))
}

/// The extent of every label of a contraction.
pub fn label_extents(c: &Contraction) -> Vec<(char, Affine)> {
    let mut out: Vec<(char, Affine)> = Vec::new();
    for (labels, t) in [(&c.labels_a, &c.a), (&c.labels_b, &c.b)] {
        for (l, e) in labels.iter().zip(&t.shape) {
            if !out.iter().any(|(k, _)| k == l) {
                out.push((*l, e.clone()));
            }
        }
    }
    out
}

/// The operand index a view reads at result `index`.
pub fn view_index(view: &View, operand: &[Affine], index: &[Affine]) -> Vec<Affine> {
    match view {
        View::Transpose(perm) => {
            let mut out = vec![Affine::constant(0); perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                out[p] = index[i].clone();
            }
            out
        }
        View::Diagonal => vec![index[0].clone(), index[0].clone()],
        View::Reshape(axes) => {
            let mut out = vec![Affine::constant(0); operand.len()];
            for (i, a) in axes.iter().enumerate() {
                if let Some(a) = a {
                    out[*a] = index[i].clone();
                }
            }
            out
        }
        View::Index(items) => {
            let mut out = Vec::new();
            let mut at = 0;
            for item in items {
                match item {
                    IndexItem::Slice { start, step } => {
                        out.push(aff_add(start, &aff_scale(&index[at], *step)));
                        at += 1;
                    }
                    IndexItem::At(i) => out.push(i.clone()),
                    IndexItem::NewAxis => at += 1,
                }
            }
            out
        }
    }
}
