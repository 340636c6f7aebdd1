"""llm.c's row operations run over a `(b, t)` nest with the row's
statistics in locals (`maxval`, `sum`, the mean and its reciprocal
deviation). The nest is distributed as a whole, those locals expanded over
both loops, so nothing is kept: checked here against the gcc-compiled C
at sizes the spec never used, the padded columns `V..Vp` included."""

import ctypes

import numpy as np
import pytest

from conftest import c_ptr as _ptr, compile_probe as _compile, probe_module as _module
from conftest import run_lifted

TARGETS = ["numpy", "jax", "pytorch"]


@pytest.mark.parametrize("target", TARGETS)
def test_softmax_over_batches_and_positions_matches_the_c(tmp_path, target):
    module = _module("llm_softmax_forward", target, tmp_path)
    text = (tmp_path / f"llm_softmax_forward_{target}.py").read_text()
    assert "for b in" not in text, text
    c = _compile("llm_softmax_forward", tmp_path)
    rng = np.random.default_rng(7)
    f32 = ctypes.c_float
    for b, t, v, vp in [(2, 3, 5, 8), (3, 1, 7, 7), (1, 4, 3, 6)]:
        logits = rng.standard_normal((b, t, vp)).astype(np.float32) * 3
        probs = rng.standard_normal((b, t, vp)).astype(np.float32)
        want = probs.copy()
        c.softmax_forward(_ptr(want, f32), _ptr(logits, f32), ctypes.c_int(b),
                          ctypes.c_int(t), ctypes.c_int(v), ctypes.c_int(vp))
        got = run_lifted(module, "softmax_forward", target,
                         [probs, logits, b, t, v, vp], [0])[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
