#!/usr/bin/env python3
"""Runs `tenslift verify --json` on every kernel of benchmarks/manifest.toml
(or a subset) and writes results/verification-<date>.md: per kernel the
bounded (Z3 at two size tuples), unbounded (Z3 with invariants) and
differential (generated code vs gcc-compiled C) verdicts, totals, and why
kernels are not proved.

Usage: verify_sweep.py [--bin target/release/tenslift] [--timeout 30] [--lift-timeout 60]
    [--targets numpy,jax,pytorch,hlo] [--suite polybench]... [--kernel gemm]...
    [--limit N] [--out results/verification-YYYY-MM-DD.md]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import time
import tomllib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def verify(binary: str, kernel: dict, timeout: float, lift_timeout: float, targets: str,
           programs: Path | None = None, save: Path | None = None) -> dict:
    cmd = [binary, "verify", f"benchmarks/{kernel['file']}", "--function", kernel["function"],
           "--json", "--timeout", str(timeout), "--lift-timeout", str(lift_timeout),
           "--targets", targets]
    # A program saved by an earlier sweep is checked as given (no search):
    # the prover can be re-measured without lifting again.
    given = programs / f"{kernel['name']}.tensir" if programs else None
    if given is not None and given.exists():
        cmd += ["--program", str(given)]
    # A kernel in its suite's layout reads the suite's headers; the
    # distributed form picks its sizes with -D<DATASET>_DATASET (MINI, as cref.py's
    # first differential dataset).
    for include in kernel.get("include", ()):
        cmd += ["-I", f"benchmarks/{include}"]
    if kernel.get("form") == "distributed":
        cmd += ["-D", "MINI_DATASET"]
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    record = {"bounded": "-", "unbounded": "-", "differential": "-", "status": "", "reason": "",
              "exit": done.returncode, "time": time.monotonic() - start}
    found = False
    for line in done.stdout.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if obj.get("function") == kernel["function"]:
            found = True
            record.update({k: obj.get(k, "") for k in
                           ("bounded", "unbounded", "differential", "status", "reason")})
            text = (obj.get("details") or {}).get("program")
            if save is not None and text:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{kernel['name']}.tensir").write_text(text)
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{kernel['name']}.json").write_text(json.dumps(obj, indent=1))
            if (obj.get("details") or {}).get("program") is None:
                # Not lifted: no check ran.
                record.update(bounded="-", unbounded="-", differential="-")
    if not found:
        first = done.stderr.strip().splitlines()[:1]
        record["status"] = "rejected" if done.returncode == 1 else "error"
        record["reason"] = first[0] if first else f"exit {done.returncode}"
    return record


def cell(text: str, width: int = 140) -> str:
    flat = " ".join(str(text).split()).replace("|", "\\|")
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release/tenslift")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--lift-timeout", type=float, default=60.0,
                        help="search deadline, as the synthesis sweep's --timeout")
    parser.add_argument("--targets", default="numpy,jax,pytorch,hlo")
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("--kernel", action="append", default=[])
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--programs", type=Path,
                        help="check <kernel>.tensir from this folder where present instead of lifting")
    parser.add_argument("--save-programs", type=Path,
                        help="write each lifted program to <folder>/<kernel>.tensir")
    parser.add_argument("--jobs", type=int, default=1,
                        help="kernels verified at once (each is its own process)")
    args = parser.parse_args()
    out = args.out or ROOT / "results" / f"verification-{time.strftime('%Y-%m-%d')}.md"
    kernels = tomllib.loads((ROOT / "benchmarks/manifest.toml").read_text())["kernel"]
    kernels = [k for k in kernels if k.get("expect") != "reject"]
    if args.suite:
        kernels = [k for k in kernels if k["suite"] in args.suite]
    if args.kernel:
        kernels = [k for k in kernels if k["name"] in args.kernel]
    if args.limit:
        kernels = kernels[: args.limit]
    def one(k: dict) -> tuple[dict, dict]:
        r = verify(args.bin, k, args.timeout, args.lift_timeout, args.targets,
                   args.programs, args.save_programs)
        print(f"{k['name']}: bounded {r['bounded']}, unbounded {r['unbounded']}, "
              f"differential {r['differential']} ({r['time']:.1f} s)", flush=True)
        return k, r

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(one, kernels))
    wall = time.monotonic() - started

    count = {c: Counter(r[c] for _, r in rows) for c in ("bounded", "unbounded", "differential")}
    failed = [k["name"] for k, r in rows if r["exit"] == 6]
    not_lifted = sum(1 for _, r in rows if r["bounded"] == "-")
    command = (f".venv/bin/python scripts/verify_sweep.py --bin {args.bin} --timeout {args.timeout:g} "
               f"--lift-timeout {args.lift_timeout:g} "
               f"--targets {args.targets}"
               + "".join(f" --suite {s}" for s in args.suite)
               + "".join(f" --kernel {s}" for s in args.kernel)
               + (f" --limit {args.limit}" if args.limit else "")
               + (f" --jobs {args.jobs}" if args.jobs > 1 else "")
               + (f" --programs {args.programs}" if args.programs else "")
               + (f" --save-programs {args.save_programs}" if args.save_programs else "")
               + f" --out {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    lines = [
        f"# Verification sweep over the manifest ({time.strftime('%Y-%m-%d')})",
        "",
        "## How it was made",
        "",
        "```sh",
        command,
        "```",
        "",
        f"Machine: {platform.node() or 'unknown'}, {platform.machine()}, Debian 12. Kernels "
        "marked `expect = \"reject\"` are left out. Each kernel is lifted, then checked: bounded = Z3 "
        "at two size tuples (floats as exact reals), unbounded = Z3 with loop invariants for all "
        "sizes, differential = generated code of each target against gcc-compiled C on the "
        "manifest's MINI and SMALL inputs (integers exact, floats within 16·(K+2)·u·(|C|+max|C|)).",
        "",
        "## Totals",
        "",
        f"{len(rows)} kernels, {not_lifted} not lifted (no check runs on those); "
        f"wall time {wall:.0f} s with {args.jobs} job(s).",
        "",
        "| check | " + " | ".join(["pass/proved", "fail", "unknown/skipped", "not run"]) + " |",
        "|---|---|---|---|---|",
    ]
    for check, good, open_ in (("bounded", "pass", "unknown"), ("unbounded", "proved", "unknown"),
                               ("differential", "pass", "skipped")):
        c = count[check]
        lines.append(f"| {check} | {c[good]} | {c['fail']} | {c[open_]} | {c['-']} |")
    lines += ["", f"Verification failures (exit 6): {', '.join(failed) if failed else 'none'}.", "",
              "## Per kernel", "",
              "| kernel | suite | bounded | unbounded | differential | status | time (s) |",
              "|---|---|---|---|---|---|---|"]
    for k, r in rows:
        lines.append(f"| {k['name']} | {k['suite']} | {r['bounded']} | {r['unbounded']} | "
                     f"{r['differential']} | {cell(r['status'], 60)} | {r['time']:.1f} |")
    lines += ["", "## Why kernels are not proved", ""]
    unproved = [(k, r) for k, r in rows if r["unbounded"] != "proved"]
    lines.append("Counted by the first line of the reason (failures first, then undecided checks).")
    lines.append("")
    reasons = Counter(cell(r["reason"].splitlines()[0] if r["reason"] else "", 100)
                      for _, r in unproved)
    for reason, n in reasons.most_common():
        lines.append(f"- {n} × {reason or '(no reason given)'}")
    lines += ["", "| kernel | reason |", "|---|---|"]
    for k, r in unproved:
        lines.append(f"| {k['name']} | {cell(r['reason'])} |")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".md.tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
