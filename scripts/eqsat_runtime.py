#!/usr/bin/env python3
"""Times the NumPy code of corpus programs before and after equality
saturation (`tenslift optimize-tensir`, tests/eqsat_corpus.rs).

Reads the `<suite>__<kernel>.before.tensir` / `.after.tensir` pairs that
`TENSLIFT_EQSAT_CHANGED=DIR cargo test --release --test eqsat_corpus` writes,
emits each with `tenslift emit --target numpy`, runs both on the same random
inputs at a manifest dataset's sizes (declared extents `ext_*` set to the
largest size), checks that they agree, and times them interleaved: the best
of `--rounds` batches of calls, each batch long enough to last 20 ms, minus
the time to restore the `inout` arrays before each call, repeated
`--repeat` times (the median speedup is reported, with its range). Prints a
Markdown table and the geometric mean speedup. Set OPENBLAS_NUM_THREADS=1 on
a shared machine: threaded BLAS under load varies by 4x run to run.

    python3 scripts/eqsat_runtime.py --dir /tmp/eqsat/changed --dataset SMALL
"""

import argparse
import glob
import importlib.util
import math
import os
import re
import subprocess
import sys
import time
import tomllib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPES = {
    "f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32,
    "i16": np.int16, "i8": np.int8, "u8": np.uint8, "u16": np.uint16,
    "u32": np.uint32, "bool": np.bool_,
}


def split_top(text):
    """Splits at commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for c in text:
        depth += c == "["
        depth -= c == "]"
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur.strip())
    return parts


def signature(text):
    """(name, [(param, kind, access, dtype, dims)]) of a TensIR program."""
    m = re.search(r"func (\w+)\((.*?)\)\s*(->\s*\w+\s*)?\{", text, re.S)
    params = []
    for p in split_top(m.group(2)):
        name, ty = [s.strip() for s in p.split(":", 1)]
        access = "in"
        for a in ("inout", "out", "in"):
            if ty.startswith(a + " "):
                access, ty = a, ty[len(a) + 1:].strip()
        if ty == "size":
            params.append((name, "size", None, None, None))
        elif "[" in ty:
            dtype, dims = ty.split("[", 1)
            dims = split_top(dims.rstrip("]"))
            params.append((name, "array", access, dtype.strip(), dims))
        else:
            params.append((name, "scalar", None, ty, None))
    return m.group(1), params


def sizes_for(kernel, params, dataset, manifest):
    entry = next((k for k in manifest["kernel"] if k["name"] == kernel), None)
    given = dict((entry or {}).get("sizes", {}).get(dataset, {}))
    names = [p[0] for p in params if p[1] == "size"]
    sizes = {n: given.get(n, given.get(n.lower(), 64)) for n in names}
    widest = max([v for n, v in sizes.items() if not n.startswith("ext_")] + [1])
    for n in names:
        if n.startswith("ext_"):
            sizes[n] = widest
    return sizes


def dim_value(expr, sizes):
    return int(eval(expr.replace("/", "//"), {"__builtins__": {}}, dict(sizes)))


def inputs(params, sizes, seed):
    rng = np.random.default_rng(seed)
    args, inout = [], []
    for name, kind, access, dtype, dims in params:
        if kind == "size":
            args.append(sizes[name])
            continue
        np_type = DTYPES[dtype]
        shape = tuple(dim_value(d, sizes) for d in dims) if kind == "array" else ()
        if np.issubdtype(np_type, np.floating):
            value = rng.uniform(0.5, 1.5, shape).astype(np_type)
        elif np_type == np.bool_:
            value = rng.integers(0, 2, shape).astype(np_type)
        else:
            value = rng.integers(0, 100, shape).astype(np_type)
        if kind == "scalar":
            value = np_type(value)
        elif access == "inout":
            inout.append(len(args))
        args.append(value)
    return args, inout


def load(path, tenslift):
    py = path[: -len(".tensir")] + ".py"
    subprocess.run([tenslift, "emit", path, "--target", "numpy", "-o", py], check=True)
    spec = importlib.util.spec_from_file_location(os.path.basename(py)[:-3].replace("-", "_"), py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def results(args, returned):
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return arrays + ([np.asarray(returned)] if returned is not None else [])


def agree(x, y):
    for a, b in zip(x, y):
        if np.issubdtype(a.dtype, np.floating):
            tol = 1e-3 if a.dtype == np.float32 else 1e-8
            if not np.allclose(a, b, rtol=tol, atol=tol):
                return False
        elif not np.array_equal(a, b):
            return False
    return True


def batch_seconds(call, calls):
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def time_pair(funcs, args, inout, rounds):
    pristine = {i: args[i].copy() for i in inout}

    def runner(f):
        def call():
            for i in inout:
                np.copyto(args[i], pristine[i])
            return f(*args)
        return call

    def restore():
        for i in inout:
            np.copyto(args[i], pristine[i])

    calls = 1
    while batch_seconds(runner(funcs[0]), calls) * calls < 0.02 and calls < 1 << 16:
        calls *= 2
    best = [math.inf, math.inf]
    copy = math.inf
    for _ in range(rounds):
        for k, f in enumerate(funcs):
            best[k] = min(best[k], batch_seconds(runner(f), calls))
        copy = min(copy, batch_seconds(restore, calls))
    return [max(b - copy, 1e-9) for b in best]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--dataset", default="SMALL")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3,
                        help="independent timings per kernel; the median speedup is reported")
    parser.add_argument("--tenslift", default=os.path.join(ROOT, "target/release/tenslift"))
    opts = parser.parse_args()
    with open(os.path.join(ROOT, "benchmarks/manifest.toml"), "rb") as f:
        manifest = tomllib.load(f)
    rows, speedups = [], []
    for before in sorted(glob.glob(os.path.join(opts.dir, "*.before.tensir"))):
        after = before.replace(".before.", ".after.")
        stem = os.path.basename(before)[: -len(".before.tensir")]
        kernel = stem.split("__", 1)[1]
        with open(before) as f:
            name, params = signature(f.read())
        sizes = sizes_for(kernel, params, opts.dataset, manifest)
        mods = [load(before, opts.tenslift), load(after, opts.tenslift)]
        funcs = [getattr(m, name) for m in mods]
        outs = []
        for f in funcs:
            args, _ = inputs(params, sizes, 7)
            outs.append(results(args, f(*args)))
        ok = agree(*outs)
        args, inout = inputs(params, sizes, 7)
        runs = [time_pair(funcs, args, inout, opts.rounds) for _ in range(opts.repeat)]
        ratios = sorted(b / a for b, a in runs)
        t_before, t_after = min(r[0] for r in runs), min(r[1] for r in runs)
        speedup = ratios[len(ratios) // 2]
        speedups.append(speedup)
        shown = ", ".join(f"{k}={v}" for k, v in sizes.items() if not k.startswith("ext_"))
        rows.append(f"| {stem.replace('__', '/')} | {shown} | {t_before * 1e6:.1f} | "
                    f"{t_after * 1e6:.1f} | {speedup:.2f} ({ratios[0]:.2f}-{ratios[-1]:.2f}) | "
                    f"{'yes' if ok else 'NO'} |")
    print(f"| kernel | sizes ({opts.dataset}) | before (µs) | after (µs) | "
          f"speedup, median of {opts.repeat} (range) | outputs agree |")
    print("|---|---|---:|---:|---:|---|")
    print("\n".join(rows))
    geomean = math.exp(sum(math.log(s) for s in speedups) / max(len(speedups), 1))
    print(f"\ngeometric mean speedup over {len(speedups)} kernels: {geomean:.3f}")
    return 0 if all("| yes |" in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
