"""Times each TensIR operation kind in every target, and this machine's limits, for
`tenslift calibrate`.

Usage: calibrate.py [--quick] [--targets numpy,jax,pytorch,hlo] [--cc gcc]
                    [--lu-helpers FILE.json]

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
elements for element-wise kinds, an n x n matrix and a vector for `matvec` and
`trisolve`, an n x n block of an n x 2n array added to in place for `region` (NumPy and
PyTorch only: XLA's fused loops are not priced by it), n x n matrices for the others: the
shapes src/cli/calibrate.rs prices with its analytic model); `seconds` is the median of
repeated timed calls. JAX runs each operation as one jitted call; `hlo` lowers the same
jitted function to StableHLO text and times the compiled executable the way
scripts/bench_runner.py does, but for `cholesky`, whose text is `stablehlo.cholesky` as
our emitter writes it (JAX lowers it to a LAPACK call instead). `lu` times each target's
own `_lu_nopivot` helper, whose sources `tenslift calibrate` passes in --lu-helpers
(the emitters' code; StableHLO has no LU, so it has no `lu` timings). torch.compile is not timed (its compile time per
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
# Matrix products also where the BLAS libraries reach their full rate: at 384
# XLA's product ran 1.5x under its rate at 1000-2000 (PolyBench's LARGE), and
# PyTorch's did not, so a fit on small sizes alone ordered them backwards.
PRODUCT_SIZES = MATRIX_SIZES + [1024]
# Matrix-vector work is bound by reading the matrix: timed from a cache's size
# up to one well past the last cache.
MATVEC_SIZES = [256, 512, 1024, 1536, 2048, 3072]
# A block of half of each row of an n x 2n array: the strided 2-D updates of
# kept loops (floyd-warshall's quadrants, gramschmidt's trailing columns).
REGION_SIZES = [256, 512, 1024, 2048]
QUICK_REGION_SIZES = [128, 256]
QUICK_VECTOR_SIZES = [1_000, 300_000]
QUICK_MATRIX_SIZES = [16, 128]
QUICK_MATVEC_SIZES = [256, 1024]
# Factorisations: from a size where Python's dispatch shows (the LU helpers
# recurse in Python) to PolyBench's LARGE.
FACTOR_SIZES = [256, 1024, 2048]
QUICK_FACTOR_SIZES = [128, 256]
# Which operands and sizes each kind is timed with.
KIND_CLASS = {
    **{k: "vector" for k in ("add", "mul", "div", "exp", "log", "sqrt", "pow", "maximum", "where")},
    **{k: "matrix" for k in ("sum", "transpose_copy", "slice_copy")},
    **{k: "product" for k in ("matmul", "einsum", "gram")},
    **{k: "matvec" for k in ("matvec", "trisolve")},
    **{k: "factor" for k in ("cholesky", "lu")},
    "region": "region",
}
ALL_TARGETS = ("numpy", "jax", "pytorch", "hlo")
# A general exponent: 2, 0.5 and -1 take NumPy's fast paths, which the
# eqsat `pow-*` rules reach anyway. src/cli/calibrate.rs prices the same.
POW_EXPONENT = 2.5


def numpy_ops(x, y, n):
    """Every kind in NumPy on operands x, y (vectors or matrices)."""
    a, b = x, y
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
    ops.update({
        "sum": (lambda: np.sum(a, axis=1)),
        "matmul": (lambda: np.matmul(a, b)),
        "gram": (lambda: np.matmul(a, a.T)),
        "matvec": (lambda: np.matmul(a, b)),
        "trisolve": (lambda: numpy_trisolve(a, b)),
        "cholesky": (lambda: np.linalg.cholesky(a)),
        "einsum": (lambda: np.einsum("ij,jk->ik", a, b)),
        "transpose_copy": (lambda: np.ascontiguousarray(a.T)),
        "slice_copy": (lambda: a[:, : n // 2].copy()),
        # As the NumPy target writes an in-place update of a block: fresh
        # views of the block as operand and destination.
        "region": (lambda: np.add(a[:, :n], b, out=a[:, :n])),
    })
    return ops


# Each target's `_lu_nopivot` source (--lu-helpers), keyed by target name.
LU_HELPERS: dict = {}


def lu_helper(target: str, **modules):
    """The target's `_lu_nopivot`, defined from its emitter's source."""
    namespace = dict(modules)
    exec(LU_HELPERS[target], namespace)  # noqa: S102 - our own emitters' code
    return namespace["_lu_nopivot"]


def numpy_trisolve(a, x):
    """What the NumPy target's `_trisolve` calls (targets/src/emit/solvers.rs)."""
    from scipy.linalg import solve_triangular

    return solve_triangular(a, x, lower=True, check_finite=False)


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
        "gram": lambda a, b: xp.matmul(a, a.T),
        "matvec": lambda a, x: xp.matmul(a, x),
        "einsum": lambda a, b: xp.einsum("ij,jk->ik", a, b),
        "transpose_copy": lambda a, b: a.T.copy(),
        "slice_copy": lambda a, b: a[:, : n // 2] + 0,
    }
    return {**vector, **matrix}


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


def operands(n: int, cls: str):
    rng = np.random.default_rng(n)
    if cls == "vector":
        return rng.random(n) + 0.5, rng.random(n) + 0.5
    if cls == "matvec":
        # A dominant diagonal keeps the triangular solve's values finite.
        return rng.random((n, n)) + n * np.eye(n), rng.random(n) + 0.5
    if cls == "region":
        return rng.random((n, 2 * n)) + 0.5, rng.random((n, n)) + 0.5
    if cls == "factor":
        # Symmetric with a dominant diagonal: positive definite (Cholesky),
        # and stable without pivoting (LU).
        a = rng.random((n, n))
        return a + a.T + 2 * n * np.eye(n), None
    return rng.random((n, n)) + 0.5, rng.random((n, n)) + 0.5


def of_class(fns: dict, cls: str) -> dict:
    return {k: v for k, v in fns.items() if KIND_CLASS[k] == cls}


class Numpy:
    def ops(self, n, cls):
        p, q = operands(n, cls)
        ops = numpy_ops(p, q, n)
        if "numpy" in LU_HELPERS:
            lu = lu_helper("numpy", np=np)
            ops["lu"] = lambda: lu(p)
        return of_class(ops, cls)


class Jax:
    def __init__(self):
        import jax
        import jax.numpy as jnp
        import jax.scipy.linalg  # noqa: F401 - jax.scipy is not imported by jax

        jax.config.update("jax_enable_x64", True)
        self.jax, self.jnp = jax, jnp

    def functions(self, n, cls, lu=True):
        jax, jnp = self.jax, self.jnp
        fns = array_functions(jnp, n)
        fns["trisolve"] = lambda a, x: jax.scipy.linalg.solve_triangular(a, x, lower=True)
        # As the JAX target emits it.
        fns["cholesky"] = lambda a, b=None: jnp.tril(
            jax.lax.linalg.cholesky(a, symmetrize_input=False))
        if lu and "jax" in LU_HELPERS:
            fns["lu"] = lambda a, b=None, f=lu_helper("jax", jax=jax, jnp=jnp, np=np): f(a)
        return of_class(fns, cls)

    def ops(self, n, cls):
        fns = self.functions(n, cls)
        args = [self.jax.device_put(v) for v in operands(n, cls) if v is not None]
        out = {}
        for name, fn in fns.items():
            jitted = self.jax.jit(fn)
            out[name] = (lambda j=jitted: self.jax.block_until_ready(j(*args)))
        return out


class Hlo(Jax):
    """The jitted function lowered to StableHLO text and compiled from the text."""

    def ops(self, n, cls):
        from jax._src.lib import xla_client
        from jax.extend import backend as jax_backend

        backend = jax_backend.get_backend("cpu")
        device = backend.devices()[0]
        fns = self.functions(n, cls, lu=False)
        host = [v for v in operands(n, cls) if v is not None]
        buffers = [self.jax.device_put(v, device) for v in host]
        out = {}
        for name, fn in fns.items():
            if name == "cholesky":
                text = stablehlo_cholesky(n)
            else:
                text = self.jax.jit(fn, keep_unused=True).lower(*host).as_text()
            exe = backend.compile_and_load(text, xla_client.DeviceList((device,)),
                                           xla_client.CompileOptions())
            out[name] = (lambda e=exe: self.jax.block_until_ready(e.execute(buffers)))
        return out


def stablehlo_cholesky(n: int) -> str:
    """`stablehlo.cholesky` of an n x n f64 matrix, as targets/src/emit/hlo.rs writes it."""
    t = f"tensor<{n}x{n}xf64>"
    return (f"module @cholesky {{\n  func.func public @main(%a: {t}) -> {t} {{\n"
            f'    %l = "stablehlo.cholesky"(%a) {{lower = true}} : ({t}) -> {t}\n'
            f"    return %l : {t}\n  }}\n}}\n")


class Torch:
    def __init__(self):
        import torch

        self.torch = torch

    def ops(self, n, cls):
        torch = self.torch
        fns = array_functions(torch, n)
        fns["transpose_copy"] = lambda a, b: a.t().contiguous()
        fns["slice_copy"] = lambda a, b: a[:, : n // 2].clone()
        fns["sum"] = lambda a, b: torch.sum(a, dim=1)
        # As the PyTorch target's `_trisolve` does: the vector as one column.
        fns["trisolve"] = lambda a, x: torch.linalg.solve_triangular(
            a, x.unsqueeze(-1), upper=False).squeeze(-1)
        fns["cholesky"] = lambda a, b: torch.linalg.cholesky(a)
        fns["region"] = lambda a, b: torch.add(a[:, :n], b, out=a[:, :n])
        if "pytorch" in LU_HELPERS:
            fns["lu"] = lambda a, b, f=lu_helper("pytorch", torch=torch): f(a)
        fns = of_class(fns, cls)
        args = [torch.from_numpy(v) if v is not None else None for v in operands(n, cls)]

        def call(fn):
            with torch.no_grad():
                fn(*args)

        return {name: (lambda f=fn: call(f)) for name, fn in fns.items()}


BACKENDS = {"numpy": Numpy, "jax": Jax, "pytorch": Torch, "hlo": Hlo}


def time_targets(backends: dict, sizes: dict, budget: float, rounds: int):
    """Times every kind of every target at `sizes` (the sizes of each class of kinds).

    Each (class, size) is timed for the targets in turn, `rounds` times over, so that
    a slow spell of the machine falls on all of them alike rather than on whichever
    target ran then (one such spell made JAX's 1024 x 1024 product 2x slower in one
    table than in the next); a kind's seconds are the median of its rounds' medians.
    A target whose library fails is dropped, with the reason in `skipped`.
    """
    samples, skipped = {}, {}

    def drop(target, e):
        skipped[target] = f"{type(e).__name__}: {e}"
        backends.pop(target, None)

    for cls, class_sizes in sizes.items():
        for n in class_sizes:
            ops = {}
            for target, backend in list(backends.items()):
                try:
                    ops[target] = backend.ops(n, cls)
                except Exception as e:  # noqa: BLE001 - said why in `skipped`
                    drop(target, e)
            for _ in range(rounds):
                for target, fns in ops.items():
                    if target not in backends:
                        continue
                    try:
                        for op, fn in fns.items():
                            seconds = median_seconds(fn, budget / rounds)
                            samples.setdefault((target, op, n), []).append(seconds)
                    except Exception as e:  # noqa: BLE001 - said why in `skipped`
                        drop(target, e)
    rows = [{"target": t, "op": op, "n": n, "seconds": statistics.median(v)}
            for (t, op, n), v in samples.items() if t in backends]
    # One call of the cheapest program: an addition of two one-element vectors.
    overhead = {t: median_seconds(b.ops(1, "vector")["add"], budget) for t, b in backends.items()}
    return rows, overhead, skipped


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
    parser.add_argument("--lu-helpers", type=Path,
                        help="JSON of each target's _lu_nopivot source (from tenslift calibrate)")
    args = parser.parse_args()
    if args.lu_helpers:
        LU_HELPERS.update(json.loads(args.lu_helpers.read_text()))
    budget = 0.01 if args.quick else 0.3
    sizes = {
        "vector": QUICK_VECTOR_SIZES if args.quick else VECTOR_SIZES,
        "matrix": QUICK_MATRIX_SIZES if args.quick else MATRIX_SIZES,
        "product": QUICK_MATRIX_SIZES if args.quick else PRODUCT_SIZES,
        "matvec": QUICK_MATVEC_SIZES if args.quick else MATVEC_SIZES,
        "factor": QUICK_FACTOR_SIZES if args.quick else FACTOR_SIZES,
        "region": QUICK_REGION_SIZES if args.quick else REGION_SIZES,
    }
    versions = {"numpy": np.__version__}
    backends, skipped = {}, {}
    for target in [t for t in args.targets.split(",") if t]:
        if target not in BACKENDS:
            sys.exit(f"unknown target `{target}` (known: {', '.join(ALL_TARGETS)})")
        try:
            backends[target] = BACKENDS[target]()
        except Exception as e:  # noqa: BLE001 - a missing library skips its target, said why
            skipped[target] = f"{type(e).__name__}: {e}"
    measurements, overhead, failed = time_targets(backends, sizes, budget, 1 if args.quick else 3)
    skipped.update(failed)
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
