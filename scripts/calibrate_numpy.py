"""Times each TensIR operation kind in this machine's NumPy, for `tenslift calibrate`.

Usage: calibrate_numpy.py [--quick]

Prints one JSON object on stdout: {"numpy_version": ..., "measurements": [{"op": KIND,
"n": N, "seconds": S}, ...]}. Each operation runs on float64 operands whose shapes are a
function of n (the same shapes `tenslift calibrate` prices with its analytic model, see
src/cli/calibrate.rs); `seconds` is the median of repeated timed calls. The fit (seconds
per call, per flop, per byte) is done by `tenslift calibrate`, not here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

# Sizes per kind: vectors of n elements for element-wise kinds, n x n matrices for
# the others (matching the shapes in src/cli/calibrate.rs).
VECTOR_SIZES = [1_000, 30_000, 300_000, 2_000_000]
MATRIX_SIZES = [16, 64, 192, 384]


def operations(n: int, rng: np.random.Generator) -> dict:
    x = rng.random(n) + 0.5
    y = rng.random(n) + 0.5
    a = rng.random((n, n)) if n <= 4096 else None
    ops = {
        "add": (lambda: np.add(x, y)),
        "mul": (lambda: np.multiply(x, y)),
        "div": (lambda: np.divide(x, y)),
        "exp": (lambda: np.exp(x)),
        "log": (lambda: np.log(x)),
        "sqrt": (lambda: np.sqrt(x)),
        "maximum": (lambda: np.maximum(x, y)),
        "where": (lambda: np.where(x > y, x, y)),
    }
    if a is not None:
        b = rng.random((n, n))
        ops.update({
            "sum": (lambda: np.sum(a, axis=1)),
            "matmul": (lambda: np.matmul(a, b)),
            "einsum": (lambda: np.einsum("ij,jk->ik", a, b)),
            "transpose_copy": (lambda: np.ascontiguousarray(a.T)),
            "slice_copy": (lambda: a[:, : n // 2].copy()),
        })
    return ops


MATRIX_KINDS = {"sum", "matmul", "einsum", "transpose_copy", "slice_copy"}


def median_seconds(fn, budget_s: float) -> float:
    fn()  # warm up (allocation, first-call dispatch)
    samples = []
    spent = 0.0
    while len(samples) < 5 or (spent < budget_s and len(samples) < 200):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        samples.append(elapsed)
        spent += elapsed
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (tests)")
    args = parser.parse_args()
    budget = 0.01 if args.quick else 0.2
    rng = np.random.default_rng(0)
    measurements = []
    for sizes, matrix in ((VECTOR_SIZES, False), (MATRIX_SIZES, True)):
        for n in sizes:
            for op, fn in operations(n, rng).items():
                if (op in MATRIX_KINDS) != matrix:
                    continue
                measurements.append({"op": op, "n": n, "seconds": median_seconds(fn, budget)})
    print(json.dumps({"numpy_version": np.__version__, "measurements": measurements}))


if __name__ == "__main__":
    main()
