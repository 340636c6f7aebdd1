//! Definitions that every segment under a kept loop may read: the C locals
//! assigned once, before the loop, from scalar parameters only (adi's
//! `DX = 1.0 / n`, `a = -mul1 / 2.0`), and the program's `let`s that read
//! no array. Segments are proved on their own and C locals carry nothing
//! across a segment boundary, so a body that reads such a local would be
//! refused; instead each segment under the loop starts with the
//! definitions, on both sides.
//!
//! Soundness: a hoisted C local is assigned exactly once in the whole
//! kernel, unconditionally and before the loop, from parameters the kernel
//! never assigns and from other hoisted locals, so wherever the loop body
//! reads it, it holds what its definition computes there. A `let` is
//! immutable, and one that reads only scalar parameters and other such
//! `let`s has the same value at every point.

use std::collections::HashSet;

use tenslift_frontend::ir::{self as loop_ir, ExprKind, Kernel, LValue, VarClass};
use tenslift_targets::{ParamKind, Program, Stmt};

use super::names;

/// The definitions in scope for the segments of a kept loop's body.
#[derive(Clone, Default)]
pub(super) struct Hoisted {
    pub c: Vec<loop_ir::Stmt>,
    pub t: Vec<Stmt>,
}

impl Hoisted {
    /// These definitions plus those of `c_before` and `t_before` (the
    /// statements before a kept loop) that qualify.
    pub fn extend(
        &self,
        kernel: &Kernel,
        program: &Program,
        c_before: &[loop_ir::Stmt],
        t_before: &[Stmt],
        paired: &HashSet<String>,
    ) -> Hoisted {
        let mut out = self.clone();
        let mut c_names: HashSet<String> = out.c.iter().filter_map(assigned).collect();
        for s in c_before {
            let (Some(name), loop_ir::Stmt::Assign { value, .. }) = (assigned(s), s) else {
                continue;
            };
            if !paired.contains(&name)
                && assignments(&kernel.body, &name) == 1
                && scalar_only(value, &c_names)
            {
                c_names.insert(name);
                out.c.push(s.clone());
            }
        }
        let mut t_names: HashSet<String> = out.t.iter().filter_map(let_name).collect();
        for s in t_before {
            let Stmt::Let { name, value } = s else {
                continue;
            };
            let mut read = HashSet::new();
            names(value, &mut read);
            let pure = read.iter().all(|n| {
                t_names.contains(n)
                    || matches!(
                        program.param(n).map(|p| &p.kind),
                        Some(ParamKind::Size | ParamKind::Scalar(_))
                    )
            });
            if pure {
                t_names.insert(name.to_string());
                out.t.push(s.clone());
            }
        }
        out
    }

    /// Whether `name` is a hoisted `let`.
    pub fn binds(&self, name: &str) -> bool {
        self.t
            .iter()
            .any(|s| matches!(s, Stmt::Let { name: n, .. } if **n == *name))
    }

    /// `c` and `t` with the definitions in front.
    pub fn around(&self, c: &[loop_ir::Stmt], t: &[Stmt]) -> (Vec<loop_ir::Stmt>, Vec<Stmt>) {
        ([&self.c[..], c].concat(), [&self.t[..], t].concat())
    }
}

/// The local scalar `s` assigns, if it is such an assignment.
fn assigned(s: &loop_ir::Stmt) -> Option<String> {
    match s {
        loop_ir::Stmt::Assign {
            target: LValue::Scalar { name, .. },
            ..
        } => Some(name.clone()),
        _ => None,
    }
}

fn let_name(s: &Stmt) -> Option<String> {
    match s {
        Stmt::Let { name, .. } => Some(name.to_string()),
        _ => None,
    }
}

/// How many statements of `body` assign local `name`.
fn assignments(body: &[loop_ir::Stmt], name: &str) -> usize {
    body.iter()
        .map(|s| match s {
            loop_ir::Stmt::Loop(l) => assignments(&l.body, name),
            loop_ir::Stmt::If {
                then_body,
                else_body,
                ..
            } => assignments(then_body, name) + assignments(else_body, name),
            other => usize::from(assigned(other).as_deref() == Some(name)),
        })
        .sum()
}

/// Whether `e` reads no array, no loop counter, and no local but those of
/// `defined`.
fn scalar_only(e: &loop_ir::Expr, defined: &HashSet<String>) -> bool {
    match &e.kind {
        ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } => true,
        ExprKind::Var { name, class } => match class {
            VarClass::Param => true,
            VarClass::Local => defined.contains(name),
            VarClass::Iter => false,
        },
        ExprKind::Load { .. } => false,
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => scalar_only(arg, defined),
        ExprKind::Binary { lhs, rhs, .. } => scalar_only(lhs, defined) && scalar_only(rhs, defined),
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => [cond, then_value, else_value]
            .iter()
            .all(|x| scalar_only(x, defined)),
        ExprKind::Call { args, .. } => args.iter().all(|a| scalar_only(a, defined)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_targets::parse_program;

    fn kernel(text: &str) -> Kernel {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("k.c");
        std::fs::write(&path, text).expect("writable");
        let tu = tenslift_frontend::extract(
            &path.display().to_string(),
            &tenslift_frontend::Options::default(),
        )
        .expect("extracts");
        tu.kernels[0].clone()
    }

    /// adi's constants: a local computed once from the parameters is
    /// hoisted, with the locals it reads; one assigned again, or read
    /// off an array, is not.
    #[test]
    fn only_locals_defined_once_from_scalars_are_hoisted() {
        let k = kernel(
            "void f(int n, int t, double u[n], double v[n]) {\n  double dx, a, s, r;\n  dx = 1.0 / n;\n  a = -dx / 2.0;\n  s = u[0];\n  r = 1.0;\n  for (int i = 0; i < t; i++) {\n    for (int j = 0; j < n; j++)\n      v[j] = a * u[j] + s + r;\n    r = r + 1.0;\n  }\n}\n",
        );
        let program = parse_program(
            "<test>",
            "func f(n: size, t: size, u: f64[n], v: inout f64[n]) {\n  let dx = div(1.0, cast(n, f64));\n  let a = div(neg(dx), 2.0);\n  let s = u[0];\n  for i in 0..t {\n    v[0:n] = add(mul(a, u[0:n]), s);\n  }\n}\n",
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let [before @ .., _] = k.body.as_slice() else {
            panic!("{:?}", k.body)
        };
        let t_before = &program.body[..3];
        let h = Hoisted::default().extend(&k, &program, before, t_before, &HashSet::new());
        let c: Vec<String> = h.c.iter().filter_map(assigned).collect();
        assert_eq!(c, ["dx", "a"]);
        let t: Vec<String> = h.t.iter().filter_map(let_name).collect();
        assert_eq!(t, ["dx", "a"]);
        assert!(h.binds("a") && !h.binds("s"));
        // A local paired with a program `var` is compared state, not a
        // definition.
        let paired = HashSet::from(["dx".to_string()]);
        let h = Hoisted::default().extend(&k, &program, before, t_before, &paired);
        assert!(h
            .c
            .iter()
            .filter_map(assigned)
            .all(|n| n != "dx" && n != "a"));
    }
}
