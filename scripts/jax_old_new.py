#!/usr/bin/env python3
"""Times two bench runs' generated JAX programs of the same kernels side by side.

usage: scripts/jax_old_new.py OLD_RUN_DIR NEW_RUN_DIR

For heat-3d-dist, jacobi-2d-dist and fdtd-2d-dist (PolyBench's LARGE sizes), loads
OLD/kernels/<k>/jax.py and NEW/kernels/<k>/jax.py, runs each `kernel_<k>_jit` on the same
device-resident random inputs as scripts/bench_runner.py times it (block_until_ready),
alternating old and new three times, and prints both medians and the largest difference
between their outputs. Used for results/jax-interior-store-2026-11-29.md.
"""
import importlib.util
import statistics
import sys
import time

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

R = np.random.rand
CASES = {
    "heat-3d-dist": ("kernel_heat_3d", lambda: (500, 120, R(120, 120, 120), R(120, 120, 120), 120)),
    "jacobi-2d-dist": ("kernel_jacobi_2d", lambda: (500, 1300, R(1300, 1300), R(1300, 1300), 1300)),
    "fdtd-2d-dist": ("kernel_fdtd_2d", lambda: (500, 1000, 1200, R(1000, 1200), R(1000, 1200),
                                                R(1000, 1200), R(500), 500, 1000, 1200)),
}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old_dir, new_dir = sys.argv[1:]
    for kernel, (fn, make) in CASES.items():
        args = [jax.device_put(x) if isinstance(x, np.ndarray) else x for x in make()]
        tag = kernel.replace("-", "_")
        old = getattr(load(f"{old_dir}/kernels/{kernel}/jax.py", "old_" + tag), fn + "_jit")
        new = getattr(load(f"{new_dir}/kernels/{kernel}/jax.py", "new_" + tag), fn + "_jit")
        ro, rn = jax.block_until_ready(old(*args)), jax.block_until_ready(new(*args))
        diff = max(float(np.abs(np.asarray(x) - np.asarray(y)).max()) for x, y in zip(ro[0], rn[0]))
        times = {"old": [], "new": []}
        for _ in range(3):
            for name, f in (("old", old), ("new", new)):
                start = time.perf_counter()
                jax.block_until_ready(f(*args))
                times[name].append(time.perf_counter() - start)
        print(f"{kernel}: old {statistics.median(times['old']) * 1e3:.1f} ms, "
              f"new {statistics.median(times['new']) * 1e3:.1f} ms, max difference {diff}")


if __name__ == "__main__":
    main()
