//! BLAS-style increments: a function that tests the integer parameters it
//! also steps its arrays by, and the starts it computes for negative ones.
//!
//! Reference BLAS (and LINPACK's C) handles unit increments first and
//! returns, then walks any increment:
//!
//! ```c
//! if (incx == 1 && incy == 1) { m = n % 5; …unrolled…; return dtemp; }
//! ix = 0; iy = 0;
//! if (incx < 0) ix = (-n + 1) * incx;
//! for (i = 0; i < n; i++) { dtemp += dx[ix] * dy[iy]; ix += incx; iy += incy; }
//! ```
//!
//! One loop IR cannot hold both: `dx` is `dx[i]` in one branch and a
//! strided array `dx[i * incx]` in the other. [`split`] reads such a
//! function as one function per branch, each lowered on its own (its own
//! layouts), and each kernel carries its case (`Kernel::case`: the tests
//! on the way to it, pins left to the root crate's `synth::cases`, which
//! lifts the cases and writes the dispatcher running the C's own tests).
//! Exact: the test reads parameters no statement writes, so it decides at
//! the top of the function as where the C makes it; a branch that always
//! returns is the whole function when taken, and the rest is when not.
//!
//! [`strip_negative_starts`] takes `if (incx < 0) ix = …;` out of a body:
//! the start of a walk backwards through an array. Where `incx` is then
//! the stride of an array, the program's shapes require `1 <= incx` and
//! every target checks it on entry (raising where it fails), so the branch
//! taken out is one the program never runs; the kernel states it
//! (`Kernel::negative_steps`), and [`check_negative_starts`] refuses it
//! where `incx` is no stride.

use super::branch_returns::items;
use crate::diagnostics::{self as codes, Diagnostic};
use crate::ir::{Kernel, Loc, ParamKind, Storage};
use crate::syntax::{CBinOp, CExpr, CExprKind, CFunction, CStmt, CType, IntValue, RefTarget};

/// Most cases one function splits into.
const MAX_VARIANTS: usize = 4;

/// One branch of a split function: the function as it runs when the tests
/// on `path` take their branches.
pub(super) struct Variant {
    pub func: CFunction,
    pub path: Vec<(CExpr, bool)>,
}

/// `func` as one function per case of its tests on increments (see the
/// module documentation); `None` when it has no such test.
pub(super) fn split(func: &CFunction) -> Option<Vec<Variant>> {
    let mut out = Vec::new();
    split_into(func, &mut Vec::new(), &mut out)?;
    (out.len() >= 2 && out.len() <= MAX_VARIANTS).then_some(out)
}

fn split_into(
    func: &CFunction,
    path: &mut Vec<(CExpr, bool)>,
    out: &mut Vec<Variant>,
) -> Option<()> {
    let Some(at) = func.body.iter().position(|s| is_increment_test(func, s)) else {
        out.push(Variant {
            func: func.clone(),
            path: path.clone(),
        });
        return Some(());
    };
    let CStmt::If {
        cond,
        then_branch,
        else_branch,
        ..
    } = &func.body[at]
    else {
        return None;
    };
    let (pre, post) = (&func.body[..at], &func.body[at + 1..]);
    let no_else = CStmt::Compound(Vec::new(), cond.loc.clone());
    for (taken, branch) in [
        (true, &**then_branch),
        (false, else_branch.as_deref().unwrap_or(&no_else)),
    ] {
        let mut body = pre.to_vec();
        body.extend_from_slice(items(branch));
        if !always_returns(branch) {
            body.extend_from_slice(post);
        }
        // A parameter the branch's test fixes is that literal throughout
        // (no statement writes it): `if (n == 4)` runs its branch at 4.
        let mut fixed = Vec::new();
        fixed_by(cond, taken, &mut fixed);
        let body: Vec<CStmt> = body
            .iter()
            .map(|s| s.map_exprs(&mut |e| with_values(e, &fixed)))
            .collect();
        // The branch's statements are the function's own now: a clean-up
        // loop's `if (n < 5) return dtemp;` rolls as it does there.
        let body = crate::reroll::reroll(body, true);
        let variant = CFunction {
            body,
            ..func.clone()
        };
        path.push((cond.clone(), taken));
        let done = split_into(&variant, path, out);
        path.pop();
        done?;
        if out.len() > MAX_VARIANTS {
            return None;
        }
    }
    Some(())
}

/// The parameters `cond` fixes to a literal when it is `taken` (`p == 4`
/// and `p == 1 && q == 1` true, `p != 1 || q != 1` false): key, value and
/// the parameter's type.
fn fixed_by(cond: &CExpr, taken: bool, out: &mut Vec<(String, i64, CType)>) {
    let CExprKind::Binary { op, lhs, rhs } = &cond.stripped().kind else {
        return;
    };
    match (op, taken) {
        (CBinOp::LAnd, true) | (CBinOp::LOr, false) => {
            fixed_by(lhs, taken, out);
            fixed_by(rhs, taken, out);
        }
        (CBinOp::Eq, true) | (CBinOp::Ne, false) => {
            let param = |e: &CExpr| match &e.stripped().kind {
                CExprKind::Ref(r) if r.target == RefTarget::Param => {
                    Some((r.key.clone(), e.stripped().ty.clone()))
                }
                _ => None,
            };
            match (
                param(lhs),
                rhs.int_constant(),
                param(rhs),
                lhs.int_constant(),
            ) {
                (Some((p, ty)), Some(v), _, _) | (_, _, Some((p, ty)), Some(v)) => {
                    out.push((p, v, ty))
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// `e` with each parameter of `fixed` read as its literal.
fn with_values(e: &CExpr, fixed: &[(String, i64, CType)]) -> CExpr {
    fixed.iter().fold(e.clone(), |e, (key, v, ty)| {
        let literal = CExpr {
            kind: CExprKind::Int(IntValue::Fits(*v)),
            ty: ty.clone(),
            loc: e.loc.clone(),
        };
        crate::induction::replace_reads(&e, key, &literal)
    })
}

/// Whether every path through `s` ends in a `return` (a block whose last
/// statement returns, or an `if` both of whose branches do).
fn always_returns(s: &CStmt) -> bool {
    match s {
        CStmt::Return(..) => true,
        CStmt::Compound(items, _) => items
            .iter()
            .rev()
            .find(|s| !matches!(s, CStmt::Null(_)))
            .is_some_and(always_returns),
        CStmt::If {
            then_branch,
            else_branch: Some(e),
            ..
        } => always_returns(then_branch) && always_returns(e),
        _ => false,
    }
}

/// `if (cond) …` at the top level where `cond` reads integer parameters
/// and literals only, no statement writes those parameters, one of them
/// is read outside tests too (it steps or subscripts an array: a flag read
/// only by tests is split after lowering, by `synth::cases`), and a
/// branch runs a loop.
fn is_increment_test(func: &CFunction, s: &CStmt) -> bool {
    let CStmt::If {
        cond,
        then_branch,
        else_branch,
        ..
    } = s
    else {
        return false;
    };
    // `if (incx < 0) ix = …;` sets a start; loops in a branch pick a walk.
    if !has_loop(then_branch) && !else_branch.as_deref().is_some_and(has_loop) {
        return false;
    }
    // `if (n > 0) { … }` holds at every size a program is checked at and
    // guards loops that would not run otherwise: one kernel, as before (a
    // split would add a case that does nothing, and refuse StableHLO).
    if else_branch.is_none() && positive_only(cond) {
        return false;
    }
    let mut params = Vec::new();
    if !integer_test(cond, &mut params) || params.is_empty() {
        return false;
    }
    let written = |key: &str| func.body.iter().any(|s| s.writes(key));
    let used = |key: &str| func.body.iter().any(|s| reads_outside_tests(s, key));
    params.iter().all(|k| !written(k)) && params.iter().any(|k| used(k))
}

/// Whether `cond` only asks integer parameters to be positive (`n > 0`,
/// `n >= 1`, `n != 0`, `0 < n`, `1 <= n`, `n`, and conjunctions of them).
fn positive_only(cond: &CExpr) -> bool {
    let is_param =
        |e: &CExpr| matches!(&e.stripped().kind, CExprKind::Ref(r) if r.target == RefTarget::Param);
    let c = cond.stripped();
    match &c.kind {
        CExprKind::Ref(_) => is_param(c),
        CExprKind::Binary {
            op: CBinOp::LAnd,
            lhs,
            rhs,
        } => positive_only(lhs) && positive_only(rhs),
        CExprKind::Binary { op, lhs, rhs } => {
            let (l, r) = (lhs.int_constant(), rhs.int_constant());
            match op {
                CBinOp::Gt | CBinOp::Ne => is_param(lhs) && r == Some(0),
                CBinOp::Ge => is_param(lhs) && r == Some(1),
                CBinOp::Lt => l == Some(0) && is_param(rhs),
                CBinOp::Le => l == Some(1) && is_param(rhs),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether `e` reads integer parameters (their keys pushed to `params`),
/// integer literals and C's comparisons and logical operators only.
fn integer_test(e: &CExpr, params: &mut Vec<String>) -> bool {
    let e = e.stripped();
    match &e.kind {
        CExprKind::Int(_) => true,
        CExprKind::Ref(r) => {
            let integer = matches!(&e.ty, CType::Scalar(t) if !t.is_float());
            if r.target == RefTarget::Param && integer {
                if !params.contains(&r.key) {
                    params.push(r.key.clone());
                }
                true
            } else {
                false
            }
        }
        CExprKind::Binary { op, lhs, rhs } => {
            use CBinOp::*;
            matches!(op, Lt | Le | Gt | Ge | Eq | Ne | LAnd | LOr)
                && integer_test(lhs, params)
                && integer_test(rhs, params)
        }
        CExprKind::Unary { arg, .. } | CExprKind::Cast(arg) | CExprKind::Paren(arg) => {
            integer_test(arg, params)
        }
        _ => false,
    }
}

/// Whether `s` reads `key` anywhere but in the condition of an `if`.
fn reads_outside_tests(s: &CStmt, key: &str) -> bool {
    match s {
        CStmt::If {
            then_branch,
            else_branch,
            ..
        } => {
            reads_outside_tests(then_branch, key)
                || else_branch
                    .as_deref()
                    .is_some_and(|e| reads_outside_tests(e, key))
        }
        CStmt::Compound(items, _) => items.iter().any(|s| reads_outside_tests(s, key)),
        other => other.refers_to(key),
    }
}

fn has_loop(s: &CStmt) -> bool {
    match s {
        CStmt::For { .. } => true,
        CStmt::Compound(items, _) => items.iter().any(has_loop),
        CStmt::If {
            then_branch,
            else_branch,
            ..
        } => has_loop(then_branch) || else_branch.as_deref().is_some_and(has_loop),
        _ => false,
    }
}

/// `func` without its top-level `if (p < 0) …;` statements that only set
/// integer locals (a negative increment's start), and each such `p` with
/// where its test is; `None` when it has none.
pub(super) fn strip_negative_starts(func: &CFunction) -> Option<(CFunction, Vec<(String, Loc)>)> {
    let mut taken = Vec::new();
    let body: Vec<CStmt> = func
        .body
        .iter()
        .filter(|s| match negative_start(func, s) {
            Some(p) => {
                taken.push((p, s.loc().clone()));
                false
            }
            None => true,
        })
        .cloned()
        .collect();
    (!taken.is_empty()).then(|| {
        (
            CFunction {
                body,
                ..func.clone()
            },
            taken,
        )
    })
}

/// The parameter `p` of `if (p < 0) { v = …; … }` (no `else`; `p` an
/// integer parameter nothing writes; each statement sets an integer local).
fn negative_start(func: &CFunction, s: &CStmt) -> Option<String> {
    let CStmt::If {
        cond,
        then_branch,
        else_branch: None,
        ..
    } = s
    else {
        return None;
    };
    let CExprKind::Binary {
        op: CBinOp::Lt,
        lhs,
        rhs,
    } = &cond.stripped().kind
    else {
        return None;
    };
    let mut params = Vec::new();
    if rhs.int_constant() != Some(0) || !integer_test(lhs, &mut params) {
        return None;
    }
    let [key] = params.as_slice() else {
        return None;
    };
    if lhs.ref_key() != Some(key) || func.body.iter().any(|s| s.writes(key)) {
        return None;
    }
    let sets_local = |s: &CStmt| match s {
        CStmt::Expr(CExpr {
            kind:
                CExprKind::Binary {
                    op: CBinOp::Assign,
                    lhs,
                    ..
                },
            ..
        }) => match (&lhs.stripped().kind, &lhs.ty) {
            (CExprKind::Ref(r), CType::Scalar(t)) => r.target == RefTarget::Local && !t.is_float(),
            _ => false,
        },
        _ => false,
    };
    let name = func.params.iter().find(|p| &p.key == key)?.name.clone();
    items(then_branch).iter().all(sets_local).then_some(name)
}

/// An error for each negative start taken out whose parameter is no
/// array's stride in `kernel` (nothing would then check it is positive).
pub(super) fn check_negative_starts(kernel: &Kernel, taken: &[(String, Loc)]) -> Vec<Diagnostic> {
    let strides = |name: &str| {
        kernel.params.iter().any(|p| match &p.kind {
            ParamKind::Array(info) => match &info.storage {
                Storage::Flat { strides } => strides
                    .iter()
                    .any(|s| s.terms.get(name).is_some_and(|c| *c > 0)),
                _ => false,
            },
            _ => false,
        })
    };
    taken
        .iter()
        .filter(|(p, _)| !strides(p))
        .map(|(p, at)| {
            Diagnostic::new(
                codes::UNSUPPORTED_STATEMENT,
                Some(at.clone()),
                format!(
                    "the start for a negative `{p}` cannot be set aside: `{p}` steps no array \
                     here, so nothing would check that it is positive"
                ),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::dump;
    use crate::extract::ExtractError;
    use crate::options::Options;
    use crate::test_util::{collapsed_body, extracted};

    fn kernels(source: &str) -> Vec<crate::ir::Kernel> {
        extracted(source, &Options::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .kernels
    }

    /// Reference `ddot`: the unit case (unrolled by five, returning from
    /// its clean-up and its end) and the general walk, each its own
    /// kernel with its own layout of `dx`, the starts for negative
    /// increments set aside in the second.
    #[test]
    fn a_unit_increment_branch_and_the_general_walk_are_two_kernels() {
        let ks = kernels(
            "double ddot(int n, const double *dx, int incx, const double *dy, int incy) {
               double s = 0.0; int i, ix, iy, m;
               if (n <= 0) return 0.0;
               if (incx == 1 && incy == 1) {
                 m = n % 5;
                 if (m != 0) { for (i = 0; i < m; i++) s += dx[i] * dy[i]; if (n < 5) return s; }
                 for (i = m; i < n; i += 5)
                   s = s + dx[i] * dy[i] + dx[i + 1] * dy[i + 1] + dx[i + 2] * dy[i + 2]
                         + dx[i + 3] * dy[i + 3] + dx[i + 4] * dy[i + 4];
                 return s;
               }
               ix = 0; iy = 0;
               if (incx < 0) ix = (-n + 1) * incx;
               if (incy < 0) iy = (-n + 1) * incy;
               for (i = 0; i < n; i++) { s += dx[ix] * dy[iy]; ix += incx; iy += incy; }
               return s;
             }",
        );
        assert_eq!(ks.len(), 2);
        let cases: Vec<(usize, usize, bool)> = ks
            .iter()
            .filter_map(|k| k.case.as_ref())
            .map(|c| (c.number, c.count, c.path[0].1))
            .collect();
        assert_eq!(cases, [(1, 2, true), (2, 2, false)]);
        assert!(collapsed_body(&ks[0]).contains("s = (s + (dx[i] * dy[i]):f64):f64"));
        assert!(collapsed_body(&ks[1]).contains("(dx[i][0] * dy[i][0])"));
        let general = dump::kernel(&ks[1]);
        assert!(
            general.contains("param dx: f64[n][incx] input flat(incx, 1)"),
            "{general}"
        );
        assert!(
            general.contains("positive incx (negative start at line 13)"),
            "{general}"
        );
        assert!(ks[0].negative_steps.is_empty());
        assert!(ks[1]
            .preconditions()
            .iter()
            .any(|p| p.contains("negative `incy`")));
    }

    /// A flag read only by its test is left to the root crate's split of
    /// the loop IR, a body under `if (n > 0)` stays one kernel; a negative
    /// start for a parameter that steps no array
    /// is refused where it is (nothing would check it is positive).
    #[test]
    fn flags_stay_whole_and_an_unchecked_negative_start_is_refused() {
        let ks = kernels(
            "void f(int n, float *y, const float *x, int trans) {
               if (trans == 'N') { for (int i = 0; i < n; i++) y[i] = x[i]; }
               else { for (int i = 0; i < n; i++) y[i] = 2.0f * x[i]; }
             }",
        );
        assert_eq!(ks.len(), 1);
        assert!(ks[0].case.is_none());
        let positive = kernels(
            "void g(int n, float *x, float a) {
               if (n > 0) { for (int i = 0; i < n; i++) x[i] = a * x[i]; } }",
        );
        assert_eq!(positive.len(), 1);
        assert!(positive[0].case.is_none());
        let refused = extracted(
            "void g(int n, float *y, int k) {
               int s = 0;
               if (k < 0) s = -k;
               for (int i = 0; i < n; i++) y[i] = (float)(s + k);
             }",
            &Options::default(),
        );
        let Err(ExtractError::Rejected(d)) = refused else {
            panic!("{refused:?}");
        };
        let text = d.render();
        assert!(
            text.contains("start for a negative `k` cannot be set aside"),
            "{text}"
        );
    }
}
