//! Choosing the concrete sizes a spec is computed at, and checking them.
//!
//! Distinct size parameters get distinct small values (3, 4, 5, … in
//! declaration order) so that no two dimensions can be confused in the spec.
//! A candidate tuple is accepted only when a dry run of the loops (no
//! symbolic work) finds every access inside its array's extents, no negative
//! extent, and no two touched elements of a strided (`Storage::Flat`) view
//! sharing a flat offset. A general strided view (`key_cache[t*kv_dim +
//! head*head_size + i]`: strides `kv_dim, head_size, 1`) passes when its
//! strides act as a mixed radix over the touched box, or else when an exact
//! enumeration of the box finds no shared offset. When the first candidate
//! fails, permutations and larger values are tried in a fixed order, so the
//! choice is deterministic; a candidate whose only fault is an overlapping
//! view has the size behind the stride grown until the view is one-to-one
//! (`kv_dim ≥ (head+1)·head_size`; strictly greater for a block-selected
//! array, see [`super::blocks`], so that no program can read the pitch as
//! the blocks' span). Size parameters used as indices (`head`, `pos`) get
//! values like any other.
//!
//! [`smaller_candidates`] lists tuples with values from 2 (or 1) up, for
//! specs too large to build at the usual sizes (see
//! [`super::spec_at_chosen_sizes`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use tenslift_frontend::ir::*;

use super::blocks::{block_view_of, BlockView};
use super::reach;
use super::{at, format_sizes, SpecError};

/// Values of the size parameters.
pub type Sizes = BTreeMap<String, i64>;

/// The extents every array has at a checked size tuple (physical for a
/// block-selected array, see [`super::blocks`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub extents: HashMap<String, Vec<usize>>,
    /// Block-selected arrays with their block length at these sizes.
    pub blocks: HashMap<String, (BlockView, i64)>,
    /// Loops whose body never runs at these sizes (`for k in 2..n-2` at
    /// n = 3): a spec traced there says nothing about that body.
    pub idle_loops: usize,
    /// Per array and axis, one past the largest index read or written at
    /// these sizes (0 where none is).
    pub touched: HashMap<String, Vec<i64>>,
}

impl Layout {
    /// The index the spec names an element by: the logical index, or for a
    /// block-selected array its physical one.
    pub fn spec_index(&self, array: &str, logical: &[i64]) -> Vec<i64> {
        match self.blocks.get(array) {
            Some((view, block)) => view.physical(logical, *block),
            None => logical.to_vec(),
        }
    }
}

fn affine_names(a: &Affine, out: &mut BTreeSet<String>) {
    out.extend(a.terms.keys().cloned());
}

/// Size parameters of a kernel in declaration order: integer scalars marked
/// `is_size`, plus integer scalar parameters that occur in an extent or stride.
pub fn size_params(kernel: &Kernel) -> Vec<String> {
    let mut in_shapes = BTreeSet::new();
    let arrays = kernel
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Array(info) => Some(info),
            _ => None,
        })
        .chain(kernel.locals.iter().filter_map(|l| match &l.kind {
            LocalKind::Array(info) => Some(info),
            _ => None,
        }));
    for info in arrays {
        for d in info.dims.iter().flatten() {
            affine_names(d, &mut in_shapes);
        }
        if let Storage::Flat { strides } = &info.storage {
            for s in strides {
                affine_names(s, &mut in_shapes);
            }
        }
    }
    kernel
        .params
        .iter()
        .filter(|p| match &p.kind {
            ParamKind::Scalar { ty, is_size } => {
                *is_size || (!ty.is_float() && in_shapes.contains(&p.name))
            }
            ParamKind::Array(_) => false,
        })
        .map(|p| p.name.clone())
        .collect()
}

struct ArrayScan<'k> {
    info: &'k ArrayInfo,
    loc: &'k Loc,
    declared: Vec<Option<i64>>,
    max_touched: Vec<i64>,
}

/// A dry run of the loop nest that only checks accesses.
struct Scan<'k> {
    sizes: &'k Sizes,
    iters: HashMap<String, i64>,
    arrays: HashMap<&'k str, ArrayScan<'k>>,
    steps: u64,
    /// Loops whose body ran at least once, by address in the kernel.
    entered: HashSet<*const Loop>,
}

pub(crate) const STEP_LIMIT: u64 = 2_000_000;

/// Most elements one array may have in a spec (each is an expression).
pub(crate) const ELEMENT_LIMIT: i64 = 4_000_000;

/// Evaluates an affine expression over iterators and sizes.
pub(crate) fn eval_affine(
    a: &Affine,
    iters: &HashMap<String, i64>,
    sizes: &Sizes,
    loc: &Loc,
) -> Result<i64, SpecError> {
    let lookup = |name: &str| iters.get(name).or_else(|| sizes.get(name)).copied();
    a.eval(&lookup).ok_or_else(|| SpecError::Unbound {
        at: at(loc),
        name: a
            .terms
            .keys()
            .find(|n| lookup(n).is_none())
            .cloned()
            .unwrap_or_else(|| format!("an overflowing subscript `{a}`")),
    })
}

/// The integer value of an iteration-space condition, when it depends on
/// nothing but iterators, sizes and literals. `iters` may also hold
/// integer locals whose value the caller knows (the size scan's `int j =
/// i + k;` before `if (j >= 0 && j < n)`); any other local is unknown.
pub(crate) fn concrete_int(e: &Expr, iters: &HashMap<String, i64>, sizes: &Sizes) -> Option<i64> {
    Some(match &e.kind {
        ExprKind::IntLit { value } => *value,
        ExprKind::Var { name, class } => match class {
            VarClass::Iter | VarClass::Local => *iters.get(name)?,
            VarClass::Param => *sizes.get(name)?,
        },
        ExprKind::Unary { op, arg } => {
            let v = concrete_int(arg, iters, sizes)?;
            match op {
                UnaryOp::Neg => v.checked_neg()?,
                UnaryOp::Not => (v == 0) as i64,
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (
                concrete_int(lhs, iters, sizes)?,
                concrete_int(rhs, iters, sizes)?,
            );
            match op {
                BinaryOp::Add => a.checked_add(b)?,
                BinaryOp::Sub => a.checked_sub(b)?,
                BinaryOp::Mul => a.checked_mul(b)?,
                BinaryOp::Div => a.checked_div(b)?,
                BinaryOp::Rem => a.checked_rem(b)?,
                BinaryOp::Lt => (a < b) as i64,
                BinaryOp::Le => (a <= b) as i64,
                BinaryOp::Gt => (a > b) as i64,
                BinaryOp::Ge => (a >= b) as i64,
                BinaryOp::Eq => (a == b) as i64,
                BinaryOp::Ne => (a != b) as i64,
                BinaryOp::And => (a != 0 && b != 0) as i64,
                BinaryOp::Or => (a != 0 || b != 0) as i64,
            }
        }
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            if concrete_int(cond, iters, sizes)? != 0 {
                concrete_int(then_value, iters, sizes)?
            } else {
                concrete_int(else_value, iters, sizes)?
            }
        }
        ExprKind::Cast { arg } if !e.ty.is_float() && !arg.ty.is_float() => {
            concrete_int(arg, iters, sizes)?
        }
        _ => return None,
    })
}

/// Iterates a loop's iterator values (start, start+step, … strictly before end).
pub(crate) fn loop_values(
    l: &Loop,
    start: i64,
    end: i64,
) -> Result<impl Iterator<Item = i64>, SpecError> {
    if l.step == 0 {
        return Err(SpecError::ZeroStep { at: at(&l.loc) });
    }
    // i128 keeps extreme bounds from overflowing; the step limit stops
    // execution long before such a loop could finish.
    let (step, start_w, end_w) = (l.step as i128, start as i128, end as i128);
    let span = if step > 0 {
        end_w - start_w
    } else {
        start_w - end_w
    };
    let count = if span > 0 {
        ((span + step.abs() - 1) / step.abs()).min(i64::MAX as i128) as i64
    } else {
        0
    };
    let step = l.step;
    Ok((0..count).map_while(move |k| k.checked_mul(step).and_then(|d| start.checked_add(d))))
}

impl<'k> Scan<'k> {
    fn access(&mut self, array: &str, index: &[Affine], loc: &Loc) -> Result<(), SpecError> {
        let idx = index
            .iter()
            .map(|a| eval_affine(a, &self.iters, self.sizes, loc))
            .collect::<Result<Vec<i64>, _>>()?;
        let sizes = self.sizes;
        let scan = self
            .arrays
            .get_mut(array)
            .ok_or_else(|| SpecError::Unknown {
                at: at(loc),
                name: array.into(),
            })?;
        let out_of_bounds = idx.len() != scan.declared.len()
            || idx
                .iter()
                .zip(&scan.declared)
                .any(|(&i, d)| i < 0 || d.is_some_and(|n| i >= n));
        if out_of_bounds {
            return Err(SpecError::OutOfBounds {
                at: at(loc),
                array: array.into(),
                index: idx,
                extents: scan.declared.iter().map(|d| d.unwrap_or(-1)).collect(),
                sizes: format_sizes(sizes),
            });
        }
        for (m, i) in scan.max_touched.iter_mut().zip(&idx) {
            *m = (*m).max(*i);
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr, loc: &Loc) -> Result<(), SpecError> {
        match &e.kind {
            ExprKind::Load { array, index } => self.access(array, index, loc),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => self.expr(arg, loc),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs, loc)?;
                self.expr(rhs, loc)
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                self.expr(cond, loc)?;
                // C evaluates one branch: a test of the index decides which
                // (`i == 0 ? x[0] : x[i] - x[i - 1]` never reads `x[-1]`).
                match concrete_int(cond, &self.iters, self.sizes) {
                    Some(0) => self.expr(else_value, loc),
                    Some(_) => self.expr(then_value, loc),
                    None => {
                        self.expr(then_value, loc)?;
                        self.expr(else_value, loc)
                    }
                }
            }
            ExprKind::Call { args, .. } => args.iter().try_for_each(|a| self.expr(a, loc)),
            _ => Ok(()),
        }
    }

    fn block(&mut self, body: &[Stmt]) -> Result<(), SpecError> {
        body.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), SpecError> {
        self.steps += 1;
        if self.steps > STEP_LIMIT {
            return Err(SpecError::TooLarge {
                limit: STEP_LIMIT,
                sizes: format_sizes(self.sizes),
            });
        }
        match s {
            Stmt::Loop(l) => {
                let start = eval_affine(&l.start, &self.iters, self.sizes, &l.loc)?;
                let end = eval_affine(&l.end, &self.iters, self.sizes, &l.loc)?;
                let mut values = loop_values(l, start, end)?.peekable();
                if values.peek().is_some() {
                    self.entered.insert(l as *const Loop);
                }
                for v in values {
                    self.iters.insert(l.iter.clone(), v);
                    self.block(&l.body)?;
                }
                self.iters.remove(&l.iter);
                Ok(())
            }
            Stmt::Assign { target, value, loc } => {
                match target {
                    LValue::Element { array, index, .. } => self.access(array, index, loc)?,
                    // An integer local the guards below may test.
                    LValue::Scalar { name, .. } => {
                        match concrete_int(value, &self.iters, self.sizes) {
                            Some(v) => self.iters.insert(name.clone(), v),
                            None => self.iters.remove(name),
                        };
                    }
                }
                self.expr(value, loc)
            }
            Stmt::If {
                cond,
                kind,
                then_body,
                else_body,
                loc,
            } => {
                self.expr(cond, loc)?;
                let known = match kind {
                    IfKind::Guard => concrete_int(cond, &self.iters, self.sizes),
                    IfKind::Data => None,
                };
                match known {
                    Some(0) => self.block(else_body),
                    Some(_) => self.block(then_body),
                    None => {
                        self.block(then_body)?;
                        self.block(else_body)?;
                        // Either branch may have run: what they set is unknown.
                        let mut set = HashSet::new();
                        assigned_scalars(then_body, &mut set);
                        assigned_scalars(else_body, &mut set);
                        self.iters.retain(|name, _| !set.contains(name.as_str()));
                        Ok(())
                    }
                }
            }
            Stmt::Return { value, loc } => self.expr(value, loc),
        }
    }
}

/// The scalars `body` assigns, at any depth.
fn assigned_scalars<'b>(body: &'b [Stmt], out: &mut HashSet<&'b str>) {
    for s in body {
        match s {
            Stmt::Loop(l) => assigned_scalars(&l.body, out),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                assigned_scalars(then_body, out);
                assigned_scalars(else_body, out);
            }
            Stmt::Assign {
                target: LValue::Scalar { name, .. },
                ..
            } => {
                out.insert(name);
            }
            Stmt::Assign { .. } | Stmt::Return { .. } => {}
        }
    }
}

/// Every loop statement of `body`, at any depth (inside `if`s too).
fn count_loops(body: &[Stmt]) -> usize {
    body.iter()
        .map(|s| match s {
            Stmt::Loop(l) => 1 + count_loops(&l.body),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => count_loops(then_body) + count_loops(else_body),
            Stmt::Assign { .. } | Stmt::Return { .. } => 0,
        })
        .sum()
}

fn all_arrays(kernel: &Kernel) -> impl Iterator<Item = (&str, &ArrayInfo, &Loc)> {
    let params = kernel.params.iter().filter_map(|p| match &p.kind {
        ParamKind::Array(info) => Some((p.name.as_str(), info, &p.loc)),
        _ => None,
    });
    let locals = kernel.locals.iter().filter_map(|l| match &l.kind {
        LocalKind::Array(info) => Some((l.name.as_str(), info, &l.loc)),
        _ => None,
    });
    params.chain(locals)
}

/// Checks that every access is in bounds at `sizes` and returns the extents.
pub fn check_sizes(kernel: &Kernel, sizes: &Sizes) -> Result<Layout, SpecError> {
    check_sizes_as(kernel, sizes, Nesting::Injective)
}

/// What a strided view must satisfy at a size tuple: its strides nest (each
/// at least the span of the dimensions inside it, the leading-dimension
/// convention the layout's logical extents assume), or only map its touched
/// box one-to-one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Nesting {
    Nested,
    Injective,
}

fn check_sizes_as(kernel: &Kernel, sizes: &Sizes, nesting: Nesting) -> Result<Layout, SpecError> {
    let no_iters = HashMap::new();
    let mut scan = Scan {
        sizes,
        iters: HashMap::new(),
        arrays: HashMap::new(),
        steps: 0,
        entered: HashSet::new(),
    };
    for (name, info, loc) in all_arrays(kernel) {
        let declared = info
            .dims
            .iter()
            .enumerate()
            .map(|(dim, d)| {
                d.as_ref()
                    .map(|a| {
                        let n = eval_affine(a, &no_iters, sizes, loc)?;
                        if n < 0 {
                            return Err(SpecError::BadExtent {
                                at: at(loc),
                                array: name.into(),
                                dim,
                                extent: n,
                            });
                        }
                        Ok(n)
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let declared_elements = declared
            .iter()
            .flatten()
            .try_fold(1i64, |acc, &n| acc.checked_mul(n))
            .unwrap_or(i64::MAX);
        if declared_elements > ELEMENT_LIMIT {
            return Err(SpecError::TooManyElements {
                at: at(loc),
                array: name.into(),
                elements: declared_elements,
                limit: ELEMENT_LIMIT,
            });
        }
        let rank = declared.len();
        scan.arrays.insert(
            name,
            ArrayScan {
                info,
                loc,
                declared,
                max_touched: vec![-1; rank],
            },
        );
    }
    scan.block(&kernel.body)?;
    let mut extents = HashMap::new();
    let mut blocks = HashMap::new();
    for (name, a) in &scan.arrays {
        let mut ext: Vec<i64> = a
            .declared
            .iter()
            .zip(&a.max_touched)
            .map(|(d, m)| d.unwrap_or(m + 1))
            .collect();
        let is_param = kernel.params.iter().any(|p| p.name == *name);
        if let Some(view) = block_view_of(kernel, name, a.info).filter(|_| is_param) {
            let block = eval_affine(&view.block, &no_iters, sizes, a.loc)?;
            let span = (a.max_touched[view.axis].max(0) + 1).saturating_mul(block);
            let merged = match &view.pitch {
                Some(pitch) => {
                    let pitch_value = eval_affine(pitch, &no_iters, sizes, a.loc)?;
                    if pitch_value < span {
                        return Err(SpecError::OverlappingStrides {
                            at: at(a.loc),
                            array: name.to_string(),
                            dim: view.axis - 1,
                            stride: pitch_value,
                            needed: span,
                        });
                    }
                    pitch_value
                }
                None => span,
            };
            ext.truncate(view.axis);
            ext.push(merged);
            blocks.insert(name.to_string(), (view, block));
        }
        if let Storage::Flat { strides } = &a.info.storage {
            let strides = strides
                .iter()
                .map(|s| eval_affine(s, &no_iters, sizes, a.loc))
                .collect::<Result<Vec<i64>, _>>()?;
            if let Some((dim, needed)) = first_overlap(&strides, &a.max_touched) {
                // Nested spans are sufficient, not necessary: a general
                // strided view may still map its touched box one-to-one.
                if nesting == Nesting::Nested || !box_is_injective(&strides, &a.max_touched) {
                    return Err(SpecError::OverlappingStrides {
                        at: at(a.loc),
                        array: name.to_string(),
                        dim,
                        stride: strides[dim],
                        needed,
                    });
                }
            }
        }
        let elements = ext
            .iter()
            .try_fold(1i64, |acc, &n| acc.checked_mul(n.max(0)))
            .unwrap_or(i64::MAX);
        if elements > ELEMENT_LIMIT {
            return Err(SpecError::TooManyElements {
                at: at(a.loc),
                array: name.to_string(),
                elements,
                limit: ELEMENT_LIMIT,
            });
        }
        extents.insert(
            name.to_string(),
            ext.iter().map(|&n| n.max(0) as usize).collect(),
        );
    }
    let idle_loops = count_loops(&kernel.body) - scan.entered.len();
    let touched = scan
        .arrays
        .iter()
        .map(|(name, a)| {
            (
                name.to_string(),
                a.max_touched.iter().map(|m| m + 1).collect(),
            )
        })
        .collect();
    Ok(Layout {
        extents,
        blocks,
        idle_loops,
        touched,
    })
}

/// The first dimension whose stride is below the span of the inner
/// dimensions' touched elements, with that span. When there is none, the
/// flat offsets `Σ index[d]·stride[d]` of the touched box are distinct (the
/// strides act as a mixed radix), so distinct elements never share memory.
fn first_overlap(strides: &[i64], max_touched: &[i64]) -> Option<(usize, i64)> {
    let touched = |d: usize| max_touched.get(d).copied().unwrap_or(0).max(0);
    (0..strides.len().saturating_sub(1)).find_map(|dim| {
        if max_touched.get(dim).is_none_or(|m| *m < 1) {
            return None;
        }
        let span: i64 = 1
            + (dim + 1..strides.len())
                .map(|e| strides[e].saturating_mul(touched(e)))
                .fold(0i64, i64::saturating_add);
        (strides[dim] < span).then_some((dim, span))
    })
}

/// Whether every index of the box `0..=max_touched` (a superset of the
/// touched indices) has its own flat offset: the exact check, by
/// enumeration, for views the mixed-radix rule cannot decide. A box over
/// the element limit counts as overlapping (the caller reports it).
fn box_is_injective(strides: &[i64], max_touched: &[i64]) -> bool {
    let extents: Vec<i64> = max_touched.iter().map(|m| m.max(&0) + 1).collect();
    let count = extents
        .iter()
        .try_fold(1i64, |acc, &n| acc.checked_mul(n))
        .unwrap_or(i64::MAX);
    if count > ELEMENT_LIMIT {
        return false;
    }
    let mut seen = HashSet::with_capacity(count as usize);
    let mut index = vec![0i64; extents.len()];
    for _ in 0..count {
        let offset: i64 = index.iter().zip(strides).map(|(i, s)| i * s).sum();
        if !seen.insert(offset) {
            return false;
        }
        // Odometer increment, innermost dimension fastest.
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < extents[d] {
                break;
            }
            index[d] = 0;
        }
    }
    true
}

/// Grows the size parameter behind an overlapping stride until the view is
/// one-to-one (`kv_dim ≥ (head+1)·head_size` for `key_cache[t*kv_dim +
/// head*head_size + i]`), keeping every value distinct and `fixed` ones
/// untouched. Returns the repaired tuple when it passes [`check_sizes`].
fn repair_overlap(
    kernel: &Kernel,
    candidate: &Sizes,
    fixed: &Sizes,
    nesting: Nesting,
) -> Option<Sizes> {
    let mut sizes = candidate.clone();
    for _ in 0..8 {
        let (array, dim, needed) = match check_sizes_as(kernel, &sizes, nesting) {
            Ok(_) => return Some(sizes),
            Err(SpecError::OverlappingStrides {
                array, dim, needed, ..
            }) => (array, dim, needed),
            Err(_) => return None,
        };
        let (_, info, _) = all_arrays(kernel).find(|(n, _, _)| *n == array)?;
        let Storage::Flat { strides } = &info.storage else {
            return None;
        };
        // A row pitch exactly as wide as the blocks it holds would make the
        // spec unable to tell `kv_dim` from `(head + 1)*head_size`: grow it
        // one further.
        let pitch_of_blocks = block_view_of(kernel, &array, info)
            .is_some_and(|view| view.pitch.is_some() && view.axis == dim + 1);
        let needed = needed + i64::from(pitch_of_blocks);
        let stride = strides.get(dim)?;
        let mut terms = stride.terms.iter();
        let (param, &coeff) = terms.next()?;
        if terms.next().is_some() || coeff <= 0 || fixed.contains_key(param) {
            return None;
        }
        // ceil((needed - constant) / coeff), refusing on overflow.
        let mut value = needed
            .checked_sub(stride.constant)?
            .checked_add(coeff - 1)?
            .div_euclid(coeff);
        while sizes.iter().any(|(k, v)| k != param && *v == value) {
            value += 1;
        }
        if sizes.get(param).is_some_and(|old| *old >= value) {
            return None;
        }
        sizes.insert(param.clone(), value);
    }
    None
}

const CANDIDATE_LIMIT: usize = 20_000;

/// Visits candidate tuples for `free` parameters (distinct values ≥ `base`, not
/// colliding with `fixed` values), smallest maxima first, lexicographic
/// within; stops when `visit` returns true or the limit is reached.
fn for_each_candidate(
    free: &[String],
    fixed: &Sizes,
    base: i64,
    visit: &mut dyn FnMut(&Sizes) -> bool,
) {
    if free.is_empty() {
        visit(fixed);
        return;
    }
    let taken: BTreeSet<i64> = fixed.values().copied().collect();
    let mut budget = CANDIDATE_LIMIT;
    for pool_size in free.len()..free.len() + 8 {
        let pool: Vec<i64> = (base..)
            .filter(|v| !taken.contains(v))
            .take(pool_size)
            .collect();
        let top = pool_size;
        let first_top = free.len();
        let Some(&max) = pool.last() else { continue };
        let mut current = fixed.clone();
        let mut used = vec![false; pool.len()];
        if generate(
            free,
            0,
            &pool,
            max,
            top == first_top,
            &mut used,
            &mut current,
            &mut budget,
            visit,
        ) {
            return;
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn generate(
    free: &[String],
    pos: usize,
    pool: &[i64],
    max: i64,
    first_level: bool,
    used: &mut Vec<bool>,
    current: &mut Sizes,
    budget: &mut usize,
    visit: &mut dyn FnMut(&Sizes) -> bool,
) -> bool {
    if pos == free.len() {
        // Each level only yields tuples that use its largest value.
        let uses_max = free.iter().any(|n| current.get(n) == Some(&max));
        if !first_level && !uses_max {
            return false;
        }
        if *budget == 0 {
            return true;
        }
        *budget -= 1;
        return visit(current);
    }
    for i in 0..pool.len() {
        if used[i] {
            continue;
        }
        used[i] = true;
        current.insert(free[pos].clone(), pool[i]);
        let stop = generate(
            free,
            pos + 1,
            pool,
            max,
            first_level,
            used,
            current,
            budget,
            visit,
        );
        used[i] = false;
        if stop {
            return true;
        }
    }
    false
}

fn validate_fixed(kernel: &Kernel, params: &[String], fixed: &Sizes) -> Result<(), SpecError> {
    for name in fixed.keys() {
        if !params.contains(name) {
            return Err(SpecError::NotASize {
                name: name.clone(),
                kernel: kernel.name.clone(),
                known: if params.is_empty() {
                    "none".into()
                } else {
                    params.join(", ")
                },
            });
        }
    }
    Ok(())
}

/// Whether the sample sizes `sizes` (with the case's pins) take every
/// test on the path of `kernel`'s case; `true` for a kernel that is no
/// case. A test that cannot be evaluated there is not taken.
pub fn case_holds(kernel: &Kernel, sizes: &Sizes) -> bool {
    let Some(case) = &kernel.case else {
        return true;
    };
    let mut env = sizes.clone();
    for (flag, value) in &case.pins {
        env.entry(flag.clone()).or_insert(*value);
    }
    case.path.iter().all(|(cond, taken)| {
        concrete_int(cond, &HashMap::new(), &env).is_some_and(|v| (v != 0) == *taken)
    })
}

/// What a size tuple must give besides valid accesses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Demand {
    /// Every loop body runs at least once, so the spec sees every
    /// statement (a body that never runs would let a program that ignores
    /// it pass the acceptance check).
    EveryLoopRuns,
    /// Any valid tuple: the fallback for loops no small tuple enters.
    Valid,
}

/// Valid tuples with an idle loop skipped before an [`Demand::EveryLoopRuns`]
/// search gives up (the caller then falls back to [`Demand::Valid`]).
const IDLE_SKIP_LIMIT: usize = 64;

/// Valid size tuples in candidate order, at most `want` of them (user-`fixed`
/// values kept, each passing `accept` and `demand`); an error when there is
/// none. Tuples where every strided view nests come first: a view that is
/// only one-to-one (`A[i*a + j*b]` at `a = 3, b = 4`, its rows interleaved)
/// gives a spec over elements that the layout's logical dimensions place
/// differently from memory.
fn search_many(
    kernel: &Kernel,
    fixed: &Sizes,
    base: i64,
    accept: &dyn Fn(&Sizes) -> bool,
    demand: Demand,
    want: usize,
) -> Result<Vec<Sizes>, SpecError> {
    let run = |nesting| search_nesting(kernel, fixed, base, accept, demand, want, nesting);
    // Without a strided view the two passes are one: run it once.
    let strided =
        all_arrays(kernel).any(|(_, info, _)| matches!(info.storage, Storage::Flat { .. }));
    if !strided {
        return run(Nesting::Injective);
    }
    run(Nesting::Nested).or_else(|_| run(Nesting::Injective))
}

fn search_nesting(
    kernel: &Kernel,
    fixed: &Sizes,
    base: i64,
    accept: &dyn Fn(&Sizes) -> bool,
    demand: Demand,
    want: usize,
    nesting: Nesting,
) -> Result<Vec<Sizes>, SpecError> {
    let params = size_params(kernel);
    validate_fixed(kernel, &params, fixed)?;
    let free: Vec<String> = params
        .iter()
        .filter(|p| !fixed.contains_key(*p))
        .cloned()
        .collect();
    let mut found: Vec<Sizes> = Vec::new();
    let mut first_failure: Option<SpecError> = None;
    let mut idle_skipped = 0;
    for_each_candidate(&free, fixed, base, &mut |candidate| {
        if !accept(candidate) || !case_holds(kernel, candidate) {
            return false;
        }
        let valid = match check_sizes_as(kernel, candidate, nesting) {
            Ok(layout) => Some((candidate.clone(), layout.idle_loops)),
            Err(e @ SpecError::OverlappingStrides { .. }) => {
                let repaired = repair_overlap(kernel, candidate, fixed, nesting)
                    .filter(|r| accept(r) && case_holds(kernel, r))
                    .and_then(|r| {
                        let idle = check_sizes_as(kernel, &r, nesting).ok()?.idle_loops;
                        Some((r, idle))
                    });
                if repaired.is_none() {
                    first_failure.get_or_insert(e);
                }
                repaired
            }
            Err(e) => {
                first_failure.get_or_insert(e);
                None
            }
        };
        let valid = match valid {
            Some((_, idle)) if idle > 0 && demand == Demand::EveryLoopRuns => {
                idle_skipped += 1;
                return idle_skipped >= IDLE_SKIP_LIMIT;
            }
            other => other.map(|(sizes, _)| sizes),
        };
        if let Some(sizes) = valid.filter(|s| !found.contains(s)) {
            found.push(sizes);
        }
        found.len() >= want
    });
    match (found.is_empty(), first_failure) {
        (false, _) => Ok(found),
        // With every size fixed by the user, report the real reason.
        (true, Some(e)) if free.is_empty() => Err(e),
        (true, e) => Err(SpecError::NoValidSizes {
            kernel: kernel.name.clone(),
            first_failure: e.map_or_else(|| "no candidate".into(), |e| e.to_string()),
        }),
    }
}

/// The first tuple that meets `demand`; failing that, with an idle loop
/// allowed (a kernel whose loop no small tuple enters still gets a spec).
fn search(
    kernel: &Kernel,
    fixed: &Sizes,
    base: i64,
    accept: &dyn Fn(&Sizes) -> bool,
) -> Result<Sizes, SpecError> {
    if let Some(sizes) = reaching_guards(kernel, fixed, base, accept) {
        return Ok(sizes);
    }
    let mut found = search_many(kernel, fixed, base, accept, Demand::EveryLoopRuns, 1)
        .or_else(|_| search_many(kernel, fixed, base, accept, Demand::Valid, 1))?;
    Ok(found.remove(0))
}

/// Candidates [`reaching_guards`] compares.
const GUARD_REACH_CANDIDATES: usize = 64;

/// For a kernel accessing arrays under a guard, the first of the leading
/// tuples at which the most of their axes are touched up to their
/// guard-free reach: `fir_causal` at n = 3 < taps = 4 reads 3 of the taps,
/// a spec there has no `h[3]` and the search finds a program for 3 taps; at
/// n = 4, taps = 3 it reads them all. An axis its guard always cuts (`x[j]`
/// for `0 <= j < n`) counts nowhere. `None` when no array is accessed under
/// a guard, or no tuple reaches any.
fn reaching_guards(
    kernel: &Kernel,
    fixed: &Sizes,
    base: i64,
    accept: &dyn Fn(&Sizes) -> bool,
) -> Option<Sizes> {
    let guarded = reach::guarded_axes(kernel);
    if guarded.is_empty() {
        return None;
    }
    let demand = Demand::EveryLoopRuns;
    let pool = search_many(kernel, fixed, base, accept, demand, GUARD_REACH_CANDIDATES).ok()?;
    let mut best: Option<(usize, Sizes)> = None;
    for sizes in pool {
        let Ok(layout) = check_sizes(kernel, &sizes) else {
            continue;
        };
        let reached = reach::reached(&guarded, &sizes, &layout);
        if reached > best.as_ref().map_or(0, |(n, _)| *n) {
            best = Some((reached, sizes));
        }
    }
    best.map(|(_, sizes)| sizes)
}

/// Most smaller tuples [`smaller_candidates`] returns.
pub(crate) const FALLBACK_CANDIDATES: usize = 12;

/// Valid tuples whose free values start at `base` (smaller than the usual
/// 3 when `base` is 2 or 1), in candidate order: the fallback when the spec
/// at the chosen sizes is too large to build.
pub fn smaller_candidates(
    kernel: &Kernel,
    fixed: &Sizes,
    base: i64,
    accept: &dyn Fn(&Sizes) -> bool,
) -> Result<Vec<Sizes>, SpecError> {
    search_many(
        kernel,
        fixed,
        base,
        accept,
        Demand::Valid,
        FALLBACK_CANDIDATES,
    )
}

/// The first valid size tuple (user-`fixed` values kept).
pub fn choose_sizes(kernel: &Kernel, fixed: &Sizes) -> Result<Sizes, SpecError> {
    search(kernel, fixed, 3, &|_| true)
}

/// A valid size tuple in which every parameter differs from `first` (for
/// re-checking that a lifted program generalises), and, where one exists,
/// every difference of two parameters too: with `m = n + 1` at both tuples
/// a program reading `n` where the C reads `m - 1` would pass.
pub fn choose_second_sizes(kernel: &Kernel, first: &Sizes) -> Result<Sizes, SpecError> {
    search(kernel, &Sizes::new(), 4, &|c| breaks_relations(first, c))
        .or_else(|_| search(kernel, &Sizes::new(), 4, &|c| differs_everywhere(first, c)))
}

/// A third tuple for the acceptance check, off every line through `first`
/// and `second`: two tuples fit any linear relation `a = c·b + d` of two
/// sizes (a program reading `2(n - 1)` where the C reads `m` passes at
/// n=3, m=4 and n=4, m=6), a third point off that line refutes it. `None`
/// when no valid tuple is off every line.
pub fn choose_third_sizes(kernel: &Kernel, first: &Sizes, second: &Sizes) -> Option<Sizes> {
    let off_lines = |c: &Sizes| {
        differs_everywhere(first, c)
            && differs_everywhere(second, c)
            && off_every_line(first, second, c)
    };
    search(kernel, &Sizes::new(), 3, &off_lines).ok()
}

/// For every two sizes `a`, `b`: the point `(r[a], r[b])` is not on the line
/// through `(p[a], p[b])` and `(q[a], q[b])`.
fn off_every_line(p: &Sizes, q: &Sizes, r: &Sizes) -> bool {
    let value = |t: &Sizes, k: &str| t.get(k).copied();
    p.keys().all(|a| {
        p.keys().filter(|b| a < *b).all(|b| {
            let (Some(pa), Some(pb), Some(qa), Some(qb), Some(ra), Some(rb)) = (
                value(p, a),
                value(p, b),
                value(q, a),
                value(q, b),
                value(r, a),
                value(r, b),
            ) else {
                return true;
            };
            (ra - pa) * (qb - pb) != (rb - pb) * (qa - pa)
        })
    })
}

/// Every parameter of `first` has another value in `candidate`.
pub(crate) fn differs_everywhere(first: &Sizes, candidate: &Sizes) -> bool {
    first.iter().all(|(k, v)| candidate.get(k) != Some(v))
}

/// [`differs_everywhere`], and no difference `a - b` of two parameters is
/// the same in both tuples, so that no relation `a = b + c` that holds at
/// `first` holds at `candidate`.
pub(crate) fn breaks_relations(first: &Sizes, candidate: &Sizes) -> bool {
    let pairs = first.iter().flat_map(|a| first.iter().map(move |b| (a, b)));
    differs_everywhere(first, candidate)
        && pairs
            .filter(|((a, _), (b, _))| a < b)
            .all(
                |((a, va), (b, vb))| match (candidate.get(a), candidate.get(b)) {
                    (Some(ca), Some(cb)) => ca - cb != va - vb,
                    _ => true,
                },
            )
}
