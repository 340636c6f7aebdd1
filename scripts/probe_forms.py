"""Lift every C file of a probe directory with two tenslift binaries and
print a Markdown table of the outcomes (lifted / partial / failed /
rejected) with the totals: how a change moves kernels written in the forms
public code uses (tests/fixtures/probe/).

    .venv/bin/python scripts/probe_forms.py --before OLD --after NEW [DIR]
"""

import argparse
import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def status(binary, path, timeout):
    """The status of the file's last kernel (a probe file defines its
    helpers first), run from the file's directory."""
    try:
        done = subprocess.run([binary, "lift", path.name, "--json", "-q", "--timeout", str(timeout)],
                              cwd=path.parent, capture_output=True, text=True, timeout=timeout * 2)
    except subprocess.TimeoutExpired:
        return "timeout"
    # The watchdog ended the run (exit 7): a case or kernel printed before
    # it must not stand for the whole file (darknet's upsample lifts its
    # forward case and runs out of time on the backward one).
    if done.returncode == 7:
        return "timeout"
    # Refused kernels are reported before lifted ones: the status is the
    # one of the function defined last in the file.
    text = path.read_text(errors="replace")
    found, last = "no output", -1
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            report = json.loads(line)
            name = re.escape(report.get("function") or "")
            definition = re.search(rf"\b{name}\s*\([^;{{}}]*\)\s*\{{", text)
            at = definition.start() if definition else -1
            if at >= last:
                found, last = report.get("status", "?"), at
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("dir", nargs="?", default=str(ROOT / "tests" / "fixtures" / "probe"))
    args = parser.parse_args()
    # Each file is lifted from its own directory: binaries by absolute path.
    before, after = (str(Path(b).resolve()) for b in (args.before, args.after))
    rows = [(p.name, status(before, p, args.timeout), status(after, p, args.timeout))
            for p in sorted(Path(args.dir).glob("*.c"))]
    print("| kernel | before | after |\n|---|---|---|")
    for name, before, after in rows:
        print(f"| {name} | {before} | {after} |")
    for label, col in (("before", 1), ("after", 2)):
        counts = {}
        for row in rows:
            counts[row[col]] = counts.get(row[col], 0) + 1
        shown = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        print(f"\n{label}: {shown} (of {len(rows)})")


if __name__ == "__main__":
    main()
