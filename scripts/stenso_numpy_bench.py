#!/usr/bin/env python3
"""Times the STENSO NumPy programs against what `tenslift optimize` makes of
them, side by side in one run, per target (NumPy, JAX, PyTorch).

For each program and target, the input is the program as written run with
that framework (NumPy itself; `jax.jit` of the same source with `np` bound
to `jax.numpy`; `torch.compile` of it with `np` bound to a small
NumPy-named layer over torch), and the output is the generated module's
`f` (JAX: the jitted wrapper; PyTorch: `f_compiled`). All sizes of a
program grow together (doubling) until the input takes at least
`--min-ms` (default 10 ms) or an array would exceed `--max-elements`.
Both are then timed in alternation (median of `--rounds`), after a warm-up
call that also compiles; the outputs are compared before timing.

Usage:
  scripts/stenso_numpy_bench.py [--targets numpy,jax,pytorch]
      [--programs benchmarks/stenso_numpy] [--out results/stenso-numpy-DATE.md]
      [--only NAME,...] [--min-ms 10] [--rounds 7] [--cost-table FILE]
      [--program-timeout 900] [--assume-in-domain]

Each program runs on each target in a child process, ended with every
compiler it started after --program-timeout seconds (a timed-out row says so).

Writes the Markdown summary (with the command and the machine) and a CSV
beside it. Needs `target/release/tenslift` (or --tenslift).
"""

import argparse
import csv
import datetime
import importlib.util
import json
import math
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import types
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGNATURE = re.compile(r"^#\s*tenslift:\s*(.*)$")
PARAM = re.compile(r"(\w+)\s*:\s*(\w+)(?:\[([^\]]*)\])?")


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def signature(path):
    """[(param, dtype, [dims])] from the `# tenslift:` comment."""
    text = " ".join(m.group(1) for line in open(path) if (m := SIGNATURE.match(line.strip())))
    return [(n, d, [x.strip() for x in dims.split(",")] if dims else [])
            for n, d, dims in PARAM.findall(text)]


def make_inputs(sig, n, rng):
    def extent(d):
        return int(d) if d.isdigit() else n
    out = []
    for _, dtype, dims in sig:
        dt = np.float32 if dtype in ("f32", "float32") else np.float64
        a = rng.uniform(0.5, 2.0, size=tuple(extent(d) for d in dims)).astype(dt)
        out.append(a if dims else a[()])
    return out


def largest(sig, n):
    return max((math.prod(n if not d.isdigit() else int(d) for d in dims) for _, _, dims in sig),
               default=1)


class TorchNumpy:
    """The NumPy names the benchmark programs use, over torch tensors."""

    def __init__(self, torch):
        self.t = torch

    def __getattr__(self, name):
        return getattr(self.t, name)

    def dot(self, a, b):
        if a.ndim == 0 or b.ndim == 0:
            return a * b
        if a.ndim <= 2 and b.ndim <= 2:
            return self.t.matmul(a, b)
        return self.t.tensordot(a, b, dims=([a.ndim - 1], [max(b.ndim - 2, 0)]))

    def _reduce(self, f, a, axis):
        if axis is None:
            return f(a)
        return f(a, dim=axis)

    def sum(self, a, axis=None):
        return self._reduce(self.t.sum, a, axis)

    def max(self, a, axis=None):
        return self.t.max(a) if axis is None else self.t.amax(a, dim=axis)

    def min(self, a, axis=None):
        return self.t.min(a) if axis is None else self.t.amin(a, dim=axis)

    def transpose(self, a, axes=None):
        return a.permute(tuple(axes) if axes is not None else tuple(reversed(range(a.ndim))))

    def stack(self, arrays, axis=0):
        return self.t.stack(list(arrays), dim=axis)

    def power(self, a, b):
        return self.t.pow(a, b)

    def reshape(self, a, shape):
        return self.t.reshape(a, shape)


def rebind(f, np_like):
    """`f` with the module-level `np` bound to `np_like`."""
    g = dict(f.__globals__)
    g["np"] = np_like
    return types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, f.__closure__)


class Framework:
    """How one target runs, converts and synchronises."""

    def __init__(self, target):
        self.target = target
        if target == "jax":
            import jax
            import jax.numpy as jnp
            jax.config.update("jax_enable_x64", True)
            self.jax, self.jnp = jax, jnp
        if target == "pytorch":
            import torch
            torch.set_num_threads(os.cpu_count() or 1)
            self.torch = torch

    def args(self, arrays):
        if self.target == "jax":
            return [self.jax.device_put(a) for a in arrays]
        if self.target == "pytorch":
            return [self.torch.from_numpy(np.array(a)) for a in arrays]
        return arrays

    def sizing_fn(self, f):
        """What the size doubling times: for PyTorch the eager program, as
        `torch.compile` would recompile (Inductor: seconds of C++ each) at
        every size. The compiled input's median still decides at the end."""
        if self.target == "pytorch":
            return rebind(f, TorchNumpy(self.torch))
        return self.input_fn(f)

    def input_fn(self, f):
        if self.target == "jax":
            return self.jax.jit(rebind(f, self.jnp))
        if self.target == "pytorch":
            return self.torch.compile(rebind(f, TorchNumpy(self.torch)))
        return f

    def output_fn(self, module, name):
        return getattr(module, name + "_compiled" if self.target == "pytorch" else name)

    def sync(self, r):
        if self.target == "jax":
            return self.jax.block_until_ready(r)
        return r

    def numpy(self, r):
        if isinstance(r, tuple):
            return tuple(self.numpy(x) for x in r)
        if self.target == "pytorch":
            return r.detach().cpu().numpy()
        return np.asarray(r)


def timed(fw, f, args):
    start = time.perf_counter()
    fw.sync(f(*args))
    return time.perf_counter() - start


def generate(tenslift, path, target, outdir, cost_table=None, in_domain=False):
    name = os.path.splitext(os.path.basename(path))[0]
    out = os.path.join(outdir, f"{name}_{target}.py")
    extra = ["--cost-table", cost_table] if cost_table else []
    extra += ["--assume-in-domain"] if in_domain else []
    subprocess.run([tenslift, "optimize", path, "--target", target, "-o", out, "-q"] + extra,
                   check=True, capture_output=True, text=True)
    return load_module(out, f"opt_{name}_{target}")


def bench_one(fw, path, module, opts):
    name = os.path.splitext(os.path.basename(path))[0]
    source = load_module(path, f"in_{name}")
    sig = signature(path)
    f_in = fw.input_fn(getattr(source, name))
    f_size = fw.sizing_fn(getattr(source, name))
    f_out = fw.output_fn(module, name)
    rng = np.random.default_rng(0)
    n = 8
    while True:
        args = fw.args(make_inputs(sig, n, rng))
        timed(fw, f_size, args)
        # The minimum of three: on a loaded machine one slow call must not
        # stop the doubling early.
        t = min(timed(fw, f_size, args) for _ in range(3))
        can_grow = largest(sig, 2 * n) <= opts.max_elements
        if t * 1e3 < opts.min_ms and can_grow:
            n *= 2
            continue
        row = measure(fw, f_in, f_out, args, opts)
        # The median decides: a size whose median is under the threshold
        # is doubled again while arrays may grow.
        if row["input_ms"] < opts.min_ms and can_grow:
            n *= 2
            continue
        if row["input_ms"] < opts.min_ms:
            row["note"] = f"input {row['input_ms']:.2f} ms at the largest size"
        return {"kernel": name, "size": n, **row}


def measure(fw, f_in, f_out, args, opts):
    ref, got = fw.numpy(fw.sync(f_in(*args))), fw.numpy(fw.sync(f_out(*args)))
    ok = all(np.allclose(a, b, rtol=1e-6, atol=1e-8) for a, b in
             zip(ref if isinstance(ref, tuple) else (ref,), got if isinstance(got, tuple) else (got,)))
    t_in, t_out = [], []
    for _ in range(opts.rounds):
        t_in.append(timed(fw, f_in, args))
        t_out.append(timed(fw, f_out, args))
    ti, to = statistics.median(t_in), statistics.median(t_out)
    return {"input_ms": ti * 1e3, "output_ms": to * 1e3, "speedup": ti / to,
            "outputs_agree": ok, "note": ""}


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(l.split(":", 1)[1].strip() for l in fh if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu}, {os.cpu_count()} cores, load average {load:.2f} at the start"


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def write(rows, opts, started):
    md, csv_path = opts.out, os.path.splitext(opts.out)[0] + ".csv"
    with open(csv_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["target", "kernel", "size", "input_ms", "output_ms",
                                           "speedup", "outputs_agree", "note"])
        w.writeheader()
        w.writerows(rows)
    versions = f"numpy {np.__version__}"
    for mod in ("jax", "torch"):
        if mod in sys.modules:
            versions += f", {mod} {sys.modules[mod].__version__}"
    lines = [f"# STENSO programs as NumPy input: `tenslift optimize` output vs input ({started:%Y-%m-%d})",
             "", "Command: `" + " ".join(["python3"] + sys.argv) + "`", "",
             f"Machine: {machine()}; {versions}; Python {platform.python_version()}.", "",
             "Per program and target: the input as written (NumPy; `jax.jit` with `np` = `jax.numpy`;",
             "`torch.compile` over a NumPy-named torch layer) against the generated module's entry point,",
             f"at the smallest doubling of all sizes where the input takes >= {opts.min_ms} ms",
             f"(median of {opts.rounds} alternating runs after a warm-up/compile call). `size` is the",
             "value every size name takes. Rows with a note never reached the threshold and are left out",
             "of the geometric mean (the note says why).", ""]
    for target in opts.targets:
        sel = [r for r in rows if r["target"] == target]
        counted = [r["speedup"] for r in sel if not r["note"] and r["outputs_agree"]]
        # A program that timed out has no speedup (NaN): it is left out of
        # the "over all" figure too, and said so.
        timed = [r["speedup"] for r in sel if math.isfinite(r["speedup"])]
        lines += [f"## {target}", "",
                  f"Geometric mean speedup: **{geomean(counted):.2f}x** over {len(counted)} programs "
                  f"({geomean(timed):.2f}x over all {len(timed)} that ran, of {len(sel)}).", "",
                  "| kernel | size | input ms | output ms | speedup | outputs agree | note |",
                  "|---|---:|---:|---:|---:|---|---|"]
        lines += [f"| {r['kernel']} | {r['size']} | {r['input_ms']:.3f} | {r['output_ms']:.3f} | "
                  f"{r['speedup']:.2f}x | {'yes' if r['outputs_agree'] else 'NO'} | {r['note']} |" for r in sel]
        lines.append("")
    with open(md, "w") as fh:
        fh.write("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--targets", default="numpy,jax,pytorch")
    p.add_argument("--programs", default=os.path.join(ROOT, "benchmarks", "stenso_numpy"))
    p.add_argument("--only", default="")
    p.add_argument("--out", default=os.path.join(
        ROOT, "results", f"stenso-numpy-{datetime.date.today():%Y-%m-%d}.md"))
    p.add_argument("--min-ms", type=float, default=10.0)
    p.add_argument("--max-elements", type=int, default=1 << 24)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--tenslift", default=os.path.join(ROOT, "target", "release", "tenslift"))
    p.add_argument("--cost-table", default=None,
                   help="passed to `tenslift optimize` (default: its analytic model)")
    p.add_argument("--program-timeout", type=float, default=900.0,
                   help="seconds one program may take on one target (compiles included)")
    p.add_argument("--assume-in-domain", action="store_true",
                   help="passed to `tenslift optimize` (inputs are positive here, as make_inputs draws them)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = p.parse_args()
    opts.targets = [t for t in opts.targets.split(",") if t]
    warnings.simplefilter("ignore")
    started = datetime.datetime.now()
    only = set(x for x in opts.only.split(",") if x)
    paths = sorted(os.path.join(opts.programs, f) for f in os.listdir(opts.programs)
                   if f.endswith(".py") and (not only or f[:-3] in only))
    if opts.child:
        # One program, one target, in its own process: the parent's
        # timeout can end a hung compiler without ending the run.
        row = run_one(opts, paths[0], opts.targets[0])
        print(CHILD_MARK + json.dumps(row), flush=True)
        return
    rows = []
    for target in opts.targets:
        for path in paths:
            row = run_isolated(opts, path, target)
            row["target"] = target
            print(f"{target:8} {row['kernel']:15} n={row['size']:<6} in {row['input_ms']:9.3f} ms "
                  f"out {row['output_ms']:9.3f} ms  {row['speedup']:6.2f}x {row['note']}", flush=True)
            rows.append(row)
    write(rows, opts, started)


CHILD_MARK = "STENSO-ROW "


def failed_row(path, note):
    return {"kernel": os.path.basename(path)[:-3], "size": 0, "input_ms": float("nan"),
            "output_ms": float("nan"), "speedup": float("nan"), "outputs_agree": False,
            "note": note}


def run_one(opts, path, target):
    with tempfile.TemporaryDirectory(prefix="stenso-numpy-") as outdir:
        sys.path.insert(0, outdir)
        try:
            fw = Framework(target)
            module = generate(opts.tenslift, path, target, outdir, opts.cost_table,
                              opts.assume_in_domain)
            return bench_one(fw, path, module, opts)
        except Exception as e:  # one program's failure is a row, not the end of the run
            why = str(e).strip().splitlines()[0][:120] if str(e).strip() else type(e).__name__
            return failed_row(path, f"failed: {type(e).__name__}: {why}")


def run_isolated(opts, path, target):
    """`run_one` in a child process, ended (with every compiler it
    started) after `--program-timeout` seconds."""
    name = os.path.basename(path)[:-3]
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--targets", target,
           "--programs", opts.programs, "--only", name, "--min-ms", str(opts.min_ms),
           "--max-elements", str(opts.max_elements), "--rounds", str(opts.rounds),
           "--tenslift", opts.tenslift]
    if opts.cost_table:
        cmd += ["--cost-table", opts.cost_table]
    if opts.assume_in_domain:
        cmd += ["--assume-in-domain"]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             start_new_session=True)
    try:
        out, _ = child.communicate(timeout=opts.program_timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return failed_row(path, f"timed out after {opts.program_timeout:.0f} s")
    for line in out.splitlines():
        if line.startswith(CHILD_MARK):
            return json.loads(line[len(CHILD_MARK):])
    return failed_row(path, f"failed: the child exited with {child.returncode}")


if __name__ == "__main__":
    main()
