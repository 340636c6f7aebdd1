"""Times each TensIR operation kind in every target, and this machine's limits, for
`tenslift calibrate`.

Usage: calibrate.py [--quick] [--targets numpy,jax,pytorch,hlo] [--cc gcc]

Prints one JSON object on stdout:

    {"versions": {"numpy": ..., "jax": ..., "torch": ...},
     "measurements": [{"target": T, "op": KIND, "n": N, "seconds": S}, ...],
     "call_overhead_s": {T: S},            # one call of a trivial program
     "machine": {"numpy_triad_bytes_per_s": ..., "c_triad_bytes_per_s": ...,
                 "dgemm_flops_per_s": ..., "sgemm_flops_per_s": ...,
                 "bandwidth_levels": [{"working_set_bytes": B, "bytes_per_s": R}, ...]},
     "c": {"n_stream": ..., "n_matmul": ..., "triad_s": ..., "dot_s": ..., "matmul_s": ...},
     "skipped": {T: why}}

Each operation runs on float64 operands whose shapes are a function of n (vectors of n
elements for element-wise kinds, n x n matrices for the others: the shapes
src/cli/calibrate.rs prices with its analytic model); `seconds` is the median of
repeated timed calls. JAX runs each operation as one jitted call; `hlo` lowers the same
jitted function to StableHLO text and times the compiled executable the way
scripts/bench_runner.py does. torch.compile is not timed (its compile time per
operation kind would make calibration take minutes); it is priced as PyTorch. The fit
(seconds per call, per flop, per byte) is done by `tenslift calibrate`, not here.

The triad (a = b + s * c) follows STREAM's convention of 24 bytes per element; NumPy
does it in two passes (a temporary), so its figure understates what the memory can do.
The C reference loops (scripts/calibrate_c.c) are compiled with gcc -O3 -march=native;
the C triad also runs at working sets of 384 KiB, 3 MiB and 24 MiB (`bandwidth_levels`,
with the full-size one last), since data that fits a cache moves faster than memory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

VECTOR_SIZES = [1_000, 30_000, 300_000, 2_000_000]
MATRIX_SIZES = [16, 64, 192, 384]
QUICK_VECTOR_SIZES = [1_000, 300_000]
QUICK_MATRIX_SIZES = [16, 128]
MATRIX_KINDS = {"sum", "matmul", "einsum", "transpose_copy", "slice_copy"}
ALL_TARGETS = ("numpy", "jax", "pytorch", "hlo")
# A general exponent: 2, 0.5 and -1 take NumPy's fast paths, which the
# eqsat `pow-*` rules reach anyway. src/cli/calibrate.rs prices the same.
POW_EXPONENT = 2.5


def numpy_ops(x, y, a, b, n):
    ops = {
        "add": (lambda: np.add(x, y)),
        "mul": (lambda: np.multiply(x, y)),
        "div": (lambda: np.divide(x, y)),
        "exp": (lambda: np.exp(x)),
        "log": (lambda: np.log(x)),
        "sqrt": (lambda: np.sqrt(x)),
        "pow": (lambda: np.power(x, POW_EXPONENT)),
        "maximum": (lambda: np.maximum(x, y)),
        "where": (lambda: np.where(x > y, x, y)),
    }
    if a is not None:
        ops.update({
            "sum": (lambda: np.sum(a, axis=1)),
            "matmul": (lambda: np.matmul(a, b)),
            "einsum": (lambda: np.einsum("ij,jk->ik", a, b)),
            "transpose_copy": (lambda: np.ascontiguousarray(a.T)),
            "slice_copy": (lambda: a[:, : n // 2].copy()),
        })
    return ops


def array_functions(xp, n):
    """The operation kinds as functions of their operands, in array library `xp`."""
    vector = {
        "add": lambda x, y: x + y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
        "exp": lambda x, y: xp.exp(x),
        "log": lambda x, y: xp.log(x),
        "sqrt": lambda x, y: xp.sqrt(x),
        # torch names it pow, NumPy and jax.numpy power.
        "pow": lambda x, y: getattr(xp, "power", getattr(xp, "pow", None))(x, POW_EXPONENT),
        "maximum": lambda x, y: xp.maximum(x, y),
        "where": lambda x, y: xp.where(x > y, x, y),
    }
    matrix = {
        "sum": lambda a, b: xp.sum(a, axis=1),
        "matmul": lambda a, b: xp.matmul(a, b),
        "einsum": lambda a, b: xp.einsum("ij,jk->ik", a, b),
        "transpose_copy": lambda a, b: a.T.copy(),
        "slice_copy": lambda a, b: a[:, : n // 2] + 0,
    }
    return vector, matrix


def median_seconds(fn, budget_s: float) -> float:
    fn()  # warm up (allocation, first-call dispatch, compilation)
    samples = []
    spent = 0.0
    while len(samples) < 5 or (spent < budget_s and len(samples) < 200):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        samples.append(elapsed)
        spent += elapsed
    return statistics.median(samples)


def operands(n: int, matrix: bool):
    rng = np.random.default_rng(n)
    if matrix:
        return rng.random((n, n)) + 0.5, rng.random((n, n)) + 0.5
    return rng.random(n) + 0.5, rng.random(n) + 0.5


class Numpy:
    def ops(self, n, matrix):
        p, q = operands(n, matrix)
        ops = numpy_ops(p, q, p, q, n) if matrix else numpy_ops(p, q, None, None, n)
        return {k: v for k, v in ops.items() if (k in MATRIX_KINDS) == matrix}


class Jax:
    def __init__(self):
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        self.jax, self.jnp = jax, jnp

    def ops(self, n, matrix):
        vector, matrices = array_functions(self.jnp, n)
        fns = matrices if matrix else vector
        args = [self.jax.device_put(v) for v in operands(n, matrix)]
        out = {}
        for name, fn in fns.items():
            jitted = self.jax.jit(fn)
            out[name] = (lambda j=jitted: self.jax.block_until_ready(j(*args)))
        return out


class Hlo(Jax):
    """The jitted function lowered to StableHLO text and compiled from the text."""

    def ops(self, n, matrix):
        from jax._src.lib import xla_client
        from jax.extend import backend as jax_backend

        backend = jax_backend.get_backend("cpu")
        device = backend.devices()[0]
        vector, matrices = array_functions(self.jnp, n)
        fns = matrices if matrix else vector
        host = operands(n, matrix)
        buffers = [self.jax.device_put(v, device) for v in host]
        out = {}
        for name, fn in fns.items():
            text = self.jax.jit(fn, keep_unused=True).lower(*host).as_text()
            exe = backend.compile_and_load(text, xla_client.DeviceList((device,)),
                                           xla_client.CompileOptions())
            out[name] = (lambda e=exe: self.jax.block_until_ready(e.execute(buffers)))
        return out


class Torch:
    def __init__(self):
        import torch

        self.torch = torch

    def ops(self, n, matrix):
        torch = self.torch
        vector, matrices = array_functions(torch, n)
        fns = dict(matrices if matrix else vector)
        fns["transpose_copy"] = lambda a, b: a.t().contiguous()
        fns["slice_copy"] = lambda a, b: a[:, : n // 2].clone()
        fns["sum"] = lambda a, b: torch.sum(a, dim=1)
        if not matrix:
            fns = {k: v for k, v in fns.items() if k not in MATRIX_KINDS}
        args = [torch.from_numpy(v) for v in operands(n, matrix)]

        def call(fn):
            with torch.no_grad():
                fn(*args)

        return {name: (lambda f=fn: call(f)) for name, fn in fns.items()}


BACKENDS = {"numpy": Numpy, "jax": Jax, "pytorch": Torch, "hlo": Hlo}


def time_target(backend, vector_sizes, matrix_sizes, budget):
    rows = []
    for sizes, matrix in ((vector_sizes, False), (matrix_sizes, True)):
        for n in sizes:
            for op, fn in backend.ops(n, matrix).items():
                rows.append({"op": op, "n": n, "seconds": median_seconds(fn, budget)})
    # One call of the cheapest program: an addition of two one-element vectors.
    trivial = backend.ops(1, False)["add"]
    return rows, median_seconds(trivial, budget)


def machine_limits(quick: bool, budget: float) -> dict:
    n = 4_000_000 if quick else 16_000_000
    b, c = np.ones(n), np.full(n, 0.5)
    a = np.empty(n)

    def triad():
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)

    limits = {"numpy_triad_bytes_per_s": 24.0 * n / median_seconds(triad, budget)}
    m = 512 if quick else 1536
    for name, dtype in (("dgemm", np.float64), ("sgemm", np.float32)):
        p = np.ones((m, m), dtype=dtype)
        q = np.ones((m, m), dtype=dtype)
        limits[f"{name}_flops_per_s"] = 2.0 * m**3 / median_seconds(lambda: p @ q, budget)
    return limits


def c_rates(cc: str, quick: bool) -> dict:
    source = Path(__file__).with_name("calibrate_c.c")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "calibrate_c"
        subprocess.run([cc, "-O3", "-march=native", "-o", str(exe), str(source)], check=True)
        n, m, reps = ("4000000", "192", "3") if quick else ("16000000", "384", "5")
        done = subprocess.run([str(exe), n, m, reps], check=True, capture_output=True, text=True)
        rates = json.loads(done.stdout)
        # The triad at working sets that fit the caches: a program whose data
        # fits there is bounded by their bandwidth, not the memory's.
        levels = []
        for small in (16_384, 131_072, 1_048_576):
            run = subprocess.run([str(exe), str(small), "4", "31" if quick else "63"],
                                 check=True, capture_output=True, text=True)
            t = json.loads(run.stdout)["triad_s"]
            levels.append({"working_set_bytes": 24 * small, "bytes_per_s": 24 * small / t})
    return rates, levels


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    parser.add_argument("--targets", default=",".join(ALL_TARGETS))
    parser.add_argument("--cc", default="gcc")
    args = parser.parse_args()
    budget = 0.01 if args.quick else 0.2
    vector_sizes = QUICK_VECTOR_SIZES if args.quick else VECTOR_SIZES
    matrix_sizes = QUICK_MATRIX_SIZES if args.quick else MATRIX_SIZES
    versions = {"numpy": np.__version__}
    measurements, overhead, skipped = [], {}, {}
    for target in [t for t in args.targets.split(",") if t]:
        if target not in BACKENDS:
            sys.exit(f"unknown target `{target}` (known: {', '.join(ALL_TARGETS)})")
        try:
            backend = BACKENDS[target]()
            rows, overhead[target] = time_target(backend, vector_sizes, matrix_sizes, budget)
        except Exception as e:  # noqa: BLE001 - a missing library skips its target, said why
            skipped[target] = f"{type(e).__name__}: {e}"
            continue
        measurements += [dict(r, target=target) for r in rows]
    for module in ("jax", "torch"):
        if module in sys.modules:
            versions[module] = sys.modules[module].__version__
    machine = machine_limits(args.quick, budget)
    c, levels = c_rates(args.cc, args.quick)
    machine["c_triad_bytes_per_s"] = 24.0 * c["n_stream"] / c["triad_s"]
    machine["bandwidth_levels"] = levels + [
        {"working_set_bytes": 24 * c["n_stream"], "bytes_per_s": machine["c_triad_bytes_per_s"]}]
    print(json.dumps({
        "numpy_version": np.__version__,
        "versions": versions,
        "measurements": measurements,
        "call_overhead_s": overhead,
        "machine": machine,
        "c": c,
        "skipped": skipped,
    }))


if __name__ == "__main__":
    main()
