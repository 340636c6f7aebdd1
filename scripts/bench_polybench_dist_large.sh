#!/usr/bin/env bash
# PolyBench/C 4.2 in its distributed form at LARGE, every CPU backend against
# gcc, clang and both Polly variants (issue #16): the run the lead makes on an
# idle machine. The same command as results/bench-polybench-dist-large-2026-11-25,
# now with the Polly classifier that attributes Polly's work to the kernel
# (scripts/polly_evidence.py), so summary.md's "vs best Polly" counts only
# the Polly variants that transformed each kernel.
#
# usage: scripts/bench_polybench_dist_large.sh [OUT]
#   OUT defaults to results/bench-polybench-dist-large-<UTC date>; it must not
#   exist. The release binary is copied to a temporary file first, so a
#   rebuild during the run (about 1.5 h on the 2-core VM) cannot change it.
#   FORCE=1 runs even when the machine is busy (the note must then say so).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=/dev/null
source scripts/env.sh
out=${1:-results/bench-polybench-dist-large-$(date -u +%F)}
if [[ -e $out ]]; then
  echo "bench_polybench_dist_large: $out exists; pick another OUT" >&2
  exit 2
fi
# Timings on a loaded machine are inflated and noisy (the 2026-11-25 run was
# made at load 12-19): refuse unless the 1-minute load is below one per core.
cores=$(nproc)
load=$(cut -d' ' -f1 /proc/loadavg)
if [[ ${FORCE:-0} != 1 ]] && awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l >= c) }'; then
  echo "bench_polybench_dist_large: load average $load on $cores cores; wait for an idle" \
    "machine or set FORCE=1" >&2
  exit 3
fi
cargo build --release --bin tenslift
bin=$(mktemp /tmp/tenslift-large.XXXXXX)
trap 'rm -f "$bin"' EXIT
cp target/release/tenslift "$bin"
chmod 755 "$bin"  # mktemp creates it 0600, and cp keeps the target's mode
mkdir -p "$(dirname "$out")"
echo "load before: $(cat /proc/loadavg) on $cores cores; commit $(git rev-parse --short HEAD)"
"$bin" bench --suite polybench-dist --dataset LARGE \
  --targets numpy,jax,pytorch,torch-compile,hlo \
  --repeat 3 --timeout 60 --runtime-timeout 120 --jobs 1 --out "$out" --json
echo "load after: $(cat /proc/loadavg)"
