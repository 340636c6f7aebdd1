//! A size picked by a flag: reference BLAS `dgemv` sets `leny = (trans ==
//! 'N' || trans == 'n') ? m : n;` and loops to `leny`. The bound is not
//! affine, but under each outcome of the test it is one size. Each
//! statement after the choice that reads it is unswitched, `if (test) {
//! s[leny := m] } else { s[leny := n] }` (the others, an early `return`
//! among them, stay where they are), and the kernel-level cases
//! (`synth::cases`) split that test like any test of a flag, one test
//! decided once per case however often the C repeats it. The choice
//! is a declaration initialised by `?:`, or a declaration followed by an
//! `if`/`else` assigning the local in each branch.
//!
//! Exact when the test and both values read only parameters that no
//! statement of the function writes, and literals (the test then decides
//! the same at the choice as anywhere after it), and nothing after the
//! choice writes the local or declares a local from it (other parameters,
//! pointers walked by `x++`, may change). Only in the function body's own
//! block, where the statements after the choice are the rest of the
//! function.

use std::collections::HashSet;

use crate::syntax::{CBinOp, CExpr, CExprKind, CStmt, CType};

/// `stmts` (the function body) with every choice of a size by a flag
/// unswitched, where exact.
pub(crate) fn unswitch_flag_sizes(stmts: Vec<CStmt>, params: &HashSet<String>) -> Vec<CStmt> {
    unswitch(stmts, params)
}

fn unswitch(stmts: Vec<CStmt>, params: &HashSet<String>) -> Vec<CStmt> {
    let found = (0..stmts.len()).find_map(|at| {
        let (used, choice) = choice_at(&stmts, at, params)?;
        let rest = &stmts[at + used..];
        let declares_with_it = |s: &CStmt| matches!(s, CStmt::Decl(..)) && s.refers_to(&choice.key);
        let mut read = Vec::new();
        for e in [&choice.cond, &choice.then_value, &choice.else_value] {
            refs(e, &mut read);
        }
        // A pointer parameter walked (`x++`) elsewhere is no concern; a
        // parameter the choice reads must keep its value throughout.
        let kept = !stmts.iter().any(|s| read.iter().any(|p| s.writes(p)));
        let exact = kept
            && !rest
                .iter()
                .any(|s| s.writes(&choice.key) || declares_with_it(s));
        exact.then_some((at, used, choice))
    });
    let Some((at, used, choice)) = found else {
        return stmts;
    };
    let mut out = stmts[..at].to_vec();
    for s in &stmts[at + used..] {
        if !s.refers_to(&choice.key) {
            out.push(s.clone());
            continue;
        }
        let loc = s.loc().clone();
        let taking = |value: &CExpr| {
            let taken =
                s.map_exprs(&mut |e| crate::induction::replace_reads(e, &choice.key, value));
            Box::new(CStmt::Compound(vec![taken], loc.clone()))
        };
        out.push(CStmt::If {
            cond: choice.cond.clone(),
            then_branch: taking(&choice.then_value),
            else_branch: Some(taking(&choice.else_value)),
            loc: loc.clone(),
        });
    }
    // The next choice (`lenx` after `leny`).
    unswitch(out, params)
}

/// A local set to one of two values by a test.
struct Choice {
    key: String,
    cond: CExpr,
    then_value: CExpr,
    else_value: CExpr,
}

/// The choice made by `stmts[at..]` and how many statements make it: `int
/// k = c ? a : b;`, or `int k;` then `if (c) k = a; else k = b;`.
fn choice_at(stmts: &[CStmt], at: usize, params: &HashSet<String>) -> Option<(usize, Choice)> {
    let CStmt::Decl(vars, _) = &stmts[at] else {
        return None;
    };
    let [var] = vars.as_slice() else {
        return None;
    };
    if !matches!(&var.ty, CType::Scalar(t) if !t.is_float()) || !var.dims.is_empty() {
        return None;
    }
    let (used, cond, then_value, else_value) = match &var.init {
        Some(init) => match &init.stripped().kind {
            CExprKind::Conditional {
                cond,
                then_value,
                else_value,
            } => (1, cond.as_ref(), then_value.as_ref(), else_value.as_ref()),
            _ => return None,
        },
        None => {
            let CStmt::If {
                cond,
                then_branch,
                else_branch: Some(else_branch),
                ..
            } = stmts.get(at + 1)?
            else {
                return None;
            };
            let a = assigned(then_branch, &var.key)?;
            let b = assigned(else_branch, &var.key)?;
            (2, cond, a, b)
        }
    };
    let flags_only = |e: &CExpr| reads_only(e, params);
    (flags_only(cond) && flags_only(then_value) && flags_only(else_value)).then(|| {
        let choice = Choice {
            key: var.key.clone(),
            cond: cond.clone(),
            then_value: crate::induction::paren(then_value.clone()),
            else_value: crate::induction::paren(else_value.clone()),
        };
        (used, choice)
    })
}

/// The value of `key = value;`, the branch's one statement.
fn assigned<'a>(branch: &'a CStmt, key: &str) -> Option<&'a CExpr> {
    let stmt = match branch {
        CStmt::Compound(items, _) => match items.as_slice() {
            [one] => one,
            _ => return None,
        },
        other => other,
    };
    let CStmt::Expr(e) = stmt else {
        return None;
    };
    match &e.stripped().kind {
        CExprKind::Binary {
            op: CBinOp::Assign,
            lhs,
            rhs,
        } if lhs.ref_key() == Some(key) => Some(rhs),
        _ => None,
    }
}

/// The keys of the variables `e` reads.
fn refs(e: &CExpr, out: &mut Vec<String>) {
    if let CExprKind::Ref(r) = &e.kind {
        out.push(r.key.clone());
    }
    e.children().into_iter().for_each(|c| refs(c, out));
}

/// Whether `e` reads only parameters in `params` and literals, through
/// operators (no call, subscript, field or assignment).
fn reads_only(e: &CExpr, params: &HashSet<String>) -> bool {
    e.is_pure() && reads_only_params(e, params)
}

/// Whether every variable `e` reads is in `params`, through operators.
fn reads_only_params(e: &CExpr, params: &HashSet<String>) -> bool {
    let own = match &e.kind {
        CExprKind::Ref(r) => params.contains(&r.key),
        CExprKind::Subscript { .. }
        | CExprKind::Member { .. }
        | CExprKind::Call { .. }
        | CExprKind::Unsupported(_)
        | CExprKind::Rejected => false,
        _ => true,
    };
    own && e
        .children()
        .into_iter()
        .all(|c| reads_only_params(c, params))
}

#[cfg(test)]
mod tests {
    use crate::test_util::lowered;

    #[test]
    fn a_size_chosen_by_a_flag_unswitches_what_follows() {
        for choice in [
            "int len = (t == 'N') ? m : n;",
            "int len;\n  if (t == 'N') len = m;\n  else { len = n; }",
        ] {
            let source = format!(
                "void f(char t, int m, int n, float *y) {{\n  {choice}\n  for (int i = 0; i < len; i++) y[i] = 0;\n}}\n"
            );
            let body = lowered(&source).expect("lowers");
            assert!(body.starts_with("if data (i32(t) == 78)"), "{body}");
            assert!(body.contains("in 0..m step 1"), "{body}");
            assert!(body.contains("in 0..n step 1"), "{body}");
        }
    }

    #[test]
    fn a_choice_read_from_an_array_or_written_later_stays_refused() {
        for source in [
            "void f(const int *t, int m, int n, float *y) {\n  int len = t[0] ? m : n;\n  for (int i = 0; i < len; i++) y[i] = 0;\n}\n",
            "void f(char t, int m, int n, float *y) {\n  int len = t ? m : n;\n  len--;\n  for (int i = 0; i < len; i++) y[i] = 0;\n}\n",
            "void f(char t, int m, int n, float *y) {\n  int len = t ? m : n;\n  for (int i = 0; i < len; i++) y[i] = 0;\n  t = 0;\n}\n",
        ] {
            assert!(lowered(source).is_err(), "{source}");
        }
    }
}
