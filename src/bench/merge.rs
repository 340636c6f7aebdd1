//! `--merge DIR...` and `--import BUNDLE`: fold result directories (shards
//! of one run, or a bundle measured on a GPU machine) into one, then
//! rewrite run.json and summary.md. For the same kernel (lift.csv) or the
//! same kernel, variant and dataset (runtime.csv) a later directory wins.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use super::csv::Table;
use super::run::{finish, LIFT_COLUMNS};
use super::summary::RunInfo;
use super::BenchError;

/// Columns runtime.csv always has (scripts/bench_runner.py writes them).
pub const RUNTIME_COLUMNS: [&str; 14] = [
    "kernel",
    "suite",
    "variant",
    "dataset",
    "median_s",
    "status",
    "runs",
    "min_s",
    "compile_s",
    "e2e_median_s",
    "device",
    "note",
    "polly_transformed",
    "polly_what",
];

/// Rows of `tables` combined; rows with the same key keep the last one,
/// in the place the first one had.
pub fn combine(columns: &[&str], key: &[&str], tables: &[Table]) -> Table {
    let mut merged = Table::new(columns);
    for table in tables {
        merged.append(table);
    }
    let mut index: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for row in merged.rows.drain(..) {
        let k: Vec<String> = key
            .iter()
            .map(|c| {
                columns
                    .iter()
                    .position(|h| h == c)
                    .map(|i| row[i].clone())
                    .unwrap_or_default()
            })
            .collect();
        match index.get(&k) {
            Some(&i) => rows[i] = row,
            None => {
                index.insert(k, rows.len());
                rows.push(row);
            }
        }
    }
    merged.rows = rows;
    merged
}

fn read_optional(path: &Path) -> Result<Option<Table>, BenchError> {
    if path.is_file() {
        Table::read(path).map(Some)
    } else {
        Ok(None)
    }
}

fn read_info(dir: &Path) -> Option<RunInfo> {
    let text = std::fs::read_to_string(dir.join("run.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// One result directory's tables: lift.csv, and runtime rows from
/// runtime.csv, or for a bundle c_runtime.csv plus results/runtime.csv.
fn tables_of(dir: &Path) -> Result<(Option<Table>, Vec<Table>), BenchError> {
    let lift = read_optional(&dir.join("lift.csv"))?;
    let mut runtime = Vec::new();
    for name in ["runtime.csv", "c_runtime.csv", "results/runtime.csv"] {
        if let Some(t) = read_optional(&dir.join(name))? {
            runtime.push(t);
        }
    }
    Ok((lift, runtime))
}

/// Puts rows in the order of the whole run's kernels, as one process
/// would have written them (shards hold every N-th kernel). The sort is
/// stable, so the rows of one kernel keep their order; kernels outside
/// the selection go last.
fn order_by_selection(table: &mut Table, selection: &[String]) {
    let Some(col) = table.column("kernel") else {
        return;
    };
    if selection.is_empty() {
        return;
    }
    let position: HashMap<&str, usize> = selection
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    table
        .rows
        .sort_by_key(|r| position.get(r[col].as_str()).copied().unwrap_or(usize::MAX));
}

/// Kernels of the selection without a lift.csv row: a shard that is not
/// in the merge, or failed before writing its results.
fn missing(lift: &Table, selection: &[String]) -> Vec<String> {
    let Some(col) = lift.column("kernel").filter(|_| !lift.rows.is_empty()) else {
        return Vec::new();
    };
    let present: HashSet<&str> = lift.rows.iter().map(|r| r[col].as_str()).collect();
    selection
        .iter()
        .filter(|k| !present.contains(k.as_str()))
        .cloned()
        .collect()
}

/// Merges `inputs` into `out` (which may be one of them) and rewrites the
/// summary. `command` is the merge command line.
pub fn merge(inputs: &[&Path], out: &Path, command: &str) -> Result<RunInfo, BenchError> {
    if inputs.is_empty() {
        return Err(BenchError::Usage(
            "--merge needs at least one directory".into(),
        ));
    }
    let mut lifts = Vec::new();
    let mut runtimes = Vec::new();
    let mut info: Option<RunInfo> = None;
    let mut merged_from = Vec::new();
    for dir in inputs {
        if !dir.is_dir() {
            return Err(BenchError::Usage(format!(
                "{}: not a directory",
                dir.display()
            )));
        }
        let (lift, runtime) = tables_of(dir)?;
        if lift.is_none() && runtime.is_empty() {
            return Err(BenchError::Usage(format!(
                "{}: no lift.csv or runtime.csv: not a result directory",
                dir.display()
            )));
        }
        lifts.extend(lift);
        runtimes.extend(runtime);
        let part = read_info(dir).unwrap_or_default();
        merged_from.push(format!("{} ({})", dir.display(), part.machine));
        info = Some(match info {
            None => part,
            // Shards run side by side: the merged run took as long as the slowest.
            Some(mut acc) => {
                acc.lift_wall_s = acc.lift_wall_s.max(part.lift_wall_s);
                acc.runtime_wall_s = acc.runtime_wall_s.max(part.runtime_wall_s);
                acc.wall_s = acc.wall_s.max(part.wall_s);
                if acc.dataset.is_empty() {
                    acc.dataset = part.dataset;
                }
                if acc.selection.is_empty() {
                    acc.selection = part.selection;
                }
                acc
            }
        });
    }
    let mut info = info.unwrap_or_default();
    info.command = format!("{}\n# merged by: {command}", info.command);
    info.merged_from = merged_from;
    info.shard = None;
    std::fs::create_dir_all(out).map_err(BenchError::io(out))?;
    let mut lift = combine(&LIFT_COLUMNS, &["kernel"], &lifts);
    order_by_selection(&mut lift, &info.selection);
    info.missing = missing(&lift, &info.selection);
    lift.write(&out.join("lift.csv"))?;
    let mut runtime = combine(
        &RUNTIME_COLUMNS,
        &["kernel", "variant", "dataset"],
        &runtimes,
    );
    order_by_selection(&mut runtime, &info.selection);
    runtime.write(&out.join("runtime.csv"))?;
    let gpu = inputs
        .iter()
        .filter_map(|d| std::fs::read_to_string(d.join("results").join("device.txt")).ok())
        .map(|t| t.trim().to_string())
        .collect::<Vec<_>>();
    if !gpu.is_empty() {
        info.machine = format!("{}; GPU runs on: {}", info.machine, gpu.join(", "));
    }
    finish(
        out,
        &info,
        &lift,
        (!runtime.rows.is_empty()).then_some(&runtime),
    )?;
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::csv::parse;

    #[test]
    fn later_rows_replace_earlier_ones_with_the_same_key() {
        let first = parse("kernel,variant,dataset,median_s\na,gcc,L,1\na,numpy,L,2\n").unwrap();
        let second = parse("variant,kernel,dataset,median_s\nnumpy,a,L,3\njax,a,L,4\n").unwrap();
        let merged = combine(
            &["kernel", "variant", "dataset", "median_s"],
            &["kernel", "variant", "dataset"],
            &[first, second],
        );
        let cells: Vec<String> = merged.rows.iter().map(|r| r.join(" ")).collect();
        assert_eq!(cells, vec!["a gcc L 1", "a numpy L 3", "a jax L 4"]);
    }

    #[test]
    fn shard_rows_come_back_in_run_order_and_absent_kernels_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let selection: Vec<String> = ["c", "a", "d", "b"].map(String::from).to_vec();
        let mut parts = Vec::new();
        for (shard, kernels) in [("1/3", ["a", "b"]), ("2/3", ["c", "x"])] {
            let d = dir.path().join(shard.replace('/', "of"));
            std::fs::create_dir_all(&d).unwrap();
            let rows: String = kernels.iter().map(|k| format!("{k},s,lifted\n")).collect();
            std::fs::write(d.join("lift.csv"), format!("kernel,suite,status\n{rows}")).unwrap();
            let info = RunInfo {
                selection: selection.clone(),
                shard: Some(shard.into()),
                ..RunInfo::default()
            };
            std::fs::write(d.join("run.json"), serde_json::to_string(&info).unwrap()).unwrap();
            parts.push(d);
        }
        let out = dir.path().join("m");
        let inputs: Vec<&Path> = parts.iter().map(|p| p.as_path()).collect();
        let info = merge(&inputs, &out, "merge").unwrap();
        let lift = Table::read(&out.join("lift.csv")).unwrap();
        let names: Vec<&str> = lift.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(
            names,
            ["c", "a", "b", "x"],
            "run order, unknown kernels last"
        );
        assert_eq!(info.missing, ["d"]);
        assert_eq!(info.shard, None);
        let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert!(summary.contains("**Incomplete:** 1 kernel(s)"), "{summary}");
    }

    #[test]
    fn merging_two_shards_gives_one_summary() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, out) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("m"),
        );
        for (d, kernel) in [(&a, "k1"), (&b, "k2")] {
            std::fs::create_dir_all(d).unwrap();
            std::fs::write(
                d.join("lift.csv"),
                format!("kernel,suite,status,time_s\n{kernel},blas,lifted,0.5\n"),
            )
            .unwrap();
            std::fs::write(
                d.join("runtime.csv"),
                format!(
                    "kernel,suite,variant,dataset,median_s,status\n\
                     {kernel},blas,gcc,MINI,4,ok\n{kernel},blas,numpy,MINI,1,ok\n"
                ),
            )
            .unwrap();
        }
        merge(
            &[a.as_path(), b.as_path()],
            &out,
            "tenslift bench --merge a b",
        )
        .unwrap();
        let runtime = Table::read(&out.join("runtime.csv")).unwrap();
        assert_eq!(runtime.rows.len(), 4);
        let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
        assert!(summary.contains("| blas | 2 | 2 | 0 | 100% |"), "{summary}");
        assert!(
            summary.contains("4.00× geomean** over 2 kernels"),
            "{summary}"
        );
        assert!(merge(&[dir.path()], &out, "x").is_err(), "not a result dir");
    }
}
