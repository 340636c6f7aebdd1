//! `reverse`: a descending loop `for (j = s; j > e; j--)` becomes the
//! ascending `for j in e + 1..s + 1` with `j ↦ s + e + 1 - j` in its body:
//! the same values in the same order, now a loop that can be kept (TensIR
//! loops ascend) or sliced (its reads become `flip`ped slices).

use tenslift_frontend::ir::{self as loop_ir, Affine, Loop};

use super::{LoopSite, Restructured, Restructuring};
use crate::synth::partial::dependence::{add, difference};
use crate::synth::partial::rewrite::{iterators, rewrite_stmt, Substitute};

pub struct Reverse;

impl Restructuring for Reverse {
    fn name(&self) -> &'static str {
        "reverse"
    }

    fn summary(&self) -> &'static str {
        "a descending loop (step -1), and any inside the loop, runs ascending over the same values in the same order (`j ↦ s + e + 1 - j`)"
    }

    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured> {
        let mut names = Vec::new();
        iterators(&site.kernel.body, &mut names);
        let stmt = loop_ir::Stmt::Loop(site.l.clone());
        let (out, changed) = ascend(&stmt, &names);
        changed.then(|| Restructured::of(vec![out]))
    }
}

/// `stmt` with every step -1 loop in it ascending, and whether any was.
fn ascend(stmt: &loop_ir::Stmt, names: &[String]) -> (loop_ir::Stmt, bool) {
    match stmt {
        loop_ir::Stmt::Loop(l) => {
            let mut changed = false;
            let mut l = l.clone();
            if l.step == -1 {
                l = ascending(&l, names);
                changed = true;
            }
            let mut body = Vec::new();
            for s in &l.body {
                let (s, c) = ascend(s, names);
                changed |= c;
                body.push(s);
            }
            (loop_ir::Stmt::Loop(Loop { body, ..l }), changed)
        }
        loop_ir::Stmt::If {
            cond,
            kind,
            then_body,
            else_body,
            loc,
        } => {
            let mut changed = false;
            let mut block = |b: &[loop_ir::Stmt]| -> Vec<loop_ir::Stmt> {
                b.iter()
                    .map(|s| {
                        let (s, c) = ascend(s, names);
                        changed |= c;
                        s
                    })
                    .collect()
            };
            let (then_body, else_body) = (block(then_body), block(else_body));
            let s = loop_ir::Stmt::If {
                cond: cond.clone(),
                kind: *kind,
                then_body,
                else_body,
                loc: loc.clone(),
            };
            (s, changed)
        }
        other => (other.clone(), false),
    }
}

/// The descending `l` as an ascending loop of the same name.
fn ascending(l: &Loop, names: &[String]) -> Loop {
    // Old values s, s - 1, …, e + 1; new values e + 1, …, s.
    let mut first = l.end.clone();
    first.constant += 1;
    let mut stop = l.start.clone();
    stop.constant += 1;
    let mirror = difference(&add(&l.start, &first), &Affine::var(l.iter.clone()));
    let rewrite = Substitute {
        var: &l.iter,
        by: &mirror,
        iterators: names,
    };
    Loop {
        iter: l.iter.clone(),
        start: first,
        end: stop,
        step: 1,
        body: l.body.iter().map(|s| rewrite_stmt(s, &rewrite)).collect(),
        loc: l.loc.clone(),
    }
}
