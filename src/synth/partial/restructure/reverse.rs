//! `reverse`: a descending loop `for (j = s; j > e; j--)` becomes the
//! ascending `for j in e + 1..s + 1` with `j ↦ s + e + 1 - j` in its body:
//! the same values in the same order, now a loop that can be kept (TensIR
//! loops ascend) or sliced (its reads become `flip`ped slices).

use tenslift_frontend::ir as loop_ir;

use super::{LoopSite, Restructured, Restructuring};
use tenslift_frontend::ir_rewrite::{ascend, iterators};

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
