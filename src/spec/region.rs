//! Regions: the sub-box of an array the loops touch, and the relations
//! between size parameters the C relies on for it to fit.
//!
//! Real code declares arrays at one size and runs its loops to another:
//! PolyBench as distributed declares `C[NI + PAD][NJ + PAD]` (an extent
//! size `ext_1000` in the loop IR) and writes it for `i < ni`, `j < nj`;
//! BLAS-style code declares `A[][lda]` (or strides a pointer by `lda`) and
//! reads `j < n`. The touched region of each axis is `0 : t`, where `t`
//! is one past the largest index any access reaches (iterators replaced by
//! their largest value, recursively, then lowered while the loops around
//! the access prove it never gets there); the C is only correct when `t <=
//! extent` on every axis, which is the kernel's precondition. [`relations`]
//! collects them once: the lifted program states them in its header
//! (`requires`), the emitted code checks them at run time, and the Z3
//! proofs assume them.

use std::collections::HashMap;

use tenslift_frontend::fourier_motzkin::infeasible;
use tenslift_frontend::ir::{
    Affine, BinaryOp, Expr, ExprKind, Kernel, LValue, Loop, ParamKind, Stmt, Storage, UnaryOp,
};
use tenslift_frontend::ir_rewrite::{affine_of, constraints_of, difference, scale};

/// `needed <= declared`: the region the loops touch on `axis` of `array`
/// fits the array's extent there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    pub array: String,
    pub axis: usize,
    /// One past the largest index an access reaches (`ni`, `n + 1`).
    pub needed: Affine,
    /// The extent the C declares (`ext_1000`, `lda`).
    pub declared: Affine,
}

impl std::fmt::Display for Relation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <= {}", self.needed, self.declared)
    }
}

/// The loops of `body` by iterator: (start, end, step).
fn loop_bounds(body: &[Stmt], out: &mut HashMap<String, Loop>) {
    for s in body {
        match s {
            Stmt::Loop(l) => {
                out.insert(l.iter.clone(), l.clone());
                loop_bounds(&l.body, out);
            }
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                loop_bounds(then_body, out);
                loop_bounds(else_body, out);
            }
            _ => {}
        }
    }
}

/// An access's index vector with the loops around it, outermost first,
/// and what the guards around it say.
type Access<'k> = (&'k [Affine], Vec<&'k Loop>, Guarded);

/// What the guards around an access say of iterators and sizes: `a >= 0`
/// rows, and values that are not 0 (`x != w - 1` in the else branch of a
/// border test, which lowers the reach of `x + 1` inside `x < w`).
#[derive(Clone, Debug, Default)]
struct Guarded {
    rows: Vec<Affine>,
    nonzero: Vec<Affine>,
}

impl Guarded {
    /// What `cond` says where it is `holds`: the rows of a conjunction
    /// that holds, the negated comparisons of a disjunction that fails;
    /// nothing of a disjunction that holds (no conjunction of rows).
    fn add(&mut self, cond: &Expr, holds: bool) {
        match &cond.kind {
            ExprKind::Binary {
                op: op @ (BinaryOp::And | BinaryOp::Or),
                lhs,
                rhs,
            } if holds == (*op == BinaryOp::And) => {
                self.add(lhs, holds);
                self.add(rhs, holds);
            }
            ExprKind::Unary {
                op: UnaryOp::Not,
                arg,
            } => self.add(arg, !holds),
            ExprKind::Binary { op, lhs, rhs } if op.is_comparison() => {
                // A failing comparison is the opposite one holding.
                let op = if holds { *op } else { opposite(*op) };
                if op == BinaryOp::Ne {
                    if let (Some(a), Some(b)) = (affine_of(lhs), affine_of(rhs)) {
                        self.nonzero.push(difference(&a, &b));
                    }
                    return;
                }
                let holding = Expr {
                    ty: cond.ty,
                    kind: ExprKind::Binary {
                        op,
                        lhs: lhs.clone(),
                        rhs: rhs.clone(),
                    },
                };
                self.rows
                    .extend(constraints_of(&holding).unwrap_or_default());
            }
            _ => {}
        }
    }

    /// Whether the rows (with `facts`) have no integer point, trying each
    /// side of the first few `!=` (a value not 0 is at most -1 or at
    /// least 1); more are dropped, which only proves less.
    fn infeasible_with(&self, facts: Vec<Affine>) -> bool {
        let mut rows = facts;
        rows.extend(self.rows.iter().cloned());
        let cases = self.nonzero.iter().take(4).collect::<Vec<_>>();
        (0..1u32 << cases.len()).all(|pick| {
            let mut here = rows.clone();
            for (k, v) in cases.iter().enumerate() {
                let mut side = if pick >> k & 1 == 1 {
                    (*v).clone()
                } else {
                    scale(v, -1)
                };
                side.constant -= 1;
                here.push(side);
            }
            infeasible(here)
        })
    }
}

/// The comparison that holds where `op` fails (`<` and `>=`, `==` and `!=`).
fn opposite(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Ge,
        BinaryOp::Le => BinaryOp::Gt,
        BinaryOp::Gt => BinaryOp::Le,
        BinaryOp::Ge => BinaryOp::Lt,
        BinaryOp::Eq => BinaryOp::Ne,
        BinaryOp::Ne => BinaryOp::Eq,
        other => other,
    }
}

/// Every index vector of every access to `array` in `body`, inside `path`
/// and the guards `guarded`.
fn accesses<'k>(
    body: &'k [Stmt],
    array: &str,
    path: &mut Vec<&'k Loop>,
    guarded: &Guarded,
    out: &mut Vec<Access<'k>>,
) {
    fn in_expr<'k>(e: &'k Expr, array: &str, out: &mut Vec<&'k [Affine]>) {
        match &e.kind {
            ExprKind::Load { array: a, index } if a == array => out.push(index),
            ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => in_expr(arg, array, out),
            ExprKind::Binary { lhs, rhs, .. } => {
                in_expr(lhs, array, out);
                in_expr(rhs, array, out);
            }
            ExprKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                in_expr(cond, array, out);
                in_expr(then_value, array, out);
                in_expr(else_value, array, out);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|a| in_expr(a, array, out)),
            _ => {}
        }
    }
    for s in body {
        let mut here = Vec::new();
        match s {
            Stmt::Loop(l) => {
                path.push(l);
                accesses(&l.body, array, path, guarded, out);
                path.pop();
            }
            Stmt::Assign { target, value, .. } => {
                if let LValue::Element {
                    array: a, index, ..
                } = target
                {
                    if a == array {
                        here.push(index.as_slice());
                    }
                }
                in_expr(value, array, &mut here);
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
                ..
            } => {
                in_expr(cond, array, &mut here);
                for (branch, holds) in [(then_body, true), (else_body, false)] {
                    let mut inside = guarded.clone();
                    inside.add(cond, holds);
                    accesses(branch, array, path, &inside, out);
                }
            }
            Stmt::Return { value, .. } => in_expr(value, array, &mut here),
        }
        out.extend(
            here.into_iter()
                .map(|index| (index, path.clone(), guarded.clone())),
        );
    }
}

/// What the loops of `path` say of their iterators: each lies in its
/// range (`a >= 0` rows).
fn path_facts(path: &[&Loop]) -> Vec<Affine> {
    let mut rows = Vec::new();
    for l in path {
        let v = Affine::var(l.iter.clone());
        let (low, high) = if l.step > 0 {
            (
                Some(l.start.clone()),
                add_scaled(&l.end, 1, &Affine::constant(-1)),
            )
        } else {
            (
                add_scaled(&l.end, 1, &Affine::constant(1)),
                Some(l.start.clone()),
            )
        };
        rows.extend(low.and_then(|lo| add_scaled(&v, -1, &lo)));
        rows.extend(high.and_then(|h| add_scaled(&h, -1, &v)));
    }
    rows
}

/// `top` lowered while the loops around the access prove `index` stays
/// below it: the bound of each iterator taken alone can be one the access
/// never meets (nussinov's `table[i + 1][j]` inside `j` from `i + 1` to
/// `n`: `i + 1 <= n - 1`, though `i` alone reaches `n - 1`). Only an
/// overshoot past a size is taken back (`n + 1` to `n`, not `n` to
/// `n - 1`): a region keeps the loops' own extent `0:n` (trmm's `A[k][i]`
/// for `k > i` is still the square `0:m`), and a requirement never
/// grows for it.
fn tightened(index: &Affine, top: Affine, path: &[&Loop], guarded: &Guarded) -> Affine {
    let mut top = guard_bound(index, top, path, guarded);
    let facts = path_facts(path);
    while !top.terms.is_empty() && top.constant >= 0 {
        let Some(lower) = add_scaled(&top, 1, &Affine::constant(-1)) else {
            break;
        };
        // `index >= lower + 1` has no integer point inside the loops.
        let Some(mut above) = add_scaled(index, -1, &lower) else {
            break;
        };
        above.constant -= 1;
        let mut rows = facts.clone();
        rows.push(above);
        if !guarded.infeasible_with(rows) {
            break;
        }
        top = lower;
    }
    top
}

/// `top`, or a guard's own bound on `index` where it is below `top` by
/// sizes: `if (x + j - pad < w)` bounds a column of a zero-padded image by
/// `w - 1`, where the loops reach `w + pad - 1` (the steps of one below
/// [`tightened`] takes cannot cross a size).
fn guard_bound(index: &Affine, mut top: Affine, path: &[&Loop], guarded: &Guarded) -> Affine {
    let is_iter = |v: &String| path.iter().any(|l| l.iter == *v);
    for row in &guarded.rows {
        // The row says `row >= 0`, so `index <= index + row`.
        let Some(bound) = add_scaled(index, 1, row) else {
            continue;
        };
        if bound.terms.keys().any(is_iter) {
            continue;
        }
        let Some(gap) = add_scaled(&top, -1, &bound) else {
            continue;
        };
        if !gap.terms.is_empty() && gap.constant >= 0 && gap.terms.values().all(|&c| c > 0) {
            top = bound;
        }
    }
    top
}

/// `a + c * b`, `None` on overflow.
fn add_scaled(a: &Affine, c: i64, b: &Affine) -> Option<Affine> {
    let mut out = a.clone();
    out.constant = out.constant.checked_add(c.checked_mul(b.constant)?)?;
    for (v, k) in &b.terms {
        let e = out.terms.entry(v.clone()).or_insert(0);
        *e = e.checked_add(c.checked_mul(*k)?)?;
    }
    out.terms.retain(|_, k| *k != 0);
    Some(out)
}

/// The largest (`upper`) or smallest value `a` takes over the loops, in
/// size parameters: each iterator replaced by its extreme value. `None`
/// when a loop bound is out of reach (nested too deeply, overflow).
fn extreme(a: &Affine, loops: &HashMap<String, Loop>, upper: bool, depth: u32) -> Option<Affine> {
    if depth > 64 {
        return None;
    }
    let mut out = Affine::constant(a.constant);
    for (v, &c) in &a.terms {
        let Some(l) = loops.get(v) else {
            out = add_scaled(&out, c, &Affine::var(v.clone()))?;
            continue;
        };
        // Iterator values lie in [start, end - 1] going up, [end + 1, start]
        // going down.
        let (low, high) = if l.step > 0 {
            (
                l.start.clone(),
                add_scaled(&l.end, 1, &Affine::constant(-1))?,
            )
        } else {
            (
                add_scaled(&l.end, 1, &Affine::constant(1))?,
                l.start.clone(),
            )
        };
        let pick = if (c > 0) == upper { high } else { low };
        let bound = extreme(&pick, loops, (c > 0) == upper, depth + 1)?;
        out = add_scaled(&out, c, &bound)?;
    }
    Some(out)
}

/// One past the largest index the accesses reach on each axis of `array`
/// (`None` for an axis whose accesses reach incomparable bounds, `i` and
/// `j` for different sizes, or none at all).
pub fn touched(kernel: &Kernel, array: &str, rank: usize) -> Vec<Option<Affine>> {
    let mut loops = HashMap::new();
    loop_bounds(&kernel.body, &mut loops);
    let mut seen = Vec::new();
    accesses(
        &kernel.body,
        array,
        &mut Vec::new(),
        &Guarded::default(),
        &mut seen,
    );
    (0..rank)
        .map(|axis| {
            let mut best: Option<Affine> = None;
            for (index, path, guarded) in &seen {
                let at = index.get(axis)?;
                let top = tightened(at, extreme(at, &loops, true, 0)?, path, guarded);
                let end = add_scaled(&top, 1, &Affine::constant(1))?;
                best = match best {
                    None => Some(end),
                    Some(b) if b.terms == end.terms => {
                        Some(if end.constant > b.constant { end } else { b })
                    }
                    Some(_) => return None,
                };
            }
            best
        })
        .collect()
}

/// The region relations of every array parameter whose declared extent is
/// not what the loops run to (in parameter order, then axis order). An
/// axis whose touched end equals its extent (a VLA `C[ni][nj]` written for
/// `i < ni`) needs none; a constant extent (the loops run between
/// constants) is checked by the frontend already.
pub fn relations(kernel: &Kernel) -> Vec<Relation> {
    let mut out = Vec::new();
    for p in &kernel.params {
        let ParamKind::Array(info) = &p.kind else {
            continue;
        };
        // A flat pointer's outer extent is inferred from the loops; its
        // other axes are strides (`lda`) the rows must fit in.
        let first_axis = match info.storage {
            Storage::Declared => 0,
            Storage::Flat { .. } => 1,
            // Row pointers have no declared extent: the loops give their
            // shape, and the driver allocates exactly that.
            Storage::RowPointers => continue,
        };
        let reach = touched(kernel, &p.name, info.dims.len());
        for (axis, (dim, needed)) in info.dims.iter().zip(reach).enumerate() {
            let (Some(declared), Some(needed)) = (dim, needed) else {
                continue;
            };
            // `h - 1 <= h` (an interior stencil on a VLA) holds at every size.
            let always = difference(declared, &needed)
                .as_constant()
                .is_some_and(|c| c >= 0);
            if axis < first_axis || declared.as_constant().is_some() || always {
                continue;
            }
            let relation = Relation {
                array: p.name.clone(),
                axis,
                needed,
                declared: declared.clone(),
            };
            if !out
                .iter()
                .any(|r: &Relation| r.to_string() == relation.to_string())
            {
                out.push(relation);
            }
        }
    }
    out
}

/// The region views of `array`: for each axis, `Some(end)` when the loops
/// touch `0 : end` of a larger declared extent, `None` where they touch
/// the whole axis. `None` overall when the array has no such axis.
pub fn region_of(kernel: &Kernel, array: &str) -> Option<Vec<Option<Affine>>> {
    let p = kernel.params.iter().find(|p| p.name == array)?;
    let ParamKind::Array(info) = &p.kind else {
        return None;
    };
    // Row pointers are allocated at exactly their loops' shape. A flat
    // pointer's inner axes are strides (`lda`, `incx`): the loops may touch
    // fewer columns than the row holds (`x[i*incx]`: column 0 of rows
    // `incx` wide).
    if info.storage == Storage::RowPointers {
        return None;
    }
    let reach = touched(kernel, array, info.dims.len());
    let ends: Vec<Option<Affine>> = info
        .dims
        .iter()
        .zip(reach)
        .map(|(dim, needed)| match (dim, needed) {
            (Some(d), Some(n)) if *d != n && d.as_constant().is_none() => Some(n),
            _ => None,
        })
        .collect();
    ends.iter().any(Option::is_some).then_some(ends)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenslift_frontend::Options;

    fn kernel_of(source: &str) -> Kernel {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("k.c");
        std::fs::write(&path, source).expect("write");
        let unit =
            tenslift_frontend::extract(&path.to_string_lossy(), &Options::default()).expect("C");
        unit.kernels.into_iter().next().expect("a kernel")
    }

    #[test]
    fn a_padded_fixed_array_written_to_parameters_needs_the_parameters_to_fit() {
        let k = kernel_of(
            "#define NI 40\n#define NJ 50\n\
             void f(int ni, int nj, double C[NI + 0][NJ + 0], double x[NJ]) {\n\
               for (int i = 0; i < ni; i++)\n\
                 for (int j = 0; j < nj; j++) C[i][j] += x[j];\n}\n",
        );
        let shown: Vec<String> = relations(&k).iter().map(|r| r.to_string()).collect();
        assert_eq!(shown, vec!["ni <= ext_40", "nj <= ext_50"]);
        assert_eq!(
            region_of(&k, "C"),
            Some(vec![Some(Affine::var("ni")), Some(Affine::var("nj"))])
        );
    }

    #[test]
    fn a_triangle_and_a_stencil_reach_one_past_their_largest_index() {
        let k = kernel_of(
            "void f(int n, int lda, double A[][lda], double B[][lda]) {\n\
               for (int i = 1; i < n - 1; i++)\n\
                 for (int j = 0; j <= i; j++) B[i][j] = A[i + 1][j] + A[i][j + 1];\n}\n",
        );
        let shown: Vec<String> = relations(&k).iter().map(|r| r.to_string()).collect();
        assert_eq!(shown, vec!["n <= lda", "n - 1 <= lda"]);
    }

    /// A border test's else branch reads `src[y + 1][x + 1]` only where
    /// `y != h - 1` and `x != w - 1`: the reach stays inside the image
    /// (it was `w + 1 <= w`, a relation no size satisfies), and a
    /// conjunction's rows (`x < w - 1` around `A[0][x + 1]`) lower it likewise.
    #[test]
    fn guards_around_an_access_lower_its_reach() {
        let k = kernel_of(
            "void f(int w, int h, int ld, float src[h][w], float dst[h][w], float A[][ld]) {\n\
               for (int y = 0; y < h; y++)\n\
                 for (int x = 0; x < w; x++) {\n\
                   if (y == 0 || y == h - 1 || x == 0 || x == w - 1) dst[y][x] = src[y][x];\n\
                   else dst[y][x] = src[y + 1][x + 1] + src[y - 1][x - 1];\n\
                   if (x < w - 1 && y == 0) A[0][x + 1] = 1.0f;\n\
                 }\n}\n",
        );
        let shown: Vec<String> = relations(&k).iter().map(|r| r.to_string()).collect();
        assert_eq!(shown, vec!["w <= ld"]);
    }

    #[test]
    fn a_vla_written_whole_needs_nothing() {
        let k = kernel_of(
            "void f(int n, int m, double C[n][m]) {\n\
               for (int i = 0; i < n; i++)\n\
                 for (int j = 0; j < m; j++) C[i][j] *= 2.0;\n}\n",
        );
        assert!(relations(&k).is_empty());
        assert_eq!(region_of(&k, "C"), None);
    }

    #[test]
    fn a_pointer_strided_by_a_parameter_touches_column_zero_of_its_rows() {
        // darknet's `X[i*INCX]`: rows INCX wide, of which the loops touch
        // one; INCX must be at least 1 for the rows to hold it.
        let k = kernel_of(
            "void f(int N, float a, float *X, int INCX) {\n\
               for (int i = 0; i < N; ++i) X[i*INCX] *= a;\n}\n",
        );
        let shown: Vec<String> = relations(&k).iter().map(|r| r.to_string()).collect();
        assert_eq!(shown, vec!["1 <= INCX"]);
        assert_eq!(
            region_of(&k, "X"),
            Some(vec![None, Some(Affine::constant(1))])
        );
    }

    #[test]
    fn an_index_past_an_iterators_end_counts_only_where_the_loops_reach_it() {
        // nussinov's `table[i + 1][j]` inside `j` from `i + 1` to `n`: the
        // row is at most `n - 1` there, so `n <= ext_60`, not `n + 1`; the
        // loops' own extent is kept (no `n - 1` for `A[k][i]`, `k > i`).
        let k = kernel_of(
            "#define N 60\n\
             void f(int n, int t[N + 0][N + 0], int A[N + 0][N + 0]) {\n\
               for (int i = 0; i < n; i++)\n\
                 for (int j = i + 1; j < n; j++) t[i][j] += t[i + 1][j] + A[j][i];\n}\n",
        );
        let shown: Vec<String> = relations(&k).iter().map(|r| r.to_string()).collect();
        assert_eq!(shown, vec!["n <= ext_60"]);
        assert_eq!(
            region_of(&k, "A"),
            Some(vec![Some(Affine::var("n")), Some(Affine::var("n"))])
        );
    }

    /// A zero-padded image read under its border test: the guard on the
    /// local `c = x + j - pad` bounds the column by `w - 1`, below the
    /// loops' reach `w + pad - 1` by a size; the columns end at `w`, as
    /// the rows are declared, so there is no region and no relation.
    #[test]
    fn a_guard_bounding_a_padded_index_by_a_size_is_its_reach() {
        let k = kernel_of(
            "void f(const float *im, int h, int w, const float *g, int k, int pad, float *out) {\n\
               int oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;\n\
               for (int y = 0; y < oh; y++)\n\
                 for (int x = 0; x < ow; x++) {\n\
                   float s = 0;\n\
                   for (int i = 0; i < k; i++)\n\
                     for (int j = 0; j < k; j++) {\n\
                       int r = y + i - pad, c = x + j - pad;\n\
                       if (r < 0 || c < 0 || r >= h || c >= w) continue;\n\
                       s += g[i * k + j] * im[r * w + c];\n\
                     }\n\
                   out[y * ow + x] = s;\n\
                 }\n}\n",
        );
        assert_eq!(region_of(&k, "im"), None);
        assert!(
            relations(&k).iter().all(|r| r.array != "im"),
            "{:?}",
            relations(&k)
        );
    }
}
