//! Equality saturation over every lifted corpus program: the TensIR that
//! `tests/lift_corpus.rs` snapshots for each lifted or partially lifted
//! kernel is parsed back, optimised under the analytic model and under the
//! committed calibration (`results/calibration-vm.json`), and every result
//! must be valid, never costlier, and equal to the original by symbolic
//! execution at small sizes. The tally (how many got cheaper) is printed;
//! `TENSLIFT_EQSAT_TABLE=FILE` writes the per-kernel table of
//! results/eqsat-*.md, `TENSLIFT_EQSAT_CHANGED=DIR` the changed programs
//! before and after (`<suite>__<name>.{before,after}.tensir`) for the
//! runtime comparison of `scripts/eqsat_runtime.py`. A second, sequential
//! run in reverse order must give the same programs and e-graphs.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use tenslift::eqsat::{optimize_program, Limits, Report, Stop};
use tenslift::spec::tensir::execute;
use tenslift::spec::Sizes;
use tenslift::synth::cost::{CostModel, CostTable};
use tenslift_targets::{parse_program, print_program, ParamKind, Program};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One lifted kernel of a corpus snapshot.
struct Lifted {
    suite: String,
    name: String,
    program: Program,
}

/// The lifted programs of one snapshot file: a record is `name: status`
/// with the program's lines indented by two spaces below it.
fn lifted_in(path: &Path) -> Vec<Lifted> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let suite = path
        .file_stem()
        .and_then(|s| s.to_str())
        .and_then(|s| s.strip_prefix("lift_corpus__corpus_"))
        .expect("a corpus snapshot name")
        .to_string();
    let body = text.splitn(3, "---\n").nth(2).expect("an insta header");
    let mut records: Vec<(String, bool, String)> = Vec::new();
    for line in body.lines() {
        match (line.strip_prefix("  "), records.last_mut()) {
            (Some(program_line), Some((_, true, program))) => {
                program.push_str(program_line);
                program.push('\n');
            }
            (Some(_), _) => {}
            (None, _) => {
                let (name, status) = line.split_once(": ").unwrap_or((line, ""));
                let lifted = status == "lifted" || status == "partial";
                records.push((name.to_string(), lifted, String::new()));
            }
        }
    }
    records
        .into_iter()
        .filter(|(_, lifted, _)| *lifted)
        .map(|(name, _, text)| {
            let file = format!("{suite}/{name}.tensir");
            let program = parse_program(&file, &text).unwrap_or_else(|e| panic!("{e}"));
            Lifted {
                suite: suite.clone(),
                name,
                program,
            }
        })
        .collect()
}

fn corpus() -> Vec<Lifted> {
    let dir = Path::new(ROOT).join("tests/snapshots");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/snapshots")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("lift_corpus__corpus_") && n.ends_with(".snap"))
        })
        .collect();
    files.sort();
    files.iter().flat_map(|f| lifted_in(f)).collect()
}

/// Small distinct sizes: a declared extent `ext_K` after every other size
/// (so `requires n <= ext_K` holds), the others `first`, `first + 1`, …;
/// with `wide`, the last size is 40 (an extent that holds blocks of the
/// others, as llama's `kv_dim`).
fn sizes_of(program: &Program, first: i64, wide: bool) -> Sizes {
    let names = program
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Size))
        .map(|p| p.name.to_string());
    let (ext, other): (Vec<String>, Vec<String>) = names.partition(|n| n.starts_with("ext_"));
    let other_len = other.len() as i64;
    let mut sizes: Sizes = other
        .into_iter()
        .enumerate()
        .map(|(i, n)| (n, first + i as i64))
        .collect();
    if let (true, Some(last)) = (
        wide,
        program
            .params
            .iter()
            .rev()
            .find(|p| matches!(p.kind, ParamKind::Size)),
    ) {
        sizes.insert(last.name.to_string(), 40);
    }
    for (j, n) in ext.into_iter().enumerate() {
        sizes.insert(n, first + 1 + other_len + j as i64);
    }
    sizes
}

/// The first size tuple the program executes at, if any.
fn executable_sizes(program: &Program) -> Option<Sizes> {
    [(3, false), (2, true)]
        .into_iter()
        .map(|(first, wide)| sizes_of(program, first, wide))
        .find(|s| execute(program, s).is_ok())
}

/// One kernel's outcome under one model.
struct Outcome {
    report: Report,
    after: Program,
    /// `None` when the original does not execute at the test sizes.
    equal: Option<bool>,
}

fn optimise(lifted: &Lifted, model: &CostModel) -> Outcome {
    let checked = executable_sizes(&lifted.program);
    let sizes = checked
        .clone()
        .unwrap_or_else(|| sizes_of(&lifted.program, 3, false));
    let (after, report) = optimize_program(&lifted.program, model, &sizes, &Limits::default())
        .unwrap_or_else(|e| panic!("{}/{}: {e}", lifted.suite, lifted.name));
    let equal = checked.map(|at| {
        let before = execute(&lifted.program, &at).map(|b| b.outputs);
        before.is_ok() && execute(&after, &at).map(|a| a.outputs).ok() == before.ok()
    });
    Outcome {
        report,
        after,
        equal,
    }
}

fn calibrated() -> CostModel {
    let path = Path::new(ROOT).join("results/calibration-vm.json");
    CostModel::Calibrated(CostTable::load(&path).expect("the committed calibration loads"))
}

/// Every outcome under `model` is valid, never costlier, and keeps its
/// value; prints how many got cheaper.
fn check(model: &str, kernels: &[Lifted], results: &[Outcome]) {
    for (k, o) in kernels.iter().zip(results) {
        let what = format!("{model} {}/{}", k.suite, k.name);
        assert!(
            o.report.cost_after <= o.report.cost_before,
            "{what} got costlier"
        );
        assert!(o.after.validate().is_ok(), "{what}: invalid program");
        assert_ne!(o.report.stop, Stop::SafetyTimeLimit, "{what}");
        assert_eq!(o.report.extraction_failures, 0, "{what}: extraction failed");
        let after = print_program(&o.after);
        assert_ne!(o.equal, Some(false), "{what} changed value:\n{after}");
    }
    let cheaper = results
        .iter()
        .filter(|o| o.report.cost_after < o.report.cost_before)
        .count();
    let unchecked: Vec<&str> = kernels
        .iter()
        .zip(results)
        .filter(|(_, o)| o.equal.is_none())
        .map(|(k, _)| k.name.as_str())
        .collect();
    eprintln!(
        "{model}: {cheaper} of {} programs cheaper; not executable at the test sizes: {}",
        kernels.len(),
        unchecked.join(", ")
    );
}

/// The same programs one at a time, last first, give the same results
/// (the limits count work, and nothing depends on thread or order).
fn check_run_again(kernels: &[Lifted], model: &CostModel, first: &[Outcome]) {
    let again: Vec<Outcome> = kernels.iter().rev().map(|k| optimise(k, model)).collect();
    let facts = |o: &Outcome| {
        let r = &o.report;
        (r.nodes, r.classes, r.iterations, r.applications.clone())
    };
    for ((k, one), two) in kernels.iter().zip(first).zip(again.iter().rev()) {
        let what = format!("{}/{}", k.suite, k.name);
        assert_eq!(one.after, two.after, "{what} differs between runs");
        assert_eq!(facts(one), facts(two), "{what} saturated differently");
    }
}

#[test]
fn eqsat_over_the_corpus_never_costs_more_and_keeps_every_value() {
    let kernels = corpus();
    assert!(
        kernels.len() > 150,
        "the corpus snapshots lost their programs"
    );
    let models = [
        ("analytic", CostModel::Analytic),
        ("calibrated", calibrated()),
    ];
    let outcomes: Vec<Vec<Outcome>> = models
        .iter()
        .map(|(_, model)| kernels.par_iter().map(|k| optimise(k, model)).collect())
        .collect();
    for ((model, _), results) in models.iter().zip(&outcomes) {
        check(model, &kernels, results);
    }
    check_run_again(&kernels, &models[0].1, &outcomes[0]);
    if let Ok(path) = std::env::var("TENSLIFT_EQSAT_TABLE") {
        std::fs::write(path, table(&kernels, &outcomes)).expect("writes the table");
    }
    if let Ok(dir) = std::env::var("TENSLIFT_EQSAT_CHANGED") {
        write_changed(Path::new(&dir), &kernels, &outcomes[1]);
    }
}

/// The per-kernel Markdown table (both models; the e-graph and time of
/// the calibrated run).
fn table(kernels: &[Lifted], outcomes: &[Vec<Outcome>]) -> String {
    let mut out = String::from(
        "| suite | kernel | analytic before | after | calibrated before (s) | after (s) | saving | \
         nodes | classes | iterations | stop | ms |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n",
    );
    for (i, k) in kernels.iter().enumerate() {
        let (a, c) = (&outcomes[0][i].report, &outcomes[1][i].report);
        let saving = match c.cost_before > 0.0 && c.cost_after < c.cost_before {
            true => format!("**{:.0} %**", 100.0 * (1.0 - c.cost_after / c.cost_before)),
            false => String::new(),
        };
        out.push_str(&format!(
            "| {} | {} | {:.3e} | {:.3e} | {:.3e} | {:.3e} | {saving} | {} | {} | {} | {} | {:.1} |\n",
            k.suite,
            k.name,
            a.cost_before,
            a.cost_after,
            c.cost_before,
            c.cost_after,
            c.nodes,
            c.classes,
            c.iterations,
            c.stop,
            c.seconds * 1e3,
        ));
    }
    out
}

fn write_changed(dir: &Path, kernels: &[Lifted], outcomes: &[Outcome]) {
    std::fs::create_dir_all(dir).expect("creates the directory");
    for (k, o) in kernels.iter().zip(outcomes) {
        if o.report.rewritten == 0 {
            continue;
        }
        let stem = dir.join(format!("{}__{}", k.suite, k.name));
        std::fs::write(
            stem.with_extension("before.tensir"),
            print_program(&k.program),
        )
        .expect("writes");
        std::fs::write(stem.with_extension("after.tensir"), print_program(&o.after))
            .expect("writes");
    }
}
