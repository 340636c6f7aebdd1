"""Times lifted scans (tests/fixtures/probe) against the gcc -O3 C they were
lifted from.

    .venv/bin/python scripts/time_scans.py BIN OUTDIR

lifts each kernel with BIN to numpy, jax and pytorch into OUTDIR, compiles
the C with `gcc -O3 -march=native` into a shared library called through
ctypes, runs each variant 7 times on the same inputs (after one warm-up
call; JAX's jitted function on device arrays, so the kernel alone) and
prints the medians in milliseconds and the speedups over the C, checking
the NumPy program's outputs against the C's once.
"""
import ctypes, importlib.util, statistics, subprocess, sys, time
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BIN, OUT = sys.argv[1], Path(sys.argv[2])
OUT.mkdir(parents=True, exist_ok=True)
N = 1 << 24
R = C = 4096
rng = np.random.default_rng(0)
KERNELS = [
    # (fixture, function, C argtypes, make-args)
    ("cumsum", "cumsum", lambda: dict(x=rng.integers(-100, 100, N, dtype=np.int32), y=np.zeros(N, np.int32), n=N),
     ["x", "y", "n"]),
    ("running_sum_ptr", "running_sum", lambda: dict(x=rng.uniform(-1, 1, N).astype(np.float32), y=np.zeros(N, np.float32), n=N),
     ["x", "y", "n"]),
    ("row_cumsum", "row_cumsum", lambda: dict(rows=R, cols=C, a=rng.uniform(-1, 1, (R, C)), b=np.zeros((R, C))),
     ["rows", "cols", "a", "b"]),
    ("col_cumsum", "col_cumsum", lambda: dict(n=R, m=C, a=rng.uniform(-1, 1, (R, C)).astype(np.float32), c=np.zeros((R, C), np.float32)),
     ["n", "m", "a", "c"]),
    ("integral_image", "integral_image", lambda: dict(img=rng.integers(0, 256, (R, C), dtype=np.uint8), ii=np.zeros((R, C), np.int32), w=C, h=R),
     ["img", "ii", "w", "h"]),
    ("peak_hold", "peak_hold", lambda: dict(x=rng.uniform(-1, 1, N).astype(np.float32), y=np.zeros(N, np.float32), n=N),
     ["x", "y", "n"]),
    ("csr_offsets", "csr_offsets", lambda: dict(counts=rng.integers(0, 50, N, dtype=np.int32), offsets=np.zeros(N + 1, np.int32), n=N),
     ["counts", "offsets", "n"]),
]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def median_time(call, reps=7):
    call()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); call(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def c_args(args, order):
    out = []
    for k in order:
        v = args[k]
        out.append(v.ctypes.data_as(ctypes.c_void_p) if isinstance(v, np.ndarray) else ctypes.c_int(v))
    return out


import torch, jax
rows = []
for stem, fn, make, order in KERNELS:
    src = ROOT / "tests/fixtures/probe" / f"{stem}.c"
    so = OUT / f"{stem}.so"
    subprocess.run(["gcc", "-O3", "-march=native", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    lib = ctypes.CDLL(str(so))
    args = make()
    ref = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    cf = getattr(lib, fn)
    t_c = median_time(lambda: cf(*c_args(ref, order)))
    res = {"C gcc -O3": t_c}
    for target in ["numpy", "jax", "pytorch"]:
        py = OUT / f"{stem}_{target}.py"
        subprocess.run([BIN, "lift", str(src), "--target", target, "-q", "-o", str(py)], check=True)
        m = load(py, f"{stem}_{target}")
        mine = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
        if target == "pytorch":
            mine = {k: (torch.from_numpy(v) if isinstance(v, np.ndarray) else v) for k, v in mine.items()}
            f = getattr(m, fn)
            call = lambda: f(**mine)
        elif target == "jax":
            j = getattr(m, fn + "_jit")
            dev = {k: (jax.device_put(v) if isinstance(v, np.ndarray) else v) for k, v in mine.items()}
            call = lambda: jax.block_until_ready(j(**dev))
        else:
            f = getattr(m, fn)
            call = lambda: f(**mine)
        res[target] = median_time(call)
        # Same result as the C (checked once, outside the timing).
        if target == "numpy":
            for k in order:
                if isinstance(ref[k], np.ndarray) and k not in ("x", "a", "img", "counts"):
                    assert np.allclose(np.asarray(mine[k], dtype=np.float64), ref[k].astype(np.float64), rtol=1e-3, atol=1e-2), (stem, k)
    rows.append((stem, res))
    print(stem, {k: f"{v*1e3:.2f} ms" for k, v in res.items()}, flush=True)

print()
print("| kernel | C gcc -O3 | numpy | jax (jit, kernel only) | pytorch | best / C |")
print("|---|---|---|---|---|---|")
for stem, res in rows:
    c = res["C gcc -O3"]
    best = min(res[t] for t in ["numpy", "jax", "pytorch"])
    cells = " | ".join(f"{res[t]*1e3:.2f} ms ({c/res[t]:.2f}x)" for t in ["numpy", "jax", "pytorch"])
    print(f"| {stem} | {c*1e3:.2f} ms | {cells} | {c/best:.2f}x |")
