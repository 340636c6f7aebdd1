//! The bench's `auto` and roofline columns. At lift time ([`lift_columns`])
//! each lifted program gets, at the run's sizes and from the calibration
//! table: the target `--target auto` would pick among the run's targets,
//! every target's predicted time, its FLOPs and bytes moved and the
//! roofline's lower bound on its time ([`crate::predict`]). After the
//! runtime ([`table`]) these meet the measured times in roofline.csv: was
//! auto's pick the measured best lifted CPU backend, how far was it from
//! it, and what fraction of the bound the best backend reaches (bound /
//! best time: 1 means at the machine's limit). [`render`] writes the
//! summary's lines and per-kernel table.

use std::fmt::Write;

use tenslift_targets::{Program, Target};

use super::csv::Table;
use super::stats::{geomean, Times, BASELINE};
use crate::predict::{choose, roofline_bound, AUTO_TARGETS};
use crate::spec::Sizes;
use crate::synth::cost::CostTable;

/// The columns lift.csv gains (after `message`).
pub const LIFT_EXTRA: [&str; 6] = [
    "auto_target",
    "predicted_s",
    "flops",
    "bytes",
    "roofline_s",
    "bound_by",
];

/// Columns of roofline.csv.
pub const ROOFLINE_COLUMNS: [&str; 14] = [
    "kernel",
    "suite",
    "auto_target",
    "auto_s",
    "best_target",
    "best_s",
    "auto_is_best",
    "auto_vs_best",
    "gcc_s",
    "auto_vs_gcc",
    "flops",
    "bytes",
    "roofline_s",
    "roofline_fraction",
];

/// The [`LIFT_EXTRA`] cells of one lifted program at `sizes`, choosing
/// as `lift --target auto` does: among the run's `targets` whose emitter
/// took the program (`refused`: those whose did not; StableHLO has no LU).
pub fn lift_columns(
    table: &CostTable,
    program: &Program,
    sizes: &Sizes,
    targets: &[String],
    refused: &[Target],
) -> Vec<String> {
    let candidates: Vec<&str> = AUTO_TARGETS
        .into_iter()
        .filter(|t| targets.iter().any(|r| r == t))
        .filter(|t| !refused.iter().any(|r| r.name() == *t))
        .collect();
    let (auto, predicted) = choose(table, program, sizes, &candidates).unwrap_or_default();
    let predicted: Vec<String> = predicted
        .iter()
        .map(|(k, v)| format!("{k}={v:.4e}"))
        .collect();
    let (bound, work, by) = match &table.machine {
        Some(limits) => {
            let (bound, work) = roofline_bound(limits, program, sizes);
            let memory = work.bytes / limits.bandwidth_for(work.bytes).max(1.0);
            let by = if memory >= bound { "memory" } else { "compute" };
            (format!("{bound:.4e}"), Some(work), by)
        }
        None => (String::new(), None, ""),
    };
    vec![
        auto,
        predicted.join(";"),
        work.map(|w| format!("{}", w.flops)).unwrap_or_default(),
        work.map(|w| format!("{}", w.bytes)).unwrap_or_default(),
        bound,
        by.to_string(),
    ]
}

fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn cell(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.4e}")).unwrap_or_default()
}

/// roofline.csv: one row per kernel with a measured lifted backend.
pub fn table(lift: &Table, runtime: &Table) -> Table {
    let times = Times::from_table(runtime);
    let lifted: Vec<String> = times
        .variants()
        .into_iter()
        .filter(|v| super::stats::LIFTED_VARIANTS.contains(&v.as_str()))
        .collect();
    let lifted: Vec<&str> = lifted.iter().map(String::as_str).collect();
    let mut out = Table::new(&ROOFLINE_COLUMNS);
    for row in &lift.rows {
        let kernel = lift.get(row, "kernel");
        let Some((best, best_s)) = times.best(kernel, &lifted) else {
            continue;
        };
        let auto = lift.get(row, "auto_target");
        let auto_s = times.get(kernel, auto);
        let gcc = times.get(kernel, BASELINE);
        let bound = number(lift.get(row, "roofline_s"));
        out.rows.push(vec![
            kernel.to_string(),
            lift.get(row, "suite").to_string(),
            auto.to_string(),
            cell(auto_s),
            best.to_string(),
            cell(Some(best_s)),
            (auto == best).to_string(),
            cell(auto_s.map(|a| best_s / a)),
            cell(gcc),
            cell(gcc.zip(auto_s).map(|(g, a)| g / a)),
            lift.get(row, "flops").to_string(),
            lift.get(row, "bytes").to_string(),
            cell(bound),
            cell(bound.map(|b| b / best_s)),
        ]);
    }
    out
}

fn percent(part: usize, whole: usize) -> String {
    format!("{:.0}%", 100.0 * part as f64 / whole.max(1) as f64)
}

/// The summary's section on auto's choice and the roofline.
pub fn render(md: &mut String, roofline: &Table) {
    if roofline.rows.is_empty() {
        return;
    }
    md.push_str("\n## `--target auto` and the roofline\n\n");
    md.push_str(
        "`auto` is the target `tenslift lift --target auto` predicts fastest at the run's sizes \
         from the calibration table, among the run's targets; it is compared with the measured \
         best lifted CPU backend. The roofline bound is the larger of the program's bytes moved \
         (inputs read and outputs written once, at their dtype) over the calibrated \
         bandwidth at their working set (a cache's when they fit one) and its FLOPs over the calibrated BLAS peak; the fraction is bound / best \
         time (1 = at the machine's limit). Per kernel: roofline.csv.\n\n",
    );
    let get = |row: &[String], c: &str| number(roofline.get(row, c));
    let n = roofline.rows.len();
    let hits = roofline
        .rows
        .iter()
        .filter(|r| roofline.get(r, "auto_is_best") == "true")
        .count();
    let within = roofline
        .rows
        .iter()
        .filter(|r| get(r, "auto_vs_best").is_some_and(|v| v >= 1.0 / 1.1))
        .count();
    let vs_gcc: Vec<f64> = roofline
        .rows
        .iter()
        .filter_map(|r| get(r, "auto_vs_gcc"))
        .collect();
    let _ = writeln!(
        md,
        "- **auto picked the measured best on {hits}/{n} kernels ({}), within 10% of it on \
         {within}/{n} ({})**; auto vs gcc -O3: {} geomean over {} kernels.",
        percent(hits, n),
        percent(within, n),
        geomean(&vs_gcc).map_or("–".into(), |g| format!("{g:.2}x")),
        vs_gcc.len()
    );
    let mut fractions: Vec<f64> = roofline
        .rows
        .iter()
        .filter_map(|r| get(r, "roofline_fraction"))
        .collect();
    fractions.sort_by(f64::total_cmp);
    if let (Some(lo), Some(hi)) = (fractions.first(), fractions.last()) {
        let _ = writeln!(
            md,
            "- **Roofline: the best backend reaches a median {:.1}% of the bound** (from {:.2}% \
             to {:.1}%, geomean {:.2}%) over {} kernels.",
            100.0 * fractions[fractions.len() / 2],
            100.0 * lo,
            100.0 * hi,
            100.0 * geomean(&fractions).unwrap_or(0.0),
            fractions.len()
        );
    }
    md.push_str(
        "\n| kernel | auto | best | auto vs best | GFLOP | MB moved | bound (s) | best (s) | of roofline |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for row in &roofline.rows {
        let scaled =
            |c: &str, by: f64| get(row, c).map_or("–".into(), |v| format!("{:.3}", v / by));
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            roofline.get(row, "kernel"),
            roofline.get(row, "auto_target"),
            roofline.get(row, "best_target"),
            get(row, "auto_vs_best").map_or("–".into(), |v| format!("{v:.2}x")),
            scaled("flops", 1e9),
            scaled("bytes", 1e6),
            get(row, "roofline_s").map_or("–".into(), |v| format!("{v:.2e}")),
            get(row, "best_s").map_or("–".into(), |v| format!("{v:.2e}")),
            get(row, "roofline_fraction").map_or("–".into(), |v| format!("{:.1}%", 100.0 * v)),
        );
    }
}

/// The [`LIFT_EXTRA`] cells, empty, for a kernel without a program.
pub fn empty_columns() -> Vec<String> {
    vec![String::new(); LIFT_EXTRA.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program StableHLO cannot emit (no LU without pivoting there).
    const LU: &str = "func lu(n: size, A: inout f64[n, n]) {
  A[0:n, 0:n] = lu_nopivot(A[0:n, 0:n]);
}";

    #[test]
    fn auto_chooses_only_among_targets_that_emit_the_program() {
        let program = tenslift_targets::parse_program("lu.tensir", LU).expect("valid");
        let mut table = crate::predict::builtin_table();
        // StableHLO priced far below the others: chosen if it were a candidate.
        if let Some(hlo) = table.targets.get_mut("hlo") {
            hlo.call_overhead_s = 0.0;
            for c in hlo.ops.values_mut() {
                *c = crate::synth::cost::Coefficients {
                    overhead_s: 0.0,
                    s_per_flop: 0.0,
                    s_per_byte: 0.0,
                };
            }
        }
        let sizes: Sizes = [("n".to_string(), 500)].into_iter().collect();
        let targets: Vec<String> = AUTO_TARGETS.iter().map(|t| t.to_string()).collect();
        // What the bench's emission (write_modules) reports refused.
        let options = tenslift_targets::EmitOptions {
            sizes: sizes.clone(),
        };
        let refused: Vec<Target> = Target::ALL
            .into_iter()
            .filter(|t| tenslift_targets::emit(&program, *t, &options).is_err())
            .collect();
        assert_eq!(refused, [Target::Hlo]);
        let cells = lift_columns(&table, &program, &sizes, &targets, &refused);
        assert_ne!(cells[0], "hlo", "{cells:?}");
        assert!(!cells[1].contains("hlo="), "{cells:?}");
        assert!(AUTO_TARGETS.contains(&cells[0].as_str()), "{cells:?}");
    }
}
