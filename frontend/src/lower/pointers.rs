//! Pointer induction variables: walking pointers become affine subscripts.
//!
//! DSP code walks arrays with pointers (`p_x = &x[0]; ... *p_y += *p_h++ *
//! *p_x++; p_y++; p_x -= N;`). Before lowering, this pass follows every
//! local pointer (and every pointer parameter the body advances) in the
//! spirit of LLVM's scalar evolution: its value at each statement is
//! `base + offset`, with `base` a parameter or global array and `offset` a
//! polynomial over loop iterators and size parameters. Each dereference
//! `*p`, `*p++`, `*(p + i)` and `p[i]` is rewritten to `base[offset + i]`,
//! and the pointer's own declarations, assignments and advances are
//! dropped, so the lowering sees plain subscripts (a flat offset such as
//! `i*N + j` is split into dimensions by [`crate::delinearize`] later).
//!
//! Loops are summarised without unrolling: the body is walked once with
//! each pointer's entry offset as a fresh symbol `S`. If the body ends with
//! `S + d` (`d` free of `S` and of the loop's iterator), the pointer
//! advances by `d` per iteration: inside the loop `S` is the entry offset
//! plus `d` times the iteration number, and after it the entry offset plus
//! `d` times the trip count. If the body reassigns the pointer before any
//! use (a reset in an outer loop), the entry value does not matter and the
//! value after the loop is the body's end value at the last iteration.
//! Trip counts assume a loop's end is not before its start (C code that
//! walks pointers over `for (i = 0; i < N; i++)` relies on the same).
//!
//! What stays unknown is refused where the pointer is used (TL025), with
//! where its value was lost: two arrays on two paths, a data-dependent or
//! conditional advance, an advance that grows with its own loop's
//! iterator, a value carried across iterations. A pointer that escapes
//! (passed to a call, compared, subtracted) is TL026; two pointers that
//! both write one array are TL027 (their regions are not proven disjoint).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::affine::{poly_of, AffineName, Poly};
use crate::diagnostics::{self as codes, Code, Diagnostic};
use crate::ir::{Loc, ScalarType};
use crate::syntax::*;

use super::macro_sizes::{walk_expr, walk_expr_mut, walk_stmts, walk_stmts_mut};

/// Marks a placeholder index (`Unsupported("\u{1}ptr<id>")`) that stands
/// for an offset until every loop around it has been summarised.
const OFFSET_MARKER: &str = "\u{1}ptr";

/// The `if` branches around a statement: each `if`'s number and whether
/// the statement is in its `then` branch.
type Branches = Vec<(usize, bool)>;

/// Whether statements under `a` and under `b` never both run: they sit on
/// the two branches of one `if`.
fn exclusive(a: &Branches, b: &Branches) -> bool {
    a.iter()
        .any(|(n, t)| b.iter().any(|(m, u)| n == m && t != u))
}

/// The helper call a key was declared in (`hoist_helpers` gives every
/// name a helper declares, its parameters too, a suffix per call); `None`
/// for the caller's own names.
fn call_scope(key: &str) -> Option<&str> {
    key.find("\u{1}hoisted@").map(|at| &key[at..])
}

/// A pointer's value at one program point.
#[derive(Clone, Debug, PartialEq)]
enum PtrVal {
    /// `base + offset` (`offset` over iterator, size and symbol keys).
    At { base: DeclRef, offset: Poly },
    /// No affine value; `why` says how it was lost and `code` how to refuse.
    Unknown { why: String, code: Code },
}

/// A pointer expression's value: the array, the polynomial part of the
/// offset, and terms that are not polynomials (left for the lowering to
/// diagnose, e.g. `*(p + idx[i])` is an indirect subscript).
struct PtrExpr {
    base: DeclRef,
    offset: Poly,
    extra: Vec<CExpr>,
}

/// Reads and advances of walking pointers inside one full expression.
#[derive(Default)]
struct Effects {
    reads: BTreeMap<String, usize>,
    advances: BTreeMap<String, (i64, usize)>,
}

/// A `for` header in normal form: `iter` from `start` to `end` (exclusive)
/// by `step` (±1 only: other steps are refused if a pointer advances).
struct Header {
    iter: String,
    start: Poly,
    end: Poly,
    step: i64,
}

struct Normaliser {
    /// Pointer variables followed (local pointers, advanced pointer params).
    tracked: HashMap<String, String>,
    /// Array and pointer parameters and globals, by key: possible bases.
    arrays: HashMap<String, DeclRef>,
    /// Integer variables an offset may name (iterators, sizes, constant
    /// locals): their references, to spell offsets back as C.
    leaves: HashMap<String, CExpr>,
    /// Integer locals that the body writes other than as loop iterators.
    data_locals: HashSet<String>,
    iterators: HashSet<String>,
    state: HashMap<String, PtrVal>,
    offsets: Vec<Poly>,
    /// For each placeholder, the extents of its array's inner levels
    /// (empty for a flat pointer or a 1-D array).
    shapes: Vec<Vec<Poly>>,
    /// Inner extents of multi-dimensional array parameters and globals.
    extents: HashMap<String, Vec<Poly>>,
    /// (pointer key, base key, location, branches) of every write through
    /// a pointer.
    writes: Vec<(String, String, Loc, Branches)>,
    /// The branches of the `if`s around the statement being walked: the
    /// `if`'s number and whether this is its `then` branch.
    branches: Branches,
    /// How many `if`s have been walked (their numbers).
    ifs: usize,
    reported: HashSet<String>,
    loops: usize,
    changed: bool,
    diagnostics: Vec<Diagnostic>,
}

/// Rewrites `func`'s walking pointers as subscripts. `Ok(None)` when the
/// function walks no pointer (it is lowered as read).
/// With a `#pragma scop` `region`, statements outside it are kept as read,
/// except that pointer declarations before it give their initial values.
pub(super) fn normalise(
    func: &CFunction,
    region: Option<(u32, u32)>,
) -> Result<Option<CFunction>, Vec<Diagnostic>> {
    let mut n = Normaliser::new(func);
    let body = func
        .body
        .iter()
        .map(|s| match region {
            Some((from, to)) if s.loc().line <= from || s.loc().line >= to => {
                n.outside_region(s, s.loc().line <= from)
            }
            _ => n.stmt(s),
        })
        .collect();
    n.check_overlaps();
    if !n.diagnostics.is_empty() {
        return Err(n.diagnostics);
    }
    if !n.changed {
        return Ok(None);
    }
    let mut out = CFunction {
        body,
        ..func.clone()
    };
    n.fill_offsets(&mut out.body);
    if n.diagnostics.is_empty() {
        Ok(Some(out))
    } else {
        Err(n.diagnostics)
    }
}

fn strip(e: &CExpr) -> &CExpr {
    let mut cur = e;
    loop {
        match &cur.kind {
            CExprKind::Paren(inner) | CExprKind::Implicit(inner) => cur = inner,
            CExprKind::Cast(inner) if is_pointer(&cur.ty) && is_pointer(&inner.ty) => cur = inner,
            _ => return cur,
        }
    }
}

/// Why a pointer set from `rhs` has no known position. A row of a `T **`
/// matrix (`double *row = A[i]`) is named as such: rows are disjoint
/// buffers, so a local row pointer cannot be rewritten as a subscript.
fn unknown_source(rhs: &CExpr) -> String {
    if let CExprKind::Subscript { base, .. } = &strip(rhs).kind {
        if matches!(&base.ty, CType::Pointer { pointee, .. } if is_pointer(pointee)) {
            return format!(
                "it is set at {} to a row of a row-pointer matrix, which may alias any row; subscript the matrix itself, `A[i][j]`",
                where_(&rhs.loc)
            );
        }
    }
    format!(
        "it is set at {} from something that is not an array of the kernel",
        where_(&rhs.loc)
    )
}

fn is_pointer(t: &CType) -> bool {
    matches!(t, CType::Pointer { .. } | CType::Array { .. })
}

/// A pointer to a scalar (the only pointers walked).
fn is_scalar_pointer(t: &CType) -> bool {
    matches!(t, CType::Pointer { pointee, .. } if pointee.scalar().is_some())
}

fn where_(loc: &Loc) -> String {
    format!("{}:{}", loc.line, loc.col)
}

/// `p` with `var` replaced by `value`.
fn subst(p: &Poly, var: &str, value: &Poly) -> Option<Poly> {
    let mut out = Poly::default();
    for (m, &c) in &p.terms {
        let mut term = Poly::constant(c);
        for v in m {
            let factor = if v == var {
                value.clone()
            } else {
                Poly::var(v)
            };
            term = term.mul(&factor).ok()?;
        }
        out = out.add(&term).ok()?;
    }
    Some(out)
}

/// A pointer used with its entry value and reassigned later in the body
/// (`pIn2 = pInB + (numColsB - col)` after the column's walk, as DSP matrix
/// products reset it): at a trip after the first it holds the value the
/// previous trip set, the reassigned offset read at `iter - step`. When that
/// same expression read at the first trip gives the entry value (same
/// array, equal offset), it is the pointer's value at every trip.
fn rotated(
    e0: Option<&PtrVal>,
    base: &DeclRef,
    end: &Poly,
    header: Option<&Header>,
) -> Option<Poly> {
    let (
        Some(PtrVal::At {
            base: b0,
            offset: o0,
        }),
        Some(h),
    ) = (e0, header)
    else {
        return None;
    };
    if b0 != base || end.vars().any(|v| v.starts_with("\u{1}S")) {
        return None;
    }
    let previous = Poly::var(&h.iter).sub(&Poly::constant(h.step)).ok()?;
    let inside = subst(end, &h.iter, &previous)?;
    let at_start = subst(&inside, &h.iter, &h.start)?;
    (at_start.sub(o0).ok()?.terms.is_empty()).then_some(inside)
}

fn mentions(p: &Poly, var: &str) -> bool {
    p.vars().any(|v| v == var)
}

/// Keys of variables some `for` header initialises, and of integer
/// variables written anywhere else.
fn classify_locals(func: &CFunction) -> (HashSet<String>, HashSet<String>) {
    let mut iters = HashSet::new();
    let mut written = HashSet::new();
    walk_stmts(&func.body, &mut |s| {
        if let CStmt::For { init, .. } = s {
            match &**init {
                CStmt::Decl(vars, _) => iters.extend(vars.iter().map(|v| v.key.clone())),
                CStmt::Expr(e) => {
                    if let CExprKind::Binary { lhs, .. } = &strip(e).kind {
                        if let CExprKind::Ref(r) = &strip(lhs).kind {
                            iters.insert(r.key.clone());
                        }
                    }
                }
                _ => {}
            }
        }
        let mut note = |e: &CExpr| {
            walk_expr(e, &mut |n| {
                let target = match &n.kind {
                    CExprKind::Binary {
                        op: CBinOp::Assign | CBinOp::CompoundAssign(_),
                        lhs,
                        ..
                    } => lhs,
                    CExprKind::Unary {
                        op: CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec,
                        arg,
                    } => arg,
                    _ => return,
                };
                if let CExprKind::Ref(r) = &strip(target).kind {
                    if target.ty.is_integer() {
                        written.insert(r.key.clone());
                    }
                }
            })
        };
        match s {
            CStmt::Expr(e) => note(e),
            CStmt::For { inc, .. } => note(inc),
            CStmt::Decl(vars, _) => vars
                .iter()
                .filter_map(|v| v.init.as_ref())
                .for_each(&mut note),
            _ => {}
        }
    });
    let data = written.difference(&iters).cloned().collect();
    (iters, data)
}

/// Calls `f` on every full expression of `stmts` (initialisers,
/// expression statements, conditions, steps, returned values).
fn each_expr(stmts: &[CStmt], f: &mut impl FnMut(&CExpr)) {
    walk_stmts(stmts, &mut |s| match s {
        CStmt::Decl(vars, _) => vars
            .iter()
            .filter_map(|v| v.init.as_ref())
            .for_each(&mut *f),
        CStmt::Expr(e) | CStmt::If { cond: e, .. } | CStmt::Return(Some(e), _) => f(e),
        CStmt::For { cond, inc, .. } => {
            f(cond);
            f(inc);
        }
        _ => {}
    });
}

/// Keys of pointer parameters the body assigns or advances.
fn advanced_params(func: &CFunction) -> HashSet<String> {
    let params: HashSet<&str> = func
        .params
        .iter()
        .filter(|p| is_scalar_pointer(&p.ty))
        .map(|p| p.key.as_str())
        .collect();
    let mut out = HashSet::new();
    // Advances anywhere: `T v = *p++;` advances `p` in an initialiser.
    each_expr(&func.body, &mut |e| {
        walk_expr(e, &mut |n| {
            let target = match &n.kind {
                CExprKind::Binary {
                    op: CBinOp::Assign | CBinOp::CompoundAssign(_),
                    lhs,
                    ..
                } => lhs,
                CExprKind::Unary {
                    op: CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec,
                    arg,
                } => arg,
                _ => return,
            };
            if let CExprKind::Ref(r) = &strip(target).kind {
                if params.contains(r.key.as_str()) {
                    out.insert(r.key.clone());
                }
            }
        })
    });
    out
}

impl Normaliser {
    fn new(func: &CFunction) -> Normaliser {
        let (iterators, data_locals) = classify_locals(func);
        let mut n = Normaliser {
            tracked: HashMap::new(),
            arrays: HashMap::new(),
            leaves: HashMap::new(),
            data_locals,
            iterators,
            state: HashMap::new(),
            offsets: Vec::new(),
            shapes: Vec::new(),
            extents: HashMap::new(),
            writes: Vec::new(),
            branches: Vec::new(),
            ifs: 0,
            reported: HashSet::new(),
            loops: 0,
            changed: false,
            diagnostics: Vec::new(),
        };
        let advanced = advanced_params(func);
        for (p, target) in func
            .params
            .iter()
            .map(|p| (p, RefTarget::Param))
            .chain(func.globals.iter().map(|g| (g, RefTarget::Global)))
        {
            if !is_pointer(&p.ty) {
                continue;
            }
            let r = DeclRef {
                name: p.name.clone(),
                key: p.key.clone(),
                target,
            };
            if advanced.contains(&p.key) {
                n.tracked.insert(p.key.clone(), p.name.clone());
                n.state.insert(
                    p.key.clone(),
                    PtrVal::At {
                        base: r.clone(),
                        offset: Poly::default(),
                    },
                );
            }
            n.arrays.insert(p.key.clone(), r);
            let inner: Option<Vec<Poly>> = p
                .dims
                .iter()
                .skip(1)
                .map(|d| d.as_ref().and_then(|d| n.offset_of(d).ok()))
                .collect();
            if let Some(inner) = inner.filter(|i| !i.is_empty()) {
                n.extents.insert(p.key.clone(), inner);
            }
        }
        walk_stmts(&func.body, &mut |s| {
            if let CStmt::Decl(vars, _) = s {
                for v in vars.iter().filter(|v| is_scalar_pointer(&v.ty)) {
                    n.tracked.insert(v.key.clone(), v.name.clone());
                }
            }
        });
        n
    }

    fn error(&mut self, code: Code, loc: &Loc, message: String) {
        self.diagnostics
            .push(Diagnostic::new(code, Some(loc.clone()), message));
    }

    /// Reads an integer expression as an offset polynomial.
    fn offset_of(&mut self, e: &CExpr) -> Result<Poly, String> {
        let mut seen: Vec<(String, CExpr)> = Vec::new();
        let classify = |r: &DeclRef| -> AffineName {
            let integer_param = matches!(r.target, RefTarget::Param | RefTarget::Global)
                && !self.arrays.contains_key(&r.key);
            let constant_local = r.target == RefTarget::Local && !self.data_locals.contains(&r.key);
            if integer_param || constant_local || self.iterators.contains(&r.key) {
                AffineName::Var(r.key.clone())
            } else {
                AffineName::Opaque(r.name.clone())
            }
        };
        let p = poly_of(e, &classify).map_err(|why| why.to_string())?;
        walk_expr(e, &mut |n| {
            if let CExprKind::Ref(r) = &n.kind {
                seen.push((r.key.clone(), n.clone()));
            }
        });
        for (key, r) in seen {
            self.leaves.entry(key).or_insert(r);
        }
        Ok(p)
    }

    fn stmts(&mut self, stmts: &[CStmt]) -> Vec<CStmt> {
        stmts.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &CStmt) -> CStmt {
        match s {
            CStmt::Compound(inner, loc) => CStmt::Compound(self.stmts(inner), loc.clone()),
            CStmt::Decl(vars, loc) => self.decl(vars, loc),
            CStmt::Expr(e) => self.expr_stmt(e),
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                loc,
            } => self.if_stmt(cond, then_branch, else_branch.as_deref(), loc),
            CStmt::For {
                init,
                cond,
                inc,
                body,
                loc,
            } => self.for_stmt(init, cond, inc, body, loc),
            CStmt::Return(Some(e), loc) => CStmt::Return(Some(self.full_expr(e)), loc.clone()),
            other => other.clone(),
        }
    }

    /// A top-level statement outside the scop region: only a pointer
    /// declaration matters (its value, when it has one before the region).
    fn outside_region(&mut self, s: &CStmt, before: bool) -> CStmt {
        let CStmt::Decl(vars, loc) = s else {
            return s.clone();
        };
        let mut kept = Vec::new();
        for v in vars {
            if !self.tracked.contains_key(&v.key) {
                kept.push(v.clone());
                continue;
            }
            let value = match (&v.init, before) {
                (Some(init), true) => {
                    let mark = self.diagnostics.len();
                    let value = self.assigned_value(init);
                    self.diagnostics.truncate(mark);
                    value
                }
                _ => PtrVal::Unknown {
                    why: format!("`{}` is set outside the `#pragma scop` region", v.name),
                    code: codes::POINTER_NOT_AFFINE,
                },
            };
            self.state.insert(v.key.clone(), value);
            self.changed = true;
        }
        if kept.is_empty() {
            CStmt::Null(loc.clone())
        } else {
            CStmt::Decl(kept, loc.clone())
        }
    }

    fn decl(&mut self, vars: &[CVarDecl], loc: &Loc) -> CStmt {
        let mut kept = Vec::new();
        for v in vars {
            if !self.tracked.contains_key(&v.key) {
                let mut v = v.clone();
                v.init = v.init.as_ref().map(|e| self.full_expr(e));
                kept.push(v);
                continue;
            }
            self.changed = true;
            let value = match &v.init {
                Some(init) => self.assigned_value(init),
                None => PtrVal::Unknown {
                    why: format!("`{}` is declared without a value", v.name),
                    code: codes::POINTER_NOT_AFFINE,
                },
            };
            self.state.insert(v.key.clone(), value);
        }
        if kept.is_empty() {
            CStmt::Null(loc.clone())
        } else {
            CStmt::Decl(kept, loc.clone())
        }
    }

    /// The value a pointer takes from `rhs` (`a`, `&a[k]`, `q + c`, ...).
    fn assigned_value(&mut self, rhs: &CExpr) -> PtrVal {
        let mut fx = Effects::default();
        let value = match self.ptr_expr(rhs, &mut fx) {
            Some(p) if p.extra.is_empty() => PtrVal::At {
                base: p.base,
                offset: p.offset,
            },
            Some(_) => PtrVal::Unknown {
                why: format!(
                    "it is set at {} to a data-dependent position",
                    where_(&rhs.loc)
                ),
                code: codes::POINTER_NOT_AFFINE,
            },
            None => PtrVal::Unknown {
                why: unknown_source(rhs),
                code: codes::POINTER_ESCAPES,
            },
        };
        self.apply(fx, &rhs.loc);
        value
    }

    /// Moves tracked pointer `key` by `amount` (an integer expression).
    fn advance(&mut self, key: &str, amount: Result<Poly, String>, loc: &Loc) {
        let Some(old) = self.state.get(key).cloned() else {
            return;
        };
        let new = match (old, amount) {
            (PtrVal::At { base, offset }, Ok(d)) => match offset.add(&d) {
                Ok(offset) => PtrVal::At { base, offset },
                Err(why) => PtrVal::Unknown {
                    why: format!("its advance at {} is not linear: {why}", where_(loc)),
                    code: codes::POINTER_NOT_AFFINE,
                },
            },
            (PtrVal::At { .. }, Err(why)) => PtrVal::Unknown {
                why: format!(
                    "it is advanced at {} by a data-dependent amount ({why})",
                    where_(loc)
                ),
                code: codes::POINTER_NOT_AFFINE,
            },
            (unknown, _) => unknown,
        };
        self.state.insert(key.to_string(), new);
    }

    /// A whole expression statement: pointer bookkeeping is dropped,
    /// anything else is rewritten.
    fn expr_stmt(&mut self, e: &CExpr) -> CStmt {
        let s = strip(e);
        let tracked = |x: &CExpr| match &strip(x).kind {
            CExprKind::Ref(r) if self.tracked.contains_key(&r.key) => Some(r.key.clone()),
            _ => None,
        };
        match &s.kind {
            CExprKind::Binary {
                op: CBinOp::Assign,
                lhs,
                rhs,
            } if tracked(lhs).is_some() => {
                let key = tracked(lhs).unwrap_or_default();
                let value = self.assigned_value(rhs);
                self.state.insert(key, value);
            }
            CExprKind::Binary {
                op: CBinOp::CompoundAssign(op @ (ArithOp::Add | ArithOp::Sub)),
                lhs,
                rhs,
            } if tracked(lhs).is_some() => {
                let key = tracked(lhs).unwrap_or_default();
                let sign = if *op == ArithOp::Add { 1 } else { -1 };
                let amount = self
                    .offset_of(rhs)
                    .and_then(|p| p.scale(sign).map_err(|w| w.to_string()));
                self.advance(&key, amount, &s.loc);
            }
            CExprKind::Unary {
                op: op @ (CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec),
                arg,
            } if tracked(arg).is_some() => {
                let key = tracked(arg).unwrap_or_default();
                let step = if matches!(op, CUnOp::PostInc | CUnOp::PreInc) {
                    1
                } else {
                    -1
                };
                self.advance(&key, Ok(Poly::constant(step)), &s.loc);
            }
            _ => {
                self.note_write(s);
                return CStmt::Expr(self.full_expr(e));
            }
        }
        self.changed = true;
        CStmt::Null(e.loc.clone())
    }

    /// Records the pointer an assignment or increment writes through.
    fn note_write(&mut self, s: &CExpr) {
        let target = match &s.kind {
            CExprKind::Binary {
                op: CBinOp::Assign | CBinOp::CompoundAssign(_),
                lhs,
                ..
            } => lhs,
            CExprKind::Unary {
                op: CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec,
                arg,
            } => arg,
            _ => return,
        };
        let mut cur = strip(target);
        loop {
            cur = match &cur.kind {
                CExprKind::Unary {
                    op: CUnOp::Unsupported("*"),
                    arg,
                } => strip(arg),
                CExprKind::Subscript { base, .. } => strip(base),
                CExprKind::Unary { arg, .. } => strip(arg),
                CExprKind::Binary {
                    op: CBinOp::Add | CBinOp::Sub,
                    lhs,
                    rhs,
                } => strip(if is_pointer(&lhs.ty) { lhs } else { rhs }),
                _ => break,
            };
        }
        let CExprKind::Ref(r) = &cur.kind else { return };
        let base = match self.state.get(&r.key) {
            Some(PtrVal::At { base, .. }) => base.key.clone(),
            _ if self.arrays.contains_key(&r.key) => r.key.clone(),
            _ => return,
        };
        self.writes
            .push((r.key.clone(), base, s.loc.clone(), self.branches.clone()));
    }

    /// Two different pointers (or a pointer and its array's name) that
    /// write one array: refused, their regions are not proven disjoint.
    /// Writes on the two branches of one `if` never both run, and writes
    /// made in different scopes (the caller, and each call of a helper it
    /// passes the array to, darknet's `gemm_cpu`) are sequenced by the
    /// call itself: only two writers of one scope are compared.
    fn check_overlaps(&mut self) {
        let mut seen: Vec<(String, String, Loc, Branches)> = Vec::new();
        let mut reported = HashSet::new();
        for (ptr, base, loc, branches) in std::mem::take(&mut self.writes) {
            let clash = seen.iter().find(|(p, b, _, other)| {
                *b == base
                    && *p != ptr
                    && call_scope(p) == call_scope(&ptr)
                    && !exclusive(other, &branches)
            });
            let clash = clash.map(|(p, _, at, _)| (p.clone(), at.clone()));
            seen.push((ptr.clone(), base.clone(), loc.clone(), branches));
            match clash {
                None => {}
                Some((other, at)) if reported.insert(base.clone()) => {
                    let name = |k: &str| k.split('@').next().unwrap_or(k).to_string();
                    let message = format!(
                        "`{}` and `{}` both write array `{}` (first at {}); their regions may overlap",
                        name(&other),
                        name(&ptr),
                        name(&base),
                        where_(&at)
                    );
                    self.error(codes::POINTER_OVERLAP, &loc, message);
                }
                Some(_) => {}
            }
        }
    }

    /// Rewrites one full expression and applies its pointer advances.
    fn full_expr(&mut self, e: &CExpr) -> CExpr {
        let mut fx = Effects::default();
        let out = self.rewrite(e, &mut fx);
        self.apply(fx, &e.loc);
        out
    }

    fn apply(&mut self, fx: Effects, loc: &Loc) {
        for (key, (amount, count)) in fx.advances {
            let reads = fx.reads.get(&key).copied().unwrap_or(0);
            if count > 1 || reads > 1 {
                let name = self.tracked.get(&key).cloned().unwrap_or_default();
                self.error(
                    codes::SIDE_EFFECT_IN_EXPRESSION,
                    loc,
                    format!("pointer `{name}` is advanced and used again in one expression (unsequenced)"),
                );
            }
            self.changed = true;
            self.advance(&key, Ok(Poly::constant(amount)), loc);
        }
    }
}

impl Normaliser {
    /// A copy of `e` with dereferences of walking pointers as subscripts.
    fn rewrite(&mut self, e: &CExpr, fx: &mut Effects) -> CExpr {
        match &e.kind {
            CExprKind::Unary {
                op: CUnOp::Unsupported("*"),
                arg,
            } if self.pointer_like(arg) => {
                return match self.ptr_expr(arg, fx) {
                    Some(p) => self.element(e, p, None),
                    None => e.clone(),
                };
            }
            CExprKind::Subscript { base, index } if self.walks(base) => {
                return match self.ptr_expr(base, fx) {
                    Some(p) => {
                        let index = self.rewrite(index, fx);
                        self.element(e, p, Some(index))
                    }
                    None => e.clone(),
                };
            }
            CExprKind::Ref(r) if self.tracked.contains_key(&r.key) && is_pointer(&e.ty) => {
                self.escapes(r, &e.loc);
            }
            _ => {}
        }
        let mut out = e.clone();
        // A member's base is left as written (a struct, not a walk).
        if !matches!(out.kind, CExprKind::Member { .. }) {
            out.map_children(&mut |x| self.rewrite(x, fx));
        }
        out
    }

    /// Whether a subscript's base is a walking pointer (not an array or
    /// an unmoved pointer parameter, whose subscripts are left as read).
    fn walks(&self, base: &CExpr) -> bool {
        match &strip(base).kind {
            CExprKind::Ref(r) => self.tracked.contains_key(&r.key),
            CExprKind::Binary { .. } | CExprKind::Unary { .. } => is_pointer(&base.ty),
            _ => false,
        }
    }

    /// Whether a dereferenced expression is built from a tracked pointer
    /// or a kernel array (anything else is left to the lowering).
    fn pointer_like(&self, e: &CExpr) -> bool {
        let mut found = false;
        walk_expr(e, &mut |n| {
            if let CExprKind::Ref(r) = &n.kind {
                found |= self.tracked.contains_key(&r.key) || self.arrays.contains_key(&r.key);
            }
        });
        found
    }

    fn escapes(&mut self, r: &DeclRef, loc: &Loc) {
        if self.reported.insert(r.key.clone()) {
            self.error(
                codes::POINTER_ESCAPES,
                loc,
                format!(
                    "pointer `{}` is used as a value (passed, stored, compared or subtracted), so its accesses are unknown",
                    r.name
                ),
            );
        }
    }

    /// `base[offset + index]` (one index per level of a multi-dimensional
    /// array), the offset as placeholders until the loops are summarised.
    fn element(&mut self, e: &CExpr, p: PtrExpr, index: Option<CExpr>) -> CExpr {
        self.changed = true;
        let id = self.offsets.len();
        self.offsets.push(p.offset);
        let shape = self.extents.get(&p.base.key).cloned().unwrap_or_default();
        let levels = shape.len();
        self.shapes.push(shape);
        let int = CType::Scalar(ScalarType::I64);
        let at = |kind| CExpr {
            kind,
            ty: int.clone(),
            loc: e.loc.clone(),
        };
        let marker = |level: usize| {
            at(CExprKind::Unsupported(format!(
                "{OFFSET_MARKER}{id}:{level}"
            )))
        };
        let row_ty = CType::Array {
            elem: Box::new(e.ty.clone()),
            len: None,
        };
        let mut base = CExpr {
            kind: CExprKind::Ref(p.base),
            ty: CType::Pointer {
                pointee: Box::new(e.ty.clone()),
                restrict: false,
            },
            loc: e.loc.clone(),
        };
        for level in 0..levels {
            base = CExpr {
                kind: CExprKind::Subscript {
                    base: Box::new(base),
                    index: Box::new(marker(level)),
                },
                ty: row_ty.clone(),
                loc: e.loc.clone(),
            };
        }
        let mut idx = marker(levels);
        for term in p.extra.into_iter().chain(index) {
            idx = at(CExprKind::Binary {
                op: CBinOp::Add,
                lhs: Box::new(idx),
                rhs: Box::new(term),
            });
        }
        CExpr {
            kind: CExprKind::Subscript {
                base: Box::new(base),
                index: Box::new(idx),
            },
            ty: e.ty.clone(),
            loc: e.loc.clone(),
        }
    }
}

impl Normaliser {
    /// The value of a pointer expression, recording `p++`-style effects.
    /// `None` when it is not a pointer into a kernel array.
    fn ptr_expr(&mut self, e: &CExpr, fx: &mut Effects) -> Option<PtrExpr> {
        let s = strip(e);
        match &s.kind {
            CExprKind::Ref(r) => self.ptr_ref(r, &s.loc, fx),
            CExprKind::Subscript { .. } if matches!(s.ty, CType::Array { .. }) => {
                self.subscript_chain(s, fx)
            }
            CExprKind::Unary { op, arg } => {
                let step = match op {
                    CUnOp::PostInc | CUnOp::PreInc => 1,
                    CUnOp::PostDec | CUnOp::PreDec => -1,
                    CUnOp::Unsupported("&") => return self.address_of(arg, fx),
                    _ => return None,
                };
                let CExprKind::Ref(r) = &strip(arg).kind else {
                    return None;
                };
                self.tracked.get(&r.key)?;
                let mut p = self.ptr_ref(r, &s.loc, fx)?;
                let entry = fx.advances.entry(r.key.clone()).or_insert((0, 0));
                entry.0 += step;
                entry.1 += 1;
                if matches!(op, CUnOp::PreInc | CUnOp::PreDec) {
                    p.offset = p.offset.add(&Poly::constant(step)).ok()?;
                }
                Some(p)
            }
            CExprKind::Binary {
                op: op @ (CBinOp::Add | CBinOp::Sub),
                lhs,
                rhs,
            } => {
                let (ptr, int) = if is_pointer(&lhs.ty) {
                    (lhs, rhs)
                } else if *op == CBinOp::Add && is_pointer(&rhs.ty) {
                    (rhs, lhs)
                } else {
                    return None;
                };
                if is_pointer(&int.ty) {
                    return None;
                }
                let mut p = self.ptr_expr(ptr, fx)?;
                let sign = if *op == CBinOp::Add { 1 } else { -1 };
                match self
                    .offset_of(int)
                    .and_then(|o| o.scale(sign).map_err(|w| w.to_string()))
                {
                    Ok(o) => p.offset = p.offset.add(&o).ok()?,
                    Err(_) => {
                        let term = self.rewrite(int, fx);
                        p.extra.push(if sign > 0 { term } else { negate(term) });
                    }
                }
                Some(p)
            }
            _ => None,
        }
    }

    fn ptr_ref(&mut self, r: &DeclRef, loc: &Loc, fx: &mut Effects) -> Option<PtrExpr> {
        if self.tracked.contains_key(&r.key) {
            *fx.reads.entry(r.key.clone()).or_insert(0) += 1;
            return match self.state.get(&r.key).cloned() {
                Some(PtrVal::At { base, offset }) => Some(PtrExpr {
                    base,
                    offset,
                    extra: Vec::new(),
                }),
                Some(PtrVal::Unknown { why, code }) => {
                    if self.reported.insert(r.key.clone()) {
                        let message =
                            format!("pointer `{}` has no affine value here: {why}", r.name);
                        self.error(code, loc, message);
                    }
                    None
                }
                None => None,
            };
        }
        let base = self.arrays.get(&r.key)?.clone();
        Some(PtrExpr {
            base,
            offset: Poly::default(),
            extra: Vec::new(),
        })
    }

    /// The address `a[i][j]...` names (an element under `&`, or a row of
    /// a multi-dimensional array): the indices times the row sizes.
    fn subscript_chain(&mut self, e: &CExpr, fx: &mut Effects) -> Option<PtrExpr> {
        let mut indices = Vec::new();
        let mut cur = e;
        while let CExprKind::Subscript { base, index } = &cur.kind {
            indices.push(&**index);
            cur = strip(base);
        }
        indices.reverse();
        let root = match &cur.kind {
            CExprKind::Ref(r) => r.key.clone(),
            _ => return None,
        };
        let extents = self.extents.get(&root).cloned().unwrap_or_default();
        if indices.len() > extents.len() + 1 {
            return None;
        }
        let mut p = self.ptr_expr(cur, fx)?;
        for (level, index) in indices.into_iter().enumerate() {
            let row = extents[level..]
                .iter()
                .try_fold(Poly::constant(1), |acc, x| acc.mul(x).ok())?;
            match self.offset_of(index) {
                Ok(o) => p.offset = p.offset.add(&o.mul(&row).ok()?).ok()?,
                Err(_) if row.as_constant() == Some(1) => p.extra.push(self.rewrite(index, fx)),
                Err(_) => return None,
            }
        }
        Some(p)
    }

    /// `&a[k]`, `&p[k]`, `&*p`.
    fn address_of(&mut self, arg: &CExpr, fx: &mut Effects) -> Option<PtrExpr> {
        match &strip(arg).kind {
            CExprKind::Subscript { .. } => self.subscript_chain(strip(arg), fx),
            CExprKind::Unary {
                op: CUnOp::Unsupported("*"),
                arg,
            } => self.ptr_expr(arg, fx),
            _ => None,
        }
    }
}

fn negate(e: CExpr) -> CExpr {
    CExpr {
        ty: e.ty.clone(),
        loc: e.loc.clone(),
        kind: CExprKind::Unary {
            op: CUnOp::Minus,
            arg: Box::new(e),
        },
    }
}

impl Normaliser {
    /// Both branches from the same state; a pointer they leave different
    /// has no affine value after the `if`.
    fn if_stmt(
        &mut self,
        cond: &CExpr,
        then_branch: &CStmt,
        else_branch: Option<&CStmt>,
        loc: &Loc,
    ) -> CStmt {
        let cond_out = self.full_expr(cond);
        let before = self.state.clone();
        let number = self.ifs;
        self.ifs += 1;
        self.branches.push((number, true));
        let then_out = self.stmt(then_branch);
        self.branches.pop();
        let after_then = std::mem::replace(&mut self.state, before);
        self.branches.push((number, false));
        let else_out = else_branch.map(|s| Box::new(self.stmt(s)));
        self.branches.pop();
        let data_dependent = !self.is_affine_guard(cond);
        let keys: BTreeSet<String> = after_then.keys().cloned().collect();
        for key in keys {
            let a = after_then.get(&key).cloned();
            let b = self.state.get(&key).cloned();
            if a == b {
                continue;
            }
            let why = match (&a, &b) {
                (Some(PtrVal::At { base: x, .. }), Some(PtrVal::At { base: y, .. }))
                    if x.key != y.key =>
                {
                    format!(
                        "it points into `{}` on one path and `{}` on the other of the `if` at {}",
                        x.name,
                        y.name,
                        where_(loc)
                    )
                }
                (Some(unknown @ PtrVal::Unknown { .. }), _) => {
                    self.state.insert(key.clone(), unknown.clone());
                    continue;
                }
                (_, Some(PtrVal::Unknown { .. })) => continue,
                _ if data_dependent => format!(
                    "it is advanced under the data-dependent `if` at {}",
                    where_(loc)
                ),
                _ => format!(
                    "it is advanced on only one path of the `if` at {}",
                    where_(loc)
                ),
            };
            self.state.insert(
                key,
                PtrVal::Unknown {
                    why,
                    code: codes::POINTER_NOT_AFFINE,
                },
            );
        }
        CStmt::If {
            cond: cond_out,
            then_branch: Box::new(then_out),
            else_branch: else_out,
            loc: loc.clone(),
        }
    }
}

impl Normaliser {
    /// Whether `c` compares affine integer expressions only (`i == 0`,
    /// `j < n`): a guard on the iteration space, not on data.
    fn is_affine_guard(&self, c: &CExpr) -> bool {
        let mut data = false;
        walk_expr(c, &mut |n| {
            if let CExprKind::Ref(r) = &n.kind {
                data |= self.data_locals.contains(&r.key);
            }
            data |= matches!(
                n.kind,
                CExprKind::Subscript { .. }
                    | CExprKind::Call { .. }
                    | CExprKind::Unary {
                        op: CUnOp::Unsupported(_),
                        ..
                    }
            ) || n.ty.scalar().is_some_and(|s| s.is_float());
        });
        !data
    }
}

/// `for (i = lo; i < hi; i++)` and its variants, with a step of ±1.
fn loop_header(n: &mut Normaliser, init: &CStmt, cond: &CExpr, inc: &CExpr) -> Option<Header> {
    let (iter, start) = match init {
        CStmt::Decl(vars, _) if vars.len() == 1 => (vars[0].key.clone(), vars[0].init.clone()?),
        CStmt::Expr(e) => match &strip(e).kind {
            CExprKind::Binary {
                op: CBinOp::Assign,
                lhs,
                rhs,
            } => match &strip(lhs).kind {
                CExprKind::Ref(r) => (r.key.clone(), (**rhs).clone()),
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };
    let is_iter = |e: &CExpr| matches!(&strip(e).kind, CExprKind::Ref(r) if r.key == iter);
    let step = match &strip(inc).kind {
        CExprKind::Unary { op, arg } if is_iter(arg) => match op {
            CUnOp::PostInc | CUnOp::PreInc => 1,
            CUnOp::PostDec | CUnOp::PreDec => -1,
            _ => return None,
        },
        CExprKind::Binary {
            op: CBinOp::CompoundAssign(op @ (ArithOp::Add | ArithOp::Sub)),
            lhs,
            rhs,
        } if is_iter(lhs) => {
            let c = n.offset_of(rhs).ok()?.as_constant()?;
            if *op == ArithOp::Add {
                c
            } else {
                -c
            }
        }
        _ => return None,
    };
    let CExprKind::Binary { op, lhs, rhs } = &strip(cond).kind else {
        return None;
    };
    let (op, bound) = if is_iter(lhs) {
        (*op, rhs)
    } else if is_iter(rhs) {
        let flipped = match op {
            CBinOp::Lt => CBinOp::Gt,
            CBinOp::Gt => CBinOp::Lt,
            CBinOp::Le => CBinOp::Ge,
            CBinOp::Ge => CBinOp::Le,
            other => *other,
        };
        (flipped, lhs)
    } else {
        return None;
    };
    let iter_ref = if is_iter(lhs) { strip(lhs) } else { strip(rhs) };
    n.leaves
        .entry(iter.clone())
        .or_insert_with(|| iter_ref.clone());
    let bound = n.offset_of(bound).ok()?;
    let end = match (op, step) {
        (CBinOp::Lt | CBinOp::Ne, 1) | (CBinOp::Gt | CBinOp::Ne, -1) => bound,
        (CBinOp::Le, 1) => bound.add(&Poly::constant(1)).ok()?,
        (CBinOp::Ge, -1) => bound.add(&Poly::constant(-1)).ok()?,
        _ => return None,
    };
    Some(Header {
        iter,
        start: n.offset_of(&start).ok()?,
        end,
        step,
    })
}

impl Normaliser {
    /// Summarises a loop: each pointer's entry offset becomes a symbol,
    /// the body is walked once, and the symbol is solved afterwards.
    fn for_stmt(
        &mut self,
        init: &CStmt,
        cond: &CExpr,
        inc: &CExpr,
        body: &CStmt,
        loc: &Loc,
    ) -> CStmt {
        let header = loop_header(self, init, cond, inc);
        let init_out = self.stmt(init);
        let cond_out = self.full_expr(cond);
        let inc_out = self.full_expr(inc);
        self.loops += 1;
        let tag = self.loops;
        let entry = self.state.clone();
        let symbol = |key: &str| format!("\u{1}S{tag}:{key}");
        // A pointer the loop never writes keeps its entry value, spelled
        // out rather than as a symbol, so that a pointer reassigned from it
        // inside the loop (`pIn2 = pInB + …`) is compared by value.
        for (key, v) in self.state.iter_mut() {
            if let PtrVal::At { offset, .. } = v {
                if body.writes(key) || inc.writes(key) {
                    *offset = Poly::var(&symbol(key));
                }
            }
        }
        let first = self.offsets.len();
        let body_out = self.stmt(body);
        let end = std::mem::take(&mut self.state);
        let mut inside: Vec<(String, Poly)> = Vec::new();
        let mut after: HashMap<String, PtrVal> = HashMap::new();
        // In key order: the diagnostics and the offsets found inside come
        // out the same on every run.
        let mut pointers: Vec<(&String, &PtrVal)> = end.iter().collect();
        pointers.sort_by(|a, b| a.0.cmp(b.0));
        for (key, e1) in pointers {
            let e0 = entry.get(key);
            let value = self.summarise(e0, e1, &symbol(key), header.as_ref(), loc);
            match value {
                Ok((ins, aft)) => {
                    if let Some(ins) = ins {
                        inside.push((symbol(key), ins));
                    }
                    after.insert(key.clone(), aft);
                }
                Err(why) => {
                    let sym = symbol(key);
                    if self.offsets[first..].iter().any(|o| mentions(o, &sym))
                        && self.reported.insert(key.clone())
                    {
                        let name = self.tracked.get(key).cloned().unwrap_or_default();
                        let message =
                            format!("pointer `{name}` has no affine value in this loop: {why}");
                        self.error(codes::POINTER_NOT_AFFINE, loc, message);
                    }
                    after.insert(
                        key.clone(),
                        PtrVal::Unknown {
                            why,
                            code: codes::POINTER_NOT_AFFINE,
                        },
                    );
                }
            }
        }
        self.resolve(first, &inside, &mut after, header.as_ref(), (tag, loc));
        self.state = after;
        CStmt::For {
            init: Box::new(init_out),
            cond: cond_out,
            inc: inc_out,
            body: Box::new(body_out),
            loc: loc.clone(),
        }
    }

    /// For one pointer: its offset inside the loop (in terms of the
    /// iterator, `None` when the entry value is unused) and after it.
    fn summarise(
        &mut self,
        e0: Option<&PtrVal>,
        e1: &PtrVal,
        sym: &str,
        header: Option<&Header>,
        loc: &Loc,
    ) -> Result<(Option<Poly>, PtrVal), String> {
        let (base, offset) = match e1 {
            PtrVal::At { base, offset } => (base, offset),
            // Lost in the body: an error if the body used its entry value.
            PtrVal::Unknown { why, .. } if self.offsets.iter().any(|o| mentions(o, sym)) => {
                return Err(why.clone());
            }
            PtrVal::Unknown { .. } => return Ok((None, e1.clone())),
        };
        if !mentions(offset, sym) {
            // Reassigned in the body: its entry value must not be used,
            // unless each reassignment sets what the next trip starts from.
            if self.offsets[..].iter().any(|o| mentions(o, sym)) {
                return match rotated(e0, base, offset, header) {
                    Some(inside) => Ok((Some(inside), e1.clone())),
                    None => Err("it is reassigned inside the loop after being used, so its value is carried from one iteration to the next".into()),
                };
            }
            return Ok((None, e1.clone()));
        }
        let Some(PtrVal::At { offset: o0, .. }) = e0 else {
            return Ok((None, e1.clone()));
        };
        let d = offset.sub(&Poly::var(sym)).map_err(|w| w.to_string())?;
        if mentions(&d, sym) {
            return Err(format!(
                "its advance in the loop at {} is not linear",
                where_(loc)
            ));
        }
        if d.terms.is_empty() {
            return Ok((
                Some(o0.clone()),
                PtrVal::At {
                    base: base.clone(),
                    offset: o0.clone(),
                },
            ));
        }
        let h = header.ok_or_else(|| {
            format!(
                "it advances in the loop at {}, whose trip count is not a plain range",
                where_(loc)
            )
        })?;
        // Entry symbols are `\u{1}S…`; other `\u{1}` keys (struct fields,
        // fresh counters) are ordinary sizes and iterators.
        if mentions(&d, &h.iter) || d.vars().any(|v| v.starts_with("\u{1}S")) {
            return Err(format!(
                "its advance in the loop at {} depends on the loop's iterator or on another pointer",
                where_(loc)
            ));
        }
        let k = Poly::var(&h.iter)
            .sub(&h.start)
            .and_then(|p| p.scale(h.step));
        let trips = h.end.sub(&h.start).and_then(|p| p.scale(h.step));
        let inside = k.and_then(|k| d.mul(&k)).and_then(|dk| o0.add(&dk));
        let after = trips.and_then(|t| d.mul(&t)).and_then(|dt| o0.add(&dt));
        match (inside, after) {
            (Ok(i), Ok(a)) => Ok((
                Some(i),
                PtrVal::At {
                    base: base.clone(),
                    offset: a,
                },
            )),
            _ => Err(format!(
                "its offset in the loop at {} overflows",
                where_(loc)
            )),
        }
    }

    /// Substitutes the solved entry symbols into the offsets made in the
    /// body and into the values after the loop; a value after the loop
    /// still naming the iterator is read at the last iteration.
    fn resolve(
        &mut self,
        first: usize,
        inside: &[(String, Poly)],
        after: &mut HashMap<String, PtrVal>,
        header: Option<&Header>,
        (tag, loc): (usize, &Loc),
    ) {
        let own = format!("\u{1}S{tag}:");
        let substitute = |p: &Poly| -> Option<Poly> {
            inside
                .iter()
                .try_fold(p.clone(), |acc, (s, v)| subst(&acc, s, v))
        };
        for i in first..self.offsets.len() {
            if let Some(p) = substitute(&self.offsets[i]) {
                self.offsets[i] = p;
            }
        }
        for v in after.values_mut() {
            let PtrVal::At { offset, .. } = v else {
                continue;
            };
            let solved = substitute(offset).and_then(|p| match header {
                Some(h) if mentions(&p, &h.iter) => {
                    let last = h.end.sub(&Poly::constant(h.step)).ok()?;
                    subst(&p, &h.iter, &last)
                }
                _ => Some(p),
            });
            *v = match solved {
                Some(p) if !p.vars().any(|x| x.starts_with(&own)) => PtrVal::At {
                    base: match v {
                        PtrVal::At { base, .. } => base.clone(),
                        PtrVal::Unknown { .. } => continue,
                    },
                    offset: p,
                },
                _ => PtrVal::Unknown {
                    why: format!("its value after the loop at {} is not affine", where_(loc)),
                    code: codes::POINTER_NOT_AFFINE,
                },
            };
        }
    }

    /// Replaces each placeholder index by its offset spelled in C, split
    /// into one index per level for a multi-dimensional array.
    fn fill_offsets(&mut self, body: &mut [CStmt]) {
        let offsets = std::mem::take(&mut self.offsets);
        let shapes = std::mem::take(&mut self.shapes);
        let split: Vec<Option<Vec<Poly>>> = offsets
            .iter()
            .zip(&shapes)
            .map(|(o, shape)| split_rows(o, shape))
            .collect();
        let leaves = std::mem::take(&mut self.leaves);
        let mut unresolved: Vec<Loc> = Vec::new();
        walk_stmts_mut(body, &mut |e: &mut CExpr| {
            walk_expr_mut(e, &mut |n: &mut CExpr| {
                let CExprKind::Unsupported(marker) = &n.kind else {
                    return;
                };
                let Some((id, level)) = marker
                    .strip_prefix(OFFSET_MARKER)
                    .and_then(|rest| rest.split_once(':'))
                    .and_then(|(i, l)| Some((i.parse::<usize>().ok()?, l.parse::<usize>().ok()?)))
                else {
                    return;
                };
                let spelled = split
                    .get(id)
                    .and_then(|s| s.as_ref()?.get(level))
                    .and_then(|p| spell(p, &leaves, &n.loc));
                match spelled {
                    Some(c) => *n = c,
                    None => unresolved.push(n.loc.clone()),
                }
            })
        });
        if !self.diagnostics.is_empty() {
            return;
        }
        for loc in unresolved {
            self.error(
                codes::POINTER_NOT_AFFINE,
                &loc,
                "pointer offset could not be resolved to loop iterators and sizes, or split into the rows of its array".into(),
            );
        }
    }
}

/// A flat offset into an array with inner extents `shape` as one index
/// per level: each level takes the terms that are multiples of the size
/// of its rows (a product of extent names, or a constant). `None` when a
/// row size is neither.
fn split_rows(offset: &Poly, shape: &[Poly]) -> Option<Vec<Poly>> {
    let Some((_, inner)) = shape.split_first() else {
        return Some(vec![offset.clone()]);
    };
    let row = shape
        .iter()
        .try_fold(Poly::constant(1), |acc, e| acc.mul(e).ok())?;
    let (mut q, mut r) = (Poly::default(), Poly::default());
    if let Some(c) = row.as_constant().filter(|c| *c > 0) {
        for (m, &coef) in &offset.terms {
            let (qc, rc) = if m.is_empty() {
                (coef.div_euclid(c), coef.rem_euclid(c))
            } else if coef % c == 0 {
                (coef / c, 0)
            } else {
                (0, coef)
            };
            q = q.add(&monomial(m, qc)).ok()?;
            r = r.add(&monomial(m, rc)).ok()?;
        }
    } else {
        let (rm, &rc) = row.terms.iter().next().filter(|_| row.terms.len() == 1)?;
        if rc != 1 {
            return None;
        }
        for (m, &coef) in &offset.terms {
            let mut rest = m.clone();
            let whole = rm.iter().all(|v| match rest.iter().position(|x| x == v) {
                Some(at) => {
                    rest.remove(at);
                    true
                }
                None => false,
            });
            if whole {
                q = q.add(&monomial(&rest, coef)).ok()?;
            } else {
                r = r.add(&monomial(m, coef)).ok()?;
            }
        }
    }
    let mut out = vec![q];
    out.extend(split_rows(&r, inner)?);
    Some(out)
}

fn monomial(m: &[String], c: i64) -> Poly {
    let mut p = Poly::default();
    if c != 0 {
        p.terms.insert(m.to_vec(), c);
    }
    p
}

/// A polynomial as a C integer expression over the leaves' references.
fn spell(p: &Poly, leaves: &HashMap<String, CExpr>, loc: &Loc) -> Option<CExpr> {
    let int = CType::Scalar(ScalarType::I64);
    let mk = |kind| CExpr {
        kind,
        ty: int.clone(),
        loc: loc.clone(),
    };
    let lit = |v: i64| mk(CExprKind::Int(IntValue::Fits(v)));
    let mut sum: Option<CExpr> = None;
    for (m, &c) in &p.terms {
        let mut term = lit(c);
        for v in m {
            let mut leaf = leaves.get(v)?.clone();
            leaf.loc = loc.clone();
            term = mk(CExprKind::Binary {
                op: CBinOp::Mul,
                lhs: Box::new(term),
                rhs: Box::new(leaf),
            });
        }
        sum = Some(match sum {
            None => term,
            Some(s) => mk(CExprKind::Binary {
                op: CBinOp::Add,
                lhs: Box::new(s),
                rhs: Box::new(term),
            }),
        });
    }
    Some(sum.unwrap_or_else(|| lit(0)))
}

#[cfg(test)]
mod tests {
    //! The normalisation on real C (parsed by libclang), and its pure parts.
    use super::*;
    use crate::test_util::lowered;

    #[test]
    fn a_pointer_reset_in_an_outer_loop_walks_the_inner_one() {
        let body = lowered(
            "void k(int n, int t, float *x, float *h, float *y) {
               float *p_x = x, *p_h; float *p_y = &y[0];
               for (int i = 0; i < n; i++) {
                 p_h = h; *p_y = 0;
                 for (int j = 0; j < t; j++) *p_y += *p_h++ * *p_x++;
                 p_y++; p_x -= t - 1;
               }
             }",
        )
        .expect("lifts");
        assert!(body.contains("y[i] = (y[i] + (h[j] * x[i + j])"), "{body}");
    }

    #[test]
    fn a_pointer_keeps_its_value_after_a_loop_and_across_rows() {
        // Two loops over one pointer; a parameter stride `p += n`.
        let body = lowered(
            "void k(int n, float *a, float *b) {
               float *p = a;
               for (int i = 0; i < n; i++) *p++ = 1;
               for (int i = 0; i < n; i++) *p++ = 2;
               float *q = b;
               for (int i = 0; i < n; i++) { q[1] = 3; q += n; }
             }",
        )
        .expect("lifts");
        assert!(body.contains("a[i] = f32(1)"), "{body}");
        assert!(body.contains("a[i_1 + n] = f32(2)"), "{body}");
        assert!(body.contains("b[i_2][1] = f32(3)"), "{body}");
    }

    #[test]
    fn a_two_dimensional_array_walked_flat_gets_rows_and_columns_back() {
        let body = lowered(
            "void k(float a[3][4]) {
               float *p = &a[0][0];
               for (int i = 0; i < 3; i++)
                 for (int j = 0; j < 4; j++) *p++ = i;
             }",
        )
        .expect("lifts");
        assert!(body.contains("a[i][j] ="), "{body}");
    }

    #[test]
    fn what_stays_unknown_is_refused_with_its_reason() {
        let two_arrays = "void k(int n, int f, float *a, float *b, float *y) {
            float *p; if (f) p = a; else p = b;
            for (int i = 0; i < n; i++) y[i] = *p++; }";
        let data_advance = "void k(int n, float *x, int *s, float *y) {
            float *p = x; for (int i = 0; i < n; i++) { y[i] = *p; p += s[i]; } }";
        let cond_advance = "void k(int n, float *x, float *y) {
            float *p = x; for (int i = 0; i < n; i++) { if (x[i] > 0) p++; y[i] = *p; } }";
        let escapes = "void g(float *p); void k(int n, float *y) {
            float *p = y; for (int i = 0; i < n; i++) { *p++ = 0; g(p); } }";
        let overlap = "void k(int n, float *y) {
            float *a = y, *b = y + 1; for (int i = 0; i < n; i++) { *a++ = 0; *b++ = 1; } }";
        let unsequenced = "void k(int n, float *x, float *y) {
            float *p = x; for (int i = 0; i < n; i++) y[i] = *p++ + *p++; }";
        assert_eq!(lowered(two_arrays), Err(vec!["TL025"]));
        assert_eq!(lowered(data_advance), Err(vec!["TL025"]));
        assert_eq!(lowered(cond_advance), Err(vec!["TL025"]));
        assert_eq!(lowered(escapes), Err(vec!["TL026"]));
        assert_eq!(lowered(overlap), Err(vec!["TL027"]));
        assert_eq!(lowered(unsequenced), Err(vec!["TL032"]));
    }

    #[test]
    fn a_parameter_advanced_in_an_initialiser_or_under_a_cast_is_walked() {
        let body = lowered(
            "typedef struct { int numCols; float *data; } mat;
             void k(int n, const short *p, int *y, const mat *b, float *z) {
               for (int i = 0; i < n; i++) { int v = (int) *p++ * 3; y[i] = v; }
               float *q = b->data;
               for (int i = 0; i < n; i++) { z[i] = *q; q += b->numCols; }
             }",
        )
        .expect("lifts");
        assert!(body.contains("v = (i32(p[i]) * 3):i32"), "{body}");
        // A struct field (a `\u{1}field` key) is a size, not another pointer.
        assert!(body.contains("z[i_1] = b_data[i_1][0]"), "{body}");
    }

    fn poly(terms: &[(&[&str], i64)]) -> Poly {
        let mut p = Poly::default();
        for (m, c) in terms {
            let mut m: Vec<String> = m.iter().map(|s| s.to_string()).collect();
            m.sort();
            p.terms.insert(m, *c);
        }
        p
    }

    #[test]
    fn flat_offsets_split_by_named_and_constant_row_sizes() {
        // i*M + j + M*k + 2 over rows of M: row i + k, column j + 2.
        let offset = poly(&[(&["i", "M"], 1), (&["j"], 1), (&["M", "k"], 1), (&[], 2)]);
        let split = split_rows(&offset, &[Poly::var("M")]).expect("splits");
        assert_eq!(split[0], poly(&[(&["i"], 1), (&["k"], 1)]));
        assert_eq!(split[1], poly(&[(&["j"], 1), (&[], 2)]));
        // 5i + j + 7 over rows of 5: row i + 1, column j + 2.
        let offset = poly(&[(&["i"], 5), (&["j"], 1), (&[], 7)]);
        let split = split_rows(&offset, &[Poly::constant(5)]).expect("splits");
        assert_eq!(
            split,
            vec![
                poly(&[(&["i"], 1), (&[], 1)]),
                poly(&[(&["j"], 1), (&[], 2)])
            ]
        );
        // A row size that is a sum of names is not split.
        let sum = poly(&[(&["M"], 1), (&[], 2)]);
        assert_eq!(split_rows(&offset, &[sum]), None);
    }

    #[test]
    fn substitution_replaces_a_symbol_inside_products() {
        // (S + 1) * n with S := 2i gives 2 i n + n.
        let p = poly(&[(&["S", "n"], 1), (&["n"], 1)]);
        let s = subst(&p, "S", &poly(&[(&["i"], 2)])).expect("substitutes");
        assert_eq!(s, poly(&[(&["i", "n"], 2), (&["n"], 1)]));
    }

    /// A matrix product walking B's columns: `pIn2` runs down a column and
    /// is reset after it to `pInB + (col + RESET)`.
    fn column_walk(reset: i64) -> String {
        format!(
            "void f(const float *a, const float *b, float *c, int n, int m, int k) {{
            const float *pInB = b; const float *pIn2 = b; int col, t;
            for (col = 0; col < m; col++) {{
                float sum = 0.0f;
                for (t = 0; t < k; t++) {{ sum += a[t] * *pIn2; pIn2 += m; }}
                c[col] = sum;
                pIn2 = pInB + (col + {reset});
            }}
        }}"
        )
    }

    /// Reset to the next column's top, the value the next trip starts from.
    #[test]
    fn a_pointer_reset_to_the_next_trips_start_keeps_an_affine_value() {
        let body = crate::test_util::lowered(&column_walk(1)).expect("lowers");
        assert!(body.contains("b[t][col]"), "{body}");
    }

    /// One column too far keeps the refusal.
    #[test]
    fn a_pointer_reset_elsewhere_keeps_the_refusal() {
        let codes = crate::test_util::lowered(&column_walk(2)).expect_err("refused");
        assert_eq!(codes, vec![codes::POINTER_NOT_AFFINE.id]);
    }
}
