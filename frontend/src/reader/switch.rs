//! A `switch` as the `if` chain it is.
//!
//! ```c
//! switch (a) { case LOGISTIC: return logistic(x); case RELU: case RAMP: y = r(x); break;
//!              default: y = x; }
//! ```
//!
//! reads as `if (a == LOGISTIC) { return logistic(x); } else if (a == RELU
//! || a == RAMP) { y = r(x); } else { y = x; }`. Exact when each case's
//! statements end in `break` or `return` (stacked labels share the next
//! case's statements), no other `break` leaves the switch, the default (if
//! any) comes last, and the switched value has no side effects (the chain
//! evaluates it once per comparison). Anything else is refused as before
//! (TL013), with the reason.

use clang_sys as sys;

use super::{loc_of, Reader};
use crate::diagnostics as codes;
use crate::ir::{Loc, ScalarType};
use crate::libclang::Cursor;
use crate::syntax::*;

/// One case group: its labels (`None`: the default) and statements.
struct Group {
    labels: Vec<CExpr>,
    default: bool,
    stmts: Vec<CStmt>,
    ends: bool,
}

impl Reader {
    /// The switch at `c` as an `if` chain, or refused with why.
    pub(super) fn read_switch(&mut self, c: &Cursor<'_>, depth: usize) -> CStmt {
        let loc = loc_of(c);
        match self.switch_chain(c, depth) {
            Ok(chain) => chain,
            Err(why) => {
                self.reject(
                    codes::UNSUPPORTED_STATEMENT,
                    &loc,
                    format!("unsupported statement (SwitchStmt): {why}"),
                );
                CStmt::Rejected(loc)
            }
        }
    }

    fn switch_chain(&mut self, c: &Cursor<'_>, depth: usize) -> Result<CStmt, String> {
        let loc = loc_of(c);
        let children = c.children();
        let (Some(value), Some(body)) = (children.first(), children.last()) else {
            return Err("malformed".into());
        };
        if children.len() != 2 || body.kind() != sys::CXCursor_CompoundStmt {
            return Err("the cases are not one block".into());
        }
        let value = self.read_expr(value, depth + 1);
        if !value.is_pure() {
            return Err("the switched value has side effects".into());
        }
        let groups = self.case_groups(body, depth)?;
        chain(&value, groups, loc)
    }

    /// The cases of `body` in order, stacked labels merged.
    fn case_groups(&mut self, body: &Cursor<'_>, depth: usize) -> Result<Vec<Group>, String> {
        let mut groups: Vec<Group> = Vec::new();
        for item in body.children() {
            let mut cur = item;
            let mut labelled = false;
            // `case A: case B: stmt` nests: each label holds the next.
            loop {
                let kids = cur.children();
                match cur.kind() {
                    sys::CXCursor_CaseStmt if kids.len() == 2 => {
                        open(&mut groups, labelled);
                        let label = self.read_expr(&kids[0], depth + 1);
                        last(&mut groups).labels.push(label);
                        labelled = true;
                        cur = kids[1];
                    }
                    sys::CXCursor_DefaultStmt if kids.len() == 1 => {
                        open(&mut groups, labelled);
                        last(&mut groups).default = true;
                        labelled = true;
                        cur = kids[0];
                    }
                    sys::CXCursor_CaseStmt | sys::CXCursor_DefaultStmt => {
                        return Err("a case of an unexpected shape".into())
                    }
                    _ => break,
                }
            }
            let Some(group) = groups.last_mut() else {
                return Err("a statement before the first case".into());
            };
            if group.ends {
                // Unreachable code after a `break` or `return`.
                continue;
            }
            if cur.kind() == sys::CXCursor_BreakStmt {
                group.ends = true;
                continue;
            }
            let stmt = self.read_stmt(&cur, depth + 2);
            if breaks(&cur) {
                return Err("a `break` inside a case's statements".into());
            }
            group.ends = matches!(stmt, CStmt::Return(..));
            group.stmts.push(stmt);
        }
        Ok(groups)
    }
}

/// Starts a new group unless the label stacks on the one just opened.
fn open(groups: &mut Vec<Group>, stacked: bool) {
    if !stacked {
        groups.push(Group {
            labels: Vec::new(),
            default: false,
            stmts: Vec::new(),
            ends: false,
        });
    }
}

fn last(groups: &mut [Group]) -> &mut Group {
    let n = groups.len();
    &mut groups[n - 1]
}

/// Whether a `break` at `c` (not inside a nested loop or switch) would
/// leave the switch.
fn breaks(c: &Cursor<'_>) -> bool {
    match c.kind() {
        sys::CXCursor_BreakStmt => true,
        sys::CXCursor_ForStmt
        | sys::CXCursor_WhileStmt
        | sys::CXCursor_DoStmt
        | sys::CXCursor_SwitchStmt => false,
        _ => c.children().iter().any(breaks),
    }
}

/// The `if` chain of `groups` over `value`.
fn chain(value: &CExpr, groups: Vec<Group>, loc: Loc) -> Result<CStmt, String> {
    let count = groups.len();
    let mut rest: Option<Box<CStmt>> = None;
    for (k, g) in groups.into_iter().enumerate().rev() {
        let falls_into_next = !g.ends && k + 1 < count;
        if falls_into_next && !g.stmts.is_empty() {
            return Err("a case falls through into the next".into());
        }
        if g.default && k + 1 < count {
            return Err("`default` is not the last case".into());
        }
        let body = Box::new(CStmt::Compound(g.stmts, loc.clone()));
        if g.default {
            if !g.labels.is_empty() {
                return Err("`default` shares its statements with a case".into());
            }
            rest = Some(body);
            continue;
        }
        let cond = g
            .labels
            .into_iter()
            .map(|label| binary(CBinOp::Eq, value.clone(), label, &loc))
            .reduce(|a, b| binary(CBinOp::LOr, a, b, &loc))
            .ok_or("a case without a label")?;
        rest = Some(Box::new(CStmt::If {
            cond,
            then_branch: body,
            else_branch: rest,
            loc: loc.clone(),
        }));
    }
    Ok(rest.map_or(CStmt::Null(loc), |s| *s))
}

fn binary(op: CBinOp, lhs: CExpr, rhs: CExpr, loc: &Loc) -> CExpr {
    CExpr {
        kind: CExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        ty: CType::Scalar(ScalarType::I32),
        loc: loc.clone(),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_util::{diagnostics, lowered};

    #[test]
    fn cases_with_breaks_stacked_labels_and_a_default_are_an_if_chain() {
        let body = lowered(
            "void f(float *x, int n, int mode) {\n\
             for (int i = 0; i < n; i++) {\n\
               switch (mode) {\n\
               case 0: x[i] = 0; break;\n\
               case 1: case 2: x[i] = 2 * x[i]; break;\n\
               default: x[i] = -x[i];\n\
               }\n\
             }\n}\n",
        )
        .expect("lowers");
        assert!(
            body.contains("mode == 0") || body.contains("(mode == 0)"),
            "{body}"
        );
        assert!(body.contains("||") || body.contains("mode == 2"), "{body}");
    }

    #[test]
    fn a_case_falling_into_the_next_is_refused_with_the_reason() {
        let text = diagnostics(
            "void f(float *x, int n, int mode) {\n\
             for (int i = 0; i < n; i++) {\n\
               switch (mode) { case 0: x[i] = 1; case 1: x[i] = 2 * x[i]; break; }\n\
             }\n}\n",
        );
        assert!(text.contains("TL013"), "{text}");
        assert!(text.contains("falls through into the next"), "{text}");
    }
}
