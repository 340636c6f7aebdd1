//! The registry: every tactic and sketch family of the search, in the
//! order they are tried, as egg's users list their rewrites in one place.
//! ARCHITECTURE.md's synth section lists these entries; a test keeps that
//! list fresh ([`markdown`]).
//!
//! * [`KERNEL_TACTICS`] are tried on the whole kernel until one gives a
//!   program (or, like `histogram`, decides the kernel either way).
//! * [`OUTPUT_TACTICS`] are tried, by `per-output`, on each output of the
//!   spec; each looks below the cost of the best program found so far.
//! * [`SKETCH_FAMILIES`] are tried by the enumerative search at every level,
//!   before its arithmetic sketches `op(stub, ?h)`.

use super::argsearch::RunningSearch;
use super::direct::Direct;
use super::enumerative::{AfterStores, Enumerative};
use super::moments::{ScaledGram, StoredMoments};
use super::outputs::PerOutput;
use super::partial::restructure::{
    Distribute, GuardSplit, Guards, Interchange, Restructuring, Reverse, Split, Substitute, Unroll,
};
use super::partial::KeptLoops;
use super::scatter::Histogram;
use super::search::SketchFamily;
use super::sketch::constant::ConstantFill;
use super::sketch::contraction::Contraction;
use super::sketch::division::Division;
use super::sketch::interleave::Interleave;
use super::sketch::pattern::Pattern;
use super::sketch::power::Power;
use super::sketch::product::IntegerProduct;
use super::sketch::region::Region;
use super::sketch::scan::Scan;
use super::sketch::select::WhereSelect;
use super::sketch::split::ApplicationSplit;
use super::sketch::view::LeafView;
use super::sketch::window::SlidingWindow;
use super::solvers::Solver;
use super::tactic::{KernelTactic, OutputTactic};

/// Whole-kernel tactics, in order.
pub static KERNEL_TACTICS: &[&dyn KernelTactic] = &[
    &Histogram,
    &RunningSearch,
    &Solver,
    &PerOutput,
    &KeptLoops {
        restructurings: RESTRUCTURINGS,
    },
];

/// Loop restructurings of `kept-loops`, in the order tried on a loop that
/// does not lift as one statement.
pub static RESTRUCTURINGS: &[&dyn Restructuring] = &[
    &Reverse,
    &Guards,
    &Unroll,
    &Substitute,
    &Distribute,
    &Split,
    &Interchange,
    &GuardSplit,
];

/// Tactics for one output, in order.
pub static OUTPUT_TACTICS: &[&dyn OutputTactic] = &[
    &Direct,
    &ScaledGram,
    &StoredMoments,
    &AfterStores,
    &Enumerative,
];

/// Sketch families of the enumerative search, in the order tried at every
/// level.
pub static SKETCH_FAMILIES: &[&dyn SketchFamily] = &[
    &Pattern,
    &ConstantFill,
    &WhereSelect,
    &Division,
    &ApplicationSplit,
    &IntegerProduct,
    &Region,
    &Power,
    &Scan,
    &LeafView,
    &SlidingWindow,
    &Interleave,
    &Contraction,
];

/// The registry as the Markdown list ARCHITECTURE.md holds between its
/// `registry:synth` markers.
pub fn markdown() -> String {
    let mut out = String::from("Kernel tactics, in order:\n\n");
    for t in KERNEL_TACTICS {
        out.push_str(&format!("1. `{}`: {}\n", t.name(), t.summary()));
    }
    out.push_str("\nOutput tactics (`per-output`), in order:\n\n");
    for t in OUTPUT_TACTICS {
        out.push_str(&format!("1. `{}`: {}\n", t.name(), t.summary()));
    }
    out.push_str("\nLoop restructurings (`kept-loops`), in order:\n\n");
    for r in RESTRUCTURINGS {
        out.push_str(&format!("1. `{}`: {}\n", r.name(), r.summary()));
    }
    out.push_str(
        "\nSketch families of the enumerative search, in order (then `op(stub, ?h)`):\n\n",
    );
    for f in SKETCH_FAMILIES {
        out.push_str(&format!("1. `{}`: {}\n", f.name(), f.summary()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_has_a_distinct_name() {
        let mut names: Vec<&str> = KERNEL_TACTICS
            .iter()
            .map(|t| t.name())
            .chain(OUTPUT_TACTICS.iter().map(|t| t.name()))
            .chain(SKETCH_FAMILIES.iter().map(|f| f.name()))
            .chain(RESTRUCTURINGS.iter().map(|r| r.name()))
            .collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "{names:?}");
    }

    #[test]
    fn architecture_md_lists_the_registry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/ARCHITECTURE.md");
        let text = std::fs::read_to_string(path).expect("ARCHITECTURE.md");
        let (begin, end) = (
            "<!-- registry:synth begin -->\n",
            "<!-- registry:synth end -->",
        );
        let start = text.find(begin).expect("begin marker") + begin.len();
        let stop = text.find(end).expect("end marker");
        let expected = markdown();
        if std::env::var_os("UPDATE_ARCHITECTURE").is_some() {
            let updated = format!("{}{expected}{}", &text[..start], &text[stop..]);
            std::fs::write(path, updated).expect("write ARCHITECTURE.md");
            return;
        }
        assert_eq!(
            &text[start..stop],
            expected,
            "ARCHITECTURE.md's registry list is stale: run UPDATE_ARCHITECTURE=1 cargo test --release --lib registry"
        );
    }
}
