//! Subscripts: NumPy basic indexing (`A[i]`, `A[1:n-1, ::2]`, `x[:, None]`,
//! `A[..., 0]`) as views, and indexing of tuples (`A.shape[0]`).

use tenslift_frontend::ir::{Affine, Loc};

use super::diagnostics::{error, BAD_ARGUMENT, NOT_AFFINE, SHAPE_MISMATCH, UNSUPPORTED_EXPRESSION};
use super::eval::{Evaluator, Result, Value};
use super::ir::{self, aff_add, aff_sub, IndexItem, Node, View, T};
use super::syntax::{ExprKind, PyExpr};

/// One item of a subscript, evaluated.
enum Item {
    Slice(Option<Affine>, Option<Affine>, i64),
    At(Affine),
    NewAxis,
    Ellipsis,
}

impl Evaluator<'_> {
    pub(super) fn subscript(&mut self, value: &PyExpr, index: &PyExpr, loc: &Loc) -> Result<Value> {
        match self.expr(value)? {
            Value::Tuple(items) => {
                let at = self.size(index)?;
                let len = items.len() as i64;
                match at.as_constant() {
                    Some(i) if (-len..len).contains(&i) => {
                        Ok(items[i.rem_euclid(len) as usize].clone())
                    }
                    _ => Err(error(
                        BAD_ARGUMENT,
                        self.at(index),
                        format!("tuple index out of range (length {len})"),
                    )),
                }
            }
            Value::Tensor(t) => {
                let items = match &index.kind {
                    ExprKind::Tuple { elts } => elts.iter().collect(),
                    _ => vec![index],
                };
                let items = items
                    .into_iter()
                    .map(|e| self.item(e))
                    .collect::<Result<Vec<Item>>>()?;
                index_view(&t, items, loc).map(Value::Tensor)
            }
            _ => Err(error(
                UNSUPPORTED_EXPRESSION,
                loc.clone(),
                "only arrays and tuples can be subscripted",
            )),
        }
    }

    fn item(&mut self, e: &PyExpr) -> Result<Item> {
        let loc = self.at(e);
        if let ExprKind::Slice { lower, upper, step } = &e.kind {
            let mut bound = |b: &Option<Box<PyExpr>>| -> Result<Option<Affine>> {
                match b {
                    None => Ok(None),
                    Some(x) => match self.expr(x)? {
                        Value::None => Ok(None),
                        Value::Size(a) => Ok(Some(a)),
                        _ => Err(error(
                            NOT_AFFINE,
                            self.at(x),
                            "a slice bound must be an integer affine in the sizes",
                        )),
                    },
                }
            };
            let (lo, hi) = (bound(lower)?, bound(upper)?);
            let step = match bound(step)? {
                None => 1,
                Some(s) => match s.as_constant() {
                    Some(c) if c != 0 => c,
                    _ => {
                        return Err(error(
                            NOT_AFFINE,
                            loc,
                            "a slice step must be a non-zero integer constant",
                        ))
                    }
                },
            };
            return Ok(Item::Slice(lo, hi, step));
        }
        match self.expr(e)? {
            Value::Size(a) => Ok(Item::At(a)),
            Value::None => Ok(Item::NewAxis),
            Value::Ellipsis => Ok(Item::Ellipsis),
            Value::Tensor(_) => Err(error(
                UNSUPPORTED_EXPRESSION,
                loc,
                "indexing with an array (gather) is not supported; use slices or integers",
            )),
            _ => Err(error(UNSUPPORTED_EXPRESSION, loc, "unsupported index")),
        }
    }
}

/// `i` counted from the end when it is a negative constant.
fn from_end(i: &Affine, extent: &Affine) -> Affine {
    match i.as_constant() {
        Some(c) if c < 0 => aff_add(extent, i),
        _ => i.clone(),
    }
}

/// Clamps a constant position to `[lo, extent]` when the extent is known
/// (Python clips slice bounds).
fn clip(i: Affine, lo: i64, extent: &Affine) -> Affine {
    match (i.as_constant(), extent.as_constant()) {
        (Some(c), Some(e)) => Affine::constant(c.clamp(lo, e.max(lo))),
        _ => i,
    }
}

/// The view `t[items]`.
fn index_view(t: &T, items: Vec<Item>, loc: &Loc) -> Result<T> {
    let consumed = items
        .iter()
        .filter(|i| matches!(i, Item::Slice(..) | Item::At(_)))
        .count();
    if consumed > t.shape.len() || items.iter().filter(|i| matches!(i, Item::Ellipsis)).count() > 1
    {
        return Err(error(
            SHAPE_MISMATCH,
            loc.clone(),
            format!(
                "too many indices for an array of shape {}",
                ir::shape_text(&t.shape)
            ),
        ));
    }
    let mut expanded = Vec::new();
    for item in items {
        match item {
            Item::Ellipsis => {
                expanded.extend((0..t.shape.len() - consumed).map(|_| Item::Slice(None, None, 1)))
            }
            other => expanded.push(other),
        }
    }
    let axes_named = expanded
        .iter()
        .filter(|i| matches!(i, Item::Slice(..) | Item::At(_)))
        .count();
    expanded.extend((axes_named..t.shape.len()).map(|_| Item::Slice(None, None, 1)));
    let (mut out, mut shape, mut axis) = (Vec::new(), Vec::new(), 0);
    for item in expanded {
        match item {
            Item::NewAxis => {
                out.push(IndexItem::NewAxis);
                shape.push(Affine::constant(1));
            }
            Item::At(i) => {
                let extent = &t.shape[axis];
                let i = from_end(&i, extent);
                check_in_bounds(&i, extent, loc)?;
                out.push(IndexItem::At(i));
                axis += 1;
            }
            Item::Slice(lo, hi, step) => {
                let (start, len) = slice_range(lo, hi, step, &t.shape[axis], loc)?;
                out.push(IndexItem::Slice { start, step });
                shape.push(len);
                axis += 1;
            }
            Item::Ellipsis => {}
        }
    }
    let view = View::Index(out);
    Ok(ir::node(
        Node::View(t.clone(), view),
        shape,
        t.dtype,
        t.weak,
        loc,
    ))
}

fn check_in_bounds(i: &Affine, extent: &Affine, loc: &Loc) -> Result<()> {
    match (i.as_constant(), extent.as_constant()) {
        (Some(c), Some(e)) if c < 0 || c >= e => Err(error(
            SHAPE_MISMATCH,
            loc.clone(),
            format!("index {c} is out of bounds for an axis of extent {e}"),
        )),
        _ => Ok(()),
    }
}

/// The first position and the length of `lo:hi:step` over `extent`.
fn slice_range(
    lo: Option<Affine>,
    hi: Option<Affine>,
    step: i64,
    extent: &Affine,
    loc: &Loc,
) -> Result<(Affine, Affine)> {
    let (start, span) = if step > 0 {
        let start = clip(
            lo.map_or(Affine::constant(0), |a| from_end(&a, extent)),
            0,
            extent,
        );
        let stop = clip(
            hi.map_or(extent.clone(), |a| from_end(&a, extent)),
            0,
            extent,
        );
        (start.clone(), aff_sub(&stop, &start))
    } else {
        let last = aff_sub(extent, &Affine::constant(1));
        let start = clip(lo.map_or(last, |a| from_end(&a, extent)), -1, extent);
        let stop = hi.map_or(Affine::constant(-1), |a| from_end(&a, extent));
        (start.clone(), aff_sub(&start, &stop))
    };
    let magnitude = step.abs();
    if magnitude == 1 {
        return Ok((start, span));
    }
    match span.as_constant() {
        Some(s) => Ok((
            start,
            Affine::constant(((s.max(0)) + magnitude - 1) / magnitude),
        )),
        None => Err(error(
            NOT_AFFINE,
            loc.clone(),
            format!("a slice with step {step} over a symbolic range has no affine length"),
        )),
    }
}
