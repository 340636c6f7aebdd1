"""PolyBench/C 4.2 in its distributed form (benchmarks/polybench-dist/): our own
utilities/polybench.h, the 30 kernels in the suite's layout, their manifest
entries, and the C baseline driver on files that define their own main()."""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import REPO_ROOT, cref_module as cref

DIST = REPO_ROOT / "benchmarks" / "polybench-dist"
UTILITIES = DIST / "utilities"


def _dist_entries(manifest):
    return [k for k in manifest.values() if k.suite == "polybench-dist"]


def test_every_polybench_kernel_has_a_distributed_form_entry(manifest):
    vla = sorted(k.name for k in manifest.values() if k.suite == "polybench")
    dist = _dist_entries(manifest)
    assert sorted(k.name.removesuffix("-dist") for k in dist) == vla
    for k in dist:
        assert k.form == "distributed"
        assert k.path.parent.name == k.path.stem, f"{k.name}: not <group>/<name>/<name>.c"
        assert (k.path.parent / f"{k.path.stem}.h").is_file()
        assert [str(d) for d in k.include_dirs] == [str(UTILITIES)]
        assert cref.compile_flags(k, "MINI") == [f"-I{UTILITIES}", "-DMINI_DATASET"]
    forms = {k.form for k in manifest.values()}
    assert forms <= set(cref.FORMS)
    assert all(k.form == "c99-vla" for k in manifest.values() if k.suite == "polybench")


def _macro_values(kernel, dataset):
    """The kernel header's size macros as gcc sees them at `dataset`."""
    result = subprocess.run(
        ["gcc", "-E", "-dM", f"-I{UTILITIES}", f"-I{kernel.path.parent}", f"-D{dataset}_DATASET",
         str(kernel.path)], capture_output=True, text=True, check=True)
    macros = dict(re.findall(r"^#define (\w+) (.*)$", result.stdout, re.M))
    return {name: int(macros[name.upper()]) for name in kernel.dataset_sizes(dataset)}


@pytest.mark.parametrize("dataset", cref.DATASETS)
def test_manifest_sizes_are_the_headers_sizes(manifest, dataset):
    wrong = [f"{k.name}: header {_macro_values(k, dataset)} != manifest {k.dataset_sizes(dataset)}"
             for k in _dist_entries(manifest)
             if _macro_values(k, dataset) != k.dataset_sizes(dataset)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("flags", [
    pytest.param([], id="default"),
    pytest.param(["-DPOLYBENCH_USE_C99_PROTO"], id="c99-proto"),
    pytest.param(["-DPOLYBENCH_STACK_ARRAYS", "-DPOLYBENCH_USE_SCALAR_LB",
                  "-DPOLYBENCH_PADDING_FACTOR=3"], id="stack-scalar-lb-padded"),
])
def test_every_distributed_kernel_runs_standalone_and_dumps(manifest, tmp_path, flags):
    """gcc -O3 -I utilities utilities/polybench.c x.c -lm -DMINI_DATASET, as a user
    of the suite builds it; -DPOLYBENCH_DUMP_ARRAYS makes main() dump every output."""
    problems = []
    for k in _dist_entries(manifest):
        exe = tmp_path / k.name
        build = subprocess.run(
            ["gcc", "-O3", "-Wall", "-Werror", f"-I{UTILITIES}", str(UTILITIES / "polybench.c"),
             str(k.path), "-lm", "-DMINI_DATASET", "-DPOLYBENCH_DUMP_ARRAYS", *flags,
             "-o", str(exe)], capture_output=True, text=True)
        if build.returncode != 0:
            problems.append(f"{k.name}: {build.stderr.strip()}")
            continue
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        dumped = re.findall(r"^begin dump: (\S+)", run.stderr, re.M)
        outputs = [o for o in k.outputs if o != "return"]
        if run.returncode != 0 or dumped != outputs or "==END   DUMP_ARRAYS==" not in run.stderr:
            problems.append(f"{k.name}: exit {run.returncode}, dumped {dumped}, outputs {outputs}")
        elif re.search(r"\bnan\b|\binf\b", run.stderr):
            problems.append(f"{k.name}: the dump has nan or inf")
    assert not problems, "\n".join(problems)


def test_without_dump_flag_main_prints_nothing(manifest, tmp_path):
    k = manifest["gemm-dist"]
    exe = tmp_path / "gemm"
    subprocess.run(["gcc", "-O3", f"-I{UTILITIES}", str(UTILITIES / "polybench.c"), str(k.path),
                    "-lm", "-DMINI_DATASET", "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    assert run.stdout == "" and run.stderr == ""


def test_distributed_form_computes_what_the_vla_form_computes(manifest, tmp_path):
    """The C baseline driver runs both forms on the same inputs (the distributed
    file has its own main(), renamed inside the driver); gcc may contract or
    vectorise the two forms differently, so values agree to rounding."""
    problems = []
    for k in _dist_entries(manifest):
        vla = k.name.removesuffix("-dist")
        inputs = tmp_path / f"in-{vla}"
        cref.generate_inputs(vla, "MINI", 0, inputs)
        expected = cref.run(vla, "MINI", inputs=inputs, out=tmp_path / f"out-{vla}")
        dist_inputs = tmp_path / f"in-{k.name}"
        shutil.copytree(inputs, dist_inputs)
        meta = json.loads((dist_inputs / "meta.json").read_text())
        (dist_inputs / "meta.json").write_text(json.dumps({**meta, "kernel": k.name}))
        got = cref.run(k, "MINI", inputs=dist_inputs, out=tmp_path / f"out-{k.name}")
        if got.unlisted_writes:
            problems.append(f"{k.name}: writes unlisted {got.unlisted_writes}")
        for name, want in expected.outputs.items():
            if not np.allclose(got.outputs[name], want, rtol=1e-12, atol=1e-12):
                problems.append(f"{k.name}: output {name} differs from {vla}")
    assert not problems, "\n".join(problems)


def test_driver_renames_the_suite_main_only_inside_the_kernel_include(manifest):
    source = cref.main_source("gemm-dist", "MINI")
    assert "#define main cref_kernel_file_main" in source
    assert source.index("#undef main") < source.index("int main(")
    assert "#define main" not in cref.main_source("gemm", "MINI")


def test_polly_report_reads_the_distributed_kernel_where_the_driver_runs_it():
    """jacobi-2d-dist at SMALL with polly-parallel, on the very translation unit
    the C baseline is built from: the kernel is inlined twice, into the driver
    and into PolyBench's own (never called) main, and Polly treats the two
    copies differently; only the driver's copy counts, and its evidence is
    attributed to the kernel's lines although fixed-size arrays leave no
    run-time alias check (`polly.split_new_and_old`) behind."""
    report = cref.polly_report("jacobi-2d-dist", "SMALL", "polly-parallel")
    assert report["transformed"] is True, report
    assert {"scop", "rescheduled", "tiled", "parallel", "codegen"} <= set(report["what"])
    assert report["runs_in"] and all(f.startswith("cref_body") for f in report["runs_in"])
    source = cref.get_kernel("jacobi-2d-dist").path.read_text().splitlines()
    signature = next(i for i, line in enumerate(source, 1) if "void kernel_jacobi_2d(" in line)
    assert signature <= report["lines"][0] <= report["lines"][1] < signature + 20
    assert "rtc" not in report["what"]


def test_polly_report_says_why_polly_left_a_distributed_kernel_alone():
    """gemm-dist at MINI: clang unrolls the 20x25x30 loops before Polly, which
    keeps the SCoP's schedule (it only versions it); PolyBench's init_array in
    the same file is rescheduled, which must not count for the kernel."""
    report = cref.polly_report("gemm-dist", "MINI", "polly")
    assert report["transformed"] is False, report
    assert report["scops"] == 1
    assert report["why_not"].startswith("SCoP kept its schedule")


def test_a_variant_without_polly_has_no_polly_report():
    with pytest.raises(cref.CrefError):
        cref.polly_report("gemm-dist", "MINI", "gcc")
