#!/usr/bin/env python3
"""C reference driver: runs any kernel of benchmarks/manifest.toml as compiled C.

For a kernel and dataset it generates deterministic random inputs (one .npy per
array and scalar parameter plus meta.json), generates a C main from one
template (scripts/cref_c/cref_main.c.in) that reads those inputs, calls the
kernel, times the call and writes every output as .npy plus timing.json, and
compiles it with gcc, clang, Polly or parallel Polly. Executables are cached
under target/cref/ keyed by everything that goes into them.

Command line (see benchmarks/README.md):
    cref.py list
    cref.py inputs|build|run --kernel NAME --dataset MINI [--variant gcc]
        [--seed 0] [--inputs DIR] [--out DIR] [--repeat N]

Python API (import scripts/cref.py as a module): load_manifest, generate_inputs,
read_inputs, main_source, build, run, RunResult, CrefError.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# The Polly classifier lives beside this file; cref.py is also loaded by path
# (tests, the bench runner), where scripts/ is not on sys.path.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))
import polly_evidence  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS_DIR = REPO_ROOT / "benchmarks"
MANIFEST_PATH = BENCHMARKS_DIR / "manifest.toml"
C_SUPPORT_DIR = Path(__file__).resolve().parent / "cref_c"
CACHE_DIR = REPO_ROOT / "target" / "cref"

DATASETS = ("MINI", "SMALL", "MEDIUM", "LARGE", "EXTRALARGE")
EXPECTATIONS = ("lift", "partial", "reject")
INPUT_FORMAT_VERSION = 1

# Manifest type name -> (numpy dtype, C type, .npy descr as written by numpy).
TYPES: dict[str, tuple[str, str, str]] = {
    "f64": ("float64", "double", "<f8"),
    "f32": ("float32", "float", "<f4"),
    "i8": ("int8", "int8_t", "|i1"),
    "u8": ("uint8", "uint8_t", "|u1"),
    "i16": ("int16", "int16_t", "<i2"),
    "u16": ("uint16", "uint16_t", "<u2"),
    "i32": ("int32", "int32_t", "<i4"),
    "u32": ("uint32", "uint32_t", "<u4"),
    "i64": ("int64", "int64_t", "<i8"),
    "u64": ("uint64", "uint64_t", "<u8"),
}

# Value ranges used when a parameter gives neither `range` nor `value`.
DEFAULT_FLOAT_RANGE = (-1.0, 1.0)
DEFAULT_SIGNED_RANGE = (-8, 8)
DEFAULT_UNSIGNED_RANGE = (0, 15)
INIT_KINDS = ("spd", "diag_dominant", "decaying")

# Compiler variants: (compiler, optimisation flags, extra link flags).
#
# The Polly flags are those Polly's documentation gives for performance, checked
# against "Using Polly with Clang" (polly/docs/UsingPollyWithClang.rst, the
# page of LLVM 19 and later) and the "Performance" page:
# - "-O3 -mllvm -polly": "Optimizing with Polly is as easy as adding -O3
#   -mllvm -polly". Tiling (-polly-tiling) and the matrix-multiplication
#   pattern optimisation (-polly-pattern-matching-based-opts) are on by
#   default; the Performance page's GEMM figures use these defaults.
# - "-mllvm -polly-vectorizer=stripmine": the page's "Automatic Vector code
#   generation" (Polly strip-mines a loop for LLVM's vectoriser; the older
#   `polly` vectoriser was removed in LLVM 17).
# - "-mllvm -polly-parallel -lgomp": the page's "Automatic OpenMP code
#   generation". Polly's default OpenMP backend is GNU (it calls GOMP_*), and
#   the page names libgomp, whose run-time schedule Polly's default
#   -polly-scheduling=runtime defers to; linking LLVM's libomp instead (its
#   GOMP compatibility layer) would run the same calls under another default
#   schedule, which is not the documented configuration.
# - Options the page lists under "Further options" are "mainly useful for the
#   development or the analysis of Polly" (-polly-process-unprofitable,
#   2nd-level or register tiling, -polly-position): left at their defaults.
# - "-march=native" is ours, not the page's: every C baseline (gcc, clang,
#   Polly) targets the machine the same way, and Polly's matrix-multiplication
#   optimisation sizes its micro-kernel from the target's vector registers.
POLLY_FLAGS = ("-O3", "-march=native", "-mllvm", "-polly", "-mllvm", "-polly-vectorizer=stripmine")
VARIANTS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "gcc": ("gcc", ("-O3", "-march=native"), ()),
    "clang": ("clang-19", ("-O3", "-march=native"), ()),
    "polly": ("clang-19", POLLY_FLAGS, ()),
    "polly-parallel": ("clang-19", (*POLLY_FLAGS, "-mllvm", "-polly-parallel"), ("-lgomp",)),
}

# Manifest `form`s (benchmarks/README.md). A `distributed` entry is compiled the
# suite's way: -D<DATASET>_DATASET selects the sizes in the kernel's own header.
FORMS = ("own", "c99-vla", "distributed")
DEFAULT_FORM = "own"

# Exit codes of the command line.
EXIT_USER_ERROR = 2
EXIT_COMPILE_ERROR = 3
EXIT_RUN_ERROR = 4


class CrefError(Exception):
    """A user-facing error: bad manifest, unknown kernel, failed compile or run."""

    exit_code = EXIT_USER_ERROR


class CompileError(CrefError):
    """The compiler rejected the generated main or the kernel (message has its output)."""

    exit_code = EXIT_COMPILE_ERROR


class KernelRunError(CrefError):
    """The compiled driver exited with an error or a signal."""

    exit_code = EXIT_RUN_ERROR


# ----------------------------------------------------------------------------- manifest


@dataclass(frozen=True)
class Param:
    """One C parameter of a kernel, in declaration order."""

    name: str
    kind: str  # "size" | "scalar" | "array"
    type: str | None = None
    shape: tuple[str, ...] = ()
    range: tuple[float, float] | None = None
    value: float | int | None = None
    init: str | None = None
    # "rowptr": a `T **` / `T ***` parameter, passed as row pointers into
    # the contiguous array (each row `shape[-1]` elements after the last).
    layout: str | None = None
    # A struct field the C reaches through its struct parameter (`m.vals`,
    # `t->dims[0]`): the path below the struct, as written after the root.
    field: str | None = None


@dataclass(frozen=True)
class Kernel:
    """One [[kernel]] entry of the manifest."""

    name: str
    suite: str
    file: str
    function: str
    dtype: str
    outputs: tuple[str, ...]
    expect: str
    params: tuple[Param, ...]
    sizes: dict[str, dict[str, int]]
    reason: str | None = None
    return_type: str | None = None
    form: str = DEFAULT_FORM
    include: tuple[str, ...] = ()  # -I directories, relative to the manifest's directory
    sources: tuple[str, ...] = ()  # further C files linked into the driver (the suite's runtime)
    extra: dict[str, Any] = field(default_factory=dict)
    base_dir: Path = BENCHMARKS_DIR  # `file` is relative to the manifest's directory

    @property
    def path(self) -> Path:
        return (self.base_dir / self.file).resolve()

    @property
    def include_dirs(self) -> list[Path]:
        return [(self.base_dir / d).resolve() for d in self.include]

    @property
    def source_paths(self) -> list[Path]:
        return [(self.base_dir / f).resolve() for f in self.sources]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise CrefError(f"kernel {self.name}: no parameter named {name!r}")

    @property
    def arrays(self) -> list[Param]:
        return [p for p in self.params if p.kind == "array"]

    @property
    def scalars(self) -> list[Param]:
        return [p for p in self.params if p.kind == "scalar"]

    def dataset_sizes(self, dataset: str) -> dict[str, int]:
        if dataset not in self.sizes:
            known = ", ".join(d for d in DATASETS if d in self.sizes)
            raise CrefError(f"kernel {self.name} has no dataset {dataset!r} (known: {known})")
        return dict(self.sizes[dataset])

    def shape(self, param: Param, dataset: str) -> tuple[int, ...]:
        sizes = self.dataset_sizes(dataset)
        return tuple(eval_size_expr(e, sizes, f"kernel {self.name}, {param.name}") for e in param.shape)


_SIZE_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.USub,
               ast.UAdd, ast.Name, ast.Load, ast.Constant)


def size_expr_names(expr: str) -> set[str]:
    """The size names an integer shape expression refers to."""
    tree = _parse_size_expr(expr, "shape")
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _parse_size_expr(expr: str, where: str) -> ast.Expression:
    try:
        tree = ast.parse(str(expr), mode="eval")
    except SyntaxError:
        raise CrefError(f"{where}: malformed shape expression {expr!r}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _SIZE_NODES) or (
            isinstance(node, ast.Constant) and not isinstance(node.value, int)
        ):
            raise CrefError(f"{where}: shape expression {expr!r} may only use size names, "
                            "integers, + - * and parentheses")
    return tree


def eval_size_expr(expr: str | int, sizes: dict[str, int], where: str) -> int:
    """Evaluates a shape entry such as "n+1" or "m*lda" against one dataset's sizes."""
    if isinstance(expr, int):
        return expr
    tree = _parse_size_expr(expr, where)

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant):
            return int(node.value)
        if isinstance(node, ast.Name):
            if node.id not in sizes:
                raise CrefError(f"{where}: shape uses size {node.id!r}, which the dataset lacks")
            return sizes[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = value(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        assert isinstance(node, ast.BinOp)
        left, right = value(node.left), value(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        return left * right

    result = value(tree)
    if result < 0:
        raise CrefError(f"{where}: shape expression {expr!r} is negative ({result})")
    return result


def _parse_param(kernel_name: str, raw: Any) -> Param:
    where = f"kernel {kernel_name}"
    if not isinstance(raw, dict) or "name" not in raw or "kind" not in raw:
        raise CrefError(f"{where}: every param needs a name and a kind")
    kind = raw["kind"]
    if kind not in ("size", "scalar", "array"):
        raise CrefError(f"{where}, param {raw['name']}: unknown kind {kind!r}")
    ptype = raw.get("type")
    if kind != "size" and ptype not in TYPES:
        raise CrefError(f"{where}, param {raw['name']}: unknown type {ptype!r} "
                        f"(known: {', '.join(TYPES)})")
    rng = raw.get("range")
    if rng is not None:
        if not (isinstance(rng, list) and len(rng) == 2 and rng[0] <= rng[1]):
            raise CrefError(f"{where}, param {raw['name']}: range must be [lo, hi] with lo <= hi")
        rng = (rng[0], rng[1])
    init = raw.get("init")
    if init is not None and init not in INIT_KINDS:
        raise CrefError(f"{where}, param {raw['name']}: unknown init {init!r} "
                        f"(known: {', '.join(INIT_KINDS)})")
    shape = tuple(raw.get("shape", ()))
    if kind == "array" and "shape" not in raw:
        raise CrefError(f"{where}, param {raw['name']}: arrays need a shape")
    layout = raw.get("layout")
    if layout not in (None, "rowptr"):
        raise CrefError(f"{where}, param {raw['name']}: unknown layout {layout!r} (known: rowptr)")
    if layout == "rowptr" and len(shape) not in (2, 3):
        raise CrefError(f"{where}, param {raw['name']}: a rowptr array has 2 or 3 dimensions")
    field_path = raw.get("field")
    if field_path is not None and not re.fullmatch(r"\w+(->|\.)[\w.\[\]]+", field_path):
        raise CrefError(f"{where}, param {raw['name']}: field must read like `m.vals` or `t->dims[0]`")
    return Param(name=raw["name"], kind=kind, type=ptype, shape=shape, range=rng,
                 value=raw.get("value"), init=init, layout=layout, field=field_path)


_KNOWN_KEYS = {"name", "suite", "file", "function", "dtype", "outputs", "expect", "reason",
               "params", "sizes", "return_type", "form", "include", "sources"}


def _parse_kernel(raw: dict[str, Any], base_dir: Path) -> Kernel:
    name = raw.get("name", "<unnamed>")
    missing = [k for k in ("name", "suite", "file", "function", "dtype", "outputs", "expect",
                           "params", "sizes") if k not in raw]
    if missing:
        raise CrefError(f"kernel {name}: missing keys {', '.join(missing)}")
    params = tuple(_parse_param(name, p) for p in raw["params"])
    sizes = {d: {k: int(v) for k, v in s.items()} for d, s in raw["sizes"].items()}
    form = raw.get("form", DEFAULT_FORM)
    if form not in FORMS:
        raise CrefError(f"kernel {name}: unknown form {form!r} (known: {', '.join(FORMS)})")
    return Kernel(name=name, suite=raw["suite"], file=raw["file"], function=raw["function"],
                  dtype=raw["dtype"], outputs=tuple(raw["outputs"]), expect=raw["expect"],
                  params=params, sizes=sizes, reason=raw.get("reason"),
                  return_type=raw.get("return_type"), base_dir=base_dir, form=form,
                  include=tuple(raw.get("include", ())), sources=tuple(raw.get("sources", ())),
                  extra={k: v for k, v in raw.items() if k not in _KNOWN_KEYS})


def load_manifest(path: Path | str | None = None) -> dict[str, Kernel]:
    """Parses the manifest into {kernel name: Kernel}, in file order."""
    path = Path(path) if path is not None else MANIFEST_PATH
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise CrefError(f"{path}: manifest not found") from None
    except tomllib.TOMLDecodeError as error:
        raise CrefError(f"{path}: invalid TOML: {error}") from None
    kernels: dict[str, Kernel] = {}
    for raw in data.get("kernel", []):
        if not isinstance(raw, dict):
            raise CrefError(f"{path}: every [[kernel]] must be a table")
        try:
            kernel = _parse_kernel(raw, path.resolve().parent)
        except (TypeError, ValueError, AttributeError, KeyError) as error:
            raise CrefError(f"{path}: kernel {raw.get('name', '<unnamed>')!r} is malformed: "
                            f"{error}") from None
        if kernel.name in kernels:
            raise CrefError(f"{path}: kernel {kernel.name!r} is defined twice")
        kernels[kernel.name] = kernel
    return kernels


def get_kernel(name: str, manifest: dict[str, Kernel] | None = None) -> Kernel:
    manifest = manifest if manifest is not None else load_manifest()
    if name not in manifest:
        close = [k for k in manifest if name.lower() in k.lower() or k.lower() in name.lower()]
        hint = f" (did you mean: {', '.join(close[:5])}?)" if close else ""
        raise CrefError(f"unknown kernel {name!r}{hint}; `cref.py list` shows all kernels")
    return manifest[name]


def _resolve(kernel: Kernel | str, manifest: dict[str, Kernel] | None = None) -> Kernel:
    return kernel if isinstance(kernel, Kernel) else get_kernel(kernel, manifest)


def validate_kernel(kernel: Kernel | str) -> list[str]:
    """Problems with one manifest entry that would make the driver or later stages fail."""
    kernel = _resolve(kernel)
    problems: list[str] = []
    if kernel.expect not in EXPECTATIONS:
        problems.append(f"expect must be one of {EXPECTATIONS}, not {kernel.expect!r}")
    if kernel.expect == "reject" and not kernel.reason:
        problems.append("expect = \"reject\" needs a reason")
    if kernel.dtype not in TYPES:
        problems.append(f"unknown dtype {kernel.dtype!r}")
    if not kernel.path.is_file():
        problems.append(f"file {kernel.file} does not exist")
    names = [p.name for p in kernel.params]
    if len(set(names)) != len(names):
        problems.append("duplicate parameter names")
    for dataset in DATASETS:
        if dataset not in kernel.sizes:
            problems.append(f"dataset {dataset} missing from sizes")
    size_names = set().union(*(s.keys() for s in kernel.sizes.values())) if kernel.sizes else set()
    for dataset, sizes in kernel.sizes.items():
        if dataset not in DATASETS:
            problems.append(f"unknown dataset {dataset!r}")
        if set(sizes) != size_names:
            problems.append(f"dataset {dataset} names sizes {sorted(sizes)}, others {sorted(size_names)}")
        if any(v <= 0 for v in sizes.values()):
            problems.append(f"dataset {dataset} has a non-positive size")
        if any(s != s.lower() for s in sizes):
            problems.append(f"dataset {dataset}: size names must be lowercase")
    for p in kernel.params:
        if p.kind == "size" and p.name not in size_names:
            problems.append(f"size parameter {p.name} is not in sizes")
        if p.kind == "array":
            for expr in p.shape:
                try:
                    unknown = size_expr_names(str(expr)) - size_names
                except CrefError as error:
                    problems.append(str(error))
                    continue
                if unknown:
                    problems.append(f"array {p.name}: shape uses unknown sizes {sorted(unknown)}")
            if p.init in ("spd", "diag_dominant") and (len(p.shape) != 2 or p.shape[0] != p.shape[1]):
                problems.append(f"array {p.name}: init {p.init!r} needs a square 2-D shape")
        if p.kind == "scalar" and p.value is not None and p.range is not None:
            problems.append(f"scalar {p.name}: give value or range, not both")
    for output in kernel.outputs:
        if output == "return":
            continue
        if output not in names:
            problems.append(f"output {output!r} is not a parameter")
        elif kernel.param(output).kind != "array":
            problems.append(f"output {output!r} is not an array parameter")
    if "return" in kernel.outputs and (kernel.return_type or kernel.dtype) not in TYPES:
        problems.append(f"unknown return_type {kernel.return_type!r}")
    return problems


# ----------------------------------------------------------------------------- inputs


def _stable_int(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


def _generator(kernel: str, dataset: str, seed: int, param: str) -> np.random.Generator:
    """One independent stream per (kernel, dataset, seed, parameter): adding a
    parameter or reordering them does not change the others' values."""
    sequence = np.random.SeedSequence(entropy=seed, spawn_key=(
        _stable_int(kernel), _stable_int(dataset), _stable_int(param)))
    return np.random.default_rng(sequence)


def _random_values(rng: np.random.Generator, type_name: str, shape: tuple[int, ...],
                   value_range: tuple[float, float] | None) -> np.ndarray:
    dtype = np.dtype(TYPES[type_name][0])
    if dtype.kind == "f":
        lo, hi = value_range if value_range is not None else DEFAULT_FLOAT_RANGE
        return rng.uniform(lo, hi, size=shape).astype(dtype)
    if value_range is not None:
        lo, hi = int(value_range[0]), int(value_range[1])
    else:
        lo, hi = DEFAULT_SIGNED_RANGE if dtype.kind == "i" else DEFAULT_UNSIGNED_RANGE
    info = np.iinfo(dtype)
    if lo < info.min or hi > info.max:
        raise CrefError(f"range [{lo}, {hi}] does not fit {type_name}")
    return rng.integers(lo, hi, size=shape, dtype=dtype, endpoint=True)


def _structured_values(rng: np.random.Generator, param: Param, shape: tuple[int, ...]) -> np.ndarray:
    """init = spd | diag_dominant | decaying (see benchmarks/README.md)."""
    dtype = np.dtype(TYPES[param.type][0])
    if dtype.kind != "f":
        raise CrefError(f"array {param.name}: init {param.init!r} needs a floating-point type")
    lo, hi = param.range if param.range is not None else DEFAULT_FLOAT_RANGE
    base = rng.uniform(lo, hi, size=shape)
    if param.init == "decaying":
        # element k (flat, C order) is scaled by 1/(k+1)^2: the sum of |values|
        # stays below 1.65 * max|range| however long the array is.
        scale = 1.0 / (np.arange(base.size, dtype=np.float64) + 1.0) ** 2
        return (base.reshape(-1) * scale).reshape(shape).astype(dtype)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise CrefError(f"array {param.name}: init {param.init!r} needs a square 2-D shape")
    n = shape[0]
    if param.init == "spd":
        # M M^T / n has O(1) entries; + I bounds the smallest eigenvalue below by 1.
        matrix = base @ base.T / max(n, 1) + np.eye(n)
        return matrix.astype(dtype)
    # diag_dominant: each diagonal entry exceeds the sum of |off-diagonal| entries of its row
    # (and of its column) by at least 1, which keeps LU without pivoting and
    # triangular solves stable.
    off = np.abs(base).sum(axis=1) - np.abs(np.diag(base))
    off_cols = np.abs(base).sum(axis=0) - np.abs(np.diag(base))
    matrix = base.copy()
    np.fill_diagonal(matrix, np.maximum(off, off_cols) + 1.0)
    return matrix.astype(dtype)


def input_values(kernel: Kernel | str, dataset: str, seed: int) -> dict[str, np.ndarray]:
    """The deterministic input of every array and scalar parameter (scalars are 0-d)."""
    kernel = _resolve(kernel)
    values: dict[str, np.ndarray] = {}
    for p in kernel.params:
        if p.kind == "size":
            continue
        rng = _generator(kernel.name, dataset, seed, p.name)
        if p.kind == "scalar":
            if p.value is not None:
                values[p.name] = np.array(p.value, dtype=TYPES[p.type][0])
            else:
                values[p.name] = np.asarray(_random_values(rng, p.type, (), p.range))
        else:
            shape = kernel.shape(p, dataset)
            if p.init is not None:
                values[p.name] = _structured_values(rng, p, shape)
            else:
                values[p.name] = _random_values(rng, p.type, shape, p.range)
    return values


def generate_inputs(kernel: Kernel | str, dataset: str, seed: int, directory: Path | str,
                    manifest: dict[str, Kernel] | None = None) -> dict[str, np.ndarray]:
    """Writes <param>.npy for every array/scalar parameter and meta.json into directory."""
    kernel = _resolve(kernel, manifest)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    values = input_values(kernel, dataset, seed)
    if (directory / "meta.json").is_file():
        # Regenerating over an earlier inputs directory: drop its arrays so no
        # stale parameter of another kernel lingers.
        for stale in directory.glob("*.npy"):
            stale.unlink()
    for name, array in values.items():
        np.save(directory / f"{name}.npy", np.array(array, order="C"), allow_pickle=False)
    meta = {"format": INPUT_FORMAT_VERSION, "kernel": kernel.name, "dataset": dataset,
            "seed": seed, "sizes": kernel.dataset_sizes(dataset)}
    (directory / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return values


def read_inputs(directory: Path | str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """(meta, {param: array}) of an inputs directory written by generate_inputs."""
    directory = Path(directory)
    try:
        meta = json.loads((directory / "meta.json").read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise CrefError(f"{directory}: not an inputs directory ({error})") from None
    arrays = {p.stem: np.load(p, allow_pickle=False) for p in sorted(directory.glob("*.npy"))}
    return meta, arrays


# ----------------------------------------------------------------------------- C main


def _c_string(text: str) -> str:
    """Text safe inside a C string literal that is itself inside a JSON string."""
    json_text = json.dumps(text)[1:-1]
    return json_text.replace("\\", "\\\\").replace('"', '\\"')


def _include_path(path: Path) -> str:
    return str(path).replace("\\", "\\\\").replace('"', '\\"')


def _stack_bytes(kernel: Kernel, dataset: str) -> int:
    """Room for naive local temporaries: 64 MiB plus four times all array bytes, at most 8 GiB."""
    total = 0
    for p in kernel.arrays:
        count = int(np.prod(kernel.shape(p, dataset), dtype=np.int64))
        total += count * np.dtype(TYPES[p.type][0]).itemsize
    return min(64 * 2**20 + 4 * total, 8 * 2**30)


def main_source(kernel: Kernel | str, dataset: str, variant: str = "gcc") -> str:
    """The C main for this kernel, dataset and compiler variant."""
    kernel = _resolve(kernel)
    compiler, flags = _compiler_command(variant)
    sizes = kernel.dataset_sizes(dataset)
    declarations: list[str] = []
    restore: list[str] = []
    arguments: list[str] = []
    writes: list[str] = []
    unlisted: list[str] = []
    structs = _struct_roots(kernel)
    for index, p in enumerate(kernel.params):
        # A struct field is stored into its struct; the struct is passed
        # where its first field stands (by value, by pointer, or not at all
        # for a global).
        target = _field_target(p, structs, declarations, arguments)
        if p.kind == "size":
            if target:
                declarations.append(f"  {target} = {sizes[p.name]};")
            else:
                arguments.append(str(sizes[p.name]))
            continue
        _, c_type, descr = TYPES[p.type]
        var = f"cref_param_{index}"
        if p.kind == "scalar":
            declarations.append(
                f'  {c_type} {var} = *({c_type} *)cref_npy_read(cref_path(cref_input_dir, "{p.name}.npy"), '
                f'"{descr}", sizeof({c_type}), 0, NULL);')
            if target:
                declarations.append(f"  {target} = {var};")
            else:
                arguments.append(var)
            continue
        shape = kernel.shape(p, dataset)
        extents = ", ".join(str(e) for e in shape) if shape else "0"
        count = int(np.prod(shape, dtype=np.int64))
        declarations.append(f"  static const long {var}_shape[] = {{{extents}}};")
        declarations.append(
            f'  {c_type} *{var}_pristine = cref_npy_read(cref_path(cref_input_dir, "{p.name}.npy"), '
            f'"{descr}", sizeof({c_type}), {len(shape)}, {var}_shape);')
        declarations.append(f"  {c_type} *{var} = cref_alloc(sizeof({c_type}) * (size_t){count}L);")
        restore.append(f"    memcpy({var}, {var}_pristine, sizeof({c_type}) * (size_t){count}L);")
        passed = f"(void *){var}"
        if p.layout == "rowptr":
            declarations.extend(_row_pointers(var, c_type, shape))
            passed = f"(void *){var}_rows"
        if target:
            declarations.append(f"  {target} = {passed};")
        else:
            arguments.append(passed)
        if p.name not in kernel.outputs:
            unlisted.append(
                f"      if (memcmp({var}, {var}_pristine, sizeof({c_type}) * (size_t){count}L) != 0)\n"
                f'        printf("cref: unlisted-write %s\\n", "{p.name}");')
        if p.name in kernel.outputs:
            writes.append(
                f'      cref_npy_write(cref_path(cref_output_dir, "{p.name}.npy"), "{descr}", '
                f"sizeof({c_type}), {len(shape)}, {var}_shape, {var});")
    call = f"{kernel.function}({', '.join(arguments)})"
    if "return" in kernel.outputs:
        _, c_type, descr = TYPES[kernel.return_type or kernel.dtype]
        declarations.append(f"  {c_type} cref_returned = 0;")
        call_line = f"    {c_type} cref_result = {call};"
        writes.append("      cref_returned = cref_result;")
        writes.append(
            f'      cref_npy_write(cref_path(cref_output_dir, "return.npy"), "{descr}", '
            f"sizeof({c_type}), 0, NULL, &cref_returned);")
        declarations.append("  (void)cref_returned;")
    else:
        call_line = f"    {call};"
    template = (C_SUPPORT_DIR / "cref_main.c.in").read_text()
    if _defines_main(kernel.path):
        # The suite's file has its own main(): renamed inside the #include only
        # (a -Dmain=... flag would rename the driver's main too, which is in the
        # same translation unit). It is never called; the suite's runtime
        # (`sources`) is linked so that its references resolve.
        include_line = '#include "@@KERNEL_PATH@@"'
        template = template.replace(include_line, "#define main cref_kernel_file_main\n"
                                    f"{include_line}\n#undef main")
    replacements = {
        "@@KERNEL_NAME@@": kernel.name,
        "@@DATASET@@": dataset,
        "@@KERNEL_PATH@@": _include_path(kernel.path),
        "@@DECLARATIONS@@": "\n".join(declarations),
        "@@RESTORE@@": "\n".join(restore),
        "@@CALL@@": call_line,
        "@@WRITE@@": "\n".join(writes),
        "@@CHECK_UNLISTED@@": "\n".join(unlisted),
        "@@COMPILER@@": _c_string(compiler),
        "@@FLAGS@@": _c_string(" ".join(flags)),
        "@@STACK_BYTES@@": f"{_stack_bytes(kernel, dataset)}ULL",
    }
    for marker, text in replacements.items():
        template = template.replace(marker, text)
    return template


def _row_pointers(var: str, c_type: str, shape: tuple[int, ...]) -> list[str]:
    """C lines building `{var}_rows`, the row (and plane) pointers of a rowptr array
    over its contiguous buffer; rows are disjoint, as the lifted program assumes."""
    if len(shape) == 2:
        rows, cols = shape
        return [f"  {c_type} **{var}_rows = cref_alloc(sizeof({c_type} *) * (size_t){max(rows, 1)});",
                f"  for (long r = 0; r < {rows}L; r++) {var}_rows[r] = {var} + r * {cols}L;"]
    planes, rows, cols = shape
    return [f"  {c_type} ***{var}_rows = cref_alloc(sizeof({c_type} **) * (size_t){max(planes, 1)});",
            f"  for (long z = 0; z < {planes}L; z++) {{",
            f"    {var}_rows[z] = cref_alloc(sizeof({c_type} *) * (size_t){max(rows, 1)});",
            f"    for (long r = 0; r < {rows}L; r++) {var}_rows[z][r] = {var} + (z * {rows}L + r) * {cols}L;",
            "  }"]


def _struct_roots(kernel: Kernel) -> dict[str, dict[str, Any]]:
    """The manifest's `structs` table: {root name: {type, pass}}, `pass` one of
    value, pointer, global."""
    roots: dict[str, dict[str, Any]] = {}
    for raw in kernel.extra.get("structs", []):
        if not isinstance(raw, dict) or raw.get("pass") not in ("value", "pointer", "global") \
                or "name" not in raw or ("type" not in raw and raw.get("pass") != "global"):
            raise CrefError(f"kernel {kernel.name}: a structs entry needs name, type and "
                            "pass = value|pointer|global")
        roots[raw["name"]] = dict(raw, emitted=False)
    return roots


def _field_target(p: Param, structs: dict[str, dict[str, Any]], declarations: list[str],
                  arguments: list[str]) -> str | None:
    """The C lvalue that receives a struct-field parameter (None for a plain
    parameter), declaring the struct and passing it on its first field."""
    if p.field is None:
        return None
    m = re.match(r"(\w+)(->|\.)(.*)", p.field)
    if m is None or m.group(1) not in structs:
        raise CrefError(f"param {p.name}: field {p.field!r} names no entry of `structs`")
    root, rest = structs[m.group(1)], m.group(3)
    var = m.group(1) if root["pass"] == "global" else f"cref_struct_{m.group(1)}"
    if not root["emitted"]:
        root["emitted"] = True
        if root["pass"] != "global":
            declarations.append(f"  static {root['type']} {var};")
            arguments.append(var if root["pass"] == "value" else f"&{var}")
    # Pointer fields the path subscripts (the entry's `pointers`) get memory.
    for field_prefix in root.get("pointers", []):
        if rest.startswith(f"{field_prefix}["):
            pointer = f"{var}.{field_prefix}"
            declarations.append(f"  if (!{pointer}) {pointer} = cref_alloc(sizeof *{pointer} * 16);")
    return f"{var}.{rest}"


# ----------------------------------------------------------------------------- build


def _compiler_command(variant: str) -> tuple[str, list[str]]:
    if variant not in VARIANTS:
        raise CrefError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    compiler, flags, _ = VARIANTS[variant]
    return compiler, list(flags)


def _defines_main(path: Path) -> bool:
    return path.is_file() and re.search(r"^\s*int\s+main\s*\(", path.read_text(errors="replace"),
                                        re.M) is not None


def compile_flags(kernel: Kernel | str, dataset: str) -> list[str]:
    """The -I and -D flags the kernel's C is compiled (and lifted) with for `dataset`:
    the entry's `include` directories, then -D<DATASET>_DATASET for the distributed
    form (the suite's header defines the sizes) or every size otherwise."""
    kernel = _resolve(kernel)
    includes = [f"-I{d}" for d in kernel.include_dirs]
    if kernel.form == "distributed":
        return [*includes, f"-D{dataset.upper()}_DATASET"]
    return [*includes, *size_defines(kernel, dataset)]


def size_defines(kernel: Kernel | str, dataset: str) -> list[str]:
    """-D<SIZE>=<value> for every size of the dataset, as the manifest contract requires."""
    kernel = _resolve(kernel)
    return [f"-D{name.upper()}={value}" for name, value in kernel.dataset_sizes(dataset).items()]


def _local_includes(path: Path, seen: set[Path] | None = None) -> list[Path]:
    """The kernel file and the files it #includes with quotes (transitively): what the
    cache key must cover."""
    seen = seen if seen is not None else set()
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    found = [path]
    for name in re.findall(r'^\s*#\s*include\s*"([^"]+)"', path.read_text(errors="replace"), re.M):
        found += _local_includes((path.parent / name).resolve(), seen)
    return found


def build(kernel: Kernel | str, dataset: str, variant: str = "gcc",
          manifest: dict[str, Kernel] | None = None) -> Path:
    """Compiles (or reuses from target/cref/) the driver executable; returns its path."""
    kernel = _resolve(kernel, manifest)
    if not kernel.path.is_file():
        raise CrefError(f"kernel {kernel.name}: file {kernel.path} does not exist")
    compiler, flags = _compiler_command(variant)
    link_flags = list(VARIANTS[variant][2])
    source = main_source(kernel, dataset, variant)
    command_tail = [*flags, *compile_flags(kernel, dataset), f"-I{C_SUPPORT_DIR}",
                    f"-I{kernel.path.parent}"]
    extra_sources = kernel.source_paths
    key = hashlib.sha256()
    key.update(source.encode())
    key.update("\0".join([compiler, *command_tail, *link_flags]).encode())
    suite_headers = [h for d in kernel.include_dirs for h in sorted(d.glob("*.h"))]
    for dependency in [C_SUPPORT_DIR / "cref_npy.h", *_local_includes(kernel.path),
                       *suite_headers, *extra_sources]:
        key.update(dependency.read_bytes())
    digest = key.hexdigest()[:16]
    out_dir = CACHE_DIR / kernel.name / f"{dataset}-{variant}-{digest}"
    executable = out_dir / "driver"
    if executable.is_file():
        return executable
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "main.c").write_text(source)
    # Compile to a unique temporary name and rename, so parallel builds of the
    # same key never see a half-written executable.
    with tempfile.NamedTemporaryFile(dir=out_dir, prefix=".driver-", delete=False) as tmp:
        tmp_path = Path(tmp.name)
    command = [compiler, *command_tail, str(out_dir / "main.c"), *map(str, extra_sources),
               "-o", str(tmp_path),
               *link_flags, "-lm", "-pthread"]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError:
        tmp_path.unlink(missing_ok=True)
        raise CompileError(f"compiler {compiler!r} not found (run scripts/setup.sh)") from None
    if result.returncode != 0:
        tmp_path.unlink(missing_ok=True)
        raise CompileError(
            f"kernel {kernel.name} ({dataset}, {variant}) failed to compile:\n"
            f"$ {' '.join(command)}\n{result.stderr.strip()}")
    os.replace(tmp_path, executable)
    return executable


# ----------------------------------------------------------------------------- Polly report

# Bumped when the report's meaning changes, so that polly.json files cached
# beside older executables are recomputed rather than trusted.
POLLY_REPORT_FORMAT = 2


def polly_report(kernel: Kernel | str, dataset: str, variant: str = "polly") -> dict[str, Any]:
    """Whether Polly transformed the kernel in the C baseline `variant`, from the
    very translation unit and flags the executable is built with, compiled once
    more to LLVM IR with debug info and Polly's own reports
    (scripts/polly_evidence.py: what counts and how it is attributed to the
    kernel's lines and to the code the driver runs). Cached as polly.json
    beside the executable."""
    kernel = _resolve(kernel)
    compiler, flags = _compiler_command(variant)
    if "-polly" not in flags:
        raise CrefError(f"variant {variant!r} does not run Polly")
    executable = build(kernel, dataset, variant)
    cached = executable.parent / "polly.json"
    if cached.is_file():
        report = json.loads(cached.read_text())
        if report.get("format") == POLLY_REPORT_FORMAT:
            return report
    command = [compiler, *flags, *compile_flags(kernel, dataset), f"-I{C_SUPPORT_DIR}",
               f"-I{kernel.path.parent}", str(executable.parent / "main.c")]
    with tempfile.TemporaryDirectory(prefix="polly-", dir=executable.parent) as workdir:
        try:
            found = polly_evidence.analyse(command, kernel.path, kernel.function, Path(workdir))
        except polly_evidence.PollyEvidenceError as error:
            raise CompileError(f"kernel {kernel.name} ({dataset}, {variant}): {error}") from None
    report = {"format": POLLY_REPORT_FORMAT, "kernel": kernel.name, "dataset": dataset,
              "variant": variant, **found}
    cached.write_text(json.dumps(report))
    return report


# ----------------------------------------------------------------------------- run


@dataclass
class RunResult:
    """Outputs of one driver run: {output name: array} ("return" for a returned scalar)."""

    kernel: str
    dataset: str
    variant: str
    outputs: dict[str, np.ndarray]
    timing: dict[str, Any]
    out_dir: Path
    # Arrays not listed in `outputs` that the kernel nevertheless modified
    # (a manifest mistake: outputs must name every array the kernel writes).
    unlisted_writes: list[str] = field(default_factory=list)


def default_out_dir(kernel: str, dataset: str, variant: str, seed: int) -> Path:
    return CACHE_DIR / "runs" / f"{kernel}-{dataset}-{variant}-seed{seed}"


def run(kernel: Kernel | str, dataset: str, variant: str = "gcc", seed: int = 0,
        inputs: Path | str | None = None, out: Path | str | None = None, repeat: int = 1,
        manifest: dict[str, Kernel] | None = None) -> RunResult:
    """Builds if needed, runs the kernel on `inputs` (generated into <out>/inputs from
    `seed` when not given) and returns its outputs and timing."""
    kernel = _resolve(kernel, manifest)
    if repeat < 1:
        raise CrefError("--repeat must be at least 1")
    out_dir = Path(out) if out is not None else default_out_dir(kernel.name, dataset, variant, seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    executable = build(kernel, dataset, variant)
    if inputs is None:
        inputs_dir = out_dir / "inputs"
        generate_inputs(kernel, dataset, seed, inputs_dir)
    else:
        inputs_dir = Path(inputs)
        meta, _ = read_inputs(inputs_dir)
        if meta.get("kernel") != kernel.name or meta.get("dataset") != dataset:
            raise CrefError(f"{inputs_dir}: inputs were made for kernel {meta.get('kernel')!r} "
                            f"dataset {meta.get('dataset')!r}, not {kernel.name!r} {dataset!r}")
    produced = [f"{name}.npy" for name in kernel.outputs] + ["timing.json"]
    for stale in produced:
        (out_dir / stale).unlink(missing_ok=True)
    result = subprocess.run([str(executable), str(inputs_dir), str(out_dir), str(repeat)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        for partial in produced:  # no half-written results survive a failed run
            (out_dir / partial).unlink(missing_ok=True)
        detail = result.stderr.strip() or f"exit status {result.returncode}"
        if result.returncode < 0:
            detail = f"killed by signal {-result.returncode}\n{detail}"
        raise KernelRunError(f"kernel {kernel.name} ({dataset}, {variant}) failed: {detail}")
    outputs = {name: np.load(out_dir / f"{name}.npy", allow_pickle=False)
               for name in kernel.outputs}
    timing = json.loads((out_dir / "timing.json").read_text())
    unlisted = [line.split()[-1] for line in result.stdout.splitlines()
                if line.startswith("cref: unlisted-write ")]
    return RunResult(kernel.name, dataset, variant, outputs, timing, out_dir, unlisted)


# ----------------------------------------------------------------------------- CLI


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="cref.py", description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST_PATH,
                        help="manifest to read (default: benchmarks/manifest.toml)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list every manifest kernel")
    for name, help_text in (("inputs", "write deterministic inputs"),
                            ("build", "compile the driver executable"),
                            ("run", "run the kernel, write outputs and timing.json")):
        cmd = sub.add_parser(name, help=help_text)
        cmd.add_argument("--kernel", required=True)
        cmd.add_argument("--dataset", required=True, choices=DATASETS)
        cmd.add_argument("--variant", default="gcc", choices=list(VARIANTS))
        cmd.add_argument("--seed", type=int, default=0)
        cmd.add_argument("--inputs", type=Path, help="inputs directory (run: reuse it)")
        cmd.add_argument("--out", type=Path, help="output directory")
        cmd.add_argument("--repeat", type=int, default=1)
    polly = sub.add_parser("polly", help="did Polly transform the kernel? (JSON)")
    polly.add_argument("--kernel", required=True)
    polly.add_argument("--dataset", required=True, choices=DATASETS)
    polly.add_argument("--variant", default="polly",
                       choices=[v for v, (_, f, _) in VARIANTS.items() if "-polly" in f])
    args = parser.parse_args(argv)
    manifest = load_manifest(args.manifest)
    if args.command == "list":
        for kernel in manifest.values():
            print(f"{kernel.name}\t{kernel.suite}\t{kernel.expect}\t{kernel.file}")
        return 0
    kernel = get_kernel(args.kernel, manifest)
    if args.command == "inputs":
        directory = args.inputs or args.out or (
            default_out_dir(kernel.name, args.dataset, args.variant, args.seed) / "inputs")
        generate_inputs(kernel, args.dataset, args.seed, directory)
        print(directory)
    elif args.command == "build":
        print(build(kernel, args.dataset, args.variant))
    elif args.command == "polly":
        print(json.dumps(polly_report(kernel, args.dataset, args.variant)))
    else:
        result = run(kernel, args.dataset, args.variant, args.seed, args.inputs, args.out,
                     args.repeat)
        print(json.dumps({"out": str(result.out_dir), "median_s": result.timing["median_s"],
                          "outputs": sorted(result.outputs),
                          "unlisted_writes": result.unlisted_writes}))
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        return _cli(sys.argv[1:] if argv is None else argv)
    except CrefError as error:
        print(f"cref: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
