#!/usr/bin/env python3
"""Runtime half of `tenslift bench`: times C baselines and lifted modules.

`tenslift bench` lifts the kernels, writes one generated module per target and
a plan (plan.json), then calls

    bench_runner.py run --plan PLAN.json --csv runtime.csv [--skip-c] [--skip-python]
        [--device cpu|cuda] [--jobs N --c-reference-only] [--deadline-s S]

For every kernel of the plan, one after another (never two timed processes at
once): deterministic inputs are generated as .npy (scripts/cref.py), each C
variant (gcc, clang, polly, polly-parallel) is compiled and run, the first C
variant that finishes gives the reference outputs, then every Python variant
(numpy, jax, pytorch, torch-compile, hlo) runs in a child process of its own
that loads the inputs, calls the kernel once, checks its outputs against the
reference (a wrong output is recorded and not timed), warms up and times the
kernel alone `repeat` times. Each child is killed after `timeout_s` seconds
and recorded as `timeout`. One CSV row per (kernel, variant) is appended and
flushed as soon as it is known, so an interrupted run keeps what it measured.

The same script is the runner of an exported bundle (`tenslift bench
--export-bundle DIR`): the bundle holds the plan, the modules, the inputs and
the C reference outputs, so `python bench_runner.py run --plan plan.json
--csv results/runtime.csv --skip-c --device cuda` needs only NumPy, JAX and
PyTorch — no compiler, no Rust, no scripts/cref.py.

On a GPU machine holding the checkout itself (a plan written by `tenslift
bench --no-runtime`, data paths relative to it), `run --device cuda --jobs N
--c-reference-only` regenerates the inputs there, takes the reference from
the first C compiler that works (run once, untimed: no C rows) or, with none,
from the lifted NumPy program, and measures N kernels at once; the timed
calls of the children take turns on the GPU through a lock file, so no
timing shares the GPU. Nothing large travels: a LARGE bundle's data does.

CSV columns (see RUNTIME_COLUMNS): median_s is the median kernel-only time;
for `-cuda` variants e2e_median_s is the median time including the
host-to-device copy of the inputs and the device-to-host copy of the outputs;
compile_s is the first call's extra time (JIT tracing and compilation) for
jax, torch-compile and hlo; for polly and polly-parallel, polly_transformed
(yes / no / unknown) and polly_what say whether Polly transformed the kernel
and how, or why not (scripts/cref.py polly_report, scripts/polly_evidence.py:
SCoP found, rescheduled, tiled, matmul pattern, parallel, code generated; else
"no SCoP: <Polly's reason>", "SCoP kept its schedule", ...).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import fcntl
import importlib.util
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

SCRIPTS_DIR = Path(__file__).resolve().parent
C_VARIANTS = ("gcc", "clang", "polly", "polly-parallel")
PY_VARIANTS = ("numpy", "jax", "pytorch", "torch-compile", "hlo")
RUNTIME_COLUMNS = ("kernel", "suite", "variant", "dataset", "median_s", "status", "runs",
                   "min_s", "compile_s", "e2e_median_s", "device", "note",
                   "polly_transformed", "polly_what")
# Private memory one Python measurement may use (plan key memory_limit_gb).
DEFAULT_MEMORY_LIMIT_GB = 8.0
# Relative (norm-wise) tolerance for plans whose call.json carries no
# "tolerance" (bundles exported before it did).
LEGACY_FLOAT_TOLERANCE = {"float16": 1e-2, "float32": 2e-3, "float64": 1e-8}


class BenchError(Exception):
    """A plan or bundle the runner cannot use."""


# ----------------------------------------------------------------------------- output checks


def relative_factor(call: dict[str, Any] | None, dtype: np.dtype) -> float | None:
    """The accepted relative factor for float outputs of `dtype`, as `tenslift
    bench` wrote it into call.json: verify's differential tolerance
    16·(K+2)·u for the program's longest reduction K at the dataset's sizes
    (the model is documented in verify/src/differential/tolerance.rs).
    None when call.json has none for this type."""
    if not call:
        return None
    factors = (call.get("tolerance") or {}).get("relative_factor") or {}
    value = factors.get(str(np.dtype(dtype)))
    return float(value) if value is not None else None


def compare_outputs(got: Any, want: np.ndarray, factor: float | None = None) -> str | None:
    """None when `got` matches the C output `want`, else why not.

    Integers must be equal. Floats: with `factor` (from call.json), every
    element must satisfy |got - want| <= factor * (|want| + max|want|), the
    rule `tenslift verify` applies; without, the legacy norm-wise check."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.size != want.size:
        return f"shape {got.shape} instead of {want.shape}"
    got = got.reshape(want.shape)
    if want.dtype.kind in "iub":
        if not np.array_equal(got.astype(want.dtype), want):
            wrong = int(np.count_nonzero(got.astype(want.dtype) != want))
            return f"{wrong} of {want.size} integer elements differ"
        return None
    got = got.astype(np.float64)
    ref = want.astype(np.float64)
    if not np.array_equal(np.isnan(got), np.isnan(ref)):
        return "NaN in different places"
    finite = np.isfinite(ref) & np.isfinite(got)
    if not np.array_equal(got[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)]):
        return "infinities differ"
    if factor is not None:
        ref_f, got_f = ref[finite], got[finite]
        if ref_f.size == 0:
            return None
        diff = np.abs(got_f - ref_f)
        allowed = factor * (np.abs(ref_f) + float(np.max(np.abs(ref_f))))
        wrong = int(np.count_nonzero(diff > allowed))
        if wrong:
            worst = int(np.argmax(diff - allowed))
            return (f"{wrong} of {ref_f.size} elements beyond the tolerance "
                    f"(factor {factor:.3g}; worst: C {ref_f[worst]:.9g}, got {got_f[worst]:.9g})")
        return None
    diff = float(np.linalg.norm(got[finite] - ref[finite]))
    scale = float(np.linalg.norm(ref[finite]))
    tolerance = LEGACY_FLOAT_TOLERANCE.get(str(want.dtype), 1e-6)
    if diff > tolerance * max(scale, 1e-30) and diff > 1e-12:
        return f"relative error {diff / max(scale, 1e-30):.3g} above {tolerance:g}"
    return None


def median_of(times: list[float]) -> float:
    return float(statistics.median(times))


# ----------------------------------------------------------------------------- CSV


class RowWriter:
    """Appends runtime rows to a CSV file, writing the header once and
    flushing after every row."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = not path.is_file() or path.stat().st_size == 0
        self._file = open(path, "a", newline="")
        self._writer = csv.DictWriter(self._file, fieldnames=RUNTIME_COLUMNS)
        if fresh:
            self._writer.writeheader()
            self._file.flush()

    def write(self, row: dict[str, Any]) -> None:
        self._writer.writerow({k: _cell(row.get(k)) for k in RUNTIME_COLUMNS})
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.9g}"
    return str(value).replace("\n", " ")[:300]


# ----------------------------------------------------------------------------- child processes


def _limit_memory(gigabytes: float):
    """A preexec hook capping the child's private writable memory: a lifted
    program with a huge intermediate must fail with MemoryError in its own
    process, not push a shared machine into swap."""
    def apply():
        limit = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    return apply


def run_child(command: list[str], timeout_s: float, memory_gb: float | None = None
              ) -> tuple[str, str, int | None]:
    """(stdout, stderr, exit code or None on timeout); on timeout the child's
    whole process group is killed so no stray worker keeps the CPU busy."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True,
                               preexec_fn=_limit_memory(memory_gb) if memory_gb else None)
    try:
        out, err = process.communicate(timeout=timeout_s)
        return out, err, process.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = process.communicate()
        return out, err, None


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def _tail(text: str, lines: int = 2) -> str:
    kept = [l for l in text.strip().splitlines() if l.strip()]
    return " | ".join(kept[-lines:])


# ----------------------------------------------------------------------------- C variants


def _cref():
    sys.path.insert(0, str(SCRIPTS_DIR))
    import cref  # noqa: PLC0415 (only the C side needs the manifest and compilers)

    return cref


# The plan's manifest (`tenslift bench --suite-dir` generates one); None:
# benchmarks/manifest.toml, as plans written before the key existed.
_PLAN_MANIFEST: list[Path | None] = [None]
_LOADED: dict[Path | None, Any] = {}


def _kernel(name: str):
    """The cref Kernel of a plan kernel, from the plan's manifest."""
    cref = _cref()
    path = _PLAN_MANIFEST[0]
    if path not in _LOADED:
        _LOADED[path] = cref.load_manifest(path)
    return cref.get_kernel(name, _LOADED[path])


def plan_manifest(plan_path: Path, manifest: str) -> Path:
    """The plan's manifest: a relative path is relative to the plan's
    directory (`tenslift bench --no-runtime` writes it so, for a plan measured
    on another machine), else, as older plans meant it, to the working
    directory."""
    path = Path(manifest)
    if path.is_absolute():
        return path
    beside = plan_path.parent / path
    return beside.resolve() if beside.is_file() else path


def ensure_inputs(kernel: dict[str, Any], dataset: str, inputs_dir: Path) -> None:
    if (inputs_dir / "meta.json").is_file():
        return
    cref = _cref()
    cref.generate_inputs(_kernel(kernel["name"]), dataset, 0, inputs_dir)


def run_c_variant(kernel: dict[str, Any], variant: str, dataset: str, inputs_dir: Path,
                  out_dir: Path, repeat: int, timeout_s: float) -> dict[str, Any]:
    """Builds and runs one C variant; the first call is the warm-up, the median
    is over the `repeat` calls after it."""
    cref = _cref()
    row: dict[str, Any] = {"status": "error"}
    try:
        executable = cref.build(_kernel(kernel["name"]), dataset, variant)
    except cref.CrefError as error:
        row["note"] = f"compile: {_tail(str(error))}"
        return row
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("*"):
        stale.unlink()
    out, err, code = run_child([str(executable), str(inputs_dir), str(out_dir), str(repeat + 1)],
                               timeout_s)
    if code is None:
        return {"status": "timeout", "note": f"over {timeout_s:g} s"}
    if code != 0:
        row["note"] = f"exit {code}: {_tail(err)}"
        return row
    try:
        timing = json.loads((out_dir / "timing.json").read_text())
    except (OSError, json.JSONDecodeError) as error:
        row["note"] = f"no timing.json: {error}"
        return row
    times = [float(t) for t in timing["times_s"]]
    timed = times[1:] if len(times) > 1 else times
    row = {"status": "ok", "median_s": median_of(timed), "min_s": min(timed), "runs": len(timed)}
    if variant.startswith("polly"):
        row.update(polly_columns(cref, kernel["name"], dataset, variant))
    return row


def polly_columns(cref, name: str, dataset: str, variant: str) -> dict[str, str]:
    """polly_transformed (yes / no / unknown) and polly_what for a Polly row: what
    Polly did to the kernel (scop+rescheduled+tiled+…) when it transformed it,
    else why not (no SCoP and Polly's reason, SCoP kept its schedule, …), else
    why the analysis failed. Only `yes` rows count as "best Polly"
    (src/bench/stats.rs): the others ran clang's own code for the kernel."""
    try:
        report = cref.polly_report(_kernel(name), dataset, variant)
    except cref.CrefError as error:
        return {"polly_transformed": "unknown", "polly_what": _tail(str(error), 1)}
    if report["transformed"]:
        return {"polly_transformed": "yes", "polly_what": "+".join(report["what"])}
    return {"polly_transformed": "no", "polly_what": report["why_not"] or "not transformed"}


def save_outputs(directory: Path, outputs: dict[str, np.ndarray]) -> None:
    """Writes outputs as `<name>.npy` files (a kernel's reference)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in outputs.items():
        np.save(directory / f"{name}.npy", value)


def load_outputs(directory: Path, names: list[str]) -> dict[str, np.ndarray] | None:
    try:
        return {n: np.load(directory / f"{n}.npy", allow_pickle=False) for n in names}
    except (OSError, ValueError):
        return None


# ----------------------------------------------------------------------------- Python variants (child side)


def _load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise BenchError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    # Dynamo (torch 2.11) looks the compiled function's module up by name.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _load_args(call: dict[str, Any], inputs_dir: Path) -> list[Any]:
    args: list[Any] = []
    for p in call["params"]:
        if p["kind"] == "size":
            args.append(int(p["value"]))
            continue
        value = np.load(inputs_dir / f"{p['name']}.npy", allow_pickle=False)
        args.append(value[()] if p["kind"] == "scalar" else np.array(value, order="C", copy=True))
    return args


def _written_names(call: dict[str, Any]) -> list[str]:
    return [p["name"] for p in call["params"] if p.get("written")]


def _timed(fn, repeat: int, before=None) -> list[float]:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


# The lock file the children of a `run --jobs N` take turns on for their timed
# calls (set by run_plan; unset, every child times at once as before).
GPU_LOCK_ENV = "TENSLIFT_BENCH_GPU_LOCK"
# Children sharing that lock (run_plan's jobs): the most turns a child may
# wait for, which the parent's outer limit allows for.
_GPU_SHARERS = [1]


@contextlib.contextmanager
def _gpu_turn():
    """Holds the GPU for one measurement's warm-up, timed and end-to-end
    calls; the first call (tracing, compilation) runs outside, side by side.
    The wait for the turn is not the measurement's time: the child's own
    limit (`measure --limit-s`, an ITIMER_REAL alarm) is paused while it
    waits, so a kernel queued behind slow ones is not recorded as a timeout."""
    path = os.environ.get(GPU_LOCK_ENV)
    if not path:
        yield
        return
    with open(path, "a") as handle:
        left, _interval = signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        finally:
            if left > 0:
                signal.setitimer(signal.ITIMER_REAL, left)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def measure_numpy(call, module_path, inputs_dir, repeat, device):
    module = _load_module(module_path, "bench_numpy_module")
    fn = getattr(module, call["function"])
    pristine = _load_args(call, inputs_dir)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in pristine]
    with np.errstate(all="ignore"):
        returned = fn(*args)
    outputs = _outputs_by_name(call, args, returned)

    def restore():
        for i, a in enumerate(pristine):
            if isinstance(a, np.ndarray):
                np.copyto(args[i], a)

    with np.errstate(all="ignore"):
        fn(*args)  # warm-up
        times = _timed(lambda: fn(*args), repeat, restore)
    return outputs, {"times": times}


def _outputs_by_name(call, args, returned) -> dict[str, Any]:
    outputs = {p["name"]: args[i] for i, p in enumerate(call["params"]) if p.get("written")}
    if returned is not None:
        outputs["return"] = returned
    return outputs


def measure_jax(call, module_path, inputs_dir, repeat, device):
    import jax

    jax.config.update("jax_enable_x64", True)
    target = jax.devices("gpu" if device == "cuda" else "cpu")[0]
    module = _load_module(module_path, "bench_jax_module")
    jitted = getattr(module, call["function"] + "_jit")
    host = _load_args(call, inputs_dir)

    def to_device(values):
        return [jax.device_put(v, target) if not isinstance(v, int) else v for v in values]

    args = to_device(host)
    jax.block_until_ready(args)
    start = time.perf_counter()
    result = jax.block_until_ready(jitted(*args))
    first = time.perf_counter() - start
    written, returned = result
    outputs = {n: np.asarray(v) for n, v in zip(_written_names(call), written)}
    if returned is not None:
        outputs["return"] = np.asarray(returned)
    def end_to_end():
        moved = to_device(host)
        written, returned = jitted(*moved)
        for value in written:
            np.asarray(value)
        if returned is not None:
            np.asarray(returned)

    with _gpu_turn():
        jax.block_until_ready(jitted(*args))  # warm-up
        times = _timed(lambda: jax.block_until_ready(jitted(*args)), repeat)
        stats = {"times": times, "compile_s": max(first - median_of(times), 0.0)}
        if device == "cuda":
            stats["e2e_times"] = _timed(end_to_end, repeat)
    return outputs, stats


def _measure_torch(call, module_path, inputs_dir, repeat, device, compiled):
    import torch

    module = _load_module(module_path, "bench_torch_module")
    fn = getattr(module, call["function"] + ("_compiled" if compiled else ""))
    where = torch.device("cuda" if device == "cuda" else "cpu")
    host = _load_args(call, inputs_dir)

    def to_device(values):
        return [torch.from_numpy(v).to(where) if isinstance(v, np.ndarray) else v
                for v in values]

    def sync():
        if device == "cuda":
            torch.cuda.synchronize()

    pristine = to_device(host)
    args = [a.clone() if isinstance(a, torch.Tensor) else a for a in pristine]
    sync()
    start = time.perf_counter()
    with torch.no_grad():
        returned = fn(*args)
    sync()
    first = time.perf_counter() - start
    outputs = {n: v.cpu().numpy() for n, v in _outputs_by_name(call, args, None).items()}
    if returned is not None:
        outputs["return"] = returned.cpu().numpy() if isinstance(returned, torch.Tensor) else returned

    def restore():
        for i, a in enumerate(pristine):
            if isinstance(a, torch.Tensor):
                args[i].copy_(a)
        sync()

    def kernel():
        with torch.no_grad():
            fn(*args)
        sync()

    def end_to_end():
        moved = to_device(host)
        with torch.no_grad():
            returned = fn(*moved)
        for i, p in enumerate(call["params"]):
            if p.get("written"):
                moved[i].cpu()
        if isinstance(returned, torch.Tensor):
            returned.cpu()

    with _gpu_turn():
        kernel()  # warm-up
        times = _timed(kernel, repeat, restore)
        stats = {"times": times}
        if compiled:
            stats["compile_s"] = max(first - median_of(times), 0.0)
        if device == "cuda":
            stats["e2e_times"] = _timed(end_to_end, repeat)
    return outputs, stats


def measure_pytorch(call, module_path, inputs_dir, repeat, device):
    return _measure_torch(call, module_path, inputs_dir, repeat, device, compiled=False)


def measure_torch_compile(call, module_path, inputs_dir, repeat, device):
    return _measure_torch(call, module_path, inputs_dir, repeat, device, compiled=True)


def measure_hlo(call, module_path, inputs_dir, repeat, device):
    import jax
    from jax._src.lib import xla_client
    from jax.extend import backend as jax_backend

    jax.config.update("jax_enable_x64", True)
    backend = jax_backend.get_backend("gpu" if device == "cuda" else "cpu")
    target = backend.devices()[0]
    text = module_path.read_text()
    start = time.perf_counter()
    executable = backend.compile_and_load(text, xla_client.DeviceList((target,)),
                                          xla_client.CompileOptions())
    compile_s = time.perf_counter() - start
    host = [a for a, p in zip(_load_args(call, inputs_dir), call["params"]) if p["kind"] != "size"]
    buffers = [jax.device_put(np.asarray(a), target) for a in host]
    results = executable.execute(buffers)
    names = call["hlo_results"]
    if len(results) != len(names):
        raise BenchError(f"{len(results)} results for {len(names)} names")
    outputs = {("return" if n == "__return__" else n): np.asarray(r) for n, r in zip(names, results)}

    def kernel():
        jax.block_until_ready(executable.execute(buffers))

    def end_to_end():
        moved = [jax.device_put(np.asarray(a), target) for a in host]
        for r in executable.execute(moved):
            np.asarray(r)

    with _gpu_turn():
        kernel()  # warm-up
        times = _timed(kernel, repeat)
        stats = {"times": times, "compile_s": compile_s}
        if device == "cuda":
            stats["e2e_times"] = _timed(end_to_end, repeat)
    return outputs, stats


MEASURE = {"numpy": measure_numpy, "jax": measure_jax, "pytorch": measure_pytorch,
           "torch-compile": measure_torch_compile, "hlo": measure_hlo}
MODULE_FILES = {"numpy": "numpy.py", "jax": "jax.py", "pytorch": "pytorch.py",
                "torch-compile": "pytorch.py", "hlo": "hlo.mlir"}


def measure_command(args: argparse.Namespace) -> int:
    """Child side: one variant of one kernel; prints one JSON line. With
    --limit-s, SIGALRM's default action ends it after that many seconds of
    its own (a blocking CUDA call included; _gpu_turn pauses the alarm)."""
    if args.limit_s:
        signal.setitimer(signal.ITIMER_REAL, args.limit_s)
    call = json.loads(Path(args.call).read_text())
    if args.save_outputs:
        return save_outputs_command(args, call)
    reference = load_outputs(Path(args.reference), call["outputs"])
    try:
        if reference is None:
            raise BenchError("no reference outputs")
        outputs, stats = MEASURE[args.variant](call, Path(args.module), Path(args.inputs),
                                               args.repeat, args.device)
        for name in call["outputs"]:
            if name not in outputs:
                print(json.dumps({"status": "wrong-output", "note": f"no output {name}"}))
                return 0
            factor = relative_factor(call, reference[name].dtype)
            problem = compare_outputs(outputs[name], reference[name], factor)
            if problem is not None:
                print(json.dumps({"status": "wrong-output", "note": f"{name}: {problem}"}))
                return 0
    except Exception as error:  # noqa: BLE001 (every failure is a recorded result)
        trace = traceback.format_exc(limit=3).strip().splitlines()
        print(json.dumps({"status": "error", "note": f"{type(error).__name__}: {error}"[:200],
                          "trace": trace[-3:]}))
        return 0
    times = stats["times"]
    result = {"status": "ok", "median_s": median_of(times), "min_s": min(times),
              "runs": len(times), "compile_s": stats.get("compile_s")}
    if "e2e_times" in stats:
        result["e2e_median_s"] = median_of(stats["e2e_times"])
    print(json.dumps(result))
    return 0


def save_outputs_command(args: argparse.Namespace, call: dict[str, Any]) -> int:
    """Child side of numpy_reference: runs the module once (repeat 1) and
    saves its outputs into --reference instead of comparing them."""
    try:
        outputs, _stats = MEASURE[args.variant](call, Path(args.module), Path(args.inputs), 1,
                                                args.device)
        save_outputs(Path(args.reference),
                     {name: np.asarray(outputs[name]) for name in call["outputs"]})
    except Exception as error:  # noqa: BLE001 (reported to the parent as a status)
        print(json.dumps({"status": "error", "note": f"{type(error).__name__}: {error}"[:200]}))
        return 0
    print(json.dumps({"status": "saved"}))
    return 0


# ----------------------------------------------------------------------------- the plan


def resolve(plan_path: Path, path: str) -> Path:
    return (plan_path.parent / path).resolve()


def run_python_variant(plan_path: Path, kernel: dict[str, Any], variant: str, plan: dict,
                       device: str) -> dict[str, Any]:
    kernel_dir = resolve(plan_path, kernel["dir"])
    module = kernel_dir / MODULE_FILES[variant]
    if not module.is_file():
        return {"status": "not-emitted", "note": f"no {module.name}"}
    if variant == "torch-compile" and (_read_call(plan_path, kernel) or {}).get("keeps_loops"):
        # Dynamo unrolls Python loops: compiling a loop-kept program takes longer
        # than any timeout and would measure nothing.
        return {"status": "skipped", "note": "program keeps C loops, which torch.compile unrolls"}
    limit = float(plan["timeout_s"])
    command = _measure_child(plan_path, kernel, variant, module) + [
        "--repeat", str(plan["repeat"]), "--device", device, "--limit-s", str(limit)]
    # The child stops itself after `limit` seconds of its own (SIGALRM, its
    # wait for a GPU turn not counted); the parent's limit also allows for
    # that wait: every other child's turn, each at most `limit`.
    outer = limit * (_GPU_SHARERS[0] + 1) + 30 if os.environ.get(GPU_LOCK_ENV) else limit + 5
    out, err, code = run_child(command, outer,
                               float(plan.get("memory_limit_gb", DEFAULT_MEMORY_LIMIT_GB)))
    if code is None or code == -signal.SIGALRM:
        return {"status": "timeout", "note": f"over {limit:g} s"}
    result = _last_json(out)
    if result is None:
        return {"status": "error", "note": f"exit {code}: {_tail(err)}"}
    result.pop("trace", None)
    return result


def _measure_child(plan_path: Path, kernel: dict[str, Any], variant: str,
                   module: Path) -> list[str]:
    """The command of a `measure` child for one variant of one kernel."""
    kernel_dir = resolve(plan_path, kernel["dir"])
    return [sys.executable, str(Path(__file__).resolve()), "measure", "--variant", variant,
            "--call", str(kernel_dir / "call.json"), "--module", str(module),
            "--inputs", str(resolve(plan_path, kernel["inputs"])),
            "--reference", str(resolve(plan_path, kernel["reference"]))]


def _read_call(plan_path: Path, kernel: dict[str, Any]) -> dict[str, Any] | None:
    """The kernel's call.json (None when unreadable: the legacy check applies)."""
    try:
        return json.loads((resolve(plan_path, kernel["dir"]) / "call.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None


class PlanRun:
    """One `run` over a plan: the settings every kernel shares, the CSV
    (guarded: with --jobs, kernels finish on several threads), the deadline."""

    def __init__(self, plan_path: Path, plan: dict, writer: RowWriter, options: dict[str, Any]):
        self.plan_path = plan_path
        self.plan = plan
        self.writer = writer
        self.lock = threading.Lock()
        self.skip_c = options["skip_c"]
        self.skip_python = options["skip_python"]
        self.device = options["device"]
        self.quiet = options["quiet"]
        self.c_reference_only = options.get("c_reference_only", False)
        deadline_s = options.get("deadline_s")
        self.deadline = None if deadline_s is None else time.monotonic() + deadline_s
        self.not_started: list[str] = []

    def write(self, row: dict[str, Any], index: int, total: int) -> None:
        with self.lock:
            self.writer.write(row)
            _progress(self.quiet, index, total, row["kernel"], row["variant"], row)

    def path(self, kernel: dict[str, Any], key: str) -> Path:
        return resolve(self.plan_path, kernel[key])


def _c_reference(run: PlanRun, kernel: dict[str, Any], inputs_dir: Path) -> dict[str, Any]:
    """--c-reference-only: the first C variant that runs gives the reference,
    run once and untimed (kernels run side by side, so a C time measured here
    would not be a fair baseline). No C row is written. Without any C
    compiler the lifted NumPy program, run on the CPU, gives it instead, and
    every row of the kernel says so."""
    dataset = run.plan["dataset"]
    reference_dir = run.path(kernel, "reference")
    notes = []
    for variant in (v for v in C_VARIANTS if v in run.plan["variants"] or v == "gcc"):
        out_dir = run.path(kernel, "c_outputs") / variant
        row = run_c_variant(kernel, variant, dataset, inputs_dir, out_dir, 0,
                            float(run.plan["timeout_s"]))
        got = load_outputs(out_dir, kernel["outputs"]) if row["status"] == "ok" else None
        if got is not None:
            save_outputs(reference_dir, got)
            return {}
        notes.append(f"{variant}: {row.get('note', row['status'])}")
    fallback = numpy_reference(run.plan_path, kernel, run.plan)
    if fallback is None:
        return {"note": "no reference: " + "; ".join(notes)[:200]}
    return {"note": "reference: the lifted NumPy program on the CPU (no C compiler ran: "
                    + "; ".join(notes)[:120] + ")"}


def numpy_reference(plan_path: Path, kernel: dict[str, Any], plan: dict) -> Path | None:
    """Writes the lifted NumPy program's outputs as the reference; None when
    the kernel has no NumPy module or it fails."""
    module = resolve(plan_path, kernel["dir"]) / MODULE_FILES["numpy"]
    if not module.is_file():
        return None
    command = _measure_child(plan_path, kernel, "numpy", module) + [
        "--save-outputs", "--device", "cpu"]
    out, _err, _code = run_child(command, float(plan["timeout_s"]))
    result = _last_json(out or "")
    if result is None or result.get("status") != "saved":
        return None
    return resolve(plan_path, kernel["reference"])


def _c_rows(run: PlanRun, kernel: dict[str, Any], base: dict[str, Any], inputs_dir: Path,
            index: int, total: int) -> None:
    """Every C variant of the plan, timed; the first that runs gives the reference."""
    reference_dir = run.path(kernel, "reference")
    reference_found = False
    for variant in (v for v in run.plan["variants"] if v in C_VARIANTS):
        out_dir = run.path(kernel, "c_outputs") / variant
        row = run_c_variant(kernel, variant, run.plan["dataset"], inputs_dir, out_dir,
                            run.plan["repeat"], float(run.plan["timeout_s"]))
        if row["status"] == "ok":
            got = load_outputs(out_dir, kernel["outputs"])
            if not reference_found and got is not None:
                save_outputs(reference_dir, got)
                reference_found = True
            elif got is not None:
                reference = load_outputs(reference_dir, kernel["outputs"])
                call = _read_call(run.plan_path, kernel)
                for name in kernel["outputs"]:
                    factor = relative_factor(call, reference[name].dtype)
                    problem = compare_outputs(got[name], reference[name], factor)
                    if problem is not None:
                        row = {"status": "wrong-output", "note": f"{name}: {problem}"}
                        break
        run.write({**base, "variant": variant, "device": "cpu", **row}, index, total)


def _run_kernel(run: PlanRun, index: int, kernel: dict[str, Any]) -> None:
    total = len(run.plan["kernels"])
    if run.deadline is not None and time.monotonic() > run.deadline:
        with run.lock:
            run.not_started.append(kernel["name"])
        return
    inputs_dir = run.path(kernel, "inputs")
    base = {"kernel": kernel["name"], "suite": kernel["suite"], "dataset": run.plan["dataset"]}
    extra: dict[str, Any] = {}
    if not run.skip_c:
        ensure_inputs(kernel, run.plan["dataset"], inputs_dir)
        if run.c_reference_only:
            extra = _c_reference(run, kernel, inputs_dir)
        else:
            _c_rows(run, kernel, base, inputs_dir, index, total)
    if not run.skip_python:
        suffix = "-cuda" if run.device == "cuda" else ""
        for variant in (v for v in run.plan["variants"] if v in PY_VARIANTS):
            row = run_python_variant(run.plan_path, kernel, variant, run.plan, run.device)
            if extra.get("note"):
                row["note"] = "; ".join(n for n in (row.get("note"), extra["note"]) if n)
            run.write({**base, "variant": variant + suffix, "device": run.device, **row},
                      index, total)
    if run.plan.get("cleanup"):
        # LARGE inputs are big: keep the disk from filling over a full run.
        for key in ("inputs", "reference", "c_outputs"):
            shutil.rmtree(run.path(kernel, key), ignore_errors=True)


def run_plan(plan_path: Path, csv_path: Path, skip_c: bool, skip_python: bool,
             device: str, quiet: bool, jobs: int = 1, c_reference_only: bool = False,
             deadline_s: float | None = None) -> int:
    """Every kernel of the plan, one after another, or with `jobs` > 1 (CUDA
    only) several at once: the children then take turns on the GPU for
    their timed calls (GPU_LOCK_ENV), so one kernel's timing never shares
    the GPU with another's, while imports, compilation and the C references
    run side by side on the CPU cores."""
    try:
        plan = json.loads(plan_path.read_text())
        if plan.get("manifest"):
            _PLAN_MANIFEST[0] = plan_manifest(plan_path, plan["manifest"])
    except (OSError, json.JSONDecodeError) as error:
        raise BenchError(f"{plan_path}: cannot read the plan: {error}") from None
    if jobs > 1 and device != "cuda":
        raise BenchError("--jobs > 1 needs --device cuda: CPU timings need the cores to "
                         "themselves")
    if jobs > 1 and not (skip_c or c_reference_only):
        raise BenchError("--jobs > 1 needs --skip-c or --c-reference-only: C timings of "
                         "kernels run side by side would not be fair baselines")
    writer = RowWriter(csv_path)
    if device == "cuda" and not skip_python:
        (csv_path.parent / "device.txt").write_text(gpu_name() + "\n")
    if jobs > 1:
        os.environ[GPU_LOCK_ENV] = str(csv_path.parent / ".gpu.lock")
        _GPU_SHARERS[0] = jobs
    run = PlanRun(plan_path, plan, writer, {
        "skip_c": skip_c, "skip_python": skip_python, "device": device, "quiet": quiet,
        "c_reference_only": c_reference_only, "deadline_s": deadline_s})
    try:
        kernels = list(enumerate(plan["kernels"], 1))
        if jobs <= 1:
            for index, kernel in kernels:
                _run_kernel(run, index, kernel)
        else:
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                for future in [pool.submit(_run_kernel, run, i, k) for i, k in kernels]:
                    future.result()
    finally:
        writer.close()
        os.environ.pop(GPU_LOCK_ENV, None)
    if run.not_started:
        print(f"bench_runner: deadline reached: {len(run.not_started)} kernels not measured: "
              + ", ".join(run.not_started), file=sys.stderr)
    return 0


def gpu_name() -> str:
    """The GPU model, for the merged summary."""
    try:
        import torch

        return torch.cuda.get_device_name(0)
    except Exception as error:  # noqa: BLE001 (a missing GPU is reported, not fatal here)
        return f"unknown GPU ({type(error).__name__})"


def _progress(quiet: bool, index: int, total: int, kernel: str, variant: str,
              row: dict[str, Any]) -> None:
    if quiet:
        return
    timing = f"{row['median_s']:.4g} s" if row.get("median_s") is not None else row.get("note", "")
    print(f"[{index}/{total}] {kernel} {variant}: {row['status']} {timing}", file=sys.stderr,
          flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench_runner.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="time every kernel of a plan, append rows to a CSV")
    run.add_argument("--plan", type=Path, required=True)
    run.add_argument("--csv", type=Path, required=True)
    run.add_argument("--skip-c", action="store_true", help="no C variants (bundle on a GPU box)")
    run.add_argument("--skip-python", action="store_true", help="only inputs, C runs, references")
    run.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    run.add_argument("--quiet", action="store_true")
    run.add_argument("--jobs", type=int, default=1,
                     help="kernels at once (CUDA only; timed calls still take turns on the GPU)")
    run.add_argument("--c-reference-only", action="store_true",
                     help="run the first working C variant once for the reference; no C rows")
    run.add_argument("--deadline-s", type=float, default=None,
                     help="start no kernel after this many seconds (the rest are listed)")
    measure = sub.add_parser("measure", help="(internal) one variant of one kernel")
    measure.add_argument("--variant", choices=PY_VARIANTS, required=True)
    measure.add_argument("--call", required=True)
    measure.add_argument("--module", required=True)
    measure.add_argument("--inputs", required=True)
    measure.add_argument("--reference", required=True)
    measure.add_argument("--repeat", type=int, default=5)
    measure.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    measure.add_argument("--limit-s", type=float, default=None,
                         help="end after this many seconds, a wait for the GPU not counted")
    measure.add_argument("--save-outputs", action="store_true",
                         help="save the outputs into --reference instead of checking them")
    args = parser.parse_args(argv)
    try:
        if args.command == "measure":
            return measure_command(args)
        return run_plan(args.plan, args.csv, args.skip_c, args.skip_python, args.device,
                        args.quiet, jobs=args.jobs, c_reference_only=args.c_reference_only,
                        deadline_s=args.deadline_s)
    except BenchError as error:
        print(f"bench_runner: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
