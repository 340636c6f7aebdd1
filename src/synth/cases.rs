//! Kernel-level cases: a C function that picks its computation by testing
//! integer flags it is passed (a BLAS `trans` character, darknet's
//! `TA`/`TB`, a mode), `if (trans == 'N') { … } else { … }`, computes
//! different things over different extents in each branch (`y` has `m`
//! elements in one, `n` in the other), which no single tensor program with
//! a `where` expresses. It takes a kernel and hands on its [`Split`]: one
//! kernel per case (the statements of the branches taken, `Kernel::case`
//! set) and the [`CaseTree`] of tests that picks one.
//!
//! Each case is then lifted and verified like any kernel; the targets
//! emit a dispatcher that runs the C's own tests on the flags and calls
//! the case's program. Exact: the tests read only the flags, which no
//! statement writes, so they decide the same branch at the top of the
//! function as where the C makes them, in every iteration of a loop
//! around them (the loop is unswitched: one copy per case).
//!
//! A flag is an integer scalar parameter the kernel never writes, in no
//! array's extent or stride, and, when the loop IR calls it a size (a
//! guard reads it), read by nothing but tests on parameters and literals:
//! the spec's sample sizes would otherwise take one branch of `if (mode ==
//! 1)` only. A test qualifies when it reads flags, literals and C's integer
//! operators only. Tests one after another multiply (two flags, four
//! cases), nested ones follow their branch. At most [`MAX_CASES`] cases.
//! Each case gets flag values under which the C takes it (`pins`, searched
//! among the literals the tests compare with, their neighbours, 0 and 1); a
//! case no such values reach leaves the kernel unsplit.

use std::collections::{BTreeSet, HashMap};

use tenslift_frontend::ir::{
    Expr, ExprKind, Kernel, KernelCase, LValue, Loop, ParamKind, ScalarType, Stmt, Storage,
    VarClass,
};

use crate::spec::sizes::concrete_int;
use crate::spec::Sizes;
use crate::synth::signature::dtype_of;

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

/// The kernels of a translation unit as `lift` and `verify` take them:
/// each function's kernel with its [`Split`] when it has cases. The
/// frontend reads a function that tests its increments as one kernel per
/// case (consecutive, one name, `Kernel::case` set without pins: see
/// `lower::increments`); the others are split here.
pub fn plan(kernels: &[Kernel]) -> Vec<(Kernel, Option<Split>)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < kernels.len() {
        let first = &kernels[at];
        let group: Vec<Kernel> = match &first.case {
            Some(c) => kernels[at..]
                .iter()
                .take(c.count)
                .take_while(|k| k.name == first.name && k.case.is_some())
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        at += group.len().max(1);
        let split = match group.is_empty() {
            true => split(first),
            false => Some(from_frontend(group)),
        };
        out.push((first.clone(), split));
    }
    out
}

/// Every kernel [`plan`] hands on, a split one as its cases (what `spec`
/// and `verify` go through one by one).
pub fn each_case(kernels: &[Kernel]) -> Vec<Kernel> {
    plan(kernels)
        .into_iter()
        .flat_map(|(k, split)| split.map_or_else(|| vec![k], |s| s.cases))
        .collect()
}

/// The split of the frontend's cases of one function: the tree rebuilt
/// from their paths, and pins for the parameters a case's tests read and
/// its statements do not (as for flags); a test that reads a size of the
/// case is left to the sample sizes, which [`crate::spec::sizes::case_holds`]
/// keeps on the case's path.
fn from_frontend(mut cases: Vec<Kernel>) -> Split {
    for c in &mut cases {
        let flags: BTreeSet<String> = c
            .params
            .iter()
            .filter(|p| is_flag(c, &p.name))
            .map(|p| p.name.clone())
            .collect();
        let path = c.case.as_ref().map(|k| k.path.clone()).unwrap_or_default();
        let decidable: Vec<(Expr, bool)> = path
            .into_iter()
            .filter(|(cond, _)| reads_only(cond, &|n| flags.contains(n), &mut BTreeSet::new()))
            .collect();
        let site = Site {
            kernel: c,
            flags: &flags,
        };
        let pins = pins_for(&site, &decidable).unwrap_or_default();
        if let Some(case) = c.case.as_mut() {
            case.pins = pins;
        }
    }
    let all: Vec<usize> = (0..cases.len()).collect();
    let tree = tree_from_paths(&cases, &all, 0);
    Split { tree, cases }
}

/// The tree of tests that picks one of `cases[at]` (which agree on the
/// first `depth` tests of their paths).
fn tree_from_paths(cases: &[Kernel], at: &[usize], depth: usize) -> CaseTree {
    let step = |k: usize| {
        cases[k]
            .case
            .as_ref()
            .and_then(|c| c.path.get(depth).cloned())
    };
    let Some((cond, _)) = at.first().and_then(|&k| step(k)) else {
        return CaseTree::Leaf(at.first().copied().unwrap_or(0));
    };
    let side = |taken: bool| -> Vec<usize> {
        at.iter()
            .copied()
            .filter(|&k| step(k).is_some_and(|(c, t)| c == cond && t == taken))
            .collect()
    };
    let (yes, no) = (side(true), side(false));
    if yes.is_empty() || no.is_empty() {
        return CaseTree::Leaf(at[0]);
    }
    CaseTree::Branch {
        cond,
        then: Box::new(tree_from_paths(cases, &yes, depth + 1)),
        otherwise: Box::new(tree_from_paths(cases, &no, depth + 1)),
    }
}

/// `kernel` split into its cases; `None` when its top level tests no flag
/// (or the cases would be too many, or one cannot be reached), or it is a
/// case already.
pub fn split(kernel: &Kernel) -> Option<Split> {
    if kernel.case.is_some() {
        return None;
    }
    let flags: BTreeSet<String> = kernel
        .params
        .iter()
        .filter(|p| is_flag(kernel, &p.name))
        .map(|p| p.name.clone())
        .collect();
    if flags.is_empty() {
        return None;
    }
    let at = Site {
        kernel,
        flags: &flags,
    };
    let mut cases = Vec::new();
    let tree = tree_of(&at, kernel.body.clone(), &mut Vec::new(), &mut cases)?;
    if cases.len() < 2 {
        return None;
    }
    let count = cases.len();
    for c in &mut cases {
        let Some(case) = c.case.as_mut() else {
            continue;
        };
        case.count = count;
        // A flag is no size of a case: nothing in it reads the flag.
        let flags: Vec<String> = case.pins.iter().map(|(f, _)| f.clone()).collect();
        for p in &mut c.params {
            if let ParamKind::Scalar { is_size, .. } = &mut p.kind {
                if flags.contains(&p.name) {
                    *is_size = false;
                }
            }
        }
    }
    Some(Split { tree, cases })
}

/// The kernel being split and its flags (computed once: every test asks).
struct Site<'a> {
    kernel: &'a Kernel,
    flags: &'a BTreeSet<String>,
}

/// The tree of the cases of `body` (the kernel's body with the branches
/// on `path` taken), each leaf's kernel pushed to `out`.
fn tree_of(
    at: &Site<'_>,
    body: Vec<Stmt>,
    path: &mut Vec<(Expr, bool)>,
    out: &mut Vec<Kernel>,
) -> Option<CaseTree> {
    let kernel = at.kernel;
    let Some((cond, taken, not_taken)) = unswitched(at, &body) else {
        let pins = pins_for(at, path)?;
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
    // The same test again (`if (trans == 'N')` before the scaling of `y`
    // and again before the product) decides as it did on this path.
    if let Some(&(_, decided)) = path.iter().find(|(c, _)| *c == cond) {
        return tree_of(at, if decided { taken } else { not_taken }, path, out);
    }
    let mut branch = |taken: bool, body: Vec<Stmt>, out: &mut Vec<Kernel>| {
        path.push((cond.clone(), taken));
        let t = tree_of(at, body, path, out);
        path.pop();
        t.filter(|_| out.len() <= MAX_CASES)
    };
    let then = branch(true, taken, out)?;
    let otherwise = branch(false, not_taken, out)?;
    Some(CaseTree::Branch {
        cond,
        then: Box::new(then),
        otherwise: Box::new(otherwise),
    })
}

/// The first `if` on flags in `body`, at any depth, and `body` with it
/// replaced by its `then` statements, and by its `else` ones: a test of
/// flags inside a loop decides the same way at every iteration (no
/// statement writes a flag), so the loop is unswitched.
fn unswitched(site: &Site<'_>, body: &[Stmt]) -> Option<(Expr, Vec<Stmt>, Vec<Stmt>)> {
    for (at, s) in body.iter().enumerate() {
        let spliced = |inner: Vec<Stmt>| {
            let mut b = body[..at].to_vec();
            b.extend(inner);
            b.extend_from_slice(&body[at + 1..]);
            b
        };
        let found = match s {
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } if flag_test(site, s) => Some((cond.clone(), then_body.clone(), else_body.clone())),
            Stmt::Loop(l) => unswitched(site, &l.body).map(|(c, t, e)| {
                let with = |body| vec![Stmt::Loop(Loop { body, ..l.clone() })];
                (c, with(t), with(e))
            }),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                let rebuilt = |then_body, else_body| match s.clone() {
                    Stmt::If {
                        cond, kind, loc, ..
                    } => vec![Stmt::If {
                        cond,
                        kind,
                        then_body,
                        else_body,
                        loc,
                    }],
                    other => vec![other],
                };
                match unswitched(site, then_body) {
                    Some((c, t, e)) => Some((
                        c,
                        rebuilt(t, else_body.clone()),
                        rebuilt(e, else_body.clone()),
                    )),
                    None => unswitched(site, else_body).map(|(c, t, e)| {
                        (
                            c,
                            rebuilt(then_body.clone(), t),
                            rebuilt(then_body.clone(), e),
                        )
                    }),
                }
            }
            _ => None,
        };
        if let Some((c, t, e)) = found {
            return Some((c, spliced(t), spliced(e)));
        }
    }
    None
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

/// Whether `s` is an `if` on flags only.
fn flag_test(site: &Site<'_>, s: &Stmt) -> bool {
    let Stmt::If { cond, .. } = s else {
        return false;
    };
    let mut read = BTreeSet::new();
    reads_only(cond, &|n| site.flags.contains(n), &mut read) && !read.is_empty()
}

/// Whether `e` reads only the parameters `ok` accepts (collected in
/// `read`), integer literals and integer operators.
fn reads_only(e: &Expr, ok: &dyn Fn(&str) -> bool, read: &mut BTreeSet<String>) -> bool {
    if e.ty.is_float() {
        return false;
    }
    match &e.kind {
        ExprKind::IntLit { .. } => true,
        ExprKind::Var {
            name,
            class: VarClass::Param,
        } if ok(name) => {
            read.insert(name.clone());
            true
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => reads_only(arg, ok, read),
        ExprKind::Binary { lhs, rhs, .. } => reads_only(lhs, ok, read) && reads_only(rhs, ok, read),
        _ => false,
    }
}

/// Whether the parameter `name` is a flag: an integer scalar the kernel
/// never writes, and no size unless the tests at its top level are all
/// that read it (`if (flag == 1)` makes `flag` a size of the loop IR, and
/// the spec's sample sizes would take one branch only).
fn is_flag(kernel: &Kernel, name: &str) -> bool {
    let Some(ParamKind::Scalar { ty, is_size }) = kernel
        .params
        .iter()
        .find(|p| p.name == name)
        .map(|p| &p.kind)
    else {
        return false;
    };
    if ty.is_float() || writes_scalar(&kernel.body, name) {
        return false;
    }
    let in_arrays = kernel.params.iter().any(|p| match &p.kind {
        ParamKind::Array(info) => {
            let strides = match &info.storage {
                Storage::Flat { strides } => strides.as_slice(),
                _ => &[],
            };
            let dims = info.dims.iter().flatten();
            dims.chain(strides).any(|a| a.terms.contains_key(name))
        }
        _ => false,
    });
    !is_size || (!in_arrays && !reads_outside_tests(kernel, &kernel.body, name))
}

fn writes_scalar(body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::Assign {
            target: LValue::Scalar { name: n, .. },
            ..
        } => n == name,
        Stmt::Loop(l) => writes_scalar(&l.body, name),
        Stmt::If {
            then_body,
            else_body,
            ..
        } => writes_scalar(then_body, name) || writes_scalar(else_body, name),
        _ => false,
    })
}

/// Whether `body` reads `name` anywhere but in the conditions of `if`s
/// that test parameters and literals only (which splitting takes apart).
fn reads_outside_tests(kernel: &Kernel, body: &[Stmt], name: &str) -> bool {
    body.iter().any(|s| match s {
        Stmt::If {
            cond,
            then_body,
            else_body,
            ..
        } => {
            (cond.mentions(name) && !on_params(kernel, cond))
                || reads_outside_tests(kernel, then_body, name)
                || reads_outside_tests(kernel, else_body, name)
        }
        Stmt::Loop(l) => {
            l.start.terms.contains_key(name)
                || l.end.terms.contains_key(name)
                || reads_outside_tests(kernel, &l.body, name)
        }
        other => other.mentions(name),
    })
}

/// Whether `e` reads integer parameters and literals only.
fn on_params(kernel: &Kernel, e: &Expr) -> bool {
    let integer = |n: &str| {
        kernel.params.iter().any(|p| {
            p.name == n && matches!(p.kind, ParamKind::Scalar { ty, .. } if !ty.is_float())
        })
    };
    reads_only(e, &integer, &mut BTreeSet::new())
}

/// Flag values under which every test on `path` takes its branch: the
/// first in a fixed order, so the same kernel gets the same pins.
fn pins_for(site: &Site<'_>, path: &[(Expr, bool)]) -> Option<Vec<(String, i64)>> {
    let kernel = site.kernel;
    let mut flags = BTreeSet::new();
    let mut literals = BTreeSet::new();
    for (cond, _) in path {
        reads_only(cond, &|n| site.flags.contains(n), &mut flags);
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
        let env: Sizes = flags
            .iter()
            .zip(&chosen)
            .map(|((f, ty), &k)| (f.clone(), wrap(values[k], *ty)))
            .collect();
        // C's integer arithmetic, as the spec evaluates an iteration-space
        // test (`None` on a division by zero or an `i64` overflow).
        let takes = |(cond, taken): &(Expr, bool)| {
            concrete_int(cond, &HashMap::new(), &env).map(|v| (v != 0) == *taken)
        };
        if path.iter().all(|p| takes(p) == Some(true)) {
            return Some(env.into_iter().collect());
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

/// `v` as a value of `ty`, as C converts it.
fn wrap(v: i64, ty: ScalarType) -> i64 {
    dtype_of(ty).wrap_int(i128::from(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::partial::restructure::test_support::kernel_of;

    /// Each case's flag values.
    fn pins_of(s: &Split) -> Vec<Option<Vec<(String, i64)>>> {
        s.cases
            .iter()
            .map(|c| c.case.as_ref().map(|c| c.pins.clone()))
            .collect()
    }

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
        let pins = pins_of(&s);
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
        let pins = pins_of(&s);
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

    /// `if (mode == 1)` makes `mode` a size of the loop IR (a guard reads
    /// it), where the spec's sample sizes take one branch only: still a
    /// flag when the tests are all that read it, and no size of its
    /// cases; a size a loop runs to is none.
    #[test]
    fn a_size_read_only_by_the_tests_is_a_flag() {
        let k = kernel_of(
            "float f(int n, const float *x, int mode) {
               float s = 0.0f;
               if (mode == 1) { for (int i = 0; i < n; i++) s += x[i]; }
               else { for (int i = 0; i < n; i++) s += x[i] * x[i]; }
               return s; }",
        );
        let s = split(&k).expect("splits");
        let pins = pins_of(&s);
        assert_eq!(pins[0], Some(vec![("mode".to_string(), 1)]));
        let mode = s.cases[0]
            .params
            .iter()
            .find(|p| p.name == "mode")
            .map(|p| &p.kind);
        assert!(
            matches!(mode, Some(ParamKind::Scalar { is_size: false, .. })),
            "{mode:?}"
        );
        let k = kernel_of(
            "void f(int n, float *y) {
               if (n == 4) { for (int i = 0; i < n; i++) y[i] = 1.0f; }
               else { for (int i = 0; i < n; i++) y[i] = 2.0f; } }",
        );
        assert!(split(&k).is_none());
    }

    /// A flag tested inside the loop decides alike at every iteration: the
    /// loop is unswitched, one loop per case (the sample sizes of one lift
    /// never took `mode == 1`, and the program computed `2 * x` for it).
    #[test]
    fn a_flag_tested_inside_a_loop_unswitches_it() {
        let k = kernel_of(
            "void f(int n, const float *x, float *y, int mode) {
               for (int i = 0; i < n; i++) { if (mode == 1) y[i] = x[i]; else y[i] = 2.0f * x[i]; } }",
        );
        let s = split(&k).expect("splits");
        let bodies: Vec<String> = s
            .cases
            .iter()
            .map(|c| crate::synth::partial::restructure::test_support::dump(&c.body))
            .collect();
        assert_eq!(s.cases.len(), 2);
        assert!(
            bodies[0].contains("y[i] = x[i]") && !bodies[0].contains("if"),
            "{bodies:?}"
        );
        assert!(
            bodies[1].contains("2.0f * x[i]") && !bodies[1].contains("if"),
            "{bodies:?}"
        );
    }

    /// C's conversions: a `char` compared after promotion, an unsigned
    /// flag wrapping.
    #[test]
    fn flag_values_wrap_to_their_type() {
        assert_eq!(wrap(200, ScalarType::I8), -56);
        assert_eq!(wrap(-1, ScalarType::U8), 255);
        assert_eq!(wrap(5, ScalarType::Bool), 1);
    }

    /// The frontend's cases of reference `dscal` (`incx == 1` unrolled,
    /// else the strided walk): one split, the unit case pinned at
    /// `incx = 1` (it does not read it), the general one left to sizes that
    /// keep it on its path (never `incx = 1`); and `n == 4` fixed in its
    /// branch, pinned, the other branch's sizes avoiding 4.
    #[test]
    fn frontend_cases_are_grouped_pinned_and_sampled_on_their_paths() {
        use crate::synth::partial::restructure::test_support::kernels_of;
        let ks = kernels_of(
            "void dscal(int n, double da, double *dx, int incx) {
               int i, m;
               if (n <= 0 || incx <= 0) return;
               if (incx == 1) {
                 m = n % 5;
                 if (m != 0) { for (i = 0; i < m; i++) dx[i] = da * dx[i]; if (n < 5) return; }
                 for (i = m; i < n; i += 5) {
                   dx[i] = da * dx[i]; dx[i + 1] = da * dx[i + 1]; dx[i + 2] = da * dx[i + 2];
                   dx[i + 3] = da * dx[i + 3]; dx[i + 4] = da * dx[i + 4];
                 }
               } else {
                 for (i = 0; i < n * incx; i += incx) dx[i] = da * dx[i];
               }
             }",
        );
        let planned = plan(&ks);
        assert_eq!(planned.len(), 1);
        let s = planned[0].1.as_ref().expect("split");
        assert!(matches!(&s.tree, CaseTree::Branch { then, otherwise, .. }
            if **then == CaseTree::Leaf(0) && **otherwise == CaseTree::Leaf(1)));
        assert_eq!(
            pins_of(s),
            [Some(vec![("incx".into(), 1)]), Some(Vec::new())]
        );
        let general = &s.cases[1];
        let first = crate::spec::choose_sizes(general, &Sizes::new()).expect("sizes");
        assert!(
            crate::spec::sizes::case_holds(general, &first) && first["incx"] != 1,
            "{first:?}"
        );
        let at_one: Sizes = [("n".to_string(), 3), ("incx".to_string(), 1)].into();
        assert!(!crate::spec::sizes::case_holds(general, &at_one));

        let ks = kernels_of(
            "void h(int n, const float *x, float *y) {
               if (n == 4) { for (int i = 0; i < n; i++) y[i] = x[i]; }
               else { for (int i = 0; i < n; i++) y[i] = 2.0f * x[i]; } }",
        );
        let planned = plan(&ks);
        let s = planned[0].1.as_ref().expect("split");
        assert_eq!(pins_of(s)[0], Some(vec![("n".into(), 4)]));
        let other = crate::spec::choose_sizes(&s.cases[1], &Sizes::new()).expect("sizes");
        let second = crate::spec::choose_second_sizes(&s.cases[1], &other).expect("sizes");
        assert!(other["n"] != 4 && second["n"] != 4, "{other:?} {second:?}");
    }
}
