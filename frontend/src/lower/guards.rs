//! Leading guards, `if (n <= 0) return;` (or `return 0.0f;`), as
//! BLAS-style code opens with, and the guards that change what the kernel
//! does (`if (da == 0.0) return;`, `if (blockSize <= 1U) { *pResult = 0;
//! return; }`). The loop IR has no early exit, so every leading guard is
//! taken off the C before lowering ([`strip`]). A guard is then dropped
//! when it changes nothing: every disjunct of its condition says that some
//! integer parameter `v` is at most 0, and under each of them every
//! assignment of the rest of the kernel sits in a loop that then runs no
//! iteration, and what the kernel returns is the guard's value (a local set
//! to that literal before the loops, or nothing) ([`redundant`]).
//!
//! When one guard matters, all of them are kept, in order, ahead of the
//! lifted program ([`kept`], `Kernel::guards`): the program computes the
//! rest of the kernel, and each target checks the conditions first and
//! does what the C does then (stores literals into outputs, returns a
//! literal or nothing). That is the C exactly: the guards are its own
//! statements, over its scalar parameters only, and the rest is verified
//! like any kernel. A guard reading anything else (an array, a call, a
//! local) keeps the kernel refused, with the reason.

use crate::affine::Poly;
use crate::ir::{Affine, Expr, ExprKind, Kernel, KernelGuard, LValue, Loc, Loop, Stmt, VarClass};
use crate::syntax::{
    CBinOp, CExpr, CExprKind, CFunction, CStmt, CType, CUnOp, IntValue, RefTarget,
};

/// A stripped guard: its condition, the parameters one of which is at
/// most 0 when it holds (`None` when the condition says something else),
/// the literals it stores into outputs, the value it returns, and where it is.
pub(super) struct Guard {
    pub cond: CExpr,
    pub vars: Option<Vec<String>>,
    pub stores: Vec<(CExpr, CExpr)>,
    pub value: Option<f64>,
    pub loc: Loc,
}

/// The function without its leading guards, and the guards in order;
/// `None` when the body does not open with one (declarations may come
/// first and between them, and set-up statements that only move pointer
/// parameters or set variables, as f2c opens with `--x; a_dim1 = *lda; a
/// -= a_offset;`: when the guard returns, what they did is never seen, so
/// the guard may run first unless it reads what they set).
pub(super) fn strip(func: &CFunction) -> Option<(CFunction, Vec<Guard>)> {
    let mut body = func.body.clone();
    let mut guards = Vec::new();
    let mut set_up: Vec<String> = Vec::new();
    let mut from = 0;
    while let Some(at) = body[from..]
        .iter()
        .position(|s| !matches!(s, CStmt::Decl(..) | CStmt::Null(_)))
        .map(|at| at + from)
    {
        if let Some(guard) = guard_of(&body[at]) {
            // Its condition and the stores it makes (`y[1] = 0` after
            // `--y`) must mean what they meant after the set-up.
            let reads = |k: &String| {
                guard.cond.count_refs(k) > 0
                    || guard
                        .stores
                        .iter()
                        .any(|(t, v)| t.count_refs(k) + v.count_refs(k) > 0)
            };
            if set_up.iter().any(reads) {
                break;
            }
            guards.push(guard);
            body.remove(at);
            from = at;
        } else if let Some(key) = set_up_of(&body[at]) {
            set_up.push(key);
            from = at + 1;
        } else {
            break;
        }
    }
    if guards.is_empty() {
        return None;
    }
    Some((
        CFunction {
            body,
            ..func.clone()
        },
        guards,
    ))
}

/// The variable a set-up statement writes: `--p;`, `p -= e;`, `v = e;`
/// with `e` free of side effects (no call, no store) and the variable a
/// local or a parameter (a global's new value outlives the return).
fn set_up_of(s: &CStmt) -> Option<String> {
    let CStmt::Expr(e) = s else {
        return None;
    };
    let (target, value) = match &strip_c(e).kind {
        CExprKind::Unary {
            op: CUnOp::PreInc | CUnOp::PreDec | CUnOp::PostInc | CUnOp::PostDec,
            arg,
        } => (arg, None),
        CExprKind::Binary {
            op: CBinOp::Assign | CBinOp::CompoundAssign(_),
            lhs,
            rhs,
        } => (lhs, Some(rhs)),
        _ => return None,
    };
    let CExprKind::Ref(r) = &strip_c(target).kind else {
        return None;
    };
    let unseen = matches!(r.target, RefTarget::Local | RefTarget::Param);
    let pure = value.is_none_or(|v| v.is_pure());
    (unseen && pure).then(|| r.key.clone())
}

/// `s` as a guard: `if (cond) return [literal];`, or a block storing
/// literals through pointers (`*p = 0;`, `p[0] = 0;`) before that return.
fn guard_of(s: &CStmt) -> Option<Guard> {
    let CStmt::If {
        cond,
        then_branch,
        else_branch: None,
        loc,
    } = s
    else {
        return None;
    };
    let items: Vec<&CStmt> = match &**then_branch {
        CStmt::Compound(inner, _) => inner.iter().collect(),
        other => vec![other],
    };
    let (CStmt::Return(returned, _), before) = items.split_last()? else {
        return None;
    };
    let stores = before
        .iter()
        .map(|s| literal_store(s))
        .collect::<Option<Vec<_>>>()?;
    let value = match returned {
        None => None,
        Some(e) => Some(literal(e)?),
    };
    let mut vars = Vec::new();
    let vars = at_most_zero(cond, &mut vars).map(|()| vars);
    let plain = vars.is_some() && stores.is_empty();
    Some(Guard {
        cond: cond.clone(),
        vars: if plain { vars } else { None },
        stores,
        value,
        loc: loc.clone(),
    })
}

/// `(target, value)` of `*p = literal;` or `p[0] = literal;`.
fn literal_store(s: &CStmt) -> Option<(CExpr, CExpr)> {
    let CStmt::Expr(e) = s else {
        return None;
    };
    let CExprKind::Binary {
        op: CBinOp::Assign,
        lhs,
        rhs,
    } = &strip_c(e).kind
    else {
        return None;
    };
    literal(rhs)?;
    Some(((**lhs).clone(), (**rhs).clone()))
}

fn strip_c(e: &CExpr) -> &CExpr {
    match &e.kind {
        CExprKind::Paren(inner) | CExprKind::Implicit(inner) | CExprKind::Cast(inner) => {
            strip_c(inner)
        }
        _ => e,
    }
}

/// A numeric literal, possibly negated or converted.
fn literal(e: &CExpr) -> Option<f64> {
    match &strip_c(e).kind {
        CExprKind::Int(IntValue::Fits(v)) => Some(*v as f64),
        CExprKind::Float { value, .. } => Some(*value),
        CExprKind::Unary {
            op: CUnOp::Minus,
            arg,
        } => literal(arg).map(|v| -v),
        _ => None,
    }
}

/// Pushes, for each disjunct of `cond`, the integer parameter it bounds
/// by 0 from above (`n <= 0`, `n < 1`, `n == 0`, `!n`, `0 >= n`); `None`
/// when some disjunct is anything else.
fn at_most_zero(cond: &CExpr, vars: &mut Vec<String>) -> Option<()> {
    let c = strip_c(cond);
    let param = |e: &CExpr| match (&strip_c(e).kind, &strip_c(e).ty) {
        (CExprKind::Ref(r), CType::Scalar(t)) if r.target == RefTarget::Param && !t.is_float() => {
            Some(r.name.clone())
        }
        _ => None,
    };
    let int = |e: &CExpr| match strip_c(e).kind {
        CExprKind::Int(IntValue::Fits(v)) => Some(v),
        _ => None,
    };
    match &c.kind {
        CExprKind::Binary {
            op: CBinOp::LOr,
            lhs,
            rhs,
        } => {
            at_most_zero(lhs, vars)?;
            at_most_zero(rhs, vars)
        }
        CExprKind::Unary {
            op: CUnOp::LNot,
            arg,
        } => {
            vars.push(param(arg)?);
            Some(())
        }
        CExprKind::Binary { op, lhs, rhs } => {
            // `v op k`, or `k op v` read as `v op' k`.
            let (v, k, op) = match (param(lhs), int(rhs), param(rhs), int(lhs)) {
                (Some(v), Some(k), _, _) => (v, k, *op),
                (_, _, Some(v), Some(k)) => (v, k, flipped(*op)?),
                _ => return None,
            };
            let bounded = match op {
                CBinOp::Le | CBinOp::Eq => k <= 0,
                CBinOp::Lt => k <= 1,
                _ => false,
            };
            bounded.then(|| vars.push(v))
        }
        _ => None,
    }
}

fn flipped(op: CBinOp) -> Option<CBinOp> {
    Some(match op {
        CBinOp::Lt => CBinOp::Gt,
        CBinOp::Le => CBinOp::Ge,
        CBinOp::Gt => CBinOp::Lt,
        CBinOp::Ge => CBinOp::Le,
        CBinOp::Eq => CBinOp::Eq,
        _ => return None,
    })
}

/// Why dropping `guard` would change what `kernel` does; `None` when it
/// would not (see the module documentation).
pub(super) fn redundant(kernel: &Kernel, guard: &Guard) -> Option<String> {
    let Some(vars) = &guard.vars else {
        return Some("its condition is not a size at most 0 with nothing stored".into());
    };
    for v in vars {
        if let Some(why) = assignments_skipped(&kernel.body, v, false) {
            return Some(format!("when `{v} <= 0`, {why}"));
        }
    }
    let returned = kernel.body.iter().find_map(|s| match s {
        Stmt::Return { value, .. } => Some(value),
        _ => None,
    });
    match (returned, guard.value) {
        (None, None) => None,
        (Some(value), Some(g)) => match value_before_loops(&kernel.body, value) {
            Some(v) if v == g => None,
            _ => Some(format!(
                "the kernel would not return {g} when the loops do not run"
            )),
        },
        (Some(_), None) => Some("the guard returns nothing but the kernel returns a value".into()),
        (None, Some(_)) => Some("the guard returns a value but the kernel does not".into()),
    }
}

/// Whether every assignment in `body` (beyond local scalars set outside
/// every loop) lies in a loop that runs no iteration when `v <= 0`.
fn assignments_skipped(body: &[Stmt], v: &str, in_empty_loop: bool) -> Option<String> {
    for s in body {
        match s {
            Stmt::Loop(l) => {
                let empty = in_empty_loop || empty_when(l, v);
                if let Some(why) = assignments_skipped(&l.body, v, empty) {
                    return Some(why);
                }
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                let why = assignments_skipped(then_body, v, in_empty_loop)
                    .or_else(|| assignments_skipped(else_body, v, in_empty_loop));
                if why.is_some() {
                    return why;
                }
            }
            Stmt::Assign { target, .. } if !in_empty_loop => {
                if let LValue::Element { array, .. } = target {
                    return Some(format!("`{array}` is still written"));
                }
            }
            Stmt::Assign { .. } | Stmt::Return { .. } => {}
        }
    }
    None
}

/// Whether loop `l` runs no iteration whenever `v <= 0`: its trip span is
/// `a*v + b` with `a > 0`, `b <= 0` and nothing else.
fn empty_when(l: &Loop, v: &str) -> bool {
    let span = |hi: &Affine, lo: &Affine| {
        Poly::from_affine(hi)
            .sub(&Poly::from_affine(lo))
            .ok()?
            .to_affine()
    };
    let d = if l.step > 0 {
        span(&l.end, &l.start)
    } else {
        span(&l.start, &l.end)
    };
    d.is_some_and(|d| {
        d.constant <= 0 && d.terms.len() == 1 && d.terms.get(v).is_some_and(|a| *a > 0)
    })
}

/// The value `value` has when no loop runs: a literal, or a local whose
/// last assignment outside every loop is a literal.
fn value_before_loops(body: &[Stmt], value: &Expr) -> Option<f64> {
    match &value.kind {
        ExprKind::IntLit { value } => Some(*value as f64),
        ExprKind::FloatLit { value, .. } => Some(*value),
        ExprKind::Cast { arg } => value_before_loops(body, arg),
        ExprKind::Var { name, .. } => {
            for s in body.iter().rev() {
                match s {
                    Stmt::Assign {
                        target: LValue::Scalar { name: n, .. },
                        value,
                        ..
                    } if n == name => return value_before_loops(body, value),
                    // Set under a condition outside the loops: unknown.
                    Stmt::If {
                        then_body,
                        else_body,
                        ..
                    } if assigns(then_body, name) || assigns(else_body, name) => return None,
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

fn assigns(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::Assign {
            target: LValue::Scalar { name: n, .. },
            ..
        } => n == name,
        Stmt::Loop(l) => assigns(&l.body, name),
        Stmt::If {
            then_body,
            else_body,
            ..
        } => assigns(then_body, name) || assigns(else_body, name),
        _ => false,
    })
}

/// The guards as the lowered kernel keeps them ahead of its program, or
/// where and why one cannot be: its condition must read only scalar
/// parameters and literals (comparisons, `&&`, `||`, `!`, `+`, `-`, `*`),
/// and it may store literals only into pointer parameters' first element.
pub(super) fn kept(
    l: &mut super::Lowerer<'_>,
    guards: &[Guard],
) -> Result<Vec<KernelGuard>, (Loc, String)> {
    guards.iter().map(|g| kept_one(l, g)).collect()
}

fn kept_one(l: &mut super::Lowerer<'_>, g: &Guard) -> Result<KernelGuard, (Loc, String)> {
    let fail = |why: &str| (g.loc.clone(), why.to_string());
    let cond = l
        .expr(&g.cond)
        .ok_or_else(|| fail("its condition does not lower"))?;
    if !scalar_params_only(&cond) {
        return Err(fail(
            "its condition reads more than scalar parameters and literals",
        ));
    }
    let mut stores = Vec::new();
    for (target, value) in &g.stores {
        let array = first_element_of_param(target)
            .ok_or_else(|| fail("it stores other than into a pointer parameter's first element"))?;
        let value = l
            .expr(value)
            .ok_or_else(|| fail("its stored value does not lower"))?;
        stores.push((array, value));
    }
    Ok(KernelGuard {
        cond,
        stores,
        value: g.value,
        loc: g.loc.clone(),
    })
}

/// Whether `e` reads only scalar parameters and literals, through
/// comparisons, logic, `+`, `-`, `*`, negation and conversions.
fn scalar_params_only(e: &Expr) -> bool {
    use crate::ir::{BinaryOp as B, UnaryOp};
    match &e.kind {
        ExprKind::IntLit { .. } | ExprKind::FloatLit { .. } => true,
        ExprKind::Var { class, .. } => *class == VarClass::Param,
        ExprKind::Unary { op, arg } => {
            matches!(op, UnaryOp::Neg | UnaryOp::Not) && scalar_params_only(arg)
        }
        ExprKind::Cast { arg } => scalar_params_only(arg),
        ExprKind::Binary { op, lhs, rhs } => {
            let allowed = !matches!(op, B::Div | B::Rem)
                && (op.is_comparison() || matches!(op, B::Add | B::Sub | B::Mul | B::And | B::Or));
            allowed && scalar_params_only(lhs) && scalar_params_only(rhs)
        }
        ExprKind::Load { .. } | ExprKind::Select { .. } | ExprKind::Call { .. } => false,
    }
}

/// The parameter `p` of `*p` or `p[0]`.
fn first_element_of_param(target: &CExpr) -> Option<String> {
    let (base, at_zero) = match &strip_c(target).kind {
        CExprKind::Unary {
            op: CUnOp::Unsupported("*"),
            arg,
        } => (arg, true),
        CExprKind::Subscript { base, index } => (
            base,
            matches!(strip_c(index).kind, CExprKind::Int(IntValue::Fits(0))),
        ),
        _ => return None,
    };
    match (&strip_c(base).kind, &strip_c(base).ty) {
        (CExprKind::Ref(r), CType::Pointer { .. }) if at_zero && r.target == RefTarget::Param => {
            Some(r.name.clone())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{dumped_body, extracted};
    use crate::Options;

    fn dumped(source: &str) -> String {
        let tu = extracted(source, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
        crate::dump::kernel(&tu.kernels[0])
    }

    #[test]
    fn guards_that_change_nothing_are_dropped() {
        let k = dumped(
            "void f(int n, float *y) { if (n <= 0) return; for (int i = 0; i < n; i++) y[i] = 0; }",
        );
        assert!(!k.contains("guard"), "{k}");
    }

    #[test]
    fn a_guard_after_set_up_statements_runs_first_unless_it_reads_them() {
        // f2c opens with its 1-based pointers before the quick return.
        let k = dumped(
            "int f(int n, float *x, float *y) {\n\
               int i, t;\n\
               --x; --y;\n\
               if (n <= 0) { return 0; }\n\
               for (i = 1; i <= n; ++i) { float s = x[i]; x[i] = y[i]; y[i] = s; }\n\
               return 0;\n\
             }",
        );
        let is_if = |l: &str| l.trim_start().starts_with("if ");
        assert!(!k.lines().any(is_if), "{k}");
        // A guard reading a variable set before it stays where it is, and
        // so does one storing through a pointer moved before it.
        let k = dumped(
            "int f(int n, float *x) {\n\
               int m;\n\
               m = n - 1;\n\
               if (m <= 0) { return 0; }\n\
               for (int i = 0; i < n; i++) x[i] = 0.0f;\n\
               return 0;\n\
             }",
        );
        assert!(k.lines().any(is_if), "{k}");
        let k = dumped(
            "int f(int n, float *y) {\n\
               int i;\n\
               --y;\n\
               if (n <= 0) { y[1] = 0; return 0; }\n\
               for (i = 1; i <= n; ++i) y[i] = 1.0f;\n\
               return 0;\n\
             }",
        );
        assert!(k.lines().any(is_if), "{k}");
        // A global set before the guard keeps its new value when it
        // returns: the guard cannot run first.
        let k = dumped(
            "int calls;\n\
             int f(int n, float *x) {\n\
               calls = 1;\n\
               if (n <= 0) { return 0; }\n\
               for (int i = 0; i < n; i++) x[i] = 0.0f;\n\
               return 0;\n\
             }",
        );
        assert!(k.lines().any(is_if), "{k}");
    }

    #[test]
    fn one_guard_that_matters_keeps_every_guard_in_order() {
        let k = dumped(
            "void f(int n, float a, float *y, float *r) {\n\
               if (n <= 0) return;\n\
               if (a == 0.0f) { *r = 0; return; }\n\
               for (int i = 0; i < n; i++) y[i] *= a;\n\
               r[0] = 1;\n\
             }",
        );
        let guards: Vec<&str> = k.lines().filter(|l| l.contains("guard")).collect();
        assert_eq!(guards.len(), 2, "{k}");
        assert!(
            guards[0].contains("n") && guards[0].ends_with("return"),
            "{k}"
        );
        assert!(
            guards[1].contains("r[0] = ") && guards[1].contains("a"),
            "{k}"
        );
    }

    #[test]
    fn a_guard_reading_memory_keeps_the_kernel_refused() {
        let codes = dumped_body(
            "void f(int n, const float *x, float *y) { if (x[0] > 0) return; for (int i = 0; i < n; i++) y[i] = x[i]; }",
        )
        .expect_err("refused");
        assert_eq!(codes, ["TL037"]);
    }
}
