//! The e-graph language over TensIR, its type analysis, and the conversion
//! of expressions into the e-graph.
//!
//! An e-node is an operation head applied to e-classes, or a leaf. The
//! attributes of an operation (reduced axes, a permutation, slice items, an
//! einsum subscript, a cast's type) are leaf e-nodes in front of the
//! operands, as in TENSAT, so that a rule can match them (`(transpose
//! perm:1,0 ?x)`) or bind them (`(sum ?axes ?x)`) like any operand and
//! compute new ones. Every value e-class carries its TensIR type (element
//! type and symbolic shape) as analysis data: the typed applier
//! ([`super::apply`]) adds nothing whose type it cannot infer, and a rule's
//! result must have the matched class's type exactly.
//!
//! Order and hashing never depend on interning order or addresses (leaves
//! compare by their text key, heads by declaration order), so the same
//! program gives the same e-graph on any thread.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use egg::{Analysis, DidMerge, FromOp, Id, Language};
use tenslift_targets::expr::infer;
use tenslift_targets::ops::trisolve_name;
use tenslift_targets::{
    BinaryOp, DType, Dim, EinsumSpec, Expr, Lit, Op, ReduceKind, SliceItem, Ty, UnaryOp,
};

/// The operation of an application node, without its attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Head {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Where,
    Reduce(ReduceKind),
    Matmul,
    Tensordot,
    Outer,
    Einsum,
    Transpose,
    Broadcast,
    Slice,
    Flip,
    Reshape,
    Window,
    Concat,
    Triu,
    Tril,
    Diag,
    Cast,
    ScatterAdd,
    Cholesky,
    TriSolve { lower: bool, unit: bool },
    LuNoPivot,
    Syrk,
    Syr2k,
    MirrorLower,
    ArgExtreme { largest: bool },
    // Last: the derived order breaks extraction's ties between equal-cost
    // nodes, which a new head must not reorder.
    Scan(ReduceKind),
}

/// An operation's attribute, held by a leaf e-node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Attr {
    /// Reduced (or flipped) axes.
    Axes(Vec<usize>),
    /// A transpose's permutation.
    Perm(Vec<usize>),
    /// A broadcast's or reshape's target shape, or a window's sizes.
    Shape(Vec<Dim>),
    /// A slice's items.
    Items(Vec<SliceItem>),
    /// A concat axis or a `triu`/`tril` diagonal.
    Int(i64),
    /// A cast's target type.
    DType(DType),
    /// An einsum subscript.
    Spec(EinsumSpec),
    /// A tensordot's contracted axis pairs.
    Pairs(Vec<usize>, Vec<usize>),
    /// An `argmax`/`argmin`'s axis and result type.
    ArgAxis(usize, DType, bool),
}

/// What a leaf e-node holds.
#[derive(Clone, Debug, PartialEq)]
pub enum LeafKind {
    /// A parameter or `let` name, with its declared type.
    Var(Arc<str>, Ty),
    Lit(Lit),
    /// `full(shape, value)`.
    Full(Vec<Dim>, Lit),
    Attr(Attr),
}

/// A leaf e-node: compared, ordered and hashed by its text key alone
/// (the key determines the kind).
#[derive(Clone, Debug)]
pub struct Leaf {
    key: Arc<str>,
    kind: Arc<LeafKind>,
}

impl Leaf {
    pub fn new(kind: LeafKind) -> Leaf {
        Leaf {
            key: Arc::from(leaf_key(&kind)),
            kind: Arc::new(kind),
        }
    }

    pub fn kind(&self) -> &LeafKind {
        &self.kind
    }
}

impl PartialEq for Leaf {
    fn eq(&self, other: &Leaf) -> bool {
        self.key == other.key
    }
}
impl Eq for Leaf {}
impl PartialOrd for Leaf {
    fn partial_cmp(&self, other: &Leaf) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Leaf {
    fn cmp(&self, other: &Leaf) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}
impl std::hash::Hash for Leaf {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

fn joined(values: &[usize]) -> String {
    let text: Vec<String> = values.iter().map(usize::to_string).collect();
    text.join(",")
}

/// The text of an attribute as rules write it (`perm:1,0`, `axes:1`,
/// `spec:ab,bc->ac`); shapes and slice items are never written in rules
/// and only need to be unambiguous.
fn attr_key(attr: &Attr) -> String {
    match attr {
        Attr::Axes(a) => format!("axes:{}", joined(a)),
        Attr::Perm(p) => format!("perm:{}", joined(p)),
        Attr::Shape(s) => format!("shape:{s:?}"),
        Attr::Items(items) => format!("items:{items:?}"),
        Attr::Int(k) => format!("int:{k}"),
        Attr::DType(d) => format!("dtype:{d}"),
        Attr::Spec(spec) => format!("spec:{}", spec_text(spec)),
        Attr::Pairs(l, r) => format!("pairs:{};{}", joined(l), joined(r)),
        Attr::ArgAxis(axis, d, last) => format!("argaxis:{axis}:{d}:{last}"),
    }
}

/// `ab,bc->ac`.
pub fn spec_text(spec: &EinsumSpec) -> String {
    let inputs: Vec<String> = spec.inputs.iter().map(|l| l.iter().collect()).collect();
    let output: String = spec.output.iter().collect();
    format!("{}->{output}", inputs.join(","))
}

fn leaf_key(kind: &LeafKind) -> String {
    match kind {
        LeafKind::Var(name, ty) => format!("var:{name}:{ty}"),
        LeafKind::Lit(lit) => format!("lit:{lit:?}"),
        LeafKind::Full(shape, lit) => format!("full:{shape:?}:{lit:?}"),
        LeafKind::Attr(a) => attr_key(a),
    }
}

/// Parses the attribute texts rules write.
fn parse_attr(text: &str) -> Option<Attr> {
    let (tag, rest) = text.split_once(':')?;
    let list = || -> Option<Vec<usize>> {
        if rest.is_empty() {
            return Some(Vec::new());
        }
        rest.split(',').map(|s| s.parse().ok()).collect()
    };
    Some(match tag {
        "axes" => Attr::Axes(list()?),
        "perm" => Attr::Perm(list()?),
        "int" => Attr::Int(rest.parse().ok()?),
        "dtype" => Attr::DType(DType::from_name(rest)?),
        "spec" => Attr::Spec(EinsumSpec::parse(rest)?),
        _ => return None,
    })
}

/// The root of an expression as an e-node sees it.
enum Root {
    Leaf(LeafKind),
    App(Head, Option<Attr>),
}

/// An e-node of TensIR.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TensLang {
    /// An operation; its attribute leaves (at most one, see
    /// [`Head::attrs`]) come before its operands.
    App(Head, Vec<Id>),
    Leaf(Leaf),
}

/// What [`Language::matches`] compares: the head and arity, or the leaf.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Discriminant {
    App(Head, usize),
    Leaf(Arc<str>),
}

impl Language for TensLang {
    type Discriminant = Discriminant;

    fn discriminant(&self) -> Discriminant {
        match self {
            TensLang::App(h, args) => Discriminant::App(*h, args.len()),
            TensLang::Leaf(l) => Discriminant::Leaf(l.key.clone()),
        }
    }

    fn matches(&self, other: &TensLang) -> bool {
        match (self, other) {
            (TensLang::App(h, a), TensLang::App(g, b)) => h == g && a.len() == b.len(),
            (TensLang::Leaf(l), TensLang::Leaf(m)) => l == m,
            _ => false,
        }
    }

    fn children(&self) -> &[Id] {
        match self {
            TensLang::App(_, args) => args,
            TensLang::Leaf(_) => &[],
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            TensLang::App(_, args) => args,
            TensLang::Leaf(_) => &mut [],
        }
    }
}

impl fmt::Display for TensLang {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensLang::App(h, _) => write!(f, "{}", h.name()),
            TensLang::Leaf(l) => write!(f, "{}", l.key),
        }
    }
}

/// A rule names an operation or an attribute its pattern cannot parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is neither a TensIR operation nor an attribute a rule may write")]
pub struct UnknownOp(pub String);

impl FromOp for TensLang {
    type Error = UnknownOp;

    fn from_op(op: &str, children: Vec<Id>) -> Result<TensLang, UnknownOp> {
        if let Some(head) = Head::from_name(op) {
            return Ok(TensLang::App(head, children));
        }
        match parse_attr(op) {
            Some(attr) if children.is_empty() => {
                Ok(TensLang::Leaf(Leaf::new(LeafKind::Attr(attr))))
            }
            _ => Err(UnknownOp(op.to_string())),
        }
    }
}

impl Head {
    /// Every head, for parsing rule patterns.
    fn all() -> impl Iterator<Item = Head> {
        let fixed = [
            Head::Where,
            Head::Matmul,
            Head::Tensordot,
            Head::Outer,
            Head::Einsum,
            Head::Transpose,
            Head::Broadcast,
            Head::Slice,
            Head::Flip,
            Head::Reshape,
            Head::Window,
            Head::Concat,
            Head::Triu,
            Head::Tril,
            Head::Diag,
            Head::Cast,
            Head::ScatterAdd,
            Head::Cholesky,
            Head::LuNoPivot,
            Head::Syrk,
            Head::Syr2k,
            Head::MirrorLower,
        ];
        let solves = [(true, false), (true, true), (false, false), (false, true)]
            .map(|(lower, unit)| Head::TriSolve { lower, unit });
        UnaryOp::ALL
            .into_iter()
            .map(Head::Unary)
            .chain(BinaryOp::ALL.into_iter().map(Head::Binary))
            .chain(ReduceKind::ALL.into_iter().map(Head::Reduce))
            .chain(ReduceKind::ALL.into_iter().map(Head::Scan))
            .chain([true, false].map(|largest| Head::ArgExtreme { largest }))
            .chain(fixed)
            .chain(solves)
    }

    fn from_name(name: &str) -> Option<Head> {
        Head::all().find(|h| h.name() == name)
    }

    /// The TensIR name (`add`, `sum`, `trisolve_lower`).
    pub fn name(self) -> &'static str {
        match self {
            Head::Unary(u) => u.name(),
            Head::Binary(b) => b.name(),
            Head::Reduce(k) => k.name(),
            Head::Scan(k) => k.scan_name(),
            Head::ArgExtreme { largest: true } => "argmax",
            Head::ArgExtreme { largest: false } => "argmin",
            Head::TriSolve { lower, unit } => trisolve_name(lower, unit),
            Head::Where => "where",
            Head::Matmul => "matmul",
            Head::Tensordot => "tensordot",
            Head::Outer => "outer",
            Head::Einsum => "einsum",
            Head::Transpose => "transpose",
            Head::Broadcast => "broadcast",
            Head::Slice => "slice",
            Head::Flip => "flip",
            Head::Reshape => "reshape",
            Head::Window => "window",
            Head::Concat => "concat",
            Head::Triu => "triu",
            Head::Tril => "tril",
            Head::Diag => "diag",
            Head::Cast => "cast",
            Head::ScatterAdd => "scatter_add",
            Head::Cholesky => "cholesky",
            Head::LuNoPivot => "lu_nopivot",
            Head::Syrk => "syrk",
            Head::Syr2k => "syr2k",
            Head::MirrorLower => "mirror_lower",
        }
    }

    /// How many attribute leaves come before the operands.
    pub fn attrs(self) -> usize {
        match self {
            Head::Reduce(_)
            | Head::Scan(_)
            | Head::ArgExtreme { .. }
            | Head::Tensordot
            | Head::Einsum
            | Head::Transpose
            | Head::Broadcast
            | Head::Slice
            | Head::Flip
            | Head::Reshape
            | Head::Window
            | Head::Concat
            | Head::Triu
            | Head::Tril
            | Head::Cast => 1,
            _ => 0,
        }
    }

    /// The e-node shape of a TensIR expression's root: a leaf, or a head
    /// with its attribute.
    fn classify(expr: &Expr) -> Root {
        let (head, attr) = match expr.op() {
            Op::Var(name) => return Root::Leaf(LeafKind::Var(name.clone(), expr.ty().clone())),
            Op::Lit(lit) => return Root::Leaf(LeafKind::Lit(*lit)),
            Op::Full { shape, value } => return Root::Leaf(LeafKind::Full(shape.clone(), *value)),
            Op::Unary(u) => (Head::Unary(*u), None),
            Op::Binary(b) => (Head::Binary(*b), None),
            Op::Where => (Head::Where, None),
            Op::Reduce { kind, axes } => (Head::Reduce(*kind), Some(Attr::Axes(axes.clone()))),
            Op::Scan { kind, axis } => (Head::Scan(*kind), Some(Attr::Int(*axis as i64))),
            Op::ArgExtreme {
                largest,
                axis,
                dtype,
                last,
            } => (
                Head::ArgExtreme { largest: *largest },
                Some(Attr::ArgAxis(*axis, *dtype, *last)),
            ),
            Op::Matmul => (Head::Matmul, None),
            Op::Tensordot { lhs_axes, rhs_axes } => (
                Head::Tensordot,
                Some(Attr::Pairs(lhs_axes.clone(), rhs_axes.clone())),
            ),
            Op::Outer => (Head::Outer, None),
            Op::Einsum(spec) => (Head::Einsum, Some(Attr::Spec(spec.clone()))),
            Op::Transpose(p) => (Head::Transpose, Some(Attr::Perm(p.clone()))),
            Op::Broadcast(s) => (Head::Broadcast, Some(Attr::Shape(s.clone()))),
            Op::Slice(items) => (Head::Slice, Some(Attr::Items(items.clone()))),
            Op::Flip(axes) => (Head::Flip, Some(Attr::Axes(axes.clone()))),
            Op::Reshape(s) => (Head::Reshape, Some(Attr::Shape(s.clone()))),
            Op::Window(s) => (Head::Window, Some(Attr::Shape(s.clone()))),
            Op::Concat { axis } => (Head::Concat, Some(Attr::Int(*axis as i64))),
            Op::Triu(k) => (Head::Triu, Some(Attr::Int(*k))),
            Op::Tril(k) => (Head::Tril, Some(Attr::Int(*k))),
            Op::Diag => (Head::Diag, None),
            Op::Cast(d) => (Head::Cast, Some(Attr::DType(*d))),
            Op::ScatterAdd => (Head::ScatterAdd, None),
            Op::Cholesky => (Head::Cholesky, None),
            Op::TriSolve { lower, unit } => (
                Head::TriSolve {
                    lower: *lower,
                    unit: *unit,
                },
                None,
            ),
            Op::LuNoPivot => (Head::LuNoPivot, None),
            Op::Syrk => (Head::Syrk, None),
            Op::Syr2k => (Head::Syr2k, None),
            Op::MirrorLower => (Head::MirrorLower, None),
        };
        Root::App(head, attr)
    }

    /// The TensIR operation of this head with attribute `attr` (`None`
    /// when the attribute is missing or of the wrong kind).
    pub fn op(self, attr: Option<&Attr>) -> Option<Op> {
        Some(match (self, attr) {
            (Head::Unary(u), None) => Op::Unary(u),
            (Head::Binary(b), None) => Op::Binary(b),
            (Head::Where, None) => Op::Where,
            (Head::Reduce(kind), Some(Attr::Axes(axes))) => Op::Reduce {
                kind,
                axes: axes.clone(),
            },
            (Head::Scan(kind), Some(Attr::Int(axis))) => Op::Scan {
                kind,
                axis: usize::try_from(*axis).ok()?,
            },
            (Head::ArgExtreme { largest }, Some(Attr::ArgAxis(axis, dtype, last))) => {
                Op::ArgExtreme {
                    largest,
                    axis: *axis,
                    dtype: *dtype,
                    last: *last,
                }
            }
            (Head::Matmul, None) => Op::Matmul,
            (Head::Tensordot, Some(Attr::Pairs(l, r))) => Op::Tensordot {
                lhs_axes: l.clone(),
                rhs_axes: r.clone(),
            },
            (Head::Outer, None) => Op::Outer,
            (Head::Einsum, Some(Attr::Spec(s))) => Op::Einsum(s.clone()),
            (Head::Transpose, Some(Attr::Perm(p))) => Op::Transpose(p.clone()),
            (Head::Broadcast, Some(Attr::Shape(s))) => Op::Broadcast(s.clone()),
            (Head::Slice, Some(Attr::Items(items))) => Op::Slice(items.clone()),
            (Head::Flip, Some(Attr::Axes(axes))) => Op::Flip(axes.clone()),
            (Head::Reshape, Some(Attr::Shape(s))) => Op::Reshape(s.clone()),
            (Head::Window, Some(Attr::Shape(s))) => Op::Window(s.clone()),
            (Head::Concat, Some(Attr::Int(k))) => Op::Concat {
                axis: usize::try_from(*k).ok()?,
            },
            (Head::Triu, Some(Attr::Int(k))) => Op::Triu(*k),
            (Head::Tril, Some(Attr::Int(k))) => Op::Tril(*k),
            (Head::Diag, None) => Op::Diag,
            (Head::Cast, Some(Attr::DType(d))) => Op::Cast(*d),
            (Head::ScatterAdd, None) => Op::ScatterAdd,
            (Head::Cholesky, None) => Op::Cholesky,
            (Head::TriSolve { lower, unit }, None) => Op::TriSolve { lower, unit },
            (Head::LuNoPivot, None) => Op::LuNoPivot,
            (Head::Syrk, None) => Op::Syrk,
            (Head::Syr2k, None) => Op::Syr2k,
            (Head::MirrorLower, None) => Op::MirrorLower,
            _ => return None,
        })
    }
}

/// The analysis data of an e-class.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// A value: its type, and the constant every element equals when a
    /// literal or `full` is in the class.
    Value {
        ty: Ty,
        constant: Option<Lit>,
    },
    Attr(Attr),
}

/// Types every e-class. A union of classes of different types, or a node
/// whose type cannot be inferred, is a defect of a rule: it is recorded
/// (never applied silently) and the optimisation is refused.
#[derive(Debug, Default)]
pub struct Types {
    pub conflicts: Vec<String>,
}

pub type EGraph = egg::EGraph<TensLang, Types>;

/// The type of a value class.
pub fn ty_of(egraph: &EGraph, id: Id) -> Option<&Ty> {
    match &egraph[id].data {
        Data::Value { ty, .. } => Some(ty),
        Data::Attr(_) => None,
    }
}

/// The attribute an attribute class holds.
pub fn attr_of(egraph: &EGraph, id: Id) -> Option<&Attr> {
    match &egraph[id].data {
        Data::Attr(a) => Some(a),
        Data::Value { .. } => None,
    }
}

/// The constant every element of a value class equals, if known.
pub fn constant_of(egraph: &EGraph, id: Id) -> Option<Lit> {
    match &egraph[id].data {
        Data::Value { constant, .. } => *constant,
        Data::Attr(_) => None,
    }
}

/// The TensIR operation of an application and its operand classes.
pub fn app_op<'n>(egraph: &EGraph, head: Head, args: &'n [Id]) -> Option<(Op, &'n [Id])> {
    let n = head.attrs();
    let attr = match n {
        0 => None,
        _ => Some(attr_of(egraph, *args.first()?)?),
    };
    Some((head.op(attr)?, args.get(n..)?))
}

/// The type of a leaf's value (`None` for attributes).
pub fn leaf_ty(kind: &LeafKind) -> Option<Ty> {
    match kind {
        LeafKind::Var(_, ty) => Some(ty.clone()),
        LeafKind::Lit(lit) => Some(Ty::scalar(lit.dtype())),
        LeafKind::Full(shape, lit) => Some(Ty::tensor(lit.dtype(), shape.clone())),
        LeafKind::Attr(_) => None,
    }
}

impl Analysis<TensLang> for Types {
    type Data = Data;

    fn make(egraph: &mut EGraph, enode: &TensLang, _id: Id) -> Data {
        let (head, args) = match enode {
            TensLang::Leaf(leaf) => {
                return match leaf.kind() {
                    LeafKind::Attr(a) => Data::Attr(a.clone()),
                    kind => Data::Value {
                        ty: leaf_ty(kind).unwrap_or(Ty::scalar(DType::Bool)),
                        constant: match kind {
                            LeafKind::Lit(l) | LeafKind::Full(_, l) => Some(*l),
                            _ => None,
                        },
                    },
                };
            }
            TensLang::App(head, args) => (*head, args),
        };
        let inferred = app_op(egraph, head, args).and_then(|(op, operands)| {
            let tys: Option<Vec<&Ty>> = operands.iter().map(|&c| ty_of(egraph, c)).collect();
            infer(&op, &tys?).ok()
        });
        let ty = inferred.unwrap_or_else(|| {
            egraph
                .analysis
                .conflicts
                .push(format!("`{}` node without a type", head.name()));
            Ty::scalar(DType::Bool)
        });
        Data::Value { ty, constant: None }
    }

    fn merge(&mut self, a: &mut Data, b: Data) -> DidMerge {
        match (&mut *a, b) {
            (
                Data::Value { ty, constant },
                Data::Value {
                    ty: t2,
                    constant: c2,
                },
            ) => {
                if *ty != t2 {
                    self.conflicts
                        .push(format!("merged classes of types {ty} and {t2}"));
                }
                match (*constant, c2) {
                    (None, Some(c)) => {
                        *constant = Some(c);
                        DidMerge(true, false)
                    }
                    (Some(_), None) => DidMerge(false, true),
                    _ => DidMerge(false, false),
                }
            }
            (Data::Attr(x), Data::Attr(y)) => {
                if *x != y {
                    self.conflicts
                        .push(format!("merged attributes {x:?} and {y:?}"));
                }
                DidMerge(false, false)
            }
            (_, _) => {
                self.conflicts
                    .push("merged a value class with an attribute".to_string());
                DidMerge(false, false)
            }
        }
    }
}

/// Adds `expr` (a DAG: each distinct node once) and returns its class.
pub fn add_expr(egraph: &mut EGraph, expr: &Expr, memo: &mut HashMap<Expr, Id>) -> Id {
    if let Some(&id) = memo.get(expr) {
        return id;
    }
    let node = match Head::classify(expr) {
        Root::Leaf(leaf) => TensLang::Leaf(Leaf::new(leaf)),
        Root::App(head, attr) => {
            let mut args = Vec::with_capacity(expr.args().len() + 1);
            if let Some(attr) = attr {
                args.push(egraph.add(TensLang::Leaf(Leaf::new(LeafKind::Attr(attr)))));
            }
            for a in expr.args() {
                args.push(add_expr(egraph, a, memo));
            }
            TensLang::App(head, args)
        }
    };
    let id = egraph.add(node);
    memo.insert(expr.clone(), id);
    id
}

/// The expression of a leaf node (`None` for attributes).
pub fn leaf_expr(kind: &LeafKind) -> Option<Expr> {
    match kind {
        LeafKind::Var(name, ty) => Some(Expr::var(name, ty.clone())),
        LeafKind::Lit(lit) => Some(Expr::lit(*lit)),
        LeafKind::Full(shape, value) => Expr::new(
            Op::Full {
                shape: shape.clone(),
                value: *value,
            },
            Vec::new(),
        )
        .ok(),
        LeafKind::Attr(_) => None,
    }
}
