//! Loops with a small constant trip count (`for (s = 0; s < 3; s++)` over
//! the slices of a stacked temporary) are replaced by copies of their body,
//! one per iteration, with the counter substituted. Straight-line code
//! needs no invariant, and the loops around it keep theirs: what such a
//! loop computes is exact, not cut at a size.

use tenslift_frontend::ir::{Affine, Expr, ExprKind, Kernel, LValue, Loop, Stmt};

/// Loops with at most this many iterations are unrolled.
const MAX_UNROLLED_TRIPS: i64 = 4;

/// The kernel with every loop of constant bounds and at most
/// [`MAX_UNROLLED_TRIPS`] iterations unrolled (innermost first).
pub(crate) fn unroll_small_loops(kernel: &Kernel) -> Kernel {
    let mut out = kernel.clone();
    out.body = block(&kernel.body);
    out
}

fn block(stmts: &[Stmt]) -> Vec<Stmt> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            Stmt::Loop(l) => {
                let body = block(&l.body);
                match trips(l) {
                    Some(values) => {
                        for v in values {
                            out.extend(body.iter().map(|b| stmt(b, &l.iter, v)));
                        }
                    }
                    None => out.push(Stmt::Loop(Loop { body, ..l.clone() })),
                }
            }
            Stmt::If {
                cond,
                kind,
                then_body,
                else_body,
                loc,
            } => out.push(Stmt::If {
                cond: cond.clone(),
                kind: *kind,
                then_body: block(then_body),
                else_body: block(else_body),
                loc: loc.clone(),
            }),
            other => out.push(other.clone()),
        }
    }
    out
}

/// The counter's values when the loop has constant bounds and few trips.
fn trips(l: &Loop) -> Option<Vec<i64>> {
    let (start, end) = (l.start.as_constant()?, l.end.as_constant()?);
    if l.step != 1 || end - start > MAX_UNROLLED_TRIPS {
        return None;
    }
    Some((start..end).collect())
}

fn stmt(s: &Stmt, iter: &str, v: i64) -> Stmt {
    match s {
        Stmt::Loop(l) => Stmt::Loop(Loop {
            start: affine(&l.start, iter, v),
            end: affine(&l.end, iter, v),
            body: l.body.iter().map(|b| stmt(b, iter, v)).collect(),
            ..l.clone()
        }),
        Stmt::Assign { target, value, loc } => Stmt::Assign {
            target: match target {
                LValue::Element { array, index, ty } => LValue::Element {
                    array: array.clone(),
                    index: index.iter().map(|a| affine(a, iter, v)).collect(),
                    ty: *ty,
                },
                scalar => scalar.clone(),
            },
            value: expr(value, iter, v),
            loc: loc.clone(),
        },
        Stmt::If {
            cond,
            kind,
            then_body,
            else_body,
            loc,
        } => Stmt::If {
            cond: expr(cond, iter, v),
            kind: *kind,
            then_body: then_body.iter().map(|b| stmt(b, iter, v)).collect(),
            else_body: else_body.iter().map(|b| stmt(b, iter, v)).collect(),
            loc: loc.clone(),
        },
        Stmt::Return { value, loc } => Stmt::Return {
            value: expr(value, iter, v),
            loc: loc.clone(),
        },
    }
}

fn affine(a: &Affine, iter: &str, v: i64) -> Affine {
    let mut out = a.clone();
    if let Some(c) = out.terms.remove(iter) {
        out.constant += c * v;
    }
    out
}

fn expr(e: &Expr, iter: &str, v: i64) -> Expr {
    let sub = |x: &Expr| Box::new(expr(x, iter, v));
    let kind = match &e.kind {
        ExprKind::Var { name, .. } if name == iter => ExprKind::IntLit { value: v },
        ExprKind::Load { array, index } => ExprKind::Load {
            array: array.clone(),
            index: index.iter().map(|a| affine(a, iter, v)).collect(),
        },
        ExprKind::Unary { op, arg } => ExprKind::Unary {
            op: *op,
            arg: sub(arg),
        },
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
        ExprKind::Cast { arg } => ExprKind::Cast { arg: sub(arg) },
        ExprKind::Call { func, args } => ExprKind::Call {
            func: *func,
            args: args.iter().map(|a| expr(a, iter, v)).collect(),
        },
        other => other.clone(),
    };
    Expr { ty: e.ty, kind }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_trip_loop_becomes_straight_line_code() {
        let text = "void f(int n, double A[3][n], double out[n]) {\n  for (int i = 0; i < n; i++) {\n    out[i] = 0.0;\n    for (int s = 0; s < 3; s++)\n      out[i] += A[s][i];\n  }\n}\n";
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.c");
        std::fs::write(&path, text).expect("writable");
        let tu = tenslift_frontend::extract(
            &path.display().to_string(),
            &tenslift_frontend::Options::default(),
        )
        .expect("extracts");
        let kernel = unroll_small_loops(&tu.kernels[0]);
        let [Stmt::Loop(outer)] = kernel.body.as_slice() else {
            panic!("one loop left: {:?}", kernel.body)
        };
        assert_eq!(outer.body.len(), 4, "{:?}", outer.body);
        let firsts: Vec<i64> = outer.body[1..]
            .iter()
            .filter_map(|s| match s {
                Stmt::Assign { value, .. } => first_index(value),
                _ => None,
            })
            .collect();
        assert_eq!(firsts, vec![0, 1, 2]);
    }

    /// The constant first subscript of the load of `A` in `e`.
    fn first_index(e: &Expr) -> Option<i64> {
        match &e.kind {
            ExprKind::Load { array, index } if array == "A" => index[0].as_constant(),
            ExprKind::Binary { lhs, rhs, .. } => first_index(lhs).or_else(|| first_index(rhs)),
            ExprKind::Cast { arg } | ExprKind::Unary { arg, .. } => first_index(arg),
            _ => None,
        }
    }
}
