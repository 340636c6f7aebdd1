//! The input program as TensIR, operation for operation (`np.dot` is
//! `matmul`, `np.diag` is `diag`, a stack is a `concat`): what the input
//! costs, and the program `optimize` keeps when the search finds nothing
//! cheaper. `None` when TensIR cannot say it as written (a comprehension,
//! a slice with a negative step).

use std::collections::HashMap;
use std::rc::Rc;

use tenslift_frontend::ir::{Affine, ScalarType};
use tenslift_targets::{build, DType, Dim, Expr, Lit, Meta, Program, SliceItem, Stmt};

use super::ir::{BinaryFn, UnaryFn};
use super::ir::{ContractKind, Contraction, IndexItem, Node, ReduceFn, View, T};
use super::kernel::Lowered;
use crate::synth::signature::{dtype_of, params_of, InferredExtents};

/// The input as a TensIR program with the kernel's parameters.
pub fn input_program(l: &Lowered) -> Option<Program> {
    let params = params_of(&l.kernel, &InferredExtents::new()).ok()?;
    let mut tr = Translator {
        params: &params,
        done: HashMap::new(),
    };
    let mut body = Vec::new();
    for (t, out) in l.results.iter().zip(&l.outputs) {
        let value = tr.expr(t)?;
        body.push(if out == "return" {
            Stmt::Return(value)
        } else {
            Stmt::Store {
                target: out.as_str().into(),
                region: None,
                value,
            }
        });
    }
    let program = Program {
        meta: Meta {
            source_file: Some(l.kernel.range.file.clone()),
            lines: Some((l.kernel.range.start_line, l.kernel.range.end_line)),
            status: "unverified".to_string(),
            ..Meta::default()
        },
        name: l.kernel.name.as_str().into(),
        params,
        ret: l.kernel.returns.map(dtype_of),
        body,
    };
    program.validate().ok()?;
    Some(program)
}

/// A size expression as a TensIR dim.
pub fn dim_of(a: &Affine) -> Option<Dim> {
    let mut d = Dim::constant(a.constant);
    for (name, coeff) in &a.terms {
        let term = Dim::sym(name).mul(&Dim::constant(*coeff)).ok()?;
        d = d.add(&term).ok()?;
    }
    Some(d)
}

fn dims_of(shape: &[Affine]) -> Option<Vec<Dim>> {
    shape.iter().map(dim_of).collect()
}

struct Translator<'p> {
    params: &'p [tenslift_targets::Param],
    /// Shared nodes translate to one shared expression.
    done: HashMap<usize, Expr>,
}

impl Translator<'_> {
    fn expr(&mut self, t: &T) -> Option<Expr> {
        let key = Rc::as_ptr(t) as usize;
        if let Some(e) = self.done.get(&key) {
            return Some(e.clone());
        }
        let e = self.node(t)?;
        self.done.insert(key, e.clone());
        Some(e)
    }

    fn node(&mut self, t: &T) -> Option<Expr> {
        let dtype = dtype_of(t.dtype);
        match &t.node {
            Node::Input(name) => {
                let p = self.params.iter().find(|p| &*p.name == name.as_str())?;
                Some(Expr::var(name, p.ty()))
            }
            Node::Literal(text) => literal(text, t.dtype),
            Node::Size(a) => self.size_value(a),
            Node::Broadcast(x) => build::broadcast(self.expr(x)?, dims_of(&t.shape)?).ok(),
            Node::Cast(x) => match &x.node {
                Node::Literal(text) => literal(text, t.dtype),
                _ => build::cast(self.expr(x)?, dtype).ok(),
            },
            Node::Unary(f, x) => unary(*f, self.expr(x)?),
            Node::Binary(f, x, y) => binary(*f, self.expr(x)?, self.expr(y)?),
            Node::Where(c, x, y) => build::select(self.expr(c)?, self.expr(x)?, self.expr(y)?).ok(),
            Node::View(x, view) => self.view(x, view, t),
            Node::Reduce(f, x, axes) => {
                let x = self.expr(x)?;
                match f {
                    ReduceFn::Sum => build::sum(x, axes),
                    ReduceFn::Prod => build::prod(x, axes),
                    ReduceFn::Max => build::max(x, axes),
                    ReduceFn::Min => build::min(x, axes),
                }
                .ok()
            }
            Node::Contract(c) => self.contraction(c),
            Node::DiagMatrix(v) => build::diag(self.expr(v)?).ok(),
            Node::Stack(items, axis) => self.stack(items, *axis, t),
            Node::Comprehension(_) => None,
        }
    }

    /// A Python int over sizes (an `i64` scalar in TensIR).
    fn size_value(&self, a: &Affine) -> Option<Expr> {
        let mut e = build::int_lit(a.constant, DType::I64);
        for (name, coeff) in &a.terms {
            self.params.iter().find(|p| &*p.name == name.as_str())?;
            let v = Expr::var(name, tenslift_targets::Ty::scalar(DType::I64));
            let term = build::mul(build::int_lit(*coeff, DType::I64), v).ok()?;
            e = build::add(e, term).ok()?;
        }
        Some(e)
    }

    fn view(&mut self, x: &T, view: &View, t: &T) -> Option<Expr> {
        let base = self.expr(x)?;
        match view {
            View::Transpose(perm) => build::transpose(base, perm).ok(),
            View::Diagonal => build::diag(base).ok(),
            View::Index(items) => {
                let mut slices = Vec::new();
                let mut new_axes = Vec::new();
                let mut at = 0;
                for item in items {
                    match item {
                        IndexItem::NewAxis => new_axes.push(at),
                        IndexItem::At(i) => {
                            slices.push(SliceItem::Index(dim_of(i)?));
                            continue;
                        }
                        IndexItem::Slice { start, step } if *step > 0 => {
                            let len = &t.shape[at];
                            let stop = super::ir::aff_add(start, &super::ir::aff_scale(len, *step));
                            let stop = super::ir::aff_sub(&stop, &Affine::constant(step - 1));
                            slices.push(build::range(dim_of(start)?, dim_of(&stop)?, *step));
                        }
                        IndexItem::Slice { .. } => return None,
                    }
                    at += 1;
                }
                let sliced = build::slice(base, slices).ok()?;
                with_unit_axes(sliced, &new_axes, t)
            }
            View::Reshape(axes) => {
                let slices = (0..x.shape.len())
                    .map(|d| match axes.contains(&Some(d)) {
                        true => SliceItem::Full,
                        false => SliceItem::Index(Dim::constant(0)),
                    })
                    .collect();
                let kept = build::slice(base, slices).ok()?;
                let new_axes: Vec<usize> = (0..axes.len()).filter(|&i| axes[i].is_none()).collect();
                with_unit_axes(kept, &new_axes, t)
            }
        }
    }

    fn contraction(&mut self, c: &Contraction) -> Option<Expr> {
        let (a, b) = (self.expr(&c.a)?, self.expr(&c.b)?);
        let (ra, rb) = (c.a.shape.len(), c.b.shape.len());
        match &c.kind {
            ContractKind::Dot | ContractKind::Matmul if ra <= 2 && rb <= 2 => {
                build::matmul(a, b).ok()
            }
            ContractKind::Dot => {
                let kb = if rb == 1 { 0 } else { rb - 2 };
                build::tensordot(a, b, &[ra - 1], &[kb]).ok()
            }
            ContractKind::Tensordot(x, y) => build::tensordot(a, b, x, y).ok(),
            ContractKind::Outer => build::outer(a, b).ok(),
            ContractKind::Matmul | ContractKind::Einsum => {
                let text = |l: &[char]| l.iter().collect::<String>();
                let spec = format!(
                    "{},{}->{}",
                    text(&c.labels_a),
                    text(&c.labels_b),
                    text(&c.out)
                );
                build::einsum(&spec, vec![a, b]).ok()
            }
        }
    }

    /// `np.stack` as a concat of the items given a leading unit axis,
    /// moved to `axis`.
    fn stack(&mut self, items: &[T], axis: usize, t: &T) -> Option<Expr> {
        let mut parts = Vec::new();
        for item in items {
            let mut shape = vec![Dim::constant(1)];
            shape.extend(dims_of(&item.shape)?);
            parts.push(build::broadcast(self.expr(item)?, shape).ok()?);
        }
        let joined = build::concat(parts, 0).ok()?;
        if axis == 0 {
            return Some(joined);
        }
        let rank = t.shape.len();
        let mut perm: Vec<usize> = (1..rank).collect();
        perm.insert(axis, 0);
        build::transpose(joined, &perm).ok()
    }
}

/// `e` with extent-1 axes inserted so that they sit at `positions` of the
/// result `t` (a broadcast puts them in front, a transpose moves them).
fn with_unit_axes(e: Expr, positions: &[usize], t: &T) -> Option<Expr> {
    if positions.is_empty() {
        return Some(e);
    }
    let k = positions.len();
    let mut shape = vec![Dim::constant(1); k];
    shape.extend(e.ty().shape.iter().cloned());
    let widened = build::broadcast(e, shape).ok()?;
    let rank = t.shape.len();
    let mut rest = k..rank;
    let perm: Vec<usize> = (0..rank)
        .map(|i| match positions.iter().position(|&p| p == i) {
            Some(j) => j,
            None => rest.next().unwrap_or(0),
        })
        .collect();
    build::transpose(widened, &perm).ok()
}

fn literal(text: &str, ty: ScalarType) -> Option<Expr> {
    let d = dtype_of(ty);
    if !ty.is_float() {
        return Some(build::int_lit(text.parse().ok()?, d));
    }
    Some(Expr::lit(Lit::float(text.parse().ok()?, d)))
}

fn unary(f: UnaryFn, x: Expr) -> Option<Expr> {
    match f {
        UnaryFn::Neg => build::neg(x),
        UnaryFn::Exp => build::exp(x),
        UnaryFn::Log => build::log(x),
        UnaryFn::Sqrt => build::sqrt(x),
        UnaryFn::Abs => build::abs(x),
        UnaryFn::Tanh => build::tanh(x),
        UnaryFn::Not => build::not(x),
    }
    .ok()
}

fn binary(f: BinaryFn, x: Expr, y: Expr) -> Option<Expr> {
    match f {
        BinaryFn::Add => build::add(x, y),
        BinaryFn::Sub => build::sub(x, y),
        BinaryFn::Mul => build::mul(x, y),
        BinaryFn::Div => build::div(x, y),
        BinaryFn::Pow => build::pow(x, y),
        BinaryFn::Maximum => build::maximum(x, y),
        BinaryFn::Minimum => build::minimum(x, y),
        BinaryFn::Lt => build::lt(x, y),
        BinaryFn::Le => build::le(x, y),
        BinaryFn::Gt => build::gt(x, y),
        BinaryFn::Ge => build::ge(x, y),
        BinaryFn::Eq => build::eq(x, y),
        BinaryFn::Ne => build::ne(x, y),
        BinaryFn::And => build::and(x, y),
        BinaryFn::Or => build::or(x, y),
    }
    .ok()
}
