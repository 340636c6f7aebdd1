//! The whole-pipeline differential property: a generated kernel, lifted by
//! the real `tenslift lift --target numpy`, computes what the gcc-compiled C
//! computes on random inputs. The C side is the verifier's generated driver
//! (`tenslift_verify::differential::cdriver`, the same one `tenslift verify`
//! uses for files outside the manifest); the NumPy side runs every kernel of
//! a batch in one Python process (`differential::compare_each`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tenslift_frontend::{extract, Options};
use tenslift_targets::{parse_program, Program, Target};
use tenslift_verify::differential::cdriver::{run_generated, CompileFlags, DriverSetup};
use tenslift_verify::differential::{compare_each, CReference, Checked, Verdict};

use super::kernel::Kernel;
use super::proc::{classify, python, run_tenslift, Finding};

/// What happened to one generated kernel.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The lifted NumPy agrees with the C.
    Agrees,
    /// Refused or not lifted (a clean exit code and its status or message).
    NotLifted(String),
    /// Nothing to compare (the C produced NaN/infinity, or no C reference).
    Skipped(String),
    /// The binary panicked, crashed or hung on it.
    Crash(Finding, String),
    /// A lifted program whose output differs from the C: a finding.
    Differs { program: String, reason: String },
}

/// Lift-search seconds per kernel (`--timeout`).
pub const LIFT_TIMEOUT_S: u64 = 10;

/// Lifts, runs and compares every kernel of `batch` (distinct names) in
/// `dir`: one `tenslift lift` process for the batch; kernels it gave no
/// record for (the frontend refuses a file as a whole when one function is
/// refused) or a crash of that process are retried one `--function` at a
/// time, so each outcome is the kernel's own.
pub fn check_batch(batch: &[Kernel], dir: &Path) -> Vec<Outcome> {
    std::fs::create_dir_all(dir).expect("scratch dir");
    let file = dir.join("kernels.c");
    let source: String = std::iter::once("#include <math.h>\n\n".to_string())
        .chain(batch.iter().map(|k| k.to_c() + "\n"))
        .collect();
    std::fs::write(&file, source).expect("write kernels");
    let named: Vec<Named> = batch
        .iter()
        .map(|k| Named {
            name: k.name.clone(),
            sizes: k.sizes(),
        })
        .collect();
    check_file(&file, &named, dir)
}

/// A kernel of a C file and the sizes to run it at.
#[derive(Clone, Debug)]
pub struct Named {
    pub name: String,
    pub sizes: BTreeMap<String, i64>,
}

/// [`check_batch`] for kernels already in `file` (the fixtures).
pub fn check_file(file: &Path, batch: &[Named], dir: &Path) -> Vec<Outcome> {
    let file = file.to_path_buf();
    let mut lifted = lift_file(&file, &[], dir).unwrap_or_default();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; batch.len()];
    for (i, k) in batch.iter().enumerate() {
        if lifted.contains_key(&k.name) {
            continue;
        }
        match lift_file(&file, &[&k.name], dir) {
            Ok(records) => lifted.extend(records),
            Err((finding, text)) => outcomes[i] = Some(Outcome::Crash(finding, text)),
        }
    }
    let mut to_compare = Vec::new();
    for (i, k) in batch.iter().enumerate() {
        if outcomes[i].is_some() {
            continue;
        }
        match lifted_pair(&file, &k.name, lifted.get(&k.name)) {
            Ok(pair) => to_compare.push((i, pair.0, pair.1, pair.2)),
            Err(o) => outcomes[i] = Some(o),
        }
    }
    compare(batch, &file, dir, &to_compare, &mut outcomes);
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or(Outcome::Skipped("not compared".into())))
        .collect()
}

/// The kernel's loop IR (extracted in-process) and its lifted program
/// (parsed from the printed TensIR), or why there is nothing to compare.
fn lifted_pair(
    file: &Path,
    name: &str,
    record: Option<&Value>,
) -> Result<(tenslift_frontend::ir::Kernel, Program, String), Outcome> {
    let Some(text) = record.and_then(lifted_program) else {
        let why = record
            .map(not_lifted_reason)
            .unwrap_or_else(|| "no record".into());
        return Err(Outcome::NotLifted(why));
    };
    let options = Options {
        functions: vec![name.to_string()],
        ..Options::default()
    };
    let unit = extract(file.to_str().expect("utf-8 path"), &options)
        .map_err(|e| Outcome::NotLifted(format!("lifted, but extract fails in-process: {e}")))?;
    let Some(loop_ir) = unit.kernels.into_iter().find(|c| c.name == name) else {
        return Err(Outcome::NotLifted(
            "lifted, but not extracted in-process".into(),
        ));
    };
    match parse_program("lifted.tensir", &text) {
        Ok(p) => Ok((loop_ir, p, text)),
        Err(e) => {
            let reason = format!("the printed program does not parse: {e}");
            Err(Outcome::Differs {
                program: text,
                reason,
            })
        }
    }
}

type Lifted = BTreeMap<String, Value>;

/// `tenslift lift FILE --target numpy --json`: the JSON record per function,
/// or the defect the run showed.
fn lift_file(file: &Path, functions: &[&str], dir: &Path) -> Result<Lifted, (Finding, String)> {
    let out = dir.join(format!("lifted{}.py", functions.join("_")));
    let timeout = LIFT_TIMEOUT_S.to_string();
    let (f, o) = (file.to_str().expect("utf-8"), out.to_str().expect("utf-8"));
    let mut args = vec![
        "lift",
        f,
        "--target",
        "numpy",
        "--json",
        "--timeout",
        &timeout,
        "-o",
        o,
    ];
    for name in functions {
        args.extend(["--function", name]);
    }
    let limit = Duration::from_secs(60 + 3 * LIFT_TIMEOUT_S * functions.len().max(20) as u64);
    let run = run_tenslift(&args, limit);
    if let Some(finding) = classify(&run, Some(&out)) {
        return Err((finding, format!("{:?}: {}", run.ending, tail(&run.stderr))));
    }
    let mut records = Lifted::new();
    for line in run.stdout.lines() {
        if let Ok(v) = serde_json::from_str::<Value>(line) {
            // A refusal of the whole file names no function.
            let only = functions.first().copied().unwrap_or_default();
            let name = v["function"].as_str().unwrap_or(only).to_string();
            records.insert(name, v);
        }
    }
    Ok(records)
}

fn lifted_program(record: &Value) -> Option<String> {
    (record["status"] == "lifted").then(|| record["program"].as_str().map(str::to_string))?
}

fn not_lifted_reason(record: &Value) -> String {
    let status = record["status"].as_str().unwrap_or("?");
    let message = record["message"].as_str().unwrap_or_default();
    format!("{status}: {}", message.lines().next().unwrap_or_default())
}

pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(8)..].join("\n")
}

type ToCompare = Vec<(usize, tenslift_frontend::ir::Kernel, Program, String)>;

/// Builds the C reference of each lifted kernel (gcc), then runs all their
/// NumPy programs in one Python process and records each verdict.
fn compare(
    batch: &[Named],
    file: &Path,
    dir: &Path,
    lifted: &ToCompare,
    outcomes: &mut [Option<Outcome>],
) {
    let flags = CompileFlags::default();
    let mut references: Vec<(usize, CReference)> = Vec::new();
    for (slot, (i, loop_ir, program, _)) in lifted.iter().enumerate() {
        let workdir = dir.join(format!("c{i}"));
        let setup = DriverSetup {
            source: file,
            flags: &flags,
            workdir: &workdir,
        };
        let sizes = batch[*i].sizes.clone();
        match run_generated(&setup, loop_ir, program, &sizes, *i as u64, "gen") {
            Ok(r) if non_finite(&r) => {
                outcomes[*i] = Some(Outcome::Skipped("C output not finite".into()));
            }
            Ok(r) => references.push((slot, r)),
            Err(e) => outcomes[*i] = Some(Outcome::Skipped(format!("no C reference: {e}"))),
        }
    }
    let checked: Vec<Checked> = references
        .iter()
        .map(|(slot, r)| Checked {
            kernel: &lifted[*slot].1,
            program: &lifted[*slot].2,
            reference: r,
        })
        .collect();
    let python = python();
    let result = compare_each(&checked, &[Target::Numpy], &python, &dir.join("py"), None);
    if result.runs.len() != checked.len() {
        // One case could not even be prepared: compare each on its own.
        for (n, c) in checked.iter().enumerate() {
            let one = compare_each(
                std::slice::from_ref(c),
                &[Target::Numpy],
                &python,
                &dir.join(format!("py{n}")),
                None,
            );
            let (i, text) = (lifted[references[n].0].0, &lifted[references[n].0].3);
            outcomes[i] = Some(verdict(one.verdict, &one.reason, text));
        }
        return;
    }
    for (n, run) in result.runs.iter().enumerate() {
        let (i, text) = (lifted[references[n].0].0, &lifted[references[n].0].3);
        outcomes[i] = Some(verdict(run.verdict, &run.reason, text));
    }
}

fn verdict(v: Verdict, reason: &str, program: &str) -> Outcome {
    match v {
        Verdict::Pass => Outcome::Agrees,
        Verdict::Skipped => Outcome::Skipped(reason.to_string()),
        Verdict::Fail => Outcome::Differs {
            program: program.to_string(),
            reason: reason.to_string(),
        },
    }
}

fn non_finite(r: &CReference) -> bool {
    use tenslift_targets::interp::Data;
    r.outputs
        .values()
        .any(|a| matches!(&a.data, Data::Float(v) if v.iter().any(|x| !x.is_finite())))
}
