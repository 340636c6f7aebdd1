//! Partial-symmetry analysis over TensIR and the rewrites it enables
//! (Arya and Gandhi, "A Dataflow Analysis for Symmetry in Tensor
//! Programs"; `shared/seeds/symmetry-dataflow.txt`).
//!
//! - [`lattice`]: partitions of a value's axes into interchangeable
//!   groups;
//! - [`relation`]: values that are one another up to a permutation of axes
//!   (`A·Aᵀ` is its own transpose, `B·Aᵀ` is `(A·Bᵀ)ᵀ`);
//! - [`transfer`]: one transfer function per TensIR operation;
//! - [`fixpoint`]: the analysis of a program, kept loops by a fixpoint;
//! - [`rewrite`]: the uses (transposes dropped or shared, reductions
//!   rotated, one triangle of a symmetric product computed by
//!   `syrk`/`syr2k`, a symmetric result mirrored from one triangle);
//! - [`blas`]: the definitions of `syrk`, `syr2k`, `mirror_lower`.
//!
//! [`apply_symmetry`] is the entry point: it returns the rewritten program
//! and a report of what the analysis found and what changed. Which uses a
//! target gets is [`Policy::for_target`], decided by measurement
//! (`scripts/symmetry_microbench.py`, `results/symmetry-*.md`).
//!
//! ```
//! use tenslift_targets::{parse_program, print_program, Target};
//! use tenslift_targets::symmetry::apply_symmetry;
//! let text = "func f(n: size, x: f64[n, n], out: out f64[n, n]) {\n  \
//!     let a = add(x, transpose(x, perm=[1, 0]));\n  \
//!     out = add(a, transpose(a, perm=[1, 0]));\n}\n";
//! let program = parse_program("f.tensir", text).unwrap();
//! let (rewritten, report) = apply_symmetry(&program, Some(Target::Jax));
//! assert!(print_program(&rewritten).contains("out = add(a, a);"));
//! assert_eq!(report.transposes, (2, 1));
//! ```

pub mod blas;
pub mod fixpoint;
pub mod lattice;
pub mod relation;
pub mod rewrite;
pub mod transfer;

#[cfg(test)]
mod tests;

use std::convert::Infallible;
use std::fmt;

pub use fixpoint::{analyze, Analyzer, ProgramFacts};
pub use lattice::Symmetry;
pub use rewrite::{Change, ChangeKind, Mirror, Policy};

use crate::emit::Target;
use crate::expr::Expr;
use crate::program::{try_map_values, Program, Stmt};

impl Policy {
    /// The uses applied for `target` (`None`: a program for any target,
    /// so only uses that are never slower anywhere).
    ///
    /// Measured with `scripts/symmetry_microbench.py` (the table and its
    /// machine in `results/symmetry-2026-11-26.md`):
    /// - dropping a transpose removes a copy (or a strided read) on every
    ///   target; sharing a transposed contraction halves syr2k's flops on
    ///   every target;
    /// - one triangle by `syrk`/`syr2k` pays off with NumPy (SciPy's BLAS
    ///   computes half the product) and with XLA (JAX, StableHLO: the
    ///   triangle by 2 x 2 blocks, 5/8 of the flops); PyTorch has no
    ///   `syrk` and its blocked products were slower than one product;
    /// - a full symmetric product mirrored from one triangle pays off with
    ///   XLA, and with NumPy only where `matmul` does not already call
    ///   `syrk` itself (a symmetric `s @ s`, not `x @ x.T`);
    /// - rotating a reduction onto the last (contiguous) axis was about
    ///   a tenth faster with NumPy and slower with PyTorch and XLA (which
    ///   reduce a strided axis as fast, and pay for the rotated
    ///   program's different fusion).
    pub fn for_target(target: Option<Target>) -> Policy {
        let numpy = matches!(target, Some(Target::Numpy));
        let (lower_triangles, mirror) = match target {
            Some(Target::Numpy) => (true, Mirror::Hidden),
            Some(Target::Jax | Target::Hlo) => (true, Mirror::Always),
            Some(Target::Pytorch) | None => (false, Mirror::Never),
        };
        Policy {
            drop_transposes: true,
            share_transposed: true,
            rotate_reductions: numpy,
            lower_triangles,
            mirror,
        }
    }

    /// Every use: for tests and for measuring a use on a target.
    pub fn all() -> Policy {
        Policy {
            drop_transposes: true,
            share_transposed: true,
            rotate_reductions: true,
            lower_triangles: true,
            mirror: Mirror::Always,
        }
    }
}

/// What [`apply_symmetry`] found and did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymmetryReport {
    /// Names bound to symmetric values, with their symmetry.
    pub symmetric: Vec<(String, Symmetry)>,
    /// The rewrites applied, in program order.
    pub changes: Vec<Change>,
    /// Passes over loop bodies the fixpoint took.
    pub loop_passes: usize,
    /// Distinct transposes before and after.
    pub transposes: (usize, usize),
}

impl fmt::Display for SymmetryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self
            .symmetric
            .iter()
            .map(|(n, s)| format!("{n} {s}"))
            .collect();
        writeln!(
            f,
            "symmetry: {} symmetric value(s){}{}; {} change(s); transposes {} -> {}",
            names.len(),
            if names.is_empty() { "" } else { ": " },
            names.join(", "),
            self.changes.len(),
            self.transposes.0,
            self.transposes.1
        )?;
        for c in &self.changes {
            writeln!(
                f,
                "  statement {}: {}: {}  ->  {}",
                c.stmt,
                c.kind.name(),
                c.before,
                c.after
            )?;
        }
        Ok(())
    }
}

/// The program with the uses of the symmetry analysis that pay off on
/// `target` applied, and a report. The result computes the same values in
/// real arithmetic (floating-point results agree to round-off); when a
/// rewrite would leave a program that does not validate (a defect), the
/// program is returned unchanged and the report lists no change.
pub fn apply_symmetry(program: &Program, target: Option<Target>) -> (Program, SymmetryReport) {
    apply_with(program, Policy::for_target(target))
}

/// [`apply_symmetry`] with an explicit choice of uses.
pub fn apply_with(program: &Program, policy: Policy) -> (Program, SymmetryReport) {
    let facts = analyze(program);
    let mut changes = Vec::new();
    let body = rewrite_block(&program.body, &facts, policy, &mut changes);
    let rewritten = Program {
        body,
        ..program.clone()
    };
    let mut report = SymmetryReport {
        symmetric: facts
            .symmetric()
            .into_iter()
            .map(|(n, s)| (n.to_string(), s.clone()))
            .collect(),
        changes,
        loop_passes: facts.loop_passes,
        transposes: (transposes(&program.body), transposes(&rewritten.body)),
    };
    if rewritten.validate().is_err() {
        report.changes.clear();
        report.transposes.1 = report.transposes.0;
        return (program.clone(), report);
    }
    (rewritten, report)
}

fn rewrite_block(
    stmts: &[Stmt],
    facts: &ProgramFacts,
    policy: Policy,
    changes: &mut Vec<Change>,
) -> Vec<Stmt> {
    let rewritten = try_map_values(stmts, &mut |index, value| {
        let analyzer = Analyzer::new(&facts.before[index]);
        let mut rw = rewrite::Rewriter::new(&analyzer, policy, index);
        let r = rw.expr(value);
        changes.append(&mut rw.changes);
        Ok::<Expr, Infallible>(r)
    });
    match rewritten {
        Ok(body) => body,
        Err(never) => match never {},
    }
}

/// Distinct transposes over all statement values.
fn transposes(stmts: &[Stmt]) -> usize {
    let mut all = Vec::new();
    for s in stmts {
        s.preorder(&mut all);
    }
    all.iter()
        .map(|s| match s {
            Stmt::Let { value, .. } | Stmt::Store { value, .. } | Stmt::Return(value) => {
                rewrite::count_transposes(value)
            }
            Stmt::Loop { .. } | Stmt::Var { .. } => 0,
        })
        .sum()
}
