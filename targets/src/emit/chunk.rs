//! Cache-blocked element-wise stores for NumPy. Every NumPy operation is a
//! pass over its operands, so `out = sqrt(A)⁴ + 2·B` over arrays far larger
//! than the caches reads and writes main memory five times, and its
//! temporaries cost page faults besides. Computed in blocks of leading-axis
//! rows of a few hundred kilobytes, the same operations find their operands
//! and temporaries in cache: one memory pass per array (measured on the
//! 2-core VM at 2048 × 2048: 27.1 → 13.9 ms; results/numpy-blocked-2026-11-29.md).
//!
//! A store is blocked only where blocking cannot change a value: it stores
//! a whole array, every operation of its value is element-wise at the
//! destination's shape, and every leaf is a literal, a scalar (or scalar
//! arithmetic, recomputed per block), or an array
//! that either has the destination's leading extent (sliced like the
//! destination) or broadcasts along the leading axis (read whole). Row `i`
//! of the result then depends only on row `i` of the sliced operands, so
//! the blocks compute exactly the whole-array values, element by element.
//! An outer product whose rows come from a vector leaf (`a ⊗ v`, vec_lerp)
//! is blocked like an element-wise operation, its row vector sliced. A
//! computed subtree that does not vary along the rows (`x - y` broadcast
//! over them, a scalar reduced from an array) is computed once before the
//! loop: all its reads precede the loop's writes, as in the whole-array
//! statement.

use std::collections::{HashMap, HashSet};

use crate::dim::Dim;
use crate::expr::Expr;
use crate::ops::{Op, SliceItem};

/// The block's first row and its end (exclusive; Python clamps the last
/// block's at the extent), and the rows per block, in generated code.
pub(super) const BLOCK_START: &str = "_lo";
pub(super) const BLOCK_END: &str = "_hi";
pub(super) const ROWS_VAR: &str = "_r";

/// Arrays of a known size of at most this many blocks are left whole: the
/// caches hold them anyway, and the block loop's own cost (a few
/// microseconds) would show on a small kernel (scalar_lerp_into: 5 -> 12 us).
const SMALL_BLOCKS: usize = 4;

/// A whole-array store rewritten for blocks of rows: the value over the
/// block's rows (operands sliced `[_lo:_hi]`) and the destination region of
/// that block.
pub(super) struct BlockedStore {
    pub value: Expr,
    pub region: Vec<SliceItem>,
    /// Row-invariant subtrees, computed once before the loop, each with the
    /// variable the blocked value reads it by.
    pub hoisted: Vec<(Expr, Expr)>,
    /// Bytes of the widest element type the value computes (the block's
    /// rows are sized by it).
    widest_bytes: usize,
    /// The target's bytes per operand block.
    block_bytes: usize,
}

impl BlockedStore {
    /// Python for the rows per block ([`ROWS_VAR`]): `block_bytes` of the
    /// widest type per operand, at least one row; a number where the
    /// trailing axes are constants.
    pub fn rows_text(&self, trailing: &[Dim], names: &super::NameMap) -> String {
        let consts: Option<Vec<i64>> = trailing.iter().map(Dim::as_const).collect();
        if let Some(consts) = consts {
            let row = consts.iter().fold(self.widest_bytes as u128, |r, &c| {
                r.saturating_mul(c.max(1) as u128)
            });
            let rows = (self.block_bytes as u128 / row).max(1);
            return rows.to_string();
        }
        let row_bytes: Vec<String> = std::iter::once(self.widest_bytes.to_string())
            .chain(
                trailing
                    .iter()
                    .map(|d| format!("({})", super::python::py_dim(d, names))),
            )
            .collect();
        format!(
            "max(1, {} // max(1, {}))",
            self.block_bytes,
            row_bytes.join(" * ")
        )
    }
}

/// The blocked form of whole-array store `value` in blocks of `block_bytes`
/// per operand, or `None` where it could change a value (module doc) or
/// would not pay: a single operation; a constant shape of at most
/// [`SMALL_BLOCKS`] blocks, which the caches hold whole; whole-array code
/// that makes no temporary (`makes_temporary`: a fresh array, its page
/// faults and its passes) and moves less than twice the blocked code's
/// traffic. Two operations in place in the destination (`np.multiply(A, B,
/// out=D)`, `np.add(C, D, out=D)`, 1.5x) ran 0.92-0.95x blocked on the VM,
/// within noise of no gain; `1 - B` times `B` (2.5x) ran 1.30x faster.
pub(super) fn blocked_store(
    value: &Expr,
    block_bytes: usize,
    makes_temporary: bool,
    fresh: &mut dyn FnMut() -> String,
) -> Option<BlockedStore> {
    let shape = value.shape();
    if shape.is_empty() {
        return None;
    }
    let t = traffic(value, shape)?;
    if t.ops < 2 || !(makes_temporary || t.whole >= 2 * t.blocked) {
        return None;
    }
    let mut widest_bytes = 1;
    value.walk_unique(&mut |n| widest_bytes = widest_bytes.max(n.dtype().byte_size()));
    let consts: Option<Vec<i64>> = shape.iter().map(Dim::as_const).collect();
    if let Some(consts) = consts {
        let bytes = consts.iter().fold(widest_bytes as u128, |b, &c| {
            b.saturating_mul(c.max(0) as u128)
        });
        if bytes <= (SMALL_BLOCKS * block_bytes) as u128 {
            return None;
        }
    }
    let hoisted: Vec<(Expr, Expr)> = t
        .invariant
        .into_iter()
        .map(|sub| {
            let var = Expr::var(&fresh(), sub.ty().clone());
            (sub, var)
        })
        .collect();
    let mut done: HashMap<Expr, Expr> = hoisted.iter().cloned().collect();
    Some(BlockedStore {
        value: sliced(value, shape, &mut done)?,
        region: block_rows(),
        hoisted,
        widest_bytes,
        block_bytes,
    })
}

/// Memory traffic of an element-wise value in whole-array passes: every
/// operation of the whole-array code reads its array operands and writes
/// its result (`whole`); the blocked code reads each array leaf and writes
/// the destination once (`blocked`), its temporaries staying in cache.
struct Traffic {
    ops: usize,
    whole: usize,
    blocked: usize,
    /// Computed subtrees that do not vary along the rows (hoisted).
    invariant: Vec<Expr>,
}

/// The traffic of `e` when every operation is element-wise at `shape` and
/// every leaf may be blocked; `None` otherwise. Equal subtrees count once
/// (the emitter computes a shared subtree once, and a parsed program spells
/// each occurrence of `A` as its own node); each is visited once, as values
/// may share subtrees exponentially often.
fn traffic(e: &Expr, shape: &[Dim]) -> Option<Traffic> {
    let mut t = Traffic {
        ops: 0,
        whole: 0,
        blocked: 1,
        invariant: Vec::new(),
    };
    let mut seen = HashSet::new();
    let mut stack = vec![e.clone()];
    let is_array = |a: &Expr| !a.shape().is_empty() && !matches!(a.op(), Op::Lit(_));
    while let Some(n) = stack.pop() {
        if !seen.insert(n.clone()) {
            continue;
        }
        match n.op() {
            Op::Lit(_) => {}
            _ if is_scalar_arithmetic(&n) => {}
            Op::Var(_) => {
                leaf_kind(&n, shape)?;
                t.blocked += usize::from(is_array(&n));
            }
            Op::Unary(_) | Op::Binary(_) | Op::Where | Op::Cast(_) if n.shape() == shape => {
                let operands: HashSet<&Expr> = n.args().iter().filter(|a| is_array(a)).collect();
                t.ops += 1;
                t.whole += operands.len() + 1;
                stack.extend(n.args().iter().cloned());
            }
            _ if row_invariant(&n, shape) => t.invariant.push(n.clone()),
            Op::Einsum(_) if n.shape() == shape => {
                let j = row_operand(&n, shape)?;
                t.ops += 1;
                t.whole += 1;
                t.blocked += 1;
                stack.extend(
                    n.args()
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != j)
                        .map(|(_, a)| a.clone()),
                );
            }
            _ => return None,
        }
    }
    Some(t)
}

/// Whether `e` is a scalar computed from scalars only (`cast(n, f64)`,
/// `1.0 - alpha`): each block recomputes it, which costs nothing; a scalar
/// reduced from an array (`sum(x)`) would cost a pass per block.
fn is_scalar_arithmetic(e: &Expr) -> bool {
    // Checked at every node of a value: an array node answers at once,
    // only scalar subtrees are walked.
    if !e.shape().is_empty() {
        return false;
    }
    let mut scalar = true;
    e.walk_unique(&mut |n| scalar &= n.shape().is_empty());
    scalar
}

/// Whether computed `e` is the same for every row of a value of `shape`:
/// fewer axes (broadcast over the rows), or a leading extent of 1 where the
/// value's is not.
fn row_invariant(e: &Expr, shape: &[Dim]) -> bool {
    let s = e.shape();
    let one = |d: &Dim| d.as_const() == Some(1);
    !matches!(e.op(), Op::Var(_) | Op::Lit(_))
        && (s.len() < shape.len() || (s.len() == shape.len() && one(&s[0]) && !one(&shape[0])))
}

/// The operand of outer product `e` (`b,a->ab`: two vectors, no label
/// summed) that gives its rows, when it is a vector leaf of the rows'
/// extent: slicing it slices the product's rows.
fn row_operand(e: &Expr, shape: &[Dim]) -> Option<usize> {
    let Op::Einsum(spec) = e.op() else {
        return None;
    };
    let ([a, b], [o0, o1]) = (spec.inputs.as_slice(), spec.output.as_slice()) else {
        return None;
    };
    if o0 == o1 || a.len() != 1 || b.len() != 1 {
        return None;
    }
    let j = [a[0], b[0]].iter().position(|l| l == o0)?;
    let other = [a[0], b[0]][1 - j];
    let leaf = &e.args()[j];
    (other == *o1 && matches!(leaf.op(), Op::Var(_)) && leaf.shape()[0] == shape[0]).then_some(j)
}

/// How a leaf array of a blocked store is read: sliced like the destination,
/// or whole (it broadcasts along the leading axis). `None`: neither.
fn leaf_kind(leaf: &Expr, shape: &[Dim]) -> Option<bool> {
    let s = leaf.shape();
    if s.len() < shape.len() {
        return Some(false);
    }
    if s.len() > shape.len() {
        return None;
    }
    if s[0] == shape[0] {
        Some(true)
    } else {
        (s[0].as_const() == Some(1)).then_some(false)
    }
}

/// The block's rows, `[_lo:_hi]` (the other axes whole).
fn block_rows() -> Vec<SliceItem> {
    vec![SliceItem::Range {
        start: Dim::sym(BLOCK_START),
        stop: Dim::sym(BLOCK_END),
        step: 1,
    }]
}

/// `e` with every leaf of the destination's leading extent sliced to the
/// block's rows; each distinct node is rebuilt once (`done`).
fn sliced(e: &Expr, shape: &[Dim], done: &mut HashMap<Expr, Expr>) -> Option<Expr> {
    if let Some(s) = done.get(e) {
        return Some(s.clone());
    }
    let s = match e.op() {
        Op::Lit(_) => e.clone(),
        _ if is_scalar_arithmetic(e) => e.clone(),
        Op::Var(_) if leaf_kind(e, shape)? => {
            Expr::new(Op::Slice(block_rows()), vec![e.clone()]).ok()?
        }
        Op::Var(_) => e.clone(),
        Op::Einsum(_) if e.shape() == shape => {
            let j = row_operand(e, shape)?;
            let mut args = Vec::new();
            for (i, a) in e.args().iter().enumerate() {
                args.push(match i == j {
                    true => Expr::new(Op::Slice(block_rows()), vec![a.clone()]).ok()?,
                    false => sliced(a, shape, done)?,
                });
            }
            Expr::new(e.op().clone(), args).ok()?
        }
        op => {
            let args: Option<Vec<Expr>> = e.args().iter().map(|a| sliced(a, shape, done)).collect();
            Expr::new(op.clone(), args?).ok()?
        }
    };
    done.insert(e.clone(), s.clone());
    Some(s)
}
