//! End-to-end test of scripts/slurm/ on a real Slurm: a one-node cluster on
//! localhost (scripts/slurm/local-cluster.sh starts munged, slurmctld and
//! slurmd from Debian's packages) runs the BLAS suite, lift only at MINI, as
//! a job array of 3 shards (scripts/slurm/submit.sh) and a merge job that
//! waits for them; the merged lift.csv must list the kernels, statuses and
//! programs of a one-process run, in the same order.
//!
//! In CI (`CI=true`) the cluster must start: scripts/setup.sh installs
//! slurm-wlm and munge. Elsewhere the test is skipped, with the reason
//! printed, when Slurm is not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The whole array and merge take about 30 s on an idle 2-core machine.
const JOB_TIMEOUT: Duration = Duration::from_secs(300);

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

fn cluster_script() -> PathBuf {
    Path::new(ROOT).join("scripts/slurm/local-cluster.sh")
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    out
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The cluster for this test; stopped at the end if this test started it.
struct Cluster {
    slurm_conf: String,
    started_here: bool,
}

impl Cluster {
    fn start() -> Cluster {
        let running = run(Command::new(cluster_script()).arg("status"))
            .status
            .success();
        if !running {
            let out = run(Command::new(cluster_script()).arg("start"));
            assert!(
                out.status.success(),
                "local-cluster.sh start failed:\n{}",
                text(&out)
            );
        }
        let env = run(Command::new(cluster_script()).arg("env"));
        let line = String::from_utf8_lossy(&env.stdout).trim().to_string();
        let slurm_conf = line
            .strip_prefix("export SLURM_CONF=")
            .unwrap_or_else(|| panic!("local-cluster.sh env: {line}"))
            .to_string();
        Cluster {
            slurm_conf,
            started_here: !running,
        }
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", &self.slurm_conf).current_dir(ROOT);
        cmd
    }

    /// `JobState` of a job (of its first task, for an array).
    fn state(&self, job: &str) -> String {
        let out = run(self.command("scontrol").args(["show", "job", "-o", job]));
        let all = String::from_utf8_lossy(&out.stdout).into_owned();
        all.split_whitespace()
            .find_map(|w| w.strip_prefix("JobState="))
            .unwrap_or("UNKNOWN")
            .to_string()
    }

    /// What a user needs to see when a job did not finish.
    fn diagnose(&self, run_dir: &Path, jobs: &[&str]) -> String {
        let mut report = String::new();
        for job in jobs {
            let out = run(self.command("scontrol").args(["show", "job", job]));
            report += &format!("--- scontrol show job {job}\n{}", text(&out));
        }
        let mut logs: Vec<PathBuf> = std::fs::read_dir(run_dir.join("logs"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        logs.sort();
        let dir = Path::new(&self.slurm_conf).parent().map(Path::to_path_buf);
        logs.extend(
            ["slurmctld.log", "slurmd.log"]
                .iter()
                .filter_map(|l| dir.as_ref().map(|d| d.join("log").join(l))),
        );
        for log in logs {
            let body = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = body.lines().rev().take(40).collect();
            report += &format!("--- {}\n", log.display());
            for line in tail.iter().rev() {
                report += &format!("{line}\n");
            }
        }
        report
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.started_here {
            let _ = Command::new(cluster_script()).arg("stop").output();
        }
    }
}

/// (kernel, suite, status, cost, program_ops) of each lift.csv row, in order.
fn lift_rows(dir: &Path) -> Vec<Vec<String>> {
    let path = dir.join("lift.csv");
    let body = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = body.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let wanted = ["kernel", "suite", "status", "cost", "program_ops"];
    let columns: Vec<usize> = wanted
        .iter()
        .map(|w| {
            header
                .iter()
                .position(|h| h == w)
                .unwrap_or_else(|| panic!("no {w} in {header:?}"))
        })
        .collect();
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            columns.iter().map(|&c| cells[c].to_string()).collect()
        })
        .collect()
}

const BENCH_ARGS: [&str; 6] = [
    "--no-runtime",
    "--dataset",
    "MINI",
    "--timeout",
    "120",
    "--json",
];

#[test]
fn a_job_array_of_three_shards_merges_into_the_one_process_run() {
    if !in_ci() && Command::new("slurmctld").arg("-V").output().is_err() {
        eprintln!(
            "skipped: Slurm is not installed (scripts/slurm/local-cluster.sh install); \
             in CI this test fails instead"
        );
        return;
    }
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().join("run");
    let started = Instant::now();
    let submit = run(cluster
        .command(&format!("{ROOT}/scripts/slurm/submit.sh"))
        .args(["blas", "3"])
        .arg(&run_dir)
        .args(BENCH_ARGS)
        .env("TENSLIFT", env!("CARGO_BIN_EXE_tenslift"))
        // The local node has as few as 2 cores: one core and a little
        // memory per shard, so that shards run side by side.
        .env("SBATCH_ARGS", "--cpus-per-task=1 --mem=1G --time=10"));
    assert!(submit.status.success(), "submit.sh: {}", text(&submit));
    let ids = String::from_utf8_lossy(&submit.stdout).into_owned();
    let id = |key: &str| -> String {
        ids.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {ids}"))
            .to_string()
    };
    let (array, merge) = (id("array="), id("merge="));

    // The one-process run, while the cluster works.
    let single = dir.path().join("single");
    let out = run(Command::new(env!("CARGO_BIN_EXE_tenslift"))
        .current_dir(ROOT)
        .args(["bench", "--suite", "blas", "--out"])
        .arg(&single)
        .args(BENCH_ARGS));
    assert!(out.status.success(), "one-process run: {}", text(&out));

    let state = loop {
        let state = cluster.state(&merge);
        if !matches!(
            state.as_str(),
            "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING"
        ) {
            break state;
        }
        if started.elapsed() > JOB_TIMEOUT {
            let _ = run(cluster.command("scancel").args([&array, &merge]));
            break format!("still {state} after {} s", JOB_TIMEOUT.as_secs());
        }
        std::thread::sleep(Duration::from_secs(2));
    };
    assert_eq!(
        state,
        "COMPLETED",
        "the merge job did not complete:\n{}",
        cluster.diagnose(&run_dir, &[&array, &merge])
    );
    eprintln!(
        "slurm: 3 shards and the merge done in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // Each array task ran its own shard: 3 BLAS kernels, one per shard.
    for k in 1..=3 {
        let rows = lift_rows(&run_dir.join(format!("shard-{k}")));
        assert_eq!(rows.len(), 1, "shard-{k}: {rows:?}");
    }
    let merged = lift_rows(&run_dir.join("merged"));
    let expected = lift_rows(&single);
    let names: Vec<&str> = expected.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["dot", "gemv", "ger"], "{expected:?}");
    assert_eq!(merged, expected, "merged shards vs one process");
    let summary = std::fs::read_to_string(run_dir.join("merged/summary.md")).unwrap();
    assert!(summary.contains("| blas | 3 |"), "{summary}");
    assert!(!summary.contains("Incomplete"), "{summary}");
}
