//! Programs: metadata, the parameter list in C order, and a sequence of
//! statements (`let`, write-back of a region, `return`).

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
}

impl Default for Meta {
    fn default() -> Meta {
        Meta {
            source_file: None,
            lines: None,
            status: "unverified".to_string(),
        }
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
    /// `target[region] = value;` or `target = value;` (region `None`).
    Store {
        target: Arc<str>,
        region: Option<Vec<SliceItem>>,
        value: Expr,
    },
    /// `return value;` — the function's scalar result; last statement.
    Return(Expr),
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

/// A rule a program breaks; `stmt` is the index of the offending statement.
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
        for (i, stmt) in self.body.iter().enumerate() {
            let at = Some(i);
            let value = match stmt {
                Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => value,
            };
            check_expr(value, &env, &sizes, &mut HashSet::new())
                .map_err(|message| ProgramError { stmt: at, message })?;
            match stmt {
                Stmt::Let { name, value } => {
                    if !is_identifier(name) {
                        return fail(at, format!("`{name}` is not a valid name"));
                    }
                    if env.contains_key(&**name) {
                        return fail(at, format!("`{name}` is already bound"));
                    }
                    env.insert(name, (value.ty().clone(), true));
                }
                Stmt::Store {
                    target,
                    region,
                    value,
                } => {
                    let param = self.param(target);
                    let Some(ParamKind::Array {
                        dtype,
                        shape,
                        access,
                    }) = param.map(|p| &p.kind)
                    else {
                        return fail(at, format!("`{target}` is not an array parameter"));
                    };
                    if !access.is_written() {
                        return fail(
                            at,
                            format!(
                                "`{target}` is an input; declare it `out` or `inout` to write it"
                            ),
                        );
                    }
                    let region_shape = match region {
                        Some(items) => {
                            check_slice_dims(items, &sizes)
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
                        return fail(
                            at,
                            format!("stored value has type {}, the region of `{target}` has type {want}", value.ty()),
                        );
                    }
                    // After a store the array holds defined values.
                    if let Some(entry) = env.get_mut(&**target) {
                        entry.1 = true;
                    }
                }
                Stmt::Return(value) => {
                    if i + 1 != self.body.len() {
                        return fail(at, "`return` must be the last statement".to_string());
                    }
                    match self.ret {
                        Some(d) if *value.ty() == Ty::scalar(d) => {}
                        Some(d) => {
                            return fail(
                                at,
                                format!(
                                    "returned value has type {}, the function returns {d}",
                                    value.ty()
                                ),
                            )
                        }
                        None => return fail(at, "the function declares no result".to_string()),
                    }
                }
            }
        }
        if self.ret.is_some() && !matches!(self.body.last(), Some(Stmt::Return(_))) {
            return fail(
                None,
                "the function declares a result but never returns".to_string(),
            );
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
        Op::Full { shape, .. } | Op::Broadcast(shape) => check_shape(shape, sizes)?,
        Op::Slice(items) => check_slice_dims(items, sizes)?,
        _ => {}
    }
    e.args()
        .iter()
        .try_for_each(|a| check_expr(a, env, sizes, seen))
}
