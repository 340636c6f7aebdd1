"""C's `roundf` rounds halves away from zero; NumPy's, JAX's and PyTorch's
`round` round them to even, and `floor(x + 0.5)` is off where `x + 0.5`
itself rounds (0.49999997f). Random inputs almost never hit a half, so the
differential check of `tenslift verify` says little here: the C, compiled
by gcc, and the lifted NumPy, JAX and PyTorch functions run on every half
from -6.5 to 6.5, the float just below 0.5 and exact integers, and must
agree exactly. floor and ceil likewise on negative and integral values."""

import ctypes

import numpy as np
import pytest

from conftest import c_ptr as _ptr, compile_probe as _compile, probe_module as _module
from conftest import run_lifted as _run

TARGETS = ["numpy", "jax", "pytorch"]


def _halves():
    halves = np.arange(-13, 14, dtype=np.float32) / np.float32(2)
    below_half = np.nextafter(np.float32(0.5), np.float32(0))
    edges = np.array([below_half, -below_half, 1.5, -1.5, 126.5, -126.5, 127.5, 300.0, -300.0],
                     dtype=np.float32)
    return np.concatenate([halves, edges]).astype(np.float32)


@pytest.mark.parametrize("target", TARGETS)
def test_int8_quantisation_rounds_halves_away_from_zero(tmp_path, target):
    module = _module("quantize_i8", target, tmp_path)
    c = _compile("quantize_i8", tmp_path)
    x = _halves()
    n = x.size
    want = np.zeros(n, dtype=np.int8)
    c.quantize(_ptr(x, ctypes.c_float), _ptr(want, ctypes.c_int8), ctypes.c_int(n),
               ctypes.c_float(1.0))
    got = _run(module, "quantize", target, [x, np.zeros(n, dtype=np.int8), n, np.float32(1.0)],
               [1])[0]
    np.testing.assert_array_equal(got, want)
    # The C's own answers: 2.5 -> 3, -2.5 -> -3, the float below 0.5 -> 0.
    assert want[list(x).index(np.float32(2.5))] == 3
    assert want[list(x).index(np.float32(-2.5))] == -3
    assert want[x.size - 9] == 0


@pytest.mark.parametrize("target", TARGETS)
def test_uint8_quantisation_with_a_zero_point(tmp_path, target):
    module = _module("round_q8", target, tmp_path)
    c = _compile("round_q8", tmp_path)
    x = _halves()
    n = x.size
    want = np.zeros(n, dtype=np.uint8)
    c.quantize_u8(_ptr(x, ctypes.c_float), _ptr(want, ctypes.c_uint8), ctypes.c_int(n),
                  ctypes.c_float(1.0), ctypes.c_int(128))
    got = _run(module, "quantize_u8", target,
               [x, np.zeros(n, dtype=np.uint8), n, np.float32(1.0), 128], [1])[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", TARGETS)
def test_floor_and_ceil_of_negative_and_integral_positions(tmp_path, target):
    module = _module("floor_ceil_bins", target, tmp_path)
    c = _compile("floor_ceil_bins", tmp_path)
    pos = np.array([-2.5, -2.0, -0.25, -0.0, 0.0, 0.25, 1.0, 2.75, 1e9 + 0.5], dtype=np.float64)
    n = pos.size
    lo, hi = np.zeros(n), np.zeros(n)
    c.grid_cells(_ptr(pos, ctypes.c_double), ctypes.c_double(1.0), _ptr(lo, ctypes.c_double),
                 _ptr(hi, ctypes.c_double), ctypes.c_int(n))
    got_lo, got_hi = _run(module, "grid_cells", target, [pos, 1.0, np.zeros(n), np.zeros(n), n],
                          [2, 3])
    np.testing.assert_array_equal(got_lo, lo)
    np.testing.assert_array_equal(got_hi, hi)
