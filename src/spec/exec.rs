//! Symbolic execution of the loop IR at concrete sizes.
//!
//! Loops run with concrete iterator values; every stored value is a normal
//! form over the input symbols. A data-dependent `if` runs both branches
//! against a write journal, undoes them, and stores `select(cond, then,
//! else)` into every location either branch wrote. C conversions keep their
//! semantics on values: float → int truncates, narrowing integer
//! conversions wrap (see [`convert`]). Floating literals are the exact
//! decimal they spell (`0.1f` is 1/10), in line with "equal over the reals".

use std::collections::{HashMap, HashSet};

use tenslift_frontend::ir::{
    self, BinaryOp, ExprKind, Kernel, LValue, Loc, LocalKind, MathFn, ParamKind, Role, ScalarType,
    Stmt, UnaryOp, VarClass,
};

use super::sizes::{check_sizes, eval_affine, loop_values, size_params, Layout, STEP_LIMIT};
use super::{at, format_sizes, InputInfo, Output, Sizes, Spec, SpecError};
use crate::algebra::{AlgebraError, AtomKind, Func, Rat, Symbol, Tensor, Value};
use crate::spec::tensir::float_literal_value;
use tenslift_targets::DType;

/// Most term pairs one symbolic product may expand (a spec whose entries
/// grow past this is not useful for synthesis, and would exhaust memory).
pub(crate) const PRODUCT_TERM_LIMIT: usize = 1_000_000;

/// Most terms times denominator terms one sum of fractions may bring over
/// a common denominator. A recurrence dividing by its own carried value
/// (`acc = x[i] / acc + acc`) doubles its numerator's degree each
/// iteration: the sixth such sum would take minutes, the seventh hours.
/// Refused here, at once and located, rather than at the user's timeout;
/// the corpus's sums of fractions stay below a thousand.
pub(crate) const COMMON_DENOMINATOR_LIMIT: usize = 100_000;

/// Fails when adding `a` and `b` (exact rational functions) would bring
/// over a common denominator more than [`COMMON_DENOMINATOR_LIMIT`] terms.
fn common_denominator_guard(a: &Value, b: &Value, loc: &Loc) -> Result<(), SpecError> {
    let denominator = |v: &Value| {
        v.top_atoms()
            .filter_map(|t| match t.kind() {
                AtomKind::Recip(q) => Some(q.len()),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    };
    let den = denominator(a).max(denominator(b));
    let terms = a.len().saturating_add(b.len());
    if terms.saturating_mul(den) > COMMON_DENOMINATOR_LIMIT {
        return Err(SpecError::DenominatorTooLarge {
            at: at(loc),
            terms,
            denominator: den,
            limit: COMMON_DENOMINATOR_LIMIT,
        });
    }
    Ok(())
}

/// A storage location a statement can write.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
enum Slot {
    Scalar(String),
    Element(String, usize),
    Return,
}

struct ArrayState {
    shape: Vec<usize>,
    data: Vec<Option<Value>>,
}

struct Machine<'k> {
    kernel: &'k Kernel,
    sizes: &'k Sizes,
    iters: HashMap<String, i64>,
    scalars: HashMap<String, Option<Value>>,
    arrays: HashMap<String, ArrayState>,
    /// Block-selected arrays are named by physical indices.
    layout: Layout,
    returned: Option<Value>,
    /// One frame per enclosing data-dependent branch: (slot, value before).
    journal: Vec<Vec<(Slot, Option<Value>)>>,
    steps: u64,
}

/// The value of C's conversion of `value` from type `from` to type `to`.
/// Conversions to floating types are the identity (f32 rounding is not
/// modelled: results are equal over the reals).
pub fn convert(value: &Value, from: ScalarType, to: ScalarType) -> Value {
    if from == to || to.is_float() {
        return value.clone();
    }
    if to == ScalarType::Bool {
        return value.truth();
    }
    if from.is_float() {
        // Out-of-range float-to-int conversion is undefined in C.
        return value.trunc();
    }
    if to.holds_every_value_of(from) {
        value.clone()
    } else {
        value.wrap(to.bits() as u8, to.is_signed())
    }
}

fn math_arity(f: MathFn) -> usize {
    f.arity()
}

impl<'k> Machine<'k> {
    fn new(kernel: &'k Kernel, sizes: &'k Sizes, layout: &Layout) -> Machine<'k> {
        let mut scalars = HashMap::new();
        let mut arrays = HashMap::new();
        for p in &kernel.params {
            match &p.kind {
                ParamKind::Scalar { .. } => {
                    let v = match sizes.get(&p.name) {
                        Some(n) => Value::int(*n),
                        None => Symbol::scalar(&p.name).to_expr(),
                    };
                    scalars.insert(p.name.clone(), Some(v));
                }
                ParamKind::Array(_) => {
                    let shape = layout.extents.get(&p.name).cloned().unwrap_or_default();
                    let t = Tensor::of_symbols(&p.name, &shape, false);
                    arrays.insert(
                        p.name.clone(),
                        ArrayState {
                            shape,
                            data: t.elems().iter().cloned().map(Some).collect(),
                        },
                    );
                }
            }
        }
        for l in &kernel.locals {
            match &l.kind {
                LocalKind::Scalar { .. } => {
                    scalars.insert(l.name.clone(), None);
                }
                LocalKind::Array(_) => {
                    let shape = layout.extents.get(&l.name).cloned().unwrap_or_default();
                    let len = shape.iter().product();
                    arrays.insert(
                        l.name.clone(),
                        ArrayState {
                            shape,
                            data: vec![None; len],
                        },
                    );
                }
            }
        }
        Machine {
            kernel,
            sizes,
            iters: HashMap::new(),
            scalars,
            arrays,
            layout: layout.clone(),
            returned: None,
            journal: Vec::new(),
            steps: 0,
        }
    }

    fn offset(&self, array: &str, index: &[ir::Affine], loc: &Loc) -> Result<usize, SpecError> {
        let state = self.arrays.get(array).ok_or_else(|| SpecError::Unknown {
            at: at(loc),
            name: array.into(),
        })?;
        let idx = index
            .iter()
            .map(|a| eval_affine(a, &self.iters, self.sizes, loc))
            .collect::<Result<Vec<i64>, _>>()?;
        let idx = self.layout.spec_index(array, &idx);
        let mut offset = 0usize;
        let in_bounds = idx.len() == state.shape.len()
            && idx.iter().zip(&state.shape).all(|(&i, &n)| {
                let ok = i >= 0 && (i as usize) < n;
                offset = offset * n + i.max(0) as usize;
                ok
            });
        if !in_bounds {
            return Err(SpecError::OutOfBounds {
                at: at(loc),
                array: array.into(),
                index: idx,
                extents: state.shape.iter().map(|&n| n as i64).collect(),
                sizes: format_sizes(self.sizes),
            });
        }
        Ok(offset)
    }

    fn read(&self, slot: &Slot) -> Option<Value> {
        match slot {
            Slot::Scalar(name) => self.scalars.get(name).cloned().flatten(),
            Slot::Element(array, offset) => self
                .arrays
                .get(array)
                .and_then(|a| a.data.get(*offset).cloned().flatten()),
            Slot::Return => self.returned.clone(),
        }
    }

    fn write(&mut self, slot: Slot, value: Option<Value>) {
        let old = match &slot {
            Slot::Scalar(name) => self.scalars.insert(name.clone(), value).flatten(),
            Slot::Element(array, offset) => match self.arrays.get_mut(array) {
                Some(a) => a
                    .data
                    .get_mut(*offset)
                    .and_then(|cell| std::mem::replace(cell, value)),
                None => None,
            },
            Slot::Return => std::mem::replace(&mut self.returned, value),
        };
        if let Some(frame) = self.journal.last_mut() {
            frame.push((slot, old));
        }
    }

    fn algebra(&self, r: Result<Value, AlgebraError>, loc: &Loc) -> Result<Value, SpecError> {
        r.map_err(|_| SpecError::DivisionByZero { at: at(loc) })
    }

    fn value(&self, e: &ir::Expr, loc: &Loc) -> Result<Value, SpecError> {
        Ok(match &e.kind {
            ExprKind::IntLit { value } => Value::int(*value),
            ExprKind::FloatLit { value, text } => {
                // The shortest decimal that round-trips in the literal's
                // type, as program literals read (`float_literal_value`):
                // `3.14159265358979323846f` is the float `3.1415927`.
                let dtype = if e.ty.bits() == 32 {
                    DType::F32
                } else {
                    DType::F64
                };
                let exact = float_literal_value(*value, dtype).or_else(|| Rat::from_f64(*value));
                Value::constant(exact.ok_or_else(|| SpecError::Unknown {
                    at: at(loc),
                    name: text.clone(),
                })?)
            }
            ExprKind::Var { name, class } => match class {
                VarClass::Iter => {
                    Value::int(*self.iters.get(name).ok_or_else(|| SpecError::Unbound {
                        at: at(loc),
                        name: name.clone(),
                    })?)
                }
                VarClass::Param | VarClass::Local => match self.scalars.get(name) {
                    Some(Some(v)) => v.clone(),
                    Some(None) => {
                        return Err(SpecError::UninitializedRead {
                            at: at(loc),
                            name: name.clone(),
                        })
                    }
                    None => {
                        return Err(SpecError::Unknown {
                            at: at(loc),
                            name: name.clone(),
                        })
                    }
                },
            },
            ExprKind::Load { array, index } => {
                let offset = self.offset(array, index, loc)?;
                self.read(&Slot::Element(array.clone(), offset))
                    .ok_or_else(|| SpecError::UninitializedRead {
                        at: at(loc),
                        name: array.clone(),
                    })?
            }
            ExprKind::Unary { op, arg } => {
                let v = self.value(arg, loc)?;
                match op {
                    UnaryOp::Neg => v.neg(),
                    UnaryOp::Not => v.logical_not(),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.value(lhs, loc)?, self.value(rhs, loc)?);
                let float = lhs.ty.is_float() || rhs.ty.is_float();
                // Unsigned arithmetic wraps modulo 2^bits in C (signed
                // overflow is undefined, so exact integers model it).
                let modular = |v: Value| match e.ty {
                    ScalarType::U32 | ScalarType::U64 => v.wrap(e.ty.bits() as u8, false),
                    _ => v,
                };
                // Only float values carry reciprocals (integer division
                // truncates), so integer arithmetic skips the scan.
                if float && matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Div) {
                    common_denominator_guard(&a, &b, loc)?;
                }
                match op {
                    BinaryOp::Add => modular(a.add(&b)),
                    BinaryOp::Sub => modular(a.sub(&b)),
                    BinaryOp::Mul if a.len().saturating_mul(b.len()) > PRODUCT_TERM_LIMIT => {
                        return Err(SpecError::ExpressionTooLarge {
                            at: at(loc),
                            terms: a.len().saturating_mul(b.len()),
                            limit: PRODUCT_TERM_LIMIT,
                        })
                    }
                    BinaryOp::Mul => modular(a.mul(&b)),
                    BinaryOp::Div if float => self.algebra(a.div(&b), loc)?,
                    BinaryOp::Div | BinaryOp::Rem if b.is_zero() => {
                        return Err(SpecError::DivisionByZero { at: at(loc) })
                    }
                    BinaryOp::Div => Value::trunc_div(&a, &b),
                    BinaryOp::Rem => Value::rem(&a, &b),
                    BinaryOp::Lt => Value::lt(&a, &b),
                    BinaryOp::Le => Value::le(&a, &b),
                    BinaryOp::Gt => Value::gt(&a, &b),
                    BinaryOp::Ge => Value::ge(&a, &b),
                    BinaryOp::Eq => Value::equals(&a, &b),
                    BinaryOp::Ne => Value::not_equals(&a, &b),
                    BinaryOp::And => Value::logical_and(&a, &b),
                    BinaryOp::Or => Value::logical_or(&a, &b),
                }
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                let c = self.value(cond, loc)?;
                // Only the branch C evaluates is evaluated when `c` is known.
                match c.as_constant() {
                    Some(k) if k.is_zero() => self.value(else_value, loc)?,
                    Some(_) => self.value(then_value, loc)?,
                    None => Value::select(
                        &c,
                        &self.value(then_value, loc)?,
                        &self.value(else_value, loc)?,
                    ),
                }
            }
            ExprKind::Cast { arg } => convert(&self.value(arg, loc)?, arg.ty, e.ty),
            ExprKind::Call { func, args } => {
                if args.len() != math_arity(*func) {
                    return Err(SpecError::Arity {
                        at: at(loc),
                        func: format!("{func:?}").to_lowercase(),
                        expected: math_arity(*func),
                        given: args.len(),
                    });
                }
                let vs = args
                    .iter()
                    .map(|a| self.value(a, loc))
                    .collect::<Result<Vec<_>, _>>()?;
                match func {
                    MathFn::Sqrt => vs[0].sqrt(),
                    MathFn::Exp => vs[0].exp(),
                    MathFn::Log => vs[0].log(),
                    MathFn::Abs => vs[0].abs(),
                    MathFn::Tanh => vs[0].tanh(),
                    MathFn::Round => vs[0].integral(Func::Round),
                    MathFn::Floor => vs[0].integral(Func::Floor),
                    MathFn::Ceil => vs[0].integral(Func::Ceil),
                    MathFn::Sin => vs[0].sin(),
                    MathFn::Cos => vs[0].cos(),
                    MathFn::Cosh => vs[0].cosh(),
                    MathFn::Sinh => vs[0].sinh(),
                    MathFn::Pow => vs[0].pow_real(&vs[1]),
                    MathFn::Max => Value::max_of(&vs),
                    MathFn::Min => Value::min_of(&vs),
                }
            }
        })
    }

    fn tick(&mut self) -> Result<(), SpecError> {
        self.steps += 1;
        if self.steps > STEP_LIMIT {
            return Err(SpecError::TooLarge {
                limit: STEP_LIMIT,
                sizes: format_sizes(self.sizes),
            });
        }
        Ok(())
    }

    fn block(&mut self, body: &[Stmt]) -> Result<(), SpecError> {
        body.iter().try_for_each(|s| self.stmt(s))
    }

    /// Runs `body` against a fresh journal frame, then undoes its writes;
    /// returns the values it left in each slot it wrote, in write order.
    fn run_and_undo(&mut self, body: &[Stmt]) -> Result<Vec<(Slot, Option<Value>)>, SpecError> {
        self.journal.push(Vec::new());
        let outcome = self.block(body);
        let frame = self.journal.pop().unwrap_or_default();
        let mut seen: HashSet<&Slot> = HashSet::new();
        let mut after: Vec<(Slot, Option<Value>)> = Vec::new();
        for (slot, _) in &frame {
            if seen.insert(slot) {
                after.push((slot.clone(), self.read(slot)));
            }
        }
        // Undo newest first so each slot ends with its value before the branch.
        for (slot, old) in frame.into_iter().rev() {
            match &slot {
                Slot::Scalar(name) => {
                    self.scalars.insert(name.clone(), old);
                }
                Slot::Element(array, offset) => {
                    if let Some(cell) = self
                        .arrays
                        .get_mut(array)
                        .and_then(|a| a.data.get_mut(*offset))
                    {
                        *cell = old;
                    }
                }
                Slot::Return => self.returned = old,
            }
        }
        outcome?;
        Ok(after)
    }

    fn branch(
        &mut self,
        cond: &Value,
        then_body: &[Stmt],
        else_body: &[Stmt],
    ) -> Result<(), SpecError> {
        if let Some(c) = cond.as_constant() {
            return self.block(if c.is_zero() { else_body } else { then_body });
        }
        let then_writes = self.run_and_undo(then_body)?;
        let else_writes = self.run_and_undo(else_body)?;
        // Merge in a fixed order: the then-branch's writes, then the rest.
        let mut slots: Vec<Slot> = then_writes.iter().map(|(s, _)| s.clone()).collect();
        let then_map: HashMap<Slot, Option<Value>> = then_writes.into_iter().collect();
        for (s, _) in &else_writes {
            if !then_map.contains_key(s) {
                slots.push(s.clone());
            }
        }
        let else_map: HashMap<Slot, Option<Value>> = else_writes.into_iter().collect();
        let lookup =
            |writes: &HashMap<Slot, Option<Value>>, slot: &Slot, before: &Option<Value>| {
                writes.get(slot).cloned().unwrap_or_else(|| before.clone())
            };
        for slot in slots {
            let before = self.read(&slot);
            let t = lookup(&then_map, &slot, &before);
            let f = lookup(&else_map, &slot, &before);
            // A location left unwritten on one path stays unreadable.
            let merged = match (t, f) {
                (Some(t), Some(f)) => Some(Value::select(cond, &t, &f)),
                _ => None,
            };
            self.write(slot, merged);
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), SpecError> {
        self.tick()?;
        match s {
            Stmt::Loop(l) => {
                let start = eval_affine(&l.start, &self.iters, self.sizes, &l.loc)?;
                let end = eval_affine(&l.end, &self.iters, self.sizes, &l.loc)?;
                let saved = self.iters.get(&l.iter).copied();
                for v in loop_values(l, start, end)? {
                    self.iters.insert(l.iter.clone(), v);
                    self.block(&l.body)?;
                }
                match saved {
                    Some(v) => self.iters.insert(l.iter.clone(), v),
                    None => self.iters.remove(&l.iter),
                };
                Ok(())
            }
            Stmt::Assign { target, value, loc } => {
                let v = self.value(value, loc)?;
                let slot = match target {
                    LValue::Scalar { name, .. } => {
                        if !self.scalars.contains_key(name) {
                            return Err(SpecError::Unknown {
                                at: at(loc),
                                name: name.clone(),
                            });
                        }
                        Slot::Scalar(name.clone())
                    }
                    LValue::Element { array, index, .. } => {
                        Slot::Element(array.clone(), self.offset(array, index, loc)?)
                    }
                };
                self.write(slot, Some(v));
                Ok(())
            }
            // Guards and data branches run the same way: a guard's condition
            // is constant at concrete sizes (one branch runs); should it not
            // be, merging both sides with a select is still exact.
            Stmt::If {
                cond,
                then_body,
                else_body,
                loc,
                ..
            } => {
                let c = self.value(cond, loc)?;
                self.branch(&c, then_body, else_body)
            }
            Stmt::Return { value, loc } => {
                let v = self.value(value, loc)?;
                self.write(Slot::Return, Some(v));
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<Spec, SpecError> {
        let kernel = self.kernel;
        let mut outputs = Vec::new();
        for p in &kernel.params {
            match &p.kind {
                ParamKind::Array(info) if p.role != Role::Input => {
                    let Some(state) = self.arrays.get(&p.name) else {
                        continue;
                    };
                    let elems = state
                        .data
                        .iter()
                        .map(|v| {
                            v.clone().ok_or_else(|| SpecError::UninitializedRead {
                                at: at(&p.loc),
                                name: p.name.clone(),
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    let value = Tensor::new(state.shape.clone(), elems).map_err(|_| {
                        SpecError::Unknown {
                            at: at(&p.loc),
                            name: p.name.clone(),
                        }
                    })?;
                    outputs.push(Output {
                        name: p.name.clone(),
                        elem: info.elem,
                        value,
                    });
                }
                ParamKind::Scalar { ty, .. }
                    if p.role != Role::Input && p.origin == ir::Origin::Global =>
                {
                    if let Some(Some(v)) = self.scalars.get(&p.name) {
                        outputs.push(Output {
                            name: p.name.clone(),
                            elem: *ty,
                            value: Tensor::scalar(v.clone()),
                        });
                    }
                }
                _ => {}
            }
        }
        if let Some(ty) = kernel.returns {
            let v = self
                .returned
                .clone()
                .ok_or_else(|| SpecError::UninitializedRead {
                    at: format!("{}:{}", kernel.range.file, kernel.range.end_line),
                    name: "return".into(),
                })?;
            outputs.push(Output {
                name: "return".into(),
                elem: ty,
                value: Tensor::scalar(v),
            });
        }
        let mut used: Vec<String> = outputs
            .iter()
            .flat_map(|o| o.value.vars())
            .map(|s| s.name().to_string())
            .collect();
        used.sort();
        used.dedup();
        let inputs = kernel
            .params
            .iter()
            .filter(|p| used.binary_search(&p.name).is_ok())
            .map(|p| InputInfo {
                name: p.name.clone(),
                elem: match &p.kind {
                    ParamKind::Scalar { ty, .. } => *ty,
                    ParamKind::Array(info) => info.elem,
                },
                shape: self
                    .arrays
                    .get(&p.name)
                    .map(|a| a.shape.clone())
                    .unwrap_or_default(),
            })
            .collect();
        Ok(Spec {
            kernel: kernel.name.clone(),
            sizes: self.sizes.clone(),
            inputs,
            outputs,
        })
    }
}

/// Executes `kernel` at `sizes`; every size parameter must be bound.
pub fn execute(kernel: &Kernel, sizes: &Sizes) -> Result<Spec, SpecError> {
    for name in size_params(kernel) {
        if !sizes.contains_key(&name) {
            return Err(SpecError::MissingSize { name });
        }
    }
    let layout = check_sizes(kernel, sizes)?;
    let mut machine = Machine::new(kernel, sizes, &layout);
    machine.block(&kernel.body)?;
    machine.finish()
}
