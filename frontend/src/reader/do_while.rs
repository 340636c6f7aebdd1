//! `do { … } while (cond);`, the loop DSP libraries walk matrices with
//! (`row = nRows; do { …; row--; } while (row > 0U);`, or `} while
//! (--row > 0U);`). It runs its body once before testing, a `while` tests
//! first: the two agree whenever `cond` holds on entry, and the loop is
//! then read as the `while` it equals (a pre-decrement in the condition
//! moved to the end of the body, `do B while (--x > 0)` being `while (x >
//! 0) { B; x--; }` from any `x >= 1`), through the same count-down and
//! counted-`while` readings as a written `while`. That `cond` holds on
//! entry is recorded as a stated precondition of the function
//! (`CFunction::entered`): where it does not, the C runs the body once on
//! an empty range and, for an unsigned counter, wraps it and runs on.
//! A condition with any other side effect keeps the refusal.

use super::{counted_while, loc_of, Reader};
use crate::ir::Loc;
use crate::libclang::Cursor;
use crate::syntax::{CExpr, CExprKind, CStmt, CUnOp};

impl Reader {
    /// The `do` loop `c` as the `while` it equals when its condition holds
    /// on entry; `None` (nothing recorded) when it is not one this reads.
    pub(super) fn read_do_while(&mut self, c: &Cursor<'_>, depth: usize) -> Option<CStmt> {
        let children = c.children();
        let [body, cond_cursor] = children.as_slice() else {
            return None;
        };
        let loc = loc_of(c);
        let body = self.read_loop_body(body, depth + 2);
        let cond = self.read_expr(cond_cursor, depth + 1);
        let moved = !cond.is_pure();
        let (cond, body) = pre_decrement_moved(cond, body, &loc)?;
        let read = crate::decrement_while::count_down(&cond, &body, &loc)
            .or_else(|| counted_while(cond, body, &loc))?;
        // The precondition is the `while`'s test: `k > 0U` for `--k > 0U`.
        let mut tokens = cond_cursor.tokens();
        if let Some(at) = tokens.iter().position(|t| t == "--").filter(|_| moved) {
            tokens.remove(at);
        }
        let text = tokens.join(" ");
        self.entered.push((text, loc));
        Some(read)
    }
}

/// `(cond, body)` with a leading `--x` of the condition moved to a last
/// `x--;` of the body; `None` when the condition has another side effect.
fn pre_decrement_moved(cond: CExpr, body: CStmt, loc: &Loc) -> Option<(CExpr, CStmt)> {
    if cond.is_pure() {
        return Some((cond, body));
    }
    let mut decremented = None;
    let cond = take_pre_decrement(&cond, &mut decremented);
    let counter = decremented?;
    if !cond.is_pure() {
        return None;
    }
    let step = CStmt::Expr(CExpr {
        kind: CExprKind::Unary {
            op: CUnOp::PostDec,
            arg: Box::new(counter.clone()),
        },
        ty: counter.ty.clone(),
        loc: loc.clone(),
    });
    let body = match body {
        CStmt::Compound(mut items, at) => {
            items.push(step);
            CStmt::Compound(items, at)
        }
        other => CStmt::Compound(vec![other, step], loc.clone()),
    };
    Some((cond, body))
}

/// `e` with its first `--x` (`x` a plain variable) replaced by `x`,
/// recording `x`.
fn take_pre_decrement(e: &CExpr, found: &mut Option<CExpr>) -> CExpr {
    if found.is_none() {
        if let CExprKind::Unary {
            op: CUnOp::PreDec,
            arg,
        } = &e.kind
        {
            if matches!(arg.kind, CExprKind::Ref(_)) {
                *found = Some((**arg).clone());
                return (**arg).clone();
            }
        }
    }
    let mut out = e.clone();
    out.map_children(&mut |c| take_pre_decrement(c, found));
    out
}

#[cfg(test)]
mod tests {
    use crate::test_util::{extracted, lowered};
    use crate::Options;

    #[test]
    fn a_count_down_do_while_is_a_loop_with_its_entry_test_stated() {
        let source = "void f(float *x, unsigned n, float a) {
                unsigned row = n, i = 0U;
                do { x[i] = x[i] * a; i++; row--; } while (row > 0U);
            }";
        let body = lowered(source).expect("lowers");
        assert!(body.contains("x[n - row] = (x[n - row] * a):f32"), "{body}");
        let tu = extracted(source, &Options::default()).expect("extracts");
        let stated = tu.kernels[0].preconditions().join("\n");
        assert!(
            stated.contains("`row > 0U` holds when the `do … while`"),
            "{stated}"
        );
    }

    #[test]
    fn a_pre_decrement_in_the_test_steps_the_counter_last() {
        let source = "void f(float *x, unsigned n) {
                unsigned k = n;
                do { *x = 0.0f; x++; } while (--k > 0U);
            }";
        let body = lowered(source).expect("lowers");
        assert!(body.starts_with("for "), "{body}");
        let tu = extracted(source, &Options::default()).expect("extracts");
        let stated = tu.kernels[0].preconditions().join("\n");
        assert!(stated.contains("`k > 0U` holds"), "{stated}");
    }

    /// A test with another side effect is not a `while` in disguise.
    #[test]
    fn a_test_that_writes_memory_keeps_the_refusal() {
        let source = "void f(float *x, int *p, int n) {
                int k = n;
                do { x[k] = 0.0f; } while ((*p)++ < k);
            }";
        assert!(lowered(source).is_err());
    }

    /// The counter stepped before statements that read it (`col--;
    /// pIn2 = pInB + (n - col);`): the step moves last and the reads see
    /// `col - 1`, the value C gives them.
    #[test]
    fn a_step_before_later_reads_moves_last() {
        let source = "void f(float *y, const float *x, unsigned n) {
                unsigned col = n;
                do { col--; y[col] = 2.0f * x[col]; } while (col > 0U);
            }";
        let body = lowered(source).expect("lowers");
        assert_eq!(
            body,
            "for col in n..0 step -1 y[col - 1] = (2.0f * x[col - 1]):f32"
        );
    }

    #[test]
    fn a_counter_written_after_its_step_keeps_the_refusal() {
        let source = "void f(float *y, unsigned n) {
                unsigned col = n;
                do { col--; y[col] = 0.0f; col = col - 1U; col++; } while (col > 0U);
            }";
        assert!(lowered(source).is_err());
    }
}
