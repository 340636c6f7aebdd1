#!/usr/bin/env python3
"""Micro-benchmark of generated code: two emitters (old and new tenslift
binaries) on the same lifted programs, timed in one process on the same
inputs, old and new runs interleaved so that load on the machine hits both.

Programs are the lifted `program.tensir` files kept under results/bench-*
(found by kernel name); inputs follow benchmarks/manifest.toml (types,
value ranges, sizes of the chosen dataset). Each kernel runs once per
variant first and the outputs of old and new must agree bit for bit
(NaNs compared as equal), else the kernel is reported as a mismatch and
not timed.

Timing per variant mirrors scripts/bench_runner.py: NumPy and PyTorch call
the generated function on arrays restored before each run (outside the
timed region); JAX times the jitted function on device-resident inputs,
blocking until the result is ready.

    nice -n 15 .venv/bin/python scripts/emit_microbench.py \
        --old-bin /tmp/tenslift-old --new-bin target/release/tenslift \
        --repeat 7 --out results/emit-microbench-2026-11-22.md
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import shlex
import statistics
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_KERNELS = ["array_inc", "cube_in_place", "darken_blend_8", "multiply_blend_8",
                   "normal_blend_8", "linear_burn_8", "wvec", "matadd", "lerp", "gemm_nn"]
DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
          "u16": np.uint16, "u32": np.uint32, "f32": np.float32, "f64": np.float64,
          "bool": np.bool_}


class BenchError(Exception):
    pass


def manifest_entry(name: str) -> dict[str, Any]:
    with open(ROOT / "benchmarks" / "manifest.toml", "rb") as f:
        manifest = tomllib.load(f)
    for kernel in manifest["kernel"]:
        if kernel["name"] == name:
            return kernel
    raise BenchError(f"{name}: not in benchmarks/manifest.toml")


def program_path(name: str) -> Path:
    found = sorted((ROOT / "results").glob(f"bench-*/kernels/{name}/program.tensir"))
    if not found:
        raise BenchError(f"{name}: no results/bench-*/kernels/{name}/program.tensir")
    return found[0]


def dim_value(dim: Any, sizes: dict[str, int]) -> int:
    if isinstance(dim, int):
        return dim
    return int(eval(str(dim), {"__builtins__": {}}, dict(sizes)))  # shapes like "n + 1"


def make_inputs(entry: dict[str, Any], dataset: str, seed: int) -> list[Any]:
    """Arguments in C order: arrays and scalars drawn in the manifest's
    ranges, sizes as ints."""
    sizes = entry["sizes"][dataset]
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    for p in entry["params"]:
        if p["kind"] == "size":
            args.append(int(sizes[p["name"]]))
            continue
        dtype = DTYPES[p["type"]]
        lo, hi = p.get("range", [0, 1])
        shape = tuple(dim_value(d, sizes) for d in p.get("shape", []))
        if np.issubdtype(dtype, np.integer):
            value = rng.integers(int(lo), int(hi), size=shape, endpoint=True).astype(dtype)
        elif dtype is np.bool_:
            value = rng.integers(0, 1, size=shape, endpoint=True).astype(dtype)
        else:
            value = rng.uniform(float(lo), float(hi), size=shape).astype(dtype)
        args.append(value if p["kind"] == "array" else value[()])
    return args


def emit(binary: Path, program: Path, target: str, out: Path) -> Path:
    done = subprocess.run([str(binary), "emit", "--target", target, str(program), "-o", str(out)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"{binary} emit {program}: {done.stderr.strip()}")
    return out


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise BenchError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        a, b, equal_nan=np.issubdtype(a.dtype, np.inexact))


class Variant:
    """One generated module of one target, ready to run and time."""

    def __init__(self, run: Callable[[], Any], restore: Callable[[], None],
                 outputs: Callable[[Any], list[Any]]):
        self.run, self.restore, self.outputs = run, restore, outputs

    def first_outputs(self) -> list[Any]:
        self.restore()
        return self.outputs(self.run())

    def time_once(self) -> float:
        self.restore()
        start = time.perf_counter()
        self.run()
        return time.perf_counter() - start


def written_indices(entry: dict[str, Any]) -> list[int]:
    outputs = set(entry.get("outputs", []))
    return [i for i, p in enumerate(entry["params"]) if p["name"] in outputs]


def numpy_variant(module, entry, pristine) -> Variant:
    fn = getattr(module, entry["function"])
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in pristine]

    def restore():
        for i, a in enumerate(pristine):
            if isinstance(a, np.ndarray):
                np.copyto(args[i], a)

    def outputs(returned):
        return [args[i].copy() for i in written_indices(entry)] + [returned]

    return Variant(lambda: fn(*args), restore, outputs)


def torch_variant(module, entry, pristine) -> Variant:
    import torch

    fn = getattr(module, entry["function"])
    tensors = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in pristine]
    args = [t.clone() if isinstance(t, torch.Tensor) else t for t in tensors]

    def restore():
        for i, t in enumerate(tensors):
            if isinstance(t, torch.Tensor):
                args[i].copy_(t)

    def run():
        with torch.no_grad():
            return fn(*args)

    def outputs(returned):
        returned = returned.numpy() if isinstance(returned, torch.Tensor) else returned
        return [args[i].numpy().copy() for i in written_indices(entry)] + [returned]

    return Variant(run, restore, outputs)


def jax_variant(module, entry, pristine) -> Variant:
    import jax

    jax.config.update("jax_enable_x64", True)
    jitted = getattr(module, entry["function"] + "_jit")
    device = jax.devices("cpu")[0]
    args = [a if isinstance(a, int) else jax.device_put(a, device) for a in pristine]
    jax.block_until_ready(args)

    def outputs(result):
        written, returned = result
        return [np.asarray(v) for v in written] + [None if returned is None else np.asarray(returned)]

    return Variant(lambda: jax.block_until_ready(jitted(*args)), lambda: None, outputs)


VARIANTS = {"numpy": numpy_variant, "pytorch": torch_variant, "jax": jax_variant}


def bench_kernel(name: str, targets: list[str], bins: dict[str, Path], work: Path,
                 dataset: str, repeat: int) -> list[dict[str, Any]]:
    entry = manifest_entry(name)
    program = program_path(name)
    pristine = make_inputs(entry, dataset, seed=20261122)
    rows = []
    for target in targets:
        variants = {}
        for label, binary in bins.items():
            path = emit(binary, program, target, work / f"{name}_{target}_{label}.py")
            module = load_module(path, f"mb_{name}_{target}_{label}")
            variants[label] = VARIANTS[target](module, entry, pristine)
        outs = {label: v.first_outputs() for label, v in variants.items()}
        agree = all(same(a, b) if a is not None or b is not None else True
                    for a, b in zip(outs["old"], outs["new"]))
        row: dict[str, Any] = {"kernel": name, "target": target, "status": "ok" if agree else
                               "MISMATCH (not timed)"}
        if agree:
            times: dict[str, list[float]] = {label: [] for label in variants}
            for v in variants.values():
                v.time_once()  # warm-up
            for rep in range(repeat):
                order = ["old", "new"] if rep % 2 == 0 else ["new", "old"]
                for label in order:
                    times[label].append(variants[label].time_once())
            row["old"] = statistics.median(times["old"])
            row["new"] = statistics.median(times["new"])
        rows.append(row)
        print(row, file=sys.stderr, flush=True)
        del variants
    return rows


def geomean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values)))) if values else float("nan")


def write_report(rows, out: Path, command: str, repeat: int, dataset: str) -> None:
    lines = ["# Generated-code micro-benchmark: old vs new emitter", "", "```sh", command, "```", "",
             f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()},"
             f" NumPy {np.__version__}. Dataset {dataset}; median of {repeat} runs per variant, old and"
             " new interleaved in one process on the same inputs; outputs of old and new checked equal"
             " bit for bit first. The machine ran other benchmarks at the same time: read the ratios,"
             " not the absolute times. Speedup = old median / new median.", "",
             "| kernel | target | old median (s) | new median (s) | speedup |", "|---|---|---|---|---|"]
    for r in rows:
        if "old" in r:
            lines.append(f"| {r['kernel']} | {r['target']} | {r['old']:.4f} | {r['new']:.4f} |"
                         f" {r['old'] / r['new']:.2f}× |")
        else:
            lines.append(f"| {r['kernel']} | {r['target']} | – | – | {r['status']} |")
    lines += ["", "| target | kernels | geomean speedup |", "|---|---|---|"]
    for target in sorted({r["target"] for r in rows}):
        ratios = [r["old"] / r["new"] for r in rows if r["target"] == target and "old" in r]
        lines.append(f"| {target} | {len(ratios)} | {geomean(ratios):.2f}× |")
    out.write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old-bin", type=Path, required=True)
    ap.add_argument("--new-bin", type=Path, required=True)
    ap.add_argument("--kernels", nargs="+", default=DEFAULT_KERNELS)
    ap.add_argument("--targets", nargs="+", default=["numpy", "pytorch", "jax"],
                    choices=sorted(VARIANTS))
    ap.add_argument("--dataset", default="LARGE")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--work", type=Path, default=Path("/tmp/emit-microbench"))
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.repeat < 5:
        ap.error("--repeat must be at least 5")
    args.work.mkdir(parents=True, exist_ok=True)
    bins = {"old": args.old_bin, "new": args.new_bin}
    rows = []
    command = "nice -n 15 .venv/bin/python " + shlex.join(["scripts/emit_microbench.py"] + sys.argv[1:])
    for name in args.kernels:
        try:
            rows.extend(bench_kernel(name, args.targets, bins, args.work, args.dataset, args.repeat))
        except BenchError as e:
            print(f"{name}: {e}", file=sys.stderr)
            rows.append({"kernel": name, "target": "-", "status": f"error: {e}"})
        # Written after every kernel, so that an interrupted run keeps its rows.
        write_report(rows, args.out, command, args.repeat, args.dataset)
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
