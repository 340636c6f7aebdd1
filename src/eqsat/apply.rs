//! How a rule of [`super::rules`] is applied: its gate on the element
//! type, its conditions, the attributes its binder computes, and the shape
//! check. The right-hand side is type-checked node by node before anything
//! is added, and its root must have exactly the matched class's type; a
//! rule that does not type-check at a match is not applied there.

use std::borrow::Cow;

use egg::{Applier, ENodeOrVar, Id, Language, Pattern, PatternAst, Rewrite, Subst, Symbol, Var};
use tenslift_targets::expr::infer;
use tenslift_targets::{Lit, SliceItem, Ty};

use super::lang::{attr_of, constant_of, leaf_ty, Attr, Data, EGraph, LeafKind, TensLang, Types};
use super::lang::{spec_text, Leaf};

/// The element types a rule is sound for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// An identity of IEEE arithmetic and of wrap-around integers alike
    /// (commutation, transposes, slices, negation).
    Exact,
    /// Exact for integers, whose wrap-around arithmetic is a commutative
    /// ring (modulo 2^bits), so C's results are kept bit for bit. For
    /// floats it re-orders rounding only: accepted, as lifted programs are
    /// accepted equal over the reals (the synthesizer's own algebra
    /// re-associates the same way).
    Ring,
    /// Floats only: division, which integers do not have (`trunc_div`
    /// never appears in a rule).
    Real,
}

/// What a rule is about, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    Algebra,
    /// Strength reduction of powers with a small constant exponent.
    Power,
    Scalars,
    Transpose,
    Contraction,
    Reduction,
    Slicing,
}

/// A condition on a match, naming pattern variables.
#[derive(Clone, Copy, Debug)]
pub enum Cond {
    /// The value has this rank.
    Rank(&'static str, usize),
    /// The value has rank 0.
    Scalar(&'static str),
    /// The value has rank at least 1.
    NotScalar(&'static str),
    /// Every element is the constant 0.
    Zero(&'static str),
    /// Every element is the constant 1.
    One(&'static str),
    /// Every element is this constant (an exponent: `pow(x, 2)`).
    Const(&'static str, f64),
    /// The two values have the same shape (no broadcasting between them).
    SameShape(&'static str, &'static str),
    /// The value has the matched class's shape.
    FullShape(&'static str),
    /// A permutation attribute is the identity.
    IdentityPerm(&'static str),
    /// Slice items that select everything.
    WholeSlice(&'static str),
    /// An einsum subscript equal to one of these up to renaming labels.
    Spec(&'static str, &'static [&'static str]),
    /// The matched value is a float: for rules exact in every type that
    /// pay off only where NumPy calls BLAS (integer products run NumPy's
    /// own loops, slower than the element-wise forms they replace).
    Float,
    /// In a broadcast product `full * kept` reduced over `axes`, `kept`
    /// lacks every reduced axis (it is constant along them).
    Unreduced {
        kept: &'static str,
        full: &'static str,
        axes: &'static str,
    },
}

/// Attributes or literals a rule's right-hand side needs that the match
/// does not hold (a composed permutation): new bindings, or `None` when
/// the rule does not apply.
pub type Binder = fn(&Match) -> Option<Vec<(&'static str, LeafKind)>>;

/// One rewrite rule: `lhs => rhs` where every condition holds.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub name: &'static str,
    pub family: Family,
    pub gate: Gate,
    pub lhs: &'static str,
    pub rhs: &'static str,
    pub when: &'static [Cond],
    pub bind: Option<Binder>,
}

impl Rule {
    pub const fn new(
        name: &'static str,
        family: Family,
        gate: Gate,
        lhs: &'static str,
        rhs: &'static str,
    ) -> Rule {
        Rule {
            name,
            family,
            gate,
            lhs,
            rhs,
            when: &[],
            bind: None,
        }
    }

    pub const fn when(mut self, conds: &'static [Cond]) -> Rule {
        self.when = conds;
        self
    }

    pub const fn bind(mut self, binder: Binder) -> Rule {
        self.bind = Some(binder);
        self
    }

    /// The egg rewrite; `Err` names a pattern that does not parse.
    pub fn rewrite(&'static self) -> Result<Rewrite<TensLang, Types>, String> {
        let parse = |text: &str| -> Result<Pattern<TensLang>, String> {
            text.parse()
                .map_err(|e| format!("rule `{}`: `{text}`: {e}", self.name))
        };
        let (lhs, rhs) = (parse(self.lhs)?, parse(self.rhs)?);
        let vars = lhs
            .vars()
            .into_iter()
            .chain(rhs.vars())
            .map(|v| (v.to_string(), v))
            .collect();
        let applier = Typed {
            rule: self,
            rhs,
            vars,
        };
        Rewrite::new(self.name, lhs, applier).map_err(|e| e.to_string())
    }
}

/// A match of a rule's left-hand side: what conditions and binders read.
pub struct Match<'a> {
    pub egraph: &'a EGraph,
    pub subst: &'a Subst,
    pub class: Id,
    /// The rule's pattern variables by name (`?a`), parsed once.
    vars: &'a [(String, Var)],
}

impl Match<'_> {
    fn var(&self, name: &str) -> Option<Var> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    pub fn id(&self, name: &str) -> Option<Id> {
        self.subst.get(self.var(name)?).copied()
    }

    pub fn ty(&self, name: &str) -> Option<&Ty> {
        super::lang::ty_of(self.egraph, self.id(name)?)
    }

    pub fn rank(&self, name: &str) -> Option<usize> {
        Some(self.ty(name)?.rank())
    }

    pub fn attr(&self, name: &str) -> Option<&Attr> {
        attr_of(self.egraph, self.id(name)?)
    }

    pub fn class_ty(&self) -> Option<&Ty> {
        super::lang::ty_of(self.egraph, self.class)
    }

    fn is_constant(&self, name: &str, value: f64) -> bool {
        let lit = self.id(name).and_then(|id| constant_of(self.egraph, id));
        matches!(lit, Some(l @ (Lit::Int(..) | Lit::Float(..))) if l.as_f64() == value)
    }

    fn holds(&self, cond: &Cond) -> bool {
        let shape = |n: &str| self.ty(n).map(|t| &t.shape);
        match *cond {
            Cond::Rank(v, r) => self.rank(v) == Some(r),
            Cond::Scalar(v) => self.rank(v) == Some(0),
            Cond::NotScalar(v) => self.rank(v).is_some_and(|r| r > 0),
            Cond::Zero(v) => self.is_constant(v, 0.0),
            Cond::One(v) => self.is_constant(v, 1.0),
            Cond::Const(v, c) => self.is_constant(v, c),
            Cond::SameShape(a, b) => shape(a).is_some() && shape(a) == shape(b),
            Cond::FullShape(v) => {
                shape(v).is_some() && shape(v) == self.class_ty().map(|t| &t.shape)
            }
            Cond::IdentityPerm(v) => {
                matches!(self.attr(v), Some(Attr::Perm(p)) if p.iter().enumerate().all(|(i, &a)| i == a))
            }
            Cond::WholeSlice(v) => {
                matches!(self.attr(v), Some(Attr::Items(items)) if items.iter().all(|i| *i == SliceItem::Full))
            }
            Cond::Spec(v, templates) => match self.attr(v) {
                Some(Attr::Spec(spec)) => {
                    let canonical = canonical_spec(&spec_text(spec));
                    templates.iter().any(|t| canonical_spec(t) == canonical)
                }
                _ => false,
            },
            Cond::Unreduced { kept, full, axes } => self.unreduced(kept, full, axes),
            Cond::Float => self.class_ty().is_some_and(|t| t.dtype.is_float()),
        }
    }

    fn unreduced(&self, kept: &str, full: &str, axes: &str) -> bool {
        let (Some(rk), Some(rf), Some(Attr::Axes(axes))) =
            (self.rank(kept), self.rank(full), self.attr(axes))
        else {
            return false;
        };
        rf >= rk && axes.iter().all(|&a| a < rf - rk)
    }
}

/// An einsum subscript with labels renamed `a`, `b`, … in order of first
/// appearance, so that `ij,jk->ik` and `ab,bc->ac` compare equal.
pub fn canonical_spec(text: &str) -> String {
    let mut seen: Vec<char> = Vec::new();
    text.chars()
        .map(|c| {
            if !c.is_ascii_alphabetic() {
                return c;
            }
            let k = seen.iter().position(|&s| s == c).unwrap_or_else(|| {
                seen.push(c);
                seen.len() - 1
            });
            (b'a' + k as u8) as char
        })
        .collect()
}

/// What one position of a right-hand side holds while it is checked:
/// borrowed from the e-graph or the binder, or inferred.
#[derive(Clone)]
enum Slot<'a> {
    Value(Cow<'a, Ty>),
    Attr(&'a Attr),
}

impl<'a> Slot<'a> {
    fn of_leaf(kind: &'a LeafKind) -> Option<Slot<'a>> {
        match kind {
            LeafKind::Attr(a) => Some(Slot::Attr(a)),
            other => leaf_ty(other).map(|t| Slot::Value(Cow::Owned(t))),
        }
    }

    fn of_class(egraph: &'a EGraph, id: Id) -> Slot<'a> {
        match &egraph[id].data {
            Data::Value { ty, .. } => Slot::Value(Cow::Borrowed(ty)),
            Data::Attr(a) => Slot::Attr(a),
        }
    }
}

/// The applier of a [`Rule`]: gate, conditions, binder, shape check, then
/// the right-hand side is added and merged with the matched class.
struct Typed {
    rule: &'static Rule,
    rhs: Pattern<TensLang>,
    vars: Vec<(String, Var)>,
}

impl Typed {
    /// The type of the right-hand side, or `None` when some node does not
    /// type-check.
    fn check(&self, m: &Match, bound: &[(Var, LeafKind)]) -> Option<Ty> {
        let ast: &PatternAst<TensLang> = &self.rhs.ast;
        let mut slots: Vec<Slot> = Vec::with_capacity(ast.len());
        for node in ast.as_ref() {
            let slot = match node {
                ENodeOrVar::Var(v) => match bound.iter().find(|(b, _)| b == v) {
                    Some((_, kind)) => Slot::of_leaf(kind)?,
                    None => Slot::of_class(m.egraph, *m.subst.get(*v)?),
                },
                ENodeOrVar::ENode(TensLang::Leaf(leaf)) => Slot::of_leaf(leaf.kind())?,
                ENodeOrVar::ENode(TensLang::App(head, args)) => {
                    let at = |id: &Id| slots.get(usize::from(*id));
                    let attr = match head.attrs() {
                        0 => None,
                        _ => match at(args.first()?)? {
                            Slot::Attr(a) => Some(*a),
                            Slot::Value(_) => return None,
                        },
                    };
                    let op = head.op(attr)?;
                    let tys: Vec<&Ty> = args
                        .get(head.attrs()..)?
                        .iter()
                        .map(|id| match at(id)? {
                            Slot::Value(t) => Some(t.as_ref()),
                            Slot::Attr(_) => None,
                        })
                        .collect::<Option<_>>()?;
                    Slot::Value(Cow::Owned(infer(&op, &tys).ok()?))
                }
            };
            slots.push(slot);
        }
        match slots.pop()? {
            Slot::Value(ty) => Some(ty.into_owned()),
            Slot::Attr(_) => None,
        }
    }

    /// The class the right-hand side already has in the e-graph, if every
    /// node of it is there.
    fn existing(&self, egraph: &EGraph, subst: &Subst, bound: &[(Var, LeafKind)]) -> Option<Id> {
        let ast = self.rhs.ast.as_ref();
        let mut ids: Vec<Id> = Vec::with_capacity(ast.len());
        for node in ast {
            let id = match node {
                ENodeOrVar::Var(v) => match bound.iter().find(|(b, _)| b == v) {
                    Some((_, kind)) => egraph.lookup(TensLang::Leaf(Leaf::new(kind.clone())))?,
                    None => *subst.get(*v)?,
                },
                ENodeOrVar::ENode(n) => {
                    let n = n.clone().map_children(|c| ids[usize::from(c)]);
                    egraph.lookup(n)?
                }
            };
            ids.push(id);
        }
        ids.pop()
    }

    /// Whether the rule applies at this match, with the binder's leaves.
    fn admit(&self, m: &Match) -> Option<Vec<(Var, LeafKind)>> {
        let dtype = m.class_ty()?.dtype;
        let allowed = match self.rule.gate {
            Gate::Exact | Gate::Ring => dtype.is_numeric(),
            Gate::Real => dtype.is_float(),
        };
        if !allowed || !self.rule.when.iter().all(|c| m.holds(c)) {
            return None;
        }
        match self.rule.bind {
            None => Some(Vec::new()),
            Some(binder) => binder(m)?
                .into_iter()
                .map(|(name, kind)| Some((m.var(name)?, kind)))
                .collect(),
        }
    }
}

impl Applier<TensLang, Types> for Typed {
    fn apply_one(
        &self,
        egraph: &mut EGraph,
        eclass: Id,
        subst: &Subst,
        _searcher_ast: Option<&PatternAst<TensLang>>,
        _rule_name: Symbol,
    ) -> Vec<Id> {
        let m = Match {
            egraph,
            subst,
            class: eclass,
            vars: &self.vars,
        };
        let Some(bound) = self.admit(&m) else {
            return Vec::new();
        };
        // Most matches of a saturating e-graph find their right-hand side
        // already in the class: nothing to check or add.
        let known = self.existing(egraph, subst, &bound);
        if known.is_some_and(|id| egraph.find(id) == egraph.find(eclass)) {
            return Vec::new();
        }
        if self.check(&m, &bound).as_ref() != m.class_ty() {
            return Vec::new();
        }
        let mut subst = subst.clone();
        for (var, kind) in bound {
            let id = egraph.add(TensLang::Leaf(Leaf::new(kind)));
            subst.insert(var, id);
        }
        let id = egraph.add_instantiation(&self.rhs.ast, &subst);
        if egraph.union(eclass, id) {
            vec![id]
        } else {
            Vec::new()
        }
    }
}
