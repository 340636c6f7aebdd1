"""Runs generated TensIR modules in one Python process.

Usage: python run_cases.py MANIFEST.json RESULTS.json

The manifest lists cases of one target. Each case names a generated module
(or StableHLO text), its arguments (sizes inline, everything else as .npy
files) and the output directory; the runner writes every written array and
the returned scalar there as .npy and records per-case errors instead of
stopping, so one bad case does not hide the others.
"""

import importlib.util
import json
import os
import sys
import traceback

import numpy as np


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_arg(arg):
    if arg["kind"] == "size":
        return int(arg["value"])
    value = np.load(arg["npy"])
    if arg["kind"] == "scalar":
        return value[()]
    # A writable C-order copy that keeps rank 0 (ascontiguousarray would not).
    return np.array(value, order="C", copy=True)


def save_outputs(case, written, returned):
    out_dir = case["out_dir"]
    for name, value in written.items():
        np.save(os.path.join(out_dir, name + ".npy"), np.asarray(value))
    if returned is not None:
        np.save(os.path.join(out_dir, "__return__.npy"), np.asarray(returned))


def run_python_case(case, target, torch):
    module = load_module(case["module"], "tenslift_case_" + case["id"])
    fn = getattr(module, case["function"])
    args = [load_arg(a) for a in case["args"]]
    if target == "pytorch":
        # from_numpy shares memory, so in-place updates reach the arrays.
        call_args = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
        returned = fn(*call_args)
        if returned is not None:
            returned = returned.cpu().numpy()
    else:
        returned = fn(*args)
    written = {a["name"]: args[i] for i, a in enumerate(case["args"]) if a.get("written")}
    save_outputs(case, written, returned)


def run_hlo_case(case, backend, xla_client, jax):
    with open(case["module"]) as f:
        text = f.read()
    devices = backend.devices()[:1]
    executable = backend.compile_and_load(
        text, xla_client.DeviceList(tuple(devices)), xla_client.CompileOptions()
    )
    args = [load_arg(a) for a in case["args"] if a["kind"] != "size"]
    buffers = [jax.device_put(np.asarray(a), devices[0]) for a in args]
    results = [np.asarray(r) for r in executable.execute(buffers)]
    names = case["results"]
    if len(results) != len(names):
        raise RuntimeError(f"{len(results)} results for {len(names)} names")
    written = {n: r for n, r in zip(names, results) if n != "__return__"}
    returned = results[-1] if names and names[-1] == "__return__" else None
    save_outputs(case, written, returned)


def main():
    manifest_path, results_path = sys.argv[1], sys.argv[2]
    with open(manifest_path) as f:
        manifest = json.load(f)
    target = manifest["target"]
    torch = jax = backend = xla_client = None
    if target == "pytorch":
        import torch
    if target in ("jax", "hlo"):
        import jax

        jax.config.update("jax_enable_x64", True)
    if target == "hlo":
        from jax.extend import backend as jax_backend
        from jax._src.lib import xla_client

        backend = jax_backend.get_backend()
    results = {}
    for case in manifest["cases"]:
        try:
            with np.errstate(all="ignore"):
                if target == "hlo":
                    run_hlo_case(case, backend, xla_client, jax)
                else:
                    run_python_case(case, target, torch)
            results[case["id"]] = {"ok": True}
        except Exception:
            results[case["id"]] = {"ok": False, "error": traceback.format_exc(limit=4)}
    with open(results_path, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
