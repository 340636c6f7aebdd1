//! Speedups and geometric means over runtime.csv: per kernel against
//! gcc -O3, per backend, and for the best lifted backend per kernel against
//! gcc -O3 and against the better of the two Polly variants.

use std::collections::{BTreeMap, BTreeSet};

use super::csv::Table;

/// The C baseline every speedup is relative to.
pub const BASELINE: &str = "gcc";
/// The C variants, in report order.
pub const C_VARIANTS: [&str; 4] = ["gcc", "clang", "polly", "polly-parallel"];
/// The Polly variants; the faster one per kernel that Polly transformed is
/// "best Polly". Only a row whose `polly_transformed` is `yes` counts: `no`
/// ran clang's own code for the kernel, and `unknown` (the analysis failed)
/// or an empty cell (a run from before the column) is unverified.
pub const POLLY_VARIANTS: [&str; 2] = ["polly", "polly-parallel"];
/// The lifted backends, in report order (CUDA ones add `-cuda`).
pub const LIFTED_VARIANTS: [&str; 5] = ["numpy", "jax", "pytorch", "torch-compile", "hlo"];

/// Geometric mean; `None` for no values or a non-positive one.
pub fn geomean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// Median times of the successful measurements: kernel -> variant -> seconds.
#[derive(Clone, Debug, Default)]
pub struct Times {
    pub by_kernel: BTreeMap<String, BTreeMap<String, f64>>,
    pub suite: BTreeMap<String, String>,
    /// (kernel, variant) of Polly rows whose `polly_transformed` is `yes`.
    pub transformed: BTreeSet<(String, String)>,
    /// kernel -> variant -> (`polly_transformed`, `polly_what`), for the summary.
    pub polly_what: BTreeMap<String, BTreeMap<String, (String, String)>>,
}

impl Times {
    /// The rows of runtime.csv with status `ok` and a positive median
    /// (a later row for the same kernel and variant replaces an earlier one).
    pub fn from_table(table: &Table) -> Times {
        Times::from_column(table, |_| "median_s")
    }

    /// As [`Times::from_table`], with a `-cuda` variant's end-to-end time
    /// (`e2e_median_s`: inputs copied to the GPU, the kernel, outputs
    /// copied back) in place of its kernel-only one.
    pub fn end_to_end(table: &Table) -> Times {
        Times::from_column(table, |variant| {
            if variant.ends_with("-cuda") {
                "e2e_median_s"
            } else {
                "median_s"
            }
        })
    }

    fn from_column(table: &Table, column: impl Fn(&str) -> &'static str) -> Times {
        let mut times = Times::default();
        for row in &table.rows {
            let kernel = table.get(row, "kernel").to_string();
            times
                .suite
                .insert(kernel.clone(), table.get(row, "suite").to_string());
            let status = table.get(row, "status");
            let variant = table.get(row, "variant").to_string();
            let median: Option<f64> = table.get(row, column(&variant)).parse().ok();
            let pair = (kernel.clone(), variant.clone());
            match table.get(row, "polly_transformed") {
                "yes" => times.transformed.insert(pair),
                _ => times.transformed.remove(&pair),
            };
            let transformed = table.get(row, "polly_transformed");
            if !transformed.is_empty() {
                let what = table.get(row, "polly_what").to_string();
                times
                    .polly_what
                    .entry(kernel.clone())
                    .or_default()
                    .insert(variant.clone(), (transformed.to_string(), what));
            }
            let entry = times.by_kernel.entry(kernel).or_default();
            match median {
                Some(m) if status == "ok" && m > 0.0 => {
                    entry.insert(variant, m);
                }
                _ => {
                    entry.remove(&variant);
                }
            }
        }
        times
    }

    pub fn get(&self, kernel: &str, variant: &str) -> Option<f64> {
        self.by_kernel.get(kernel)?.get(variant).copied()
    }

    /// Whether `variant`'s time may stand for it: every variant but a Polly
    /// one whose row does not say Polly transformed the kernel.
    pub fn counts(&self, kernel: &str, variant: &str) -> bool {
        !POLLY_VARIANTS.contains(&variant)
            || self
                .transformed
                .contains(&(kernel.to_string(), variant.to_string()))
    }

    /// The fastest of `variants` for a kernel, with its name; a Polly
    /// variant that did not (verifiably) transform the kernel is not a
    /// candidate.
    pub fn best<'a>(&self, kernel: &str, variants: &[&'a str]) -> Option<(&'a str, f64)> {
        variants
            .iter()
            .filter(|v| self.counts(kernel, v))
            .filter_map(|v| self.get(kernel, v).map(|t| (*v, t)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Every variant name seen with a successful time, in report order
    /// (C, lifted CPU, lifted CUDA, then anything else).
    pub fn variants(&self) -> Vec<String> {
        let mut seen: Vec<String> = self
            .by_kernel
            .values()
            .flat_map(|m| m.keys().cloned())
            .collect();
        seen.sort();
        seen.dedup();
        let order = |v: &String| -> usize {
            let cuda: Vec<String> = LIFTED_VARIANTS
                .iter()
                .map(|l| format!("{l}-cuda"))
                .collect();
            C_VARIANTS
                .iter()
                .chain(LIFTED_VARIANTS.iter())
                .map(|s| s.to_string())
                .chain(cuda)
                .position(|s| &s == v)
                .unwrap_or(usize::MAX)
        };
        seen.sort_by_key(order);
        seen
    }
}

/// Geomean of `reference / variant` over kernels where both ran.
pub fn geomean_speedup(times: &Times, variant: &str, reference: &str) -> Option<(f64, usize)> {
    let speedups: Vec<f64> = times
        .by_kernel
        .keys()
        .filter_map(|k| Some(times.get(k, reference)? / times.get(k, variant)?))
        .collect();
    geomean(&speedups).map(|g| (g, speedups.len()))
}

/// Geomean over kernels of (best of `reference` variants) / (best of
/// `candidates`), counting kernels where both sides have a time.
pub fn geomean_best(
    times: &Times,
    candidates: &[&str],
    reference: &[&str],
) -> Option<(f64, usize)> {
    let speedups: Vec<f64> = times
        .by_kernel
        .keys()
        .filter_map(|k| Some(times.best(k, reference)?.1 / times.best(k, candidates)?.1))
        .collect();
    geomean(&speedups).map(|g| (g, speedups.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::csv::parse;

    #[test]
    fn geomean_of_known_values() {
        let g = geomean(&[2.0, 8.0]).unwrap();
        assert!((g - 4.0).abs() < 1e-12);
        assert!(geomean(&[]).is_none());
        assert!(geomean(&[1.0, 0.0]).is_none());
    }

    #[test]
    fn end_to_end_times_take_the_transfers_of_cuda_variants_only() {
        let table = parse(
            "kernel,suite,variant,dataset,median_s,status,e2e_median_s\n\
             a,s,gcc,L,1,ok,\n\
             a,s,numpy,L,0.5,ok,\n\
             a,s,jax-cuda,L,0.01,ok,2\n\
             b,s,gcc,L,4,ok,\n\
             b,s,jax-cuda,L,0.1,ok,\n",
        )
        .expect("a valid table");
        let e2e = Times::end_to_end(&table);
        assert_eq!(e2e.get("a", "jax-cuda"), Some(2.0));
        assert_eq!(e2e.get("a", "numpy"), Some(0.5));
        // No end-to-end time: the kernel has no CUDA time to compare.
        assert_eq!(e2e.get("b", "jax-cuda"), None);
        assert_eq!(Times::from_table(&table).get("a", "jax-cuda"), Some(0.01));
    }

    fn sample() -> Times {
        let table = parse(
            "kernel,suite,variant,dataset,median_s,status,polly_transformed\n\
             a,s,gcc,L,8,ok,\n\
             a,s,polly,L,4,ok,yes\n\
             a,s,polly-parallel,L,2,ok,yes\n\
             a,s,numpy,L,1,ok,\n\
             a,s,jax,L,0.5,ok,\n\
             b,s,gcc,L,2,ok,\n\
             b,s,polly,L,2,ok,yes\n\
             b,s,numpy,L,1,ok,\n\
             b,s,jax,L,,timeout,\n\
             c,s,gcc,L,1,ok,\n\
             c,s,numpy,L,,wrong-output,\n",
        )
        .unwrap();
        Times::from_table(&table)
    }

    #[test]
    fn failed_rows_do_not_count() {
        let times = sample();
        assert_eq!(times.get("b", "jax"), None);
        assert_eq!(times.get("c", "numpy"), None);
        // numpy: a 8x, b 2x -> 4x over two kernels
        let (g, n) = geomean_speedup(&times, "numpy", BASELINE).unwrap();
        assert_eq!(n, 2);
        assert!((g - 4.0).abs() < 1e-12);
    }

    #[test]
    fn a_polly_variant_that_did_not_transform_the_kernel_is_not_best_polly() {
        let table = parse(
            "kernel,suite,variant,dataset,median_s,status,polly_transformed,polly_what\n\
             a,s,gcc,L,8,ok,,\n\
             a,s,polly,L,4,ok,yes,scop+rescheduled+tiled+codegen\n\
             a,s,polly-parallel,L,2,ok,no,no SCoP\n\
             a,s,numpy,L,1,ok,,\n",
        )
        .unwrap();
        let times = Times::from_table(&table);
        assert!(!times.counts("a", "polly-parallel"));
        assert!(times.counts("a", "polly") && times.counts("a", "numpy"));
        assert_eq!(times.get("a", "polly-parallel"), Some(2.0));
        assert_eq!(times.best("a", &POLLY_VARIANTS), Some(("polly", 4.0)));
        // numpy 1 s against the transformed Polly's 4 s, not the untransformed 2 s.
        let (g, _) = geomean_best(&times, &["numpy"], &POLLY_VARIANTS).unwrap();
        assert!((g - 4.0).abs() < 1e-12);
        let what = &times.polly_what["a"]["polly-parallel"];
        assert_eq!((what.0.as_str(), what.1.as_str()), ("no", "no SCoP"));
    }

    #[test]
    fn an_unverified_polly_row_is_not_best_polly() {
        // `unknown`: the analysis failed; empty: a run from before the column.
        let table = parse(
            "kernel,suite,variant,dataset,median_s,status,polly_transformed,polly_what\n\
             a,s,gcc,L,8,ok,,\n\
             a,s,polly,L,4,ok,unknown,clang crashed\n\
             a,s,polly-parallel,L,2,ok,,\n\
             a,s,numpy,L,1,ok,,\n",
        )
        .unwrap();
        let times = Times::from_table(&table);
        assert_eq!(times.best("a", &POLLY_VARIANTS), None);
        assert!(geomean_best(&times, &["numpy"], &POLLY_VARIANTS).is_none());
        assert_eq!(times.best("a", &["gcc", "numpy"]), Some(("numpy", 1.0)));
    }

    #[test]
    fn best_lifted_against_gcc_and_best_polly() {
        let times = sample();
        let lifted = LIFTED_VARIANTS;
        // a: best lifted 0.5 (jax) -> 16x over gcc; b: best 1 -> 2x: geomean sqrt(32)
        let (g, n) = geomean_best(&times, &lifted, &[BASELINE]).unwrap();
        assert_eq!(n, 2);
        assert!((g - 32f64.sqrt()).abs() < 1e-9);
        // a: best polly 2 / 0.5 = 4; b: 2 / 1 = 2 -> sqrt(8)
        let (g, _) = geomean_best(&times, &lifted, &POLLY_VARIANTS).unwrap();
        assert!((g - 8f64.sqrt()).abs() < 1e-9);
        assert_eq!(times.best("a", &lifted), Some(("jax", 0.5)));
    }

    #[test]
    fn variants_come_in_report_order() {
        assert_eq!(
            sample().variants(),
            vec!["gcc", "polly", "polly-parallel", "numpy", "jax"]
        );
    }
}
