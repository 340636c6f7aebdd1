//! Struct parameters and globals, flattened into one parameter per used
//! field before lowering.
//!
//! darknet passes `matrix { int rows, cols; float **vals; }` by value and
//! tensor compilers pass descriptors by pointer (`t->dims[0]`,
//! `(double *)t->vals`). Each field path the body reads — through `.`,
//! `->`, constant subscripts of integer fields and a cast of a `void *`
//! field to a data pointer — becomes a synthetic parameter named after the
//! path (`m_rows`, `t_dims_0`, `t_vals`) whose type is the field's (the
//! cast's for `void *`), with [`Origin::Field`] recording the path so
//! drivers can rebuild the struct. The rest of the lowering then sees plain
//! parameters: integer fields in bounds become sizes, pointer fields
//! become arrays, and an array stored in the struct (`float m[4][4]` of a
//! `mat4`) an array of constant extents. Unused fields are ignored; a
//! write to a scalar field is refused (a size the kernel changes is no
//! size), and so is one into a stored array (the caller passes a copy).

use std::collections::HashMap;

use super::strip;
use crate::diagnostics::{self as codes, Diagnostic};
use crate::ir::{FieldPath, FieldStep, Loc, Origin, Passing};
use crate::syntax::*;

/// Key prefix of the synthetic field declarations.
const FIELD_KEY: &str = "\u{1}field:";

/// A function whose struct fields are parameters of their own.
pub struct Flattened {
    pub func: CFunction,
    /// Origin of every synthetic parameter, by declaration key.
    pub origins: HashMap<String, Origin>,
    pub diagnostics: Vec<Diagnostic>,
}

/// A struct parameter or global the body reaches into.
struct Root {
    name: String,
    struct_type: String,
    passing: Passing,
}

struct Flattener {
    roots: HashMap<String, Root>,
    /// Used field paths by key, in order of first use.
    used: Vec<(String, CVarDecl, FieldPath, String)>,
    taken: Vec<String>,
    diagnostics: Vec<Diagnostic>,
}

/// Flattens the struct fields `func` uses; `None` when it has no struct
/// parameter or global.
pub fn flatten(func: &CFunction) -> Option<Flattened> {
    let mut roots = HashMap::new();
    for (v, global) in func
        .params
        .iter()
        .map(|v| (v, false))
        .chain(func.globals.iter().map(|v| (v, true)))
    {
        let (struct_type, by_pointer) = match &v.ty {
            CType::Struct(s) => (s.clone(), false),
            CType::Pointer { pointee, .. } => match &**pointee {
                CType::Struct(s) => (s.clone(), true),
                _ => continue,
            },
            _ => continue,
        };
        let passing = match (global, by_pointer) {
            (true, false) => Passing::Global,
            (false, false) => Passing::ByValue,
            (_, true) => Passing::ByPointer,
        };
        roots.insert(
            v.key.clone(),
            Root {
                name: v.name.clone(),
                struct_type,
                passing,
            },
        );
    }
    if roots.is_empty() {
        return None;
    }
    let taken = func
        .params
        .iter()
        .chain(&func.globals)
        .map(|v| v.name.clone())
        .collect();
    let mut f = Flattener {
        roots,
        used: Vec::new(),
        taken,
        diagnostics: Vec::new(),
    };
    let body: Vec<CStmt> = func.body.iter().map(|s| f.stmt(s)).collect();
    let mut out = func.clone();
    out.body = body;
    let mut origins = HashMap::new();
    // Each used root is replaced, where it stood, by its used fields.
    let replace = |decls: &[CVarDecl], used: &[(String, CVarDecl, FieldPath, String)]| {
        let mut next = Vec::new();
        for d in decls {
            let fields: Vec<CVarDecl> = used
                .iter()
                .filter(|(_, _, _, root_key)| root_key == &d.key)
                .map(|(_, decl, _, _)| decl.clone())
                .collect();
            if fields.is_empty() {
                next.push(d.clone());
            } else {
                next.extend(fields);
            }
        }
        next
    };
    out.params = replace(&func.params, &f.used);
    out.globals = replace(&func.globals, &f.used);
    for (key, _, path, _) in f.used {
        origins.insert(key, Origin::Field(path));
    }
    Some(Flattened {
        func: out,
        origins,
        diagnostics: f.diagnostics,
    })
}

/// Whether a field's type can be a parameter: a scalar, a pointer (up to
/// three levels) to scalars, or an array of scalars stored in the struct.
fn usable(t: &CType) -> bool {
    let mut cur = t;
    let mut levels = 0;
    while let CType::Pointer { pointee, .. } = cur {
        levels += 1;
        cur = pointee;
    }
    (levels <= 3 && cur.scalar().is_some()) || inline_array(t)
}

/// Whether `t` is an array of scalars with every extent known
/// (`float m[4][4]` inside a `mat4`): a field of that type is the struct's
/// own memory, read as an array parameter of constant extents.
fn inline_array(t: &CType) -> bool {
    let mut cur = t;
    let mut levels = 0;
    while let CType::Array { elem, len: Some(_) } = cur {
        levels += 1;
        cur = elem;
    }
    levels > 0 && cur.scalar().is_some()
}

/// The member access an lvalue stores through, below its subscripts
/// (`M->m` of `M->m[i][j]`).
fn stored_member(e: &CExpr) -> &CExpr {
    let mut cur = strip(e);
    while let CExprKind::Subscript { base, .. } = &cur.kind {
        cur = strip(base);
    }
    cur
}

impl Flattener {
    fn error(&mut self, loc: &Loc, message: String) {
        self.diagnostics.push(Diagnostic::new(
            codes::MEMBER_ACCESS,
            Some(loc.clone()),
            message,
        ));
    }

    /// The field path `e` denotes, with its root key and type; `None` when
    /// `e` is not a path into a struct root.
    fn path(&self, e: &CExpr) -> Option<(String, Vec<FieldStep>, CType)> {
        let e = strip(e);
        match &e.kind {
            CExprKind::Member { base, field } => {
                let b = strip(base);
                let (key, mut steps) = match &b.kind {
                    CExprKind::Ref(r) if self.roots.contains_key(&r.key) => (r.key.clone(), vec![]),
                    _ => {
                        let (key, steps, ty) = self.path(b)?;
                        let is_struct = match &ty {
                            CType::Struct(_) => true,
                            CType::Pointer { pointee, .. } => matches!(**pointee, CType::Struct(_)),
                            _ => false,
                        };
                        if !is_struct {
                            return None;
                        }
                        (key, steps)
                    }
                };
                steps.push(FieldStep::Field {
                    name: field.clone(),
                    pointer: matches!(e.ty, CType::Pointer { .. }),
                });
                Some((key, steps, e.ty.clone()))
            }
            CExprKind::Subscript { base, index } if e.ty.is_integer() => {
                let CExprKind::Int(IntValue::Fits(k)) = strip(index).kind else {
                    return None;
                };
                let (key, mut steps, _) = self.path(base)?;
                steps.push(FieldStep::Index { index: k });
                Some((key, steps, e.ty.clone()))
            }
            CExprKind::Cast(inner) if matches!(e.ty, CType::Pointer { .. }) => {
                let (key, steps, ty) = self.path(inner)?;
                let void_pointer =
                    matches!(&ty, CType::Pointer { pointee, .. } if **pointee == CType::Void);
                void_pointer.then(|| (key, steps, e.ty.clone()))
            }
            _ => None,
        }
    }

    /// The reference that stands for the path `e` denotes, declaring its
    /// parameter on first use.
    fn field_ref(&mut self, e: &CExpr, key: String, steps: Vec<FieldStep>, ty: CType) -> CExpr {
        let root = &self.roots[&key];
        let path = FieldPath {
            root: root.name.clone(),
            struct_type: root.struct_type.clone(),
            passing: root.passing,
            steps,
        };
        let decl_key = format!("{FIELD_KEY}{}", path.c_source());
        let target = if root.passing == Passing::Global {
            RefTarget::Global
        } else {
            RefTarget::Param
        };
        let name = match self.used.iter().find(|u| u.0 == decl_key) {
            Some(u) => u.1.name.clone(),
            None => {
                let mut name = root.name.clone();
                for s in &path.steps {
                    match s {
                        FieldStep::Field { name: f, .. } => name.push_str(&format!("_{f}")),
                        FieldStep::Index { index } => name.push_str(&format!("_{index}")),
                    }
                }
                while self.taken.contains(&name) {
                    name.push_str("_f");
                }
                self.taken.push(name.clone());
                let decl = CVarDecl {
                    name: name.clone(),
                    key: decl_key.clone(),
                    ty: ty.clone(),
                    dims: Vec::new(),
                    init: None,
                    is_static: false,
                    loc: e.loc.clone(),
                };
                self.used.push((decl_key.clone(), decl, path, key));
                name
            }
        };
        CExpr {
            kind: CExprKind::Ref(DeclRef {
                name,
                key: decl_key,
                target,
            }),
            ty,
            loc: e.loc.clone(),
        }
    }

    fn expr(&mut self, e: &CExpr) -> CExpr {
        if let Some((key, steps, ty)) = self.path(e) {
            if usable(&ty) {
                return self.field_ref(e, key, steps, ty);
            }
            if matches!(&ty, CType::Pointer { pointee, .. } if **pointee == CType::Void) {
                let shown = self.shown(&key, &steps);
                self.error(
                    &e.loc,
                    format!("field `{shown}` is `void *`: cast it to the element type where it is used (`(double *){shown}`)"),
                );
                return rejected(e);
            }
            if !matches!(ty, CType::Struct(_)) {
                let shown = self.shown(&key, &steps);
                let spelled = super::type_name(&ty);
                self.error(
                    &e.loc,
                    format!("field `{shown}` has unsupported type `{spelled}`"),
                );
                return rejected(e);
            }
        }
        let mut out = e.clone();
        self.children(&mut out);
        out
    }

    fn shown(&self, key: &str, steps: &[FieldStep]) -> String {
        let root = &self.roots[key];
        FieldPath {
            root: root.name.clone(),
            struct_type: root.struct_type.clone(),
            passing: root.passing,
            steps: steps.to_vec(),
        }
        .c_source()
    }

    /// Rewrites the operands of `e` in place; refuses writes to scalar fields.
    fn children(&mut self, e: &mut CExpr) {
        let written = match &e.kind {
            CExprKind::Binary {
                op: CBinOp::Assign | CBinOp::CompoundAssign(_),
                lhs,
                ..
            } => Some(&**lhs),
            CExprKind::Unary {
                op: CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec,
                arg,
            } => Some(&**arg),
            _ => None,
        };
        if let Some((key, steps, ty)) = written.and_then(|t| self.path(t)) {
            if ty.scalar().is_some() {
                let shown = self.shown(&key, &steps);
                self.error(
                    &e.loc,
                    format!("struct field `{shown}` is written: a field that sizes the kernel cannot change inside it; copy it to a local"),
                );
            }
        }
        // An array stored in the struct reaches the kernel as a copy (a
        // caller passes `M.m` as an array), so a store into it would be
        // lost: refused, where a pointer field's memory is the caller's.
        let stored = written.map(stored_member).and_then(|t| self.path(t));
        if let Some((key, steps, ty)) = stored {
            if inline_array(&ty) {
                let shown = self.shown(&key, &steps);
                self.error(
                    &e.loc,
                    format!("array field `{shown}` is written: only arrays a struct points to (`float *vals`) can be outputs; an array stored in the struct is read-only here"),
                );
            }
        }
        e.map_children(&mut |x| self.expr(x));
    }

    fn stmt(&mut self, s: &CStmt) -> CStmt {
        s.map_exprs(&mut |e| self.expr(e))
    }
}

fn rejected(e: &CExpr) -> CExpr {
    CExpr {
        kind: CExprKind::Rejected,
        ty: e.ty.clone(),
        loc: e.loc.clone(),
    }
}
