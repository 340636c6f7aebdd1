"""scripts/bench_cuda.sh's plans, on a machine with or without a GPU: the
GPU variants the environment names (an unknown one refused), the smoke
kernels set apart from the main plan (one not in the plan refused), the
host plan timing gcc alone with the cheap suites first, and a deadline of
0 starting no kernel. No measurement runs here: the plans are what the
lent GPU machine would execute, and a wrong one costs its whole lease."""

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "bench_cuda.sh"

KERNELS = [
    {"name": "gemm-dist", "suite": "polybench-dist", "dir": "kernels/gemm-dist"},
    {"name": "gemm", "suite": "polybench", "dir": "kernels/gemm"},
    {"name": "vadd", "suite": "blas", "dir": "kernels/vadd"},
    {"name": "fir_ptr", "suite": "dspstone-ptr", "dir": "kernels/fir_ptr"},
]


def _lift_dir(tmp_path: Path) -> Path:
    lift = tmp_path / "lift"
    lift.mkdir()
    plan = {"manifest": str(REPO_ROOT / "benchmarks" / "manifest.toml"), "dataset": "MINI",
            "repeat": 5, "timeout_s": 120.0, "cleanup": True, "kernels": KERNELS,
            "variants": ["gcc", "clang", "numpy", "jax", "pytorch", "torch-compile", "hlo"]}
    (lift / "plan.json").write_text(json.dumps(plan))
    (lift / "lift.csv").write_text("kernel\n")
    (lift / "run.json").write_text("{}")
    return lift


def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    lift = _lift_dir(tmp_path)
    environment = {**os.environ, "PYTHON": sys.executable, **env}
    return subprocess.run(["bash", str(SCRIPT), str(lift), str(tmp_path / "out"), "2", "0"],
                          capture_output=True, text=True, env=environment, timeout=300)


def _plan(tmp_path: Path, name: str) -> dict:
    return json.loads((tmp_path / "lift" / name).read_text())


def test_plans_for_the_named_variants(tmp_path):
    done = _run(tmp_path, BENCH_CUDA_VARIANTS="pytorch,torch-compile", BENCH_CUDA_TIMEOUT_S="45",
                BENCH_CUDA_SMOKE="fir_ptr", BENCH_CUDA_PLANS_ONLY="1")
    assert done.returncode == 0, done.stderr
    main = _plan(tmp_path, "plan-cuda.json")
    assert main["variants"] == ["gcc", "pytorch", "torch-compile"]
    assert main["timeout_s"] == 45.0 and main["memory_limit_gb"] == 0
    # The distributed PolyBench first, the smoke kernel only in its own plan.
    assert [k["name"] for k in main["kernels"]] == ["gemm-dist", "vadd", "gemm"]
    assert [k["name"] for k in _plan(tmp_path, "plan-smoke.json")["kernels"]] == ["fir_ptr"]
    host = _plan(tmp_path, "plan-host.json")
    assert host["variants"] == ["gcc"]
    assert [k["name"] for k in host["kernels"]] == ["vadd", "fir_ptr", "gemm-dist", "gemm"]
    assert not (tmp_path / "out" / "results" / "runtime.csv").exists()


def test_deadline_zero_starts_nothing(tmp_path):
    done = _run(tmp_path, BENCH_CUDA_VARIANTS="pytorch", BENCH_CUDA_HOST_C_UNTIL_S="1")
    assert done.returncode == 0, done.stderr
    log = (tmp_path / "out" / "runtime.log").read_text()
    assert "4 kernels not measured: gemm-dist, vadd, fir_ptr, gemm" in log, log
    assert (tmp_path / "out" / "lift.csv").is_file()


def test_unknown_variant_refused(tmp_path):
    done = _run(tmp_path, BENCH_CUDA_VARIANTS="pytorch,cupy")
    assert done.returncode == 2
    assert "unknown GPU variant cupy" in done.stderr
    assert not (tmp_path / "lift" / "plan-cuda.json").exists()


def test_smoke_kernel_must_be_in_the_plan(tmp_path):
    done = _run(tmp_path, BENCH_CUDA_SMOKE="fir_ptr,not_a_kernel")
    assert done.returncode == 2
    assert "smoke kernel not in the plan: not_a_kernel" in done.stderr


def _csv(path: Path, rows: list[tuple]) -> Path:
    head = "kernel,suite,variant,median_s,status,e2e_median_s\n"
    path.write_text(head + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


def test_same_machine_table(tmp_path):
    """scripts/cuda_vs_host.py: speedups against the host's gcc, the backend
    that wins, and the run-to-run ratio, from the rows it is given."""
    runtime = _csv(tmp_path / "runtime.csv", [
        ("a", "s", "gcc", 2.0, "ok", ""), ("b", "s", "gcc", 8.0, "ok", ""),
        ("a", "s", "pytorch-cuda", 0.01, "ok", 4.0), ("a", "s", "torch-compile-cuda", 0.02, "ok", 2.0),
        ("b", "s", "pytorch-cuda", 0.04, "ok", 0.5), ("b", "s", "torch-compile-cuda", 0.01, "ok", 1.0)])
    host = _csv(tmp_path / "host.csv", [("a", "s", "gcc", 1.0, "ok", ""), ("b", "s", "gcc", 4.0, "ok", "")])
    previous = _csv(tmp_path / "old.csv", [("a", "s", "pytorch-cuda", 0.02, "ok", ""),
                                            ("b", "s", "pytorch-cuda", 0.04, "ok", "")])
    done = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "cuda_vs_host.py"),
                           "--runtime", str(runtime), "--host", str(host), "--previous", str(previous)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # gcc 2x slower on the lift machine; kernel-only a: 1/0.01, b: 4/0.01 -> 200x;
    # end to end a: 1/2, b: 4/0.5 -> 2x, one kernel slower than the C.
    assert "| s | 2 | 2× | 200× | 2× | 1 |" in done.stdout, done.stdout
    # Each backend wins once; pytorch/compile times 0.5 and 4 -> 1.41x.
    assert "| s | 1 | 1 | 1.41× |" in done.stdout, done.stdout
    assert "over 2 kernels: geomean 0.707" in done.stdout, done.stdout
    missing = subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "cuda_vs_host.py"),
                              "--runtime", str(tmp_path / "none.csv"), "--host", str(host)],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "none.csv" in missing.stderr
