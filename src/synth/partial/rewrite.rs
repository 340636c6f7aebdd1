//! Loop-IR rewriting shared by the restructurings: one walk over
//! statements and expressions with hooks for expression nodes, subscripts
//! and loop bounds, and the substitution of an iterator by an affine
//! expression (a reversed loop's `j ↦ h - 1 - j`, a peeled iteration's
//! `i ↦ k`).

use tenslift_frontend::ir::{
    self as loop_ir, Affine, BinaryOp, Expr, ExprKind, LValue, Loop, ScalarType, VarClass,
};

use super::dependence::add;

/// What a rewrite changes; every hook defaults to "nothing".
pub(super) trait Rewrite {
    /// A replacement for this expression node (its operands are then not
    /// visited), or `None` to rewrite inside it.
    fn expr(&self, _e: &Expr) -> Option<Expr> {
        None
    }
    /// Every affine subscript and loop bound.
    fn affine(&self, a: &Affine) -> Affine {
        a.clone()
    }
    /// An assignment's target, after its subscripts were rewritten.
    fn lvalue(&self, lv: LValue) -> LValue {
        lv
    }
}

pub(super) fn rewrite_expr(e: &Expr, r: &dyn Rewrite) -> Expr {
    if let Some(replaced) = r.expr(e) {
        return replaced;
    }
    let sub = |x: &Expr| Box::new(rewrite_expr(x, r));
    let kind = match &e.kind {
        ExprKind::Load { array, index } => ExprKind::Load {
            array: array.clone(),
            index: index.iter().map(|a| r.affine(a)).collect(),
        },
        ExprKind::Unary { op, arg } => ExprKind::Unary {
            op: *op,
            arg: sub(arg),
        },
        ExprKind::Cast { arg } => ExprKind::Cast { arg: sub(arg) },
        ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
            op: *op,
            lhs: sub(lhs),
            rhs: sub(rhs),
        },
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => ExprKind::Select {
            cond: sub(cond),
            then_value: sub(then_value),
            else_value: sub(else_value),
        },
        ExprKind::Call { func, args } => ExprKind::Call {
            func: *func,
            args: args.iter().map(|a| rewrite_expr(a, r)).collect(),
        },
        other => other.clone(),
    };
    Expr { ty: e.ty, kind }
}

pub(super) fn rewrite_stmt(s: &loop_ir::Stmt, r: &dyn Rewrite) -> loop_ir::Stmt {
    let block = |b: &[loop_ir::Stmt]| b.iter().map(|s| rewrite_stmt(s, r)).collect();
    match s {
        loop_ir::Stmt::Loop(l) => loop_ir::Stmt::Loop(Loop {
            start: r.affine(&l.start),
            end: r.affine(&l.end),
            body: block(&l.body),
            ..l.clone()
        }),
        loop_ir::Stmt::Assign { target, value, loc } => {
            let target = match target {
                LValue::Element { array, index, ty } => LValue::Element {
                    array: array.clone(),
                    index: index.iter().map(|a| r.affine(a)).collect(),
                    ty: *ty,
                },
                scalar => scalar.clone(),
            };
            loop_ir::Stmt::Assign {
                target: r.lvalue(target),
                value: rewrite_expr(value, r),
                loc: loc.clone(),
            }
        }
        loop_ir::Stmt::If {
            cond,
            kind,
            then_body,
            else_body,
            loc,
        } => loop_ir::Stmt::If {
            cond: rewrite_expr(cond, r),
            kind: *kind,
            then_body: block(then_body),
            else_body: block(else_body),
            loc: loc.clone(),
        },
        loop_ir::Stmt::Return { value, loc } => loop_ir::Stmt::Return {
            value: rewrite_expr(value, r),
            loc: loc.clone(),
        },
    }
}

/// `a` with `var` replaced by `by`.
pub(super) fn substitute_affine(a: &Affine, var: &str, by: &Affine) -> Affine {
    let Some(&c) = a.terms.get(var) else {
        return a.clone();
    };
    let mut rest = a.clone();
    rest.terms.remove(var);
    add(&rest, &scale(by, c))
}

pub(super) fn scale(a: &Affine, c: i64) -> Affine {
    let mut out = a.clone();
    out.constant *= c;
    out.terms.values_mut().for_each(|v| *v *= c);
    out.terms.retain(|_, v| *v != 0);
    out
}

/// Replaces the iterator `var` by the affine `by` everywhere: subscripts,
/// loop bounds and values. `iterators` tells which names of `by` are loop
/// iterators (the others are size parameters).
pub(super) struct Substitute<'a> {
    pub var: &'a str,
    pub by: &'a Affine,
    pub iterators: &'a [String],
}

impl Rewrite for Substitute<'_> {
    fn expr(&self, e: &Expr) -> Option<Expr> {
        match &e.kind {
            ExprKind::Var { name, .. } if name == self.var => {
                Some(affine_expr(self.by, e.ty, self.iterators))
            }
            _ => None,
        }
    }

    fn affine(&self, a: &Affine) -> Affine {
        substitute_affine(a, self.var, self.by)
    }
}

/// `a` as a loop-IR expression of type `ty` (`h - 1 - j`).
pub(super) fn affine_expr(a: &Affine, ty: ScalarType, iterators: &[String]) -> Expr {
    let lit = |v: i64| Expr {
        ty,
        kind: ExprKind::IntLit { value: v },
    };
    let binary = |op, lhs: Expr, rhs: Expr| Expr {
        ty,
        kind: ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
    };
    let mut out: Option<Expr> = None;
    for (name, &c) in &a.terms {
        let class = if iterators.contains(name) {
            VarClass::Iter
        } else {
            VarClass::Param
        };
        let var = Expr {
            ty,
            kind: ExprKind::Var {
                name: name.clone(),
                class,
            },
        };
        let term = if c.abs() == 1 {
            var
        } else {
            binary(BinaryOp::Mul, lit(c.abs()), var)
        };
        out = Some(match out {
            None if c < 0 => binary(BinaryOp::Sub, lit(0), term),
            None => term,
            Some(acc) if c < 0 => binary(BinaryOp::Sub, acc, term),
            Some(acc) => binary(BinaryOp::Add, acc, term),
        });
    }
    match out {
        None => lit(a.constant),
        Some(e) if a.constant > 0 => binary(BinaryOp::Add, e, lit(a.constant)),
        Some(e) if a.constant < 0 => binary(BinaryOp::Sub, e, lit(-a.constant)),
        Some(e) => e,
    }
}

/// Every loop iterator named in `stmts`, outermost first.
pub(super) fn iterators(stmts: &[loop_ir::Stmt], out: &mut Vec<String>) {
    for s in stmts {
        match s {
            loop_ir::Stmt::Loop(l) => {
                out.push(l.iter.clone());
                iterators(&l.body, out);
            }
            loop_ir::Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                iterators(then_body, out);
                iterators(else_body, out);
            }
            _ => {}
        }
    }
}
