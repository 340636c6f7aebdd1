//! The crash-finding campaign over three targets: `frontend` (mutated and
//! bomb C through `tenslift extract`/`lift`), `search` (grammar-generated
//! kernels, some with mutated operators, through `tenslift lift`, so the
//! search itself is fuzzed) and `tensir` (generated and mutated TensIR
//! through `tenslift emit` for all four targets). Every input runs in a
//! child process with a wall-clock limit; panics, signals, hangs and
//! partial output files are findings, minimised by delta debugging over
//! lines and then tokens and written out as fixtures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::kernel::generate;
use super::mutate::{bomb, corpus, mutate_c, mutate_tensir};
use super::proc::{classify, run_tenslift, Finding, Run};
use super::rng::Rng;

pub const TARGETS: [&str; 3] = ["frontend", "search", "tensir"];

/// One input and how to run it.
#[derive(Clone, Debug)]
pub struct Input {
    pub target: &'static str,
    pub what: String,
    pub bytes: Vec<u8>,
    /// `extract`, `lift` or `emit-<target>`.
    pub command: String,
}

pub struct Seeds {
    c: Vec<(String, Vec<u8>)>,
    tensir: Vec<(String, Vec<u8>)>,
}

impl Seeds {
    pub fn load() -> Seeds {
        Seeds {
            c: corpus("c"),
            tensir: corpus("tensir"),
        }
    }
}

/// Input `index` of `target` in campaign `seed` (deterministic).
pub fn input(seeds: &Seeds, target: &'static str, seed: u64, index: u64, heavy: bool) -> Input {
    let mut rng = Rng::for_item(seed, target, index);
    let (what, bytes, command) = match target {
        "frontend" if rng.chance(15) => {
            let (w, b) = bomb(&mut rng, heavy);
            (w, b, "extract".to_string())
        }
        "frontend" => {
            let (w, b) = mutate_c(&mut rng, &seeds.c);
            let cmd = if rng.chance(25) { "lift" } else { "extract" };
            (w, b, cmd.to_string())
        }
        "search" => {
            let k = generate(&mut rng, "fz");
            let mut bytes = format!("#include <math.h>\n{}", k.to_c()).into_bytes();
            let mut what = format!("kernel {index}");
            if rng.chance(25) {
                let corpus = vec![(what.clone(), bytes)];
                (what, bytes) = mutate_c(&mut rng, &corpus);
            }
            (what, bytes, "lift".to_string())
        }
        _ => {
            let (w, b) = mutate_tensir(&mut rng, &seeds.tensir);
            let t = *rng.pick(&["numpy", "jax", "pytorch", "hlo"]);
            (w, b, format!("emit-{t}"))
        }
    };
    Input {
        target,
        what,
        bytes,
        command,
    }
}

/// Writes `bytes` into `dir` and runs `command` on it: the run and the
/// output file the command was asked to write.
pub fn execute(command: &str, bytes: &[u8], dir: &Path) -> (Run, PathBuf) {
    let ext = if command.starts_with("emit") {
        "tensir"
    } else {
        "c"
    };
    let file = dir.join(format!("input.{ext}"));
    let out = dir.join("out.txt");
    let _ = std::fs::remove_file(&out);
    std::fs::write(&file, bytes).expect("write input");
    let (f, o) = (file.to_str().expect("utf-8"), out.to_str().expect("utf-8"));
    let (args, limit): (Vec<&str>, u64) = match command {
        // The tool's own parse timeout (exit 7) ends well inside the limit:
        // only a run that outlives both is a hang.
        "extract" => (vec!["extract", f, "--timeout", "5"], 20),
        "lift" => (
            vec!["lift", f, "--target", "numpy", "--timeout", "3", "-o", o],
            90,
        ),
        emit => {
            let target = emit.trim_start_matches("emit-");
            let mut a = vec!["emit", f, "--target", target, "-o", o];
            if target == "hlo" {
                a.extend(["--size", "n=5", "--size", "m=7", "--size", "tsteps=2"]);
            }
            (a, 30)
        }
    };
    (run_tenslift(&args, Duration::from_secs(limit)), out)
}

pub fn finding_of(command: &str, bytes: &[u8], dir: &Path) -> (Option<Finding>, Run) {
    let (run, out) = execute(command, bytes, dir);
    (classify(&run, Some(&out)), run)
}

/// What identifies a defect across inputs: the class and, for a panic, the
/// location it names; for other classes the target and command.
pub fn signature(input: &Input, finding: Finding, run: &Run) -> String {
    let at = run.stderr.lines().find_map(|l| {
        l.split_once("panicked at ")
            .map(|(_, rest)| rest.split(':').next().unwrap_or(rest).to_string())
    });
    match (finding, at) {
        (Finding::Panic, Some(at)) => format!("panic at {at}"),
        _ => format!("{} in {} {}", finding.name(), input.target, input.command),
    }
}

/// Delta debugging (ddmin by complement) over `units` joined by `sep`,
/// keeping any smaller text for which `fails` still holds, within `budget`
/// runs.
pub fn ddmin(
    units: Vec<String>,
    sep: &str,
    budget: &mut usize,
    fails: &mut dyn FnMut(&[u8]) -> bool,
) -> Vec<String> {
    let mut units = units;
    let mut chunks = 2usize;
    while units.len() >= 2 && *budget > 0 {
        let size = units.len().div_ceil(chunks);
        let mut reduced = false;
        for start in (0..units.len()).step_by(size) {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            let candidate: Vec<String> = units[..start]
                .iter()
                .chain(units[(start + size).min(units.len())..].iter())
                .cloned()
                .collect();
            if fails(candidate.join(sep).as_bytes()) {
                units = candidate;
                chunks = (chunks - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if size == 1 {
                break;
            }
            chunks = (chunks * 2).min(units.len());
        }
    }
    units
}

/// The smallest text found that shows the same finding: by lines, then by
/// whitespace-separated tokens. Hangs are not minimised (each try costs the
/// whole limit).
pub fn minimise_input(input: &Input, finding: Finding, dir: &Path, budget: usize) -> Vec<u8> {
    if finding == Finding::Hang {
        return input.bytes.clone();
    }
    let mut budget = budget;
    let mut fails = |b: &[u8]| finding_of(&input.command, b, dir).0 == Some(finding);
    let text = String::from_utf8_lossy(&input.bytes).into_owned();
    let lines = ddmin(
        text.lines().map(str::to_string).collect(),
        "\n",
        &mut budget,
        &mut fails,
    );
    let joined = lines.join("\n");
    let tokens = ddmin(
        joined.split(' ').map(str::to_string).collect(),
        " ",
        &mut budget,
        &mut fails,
    );
    let small = tokens.join(" ") + "\n";
    if fails(small.as_bytes()) {
        small.into_bytes()
    } else {
        input.bytes.clone()
    }
}

/// A finding, minimised.
#[derive(Clone, Debug)]
pub struct Found {
    pub input: Input,
    pub index: u64,
    pub finding: Finding,
    pub signature: String,
    pub stderr: String,
    pub minimal: Vec<u8>,
}

#[derive(Default, Debug)]
pub struct Report {
    pub runs: BTreeMap<&'static str, usize>,
    /// Inputs per target and exit code (`Exit(0)`, `Exit(1)`, ...).
    pub endings: BTreeMap<String, usize>,
    pub seconds: f64,
    pub findings: Vec<Found>,
}

/// Runs `per_target` inputs of each target (or until `deadline`), two at a
/// time; findings are minimised (at most `keep` per signature).
pub fn run_campaign(
    seed: u64,
    per_target: u64,
    deadline: Option<Instant>,
    heavy: bool,
    scratch: &Path,
) -> Report {
    let seeds = Seeds::load();
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let report = Mutex::new(Report::default());
    std::thread::scope(|s| {
        for w in 0..2 {
            let (seeds, next, report) = (&seeds, &next, &report);
            s.spawn(move || {
                let dir = scratch.join(format!("worker{w}"));
                std::fs::create_dir_all(&dir).expect("scratch");
                loop {
                    let n = next.fetch_add(1, Ordering::SeqCst) as u64;
                    let (index, target) = (n / 3, TARGETS[(n % 3) as usize]);
                    if index >= per_target || deadline.is_some_and(|d| Instant::now() > d) {
                        break;
                    }
                    one(seeds, target, seed, index, heavy, &dir, report);
                }
            });
        }
    });
    let mut report = report.into_inner().expect("report");
    report.seconds = start.elapsed().as_secs_f64();
    report
}

const KEEP_PER_SIGNATURE: usize = 2;

fn one(
    seeds: &Seeds,
    target: &'static str,
    seed: u64,
    index: u64,
    heavy: bool,
    dir: &Path,
    report: &Mutex<Report>,
) {
    let input = input(seeds, target, seed, index, heavy);
    if known_hang(&input, report) {
        let mut r = report.lock().expect("report");
        *r.endings
            .entry(format!("{target} skipped: a bomb kind that hung twice"))
            .or_default() += 1;
        return;
    }
    let (mut finding, mut run) = finding_of(&input.command, &input.bytes, dir);
    if finding == Some(Finding::Hang) && !heavy {
        // In CI a loaded machine can stall a run: a real hang hangs twice.
        (finding, run) = finding_of(&input.command, &input.bytes, dir);
    }
    {
        let mut r = report.lock().expect("report");
        *r.runs.entry(target).or_default() += 1;
        *r.endings
            .entry(format!("{target} {} {:?}", input.command, run.ending))
            .or_default() += 1;
    }
    let Some(finding) = finding else { return };
    let signature = signature(&input, finding, &run);
    let seen = report
        .lock()
        .expect("report")
        .findings
        .iter()
        .filter(|f| f.signature == signature)
        .count();
    let minimal = if seen < KEEP_PER_SIGNATURE {
        minimise_input(&input, finding, dir, 60)
    } else {
        input.bytes.clone()
    };
    let stderr = tail(&run.stderr);
    report.lock().expect("report").findings.push(Found {
        input,
        index,
        finding,
        signature,
        stderr,
        minimal,
    });
}

/// The kind of a bomb (`bomb: include /dev/zero`, `bomb: exponential
/// macro`): its description without the numbers.
fn bomb_kind(what: &str) -> Option<String> {
    what.starts_with("bomb:").then(|| {
        what.split(|c: char| c.is_ascii_digit())
            .next()
            .unwrap_or(what)
            .to_string()
    })
}

/// Whether a bomb of this kind already hung [`KEEP_PER_SIGNATURE`] times: a
/// hang costs the whole time limit, and more of the same say nothing new.
fn known_hang(input: &Input, report: &Mutex<Report>) -> bool {
    let Some(kind) = bomb_kind(&input.what) else {
        return false;
    };
    let r = report.lock().expect("report");
    let same = r
        .findings
        .iter()
        .filter(|f| {
            f.finding == Finding::Hang && bomb_kind(&f.input.what).as_deref() == Some(&kind)
        })
        .count();
    same >= KEEP_PER_SIGNATURE
}

pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(6)..].join("\n")
}
