//! Contraction sketches with a tensor hole, solved by coefficient
//! extraction (TENSORIZE's algebraic solving for `einsum(X, ?H)`).
//!
//! When every element of the target is linear in the symbols of a known
//! operand `X` (an input array read through a view, its elements distinct
//! symbols), the coefficient of `X[x]` in `T[t]` is the hole's value at the
//! position the pair `(t, x)` names. The einsum's labels are read off the
//! pairs with non-zero coefficient: an axis of `X` whose coordinate always
//! equals one axis of `T` is a free (kept) label, one fixed at the last or
//! first coordinate is sliced away, the rest are summed. The hole holds the
//! summed labels then the target's labels `X` lacks (plus, when the
//! coefficients depend on them, the shared labels too); its value is
//! checked by recomputing the contraction exactly, then searched for
//! recursively like any other hole.

use std::time::Instant;

use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, BinaryOp, DType, Dim, Expr};

use super::search::{Found, Search, Timeout};
use crate::algebra::{simp_score, Expr as Value, Symbol, Tensor};

/// Holes bigger than this many elements per target element are not
/// searched: they would be sparse tensors no library stub computes.
const MAX_HOLE_GROWTH: usize = 4;

/// What one axis of the known operand becomes in the contraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AxisRole {
    /// Equal to this axis of the target.
    Kept(usize),
    /// Fixed at one coordinate (sliced away).
    Fixed(usize),
    /// Summed over.
    Summed,
}

/// A solved contraction sketch: `target = einsum(operand', hole)` where
/// `operand'` is the operand with its fixed axes sliced away.
#[derive(Clone, Debug)]
pub struct Extraction {
    roles: Vec<AxisRole>,
    /// Einsum labels of the sliced operand, the hole and the target.
    operand_labels: Vec<char>,
    hole_labels: Vec<char>,
    target_labels: Vec<char>,
    /// The hole's required value.
    pub hole: Tensor,
    /// The part of the target free of the operand (`target = einsum + rest`);
    /// all zeros for a pure contraction.
    pub rest: Tensor,
}

/// One non-zero coefficient: target offset, operand index, coefficient.
struct Pair {
    target: Vec<usize>,
    operand: Vec<usize>,
    coeff: Value,
}

/// The operand's elements as distinct symbols, or `None`.
fn symbol_elements(operand: &Tensor) -> Option<Vec<Symbol>> {
    let mut symbols = Vec::with_capacity(operand.len());
    for e in operand.elems() {
        let s = e.as_symbol()?;
        symbols.push(s);
    }
    let mut sorted = symbols.clone();
    sorted.sort();
    sorted.dedup();
    (sorted.len() == symbols.len()).then_some(symbols)
}

/// The non-zero coefficients of `operand`'s symbols in `target`, when every
/// element is linear in them, and the part of the target free of them.
fn coefficient_pairs(target: &Tensor, operand: &Tensor) -> Option<(Vec<Pair>, Tensor)> {
    let symbols = symbol_elements(operand)?;
    let mut by_symbol: Vec<(Symbol, usize)> = symbols
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, s)| (s, i))
        .collect();
    by_symbol.sort();
    let wrt: Vec<Symbol> = by_symbol.iter().map(|(s, _)| s.clone()).collect();
    let mut pairs = Vec::new();
    let mut rest = vec![Value::zero(); target.len()];
    for (offset, elem) in target.elems().iter().enumerate() {
        if elem.is_zero() {
            continue;
        }
        let index = target.index_of(offset);
        for (mono, coeff) in elem.coefficients(&wrt).ok()? {
            if mono.is_one() {
                rest[offset] = coeff;
                continue;
            }
            let [(atom, 1)] = mono.factors() else {
                return None;
            };
            let symbol = atom.as_symbol()?;
            let at = wrt.binary_search(&symbol).ok()?;
            pairs.push(Pair {
                target: index.clone(),
                operand: operand.index_of(by_symbol[at].1),
                coeff,
            });
        }
    }
    let rest = Tensor::new(target.shape().to_vec(), rest).ok()?;
    (!pairs.is_empty()).then_some((pairs, rest))
}

/// The role of each operand axis: kept as the first unused target axis
/// whose coordinate it always equals, else fixed when it never varies,
/// else summed.
fn axis_roles(pairs: &[Pair], operand_shape: &[usize], target_shape: &[usize]) -> Vec<AxisRole> {
    let mut used = vec![false; target_shape.len()];
    let mut roles = Vec::with_capacity(operand_shape.len());
    for (axis, &extent) in operand_shape.iter().enumerate() {
        let kept = (0..target_shape.len()).find(|&b| {
            !used[b]
                && target_shape[b] == extent
                && pairs.iter().all(|p| p.operand[axis] == p.target[b])
        });
        let first = pairs[0].operand[axis];
        let role = match kept {
            Some(b) => {
                used[b] = true;
                AxisRole::Kept(b)
            }
            None if extent > 1 && pairs.iter().all(|p| p.operand[axis] == first) => {
                AxisRole::Fixed(first)
            }
            None => AxisRole::Summed,
        };
        roles.push(role);
    }
    roles
}

/// Label of target axis `b`, and of the `n`-th summed axis.
fn target_label(b: usize) -> char {
    (b'a' + b as u8) as char
}

fn summed_label(target_rank: usize, n: usize) -> char {
    (b'a' + (target_rank + n) as u8) as char
}

impl Extraction {
    /// Solves `target = einsum(operand, ?h)` for the hole, when it exists.
    pub fn solve(target: &Tensor, operand: &Tensor) -> Option<Extraction> {
        if operand.shape().is_empty() || target.shape().len() + operand.shape().len() > 20 {
            return None;
        }
        let (pairs, rest) = coefficient_pairs(target, operand)?;
        // A scalar hole is an element-wise scaling, the arithmetic
        // sketches' business.
        if pairs.iter().all(|p| p.operand == pairs[0].operand) && operand.len() > 1 {
            return None;
        }
        let linear = target.zip_with(&rest, |t, r| t - r).ok()?;
        let target = &linear;
        let roles = axis_roles(&pairs, operand.shape(), target.shape());
        let target_rank = target.shape().len();
        let mut operand_labels = Vec::new();
        let mut summed = Vec::new();
        for (axis, role) in roles.iter().enumerate() {
            match role {
                AxisRole::Kept(b) => operand_labels.push(target_label(*b)),
                AxisRole::Summed => {
                    let l = summed_label(target_rank, summed.len());
                    summed.push(axis);
                    operand_labels.push(l);
                }
                AxisRole::Fixed(_) => {}
            }
        }
        let kept: Vec<usize> = roles
            .iter()
            .filter_map(|r| match r {
                AxisRole::Kept(b) => Some(*b),
                _ => None,
            })
            .collect();
        let free: Vec<usize> = (0..target_rank).filter(|b| !kept.contains(b)).collect();
        // Nothing summed and nothing added: an element-wise product, the
        // arithmetic sketches' business.
        if summed.is_empty() && free.is_empty() {
            return None;
        }
        // Without the shared labels first (the hole does not depend on them),
        // then with them (a batched contraction).
        for batched in [false, true] {
            let mut hole_axes: Vec<HoleAxis> = Vec::new();
            if batched {
                if kept.is_empty() {
                    continue;
                }
                hole_axes.extend(kept.iter().map(|&b| HoleAxis::Target(b)));
            }
            hole_axes.extend(summed.iter().map(|&a| HoleAxis::Operand(a)));
            hole_axes.extend(free.iter().map(|&b| HoleAxis::Target(b)));
            let extraction = Self::fill(
                target,
                operand,
                &pairs,
                &roles,
                &hole_axes,
                &operand_labels,
                &summed,
            );
            if let Some(extraction) = extraction {
                return Some(Extraction {
                    rest: rest.clone(),
                    ..extraction
                });
            }
        }
        None
    }

    /// The hole over `hole_axes` from the pairs, verified by recomputing
    /// every target element.
    fn fill(
        target: &Tensor,
        operand: &Tensor,
        pairs: &[Pair],
        roles: &[AxisRole],
        hole_axes: &[HoleAxis],
        operand_labels: &[char],
        summed: &[usize],
    ) -> Option<Extraction> {
        let target_rank = target.shape().len();
        let extent = |a: &HoleAxis| match a {
            HoleAxis::Target(b) => target.shape()[*b],
            HoleAxis::Operand(a) => operand.shape()[*a],
        };
        let hole_shape: Vec<usize> = hole_axes.iter().map(extent).collect();
        if hole_shape.is_empty() {
            return None;
        }
        let hole_len: usize = hole_shape.iter().product();
        if hole_len > MAX_HOLE_GROWTH * target.len().max(operand.len()) {
            return None;
        }
        let position = |t: &[usize], x: &[usize]| -> Vec<usize> {
            hole_axes
                .iter()
                .map(|a| match a {
                    HoleAxis::Target(b) => t[*b],
                    HoleAxis::Operand(a) => x[*a],
                })
                .collect()
        };
        let mut values: Vec<Option<Value>> = vec![None; hole_len];
        let scratch = Tensor::from_fn(&hole_shape, |_| Value::zero());
        for p in pairs {
            let at = scratch.offset(&position(&p.target, &p.operand))?;
            match &values[at] {
                Some(v) if *v != p.coeff => return None,
                Some(_) => {}
                None => values[at] = Some(p.coeff.clone()),
            }
        }
        let hole = Tensor::new(
            hole_shape.clone(),
            values
                .into_iter()
                .map(|v| v.unwrap_or_else(Value::zero))
                .collect(),
        )
        .ok()?;
        // Recompute: T[t] = Σ over summed coordinates of X[x] · H[h].
        let summed_extents: Vec<usize> = summed.iter().map(|&a| operand.shape()[a]).collect();
        let summed_count: usize = summed_extents.iter().product();
        for (offset, expected) in target.elems().iter().enumerate() {
            let t = target.index_of(offset);
            let mut total = Value::zero();
            for s in 0..summed_count {
                let mut rest = s;
                let mut coords = vec![0; summed.len()];
                for (n, e) in summed_extents.iter().enumerate().rev() {
                    coords[n] = rest % e;
                    rest /= e;
                }
                let x: Vec<usize> = roles
                    .iter()
                    .enumerate()
                    .map(|(axis, role)| match role {
                        AxisRole::Kept(b) => t[*b],
                        AxisRole::Fixed(c) => *c,
                        AxisRole::Summed => {
                            coords[summed.iter().position(|&a| a == axis).unwrap_or(0)]
                        }
                    })
                    .collect();
                let h = hole.get(&position(&t, &x))?;
                if h.is_zero() {
                    continue;
                }
                total = total.add(&operand.get(&x)?.mul(h));
            }
            if total != *expected {
                return None;
            }
        }
        let hole_labels = hole_axes
            .iter()
            .map(|a| match a {
                HoleAxis::Target(b) => target_label(*b),
                HoleAxis::Operand(a) => {
                    summed_label(target_rank, summed.iter().position(|s| s == a).unwrap_or(0))
                }
            })
            .collect();
        let extraction = Extraction {
            roles: roles.to_vec(),
            operand_labels: operand_labels.to_vec(),
            hole_labels,
            target_labels: (0..target_rank).map(target_label).collect(),
            rest: Tensor::from_fn(target.shape(), |_| Value::zero()),
            hole,
        };
        Some(extraction.with_input_layout())
    }

    /// The hole's axes reordered so that its elements read some input in
    /// index order when such an order exists (`B` rather than `B.T`), which
    /// the library then finds as a leaf.
    fn with_input_layout(self) -> Extraction {
        let rank = self.hole.shape().len();
        if !(2..=4).contains(&rank) {
            return self;
        }
        let sample: Vec<(Vec<usize>, Vec<Symbol>)> = self
            .hole
            .elems()
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.is_zero())
            .take(24)
            .map(|(i, e)| (self.hole.index_of(i), e.vars()))
            .collect();
        let reads_in_order = |perm: &[usize]| {
            sample.iter().all(|(index, vars)| {
                vars.iter().any(|s| {
                    s.index().len() == rank
                        && perm
                            .iter()
                            .zip(s.index())
                            .all(|(&p, &i)| index[p] == i as usize)
                })
            })
        };
        let identity: Vec<usize> = (0..rank).collect();
        if sample.is_empty() || reads_in_order(&identity) {
            return self;
        }
        let Some(perm) = permutations(rank).into_iter().find(|p| reads_in_order(p)) else {
            return self;
        };
        let old_shape = self.hole.shape().to_vec();
        let shape: Vec<usize> = perm.iter().map(|&p| old_shape[p]).collect();
        let hole = Tensor::from_fn(&shape, |idx| {
            let mut old = vec![0; rank];
            for (k, &p) in perm.iter().enumerate() {
                old[p] = idx[k];
            }
            self.hole.get(&old).cloned().unwrap_or_else(Value::zero)
        });
        let hole_labels = perm.iter().map(|&p| self.hole_labels[p]).collect();
        Extraction {
            hole,
            hole_labels,
            ..self
        }
    }

    /// The slice that removes the operand's fixed axes, when they sit at
    /// the first or last coordinate (expressible at every size).
    fn operand_view(&self, operand: &Expr, extents: &[usize]) -> Option<Expr> {
        if !self.roles.iter().any(|r| matches!(r, AxisRole::Fixed(_))) {
            return Some(operand.clone());
        }
        let shape = operand.shape().to_vec();
        let mut items = Vec::with_capacity(self.roles.len());
        for (axis, role) in self.roles.iter().enumerate() {
            items.push(match role {
                AxisRole::Fixed(0) => SliceItem::Index(Dim::constant(0)),
                AxisRole::Fixed(c) if *c + 1 == extents[axis] => {
                    SliceItem::Index(shape[axis].add(&Dim::constant(-1)).ok()?)
                }
                AxisRole::Fixed(_) => return None,
                _ => SliceItem::Full,
            });
        }
        build::slice(operand.clone(), items).ok()
    }

    /// The TensIR contraction of `operand` (the unsliced operand) with the
    /// solved `hole`: a `matmul` when the labels are a matrix product, an
    /// `einsum` otherwise.
    pub fn rebuild(&self, operand: &Expr, extents: &[usize], hole: Expr) -> Option<Expr> {
        let x = self.operand_view(operand, extents)?;
        let (xl, hl, tl) = (&self.operand_labels, &self.hole_labels, &self.target_labels);
        for (left, ll, right, rl) in [(&x, xl, &hole, hl), (&hole, hl, &x, xl)] {
            if is_matmul(ll, rl, tl) {
                if let Ok(e) = build::matmul(left.clone(), right.clone()) {
                    return Some(e);
                }
            }
        }
        let spec = format!(
            "{},{}->{}",
            xl.iter().collect::<String>(),
            hl.iter().collect::<String>(),
            tl.iter().collect::<String>()
        );
        build::einsum(&spec, vec![x, hole]).ok()
    }
}

/// An axis of the hole: a target axis or a summed operand axis.
#[derive(Clone, Copy, Debug)]
enum HoleAxis {
    Target(usize),
    Operand(usize),
}

/// Whether `left @ right` computes the labels `out`: ranks 1–2, the last
/// label of `left` equal to the first of `right` and summed.
fn is_matmul(left: &[char], right: &[char], out: &[char]) -> bool {
    if !(1..=2).contains(&left.len()) || !(1..=2).contains(&right.len()) {
        return false;
    }
    let c = left[left.len() - 1];
    if right[0] != c || out.contains(&c) {
        return false;
    }
    let expected: Vec<char> = left[..left.len() - 1]
        .iter()
        .chain(&right[1..])
        .copied()
        .collect();
    expected == out
}

/// All permutations of `0..n`, identity first.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut out = vec![(0..n).collect::<Vec<usize>>()];
    let mut i = 0;
    while i < out.len() {
        let p = out[i].clone();
        for a in 0..n {
            for b in a + 1..n {
                let mut q = p.clone();
                q.swap(a, b);
                if !out.contains(&q) {
                    out.push(q);
                }
            }
        }
        i += 1;
    }
    out
}

impl Search<'_> {
    /// `einsum(X, ?h)` and `einsum(X, ?h) + ?r` sketches over every library
    /// leaf `X` that is an array of distinct input symbols, with `?h` solved
    /// by coefficient extraction and `?r` the part of the target free of
    /// `X`; holes are searched simplest first (Simp score). A target that is
    /// a leaf read at its first or last coordinates is that slice.
    pub fn contraction(
        &self,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Timeout> {
        if target.elems().iter().all(|e| e.is_zero()) {
            return Ok(None);
        }
        if let Some(found) = self.sliced_leaf(target, dtype, bound) {
            return Ok(Some(found));
        }
        if depth == 0 {
            return Ok(None);
        }
        let target_vars = target.vars();
        let mut candidates: Vec<(f64, usize, Extraction)> = Vec::new();
        for (i, stub) in self.library.stubs.iter().enumerate() {
            if stub.depth != 0
                || stub.expr.dtype() != dtype
                || stub.value.shape().is_empty()
                || !stub
                    .vars
                    .iter()
                    .all(|v| target_vars.binary_search(v).is_ok())
            {
                continue;
            }
            if Instant::now() > self.deadline {
                return Err(Timeout);
            }
            if let Some(extraction) = Extraction::solve(target, &stub.value) {
                let score = simp_score(&[extraction.hole.clone(), extraction.rest.clone()]);
                candidates.push((score, i, extraction));
            }
        }
        candidates.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut best: Option<Found> = None;
        for (_, i, extraction) in candidates {
            let stub = &self.library.stubs[i];
            let (operand, extents) = (stub.expr.clone(), stub.value.shape().to_vec());
            let mut op_cost = stub.cost + target.len() as f64 * 2.0 * contracted_len(&extraction);
            let has_rest = !extraction.rest.elems().iter().all(|e| e.is_zero());
            if has_rest {
                op_cost += target.len() as f64;
            }
            let limit = best.as_ref().map_or(bound, |b| b.cost);
            if op_cost >= limit {
                continue;
            }
            self.stats.coefficient_solve();
            let Some(h) = self.solve(&extraction.hole, dtype, depth - 1, limit - op_cost)? else {
                self.stats.backtrack();
                continue;
            };
            let Some(mut expr) = extraction.rebuild(&operand, &extents, h.expr) else {
                continue;
            };
            let mut cost = op_cost + h.cost;
            if has_rest {
                let Some(r) = self.solve(&extraction.rest, dtype, depth - 1, limit - cost)? else {
                    self.stats.backtrack();
                    continue;
                };
                let Ok(sum) = Expr::binary(BinaryOp::Add, expr, r.expr) else {
                    continue;
                };
                expr = sum;
                cost += r.cost;
            }
            if cost < limit {
                best = Some(Found { expr, cost });
                if self.first {
                    return Ok(best);
                }
            }
        }
        Ok(best)
    }

    /// A leaf (any readable array, also one holding more inputs than the
    /// target mentions) read at fixed first or last coordinates of its
    /// leading axes: `A[n - 1, m - 1, :]` is what a scratch array left by
    /// the last iteration holds.
    fn sliced_leaf(&self, target: &Tensor, dtype: DType, bound: f64) -> Option<Found> {
        let rank = target.shape().len();
        let first = target.elems().first()?;
        for stub in self.library.leaves_all() {
            let shape = stub.value.shape();
            if stub.expr.dtype() != dtype
                || shape.len() <= rank
                || shape[shape.len() - rank..] != *target.shape()
                || stub.cost >= bound
            {
                continue;
            }
            let lead = shape.len() - rank;
            let block: usize = target.shape().iter().product();
            for (at, e) in stub.value.elems().iter().enumerate().step_by(block.max(1)) {
                if e != first {
                    continue;
                }
                let index = stub.value.index_of(at);
                let same =
                    (0..block).all(|k| stub.value.elems().get(at + k) == target.elems().get(k));
                if !same {
                    continue;
                }
                let mut items = Vec::with_capacity(shape.len());
                for (axis, &c) in index.iter().take(lead).enumerate() {
                    let dim = stub.expr.shape()[axis].clone();
                    items.push(if c == 0 {
                        SliceItem::Index(Dim::constant(0))
                    } else if c + 1 == shape[axis] {
                        SliceItem::Index(dim.add(&Dim::constant(-1)).ok()?)
                    } else {
                        break;
                    });
                }
                if items.len() != lead {
                    continue;
                }
                items.extend((0..rank).map(|_| SliceItem::Full));
                if let Ok(expr) = build::slice(stub.expr.clone(), items) {
                    return Some(Found {
                        expr,
                        cost: stub.cost,
                    });
                }
            }
        }
        None
    }
}

/// For a target whose every element is one monomial with every exponent a
/// multiple of `k` (the largest such `k` ≤ 5, at least 2), its `k`-th root
/// and `k`: `x**4` is `(x)` multiplied four times.
pub fn monomial_root(target: &Tensor) -> Option<(Tensor, u32)> {
    let mut gcd = 0i32;
    for e in target.elems() {
        let [term] = e.terms() else { return None };
        if !term.coeff.is_one() {
            return None;
        }
        for (_, exp) in term.mono.factors() {
            if *exp <= 0 {
                return None;
            }
            gcd = num_integer::Integer::gcd(&gcd, exp);
        }
    }
    let k = (2..=5).rev().find(|k| gcd % k == 0)?;
    let root = target.map(|e| {
        let term = &e.terms()[0];
        let factors = term
            .mono
            .factors()
            .iter()
            .map(|(a, x)| (a.clone(), x / k))
            .collect();
        crate::algebra::Mono::from_factors(factors).to_expr()
    });
    Some((root, k as u32))
}

impl Search<'_> {
    /// `?h * ?h * … * ?h` for a target that is a power of a monomial
    /// tensor (`A*A*A*A*A`), the hole its root.
    pub fn power(
        &self,
        target: &Tensor,
        dtype: DType,
        depth: u32,
        bound: f64,
    ) -> Result<Option<Found>, Timeout> {
        let Some((root, k)) = monomial_root(target).filter(|_| depth > 0) else {
            return Ok(None);
        };
        let step = target.len() as f64 * f64::from(k - 1);
        self.stats.pattern_match();
        let Some(h) = self.solve(&root, dtype, depth - 1, bound - step)? else {
            self.stats.backtrack();
            return Ok(None);
        };
        let mut expr = h.expr.clone();
        for _ in 1..k {
            match Expr::binary(BinaryOp::Mul, expr, h.expr.clone()) {
                Ok(e) => expr = e,
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(Found {
            expr,
            cost: h.cost + step,
        }))
    }
}

/// How many products each target element sums (at least 1).
fn contracted_len(extraction: &Extraction) -> f64 {
    let summed = extraction
        .hole_labels
        .iter()
        .zip(extraction.hole.shape())
        .filter(|(l, _)| !extraction.target_labels.contains(l))
        .map(|(_, &e)| e)
        .product::<usize>();
    summed.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algebra::Expr as V;

    /// `T[i, j] = Σ_k A[i, k] · B[k, j]` at sizes 2×3 · 3×2.
    fn matmul_target(a: &Tensor, b: &Tensor) -> Tensor {
        Tensor::from_fn(&[2, 2], |t| {
            let mut acc = V::zero();
            for k in 0..3u32 {
                let x = a.get(&[t[0], k as usize]).expect("a").clone();
                let y = b.get(&[k as usize, t[1]]).expect("b").clone();
                acc = acc.add(&x.mul(&y));
            }
            acc
        })
    }

    #[test]
    fn the_hole_of_a_matrix_product_is_the_other_factor() {
        let a = Tensor::of_symbols("A", &[2, 3], false);
        let b = Tensor::of_symbols("B", &[3, 2], false);
        let target = matmul_target(&a, &b);
        let found = Extraction::solve(&target, &a).expect("solved");
        assert_eq!(found.hole, b);
        assert_eq!(found.operand_labels, vec!['a', 'c']);
        assert_eq!(found.hole_labels, vec!['c', 'b']);
        // Solving for the right factor gives the left one.
        let found = Extraction::solve(&target, &b).expect("solved");
        assert_eq!(found.hole, a);
    }

    #[test]
    fn a_scaled_transposed_factor_keeps_the_scale_in_the_hole_and_reads_in_order() {
        // T[i, j] = Σ_k A[i, k] · 2·B[j, k]: the hole is 2·B, laid out as B.
        let a = Tensor::of_symbols("A", &[2, 3], false);
        let b = Tensor::of_symbols("B", &[2, 3], false);
        let bt = Tensor::from_fn(&[3, 2], |i| {
            b.get(&[i[1], i[0]])
                .expect("b")
                .scale(&crate::algebra::Rat::int(2))
        });
        let target = matmul_target(&a, &bt);
        let found = Extraction::solve(&target, &a).expect("solved");
        let doubled = b.map(|e| e.scale(&crate::algebra::Rat::int(2)));
        assert_eq!(found.hole, doubled);
        assert_eq!(found.hole_labels, vec!['b', 'c']);
    }

    #[test]
    fn a_batched_operand_keeps_its_leading_axes() {
        // doitgen: T[r, q, p] = Σ_s A[r, q, s] · C[s, p].
        let a = Tensor::of_symbols("A", &[2, 2, 3], false);
        let c = Tensor::of_symbols("C", &[3, 3], false);
        let target = Tensor::from_fn(&[2, 2, 3], |t| {
            let mut acc = V::zero();
            for s in 0..3 {
                let x = a.get(&[t[0], t[1], s]).expect("a").clone();
                acc = acc.add(&x.mul(c.get(&[s, t[2]]).expect("c")));
            }
            acc
        });
        let found = Extraction::solve(&target, &a).expect("solved");
        assert_eq!(found.hole, c);
        assert_eq!(found.operand_labels, vec!['a', 'b', 'd']);
        assert_eq!(found.hole_labels, vec!['d', 'c']);
    }

    #[test]
    fn a_term_free_of_the_operand_is_the_rest_and_a_quadratic_one_no_contraction() {
        let a = Tensor::of_symbols("A", &[2, 3], false);
        let b = Tensor::of_symbols("B", &[3, 2], false);
        let c = Tensor::of_symbols("C", &[2, 2], false);
        let product = matmul_target(&a, &b);
        let target = product.zip_with(&c, |p, c| p + c).expect("same shape");
        let found = Extraction::solve(&target, &a).expect("solved");
        assert_eq!(found.hole, b);
        assert_eq!(found.rest, c);
        // Quadratic in the operand: A·Aᵀ is no contraction with a known hole.
        let at = Tensor::from_fn(&[3, 2], |i| a.get(&[i[1], i[0]]).expect("a").clone());
        let square = matmul_target(&a, &at);
        assert!(Extraction::solve(&square, &a).is_none());
    }

    #[test]
    fn an_operand_read_at_its_last_row_is_sliced() {
        // s[p] = Σ_k A[1, k] · C[k, p] with A: 2×3.
        let a = Tensor::of_symbols("A", &[2, 3], false);
        let c = Tensor::of_symbols("C", &[3, 2], false);
        let target = Tensor::from_fn(&[2], |t| {
            let mut acc = V::zero();
            for k in 0..3 {
                let x = a.get(&[1, k]).expect("a").clone();
                acc = acc.add(&x.mul(c.get(&[k, t[0]]).expect("c")));
            }
            acc
        });
        let found = Extraction::solve(&target, &a).expect("solved");
        assert_eq!(found.roles[0], AxisRole::Fixed(1));
        assert_eq!(found.hole, c);
    }

    #[test]
    fn a_fifth_power_has_its_base_as_root() {
        let a = Tensor::of_symbols("A", &[2, 2], false);
        let fifth = a.map(|e| e.pow(5).expect("pow"));
        assert_eq!(monomial_root(&fifth), Some((a.clone(), 5)));
        let square_of_product = a.map(|e| e.mul(e).mul(&sym("x").mul(&sym("x"))));
        let (root, k) = monomial_root(&square_of_product).expect("a square");
        assert_eq!(k, 2);
        assert_eq!(root, a.map(|e| e.mul(&sym("x"))));
        // A sum is no monomial power.
        assert!(monomial_root(&a.map(|e| e.add(&V::one()))).is_none());
    }

    fn sym(name: &str) -> V {
        V::symbol(&Symbol::scalar(name))
    }

    #[test]
    fn matrix_products_are_recognised_from_their_labels() {
        assert!(is_matmul(&['a', 'c'], &['c', 'b'], &['a', 'b']));
        assert!(is_matmul(&['a', 'c'], &['c'], &['a']));
        assert!(!is_matmul(&['c', 'a'], &['c', 'b'], &['a', 'b']));
        assert_eq!(permutations(3).len(), 6);
    }
}
