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
# timing shares the GPU. No kernel starts after DEADLINE_S seconds; rows are
# flushed one by one, so an interrupted run keeps what it measured.
#
# RESULTS gets lift.csv and run.json (copied, so RESULTS is a result
# directory `tenslift bench --merge` takes), results/runtime.csv (only
# `-cuda` rows: kernel-only median_s, end-to-end e2e_median_s with the
# transfers), results/device.txt, machine.txt and runtime.log.
set -uo pipefail
lift=${1:?usage: scripts/bench_cuda.sh LIFT_DIR RESULTS_DIR [JOBS] [DEADLINE_S]}
out=${2:?usage: scripts/bench_cuda.sh LIFT_DIR RESULTS_DIR [JOBS] [DEADLINE_S]}
jobs=${3:-10}
deadline=${4:-420}
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)

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

# The plan for this machine: only the GPU variants (gcc gives the reference
# and is not timed), in suite order, so that a deadline cuts the least
# central suites; the distributed-form PolyBench first.
"$py" - "$lift/plan.json" "$lift/plan-cuda.json" <<'EOF'
import json, os, sys
plan = json.load(open(sys.argv[1]))
first = ["polybench-dist", "blend", "llama", "darknet", "darknet-struct", "blas", "dsp",
         "dspstone-ptr", "utdsp", "rowptr", "conversions", "mathfu", "stenso"]
rank = {s: i for i, s in enumerate(first)}

def keeps_loops(kernel):
    """Programs that keep C loops launch kernels step by step: last in their suite."""
    path = os.path.join(os.path.dirname(sys.argv[1]), kernel["dir"], "call.json")
    try:
        return bool(json.load(open(path)).get("keeps_loops"))
    except (OSError, ValueError):
        return False

plan["kernels"].sort(key=lambda k: (rank.get(k["suite"], len(first)), keeps_loops(k)))
plan["variants"] = ["gcc"] + [v for v in ("jax", "pytorch", "torch-compile", "hlo")
                              if v in plan["variants"]]
# No RLIMIT_DATA cap on the children: the CUDA driver and XLA map far more
# private memory than a kernel uses, and a cap sized for the CPU run could
# fail their start rather than a runaway intermediate.
plan["memory_limit_gb"] = 0
plan["timeout_s"] = min(float(plan["timeout_s"]), 60.0)
json.dump(plan, open(sys.argv[2], "w"), indent=1)
print(len(plan["kernels"]), "kernels,", " ".join(plan["variants"]))
EOF

cp "$lift/lift.csv" "$lift/run.json" "$out/" 2>/dev/null
start=$(date +%s)
"$py" "$here/bench_runner.py" run --plan "$lift/plan-cuda.json" --csv "$out/results/runtime.csv" \
    --device cuda --jobs "$jobs" --c-reference-only --deadline-s "$deadline" \
    2> "$out/runtime.log"
code=$?
echo "bench_cuda: runner exit $code after $(( $(date +%s) - start )) s" | tee -a "$out/runtime.log"
tail -3 "$out/runtime.log"
exit $code
