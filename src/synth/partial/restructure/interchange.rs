//! `interchange`: `for i { for j { S } }` becomes `for j { for i { S } }`
//! when no two iterations of `i` touch one element (so their order
//! relative to `j` is free) and `j`, whose bounds do not use `i`, carries a
//! dependency. The carried loop is then the one kept and `i` is
//! vectorised: a scan along a row (deriche, adi's sweeps) runs over all
//! rows at once.

use tenslift_frontend::ir::{self as loop_ir, Loop};

use super::{nest_of, LoopSite, Restructured, Restructuring};
use crate::synth::partial::dependence::independent;

pub struct Interchange;

impl Restructuring for Interchange {
    fn name(&self) -> &'static str {
        "interchange"
    }

    fn summary(&self) -> &'static str {
        "a loop with independent iterations around one loop that carries a dependency moves inside it (scans keep the carried loop, the other vectorises)"
    }

    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured> {
        let l = site.l;
        let [loop_ir::Stmt::Loop(m)] = l.body.as_slice() else {
            return None;
        };
        let uses_outer = |a: &tenslift_frontend::ir::Affine| a.terms.contains_key(&l.iter);
        if m.step != 1 || l.step != 1 || uses_outer(&m.start) || uses_outer(&m.end) {
            return None;
        }
        if !independent(l, site.scope) {
            return None;
        }
        let mut inner_scope = site.scope.clone();
        inner_scope.push(nest_of(l));
        if independent(m, &inner_scope) {
            return None;
        }
        let inner = Loop {
            body: m.body.clone(),
            ..l.clone()
        };
        let outer = Loop {
            body: vec![loop_ir::Stmt::Loop(inner)],
            ..m.clone()
        };
        Some(Restructured::of(vec![loop_ir::Stmt::Loop(outer)]))
    }
}
