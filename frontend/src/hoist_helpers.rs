//! Helpers with statements before their `return` (darknet's `sum_array`,
//! called as `bias_updates[i] += sum_array(delta + size*(i + b*n), size);`):
//! the call is hoisted out of its statement. Before the statement come, in
//! order, a local for each parameter set to its argument (a pointer
//! argument becomes a walking pointer the lowering already reads), the
//! helper's statements, and a local set to the returned expression; the
//! call itself becomes a read of that local. Every name the helper declares
//! gets a key of its own per call, so two calls never share a local.
//!
//! That is C's evaluation exactly when the call is evaluated once, where
//! the statement stands: it sits in an expression statement or a
//! declaration's initialiser, outside conditional (`?:`) and short-circuit
//! (`&&`, `||`) operands, and its arguments have no side effects (no
//! assignment, increment or call). A helper with another `return` is not
//! hoisted. Anything else keeps today's refusal of the call (TL030).

use crate::ir::Loc;
use crate::syntax::{
    CBinOp, CExpr, CExprKind, CStmt, CType, CVarDecl, DeclRef, InlineBody, RefTarget,
};

/// Whether the statement holds a `return` (at any depth).
pub(crate) fn returns_early(s: &CStmt) -> bool {
    match s {
        CStmt::Return(..) => true,
        CStmt::Compound(items, _) => items.iter().any(returns_early),
        CStmt::If {
            then_branch,
            else_branch,
            ..
        } => returns_early(then_branch) || else_branch.as_deref().is_some_and(returns_early),
        CStmt::For { body, .. } => returns_early(body),
        _ => false,
    }
}

/// `stmts` (one block) with each hoistable helper call taken out of its
/// statement (see the module documentation).
pub(crate) fn hoist_helper_calls(stmts: Vec<CStmt>) -> Vec<CStmt> {
    let mut out = Vec::with_capacity(stmts.len());
    for s in stmts {
        let mut prelude = Vec::new();
        let rewritten = match &s {
            CStmt::Expr(e) => match void_call(e) {
                Some((body, args)) => {
                    expand_statements(body, args, e, s.loc(), &mut prelude);
                    CStmt::Null(s.loc().clone())
                }
                None => CStmt::Expr(hoist_in(e, s.loc(), &mut prelude)),
            },
            CStmt::Decl(vars, loc) => CStmt::Decl(
                vars.iter()
                    .map(|v| CVarDecl {
                        init: v.init.as_ref().map(|e| hoist_in(e, loc, &mut prelude)),
                        ..v.clone()
                    })
                    .collect(),
                loc.clone(),
            ),
            // A body that is not a block was not finished as one.
            CStmt::For {
                init,
                cond,
                inc,
                body,
                loc,
            } if !matches!(**body, CStmt::Compound(..)) => CStmt::For {
                init: init.clone(),
                cond: cond.clone(),
                inc: inc.clone(),
                body: Box::new(as_block(body)),
                loc: loc.clone(),
            },
            CStmt::If { .. } => s.map_stmts(&mut as_block),
            _ => s.clone(),
        };
        out.extend(prelude);
        out.push(rewritten);
    }
    out
}

/// A lone statement (a loop body or branch without braces) with its calls
/// hoisted: a block when something was hoisted, the statement otherwise.
fn as_block(s: &CStmt) -> CStmt {
    if matches!(s, CStmt::Compound(..)) {
        return s.clone();
    }
    let mut hoisted = hoist_helper_calls(vec![s.clone()]);
    if hoisted.len() == 1 {
        return hoisted.remove(0);
    }
    CStmt::Compound(hoisted, s.loc().clone())
}

/// `e` with its hoistable calls replaced by their result locals, the
/// hoisted statements appended to `prelude` in evaluation order.
fn hoist_in(e: &CExpr, site: &Loc, prelude: &mut Vec<CStmt>) -> CExpr {
    match &e.kind {
        // Operands evaluated only sometimes stay as they are.
        CExprKind::Conditional { .. }
        | CExprKind::Binary {
            op: CBinOp::LAnd | CBinOp::LOr,
            ..
        } => return e.clone(),
        CExprKind::Call {
            args,
            inline: Some(body),
            ..
        } if !body.stmts.is_empty() && body.params.len() == args.len() => {
            let args: Vec<CExpr> = args.iter().map(|a| hoist_in(a, site, prelude)).collect();
            if args.iter().all(CExpr::is_pure) {
                return expand(body, &args, e, site, prelude);
            }
            return e.clone();
        }
        _ => {}
    }
    let mut out = e.clone();
    out.map_children(&mut |c| hoist_in(c, site, prelude));
    out
}

/// `e` as a statement calling a `void` helper with side-effect-free
/// arguments: the helper and the arguments.
fn void_call(e: &CExpr) -> Option<(&InlineBody, &[CExpr])> {
    match &e.stripped().kind {
        CExprKind::Call {
            args,
            inline: Some(body),
            ..
        } if matches!(body.result, CType::Void)
            && body.params.len() == args.len()
            && args.iter().all(CExpr::is_pure) =>
        {
            Some((body, args))
        }
        _ => None,
    }
}

/// The hoisted statements of one call, and the read of its result.
fn expand(
    body: &InlineBody,
    args: &[CExpr],
    call: &CExpr,
    site: &Loc,
    prelude: &mut Vec<CStmt>,
) -> CExpr {
    let (declared, suffix) = expand_statements(body, args, call, site, prelude);
    let rename = |e: &CExpr| renamed(e, &declared, &suffix);
    result_local(body, call, prelude, &rename, &suffix)
}

/// A local for each parameter set to its argument, then the helper's
/// statements, renamed apart: the keys it declares and their suffix.
fn expand_statements(
    body: &InlineBody,
    args: &[CExpr],
    call: &CExpr,
    site: &Loc,
    prelude: &mut Vec<CStmt>,
) -> (Vec<String>, String) {
    // Keys from where the statement and the call stand and how much was
    // hoisted before it: distinct per call, and the same on every run.
    let at = |l: &Loc| format!("{}:{}:{}", l.file, l.line, l.col);
    let suffix = format!(
        "\u{1}hoisted@{}@{}#{}",
        at(site),
        at(&call.loc),
        prelude.len()
    );
    let mut declared: Vec<String> = body.param_decls.iter().map(|p| p.key.clone()).collect();
    body.stmts
        .iter()
        .for_each(|s| declared_keys(s, &mut declared));
    let rename = |e: &CExpr| renamed(e, &declared, &suffix);
    for (p, a) in body.param_decls.iter().zip(args) {
        let local = CVarDecl {
            key: format!("{}{suffix}", p.key),
            init: Some(a.clone()),
            dims: Vec::new(),
            ..p.clone()
        };
        prelude.push(CStmt::Decl(vec![local], call.loc.clone()));
    }
    for s in &body.stmts {
        prelude.push(rename_stmt(s, &declared, &suffix, &rename));
    }
    (declared, suffix)
}

/// The rest of [`expand`]: the local holding the call's result.
fn result_local(
    body: &InlineBody,
    call: &CExpr,
    prelude: &mut Vec<CStmt>,
    rename: &dyn Fn(&CExpr) -> CExpr,
    suffix: &str,
) -> CExpr {
    let result = DeclRef {
        name: format!("{}_result", body.name),
        key: format!("{}{suffix}\u{1}result", body.name),
        target: RefTarget::Local,
    };
    prelude.push(CStmt::Decl(
        vec![CVarDecl {
            name: result.name.clone(),
            key: result.key.clone(),
            ty: body.result.clone(),
            dims: Vec::new(),
            init: Some(rename(&body.value)),
            is_static: false,
            loc: call.loc.clone(),
        }],
        call.loc.clone(),
    ));
    CExpr {
        kind: CExprKind::Ref(result),
        ty: body.result.clone(),
        loc: call.loc.clone(),
    }
}

/// Keys of the variables `s` declares (for-loop headers included).
fn declared_keys(s: &CStmt, out: &mut Vec<String>) {
    match s {
        CStmt::Decl(vars, _) => out.extend(vars.iter().map(|v| v.key.clone())),
        CStmt::Compound(items, _) => items.iter().for_each(|s| declared_keys(s, out)),
        CStmt::If {
            then_branch,
            else_branch,
            ..
        } => {
            declared_keys(then_branch, out);
            if let Some(e) = else_branch {
                declared_keys(e, out);
            }
        }
        CStmt::For { init, body, .. } => {
            declared_keys(init, out);
            declared_keys(body, out);
        }
        _ => {}
    }
}

/// `s` with its declarations and every reference to a declared key given
/// the expansion's suffix.
fn rename_stmt(
    s: &CStmt,
    declared: &[String],
    suffix: &str,
    rename: &dyn Fn(&CExpr) -> CExpr,
) -> CStmt {
    let mapped = s.map_exprs(&mut |e| rename(e));
    rekey_decls(mapped, declared, suffix)
}

fn rekey_decls(s: CStmt, declared: &[String], suffix: &str) -> CStmt {
    match s {
        CStmt::Decl(vars, loc) => CStmt::Decl(
            vars.into_iter()
                .map(|v| CVarDecl {
                    key: if declared.contains(&v.key) {
                        format!("{}{suffix}", v.key)
                    } else {
                        v.key.clone()
                    },
                    ..v
                })
                .collect(),
            loc,
        ),
        other => other.map_stmts(&mut |c| rekey_decls(c.clone(), declared, suffix)),
    }
}

fn renamed(e: &CExpr, declared: &[String], suffix: &str) -> CExpr {
    if let CExprKind::Ref(r) = &e.kind {
        if declared.contains(&r.key) {
            return CExpr {
                kind: CExprKind::Ref(DeclRef {
                    key: format!("{}{suffix}", r.key),
                    target: RefTarget::Local,
                    ..r.clone()
                }),
                ..e.clone()
            };
        }
    }
    let mut out = e.clone();
    out.map_children(&mut |c| renamed(c, declared, suffix));
    out
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    const BACKWARD_BIAS: &str = "static float sum_array(float *a, int n) {
            int i; float sum = 0;
            for (i = 0; i < n; ++i) sum += a[i];
            return sum;
        }
        void backward_bias(float *bias_updates, float *delta, int batch, int n, int size) {
            int i, b;
            for (b = 0; b < batch; ++b)
                for (i = 0; i < n; ++i)
                    bias_updates[i] += sum_array(delta + size * (i + b * n), size);
        }";

    /// The lowered body of `backward_bias` (the file's second function).
    fn kernel_body(source: &str, function: &str) -> String {
        let options = crate::Options {
            functions: vec![function.to_string()],
            ..crate::Options::default()
        };
        let tu = crate::test_util::extracted(source, &options).expect("lowers");
        crate::test_util::collapsed_body(&tu.kernels[0])
    }

    #[test]
    fn a_helper_with_a_loop_is_hoisted_before_its_statement() {
        let body = kernel_body(BACKWARD_BIAS, "backward_bias");
        assert!(
            body.contains("bias_updates[i] = (bias_updates[i] + "),
            "{body}"
        );
        assert!(body.contains("for i_1 in 0..size step 1"), "{body}");
    }

    /// A `void` helper called as a statement: its statements take the
    /// call's place, the row pointer a walking pointer.
    #[test]
    fn a_void_helper_called_as_a_statement_is_hoisted() {
        let source = "static void scale(float *x, int n, float a) {
                for (int i = 0; i < n; i++) x[i] *= a;
            }
            void scale_rows(float *m, int rows, int cols, float a) {
                for (int r = 0; r < rows; r++) scale(m + r * cols, cols, a);
            }";
        let body = kernel_body(source, "scale_rows");
        assert!(body.contains("for i in 0..cols step 1"), "{body}");
        assert!(body.contains("m[r][i] = (m[r][i] * a_1):f32"), "{body}");
    }

    /// A helper that returns from the middle of its statements is not.
    #[test]
    fn a_void_helper_returning_early_keeps_the_refusal() {
        let source = "static void clear(float *x, int n) {
                if (n > 8) return;
                for (int i = 0; i < n; i++) x[i] = 0.0f;
            }
            void clear_rows(float *m, int rows, int cols) {
                for (int r = 0; r < rows; r++) clear(m + r * cols, cols);
            }";
        let options = crate::Options {
            functions: vec!["clear_rows".to_string()],
            ..crate::Options::default()
        };
        assert!(crate::test_util::extracted(source, &options).is_err());
    }

    #[test]
    fn a_call_in_a_conditional_operand_keeps_the_refusal() {
        let source = "static float total(const float *a, int n) {
                float s = 0; for (int i = 0; i < n; i++) s += a[i]; return s;
            }
            void f(float *y, const float *x, int n, int k) {
                for (int j = 0; j < k; j++) y[j] = j > 0 ? total(x, n) : 0.0f;
            }";
        assert!(lowered(source).is_err());
    }
}
