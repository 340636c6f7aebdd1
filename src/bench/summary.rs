//! summary.md: how the run was made, TENSORIZE Table 2 (lift rate and
//! synthesis time per suite) and Figure 8 (per-kernel speedups against
//! gcc -O3, geomeans per backend and for the best lifted backend).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::csv::Table;
use super::stats::{
    geomean_best, geomean_speedup, Times, BASELINE, LIFTED_VARIANTS, POLLY_VARIANTS,
};

/// How a run was made (run.json).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    pub command: String,
    pub machine: String,
    pub dataset: String,
    /// UTC start, `YYYY-MM-DD HH:MM`.
    pub started: String,
    pub lift_wall_s: f64,
    pub runtime_wall_s: f64,
    pub wall_s: f64,
    /// Other runs folded in by --merge / --import.
    #[serde(default)]
    pub merged_from: Vec<String>,
    /// The kernels of the whole run in run order, before `--shard` took
    /// its part: `--merge` puts shard rows back in this order and names
    /// the kernels no merged directory has.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub selection: Vec<String>,
    /// `K/N` of a shard's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Kernels of the selection that no merged directory has.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// `YYYY-MM-DD HH:MM` (UTC) of a Unix time.
pub fn utc_date(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    // Civil-from-days (proleptic Gregorian), as in Howard Hinnant's date algorithms.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        secs / 3600,
        (secs % 3600) / 60
    )
}

fn seconds(t: f64) -> String {
    if t >= 100.0 {
        format!("{t:.0}")
    } else if t >= 1.0 {
        format!("{t:.2}")
    } else if t >= 0.001 {
        format!("{t:.4}")
    } else {
        format!("{t:.3e}")
    }
}

/// How many kernels have a `candidates` time slower than their `reference`
/// time (best of the candidates).
fn slower_than(times: &Times, candidates: &[&str], reference: &str) -> usize {
    times
        .by_kernel
        .keys()
        .filter(|k| {
            matches!(
                (times.get(k, reference), times.best(k, candidates)),
                (Some(r), Some((_, c))) if c > r
            )
        })
        .count()
}

fn speedup(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}×")
    } else if x >= 1.0 {
        format!("{x:.2}×")
    } else if x >= 0.001 {
        format!("{x:.3}×")
    } else {
        format!("{x:.1e}×")
    }
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    })
}

/// The lifted variants present in the run (CPU ones, then `-cuda` ones).
fn lifted_variants(times: &Times) -> (Vec<String>, Vec<String>) {
    let all = times.variants();
    let cpu = all
        .iter()
        .filter(|v| LIFTED_VARIANTS.contains(&v.as_str()))
        .cloned()
        .collect();
    let cuda = all
        .iter()
        .filter(|v| v.ends_with("-cuda"))
        .cloned()
        .collect();
    (cpu, cuda)
}

/// The whole summary.md.
pub fn render(info: &RunInfo, lift: &Table, runtime: Option<&Table>) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# tenslift bench: {} dataset\n", info.dataset);
    let _ = writeln!(md, "```sh\n{}\n```\n", info.command);
    let _ = writeln!(
        md,
        "Machine: {}. Started {} UTC. Wall time: {} s in all ({} s lifting, {} s runtime).",
        info.machine,
        info.started,
        seconds(info.wall_s),
        seconds(info.lift_wall_s),
        seconds(info.runtime_wall_s)
    );
    if !info.merged_from.is_empty() {
        let _ = writeln!(md, "\nMerged from: {}.", info.merged_from.join(", "));
    }
    if !info.missing.is_empty() {
        let _ = writeln!(
            md,
            "\n**Incomplete:** {} kernel(s) of the run are in no merged directory: {}.",
            info.missing.len(),
            info.missing.join(", ")
        );
    }
    render_lift(&mut md, lift);
    match runtime {
        Some(table) => {
            render_runtime(&mut md, table);
            super::roofline::render(&mut md, &super::roofline::table(lift, table));
        }
        None => md.push_str("\nNo runtime measured (`--no-runtime`).\n"),
    }
    md
}

/// Kernels, whole lifts, partial lifts (loops kept), their lift times,
/// and timeouts, of one suite.
#[derive(Default)]
struct LiftCounts {
    kernels: usize,
    whole: usize,
    partial: usize,
    times: Vec<f64>,
    timeouts: usize,
}

impl LiftCounts {
    fn add(&mut self, status: &str, time_s: &str) {
        self.kernels += 1;
        match status {
            "lifted" => self.whole += 1,
            "partial" => self.partial += 1,
            "timeout" => self.timeouts += 1,
            _ => return,
        }
        if matches!(status, "lifted" | "partial") {
            self.times.push(time_s.parse().unwrap_or(0.0));
        }
    }

    fn merge(&mut self, other: &LiftCounts) {
        self.kernels += other.kernels;
        self.whole += other.whole;
        self.partial += other.partial;
        self.times.extend(&other.times);
        self.timeouts += other.timeouts;
    }

    fn line(&self, md: &mut String, name: &str) {
        let mut sorted = self.times.clone();
        let mean = if sorted.is_empty() {
            "–".to_string()
        } else {
            seconds(sorted.iter().sum::<f64>() / sorted.len() as f64)
        };
        let med = median(&mut sorted).map(seconds).unwrap_or("–".into());
        let max = sorted.last().copied().map(seconds).unwrap_or("–".into());
        let _ = writeln!(
            md,
            "| {name} | {} | {} | {} | {:.0}% | {mean} | {med} | {max} | {} |",
            self.kernels,
            self.whole,
            self.partial,
            100.0 * (self.whole + self.partial) as f64 / self.kernels.max(1) as f64,
            self.timeouts
        );
    }
}

fn render_lift(md: &mut String, lift: &Table) {
    md.push_str("\n## Lifting (TENSORIZE Table 2)\n\n");
    md.push_str(
        "Time is the wall time of one `tenslift lift` process per kernel (extraction, spec, \
         search, acceptance, emission), over the lifted kernels. `whole`: one loop-free \
         program; `partial`: loops that carry a dependency kept, their bodies lifted; the \
         lift rate counts both.\n\n",
    );
    md.push_str("| suite | kernels | whole | partial | lift rate | mean time (s) | median time (s) | max time (s) | timeouts |\n");
    md.push_str("|---|---|---|---|---|---|---|---|---|\n");
    let mut per_suite: BTreeMap<String, LiftCounts> = BTreeMap::new();
    for row in &lift.rows {
        per_suite
            .entry(lift.get(row, "suite").to_string())
            .or_default()
            .add(lift.get(row, "status"), lift.get(row, "time_s"));
    }
    let mut total = LiftCounts::default();
    for (suite, counts) in &per_suite {
        counts.line(md, suite);
        total.merge(counts);
    }
    total.line(md, "**all**");
}

fn render_runtime(md: &mut String, table: &Table) {
    let times = Times::from_table(table);
    let (cpu, cuda) = lifted_variants(&times);
    let cpu_refs: Vec<&str> = cpu.iter().map(String::as_str).collect();
    md.push_str("\n## Runtime (TENSORIZE Figure 8)\n\n");
    md.push_str(
        "Median of the timed runs after a warm-up, each timed inside its process around the \
         kernel alone; a lifted output is compared with the C output first and not timed when \
         it differs. Speedup = gcc -O3 time / variant time. Best Polly = the faster of `polly` \
         and `polly-parallel` per kernel among the variants in which Polly transformed the \
         kernel (section \"Polly per kernel\"); a Polly variant that did not is clang -O3 \
         and is not counted. For `-cuda` variants, `median_s` is kernel-only and \
         `e2e_median_s` (runtime.csv) includes the transfers.\n\n",
    );
    if let Some((g, n)) = geomean_best(&times, &cpu_refs, &[BASELINE]) {
        let _ = writeln!(
            md,
            "- **Best lifted CPU backend per kernel vs gcc -O3: {} geomean** over {n} kernels.",
            speedup(g)
        );
    }
    match geomean_best(&times, &cpu_refs, &POLLY_VARIANTS) {
        Some((g, n)) => {
            let _ = writeln!(
                md,
                "- **Best lifted CPU backend per kernel vs best Polly: {} geomean** over {n} kernels.",
                speedup(g)
            );
        }
        None => md.push_str(
            "- Best lifted CPU backend per kernel vs best Polly: no kernel has both a lifted \
             time and a Polly variant that transformed it.\n",
        ),
    }
    if let Some((g, n)) = geomean_best(&times, &POLLY_VARIANTS, &[BASELINE]) {
        let _ = writeln!(
            md,
            "- Best Polly vs gcc -O3: {} geomean over {n} kernels.",
            speedup(g)
        );
    }
    if !cuda.is_empty() {
        let cuda_refs: Vec<&str> = cuda.iter().map(String::as_str).collect();
        if let Some((g, n)) = geomean_best(&times, &cuda_refs, &[BASELINE]) {
            let _ = writeln!(
                md,
                "- Best lifted CUDA backend per kernel (kernel-only) vs gcc -O3: {} geomean over {n} kernels.",
                speedup(g)
            );
        }
        let e2e = Times::end_to_end(table);
        if let Some((g, n)) = geomean_best(&e2e, &cuda_refs, &[BASELINE]) {
            let slower = slower_than(&e2e, &cuda_refs, BASELINE);
            let _ = writeln!(
                md,
                "- Best lifted CUDA backend per kernel end to end (inputs copied to the GPU, \
                 outputs copied back) vs gcc -O3: {} geomean over {n} kernels; slower than \
                 the C on {slower}.",
                speedup(g)
            );
        }
    }
    md.push_str("\n### Geomean speedup per backend vs gcc -O3\n\n");
    md.push_str("| variant | kernels | geomean speedup | mean compile (s) |\n|---|---|---|---|\n");
    let compile = mean_compile(table);
    for variant in times.variants() {
        if variant == BASELINE {
            continue;
        }
        if let Some((g, n)) = geomean_speedup(&times, &variant, BASELINE) {
            let c = compile
                .get(&variant)
                .map(|c| seconds(*c))
                .unwrap_or("–".into());
            let _ = writeln!(md, "| {variant} | {n} | {} | {c} |", speedup(g));
        }
    }
    render_per_kernel(md, table, &times, &cpu_refs);
    render_polly(md, &times);
    render_failures(md, table);
}

fn mean_compile(table: &Table) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for row in &table.rows {
        if let Ok(c) = table.get(row, "compile_s").parse::<f64>() {
            let e = sums
                .entry(table.get(row, "variant").to_string())
                .or_default();
            e.0 += c;
            e.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, s / n as f64))
        .collect()
}

fn render_per_kernel(md: &mut String, table: &Table, times: &Times, cpu: &[&str]) {
    let variants = times.variants();
    let mut status: BTreeMap<(String, String), String> = BTreeMap::new();
    for row in &table.rows {
        status.insert(
            (
                table.get(row, "kernel").into(),
                table.get(row, "variant").into(),
            ),
            table.get(row, "status").into(),
        );
    }
    md.push_str("\n### Per kernel: speedup vs gcc -O3\n\n");
    if !times.polly_what.is_empty() {
        md.push_str(
            "`*`: a Polly variant that did not transform the kernel (clang's own code ran); \
             not a candidate for best Polly.\n\n",
        );
    }
    let mut header = "| kernel | suite | gcc (s) |".to_string();
    let mut rule = "|---|---|---|".to_string();
    for v in variants.iter().filter(|v| v.as_str() != BASELINE) {
        let _ = write!(header, " {v} |");
        rule.push_str("---|");
    }
    header.push_str(" best lifted | vs gcc | vs best Polly |");
    rule.push_str("---|---|---|");
    let _ = writeln!(md, "{header}\n{rule}");
    for kernel in times.by_kernel.keys() {
        let suite = times.suite.get(kernel).map(String::as_str).unwrap_or("");
        let gcc = times.get(kernel, BASELINE);
        let mut line = format!(
            "| {kernel} | {suite} | {} |",
            gcc.map(seconds)
                .unwrap_or_else(|| cell_status(&status, kernel, BASELINE))
        );
        for v in variants.iter().filter(|v| v.as_str() != BASELINE) {
            let cell = match (gcc, times.get(kernel, v)) {
                (Some(g), Some(t)) => speedup(g / t),
                (None, Some(t)) => format!("{} s", seconds(t)),
                _ => cell_status(&status, kernel, v),
            };
            // A Polly variant's time where Polly did not transform the kernel.
            let mark = if times.get(kernel, v).is_some() && !times.counts(kernel, v) {
                "*"
            } else {
                ""
            };
            let _ = write!(line, " {cell}{mark} |");
        }
        let best = times.best(kernel, cpu);
        let polly = times.best(kernel, &POLLY_VARIANTS);
        let _ = write!(
            line,
            " {} | {} | {} |",
            best.map(|b| b.0).unwrap_or("–"),
            match (gcc, best) {
                (Some(g), Some(b)) => speedup(g / b.1),
                _ => "–".into(),
            },
            match (polly, best) {
                (Some(p), Some(b)) => speedup(p.1 / b.1),
                (None, Some(_)) if times.polly_what.contains_key(kernel) => {
                    "Polly did not transform".into()
                }
                _ => "–".into(),
            }
        );
        let _ = writeln!(md, "{line}");
    }
}

/// Per kernel and Polly variant, whether Polly transformed the kernel (what
/// it did) or not (why not), and which variant is "best Polly": the reader
/// sees what every "vs best Polly" figure stands on.
fn render_polly(md: &mut String, times: &Times) {
    if times.polly_what.is_empty() {
        return;
    }
    let counted = times
        .polly_what
        .keys()
        .filter(|k| times.best(k, &POLLY_VARIANTS).is_some())
        .count();
    let _ = writeln!(
        md,
        "\n### Polly per kernel\n\n\
         Polly transformed {counted} of {} kernels in a variant that ran; only those have a \
         best Polly. `yes`: what Polly did to the kernel's own code (SCoP found, rescheduled, \
         tiled or strip-mined, matrix-multiplication pattern, parallel, code generated, \
         run-time check kept); `no`: why not; `unknown`: the analysis failed \
         (scripts/polly_evidence.py).\n",
        times.polly_what.len()
    );
    let mut header = "| kernel |".to_string();
    let mut rule = "|---|".to_string();
    for v in POLLY_VARIANTS {
        let _ = write!(header, " {v} |");
        rule.push_str("---|");
    }
    let _ = writeln!(md, "{header} best Polly |\n{rule}---|");
    for (kernel, whats) in &times.polly_what {
        let mut line = format!("| {kernel} |");
        for v in POLLY_VARIANTS {
            let cell = whats.get(v).map_or("–".to_string(), |(done, what)| {
                format!("{done}: {}", what.replace('|', "/"))
            });
            let _ = write!(line, " {cell} |");
        }
        let best = times.best(kernel, &POLLY_VARIANTS).map_or("–", |b| b.0);
        let _ = writeln!(md, "{line} {best} |");
    }
}

fn cell_status(status: &BTreeMap<(String, String), String>, kernel: &str, variant: &str) -> String {
    status
        .get(&(kernel.to_string(), variant.to_string()))
        .cloned()
        .unwrap_or_else(|| "–".to_string())
}

fn render_failures(md: &mut String, table: &Table) {
    let failed: Vec<&Vec<String>> = table
        .rows
        .iter()
        .filter(|r| table.get(r, "status") != "ok")
        .collect();
    if failed.is_empty() {
        return;
    }
    md.push_str("\n### Measurements that did not count\n\n| kernel | variant | status | note |\n|---|---|---|---|\n");
    for row in failed {
        let note = table.get(row, "note").replace('|', "\\|");
        let _ = writeln!(
            md,
            "| {} | {} | {} | {note} |",
            table.get(row, "kernel"),
            table.get(row, "variant"),
            table.get(row, "status")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::csv::parse;

    #[test]
    fn dates_are_utc_calendar_dates() {
        assert_eq!(utc_date(0), "1970-01-01 00:00");
        assert_eq!(utc_date(951_782_400 + 3_661), "2000-02-29 01:01");
        assert_eq!(utc_date(1_795_311_000), "2026-11-22 01:30");
    }

    #[test]
    fn summary_has_table2_and_figure8_numbers() {
        let lift = parse(
            "kernel,suite,status,time_s\na,blas,lifted,1\nb,blas,timeout,70\nc,dsp,lifted,3\n\
             d,dsp,partial,5\n",
        )
        .unwrap();
        let runtime = parse(
            "kernel,suite,variant,dataset,median_s,status,compile_s,note,polly_transformed\n\
             a,blas,gcc,L,8,ok,,,\na,blas,polly,L,4,ok,,,yes\na,blas,numpy,L,2,ok,,,\n\
             a,blas,jax,L,1,ok,0.5,,\nc,dsp,gcc,L,3,ok,,,\nc,dsp,numpy,L,,wrong-output,,x: off,\n",
        )
        .unwrap();
        let info = RunInfo {
            command: "tenslift bench --suite all".into(),
            dataset: "LARGE".into(),
            ..RunInfo::default()
        };
        let md = render(&info, &lift, Some(&runtime));
        assert!(md.contains("| blas | 2 | 1 | 0 | 50% | 1.00 |"), "{md}");
        // A partial lift counts toward the rate and the times.
        assert!(md.contains("| dsp | 2 | 1 | 1 | 100% | 4.00 |"), "{md}");
        assert!(md.contains("| **all** | 4 | 2 | 1 | 75% |"), "{md}");
        assert!(
            md.contains("vs gcc -O3: 8.00× geomean** over 1 kernels"),
            "{md}"
        );
        assert!(md.contains("vs best Polly: 4.00× geomean**"), "{md}");
        assert!(md.contains("| jax | 1 | 8.00× | 0.5000 |"), "{md}");
        assert!(md.contains("| c | numpy | wrong-output | x: off |"), "{md}");
        assert!(md.contains("tenslift bench --suite all"));
    }
}
