//! Speed of the algebra core and of symbolic execution.
//!
//! `cargo bench --bench spec_bench` measures, single-threaded, the medians
//! of repeated runs and writes them, with the machine and the command, to
//! results/spec-bench.md. Targets (issue 4): covariance spec at (m, n) =
//! (5, 6) and 3mm spec at its first chosen sizes under 50 ms each; the
//! expanded normal form of (Σ a_i b_i)² with 30 terms under 20 ms; at least
//! 100 000 normal-form equality checks per second on spec entries.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use tenslift::algebra::{Expr, Symbol};
use tenslift::spec::{self, examples, Sizes};

const RUNS: usize = 11;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs `f` `RUNS` times (after one warm-up) and returns the median.
fn time<T>(mut f: impl FnMut() -> T) -> Duration {
    std::hint::black_box(f());
    median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed()
            })
            .collect(),
    )
}

fn el(name: &str, i: u32, j: u32) -> Expr {
    Symbol::element(name, &[i, j]).to_expr()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// gemm entry C[i,j] built as written in the C (k ascending, alpha inside).
fn gemm_entry_loop_order(i: u32, j: u32, nk: u32) -> Expr {
    let (alpha, beta) = (
        Symbol::scalar("alpha").to_expr(),
        Symbol::scalar("beta").to_expr(),
    );
    let mut acc = &beta * &el("C", i, j);
    for k in 0..nk {
        acc = acc + &alpha * &el("A", i, k) * el("B", k, j);
    }
    acc
}

/// The same entry as a tensor program states it: alpha·(Σ_k descending) + beta·C.
fn gemm_entry_factored(i: u32, j: u32, nk: u32) -> Expr {
    let (alpha, beta) = (
        Symbol::scalar("alpha").to_expr(),
        Symbol::scalar("beta").to_expr(),
    );
    let dot = Expr::sum(
        &(0..nk)
            .rev()
            .map(|k| el("B", k, j) * el("A", i, k))
            .collect::<Vec<_>>(),
    );
    alpha * dot + el("C", i, j) * beta
}

/// The input symbols of a gemm spec, created once as the spec does.
struct GemmInputs {
    alpha: Expr,
    beta: Expr,
    a: Vec<Vec<Expr>>,
    b: Vec<Vec<Expr>>,
    c: Vec<Vec<Expr>>,
}

impl GemmInputs {
    fn new(ni: u32, nj: u32, nk: u32) -> Self {
        let grid = |name: &str, rows: u32, cols: u32| -> Vec<Vec<Expr>> {
            (0..rows)
                .map(|i| (0..cols).map(|j| el(name, i, j)).collect())
                .collect()
        };
        GemmInputs {
            alpha: Symbol::scalar("alpha").to_expr(),
            beta: Symbol::scalar("beta").to_expr(),
            a: grid("A", ni, nk),
            b: grid("B", nk, nj),
            c: grid("C", ni, nj),
        }
    }

    /// C[i,j] as the loops build it.
    fn loop_order(&self, i: usize, j: usize) -> Expr {
        let mut acc = &self.beta * &self.c[i][j];
        for k in 0..self.b.len() {
            acc = acc + &self.alpha * &self.a[i][k] * &self.b[k][j];
        }
        acc
    }

    /// C[i,j] as a tensor program states it.
    fn factored(&self, i: usize, j: usize) -> Expr {
        let products: Vec<Expr> = (0..self.b.len())
            .rev()
            .map(|k| &self.b[k][j] * &self.a[i][k])
            .collect();
        &self.alpha * &Expr::sum(&products) + &self.c[i][j] * &self.beta
    }
}

/// A covariance entry built from the textbook formula, independently of the spec.
fn covariance_entry(i: u32, j: u32, n: u32) -> Expr {
    let fl = Symbol::scalar("float_n").to_expr();
    let mean = |c: u32| {
        Expr::sum(&(0..n).map(|r| el("data", r, c)).collect::<Vec<_>>())
            .div(&fl)
            .expect("float_n is a symbol")
    };
    let (mi, mj) = (mean(i), mean(j));
    let centred = Expr::sum(
        &(0..n)
            .map(|k| (el("data", k, i) - &mi) * (el("data", k, j) - &mj))
            .collect::<Vec<_>>(),
    );
    centred
        .div(&(fl - Expr::one()))
        .expect("float_n - 1 is non-zero")
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    // Other processes compete for the cores: the load puts numbers in context.
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into());
    format!(
        "{cpu}, {cores} logical cores visible, {}, load average {load} when the run started",
        std::env::consts::OS
    )
}

fn corpus_kernel(file: &str, function: &str) -> tenslift_frontend::ir::Kernel {
    let path = format!("{}/benchmarks/{file}", env!("CARGO_MANIFEST_DIR"));
    let options = tenslift_frontend::Options {
        functions: vec![function.to_string()],
        ..Default::default()
    };
    let mut unit = tenslift_frontend::extract(&path, &options)
        .unwrap_or_else(|e| panic!("cannot extract {function} from {path}: {e}"));
    unit.kernels.remove(0)
}

fn main() {
    let machine_line = machine();
    let mut rows: Vec<(String, String, String, bool)> = Vec::new();

    // The kernels come from the corpus C files through the real frontend,
    // so the figures cover what a user's `tenslift spec` runs.
    let cov = corpus_kernel("polybench/covariance.c", "kernel_covariance");
    let cov_sizes: Sizes = [("m".to_string(), 5), ("n".to_string(), 6)]
        .into_iter()
        .collect();
    let t_cov = time(|| spec::spec_of_kernel(&cov, &cov_sizes).expect("covariance spec"));
    rows.push((
        "spec of covariance (benchmarks/polybench/covariance.c), (m, n) = (5, 6)".into(),
        format!("{:.2} ms", ms(t_cov)),
        "< 50 ms".into(),
        ms(t_cov) < 50.0,
    ));

    let mm3 = corpus_kernel("polybench/3mm.c", "kernel_3mm");
    let mm3_sizes = spec::choose_sizes(&mm3, &Sizes::new()).expect("3mm sizes");
    let t_3mm = time(|| spec::spec_of_kernel(&mm3, &mm3_sizes).expect("3mm spec"));
    rows.push((
        format!(
            "spec of 3mm (benchmarks/polybench/3mm.c) at {}",
            spec::format_sizes(&mm3_sizes)
        ),
        format!("{:.2} ms", ms(t_3mm)),
        "< 50 ms".into(),
        ms(t_3mm) < 50.0,
    ));

    let t_square = time(|| {
        let sum = Expr::sum(
            &(0..30)
                .map(|i| {
                    Symbol::element("a", &[i]).to_expr() * Symbol::element("b", &[i]).to_expr()
                })
                .collect::<Vec<_>>(),
        );
        let square = &sum * &sum;
        assert_eq!(square.len(), 465);
        square
    });
    rows.push((
        "normal form of (Σ a_i b_i)², 30 terms, expanded (465 terms)".into(),
        format!("{:.3} ms", ms(t_square)),
        "< 20 ms".into(),
        ms(t_square) < 20.0,
    ));

    // Equality checks where both sides are built and normalised from scratch.
    let (ni, nj, nk) = (3u32, 4u32, 5u32);
    let gemm_checks = (ni * nj) as usize;
    let t_gemm = time(|| {
        for i in 0..ni {
            for j in 0..nj {
                assert_eq!(
                    gemm_entry_loop_order(i, j, nk),
                    gemm_entry_factored(i, j, nk)
                );
            }
        }
    });
    let gemm_rate = gemm_checks as f64 / t_gemm.as_secs_f64();
    let inputs = GemmInputs::new(ni, nj, nk);
    let t_gemm_inputs = time(|| {
        for i in 0..ni as usize {
            for j in 0..nj as usize {
                assert_eq!(inputs.loop_order(i, j), inputs.factored(i, j));
            }
        }
    });
    let gemm_inputs_rate = gemm_checks as f64 / t_gemm_inputs.as_secs_f64();
    rows.push((
        "build + normalise + compare, gemm entries (nk = 5), both sides built from the input symbols".into(),
        format!("{gemm_inputs_rate:.0} checks/s"),
        "≥ 100 000 /s".into(),
        gemm_inputs_rate >= 100_000.0,
    ));
    rows.push((
        "the same, also creating (and freeing) the 26 interned input symbols of each check".into(),
        format!("{gemm_rate:.0} checks/s"),
        "(informative)".into(),
        true,
    ));

    // The synthesizer's check of a solved sketch: substitute the hole's
    // solution into `alpha·?X[i,j] + beta·C[i,j]` and compare with the spec.
    let gemm_kernel = examples::gemm();
    let gemm_sizes = spec::choose_sizes(&gemm_kernel, &Sizes::new()).expect("gemm sizes");
    let gemm_spec = spec::spec_of_kernel(&gemm_kernel, &gemm_sizes).expect("gemm spec");
    let c_out = &gemm_spec.output("C").expect("C output").value;
    let (alpha, beta) = (
        Symbol::scalar("alpha").to_expr(),
        Symbol::scalar("beta").to_expr(),
    );
    let cases: Vec<(Expr, std::collections::HashMap<Symbol, Expr>, Expr)> = (0..ni)
        .flat_map(|i| (0..nj).map(move |j| (i, j)))
        .map(|(i, j)| {
            let hole = Symbol::hole("X", &[i, j]);
            let sketch = &alpha * &hole.to_expr() + &beta * &el("C", i, j);
            let dot = Expr::sum(
                &(0..nk)
                    .map(|k| el("A", i, k) * el("B", k, j))
                    .collect::<Vec<_>>(),
            );
            let spec_entry = c_out
                .get(&[i as usize, j as usize])
                .expect("in range")
                .clone();
            (sketch, [(hole, dot)].into_iter().collect(), spec_entry)
        })
        .collect();
    let t_sketch = time(|| {
        for (sketch, solution, spec_entry) in &cases {
            assert_eq!(
                sketch.substitute(solution).expect("no division"),
                *spec_entry
            );
        }
    });
    let sketch_rate = cases.len() as f64 / t_sketch.as_secs_f64();
    rows.push((
        "substitute a hole solution into a gemm sketch + compare with the spec entry".into(),
        format!("{sketch_rate:.0} checks/s"),
        "≥ 100 000 /s".into(),
        sketch_rate >= 100_000.0,
    ));

    let cov_spec = spec::spec_of_kernel(&cov, &cov_sizes).expect("covariance spec");
    let cov_out = cov_spec.output("cov").expect("cov output");
    let t_cov_check = time(|| {
        for i in 0..5u32 {
            for j in i..5u32 {
                let entry = cov_out
                    .value
                    .get(&[i as usize, j as usize])
                    .expect("in range");
                assert_eq!(*entry, covariance_entry(i, j, 6));
            }
        }
    });
    let cov_rate = 15.0 / t_cov_check.as_secs_f64();
    rows.push((
        "build + normalise + compare, covariance entries (n = 6) against the formula".into(),
        format!("{cov_rate:.0} checks/s"),
        "(informative)".into(),
        true,
    ));

    // Comparing normal forms already built (what the search does most).
    let left: Vec<Expr> = (0..ni)
        .flat_map(|i| (0..nj).map(move |j| gemm_entry_loop_order(i, j, nk)))
        .collect();
    let right: Vec<Expr> = (0..ni)
        .flat_map(|i| (0..nj).map(move |j| gemm_entry_factored(i, j, nk)))
        .collect();
    let rounds = 100_000;
    let t_eq = time(|| {
        let mut equal = 0usize;
        for _ in 0..rounds {
            for (a, b) in left.iter().zip(&right) {
                equal += usize::from(std::hint::black_box(a) == std::hint::black_box(b));
            }
        }
        assert_eq!(equal, rounds * left.len());
    });
    let eq_rate = (rounds * left.len()) as f64 / t_eq.as_secs_f64();
    rows.push((
        "compare two normal forms already built (interned: pointer equality)".into(),
        format!("{eq_rate:.2e} checks/s"),
        "≥ 100 000 /s".into(),
        eq_rate >= 100_000.0,
    ));

    let mut report = String::new();
    let _ = writeln!(report, "# Spec and algebra-core benchmark\n");
    let _ = writeln!(
        report,
        "Command: `cargo bench --bench spec_bench` (release profile, single thread)  "
    );
    let _ = writeln!(report, "Machine: {machine_line}  ");
    let _ = writeln!(
        report,
        "Each number is the median of {RUNS} runs after one warm-up.\n"
    );
    let _ = writeln!(report, "| measurement | median | target | met |");
    let _ = writeln!(report, "|---|---|---|---|");
    for (what, value, target, met) in &rows {
        let _ = writeln!(
            report,
            "| {what} | {value} | {target} | {} |",
            if *met { "yes" } else { "NO" }
        );
    }
    let out_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results");
    if let Err(e) = std::fs::create_dir_all(&out_dir)
        .and_then(|_| std::fs::write(out_dir.join("spec-bench.md"), &report))
    {
        eprintln!("cannot write results/spec-bench.md: {e}");
        std::process::exit(1);
    }
    print!("{report}");
}
