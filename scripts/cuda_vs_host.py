#!/usr/bin/env python3
"""Same-machine figures for a CUDA run: the GPU against gcc -O3 on the GPU
machine's own CPU.

    cuda_vs_host.py --runtime MERGED/runtime.csv --host HOST/runtime.csv
        [--previous OLDER/runtime.csv] > table.md

MERGED is a `tenslift bench --merge` directory of a CUDA run (its `-cuda`
rows, kernel-only `median_s` and end-to-end `e2e_median_s`, and the `gcc`
rows of the machine the lift ran beside); HOST is the `host/runtime.csv`
that `scripts/bench_cuda.sh` writes with BENCH_CUDA_HOST_C_UNTIL_S (gcc -O3
timed on the GPU machine's CPU, one kernel at a time). The tables say how
far the merged summary's cross-machine speedups move when the C runs on the
same machine as the GPU, which backend wins per suite, and, with
--previous (an earlier CUDA run's runtime.csv), how much a `-cuda` median
moves between two runs of the same kernel: the run-to-run noise the
speedups carry.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def times(rows: list[dict[str, str]], variant: str, column: str = "median_s") -> dict[str, float]:
    """kernel -> time of `variant`'s ok rows (column median_s or e2e_median_s)."""
    return {r["kernel"]: float(r[column]) for r in rows
            if r["variant"] == variant and r["status"] == "ok" and r.get(column)}


def geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else float("nan")


def best_of(rows: list[dict[str, str]], variants: list[str], column: str) -> dict[str, tuple[float, str]]:
    """kernel -> (fastest time, its variant) over `variants`."""
    best: dict[str, tuple[float, str]] = {}
    for variant in variants:
        for kernel, t in times(rows, variant, column).items():
            if kernel not in best or t < best[kernel][0]:
                best[kernel] = (t, variant)
    return best


def suite_of(rows: list[dict[str, str]]) -> dict[str, str]:
    return {r["kernel"]: r["suite"] for r in rows}


def fmt(x: float) -> str:
    return "–" if math.isnan(x) else (f"{x:.3g}×" if x < 100 else f"{x:.0f}×")


def speedup_table(runtime, host, cuda_variants) -> list[str]:
    """Per suite: host gcc vs the lift machine's gcc, and the best CUDA backend
    kernel-only and end to end vs the host's gcc."""
    suites = suite_of(runtime) | suite_of(host)
    host_gcc = times(host, "gcc")
    vm_gcc = times(runtime, "gcc")
    kernel_only = best_of(runtime, cuda_variants, "median_s")
    e2e = best_of(runtime, cuda_variants, "e2e_median_s")
    per_suite: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for kernel, h in host_gcc.items():
        bucket = per_suite[suites[kernel]]
        if kernel in vm_gcc:
            bucket["vm"].append(vm_gcc[kernel] / h)
        if kernel in kernel_only:
            bucket["k"].append(h / kernel_only[kernel][0])
            bucket["wins"].append(kernel_only[kernel][1])
        if kernel in e2e:
            bucket["e"].append(h / e2e[kernel][0])
    lines = ["| suite | kernels | lift machine's gcc time / host gcc time | best CUDA kernel-only vs host gcc | "
             "best CUDA end to end vs host gcc | slower than host gcc end to end |",
             "|---|---|---|---|---|---|"]
    everything: dict[str, list[float]] = defaultdict(list)
    for suite in sorted(per_suite):
        b = per_suite[suite]
        for key in ("vm", "k", "e"):
            everything[key].extend(b[key])
        slower = sum(1 for s in b["e"] if s < 1.0)
        lines.append(f"| {suite} | {len(b['k'])} | {fmt(geomean(b['vm']))} | {fmt(geomean(b['k']))} | "
                     f"{fmt(geomean(b['e']))} | {slower} |")
    slower = sum(1 for s in everything["e"] if s < 1.0)
    lines.append(f"| **all** | {len(everything['k'])} | {fmt(geomean(everything['vm']))} | "
                 f"{fmt(geomean(everything['k']))} | {fmt(geomean(everything['e']))} | {slower} |")
    return lines


def backend_table(runtime, cuda_variants) -> list[str]:
    """Per suite: how often each CUDA backend is the fastest kernel-only, and
    the geomean ratio of the first two backends' times."""
    suites = suite_of(runtime)
    best = best_of(runtime, cuda_variants, "median_s")
    first, second = (times(runtime, v) for v in cuda_variants[:2])
    wins: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    ratio: dict[str, list[float]] = defaultdict(list)
    for kernel, (_, variant) in best.items():
        wins[suites[kernel]][variant] += 1
    for kernel in first.keys() & second.keys():
        ratio[suites[kernel]].append(first[kernel] / second[kernel])
    head = " | ".join(f"fastest: {v}" for v in cuda_variants)
    lines = [f"| suite | {head} | {cuda_variants[0]} time / {cuda_variants[1]} time (geomean) |",
             "|---|" + "---|" * len(cuda_variants) + "---|"]
    for suite in sorted(wins):
        counts = " | ".join(str(wins[suite][v]) for v in cuda_variants)
        lines.append(f"| {suite} | {counts} | {fmt(geomean(ratio[suite]))} |")
    everything = [r for rs in ratio.values() for r in rs]
    totals = " | ".join(str(sum(w[v] for w in wins.values())) for v in cuda_variants)
    lines.append(f"| **all** | {totals} | {fmt(geomean(everything))} |")
    return lines


def noise_lines(runtime, previous, variant: str) -> list[str]:
    """How much `variant`'s kernel-only median moved between two runs."""
    now, before = times(runtime, variant), times(previous, variant)
    ratios = sorted(now[k] / before[k] for k in now.keys() & before.keys())
    if not ratios:
        return [f"No kernel has a {variant} time in both runs."]
    def q(p: float) -> float:
        return ratios[min(len(ratios) - 1, int(p * len(ratios)))]
    within = sum(1 for r in ratios if 0.8 <= r <= 1.25)
    return [f"{variant}, this run's median / the earlier run's, over {len(ratios)} kernels: geomean "
            f"{geomean(ratios):.3g}, p10 {q(0.1):.3g}, p50 {q(0.5):.3g}, p90 {q(0.9):.3g}; "
            f"{within} within 0.8-1.25."]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runtime", type=Path, required=True)
    parser.add_argument("--host", type=Path, required=True)
    parser.add_argument("--previous", type=Path)
    parser.add_argument("--variants", default="pytorch-cuda,torch-compile-cuda",
                        help="the CUDA variants compared, comma-separated")
    args = parser.parse_args(argv)
    try:
        runtime, host = read(args.runtime), read(args.host)
        previous = read(args.previous) if args.previous else None
    except OSError as error:
        print(f"cuda_vs_host: {error}", file=sys.stderr)
        return 2
    variants = [v for v in args.variants.split(",") if v]
    if len(variants) < 2:
        print("cuda_vs_host: --variants needs two CUDA variants at least", file=sys.stderr)
        return 2
    out = ["## Same machine: the GPU against gcc -O3 on its own host's CPU", "",
           *speedup_table(runtime, host, variants), "",
           "## Which CUDA backend is fastest (kernel-only)", "",
           *backend_table(runtime, variants)]
    if previous is not None:
        out += ["", "## Run to run", "", *noise_lines(runtime, previous, variants[0])]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
