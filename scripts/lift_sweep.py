"""Runs `tenslift lift` on every kernel of benchmarks/manifest.toml and writes a
Markdown report: status, time, cost and complexity per kernel, and, when both
search modes run, a comparison of `--search best` against `--search first` on
the STENSO kernels with STENSO's optimal complexity (benchmarks/stenso_optimal.toml).

Usage: lift_sweep.py [--bin target/release/tenslift] [--timeout 20]
                     [--search best|first|both] [--jobs N] [--only NAME ...]
                     [--cost-table FILE.json] --out results/FILE.md

`--jobs N` lifts N kernels at once (each `tenslift` also uses rayon inside, so
on a 2-core machine N = 2 is the sensible maximum). A stop-gap until
`tenslift bench` (the batch harness) exists.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import tomllib
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lift(binary: str, kernel: dict, timeout: float, search: str, cost_table: str | None,
         dataset: str) -> dict:
    cmd = [binary, "lift", f"benchmarks/{kernel['file']}", "--function", kernel["function"],
           "--target", "numpy", "--json", "--timeout", str(timeout), "--search", search]
    # The flags the bench compiles the entry with (src/bench/manifest.rs
    # `c_flags`): its include directories, and for PolyBench's distributed
    # form the dataset switch. Without them every `-dist` kernel is
    # rejected (no polybench.h).
    for inc in kernel.get("include", []):
        cmd += ["-I", f"benchmarks/{inc}"]
    if kernel.get("form") == "distributed":
        cmd += ["-D", f"{dataset}_DATASET"]
    if cost_table:
        cmd += ["--cost-table", cost_table]
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - start
    record = {"status": "rejected" if done.returncode == 1 else "failed", "cost": None,
              "complexity": None, "program": None, "stats": None, "note": "", "kept_loops": None}
    for line in done.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if obj.get("function") == kernel["function"]:
            record.update(status=obj.get("status", "failed"), cost=obj.get("cost"),
                          complexity=obj.get("complexity"), program=obj.get("program"),
                          stats=obj.get("stats"), note=(obj.get("message") or "")[:110],
                          kept_loops=obj.get("kept_loops"))
    if done.returncode not in (0, 1, 5) and not record["note"]:
        tail = done.stderr.strip().splitlines()
        record["note"] = f"exit {done.returncode}: " + (tail[-1][:100] if tail else "")
    if done.returncode == 1 and not record["note"]:
        record["note"] = done.stderr.strip().splitlines()[0][:110] if done.stderr.strip() else ""
    record["time"] = wall
    return record


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def sweep(args, kernels: list[dict], search: str) -> list[tuple[dict, dict]]:
    def one(kernel: dict) -> dict:
        record = lift(args.bin, kernel, args.timeout, search, args.cost_table, args.dataset)
        print(f"[{search}] {kernel['name']}: {record['status']} {record['time']:.2f} s",
              file=sys.stderr, flush=True)
        return record
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        records = list(pool.map(one, kernels))
    return list(zip(kernels, records))


def fmt(value, spec: str = "") -> str:
    if value is None or value == "":
        return ""
    return format(value, spec)


def mode_section(rows: list[tuple[dict, dict]], search: str) -> list[str]:
    counts = Counter(r["status"] for _, r in rows)
    per_suite: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for k, r in rows:
        per_suite[k["suite"]][0] += 1
        per_suite[k["suite"]][1] += r["status"] == "lifted"
    all_times = [r["time"] for _, r in rows]
    lifted_times = [r["time"] for _, r in rows if r["status"] == "lifted"]
    lines = [
        f"## `--search {search}`",
        "",
        "| kernels | lifted | partial | failed | rejected by the frontend |",
        "|---|---|---|---|---|",
        f"| {len(rows)} | {counts['lifted']} | {counts['partial']} | {counts['failed']} | "
        f"{counts['rejected']} |",
        "",
        f"Time over all kernels: total {sum(all_times):.0f} s, median "
        f"{statistics.median(all_times):.2f} s, p95 {percentile(all_times, 0.95):.2f} s, "
        f"max {max(all_times):.2f} s.",
    ]
    if lifted_times:
        lines.append(
            f"Time over lifted kernels: median {statistics.median(lifted_times):.2f} s, "
            f"p95 {percentile(lifted_times, 0.95):.2f} s, max {max(lifted_times):.2f} s.")
    lines += ["", "| suite | kernels | lifted |", "|---|---|---|"]
    lines += [f"| {s} | {n} | {l} |" for s, (n, l) in per_suite.items()]
    lines += goals_section(rows)
    lines += ["", "| kernel | suite | manifest expects | status | time (s) | cost | complexity "
              "| steps | backtracks | pattern-matched | solved algebraically | work | note |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for k, r in rows:
        note = r["note"].replace("|", "\\|")
        s = r["stats"] or {}
        lines.append(
            f"| {k['name']} | {k['suite']} | {k['expect']} | {r['status']} | {r['time']:.2f} | "
            f"{fmt(r['cost'], '.4g')} | {fmt(r['complexity'])} | {fmt(s.get('steps'))} | "
            f"{fmt(s.get('backtracks'))} | {fmt(s.get('pattern_matched'))} | "
            f"{fmt(s.get('solved_algebraically'))} | {fmt(s.get('work'))} | {note} |")
    return lines + [""]


def complete(r: dict) -> bool:
    """A whole program: lifted, or partial with the dependent loops kept
    (not `partial` in the sense of only some outputs solved)."""
    return r["status"] == "lifted" or (r["status"] == "partial" and bool(r["kept_loops"]))


def goals_section(rows: list[tuple[dict, dict]]) -> list[str]:
    """The figures issue #6 asks for: the 99-kernel TENSORIZE union, its 15
    PolyBench kernels, and the frontier PolyBench kernels (partial lifts)."""
    union = [(k, r) for k, r in rows if k["suite"] != "stenso"
             and not (k["suite"] == "polybench" and k["expect"] == "partial")]
    frontier = [(k, r) for k, r in rows if k["suite"] == "polybench" and k["expect"] == "partial"]
    poly = [(k, r) for k, r in union if k["suite"] == "polybench"]
    whole = sum(r["status"] == "lifted" for _, r in union)
    kept = [k["name"] for k, r in union if complete(r) and r["status"] != "lifted"]
    missing = [f"{k['name']} ({r['status']})" for k, r in union if not complete(r)]

    def listed(items: list[tuple[dict, dict]]) -> str:
        return ", ".join(f"{k['name']}" + (f" (loops kept: {', '.join(r['kept_loops'])})"
                                           if r["status"] == "partial" and r["kept_loops"] else "")
                         for k, r in items if complete(r)) or "none"
    return [
        "",
        f"TENSORIZE union: {whole + len(kept)}/{len(union)} with a complete program "
        f"({whole} lifted whole" + (f", {len(kept)} with loops kept: {', '.join(kept)}" if kept else "")
        + f"); not lifted: {', '.join(missing) or 'none'}.",
        f"PolyBench in the union: {sum(complete(r) for _, r in poly)}/{len(poly)}: {listed(poly)}.",
        f"Frontier PolyBench (partial lifting): {sum(complete(r) for _, r in frontier)}/{len(frontier)}: "
        f"{listed(frontier)}.",
    ]


def stenso_section(by_mode: dict[str, list[tuple[dict, dict]]]) -> list[str]:
    optimal = {k["name"]: k for k in
               tomllib.loads((ROOT / "benchmarks/stenso_optimal.toml").read_text())["kernel"]}
    modes = [m for m in ("best", "first") if m in by_mode]
    lookup = {m: {k["name"]: r for k, r in rows} for m, rows in by_mode.items()}
    names = [k["name"] for k, _ in by_mode[modes[0]] if k["suite"] == "stenso"]
    header = "| kernel | STENSO optimum | optimal degree |"
    rule = "|---|---|---|"
    for m in modes:
        header += f" {m}: status | {m}: cost | {m}: degree |"
        rule += "---|---|---|"
    lines = ["## STENSO kernels: best vs first vs STENSO's optimum", "",
             "Degree = asymptotic complexity (degree of the leading term of the analytic cost "
             "with all size parameters growing together); the optimum's degree is from "
             "benchmarks/stenso_optimal.toml (STENSO Tables I and II).", "", header, rule]
    at_optimum = Counter()
    for name in names:
        opt = optimal.get(name, {})
        row = f"| {name} | `{opt.get('optimum', '?')}` | {opt.get('degree', '?')} |"
        for m in modes:
            r = lookup[m][name]
            row += f" {r['status']} | {fmt(r['cost'], '.4g')} | {fmt(r['complexity'])} |"
            if r["status"] == "lifted" and r["complexity"] is not None \
                    and r["complexity"] <= opt.get("degree", -1):
                at_optimum[m] += 1
        lines.append(row)
    lines.append("")
    for m in modes:
        lifted = sum(lookup[m][n]["status"] == "lifted" for n in names)
        lines.append(f"- `--search {m}`: {lifted}/{len(names)} lifted, "
                     f"{at_optimum[m]}/{len(names)} at STENSO's optimal complexity.")
    if len(modes) == 2:
        cheaper = sum(1 for n in names
                      if lookup["best"][n]["cost"] is not None
                      and lookup["first"][n]["cost"] is not None
                      and lookup["best"][n]["cost"] < lookup["first"][n]["cost"])
        lines.append(f"- best is cheaper than first on {cheaper} kernels (both lifted).")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/tenslift")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--search", choices=["best", "first", "both"], default="best")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--only", nargs="*", help="kernel names (default: all)")
    parser.add_argument("--cost-table")
    parser.add_argument("--dataset", default="LARGE",
                        help="dataset switch of distributed-form entries, as `tenslift bench`'s")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    kernels = tomllib.loads((ROOT / "benchmarks/manifest.toml").read_text())["kernel"]
    if args.only:
        kernels = [k for k in kernels if k["name"] in set(args.only)]
    modes = ["best", "first"] if args.search == "both" else [args.search]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    by_mode = {m: sweep(args, kernels, m) for m in modes}

    command = " ".join(["scripts/lift_sweep.py"] + sys.argv[1:])
    lines = [
        f"# Synthesis sweep over the manifest ({started})",
        "",
        "## How it was made",
        "",
        "```sh",
        "bash scripts/setup.sh   # release build",
        f".venv/bin/python {command}",
        "```",
        "",
        f"Machine: {platform.node() or 'unknown'}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, Debian 12; {args.jobs} kernel(s) at a time. `time` is the wall "
        "time of the whole command (extraction, spec, library, search, acceptance at two size "
        "tuples, emission). A kernel counts as lifted only when its program equals the C spec at "
        "both size tuples. Stats columns are TENSORIZE Table 2's (exploration steps, "
        "backtracks, sketches pattern-matched, sketches solved algebraically).",
        "",
    ]
    if any(k["suite"] == "stenso" for k in kernels):
        lines += stenso_section(by_mode)
    for m in modes:
        lines += mode_section(by_mode[m], m)
    (ROOT / args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
