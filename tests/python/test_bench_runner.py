"""The runtime runner of `tenslift bench` (scripts/bench_runner.py): output
checks tolerate reassociation but catch wrong results, a wrong lifted module
is recorded and not timed, a measurement over its timeout is killed and
recorded as such, and a real kernel runs through every C variant."""

import csv
import importlib.util
import json
import sys
import time

import numpy as np
import pytest

from conftest import REPO_ROOT


def _load_runner():
    spec = importlib.util.spec_from_file_location(
        "bench_runner", REPO_ROOT / "scripts" / "bench_runner.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_runner"] = module
    spec.loader.exec_module(module)
    return module


runner = _load_runner()


def test_float_outputs_tolerate_reordered_sums_but_not_wrong_values():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(10000).astype(np.float32)
    sequential = np.float32(0)
    for chunk in np.split(a, 100):
        sequential = np.float32(sequential + chunk.sum(dtype=np.float32))
    assert runner.compare_outputs(a.sum(dtype=np.float32), np.asarray(sequential)) is None
    assert runner.compare_outputs(a * 1.01, a) is not None
    assert runner.compare_outputs(a[:-1], a) is not None


def test_integer_outputs_must_be_exact_and_nans_must_line_up():
    ref = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert runner.compare_outputs(ref.copy(), ref) is None
    wrong = ref.copy()
    wrong[1, 2] += 1
    assert "1 of 6" in runner.compare_outputs(wrong, ref)
    floats = np.array([1.0, np.nan, 2.0])
    assert runner.compare_outputs(floats.copy(), floats) is None
    assert runner.compare_outputs(np.array([1.0, 0.0, 2.0]), floats) == "NaN in different places"


def test_the_call_json_tolerance_accepts_a_long_float32_sum_and_rejects_a_wrong_one():
    # A float32 C loop summing 4M squares (mathfu len_sq at LARGE) drifts
    # past the legacy fixed 2e-3 by its own rounding; the tolerance for
    # K = 4M terms accepts it (np.cumsum adds in C's sequential order).
    rng = np.random.default_rng(1)
    k = 4_000_000
    x = rng.uniform(-1, 1, k).astype(np.float32)
    want = np.asarray(np.cumsum(x * x, dtype=np.float32)[-1])
    exact = np.asarray(np.sum(x.astype(np.float64) ** 2), dtype=np.float32)
    call = {"tolerance": {"reduction_length": k,
                          "relative_factor": {"float32": 16 * (k + 2) * 2.0**-24}}}
    factor = runner.relative_factor(call, want.dtype)
    assert factor == pytest.approx(3.815, rel=1e-3)
    assert runner.compare_outputs(exact, want) is not None
    assert runner.compare_outputs(exact, want, factor) is None
    assert "beyond the tolerance" in runner.compare_outputs(exact * 10, want, factor)
    # Elements of a vector are each held to the rule, small ones included.
    ref = np.array([1000.0, 1.0], dtype=np.float32)
    short = runner.relative_factor(
        {"tolerance": {"relative_factor": {"float32": 16 * 3 * 2.0**-24}}}, ref.dtype)
    assert runner.compare_outputs(ref * np.float32(1 + 1e-7), ref, short) is None
    assert "1 of 2" in runner.compare_outputs(np.array([1000.0, 2.0]), ref, short)
    # No factor for the type: the legacy norm-wise rule.
    assert runner.relative_factor(call, np.dtype(np.float64)) is None


def _kernel_dir(tmp_path, body, function="scale", tolerance=None):
    kernel_dir = tmp_path / "k"
    kernel_dir.mkdir()
    (kernel_dir / "numpy.py").write_text(
        f"import numpy as np\nimport time\n\ndef {function}(n, x, y):\n" + body)
    call = {"function": function, "outputs": ["y"], "hlo_results": ["y"],
            "params": [{"name": "n", "kind": "size", "value": 4},
                       {"name": "x", "kind": "array", "written": False},
                       {"name": "y", "kind": "array", "written": True}]}
    if tolerance is not None:
        call["tolerance"] = tolerance
    (kernel_dir / "call.json").write_text(json.dumps(call))
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    np.save(inputs / "x.npy", np.arange(4.0))
    np.save(inputs / "y.npy", np.zeros(4))
    reference = tmp_path / "ref"
    reference.mkdir()
    np.save(reference / "y.npy", 2 * np.arange(4.0))
    plan = {"dataset": "MINI", "repeat": 5, "timeout_s": 8, "variants": ["numpy"],
            "cleanup": False,
            "kernels": [{"name": "scale", "suite": "t", "dir": "k", "inputs": "inputs",
                         "reference": "ref", "c_outputs": "c", "outputs": ["y"]}]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    return tmp_path / "plan.json"


def _rows(tmp_path, plan):
    out = tmp_path / "runtime.csv"
    assert runner.main(["run", "--plan", str(plan), "--csv", str(out), "--skip-c", "--quiet"]) == 0
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


def test_a_correct_module_is_timed(tmp_path):
    rows = _rows(tmp_path, _kernel_dir(tmp_path, "    y[...] = 2 * x\n"))
    assert [(r["variant"], r["status"], r["runs"]) for r in rows] == [("numpy", "ok", "5")]
    assert float(rows[0]["median_s"]) > 0


def test_a_wrong_module_is_recorded_and_not_timed(tmp_path):
    rows = _rows(tmp_path, _kernel_dir(tmp_path, "    y[...] = 3 * x\n"))
    assert rows[0]["status"] == "wrong-output"
    assert rows[0]["median_s"] == ""
    assert "relative error" in rows[0]["note"]


def test_the_function_is_looked_up_by_its_emitted_name(tmp_path):
    # `tenslift bench` names the function as the module spells it: a C
    # kernel `len` is emitted as `len_` (Python's builtin keeps its name).
    plan = _kernel_dir(tmp_path, "    y[...] = 2 * x\n", function="len_")
    rows = _rows(tmp_path, plan)
    assert [(r["variant"], r["status"]) for r in rows] == [("numpy", "ok")], rows


def test_a_wrong_module_fails_the_call_json_tolerance(tmp_path):
    tolerance = {"reduction_length": 1, "relative_factor": {"float64": 16 * 3 * 2.0**-53}}
    rows = _rows(tmp_path, _kernel_dir(tmp_path, "    y[...] = 2 * x + 1e-9\n",
                                       tolerance=tolerance))
    assert rows[0]["status"] == "wrong-output"
    assert "beyond the tolerance" in rows[0]["note"]


def test_torch_compile_skips_a_program_that_keeps_c_loops(tmp_path):
    # Dynamo would unroll the loops and compile until the timeout.
    plan = _kernel_dir(tmp_path, "    y[...] = 2 * x\n")
    call_path = tmp_path / "k" / "call.json"
    call = json.loads(call_path.read_text())
    call["keeps_loops"] = True
    call_path.write_text(json.dumps(call))
    (tmp_path / "k" / "pytorch.py").write_text("raise SystemExit('must not be loaded')\n")
    spec = json.loads(plan.read_text())
    spec["variants"] = ["numpy", "torch-compile"]
    plan.write_text(json.dumps(spec))
    rows = _rows(tmp_path, plan)
    status = {r["variant"]: (r["status"], r["note"]) for r in rows}
    assert status["numpy"][0] == "ok"
    assert status["torch-compile"][0] == "skipped"
    assert "keeps C loops" in status["torch-compile"][1]


def test_a_measurement_over_its_timeout_is_killed(tmp_path):
    plan = _kernel_dir(tmp_path, "    time.sleep(30)\n    y[...] = 2 * x\n")
    start = time.monotonic()
    rows = _rows(tmp_path, plan)
    assert time.monotonic() - start < 25
    assert rows[0]["status"] == "timeout"
    assert rows[0]["note"] == "over 8 s"


def test_c_variants_of_a_real_kernel_give_the_reference(tmp_path):
    plan = {"dataset": "MINI", "repeat": 3, "timeout_s": 60, "cleanup": False,
            "variants": ["gcc", "clang", "polly", "polly-parallel"],
            "kernels": [{"name": "dot", "suite": "blas", "dir": "k", "inputs": "in",
                         "reference": "ref", "c_outputs": "c", "outputs": ["return"]}]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    out = tmp_path / "runtime.csv"
    assert runner.main(["run", "--plan", str(tmp_path / "plan.json"), "--csv", str(out),
                        "--skip-python", "--quiet"]) == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["variant"] for r in rows] == ["gcc", "clang", "polly", "polly-parallel"]
    assert all(r["status"] == "ok" and r["runs"] == "3" for r in rows), rows
    # Each Polly row says whether Polly transformed dot and what it did or why not.
    for row in rows[2:]:
        assert row["polly_transformed"] in ("yes", "no"), row
        assert row["polly_what"], row
    assert rows[0]["polly_transformed"] == rows[1]["polly_transformed"] == ""
    x = np.load(tmp_path / "in" / "x.npy")
    y = np.load(tmp_path / "in" / "y.npy")
    got = np.load(tmp_path / "ref" / "return.npy")
    assert got == pytest.approx(float(np.dot(x.astype(np.float64), y)), rel=1e-4)


def test_parallel_runs_are_refused_where_timings_would_share_the_cores(tmp_path):
    plan = _kernel_dir(tmp_path, "    y[...] = 2 * x\n")
    out = tmp_path / "runtime.csv"
    assert runner.main(["run", "--plan", str(plan), "--csv", str(out), "--skip-c",
                        "--jobs", "2"]) == 2
    assert runner.main(["run", "--plan", str(plan), "--csv", str(out), "--device", "cuda",
                        "--jobs", "2"]) == 2


def test_gpu_turns_are_taken_one_at_a_time(tmp_path, monkeypatch):
    import fcntl
    import threading

    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv(runner.GPU_LOCK_ENV, str(lock))
    entered = threading.Event()

    def child():
        with runner._gpu_turn():
            entered.set()

    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        thread = threading.Thread(target=child)
        thread.start()
        assert not entered.wait(0.5)
        fcntl.flock(held, fcntl.LOCK_UN)
    assert entered.wait(5)
    thread.join()


def test_the_wait_for_a_gpu_turn_pauses_the_measurements_own_limit(tmp_path, monkeypatch):
    import fcntl
    import signal
    import threading

    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv(runner.GPU_LOCK_ENV, str(lock))
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(time.monotonic()))
    try:
        with open(lock, "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            threading.Timer(1.0, lambda: fcntl.flock(held, fcntl.LOCK_UN)).start()
            signal.setitimer(signal.ITIMER_REAL, 0.5)
            with runner._gpu_turn():
                left, _ = signal.getitimer(signal.ITIMER_REAL)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # A second in the queue, and the half second is still all there.
    assert not fired
    assert 0.3 < left <= 0.5, left


def test_a_child_queued_behind_others_is_not_a_timeout(tmp_path, monkeypatch):
    """Its own limit is 10 s; it waits 12 s for the GPU lock and is still timed."""
    pytest.importorskip("jax")
    import fcntl
    import threading

    plan_path = _kernel_dir(tmp_path, "    y[...] = 2 * x\n")
    (tmp_path / "k" / "jax.py").write_text(
        "import jax\n\n@jax.jit\ndef scale_jit(n, x, y):\n    return (2 * x,), None\n")
    plan = json.loads(plan_path.read_text())
    plan["timeout_s"] = 10
    lock = tmp_path / "gpu.lock"
    monkeypatch.setenv(runner.GPU_LOCK_ENV, str(lock))
    monkeypatch.setattr(runner, "_GPU_SHARERS", [2])
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        threading.Timer(12.0, lambda: fcntl.flock(held, fcntl.LOCK_UN)).start()
        start = time.monotonic()
        row = runner.run_python_variant(plan_path, plan["kernels"][0], "jax", plan, "cpu")
    assert time.monotonic() - start > 12
    assert row["status"] == "ok", row


def _dot_plan(tmp_path, variants):
    kernel_dir = tmp_path / "k"
    kernel_dir.mkdir()
    (kernel_dir / "numpy.py").write_text(
        "import numpy as np\n\ndef dot(n, x, y):\n    return np.dot(x[:n].astype(np.float64),"
        " y[:n])\n")
    (kernel_dir / "call.json").write_text(json.dumps({
        "function": "dot", "outputs": ["return"], "hlo_results": ["__return__"],
        "params": [{"name": "n", "kind": "size", "value": 0},
                   {"name": "x", "kind": "array", "written": False},
                   {"name": "y", "kind": "array", "written": False}]}))
    plan = {"dataset": "MINI", "repeat": 3, "timeout_s": 60, "cleanup": True,
            "variants": variants,
            "kernels": [{"name": "dot", "suite": "blas", "dir": "k", "inputs": "data/in",
                         "reference": "data/ref", "c_outputs": "data/c",
                         "outputs": ["return"]}]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    return tmp_path / "plan.json"


def _dot_inputs(tmp_path):
    """The run's inputs, generated first: the size of call.json comes from them."""
    runner.ensure_inputs({"name": "dot"}, "MINI", tmp_path / "data" / "in")
    n = int(np.load(tmp_path / "data" / "in" / "x.npy").shape[0])
    call = json.loads((tmp_path / "k" / "call.json").read_text())
    call["params"][0]["value"] = n
    (tmp_path / "k" / "call.json").write_text(json.dumps(call))


def test_a_c_reference_run_writes_no_c_rows_and_checks_the_lifted_module(tmp_path):
    plan = _dot_plan(tmp_path, ["gcc", "numpy"])
    _dot_inputs(tmp_path)
    out = tmp_path / "runtime.csv"
    assert runner.main(["run", "--plan", str(plan), "--csv", str(out), "--c-reference-only",
                        "--quiet"]) == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["variant"], r["status"], r["note"]) for r in rows] == [("numpy", "ok", "")], rows
    # cleanup: the regenerated data is gone once the kernel is measured.
    assert not (tmp_path / "data" / "in").exists()


def test_without_a_c_compiler_the_numpy_program_gives_the_reference_and_says_so(
        tmp_path, monkeypatch):
    plan = _dot_plan(tmp_path, ["gcc", "numpy"])
    _dot_inputs(tmp_path)
    empty = tmp_path / "no-compilers"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    # A cached executable would stand in for the compiler.
    monkeypatch.setattr(runner._cref(), "CACHE_DIR", tmp_path / "cache")
    out = tmp_path / "runtime.csv"
    assert runner.main(["run", "--plan", str(plan), "--csv", str(out), "--c-reference-only",
                        "--quiet"]) == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["variant"], r["status"]) for r in rows] == [("numpy", "ok")], rows
    assert "the lifted NumPy program" in rows[0]["note"], rows
