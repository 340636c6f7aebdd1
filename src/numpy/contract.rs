//! Contractions (`np.dot`, `@`, `np.matmul`, `np.inner`, `np.outer`,
//! `np.tensordot`, `np.einsum`) and stacking (`np.stack` of a list or of a
//! list comprehension) as npir.

use tenslift_frontend::ir::{Affine, Loc};

use super::args::Args;
use super::diagnostics::{
    error, BAD_ARGUMENT, SHAPE_MISMATCH, UNSUPPORTED_DTYPE, UNSUPPORTED_EXPRESSION,
};
use super::eval::{Evaluator, Result, Value};
use super::ir::{
    self, aff_sub, BinaryFn, Comprehension, ContractKind, Contraction, IndexItem, Node, View, T,
};
use super::syntax::{ExprKind, Generator, PyExpr};

/// `count` fresh labels from `from` on.
fn labels(from: &mut u8, count: usize) -> Vec<char> {
    (0..count)
        .map(|_| {
            let c = char::from(b'a' + *from);
            *from += 1;
            c
        })
        .collect()
}

fn build(
    kind: ContractKind,
    a: &T,
    b: &T,
    la: Vec<char>,
    lb: Vec<char>,
    out: Vec<char>,
    loc: &Loc,
) -> Result<T> {
    let c = Contraction {
        kind,
        a: a.clone(),
        b: b.clone(),
        labels_a: la,
        labels_b: lb,
        out,
    };
    ir::contract(c, loc)
}

/// `np.dot`: a scalar operand multiplies; otherwise the last axis of `a`
/// against the last (vector) or second-to-last axis of `b`.
pub fn dot(a: &T, b: &T, kind: ContractKind, loc: &Loc) -> Result<T> {
    if a.shape.is_empty() || b.shape.is_empty() {
        return ir::binary(BinaryFn::Mul, a, b, loc);
    }
    let mut next = 0;
    let la = labels(&mut next, a.shape.len());
    let k = la[la.len() - 1];
    let mut lb = labels(&mut next, b.shape.len());
    let kb = if lb.len() == 1 { 0 } else { lb.len() - 2 };
    lb[kb] = k;
    let out = la[..la.len() - 1]
        .iter()
        .chain(
            lb.iter()
                .enumerate()
                .filter(|(d, _)| *d != kb)
                .map(|(_, l)| l),
        )
        .copied()
        .collect();
    build(kind, a, b, la, lb, out, loc)
}

/// `a @ b`: `np.dot` up to 2-D; batched with equal batch axes beyond.
pub fn matmul(a: &T, b: &T, loc: &Loc) -> Result<T> {
    if a.shape.is_empty() || b.shape.is_empty() {
        return Err(error(
            BAD_ARGUMENT,
            loc.clone(),
            "matmul of a 0-d operand (use `*`)",
        ));
    }
    if a.shape.len() <= 2 && b.shape.len() <= 2 {
        return dot(a, b, ContractKind::Matmul, loc);
    }
    let (ra, rb) = (a.shape.len(), b.shape.len());
    if ra != rb || a.shape[..ra - 2] != b.shape[..rb - 2] {
        return Err(error(
            SHAPE_MISMATCH,
            loc.clone(),
            format!(
                "batched matmul of {} and {}: only equal batch axes are supported",
                ir::shape_text(&a.shape),
                ir::shape_text(&b.shape)
            ),
        ));
    }
    let mut next = 0;
    let batch = labels(&mut next, ra - 2);
    let ijk = labels(&mut next, 3);
    let (i, j, k) = (ijk[0], ijk[1], ijk[2]);
    let la = batch.iter().copied().chain([i, k]).collect();
    let lb = batch.iter().copied().chain([k, j]).collect();
    let out = batch.iter().copied().chain([i, j]).collect();
    build(ContractKind::Einsum, a, b, la, lb, out, loc)
}

impl Evaluator<'_> {
    pub(super) fn contraction(
        &mut self,
        name: &str,
        a: &mut Args,
        recv: Option<&T>,
    ) -> Result<Value> {
        if name == "einsum" {
            return self.einsum(a);
        }
        let loc = a.loc.clone();
        let shift = usize::from(recv.is_none());
        let x = match recv {
            Some(t) => t.clone(),
            None => self.arg_value(a, 0, "a")?,
        };
        let y = self.arg_value(a, shift, "b")?;
        let t = match name {
            "dot" => dot(&x, &y, ContractKind::Dot, &loc)?,
            "matmul" => matmul(&x, &y, &loc)?,
            "outer" => outer(&x, &y, &loc)?,
            "inner" => inner(&x, &y, &loc)?,
            _ => {
                let axes = a.opt(2, "axes");
                self.tensordot(&x, &y, axes, &loc)?
            }
        };
        Ok(Value::Tensor(t))
    }

    fn arg_value(&mut self, a: &mut Args, i: usize, name: &str) -> Result<T> {
        let e = a.req(i, name)?;
        let loc = self.at(e);
        let v = self.expr(e)?;
        self.tensor(v, &loc)
    }

    fn tensordot(&mut self, x: &T, y: &T, axes: Option<&PyExpr>, loc: &Loc) -> Result<T> {
        let (ax, ay) = match axes.map(|e| (e, &e.kind)) {
            None => last_first(x, y, 2, loc)?,
            Some((_, ExprKind::Tuple { elts } | ExprKind::List { elts })) if elts.len() == 2 => {
                let mut side = |e: &PyExpr, rank: usize| -> Result<Vec<usize>> {
                    match &e.kind {
                        ExprKind::Tuple { elts } | ExprKind::List { elts } => {
                            elts.iter().map(|a| self.axis(a, rank)).collect()
                        }
                        _ => Ok(vec![self.axis(e, rank)?]),
                    }
                };
                (
                    side(&elts[0], x.shape.len())?,
                    side(&elts[1], y.shape.len())?,
                )
            }
            Some((e, _)) => {
                let n = self.size(e)?.as_constant().unwrap_or(-1);
                let n = usize::try_from(n).map_err(|_| {
                    error(
                        BAD_ARGUMENT,
                        self.at(e),
                        "axes must be a count or a pair of axis lists",
                    )
                })?;
                last_first(x, y, n, loc)?
            }
        };
        if ax.len() != ay.len() {
            return Err(error(
                BAD_ARGUMENT,
                loc.clone(),
                "tensordot: the two axis lists differ in length",
            ));
        }
        let mut next = 0;
        let la = labels(&mut next, x.shape.len());
        let mut lb = labels(&mut next, y.shape.len());
        for (p, q) in ax.iter().zip(&ay) {
            lb[*q] = la[*p];
        }
        let out = (0..x.shape.len())
            .filter(|d| !ax.contains(d))
            .map(|d| la[d])
            .chain(
                (0..y.shape.len())
                    .filter(|d| !ay.contains(d))
                    .map(|d| lb[d]),
            )
            .collect();
        build(ContractKind::Tensordot(ax, ay), x, y, la, lb, out, loc)
    }

    /// `np.einsum("ij,jk->ik", a, b)`: two operands, an explicit output.
    fn einsum(&mut self, a: &mut Args) -> Result<Value> {
        let loc = a.loc.clone();
        let spec_expr = a.req(0, "subscripts")?;
        let Value::Str(spec) = self.expr(spec_expr)? else {
            return Err(error(
                BAD_ARGUMENT,
                self.at(spec_expr),
                "einsum needs its subscripts as a string",
            ));
        };
        let x = self.arg_value(a, 1, "operand0")?;
        let y = self.arg_value(a, 2, "operand1")?;
        let bad = |why: &str| {
            error(
                BAD_ARGUMENT,
                loc.clone(),
                format!("einsum \"{spec}\": {why}"),
            )
        };
        let (inputs, out) = spec
            .split_once("->")
            .ok_or_else(|| bad("an explicit `->` output is required"))?;
        let (sa, sb) = inputs
            .split_once(',')
            .ok_or_else(|| bad("two operands are supported"))?;
        let chars = |s: &str| -> Vec<char> { s.trim().chars().collect() };
        let (la, lb, lo) = (chars(sa), chars(sb), chars(out));
        let distinct = |l: &[char]| {
            l.iter()
                .enumerate()
                .all(|(i, c)| c.is_ascii_alphabetic() && !l[..i].contains(c))
        };
        if !distinct(&la)
            || !distinct(&lb)
            || !distinct(&lo)
            || la.len() != x.shape.len()
            || lb.len() != y.shape.len()
        {
            return Err(bad("each operand needs one distinct letter per axis"));
        }
        if lo.iter().any(|c| !la.contains(c) && !lb.contains(c)) {
            return Err(bad("an output letter that no operand has"));
        }
        build(ContractKind::Einsum, &x, &y, la, lb, lo, &loc).map(Value::Tensor)
    }

    /// `np.stack(arrays, axis=0)` and `np.array([...])`.
    pub(super) fn stack(&mut self, name: &str, a: &mut Args) -> Result<Value> {
        let loc = a.loc.clone();
        let items = a.req(0, "arrays")?;
        let axis_expr = if name == "stack" {
            a.opt(1, "axis")
        } else {
            None
        };
        if let ExprKind::ListComp { elt, generators } = &items.kind {
            return self
                .comprehension(elt, generators, axis_expr, &loc)
                .map(Value::Tensor);
        }
        let loc_items = self.at(items);
        let Value::Tuple(values) = self.expr(items)? else {
            return Err(error(
                UNSUPPORTED_EXPRESSION,
                loc_items,
                format!("np.{name} needs a list of arrays"),
            ));
        };
        let tensors = values
            .into_iter()
            .map(|v| self.tensor(v, &loc_items))
            .collect::<Result<Vec<T>>>()?;
        let Some(first) = tensors.first() else {
            return Err(error(BAD_ARGUMENT, loc_items, "stacking an empty list"));
        };
        let rank = first.shape.len();
        let axis = match axis_expr {
            Some(e) => self.axis(e, rank + 1)?,
            None => 0,
        };
        stack(tensors, axis, &loc).map(Value::Tensor)
    }

    /// `[body for v in X]` (rows of `X`) or `[body for i in range(a, b)]`,
    /// stacked along `axis`.
    fn comprehension(
        &mut self,
        elt: &PyExpr,
        generators: &[Generator],
        axis: Option<&PyExpr>,
        loc: &Loc,
    ) -> Result<T> {
        let [g] = generators else {
            return Err(error(
                UNSUPPORTED_EXPRESSION,
                loc.clone(),
                "a comprehension with one `for` is supported",
            ));
        };
        let ExprKind::Name { id } = &g.target.kind else {
            return Err(error(
                UNSUPPORTED_EXPRESSION,
                self.at(&g.target),
                "the comprehension variable must be one name",
            ));
        };
        if !g.ifs.is_empty() || g.is_async {
            return Err(error(
                UNSUPPORTED_EXPRESSION,
                self.at(&g.target),
                "`if` filters in a comprehension change its length: not supported",
            ));
        }
        let iter = self.fresh("t");
        let var = Affine::var(iter.as_str());
        let iter_loc = self.at(&g.iter);
        let (start, stop, bound) = match self.expr(&g.iter)? {
            Value::Range(a, b) => (a, b, Value::Size(var)),
            Value::Tensor(x) if !x.shape.is_empty() => {
                let mut items = vec![IndexItem::At(var)];
                items.extend(x.shape[1..].iter().map(|_| IndexItem::Slice {
                    start: Affine::constant(0),
                    step: 1,
                }));
                let row = ir::node(
                    Node::View(x.clone(), View::Index(items)),
                    x.shape[1..].to_vec(),
                    x.dtype,
                    x.weak,
                    &iter_loc,
                );
                (Affine::constant(0), x.shape[0].clone(), Value::Tensor(row))
            }
            _ => {
                return Err(error(
                    UNSUPPORTED_EXPRESSION,
                    iter_loc,
                    "a comprehension iterates over an array's rows or a range",
                ))
            }
        };
        let saved = self.env.insert(id.clone(), bound);
        let body = self.expr(elt);
        match saved {
            Some(v) => self.env.insert(id.clone(), v),
            None => self.env.remove(id),
        };
        let body_loc = self.at(elt);
        let body = self.tensor(body?, &body_loc)?;
        if !body.dtype.is_float() {
            return Err(error(
                UNSUPPORTED_DTYPE,
                body_loc,
                "the comprehension must build float arrays",
            ));
        }
        let axis = match axis {
            Some(e) => self.axis(e, body.shape.len() + 1)?,
            None => 0,
        };
        let mut shape = body.shape.clone();
        shape.insert(axis, aff_sub(&stop, &start));
        let dtype = body.dtype;
        let c = Comprehension {
            iter,
            start,
            stop,
            body,
            axis,
        };
        Ok(ir::node(
            Node::Comprehension(Box::new(c)),
            shape,
            dtype,
            false,
            loc,
        ))
    }
}

/// The last `n` axes of `x` against the first `n` of `y`.
fn last_first(x: &T, y: &T, n: usize, loc: &Loc) -> Result<(Vec<usize>, Vec<usize>)> {
    if n > x.shape.len() || n > y.shape.len() {
        return Err(error(
            BAD_ARGUMENT,
            loc.clone(),
            format!(
                "tensordot over {n} axes of arrays of rank {} and {}",
                x.shape.len(),
                y.shape.len()
            ),
        ));
    }
    Ok((
        (x.shape.len() - n..x.shape.len()).collect(),
        (0..n).collect(),
    ))
}

fn outer(x: &T, y: &T, loc: &Loc) -> Result<T> {
    if x.shape.len() != 1 || y.shape.len() != 1 {
        return Err(error(
            BAD_ARGUMENT,
            loc.clone(),
            "np.outer of arrays that are not vectors (it would flatten them)",
        ));
    }
    build(
        ContractKind::Outer,
        x,
        y,
        vec!['a'],
        vec!['b'],
        vec!['a', 'b'],
        loc,
    )
}

fn inner(x: &T, y: &T, loc: &Loc) -> Result<T> {
    if x.shape.is_empty() || y.shape.is_empty() {
        return ir::binary(BinaryFn::Mul, x, y, loc);
    }
    let mut next = 0;
    let la = labels(&mut next, x.shape.len());
    let mut lb = labels(&mut next, y.shape.len());
    let k = la[la.len() - 1];
    let last = lb.len() - 1;
    lb[last] = k;
    let out = la[..la.len() - 1]
        .iter()
        .chain(&lb[..last])
        .copied()
        .collect();
    build(
        ContractKind::Tensordot(vec![x.shape.len() - 1], vec![last]),
        x,
        y,
        la,
        lb,
        out,
        loc,
    )
}

/// `np.stack(items, axis)`: equal shapes, a common dtype.
fn stack(items: Vec<T>, axis: usize, loc: &Loc) -> Result<T> {
    let shape = items[0].shape.clone();
    let mut dtype = items[0].dtype;
    for t in &items {
        if t.shape != shape {
            return Err(error(
                SHAPE_MISMATCH,
                loc.clone(),
                format!(
                    "np.stack of arrays of shapes {} and {}",
                    ir::shape_text(&shape),
                    ir::shape_text(&t.shape)
                ),
            ));
        }
        dtype = ir::common_dtype(&items[0], t, loc)?.0;
    }
    if !dtype.is_float() {
        return Err(error(
            UNSUPPORTED_DTYPE,
            loc.clone(),
            "np.stack builds float arrays only",
        ));
    }
    let items: Vec<T> = items.iter().map(|t| ir::cast(t, dtype, false)).collect();
    let mut out_shape = shape;
    out_shape.insert(axis, Affine::constant(items.len() as i64));
    Ok(ir::node(
        Node::Stack(items, axis),
        out_shape,
        dtype,
        false,
        loc,
    ))
}
