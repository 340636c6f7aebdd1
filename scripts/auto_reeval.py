#!/usr/bin/env python3
"""Re-scores `--target auto` against measured times of an earlier bench run.

`auto` is chosen at lift time from the calibration table; when the prediction
model changes, a fresh lift-only run gives the new picks
(`tenslift bench --no-runtime ... --out NEW`) and this script scores them on
the runtimes an earlier run measured, so a model change is judged without
re-timing every backend.

usage: scripts/auto_reeval.py RUN_DIR/runtime.csv LIFT_CSV [LIFT_CSV ...]

For each lift.csv: kernels with a measured lifted time, how often auto picked
the measured best lifted backend, how often it was within 10% of it, and the
misses (kernel:auto=fraction of the best's speed); then the same counts against
the best of auto's own four candidates (torch.compile left out).
"""
import csv
import sys

LIFTED = ["numpy", "jax", "pytorch", "torch-compile", "hlo"]
# What `--target auto` chooses among (torch.compile is a bench variant, not a target).
CANDIDATES = ["numpy", "jax", "pytorch", "hlo"]


def measured(path):
    times = {}
    for r in csv.DictReader(open(path)):
        if r["status"] == "ok" and r["median_s"]:
            times.setdefault(r["kernel"], {})[r["variant"]] = float(r["median_s"])
    return times


def score(times, lift_csv, variants=LIFTED):
    auto = {r["kernel"]: r["auto_target"] for r in csv.DictReader(open(lift_csv))}
    n = within = best_picked = 0
    misses = []
    for kernel, t in sorted(times.items()):
        timed = [(t[v], v) for v in variants if v in t]
        if not timed:
            continue
        best_s, best = min(timed)
        n += 1
        pick = auto.get(kernel)
        frac = best_s / t[pick] if pick in t else 0.0
        # As the bench summary counts it: auto's time at most 1.1x the best's.
        within += frac >= 1.0 / 1.1
        best_picked += pick == best
        if frac < 1.0 / 1.1:
            misses.append(f"{kernel}:{pick}={frac:.2f} (best {best})")
    return n, best_picked, within, misses


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    times = measured(sys.argv[1])
    for lift_csv in sys.argv[2:]:
        n, best, within, misses = score(times, lift_csv)
        print(f"{lift_csv}: {n} kernels, auto picked the best on {best}, within 10% on {within}")
        for m in misses:
            print(f"  {m}")
        n, best, within, _ = score(times, lift_csv, CANDIDATES)
        print(f"  against auto's own candidates ({', '.join(CANDIDATES)}): best on {best}, "
              f"within 10% on {within} of {n}")


if __name__ == "__main__":
    main()
