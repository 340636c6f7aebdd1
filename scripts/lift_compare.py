"""Lifts every kernel of benchmarks/manifest.toml with two `tenslift` binaries,
alternating kernel by kernel so that both see the same machine load, and
writes a Markdown before/after table: coverage (lifted, partial, failed),
p50 / p90 / max lift time, and per kernel the status, time and whether the
program changed.

Usage: lift_compare.py --before BIN --after BIN [--timeout 60] [--only NAME ...]
                       --out results/FILE.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def lift(binary: str, entry: dict, timeout: float) -> dict:
    cmd = [binary, "lift", f"benchmarks/{entry['file']}", "--function", entry["function"],
           "--json", "--timeout", str(timeout)]
    for inc in entry.get("include", []):
        cmd += ["-I", f"benchmarks/{inc}"]
    if entry.get("form") == "distributed":
        cmd += ["-D", "MINI_DATASET"]
    start = time.monotonic()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = time.monotonic() - start
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    row = {"status": "rejected" if done.returncode == 1 else f"exit {done.returncode}",
           "program": None, "seconds": seconds, "cpu": cpu}
    for line in done.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if obj.get("function") == entry["function"]:
            row["status"] = obj.get("status", row["status"])
            row["program"] = obj.get("program")
    return row


def quantiles(values: list[float]) -> str:
    values = sorted(values)
    p90 = values[int(0.9 * (len(values) - 1))]
    return f"p50 {statistics.median(values):.2f} s, p90 {p90:.2f} s, max {values[-1]:.2f} s"


def summary(rows: list[dict]) -> str:
    count = {s: sum(1 for r in rows if r["status"] == s) for s in ("lifted", "partial", "failed")}
    return (f"{count['lifted']} lifted, {count['partial']} partial, {count['failed']} failed; "
            f"wall {quantiles([r['seconds'] for r in rows])}; "
            f"CPU {quantiles([r['cpu'] for r in rows])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    manifest = tomllib.loads((ROOT / "benchmarks/manifest.toml").read_text())
    entries = [k for k in manifest["kernel"] if not args.only or k["name"] in args.only]
    before, after = [], []
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for entry in entries:
        before.append(lift(args.before, entry, args.timeout))
        after.append(lift(args.after, entry, args.timeout))
    lines = [f"# Lift-only sweep: before / after ({started})", "",
             f"Command: `scripts/lift_compare.py --before {args.before} --after {args.after} "
             f"--timeout {args.timeout:g}`; machine: {platform.machine()}, {os.cpu_count()} cores, "
             f"load average at the end {os.getloadavg()[0]:.1f}. Each kernel is lifted by the two "
             "binaries one after the other (same load); `tenslift lift` in a child process; wall "
             "time and CPU time (user + system, all threads: less sensitive to a loaded "
             "machine) include the parse.", "",
             f"- before: {summary(before)}", f"- after: {summary(after)}", "",
             "| kernel | before | after | before wall (s) | after wall (s) | before CPU (s) "
             "| after CPU (s) | program |",
             "|---|---|---|---|---|---|---|---|"]
    for entry, b, a in zip(entries, before, after):
        same = "same" if b["program"] == a["program"] else "changed"
        lines.append(f"| {entry['name']} | {b['status']} | {a['status']} | {b['seconds']:.2f} | "
                     f"{a['seconds']:.2f} | {b['cpu']:.2f} | {a['cpu']:.2f} | {same} |")
    Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
