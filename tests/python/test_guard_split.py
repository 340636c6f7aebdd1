"""Loops cut at their guards (`if (i == 0) … else if (i == n - 1) …`,
`i == 0 ? x[0] : x[i] - x[i - 1]`) are exact only while the pieces are in
order: the lifted function requires it on entry. Against the gcc-compiled
C at the smallest sizes where the pieces are in order (where a random
differential run rarely goes), and refused with a ValueError naming the
relation below them, never a wrong answer."""

import ctypes

import numpy as np
import pytest

from conftest import c_ptr as _ptr, compile_probe as _compile, probe_module as _module
from conftest import run_lifted

TARGETS = ["numpy", "jax", "pytorch"]


@pytest.mark.parametrize("target", TARGETS)
def test_both_ends_peeled_agree_with_c_from_two_samples(tmp_path, target):
    module = _module("stencil_edges", target, tmp_path)
    c = _compile("stencil_edges", tmp_path)
    rng = np.random.default_rng(7)
    for n in [2, 3, 4, 17]:
        x = rng.standard_normal(n).astype(np.float32)
        want = np.zeros(n, dtype=np.float32)
        c.smooth3(_ptr(x, ctypes.c_float), _ptr(want, ctypes.c_float), ctypes.c_int(n))
        got = run_lifted(module, "smooth3", target, [x, np.zeros(n, dtype=np.float32), n], [1])[0]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="1 <= n - 1"):
        module.smooth3(np.zeros(1, dtype=np.float32), np.zeros(1, dtype=np.float32), 1)


@pytest.mark.parametrize("target", TARGETS)
def test_first_sample_select_agrees_with_c(tmp_path, target):
    module = _module("diff_first", target, tmp_path)
    c = _compile("diff_first", tmp_path)
    for n in [1, 2, 9]:
        x = np.arange(n, dtype=np.float32) ** 2
        want = np.zeros(n, dtype=np.float32)
        c.diff_first(_ptr(x, ctypes.c_float), _ptr(want, ctypes.c_float), ctypes.c_int(n))
        got = run_lifted(module, "diff_first", target, [x, np.zeros(n, dtype=np.float32), n], [1])[0]
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", TARGETS)
def test_image_border_copied_and_interior_blurred(tmp_path, target):
    module = _module("blur3_border", target, tmp_path)
    c = _compile("blur3_border", tmp_path)
    rng = np.random.default_rng(3)
    for h, w in [(2, 2), (3, 5), (6, 4)]:
        src = rng.random(h * w).astype(np.float32)
        want = np.zeros(h * w, dtype=np.float32)
        c.blur3_border(_ptr(src, ctypes.c_float), _ptr(want, ctypes.c_float),
                       ctypes.c_int(w), ctypes.c_int(h))
        got = run_lifted(module, "blur3_border", target,
                         [src.reshape(h, w), np.zeros((h, w), dtype=np.float32), w, h], [1])[0]
        np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-6, atol=1e-7)
