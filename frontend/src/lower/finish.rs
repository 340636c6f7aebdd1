//! After the body is lowered: delinearise pointer accesses (replacing the
//! placeholder indices), infer outer extents of pointers from loop bounds,
//! make constant extents the loops do not run to extent sizes, assign roles
//! and mark size parameters.

use std::collections::{BTreeMap, HashMap, HashSet};

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

/// Smallest literal extent [`Lowerer::constant_trip_extents`] makes an
/// extent size: below it tracing at the literal is cheap (a 24x24
/// transpose lifts in 2 s, a 64x64 one ran past a minute), and a 16x16
/// tile or a 3x3 filter keeps its literal shape in the program.
const MIN_SYMBOLIC_EXTENT: i64 = 32;

/// The constant ends of loops whose iterator a data-dependent condition
/// inside them compares as a value.
fn loops_over_values(body: &[Stmt], out: &mut Vec<i64>) {
    for s in body {
        match s {
            Stmt::Loop(l) => {
                if let Some(end) = l.end.as_constant() {
                    if compares_as_value(&l.body, &l.iter) {
                        out.push(end);
                    }
                }
                loops_over_values(&l.body, out);
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                loops_over_values(then_body, out);
                loops_over_values(else_body, out);
            }
            Stmt::Assign { .. } | Stmt::Return { .. } => {}
        }
    }
}

fn compares_as_value(body: &[Stmt], iter: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::If {
            cond,
            kind,
            then_body,
            else_body,
            ..
        } => {
            let mut read = HashSet::new();
            expr_reads(cond, &mut read);
            (*kind == IfKind::Data && read.contains(iter))
                || compares_as_value(then_body, iter)
                || compares_as_value(else_body, iter)
        }
        Stmt::Loop(l) => compares_as_value(&l.body, iter),
        Stmt::Assign { .. } | Stmt::Return { .. } => false,
    })
}

/// Loop bounds that are a promoted constant (`64`), or one off it (`63`,
/// `65`, the stencil's `i < N - 1`), become its extent size (`ext_64 - 1`).
fn symbolic_loop_bounds(body: &mut [Stmt], promoted: &BTreeMap<i64, String>) {
    let rewrite = |a: &mut Affine| {
        let Some(c) = a.as_constant() else {
            return;
        };
        let hit = [0i64, -1, 1]
            .iter()
            .find_map(|d| promoted.get(&(c - d)).map(|name| (name, *d)));
        if let Some((name, d)) = hit {
            *a = Affine::var(name.clone());
            a.constant = d;
        }
    };
    for s in body {
        match s {
            Stmt::Loop(l) => {
                rewrite(&mut l.start);
                rewrite(&mut l.end);
                symbolic_loop_bounds(&mut l.body, promoted);
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                symbolic_loop_bounds(then_body, promoted);
                symbolic_loop_bounds(else_body, promoted);
            }
            Stmt::Assign { .. } | Stmt::Return { .. } => {}
        }
    }
}

/// Removes the local scalars nothing reads, with their assignments. A
/// local standing for a subscript (darknet's `x[index]` after
/// `int index = j*filters*spatial + i*spatial + k;`) is substituted into
/// it; its assignment, left behind, would write a value no one reads and
/// keep the loops around it.
fn drop_unread_locals(kernel: &mut Kernel) {
    let mut read = HashSet::new();
    stmts_reads(&kernel.body, &mut read);
    let unread: HashSet<String> = kernel
        .locals
        .iter()
        .filter(|l| matches!(l.kind, LocalKind::Scalar { .. }) && !read.contains(&l.name))
        .map(|l| l.name.clone())
        .collect();
    if unread.is_empty() {
        return;
    }
    kernel.locals.retain(|l| !unread.contains(&l.name));
    drop_assignments(&mut kernel.body, &unread);
}

fn drop_assignments(body: &mut Vec<Stmt>, names: &HashSet<String>) {
    body.retain(|s| !matches!(s, Stmt::Assign { target: LValue::Scalar { name, .. }, .. } if names.contains(name)));
    for s in body.iter_mut() {
        match s {
            Stmt::Loop(l) => drop_assignments(&mut l.body, names),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                drop_assignments(then_body, names);
                drop_assignments(else_body, names);
            }
            Stmt::Assign { .. } | Stmt::Return { .. } => {}
        }
    }
}

/// The names every expression of `body` reads as a value.
fn stmts_reads(body: &[Stmt], out: &mut HashSet<String>) {
    for s in body {
        match s {
            Stmt::Loop(l) => stmts_reads(&l.body, out),
            Stmt::Assign { value, .. } | Stmt::Return { value, .. } => expr_reads(value, out),
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                expr_reads(cond, out);
                stmts_reads(then_body, out);
                stmts_reads(else_body, out);
            }
        }
    }
}

fn expr_reads(e: &Expr, out: &mut HashSet<String>) {
    match &e.kind {
        ExprKind::Var { name, .. } => {
            out.insert(name.clone());
        }
        ExprKind::Load { array, .. } => {
            out.insert(array.clone());
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => expr_reads(arg, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            expr_reads(lhs, out);
            expr_reads(rhs, out);
        }
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            expr_reads(cond, out);
            expr_reads(then_value, out);
            expr_reads(else_value, out);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| expr_reads(a, out)),
        ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } => {}
    }
}

impl Lowerer<'_> {
    pub(super) fn finish(&mut self, kernel: &mut Kernel) {
        self.delinearize_pointers(kernel);
        self.infer_declared_outer_extents(kernel);
        self.promote_constant_extents(kernel);
        drop_unread_locals(kernel);
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
        // Owned: `self.error` below borrows the lowerer mutably.
        let bounds = self.loop_bounds.clone();
        let runs_to = |i: &str, p: &str| {
            bounds.get(i).is_some_and(|(start, end, step)| {
                *step == 1 && start.as_constant() == Some(0) && *end == Affine::var(p)
            })
        };
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
            let split = delinearize(&polys, &is_iter, &is_extent, &runs_to, true);
            let split = match split {
                Ok(layout) if !self.constant_rows_hold(&layout) => {
                    delinearize(&polys, &is_iter, &is_extent, &runs_to, false)
                }
                other => other,
            };
            match split {
                Ok(layout) => {
                    let mut dims = layout.dims.clone();
                    dims[0] = self.outer_extent(layout.indices.iter().map(|ix| &ix[0]));
                    info.dims = dims;
                    info.storage = if layout.dense {
                        // Row-major without padding: what a declared
                        // array of these extents is.
                        Storage::Declared
                    } else {
                        Storage::Flat {
                            strides: layout.strides.clone(),
                        }
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

    /// A constant extent of a declared array parameter that some access
    /// reaches through a parameter-bounded loop (`C[1000][1100]` written
    /// for `i < ni`) becomes an extent size ([`Origin::Extent`]): tracing
    /// the kernel at the declared 1000 is out of reach, and the lifted
    /// program must touch only the region the loops do. An axis whose every
    /// index runs between constants (`w[3][3]` read for `k < 3`) keeps its
    /// literal extent.
    fn promote_constant_extents(&mut self, kernel: &mut Kernel) {
        let mut indices: HashMap<(String, usize), Vec<Affine>> = HashMap::new();
        for_each_index(&mut kernel.body, &mut |array, index| {
            for (axis, a) in index.iter().enumerate() {
                indices
                    .entry((array.to_string(), axis))
                    .or_default()
                    .push(a.clone());
            }
        });
        let symbolic_constants = self.constant_trip_extents(kernel, &indices);
        // Declared value -> (extent size name, where first declared).
        let mut by_value: BTreeMap<i64, (String, Loc)> = BTreeMap::new();
        for p in &mut kernel.params {
            // A global array the kernel walks is passed like an argument.
            let argument = matches!(p.origin, Origin::Argument | Origin::Global);
            let ParamKind::Array(info) = &mut p.kind else {
                continue;
            };
            if info.storage != Storage::Declared {
                continue;
            }
            for (axis, dim) in info.dims.iter_mut().enumerate() {
                let Some(value) = dim.as_ref().and_then(Affine::as_constant) else {
                    continue;
                };
                let Some(seen) = indices.get(&(p.name.clone(), axis)) else {
                    continue;
                };
                let symbolic = seen.iter().any(|ix| self.reaches_parameter(ix, 0))
                    || (argument
                        && symbolic_constants.contains(&value)
                        && seen.iter().all(|ix| !ix.terms.is_empty()));
                if value <= 0 || !symbolic {
                    continue;
                }
                let (name, _) = by_value.entry(value).or_insert_with(|| {
                    let name = self.fresh_name(&format!("ext_{value}"));
                    (name, p.loc.clone())
                });
                *dim = Some(Affine::var(name.clone()));
            }
        }
        // The loops that run to a promoted constant run to its extent
        // size: traced at small sizes like the array they walk.
        let promoted: BTreeMap<i64, String> = by_value
            .iter()
            .filter(|(v, _)| symbolic_constants.contains(v))
            .map(|(v, (name, _))| (*v, name.clone()))
            .collect();
        symbolic_loop_bounds(&mut kernel.body, &promoted);
        for (value, (name, loc)) in by_value {
            kernel.params.push(Param {
                name,
                kind: ParamKind::Scalar {
                    ty: ScalarType::I32,
                    is_size: true,
                },
                role: Role::Input,
                origin: Origin::Extent { value },
                loc,
            });
        }
    }

    /// Constant extents (at least [`MIN_SYMBOLIC_EXTENT`]) of declared
    /// arrays that a loop from 0 to that same constant walks with a bare
    /// iterator (`double a[64][64]` written for `i < 64`): a kernel whose
    /// sizes are all literals (a plain `#define N 64`) would otherwise be
    /// traced at 64, where the search's work grows with the fourth power
    /// of the extent; as extent sizes they are traced small, and the
    /// program takes them with the declared value as its default.
    fn constant_trip_extents(
        &self,
        kernel: &Kernel,
        indices: &HashMap<(String, usize), Vec<Affine>>,
    ) -> Vec<i64> {
        let mut out = Vec::new();
        for p in &kernel.params {
            let ParamKind::Array(info) = &p.kind else {
                continue;
            };
            // A global's storage is fixed where it is defined, but the
            // lifted function is passed it like an argument: its extent is
            // traced small too, the literal the size's default.
            if info.storage != Storage::Declared
                || !matches!(p.origin, Origin::Argument | Origin::Global)
            {
                continue;
            }
            for (axis, dim) in info.dims.iter().enumerate() {
                let Some(value) = dim.as_ref().and_then(Affine::as_constant) else {
                    continue;
                };
                let walks = indices
                    .get(&(p.name.clone(), axis))
                    .is_some_and(|seen| seen.iter().any(|ix| self.runs_from_zero_to(ix, value)));
                if value >= MIN_SYMBOLIC_EXTENT && walks && !out.contains(&value) {
                    out.push(value);
                }
            }
        }
        // A loop over values, not positions (the bins of a histogram of
        // bytes, `for bin < 256: if (img[y][x] == bin) ...`), keeps its
        // literal: the data's range, not a size, sets it.
        let mut over_values = Vec::new();
        loops_over_values(&kernel.body, &mut over_values);
        out.retain(|v| !over_values.contains(v));
        out
    }

    /// Whether `ix` is a bare iterator of a loop `for (i = 0; i < value; i++)`.
    fn runs_from_zero_to(&self, ix: &Affine, value: i64) -> bool {
        let [(name, 1)] = ix.terms.iter().map(|(n, c)| (n, *c)).collect::<Vec<_>>()[..] else {
            return false;
        };
        ix.constant == 0
            && self
                .loop_bounds
                .get(name)
                .is_some_and(|(start, end, step)| {
                    *step == 1 && start.as_constant() == Some(0) && end.as_constant() == Some(value)
                })
    }

    /// Whether the values `a` takes depend on a parameter: it names one,
    /// or an iterator whose loop bounds do (through enclosing iterators:
    /// `j <= i` for `i < n` does; `j <= i` for `i < 16` does not).
    fn reaches_parameter(&self, a: &Affine, depth: u32) -> bool {
        if depth > 64 {
            return true;
        }
        a.terms.keys().any(|v| match self.loop_bounds.get(v) {
            Some((start, end, _)) => {
                self.reaches_parameter(start, depth + 1) || self.reaches_parameter(end, depth + 1)
            }
            None => true,
        })
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

#[cfg(test)]
mod tests {
    use crate::ir::{Origin, ParamKind};
    use crate::Options;

    fn params_of(source: &str) -> Vec<(String, String, Origin)> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("k.c");
        std::fs::write(&path, source).expect("write");
        let unit = crate::extract(&path.to_string_lossy(), &Options::default()).expect("lowers");
        unit.kernels[0]
            .params
            .iter()
            .map(|p| {
                let kind = match &p.kind {
                    ParamKind::Array(info) => info
                        .dims
                        .iter()
                        .map(|d| d.as_ref().map_or("?".to_string(), |a| a.to_string()))
                        .collect::<Vec<_>>()
                        .join(", "),
                    ParamKind::Scalar { is_size, .. } => format!("size={is_size}"),
                };
                (p.name.clone(), kind, p.origin.clone())
            })
            .collect()
    }

    #[test]
    fn constant_extents_the_loops_do_not_run_to_become_extent_sizes() {
        let params = params_of(
            "#define NI 40\n#define NJ 50\n\
             void f(int ni, int nj, double C[NI + 0][NJ + 0], double w[3][NJ]) {\n\
               for (int i = 0; i < ni; i++)\n\
                 for (int j = 0; j < nj; j++) C[i][j] += w[2][j];\n\
               for (int k = 0; k < 3; k++) w[k][0] = 1.0;\n}\n",
        );
        let shown: Vec<String> = params
            .iter()
            .map(|(n, k, o)| format!("{n}: {k} {o:?}"))
            .collect();
        assert_eq!(
            shown,
            vec![
                "ni: size=true Argument",
                "nj: size=true Argument",
                "C: ext_40, ext_50 Argument",
                // `w`'s rows are read at constants only: 3 stays.
                "w: 3, ext_50 Argument",
                "ext_40: size=true Extent { value: 40 }",
                "ext_50: size=true Extent { value: 50 }",
            ]
        );
    }

    #[test]
    fn large_literal_sizes_the_loops_run_to_become_extent_sizes() {
        let params = params_of(
            "#define N 64\nvoid f(double a[N][N], double b[N]) {\n\
               for (int i = 0; i < N; i++) {\n\
                 b[i] = 0.0;\n\
                 for (int j = 1; j < N - 1; j++) b[i] += a[i][j];\n}\n}\n",
        );
        let shown: Vec<String> = params
            .iter()
            .map(|(n, k, o)| format!("{n}: {k} {o:?}"))
            .collect();
        assert_eq!(
            shown,
            vec![
                "a: ext_64, ext_64 Argument",
                "b: ext_64 Argument",
                "ext_64: size=true Extent { value: 64 }",
            ]
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("k.c");
        std::fs::write(
            &path,
            "void f(double a[64][64]) {\n for (int i = 0; i < 64; i++)\n  for (int j = 1; j < 63; j++) a[i][j] = 1.0;\n}\n",
        )
        .expect("write");
        let unit = crate::extract(&path.to_string_lossy(), &Options::default()).expect("lowers");
        let dump = crate::dump::translation_unit(&unit);
        assert!(dump.contains("for i in 0..ext_64 step 1"), "{dump}");
        assert!(dump.contains("for j in 1..ext_64 - 1 step 1"), "{dump}");
    }

    #[test]
    fn extents_the_loops_run_to_stay_literal() {
        let params = params_of(
            "void f(double C[16][16]) {\n\
               for (int i = 0; i < 16; i++)\n\
                 for (int j = 0; j <= i; j++) C[i][j] = 0.0;\n}\n",
        );
        assert_eq!(params.len(), 1);
        assert_eq!(params[0].1, "16, 16");
    }
}
