#!/usr/bin/env python3
"""Figures of a `tenslift bench` result directory (PNG and SVG into <run>/plots/):

- speedup_<suite>: per-kernel speedup over gcc -O3 of every variant (log scale),
- geomean_backends: geomean speedup over gcc -O3 per variant, plus the best
  lifted backend per kernel,
- synthesis_time_vs_length: synthesis time against the number of operations
  of the lifted program (TENSORIZE Figure 10 style),
- roofline: per kernel, the fraction of the roofline's lower bound (bytes over the
  calibrated bandwidth, FLOPs over the calibrated peak) that the best lifted backend
  reaches, and the one `--target auto` picked (from roofline.csv).

Usage: bench_plots.py --run results/RUN
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (the backend must be chosen first)

LIFTED = ("numpy", "jax", "pytorch", "torch-compile", "hlo")
ORDER = ("clang", "polly", "polly-parallel", *LIFTED, *(f"{v}-cuda" for v in LIFTED))


def read_csv(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def times_by_kernel(rows: list[dict[str, str]]) -> tuple[dict, dict]:
    times: dict[str, dict[str, float]] = defaultdict(dict)
    suites: dict[str, str] = {}
    for row in rows:
        suites[row["kernel"]] = row["suite"]
        try:
            median = float(row["median_s"])
        except (KeyError, ValueError):
            continue
        if row.get("status") == "ok" and median > 0:
            times[row["kernel"]][row["variant"]] = median
    return times, suites


def geomean(values: list[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def save(fig, out_dir: Path, name: str) -> None:
    for ext in ("png", "svg"):
        fig.savefig(out_dir / f"{name}.{ext}", dpi=150, bbox_inches="tight")
    plt.close(fig)


def plot_speedups(times, suites, out_dir: Path) -> list[str]:
    made = []
    variants = [v for v in ORDER if any(v in t for t in times.values())]
    by_suite: dict[str, list[str]] = defaultdict(list)
    for kernel in sorted(times):
        if "gcc" in times[kernel]:
            by_suite[suites[kernel]].append(kernel)
    for suite, kernels in sorted(by_suite.items()):
        width = 0.8 / max(len(variants), 1)
        fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(kernels) * max(1, len(variants) / 3)), 4))
        for i, variant in enumerate(variants):
            xs, ys = [], []
            for k, kernel in enumerate(kernels):
                if variant in times[kernel]:
                    xs.append(k + i * width)
                    ys.append(times[kernel]["gcc"] / times[kernel][variant])
            ax.bar(xs, ys, width=width, label=variant)
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(kernels))])
        ax.set_xticklabels(kernels, rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("speedup over gcc -O3")
        ax.set_title(f"{suite}: per-kernel speedup")
        ax.legend(fontsize=7, ncol=3)
        name = f"speedup_{suite}"
        save(fig, out_dir, name)
        made.append(name)
    return made


def plot_geomeans(times, out_dir: Path) -> str | None:
    labels, values = [], []
    for variant in ORDER:
        speedups = [t["gcc"] / t[variant] for t in times.values() if "gcc" in t and variant in t]
        g = geomean(speedups)
        if g is not None:
            labels.append(f"{variant}\n(n={len(speedups)})")
            values.append(g)
    best = [t["gcc"] / min(t[v] for v in LIFTED if v in t)
            for t in times.values() if "gcc" in t and any(v in t for v in LIFTED)]
    g = geomean(best)
    if g is not None:
        labels.append(f"best lifted\n(n={len(best)})")
        values.append(g)
    if not values:
        return None
    fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(values)), 4))
    bars = ax.bar(range(len(values)), values, color="tab:blue")
    for bar, value in zip(bars, values):
        ax.annotate(f"{value:.2f}×", (bar.get_x() + bar.get_width() / 2, value),
                    ha="center", va="bottom", fontsize=7)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("geomean speedup over gcc -O3")
    save(fig, out_dir, "geomean_backends")
    return "geomean_backends"


def plot_synthesis(lift_rows, out_dir: Path) -> str | None:
    points = []
    for row in lift_rows:
        try:
            if row["status"] == "lifted":
                points.append((int(row["program_ops"]), float(row["time_s"]), row["suite"]))
        except (KeyError, ValueError):
            continue
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for suite in sorted({p[2] for p in points}):
        xs = [p[0] for p in points if p[2] == suite]
        ys = [p[1] for p in points if p[2] == suite]
        ax.scatter(xs, ys, label=suite, s=14)
    ax.set_yscale("log")
    ax.set_xlabel("lifted program length (operations)")
    ax.set_ylabel("synthesis time (s)")
    ax.legend(fontsize=7, ncol=2)
    save(fig, out_dir, "synthesis_time_vs_length")
    return "synthesis_time_vs_length"


def plot_roofline(rows, out_dir: Path) -> str | None:
    points = []
    for row in rows:
        try:
            best = float(row["roofline_fraction"])
            auto_s = float(row["auto_s"]) if row.get("auto_s") else None
            bound = float(row["roofline_s"])
        except (KeyError, ValueError):
            continue
        points.append((row["kernel"], best, bound / auto_s if auto_s else None))
    if not points:
        return None
    points.sort(key=lambda p: -p[1])
    fig, ax = plt.subplots(figsize=(max(6, 0.35 * len(points)), 4))
    xs = range(len(points))
    ax.bar([x - 0.2 for x in xs], [100 * p[1] for p in points], width=0.4, label="best backend")
    ax.bar([x + 0.2 for x in xs], [100 * (p[2] or 0) for p in points], width=0.4,
           label="auto's pick")
    ax.set_yscale("log")
    ax.axhline(100, color="black", linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([p[0] for p in points], rotation=90, fontsize=7)
    ax.set_ylabel("% of the roofline bound (100 = machine limit)")
    ax.legend(fontsize=7)
    save(fig, out_dir, "roofline")
    return "roofline"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_plots.py", description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a tenslift bench result dir")
    args = parser.parse_args(argv)
    lift_rows = read_csv(args.run / "lift.csv")
    runtime_rows = read_csv(args.run / "runtime.csv")
    if not lift_rows and not runtime_rows:
        print(f"bench_plots: error: {args.run} has no lift.csv or runtime.csv", file=sys.stderr)
        return 2
    out_dir = args.run / "plots"
    out_dir.mkdir(parents=True, exist_ok=True)
    times, suites = times_by_kernel(runtime_rows)
    made = plot_speedups(times, suites, out_dir)
    made += [n for n in (plot_geomeans(times, out_dir), plot_synthesis(lift_rows, out_dir),
                         plot_roofline(read_csv(args.run / "roofline.csv"), out_dir)) if n]
    print("\n".join(made))
    return 0


if __name__ == "__main__":
    sys.exit(main())
