//! npir to loop IR: the NumPy program as the naive loop nests a C
//! programmer would write for it, so the search, the spec and every
//! verifier run on it unchanged.
//!
//! Element-wise operations and views stay lazy (an element is an
//! expression over the operands' elements at re-mapped indices); every
//! reduction, contraction, stack and comprehension is computed once into
//! a temporary (a local array, or a local scalar for a 0-d value), before
//! the loops that read it, as NumPy computes each call into a new array.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::rc::Rc;

use tenslift_frontend::ir::{
    self as loop_ir, Affine, ArrayInfo, BinaryOp, Expr, ExprKind, LValue, Loc, Local, LocalKind,
    MathFn, ScalarType, Stmt, Storage, UnaryOp, VarClass,
};

use super::ir::{
    aff_sub, broadcast_index, label_extents, view_index, BinaryFn, Contraction, Node, ReduceFn,
    UnaryFn, T,
};

/// Where a computed value lives.
#[derive(Clone, Debug)]
pub struct Dest {
    pub name: String,
    /// A local scalar (0-d) rather than an array.
    pub scalar: bool,
    pub ty: ScalarType,
}

impl Dest {
    fn lvalue(&self, index: &[Affine]) -> LValue {
        if self.scalar {
            LValue::Scalar {
                name: self.name.clone(),
                ty: self.ty,
            }
        } else {
            LValue::Element {
                array: self.name.clone(),
                index: index.to_vec(),
                ty: self.ty,
            }
        }
    }

    fn read(&self, index: &[Affine], class: VarClass) -> Expr {
        let kind = if self.scalar {
            ExprKind::Var {
                name: self.name.clone(),
                class,
            }
        } else {
            ExprKind::Load {
                array: self.name.clone(),
                index: index.to_vec(),
            }
        };
        Expr { ty: self.ty, kind }
    }
}

/// Builds the kernel body.
pub struct Lowering {
    /// The size parameters (the other affine variables are iterators).
    pub sizes: BTreeSet<String>,
    /// Names in use; fresh temporaries and iterators avoid them.
    pub taken: BTreeSet<String>,
    pub locals: Vec<Local>,
    /// The statements of the open blocks, innermost last.
    blocks: Vec<Vec<Stmt>>,
    /// The loops whose bodies are open: iterator, start, end, where.
    open: Vec<(String, Affine, Affine, Loc)>,
    /// Values computed so far, per block depth (a value computed inside a
    /// loop is not visible after it).
    cache: Vec<HashMap<usize, Dest>>,
}

fn key(t: &T) -> usize {
    Rc::as_ptr(t) as usize
}

impl Lowering {
    pub fn new(sizes: BTreeSet<String>, taken: BTreeSet<String>) -> Lowering {
        Lowering {
            sizes,
            taken,
            locals: Vec::new(),
            blocks: vec![Vec::new()],
            open: Vec::new(),
            cache: vec![HashMap::new()],
        }
    }

    /// The statements built, once every loop is closed.
    pub fn finish(mut self) -> (Vec<Stmt>, Vec<Local>) {
        (self.blocks.pop().unwrap_or_default(), self.locals)
    }

    pub fn push(&mut self, stmt: Stmt) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt);
        }
    }

    fn fresh(&mut self, base: &str) -> String {
        super::eval::fresh_name(&mut self.taken, base)
    }

    /// Opens one loop per extent (outermost first), fresh iterators; the
    /// indices they give.
    fn open_loops(&mut self, extents: &[Affine], loc: &Loc) -> Vec<Affine> {
        extents
            .iter()
            .map(|e| {
                let iter = self.fresh("i");
                self.open_loop(&iter, Affine::constant(0), e.clone(), loc);
                Affine::var(iter.as_str())
            })
            .collect()
    }

    fn open_loop(&mut self, iter: &str, start: Affine, end: Affine, loc: &Loc) {
        self.open.push((iter.to_string(), start, end, loc.clone()));
        self.blocks.push(Vec::new());
        self.cache.push(HashMap::new());
    }

    fn close_loops(&mut self, count: usize) {
        for _ in 0..count {
            let (Some((iter, start, end, loc)), Some(body)) = (self.open.pop(), self.blocks.pop())
            else {
                return;
            };
            self.cache.pop();
            self.push(Stmt::Loop(loop_ir::Loop {
                iter,
                start,
                end,
                step: 1,
                body,
                loc,
            }));
        }
    }

    fn assign(&mut self, dest: &Dest, index: &[Affine], value: Expr, loc: &Loc) {
        self.push(Stmt::Assign {
            target: dest.lvalue(index),
            value,
            loc: loc.clone(),
        });
    }

    fn cached(&self, t: &T) -> Option<Dest> {
        self.cache
            .iter()
            .rev()
            .find_map(|c| c.get(&key(t)).cloned())
    }

    /// A new local for a value of `t`'s shape and dtype.
    fn temporary(&mut self, t: &T) -> Dest {
        let name = self.fresh("tmp");
        let scalar = t.shape.is_empty();
        let kind = if scalar {
            LocalKind::Scalar { ty: t.dtype }
        } else {
            LocalKind::Array(ArrayInfo {
                elem: t.dtype,
                dims: t.shape.iter().cloned().map(Some).collect(),
                storage: Storage::Declared,
            })
        };
        self.locals.push(Local {
            name: name.clone(),
            kind,
            loc: t.loc.clone(),
        });
        Dest {
            name,
            scalar,
            ty: t.dtype,
        }
    }

    /// Computes every reduction, contraction, stack and comprehension that
    /// `t`'s elements read through lazy nodes, before loops read them.
    pub fn prepare(&mut self, t: &T) {
        let mut seen = HashSet::new();
        self.prepare_in(t, &mut seen);
    }

    fn prepare_in(&mut self, t: &T, seen: &mut HashSet<usize>) {
        if !seen.insert(key(t)) {
            return;
        }
        if materialised(t) {
            self.materialise(t);
            return;
        }
        for child in lazy_children(t) {
            self.prepare_in(child, seen);
        }
    }

    /// The expression of a 0-d value (computing what it reads first).
    pub fn materialise_value(&mut self, t: &T) -> Expr {
        self.prepare(t);
        self.element(t, &[])
    }

    /// Where `t` is computed (computing it first when needed).
    pub fn materialise(&mut self, t: &T) -> Dest {
        if let Some(d) = self.cached(t) {
            return d;
        }
        let dest = self.temporary(t);
        self.fill(t, &dest);
        dest
    }

    /// Computes `t` into `dest` (and remembers it there).
    pub fn fill(&mut self, t: &T, dest: &Dest) {
        match &t.node {
            Node::Reduce(f, x, axes) => self.reduce(*f, x, axes, dest, &t.loc),
            Node::Contract(c) => self.contract(c, &t.shape, dest, &t.loc),
            Node::DiagMatrix(v) => self.diag_matrix(v, dest, &t.loc),
            Node::Stack(items, axis) => {
                for (s, item) in items.iter().enumerate() {
                    self.prepare(item);
                    let index = self.open_loops(&item.shape, &t.loc);
                    let mut at = index.clone();
                    at.insert(*axis, Affine::constant(s as i64));
                    let value = self.element(item, &index);
                    self.assign(dest, &at, value, &t.loc);
                    self.close_loops(index.len());
                }
            }
            Node::Comprehension(c) => {
                let loc = &t.loc;
                self.open_loop(&c.iter, c.start.clone(), c.stop.clone(), loc);
                self.prepare(&c.body);
                let index = self.open_loops(&c.body.shape, loc);
                let mut at = index.clone();
                at.insert(c.axis, aff_sub(&Affine::var(c.iter.as_str()), &c.start));
                let value = self.element(&c.body, &index);
                self.assign(dest, &at, value, loc);
                self.close_loops(index.len() + 1);
            }
            _ => {
                self.prepare(t);
                let index = self.open_loops(&t.shape, &t.loc);
                let value = self.element(t, &index);
                self.assign(dest, &index, value, &t.loc);
                self.close_loops(index.len());
            }
        }
        if let Some(level) = self.cache.last_mut() {
            level.insert(key(t), dest.clone());
        }
    }

    fn reduce(&mut self, f: ReduceFn, x: &T, axes: &[usize], dest: &Dest, loc: &Loc) {
        self.prepare(x);
        let kept: Vec<Affine> = (0..x.shape.len())
            .filter(|d| !axes.contains(d))
            .map(|d| x.shape[d].clone())
            .collect();
        let reduced: Vec<Affine> = axes.iter().map(|&d| x.shape[d].clone()).collect();
        let outer = self.open_loops(&kept, loc);
        let merge = |inner: &[Affine]| -> Vec<Affine> {
            let (mut k, mut r) = (outer.iter(), inner.iter());
            (0..x.shape.len())
                .filter_map(|d| {
                    if axes.contains(&d) {
                        r.next()
                    } else {
                        k.next()
                    }
                })
                .cloned()
                .collect()
        };
        let init = match f {
            ReduceFn::Sum => literal(0.0, "0.0", x.dtype),
            ReduceFn::Prod => literal(1.0, "1.0", x.dtype),
            ReduceFn::Max | ReduceFn::Min => {
                let zeros = vec![Affine::constant(0); reduced.len()];
                self.element(x, &merge(&zeros))
            }
        };
        self.assign(dest, &outer, init, loc);
        let inner = self.open_loops(&reduced, loc);
        let acc = dest.read(&outer, VarClass::Local);
        let item = self.element(x, &merge(&inner));
        let value = match f {
            ReduceFn::Sum => binary(BinaryOp::Add, acc, item, x.dtype),
            ReduceFn::Prod => binary(BinaryOp::Mul, acc, item, x.dtype),
            ReduceFn::Max => call(MathFn::Max, vec![acc, item], x.dtype),
            ReduceFn::Min => call(MathFn::Min, vec![acc, item], x.dtype),
        };
        self.assign(dest, &outer, value, loc);
        self.close_loops(inner.len() + outer.len());
    }

    fn contract(&mut self, c: &Contraction, shape: &[Affine], dest: &Dest, loc: &Loc) {
        self.prepare(&c.a);
        self.prepare(&c.b);
        let extents = label_extents(c);
        let summed: Vec<(char, Affine)> = extents
            .iter()
            .filter(|(l, _)| !c.out.contains(l))
            .cloned()
            .collect();
        let outer = self.open_loops(shape, loc);
        let mut bound: Vec<(char, Affine)> = c.out.iter().copied().zip(outer.clone()).collect();
        let product = |this: &mut Lowering, bound: &[(char, Affine)]| {
            let at = |labels: &[char]| -> Vec<Affine> {
                labels
                    .iter()
                    .map(|l| {
                        bound
                            .iter()
                            .find(|(k, _)| k == l)
                            .map(|(_, i)| i.clone())
                            .unwrap_or_default()
                    })
                    .collect()
            };
            let a = this.element(&c.a, &at(&c.labels_a));
            let b = this.element(&c.b, &at(&c.labels_b));
            binary(BinaryOp::Mul, a, b, dest.ty)
        };
        if summed.is_empty() {
            let value = product(self, &bound);
            self.assign(dest, &outer, value, loc);
            self.close_loops(outer.len());
            return;
        }
        self.assign(dest, &outer, literal(0.0, "0.0", dest.ty), loc);
        let sum_extents: Vec<Affine> = summed.iter().map(|(_, e)| e.clone()).collect();
        let inner = self.open_loops(&sum_extents, loc);
        bound.extend(summed.iter().map(|(l, _)| *l).zip(inner.iter().cloned()));
        let term = product(self, &bound);
        let acc = dest.read(&outer, VarClass::Local);
        self.assign(dest, &outer, binary(BinaryOp::Add, acc, term, dest.ty), loc);
        self.close_loops(inner.len() + outer.len());
    }

    fn diag_matrix(&mut self, v: &T, dest: &Dest, loc: &Loc) {
        self.prepare(v);
        let n = v.shape[0].clone();
        let ij = self.open_loops(&[n.clone(), n.clone()], loc);
        self.assign(dest, &ij, literal(0.0, "0.0", dest.ty), loc);
        self.close_loops(2);
        let i = self.open_loops(&[n], loc);
        let value = self.element(v, &i);
        self.assign(dest, &[i[0].clone(), i[0].clone()], value, loc);
        self.close_loops(1);
    }

    /// The element of `t` at `index` (one affine index per axis).
    pub fn element(&mut self, t: &T, index: &[Affine]) -> Expr {
        if let Some(d) = self.cached(t) {
            return d.read(index, VarClass::Local);
        }
        let ty = t.dtype;
        match &t.node {
            Node::Input(name) if t.shape.is_empty() => var(name, VarClass::Param, ty),
            Node::Input(name) => Expr {
                ty,
                kind: ExprKind::Load {
                    array: name.clone(),
                    index: index.to_vec(),
                },
            },
            Node::Literal(text) => literal_of(text, ty),
            Node::Size(a) => self.affine_value(a, ty),
            Node::Broadcast(x) => {
                let at = broadcast_index(&x.shape, &t.shape, index);
                self.element(x, &at)
            }
            Node::Cast(x) => match &x.node {
                Node::Literal(text) => literal_of(text, ty),
                _ => {
                    let arg = self.element(x, index);
                    cast(arg, ty)
                }
            },
            Node::Unary(f, x) => {
                let arg = self.element(x, index);
                unary(*f, arg, ty)
            }
            Node::Binary(f, x, y) => {
                let a = self.element(x, &broadcast_index(&x.shape, &t.shape, index));
                let b = self.element(y, &broadcast_index(&y.shape, &t.shape, index));
                binary_fn(*f, a, b, ty)
            }
            Node::Where(c, x, y) => {
                let cond = self.element(c, &broadcast_index(&c.shape, &t.shape, index));
                let a = self.element(x, &broadcast_index(&x.shape, &t.shape, index));
                let b = self.element(y, &broadcast_index(&y.shape, &t.shape, index));
                Expr {
                    ty,
                    kind: ExprKind::Select {
                        cond: Box::new(cond),
                        then_value: Box::new(a),
                        else_value: Box::new(b),
                    },
                }
            }
            Node::View(x, view) => {
                let at = view_index(view, &x.shape, index);
                self.element(x, &at)
            }
            Node::Reduce(..)
            | Node::Contract(_)
            | Node::DiagMatrix(_)
            | Node::Stack(..)
            | Node::Comprehension(_) => {
                let d = self.materialise(t);
                d.read(index, VarClass::Local)
            }
        }
    }

    /// A Python int computed from sizes and loop variables, as `ty`.
    fn affine_value(&self, a: &Affine, ty: ScalarType) -> Expr {
        let i64_lit = |v: i64| Expr {
            ty: ScalarType::I64,
            kind: ExprKind::IntLit { value: v },
        };
        let mut sum: Option<Expr> =
            (a.constant != 0 || a.terms.is_empty()).then(|| i64_lit(a.constant));
        for (name, coeff) in &a.terms {
            let class = if self.sizes.contains(name) {
                VarClass::Param
            } else {
                VarClass::Iter
            };
            let mut term = var(name, class, ScalarType::I64);
            if *coeff != 1 {
                term = binary(BinaryOp::Mul, i64_lit(*coeff), term, ScalarType::I64);
            }
            sum = Some(match sum {
                None => term,
                Some(s) => binary(BinaryOp::Add, s, term, ScalarType::I64),
            });
        }
        cast(sum.unwrap_or_else(|| i64_lit(0)), ty)
    }
}

/// Whether the lowering computes `t` into a temporary.
fn materialised(t: &T) -> bool {
    matches!(
        t.node,
        Node::Reduce(..)
            | Node::Contract(_)
            | Node::DiagMatrix(_)
            | Node::Stack(..)
            | Node::Comprehension(_)
    )
}

/// The operands whose elements `t`'s element reads directly.
fn lazy_children(t: &T) -> Vec<&T> {
    match &t.node {
        Node::Broadcast(x) | Node::Cast(x) | Node::Unary(_, x) | Node::View(x, _) => vec![x],
        Node::Binary(_, x, y) => vec![x, y],
        Node::Where(c, x, y) => vec![c, x, y],
        _ => Vec::new(),
    }
}

fn var(name: &str, class: VarClass, ty: ScalarType) -> Expr {
    Expr {
        ty,
        kind: ExprKind::Var {
            name: name.to_string(),
            class,
        },
    }
}

fn cast(arg: Expr, ty: ScalarType) -> Expr {
    if arg.ty == ty {
        return arg;
    }
    Expr {
        ty,
        kind: ExprKind::Cast { arg: Box::new(arg) },
    }
}

fn literal(value: f64, text: &str, ty: ScalarType) -> Expr {
    let text = if ty == ScalarType::F32 {
        format!("{text}f")
    } else {
        text.to_string()
    };
    let value = if ty == ScalarType::F32 {
        f64::from(value as f32)
    } else {
        value
    };
    Expr {
        ty,
        kind: ExprKind::FloatLit { value, text },
    }
}

/// A Python number as written, as a literal of `ty`.
fn literal_of(text: &str, ty: ScalarType) -> Expr {
    if !ty.is_float() {
        let value = text.parse::<i64>().unwrap_or_default();
        return Expr {
            ty,
            kind: ExprKind::IntLit { value },
        };
    }
    let value = text.parse::<f64>().unwrap_or(f64::NAN);
    // An int literal reads as the decimal it spells; `2` becomes `2.0`.
    let decimal = if text.bytes().all(|b| b.is_ascii_digit()) {
        format!("{text}.0")
    } else {
        text.to_string()
    };
    literal(value, &decimal, ty)
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr, ty: ScalarType) -> Expr {
    Expr {
        ty,
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
    }
}

fn call(func: MathFn, args: Vec<Expr>, ty: ScalarType) -> Expr {
    Expr {
        ty,
        kind: ExprKind::Call { func, args },
    }
}

fn unary(f: UnaryFn, arg: Expr, ty: ScalarType) -> Expr {
    let math = match f {
        UnaryFn::Neg | UnaryFn::Not => {
            let (op, ty) = match f {
                UnaryFn::Neg => (UnaryOp::Neg, ty),
                _ => (UnaryOp::Not, ScalarType::I32),
            };
            return Expr {
                ty,
                kind: ExprKind::Unary {
                    op,
                    arg: Box::new(arg),
                },
            };
        }
        UnaryFn::Exp => MathFn::Exp,
        UnaryFn::Log => MathFn::Log,
        UnaryFn::Sqrt => MathFn::Sqrt,
        UnaryFn::Abs => MathFn::Abs,
        UnaryFn::Tanh => MathFn::Tanh,
    };
    call(math, vec![arg], ty)
}

/// An element-wise binary function; comparisons and logic give C's `int`.
fn binary_fn(f: BinaryFn, a: Expr, b: Expr, ty: ScalarType) -> Expr {
    let op = match f {
        BinaryFn::Add => BinaryOp::Add,
        BinaryFn::Sub => BinaryOp::Sub,
        BinaryFn::Mul => BinaryOp::Mul,
        BinaryFn::Div => BinaryOp::Div,
        BinaryFn::Pow => return call(MathFn::Pow, vec![a, b], ty),
        BinaryFn::Maximum => return call(MathFn::Max, vec![a, b], ty),
        BinaryFn::Minimum => return call(MathFn::Min, vec![a, b], ty),
        BinaryFn::Lt => BinaryOp::Lt,
        BinaryFn::Le => BinaryOp::Le,
        BinaryFn::Gt => BinaryOp::Gt,
        BinaryFn::Ge => BinaryOp::Ge,
        BinaryFn::Eq => BinaryOp::Eq,
        BinaryFn::Ne => BinaryOp::Ne,
        BinaryFn::And => BinaryOp::And,
        BinaryFn::Or => BinaryOp::Or,
    };
    let ty = if op.is_comparison() || matches!(op, BinaryOp::And | BinaryOp::Or) {
        ScalarType::I32
    } else {
        ty
    };
    binary(op, a, b, ty)
}
