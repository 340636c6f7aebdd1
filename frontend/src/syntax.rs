//! An owned, libclang-free C syntax tree of one function body.
//!
//! The reader ([`crate::reader`]) copies what the lowering needs out of
//! libclang's cursors into these plain types, so lowering and its unit
//! tests never touch libclang, and no cursor lifetime leaks out of a parse.

use crate::ir::{Loc, ScalarType};

/// A C type as far as the lifter cares.
#[derive(Clone, Debug, PartialEq)]
pub enum CType {
    Scalar(ScalarType),
    Pointer {
        pointee: Box<CType>,
        restrict: bool,
    },
    /// One array level; `len` is `None` for VLA and incomplete levels.
    Array {
        elem: Box<CType>,
        len: Option<i64>,
    },
    Void,
    /// A struct (or union) type, by its spelling (`matrix`, `struct tensor`).
    Struct(String),
    /// Anything else (struct, long double, function, ...), by its spelling.
    Other(String),
}

impl CType {
    pub fn scalar(&self) -> Option<ScalarType> {
        match self {
            CType::Scalar(s) => Some(*s),
            _ => None,
        }
    }

    pub fn is_integer(&self) -> bool {
        self.scalar().is_some_and(|s| !s.is_float())
    }
}

/// What a name refers to.
#[derive(Clone, Debug, PartialEq)]
pub enum RefTarget {
    /// A parameter of the function being read.
    Param,
    /// A variable declared in the function body.
    Local,
    /// A file-scope or static variable.
    Global,
    /// A function (callee of a call).
    Function,
    /// An enumerator, with its value.
    EnumConstant(i64),
    Other,
}

/// A reference to a declaration; `key` identifies the declaration
/// (name plus declaration position), so shadowed names stay apart.
#[derive(Clone, Debug, PartialEq)]
pub struct DeclRef {
    pub name: String,
    pub key: String,
    pub target: RefTarget,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CBinOp {
    Mul,
    Div,
    Rem,
    Add,
    Sub,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    LAnd,
    LOr,
    Assign,
    /// `op=`, with the arithmetic operator.
    CompoundAssign(ArithOp),
    /// `<<` and `>>` (by a constant, lowered to arithmetic).
    Shl,
    Shr,
    /// Bitwise operators, comma and their compound assignments.
    Unsupported(&'static str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// `<<=` and `>>=` (by a constant).
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CUnOp {
    PostInc,
    PostDec,
    PreInc,
    PreDec,
    Plus,
    Minus,
    LNot,
    Unsupported(&'static str),
}

/// An integer literal's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntValue {
    Fits(i64),
    /// Does not fit in an `i64` (e.g. a `u64` above `i64::MAX`).
    TooLarge,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CExpr {
    pub kind: CExprKind,
    pub ty: CType,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CExprKind {
    Int(IntValue),
    /// An integer literal spelled as an object-like macro the user may
    /// override (`N` from `#ifndef N` / `#define N 8`, or `-DN=8`): the
    /// lowering turns it into a size parameter when it sizes a loop or an
    /// array, and into the plain literal `value` otherwise.
    MacroInt {
        name: String,
        value: i64,
    },
    Float {
        value: f64,
        text: String,
    },
    Ref(DeclRef),
    Subscript {
        base: Box<CExpr>,
        index: Box<CExpr>,
    },
    Binary {
        op: CBinOp,
        lhs: Box<CExpr>,
        rhs: Box<CExpr>,
    },
    Unary {
        op: CUnOp,
        arg: Box<CExpr>,
    },
    /// An implicit conversion (libclang shows these as unexposed
    /// expressions): lvalue-to-rvalue, decay, or a real type change.
    Implicit(Box<CExpr>),
    /// `(T)e`.
    Cast(Box<CExpr>),
    Paren(Box<CExpr>),
    Conditional {
        cond: Box<CExpr>,
        then_value: Box<CExpr>,
        else_value: Box<CExpr>,
    },
    Call {
        callee: Option<DeclRef>,
        args: Vec<CExpr>,
        /// The callee's body when it is a single `return expr;` (a pure
        /// helper such as `static inline float relu(float x)`), to inline.
        inline: Option<Box<InlineBody>>,
    },
    /// `base.field`, or `base->field` when `base` is a pointer.
    Member {
        base: Box<CExpr>,
        field: String,
    },
    /// Anything else, by libclang's kind name.
    Unsupported(String),
    /// Already refused by the reader (its diagnostic is recorded).
    Rejected,
}

impl CExpr {
    /// The direct sub-expressions, in the order [`CExpr::map_children`]
    /// visits them.
    pub fn children(&self) -> Vec<&CExpr> {
        match &self.kind {
            CExprKind::Subscript { base, index } => vec![base, index],
            CExprKind::Binary { lhs, rhs, .. } => vec![lhs, rhs],
            CExprKind::Unary { arg, .. }
            | CExprKind::Implicit(arg)
            | CExprKind::Cast(arg)
            | CExprKind::Paren(arg)
            | CExprKind::Member { base: arg, .. } => vec![arg],
            CExprKind::Conditional {
                cond,
                then_value,
                else_value,
            } => vec![cond, then_value, else_value],
            CExprKind::Call { args, .. } => args.iter().collect(),
            CExprKind::Int(_)
            | CExprKind::MacroInt { .. }
            | CExprKind::Float { .. }
            | CExprKind::Ref(_)
            | CExprKind::Unsupported(_)
            | CExprKind::Rejected => Vec::new(),
        }
    }

    /// This expression without parentheses and implicit conversions.
    pub fn stripped(&self) -> &CExpr {
        let mut cur = self;
        while let CExprKind::Paren(inner) | CExprKind::Implicit(inner) = &cur.kind {
            cur = inner;
        }
        cur
    }

    /// The declaration key of the variable this expression names (through
    /// parentheses and implicit conversions).
    pub fn ref_key(&self) -> Option<&str> {
        match &self.stripped().kind {
            CExprKind::Ref(r) => Some(&r.key),
            _ => None,
        }
    }

    /// The value of an integer literal (through parentheses, implicit and
    /// explicit conversions).
    pub fn int_constant(&self) -> Option<i64> {
        match &self.stripped().kind {
            CExprKind::Int(IntValue::Fits(v)) => Some(*v),
            CExprKind::Cast(inner) => inner.int_constant(),
            _ => None,
        }
    }

    /// The variable and the value of a plain assignment `x = value`
    /// (through parentheses and implicit conversions).
    pub fn assigned_variable(&self) -> Option<(&DeclRef, &CExpr)> {
        let CExprKind::Binary {
            op: CBinOp::Assign,
            lhs,
            rhs,
        } = &self.stripped().kind
        else {
            return None;
        };
        match &lhs.stripped().kind {
            CExprKind::Ref(r) => Some((r, rhs)),
            _ => None,
        }
    }

    /// How many times the expression names the variable `key`.
    pub fn count_refs(&self, key: &str) -> usize {
        let own = usize::from(matches!(&self.kind, CExprKind::Ref(r) if r.key == key));
        own + self
            .children()
            .into_iter()
            .map(|c| c.count_refs(key))
            .sum::<usize>()
    }

    /// Whether the variable `key` is referred to anywhere in the expression.
    pub fn refers_to(&self, key: &str) -> bool {
        matches!(&self.kind, CExprKind::Ref(r) if r.key == key)
            || self.children().into_iter().any(|c| c.refers_to(key))
    }

    /// Whether the expression assigns, increments or decrements `key`.
    pub fn writes(&self, key: &str) -> bool {
        let own = match &self.kind {
            CExprKind::Binary {
                op: CBinOp::Assign | CBinOp::CompoundAssign(_),
                lhs,
                ..
            } => lhs.ref_key() == Some(key),
            CExprKind::Unary {
                op: CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec,
                arg,
            } => arg.ref_key() == Some(key),
            _ => false,
        };
        own || self.children().into_iter().any(|c| c.writes(key))
    }

    /// Whether evaluating the expression (any number of times) changes
    /// nothing: no assignment, step or call, nothing unread.
    pub fn is_pure(&self) -> bool {
        let effect = match &self.kind {
            CExprKind::Binary { op, .. } => {
                matches!(op, CBinOp::Assign | CBinOp::CompoundAssign(_))
            }
            CExprKind::Unary { op, .. } => matches!(
                op,
                CUnOp::PostInc | CUnOp::PostDec | CUnOp::PreInc | CUnOp::PreDec
            ),
            CExprKind::Call { .. } | CExprKind::Unsupported(_) | CExprKind::Rejected => true,
            _ => false,
        };
        !effect && self.children().into_iter().all(CExpr::is_pure)
    }

    /// Replaces each direct sub-expression by `f` of it (a call's
    /// arguments, not the inlined helper's body, which has its own names).
    pub fn map_children(&mut self, f: &mut dyn FnMut(&CExpr) -> CExpr) {
        match &mut self.kind {
            CExprKind::Subscript { base, index } => {
                **base = f(base);
                **index = f(index);
            }
            CExprKind::Binary { lhs, rhs, .. } => {
                **lhs = f(lhs);
                **rhs = f(rhs);
            }
            CExprKind::Unary { arg, .. }
            | CExprKind::Implicit(arg)
            | CExprKind::Cast(arg)
            | CExprKind::Paren(arg) => **arg = f(arg),
            CExprKind::Conditional {
                cond,
                then_value,
                else_value,
            } => {
                **cond = f(cond);
                **then_value = f(then_value);
                **else_value = f(else_value);
            }
            CExprKind::Call { args, .. } => {
                for a in args.iter_mut() {
                    *a = f(a);
                }
            }
            CExprKind::Member { base, .. } => **base = f(base),
            CExprKind::Int(_)
            | CExprKind::MacroInt { .. }
            | CExprKind::Float { .. }
            | CExprKind::Ref(_)
            | CExprKind::Unsupported(_)
            | CExprKind::Rejected => {}
        }
    }
}

/// A helper function reduced to its returned expression, and the
/// statements before its `return` when it has any (`sum_array`'s loop):
/// such a call is hoisted out of its statement (`crate::hoist_helpers`),
/// and the lowering refuses one that was not.
#[derive(Clone, Debug, PartialEq)]
pub struct InlineBody {
    /// Declaration keys of the helper's parameters, in order.
    pub params: Vec<String>,
    /// The returned expression (already converted to the return type).
    pub value: CExpr,
    /// The statements before the `return` (empty for `return expr;`).
    pub stmts: Vec<CStmt>,
    /// The helper's parameters as declared (names, types), in order.
    pub param_decls: Vec<CVarDecl>,
    /// The helper's name and result type.
    pub name: String,
    pub result: CType,
}

/// A declared variable (parameter, local or global).
#[derive(Clone, Debug, PartialEq)]
pub struct CVarDecl {
    pub name: String,
    pub key: String,
    pub ty: CType,
    /// Size expressions of the array levels, outermost first; `None` for a
    /// level written without a size (`A[]`).
    pub dims: Vec<Option<CExpr>>,
    pub init: Option<CExpr>,
    pub is_static: bool,
    pub loc: Loc,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CStmt {
    Compound(Vec<CStmt>, Loc),
    Decl(Vec<CVarDecl>, Loc),
    Expr(CExpr),
    If {
        cond: CExpr,
        then_branch: Box<CStmt>,
        else_branch: Option<Box<CStmt>>,
        loc: Loc,
    },
    /// A `for` with all three header parts present.
    For {
        init: Box<CStmt>,
        cond: CExpr,
        inc: CExpr,
        body: Box<CStmt>,
        loc: Loc,
    },
    Return(Option<CExpr>, Loc),
    Null(Loc),
    /// A statement the reader already refused (its diagnostic is recorded).
    Rejected(Loc),
}

impl CStmt {
    /// `for (T k = 0; k < count; ++k) body(k)`: a fresh local `k` of
    /// `count`'s type, declared under `key` (a key no C declaration has),
    /// for the loops the reader builds (`memset`, a pointer iterator).
    pub fn counted_loop(
        key: String,
        loc: &Loc,
        count: CExpr,
        body: impl FnOnce(CExpr) -> CStmt,
    ) -> CStmt {
        let ty = count.ty.clone();
        let at = |kind| CExpr {
            kind,
            ty: ty.clone(),
            loc: loc.clone(),
        };
        let k = || {
            at(CExprKind::Ref(DeclRef {
                name: "k".into(),
                key: key.clone(),
                target: RefTarget::Local,
            }))
        };
        let init = CStmt::Decl(
            vec![CVarDecl {
                name: "k".into(),
                key: key.clone(),
                ty: ty.clone(),
                dims: Vec::new(),
                init: Some(at(CExprKind::Int(IntValue::Fits(0)))),
                is_static: false,
                loc: loc.clone(),
            }],
            loc.clone(),
        );
        let cond = CExpr {
            kind: CExprKind::Binary {
                op: CBinOp::Lt,
                lhs: Box::new(k()),
                rhs: Box::new(count),
            },
            ty: CType::Scalar(ScalarType::I32),
            loc: loc.clone(),
        };
        let inc = at(CExprKind::Unary {
            op: CUnOp::PreInc,
            arg: Box::new(k()),
        });
        CStmt::For {
            init: Box::new(init),
            cond,
            inc,
            body: Box::new(body(k())),
            loc: loc.clone(),
        }
    }

    /// This statement with every expression it holds (initialisers, array
    /// sizes, conditions, steps, returned values; not sub-expressions)
    /// replaced by `f` of it, nested statements rebuilt the same way: the
    /// one walk for rewrites of C syntax before lowering.
    pub fn map_exprs(&self, f: &mut dyn FnMut(&CExpr) -> CExpr) -> CStmt {
        match self {
            CStmt::Compound(inner, loc) => {
                CStmt::Compound(inner.iter().map(|s| s.map_exprs(f)).collect(), loc.clone())
            }
            CStmt::Decl(vars, loc) => CStmt::Decl(
                vars.iter()
                    .map(|v| CVarDecl {
                        init: v.init.as_ref().map(&mut *f),
                        dims: v.dims.iter().map(|d| d.as_ref().map(&mut *f)).collect(),
                        ..v.clone()
                    })
                    .collect(),
                loc.clone(),
            ),
            CStmt::Expr(e) => CStmt::Expr(f(e)),
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                loc,
            } => CStmt::If {
                cond: f(cond),
                then_branch: Box::new(then_branch.map_exprs(f)),
                else_branch: else_branch.as_ref().map(|b| Box::new(b.map_exprs(f))),
                loc: loc.clone(),
            },
            CStmt::For {
                init,
                cond,
                inc,
                body,
                loc,
            } => CStmt::For {
                init: Box::new(init.map_exprs(f)),
                cond: f(cond),
                inc: f(inc),
                body: Box::new(body.map_exprs(f)),
                loc: loc.clone(),
            },
            CStmt::Return(value, loc) => CStmt::Return(value.as_ref().map(&mut *f), loc.clone()),
            CStmt::Null(_) | CStmt::Rejected(_) => self.clone(),
        }
    }

    /// This statement with each directly nested statement (block items,
    /// branches, a loop's header statement and body) replaced by `f` of
    /// it; expressions stay as they are.
    pub fn map_stmts(&self, f: &mut dyn FnMut(&CStmt) -> CStmt) -> CStmt {
        match self {
            CStmt::Compound(items, loc) => {
                CStmt::Compound(items.iter().map(&mut *f).collect(), loc.clone())
            }
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                loc,
            } => CStmt::If {
                cond: cond.clone(),
                then_branch: Box::new(f(then_branch)),
                else_branch: else_branch.as_ref().map(|b| Box::new(f(b))),
                loc: loc.clone(),
            },
            CStmt::For {
                init,
                cond,
                inc,
                body,
                loc,
            } => CStmt::For {
                init: Box::new(f(init)),
                cond: cond.clone(),
                inc: inc.clone(),
                body: Box::new(f(body)),
                loc: loc.clone(),
            },
            other => other.clone(),
        }
    }

    /// Whether some expression the statement holds (the ones
    /// [`CStmt::map_exprs`] maps, nested statements included) satisfies `p`.
    pub fn any_expr(&self, p: &mut dyn FnMut(&CExpr) -> bool) -> bool {
        match self {
            CStmt::Compound(items, _) => items.iter().any(|s| s.any_expr(p)),
            CStmt::Decl(vars, _) => vars.iter().any(|v| {
                v.init.as_ref().is_some_and(&mut *p) || v.dims.iter().flatten().any(&mut *p)
            }),
            CStmt::Expr(e) => p(e),
            CStmt::If {
                cond,
                then_branch,
                else_branch,
                ..
            } => {
                p(cond)
                    || then_branch.any_expr(p)
                    || else_branch.as_ref().is_some_and(|b| b.any_expr(p))
            }
            CStmt::For {
                init,
                cond,
                inc,
                body,
                ..
            } => init.any_expr(p) || p(cond) || p(inc) || body.any_expr(p),
            CStmt::Return(value, _) => value.as_ref().is_some_and(p),
            CStmt::Null(_) | CStmt::Rejected(_) => false,
        }
    }

    /// Whether the statement refers to the variable `key` anywhere.
    pub fn refers_to(&self, key: &str) -> bool {
        self.any_expr(&mut |e| e.refers_to(key))
    }

    /// Whether the statement declares, assigns, increments or decrements
    /// the variable `key` anywhere.
    pub fn writes(&self, key: &str) -> bool {
        self.any_expr(&mut |e| e.writes(key)) || self.declares(key)
    }

    fn declares(&self, key: &str) -> bool {
        match self {
            CStmt::Decl(vars, _) => vars.iter().any(|v| v.key == key),
            CStmt::Compound(items, _) => items.iter().any(|s| s.declares(key)),
            CStmt::If {
                then_branch,
                else_branch,
                ..
            } => then_branch.declares(key) || else_branch.as_ref().is_some_and(|b| b.declares(key)),
            CStmt::For { init, body, .. } => init.declares(key) || body.declares(key),
            _ => false,
        }
    }

    pub fn loc(&self) -> &Loc {
        match self {
            CStmt::Compound(_, loc)
            | CStmt::Decl(_, loc)
            | CStmt::Return(_, loc)
            | CStmt::Null(loc)
            | CStmt::Rejected(loc) => loc,
            CStmt::Expr(e) => &e.loc,
            CStmt::If { loc, .. } | CStmt::For { loc, .. } => loc,
        }
    }
}

/// Where a struct field lies: its offset and its record's size, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldLayout {
    pub offset: i64,
    pub record_size: i64,
}

/// A function definition, read.
#[derive(Clone, Debug, PartialEq)]
pub struct CFunction {
    pub name: String,
    pub key: String,
    pub params: Vec<CVarDecl>,
    pub result: CType,
    pub body: Vec<CStmt>,
    pub loc: Loc,
    pub start_line: u32,
    pub end_line: u32,
    /// Globals the body references, by key, in declaration order.
    pub globals: Vec<CVarDecl>,
    /// The layout of each struct field the body names, by (struct type as
    /// [`CType::Struct`] spells it, field name).
    pub field_layouts: std::collections::BTreeMap<(String, String), FieldLayout>,
    /// The conditions of its `assert(…)` statements, as written, and where
    /// each is (the reader drops the statements: see `Kernel::asserted`).
    pub asserted: Vec<(String, Loc)>,
    /// The conditions of its `do … while` loops, read as `while` loops
    /// (see `reader::do_while`), and where each loop is.
    pub entered: Vec<(String, Loc)>,
}
