//! Kernel-level cases: a C function that picks its whole computation by
//! testing integer flags it is passed (a BLAS `trans` character, darknet's
//! `TA`/`TB`, a CBLAS enum), `if (trans == 'N') { … } else { … }` at its
//! top level, computes different things over different extents in each
//! branch (`y` has `m` elements in one, `n` in the other), which no single
//! tensor program with a `where` expresses. It takes a kernel and hands on
//! its [`Split`]: one kernel per case (the statements of the branches taken,
//! `Kernel::case` set) and the [`CaseTree`] of tests that picks one.
//!
//! Each case is then lifted and verified like any kernel; the targets
//! emit a dispatcher that runs the C's own tests on the flags and calls
//! the case's program. Exact: the tests read only the flags, which no
//! statement writes, so they decide the same branch at the top of the
//! function as where the C makes them.
//!
//! A test qualifies when it reads integer scalar parameters that are not
//! sizes (no loop bound, extent or subscript reads them), literals and
//! C's integer operators only. Tests at the top level one after another
//! multiply (two flags, four cases), nested ones follow their branch. At
//! most [`MAX_CASES`] cases. Each case gets flag values under which the C
//! takes it (`pins`, searched among the literals the tests compare with,
//! their neighbours, 0 and 1); a case no such values reach leaves the
//! kernel unsplit.

use std::collections::BTreeSet;

use tenslift_frontend::ir::{
    Expr, ExprKind, Kernel, KernelCase, ParamKind, ScalarType, Stmt, VarClass,
};

/// Most cases one kernel splits into.
pub const MAX_CASES: usize = 8;

/// Most flags whose values are searched together.
const MAX_FLAGS: usize = 4;

/// A kernel's cases and the tests that pick one.
#[derive(Clone, Debug)]
pub struct Split {
    pub tree: CaseTree,
    pub cases: Vec<Kernel>,
}

/// The C's tests on its flags, in its order: a leaf is a case (an index
/// into [`Split::cases`]).
#[derive(Clone, Debug, PartialEq)]
pub enum CaseTree {
    Leaf(usize),
    Branch {
        cond: Expr,
        then: Box<CaseTree>,
        otherwise: Box<CaseTree>,
    },
}

impl Split {
    /// The flags the tests read, in order of first read.
    pub fn flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut walk = vec![&self.tree];
        while let Some(t) = walk.pop() {
            if let CaseTree::Branch {
                cond,
                then,
                otherwise,
            } = t
            {
                for f in flags_of(cond) {
                    if !out.contains(&f) {
                        out.push(f);
                    }
                }
                walk.push(otherwise);
                walk.push(then);
            }
        }
        out
    }
}

/// `kernel` split into its cases; `None` when its top level tests no flag
/// (or the cases would be too many, or one cannot be reached).
pub fn split(kernel: &Kernel) -> Option<Split> {
    let mut cases = Vec::new();
    let tree = tree_of(kernel, kernel.body.clone(), &mut Vec::new(), &mut cases)?;
    if cases.len() < 2 {
        return None;
    }
    let count = cases.len();
    for c in &mut cases {
        if let Some(case) = c.case.as_mut() {
            case.count = count;
        }
    }
    Some(Split { tree, cases })
}

/// The tree of the cases of `body` (the kernel's top level with the
/// branches on `path` taken), each leaf's kernel pushed to `out`.
fn tree_of(
    kernel: &Kernel,
    body: Vec<Stmt>,
    path: &mut Vec<(Expr, bool)>,
    out: &mut Vec<Kernel>,
) -> Option<CaseTree> {
    let Some(at) = body.iter().position(|s| flag_test(kernel, s).is_some()) else {
        let pins = pins_for(kernel, path)?;
        out.push(Kernel {
            body,
            case: Some(KernelCase {
                number: out.len() + 1,
                count: 0,
                path: path.clone(),
                pins,
            }),
            ..kernel.clone()
        });
        return Some(CaseTree::Leaf(out.len() - 1));
    };
    let Stmt::If {
        cond,
        then_body,
        else_body,
        ..
    } = &body[at]
    else {
        return None;
    };
    let taking = |branch: &[Stmt]| {
        let mut b = body[..at].to_vec();
        b.extend_from_slice(branch);
        b.extend_from_slice(&body[at + 1..]);
        b
    };
    let mut branch = |taken: bool, stmts: &[Stmt], out: &mut Vec<Kernel>| {
        path.push((cond.clone(), taken));
        let t = tree_of(kernel, taking(stmts), path, out);
        path.pop();
        t.filter(|_| out.len() <= MAX_CASES)
    };
    let then = branch(true, then_body, out)?;
    let otherwise = branch(false, else_body, out)?;
    Some(CaseTree::Branch {
        cond: cond.clone(),
        then: Box::new(then),
        otherwise: Box::new(otherwise),
    })
}

/// The kernel's name, with its case number when it is one of a split
/// (`sgemv_case1`): the name of the case's program and function.
pub fn label(kernel: &Kernel) -> String {
    match &kernel.case {
        Some(c) => format!("{}_case{}", kernel.name, c.number),
        None => kernel.name.clone(),
    }
}

/// The parameters `e` reads, in order of first read.
pub fn flags_of(e: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(e: &Expr, out: &mut Vec<String>) {
        match &e.kind {
            ExprKind::Var { name, .. } if !out.contains(name) => out.push(name.clone()),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => walk(arg, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                walk(lhs, out);
                walk(rhs, out);
            }
            _ => {}
        }
    }
    walk(e, &mut out);
    out
}

/// The condition of `s` when it is an `if` on flags only.
fn flag_test<'s>(kernel: &Kernel, s: &'s Stmt) -> Option<&'s Expr> {
    let Stmt::If { cond, .. } = s else {
        return None;
    };
    let mut flags = BTreeSet::new();
    (on_flags(kernel, cond, &mut flags) && !flags.is_empty()).then_some(cond)
}

/// Whether `e` reads only flags (collected in `flags`), integer literals
/// and integer operators.
fn on_flags(kernel: &Kernel, e: &Expr, flags: &mut BTreeSet<String>) -> bool {
    if e.ty.is_float() {
        return false;
    }
    match &e.kind {
        ExprKind::IntLit { .. } => true,
        ExprKind::Var {
            name,
            class: VarClass::Param,
        } => {
            let flag = kernel.params.iter().any(|p| {
                p.name == *name
                    && matches!(p.kind, ParamKind::Scalar { ty, is_size } if !ty.is_float() && !is_size)
            });
            if flag {
                flags.insert(name.clone());
            }
            flag
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => on_flags(kernel, arg, flags),
        ExprKind::Binary { lhs, rhs, .. } => {
            on_flags(kernel, lhs, flags) && on_flags(kernel, rhs, flags)
        }
        _ => false,
    }
}

/// Flag values under which every test on `path` takes its branch: the
/// first in a fixed order, so the same kernel gets the same pins.
fn pins_for(kernel: &Kernel, path: &[(Expr, bool)]) -> Option<Vec<(String, i64)>> {
    let mut flags = BTreeSet::new();
    let mut literals = BTreeSet::new();
    for (cond, _) in path {
        on_flags(kernel, cond, &mut flags);
        literals_of(cond, &mut literals);
    }
    if flags.len() > MAX_FLAGS {
        return None;
    }
    let flags: Vec<(String, ScalarType)> = flags
        .into_iter()
        .filter_map(|f| Some((f.clone(), flag_type(kernel, &f)?)))
        .collect();
    let mut values: Vec<i64> = vec![0, 1];
    for v in &literals {
        for c in [*v, v - 1, v + 1] {
            if !values.contains(&c) {
                values.push(c);
            }
        }
    }
    let mut chosen = vec![0usize; flags.len()];
    loop {
        let env: Vec<(String, i64)> = flags
            .iter()
            .zip(&chosen)
            .map(|((f, ty), &k)| (f.clone(), wrap(values[k], *ty)))
            .collect();
        let takes = |(cond, taken): &(Expr, bool)| eval(cond, &env).map(|v| (v != 0) == *taken);
        if path.iter().all(|p| takes(p) == Some(true)) {
            return Some(env);
        }
        // The next assignment, the last flag fastest.
        let mut k = chosen.len();
        loop {
            if k == 0 {
                return None;
            }
            k -= 1;
            chosen[k] += 1;
            if chosen[k] < values.len() {
                break;
            }
            chosen[k] = 0;
        }
    }
}

fn flag_type(kernel: &Kernel, name: &str) -> Option<ScalarType> {
    kernel.params.iter().find_map(|p| match p.kind {
        ParamKind::Scalar { ty, .. } if p.name == name => Some(ty),
        _ => None,
    })
}

fn literals_of(e: &Expr, out: &mut BTreeSet<i64>) {
    match &e.kind {
        ExprKind::IntLit { value } => {
            out.insert(*value);
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => literals_of(arg, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            literals_of(lhs, out);
            literals_of(rhs, out);
        }
        _ => {}
    }
}

/// `e` on the flag values `env` (C's integer arithmetic, as the spec
/// evaluates an iteration-space test); `None` on a division by zero or an
/// overflow of `i64`. The flags are values of their own types already.
pub fn eval(e: &Expr, env: &[(String, i64)]) -> Option<i64> {
    let sizes: crate::spec::Sizes = env.iter().cloned().collect();
    crate::spec::sizes::concrete_int(e, &std::collections::HashMap::new(), &sizes)
}

/// `v` as a value of `ty` (C's conversion: modulo `2^bits`, signed types
/// two's complement; `bool` is 0 or 1).
fn wrap(v: i64, ty: ScalarType) -> i64 {
    let bits = ty.bits();
    if ty == ScalarType::Bool {
        return i64::from(v != 0);
    }
    if bits >= 64 || ty.is_float() {
        return v;
    }
    let m = v.rem_euclid(1i64 << bits);
    if ty.is_signed() && m >= 1i64 << (bits - 1) {
        m - (1i64 << bits)
    } else {
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::partial::restructure::test_support::kernel_of;

    /// A BLAS-style `trans` character: two cases, the first where the C
    /// compares equal (`'N'`, 78), the second at the next value.
    #[test]
    fn a_character_flag_splits_into_two_cases_with_pins() {
        let k = kernel_of(
            "void f(char trans, int m, int n, const float *a, const float *x, float *y) {
               if (trans == 'N') { for (int i = 0; i < m; i++) y[i] = 2.0f * x[i]; }
               else { for (int j = 0; j < n; j++) y[j] = x[j] + a[j]; } }",
        );
        let s = split(&k).expect("splits");
        assert_eq!(s.cases.len(), 2);
        let pins: Vec<_> = s
            .cases
            .iter()
            .map(|c| c.case.as_ref().map(|c| c.pins.clone()))
            .collect();
        assert_eq!(pins[0], Some(vec![("trans".to_string(), 78)]));
        assert_eq!(pins[1], Some(vec![("trans".to_string(), 0)]));
        assert!(matches!(s.tree, CaseTree::Branch { .. }));
    }

    /// Two flags tested one after the other (darknet's `if (!TA && !TB)
    /// … else if (TA && !TB) …`): four cases, each reached by its pins.
    #[test]
    fn nested_tests_on_two_flags_give_four_cases() {
        let k = kernel_of(
            "void f(int ta, int tb, int n, float *y) {
               if (!ta && !tb) { for (int i = 0; i < n; i++) y[i] = 1.0f; }
               else if (ta && !tb) { for (int i = 0; i < n; i++) y[i] = 2.0f; }
               else if (!ta && tb) { for (int i = 0; i < n; i++) y[i] = 3.0f; }
               else { for (int i = 0; i < n; i++) y[i] = 4.0f; } }",
        );
        let s = split(&k).expect("splits");
        let pins: Vec<_> = s
            .cases
            .iter()
            .map(|c| c.case.as_ref().map(|c| c.pins.clone()))
            .collect();
        let of = |a, b| Some(vec![("ta".to_string(), a), ("tb".to_string(), b)]);
        assert_eq!(pins, vec![of(0, 0), of(1, 0), of(0, 1), of(1, 1)]);
    }

    /// A test on a size, on data or on a float parameter is no flag: the
    /// kernel stays whole.
    #[test]
    fn tests_on_sizes_data_or_floats_do_not_split() {
        for test in ["n > 4", "x[0] > 0.0f", "beta == 0.0f"] {
            let k = kernel_of(&format!(
                "void f(int n, float beta, const float *x, float *y) {{
                   if ({test}) {{ for (int i = 0; i < n; i++) y[i] = x[i]; }}
                   else {{ for (int i = 0; i < n; i++) y[i] = beta * x[i]; }} }}"
            ));
            assert!(split(&k).is_none(), "{test}");
        }
    }

    /// C's conversions: a `char` compared after promotion, an unsigned
    /// flag wrapping.
    #[test]
    fn flag_values_wrap_to_their_type() {
        assert_eq!(wrap(200, ScalarType::I8), -56);
        assert_eq!(wrap(-1, ScalarType::U8), 255);
        assert_eq!(wrap(5, ScalarType::Bool), 1);
    }
}
