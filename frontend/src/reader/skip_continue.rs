//! `if (cond) continue;` at the top level of a loop body: the statements
//! after it run only when `cond` is false, so the body is read as
//! `…; if (!(cond)) { rest }`. That is exact for every loop kind: in a
//! `for` the `continue` goes on to the step, which follows the body
//! either way; in a `while` it goes back to the condition, which is also
//! what the end of the rewritten body does. (A `while` whose last
//! statement steps its counter is then no longer a counted `while`, and
//! keeps its TL010.) The guard is recognised on libclang's cursors,
//! before the `continue` itself is read and refused; any other `continue`
//! or `break` keeps TL012.

use clang_sys as sys;

use super::{loc_of, Reader};
use crate::ir::{Loc, ScalarType};
use crate::libclang::Cursor;
use crate::syntax::{CExpr, CExprKind, CStmt, CType, CUnOp};

/// Whether `c` is `if (cond) continue;` or `if (cond) { continue; }`
/// without an `else`, or the same with `goto end;` where `end` labels
/// the body's last, empty statement.
fn is_continue_guard(c: &Cursor<'_>, end: Option<&str>) -> bool {
    if c.kind() != sys::CXCursor_IfStmt {
        return false;
    }
    let children = c.children();
    let [_, then_branch] = children.as_slice() else {
        return false;
    };
    match then_branch.kind() {
        sys::CXCursor_CompoundStmt => matches!(
            then_branch.children().as_slice(),
            [only] if jumps_to_end(only, end)
        ),
        _ => jumps_to_end(then_branch, end),
    }
}

/// Whether `c` is `continue;` or `goto end;`.
fn jumps_to_end(c: &Cursor<'_>, end: Option<&str>) -> bool {
    match c.kind() {
        sys::CXCursor_ContinueStmt => true,
        sys::CXCursor_GotoStmt => end.is_some_and(|label| {
            let target = c.children();
            matches!(target.as_slice(), [only] if only.spelling() == label)
        }),
        _ => false,
    }
}

/// The label of a body's last statement when it is an empty one, `L30:
/// ;` (f2c's loops end so, and skip the rest of an iteration by `goto
/// L30;`): a jump there is a `continue`.
fn end_label(children: &[Cursor<'_>]) -> Option<String> {
    let last = children.last()?;
    if last.kind() != sys::CXCursor_LabelStmt {
        return None;
    }
    match last.children().as_slice() {
        [only] if only.kind() == sys::CXCursor_NullStmt => Some(last.spelling()),
        _ => None,
    }
}

/// `!(cond)`, C's `int`.
fn negated(cond: CExpr, loc: &Loc) -> CExpr {
    let paren = CExpr {
        ty: cond.ty.clone(),
        loc: cond.loc.clone(),
        kind: CExprKind::Paren(Box::new(cond)),
    };
    CExpr {
        kind: CExprKind::Unary {
            op: CUnOp::LNot,
            arg: Box::new(paren),
        },
        ty: CType::Scalar(ScalarType::I32),
        loc: loc.clone(),
    }
}

impl Reader {
    /// Reads a loop body, turning its top-level continue guards into
    /// `if (!(cond))` around the statements that follow them.
    pub(super) fn read_loop_body(&mut self, c: &Cursor<'_>, depth: usize) -> CStmt {
        if c.kind() != sys::CXCursor_CompoundStmt {
            // A body of one statement gets no block of its own, but may
            // still set a comma temporary first.
            let read = self.read_stmt(c, depth);
            let mut stmts = crate::comma_temps::hoist(vec![read]);
            return match stmts.len() {
                1 => stmts.remove(0),
                _ => CStmt::Compound(stmts, loc_of(c)),
            };
        }
        let children = c.children();
        // An empty labelled statement at the end does nothing; a `goto`
        // to it anywhere but in a guard is still read, and refused.
        let end = end_label(&children);
        let body = &children[..children.len() - usize::from(end.is_some())];
        self.read_guarded_block(body, loc_of(c), depth, end.as_deref())
    }

    /// The statements `children` as one block (at `depth`), the first
    /// continue guard among them wrapping the rest.
    fn read_guarded_block(
        &mut self,
        children: &[Cursor<'_>],
        loc: Loc,
        depth: usize,
        end: Option<&str>,
    ) -> CStmt {
        let at = children.iter().position(|c| is_continue_guard(c, end));
        let before = &children[..at.unwrap_or(children.len())];
        let mut stmts: Vec<CStmt> = before
            .iter()
            .map(|s| self.read_stmt(s, depth + 1))
            .collect();
        if let Some(at) = at {
            let guard = &children[at];
            let guard_loc = loc_of(guard);
            // `is_continue_guard` saw two children, the first the condition.
            if let Some(cond) = guard.children().first() {
                let cond = self.read_expr(cond, depth + 1);
                // The rest counts as an `if` branch: two levels deeper.
                let rest =
                    self.read_guarded_block(&children[at + 1..], guard_loc.clone(), depth + 2, end);
                stmts.push(CStmt::If {
                    cond: negated(cond, &guard_loc),
                    then_branch: Box::new(rest),
                    else_branch: None,
                    loc: guard_loc,
                });
            }
        }
        self.finish_block(stmts, loc, false)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{dumped_body, lowered};

    #[test]
    fn a_continue_guard_wraps_the_rest_of_the_body() {
        let body = dumped_body(
            "void k(float *y, const float *x, const int *m, int n) {
               for (int i = 0; i < n; i++) {
                 y[i] = 0;
                 if (m[i] == 0) continue;
                 y[i] = 2 * x[i];
                 if (x[i] < 0) { continue; }
                 y[i] += 1;
               }
             }",
        )
        .expect("lifts");
        let lines: Vec<&str> = body.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            vec![
                "    for i in 0..n step 1",
                "      y[i] = f32(0)",
                "      if data (!(m[i] == 0):i32):i32",
                "        y[i] = (f32(2) * x[i]):f32",
                "        if data (!(x[i] < f32(0)):i32):i32",
                "          y[i] = (y[i] + f32(1)):f32",
            ]
        );
    }

    #[test]
    fn a_goto_to_the_empty_statement_ending_the_body_is_a_continue() {
        // f2c's form of a skipped iteration.
        let goto = lowered(
            "void k(float *y, const float *x, int n) {
               for (int i = 0; i < n; i++) {
                 if (x[i] <= 0) goto L30;
                 y[i] = x[i];
             L30:
                 ;
               }
             }",
        );
        let guard = lowered(
            "void k(float *y, const float *x, int n) {
               for (int i = 0; i < n; i++) {
                 if (x[i] <= 0) continue;
                 y[i] = x[i];
               }
             }",
        );
        assert!(guard.is_ok(), "{guard:?}");
        assert_eq!(goto, guard);
        // A jump from deeper in the body keeps its refusal.
        let nested = lowered(
            "void k(float *y, const float *x, int n) {
               for (int i = 0; i < n; i++) {
                 if (x[i] > 0) { y[i] = 1; goto L30; }
                 y[i] = x[i];
             L30:
                 ;
               }
             }",
        );
        assert_eq!(nested, Err(vec!["TL011"]));
    }

    #[test]
    fn other_continues_and_breaks_keep_their_refusal() {
        for source in [
            // Nested in another statement of the body.
            "void k(float *y, int n) { for (int i = 0; i < n; i++) { if (i > 2) { y[i] = 1; continue; } y[i] = 0; } }",
            // With an `else`.
            "void k(float *y, int n) { for (int i = 0; i < n; i++) { if (i > 2) continue; else y[i] = 1; } }",
            // A `break` guard.
            "void k(float *y, int n) { for (int i = 0; i < n; i++) { if (i > 2) break; y[i] = 0; } }",
        ] {
            assert_eq!(lowered(source), Err(vec!["TL012"]), "{source}");
        }
    }
}
