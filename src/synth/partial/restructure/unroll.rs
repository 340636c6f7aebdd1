//! `unroll`: a loop over a small constant range inside the loop being
//! lifted (`for (dy = -1; dy <= 1; dy++) for (dx = -1; dx <= 1; dx++) s +=
//! src[y + dy][x + dx];`, a 3x3 window) is replaced by its iterations, in
//! order, each with the iterator at its value. The same statements run in
//! the same order; the window's sum is then a chain of assignments that
//! `substitute` turns into one expression, and the loops around it
//! vectorise as a 2-D stencil instead of keeping the window loops.
//!
//! Only loops nested in the restructured loop's body, with literal bounds
//! and at most [`MAX_UNROLLED`] iterations of assignments in all (ifs and
//! deeper loops inside them leave the loop as it is).

use tenslift_frontend::ir::{self as loop_ir, Affine, Loop};
use tenslift_frontend::ir_rewrite::{iterators, rewrite_stmt, Substitute};

use super::{LoopSite, Restructured, Restructuring};

/// Most statements one unrolled nest may become.
pub const MAX_UNROLLED: usize = 16;

pub struct Unroll;

impl Restructuring for Unroll {
    fn name(&self) -> &'static str {
        "unroll"
    }

    fn summary(&self) -> &'static str {
        "a loop with literal bounds inside the loop (a 3x3 window's `dy`, `dx`) is replaced by its iterations in order when they are at most 16 assignments"
    }

    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured> {
        let mut names = Vec::new();
        iterators(&site.kernel.body, &mut names);
        let mut changed = false;
        let body = unrolled_block(&site.l.body, &names, &mut changed);
        changed.then(|| {
            Restructured::of(vec![loop_ir::Stmt::Loop(Loop {
                body,
                ..site.l.clone()
            })])
        })
    }
}

/// `stmts` with each small constant loop among them replaced by its
/// iterations; other loops are searched inside.
fn unrolled_block(
    stmts: &[loop_ir::Stmt],
    names: &[String],
    changed: &mut bool,
) -> Vec<loop_ir::Stmt> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            loop_ir::Stmt::Loop(l) => match iterations(l, names) {
                Some(flat) => {
                    *changed = true;
                    out.extend(flat);
                }
                // A window too large as a whole stays whole: unrolling
                // only its inner loop would not make it one expression.
                None if literal(l) => out.push(s.clone()),
                None => out.push(loop_ir::Stmt::Loop(Loop {
                    body: unrolled_block(&l.body, names, changed),
                    ..l.clone()
                })),
            },
            other => out.push(other.clone()),
        }
    }
    out
}

fn literal(l: &Loop) -> bool {
    l.start.as_constant().is_some() && l.end.as_constant().is_some()
}

/// The iterations of `l` in order, when its bounds are literals and it
/// becomes at most [`MAX_UNROLLED`] assignments (loops inside it unrolled
/// first, under the same conditions).
fn iterations(l: &Loop, names: &[String]) -> Option<Vec<loop_ir::Stmt>> {
    let (start, end) = (l.start.as_constant()?, l.end.as_constant()?);
    let values: Vec<i64> = if l.step > 0 {
        (start..end).step_by(l.step as usize).collect()
    } else {
        let step = l.step.unsigned_abs() as usize;
        ((end + 1)..=start).rev().step_by(step).collect()
    };
    let mut body = Vec::new();
    for s in &l.body {
        match s {
            loop_ir::Stmt::Assign { .. } => body.push(s.clone()),
            loop_ir::Stmt::Loop(inner) => body.extend(iterations(inner, names)?),
            _ => return None,
        }
    }
    if values.len().checked_mul(body.len())? > MAX_UNROLLED {
        return None;
    }
    let mut out = Vec::new();
    for v in values {
        let at = Affine::constant(v);
        let by = Substitute {
            var: &l.iter,
            by: &at,
            iterators: names,
        };
        out.extend(body.iter().map(|s| rewrite_stmt(s, &by)));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::partial::restructure::test_support::{apply_to_first_loop, dump};

    /// A 3x3 window inside the column loop: nine assignments in the C's
    /// order, `dy` outer; the rows' loop and the columns' stay.
    #[test]
    fn a_three_by_three_window_is_unrolled_in_order() {
        let r = apply_to_first_loop(
            &Unroll,
            "void f(int h, int w, const float s[h][w], float d[h][w]) {
               for (int y = 1; y < h - 1; y++)
                 for (int x = 1; x < w - 1; x++) {
                   float t = 0.0f;
                   for (int dy = -1; dy <= 1; dy++)
                     for (int dx = -1; dx <= 1; dx++) t += s[y + dy][x + dx];
                   d[y][x] = t;
                 }
             }",
        )
        .expect("unrolls");
        insta::assert_snapshot!(dump(&r.stmts));
    }

    /// A window of 5x5 (25 assignments) or one with a branch inside stays.
    #[test]
    fn large_or_branching_windows_stay_loops() {
        for (window, body) in [
            ("-2; dx <= 2", "t += s[y][x + dx];"),
            ("-1; dx <= 1", "if (s[y][x + dx] > t) t = s[y][x + dx];"),
        ] {
            let source = format!(
                "void f(int h, int w, const float s[h][w], float d[h][w]) {{
                   for (int y = 2; y < h - 2; y++)
                     for (int x = 2; x < w - 2; x++) {{
                       float t = 0.0f;
                       for (int dy = -2; dy <= 2; dy++)
                         for (int dx = {window}; dx++) {body}
                       d[y][x] = t;
                     }}
                 }}"
            );
            assert!(apply_to_first_loop(&Unroll, &source).is_none(), "{window}");
        }
    }
}
