"""The PyTorch emitter's integer matrix products (`_int_matmul`,
`_int_tensordot`): CUDA has no integer dot, addmv or addmm, so a lifted int
program there goes through `_blocked_int_matmul`, which must equal the
wrapping int32 product NumPy computes for every operand rank, including
sums that overflow. The helpers are taken from a module the real binary
emits for an int kernel (DSPstone's fir2dim, pointer form)."""


import numpy as np
import pytest

from conftest import REPO_ROOT, lifted_module

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def helpers(tmp_path_factory):
    out = tmp_path_factory.mktemp("emit") / "fir2dim_torch.py"
    module = lifted_module(REPO_ROOT / "benchmarks" / "dspstone-ptr" / "fir2dim.c", "pytorch",
                           out, "--function", "fir2dim")
    assert "_int_tensordot(" in out.read_text() or "_int_matmul(" in out.read_text()
    return module


def _wrapping(a, b):
    return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(np.int32)


@pytest.mark.parametrize("shapes", [((7,), (7,)), ((5, 7), (7,)), ((7,), (7, 3)),
                                    ((5, 7), (7, 3)), ((4, 3000), (3000, 5)),
                                    ((300, 300), (300, 300))])  # two blocks
def test_the_blocked_product_wraps_like_int32(helpers, shapes):
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]))
    a = rng.integers(-2**31, 2**31, size=shapes[0], dtype=np.int32)
    b = rng.integers(-2**31, 2**31, size=shapes[1], dtype=np.int32)
    got = helpers._blocked_int_matmul(torch.from_numpy(a), torch.from_numpy(b))
    assert got.dtype == torch.int32
    np.testing.assert_array_equal(got.numpy(), _wrapping(a, b))


def test_the_tensordot_gathers_the_contracted_axes(helpers):
    rng = np.random.default_rng(3)
    a = rng.integers(-100, 100, size=(3, 4, 5), dtype=np.int32)
    b = rng.integers(-100, 100, size=(5, 2, 4), dtype=np.int32)
    got = helpers._int_tensordot(torch.from_numpy(a), torch.from_numpy(b), ([1, 2], [2, 0]))
    want = np.tensordot(a, b, axes=([1, 2], [2, 0]))
    np.testing.assert_array_equal(got.numpy(), want)
