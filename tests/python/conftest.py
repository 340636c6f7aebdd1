"""Shared fixtures for the Python-side tests: the repository root and the
C reference driver (scripts/cref.py) imported as a module."""

import importlib.util
import sys
from pathlib import Path

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
