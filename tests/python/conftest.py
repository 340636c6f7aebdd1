"""Shared fixtures for the Python-side tests: the repository root and the
C reference driver (scripts/cref.py) imported as a module."""

import importlib.util
import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _load_cref():
    spec = importlib.util.spec_from_file_location("cref", REPO_ROOT / "scripts" / "cref.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["cref"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


cref_module = _load_cref()


@pytest.fixture(scope="session")
def cref():
    return cref_module


@pytest.fixture(scope="session")
def manifest():
    return cref_module.load_manifest()


def tenslift_binary() -> Path:
    """$TENSLIFT_BIN, else target/release/tenslift, else target/debug/tenslift
    (scripts/test.sh builds release first); the release path when none exists."""
    configured = os.environ.get("TENSLIFT_BIN")
    if configured:
        return Path(configured)
    for profile in ("release", "debug"):
        candidate = REPO_ROOT / "target" / profile / "tenslift"
        if candidate.is_file():
            return candidate
    return REPO_ROOT / "target" / "release" / "tenslift"


def lifted_module(source, target, out, *extra):
    """`tenslift lift SOURCE --target TARGET -o OUT [EXTRA...]` run with the
    real binary (the test is skipped when none is built), then OUT imported
    as a module."""
    binary = tenslift_binary()
    if not binary.is_file():
        pytest.skip("no tenslift binary built")
    done = subprocess.run([str(binary), "lift", str(source), "--target", target, "-o", str(out),
                           *extra], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    spec = importlib.util.spec_from_file_location(Path(out).stem, out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROBE = REPO_ROOT / "tests" / "fixtures" / "probe"


def compile_probe(stem, tmp_path):
    """tests/fixtures/probe/STEM.c compiled by gcc -O2 as a shared library
    (skipped without gcc), loaded with ctypes."""
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    lib = tmp_path / f"lib{stem}.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(PROBE / f"{stem}.c"),
                    "-lm"], check=True, capture_output=True, timeout=120)
    return ctypes.CDLL(str(lib))


def probe_module(stem, target, tmp_path):
    """tests/fixtures/probe/STEM.c lifted to TARGET and imported (skipped
    where the target's library is missing)."""
    if target == "jax":
        pytest.importorskip("jax")
    if target == "pytorch":
        pytest.importorskip("torch")
    return lifted_module(PROBE / f"{stem}.c", target, tmp_path / f"{stem}_{target}.py", "-q")


def run_lifted(module, func, target, args, outputs):
    """Calls a lifted function on copies of `args` (torch tensors for
    PyTorch); it updates its output arrays in place (the JAX module's
    wrapper copies its pure function's results back). Returns the
    arguments at positions `outputs` as NumPy arrays."""
    if target == "pytorch":
        import torch
        args = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    else:
        args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    getattr(module, func)(*args)
    return [np.asarray(args[k]) for k in outputs]


def c_ptr(a, ctype):
    """A NumPy array's data as a ctypes pointer to `ctype`."""
    return a.ctypes.data_as(ctypes.POINTER(ctype))
