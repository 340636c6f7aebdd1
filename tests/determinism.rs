//! Same input, same output: the lift-only path over a fixed subset of the
//! corpus, run twice — once as the machine is, once with two busy-loop
//! processes beside it — must give byte-identical outcomes (status, reason,
//! TensIR text, and the search's statistics and trace) for every kernel.
//!
//! The search's limits are counted in work (`synth::budget`), so load can
//! change only how long a lift takes. The subset ([`SUBSET`]) holds the
//! kernels that depended on the machine's load while the limits were
//! wall-clock seconds (darknet's `gemm_nt`/`gemm_tn`/`gemm_tt`, whose whole
//! search took 10 to 13 s on an idle machine and did not finish within its
//! share on a busy one; `gemver`), partial lifts (kernels carried at the
//! top level), and a spread of quick kernels of several suites, lifted and
//! not. The timeout ([`TIMEOUT_S`]) is only the outer safety net: no kernel
//! here comes near it.
//!
//! The whole corpus is compared by `scripts/determinism.sh`.

mod corpus_common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use corpus_common::{extract, lift, manifest, Entry};
use rayon::prelude::*;

/// The outer safety limit per kernel, see the module comment.
const TIMEOUT_S: u64 = 120;

/// Manifest names, see the module comment.
const SUBSET: &[&str] = &[
    // time-sensitive
    "gemm_nt",
    "gemm_tn",
    "gemm_tt",
    "gemver",
    // partial lifts (carried at the top level)
    "jacobi-1d",
    "jacobi-2d",
    "trisolv",
    "seidel-2d",
    "lu",
    "cholesky",
    // lifted, quick
    "atax",
    "bicg",
    "mvt",
    "gemm",
    "dot",
    "int_matmul_facc",
    "transformer_part2",
    "dct",
    "dissolve_blend_8",
    // not lifted, quick
    "adi",
    "durbin",
    "fir_ptr",
];

/// Two processes spinning on a core each, killed when dropped (also when
/// the test fails).
struct BusyLoops(Vec<Child>);

impl BusyLoops {
    fn start() -> BusyLoops {
        let spin = || {
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start a busy loop: {e}"))
        };
        BusyLoops(vec![spin(), spin()])
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Every subset kernel's outcome record, in subset order.
fn sweep(entries: &[Entry]) -> Vec<String> {
    let timeout = Duration::from_secs(TIMEOUT_S);
    let kernels: Vec<_> = entries.iter().map(extract).collect();
    entries
        .par_iter()
        .zip(kernels.par_iter())
        .map(|(entry, kernel)| match kernel {
            Ok(kernel) => lift(kernel, timeout).record_with_stats(&entry.name),
            Err(e) => format!("{}: rejected({e})\n", entry.name),
        })
        .collect()
}

#[test]
fn the_lift_is_the_same_on_an_idle_and_a_loaded_machine() {
    let entries: Vec<Entry> = manifest()
        .into_iter()
        .filter(|e| SUBSET.contains(&e.name.as_str()))
        .collect();
    assert_eq!(
        entries.len(),
        SUBSET.len(),
        "a subset kernel left the manifest"
    );
    let start = Instant::now();
    let idle = sweep(&entries);
    let idle_s = start.elapsed().as_secs_f64();
    let loaded = {
        let _busy = BusyLoops::start();
        sweep(&entries)
    };
    eprintln!(
        "idle sweep {idle_s:.1} s, loaded sweep {:.1} s",
        start.elapsed().as_secs_f64() - idle_s
    );
    let differing: Vec<String> = idle
        .iter()
        .zip(&loaded)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("idle:\n{a}loaded:\n{b}"))
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} kernels differ between the idle and the loaded run:\n{}",
        differing.len(),
        entries.len(),
        differing.join("\n")
    );
}
