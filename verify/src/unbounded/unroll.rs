//! Loops with a small constant trip count (`for (s = 0; s < 3; s++)` over
//! the slices of a stacked temporary) are replaced by copies of their body,
//! one per iteration, with the counter substituted. Straight-line code
//! needs no invariant, and the loops around it keep theirs: what such a
//! loop computes is exact, not cut at a size.

use tenslift_frontend::ir::{Affine, Kernel, Loop, Stmt};
use tenslift_frontend::ir_rewrite::{rewrite_stmt, Substitute};

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

/// `s` with the counter `iter` at the constant `v`.
fn stmt(s: &Stmt, iter: &str, v: i64) -> Stmt {
    let at = Affine::constant(v);
    let substitute = Substitute {
        var: iter,
        by: &at,
        iterators: &[],
    };
    rewrite_stmt(s, &substitute)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_frontend::ir::{Expr, ExprKind};

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
