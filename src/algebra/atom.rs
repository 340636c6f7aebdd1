//! Atoms: the indeterminates of the normal form.
//!
//! An atom is a [`Symbol`] (an input element such as `A[0,1]`, a scalar
//! parameter such as `alpha`, or a sketch hole), an opaque application of a
//! [`Func`] to normal-form arguments (`sqrt(x)`, `max(a, b)`,
//! `select(c, a, b)`), or the reciprocal of a polynomial that has more than
//! one term (`1/(n - 1)`). Atoms are interned: two equal atoms are the same
//! allocation, so equality is a pointer comparison and hashing reads a stored
//! hash. Their order is by content hash, then contents (never by address), so
//! normal forms sort the same way in every run and on every thread; printing
//! uses the readable [`Atom::structural_cmp`].

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

use super::expr::Expr;
use super::intern::{Fx, Interner};

/// What a symbol stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SymbolKind {
    /// A program input: an element of an input array, or a scalar parameter.
    Input,
    /// A sketch placeholder (a hole `??` to be solved for).
    Hole,
}

/// An opaque function; its applications are atoms of the normal form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Func {
    Sqrt,
    Exp,
    Log,
    Tanh,
    Abs,
    /// `pow(x, y)` with a non-integer or symbolic exponent.
    Pow,
    /// n-ary, arguments flattened, sorted and deduplicated.
    Max,
    /// n-ary, arguments flattened, sorted and deduplicated.
    Min,
    /// `select(c, a, b)`: `a` where `c ≠ 0`, else `b`.
    Select,
    /// `lt0(d)`: 1 when `d < 0`, else 0. Every ordering comparison becomes one.
    Lt0,
    /// `eq0(d)`: 1 when `d = 0`, else 0.
    Eq0,
    /// C integer division, truncating toward zero.
    TruncDiv,
    /// C integer remainder, with the sign of the dividend.
    Rem,
    /// C conversion of a real to an integer: truncation toward zero.
    Trunc,
    /// C conversion to a `bits`-wide integer type: wrap-around modulo 2^bits.
    Wrap {
        bits: u8,
        signed: bool,
    },
    /// C's `round`: the nearest integer, halves away from zero.
    Round,
    Floor,
    Ceil,
    Sin,
    Cos,
    Cosh,
    Sinh,
}

impl Func {
    pub fn name(self) -> String {
        match self {
            Func::Sqrt => "sqrt".into(),
            Func::Exp => "exp".into(),
            Func::Log => "log".into(),
            Func::Tanh => "tanh".into(),
            Func::Abs => "abs".into(),
            Func::Pow => "pow".into(),
            Func::Max => "max".into(),
            Func::Min => "min".into(),
            Func::Select => "select".into(),
            Func::Lt0 => "lt0".into(),
            Func::Eq0 => "eq0".into(),
            Func::TruncDiv => "tdiv".into(),
            Func::Rem => "rem".into(),
            Func::Trunc => "trunc".into(),
            Func::Wrap { bits, signed } => format!("wrap_{}{bits}", if signed { "i" } else { "u" }),
            Func::Round => "round".into(),
            Func::Floor => "floor".into(),
            Func::Ceil => "ceil".into(),
            Func::Sin => "sin".into(),
            Func::Cos => "cos".into(),
            Func::Cosh => "cosh".into(),
            Func::Sinh => "sinh".into(),
        }
    }

    /// Whether the application's value is always 0 or 1.
    pub fn is_predicate(self) -> bool {
        matches!(self, Func::Lt0 | Func::Eq0)
    }
}

/// The contents of an atom.
#[derive(PartialEq)]
pub enum AtomKind {
    Sym {
        kind: SymbolKind,
        name: Arc<str>,
        index: Box<[u32]>,
    },
    App {
        func: Func,
        args: Box<[Expr]>,
    },
    /// `1 / q` for a normalised `q` with at least two terms.
    Recip(Expr),
}

pub(crate) struct AtomNode {
    hash: u64,
    pub(crate) kind: AtomKind,
}

impl Drop for AtomNode {
    fn drop(&mut self) {
        ATOMS.release(self.hash);
    }
}

impl PartialEq for AtomNode {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.kind == other.kind
    }
}

static ATOMS: LazyLock<Interner<AtomNode>> = LazyLock::new(Interner::new);

/// An interned atom. Cloning is a reference-count increment.
#[derive(Clone)]
pub struct Atom(Arc<AtomNode>);

impl Atom {
    fn intern(kind: AtomKind) -> Atom {
        let mut h = Fx::default();
        match &kind {
            AtomKind::Sym { kind, name, index } => {
                h.write_u8(0);
                kind.hash(&mut h);
                name.hash(&mut h);
                index.hash(&mut h);
            }
            AtomKind::App { func, args } => {
                h.write_u8(1);
                func.hash(&mut h);
                for a in args.iter() {
                    h.write_u64(a.hash_value());
                }
            }
            AtomKind::Recip(q) => {
                h.write_u8(2);
                h.write_u64(q.hash_value());
            }
        }
        let hash = h.finish();
        // Look up by the borrowed contents; build a node only when absent
        // (a discarded node would needlessly visit the table when dropped).
        let pending = std::cell::RefCell::new(Some(kind));
        let matches = |node: &AtomNode| {
            pending
                .borrow()
                .as_ref()
                .is_some_and(|k| node.hash == hash && node.kind == *k)
        };
        let make = || {
            pending
                .borrow_mut()
                .take()
                .map(|kind| AtomNode { hash, kind })
        };
        match ATOMS.intern_with(hash, matches, make) {
            Some(node) => Atom(node),
            None => unreachable!("the pending contents are only taken once"),
        }
    }

    /// An application atom; callers pass arguments already normalised by the
    /// rules of [`super::apply`].
    pub(crate) fn app(func: Func, args: Vec<Expr>) -> Atom {
        Atom::intern(AtomKind::App {
            func,
            args: args.into_boxed_slice(),
        })
    }

    pub(crate) fn recip(q: Expr) -> Atom {
        Atom::intern(AtomKind::Recip(q))
    }

    pub fn kind(&self) -> &AtomKind {
        &self.0.kind
    }

    pub fn hash_value(&self) -> u64 {
        self.0.hash
    }

    pub fn as_symbol(&self) -> Option<Symbol> {
        matches!(self.0.kind, AtomKind::Sym { .. }).then(|| Symbol(self.clone()))
    }

    pub fn is_recip(&self) -> bool {
        matches!(self.0.kind, AtomKind::Recip(_))
    }

    /// The function and arguments of an application atom.
    pub fn as_app(&self) -> Option<(Func, &[Expr])> {
        match &self.0.kind {
            AtomKind::App { func, args } => Some((*func, args)),
            _ => None,
        }
    }

    fn rank(&self) -> u8 {
        match self.0.kind {
            AtomKind::Sym { .. } => 0,
            AtomKind::App { .. } => 1,
            AtomKind::Recip(_) => 2,
        }
    }

    /// Whether this atom is the same interned node as `other`.
    pub fn ptr_eq(&self, other: &Atom) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl PartialEq for Atom {
    fn eq(&self, other: &Atom) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for Atom {}

impl Hash for Atom {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl Atom {
    /// Order by contents: symbols by kind, name and index; applications by
    /// function, then arguments; reciprocals by polynomial. Used for
    /// printing, where people expect `A[0,0]` before `A[0,1]` before `B[0,0]`.
    pub fn structural_cmp(&self, other: &Atom) -> Ordering {
        if self.ptr_eq(other) {
            return Ordering::Equal;
        }
        match (&self.0.kind, &other.0.kind) {
            (
                AtomKind::Sym {
                    kind: k1,
                    name: n1,
                    index: i1,
                },
                AtomKind::Sym {
                    kind: k2,
                    name: n2,
                    index: i2,
                },
            ) => k1.cmp(k2).then_with(|| n1.cmp(n2)).then_with(|| i1.cmp(i2)),
            (AtomKind::App { func: f1, args: a1 }, AtomKind::App { func: f2, args: a2 }) => {
                f1.cmp(f2).then_with(|| a1.iter().cmp(a2.iter()))
            }
            (AtomKind::Recip(q1), AtomKind::Recip(q2)) => q1.cmp(q2),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl Ord for Atom {
    /// The order of factors inside normal forms: by content hash first (a
    /// deterministic function of the contents, so the same in every run),
    /// then by contents. Cheaper than [`Atom::structural_cmp`], which is
    /// only needed for display.
    fn cmp(&self, other: &Atom) -> Ordering {
        if self.ptr_eq(other) {
            return Ordering::Equal;
        }
        self.0
            .hash
            .cmp(&other.0.hash)
            .then_with(|| self.structural_cmp(other))
    }
}

impl PartialOrd for Atom {
    fn partial_cmp(&self, other: &Atom) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A symbol: an atom known to be an input or a hole. Cheap to clone, compare
/// and hash (it is an interned [`Atom`]).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol(Atom);

impl Symbol {
    pub fn new(kind: SymbolKind, name: &str, index: &[u32]) -> Symbol {
        let mut h = Fx::default();
        h.write_u8(0);
        kind.hash(&mut h);
        name.hash(&mut h);
        index.hash(&mut h);
        let hash = h.finish();
        let matches = |node: &AtomNode| match &node.kind {
            AtomKind::Sym {
                kind: k,
                name: n,
                index: i,
            } => *k == kind && &**n == name && &**i == index,
            _ => false,
        };
        let make = || {
            Some(AtomNode {
                hash,
                kind: AtomKind::Sym {
                    kind,
                    name: Arc::from(name),
                    index: index.into(),
                },
            })
        };
        match ATOMS.intern_with(hash, matches, make) {
            Some(node) => Symbol(Atom(node)),
            None => unreachable!("make always builds a node"),
        }
    }

    /// Element `index` of input array `name`.
    pub fn element(name: &str, index: &[u32]) -> Symbol {
        Symbol::new(SymbolKind::Input, name, index)
    }

    /// A scalar input parameter.
    pub fn scalar(name: &str) -> Symbol {
        Symbol::new(SymbolKind::Input, name, &[])
    }

    /// A sketch hole (scalar, or element `index` of a hole tensor).
    pub fn hole(name: &str, index: &[u32]) -> Symbol {
        Symbol::new(SymbolKind::Hole, name, index)
    }

    fn parts(&self) -> (SymbolKind, &str, &[u32]) {
        match &self.0 .0.kind {
            AtomKind::Sym { kind, name, index } => (*kind, name, index),
            // A Symbol is only ever built around a Sym atom.
            _ => unreachable!("Symbol wraps a non-symbol atom"),
        }
    }

    pub fn kind(&self) -> SymbolKind {
        self.parts().0
    }

    pub fn name(&self) -> &str {
        self.parts().1
    }

    pub fn index(&self) -> &[u32] {
        self.parts().2
    }

    pub fn is_hole(&self) -> bool {
        self.kind() == SymbolKind::Hole
    }

    pub fn atom(&self) -> &Atom {
        &self.0
    }

    pub fn to_expr(&self) -> Expr {
        Expr::atom(self.0.clone())
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, name, index) = self.parts();
        if kind == SymbolKind::Hole {
            f.write_str("?")?;
        }
        f.write_str(name)?;
        if !index.is_empty() {
            f.write_str("[")?;
            for (i, x) in index.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{x}")?;
            }
            f.write_str("]")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Live interned atoms (for tests of memory reclamation).
pub fn live_atom_count() -> usize {
    ATOMS.live_count()
}
