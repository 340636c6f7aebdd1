//! `guard-split` (index-set splitting at guards): a loop whose body
//! branches on where its iterator is (`if (i == 0) … else if (i == n - 1)
//! … else …`: the ends of a signal or of an image row handled apart, as
//! DSP and image code does) is cut at the points its guards name, so that
//! on each piece every such guard is decided: `y[0] = …`, `for i in
//! 1..n-1 { y[i] = … }`, `y[n-1] = …` (a one-iteration piece becomes its
//! body at that point). The pieces run the loop's iterations in the C's
//! order, so the cut is exact whenever the points are in order; where the
//! loops around do not prove that (`1 <= n - 1` for the two ends above),
//! the program requires it on entry ([`Restructured::requires`]: the
//! emitted code checks it, so a caller passing `n = 1` gets an error that
//! names the relation, never a wrong answer).
//!
//! The points come from comparisons of the iterator (coefficient ±1) with
//! values the loop does not change, in conditions built with `&&`, `||`,
//! `!`. Each must have the symbols of the loop's start (`0`, `1`) or of its
//! end (`n - 1`): one relation then orders them all. A guard comparing the
//! iterator with anything else (another size, an inner iterator, a scaled
//! iterator) leaves the loop to the other restructurings.

use tenslift_frontend::ir::{self as loop_ir, Affine, BinaryOp, Expr, ExprKind, IfKind, Loop};
use tenslift_frontend::ir_rewrite::{iterators, rewrite_stmt, scale, Substitute};

use super::{LoopSite, Restructured, Restructuring};
use crate::synth::partial::bounds::{affine_of, constraints_of, decide, Facts};
use crate::synth::partial::dependence::difference;

pub struct GuardSplit;

impl Restructuring for GuardSplit {
    fn name(&self) -> &'static str {
        "guard-split"
    }

    fn summary(&self) -> &'static str {
        "a loop whose guards test where its iterator is (`i == 0`, `i == n - 1`: a signal's ends) is cut at those points, each piece with its guards decided; the pieces' order is required on entry where the loops around do not prove it"
    }

    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured> {
        // The region relations below cost a walk of the kernel: only for
        // a loop with something to cut.
        if !has_points(site.l) {
            return None;
        }
        let mut facts = Facts::of_loops(site.scope.iter());
        super::guards::required(site.kernel)
            .into_iter()
            .for_each(|r| facts.push(r));
        // Facts that contradict each other (a region relation no size
        // satisfies) would decide every guard both ways.
        if facts.excludes(&[]) {
            return None;
        }
        let mut names = Vec::new();
        iterators(&site.kernel.body, &mut names);
        let (stmts, required) = split_in(site.l, &facts, &names)?;
        Some(Restructured {
            stmts,
            locals: Vec::new(),
            requires: required.into_iter().collect(),
        })
    }
}

/// Whether `l`, or a loop [`split_in`] would look at inside it, tests
/// where its iterator is.
fn has_points(l: &Loop) -> bool {
    if l.step != 1 {
        return false;
    }
    let mut inner = Vec::new();
    iterators(&l.body, &mut inner);
    let mut points = Vec::new();
    if guard_points(&l.body, &l.iter, &inner, &mut points).is_none() {
        return false;
    }
    !points.is_empty()
        || l.body
            .iter()
            .any(|s| matches!(s, loop_ir::Stmt::Loop(child) if has_points(child)))
}

/// `l` cut at its guards' points, or else the first loop of its body
/// that has such guards (a border test on the column inside the loop over
/// rows), with the relation the cut requires.
fn split_in(
    l: &Loop,
    facts: &Facts,
    names: &[String],
) -> Option<(Vec<loop_ir::Stmt>, Option<Relation>)> {
    if l.step != 1 {
        return None;
    }
    let mut inner = Vec::new();
    iterators(&l.body, &mut inner);
    let mut points = Vec::new();
    guard_points(&l.body, &l.iter, &inner, &mut points)?;
    if let Some(cut) = Cut::of(l, points, facts) {
        // The program can require a relation between sizes on entry, not
        // one that changes with the iterations of a loop around.
        if let Some((a, b)) = &cut.required {
            let iterator = |v: &String| names.contains(v);
            if a.terms.keys().chain(b.terms.keys()).any(iterator) {
                return None;
            }
        }
        let stmts = cut.pieces(l, facts, names)?;
        return Some((stmts, cut.required));
    }
    let mut within = facts.clone();
    within.push(difference(&Affine::var(l.iter.clone()), &l.start));
    let mut last = difference(&l.end, &Affine::var(l.iter.clone()));
    last.constant -= 1;
    within.push(last);
    l.body.iter().enumerate().find_map(|(k, s)| {
        let loop_ir::Stmt::Loop(child) = s else {
            return None;
        };
        let (stmts, required) = split_in(child, &within, names)?;
        let mut body = l.body[..k].to_vec();
        body.extend(stmts);
        body.extend(l.body[k + 1..].iter().cloned());
        Some((
            vec![loop_ir::Stmt::Loop(Loop { body, ..l.clone() })],
            required,
        ))
    })
}

/// The points where the guards of `stmts` that test `iter` change value
/// (`i == e` gives `e` and `e + 1`, `i < e` gives `e`); `None` when one
/// such guard is not a comparison of `iter` this cut can decide.
fn guard_points(
    stmts: &[loop_ir::Stmt],
    iter: &str,
    inner: &[String],
    out: &mut Vec<Affine>,
) -> Option<()> {
    for s in stmts {
        match s {
            loop_ir::Stmt::Loop(l) => guard_points(&l.body, iter, inner, out)?,
            loop_ir::Stmt::If {
                cond,
                kind,
                then_body,
                else_body,
                ..
            } => {
                if *kind == IfKind::Guard && cond.mentions(iter) {
                    for row in atom_rows(cond)? {
                        out.extend(point_of(&row, iter, inner)?);
                    }
                }
                guard_points(then_body, iter, inner, out)?;
                guard_points(else_body, iter, inner, out)?;
            }
            loop_ir::Stmt::Assign { value, .. } | loop_ir::Stmt::Return { value, .. } => {
                select_points(value, iter, inner, out)?;
            }
        }
    }
    Some(())
}

/// The points of the selects in `e` that test `iter` (`i == 0 ? x[0] :
/// x[i] - x[i - 1]`); a select on data (`x[i] > 0 ? …`) is no test.
fn select_points(e: &Expr, iter: &str, inner: &[String], out: &mut Vec<Affine>) -> Option<()> {
    match &e.kind {
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            if let Some(rows) = index_test(cond, iter) {
                for row in rows {
                    out.extend(point_of(&row, iter, inner)?);
                }
            }
            select_points(then_value, iter, inner, out)?;
            select_points(else_value, iter, inner, out)
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg } => {
            select_points(arg, iter, inner, out)
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            select_points(lhs, iter, inner, out)?;
            select_points(rhs, iter, inner, out)
        }
        ExprKind::Call { args, .. } => args
            .iter()
            .try_for_each(|a| select_points(a, iter, inner, out)),
        _ => Some(()),
    }
}

/// The rows of a select's condition that tests where `iter` is: affine
/// comparisons only, one of them of `iter`.
fn index_test(cond: &Expr, iter: &str) -> Option<Vec<Affine>> {
    let rows = atom_rows(cond)?;
    rows.iter()
        .any(|r| r.terms.contains_key(iter))
        .then_some(rows)
}

/// The `a >= 0` rows of every comparison in `cond`, through `&&`, `||`
/// and `!` (an affine value alone is its comparison with 0).
fn atom_rows(cond: &Expr) -> Option<Vec<Affine>> {
    match &cond.kind {
        ExprKind::Binary {
            op: BinaryOp::And | BinaryOp::Or,
            lhs,
            rhs,
        } => {
            let mut rows = atom_rows(lhs)?;
            rows.extend(atom_rows(rhs)?);
            Some(rows)
        }
        ExprKind::Unary {
            op: loop_ir::UnaryOp::Not,
            arg,
        } => atom_rows(arg),
        _ => constraints_of(&as_comparison(cond)?),
    }
}

/// `cond` as a comparison `constraints_of` reads: `a != b` as `a == b`
/// (its negation, which has the same points), an affine value `e` as
/// `e == 0`; `None` for anything else that is not a comparison.
fn as_comparison(cond: &Expr) -> Option<Expr> {
    let eq = |lhs: &Expr, rhs: Expr| Expr {
        ty: cond.ty,
        kind: ExprKind::Binary {
            op: BinaryOp::Eq,
            lhs: Box::new(lhs.clone()),
            rhs: Box::new(rhs),
        },
    };
    match &cond.kind {
        ExprKind::Binary {
            op: BinaryOp::Ne,
            lhs,
            rhs,
        } => Some(eq(lhs, (**rhs).clone())),
        ExprKind::Binary { op, .. } if op.is_comparison() => Some(cond.clone()),
        _ => {
            affine_of(cond)?;
            let zero = Expr {
                ty: cond.ty,
                kind: ExprKind::IntLit { value: 0 },
            };
            Some(eq(cond, zero))
        }
    }
}

/// Where the row `c*iter + rest >= 0` starts or stops holding along
/// `iter`: `-rest` for `c = 1` (`iter >= -rest`), `rest + 1` for `c = -1`
/// (`iter < rest + 1`); nothing for a row without `iter`, `None` for one
/// this cut cannot use (another coefficient, an iterator of an inner loop).
fn point_of(row: &Affine, iter: &str, inner: &[String]) -> Option<Option<Affine>> {
    let Some(&c) = row.terms.get(iter) else {
        return Some(None);
    };
    if inner.iter().any(|v| row.terms.contains_key(v)) {
        return None;
    }
    let mut rest = row.clone();
    rest.terms.remove(iter);
    match c {
        1 => Some(Some(scale(&rest, -1))),
        -1 => {
            rest.constant += 1;
            Some(Some(rest))
        }
        _ => None,
    }
}

/// `a <= b` between sizes.
type Relation = (Affine, Affine);

/// The loop's range cut at the guards' points: `bounds` runs from the
/// loop's start to its end, in order when `required` (`a <= b`) holds.
struct Cut {
    bounds: Vec<Affine>,
    required: Option<Relation>,
}

impl Cut {
    /// The points strictly inside `l`'s range, those with the start's
    /// symbols first, then those with the end's, each group by its
    /// constant; `None` when no point cuts the range or one has other
    /// symbols.
    fn of(l: &Loop, points: Vec<Affine>, facts: &Facts) -> Option<Cut> {
        let (lo, hi) = (&l.start, &l.end);
        let one_group = lo.terms == hi.terms;
        let (mut low, mut high) = (Vec::new(), Vec::new());
        for p in points {
            if p.terms == lo.terms && p.constant > lo.constant {
                if !one_group || p.constant < hi.constant {
                    low.push(p);
                }
            } else if p.terms == hi.terms && p.constant < hi.constant {
                if !one_group {
                    high.push(p);
                }
            } else if p.terms != lo.terms && p.terms != hi.terms {
                return None;
            }
        }
        if low.is_empty() && high.is_empty() {
            return None;
        }
        for group in [&mut low, &mut high] {
            group.sort_by_key(|p| p.constant);
            group.dedup();
        }
        let last_low = low.last().unwrap_or(lo).clone();
        let first_high = high.first().unwrap_or(hi).clone();
        let ordered = one_group || facts.implies(&difference(&first_high, &last_low));
        let mut bounds = vec![lo.clone()];
        bounds.extend(low);
        bounds.extend(high);
        bounds.push(hi.clone());
        Some(Cut {
            bounds,
            required: (!ordered).then_some((last_low, first_high)),
        })
    }

    /// One loop per range between consecutive bounds (the body at the
    /// point for a range of one), each with the guards on the iterator
    /// replaced by the branch they take there.
    fn pieces(&self, l: &Loop, facts: &Facts, names: &[String]) -> Option<Vec<loop_ir::Stmt>> {
        let mut ordered = facts.clone();
        for w in self.bounds.windows(2) {
            ordered.push(difference(&w[1], &w[0]));
        }
        let var = Affine::var(l.iter.clone());
        let mut out = Vec::new();
        for w in self.bounds.windows(2) {
            let (start, end) = (&w[0], &w[1]);
            let mut inside = ordered.clone();
            inside.push(difference(&var, start));
            let mut last = difference(end, &var);
            last.constant -= 1;
            inside.push(last);
            let body = decided(&l.body, &l.iter, &inside)?;
            if difference(end, start).as_constant() == Some(1) {
                let at = Substitute {
                    var: &l.iter,
                    by: start,
                    iterators: names,
                };
                out.extend(body.iter().map(|s| rewrite_stmt(s, &at)));
            } else {
                out.push(loop_ir::Stmt::Loop(Loop {
                    start: start.clone(),
                    end: end.clone(),
                    body,
                    ..l.clone()
                }));
            }
        }
        Some(out)
    }
}

/// `stmts` with every guard on `iter` replaced by the branch it takes
/// where `facts` hold (a guard also testing something else keeps that
/// test); `None` when the facts leave a test of `iter` undecided.
fn decided(stmts: &[loop_ir::Stmt], iter: &str, facts: &Facts) -> Option<Vec<loop_ir::Stmt>> {
    let mut out = Vec::new();
    for s in stmts {
        match s {
            loop_ir::Stmt::If {
                cond,
                kind,
                then_body,
                else_body,
                loc,
            } => {
                let test = match kind {
                    IfKind::Guard if cond.mentions(iter) => simplified(cond, iter, facts)?,
                    _ => Truth::Residual(cond.clone()),
                };
                match test {
                    Truth::Known(taken) => {
                        let branch = if taken { then_body } else { else_body };
                        out.extend(decided(branch, iter, facts)?);
                    }
                    Truth::Residual(cond) => out.push(loop_ir::Stmt::If {
                        cond,
                        kind: *kind,
                        then_body: decided(then_body, iter, facts)?,
                        else_body: decided(else_body, iter, facts)?,
                        loc: loc.clone(),
                    }),
                }
            }
            loop_ir::Stmt::Loop(inner) => out.push(loop_ir::Stmt::Loop(Loop {
                body: decided(&inner.body, iter, facts)?,
                ..inner.clone()
            })),
            loop_ir::Stmt::Assign { target, value, loc } => out.push(loop_ir::Stmt::Assign {
                target: target.clone(),
                value: decided_value(value, iter, facts)?,
                loc: loc.clone(),
            }),
            loop_ir::Stmt::Return { value, loc } => out.push(loop_ir::Stmt::Return {
                value: decided_value(value, iter, facts)?,
                loc: loc.clone(),
            }),
        }
    }
    Some(out)
}

/// `e` with every select that tests `iter` replaced by the value it takes
/// where `facts` hold (or its condition by what is left of it).
fn decided_value(e: &Expr, iter: &str, facts: &Facts) -> Option<Expr> {
    let sub = |x: &Expr| decided_value(x, iter, facts).map(Box::new);
    let kind = match &e.kind {
        ExprKind::Select {
            cond,
            then_value,
            else_value,
        } => {
            let test = match index_test(cond, iter) {
                Some(_) => simplified(cond, iter, facts)?,
                None => Truth::Residual((**cond).clone()),
            };
            match test {
                Truth::Known(true) => return decided_value(then_value, iter, facts),
                Truth::Known(false) => return decided_value(else_value, iter, facts),
                Truth::Residual(cond) => ExprKind::Select {
                    cond: Box::new(cond),
                    then_value: sub(then_value)?,
                    else_value: sub(else_value)?,
                },
            }
        }
        ExprKind::Unary { op, arg } => ExprKind::Unary {
            op: *op,
            arg: sub(arg)?,
        },
        ExprKind::Cast { arg } => ExprKind::Cast { arg: sub(arg)? },
        ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
            op: *op,
            lhs: sub(lhs)?,
            rhs: sub(rhs)?,
        },
        ExprKind::Call { func, args } => ExprKind::Call {
            func: *func,
            args: args
                .iter()
                .map(|a| decided_value(a, iter, facts))
                .collect::<Option<_>>()?,
        },
        other => other.clone(),
    };
    Some(Expr { ty: e.ty, kind })
}

/// A condition on a piece: decided, or what is left of it once its tests
/// of the iterator are (`x == 0 || x == w - 1` of `y == 0 || x == 0 || …`
/// between the first and the last row).
enum Truth {
    Known(bool),
    Residual(Expr),
}

/// `cond` where `facts` hold, through `&&`, `||` and `!`: every test of
/// `iter` decided (`None` when one is not), the others kept.
fn simplified(cond: &Expr, iter: &str, facts: &Facts) -> Option<Truth> {
    let negated = |t: Truth| match t {
        Truth::Known(b) => Truth::Known(!b),
        Truth::Residual(e) => Truth::Residual(Expr {
            ty: cond.ty,
            kind: ExprKind::Unary {
                op: loop_ir::UnaryOp::Not,
                arg: Box::new(e),
            },
        }),
    };
    match &cond.kind {
        ExprKind::Binary {
            op: op @ (BinaryOp::And | BinaryOp::Or),
            lhs,
            rhs,
        } => {
            let (a, b) = (simplified(lhs, iter, facts)?, simplified(rhs, iter, facts)?);
            // `&&` is false when either side is, `||` true when either is;
            // the other value of a side leaves the other side.
            let absorbing = *op == BinaryOp::Or;
            Some(match (a, b) {
                (Truth::Known(t), _) | (_, Truth::Known(t)) if t == absorbing => Truth::Known(t),
                (Truth::Known(_), other) | (other, Truth::Known(_)) => other,
                (Truth::Residual(a), Truth::Residual(b)) => Truth::Residual(Expr {
                    ty: cond.ty,
                    kind: ExprKind::Binary {
                        op: *op,
                        lhs: Box::new(a),
                        rhs: Box::new(b),
                    },
                }),
            })
        }
        ExprKind::Unary {
            op: loop_ir::UnaryOp::Not,
            arg,
        } => simplified(arg, iter, facts).map(negated),
        _ if !cond.mentions(iter) => Some(Truth::Residual(cond.clone())),
        ExprKind::Binary { op, .. } if op.is_comparison() && *op != BinaryOp::Ne => {
            decide(facts, cond).map(Truth::Known)
        }
        // `a != b` and a bare value `e` (`e != 0`): the negation of the
        // equality `as_comparison` gives.
        _ => decide(facts, &as_comparison(cond)?).map(|t| Truth::Known(!t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::partial::restructure::test_support::{apply_to_first_loop, dump};

    fn split(source: &str) -> Option<Restructured> {
        apply_to_first_loop(&GuardSplit, source)
    }

    /// The two ends handled apart: three pieces, the middle one a loop,
    /// in order only when `1 <= n - 1`.
    #[test]
    fn both_ends_peeled() {
        let r = split(
            "void f(const float *x, float *y, int n) {
               for (int i = 0; i < n; i++) {
                 if (i == 0) y[i] = x[0];
                 else if (i == n - 1) y[i] = x[n - 1];
                 else y[i] = x[i - 1] + x[i + 1];
               }
             }",
        )
        .expect("splits");
        insta::assert_snapshot!(dump(&r.stmts));
        let (a, b) = &r.requires[0];
        assert_eq!((a.to_string(), b.to_string()), ("1".into(), "n - 1".into()));
    }

    /// A constant range needs no requirement; `i != 2` and `!(i < 1)`
    /// decide like their positive forms.
    #[test]
    fn constant_range_negated_guards() {
        let r = split(
            "void f(float *y) {
               for (int i = 0; i < 8; i++) {
                 if (!(i < 1) && i != 2) y[i] = 1.0f; else y[i] = 2.0f;
               }
             }",
        )
        .expect("splits");
        assert!(r.requires.is_empty());
        insta::assert_snapshot!(dump(&r.stmts));
    }

    /// A guard comparing the iterator with a second size (`i < m` in a
    /// loop to `n`) cannot be ordered: the loop is left alone.
    #[test]
    fn unrelated_size_left_alone() {
        assert!(split(
            "void f(float *y, int n, int m) {
               for (int i = 0; i < n; i++) { if (i < m) y[i] = 1.0f; else y[i] = 0.0f; }
             }",
        )
        .is_none());
    }

    /// A guard on data, or one scaling the iterator, is not a cut point.
    #[test]
    fn scaled_iterator_left_alone() {
        assert!(split(
            "void f(float *y, int n) {
               for (int i = 0; i < n; i++) { if (2 * i < n) y[i] = 1.0f; }
             }",
        )
        .is_none());
    }
}
