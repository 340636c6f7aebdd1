//! Loop restructurings of the kept-loops tactic: when a loop of the C
//! neither lifts as one statement nor should simply be kept, one of these
//! rewrites it into loops that do (the registry lists them, in the order
//! they are tried). Each is a classic loop transformation with its
//! legality checked on the loop IR; the statements it produces are lifted
//! like any other, and the assembled program is still accepted only by
//! the comparison with the whole kernel's spec.
//!
//! * `reverse`: a descending loop runs ascending over the same values in
//!   the same order (`j ↦ h - 1 - j`), so it can be kept or sliced;
//! * `guards`: a guard the loops around it decide is dropped (or its else
//!   branch kept), and a guarded assignment whose reads stay in bounds
//!   becomes a select;
//! * `distribute`: a loop whose statements depend on one another only
//!   within an iteration becomes one loop per statement, each scalar it
//!   privatises expanded into a vector along the loop (deriche's `ym1`
//!   becomes `ym1_i[i]`); a perfect nest distributes as a whole, its
//!   scalars expanded along every loop (llm.c's `sum` becomes
//!   `sum_bt[b][t]`);
//! * `split`: a loop that reads at a point what it writes elsewhere is cut
//!   at that point (floyd-warshall's `i < k`, `i = k`, `i > k`), so each
//!   piece reads what no piece of itself writes;
//! * `unroll`: a loop over a small literal range inside the loop (a 3x3
//!   window's `dy`, `dx`) is replaced by its iterations in order;
//! * `substitute`: a scalar temporary set in an iteration and read only
//!   after that in it is replaced by its value where it is read (llm.c's
//!   `xshift = x[i] - m; v += xshift * xshift`), so the loop reads no
//!   scalar it writes;
//! * `guard-split`: a loop whose guards test where its iterator is (`i ==
//!   0`, `i == n - 1`: a signal's two ends handled apart) is cut at those
//!   points, each piece with its guards decided;
//! * `interchange`: a loop whose iterations are independent, around one
//!   loop that carries a dependency, moves inside it (a scan keeps its
//!   carried loop and vectorises the other).

mod distribute;
mod guard_split;
mod guards;
mod interchange;
mod reverse;
mod split;
mod substitute;
mod unroll;

pub use distribute::Distribute;
pub use guard_split::GuardSplit;
pub use guards::Guards;
pub use interchange::Interchange;
pub use reverse::Reverse;
pub use split::Split;
pub use substitute::Substitute;
pub use unroll::Unroll;

use tenslift_frontend::ir::{self as loop_ir, Affine, Kernel, Local, Loop};

use super::dependence::Scope;

/// A loop to restructure where it stands: inside the kept loops `scope` of
/// `kernel` (the driver's kernel: locals as arrays, `scalars` the former
/// local scalars).
pub struct LoopSite<'a> {
    pub l: &'a Loop,
    pub scope: &'a Scope,
    pub kernel: &'a Kernel,
    pub scalars: &'a [String],
}

/// What replaces the loop, with the locals it introduces.
pub struct Restructured {
    pub stmts: Vec<loop_ir::Stmt>,
    pub locals: Vec<Local>,
    /// Relations between sizes the statements are exact under (`a <= b`),
    /// which the program then requires on entry (see `guard_split`).
    pub requires: Vec<(Affine, Affine)>,
}

impl Restructured {
    fn of(stmts: Vec<loop_ir::Stmt>) -> Restructured {
        Restructured {
            stmts,
            locals: Vec::new(),
            requires: Vec::new(),
        }
    }
}

/// A rewrite of one loop into statements that compute the same thing.
pub trait Restructuring: Sync {
    /// Its name in traces and ARCHITECTURE.md.
    fn name(&self) -> &'static str;
    /// One line: what it does.
    fn summary(&self) -> &'static str;
    /// The statements replacing the loop, or `None` when it does not apply.
    fn apply(&self, site: &LoopSite<'_>) -> Option<Restructured>;
}

/// The loop `l` in `scope` as a [`stencil::NestLoop`](crate::synth::stencil::NestLoop).
fn nest_of(l: &Loop) -> crate::synth::stencil::NestLoop {
    crate::synth::stencil::NestLoop {
        iter: l.iter.clone(),
        start: l.start.clone(),
        end: l.end.clone(),
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Restructurings applied to real C (parsed by libclang), and their
    //! statements as the loop-IR dump shows them.
    use super::{LoopSite, Restructured, Restructuring};
    use tenslift_frontend::ir as loop_ir;

    pub fn kernel_of(source: &str) -> loop_ir::Kernel {
        kernels_of(source).into_iter().next().expect("a kernel")
    }

    /// Every kernel the frontend reads out of `source` (a function split
    /// by its tests of its increments gives one per case).
    pub fn kernels_of(source: &str) -> Vec<loop_ir::Kernel> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("k.c");
        std::fs::write(&path, source).expect("write");
        let options = tenslift_frontend::Options::default();
        let unit = tenslift_frontend::extract(&path.to_string_lossy(), &options).expect("C");
        unit.kernels
    }

    /// `r` applied to the first statement of `source`'s kernel, a loop,
    /// at the top level (no loops around, no former scalars).
    pub fn apply_to_first_loop(r: &dyn Restructuring, source: &str) -> Option<Restructured> {
        let kernel = kernel_of(source);
        let loop_ir::Stmt::Loop(l) = &kernel.body[0] else {
            panic!("the kernel opens with a loop");
        };
        let site = LoopSite {
            l,
            scope: &Vec::new(),
            kernel: &kernel,
            scalars: &[],
        };
        r.apply(&site)
    }

    /// The statements as the loop-IR dump shows a kernel's body.
    pub fn dump(stmts: &[loop_ir::Stmt]) -> String {
        let k = loop_ir::Kernel {
            body: stmts.to_vec(),
            ..kernel_of("void f(void) {}")
        };
        let text = tenslift_frontend::dump::kernel(&k);
        text.split_once("  body\n")
            .map_or(text.clone(), |(_, b)| b.to_string())
    }
}
