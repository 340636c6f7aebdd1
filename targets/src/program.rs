//! Programs: metadata, the parameter list in C order, and a sequence of
//! statements (`let`, `var`, write-back of a region, `for` loops,
//! `return`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::dim::Dim;
use crate::dtype::DType;
use crate::expr::{slice_shape, Expr, Ty};
use crate::ops::{Op, SliceItem};

/// Where a program came from and whether it has been proved.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Meta {
    pub source_file: Option<String>,
    /// First and last source line of the lifted code.
    pub lines: Option<(u32, u32)>,
    /// Verification status, e.g. `unverified`, `bounded`, `proved`.
    pub status: String,
    /// Relations between sizes the program relies on (`requires ni <=
    /// ext_1000`): the region it reads and writes fits the arrays it is
    /// given. Emitted code checks them before computing anything.
    pub requires: Vec<Requirement>,
    /// What the program assumes of its caller beyond the shapes (rows of a
    /// row-pointer matrix do not overlap, how a C struct's fields are
    /// passed), one sentence each, stated in every generated module.
    pub preconditions: Vec<String>,
    /// Sizes that stand for an array's declared constant extent (`double
    /// C[1000][1100]` iterated to `ni`): the value the build declared and
    /// the array axis it came from, so that drivers pass the right value
    /// without reading it back out of the size's name.
    pub extents: Vec<DeclaredExtent>,
    /// The C's leading guards that change what it does, in order: the
    /// program computes the rest of the kernel, and runs only when no
    /// guard's condition holds (each target checks them first).
    pub guards: Vec<Guard>,
}

/// `guard "{n} <= 1" store "out" "0" return "0"`: when `cond` holds the
/// function stores each literal into its array's first element and
/// returns the literal `value` (nothing when `None`) instead of running
/// the program. `cond` is a Python expression over scalar parameters and
/// literals, each parameter written `{name}` (its program name, which a
/// target may rename).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    pub cond: String,
    pub stores: Vec<(String, String)>,
    pub value: Option<String>,
}

/// `extent ext_1000 = 1000 of C[0]`: the size `name` is the declared
/// extent `value` of axis `dim` of array `array` (the first array declared
/// with it; every axis declared with the same value shares the size).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeclaredExtent {
    pub name: String,
    pub value: i64,
    pub array: String,
    pub dim: usize,
}

impl std::fmt::Display for DeclaredExtent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} = {} of {}[{}]",
            self.name, self.value, self.array, self.dim
        )
    }
}

impl Default for Meta {
    fn default() -> Meta {
        Meta {
            source_file: None,
            lines: None,
            status: "unverified".to_string(),
            requires: Vec::new(),
            preconditions: Vec::new(),
            extents: Vec::new(),
            guards: Vec::new(),
        }
    }
}

/// `needed <= declared`: one relation a program relies on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Requirement {
    pub needed: Dim,
    pub declared: Dim,
}

impl Requirement {
    /// Whether the relation holds at `sizes`; an error names a size
    /// without a value.
    pub fn holds(&self, sizes: &dyn Fn(&str) -> Option<i64>) -> Result<bool, crate::dim::DimError> {
        Ok(self.needed.eval(sizes)? <= self.declared.eval(sizes)?)
    }

    /// The first relation of `requires` that fails at `sizes`.
    pub fn first_violated<'r>(
        requires: &'r [Requirement],
        sizes: &dyn Fn(&str) -> Option<i64>,
    ) -> Option<&'r Requirement> {
        requires.iter().find(|r| r.holds(sizes) == Ok(false))
    }
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <= {}", self.needed, self.declared)
    }
}

/// How a function reads or writes an array parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    In,
    Out,
    InOut,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::In => "in",
            Access::Out => "out",
            Access::InOut => "inout",
        }
    }

    pub fn is_written(self) -> bool {
        self != Access::In
    }
}

/// What a parameter is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// An integer size that dims refer to (`n`, `lda`); an `i64` scalar in
    /// expressions, a static argument in JAX, a constant in StableHLO.
    Size,
    /// A data scalar passed by value.
    Scalar(DType),
    /// An array (rank 0 is allowed: a scalar passed by pointer).
    Array {
        dtype: DType,
        shape: Vec<Dim>,
        access: Access,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: Arc<str>,
    pub kind: ParamKind,
}

impl Param {
    /// The type a reference to this parameter has in expressions.
    pub fn ty(&self) -> Ty {
        match &self.kind {
            ParamKind::Size => Ty::scalar(DType::I64),
            ParamKind::Scalar(d) => Ty::scalar(*d),
            ParamKind::Array { dtype, shape, .. } => Ty::tensor(*dtype, shape.clone()),
        }
    }

    pub fn access(&self) -> Option<Access> {
        match &self.kind {
            ParamKind::Array { access, .. } => Some(*access),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Stmt {
    /// `let name = value;` (names are bound once).
    Let { name: Arc<str>, value: Expr },
    /// `var name: f64[n];` — a local array of the program, only at its top
    /// level: zero-filled, written by stores like an `inout` parameter and
    /// kept across loop iterations (a C local a kept loop carries: a
    /// recurrence's scalar, a scratch vector). Like an `out` array it must
    /// be written before it is read.
    Var { name: Arc<str>, ty: Ty },
    /// `target[region] = value;` or `target = value;` (region `None`).
    Store {
        target: Arc<str>,
        region: Option<Vec<SliceItem>>,
        value: Expr,
    },
    /// `return value;` — the function's scalar result; last statement.
    Return(Expr),
    /// `for var in start..stop { body }` with step 1 (no iterations when
    /// `stop <= start`). Kept for loops that partial lifting cannot
    /// vectorise (time steps, recurrences): inside `body`, `var` is an
    /// `i64` scalar in expressions and a size symbol in dims. `let`s in the
    /// body live for one iteration; stores update the arrays in place.
    Loop {
        var: Arc<str>,
        start: Dim,
        stop: Dim,
        body: Vec<Stmt>,
    },
}

/// `body` with `f` applied to every statement's expression in pre-order
/// (a loop before its body), everything else unchanged: the one place a
/// pass that rewrites values walks the statement forms (see
/// [`try_map_values`] for a fallible pass that needs the statement index).
pub fn map_values(body: &[Stmt], f: &mut dyn FnMut(&Expr) -> Expr) -> Vec<Stmt> {
    match try_map_values(body, &mut |_, v| Ok::<Expr, std::convert::Infallible>(f(v))) {
        Ok(body) => body,
        Err(never) => match never {},
    }
}

impl Stmt {
    /// The statement and every statement nested in it, in pre-order (a
    /// loop comes before its body) — the numbering [`ProgramError::stmt`]
    /// uses.
    pub fn preorder<'a>(&'a self, out: &mut Vec<&'a Stmt>) {
        out.push(self);
        if let Stmt::Loop { body, .. } = self {
            for s in body {
                s.preorder(out);
            }
        }
    }

    /// Whether the statement is a loop or contains one.
    pub fn has_loop(&self) -> bool {
        matches!(self, Stmt::Loop { .. })
    }
}

/// `stmts` with every value (of a `let`, a store, a `return`, loop bodies
/// included) replaced by `f(index, value)`, where `index` is the value's
/// statement in pre-order (see [`Stmt::preorder`]); loops keep their
/// bounds.
pub fn try_map_values<E>(
    stmts: &[Stmt],
    f: &mut dyn FnMut(usize, &Expr) -> Result<Expr, E>,
) -> Result<Vec<Stmt>, E> {
    fn block<E>(
        stmts: &[Stmt],
        next: &mut usize,
        f: &mut dyn FnMut(usize, &Expr) -> Result<Expr, E>,
    ) -> Result<Vec<Stmt>, E> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            let index = *next;
            *next += 1;
            out.push(match s {
                Stmt::Let { name, value } => Stmt::Let {
                    name: name.clone(),
                    value: f(index, value)?,
                },
                Stmt::Store {
                    target,
                    region,
                    value,
                } => Stmt::Store {
                    target: target.clone(),
                    region: region.clone(),
                    value: f(index, value)?,
                },
                Stmt::Return(value) => Stmt::Return(f(index, value)?),
                Stmt::Var { .. } => s.clone(),
                Stmt::Loop {
                    var,
                    start,
                    stop,
                    body,
                } => Stmt::Loop {
                    var: var.clone(),
                    start: start.clone(),
                    stop: stop.clone(),
                    body: block(body, next, f)?,
                },
            });
        }
        Ok(out)
    }
    block(stmts, &mut 0, f)
}

/// A TensIR program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Program {
    pub meta: Meta,
    pub name: Arc<str>,
    pub params: Vec<Param>,
    /// Element type of the returned scalar, if any.
    pub ret: Option<DType>,
    pub body: Vec<Stmt>,
}

/// A rule a program breaks; `stmt` is the index of the offending statement
/// in pre-order over the body (see [`Stmt::preorder`]; without loops, the
/// index in `body`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProgramError {
    pub stmt: Option<usize>,
    pub message: String,
}

/// Whether `s` is an identifier the syntax and every target accept.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Program {
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| &*p.name == name)
    }

    /// The program's `var` locals, in order, with their types.
    pub fn vars(&self) -> Vec<(&Arc<str>, &Ty)> {
        self.body
            .iter()
            .filter_map(|s| match s {
                Stmt::Var { name, ty } => Some((name, ty)),
                _ => None,
            })
            .collect()
    }

    /// The element type and shape of what a store may write under `name`:
    /// a written array parameter or a `var`.
    pub fn writable(&self, name: &str) -> Option<(DType, &[Dim])> {
        if let Some(ParamKind::Array {
            dtype,
            shape,
            access,
        }) = self.param(name).map(|p| &p.kind)
        {
            return access.is_written().then_some((*dtype, shape.as_slice()));
        }
        self.vars()
            .into_iter()
            .find(|(n, _)| &***n == name)
            .map(|(_, ty)| (ty.dtype, ty.shape.as_slice()))
    }

    /// Checks the rules that single expressions cannot: names are valid and
    /// bound once, variables have their declared types, dims use only size
    /// parameters, stores target writable arrays with a value of the
    /// region's type, `out` arrays are not read, `return` comes last and
    /// matches the declared result type.
    pub fn validate(&self) -> Result<(), ProgramError> {
        let fail = |stmt: Option<usize>, message: String| Err(ProgramError { stmt, message });
        if !is_identifier(&self.name) {
            return fail(
                None,
                format!("`{}` is not a valid function name", self.name),
            );
        }
        let sizes: Vec<&str> = self
            .params
            .iter()
            .filter(|p| p.kind == ParamKind::Size)
            .map(|p| &*p.name)
            .collect();
        let mut env: HashMap<&str, (Ty, bool)> = HashMap::new();
        for p in &self.params {
            if !is_identifier(&p.name) {
                return fail(None, format!("`{}` is not a valid parameter name", p.name));
            }
            if env.contains_key(&*p.name) {
                return fail(None, format!("parameter `{}` is declared twice", p.name));
            }
            if let ParamKind::Array { shape, .. } = &p.kind {
                check_shape(shape, &sizes).map_err(|m| ProgramError {
                    stmt: None,
                    message: format!("shape of `{}`: {m}", p.name),
                })?;
            }
            let readable = p.access() != Some(Access::Out);
            env.insert(&p.name, (p.ty(), readable));
        }
        let mut checker = BlockChecker {
            program: self,
            env,
            sizes,
            vars: HashSet::new(),
            next_index: 0,
        };
        checker.block(&self.body, true)?;
        if self.ret.is_some() && !matches!(self.body.last(), Some(Stmt::Return(_))) {
            return fail(
                None,
                "the function declares a result but never returns".to_string(),
            );
        }
        Ok(())
    }

    /// The body in pre-order (see [`Stmt::preorder`]).
    pub fn statements(&self) -> Vec<&Stmt> {
        let mut out = Vec::new();
        for s in &self.body {
            s.preorder(&mut out);
        }
        out
    }

    /// Whether the body contains a `for` loop.
    pub fn has_loops(&self) -> bool {
        self.body.iter().any(Stmt::has_loop)
    }
}

/// Walks statements in pre-order with the names in scope; a loop body gets
/// its own scope (the loop variable, its `let`s) that ends with the loop.
struct BlockChecker<'a> {
    program: &'a Program,
    /// Names in scope: type, and whether the value may be read.
    env: HashMap<&'a str, (Ty, bool)>,
    /// Symbols dims may use: size parameters and enclosing loop variables.
    sizes: Vec<&'a str>,
    /// The `var` locals declared so far.
    vars: HashSet<&'a str>,
    /// Pre-order index of the next statement.
    next_index: usize,
}

impl<'a> BlockChecker<'a> {
    /// A read of a `var` before any store: say so in its own words (the
    /// check speaks of `out` arrays).
    fn explain_unwritten(&self, e: ProgramError) -> ProgramError {
        let var = self.vars.iter().find(|v| {
            e.message.starts_with(&format!(
                "`{v}` is an `out` array read before it is written"
            ))
        });
        match var {
            Some(v) => ProgramError {
                stmt: e.stmt,
                message: format!("`var {v}` is read before a store writes it"),
            },
            None => e,
        }
    }

    /// The element type and shape a store into `target` writes: a written
    /// array parameter or a `var` declared before.
    fn store_target(&self, target: &str) -> Result<(DType, Vec<Dim>), String> {
        match self.program.param(target).map(|p| &p.kind) {
            Some(ParamKind::Array {
                dtype,
                shape,
                access,
            }) if access.is_written() => Ok((*dtype, shape.clone())),
            Some(ParamKind::Array { .. }) => Err(format!(
                "`{target}` is an input; declare it `out` or `inout` to write it"
            )),
            _ => match self.env.get(target) {
                Some((ty, _)) if self.vars.contains(target) => Ok((ty.dtype, ty.shape.clone())),
                _ => Err(format!("`{target}` is not an array parameter or a `var`")),
            },
        }
    }

    fn block(&mut self, stmts: &'a [Stmt], top_level: bool) -> Result<(), ProgramError> {
        for (i, stmt) in stmts.iter().enumerate() {
            let at = Some(self.next_index);
            self.next_index += 1;
            let fail = |message: String| Err(ProgramError { stmt: at, message });
            let value = match stmt {
                Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => {
                    Some(value)
                }
                Stmt::Loop { .. } | Stmt::Var { .. } => None,
            };
            if let Some(value) = value {
                check_expr(value, &self.env, &self.sizes, &mut HashSet::new())
                    .map_err(|message| ProgramError { stmt: at, message })
                    .map_err(|e| self.explain_unwritten(e))?;
            }
            match stmt {
                Stmt::Let { name, value } => {
                    if !is_identifier(name) {
                        return fail(format!("`{name}` is not a valid name"));
                    }
                    if self.env.contains_key(&**name) {
                        return fail(format!("`{name}` is already bound"));
                    }
                    self.env.insert(name, (value.ty().clone(), true));
                }
                Stmt::Var { name, ty } => {
                    if !top_level {
                        return fail("`var` is allowed only at the top level".to_string());
                    }
                    if !is_identifier(name) {
                        return fail(format!("`{name}` is not a valid name"));
                    }
                    if self.env.contains_key(&**name) {
                        return fail(format!("`{name}` is already bound"));
                    }
                    check_shape(&ty.shape, &self.sizes).map_err(|m| ProgramError {
                        stmt: at,
                        message: format!("shape of `{name}`: {m}"),
                    })?;
                    self.env.insert(name, (ty.clone(), false));
                    self.vars.insert(name);
                }
                Stmt::Store {
                    target,
                    region,
                    value,
                } => {
                    let (dtype, shape) = self
                        .store_target(target)
                        .map_err(|message| ProgramError { stmt: at, message })?;
                    let (dtype, shape) = (&dtype, &shape);
                    let region_shape = match region {
                        Some(items) => {
                            check_slice_dims(items, &self.sizes)
                                .map_err(|message| ProgramError { stmt: at, message })?;
                            slice_shape(shape, items).map_err(|e| ProgramError {
                                stmt: at,
                                message: e.message,
                            })?
                        }
                        None => shape.clone(),
                    };
                    let want = Ty::tensor(*dtype, region_shape);
                    if *value.ty() != want {
                        return fail(format!(
                            "stored value has type {}, the region of `{target}` has type {want}",
                            value.ty()
                        ));
                    }
                    // After a store the array holds defined values.
                    if let Some(entry) = self.env.get_mut(&**target) {
                        entry.1 = true;
                    }
                }
                Stmt::Return(value) => {
                    if !top_level {
                        return fail("`return` is not allowed inside a loop".to_string());
                    }
                    if i + 1 != stmts.len() {
                        return fail("`return` must be the last statement".to_string());
                    }
                    match self.program.ret {
                        Some(d) if *value.ty() == Ty::scalar(d) => {}
                        Some(d) => {
                            return fail(format!(
                                "returned value has type {}, the function returns {d}",
                                value.ty()
                            ))
                        }
                        None => return fail("the function declares no result".to_string()),
                    }
                }
                Stmt::Loop {
                    var,
                    start,
                    stop,
                    body,
                } => {
                    if !is_identifier(var) {
                        return fail(format!("`{var}` is not a valid loop variable name"));
                    }
                    if self.env.contains_key(&**var) {
                        return fail(format!("loop variable `{var}` is already bound"));
                    }
                    check_dims(&[start.clone(), stop.clone()], &self.sizes).map_err(|m| {
                        ProgramError {
                            stmt: at,
                            message: format!("bounds of the loop over `{var}`: {m}"),
                        }
                    })?;
                    let outer_env = self.env.clone();
                    let outer_sizes = self.sizes.len();
                    self.env.insert(var, (Ty::scalar(DType::I64), true));
                    self.sizes.push(var);
                    self.block(body, false)?;
                    // Body names go out of scope; what stores made
                    // readable stays readable.
                    let readable: Vec<&str> = self
                        .env
                        .iter()
                        .filter(|(_, (_, r))| *r)
                        .map(|(k, _)| *k)
                        .collect();
                    self.env = outer_env;
                    for name in readable {
                        if let Some(entry) = self.env.get_mut(name) {
                            entry.1 = true;
                        }
                    }
                    self.sizes.truncate(outer_sizes);
                }
            }
        }
        Ok(())
    }
}

fn check_shape(dims: &[Dim], sizes: &[&str]) -> Result<(), String> {
    if let Some(d) = dims.iter().find(|d| d.as_const().is_some_and(|c| c < 0)) {
        return Err(format!("dimension `{d}` is negative"));
    }
    check_dims(dims, sizes)
}

fn check_dims(dims: &[Dim], sizes: &[&str]) -> Result<(), String> {
    for d in dims {
        if let Some(s) = d.symbols().find(|s| !sizes.contains(s)) {
            return Err(format!("`{s}` in dimension `{d}` is not a size parameter"));
        }
    }
    Ok(())
}

fn check_slice_dims(items: &[SliceItem], sizes: &[&str]) -> Result<(), String> {
    for item in items {
        match item {
            SliceItem::Full => {}
            SliceItem::Index(d) => check_dims(std::slice::from_ref(d), sizes)?,
            SliceItem::Range { start, stop, .. } => {
                check_dims(&[start.clone(), stop.clone()], sizes)?
            }
        }
    }
    Ok(())
}

/// Checks each distinct subtree once (`seen`), so shared subtrees cost
/// nothing extra.
fn check_expr(
    e: &Expr,
    env: &HashMap<&str, (Ty, bool)>,
    sizes: &[&str],
    seen: &mut HashSet<Expr>,
) -> Result<(), String> {
    if !seen.insert(e.clone()) {
        return Ok(());
    }
    match e.op() {
        Op::Var(name) => match env.get(&**name) {
            None => return Err(format!("`{name}` is not defined")),
            Some((_, false)) => {
                return Err(format!(
                    "`{name}` is an `out` array read before it is written; declare it `inout`"
                ))
            }
            Some((ty, _)) if ty != e.ty() => {
                return Err(format!("`{name}` has type {ty}, used as {}", e.ty()))
            }
            Some(_) => {}
        },
        Op::Full { shape, .. } | Op::Broadcast(shape) | Op::Reshape(shape) | Op::Window(shape) => {
            check_shape(shape, sizes)?
        }
        Op::Slice(items) => check_slice_dims(items, sizes)?,
        _ => {}
    }
    e.args()
        .iter()
        .try_for_each(|a| check_expr(a, env, sizes, seen))
}

#[cfg(test)]
mod tests {
    use crate::syntax::{parse_program, print_program};

    const REGION: &str = "status \"unverified\"\nrequires ni <= ext_40\nrequires n - 1 <= lda\n\
        func f(ni: size, n: size, lda: size, C: inout f64[ext_40, lda], ext_40: size) {\n  \
        C[0:ni, 0:n - 1] = mul(C[0:ni, 0:n - 1], 2.0);\n}\n";

    #[test]
    fn requirements_round_trip_and_are_decided_at_sizes() {
        let p = parse_program("t.tensir", REGION).unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(p.meta.requires.len(), 2);
        assert_eq!(p.meta.requires[1].to_string(), "n - 1 <= lda");
        assert_eq!(print_program(&p), REGION);
        let at = |ni: i64, n: i64, lda: i64| {
            move |s: &str| match s {
                "ni" => Some(ni),
                "n" => Some(n),
                "lda" => Some(lda),
                "ext_40" => Some(40),
                _ => None,
            }
        };
        let first = |sizes| super::Requirement::first_violated(&p.meta.requires, &sizes);
        assert_eq!(first(at(40, 9, 8)), None);
        assert_eq!(first(at(41, 9, 8)), Some(&p.meta.requires[0]));
        assert_eq!(first(at(3, 10, 8)), Some(&p.meta.requires[1]));
    }

    /// A declared extent's value and origin survive printing and parsing.
    #[test]
    fn declared_extents_round_trip() {
        let text = REGION.replace(
            "requires n - 1 <= lda\n",
            "requires n - 1 <= lda\nextent ext_40 = 40 of C[0]\n",
        );
        let p = parse_program("t.tensir", &text).unwrap_or_else(|d| panic!("{d:?}"));
        let e = &p.meta.extents;
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].name.as_str(), e[0].value), ("ext_40", 40));
        assert_eq!((e[0].array.as_str(), e[0].dim), ("C", 0));
        assert_eq!(print_program(&p), text);
        let bad = text.replace("of C[0]", "of C[-1]");
        assert!(parse_program("t.tensir", &bad).is_err());
    }

    /// Size relations and stated preconditions are one `Meta` section:
    /// both survive printing and parsing, in their printed order.
    #[test]
    fn relations_and_stated_preconditions_round_trip_together() {
        let text = "status \"unverified\"\nrequires ni <= ext_40\n\
            precondition \"`C` is passed as row pointers: its rows are \\\"disjoint\\\"\"\n\
            func f(ni: size, C: inout f64[ext_40, 3], ext_40: size) {\n  \
            C[0:ni, :] = mul(C[0:ni, :], 2.0);\n}\n";
        let p = parse_program("t.tensir", text).unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(p.meta.requires.len(), 1);
        assert_eq!(
            p.meta.preconditions,
            ["`C` is passed as row pointers: its rows are \"disjoint\""]
        );
        assert_eq!(print_program(&p), text);
        let again =
            parse_program("t.tensir", &print_program(&p)).unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(again.meta, p.meta);
    }

    /// A guard (condition, stores, returned literal) survives printing and
    /// parsing; every Python target checks it first, StableHLO refuses it.
    #[test]
    fn guards_round_trip_and_run_first() {
        let text = "status \"unverified\"\n\
            guard \"{n} <= 1\" store \"out\" \"0.0\" return \"-1.0\"\n\
            guard \"({a} == 0.0)\"\n\
            func f(n: size, a: f64, x: f64[n], out: out f64[1]) -> f64 {\n  \
            out[0] = sum(mul(x, a), axes=[0]);\n  return out[0];\n}\n";
        let p = parse_program("t.tensir", text).unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(p.meta.guards.len(), 2);
        assert_eq!(
            p.meta.guards[0].stores,
            [("out".to_string(), "0.0".to_string())]
        );
        assert_eq!(p.meta.guards[1].value, None);
        assert_eq!(print_program(&p), text);
        let opts = crate::emit::EmitOptions::default();
        let numpy = crate::emit::emit(&p, crate::emit::Target::Numpy, &opts).expect("numpy");
        assert!(
            numpy.contains(
                "    if n <= 1:\n        out[0] = 0.0\n        return np.float64(-1.0)\n"
            ),
            "{numpy}"
        );
        let hlo = crate::emit::emit(&p, crate::emit::Target::Hlo, &opts);
        assert!(
            matches!(hlo, Err(crate::emit::EmitError::Unsupported(_))),
            "{hlo:?}"
        );
    }

    /// `map_values` visits a loop's statements after the loop's own
    /// predecessors, in text order, and keeps the statements' forms.
    #[test]
    fn map_values_rewrites_every_value_in_preorder() {
        let text = "func f(n: size, x: inout f64[n]) {\n  let a = x;\n  for i in 0..n {\n    \
            x[i] = mul(x[i], 2.0);\n  }\n  x = add(x, 1.0);\n}\n";
        let p = parse_program("t.tensir", text).unwrap_or_else(|d| panic!("{d:?}"));
        let mut seen = Vec::new();
        let body = super::map_values(&p.body, &mut |e| {
            seen.push(crate::print_expr(e));
            e.clone()
        });
        assert_eq!(seen, ["x", "mul(x[i], 2.0)", "add(x, 1.0)"]);
        assert_eq!(body, p.body);
    }
}
