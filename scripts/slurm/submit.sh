#!/usr/bin/env bash
# Runs `tenslift bench` over a Slurm cluster: a job array of N shards, one
# result directory each, then a merge job that starts when all succeeded.
#
#   scripts/slurm/submit.sh SUITE N OUTDIR [tenslift bench args...]
#
# e.g. scripts/slurm/submit.sh all 8 /shared/runs/large --dataset LARGE
# OUTDIR must be on a filesystem every node sees. Prints the two job ids
# (`array=ID` and `merge=ID`) on stdout. Environment:
#   TENSLIFT     the tenslift binary (default: target/release/tenslift here)
#   SBATCH_ARGS  extra sbatch options for both jobs (partition, account,
#                --cpus-per-task/--mem/--time overrides), word-split
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 SUITE N OUTDIR [tenslift bench args...]" >&2
  exit 2
fi
suite=$1 shards=$2 run=$3
shift 3
case "$shards" in '' | *[!0-9]* | 0)
  echo "$0: N must be a positive number of shards, not \`$shards'" >&2
  exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tenslift=$(realpath "${TENSLIFT:-$repo/target/release/tenslift}")
if [ ! -x "$tenslift" ]; then
  echo "$0: no tenslift binary at $tenslift (cargo build --release, or set TENSLIFT)" >&2
  exit 2
fi
mkdir -p "$run/logs"
run=$(cd "$run" && pwd)
export TENSLIFT="$tenslift" TENSLIFT_REPO="$repo" TENSLIFT_SUITE="$suite" \
  TENSLIFT_SHARDS="$shards" TENSLIFT_RUN="$run"
# shellcheck disable=SC2086 # SBATCH_ARGS is a list of options
array=$(sbatch --parsable --export=ALL ${SBATCH_ARGS:-} \
  --array="0-$((shards - 1))" --output="$run/logs/task-%a.out" \
  "$here/shard.sbatch" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable --export=ALL ${SBATCH_ARGS:-} \
  --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --output="$run/logs/merge.out" "$here/merge.sbatch")
merge=${merge%%;*}
echo "array=$array"
echo "merge=$merge"
echo "submitted $shards shards of \`$suite' (job $array) and their merge (job $merge) into $run" >&2
