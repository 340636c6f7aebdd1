#!/usr/bin/env bash
# Long fuzzing campaign (issue 20): mutated corpus C, structural bombs,
# grammar-generated kernels and TensIR through the real binary, each input
# in a child process with a time limit. Writes OUT/summary.md (inputs per
# target, time, findings) and each minimised finding as a fixture under
# OUT/fixtures/ (copy the ones worth keeping into tests/fixtures/fuzz/).
#   scripts/fuzz.sh [--minutes N] [--seed S] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
minutes=20
seed=1
out=target/fuzz-campaign
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "usage: scripts/fuzz.sh [--minutes N] [--seed S] [--out DIR]" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"
TENSLIFT_FUZZ_MINUTES="$minutes" TENSLIFT_FUZZ_SEED="$seed" TENSLIFT_FUZZ_OUT="$out" \
  cargo test --release --test fuzz -- --ignored --exact long_campaign --nocapture  # builds the binary too
echo "summary: $out/summary.md"
