//! Loop-IR rewriting: one walk over statements and expressions with hooks
//! for expression nodes, subscripts and loop bounds, the substitution of
//! an iterator by an affine expression (a reversed loop's `j ↦ h - 1 - j`,
//! a peeled iteration's `i ↦ k`), and descending loops made ascending.
//! The synthesizer's restructurings and the verifier's unbounded prover
//! both rewrite loop nests this way, so it lives with the IR.

use crate::ir::{
    self as loop_ir, Affine, BinaryOp, Expr, ExprKind, LValue, Loop, ScalarType, VarClass,
};

/// What a rewrite changes; every hook defaults to "nothing".
pub trait Rewrite {
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

pub fn rewrite_expr(e: &Expr, r: &dyn Rewrite) -> Expr {
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

pub fn rewrite_stmt(s: &loop_ir::Stmt, r: &dyn Rewrite) -> loop_ir::Stmt {
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
pub fn substitute_affine(a: &Affine, var: &str, by: &Affine) -> Affine {
    let Some(&c) = a.terms.get(var) else {
        return a.clone();
    };
    let mut rest = a.clone();
    rest.terms.remove(var);
    add(&rest, &scale(by, c))
}

pub fn scale(a: &Affine, c: i64) -> Affine {
    let mut out = a.clone();
    out.constant *= c;
    out.terms.values_mut().for_each(|v| *v *= c);
    out.terms.retain(|_, v| *v != 0);
    out
}

/// Replaces the iterator `var` by the affine `by` everywhere: subscripts,
/// loop bounds and values. `iterators` tells which names of `by` are loop
/// iterators (the others are size parameters).
pub struct Substitute<'a> {
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
pub fn affine_expr(a: &Affine, ty: ScalarType, iterators: &[String]) -> Expr {
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
pub fn iterators(stmts: &[loop_ir::Stmt], out: &mut Vec<String>) {
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

/// `e` as an affine function of iterators and integer parameters, when it
/// is one (literals, variables, `+`, `-`, multiplication by a literal,
/// integer conversions).
pub fn affine_of(e: &Expr) -> Option<Affine> {
    match &e.kind {
        ExprKind::IntLit { value } => Some(Affine::constant(*value)),
        ExprKind::Var { name, class } if *class != VarClass::Local && wide_int(e.ty) => {
            Some(Affine::var(name.clone()))
        }
        // Iterators and sizes are C `int`s: widening or narrowing between
        // 32 and 64 bits keeps their values.
        ExprKind::Cast { arg } if wide_int(e.ty) && wide_int(arg.ty) => affine_of(arg),
        ExprKind::Unary {
            op: loop_ir::UnaryOp::Neg,
            arg,
        } => Some(scale(&affine_of(arg)?, -1)),
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (affine_of(lhs)?, affine_of(rhs)?);
            match op {
                BinaryOp::Add => Some(add(&a, &b)),
                BinaryOp::Sub => Some(difference(&a, &b)),
                BinaryOp::Mul => match (a.as_constant(), b.as_constant()) {
                    (Some(c), _) => Some(scale(&b, c)),
                    (_, Some(c)) => Some(scale(&a, c)),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
}

fn wide_int(t: ScalarType) -> bool {
    matches!(t, ScalarType::I32 | ScalarType::I64)
}

/// A guard as a conjunction of `a >= 0` rows, when it is a comparison (or
/// a conjunction of comparisons) of affine expressions; `!=` and `||` are
/// not conjunctions.
pub fn constraints_of(cond: &Expr) -> Option<Vec<Affine>> {
    let ExprKind::Binary { op, lhs, rhs } = &cond.kind else {
        return None;
    };
    if *op == BinaryOp::And {
        let mut rows = constraints_of(lhs)?;
        rows.extend(constraints_of(rhs)?);
        return Some(rows);
    }
    let (a, b) = (affine_of(lhs)?, affine_of(rhs)?);
    let less = |x: &Affine, y: &Affine, strict: bool| {
        let mut d = difference(y, x);
        if strict {
            d.constant -= 1;
        }
        d
    };
    Some(match op {
        BinaryOp::Lt => vec![less(&a, &b, true)],
        BinaryOp::Le => vec![less(&a, &b, false)],
        BinaryOp::Gt => vec![less(&b, &a, true)],
        BinaryOp::Ge => vec![less(&b, &a, false)],
        BinaryOp::Eq => vec![less(&a, &b, false), less(&b, &a, false)],
        _ => return None,
    })
}

/// `a - b`.
pub fn difference(a: &Affine, b: &Affine) -> Affine {
    let mut out = a.clone();
    out.constant -= b.constant;
    for (k, c) in &b.terms {
        let e = out.terms.entry(k.clone()).or_insert(0);
        *e -= c;
        if *e == 0 {
            out.terms.remove(k);
        }
    }
    out
}

/// `a + b`.
pub fn add(a: &Affine, b: &Affine) -> Affine {
    difference(a, &scale(b, -1))
}

/// The descending `l` (step -1) as an ascending loop of the same name
/// over the same values in the same order: `for (j = s; j > e; j--)`
/// becomes `for j in e + 1..s + 1` with `j ↦ s + e + 1 - j` in its body.
/// `names` are the kernel's loop iterators.
pub fn ascending(l: &Loop, names: &[String]) -> Loop {
    // Old values s, s - 1, …, e + 1; new values e + 1, …, s.
    let mut first = l.end.clone();
    first.constant += 1;
    let mut stop = l.start.clone();
    stop.constant += 1;
    let mirror = difference(&add(&l.start, &first), &Affine::var(l.iter.clone()));
    let rewrite = Substitute {
        var: &l.iter,
        by: &mirror,
        iterators: names,
    };
    Loop {
        iter: l.iter.clone(),
        start: first,
        end: stop,
        step: 1,
        body: l.body.iter().map(|s| rewrite_stmt(s, &rewrite)).collect(),
        loc: l.loc.clone(),
    }
}

/// `stmt` with every step -1 loop in it ascending, and whether any was.
pub fn ascend(stmt: &loop_ir::Stmt, names: &[String]) -> (loop_ir::Stmt, bool) {
    match stmt {
        loop_ir::Stmt::Loop(l) => {
            let mut changed = false;
            let mut l = l.clone();
            if l.step == -1 {
                l = ascending(&l, names);
                changed = true;
            }
            let mut body = Vec::new();
            for s in &l.body {
                let (s, c) = ascend(s, names);
                changed |= c;
                body.push(s);
            }
            (loop_ir::Stmt::Loop(Loop { body, ..l }), changed)
        }
        loop_ir::Stmt::If {
            cond,
            kind,
            then_body,
            else_body,
            loc,
        } => {
            let mut changed = false;
            let mut block = |b: &[loop_ir::Stmt]| -> Vec<loop_ir::Stmt> {
                b.iter()
                    .map(|s| {
                        let (s, c) = ascend(s, names);
                        changed |= c;
                        s
                    })
                    .collect()
            };
            let (then_body, else_body) = (block(then_body), block(else_body));
            let s = loop_ir::Stmt::If {
                cond: cond.clone(),
                kind: *kind,
                then_body,
                else_body,
                loc: loc.clone(),
            };
            (s, changed)
        }
        other => (other.clone(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Loc, Stmt};

    /// `for (i = n - 1; i >= 0; i--) x[i] = i;` runs `i` over
    /// `0..n` with `x[n - 1 - i] = n - 1 - i`.
    #[test]
    fn a_descending_loop_ascends_over_the_same_values() {
        let mut start = Affine::var("n");
        start.constant = -1;
        let loc = Loc {
            file: "t.c".into(),
            line: 1,
            col: 1,
        };
        let value = Expr {
            ty: ScalarType::I32,
            kind: ExprKind::Var {
                name: "i".into(),
                class: VarClass::Iter,
            },
        };
        let l = Loop {
            iter: "i".into(),
            start,
            end: Affine::constant(-1),
            step: -1,
            body: vec![Stmt::Assign {
                target: LValue::Element {
                    array: "x".into(),
                    index: vec![Affine::var("i")],
                    ty: ScalarType::I32,
                },
                value,
                loc: loc.clone(),
            }],
            loc,
        };
        let (Stmt::Loop(up), true) = ascend(&Stmt::Loop(l), &["i".to_string()]) else {
            panic!("not turned around")
        };
        assert_eq!(
            (up.start.to_string(), up.end.to_string(), up.step),
            ("0".into(), "n".into(), 1)
        );
        let Stmt::Assign { target, value, .. } = &up.body[0] else {
            panic!("{:?}", up.body)
        };
        let LValue::Element { index, .. } = target else {
            panic!("{target:?}")
        };
        assert_eq!(index[0].to_string(), "-i + n - 1");
        assert!(matches!(value.kind, ExprKind::Binary { .. }), "{value:?}");
    }
}
