"""Every spec agrees numerically with the gcc-compiled kernel.

For each manifest kernel marked "lift" or "partial": `tenslift spec --json`
chooses the sizes; the C reference driver (scripts/cref.py) generates inputs
at exactly those sizes (a dataset "SPEC" added to an in-memory copy of the
manifest entry), compiles and runs the kernel; `tenslift spec --eval`
evaluates the spec on the same .npy inputs; every output must match —
integers exactly, floats up to rounding (the spec is exact over the reals, C
rounds each operation in the declared type).

A kernel in PolyBench's distributed form is compiled at MINI's macros, its
arrays at their declared extents: the extent sizes (`ext_20`) take the values
the build declares, the loops the spec's small sizes, and everything outside
each array's region (its manifest shape at those sizes) is a sentinel that
the C and the spec must both leave unchanged.

Chunks for parallel runs: see `_chunk`. The binary is $TENSLIFT_BIN, else target/release/tenslift, else
target/debug/tenslift (scripts/test.sh builds release first).
"""

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO_ROOT, cref_module as cref, tenslift_binary

DATASET = "SPEC"
SEED = 0
# Rounding allowance relative to the largest magnitude in the output (C
# rounds every operation; small sizes keep the accumulated error tiny).
RELATIVE_TOLERANCE = {"f64": 1e-9, "f32": 1e-4}


def _binary() -> Path:
    return tenslift_binary()


def _chunk(kernels: list) -> list:
    """$SPEC_VS_C_CHUNK=`i/n` keeps every n-th kernel from the i-th (0-based),
    so n processes can share the corpus (e.g. `0/2` and `1/2` on 2 cores)."""
    chunk = os.environ.get("SPEC_VS_C_CHUNK")
    if not chunk:
        return kernels
    index, count = (int(part) for part in chunk.split("/"))
    return kernels[index::count]


BINARY = _binary()
LIFTED = _chunk([k for k in cref.load_manifest().values() if k.expect in ("lift", "partial")])
# The distributed PolyBench form is compiled at one dataset's macros (its
# arrays at their declared extents); the loops run to the spec's small sizes.
DISTRIBUTED_DATASET = "MINI"
# Written outside each array's region (the manifest shape at the spec's
# sizes) before the run: the C and the spec must leave it there.
SENTINEL = -7777


def _tenslift(*args: str) -> subprocess.CompletedProcess:
    if not BINARY.is_file():
        pytest.fail(f"no tenslift binary at {BINARY}: run `cargo build --bin tenslift` "
                    "or set TENSLIFT_BIN")
    return subprocess.run([str(BINARY), *args], capture_output=True, text=True, cwd=REPO_ROOT)


def _macro_defines(kernel) -> list[str]:
    """Sizes that are compile-time macros (`#define M 10`), not C parameters:
    the spec is extracted with the same -D flags cref compiles with (MINI).
    A distributed kernel gets its suite's -I directories and dataset switch."""
    if kernel.form == "distributed":
        return [*(f"-I{d}" for d in kernel.include_dirs), f"-D{DISTRIBUTED_DATASET}_DATASET"]
    parameters = {p.name for p in kernel.params}
    return [f"-D{name.upper()}={value}" for name, value in kernel.sizes["MINI"].items()
            if name not in parameters]


def _spec_sizes(kernel) -> dict[str, int]:
    result = _tenslift("spec", str(kernel.path), "--function", kernel.function, "--json",
                       *_macro_defines(kernel))
    assert result.returncode == 0, f"tenslift spec failed ({result.returncode}): {result.stderr}"
    return json.loads(result.stdout)["sizes"]


def _with_spec_dataset(kernel, sizes: dict[str, int]):
    """The manifest entry with a dataset at the spec's sizes. A manifest size
    that is not a size parameter of the spec must not change the C program's
    meaning, so it keeps its MINI value."""
    dataset = dict(kernel.sizes["MINI"])

    def manifest_name(name: str) -> str | None:
        if name in dataset:
            return name
        # A macro size `N` of the spec is the manifest's `n`: cref compiles -DN=<n>.
        return name.lower() if name.lower() in dataset else None

    unknown = sorted(n for n in sizes if manifest_name(n) is None)
    assert not unknown, f"spec size parameters {unknown} are not manifest sizes of {kernel.name}"
    dataset.update({manifest_name(n): v for n, v in sizes.items()})
    return dataclasses.replace(kernel, sizes={**kernel.sizes, DATASET: dataset})


def _mismatch(name: str, dtype: str, c_value: np.ndarray, spec_value: np.ndarray) -> str | None:
    """Why the spec's output differs from C's, or None when they agree."""
    if c_value.shape != spec_value.shape:
        return f"{name}: shape {spec_value.shape} from the spec, {c_value.shape} from C"
    if c_value.dtype.kind != "f":
        wrong = np.argwhere(c_value != spec_value)
        if len(wrong) == 0:
            return None
        at = tuple(int(i) for i in wrong[0])
        return (f"{name}: {len(wrong)} integer elements differ, first at {at}: "
                f"spec {spec_value[at]}, C {c_value[at]}")
    c64 = c_value.astype(np.float64)
    s64 = spec_value.astype(np.float64)
    both_nan = np.isnan(c64) & np.isnan(s64)
    finite = np.isfinite(c64)
    scale = max(1.0, float(np.max(np.abs(c64[finite]), initial=0.0)))
    tolerance = RELATIVE_TOLERANCE.get(dtype, 1e-9) * scale
    bad = ~both_nan & ~(np.abs(c64 - s64) <= tolerance)
    if not bad.any():
        return None
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    return (f"{name}: {int(bad.sum())} of {bad.size} elements differ beyond {tolerance:.3g}, "
            f"first at {at}: spec {s64[at]!r}, C {c64[at]!r}")


def _declared_extents(kernel) -> tuple[dict[str, int], dict[str, list[dict]]]:
    """The extent sizes with the values this build declares, and each
    array's declared dims (affine, as `tenslift extract --json` gives them)."""
    result = _tenslift("extract", str(kernel.path), "--function", kernel.function, "--json",
                       *_macro_defines(kernel))
    assert result.returncode == 0, f"tenslift extract failed: {result.stderr}"
    params = json.loads(result.stdout)["kernels"][0]["params"]
    extents = {p["name"]: p["origin"]["extent"]["value"] for p in params
               if isinstance(p.get("origin"), dict) and "extent" in p["origin"]}
    dims = {p["name"]: p["kind"]["dims"] for p in params if p["kind"]["kind"] == "array"}
    return extents, dims


def _at_declared_extents(kernel, sizes: dict[str, int]):
    """A distributed entry run at the spec's loop sizes on arrays at their
    declared extents: the sizes with each extent at its build value, and the
    entry with a MINI dataset at those sizes whose arrays have the declared
    shapes (cref compiles -DMINI_DATASET, so the C declares the same)."""
    extents, dims = _declared_extents(kernel)
    sizes = {**sizes, **{n: v for n, v in extents.items() if n in sizes}}

    def value(affine: dict) -> int:
        return affine["constant"] + sum(c * sizes[n] for n, c in affine["terms"].items())

    params = tuple(dataclasses.replace(p, shape=tuple(str(value(d)) for d in dims[p.name]))
                   if p.kind == "array" and dims.get(p.name) else p for p in kernel.params)
    # A manifest size the spec does not name keeps its dataset value.
    loops = {**kernel.sizes[DISTRIBUTED_DATASET],
             **{n: v for n, v in sizes.items() if n not in extents}}
    entry = dataclasses.replace(kernel, params=params,
                                sizes={**kernel.sizes, DISTRIBUTED_DATASET: loops})
    return sizes, entry


def _sentinel(dtype: np.dtype):
    """SENTINEL, or the type's least value where it does not fit (int8)."""
    if dtype.kind in "iu" and np.iinfo(dtype).min > SENTINEL:
        return np.iinfo(dtype).min
    return SENTINEL


def _fill_borders(kernel, loops: dict[str, int], values: dict, inputs: Path) -> dict:
    """Writes SENTINEL outside each array's region (its manifest shape at the
    loop sizes) into the inputs; the regions, per array name."""
    regions = {}
    for p in kernel.arrays:
        region = tuple(slice(0, cref.eval_size_expr(e, loops, p.name)) for e in p.shape)
        array = values[p.name].copy()
        inside = array[region].copy()
        array[...] = _sentinel(array.dtype)
        array[region] = inside
        np.save(inputs / f"{p.name}.npy", array)
        regions[p.name] = region
    return regions


def _border_problems(kernel, regions: dict, outputs: dict) -> list[str]:
    """Outputs whose elements outside the region are no longer SENTINEL."""
    problems = []
    for name, region in regions.items():
        if name not in outputs:
            continue
        border = np.ones(outputs[name].shape, dtype=bool)
        border[region] = False
        changed = int(np.count_nonzero(outputs[name][border] != _sentinel(outputs[name].dtype)))
        if changed:
            problems.append(f"{name}: {changed} border elements changed")
    return problems


@pytest.mark.parametrize("kernel", LIFTED, ids=[k.name for k in LIFTED])
def test_spec_matches_compiled_c(kernel, tmp_path):
    sizes = _spec_sizes(kernel)
    inputs = tmp_path / "inputs"
    regions = {}
    if kernel.form == "distributed":
        loops = dict(sizes)
        sizes, at_spec_sizes = _at_declared_extents(kernel, sizes)
        dataset = DISTRIBUTED_DATASET
        values = cref.generate_inputs(at_spec_sizes, dataset, SEED, inputs)
        regions = _fill_borders(kernel, loops, values, inputs)
    else:
        at_spec_sizes = _with_spec_dataset(kernel, sizes)
        dataset = DATASET
        cref.generate_inputs(at_spec_sizes, dataset, SEED, inputs)
    c_run = cref.run(at_spec_sizes, dataset, seed=SEED, inputs=inputs, out=tmp_path / "c")

    size_list = ",".join(f"{k}={v}" for k, v in sizes.items())
    spec_out = tmp_path / "spec"
    args = ["spec", str(kernel.path), "--function", kernel.function, "--eval", str(inputs),
            "--out", str(spec_out), *_macro_defines(kernel)]
    if size_list:
        args += ["--sizes", size_list]
    evaluated = _tenslift(*args)
    assert evaluated.returncode == 0, f"tenslift spec --eval failed: {evaluated.stderr}"

    problems = []
    for name in kernel.outputs:
        produced = spec_out / f"{name}.npy"
        if not produced.is_file():
            problems.append(f"{name}: the spec has no such output")
            continue
        dtype = kernel.return_type or kernel.dtype if name == "return" else kernel.param(name).type
        # A double result of float arithmetic (float products summed in a
        # double) is no more exact than float's rounding.
        if any(p.type == "f32" for p in kernel.arrays):
            dtype = "f32"
        problem = _mismatch(name, dtype, c_run.outputs[name], np.load(produced))
        if problem:
            problems.append(problem)
    problems += _border_problems(kernel, regions, c_run.outputs)
    assert not problems, f"{kernel.name} at {size_list}:\n" + "\n".join(problems)


def test_a_wrong_input_is_detected(tmp_path):
    """The comparison can fail: perturbing one input the spec reads changes
    the spec's output, and the check reports it."""
    kernel = cref.get_kernel("gemm")
    sizes = _spec_sizes(kernel)
    at_spec_sizes = _with_spec_dataset(kernel, sizes)
    inputs = tmp_path / "inputs"
    values = cref.generate_inputs(at_spec_sizes, DATASET, SEED, inputs)
    c_run = cref.run(at_spec_sizes, DATASET, seed=SEED, inputs=inputs, out=tmp_path / "c")
    array = next(p.name for p in kernel.arrays if p.name not in kernel.outputs)
    changed = values[array].copy()
    changed.reshape(-1)[0] += 1
    np.save(inputs / f"{array}.npy", changed)
    size_list = ",".join(f"{k}={v}" for k, v in sizes.items())
    result = _tenslift("spec", str(kernel.path), "--function", kernel.function, "--sizes",
                       size_list, "--eval", str(inputs), "--out", str(tmp_path / "spec"))
    assert result.returncode == 0, result.stderr
    output = kernel.outputs[0]
    problem = _mismatch(output, kernel.param(output).type, c_run.outputs[output],
                        np.load(tmp_path / "spec" / f"{output}.npy"))
    assert problem is not None and "differ" in problem


def test_a_changed_border_is_detected():
    """The border check can fail: one element outside the region that is no
    longer the sentinel is reported."""
    kernel = cref.get_kernel("gemm-dist")
    output = np.full((4, 5), float(SENTINEL))
    region = (slice(0, 2), slice(0, 3))
    output[region] = 1.0
    assert _border_problems(kernel, {"C": region}, {"C": output}) == []
    output[3, 4] = 0.0
    assert _border_problems(kernel, {"C": region}, {"C": output}) == ["C: 1 border elements changed"]
