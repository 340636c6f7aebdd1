"""Runs the input NumPy function of `tenslift optimize` on seeded random
inputs: the reference the optimised program is compared with.

Usage: python reference.py MANIFEST.json

The manifest names the file, the function and the cases; per case this
writes every input as `in_<name>.npy` and every result as `out_<name>.npy`
into the case's directory, or the Python error into `error.txt`.
Floats are uniform in [-1, 1], or in [0.5, 2] for parameters that reach a
log, a square root, a power or a divisor.
"""

import importlib.util
import json
import os
import sys
import traceback

import numpy as np


def load(path, name):
    spec = importlib.util.spec_from_file_location("tenslift_input_program", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    return getattr(module, name)


def run_case(f, case):
    rng = np.random.default_rng(case["seed"])
    args = []
    for p in case["params"]:
        lo, hi = (0.5, 2.0) if p["positive"] else (-1.0, 1.0)
        a = rng.uniform(lo, hi, size=tuple(p["shape"])).astype(p["dtype"])
        np.save(os.path.join(case["dir"], "in_%s.npy" % p["name"]), a)
        args.append(a if p["shape"] else a[()])
    with np.errstate(all="ignore"):
        result = f(*args)
    results = tuple(result) if case["tuple"] else (result,)
    if len(results) != len(case["outputs"]):
        raise ValueError("returned %d values, expected %d" % (len(results), len(case["outputs"])))
    for (name, dtype), value in zip(case["outputs"], results):
        # A transposed result is Fortran-ordered, which the Rust .npy
        # reader refuses: write every result in C order.
        value = np.ascontiguousarray(np.asarray(value, dtype=dtype))
        np.save(os.path.join(case["dir"], "out_%s.npy" % name), value)


def main(manifest):
    with open(manifest) as fh:
        m = json.load(fh)
    f = load(m["file"], m["function"])
    for case in m["cases"]:
        try:
            run_case(f, case)
        except Exception:
            with open(os.path.join(case["dir"], "error.txt"), "w") as fh:
                fh.write(traceback.format_exc(limit=3))


if __name__ == "__main__":
    main(sys.argv[1])
