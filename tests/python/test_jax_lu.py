"""The JAX emission of `lu_nopivot` (targets/src/emit/solvers.rs): halves
recursively down to blocks of at most 64, each factorised by a fori_loop of
masked steps. At n = 150 both the recursion and the loop run; the result must
be the textbook in-place LU of PolyBench's lu (Doolittle, no pivoting), as
the C computes it, to round-off. The module is the real binary's emission of
benchmarks/polybench/lu.c."""


import numpy as np
import pytest

from conftest import REPO_ROOT, lifted_module

jax = pytest.importorskip("jax")


def _doolittle(a):
    a = a.copy()
    n = len(a)
    for k in range(n - 1):
        a[k + 1:, k] /= a[k, k]
        a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a


@pytest.fixture(scope="module")
def lu_module(tmp_path_factory):
    out = tmp_path_factory.mktemp("emit") / "lu_jax.py"
    module = lifted_module(REPO_ROOT / "benchmarks" / "polybench" / "lu.c", "jax", out,
                           "--function", "kernel_lu")
    assert "fori_loop" in out.read_text()
    return module


@pytest.mark.parametrize("n", [40, 150])
def test_the_blocked_lu_is_the_doolittle_recurrence(lu_module, n):
    rng = np.random.default_rng(n)
    a = rng.random((n, n)) + n * np.eye(n)
    got = a.copy()
    lu_module.kernel_lu(n, got)
    want = _doolittle(a)
    assert np.max(np.abs(got - want)) <= 1e-12 * np.max(np.abs(want))
