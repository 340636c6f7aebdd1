//! After the body is lowered: delinearise pointer accesses (replacing the
//! placeholder indices), infer outer extents of pointers from loop bounds,
//! assign roles and mark size parameters.

use std::collections::{HashMap, HashSet};

use super::{Lowerer, FLAT_MARKER};
use crate::delinearize::{delinearize, DelinearizeError};
use crate::diagnostics as codes;
use crate::ir::*;
use crate::roles::compute_roles;

/// Calls `f` on every index vector of every access in `stmts`.
fn for_each_index(stmts: &mut [Stmt], f: &mut dyn FnMut(&str, &mut Vec<Affine>)) {
    fn in_expr(e: &mut Expr, f: &mut dyn FnMut(&str, &mut Vec<Affine>)) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match &mut e.kind {
                ExprKind::Load { array, index } => f(array, index),
                ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => stack.push(arg),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Select {
                    cond,
                    then_value,
                    else_value,
                } => {
                    stack.push(cond);
                    stack.push(then_value);
                    stack.push(else_value);
                }
                ExprKind::Call { args, .. } => stack.extend(args.iter_mut()),
                _ => {}
            }
        }
    }
    for s in stmts {
        match s {
            Stmt::Assign { target, value, .. } => {
                in_expr(value, f);
                if let LValue::Element { array, index, .. } = target {
                    f(array, index);
                }
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                in_expr(cond, f);
                for_each_index(then_body, f);
                for_each_index(else_body, f);
            }
            Stmt::Loop(l) => for_each_index(&mut l.body, f),
            Stmt::Return { value, .. } => in_expr(value, f),
        }
    }
}

/// Every variable of every affine expression reachable in `stmts`
/// (bounds, indices, guard conditions).
fn size_vars(stmts: &[Stmt], out: &mut HashSet<String>) {
    fn expr_vars(e: &Expr, out: &mut HashSet<String>, guard: bool) {
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match &e.kind {
                ExprKind::Load { index, .. } => {
                    for a in index {
                        out.extend(a.terms.keys().cloned());
                    }
                }
                ExprKind::Var { name, .. } if guard => {
                    out.insert(name.clone());
                }
                ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => stack.push(arg),
                ExprKind::Binary { lhs, rhs, .. } => {
                    stack.push(lhs);
                    stack.push(rhs);
                }
                ExprKind::Select {
                    cond,
                    then_value,
                    else_value,
                } => {
                    stack.push(cond);
                    stack.push(then_value);
                    stack.push(else_value);
                }
                ExprKind::Call { args, .. } => stack.extend(args.iter()),
                _ => {}
            }
        }
    }
    for s in stmts {
        match s {
            Stmt::Assign { target, value, .. } => {
                expr_vars(value, out, false);
                if let LValue::Element { index, .. } = target {
                    for a in index {
                        out.extend(a.terms.keys().cloned());
                    }
                }
            }
            Stmt::If {
                cond,
                kind,
                then_body,
                else_body,
                ..
            } => {
                expr_vars(cond, out, *kind == IfKind::Guard);
                size_vars(then_body, out);
                size_vars(else_body, out);
            }
            Stmt::Loop(l) => {
                out.extend(l.start.terms.keys().cloned());
                out.extend(l.end.terms.keys().cloned());
                size_vars(&l.body, out);
            }
            Stmt::Return { value, .. } => expr_vars(value, out, false),
        }
    }
}

fn array_vars(info: &ArrayInfo, out: &mut HashSet<String>) {
    for a in info.dims.iter().flatten() {
        out.extend(a.terms.keys().cloned());
    }
    if let Storage::Flat { strides } = &info.storage {
        for a in strides {
            out.extend(a.terms.keys().cloned());
        }
    }
}

impl Lowerer<'_> {
    pub(super) fn finish(&mut self, kernel: &mut Kernel) {
        self.delinearize_pointers(kernel);
        self.infer_declared_outer_extents(kernel);
        self.assign_roles(kernel);
        let mut sizes = HashSet::new();
        size_vars(&kernel.body, &mut sizes);
        for p in &kernel.params {
            if let ParamKind::Array(info) = &p.kind {
                array_vars(info, &mut sizes);
            }
        }
        for l in &kernel.locals {
            if let LocalKind::Array(info) = &l.kind {
                array_vars(info, &mut sizes);
            }
        }
        for p in &mut kernel.params {
            if let ParamKind::Scalar { ty, is_size } = &mut p.kind {
                *is_size = !ty.is_float() && sizes.contains(&p.name);
            }
        }
    }

    fn delinearize_pointers(&mut self, kernel: &mut Kernel) {
        let iterators: HashSet<String> = self.loop_bounds.keys().cloned().collect();
        let is_iter = |v: &str| iterators.contains(v);
        // Parameters bounding some loop read as strides, never as positions.
        let extents: HashSet<String> = self
            .loop_bounds
            .values()
            .flat_map(|(start, end, _)| start.terms.keys().chain(end.terms.keys()))
            .filter(|v| !iterators.contains(*v))
            .cloned()
            .collect();
        let is_extent = |v: &str| extents.contains(v);
        let mut by_array: HashMap<String, Vec<usize>> = HashMap::new();
        for (id, a) in self.flat_accesses.iter().enumerate() {
            by_array.entry(a.array.clone()).or_default().push(id);
        }
        // Access id -> its delinearised index.
        let mut resolved: HashMap<usize, Vec<Affine>> = HashMap::new();
        for param in &mut kernel.params {
            let Some(ids) = by_array.get(&param.name) else {
                continue;
            };
            let ParamKind::Array(info) = &mut param.kind else {
                continue;
            };
            let polys: Vec<_> = ids
                .iter()
                .map(|&id| self.flat_accesses[id].poly.clone())
                .collect();
            let split = delinearize(&polys, &is_iter, &is_extent, true);
            let split = match split {
                Ok(layout) if !self.constant_rows_hold(&layout) => {
                    delinearize(&polys, &is_iter, &is_extent, false)
                }
                other => other,
            };
            match split {
                Ok(layout) => {
                    let mut dims = layout.dims.clone();
                    dims[0] = self.outer_extent(layout.indices.iter().map(|ix| &ix[0]));
                    info.dims = dims;
                    info.storage = Storage::Flat {
                        strides: layout.strides.clone(),
                    };
                    for (&id, index) in ids.iter().zip(layout.indices) {
                        resolved.insert(id, index);
                    }
                }
                Err(err) => {
                    let loc = self.flat_accesses[ids[0]].loc.clone();
                    let (code, why) = match err {
                        DelinearizeError::NonLinear(m) => (
                            codes::NON_AFFINE_SUBSCRIPT,
                            format!("the term `{m}` multiplies loop iterators"),
                        ),
                        DelinearizeError::BadStride(m) => (codes::BAD_STRIDE, m),
                        DelinearizeError::Overflow => (
                            codes::NON_AFFINE_SUBSCRIPT,
                            "a coefficient overflows 64 bits".to_string(),
                        ),
                    };
                    self.error(
                        code,
                        &loc,
                        format!(
                            "cannot split the subscripts of `{}` into dimensions: {why}",
                            param.name
                        ),
                    );
                }
            }
        }
        for_each_index(&mut kernel.body, &mut |_, index| {
            let id = index.first().and_then(|a| {
                let (name, _) = a.terms.iter().next()?;
                name.strip_prefix(FLAT_MARKER)?.parse::<usize>().ok()
            });
            if let Some(id) = id {
                if let Some(real) = resolved.get(&id) {
                    *index = real.clone();
                }
            }
        });
    }

    /// The inclusive range an affine index takes, when every iterator in
    /// it runs between constant bounds and no parameter occurs.
    fn index_range(&self, a: &Affine) -> Option<(i64, i64)> {
        let (mut lo, mut hi) = (a.constant, a.constant);
        for (var, &c) in &a.terms {
            let (start, end, step) = self.loop_bounds.get(var)?;
            let (s, e) = (start.as_constant()?, end.as_constant()?);
            let (first, last) = if *step > 0 {
                (s, e.checked_sub(1)?)
            } else {
                (e.checked_add(1)?, s)
            };
            if first > last {
                continue; // the loop never runs
            }
            let (a1, a2) = (c.checked_mul(first)?, c.checked_mul(last)?);
            lo = lo.checked_add(a1.min(a2))?;
            hi = hi.checked_add(a1.max(a2))?;
        }
        Some((lo, hi))
    }

    /// Whether every index of every dimension with a constant extent
    /// (a split by constant strides) provably stays inside that extent, so
    /// distinct logical elements never share memory.
    fn constant_rows_hold(&self, layout: &crate::delinearize::Layout) -> bool {
        layout.dims.iter().enumerate().skip(1).all(|(d, dim)| {
            let Some(extent) = dim.as_ref().and_then(|a| a.as_constant()) else {
                return true; // a parameter leading dimension: assumed, as in BLAS
            };
            layout.indices.iter().all(|ix| {
                self.index_range(&ix[d])
                    .is_some_and(|(lo, hi)| lo >= 0 && hi < extent)
            })
        })
    }

    /// `double A[][M]` and `double (*A)[M]` leave the outer extent open;
    /// infer it from loop bounds like a pointer's.
    fn infer_declared_outer_extents(&self, kernel: &mut Kernel) {
        let mut outer: HashMap<String, Vec<Affine>> = HashMap::new();
        // Every level of a row-pointer array is sized by the loops over it.
        let mut by_level: HashMap<(String, usize), Vec<Affine>> = HashMap::new();
        for_each_index(&mut kernel.body, &mut |array, index| {
            for (d, a) in index.iter().enumerate() {
                by_level
                    .entry((array.to_string(), d))
                    .or_default()
                    .push(a.clone());
            }
            if let Some(first) = index.first() {
                outer
                    .entry(array.to_string())
                    .or_default()
                    .push(first.clone());
            }
        });
        for p in &mut kernel.params {
            if let ParamKind::Array(info) = &mut p.kind {
                if info.storage == Storage::Declared && info.dims.first() == Some(&None) {
                    if let Some(indices) = outer.get(&p.name) {
                        info.dims[0] = self.outer_extent(indices.iter());
                    }
                }
                if info.storage == Storage::RowPointers {
                    for (d, dim) in info.dims.iter_mut().enumerate() {
                        if let Some(indices) = by_level.get(&(p.name.clone(), d)) {
                            // Constant subscripts (`a[i][0]`) need that many.
                            let constants: Option<Vec<i64>> =
                                indices.iter().map(Affine::as_constant).collect();
                            *dim = match constants.and_then(|c| c.into_iter().max()) {
                                Some(last) if last >= 0 => Some(Affine::constant(last + 1)),
                                _ => self.outer_extent(indices.iter()),
                            };
                        }
                    }
                }
            }
        }
    }

    /// The extent of a pointer's outer dimension: the common bound of the
    /// loops whose iterator alone indexes it — the end of an upward loop
    /// starting at ≥ 0, or `start + 1` of a downward loop that stops at
    /// or above 0 (`for (i = n - 1; i >= 0; i--)` gives `n`).
    fn outer_extent<'a>(&self, outer: impl Iterator<Item = &'a Affine>) -> Option<Affine> {
        let mut extent: Option<Affine> = None;
        for a in outer {
            let (var, coeff) = a.terms.iter().next()?;
            if a.terms.len() != 1 || *coeff != 1 || a.constant != 0 {
                return None;
            }
            let (start, end, step) = self.loop_bounds.get(var)?;
            let free_of_iterators =
                |x: &Affine| x.terms.keys().all(|v| !self.loop_bounds.contains_key(v));
            let bound = if *step > 0 {
                let from_zero = start.as_constant().is_some_and(|s| s >= 0);
                (from_zero && free_of_iterators(end)).then(|| end.clone())
            } else {
                let to_zero = end.as_constant().is_some_and(|e| e >= -1);
                let mut past_start = start.clone();
                past_start.constant = past_start.constant.checked_add(1)?;
                (to_zero && free_of_iterators(start)).then_some(past_start)
            }?;
            match &extent {
                None => extent = Some(bound),
                Some(e) if *e == bound => {}
                Some(_) => return None,
            }
        }
        extent
    }

    fn assign_roles(&mut self, kernel: &mut Kernel) {
        let tracked: HashSet<String> = kernel
            .params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Array(_)) || p.origin == Origin::Global)
            .map(|p| p.name.clone())
            .collect();
        let roles = compute_roles(&kernel.body, &tracked);
        for p in &mut kernel.params {
            if let Some(role) = roles.get(&p.name) {
                p.role = *role;
            }
        }
    }
}
