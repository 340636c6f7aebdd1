//! Lowers one read C function ([`crate::syntax::CFunction`]) to a loop-IR
//! [`Kernel`], collecting a diagnostic for every construct it refuses.
//!
//! Names: parameters and globals keep their C names. Locals and loop
//! iterators keep theirs unless already taken in the kernel, in which case
//! they get the first free `name_1`, `name_2`, ... — so every iterator name
//! is unique in the kernel, even for sibling loops that reuse `i` (the
//! first keeps `i`, the next becomes `i_1`). Renaming is deterministic:
//! declaration order in the source.

mod aos;
mod branch_returns;
mod byref;
mod expr;
mod fields;
mod finish;
mod guards;
mod histogram;
mod increments;
mod loops;
mod macro_sizes;
mod pointers;
mod size_locals;
mod stmt;
mod strided;

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::affine::{poly_of, AffineName, NotAffine, Poly};
use crate::diagnostics::{self as codes, Code, Diagnostic};
use crate::ir::*;
use crate::syntax::*;

/// What a declaration key is bound to while lowering.
#[derive(Clone, Debug)]
enum Binding {
    Iter {
        name: String,
        ty: ScalarType,
    },
    Scalar {
        name: String,
        ty: ScalarType,
        class: VarClass,
    },
    Array {
        name: String,
        elem: ScalarType,
        ndims: usize,
        /// A pointer to scalars: subscripts are delinearised afterwards.
        flat: bool,
    },
    /// A parameter of an inlined helper: its argument's value.
    Inlined(Expr),
}

/// A pointer access awaiting delinearisation.
struct FlatAccess {
    array: String,
    poly: Poly,
    loc: Loc,
}

/// Prefix of the placeholder index a flat access carries until
/// [`finish`] replaces it (never left in a returned kernel).
const FLAT_MARKER: &str = "\u{1}flat";

pub struct Lowerer<'f> {
    func: &'f CFunction,
    diagnostics: Vec<Diagnostic>,
    bindings: HashMap<String, Binding>,
    used_names: BTreeSet<String>,
    /// Keys of variables some `for` header uses as its iterator.
    iterator_keys: HashSet<String>,
    /// Keys of variables some statement assigns (a written parameter is
    /// not a size: its value may change before a bound reads it).
    written_keys: HashSet<String>,
    /// Keys of variables a `for` condition reads (`i < size`).
    bound_keys: HashSet<String>,
    /// Integer locals initialised with an affine expression and never
    /// assigned again (`const int N = 64;`, `int m = n - 1;`): in bounds
    /// and subscripts they stand for that expression.
    affine_locals: HashMap<String, Poly>,
    /// The initialisers of the [`Self::affine_locals`] that are affine,
    /// read in place of the local by guard conditions (`int j = i + k; if
    /// (j >= 0 && j < n)` tests `i + k`): what the guard says then bounds
    /// the iterators, for the regions and sizes that follow from them.
    affine_inits: HashMap<String, CExpr>,
    /// Locals set once to a size expression that is not affine, with why
    /// (a bound or subscript through one is refused naming it).
    not_affine_locals: HashMap<String, NotAffine>,
    /// Keys whose declaration was already diagnosed (uses stay silent).
    rejected_keys: HashSet<String>,
    /// Keys declared outside the scop region with a type we cannot lift.
    outside_region_keys: HashSet<String>,
    /// Scalars declared before the scop region whose initialiser could
    /// not be lowered: reading them in the region is refused.
    uninitialised_keys: HashSet<String>,
    loop_bounds: HashMap<String, (Affine, Affine, i64)>,
    params: Vec<Param>,
    locals: Vec<Local>,
    flat_accesses: Vec<FlatAccess>,
    returns: Option<ScalarType>,
    /// An expression the reader already refused was met.
    saw_reader_rejection: bool,
    /// Expression nodes copied by substituting inlined helper arguments
    /// (bounded so `sq(sq(sq(...)))` cannot grow exponentially).
    inlined_nodes: usize,
    /// Histogram writes lowered to loops over their bins ([`histogram`]).
    histograms: Vec<Histogram>,
}

/// Lowers `func`, restricted to the top-level statements strictly between
/// lines `region` (a `#pragma scop` region) when given.
pub fn lower_function(
    func: &CFunction,
    region: Option<(u32, u32)>,
) -> Result<Vec<Kernel>, Vec<Diagnostic>> {
    // Scalars passed by reference (f2c's `integer *n`) are read as their
    // values first, so guards and increment tests see `n`, not `*n`.
    let unwrapped = byref::unwrap(func);
    let func = unwrapped.as_ref().map_or(func, |(f, _)| f);
    let by_reference = unwrapped
        .as_ref()
        .map(|(_, keys)| keys.clone())
        .unwrap_or_default();
    // Tested pointer parameters are read as set (stated as preconditions),
    // before the guards: `if (!p) return;` is then no guard at all.
    let nonnull = crate::nonnull::assume_set_pointers(func);
    let func = nonnull.as_ref().map_or(func, |n| &n.func);
    // A leading `if (n <= 0) return;` is taken off here and checked to
    // change nothing once the rest is lowered.
    let guarded = guards::strip(func);
    let func = guarded.as_ref().map_or(func, |(f, _)| f);
    let entry = Entry {
        assumed: nonnull
            .as_ref()
            .map(|n| n.assumed.clone())
            .unwrap_or_default(),
        guards: guarded.as_ref().map(|(_, g)| g.as_slice()),
        by_reference,
    };
    // A test of the increments picks the unit-stride loops or the general
    // ones: each branch is a kernel of its own, with its own layouts.
    let Some(variants) = region.is_none().then(|| increments::split(func)).flatten() else {
        return lower_entered(func, region, &entry, &[]).map(|(k, _)| vec![k]);
    };
    let count = variants.len();
    let mut kernels = Vec::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for (at, v) in variants.iter().enumerate() {
        let tests: Vec<CExpr> = v.path.iter().map(|(c, _)| c.clone()).collect();
        match lower_entered(&v.func, None, &entry, &tests) {
            Ok((mut kernel, lowered)) => {
                let taken = v.path.iter().map(|(_, t)| *t);
                kernel.case = Some(KernelCase {
                    number: at + 1,
                    count,
                    path: lowered.into_iter().zip(taken).collect(),
                    pins: Vec::new(),
                });
                kernels.push(kernel);
            }
            Err(found) => {
                for d in found {
                    if !diagnostics.contains(&d) {
                        diagnostics.push(d);
                    }
                }
            }
        }
    }
    if diagnostics.is_empty() {
        Ok(kernels)
    } else {
        Err(diagnostics)
    }
}

/// What the entry of the function settled before its body is lowered:
/// pointers read as set, and its leading guards.
struct Entry<'a> {
    assumed: Vec<(String, Loc)>,
    guards: Option<&'a [guards::Guard]>,
    /// Keys of the scalar parameters the C receives by pointer.
    by_reference: HashSet<String>,
}

/// Lowers `func` (its entry settled), and `tests` (conditions on its
/// parameters, for a case's path) in its scope.
fn lower_entered(
    func: &CFunction,
    region: Option<(u32, u32)>,
    entry: &Entry<'_>,
    tests: &[CExpr],
) -> Result<(Kernel, Vec<Expr>), Vec<Diagnostic>> {
    // `if (incx < 0) ix = …;`: a negative increment's start, which the
    // program's stride checks make unreachable (checked below).
    let negatives = increments::strip_negative_starts(func);
    let func = negatives.as_ref().map_or(func, |(f, _)| f);
    // Index variables the taken-out starts (or a split's branch) kept
    // from closing: `ix = 0; …; ix += incx` is `ix = i * incx` now.
    let closed = (negatives.is_some() || !tests.is_empty()).then(|| CFunction {
        body: crate::induction::substitute_inductions(func.body.clone()),
        ..func.clone()
    });
    let func = closed.as_ref().unwrap_or(func);
    // A `return` ending a branch: the `if` takes the rest as its `else`.
    let folded = branch_returns::fold(func);
    let func = folded.as_ref().unwrap_or(func);
    let promoted = macro_sizes::promote(func);
    let func = promoted.as_ref().map_or(func, |p| &p.func);
    // An array of structs is the flat array of its fields' type (before
    // struct parameters, which it then no longer is).
    let unpacked = aos::flatten_arrays(func);
    let func = unpacked.as_ref().map_or(func, |(f, _)| f);
    // Struct fields become parameters of their own first, so a pointer
    // walked out of a field is an ordinary walking pointer below.
    let flattened = fields::flatten(func);
    let func = flattened.as_ref().map_or(func, |f| &f.func);
    // Locals that only name a size read as that size (fields are
    // parameters by now).
    let sized = size_locals::substitute(func);
    let func = sized.func.as_ref().unwrap_or(func);
    // A loop stepping by a parameter that a leading guard makes positive
    // is counted by one (the guard then runs ahead of the program).
    let positive: Vec<String> = entry
        .guards
        .iter()
        .flat_map(|gs| gs.iter().filter_map(|g| g.vars.clone()).flatten())
        .collect();
    let unstrided = strided::unstride(func, &positive);
    let func = unstrided.as_ref().unwrap_or(func);
    // Walking pointers become subscripts of the arrays they point into.
    let walked = pointers::normalise(func, region)?;
    let func = walked.as_ref().unwrap_or(func);
    let mut l = Lowerer {
        func,
        diagnostics: Vec::new(),
        bindings: HashMap::new(),
        used_names: BTreeSet::new(),
        iterator_keys: HashSet::new(),
        written_keys: HashSet::new(),
        bound_keys: HashSet::new(),
        affine_locals: HashMap::new(),
        affine_inits: HashMap::new(),
        not_affine_locals: sized.not_affine,
        rejected_keys: HashSet::new(),
        outside_region_keys: HashSet::new(),
        uninitialised_keys: HashSet::new(),
        loop_bounds: HashMap::new(),
        params: Vec::new(),
        locals: Vec::new(),
        flat_accesses: Vec::new(),
        returns: None,
        saw_reader_rejection: false,
        inlined_nodes: 0,
        histograms: Vec::new(),
    };
    collect_keys(
        &func.body,
        &mut l.iterator_keys,
        &mut l.written_keys,
        &mut l.bound_keys,
    );
    for p in func.params.iter().chain(&func.globals) {
        l.used_names.insert(p.name.clone());
    }
    // Macro sizes are bound first (array extents of the C parameters
    // name them) and listed last, after what the C function is passed.
    for (m, value) in promoted.iter().flat_map(|p| &p.params) {
        l.used_names.insert(m.name.clone());
        l.declare_param(m, Origin::Macro { value: *value });
    }
    let macro_params = std::mem::take(&mut l.params);
    let field_origin = |key: &str| flattened.as_ref().and_then(|f| f.origins.get(key).cloned());
    for p in &func.params {
        let origin = match field_origin(&p.key) {
            Some(origin) => origin,
            None if entry.by_reference.contains(&p.key) => Origin::Pointee,
            None => Origin::Argument,
        };
        l.declare_param(p, origin);
    }
    for g in &func.globals {
        l.declare_param(g, field_origin(&g.key).unwrap_or(Origin::Global));
    }
    if let Some(f) = &flattened {
        l.diagnostics.extend(f.diagnostics.iter().cloned());
    }
    l.params.extend(macro_params);
    let body = l.lower_body(region);
    let (start_line, end_line) = region.unwrap_or((func.start_line, func.end_line));
    let mut kernel = Kernel {
        name: func.name.clone(),
        range: SourceRange {
            file: func.loc.file.clone(),
            start_line,
            end_line,
        },
        params: std::mem::take(&mut l.params),
        locals: std::mem::take(&mut l.locals),
        body,
        returns: l.returns,
        histograms: std::mem::take(&mut l.histograms),
        assumed_set: entry.assumed.clone(),
        negative_steps: negatives
            .as_ref()
            .map(|(_, n)| n.clone())
            .unwrap_or_default(),
        guards: Vec::new(),
        asserted: func.asserted.clone(),
        entered: func.entered.clone(),
        case: None,
        struct_arrays: unpacked
            .as_ref()
            .map(|(_, u)| u.clone())
            .unwrap_or_default(),
    };
    l.finish(&mut kernel);
    let lowered_tests: Vec<Expr> = tests.iter().filter_map(|t| l.expr(t)).collect();
    if lowered_tests.len() < tests.len() && l.diagnostics.is_empty() {
        l.error(
            codes::UNSUPPORTED_STATEMENT,
            &func.loc,
            "a test of the increments cannot be read".to_string(),
        );
    }
    l.diagnostics.extend(increments::check_negative_starts(
        &kernel,
        &kernel.negative_steps,
    ));
    if let Some(stripped) = entry.guards {
        // One guard that matters keeps them all, in order, ahead of the
        // program; guards that all change nothing are dropped.
        let matters = stripped.iter().find_map(|g| guards::redundant(&kernel, g));
        if let Some(why) = matters {
            match guards::kept(&mut l, stripped) {
                Ok(kept) => kernel.guards = kept,
                Err((loc, cannot)) => l.error(
                    codes::BAD_RETURN,
                    &loc,
                    format!(
                        "`return` before the end of the kernel: this guard matters ({why}), \
                         and it cannot run ahead of the program: {cannot}"
                    ),
                ),
            }
        }
    }
    if l.diagnostics.is_empty() {
        Ok((kernel, lowered_tests))
    } else {
        Err(l.diagnostics)
    }
}

/// Keys of loop iterators, of variables assigned by a statement, and of
/// variables a `for` condition reads.
fn collect_keys(
    stmts: &[CStmt],
    keys: &mut HashSet<String>,
    written: &mut HashSet<String>,
    bounds: &mut HashSet<String>,
) {
    // Iterative: statement trees are bounded by the reader, but an explicit
    // stack costs nothing.
    let mut stack: Vec<&CStmt> = stmts.iter().collect();
    while let Some(s) = stack.pop() {
        match s {
            CStmt::Compound(inner, _) => stack.extend(inner),
            CStmt::If {
                then_branch,
                else_branch,
                ..
            } => {
                stack.push(then_branch);
                if let Some(e) = else_branch {
                    stack.push(e);
                }
            }
            CStmt::Expr(e) => {
                // Every target of a chain `a = b = e;` is written.
                let mut cur = e;
                loop {
                    let (target, rest) = match &strip(cur).kind {
                        CExprKind::Binary {
                            op: CBinOp::Assign,
                            lhs,
                            rhs,
                        } => (lhs, Some(rhs)),
                        CExprKind::Binary {
                            op: CBinOp::CompoundAssign(_),
                            lhs,
                            ..
                        } => (lhs, None),
                        CExprKind::Unary {
                            op: CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec,
                            arg,
                        } => (arg, None),
                        _ => break,
                    };
                    if let CExprKind::Ref(r) = &strip(target).kind {
                        written.insert(r.key.clone());
                    }
                    match rest {
                        Some(rhs) => cur = rhs,
                        None => break,
                    }
                }
            }
            CStmt::For {
                init, cond, body, ..
            } => {
                // A loop's start is iteration space too (a DSP count-down
                // loop starts at the `uint16_t` size it counts).
                refs_in(cond, bounds);
                match &**init {
                    CStmt::Decl(vars, _) => {
                        keys.extend(vars.iter().map(|v| v.key.clone()));
                        vars.iter()
                            .filter_map(|v| v.init.as_ref())
                            .for_each(|e| refs_in(e, bounds));
                    }
                    CStmt::Expr(e) => {
                        if let CExprKind::Binary {
                            op: CBinOp::Assign,
                            lhs,
                            rhs,
                        } = &strip(e).kind
                        {
                            if let CExprKind::Ref(r) = &strip(lhs).kind {
                                keys.insert(r.key.clone());
                            }
                            refs_in(rhs, bounds);
                        }
                    }
                    _ => {}
                }
                stack.push(body);
            }
            _ => {}
        }
    }
}

/// Adds the key of every variable `e` reads.
fn refs_in(e: &CExpr, out: &mut HashSet<String>) {
    if let CExprKind::Ref(r) = &e.kind {
        out.insert(r.key.clone());
    }
    for c in e.children() {
        refs_in(c, out);
    }
}

/// Strips parentheses and implicit conversions.
fn strip(e: &CExpr) -> &CExpr {
    e.stripped()
}

impl<'f> Lowerer<'f> {
    fn error(&mut self, code: Code, loc: &Loc, message: impl Into<String>) {
        self.diagnostics
            .push(Diagnostic::new(code, Some(loc.clone()), message));
    }

    /// Records that a statement was dropped because part of it could not
    /// be lowered; guarantees a diagnostic exists, so no kernel is ever
    /// returned with a statement silently missing.
    fn dropped(&mut self, loc: &Loc) {
        if self.diagnostics.is_empty() && !self.saw_reader_rejection {
            self.error(
                codes::UNSUPPORTED_EXPRESSION,
                loc,
                "statement could not be lowered",
            );
        }
    }

    /// A kernel-unique name derived from `base`.
    fn fresh_name(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 0;
        while self.used_names.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        self.used_names.insert(name.clone());
        name
    }

    /// Classifies a name for affine extraction.
    fn affine_name(&self, r: &DeclRef) -> AffineName {
        match self.bindings.get(&r.key) {
            Some(Binding::Iter { name, .. }) => AffineName::Var(name.clone()),
            // Int-sized integer parameters are sizes, and narrower ones that
            // bound a loop (CMSIS-style `uint16_t size`); a `uint8_t alpha`
            // compared with 255 is data, not an iteration-space guard.
            Some(Binding::Scalar {
                name,
                ty,
                class: VarClass::Param,
            }) if !ty.is_float()
                && (ty.bits() >= 32 || self.bound_keys.contains(&r.key))
                && !self.written_keys.contains(&r.key) =>
            {
                AffineName::Var(name.clone())
            }
            None if self.iterator_keys.contains(&r.key) => {
                AffineName::StaleIterator(r.name.clone())
            }
            _ => match (
                self.affine_locals.get(&r.key),
                self.not_affine_locals.get(&r.key),
            ) {
                (Some(p), _) => AffineName::Poly(p.clone()),
                (None, Some(why)) => AffineName::Refused(why.clone()),
                (None, None) => AffineName::Opaque(r.name.clone()),
            },
        }
    }

    fn poly(&self, e: &CExpr) -> Result<Poly, NotAffine> {
        poly_of(e, &|r| self.affine_name(r))
    }

    fn affine(&self, e: &CExpr) -> Result<Affine, NotAffine> {
        let p = self.poly(e)?;
        p.to_affine()
            .ok_or_else(|| NotAffine::NonLinear("a product of variables".into()))
    }

    /// The extents of an array declaration, outermost first.
    fn declared_dims(&mut self, var: &CVarDecl) -> Option<(ScalarType, Vec<Option<Affine>>)> {
        let mut lens = Vec::new();
        let mut t = &var.ty;
        while let CType::Array { elem, len } = t {
            lens.push(*len);
            t = elem;
        }
        let elem = t.scalar()?;
        let mut dims = Vec::new();
        for (level, len) in lens.iter().enumerate() {
            let written = var.dims.get(level).and_then(|d| d.as_ref());
            let dim = match (len, written) {
                // `float a[N]` with N a macro size: the extent is N, not
                // the value N has in this compilation.
                (Some(_), Some(size)) if macro_sizes::mentions_macro_size(size) => {
                    self.affine(size).ok()
                }
                (Some(n), _) => Some(Affine::constant(*n)),
                (None, Some(size)) => match self.affine(size) {
                    Ok(a) => Some(a),
                    Err(why) => {
                        let loc = size.loc.clone();
                        self.error(
                            codes::NON_AFFINE_BOUND,
                            &loc,
                            format!("extent of `{}` is not affine: {why}", var.name),
                        );
                        None
                    }
                },
                (None, None) => None,
            };
            dims.push(dim);
        }
        Some((elem, dims))
    }

    fn declare_param(&mut self, var: &CVarDecl, origin: Origin) {
        let name = var.name.clone();
        let param_kind = match &var.ty {
            CType::Scalar(ty) => {
                self.bindings.insert(
                    var.key.clone(),
                    Binding::Scalar {
                        name: name.clone(),
                        ty: *ty,
                        class: VarClass::Param,
                    },
                );
                Some(ParamKind::Scalar {
                    ty: *ty,
                    is_size: false,
                })
            }
            // `double *A[]` as a parameter is `double **A`.
            CType::Array { elem, len: None }
                if matches!(**elem, CType::Pointer { .. }) && origin == Origin::Argument =>
            {
                let as_pointer = CVarDecl {
                    ty: CType::Pointer {
                        pointee: elem.clone(),
                        restrict: false,
                    },
                    dims: Vec::new(),
                    ..var.clone()
                };
                self.declare_param(&as_pointer, origin);
                return;
            }
            CType::Array { .. } => match self.declared_dims(var) {
                Some((elem, dims)) => {
                    self.bindings.insert(
                        var.key.clone(),
                        Binding::Array {
                            name: name.clone(),
                            elem,
                            ndims: dims.len(),
                            flat: false,
                        },
                    );
                    Some(ParamKind::Array(ArrayInfo {
                        elem,
                        dims,
                        storage: Storage::Declared,
                    }))
                }
                None => None,
            },
            CType::Pointer { pointee, .. } => match &**pointee {
                CType::Scalar(elem) => {
                    self.bindings.insert(
                        var.key.clone(),
                        Binding::Array {
                            name: name.clone(),
                            elem: *elem,
                            ndims: 1,
                            flat: true,
                        },
                    );
                    Some(ParamKind::Array(ArrayInfo {
                        elem: *elem,
                        dims: vec![None],
                        storage: Storage::Flat {
                            strides: vec![Affine::constant(1)],
                        },
                    }))
                }
                CType::Pointer { .. } => match row_pointer_levels(&var.ty) {
                    Some((elem, ndims)) => {
                        self.bindings.insert(
                            var.key.clone(),
                            Binding::Array {
                                name: name.clone(),
                                elem,
                                ndims,
                                flat: false,
                            },
                        );
                        Some(ParamKind::Array(ArrayInfo {
                            elem,
                            dims: vec![None; ndims],
                            storage: Storage::RowPointers,
                        }))
                    }
                    None => None,
                },
                CType::Array { .. } => {
                    // `double (*A)[M]`: a declared array with unknown rows.
                    let as_array = CVarDecl {
                        ty: CType::Array {
                            elem: pointee.clone(),
                            len: None,
                        },
                        dims: std::iter::once(None)
                            .chain(var.dims.iter().cloned())
                            .collect(),
                        ..var.clone()
                    };
                    self.declare_param(&as_array, origin);
                    return;
                }
                _ => None,
            },
            _ => None,
        };
        match param_kind {
            Some(kind) => self.params.push(Param {
                name,
                kind,
                role: Role::Input,
                origin,
                loc: var.loc.clone(),
            }),
            None => {
                self.rejected_keys.insert(var.key.clone());
                let what = if origin == Origin::Global {
                    "global"
                } else {
                    "parameter"
                };
                let loc = var.loc.clone();
                self.error(
                    codes::UNSUPPORTED_TYPE,
                    &loc,
                    format!(
                        "{what} `{}` has unsupported type `{}`",
                        var.name,
                        type_name(&var.ty)
                    ),
                );
            }
        }
    }
}

/// `T **` and `T ***` (row-pointer matrices and cubes): the element type
/// and the number of subscripts, 2 or 3.
fn row_pointer_levels(t: &CType) -> Option<(ScalarType, usize)> {
    let mut levels = 0;
    let mut cur = t;
    while let CType::Pointer { pointee, .. } = cur {
        levels += 1;
        cur = pointee;
    }
    let elem = cur.scalar()?;
    (2..=3).contains(&levels).then_some((elem, levels))
}

/// A C-like spelling of a type, for messages.
pub(crate) fn type_name(t: &CType) -> String {
    match t {
        CType::Scalar(s) => s.name().to_string(),
        CType::Pointer { pointee, .. } => match **pointee {
            CType::Pointer { .. } => format!("{}*", type_name(pointee)),
            _ => format!("{} *", type_name(pointee)),
        },
        CType::Array { elem, len } => match len {
            Some(n) => format!("{}[{n}]", type_name(elem)),
            None => format!("{}[]", type_name(elem)),
        },
        CType::Void => "void".into(),
        CType::Other(s) | CType::Struct(s) => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    //! Loop normalisation and renaming, on hand-built syntax trees.
    use super::*;

    fn loc() -> Loc {
        Loc {
            file: "t.c".into(),
            line: 1,
            col: 1,
        }
    }
    fn int_ty() -> CType {
        CType::Scalar(ScalarType::I32)
    }
    fn e(kind: CExprKind) -> CExpr {
        CExpr {
            kind,
            ty: int_ty(),
            loc: loc(),
        }
    }
    fn lit(v: i64) -> CExpr {
        e(CExprKind::Int(IntValue::Fits(v)))
    }
    fn var(name: &str, key: &str, target: RefTarget) -> CExpr {
        e(CExprKind::Ref(DeclRef {
            name: name.into(),
            key: key.into(),
            target,
        }))
    }
    fn i(key: &str) -> CExpr {
        var("i", key, RefTarget::Local)
    }
    fn n() -> CExpr {
        var("n", "n@param", RefTarget::Param)
    }
    fn bin(op: CBinOp, a: CExpr, b: CExpr) -> CExpr {
        e(CExprKind::Binary {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        })
    }
    fn un(op: CUnOp, a: CExpr) -> CExpr {
        e(CExprKind::Unary {
            op,
            arg: Box::new(a),
        })
    }
    fn for_loop(key: &str, start: CExpr, cond: CExpr, inc: CExpr) -> CStmt {
        CStmt::For {
            init: Box::new(CStmt::Expr(bin(CBinOp::Assign, i(key), start))),
            cond,
            inc,
            body: Box::new(CStmt::Compound(Vec::new(), loc())),
            loc: loc(),
        }
    }
    fn function(body: Vec<CStmt>) -> CFunction {
        CFunction {
            name: "k".into(),
            key: "k@t.c".into(),
            params: vec![CVarDecl {
                name: "n".into(),
                key: "n@param".into(),
                ty: int_ty(),
                dims: Vec::new(),
                init: None,
                is_static: false,
                loc: loc(),
            }],
            result: CType::Void,
            body,
            loc: loc(),
            start_line: 1,
            end_line: 9,
            globals: Vec::new(),
            field_layouts: Default::default(),
            asserted: Vec::new(),
            entered: Vec::new(),
        }
    }
    #[test]
    fn pointers_to_pointers_are_row_pointer_arrays_of_two_or_three_levels() {
        let ptr = |t: CType| CType::Pointer {
            pointee: Box::new(t),
            restrict: false,
        };
        let f64_ = CType::Scalar(ScalarType::F64);
        assert_eq!(row_pointer_levels(&ptr(f64_.clone())), None);
        assert_eq!(
            row_pointer_levels(&ptr(ptr(f64_.clone()))),
            Some((ScalarType::F64, 2))
        );
        assert_eq!(
            row_pointer_levels(&ptr(ptr(ptr(f64_.clone())))),
            Some((ScalarType::F64, 3))
        );
        assert_eq!(row_pointer_levels(&ptr(ptr(ptr(ptr(f64_))))), None);
        assert_eq!(row_pointer_levels(&ptr(ptr(CType::Void))), None);
    }

    fn loops(body: Vec<CStmt>) -> Vec<(String, String, String, i64)> {
        let kernels = lower_function(&function(body), None).expect("lowers");
        kernels[0]
            .body
            .iter()
            .map(|s| match s {
                Stmt::Loop(l) => (
                    l.iter.clone(),
                    l.start.to_string(),
                    l.end.to_string(),
                    l.step,
                ),
                other => panic!("not a loop: {other:?}"),
            })
            .collect()
    }
    fn codes_of(body: Vec<CStmt>) -> Vec<&'static str> {
        match lower_function(&function(body), None) {
            Ok(_) => Vec::new(),
            Err(d) => d.iter().map(|d| d.code.id).collect(),
        }
    }

    #[test]
    fn inclusive_bounds_become_exclusive_ends() {
        let up = for_loop(
            "i@1",
            lit(0),
            bin(CBinOp::Le, i("i@1"), n()),
            un(CUnOp::PostInc, i("i@1")),
        );
        let down = for_loop(
            "i@2",
            n(),
            bin(CBinOp::Ge, i("i@2"), lit(1)),
            bin(CBinOp::CompoundAssign(ArithOp::Sub), i("i@2"), lit(2)),
        );
        assert_eq!(
            loops(vec![up, down]),
            vec![
                ("i".into(), "0".into(), "n + 1".into(), 1),
                ("i_1".into(), "n".into(), "0".into(), -2),
            ]
        );
    }

    #[test]
    fn reversed_and_offset_conditions_are_solved_for_the_iterator() {
        // for (i = 0; n > i; i = i + 3)
        let reversed = for_loop(
            "i@1",
            lit(0),
            bin(CBinOp::Gt, n(), i("i@1")),
            bin(CBinOp::Assign, i("i@1"), bin(CBinOp::Add, i("i@1"), lit(3))),
        );
        // for (i = 0; i + 4 <= n; ++i)
        let offset = for_loop(
            "i@2",
            lit(0),
            bin(CBinOp::Le, bin(CBinOp::Add, i("i@2"), lit(4)), n()),
            un(CUnOp::PreInc, i("i@2")),
        );
        // for (i = n - 1; i != -1; i--)
        let not_equal = for_loop(
            "i@3",
            bin(CBinOp::Sub, n(), lit(1)),
            bin(CBinOp::Ne, i("i@3"), un(CUnOp::Minus, lit(1))),
            un(CUnOp::PostDec, i("i@3")),
        );
        assert_eq!(
            loops(vec![reversed, offset, not_equal]),
            vec![
                ("i".into(), "0".into(), "n".into(), 3),
                ("i_1".into(), "0".into(), "n - 3".into(), 1),
                ("i_2".into(), "n - 1".into(), "-1".into(), -1),
            ]
        );
    }

    #[test]
    fn malformed_loops_are_diagnosed() {
        let wrong_way = for_loop(
            "i@1",
            lit(0),
            bin(CBinOp::Gt, i("i@1"), n()),
            un(CUnOp::PostInc, i("i@1")),
        );
        let geometric = for_loop(
            "i@2",
            lit(1),
            bin(CBinOp::Lt, i("i@2"), n()),
            bin(CBinOp::CompoundAssign(ArithOp::Mul), i("i@2"), lit(2)),
        );
        let scaled = for_loop(
            "i@3",
            lit(0),
            bin(CBinOp::Lt, bin(CBinOp::Mul, lit(2), i("i@3")), n()),
            un(CUnOp::PostInc, i("i@3")),
        );
        assert_eq!(
            codes_of(vec![wrong_way, geometric, scaled]),
            vec!["TL017", "TL016", "TL015"]
        );
    }
}
