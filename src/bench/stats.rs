//! Speedups and geometric means over runtime.csv: per kernel against
//! gcc -O3, per backend, and for the best lifted backend per kernel against
//! gcc -O3 and against the better of the two Polly variants.

use std::collections::BTreeMap;

use super::csv::Table;

/// The C baseline every speedup is relative to.
pub const BASELINE: &str = "gcc";
/// The C variants, in report order.
pub const C_VARIANTS: [&str; 4] = ["gcc", "clang", "polly", "polly-parallel"];
/// The Polly variants; the faster one per kernel is "best Polly".
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
}

impl Times {
    /// The rows of runtime.csv with status `ok` and a positive median
    /// (a later row for the same kernel and variant replaces an earlier one).
    pub fn from_table(table: &Table) -> Times {
        let mut times = Times::default();
        for row in &table.rows {
            let kernel = table.get(row, "kernel").to_string();
            times
                .suite
                .insert(kernel.clone(), table.get(row, "suite").to_string());
            let status = table.get(row, "status");
            let median: Option<f64> = table.get(row, "median_s").parse().ok();
            let entry = times.by_kernel.entry(kernel).or_default();
            let variant = table.get(row, "variant").to_string();
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

    /// The fastest of `variants` for a kernel, with its name.
    pub fn best<'a>(&self, kernel: &str, variants: &[&'a str]) -> Option<(&'a str, f64)> {
        variants
            .iter()
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

    fn sample() -> Times {
        let table = parse(
            "kernel,suite,variant,dataset,median_s,status\n\
             a,s,gcc,L,8,ok\n\
             a,s,polly,L,4,ok\n\
             a,s,polly-parallel,L,2,ok\n\
             a,s,numpy,L,1,ok\n\
             a,s,jax,L,0.5,ok\n\
             b,s,gcc,L,2,ok\n\
             b,s,polly,L,2,ok\n\
             b,s,numpy,L,1,ok\n\
             b,s,jax,L,,timeout\n\
             c,s,gcc,L,1,ok\n\
             c,s,numpy,L,,wrong-output\n",
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
