//! The lifted program, element by element: for symbolic indices and sizes,
//! the Z3 term of one element of any TensIR expression. Reductions (sum,
//! prod, max, min, and the sums inside matmul and einsum) become
//! uninterpreted range functions `F(hi)` over `[0, hi)`, pinned down by the
//! ground instances of their definition around each use: `F(0) = identity`,
//! `F(h + 1) = F(h) ⊕ body(h)` (Tenspiler's unfold lemma, Figure 4).
//!
//! A truncation maps size parameters to terms inside reduction extents
//! only: the program "with the reduction over `k` cut at the loop counter"
//! is how loop invariants are derived from the lifted program.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tenslift_targets::{
    symmetry, BinaryOp, DType, Dim, Expr, Lit, Op, ParamKind, Program, ReduceKind, SliceItem, Stmt,
    UnaryOp,
};
use z3::ast::{Ast, Bool, Int, Real};
use z3::{FuncDecl, Sort};

mod solvers;

use super::extensionality::{fresh_bound, SumUse};
use super::Unsupported;
use super::{dim_term, real_literal};
use crate::domain::value::{self, real_num, V};
use crate::domain::IntTy;

/// Reductions over a constant extent up to this are unfolded completely.
const MAX_UNFOLDED_EXTENT: i64 = 16;

/// Size parameters replaced inside reduction extents.
pub(crate) type Truncation = std::collections::BTreeMap<String, Int>;

/// What a name stands for at one point of the program.
#[derive(Clone)]
enum Binding {
    /// An array parameter's value on entry.
    Initial(Arc<str>),
    Let(Expr, Env),
    Store {
        previous: Arc<Binding>,
        region: Option<Vec<SliceItem>>,
        value: Expr,
        env: Env,
    },
}

type Env = Arc<HashMap<Arc<str>, Arc<Binding>>>;

/// Encodes one program; shared symbols (sizes, scalars, initial arrays)
/// come from [`Symbols`] so the C side reads the same ones.
pub(crate) struct Lifted<'a> {
    program: &'a Program,
    symbols: &'a Symbols,
    /// Bindings after the last statement.
    final_env: Env,
    returned: Option<(Expr, Env)>,
    functions: RefCell<HashMap<String, std::rc::Rc<FuncDecl>>>,
    pub(crate) unfolded: RefCell<HashSet<String>>,
    /// Ground lemma instances every condition may assume.
    pub lemmas: RefCell<Vec<Bool>>,
    /// The sum uses met so far, for the extensionality lemmas.
    pub sums: RefCell<Vec<SumUse>>,
}

/// Symbols both sides share, by C/TensIR name.
pub(crate) struct Symbols {
    pub sizes: std::collections::BTreeMap<String, Int>,
    pub scalars: HashMap<String, V>,
    /// Initial array contents: a function of the indices, and whether the
    /// elements are integers (with their width) or reals.
    pub arrays: HashMap<String, (FuncDecl, Option<(u32, bool)>)>,
    /// Range facts of integer elements read so far.
    pub facts: RefCell<Vec<Bool>>,
}

impl Symbols {
    /// Element `idx` of array `name` as it was on entry.
    pub fn initial(&self, name: &str, idx: &[Int]) -> Result<V, Unsupported> {
        let (f, int) = self
            .arrays
            .get(name)
            .ok_or_else(|| Unsupported(format!("array `{name}` is unknown to the proof")))?;
        let args: Vec<&dyn Ast> = idx.iter().map(|i| i as &dyn Ast).collect();
        let v = f.apply(&args);
        Ok(match int {
            Some((bits, signed)) => {
                let i = v
                    .as_int()
                    .ok_or_else(|| Unsupported("integer array sort".into()))?;
                if *bits < 64 {
                    let (lo, hi) = if *signed {
                        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
                    } else {
                        (0, (1i64 << bits) - 1)
                    };
                    self.facts
                        .borrow_mut()
                        .push(i.ge(Int::from_i64(lo)) & i.le(Int::from_i64(hi)));
                }
                V::I(i)
            }
            None => V::R(
                v.as_real()
                    .ok_or_else(|| Unsupported("real array sort".into()))?,
            ),
        })
    }

    pub fn size(&self, name: &str) -> Option<Int> {
        self.sizes.get(name).cloned()
    }
}

fn key_of(idx: &[Int]) -> String {
    idx.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl<'a> Lifted<'a> {
    pub fn new(program: &'a Program, symbols: &'a Symbols) -> Result<Lifted<'a>, Unsupported> {
        let mut env: HashMap<Arc<str>, Arc<Binding>> = HashMap::new();
        for p in &program.params {
            if matches!(p.kind, ParamKind::Array { .. }) {
                env.insert(p.name.clone(), Arc::new(Binding::Initial(p.name.clone())));
            }
        }
        let mut env: Env = Arc::new(env);
        let mut returned = None;
        for stmt in &program.body {
            let next = match stmt {
                Stmt::Let { value, .. } => Binding::Let(value.clone(), env.clone()),
                Stmt::Store {
                    target,
                    region,
                    value,
                } => Binding::Store {
                    previous: env.get(target).cloned().ok_or_else(|| {
                        Unsupported(format!("store to `{target}`, which is no array parameter"))
                    })?,
                    region: region.clone(),
                    value: value.clone(),
                    env: env.clone(),
                },
                Stmt::Return(e) => {
                    returned = Some((e.clone(), env.clone()));
                    continue;
                }
                Stmt::Loop { var, .. } => {
                    return Err(Unsupported(format!(
                        "the lifted program keeps loop `{var}` (partial lift): no invariant is derived for TensIR loops yet"
                    )))
                }
                Stmt::Var { name, .. } => {
                    return Err(Unsupported(format!(
                        "the lifted program keeps the local `var {name}`: no invariant relates it to the C"
                    )))
                }
            };
            let name = match stmt {
                Stmt::Let { name, .. } => name.clone(),
                Stmt::Store { target, .. } => target.clone(),
                Stmt::Return(_) | Stmt::Loop { .. } | Stmt::Var { .. } => continue,
            };
            let mut map = (*env).clone();
            map.insert(name, Arc::new(next));
            env = Arc::new(map);
        }
        Ok(Lifted {
            program,
            symbols,
            final_env: env,
            returned,
            functions: RefCell::new(HashMap::new()),
            unfolded: RefCell::new(HashSet::new()),
            lemmas: RefCell::new(Vec::new()),
            sums: RefCell::new(Vec::new()),
        })
    }

    /// Element `idx` of output `name` after the program, with reductions
    /// truncated by `cut`.
    pub fn output(&self, name: &str, idx: &[Int], cut: &Truncation) -> Result<V, Unsupported> {
        let b = self
            .final_env
            .get(name)
            .ok_or_else(|| Unsupported(format!("the program has no array `{name}`")))?
            .clone();
        self.binding(&b, idx, cut)
    }

    /// When output `name` is stored whole as `op(a, b)` and one operand at
    /// `idx` is the very term `other`, the other operand at `idx`: the
    /// lifted value before a final step the C does as a separate statement
    /// (`B = alpha * B`, `x = x + z`).
    pub fn strip_step(
        &self,
        name: &str,
        idx: &[Int],
        cut: &Truncation,
        op: BinaryOp,
        other: &V,
    ) -> Result<Option<V>, Unsupported> {
        let Some(Binding::Store {
            previous,
            region,
            value,
            env,
        }) = self.final_env.get(name).map(|b| (**b).clone())
        else {
            return Ok(None);
        };
        if value.op() != &Op::Binary(op) || value.args().len() != 2 {
            return Ok(None);
        }
        // A region store (`B[0:m, 0:n] = mul(alpha, ...)`, the C's arrays
        // at their declared extents) is stripped inside its region, at the
        // element's index in the stored value; outside it the element keeps
        // its earlier value (no C statement writes there).
        let (inside, inner) = match &region {
            Some(items) => {
                let (inside, inner) = self.region_index(items, idx)?;
                (Some(inside), inner)
            }
            None => (None, idx.to_vec()),
        };
        let operand = |k: usize| -> Result<V, Unsupported> {
            let a = &value.args()[k];
            let sub = self.broadcast_index(a.shape(), value.shape(), &inner);
            self.elem(a, &sub, cut, &env)
        };
        let same = |v: &V| format!("{v:?}") == format!("{other:?}");
        let (a, b) = (operand(0)?, operand(1)?);
        let commutes = matches!(op, BinaryOp::Add | BinaryOp::Mul);
        let stripped = if same(&b) {
            a
        } else if commutes && same(&a) {
            b
        } else {
            return Ok(None);
        };
        Ok(Some(match inside {
            Some(inside) => V::ite(&inside, &stripped, &self.binding(&previous, idx, cut)?),
            None => stripped,
        }))
    }

    /// The returned scalar, truncated by `cut`.
    pub fn returned(&self, cut: &Truncation) -> Result<V, Unsupported> {
        let (e, env) = self
            .returned
            .as_ref()
            .ok_or_else(|| Unsupported("the program returns nothing".into()))?;
        self.elem(e, &[], cut, env)
    }

    /// The first reduction met in output `name` (or the returned value when
    /// `name` is `None`) at `idx`, truncated: the partial value a scalar
    /// accumulator of the C holds.
    pub fn first_reduction(
        &self,
        name: Option<&str>,
        idx: &[Int],
        cut: &Truncation,
        reads: &[String],
    ) -> Result<V, Unsupported> {
        let (e, env, idx) = match name {
            None => {
                let (e, env) = self
                    .returned
                    .clone()
                    .ok_or_else(|| Unsupported("the program returns nothing".into()))?;
                (e, env, idx.to_vec())
            }
            Some(n) => self.store_at(n, idx)?,
        };
        // The reduction reading the same arrays as the C's accumulation,
        // else the first one.
        if let Some(v) = self.find_reduction(&e, &idx, cut, &env, Some(reads))? {
            return Ok(v);
        }
        self.find_reduction(&e, &idx, cut, &env, None)?
            .ok_or_else(|| Unsupported("no reduction to match the accumulator".into()))
    }

    /// The last store of `name` whose region may hold element `idx`: its
    /// value, environment and the element's index in the value.
    fn store_at(&self, name: &str, idx: &[Int]) -> Result<(Expr, Env, Vec<Int>), Unsupported> {
        let found = match self.final_env.get(name) {
            Some(b) => self.store_in(b, idx)?,
            None => None,
        };
        found.ok_or_else(|| Unsupported(format!("`{name}` is not stored by the program")))
    }

    /// Walks back from binding `b` to the last store whose region may
    /// hold element `idx`; a region store that syntactically misses the
    /// element (`R[k, k+1:n]` for `R[k][k]`) is skipped for the one before
    /// it. `None` when the element was never stored.
    fn store_in(
        &self,
        b: &Binding,
        idx: &[Int],
    ) -> Result<Option<(Expr, Env, Vec<Int>)>, Unsupported> {
        let mut binding = b;
        while let Binding::Store {
            previous,
            region,
            value,
            env,
        } = binding
        {
            let Some(items) = region else {
                return Ok(Some((value.clone(), env.clone(), idx.to_vec())));
            };
            let (inside, inner) = self.region_index(items, idx)?;
            if inside.simplify().as_bool() == Some(false) {
                binding = previous;
                continue;
            }
            return Ok(Some((value.clone(), env.clone(), inner)));
        }
        Ok(None)
    }

    fn find_reduction(
        &self,
        e: &Expr,
        idx: &[Int],
        cut: &Truncation,
        env: &Env,
        reads: Option<&[String]>,
    ) -> Result<Option<V>, Unsupported> {
        match e.op() {
            Op::Reduce { .. } | Op::Scan { .. } | Op::Matmul | Op::Einsum(_) => {
                if let Some(want) = reads {
                    let mut have = Vec::new();
                    array_names(e, env, &mut have);
                    let mut want = want.to_vec();
                    want.sort();
                    want.dedup();
                    have.sort();
                    have.dedup();
                    if want != have {
                        return Ok(None);
                    }
                }
                self.elem(e, idx, cut, env).map(Some)
            }
            Op::Unary(_) | Op::Binary(_) | Op::Cast(_) | Op::Where => {
                for a in e.args() {
                    let sub = self.broadcast_index(a.shape(), e.shape(), idx);
                    if let Some(v) = self.find_reduction(a, &sub, cut, env, reads)? {
                        return Ok(Some(v));
                    }
                }
                Ok(None)
            }
            Op::Var(name) => match env.get(name).map(|b| (**b).clone()) {
                Some(Binding::Let(inner, inner_env)) => {
                    self.find_reduction(&inner, idx, cut, &inner_env, reads)
                }
                // A `var` read whole (`sqrt(nrm)`): the reduction of the
                // store that wrote the element.
                Some(b @ Binding::Store { .. }) => match self.store_in(&b, idx)? {
                    Some((value, env, inner)) => {
                        self.find_reduction(&value, &inner, cut, &env, reads)
                    }
                    None => Ok(None),
                },
                _ => Ok(None),
            },
            _ => Ok(None),
        }
    }

    fn binding(&self, b: &Binding, idx: &[Int], cut: &Truncation) -> Result<V, Unsupported> {
        match b {
            Binding::Initial(name) => self.symbols.initial(name, idx),
            Binding::Let(e, env) => self.elem(e, idx, cut, env),
            Binding::Store {
                previous,
                region: None,
                value,
                env,
            } => {
                let _ = previous;
                self.elem(value, idx, cut, env)
            }
            Binding::Store {
                previous,
                region: Some(items),
                value,
                env,
            } => {
                let earlier = self.binding(previous, idx, cut)?;
                let (inside, inner) = self.region_index(items, idx)?;
                let here = self.elem(value, &inner, cut, env)?;
                Ok(V::ite(&inside, &here, &earlier))
            }
        }
    }

    /// Whether element `idx` of an array lies in `items`, and its index in
    /// the stored value.
    fn region_index(
        &self,
        items: &[SliceItem],
        idx: &[Int],
    ) -> Result<(Bool, Vec<Int>), Unsupported> {
        let mut inside = Bool::from_bool(true);
        let mut inner = Vec::new();
        for (k, e) in idx.iter().enumerate() {
            match items.get(k).unwrap_or(&SliceItem::Full) {
                SliceItem::Full => inner.push(e.clone()),
                SliceItem::Index(d) => inside &= e.eq(self.dim(d)?),
                SliceItem::Range { start, stop, step } => {
                    let s = self.dim(start)?;
                    let t = self.dim(stop)?;
                    let offset = e.clone() - s.clone();
                    inside &= e.ge(&s) & e.lt(&t);
                    if *step != 1 {
                        let st = Int::from_i64(*step);
                        inside &= offset.modulo(&st).eq(Int::from_i64(0));
                        inner.push(offset.div(&st));
                    } else {
                        inner.push(offset);
                    }
                }
            }
        }
        Ok((inside, inner))
    }

    fn dim(&self, d: &Dim) -> Result<Int, Unsupported> {
        dim_term(d, &|s| self.symbols.size(s))
    }

    fn extent(&self, d: &Dim, cut: &Truncation) -> Result<Int, Unsupported> {
        if let Some(t) = d.as_const().and_then(|c| cut.get(&constant_key(c))) {
            return Ok(t.clone());
        }
        dim_term(d, &|s| cut.get(s).cloned().or_else(|| self.symbols.size(s)))
    }

    /// The operand index of result index `idx` of a reshape from `from` to
    /// `to`: the row-major position, split by `from`'s trailing products.
    /// Products and divisions by constants (`[n, 2]` from `[2*n]`) stay
    /// linear; the leading axis needs no remainder and a unit divisor no
    /// division, since indices are in range.
    fn reshaped_index(
        &self,
        from: &[Dim],
        to: &[Dim],
        idx: &[Int],
    ) -> Result<Vec<Int>, Unsupported> {
        let mut flat = Int::from_i64(0);
        let mut stride = Dim::constant(1);
        for (d, i) in to.iter().zip(idx).rev() {
            flat += self.dim(&stride)? * i.clone();
            stride = stride
                .mul(d)
                .map_err(|e| Unsupported(format!("reshape: {e}")))?;
        }
        let mut sub = vec![Int::from_i64(0); from.len()];
        let mut stride = Dim::constant(1);
        for (j, d) in from.iter().enumerate().rev() {
            let q = if stride.as_const() == Some(1) {
                flat.clone()
            } else {
                flat.div(&self.dim(&stride)?)
            };
            sub[j] = if j == 0 { q } else { q.modulo(&self.dim(d)?) };
            stride = stride
                .mul(d)
                .map_err(|e| Unsupported(format!("reshape: {e}")))?;
        }
        Ok(sub)
    }

    /// NumPy broadcasting: the operand index for a result index.
    fn broadcast_index(&self, operand: &[Dim], result: &[Dim], idx: &[Int]) -> Vec<Int> {
        let shift = result.len().saturating_sub(operand.len());
        operand
            .iter()
            .enumerate()
            .map(|(a, d)| {
                let r = a + shift;
                if d.as_const() == Some(1) && result.get(r).and_then(|x| x.as_const()) != Some(1) {
                    Int::from_i64(0)
                } else {
                    idx.get(r).cloned().unwrap_or_else(|| Int::from_i64(0))
                }
            })
            .collect()
    }

    fn elem(&self, e: &Expr, idx: &[Int], cut: &Truncation, env: &Env) -> Result<V, Unsupported> {
        let args = e.args();
        let arg = |k: usize, sub: &[Int]| -> Result<V, Unsupported> {
            let a = args
                .get(k)
                .ok_or_else(|| Unsupported("missing operand".into()))?;
            self.elem(a, sub, cut, env)
        };
        let pointwise = |k: usize| -> Result<V, Unsupported> {
            let a = args
                .get(k)
                .ok_or_else(|| Unsupported("missing operand".into()))?;
            let sub = self.broadcast_index(a.shape(), e.shape(), idx);
            self.elem(a, &sub, cut, env)
        };
        let real = e.dtype().is_float();
        // A truncation cuts the outermost reductions only: the C loop it
        // stands for accumulates their summands, which it reads as whole
        // values (an `n`-long sum inside an `n`-long sum is complete).
        let uncut = Truncation::new();
        Ok(match e.op() {
            Op::Var(name) => {
                if let Some(b) = env.get(name) {
                    let cut_here = match **b {
                        Binding::Let(..) => cut.clone(),
                        _ => Truncation::new(),
                    };
                    return self.binding(b, idx, &cut_here);
                }
                if let Some(v) = self.symbols.scalars.get(&**name) {
                    return Ok(v.clone());
                }
                if let Some(s) = self.symbols.size(name) {
                    return Ok(V::I(s));
                }
                return Err(Unsupported(format!("unknown name `{name}`")));
            }
            Op::Lit(l) | Op::Full { value: l, .. } => literal(l)?,
            Op::Cast(to) => cast(&pointwise(0)?, *to),
            Op::Unary(op) => {
                let a = pointwise(0)?;
                match op {
                    UnaryOp::Neg => value::sub(&zero_like(real), &a),
                    UnaryOp::Abs => V::ite(
                        &value::lt(&a, &zero_like(real)),
                        &value::sub(&zero_like(real), &a),
                        &a,
                    ),
                    UnaryOp::Not => V::B(a.as_bool().not()),
                    UnaryOp::Sqrt
                    | UnaryOp::Exp
                    | UnaryOp::Log
                    | UnaryOp::Tanh
                    | UnaryOp::Round
                    | UnaryOp::Floor
                    | UnaryOp::Ceil
                    | UnaryOp::Sin
                    | UnaryOp::Cos
                    | UnaryOp::Cosh
                    | UnaryOp::Sinh => math(op_name(*op), &[a]),
                }
            }
            Op::Binary(op) => {
                let a = pointwise(0)?;
                let b = pointwise(1)?;
                binary(
                    *op,
                    &a,
                    &b,
                    args.first().map(|x| x.dtype()).unwrap_or(DType::F64),
                )?
            }
            Op::Where => {
                let c = pointwise(0)?;
                let a = pointwise(1)?;
                let b = pointwise(2)?;
                V::ite(&c.as_bool(), &a, &b)
            }
            Op::Broadcast(_) => pointwise(0)?,
            Op::Transpose(perm) => {
                let mut sub = vec![Int::from_i64(0); perm.len()];
                for (i, p) in perm.iter().enumerate() {
                    if let (Some(slot), Some(v)) = (sub.get_mut(*p), idx.get(i)) {
                        *slot = v.clone();
                    }
                }
                arg(0, &sub)?
            }
            Op::Slice(items) => {
                let a = &args[0];
                let mut sub = Vec::new();
                let mut next = idx.iter();
                for k in 0..a.shape().len() {
                    match items.get(k).unwrap_or(&SliceItem::Full) {
                        SliceItem::Full => {
                            sub.push(next.next().cloned().unwrap_or_else(|| Int::from_i64(0)))
                        }
                        SliceItem::Index(d) => sub.push(self.dim(d)?),
                        SliceItem::Range { start, step, .. } => {
                            let i = next.next().cloned().unwrap_or_else(|| Int::from_i64(0));
                            sub.push(self.dim(start)? + Int::from_i64(*step) * i);
                        }
                    }
                }
                arg(0, &sub)?
            }
            Op::Triu(k) | Op::Tril(k) => {
                let n = idx.len();
                if n < 2 {
                    return Err(Unsupported("triu/tril of a vector".into()));
                }
                let diff = idx[n - 1].clone() - idx[n - 2].clone();
                let keep = match e.op() {
                    Op::Triu(_) => diff.ge(Int::from_i64(*k)),
                    _ => diff.le(Int::from_i64(*k)),
                };
                V::ite(&keep, &arg(0, idx)?, &zero_like(real))
            }
            Op::TriSolve { lower: true, .. } => self.solver_elem(e, idx, env)?,
            Op::Cholesky | Op::TriSolve { .. } | Op::LuNoPivot => {
                return Err(Unsupported(format!(
                    "{}: an element is a recurrence over all earlier ones; its unfolded definition \
                     makes queries too large to state (the bounded check expands it)",
                    e.op().name()
                )))
            }
            Op::Diag => {
                if args[0].shape().len() == 1 {
                    let v = arg(0, &idx[..1])?;
                    V::ite(&idx[0].eq(&idx[1]), &v, &zero_like(real))
                } else {
                    arg(0, &[idx[0].clone(), idx[0].clone()])?
                }
            }
            Op::ScatterAdd => self.scatter_add(e, idx, cut, env)?,
            // A position found by a search over a symbolic length has no
            // closed form the invariants could state.
            Op::ArgExtreme { .. } => {
                return Err(Unsupported(format!(
                    "{} over a symbolic length (a running search; proved at bounded sizes only)",
                    e.op().name()
                )))
            }
            // `syrk`, `syr2k`, `mirror_lower`: the element of their
            // definition (masks, transposes and a contraction, all encoded
            // above).
            Op::Syrk | Op::Syr2k | Op::MirrorLower => match symmetry::blas::definition(e) {
                Some(Ok(d)) => return self.elem(&d, idx, cut, env),
                Some(Err(err)) => return Err(Unsupported(err.message)),
                None => return Err(Unsupported(format!("{} has no definition", e.op().name()))),
            },
            Op::Concat { axis } => {
                let len0 = self.dim(&args[0].shape()[*axis])?;
                let mut shifted = idx.to_vec();
                shifted[*axis] = idx[*axis].clone() - len0.clone();
                V::ite(&idx[*axis].lt(&len0), &arg(0, idx)?, &arg(1, &shifted)?)
            }
            Op::Flip(axes) => {
                let shape = args[0].shape();
                let mut sub = idx.to_vec();
                for &a in axes {
                    sub[a] = self.dim(&shape[a])? - Int::from_i64(1) - idx[a].clone();
                }
                arg(0, &sub)?
            }
            Op::Window(_) => {
                let rank = args[0].shape().len();
                let sub: Vec<Int> = (0..rank)
                    .map(|d| idx[d].clone() + idx[rank + d].clone())
                    .collect();
                arg(0, &sub)?
            }
            Op::Reshape(_) => arg(0, &self.reshaped_index(args[0].shape(), e.shape(), idx)?)?,
            Op::Outer => value::mul(&arg(0, &idx[..1])?, &arg(1, &idx[1..2])?),
            Op::Reduce { kind, axes } => {
                let operand = &args[0];
                let shape = operand.shape();
                let extents: Vec<Int> = axes
                    .iter()
                    .map(|a| self.extent(&shape[*a], cut))
                    .collect::<Result<_, _>>()?;
                let body = |rs: &[Int]| -> Result<V, Unsupported> {
                    self.elem(
                        operand,
                        &reduced_index(shape.len(), axes, rs, idx),
                        &uncut,
                        env,
                    )
                };
                // A float sum of integers converted one by one is the
                // integer sum converted once (exact: integers do not
                // overflow here), the form in which a C `int` accumulator
                // holds it.
                if let Some(inner) =
                    integer_under_float_cast(operand).filter(|_| *kind == ReduceKind::Sum && real)
                {
                    let body = |rs: &[Int]| -> Result<V, Unsupported> {
                        let sub = reduced_index(shape.len(), axes, rs, idx);
                        self.elem(inner, &sub, &uncut, env)
                    };
                    let total = self.reduce(*kind, false, e, idx, env, &extents, &[], &body)?;
                    return Ok(V::R(total.as_real()));
                }
                self.reduce(*kind, real, e, idx, env, &extents, &[], &body)?
            }
            // Element `i` along the axis reduces the operand's `0..=i`: a
            // reduction whose extent is the index plus one.
            Op::Scan { kind, axis } => {
                let operand = &args[0];
                let at = idx
                    .get(*axis)
                    .ok_or_else(|| Unsupported("scan of a scalar".into()))?;
                let extent = at.clone() + Int::from_i64(1);
                let body = |rs: &[Int]| -> Result<V, Unsupported> {
                    let mut sub = idx.to_vec();
                    sub[*axis] = rs[0].clone();
                    self.elem(operand, &sub, &uncut, env)
                };
                // The sum does not depend on the scan index but through
                // its extent: one function of the other indices, so that
                // elements `i` and `i + 1` unfold into each other.
                let mut lines = idx.to_vec();
                lines[*axis] = Int::from_i64(0);
                self.reduce(*kind, real, e, &lines, env, &[extent], &[], &body)?
            }
            Op::Matmul => {
                let (a, b) = (&args[0], &args[1]);
                let k = a
                    .shape()
                    .last()
                    .cloned()
                    .ok_or_else(|| Unsupported("matmul of a scalar".into()))?;
                let extent = self.extent(&k, cut)?;
                let (ra, rb) = (a.shape().len(), b.shape().len());
                let body = |rs: &[Int]| -> Result<V, Unsupported> {
                    let r = rs[0].clone();
                    let ai: Vec<Int> = if ra == 2 {
                        vec![idx[0].clone(), r.clone()]
                    } else {
                        vec![r.clone()]
                    };
                    let bi: Vec<Int> = if rb == 2 {
                        vec![r.clone(), idx[idx.len() - 1].clone()]
                    } else {
                        vec![r.clone()]
                    };
                    Ok(value::mul(
                        &self.elem(a, &ai, &uncut, env)?,
                        &self.elem(b, &bi, &uncut, env)?,
                    ))
                };
                self.reduce(ReduceKind::Sum, real, e, idx, env, &[extent], &[], &body)?
            }
            // A tensordot is the einsum that names its axis pairs.
            Op::Einsum(_) | Op::Tensordot { .. } => {
                let ranks: Vec<usize> = args.iter().map(|a| a.shape().len()).collect();
                let spec = e
                    .op()
                    .as_contraction(&ranks)
                    .ok_or_else(|| Unsupported(format!("{} of ranks {ranks:?}", e.op().name())))?;
                let mut summed: Vec<(char, Int)> = Vec::new();
                for (labels, a) in spec.inputs.iter().zip(args) {
                    for (l, d) in labels.iter().zip(a.shape()) {
                        if !spec.output.contains(l) && !summed.iter().any(|(s, _)| s == l) {
                            summed.push((*l, self.extent(d, cut)?));
                        }
                    }
                }
                let extents: Vec<Int> = summed.iter().map(|(_, x)| x.clone()).collect();
                let body = |rs: &[Int]| -> Result<V, Unsupported> {
                    let label = |l: &char| -> Int {
                        match spec.output.iter().position(|o| o == l) {
                            Some(p) => idx[p].clone(),
                            None => {
                                let p = summed.iter().position(|(s, _)| s == l).unwrap_or(0);
                                rs[p].clone()
                            }
                        }
                    };
                    let mut product: Option<V> = None;
                    for (labels, a) in spec.inputs.iter().zip(args) {
                        let sub: Vec<Int> = labels.iter().map(label).collect();
                        let v = self.elem(a, &sub, &uncut, env)?;
                        product = Some(match product {
                            None => v,
                            Some(p) => value::mul(&p, &v),
                        });
                    }
                    product.ok_or_else(|| Unsupported("einsum without operands".into()))
                };
                self.reduce(ReduceKind::Sum, real, e, idx, env, &extents, &[], &body)?
            }
        })
    }

    /// Bin `idx` of `scatter_add(h, index, values)`: `h[b] + Σ_r (index[r]
    /// == b ? values[r] : 0)` over the index array's box, a sum with a
    /// data-dependent summand like any other (the C's `if (x[i] == b)`
    /// accumulation, lowered to a loop over the bins, cuts it at its
    /// counter the same way). Narrow integer bins wrap once, which equals
    /// wrapping at every addition.
    fn scatter_add(
        &self,
        e: &Expr,
        idx: &[Int],
        cut: &Truncation,
        env: &Env,
    ) -> Result<V, Unsupported> {
        let [base, index, values] = e.args() else {
            return Err(Unsupported("scatter_add takes three operands".into()));
        };
        let bin = idx
            .first()
            .ok_or_else(|| Unsupported("scatter_add into a scalar".into()))?;
        let real = e.dtype().is_float();
        let extents: Vec<Int> = index
            .shape()
            .iter()
            .map(|d| self.extent(d, cut))
            .collect::<Result<_, _>>()?;
        let uncut = Truncation::new();
        let body = |rs: &[Int]| -> Result<V, Unsupported> {
            let at = self.elem(index, rs, &uncut, env)?.as_int();
            let v = self.elem(values, rs, &uncut, env)?;
            Ok(V::ite(&at.eq(bin), &v, &zero_like(real)))
        };
        let total = self.reduce(ReduceKind::Sum, real, e, idx, env, &extents, &[], &body)?;
        let sum = value::add(&self.elem(base, idx, cut, env)?, &total);
        Ok(match (sum, IntTy::of_tensir(e.dtype())) {
            (V::I(i), Some(ty)) if ty.bits < 32 => V::I(value::wrap(&i, ty)),
            (v, _) => v,
        })
    }

    /// A reduction over the box `extents` (outermost first), as nested
    /// range functions with their unfold lemmas instantiated at the use.
    #[allow(clippy::too_many_arguments)]
    fn reduce(
        &self,
        kind: ReduceKind,
        real: bool,
        node: &Expr,
        idx: &[Int],
        env: &Env,
        extents: &[Int],
        outer: &[Int],
        body: &dyn Fn(&[Int]) -> Result<V, Unsupported>,
    ) -> Result<V, Unsupported> {
        let Some((first, rest)) = extents.split_first() else {
            return body(outer);
        };
        let level = |r: &Int| -> Result<V, Unsupported> {
            let mut o = outer.to_vec();
            o.push(r.clone());
            self.reduce(kind, real, node, idx, env, rest, &o, body)
        };
        // One function per reduction node, nesting level and meaning of
        // the names it reads (two copies of `matmul(y, A)` over the same
        // stored `A` are one function); the element index and the outer
        // reduction indices are arguments, so two uses at equal indices are
        // equal by congruence. Bodies are never cut, so the cut is not
        // part of the key. The inner extents of a multi-axis reduction
        // shape the body: they are arguments too (a cut of one is another
        // sum).
        let key = self.node_key(node, outer.len(), env);
        let arity = 1 + rest.len() + idx.len() + outer.len();
        let f = {
            let mut fs = self.functions.borrow_mut();
            let n = fs.len();
            fs.entry(key.clone())
                .or_insert_with(|| {
                    let range = if real { Sort::real() } else { Sort::int() };
                    let int = Sort::int();
                    let domain: Vec<&Sort> = (0..arity).map(|_| &int).collect();
                    std::rc::Rc::new(FuncDecl::new(
                        format!("{}_{n}", reduce_name(kind)),
                        &domain,
                        &range,
                    ))
                })
                .clone()
        };
        let apply = |h: &Int| -> V {
            let mut args: Vec<&dyn Ast> = vec![h as &dyn Ast];
            args.extend(rest.iter().map(|i| i as &dyn Ast));
            args.extend(idx.iter().map(|i| i as &dyn Ast));
            args.extend(outer.iter().map(|i| i as &dyn Ast));
            let v = f.apply(&args);
            match (v.as_real(), v.as_int()) {
                (Some(r), _) => V::R(r),
                (_, Some(i)) => V::I(i),
                _ => V::R(real_num(0)),
            }
        };
        let h = first.clone();
        let at = apply(&h);
        let lemma_key = format!(
            "{key}@{h}|{}|{}|{}",
            key_of(rest),
            key_of(idx),
            key_of(outer)
        );
        if self.unfolded.borrow_mut().insert(lemma_key) {
            let one = Int::from_i64(1);
            let combine = |a: &V, b: &V| -> V {
                match kind {
                    ReduceKind::Sum => value::add(a, b),
                    ReduceKind::Prod => value::mul(a, b),
                    ReduceKind::Max => value::max_v(a, b),
                    ReduceKind::Min => value::min_v(a, b),
                }
            };
            // The unfold lemma around the use, its base case, and every
            // instance below a small constant bound (a fixed-size kernel's
            // reduction then unfolds completely).
            let mut points = vec![h.clone()];
            match h.simplify().as_i64() {
                Some(c) if (1..=MAX_UNFOLDED_EXTENT).contains(&c) => {
                    points.extend((0..c).map(Int::from_i64));
                }
                _ => points.push(Int::from_i64(0)),
            }
            let mut lemmas = Vec::new();
            for (k, h) in points.iter().enumerate() {
                let at = apply(h);
                let before = h.clone() - one.clone();
                let after = h.clone() + one.clone();
                let around = k == 0;
                if !around && h.as_i64() == Some(0) {
                    // The base case alone: an unfolding below 0 would only
                    // instantiate the body at -1.
                    if matches!(kind, ReduceKind::Sum | ReduceKind::Prod) {
                        let identity = if kind == ReduceKind::Sum { 0 } else { 1 };
                        let id = if real {
                            V::R(real_num(identity))
                        } else {
                            V::int(identity as i64)
                        };
                        lemmas.push(at.equal(&id));
                    }
                    continue;
                }
                match kind {
                    ReduceKind::Sum | ReduceKind::Prod => {
                        let identity = if kind == ReduceKind::Sum { 0 } else { 1 };
                        let id = if real {
                            V::R(real_num(identity))
                        } else {
                            V::int(identity as i64)
                        };
                        lemmas.push(h.le(Int::from_i64(0)).implies(at.equal(&id)));
                        lemmas.push(
                            h.ge(&one)
                                .implies(at.equal(&combine(&apply(&before), &level(&before)?))),
                        );
                        if around {
                            lemmas.push(
                                h.ge(Int::from_i64(0))
                                    .implies(apply(&after).equal(&combine(&at, &level(h)?))),
                            );
                        }
                    }
                    ReduceKind::Max | ReduceKind::Min => {
                        let zero = Int::from_i64(0);
                        lemmas.push(h.eq(&one).implies(at.equal(&level(&zero)?)));
                        lemmas.push(
                            h.ge(Int::from_i64(2))
                                .implies(at.equal(&combine(&apply(&before), &level(&before)?))),
                        );
                        if around {
                            lemmas.push(
                                h.ge(&one)
                                    .implies(apply(&after).equal(&combine(&at, &level(h)?))),
                            );
                        }
                    }
                }
            }
            self.lemmas.borrow_mut().extend(lemmas);
            if kind == ReduceKind::Sum {
                let bound = fresh_bound("sum_r");
                // The template's own lemma instances stay with it (restated
                // at each lemma's fresh index), out of the shared list.
                let made = self.lemmas.borrow().len();
                let seen = self.unfolded.borrow().clone();
                let body = level(&bound)?;
                let template_lemmas = self.lemmas.borrow_mut().split_off(made);
                *self.unfolded.borrow_mut() = seen;
                self.sums.borrow_mut().push(SumUse {
                    value: at.clone(),
                    lo: Int::from_i64(0),
                    hi: h.clone(),
                    bound,
                    body,
                    local: false,
                    family: format!("red_{:x}_{}", node.hash_value(), outer.len()),
                    function: Some((
                        f.clone(),
                        rest.iter().chain(idx).chain(outer).cloned().collect(),
                    )),
                    lemmas: template_lemmas,
                });
            }
        }
        Ok(at)
    }

    /// The name of the range function of `node` at nesting `level`.
    fn node_key(&self, node: &Expr, level: usize, env: &Env) -> String {
        format!(
            "red_{:x}_{}|{}",
            node.hash_value(),
            level,
            bindings_read(node, env)
        )
    }

    pub fn program(&self) -> &Program {
        self.program
    }
}

/// The operand's index for reduction indices `rs` (over `axes`) and the
/// result's index `idx` (the other axes, in order).
fn reduced_index(rank: usize, axes: &[usize], rs: &[Int], idx: &[Int]) -> Vec<Int> {
    let mut free = idx.iter();
    (0..rank)
        .map(|k| match axes.iter().position(|a| *a == k) {
            Some(p) => rs[p].clone(),
            None => free.next().cloned().unwrap_or_else(|| Int::from_i64(0)),
        })
        .collect()
}

/// `x` when `e` is `cast(x, float)` with `x` of an integer type.
fn integer_under_float_cast(e: &Expr) -> Option<&Expr> {
    match e.op() {
        Op::Cast(to) if to.is_float() => e
            .args()
            .first()
            .filter(|x| !x.dtype().is_float() && x.dtype() != DType::Bool),
        _ => None,
    }
}

/// The bindings of the names `e` reads, as their addresses: equal for two
/// expressions that read the same values.
fn bindings_read(e: &Expr, env: &Env) -> String {
    let mut names = Vec::new();
    var_names(e, &mut names);
    names.sort();
    names.dedup();
    names
        .iter()
        .map(|n| match env.get(n.as_str()) {
            Some(b) => format!("{n}@{:p}", Arc::as_ptr(b)),
            None => n.clone(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn var_names(e: &Expr, out: &mut Vec<String>) {
    if let Op::Var(name) = e.op() {
        out.push(name.to_string());
    }
    for a in e.args() {
        var_names(a, out);
    }
}

/// The arrays an expression reads, through `let`s.
fn array_names(e: &Expr, env: &Env, out: &mut Vec<String>) {
    if let Op::Var(name) = e.op() {
        match env.get(name).map(|b| &**b) {
            Some(Binding::Let(inner, inner_env)) => array_names(inner, inner_env, out),
            Some(_) => out.push(name.to_string()),
            None => {}
        }
    }
    for a in e.args() {
        array_names(a, env, out);
    }
}

/// The truncation key of a constant extent: fixed-size kernels (`#define
/// N 10`) cut the reductions of that extent like a size parameter's.
pub(crate) fn constant_key(extent: i64) -> String {
    format!("#{extent}")
}

fn reduce_name(kind: ReduceKind) -> &'static str {
    match kind {
        ReduceKind::Sum => "sum",
        ReduceKind::Prod => "prod",
        ReduceKind::Max => "max",
        ReduceKind::Min => "min",
    }
}

fn op_name(op: UnaryOp) -> &'static str {
    op.name()
}

fn zero_like(real: bool) -> V {
    if real {
        V::R(real_num(0))
    } else {
        V::int(0)
    }
}

/// A libm function: uninterpreted, the same symbol on both sides.
pub(crate) fn math(name: &str, args: &[V]) -> V {
    let real = Sort::real();
    let domain: Vec<&Sort> = args.iter().map(|_| &real).collect();
    let f = FuncDecl::new(name, &domain, &real);
    let reals: Vec<Real> = args.iter().map(|a| a.as_real()).collect();
    let refs: Vec<&dyn Ast> = reals.iter().map(|r| r as &dyn Ast).collect();
    V::R(f.apply(&refs).as_real().unwrap_or_else(|| real_num(0)))
}

fn literal(l: &Lit) -> Result<V, Unsupported> {
    Ok(match l {
        Lit::Bool(b) => V::B(Bool::from_bool(*b)),
        Lit::Int(v, _) => V::int(*v),
        Lit::Float(bits, d) => V::R(real_literal(f64::from_bits(*bits), *d == DType::F32)?),
    })
}

/// TensIR `cast` (C conversion rules).
pub(crate) fn cast(a: &V, to: DType) -> V {
    if to == DType::Bool {
        return V::B(a.as_bool());
    }
    if to.is_float() {
        return V::R(a.as_real());
    }
    let i = a.as_int();
    // Exact at 32 and 64 bits, as on the C side (see `arithmetic`).
    if to.bits() >= 32 {
        V::I(i)
    } else {
        V::I(value::wrap(
            &i,
            IntTy {
                bits: to.bits(),
                signed: to.is_signed_int(),
            },
        ))
    }
}

fn binary(op: BinaryOp, a: &V, b: &V, operand: DType) -> Result<V, Unsupported> {
    let wrap_int = |v: V| -> V {
        match (
            &v,
            operand.is_float() || operand == DType::Bool || operand.bits() >= 32,
        ) {
            (V::I(i), false) => V::I(value::wrap(
                i,
                IntTy {
                    bits: operand.bits(),
                    signed: operand.is_signed_int(),
                },
            )),
            _ => v,
        }
    };
    Ok(match op {
        BinaryOp::Add => wrap_int(value::add(a, b)),
        BinaryOp::Sub => wrap_int(value::sub(a, b)),
        BinaryOp::Mul => wrap_int(value::mul(a, b)),
        BinaryOp::Div => V::R(a.as_real() / b.as_real()),
        BinaryOp::TruncDiv => wrap_int(V::I(value::trunc_div(&a.as_int(), &b.as_int()))),
        BinaryOp::Rem => V::I(value::trunc_rem(&a.as_int(), &b.as_int())),
        BinaryOp::Pow => super::libm::pow(a, b),
        BinaryOp::Maximum => value::max_v(a, b),
        BinaryOp::Minimum => value::min_v(a, b),
        BinaryOp::Lt => V::B(value::lt(a, b)),
        BinaryOp::Le => V::B(value::ge(b, a)),
        BinaryOp::Gt => V::B(value::lt(b, a)),
        BinaryOp::Ge => V::B(value::ge(a, b)),
        BinaryOp::Eq => V::B(a.equal(b)),
        BinaryOp::Ne => V::B(a.equal(b).not()),
        BinaryOp::And => V::B(a.as_bool() & b.as_bool()),
        BinaryOp::Or => V::B(a.as_bool() | b.as_bool()),
    })
}
