#!/usr/bin/env python3
"""Times generated JAX programs with and without the barrier that keeps a
division by a broadcast divisor a division (`_div` in the JAX emitter).

usage: scripts/jax_div_barrier.py LIFT_DIR KERNEL...

LIFT_DIR is a `tenslift bench --no-runtime` output (kernels/<k>/jax.py,
call.json, program.tensir). Each kernel's module is loaded twice: as
generated, and with `_div` replaced by a plain `a / b` (what the emitter
wrote before; XLA then multiplies by the reciprocal). Both `*_jit` functions
run on the same random inputs at the bench's sizes (call.json), alternating,
after a warm-up each; prints the median of REPEAT calls (block_until_ready)
of each, their ratio, and how many output elements differ.
"""
import importlib.util
import json
import re
import statistics
import sys
import time
from pathlib import Path

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
REPEAT = 15
DTYPES = {"f32": np.float32, "f64": np.float64, "i8": np.int8, "u8": np.uint8,
          "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
          "i64": np.int64, "bool": np.bool_}
PARAM = re.compile(r"(\w+): (?:(?:in|out|inout) )?(\w+)(?:\[([^\]]*)\])?")


def load(path, name, plain):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if plain:
        module._div = lambda a, b: a / b
    return module


def inputs(kdir):
    """Random arguments in the program's order, shapes from program.tensir
    at the sizes call.json records."""
    call = json.loads((kdir / "call.json").read_text())
    sizes = {p["name"]: p["value"] for p in call["params"] if p["kind"] == "size"}
    head = next(l for l in (kdir / "program.tensir").read_text().splitlines()
                if l.startswith("func "))
    params = head[head.index("(") + 1:head.rindex(")")]
    rng = np.random.default_rng(0)
    args = []
    for name, ty, dims in PARAM.findall(params):
        if ty == "size":
            args.append(sizes[name])
            continue
        shape = tuple(int(eval(d, {}, dict(sizes))) for d in dims.split(",")) if dims else ()
        value = rng.random(shape) + 0.5
        args.append(value.astype(DTYPES[ty]))
    return call["function"], args


def timed(f, args):
    t = time.perf_counter()
    jax.block_until_ready(f(*args))
    return time.perf_counter() - t


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root = Path(sys.argv[1])
    print("kernel,barrier_s,plain_s,barrier_over_plain,outputs_differing")
    for k in sys.argv[2:]:
        try:
            row = measure(root / "kernels" / k)
        except Exception as e:  # a kernel this simple harness cannot feed
            row = f"not measured: {type(e).__name__}: {e}".replace(",", ";")
        print(f"{k},{row}", flush=True)


def measure(kdir):
    """`barrier_s,plain_s,ratio,differing` of one kernel."""
    func, args = inputs(kdir)
    fs = [getattr(load(kdir / "jax.py", f"{kdir.name}_{p}", p), f"{func}_jit")
          for p in (False, True)]
    outs = [jax.tree_util.tree_leaves(f(*args)) for f in fs]
    differing = sum(int(np.sum(np.asarray(a) != np.asarray(b)))
                    for a, b in zip(*outs) if a is not None)
    times = [[], []]
    for _ in range(REPEAT):
        for which in (0, 1):
            times[which].append(timed(fs[which], args))
    med = [statistics.median(t) for t in times]
    return f"{med[0]:.6f},{med[1]:.6f},{med[0] / med[1]:.3f},{differing}"


if __name__ == "__main__":
    main()
