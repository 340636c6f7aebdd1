//! Interprets a loop-IR kernel with C semantics over any [`Domain`], at
//! concrete sizes: loops are unrolled, affine guards and bounds are
//! evaluated on concrete iterators, data-dependent `if`s and `?:` either
//! take a known branch or run both and merge the results with selects.
//!
//! C's undefined behaviour becomes preconditions ([`Domain::assume`]) on the
//! path that reaches it: integer division or remainder by zero, signed
//! overflow, float-to-integer conversion out of range, and (because floats
//! are modelled as exact reals) float division by zero. Unsigned arithmetic
//! and conversions to narrower integers wrap.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tenslift_frontend::ir::{
    Affine, ArrayInfo, BinaryOp, Expr, ExprKind, IfKind, Kernel, LValue, LocalKind, MathFn,
    ScalarType, Stmt, Storage, UnaryOp, VarClass,
};

use crate::domain::{Cmp, Domain, ElemKind, IntTy, Opaque};
use crate::error::{Abort, VerifyError};

/// Names of the inputs standing for uninitialised locals start with this.
pub(crate) const UNINITIALISED_PREFIX: &str = "uninit:";

/// Statements executed before the unrolling is declared too large.
const MAX_STEPS: u64 = 2_000_000;

/// The final state of a run: arrays (parameters), every scalar parameter,
/// and the returned value.
pub(crate) struct KernelOutcome<V> {
    pub arrays: HashMap<String, Vec<V>>,
    pub scalars: HashMap<String, V>,
    pub returned: Option<V>,
}

/// Scalars and memory. A local that has not been written yet has no entry
/// (scalars) or `None` (array elements); reading it creates an input named
/// after it, so counterexamples list exactly the uninitialised reads.
#[derive(Clone)]
struct State<V> {
    scalars: HashMap<String, V>,
    arrays: HashMap<String, Vec<Option<V>>>,
}

struct Layout {
    strides: Vec<i64>,
}

struct Interp<'a, D: Domain> {
    dom: &'a mut D,
    sizes: &'a BTreeMap<String, i64>,
    layouts: HashMap<String, Layout>,
    /// Element kinds of locals, for the inputs standing for their
    /// uninitialised contents.
    local_kinds: HashMap<String, ElemKind>,
    iters: HashMap<String, i64>,
    state: State<D::V>,
    returned: Option<D::V>,
    steps: u64,
}

fn kernel_error(msg: String) -> Abort {
    Abort::Error(VerifyError::Kernel(msg))
}

/// Runs `kernel`. `scalars` holds the value of every scalar parameter (size
/// parameters included); `arrays` the initial memory of every array
/// parameter, each a flat vector long enough for the kernel's accesses.
pub(crate) fn run<D: Domain>(
    dom: &mut D,
    kernel: &Kernel,
    sizes: &BTreeMap<String, i64>,
    scalars: HashMap<String, D::V>,
    arrays: HashMap<String, Vec<D::V>>,
) -> Result<KernelOutcome<D::V>, Abort> {
    let mut interp = Interp {
        dom,
        sizes,
        layouts: HashMap::new(),
        iters: HashMap::new(),
        local_kinds: HashMap::new(),
        state: State {
            scalars,
            arrays: arrays
                .into_iter()
                .map(|(k, v)| (k, v.into_iter().map(Some).collect()))
                .collect(),
        },
        returned: None,
        steps: 0,
    };
    for p in &kernel.params {
        if let tenslift_frontend::ir::ParamKind::Array(info) = &p.kind {
            let layout = interp.layout(&p.name, info)?;
            interp.layouts.insert(p.name.clone(), layout);
            if !interp.state.arrays.contains_key(&p.name) {
                return Err(kernel_error(format!(
                    "no memory for the array `{}`",
                    p.name
                )));
            }
        }
    }
    for local in &kernel.locals {
        match &local.kind {
            LocalKind::Scalar { ty } => {
                interp
                    .local_kinds
                    .insert(local.name.clone(), ElemKind::of_c(*ty));
            }
            LocalKind::Array(info) => {
                let len = interp.local_length(&local.name, info)?;
                let layout = interp.layout(&local.name, info)?;
                interp.layouts.insert(local.name.clone(), layout);
                interp
                    .local_kinds
                    .insert(local.name.clone(), ElemKind::of_c(info.elem));
                interp
                    .state
                    .arrays
                    .insert(local.name.clone(), vec![None; len]);
            }
        }
    }
    interp.block(&kernel.body)?;
    let local_names: Vec<&str> = kernel.locals.iter().map(|l| l.name.as_str()).collect();
    let State {
        mut scalars,
        arrays,
    } = interp.state;
    scalars.retain(|k, _| !local_names.contains(&k.as_str()));
    let arrays = arrays
        .into_iter()
        .filter(|(k, _)| !local_names.contains(&k.as_str()))
        .map(|(k, v)| (k, v.into_iter().flatten().collect()))
        .collect();
    Ok(KernelOutcome {
        arrays,
        scalars,
        returned: interp.returned,
    })
}

impl<D: Domain> Interp<'_, D> {
    fn affine(&self, a: &Affine) -> Result<i64, Abort> {
        a.eval(&|v| self.iters.get(v).or_else(|| self.sizes.get(v)).copied())
            .ok_or_else(|| {
                let missing: Vec<&str> = a
                    .terms
                    .keys()
                    .filter(|v| !self.iters.contains_key(*v) && !self.sizes.contains_key(*v))
                    .map(String::as_str)
                    .collect();
                if missing.is_empty() {
                    kernel_error(format!("`{a}` overflows"))
                } else {
                    Abort::Error(VerifyError::MissingSize(missing.join(", ")))
                }
            })
    }

    /// Strides of an array's logical dimensions in its flat memory.
    fn layout(&self, name: &str, info: &ArrayInfo) -> Result<Layout, Abort> {
        let strides = match &info.storage {
            Storage::Flat { strides } => strides
                .iter()
                .map(|s| self.affine(s))
                .collect::<Result<Vec<_>, _>>()?,
            Storage::Declared | Storage::RowPointers => {
                let mut strides = vec![1i64; info.dims.len()];
                for d in (0..info.dims.len().saturating_sub(1)).rev() {
                    let extent = match &info.dims[d + 1] {
                        Some(e) => self.affine(e)?,
                        None => {
                            return Err(kernel_error(format!(
                                "dimension {} of `{name}` has no known extent",
                                d + 1
                            )))
                        }
                    };
                    strides[d] = strides[d + 1]
                        .checked_mul(extent)
                        .ok_or_else(|| kernel_error(format!("`{name}` is too large")))?;
                }
                strides
            }
        };
        Ok(Layout { strides })
    }

    fn local_length(&self, name: &str, info: &ArrayInfo) -> Result<usize, Abort> {
        let mut len: i64 = 1;
        for d in &info.dims {
            let extent = match d {
                Some(e) => self.affine(e)?,
                None => {
                    return Err(kernel_error(format!(
                        "the local array `{name}` has an unknown extent"
                    )))
                }
            };
            len = len
                .checked_mul(extent.max(0))
                .filter(|l| *l <= 1_000_000)
                .ok_or_else(|| {
                    Abort::Error(VerifyError::TooLarge(format!("the local array `{name}`")))
                })?;
        }
        Ok(len as usize)
    }

    fn offset(&self, array: &str, index: &[Affine]) -> Result<usize, Abort> {
        let layout = self
            .layouts
            .get(array)
            .ok_or_else(|| kernel_error(format!("`{array}` is not an array")))?;
        if layout.strides.len() != index.len() {
            return Err(kernel_error(format!(
                "`{array}` is accessed with {} subscripts but has {} dimensions",
                index.len(),
                layout.strides.len()
            )));
        }
        let mut flat: i64 = 0;
        let mut shown = Vec::new();
        for (i, s) in index.iter().zip(&layout.strides) {
            let v = self.affine(i)?;
            shown.push(v.to_string());
            flat = v
                .checked_mul(*s)
                .and_then(|t| flat.checked_add(t))
                .ok_or_else(|| kernel_error(format!("the offset into `{array}` overflows")))?;
        }
        let len = self.state.arrays.get(array).map_or(0, Vec::len);
        usize::try_from(flat)
            .ok()
            .filter(|f| *f < len)
            .ok_or_else(|| {
                kernel_error(format!(
                    "`{array}[{}]` is element {flat} of memory that holds {len} (the program's shape for `{array}` is too small, or the sizes do not fit the C)",
                    shown.join("]["),
                ))
            })
    }

    fn block(&mut self, body: &[Stmt]) -> Result<(), Abort> {
        body.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Abort> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(Abort::Error(VerifyError::TooLarge(format!(
                "more than {MAX_STEPS} statements executed"
            ))));
        }
        match s {
            Stmt::Loop(l) => {
                let start = self.affine(&l.start)?;
                let end = self.affine(&l.end)?;
                let mut i = start;
                while (l.step > 0 && i < end) || (l.step < 0 && i > end) {
                    self.iters.insert(l.iter.clone(), i);
                    self.block(&l.body)?;
                    i = i
                        .checked_add(l.step)
                        .ok_or_else(|| kernel_error(format!("`{}` overflows", l.iter)))?;
                }
                self.iters.remove(&l.iter);
                Ok(())
            }
            Stmt::Assign { target, value, .. } => {
                let v = self.expr(value)?;
                match target {
                    LValue::Scalar { name, .. } => {
                        self.state.scalars.insert(name.clone(), v);
                    }
                    LValue::Element { array, index, .. } => {
                        let at = self.offset(array, index)?;
                        if let Some(mem) = self.state.arrays.get_mut(array) {
                            mem[at] = Some(v);
                        }
                    }
                }
                Ok(())
            }
            Stmt::If {
                cond,
                kind,
                then_body,
                else_body,
                ..
            } => {
                let c = self.expr(cond)?;
                match self.dom.decide(&c) {
                    Some(true) => self.block(then_body),
                    Some(false) => self.block(else_body),
                    None if *kind == IfKind::Guard => Err(kernel_error(
                        "a guard condition could not be evaluated at these sizes".to_string(),
                    )),
                    None => self.both_branches(&c, then_body, else_body),
                }
            }
            Stmt::Return { value, .. } => {
                let v = self.expr(value)?;
                self.returned = Some(v);
                Ok(())
            }
        }
    }

    /// Runs both branches of a data-dependent `if` and merges the states
    /// with selects on the condition.
    fn both_branches(
        &mut self,
        c: &D::V,
        then_body: &[Stmt],
        else_body: &[Stmt],
    ) -> Result<(), Abort> {
        let before = self.state.clone();
        self.dom.push_path(c, true);
        let taken = self.block(then_body);
        self.dom.pop_path();
        taken?;
        let then_state = std::mem::replace(&mut self.state, before);
        self.dom.push_path(c, false);
        let other = self.block(else_body);
        self.dom.pop_path();
        other?;
        let names: BTreeSet<String> = then_state
            .scalars
            .keys()
            .chain(self.state.scalars.keys())
            .cloned()
            .collect();
        for name in names {
            let t = match then_state.scalars.get(&name) {
                Some(t) => t.clone(),
                None => self.uninitialised_scalar(&name)?,
            };
            let e = match self.state.scalars.get(&name) {
                Some(e) => e.clone(),
                None => self.uninitialised_scalar(&name)?,
            };
            if !self.dom.same(&t, &e) {
                let merged = self.dom.select(c, &t, &e);
                self.state.scalars.insert(name, merged);
            }
        }
        for (name, taken) in then_state.arrays {
            for (at, t) in taken.into_iter().enumerate() {
                let e = self.state.arrays[&name][at].clone();
                let (t, e) = match (t, e) {
                    (None, None) => continue,
                    (Some(t), Some(e)) => (t, e),
                    (Some(t), None) => (t, self.uninitialised_element(&name, at)?),
                    (None, Some(e)) => (self.uninitialised_element(&name, at)?, e),
                };
                if !self.dom.same(&t, &e) {
                    let merged = self.dom.select(c, &t, &e);
                    if let Some(mem) = self.state.arrays.get_mut(&name) {
                        mem[at] = Some(merged);
                    }
                }
            }
        }
        Ok(())
    }

    /// The input standing for a local scalar read before any write.
    fn uninitialised_scalar(&mut self, name: &str) -> Result<D::V, Abort> {
        let kind = *self
            .local_kinds
            .get(name)
            .ok_or_else(|| kernel_error(format!("`{name}` has no value")))?;
        let v = self
            .dom
            .input(&format!("{UNINITIALISED_PREFIX}{name}"), kind)?;
        self.state.scalars.insert(name.to_string(), v.clone());
        Ok(v)
    }

    /// The input standing for an element of a local array read before any
    /// write.
    fn uninitialised_element(&mut self, array: &str, at: usize) -> Result<D::V, Abort> {
        let kind = *self
            .local_kinds
            .get(array)
            .ok_or_else(|| kernel_error(format!("`{array}[{at}]` has no value")))?;
        let v = self
            .dom
            .input(&format!("{UNINITIALISED_PREFIX}{array}[{at}]"), kind)?;
        if let Some(mem) = self.state.arrays.get_mut(array) {
            mem[at] = Some(v.clone());
        }
        Ok(v)
    }

    fn zero(&mut self, ty: ScalarType) -> Result<D::V, Abort> {
        if ty.is_float() {
            self.dom.real(0.0)
        } else {
            Ok(self.dom.int(0))
        }
    }

    /// Rounds a float result to its C type.
    fn rounded(&mut self, v: D::V, ty: ScalarType) -> D::V {
        if ty == ScalarType::F32 {
            self.dom.round_single(&v)
        } else {
            v
        }
    }

    /// An integer arithmetic result of C type `ty`: unsigned types wrap,
    /// signed overflow is undefined and therefore assumed not to happen.
    fn int_result(&mut self, v: D::V, ty: ScalarType, what: &str) -> Result<D::V, Abort> {
        let Some(it) = IntTy::of_c(ty) else {
            return Ok(v);
        };
        if ty == ScalarType::Bool {
            return Ok(self.dom.truth(&v));
        }
        if !it.signed {
            return Ok(self.dom.wrap(&v, it));
        }
        let ok = self.dom.fits(&v, it);
        self.dom
            .assume(&ok, &format!("signed overflow in {what}"))?;
        Ok(self.dom.known_within(&v, it))
    }

    fn expr(&mut self, e: &Expr) -> Result<D::V, Abort> {
        let ty = e.ty;
        match &e.kind {
            ExprKind::IntLit { value } => {
                if ty.is_float() {
                    self.dom.real(*value as f64)
                } else {
                    Ok(self.dom.int(i128::from(*value)))
                }
            }
            ExprKind::FloatLit { value, .. } => {
                if ty.is_float() {
                    self.dom.literal(*value, ty.bits() == 32)
                } else {
                    Ok(self.dom.int(value.trunc() as i128))
                }
            }
            ExprKind::Var { name, class } => {
                if *class == VarClass::Iter {
                    let v = self.iters.get(name).copied().ok_or_else(|| {
                        kernel_error(format!("the iterator `{name}` is used outside its loop"))
                    })?;
                    return Ok(self.dom.int(i128::from(v)));
                }
                match self.state.scalars.get(name) {
                    Some(v) => Ok(v.clone()),
                    None => self.uninitialised_scalar(name),
                }
            }
            ExprKind::Load { array, index } => {
                let at = self.offset(array, index)?;
                match &self.state.arrays[array][at] {
                    Some(v) => Ok(v.clone()),
                    None => self.uninitialised_element(array, at),
                }
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg)?;
                match op {
                    UnaryOp::Neg if ty.is_float() => {
                        let n = self.dom.neg(&a);
                        Ok(self.rounded(n, ty))
                    }
                    UnaryOp::Neg => {
                        let n = self.dom.neg(&a);
                        self.int_result(n, ty, "a negation")
                    }
                    UnaryOp::Not => {
                        let z = self.zero(arg.ty)?;
                        Ok(self.dom.cmp(Cmp::Eq, &a, &z))
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, ty),
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let c = self.expr(cond)?;
                match self.dom.decide(&c) {
                    Some(true) => self.expr(then_value),
                    Some(false) => self.expr(else_value),
                    None => {
                        self.dom.push_path(&c, true);
                        let t = self.expr(then_value);
                        self.dom.pop_path();
                        self.dom.push_path(&c, false);
                        let f = self.expr(else_value);
                        self.dom.pop_path();
                        Ok(self.dom.select(&c, &t?, &f?))
                    }
                }
            }
            ExprKind::Cast { arg } => {
                let a = self.expr(arg)?;
                self.convert(a, arg.ty, ty)
            }
            ExprKind::Call { func, args } => {
                let values = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                self.call(*func, &values, ty)
            }
        }
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        ty: ScalarType,
    ) -> Result<D::V, Abort> {
        if matches!(op, BinaryOp::And | BinaryOp::Or) {
            // C evaluates the right operand only when the left one does not
            // decide the result.
            let a = self.expr(lhs)?;
            let a = self.dom.truth(&a);
            let is_and = op == BinaryOp::And;
            return match self.dom.decide(&a) {
                Some(v) if v != is_and => Ok(self.dom.int(i128::from(v))),
                Some(_) => {
                    let b = self.expr(rhs)?;
                    Ok(self.dom.truth(&b))
                }
                None => {
                    self.dom.push_path(&a, is_and);
                    let b = self.expr(rhs);
                    self.dom.pop_path();
                    let b = self.dom.truth(&b?);
                    let short = self.dom.int(i128::from(!is_and));
                    Ok(if is_and {
                        self.dom.select(&a, &b, &short)
                    } else {
                        self.dom.select(&a, &short, &b)
                    })
                }
            };
        }
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        if op.is_comparison() {
            let cmp = match op {
                BinaryOp::Lt => Cmp::Lt,
                BinaryOp::Le => Cmp::Le,
                BinaryOp::Gt => Cmp::Gt,
                BinaryOp::Ge => Cmp::Ge,
                BinaryOp::Eq => Cmp::Eq,
                _ => Cmp::Ne,
            };
            return Ok(self.dom.cmp(cmp, &a, &b));
        }
        if ty.is_float() {
            let v = match op {
                BinaryOp::Add => self.dom.add(&a, &b),
                BinaryOp::Sub => self.dom.sub(&a, &b),
                BinaryOp::Mul => self.dom.mul(&a, &b),
                BinaryOp::Div => {
                    let z = self.dom.real(0.0)?;
                    let nz = self.dom.cmp(Cmp::Ne, &b, &z);
                    self.dom.assume(&nz, "float division by zero")?;
                    self.dom.div_real(&a, &b)
                }
                other => {
                    return Err(Abort::Unsupported(format!(
                        "`{}` on floats",
                        other.symbol()
                    )))
                }
            };
            return Ok(self.rounded(v, ty));
        }
        let v = match op {
            BinaryOp::Add => self.dom.add(&a, &b),
            BinaryOp::Sub => self.dom.sub(&a, &b),
            BinaryOp::Mul => self.dom.mul(&a, &b),
            BinaryOp::Div | BinaryOp::Rem => {
                let z = self.dom.int(0);
                let nz = self.dom.cmp(Cmp::Ne, &b, &z);
                self.dom.assume(&nz, "integer division by zero")?;
                if op == BinaryOp::Div {
                    self.dom.trunc_div(&a, &b)
                } else {
                    self.dom.trunc_rem(&a, &b)
                }
            }
            other => {
                return Err(Abort::Unsupported(format!(
                    "`{}` as arithmetic",
                    other.symbol()
                )))
            }
        };
        self.int_result(v, ty, &format!("`{}`", op.symbol()))
    }

    /// C's conversion from `from` to `to`.
    fn convert(&mut self, v: D::V, from: ScalarType, to: ScalarType) -> Result<D::V, Abort> {
        if to == ScalarType::Bool {
            return Ok(self.dom.truth(&v));
        }
        if to.is_float() {
            let r = if from.is_float() {
                v
            } else {
                self.dom.to_real(&v)
            };
            return Ok(if to == ScalarType::F32 && from != ScalarType::F32 {
                self.dom.round_single(&r)
            } else {
                r
            });
        }
        let Some(it) = IntTy::of_c(to) else {
            return Ok(v);
        };
        if from.is_float() {
            let t = self.dom.trunc_to_int(&v);
            let ok = self.dom.fits(&t, it);
            self.dom
                .assume(&ok, &format!("conversion of {from} to {to} out of range"))?;
            return Ok(self.dom.known_within(&t, it));
        }
        Ok(self.dom.wrap(&v, it))
    }

    fn call(&mut self, f: MathFn, args: &[D::V], ty: ScalarType) -> Result<D::V, Abort> {
        let arity_error = || Abort::Unsupported(format!("{f:?} with {} arguments", args.len()));
        let opaque = match f {
            MathFn::Sqrt => Some(Opaque::Sqrt),
            MathFn::Exp => Some(Opaque::Exp),
            MathFn::Log => Some(Opaque::Log),
            MathFn::Tanh => Some(Opaque::Tanh),
            MathFn::Pow => Some(Opaque::Pow),
            MathFn::Round => Some(Opaque::Round),
            MathFn::Floor => Some(Opaque::Floor),
            MathFn::Ceil => Some(Opaque::Ceil),
            MathFn::Sin => Some(Opaque::Sin),
            MathFn::Cos => Some(Opaque::Cos),
            MathFn::Cosh => Some(Opaque::Cosh),
            MathFn::Sinh => Some(Opaque::Sinh),
            _ => None,
        };
        if let Some(o) = opaque {
            if args.len() != f.arity() {
                return Err(arity_error());
            }
            let v = self.dom.apply(o, args)?;
            return Ok(self.rounded(v, ty));
        }
        match (f, args) {
            (MathFn::Abs, [x]) => {
                let z = self.zero(ty)?;
                let negative = self.dom.cmp(Cmp::Lt, x, &z);
                let n = self.dom.neg(x);
                let r = self.dom.select(&negative, &n, x);
                if ty.is_float() {
                    Ok(r)
                } else {
                    self.int_result(r, ty, "abs")
                }
            }
            (MathFn::Max, [a, b]) => {
                let c = self.dom.cmp(Cmp::Ge, a, b);
                Ok(self.dom.select(&c, a, b))
            }
            (MathFn::Min, [a, b]) => {
                let c = self.dom.cmp(Cmp::Le, a, b);
                Ok(self.dom.select(&c, a, b))
            }
            _ => Err(arity_error()),
        }
    }
}
