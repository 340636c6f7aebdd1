#!/usr/bin/env bash
# Same input, same output, over the whole corpus: runs the lift-only sweep
# (`tenslift bench --suite "$suite" --no-runtime --dataset MINI`) twice, once as
# the machine is and once with two busy-loop processes beside it, and
# compares every kernel's status and lifted TensIR program byte for byte.
# Writes OUT/REPORT.md (default OUT: target/determinism) and exits 1 when
# any kernel differs. `tests/determinism.rs` does the same in CI over a
# subset.
#
# usage: scripts/determinism.sh [OUT]   (TENSLIFT=path/to/tenslift to pick
#        the binary; default target/release/tenslift, built if missing;
#        DETERMINISM_SUITE=blas,scalar to sweep only some suites)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=/dev/null
source scripts/env.sh
out=${1:-target/determinism}
suite=${DETERMINISM_SUITE:-all}   # a smaller sweep, to try the script
bin=${TENSLIFT:-target/release/tenslift}
if [[ ! -x $bin ]]; then
  nice -n 10 cargo build --release --bin tenslift
fi
rm -rf "$out"
mkdir -p "$out"

sweep() {
  local name=$1 start=$SECONDS
  # The timeout is only the outer safety net: two busy loops on a loaded
  # 2-core machine make a 12 s lift take minutes, and the net must not be
  # what differs.
  nice -n 10 "$bin" bench --suite "$suite" --no-runtime --dataset MINI \
    --timeout "${DETERMINISM_TIMEOUT:-900}" --out "$out/$name" >"$out/$name.log" 2>&1 || true
  echo "$((SECONDS - start))" >"$out/$name.seconds"
}

# Per kernel: `name status`, then its program (or nothing), in manifest
# order; messages are left out (they hold elapsed seconds).
outcomes() {
  local dir=$1
  tail -n +2 "$dir/lift.csv" | while IFS=, read -r kernel _suite _function status _rest; do
    echo "== $kernel: $status"
    program=$(find "$dir" -path "*/$kernel/program.tensir" -print -quit)
    if [[ -n $program ]]; then cat "$program"; fi
  done
}

busy=()
stop_busy() {
  local pid
  for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done
  busy=()
}
trap stop_busy EXIT

sweep idle
for _ in 1 2; do
  sh -c 'while :; do :; done' &
  busy+=($!)
done
sweep loaded
stop_busy

for name in idle loaded; do
  if [[ ! -f $out/$name/lift.csv ]]; then
    echo "the $name sweep wrote no lift.csv; see $out/$name.log" >&2
    exit 2
  fi
  outcomes "$out/$name" >"$out/$name.outcomes"
done

diff -u "$out/idle.outcomes" "$out/loaded.outcomes" >"$out/outcomes.diff" || true
# Kernels whose record (status line and program) differs.
python3 - "$out" <<'PY' >"$out/REPORT.md"
import sys
out = sys.argv[1]

def records(name):
    recs, current = {}, None
    for line in open(f"{out}/{name}.outcomes"):
        if line.startswith("== "):
            current = line[3:].split(":")[0]
            recs[current] = [line]
        elif current is not None:
            recs[current].append(line)
    return {k: "".join(v) for k, v in recs.items()}

idle, loaded = records("idle"), records("loaded")
seconds = {n: open(f"{out}/{n}.seconds").read().strip() for n in ("idle", "loaded")}
differ = [k for k in idle if idle.get(k) != loaded.get(k)]
status = lambda r: (r or "== ?: missing").splitlines()[0].split(": ", 1)[1]
print("# Determinism: lift-only sweep, idle vs. two busy loops\n")
print(f"- kernels: {len(idle)} (idle sweep {seconds['idle']} s, loaded sweep {seconds['loaded']} s)")
print(f"- identical: {len(idle) - len(differ)}; differing: {len(differ)}\n")
if differ:
    print("| kernel | idle | loaded | program |")
    print("|---|---|---|---|")
    for k in differ:
        same_status = status(idle.get(k)) == status(loaded.get(k))
        print(f"| {k} | {status(idle.get(k))} | {status(loaded.get(k))} | "
              f"{'differs' if same_status else ''} |")
    print("\nFull diff: outcomes.diff")
PY
cat "$out/REPORT.md"
grep -q "differing: 0$" "$out/REPORT.md"
