#!/usr/bin/env bash
# The CUDA half of a benchmark run, on a GPU machine that holds this checkout
# but has no Rust, libclang or Z3 (the lent device machine; any CUDA box with
# python3, numpy, jax[cuda], torch and gcc).
#
#   here:  tenslift bench --suite all --dataset LARGE --no-runtime --out LIFT
#   there: scripts/bench_cuda.sh LIFT RESULTS [JOBS] [DEADLINE_S]
#   here:  tenslift bench --merge CPU_RUN... RESULTS --out results/bench-cuda-...
#
# LIFT is a lift-only result directory (its plan.json names every kernel's
# lifted modules; the data paths are relative to it). Nothing large travels:
# the inputs are regenerated there (scripts/cref.py, same seeds), the
# reference is the kernel's C built with gcc there and run once, untimed.
# JOBS kernels are measured at once: imports, JIT compilation and the C
# references run side by side on the CPU cores, and each child's timed calls
# take their turn on the GPU through a lock file (bench_runner.py), so no
# timing shares the GPU. No kernel starts after DEADLINE_S seconds from the
# script's start; rows are flushed one by one, so an interrupted run keeps
# what it measured.
#
# Environment (all optional):
#   BENCH_CUDA_VARIANTS   GPU variants, comma-separated (default
#                         jax,pytorch,torch-compile,hlo)
#   BENCH_CUDA_TIMEOUT_S  per-measurement limit (default 60)
#   BENCH_CUDA_SMOKE      kernels measured first, alone; an `error` row among
#                         them stops the run at once (exit 3), so a broken
#                         runner costs a lease seconds, not its whole time
#   BENCH_CUDA_HOST_C_UNTIL_S
#                         after the GPU phase, time gcc -O3 on this machine's
#                         own CPU, one kernel at a time (nothing else running),
#                         until this many seconds from the start: rows in
#                         RESULTS/host/runtime.csv, the cheap suites first,
#                         then the distributed-form PolyBench (default 0: none)
#   BENCH_CUDA_PLANS_ONLY=1
#                         write the plans (LIFT/plan-{smoke,cuda,host}.json)
#                         and stop: what a lease would run, read beforehand
#
# RESULTS gets lift.csv and run.json (copied, so RESULTS is a result
# directory `tenslift bench --merge` takes), results/runtime.csv (only
# `-cuda` rows: kernel-only median_s, end-to-end e2e_median_s with the
# transfers), results/device.txt, machine.txt, runtime.log and, with the
# host phase, host/runtime.csv and host/runtime.log.
set -uo pipefail
lift=${1:?usage: scripts/bench_cuda.sh LIFT_DIR RESULTS_DIR [JOBS] [DEADLINE_S]}
out=${2:?usage: scripts/bench_cuda.sh LIFT_DIR RESULTS_DIR [JOBS] [DEADLINE_S]}
jobs=${3:-10}
deadline=${4:-420}
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
began=$(date +%s)
elapsed() { echo $(( $(date +%s) - began )); }
export BENCH_CUDA_VARIANTS=${BENCH_CUDA_VARIANTS:-jax,pytorch,torch-compile,hlo}
export BENCH_CUDA_TIMEOUT_S=${BENCH_CUDA_TIMEOUT_S:-60}
export BENCH_CUDA_SMOKE=${BENCH_CUDA_SMOKE:-}
host_c_until=${BENCH_CUDA_HOST_C_UNTIL_S:-0}

[ -f "$lift/plan.json" ] || { echo "bench_cuda: $lift/plan.json: no plan (lift with --no-runtime first)" >&2; exit 2; }
mkdir -p "$out/results"
# JAX would take 75 % of the GPU's memory in each of the JOBS children.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
# One compile thread per child: JOBS children already fill the cores, and
# Inductor's worker pool would start 16 processes in each.
export TORCHINDUCTOR_COMPILE_THREADS=1
export PYTHONUNBUFFERED=1

{
    date -u '+%Y-%m-%d %H:%M UTC'
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
    echo "cpu: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    "$py" -c 'import numpy, jax, torch; print("numpy", numpy.__version__, "jax", jax.__version__, "torch", torch.__version__, "cuda", torch.version.cuda)'
    command -v gcc >/dev/null && gcc --version | head -1 || echo "no gcc: references from the lifted NumPy programs"
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

# The plans for this machine: the GPU variants (gcc gives the reference and
# is not timed) in suite order, so that a deadline cuts the least central
# suites, the distributed-form PolyBench first; the smoke kernels apart; and
# gcc alone for the host phase, cheapest suites first.
"$py" - "$lift" <<'EOF' || exit 2
import json, os, sys
lift = sys.argv[1]
plan = json.load(open(os.path.join(lift, "plan.json")))
first = ["polybench-dist", "blend", "llama", "darknet", "darknet-struct", "blas", "dsp",
         "dspstone-ptr", "utdsp", "rowptr", "conversions", "mathfu", "stenso"]
rank = {s: i for i, s in enumerate(first)}

def keeps_loops(kernel):
    """Programs that keep C loops launch kernels step by step: last in their suite."""
    path = os.path.join(lift, kernel["dir"], "call.json")
    try:
        return bool(json.load(open(path)).get("keeps_loops"))
    except (OSError, ValueError):
        return False

def write(name, kernels, variants):
    json.dump({**plan, "kernels": kernels, "variants": variants},
              open(os.path.join(lift, name), "w"), indent=1)

wanted = [v for v in os.environ["BENCH_CUDA_VARIANTS"].split(",") if v]
unknown = [v for v in wanted if v not in ("jax", "pytorch", "torch-compile", "hlo")]
if unknown:
    sys.exit(f"bench_cuda: unknown GPU variant {', '.join(unknown)}")
kernels = sorted(plan["kernels"], key=lambda k: (rank.get(k["suite"], len(first)), keeps_loops(k)))
smoke = [n for n in os.environ["BENCH_CUDA_SMOKE"].split(",") if n]
missing = [n for n in smoke if n not in {k["name"] for k in kernels}]
if missing:
    sys.exit(f"bench_cuda: smoke kernel not in the plan: {', '.join(missing)}")
# No RLIMIT_DATA cap on the children: the CUDA driver and XLA map far more
# private memory than a kernel uses, and a cap sized for the CPU run could
# fail their start rather than a runaway intermediate.
plan["memory_limit_gb"] = 0
plan["timeout_s"] = min(float(plan["timeout_s"]), float(os.environ["BENCH_CUDA_TIMEOUT_S"]))
variants = ["gcc"] + [v for v in wanted if v in plan["variants"]]
write("plan-smoke.json", [k for k in kernels if k["name"] in smoke], variants)
write("plan-cuda.json", [k for k in kernels if k["name"] not in smoke], variants)
# The host phase: cheap suites first; the VLA convenience PolyBench last of all.
cost = {"polybench-dist": 1, "polybench": 2}
write("plan-host.json", sorted(kernels, key=lambda k: cost.get(k["suite"], 0)), ["gcc"])
print(len(kernels), "kernels,", " ".join(variants), "; smoke:", " ".join(smoke) or "none")
EOF

[ "${BENCH_CUDA_PLANS_ONLY:-0}" = 1 ] && exit 0
cp "$lift/lift.csv" "$lift/run.json" "$out/" 2>/dev/null
runner() { "$py" "$here/bench_runner.py" run "$@"; }
csv="$out/results/runtime.csv"
if [ -n "$BENCH_CUDA_SMOKE" ]; then
    runner --plan "$lift/plan-smoke.json" --csv "$csv" --device cuda --jobs 2 \
        --c-reference-only 2> "$out/smoke.log"
    cat "$out/smoke.log"
    if grep -q ',error,' "$csv"; then
        echo "bench_cuda: the smoke kernels have error rows: stopped after $(elapsed) s" >&2
        exit 3
    fi
fi
left=$(( deadline - $(elapsed) ))
runner --plan "$lift/plan-cuda.json" --csv "$csv" --device cuda --jobs "$jobs" \
    --c-reference-only --deadline-s "$(( left > 0 ? left : 0 ))" 2> "$out/runtime.log"
code=$?
echo "bench_cuda: runner exit $code after $(elapsed) s" | tee -a "$out/runtime.log"
tail -3 "$out/runtime.log"

left=$(( host_c_until - $(elapsed) ))
if [ "$host_c_until" -gt 0 ] && [ "$left" -gt 0 ]; then
    mkdir -p "$out/host"
    # One kernel at a time and nothing else running: these are CPU timings.
    runner --plan "$lift/plan-host.json" --csv "$out/host/runtime.csv" --device cpu \
        --skip-python --quiet --deadline-s "$left" 2> "$out/host/runtime.log"
    echo "bench_cuda: host gcc phase exit $? after $(elapsed) s" | tee -a "$out/host/runtime.log"
fi
exit $code
