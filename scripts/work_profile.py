"""Runs `tenslift lift --json` on every kernel of benchmarks/manifest.toml and
writes one TSV row per kernel: status, wall seconds, and the search's work
counters (work spent, work at the last top-level improvement, library
evaluations, whether a work limit or a library limit stopped something).
This is how the search's work limits (`src/synth/budget.rs`, `Limits`) are
calibrated: run with a large `--effort` and a generous `--timeout`, then pick
limits above every kernel's `work_at_best` and below what makes the slowest
kernels slow.

Usage: work_profile.py [--bin target/release/tenslift] [--effort 1]
                       [--timeout 60] [--jobs 1] [--only NAME ...] --out FILE.tsv
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIELDS = ["name", "status", "seconds", "work", "work_at_best", "evaluations",
          "budget_exhausted", "library_truncated", "program_sha"]


def command(binary: str, entry: dict, effort: float, timeout: float) -> list[str]:
    cmd = [binary, "lift", f"benchmarks/{entry['file']}", "--function", entry["function"],
           "--json", "--timeout", str(timeout), "--effort", str(effort)]
    for inc in entry.get("include", []):
        cmd += ["-I", f"benchmarks/{inc}"]
    if entry.get("form") == "distributed":
        cmd += ["-D", "MINI_DATASET"]
    return cmd


def profile(binary: str, entry: dict, effort: float, timeout: float) -> dict:
    import hashlib
    start = time.monotonic()
    done = subprocess.run(command(binary, entry, effort, timeout), cwd=ROOT,
                          capture_output=True, text=True)
    row = {"name": entry["name"], "status": f"exit{done.returncode}",
           "seconds": f"{time.monotonic() - start:.2f}"}
    for line in done.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if obj.get("function") != entry["function"]:
            continue
        stats = obj.get("stats") or {}
        program = obj.get("program") or ""
        row.update(status=obj.get("status", row["status"]),
                   program_sha=hashlib.sha256(program.encode()).hexdigest()[:12],
                   **{k: stats.get(k, "") for k in FIELDS[3:8]})
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="target/release/tenslift")
    parser.add_argument("--effort", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    manifest = tomllib.loads((ROOT / "benchmarks/manifest.toml").read_text())
    entries = [k for k in manifest["kernel"] if not args.only or k["name"] in args.only]
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda e: profile(args.bin, e, args.effort, args.timeout), entries))
    with open(args.out, "w") as out:
        out.write("\t".join(FIELDS) + "\n")
        for row in rows:
            out.write("\t".join(str(row.get(f, "")) for f in FIELDS) + "\n")


if __name__ == "__main__":
    main()
