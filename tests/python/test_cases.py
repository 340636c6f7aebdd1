"""A function that picks its computation by testing a flag it is passed
(BLAS's `trans` character) is lifted case by case behind a dispatcher that
runs the C's own test. Against the gcc-compiled C for each value of the
flag, given as a character code or a one-character string, where the two
cases read and write different extents (`y` has `m` elements in one, `n`
in the other)."""

import ctypes

import numpy as np
import pytest

from conftest import c_ptr as _ptr, compile_probe as _compile, probe_module as _module
from conftest import run_lifted

TARGETS = ["numpy", "jax", "pytorch"]


@pytest.mark.parametrize("target", TARGETS)
def test_each_trans_takes_the_c_case(tmp_path, target):
    module = _module("gemv_trans", target, tmp_path)
    c = _compile("gemv_trans", tmp_path)
    rng = np.random.default_rng(5)
    m, n, lda = 3, 5, 6
    a = rng.standard_normal((m, lda)).astype(np.float32)
    for trans in ["N", "T", ord("N"), ord("C")]:
        code = ord(trans) if isinstance(trans, str) else trans
        rows, cols = (m, n) if code == ord("N") else (n, m)
        x = rng.standard_normal(cols).astype(np.float32)
        y = rng.standard_normal(rows).astype(np.float32)
        want = y.copy()
        c.sgemv_rm(ctypes.c_char(code), ctypes.c_int(m), ctypes.c_int(n), ctypes.c_float(0.5),
                   _ptr(a, ctypes.c_float), ctypes.c_int(lda), _ptr(x, ctypes.c_float),
                   ctypes.c_float(2.0), _ptr(want, ctypes.c_float))
        got = run_lifted(module, "sgemv_rm", target,
                         [trans, m, n, 0.5, a, lda, x, 2.0, y], [8])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_darknet_gemm_flags_pick_each_transpose(tmp_path, target):
    """darknet's `gemm_cpu`: `C *= BETA`, then one of four helpers picked
    by `TA`/`TB` (any non-zero int is true), each passed the same `C`."""
    module = _module("dn_gemm_cpu", target, tmp_path)
    c = _compile("dn_gemm_cpu", tmp_path)
    rng = np.random.default_rng(11)
    m, n, k, ld = 3, 4, 5, 7
    f32 = ctypes.c_float
    for ta, tb in [(0, 0), (1, 0), (0, 1), (1, 1), (-2, 5)]:
        a = rng.standard_normal((k if ta else m, ld)).astype(np.float32)
        b = rng.standard_normal((n if tb else k, ld)).astype(np.float32)
        cm = rng.standard_normal((m, ld)).astype(np.float32)
        want = cm.copy()
        c.gemm_cpu(ctypes.c_int(ta), ctypes.c_int(tb), ctypes.c_int(m), ctypes.c_int(n),
                   ctypes.c_int(k), f32(0.5), _ptr(a, f32), ctypes.c_int(ld), _ptr(b, f32),
                   ctypes.c_int(ld), f32(2.0), _ptr(want, f32), ctypes.c_int(ld))
        got = run_lifted(module, "gemm_cpu", target,
                         [ta, tb, m, n, k, 0.5, a, ld, b, ld, 2.0, cm, ld], [11])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_a_mode_returned_from_its_branch_is_honoured(tmp_path, target):
    """`if (mode == 1) { …; return s; }` then the other norm: `mode` is
    read only by the test, so every mode value must reach its own case
    (the sample sizes of one lift would all take the second branch)."""
    module = _module("norm_mode", target, tmp_path)
    c = _compile("norm_mode", tmp_path)
    c.vnorm.restype = ctypes.c_float
    rng = np.random.default_rng(2)
    for n, mode in [(5, 1), (5, 2), (0, 1), (7, -1)]:
        x = rng.standard_normal(max(n, 1)).astype(np.float32)[:n]
        want = c.vnorm(ctypes.c_int(n), _ptr(x, ctypes.c_float), ctypes.c_int(mode))
        got = module.vnorm(n, x if target != "pytorch" else __import__("torch").from_numpy(x), mode)
        np.testing.assert_allclose(float(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_a_flag_tested_per_sample_unswitches_the_loop(tmp_path, target):
    """`if (saturate)` inside the loop: one loop per case, any non-zero
    flag clipping, as C's test reads it."""
    module = _module("scale_sat_flag", target, tmp_path)
    c = _compile("scale_sat_flag", tmp_path)
    x = np.linspace(-3.0, 3.0, 13, dtype=np.float32)
    for saturate in [0, 1, 7]:
        want = np.zeros_like(x)
        c.scale_sat(_ptr(x, ctypes.c_float), _ptr(want, ctypes.c_float), ctypes.c_int(13),
                    ctypes.c_float(0.5), ctypes.c_int(saturate))
        got = run_lifted(module, "scale_sat", target,
                         [x, np.zeros_like(x), 13, 0.5, saturate], [1])[0]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("target", TARGETS)
def test_reference_daxpy_takes_the_c_path_for_each_increment(tmp_path, target):
    """LINPACK's `daxpy`: the general-increment walk first (returning),
    then unit increments unrolled by four; the arrays are the C's memory,
    `n * inc` elements, updated in place through the dispatcher."""
    module = _module("daxpy_linpack", target, tmp_path)
    c = _compile("daxpy_linpack", tmp_path)
    rng = np.random.default_rng(9)
    f64 = ctypes.c_double
    for n, incx, incy in [(7, 1, 1), (6, 2, 3), (5, 1, 2), (9, 3, 1), (3, 1, 1)]:
        x = rng.standard_normal(n * incx)
        y = rng.standard_normal(n * incy)
        want = y.copy()
        c.daxpy(ctypes.c_int(n), f64(0.5), _ptr(x, f64), ctypes.c_int(incx), _ptr(want, f64),
                ctypes.c_int(incy))
        got = run_lifted(module, "daxpy", target, [n, 0.5, x, incx, y, incy], [4])[0]
        np.testing.assert_allclose(got.reshape(-1), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
def test_reference_ddot_and_a_negative_increment(tmp_path, target):
    """Reference `ddot` at unit and other increments; a negative one (the
    C's walk from the far end, not lifted) is refused by the general
    case's stride check instead of computing something else."""
    module = _module("ddot_incs", target, tmp_path)
    c = _compile("ddot_incs", tmp_path)
    c.ddot.restype = ctypes.c_double
    rng = np.random.default_rng(4)
    f64 = ctypes.c_double
    for n, incx, incy in [(11, 1, 1), (4, 1, 1), (6, 2, 2), (5, 1, 3)]:
        x = rng.standard_normal(n * incx)
        y = rng.standard_normal(n * incy)
        want = c.ddot(ctypes.c_int(n), _ptr(x, f64), ctypes.c_int(incx), _ptr(y, f64),
                      ctypes.c_int(incy))
        args = [n, x, incx, y, incy]
        if target == "pytorch":
            import torch
            args = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
        got = module.ddot(*args)
        np.testing.assert_allclose(float(got), want, rtol=1e-12, atol=1e-12)
    x = rng.standard_normal(4)
    args = [2, x, -2, x.copy(), 1]
    if target == "pytorch":
        import torch
        args = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises((ValueError, RuntimeError)):
        module.ddot(*args)


@pytest.mark.parametrize("target", TARGETS)
def test_a_length_tested_against_a_literal_reaches_both_branches(tmp_path, target):
    """`if (n == 9)` where `n` also bounds the loops: the branch for 9 is
    lifted with `n` fixed to 9, the other for every other length (its
    sample sizes avoid 9); before, one program for the `else` passed the
    checks at the sample sizes and was wrong at 9."""
    module = _module("len_special", target, tmp_path)
    c = _compile("len_special", tmp_path)
    rng = np.random.default_rng(3)
    for n in [9, 5, 12, 0]:
        x = rng.standard_normal(max(n, 1)).astype(np.float32)[:n]
        y = np.zeros(n, dtype=np.float32)
        want = y.copy()
        c.window_or_scale(ctypes.c_int(n), _ptr(x, ctypes.c_float), _ptr(want, ctypes.c_float))
        got = run_lifted(module, "window_or_scale", target, [n, x, y], [2])[0]
        np.testing.assert_allclose(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("target", TARGETS)
def test_gelu_backward_through_coshf_matches_the_c(tmp_path, target):
    """llm.c's GELU backward takes its sech squared through `coshf`:
    `cosh` (and `sinh`) are functions of the loop IR and of TensIR like
    `tanh`, emitted as each library's own."""
    module = _module("gelu_backward", target, tmp_path)
    c = _compile("gelu_backward", tmp_path)
    rng = np.random.default_rng(8)
    n = 37
    inp = rng.standard_normal(n).astype(np.float32) * 3
    dout = rng.standard_normal(n).astype(np.float32)
    dinp = rng.standard_normal(n).astype(np.float32)
    want = dinp.copy()
    f32 = ctypes.c_float
    c.gelu_backward(_ptr(want, f32), _ptr(inp, f32), _ptr(dout, f32), ctypes.c_int(n))
    got = run_lifted(module, "gelu_backward", target, [dinp, inp, dout, n], [0])[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
