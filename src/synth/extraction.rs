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
//!
//! A target that is a sum of several contractions of the same operand
//! (`A @ B.T + B @ A.T`, PolyBench's syr2k) has no single hole: each
//! operand element meets the target under two index maps. A [`Peel`]
//! picks one map (one role per operand axis), reads that contraction's
//! hole off the pairs the map alone explains, and leaves the remainder
//! `target - einsum(X, hole)` to be solved on its own; the remainder is
//! computed exactly, so a wrong guess only costs a failed subproblem.

use tenslift_targets::ops::SliceItem;
use tenslift_targets::{build, Dim, Expr};

use crate::algebra::{Symbol, Tensor, Value};

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
        let Some(first) = pairs.first().map(|p| p.operand[axis]) else {
            roles.push(AxisRole::Summed);
            continue;
        };
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
        // No pair (an empty target) determines no hole; a scalar hole is an
        // element-wise scaling, the arithmetic sketches' business.
        let first = pairs.first()?;
        if pairs.iter().all(|p| p.operand == first.operand) && operand.len() > 1 {
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
        let hole = hole_of(target, operand, pairs, hole_axes)?;
        if !recomputes(target, operand, &hole, roles, hole_axes, summed) {
            return None;
        }
        let extraction = Extraction {
            roles: roles.to_vec(),
            operand_labels: operand_labels.to_vec(),
            hole_labels: hole_labels(hole_axes, summed, target_rank),
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
        match self.input_layout() {
            Some(perm) => self.permuted(&perm),
            None => self,
        }
    }

    /// The permutation of the hole's axes that reads an input in index
    /// order, when it is not the identity.
    fn input_layout(&self) -> Option<Vec<usize>> {
        let rank = self.hole.shape().len();
        if !(2..=4).contains(&rank) {
            return None;
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
            return None;
        }
        permutations(rank).into_iter().find(|p| reads_in_order(p))
    }

    /// The extraction with its hole's axes in the order `perm`.
    fn permuted(self, perm: &[usize]) -> Extraction {
        let hole = permute_axes(&self.hole, perm);
        let hole_labels = perm.iter().map(|&p| self.hole_labels[p]).collect();
        Extraction {
            hole,
            hole_labels,
            ..self
        }
    }

    /// The value of `einsum(operand', hole)` over a target of `target_shape`,
    /// for any hole value of the extraction's hole shape.
    fn contribution(
        &self,
        operand: &Tensor,
        hole: &Tensor,
        target_shape: &[usize],
    ) -> Option<Tensor> {
        let target_rank = target_shape.len();
        let summed_axes: Vec<usize> = self
            .roles
            .iter()
            .enumerate()
            .filter(|(_, r)| **r == AxisRole::Summed)
            .map(|(a, _)| a)
            .collect();
        let summed_extents: Vec<usize> = summed_axes.iter().map(|&a| operand.shape()[a]).collect();
        let summed_count: usize = summed_extents.iter().product();
        let mut failed = false;
        let value = Tensor::from_fn(target_shape, |t| {
            let mut total = Value::zero();
            let mut coords = vec![0; summed_axes.len()];
            for s in 0..summed_count {
                let mut left = s;
                for (n, e) in summed_extents.iter().enumerate().rev() {
                    coords[n] = left % e;
                    left /= e;
                }
                let x: Vec<usize> = self
                    .roles
                    .iter()
                    .enumerate()
                    .map(|(axis, role)| match role {
                        AxisRole::Kept(b) => t[*b],
                        AxisRole::Fixed(c) => *c,
                        AxisRole::Summed => {
                            coords[summed_axes.iter().position(|&a| a == axis).unwrap_or(0)]
                        }
                    })
                    .collect();
                let h: Vec<usize> = self
                    .hole_labels
                    .iter()
                    .map(|&l| {
                        let n = (l as u8 - b'a') as usize;
                        if n < target_rank {
                            t[n]
                        } else {
                            coords.get(n - target_rank).copied().unwrap_or(0)
                        }
                    })
                    .collect();
                match (operand.get(&x), hole.get(&h)) {
                    (Some(xv), Some(hv)) => {
                        if !hv.is_zero() {
                            total = total.add(&xv.mul(hv));
                        }
                    }
                    _ => failed = true,
                }
            }
            total
        });
        (!failed).then_some(value)
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
            // `left @ right.T`: both matrices share their last (summed) label.
            if let ([_, c], [_, d]) = (ll.as_slice(), rl.as_slice()) {
                let flipped = [rl[1], rl[0]];
                if c == d && is_matmul(ll, &flipped, tl) {
                    let product = build::transpose(right.clone(), &[1, 0])
                        .and_then(|t| build::matmul(left.clone(), t));
                    if let Ok(e) = product {
                        return Some(e);
                    }
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

/// What [`peel_axes`] finds, in its order.
type PeeledAxes = (Vec<(usize, usize)>, Vec<usize>, Vec<HoleAxis>);

/// The kept (operand axis, target axis) pairs, the summed operand axes and
/// the hole's axes (summed, then the target axes nothing keeps) of a peel's
/// roles; `None` when nothing is kept (an outer product with every target
/// axis in the hole) or nothing summed or added (element-wise).
fn peel_axes(roles: &[AxisRole], target_rank: usize) -> Option<PeeledAxes> {
    let kept: Vec<(usize, usize)> = roles
        .iter()
        .enumerate()
        .filter_map(|(a, r)| match r {
            AxisRole::Kept(b) => Some((a, *b)),
            _ => None,
        })
        .collect();
    let summed: Vec<usize> = (0..roles.len())
        .filter(|&a| roles[a] == AxisRole::Summed)
        .collect();
    let free: Vec<usize> = (0..target_rank)
        .filter(|b| !kept.iter().any(|(_, k)| k == b))
        .collect();
    if kept.is_empty() || (summed.is_empty() && free.is_empty()) {
        return None;
    }
    let hole_axes = summed
        .iter()
        .map(|&a| HoleAxis::Operand(a))
        .chain(free.iter().map(|&b| HoleAxis::Target(b)))
        .collect();
    Some((kept, summed, hole_axes))
}

/// Which pairs one assignment of kept axes claims, and the hole values
/// they fix.
struct Claim<'a> {
    kept: &'a [(usize, usize)],
    options: &'a [Vec<AxisRole>],
    hole_axes: &'a [HoleAxis],
}

impl Claim<'_> {
    /// The hole's values fixed by the claimed pairs (`None` where no pair
    /// fixes one) and how many pairs were claimed; `None` when two claimed
    /// pairs disagree.
    fn values(&self, pairs: &[Pair], hole_shape: &[usize]) -> Option<(Vec<Option<Value>>, usize)> {
        let scratch = Tensor::from_fn(hole_shape, |_| Value::zero());
        let mut values: Vec<Option<Value>> = vec![None; scratch.len()];
        let mut claimed = 0;
        for p in pairs {
            if !self.kept.iter().all(|&(a, b)| p.operand[a] == p.target[b]) {
                continue;
            }
            claimed += 1;
            if self.ambiguous(p) {
                continue;
            }
            let at = scratch.offset(&hole_position(self.hole_axes, &p.target, &p.operand))?;
            match &values[at] {
                Some(v) if *v != p.coeff => return None,
                Some(_) => {}
                None => values[at] = Some(p.coeff.clone()),
            }
        }
        Some((values, claimed))
    }

    /// A pair another assignment could also claim (the target's
    /// coordinates coincide, as on a diagonal) holds the sum of both
    /// contractions' coefficients: it fixes no hole value.
    fn ambiguous(&self, p: &Pair) -> bool {
        self.kept.iter().any(|&(a, b)| {
            self.options[a]
                .iter()
                .any(|r| matches!(r, AxisRole::Kept(c) if *c != b && p.target[*c] == p.target[b]))
        })
    }
}

/// The operand's einsum labels under a peel's roles (kept axes take the
/// target's label, summed axes new ones); `None` for a fixed axis.
fn peel_operand_labels(roles: &[AxisRole], target_rank: usize) -> Option<Vec<char>> {
    let mut labels = Vec::new();
    for role in roles {
        match role {
            AxisRole::Kept(b) => labels.push(target_label(*b)),
            AxisRole::Summed => {
                let n = labels
                    .iter()
                    .filter(|l| (**l as u8 - b'a') as usize >= target_rank)
                    .count();
                labels.push(summed_label(target_rank, n));
            }
            AxisRole::Fixed(_) => return None,
        }
    }
    Some(labels)
}

/// The hole's einsum labels: target axes keep theirs, summed operand axes
/// take the summed labels in order.
fn hole_labels(hole_axes: &[HoleAxis], summed: &[usize], target_rank: usize) -> Vec<char> {
    hole_axes
        .iter()
        .map(|a| match a {
            HoleAxis::Target(b) => target_label(*b),
            HoleAxis::Operand(a) => {
                summed_label(target_rank, summed.iter().position(|s| s == a).unwrap_or(0))
            }
        })
        .collect()
}

/// The hole's coordinates for target coordinates `t` and operand
/// coordinates `x`.
fn hole_position(hole_axes: &[HoleAxis], t: &[usize], x: &[usize]) -> Vec<usize> {
    hole_axes
        .iter()
        .map(|a| match a {
            HoleAxis::Target(b) => t[*b],
            HoleAxis::Operand(a) => x[*a],
        })
        .collect()
}

/// The hole read off the pairs: each pair's coefficient at the position
/// its coordinates name (two different coefficients at one position: no
/// hole), zero elsewhere; `None` also for a hole far larger than the
/// target and the operand (a sparse tensor no stub computes).
fn hole_of(
    target: &Tensor,
    operand: &Tensor,
    pairs: &[Pair],
    hole_axes: &[HoleAxis],
) -> Option<Tensor> {
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
    let mut values: Vec<Option<Value>> = vec![None; hole_len];
    let scratch = Tensor::from_fn(&hole_shape, |_| Value::zero());
    for p in pairs {
        let at = scratch.offset(&hole_position(hole_axes, &p.target, &p.operand))?;
        match &values[at] {
            Some(v) if *v != p.coeff => return None,
            Some(_) => {}
            None => values[at] = Some(p.coeff.clone()),
        }
    }
    let elems = values
        .into_iter()
        .map(|v| v.unwrap_or_else(Value::zero))
        .collect();
    Tensor::new(hole_shape, elems).ok()
}

/// Whether `T[t] = Σ over summed coordinates of X[x] · H[h]` holds for
/// every element, exactly.
fn recomputes(
    target: &Tensor,
    operand: &Tensor,
    hole: &Tensor,
    roles: &[AxisRole],
    hole_axes: &[HoleAxis],
    summed: &[usize],
) -> bool {
    let summed_extents: Vec<usize> = summed.iter().map(|&a| operand.shape()[a]).collect();
    let summed_count: usize = summed_extents.iter().product();
    let operand_coords = |t: &[usize], s: usize| -> Vec<usize> {
        let mut rest = s;
        let mut coords = vec![0; summed.len()];
        for (n, e) in summed_extents.iter().enumerate().rev() {
            coords[n] = rest % e;
            rest /= e;
        }
        roles
            .iter()
            .enumerate()
            .map(|(axis, role)| match role {
                AxisRole::Kept(b) => t[*b],
                AxisRole::Fixed(c) => *c,
                AxisRole::Summed => coords[summed.iter().position(|&a| a == axis).unwrap_or(0)],
            })
            .collect()
    };
    target.elems().iter().enumerate().all(|(offset, expected)| {
        let t = target.index_of(offset);
        let mut total = Value::zero();
        for s in 0..summed_count {
            let x = operand_coords(&t, s);
            let (Some(h), Some(v)) = (hole.get(&hole_position(hole_axes, &t, &x)), operand.get(&x))
            else {
                return false;
            };
            if !h.is_zero() {
                total = total.add(&v.mul(h));
            }
        }
        total == *expected
    })
}

/// `perm[k]` of `t`).
fn permute_axes(t: &Tensor, perm: &[usize]) -> Tensor {
    let old_shape = t.shape().to_vec();
    let shape: Vec<usize> = perm.iter().map(|&p| old_shape[p]).collect();
    Tensor::from_fn(&shape, |idx| {
        let mut old = vec![0; perm.len()];
        for (k, &p) in perm.iter().enumerate() {
            old[p] = idx[k];
        }
        t.get(&old).cloned().unwrap_or_else(Value::zero)
    })
}

/// One contraction peeled off a target that sums several contractions of
/// one operand: `target = einsum(X, hole) + remainder` on the elements a
/// mask keeps. Only the hole positions some pair explains unambiguously
/// are `known`; the hole's other values are free (a stub agreeing on the
/// known ones fills them).
#[derive(Clone, Debug)]
pub struct Peel {
    extraction: Extraction,
    /// Per hole element (in the hole's layout), whether its value is fixed.
    pub known: Vec<bool>,
}

/// Most role assignments a peel tries per operand.
const MAX_PEEL_ASSIGNMENTS: usize = 32;

impl Peel {
    /// The hole's values at its known positions (zero elsewhere).
    pub fn hole(&self) -> &Tensor {
        &self.extraction.hole
    }

    /// How many products each target element sums (at least 1).
    pub fn contracted_len(&self) -> f64 {
        contracted_len(&self.extraction)
    }

    /// The contraction's value with `hole` (of [`Self::hole`]'s shape) as
    /// the hole, over a target of `target_shape`.
    pub fn contribution(
        &self,
        operand: &Tensor,
        hole: &Tensor,
        target_shape: &[usize],
    ) -> Option<Tensor> {
        if hole.shape() != self.extraction.hole.shape() {
            return None;
        }
        self.extraction.contribution(operand, hole, target_shape)
    }

    /// The TensIR contraction of `operand` with the solved `hole`.
    pub fn rebuild(&self, operand: &Expr, extents: &[usize], hole: Expr) -> Option<Expr> {
        self.extraction.rebuild(operand, extents, hole)
    }

    /// Every way to peel one contraction of `operand` off `target`,
    /// counting only the elements `mask` keeps (all when `None`): one per
    /// assignment of kept/summed roles to the operand's axes under which
    /// the pairs it explains give one consistent hole value.
    pub fn candidates(target: &Tensor, mask: Option<&[bool]>, operand: &Tensor) -> Vec<Peel> {
        let target_shape = target.shape().to_vec();
        let operand_shape = operand.shape().to_vec();
        if operand_shape.is_empty() || target_shape.len() + operand_shape.len() > 20 {
            return Vec::new();
        }
        let part = match mask {
            Some(mask) if mask.len() == target.len() => Tensor::new(
                target_shape.clone(),
                target
                    .elems()
                    .iter()
                    .zip(mask)
                    .map(|(t, &m)| if m { t.clone() } else { Value::zero() })
                    .collect(),
            )
            .ok(),
            Some(_) => None,
            None => Some(target.clone()),
        };
        let Some((pairs, _)) = part.and_then(|p| coefficient_pairs(&p, operand)) else {
            return Vec::new();
        };
        // Each axis: summed, or kept as a target axis of its extent that
        // some pair's coordinates equal.
        let options: Vec<Vec<AxisRole>> = operand_shape
            .iter()
            .enumerate()
            .map(|(axis, &extent)| {
                let mut roles: Vec<AxisRole> = (0..target_shape.len())
                    .filter(|&b| {
                        target_shape[b] == extent
                            && pairs.iter().any(|p| p.operand[axis] == p.target[b])
                    })
                    .map(AxisRole::Kept)
                    .collect();
                roles.push(AxisRole::Summed);
                roles
            })
            .collect();
        let mut assignments: Vec<Vec<AxisRole>> = vec![Vec::new()];
        for choices in &options {
            let mut next = Vec::new();
            for prefix in &assignments {
                for &role in choices {
                    let taken = matches!(role, AxisRole::Kept(b)
                        if prefix.contains(&AxisRole::Kept(b)));
                    if !taken {
                        let mut roles = prefix.clone();
                        roles.push(role);
                        next.push(roles);
                    }
                }
            }
            assignments = next;
            assignments.truncate(MAX_PEEL_ASSIGNMENTS);
        }
        assignments
            .into_iter()
            .filter_map(|roles| {
                Self::with_roles(&pairs, &roles, &options, &target_shape, operand, mask)
            })
            .collect()
    }

    /// The peel under one role assignment, when its pairs agree.
    fn with_roles(
        pairs: &[Pair],
        roles: &[AxisRole],
        options: &[Vec<AxisRole>],
        target_shape: &[usize],
        operand: &Tensor,
        mask: Option<&[bool]>,
    ) -> Option<Peel> {
        let target_rank = target_shape.len();
        let (kept, summed, hole_axes) = peel_axes(roles, target_rank)?;
        let hole_shape: Vec<usize> = hole_axes
            .iter()
            .map(|a| match a {
                HoleAxis::Target(b) => target_shape[*b],
                HoleAxis::Operand(a) => operand.shape()[*a],
            })
            .collect();
        let target_len: usize = target_shape.iter().product();
        let hole_len: usize = hole_shape.iter().product();
        if hole_len > MAX_HOLE_GROWTH * target_len.max(operand.len()) {
            return None;
        }
        let claim = Claim {
            kept: &kept,
            options,
            hole_axes: &hole_axes,
        };
        let (values, claimed) = claim.values(pairs, &hole_shape)?;
        // A peel that explains every pair is a plain extraction's business.
        if claimed == 0 || (claimed == pairs.len() && mask.is_none()) {
            return None;
        }
        let known: Vec<bool> = values.iter().map(Option::is_some).collect();
        if !known.iter().any(|&k| k) {
            return None;
        }
        let elems = values
            .into_iter()
            .map(|v| v.unwrap_or_else(Value::zero))
            .collect();
        let extraction = Extraction {
            roles: roles.to_vec(),
            operand_labels: peel_operand_labels(roles, target_rank)?,
            hole_labels: hole_labels(&hole_axes, &summed, target_rank),
            target_labels: (0..target_rank).map(target_label).collect(),
            rest: Tensor::from_fn(target_shape, |_| Value::zero()),
            hole: Tensor::new(hole_shape, elems).ok()?,
        };
        Peel::in_input_layout(extraction, &known)
    }

    /// The peel with its hole (and its known mask) in the operand's input
    /// layout.
    fn in_input_layout(extraction: Extraction, known: &[bool]) -> Option<Peel> {
        let flags = known
            .iter()
            .map(|&k| if k { Value::one() } else { Value::zero() });
        let known_tensor = Tensor::new(extraction.hole.shape().to_vec(), flags.collect()).ok()?;
        let (extraction, known) = match extraction.input_layout() {
            Some(perm) => {
                let known = permute_axes(&known_tensor, &perm);
                (extraction.permuted(&perm), known)
            }
            None => (extraction, known_tensor),
        };
        Some(Peel {
            extraction,
            known: known.elems().iter().map(|k| !k.is_zero()).collect(),
        })
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

/// How many products each target element sums (at least 1).
pub(crate) fn contracted_len(extraction: &Extraction) -> f64 {
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
    use crate::algebra::Value;
    use tenslift_targets::DType;

    /// `T[i, j] = Σ_k A[i, k] · B[k, j]` at sizes 2×3 · 3×2.
    fn matmul_target(a: &Tensor, b: &Tensor) -> Tensor {
        Tensor::from_fn(&[2, 2], |t| {
            let mut acc = Value::zero();
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
            let mut acc = Value::zero();
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
            let mut acc = Value::zero();
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

    /// `T[i, j] = Σ_k A[i, k]·B[j, k] + B[i, k]·A[j, k]` (syr2k's update)
    /// at n = 3, m = 4.
    fn syr2k_target(a: &Tensor, b: &Tensor) -> Tensor {
        Tensor::from_fn(&[3, 3], |t| {
            let mut acc = Value::zero();
            for k in 0..4 {
                let (ai, bj) = (a.get(&[t[0], k]).expect("a"), b.get(&[t[1], k]).expect("b"));
                let (bi, aj) = (b.get(&[t[0], k]).expect("b"), a.get(&[t[1], k]).expect("a"));
                acc = acc.add(&ai.mul(bj)).add(&bi.mul(aj));
            }
            acc
        })
    }

    #[test]
    fn a_sum_of_two_contractions_of_one_operand_peels_one_and_leaves_the_other() {
        let a = Tensor::of_symbols("A", &[3, 4], false);
        let b = Tensor::of_symbols("B", &[3, 4], false);
        let target = syr2k_target(&a, &b);
        // No single hole: A meets the target under two index maps.
        assert!(Extraction::solve(&target, &a).is_none());
        let peels = Peel::candidates(&target, None, &a);
        assert_eq!(peels.len(), 2, "{peels:?}");
        for peel in &peels {
            // The hole is B itself (read in order), known everywhere.
            assert_eq!(peel.hole(), &b);
            assert!(peel.known.iter().all(|&k| k));
            let value = peel.contribution(&a, &b, &[3, 3]).expect("computes");
            let rest = target.zip_with(&value, |t, c| t - c).expect("same shape");
            // The remainder is the other product, itself a plain contraction.
            let other = Extraction::solve(&rest, &a).expect("one contraction left");
            assert_eq!(other.hole, b);
        }
    }

    #[test]
    fn on_the_lower_triangle_the_diagonal_fixes_no_hole_value() {
        let a = Tensor::of_symbols("A", &[3, 4], false);
        let b = Tensor::of_symbols("B", &[3, 4], false);
        let target = syr2k_target(&a, &b);
        let lower: Vec<bool> = (0..9).map(|o| o % 3 <= o / 3).collect();
        let peels = Peel::candidates(&target, Some(&lower), &a);
        assert_eq!(peels.len(), 2, "{peels:?}");
        for peel in &peels {
            // One row of B is only reached through the diagonal, where both
            // products add up: those four values stay free.
            assert_eq!(peel.known.iter().filter(|&&k| !k).count(), 4);
            for (offset, &known) in peel.known.iter().enumerate() {
                if known {
                    assert_eq!(peel.hole().elems()[offset], b.elems()[offset]);
                }
            }
        }
    }

    #[test]
    fn a_contraction_against_a_transposed_hole_is_a_matmul_with_a_transpose() {
        use tenslift_targets::{print_expr, Access, Param, ParamKind};
        let a = Tensor::of_symbols("A", &[3, 4], false);
        let b = Tensor::of_symbols("B", &[3, 4], false);
        let peel = Peel::candidates(&syr2k_target(&a, &b), None, &a)
            .into_iter()
            .next()
            .expect("a peel");
        let var = |name: &str| {
            let p = Param {
                name: name.into(),
                kind: ParamKind::Array {
                    dtype: DType::F64,
                    shape: vec![Dim::sym("n"), Dim::sym("m")],
                    access: Access::In,
                },
            };
            Expr::var(&p.name, p.ty())
        };
        let expr = peel
            .rebuild(&var("A"), &[3, 4], var("B"))
            .expect("rebuilds");
        let text = print_expr(&expr);
        assert!(
            text.starts_with("matmul(") && text.contains("transpose("),
            "{text}"
        );
    }

    #[test]
    fn matrix_products_are_recognised_from_their_labels() {
        assert!(is_matmul(&['a', 'c'], &['c', 'b'], &['a', 'b']));
        assert!(is_matmul(&['a', 'c'], &['c'], &['a']));
        assert!(!is_matmul(&['c', 'a'], &['c', 'b'], &['a', 'b']));
        assert_eq!(permutations(3).len(), 6);
    }
}
