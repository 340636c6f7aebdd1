"""Runs `tenslift lift` on every kernel of benchmarks/manifest.toml, one after
another, and writes a Markdown table of status and time per kernel.

Usage: lift_sweep.py [--bin target/release/tenslift] [--timeout 20] --out results/FILE.md

A stop-gap until `tenslift bench` (the batch harness) exists.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import time
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lift(binary: str, kernel: dict, timeout: float) -> dict:
    cmd = [binary, "lift", f"benchmarks/{kernel['file']}", "--function", kernel["function"],
           "--target", "numpy", "--json", "--timeout", str(timeout)]
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - start
    record = {"status": "rejected" if done.returncode == 1 else "failed", "cost": "", "note": ""}
    for line in done.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if obj.get("function") == kernel["function"]:
            record.update(status=obj.get("status", "failed"), cost=obj.get("cost") or "",
                          note=(obj.get("message") or "")[:110])
    if done.returncode == 1 and not record["note"]:
        record["note"] = done.stderr.strip().splitlines()[0][:110] if done.stderr.strip() else ""
    record["time"] = wall
    return record


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/tenslift")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    kernels = tomllib.loads((ROOT / "benchmarks/manifest.toml").read_text())["kernel"]
    rows = [(k, lift(args.bin, k, args.timeout)) for k in kernels]

    counts = Counter(r["status"] for _, r in rows)
    per_suite: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for k, r in rows:
        per_suite[k["suite"]][0] += 1
        per_suite[k["suite"]][1] += r["status"] == "lifted"
    all_times = [r["time"] for _, r in rows]
    lifted_times = [r["time"] for _, r in rows if r["status"] == "lifted"]
    lines = [
        f"# Synthesis sweep over the manifest ({time.strftime('%Y-%m-%d')})",
        "",
        "## How it was made",
        "",
        "```sh",
        "bash scripts/setup.sh   # release build",
        f".venv/bin/python scripts/lift_sweep.py --bin {args.bin} --timeout {args.timeout:g} --out {args.out}",
        "```",
        "",
        f"Machine: {platform.node() or 'unknown'}, {platform.processor() or platform.machine()}, "
        "2 cores, 24 GB, Debian 12. Kernels run one after another; `time` is the wall time of the "
        "whole command (extraction, spec, search, acceptance at two size tuples, emission). "
        "A kernel counts as lifted only when its program equals the C spec at both size tuples.",
        "",
        "## Totals",
        "",
        "| kernels | lifted | partial | failed | rejected by the frontend |",
        "|---|---|---|---|---|",
        f"| {len(rows)} | {counts['lifted']} | {counts['partial']} | {counts['failed']} | {counts['rejected']} |",
        "",
        f"Time over all kernels: total {sum(all_times):.0f} s, median {statistics.median(all_times):.2f} s, "
        f"p95 {percentile(all_times, 0.95):.2f} s, max {max(all_times):.2f} s.",
    ]
    if lifted_times:
        lines.append(
            f"Time over lifted kernels: median {statistics.median(lifted_times):.2f} s, "
            f"p95 {percentile(lifted_times, 0.95):.2f} s, max {max(lifted_times):.2f} s.")
    lines += ["", "## Per suite", "", "| suite | kernels | lifted |", "|---|---|---|"]
    lines += [f"| {s} | {n} | {l} |" for s, (n, l) in per_suite.items()]
    lines += ["", "## Per kernel", "",
              "| kernel | suite | manifest expects | status | time (s) | cost | note |",
              "|---|---|---|---|---|---|---|"]
    for k, r in rows:
        note = r["note"].replace("|", "\\|")
        lines.append(f"| {k['name']} | {k['suite']} | {k['expect']} | {r['status']} | "
                     f"{r['time']:.2f} | {r['cost']} | {note} |")
    (ROOT / args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
