"""A max or min over no elements is the type's extreme (-inf for max), the
identity, in every Python target (targets/src/emit/python.rs `{init}`):
the llama.c softmax (`max_val = x[0]; for (i = 1; i < size; i++) if (x[i] >
max_val) ...`) lifts to `maximum(max(x[1:size]), x[0])`, which must run at
size 1 as the C does instead of raising on the empty slice. The modules
are the real binary's emissions of tests/fixtures/wild/softmax.c."""


import numpy as np
import pytest

from conftest import REPO_ROOT, lifted_module

SOFTMAX = REPO_ROOT / "tests" / "fixtures" / "wild" / "softmax.c"


def _lift(target, out):
    return lifted_module(SOFTMAX, target, out)


def _c_softmax(x, size):
    x = x.astype(np.float64)
    m = x[0]
    for i in range(1, size):
        m = max(m, x[i])
    e = np.exp(x[:size] - m)
    x[:size] = e / e.sum()
    return x


@pytest.mark.parametrize("target", ["numpy", "jax", "pytorch"])
@pytest.mark.parametrize("size", [1, 2, 5])
def test_softmax_runs_at_every_size_including_one(tmp_path, target, size):
    if target == "jax":
        pytest.importorskip("jax")
    if target == "pytorch":
        torch = pytest.importorskip("torch")
    module = _lift(target, tmp_path / f"softmax_{target}.py")
    x = np.array([0.5, 3.0, -1.0, 2.0, 0.25, 7.0], np.float32)
    want = _c_softmax(x, size)
    got = torch.tensor(x) if target == "pytorch" else x.copy()
    module.softmax(got, size)
    got = np.asarray(got, dtype=np.float64)
    assert np.allclose(got, want, rtol=1e-6), (got, want)
    # The elements past `size` are untouched.
    assert np.array_equal(got[size:], x[size:].astype(np.float64))
