//! The uses of the analysis: rewrites of one statement's value, each
//! keeping the value (in real arithmetic) and each named in the report.
//!
//! - *Transpose dropped*: `transpose(x, σ)` is `x` when `σ` moves every axis
//!   within its group of `x`'s symmetry (the paper's transpose
//!   elimination).
//! - *Transpose shared*: a contraction that is another contraction of the
//!   same statement up to a permutation `σ` of axes (`B·Aᵀ` beside `A·Bᵀ`)
//!   becomes `transpose(other, σ)`, computed once (the paper's dot CSE).
//! - *Reduction rotated*: a reduction over axis `n` of a value symmetric in
//!   `n` and a later kept axis `m` reduces over `m` instead (the paper's
//!   axis rotation: the last axes have the smallest strides).
//! - *Lower triangle*: `tril(α·X Xᵀ + R)` (or `α·(P Qᵀ + Q Pᵀ)`) becomes
//!   `syrk`/`syr2k`, which computes only the triangle it keeps; with the
//!   other triangle taken from `C` (`+ triu(C, 1)`, `R = β·C`) the whole
//!   BLAS update is one call.
//! - *Mirrored*: a full symmetric `α·X Xᵀ` becomes
//!   `mirror_lower(syrk(X, 0, α, 0))`: one triangle computed, then copied.

use std::collections::HashMap;

use super::relation::{permutation_between, permutations_between, Facts};
use crate::build;
use crate::dim::Dim;
use crate::dtype::{DType, Lit};
use crate::expr::Expr;
use crate::ops::{BinaryOp, Op, ReduceKind};
use crate::syntax::print_expr;

/// Which uses a target gets: a use that is not faster on a target (as
/// measured by `scripts/symmetry_microbench.py`) is not applied there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    pub drop_transposes: bool,
    pub share_transposed: bool,
    pub rotate_reductions: bool,
    /// `tril(α·X Xᵀ + …)` by `syrk`/`syr2k`.
    pub lower_triangles: bool,
    pub mirror: Mirror,
}

/// When a full symmetric `α·X Xᵀ` is computed as one mirrored triangle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mirror {
    Never,
    /// Only where the product is not literally a matrix times its own
    /// transpose: NumPy's `matmul` already calls BLAS `syrk` for `x @
    /// x.T` (same buffer), not for `s @ s` of a symmetric `s`.
    Hidden,
    Always,
}

/// What a rewrite did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    TransposeDropped,
    TransposeShared,
    ReductionRotated,
    LowerTriangle,
    Mirrored,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::TransposeDropped => "transpose dropped",
            ChangeKind::TransposeShared => "transpose shared",
            ChangeKind::ReductionRotated => "reduction rotated",
            ChangeKind::LowerTriangle => "lower triangle",
            ChangeKind::Mirrored => "mirrored",
        }
    }
}

/// One rewrite applied: where (pre-order statement index), what, and the
/// sub-expression before and after.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub stmt: usize,
    pub kind: ChangeKind,
    pub before: String,
    pub after: String,
}

/// Rewrites the values of one statement, with the analysis of its
/// environment.
pub struct Rewriter<'f> {
    facts: &'f dyn Facts,
    policy: Policy,
    stmt: usize,
    pub changes: Vec<Change>,
    memo: HashMap<Expr, Expr>,
    /// Contractions met so far in this statement: `(original, rewritten)`.
    contractions: Vec<(Expr, Expr)>,
}

/// `α·M` as a term of a sum: the scalar factor (`None` for 1) and `M`.
type Term = (Option<Expr>, Expr);

/// The symmetric product inside a lower-triangle update.
enum Product {
    /// `X Xᵀ`.
    Gram(Expr),
    /// `P Qᵀ + Q Pᵀ`.
    Pair(Expr, Expr),
}

impl<'f> Rewriter<'f> {
    pub fn new(facts: &'f dyn Facts, policy: Policy, stmt: usize) -> Rewriter<'f> {
        Rewriter {
            facts,
            policy,
            stmt,
            changes: Vec::new(),
            memo: HashMap::new(),
            contractions: Vec::new(),
        }
    }

    /// `e` rewritten (shared sub-expressions are rewritten once).
    pub fn expr(&mut self, e: &Expr) -> Expr {
        if let Some(r) = self.memo.get(e) {
            return r.clone();
        }
        let r = self.node(e);
        self.memo.insert(e.clone(), r.clone());
        r
    }

    fn node(&mut self, e: &Expr) -> Expr {
        if self.policy.lower_triangles {
            if let Some(r) = self.lower_update(e) {
                return r;
            }
        }
        if self.policy.mirror != Mirror::Never {
            if let Some(r) = self.mirrored(e) {
                return r;
            }
        }
        let args: Vec<Expr> = e.args().iter().map(|a| self.expr(a)).collect();
        let rebuilt = if args == e.args() {
            e.clone()
        } else {
            // The rewrites keep types, so the node rebuilds.
            Expr::new(e.op().clone(), args).unwrap_or_else(|_| e.clone())
        };
        match e.op() {
            Op::Transpose(perm) if self.policy.drop_transposes => {
                self.drop_transpose(e, perm, rebuilt)
            }
            Op::Reduce { kind, axes } if self.policy.rotate_reductions => {
                self.rotate(e, (*kind, axes), rebuilt)
            }
            Op::Matmul | Op::Tensordot { .. } | Op::Outer | Op::Einsum(_)
                if self.policy.share_transposed =>
            {
                self.share(e, rebuilt)
            }
            _ => rebuilt,
        }
    }

    fn record(&mut self, kind: ChangeKind, before: &Expr, after: &Expr) {
        self.changes.push(Change {
            stmt: self.stmt,
            kind,
            before: print_expr(before),
            after: print_expr(after),
        });
    }

    /// `transpose(x, σ)` → `x` when `σ` keeps every axis in its group.
    fn drop_transpose(&mut self, e: &Expr, perm: &[usize], rebuilt: Expr) -> Expr {
        let sym = self.facts.of(&e.args()[0]);
        let within = perm.iter().enumerate().all(|(i, &p)| sym.same(i, p));
        if !within {
            return rebuilt;
        }
        let x = rebuilt.args()[0].clone();
        self.record(ChangeKind::TransposeDropped, e, &x);
        x
    }

    /// A contraction equal to an earlier one of the statement up to a
    /// permutation becomes a transpose of it.
    fn share(&mut self, e: &Expr, rebuilt: Expr) -> Expr {
        let earlier = self
            .contractions
            .iter()
            .filter(|(p, _)| p != e)
            .find_map(|(p, p_new)| {
                permutation_between(e, p, self.facts).map(|sigma| (sigma, p_new.clone()))
            });
        let Some((sigma, p_new)) = earlier else {
            self.contractions.push((e.clone(), rebuilt.clone()));
            return rebuilt;
        };
        let identity = sigma.iter().enumerate().all(|(i, &s)| i == s);
        let shared = if identity {
            Ok(p_new)
        } else {
            build::transpose(p_new, &sigma)
        };
        match shared {
            Ok(s) => {
                self.record(ChangeKind::TransposeShared, e, &s);
                s
            }
            Err(_) => rebuilt,
        }
    }

    /// A reduction over axis `n` of a value symmetric in `n` and a later
    /// kept axis `m` reduces over `m`, transposed back when the result's
    /// axes would come out in another order.
    fn rotate(&mut self, e: &Expr, (kind, axes): (ReduceKind, &[usize]), rebuilt: Expr) -> Expr {
        let x = &e.args()[0];
        let sym = self.facts.of(x);
        let rank = sym.rank();
        let mut new_axes = axes.to_vec();
        let mut swap: Vec<usize> = (0..rank).collect();
        for slot in 0..new_axes.len() {
            let n = new_axes[slot];
            let later = (n + 1..rank)
                .rev()
                .find(|&m| !new_axes.contains(&m) && sym.same(n, m) && swap[m] == m);
            if let Some(m) = later {
                new_axes[slot] = m;
                swap.swap(n, m);
            }
        }
        if new_axes == axes {
            return rebuilt;
        }
        new_axes.sort_unstable();
        let kept = |ax: &[usize]| (0..rank).filter(|a| !ax.contains(a)).collect::<Vec<_>>();
        let (old_kept, new_kept) = (kept(axes), kept(&new_axes));
        let perm: Vec<usize> = old_kept
            .iter()
            .filter_map(|&a| new_kept.iter().position(|&b| b == swap[a]))
            .collect();
        let reduced = Expr::reduce(kind, rebuilt.args()[0].clone(), new_axes);
        let result = reduced.and_then(|r| {
            if perm.iter().enumerate().all(|(i, &p)| i == p) {
                Ok(r)
            } else {
                build::transpose(r, &perm)
            }
        });
        match result {
            Ok(r) if r.ty() == e.ty() => {
                self.record(ChangeKind::ReductionRotated, e, &r);
                r
            }
            _ => rebuilt,
        }
    }

    /// `add(tril(U, 0), triu(C, 1))` with `U = α·(product) + β·C`, or a
    /// lone `tril(U, 0)`: the product's lower triangle by `syrk`/`syr2k`.
    fn lower_update(&mut self, e: &Expr) -> Option<Expr> {
        let (update, other) = match (e.op(), e.args()) {
            (Op::Binary(BinaryOp::Add), [l, r]) => {
                let (tri, upper) = match (l.op(), r.op()) {
                    (Op::Tril(0), Op::Triu(1)) => (l, r),
                    (Op::Triu(1), Op::Tril(0)) => (r, l),
                    _ => return None,
                };
                (&tri.args()[0], Some(&upper.args()[0]))
            }
            (Op::Tril(0), [u]) => (u, None),
            _ => return None,
        };
        let (product, alpha, rest) = self.product_terms(update)?;
        let d = e.dtype();
        let n = e.shape()[0].clone();
        let (c, beta) = match (&rest[..], other) {
            ([(beta, m)], Some(c)) if m == c => (self.expr(c), self.coefficient(beta, d)),
            (_, Some(_)) => return None,
            ([], None) => (zeros(&n, d)?, Expr::lit(Lit::float(0.0, d))),
            (_, None) => {
                let sum = self.sum_of(&rest)?;
                (build::tril(sum, 0).ok()?, Expr::lit(Lit::float(1.0, d)))
            }
        };
        let alpha = self.coefficient(&alpha, d);
        let args = match product {
            Product::Gram(x) => vec![self.expr(&x), c, alpha, beta],
            Product::Pair(p, q) => vec![self.expr(&p), self.expr(&q), c, alpha, beta],
        };
        let op = if args.len() == 4 { Op::Syrk } else { Op::Syr2k };
        let r = Expr::new(op, args).ok()?;
        self.record(ChangeKind::LowerTriangle, e, &r);
        Some(r)
    }

    /// A full symmetric `α·X Xᵀ`: one triangle by `syrk`, then mirrored.
    fn mirrored(&mut self, e: &Expr) -> Option<Expr> {
        if e.ty().rank() != 2 || !self.facts.of(e).same(0, 1) {
            return None;
        }
        let (Product::Gram(x), alpha, rest) = self.product_terms(e)? else {
            return None;
        };
        if !rest.is_empty() {
            return None;
        }
        if self.policy.mirror == Mirror::Hidden && self.literal_gram(e) {
            return None;
        }
        let d = e.dtype();
        let n = e.shape()[0].clone();
        let alpha = self.coefficient(&alpha, d);
        let zero = Expr::lit(Lit::float(0.0, d));
        let syrk = Expr::new(Op::Syrk, vec![self.expr(&x), zeros(&n, d)?, alpha, zero]).ok()?;
        let r = Expr::new(Op::MirrorLower, vec![syrk]).ok()?;
        self.record(ChangeKind::Mirrored, e, &r);
        Some(r)
    }

    /// `u` as `α·(symmetric product) + rest`: the product (certified
    /// symmetric by the analysis or by the alias rule), its factor `α` and
    /// the other terms.
    fn product_terms(&self, u: &Expr) -> Option<(Product, Option<Expr>, Vec<Term>)> {
        if u.ty().rank() != 2 || !u.dtype().is_float() {
            return None;
        }
        let mut ts = terms(u);
        let gram = ts.iter().position(|(_, m)| {
            self.facts.of(m).same(0, 1) && factors(m).is_some_and(|(p, q)| self.is_identity(&q, &p))
        });
        if let Some(k) = gram {
            let (alpha, m) = ts.remove(k);
            let (x, _) = factors(&m)?;
            return Some((Product::Gram(x), alpha, ts));
        }
        let (k, l) = self.transposed_pair(&ts)?;
        let (alpha, m) = ts[k].clone();
        let (p, q) = factors(&m)?;
        ts.remove(k.max(l));
        ts.remove(k.min(l));
        Some((Product::Pair(p, q), alpha, ts))
    }

    /// Whether `e`'s product is written as a matrix times its own
    /// transpose (the factors are one expression, no symmetry needed) and
    /// stays so: the transpose of a symmetric factor is dropped, which
    /// leaves `s @ s`.
    fn literal_gram(&self, e: &Expr) -> bool {
        terms(e)
            .iter()
            .filter_map(|(_, m)| factors(m))
            .any(|(p, q)| p == q && !(self.policy.drop_transposes && self.facts.of(&p).same(0, 1)))
    }

    /// Terms `k`, `l` with one factor and `P Qᵀ`, `Q Pᵀ` as matrices.
    fn transposed_pair(&self, ts: &[Term]) -> Option<(usize, usize)> {
        for k in 0..ts.len() {
            let Some((p1, q1)) = factors(&ts[k].1) else {
                continue;
            };
            for l in k + 1..ts.len() {
                let Some((p2, q2)) = factors(&ts[l].1) else {
                    continue;
                };
                if ts[k].0 == ts[l].0 && self.is_identity(&p2, &q1) && self.is_identity(&q2, &p1) {
                    return Some((k, l));
                }
            }
        }
        None
    }

    fn is_identity(&self, a: &Expr, b: &Expr) -> bool {
        let id: Vec<usize> = (0..a.ty().rank()).collect();
        permutations_between(a, b, self.facts).contains(&id)
    }

    fn coefficient(&mut self, c: &Option<Expr>, d: DType) -> Expr {
        match c {
            Some(c) => self.expr(c),
            None => Expr::lit(Lit::float(1.0, d)),
        }
    }

    /// `Σ α·M` rebuilt from rewritten parts.
    fn sum_of(&mut self, ts: &[Term]) -> Option<Expr> {
        let mut sum: Option<Expr> = None;
        for (c, m) in ts {
            let m = self.expr(m);
            let term = match c {
                Some(c) => build::mul(self.expr(c), m).ok()?,
                None => m,
            };
            sum = Some(match sum {
                Some(s) => build::add(s, term).ok()?,
                None => term,
            });
        }
        sum
    }
}

fn zeros(n: &Dim, d: DType) -> Option<Expr> {
    build::full(vec![n.clone(), n.clone()], Lit::float(0.0, d)).ok()
}

/// `e` as a sum of scaled terms, reading `add`, a scalar `mul` and a
/// division by a scalar (as a factor `1 / s`).
fn terms(e: &Expr) -> Vec<Term> {
    let whole = |x: &Expr| x.shape() == e.shape();
    let scalar = |x: &Expr| x.ty().rank() == 0;
    let scale = |ts: Vec<Term>, s: &Expr| -> Option<Vec<Term>> {
        ts.into_iter()
            .map(|(c, m)| {
                let c = match c {
                    Some(c) => build::mul(s.clone(), c).ok()?,
                    None => s.clone(),
                };
                Some((Some(c), m))
            })
            .collect()
    };
    let found = match (e.op(), e.args()) {
        (Op::Binary(BinaryOp::Add), [a, b]) if whole(a) && whole(b) => {
            let mut ts = terms(a);
            ts.extend(terms(b));
            Some(ts)
        }
        (Op::Binary(BinaryOp::Mul), [s, m]) | (Op::Binary(BinaryOp::Mul), [m, s])
            if scalar(s) && whole(m) =>
        {
            scale(terms(m), s)
        }
        (Op::Binary(BinaryOp::Div), [m, s]) if scalar(s) && whole(m) => {
            let one = Expr::lit(Lit::float(1.0, s.dtype()));
            build::div(one, s.clone())
                .ok()
                .and_then(|r| scale(terms(m), &r))
        }
        _ => None,
    };
    found.unwrap_or_else(|| vec![(None, e.clone())])
}

/// `m` as `P Qᵀ` (`m[i, j] = Σ_k P[i, k]·Q[j, k]`) for a contraction of
/// two matrices over one label.
fn factors(m: &Expr) -> Option<(Expr, Expr)> {
    let ranks: Vec<usize> = m.args().iter().map(|a| a.ty().rank()).collect();
    let spec = match m.op() {
        Op::Matmul | Op::Tensordot { .. } | Op::Einsum(_) => m.op().as_contraction(&ranks)?,
        _ => return None,
    };
    if ranks != [2, 2] || spec.output.len() != 2 {
        return None;
    }
    let (i, j) = (spec.output[0], spec.output[1]);
    let summed: Vec<char> = spec.inputs[0]
        .iter()
        .filter(|c| !spec.output.contains(c))
        .copied()
        .collect();
    let [k] = summed[..] else { return None };
    let arrange = |x: &Expr, labels: &[char], row: char| -> Option<Expr> {
        match labels {
            [a, b] if *a == row && *b == k => Some(x.clone()),
            [a, b] if *a == k && *b == row => transposed(x),
            _ => None,
        }
    };
    let (a, b) = (&m.args()[0], &m.args()[1]);
    let (la, lb) = (&spec.inputs[0], &spec.inputs[1]);
    if la.contains(&i) && lb.contains(&j) {
        Some((arrange(a, la, i)?, arrange(b, lb, j)?))
    } else {
        None
    }
}

/// `xᵀ`, reading through a transpose already there.
fn transposed(x: &Expr) -> Option<Expr> {
    match x.op() {
        Op::Transpose(p) if p[..] == [1, 0] => Some(x.args()[0].clone()),
        _ => build::transpose(x.clone(), &[1, 0]).ok(),
    }
}

/// Distinct `transpose` nodes in `e` (the paper's measure of redundant
/// data movement).
pub fn count_transposes(e: &Expr) -> usize {
    let mut n = 0;
    e.walk_unique(&mut |x| {
        if matches!(x.op(), Op::Transpose(_)) {
            n += 1;
        }
    });
    n
}
