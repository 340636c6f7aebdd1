#!/usr/bin/env python3
"""Micro-benchmark of the symmetry rewrites (symmetry-dataflow.txt, section
5): each program of targets/tests/symmetry/ emitted as lifted and with
every symmetry use applied (`tenslift emit --symmetry=all`), both timed in
one process on the same inputs, runs of the two interleaved so that load on
the machine hits both alike.

Corpus programs take the sizes, value ranges and scalar values of
benchmarks/manifest.toml at the chosen dataset; the paper's programs take
the sizes listed in PAPER_SIZES. Before timing, the two variants' outputs
must agree (relative 1e-9: the rewrites reorder sums). NumPy and PyTorch
call the generated function on arrays restored before each run (outside
the timed region); JAX times the jitted function on device-resident
inputs; StableHLO is compiled once by XLA (jax's backend) and its
executable timed. A third variant, `--symmetry` (the target's policy,
symmetry::Policy::for_target), is timed too where it differs from both.

    nice -n 10 .venv/bin/python scripts/symmetry_microbench.py \\
        --bin target/release/tenslift --repeat 9 --out results/symmetry-2026-11-26.md

`--survey` instead lists, for every lifted program in the corpus snapshots
(tests/snapshots/lift_corpus__corpus_*.snap), the uses `--symmetry` applies
per target (no timing).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

# The same module loading, variant timing and manifest reading as the
# emitter micro-benchmark.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from emit_microbench import BenchError, Variant, load_module, manifest_entry  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "targets" / "tests" / "symmetry"
CORPUS = ["syrk", "syr2k", "covariance", "correlation", "reorder_dot", "dot_trans"]
PAPER_SIZES = {
    "paper_dot_cse": {"n": 1024},
    "paper_chained": {"n": 2048, "t": 10},
    "paper_reduce": {"n": 48},
}
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}
PARAM = re.compile(r"(\w+): (?:(in|out|inout) )?(\w+)(?:\[([^\]]*)\])?")


def signature(text: str) -> list[tuple[str, str, str, list[str]]]:
    """(name, access, type, dims) of each parameter of the program's func."""
    head = re.search(r"func \w+\((.*?)\)\s*(->\s*\w+\s*)?\{", text, re.S)
    if head is None:
        raise BenchError("no func header")
    params = []
    for m in PARAM.finditer(head.group(1)):
        name, access, ty, dims = m.groups()
        params.append((name, access or "in", ty, [d.strip() for d in dims.split(",")] if dims else []))
    return params


def inputs(name: str, text: str, dataset: str, seed: int) -> tuple[dict[str, int], list[Any], list[int]]:
    """Sizes, arguments in parameter order, and the indices of written arrays."""
    entry = manifest_entry(name) if name in CORPUS else None
    sizes = dict(entry["sizes"][dataset]) if entry else dict(PAPER_SIZES[name])
    declared = {p["name"]: p for p in entry["params"]} if entry else {}
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    written = []
    for i, (pname, access, ty, dims) in enumerate(signature(text)):
        if ty == "size":
            args.append(int(sizes[pname]))
            continue
        spec = declared.get(pname, {})
        dtype = DTYPES[ty]
        if not dims and access == "in":
            args.append(dtype(spec.get("value", 1.5)))
            continue
        shape = tuple(int(eval(d, {"__builtins__": {}}, dict(sizes))) for d in dims)
        lo, hi = spec.get("range", [0.0, 1.0])
        args.append(rng.uniform(lo, hi, size=shape).astype(dtype))
        if access != "in":
            written.append(i)
    return sizes, args, written


def emit(binary: Path, program: Path, target: str, sizes: dict[str, int], uses: str | None,
         out: Path) -> tuple[str, str]:
    command = [str(binary), "emit", "--target", target, str(program), "-o", str(out)]
    command += [f"--size={k}={v}" for k, v in sizes.items()] if target == "hlo" else []
    command += [f"--symmetry={uses}"] if uses else []
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"{shlex.join(command)}: {done.stderr.strip()}")
    return out.read_text(), done.stderr


def numpy_variant(path, fname, pristine, written, sizes) -> Variant:
    fn = getattr(load_module(path, path.stem), fname)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in pristine]

    def restore():
        for i, a in enumerate(pristine):
            if isinstance(a, np.ndarray):
                np.copyto(args[i], a)

    return Variant(lambda: fn(*args), restore,
                   lambda r: [args[i].copy() for i in written] + [r])


def torch_variant(path, fname, pristine, written, sizes) -> Variant:
    import torch

    fn = getattr(load_module(path, path.stem), fname)
    tensors = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in pristine]
    args = [t.clone() if isinstance(t, torch.Tensor) else t for t in tensors]

    def restore():
        for i, t in enumerate(tensors):
            if isinstance(t, torch.Tensor):
                args[i].copy_(t)

    def run():
        with torch.no_grad():
            return fn(*args)

    def outputs(r):
        r = r.numpy() if isinstance(r, torch.Tensor) else r
        return [args[i].numpy().copy() for i in written] + [r]

    return Variant(run, restore, outputs)


def jax_variant(path, fname, pristine, written, sizes) -> Variant:
    import jax

    jax.config.update("jax_enable_x64", True)
    jitted = getattr(load_module(path, path.stem), fname + "_jit")
    device = jax.devices("cpu")[0]
    args = [a if isinstance(a, int) else jax.device_put(a, device) for a in pristine]

    def outputs(result):
        arrays, returned = result
        return [np.asarray(v) for v in arrays] + [None if returned is None else np.asarray(returned)]

    return Variant(lambda: jax.block_until_ready(jitted(*args)), lambda: None, outputs)


def hlo_variant(path, fname, pristine, written, sizes) -> Variant:
    import jax
    from jax._src.lib import xla_client
    from jax.extend import backend as jax_backend

    jax.config.update("jax_enable_x64", True)
    backend = jax_backend.get_backend("cpu")
    devices = backend.devices()[:1]
    executable = backend.compile_and_load(path.read_text(), xla_client.DeviceList(tuple(devices)),
                                          xla_client.CompileOptions())
    buffers = [jax.device_put(np.asarray(a), devices[0]) for a in pristine if not isinstance(a, int)]

    def run():
        return [r.block_until_ready() for r in executable.execute(buffers)]

    return Variant(run, lambda: None, lambda r: [np.asarray(x) for x in r])


VARIANTS = {"numpy": numpy_variant, "pytorch": torch_variant, "jax": jax_variant, "hlo": hlo_variant}


def agree(a: list[Any], b: list[Any]) -> bool:
    for x, y in zip(a, b):
        if x is None and y is None:
            continue
        x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
        scale = max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)
        if x.shape != y.shape or not np.allclose(x, y, rtol=1e-9, atol=1e-9 * scale):
            return False
    return True


def uses_of(report: str) -> str:
    kinds = sorted(set(re.findall(r"statement \d+: ([a-z ]+):", report)))
    return ", ".join(kinds) if kinds else "none"


def bench(name: str, target: str, binary: Path, work: Path, dataset: str,
          repeat: int) -> dict[str, Any]:
    program = PROGRAMS / f"{name}.tensir"
    text = program.read_text()
    sizes, pristine, written = inputs(name, text, dataset, seed=20261126)
    fname = re.search(r"func (\w+)\(", text).group(1)
    ext = "mlir" if target == "hlo" else "py"
    paths = {label: work / f"sym_{name}_{target}_{label}.{ext}" for label in ("orig", "all", "own")}
    orig, _ = emit(binary, program, target, sizes, None, paths["orig"])
    rewritten, report = emit(binary, program, target, sizes, "all", paths["all"])
    own, _ = emit(binary, program, target, sizes, "target", paths["own"])
    default = "= all" if own == rewritten else "= original" if own == orig else "own"
    row: dict[str, Any] = {"benchmark": name, "target": target, "uses": uses_of(report),
                           "sizes": " ".join(f"{k}={v}" for k, v in sizes.items()),
                           "default": default}
    if rewritten == orig:
        row["status"] = "no use applies"
        return row
    labels = ["orig", "all"] + (["own"] if default == "own" else [])
    variants = {label: VARIANTS[target](paths[label], fname, pristine, written, sizes)
                for label in labels}
    first = {label: v.first_outputs() for label, v in variants.items()}
    if not all(agree(first["orig"], first[label]) for label in labels):
        row["status"] = "MISMATCH (not timed)"
        return row
    times: dict[str, list[float]] = {label: [] for label in labels}
    for v in variants.values():
        v.time_once()
    for rep in range(repeat):
        for label in labels[rep % len(labels):] + labels[:rep % len(labels)]:
            times[label].append(variants[label].time_once())
    row.update(status="ok", **{label: statistics.median(t) for label, t in times.items()})
    return row


def corpus_programs() -> list[tuple[str, str]]:
    """(suite/kernel, TensIR text) of every lifted or partial program in the
    corpus snapshots."""
    found = []
    for snap in sorted((ROOT / "tests" / "snapshots").glob("lift_corpus__corpus_*.snap")):
        suite = snap.stem.split("__corpus_", 1)[1]
        lines = snap.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^(\S+): (lifted|partial)$", line)
            if m:
                body = []
                for following in lines[i + 1:]:
                    if not following.startswith("  "):
                        break
                    body.append(following[2:])
                found.append((f"{suite}/{m.group(1)}", "\n".join(body) + "\n"))
    return found


def survey(binary: Path, work: Path) -> list[str]:
    """Markdown rows: each corpus program some target rewrites, with the uses."""
    rows = []
    programs = corpus_programs()
    for name, text in programs:
        path = work / (name.replace("/", "__") + ".tensir")
        path.write_text(text)
        uses = {}
        for target in VARIANTS:
            command = [str(binary), "emit", str(path), "-t", target, "--symmetry", "-o", os.devnull]
            done = subprocess.run(command, capture_output=True, text=True)
            # The report comes before the code (StableHLO then refuses the
            # unbound sizes: the rewrite is what is surveyed).
            uses[target] = uses_of(done.stderr) if "symmetry:" in done.stderr else "error"
        if any(u != "none" for u in uses.values()):
            rows.append(f"| {name} | " + " | ".join(uses[t] for t in VARIANTS) + " |")
    head = [f"{len(programs)} lifted programs; {len(rows)} rewritten on some target.", "",
            "| program | " + " | ".join(VARIANTS) + " |", "|---|" + "---|" * len(VARIANTS)]
    return head + rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    import jax
    import torch

    return (f"{cpu}, {os.cpu_count()} cores (load average at start {load}); Python "
            f"{platform.python_version()}, NumPy {np.__version__}, PyTorch {torch.__version__} "
            f"({torch.get_num_threads()} threads), JAX {jax.__version__} (CPU)")


def write_report(rows: list[dict[str, Any]], out: Path, command: str, repeat: int,
                 dataset: str, where: str) -> None:
    lines = ["# Symmetry rewrites: original vs rewritten programs", "", "```sh", command, "```", "",
             f"Machine: {where}.", "",
             f"Corpus programs at dataset {dataset} (benchmarks/manifest.toml), the paper's at the "
             "sizes in the table; median of "
             f"{repeat} runs per variant, interleaved in one process on the same inputs, outputs "
             "checked to agree first. `uses` are the rewrites `--symmetry=all` applies; `default` "
             "is what the target's policy (`--symmetry`) emits: the same as all uses, the "
             "original, or its own program (then timed too). Speedup = original median / "
             "rewritten median; rows whose original runs under 10 ms are marked `<10ms`.",
             "", "| benchmark | target | sizes | uses | original (ms) | all uses (ms) | speedup "
             "| default | default (ms) | speedup |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        head = f"| {r['benchmark']} | {r['target']} | {r.get('sizes', '')} | {r.get('uses', '')} |"
        if "orig" in r:
            flag = " <10ms" if r["orig"] < 0.010 else ""
            own = (f"{r['own'] * 1e3:.1f} | {r['orig'] / r['own']:.2f}×" if "own" in r
                   else "– | –")
            lines.append(f"{head} {r['orig'] * 1e3:.1f}{flag} | {r['all'] * 1e3:.1f} | "
                         f"{r['orig'] / r['all']:.2f}× | {r['default']} | {own} |")
        else:
            lines.append(f"{head} – | – | {r['status']} | {r.get('default', '')} | – | – |")
    out.write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", type=Path, default=ROOT / "target" / "release" / "tenslift")
    ap.add_argument("--benchmarks", nargs="+", default=CORPUS + list(PAPER_SIZES))
    ap.add_argument("--targets", nargs="+", default=list(VARIANTS), choices=sorted(VARIANTS))
    ap.add_argument("--dataset", default="LARGE")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--work", type=Path, default=Path("/tmp/symmetry-microbench"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--survey", action="store_true",
                    help="list the uses applied to every corpus program instead of timing")
    args = ap.parse_args()
    if args.repeat < 5:
        ap.error("--repeat must be at least 5")
    args.work.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(args.work))
    command = "nice -n 10 .venv/bin/python " + shlex.join(["scripts/symmetry_microbench.py"] +
                                                          sys.argv[1:])
    if args.survey:
        lines = ["# Symmetry rewrites over the corpus", "", "```sh", command, "```", ""]
        args.out.write_text("\n".join(lines + survey(args.bin, args.work)) + "\n")
        return 0
    where = machine()
    rows = []
    for name in args.benchmarks:
        for target in args.targets:
            try:
                row = bench(name, target, args.bin, args.work, args.dataset, args.repeat)
            except BenchError as e:
                row = {"benchmark": name, "target": target, "status": f"error: {e}"}
            rows.append(row)
            print(row, file=sys.stderr, flush=True)
            write_report(rows, args.out, command, args.repeat, args.dataset, where)
    return 0 if all(r["status"] in ("ok", "no use applies") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
