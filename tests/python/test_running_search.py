"""Running searches (`if (x[i] > m) { m = x[i]; best = i; }`) lift to
`argmax`/`argmin` (src/synth/argsearch.rs). The C keeps the *first*
extreme; the libraries' argmax must too. Random floats almost never tie,
so the differential check of `tenslift verify` says little about ties:
here the C, compiled by gcc, and the lifted NumPy, JAX and PyTorch
functions run on data drawn from three values, at every size up to 13,
and must agree exactly."""

import ctypes

import numpy as np
import pytest

from conftest import compile_probe as _compile, probe_module as _module

TARGETS = ["numpy", "jax", "pytorch"]


def _as_target(x, target):
    if target == "pytorch":
        import torch
        return torch.from_numpy(x.copy())
    return x.copy()


def _tied(rng, n, dtype):
    return rng.integers(0, 3, size=max(n, 1)).astype(dtype)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("stem, func", [("argmax_u8", "brightest"),      # `>`: the first
                                        ("argmax_ge", "argmax_last")])  # `>=`: the last
def test_brightest_byte_among_ties(tmp_path, target, stem, func):
    module = _module(stem, target, tmp_path)
    c_func = getattr(_compile(stem, tmp_path), func)
    c_func.restype = ctypes.c_int
    rng = np.random.default_rng(7)
    for n in range(1, 14):
        for _ in range(8):
            px = _tied(rng, n, np.uint8)
            want = c_func(px.ctypes.data_as(ctypes.c_void_p), n)
            got = int(getattr(module, func)(_as_target(px, target), n))
            assert got == want, (n, px, got, want)


@pytest.mark.parametrize("target", TARGETS)
def test_dsp_max_and_min_with_index_among_ties(tmp_path, target):
    for stem, func, dtype in [("cm_max", "block_max_f32", np.float32),
                              ("cm_min_q15", "block_min_q15", np.int16)]:
        module = _module(stem, target, tmp_path)
        c_func = getattr(_compile(stem, tmp_path), func)
        rng = np.random.default_rng(11)
        for n in range(1, 14):
            for _ in range(6):
                x = _tied(rng, n, dtype) - 1
                res, idx = np.zeros(1, dtype), np.zeros(1, np.uint32)
                c_func(x.ctypes.data_as(ctypes.c_void_p), ctypes.c_uint32(n),
                       res.ctypes.data_as(ctypes.c_void_p), idx.ctypes.data_as(ctypes.c_void_p))
                got_res, got_idx = _as_target(np.zeros(1, dtype), target), \
                    _as_target(np.zeros(1, np.uint32), target)
                getattr(module, func)(_as_target(x, target), n, got_res, got_idx)
                assert int(np.asarray(got_idx)[0]) == int(idx[0]), (stem, n, x)
                assert np.asarray(got_res)[0] == res[0], (stem, n, x)


@pytest.mark.parametrize("target", TARGETS)
def test_max_index_guard_and_ties(tmp_path, target):
    module = _module("max_index", target, tmp_path)
    lib = _compile("max_index", tmp_path)
    lib.max_index.restype = ctypes.c_int
    rng = np.random.default_rng(3)
    for n in range(0, 14):
        a = _tied(rng, n, np.float32)
        want = lib.max_index(a.ctypes.data_as(ctypes.c_void_p), n)
        got = int(module.max_index(_as_target(a[:n], target), n))
        assert got == want, (n, a, got, want)


@pytest.mark.parametrize("target", TARGETS)
def test_a_search_per_row_and_per_column_among_ties(tmp_path, target):
    rows_module = _module("argmax_rows", target, tmp_path)
    rows_c = _compile("argmax_rows", tmp_path)
    cols_module = _module("col_min_index", target, tmp_path)
    cols_c = _compile("col_min_index", tmp_path)
    rng = np.random.default_rng(5)
    for batch, n in [(1, 1), (3, 5), (4, 13)]:
        scores = _tied(rng, batch * n, np.float32)
        want = np.zeros(batch, np.int32)
        rows_c.predict_classes(scores.ctypes.data_as(ctypes.c_void_p),
                               want.ctypes.data_as(ctypes.c_void_p), batch, n)
        got = _as_target(np.zeros(batch, np.int32), target)
        rows_module.predict_classes(_as_target(scores.reshape(batch, n), target), got, batch, n)
        assert np.array_equal(np.asarray(got), want), (batch, n, scores)
        a = _tied(rng, batch * n, np.float64)
        where, least = np.zeros(n, np.int32), np.zeros(n, np.float64)
        cols_c.col_min(a.ctypes.data_as(ctypes.c_void_p), batch, n,
                       where.ctypes.data_as(ctypes.c_void_p), least.ctypes.data_as(ctypes.c_void_p))
        got_w, got_l = _as_target(np.zeros(n, np.int32), target), \
            _as_target(np.zeros(n, np.float64), target)
        cols_module.col_min(_as_target(a.reshape(batch, n), target), batch, n, got_w, got_l)
        assert np.array_equal(np.asarray(got_w), where), (batch, n, a)
        assert np.array_equal(np.asarray(got_l), least), (batch, n, a)

