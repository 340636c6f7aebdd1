"""The benchmark corpus (benchmarks/ and benchmarks/manifest.toml): the kernel
counts the evaluation relies on, manifest entries that match their C files,
and every file compiling with gcc -Wall -Werror and with Polly."""

import os
import re
import subprocess
from multiprocessing.pool import ThreadPool

import pytest

from conftest import REPO_ROOT, cref_module as cref

BENCHMARKS = REPO_ROOT / "benchmarks"

# The 96 kernel names of the TENSORIZE artifact's complexities.csv; the union
# has 99 kernels (a few more blend variants), all named as the artifact names them.
TENSORIZE_NAMES = """
2mm 3mm atax bicg correlation covariance doitgen gemm gemver gesummv mvt symm syr2k syrk trmm
matadd matinit matmul matscal matsub vadd vcopy vfill vmul vneg voffset vrecip vscal vsub wvec
dot gemv ger gemm_nn gemm_nt gemm_tn gemm_tt mag_array matrix_add_matrix mse_array
mult_add_into_cpu ol_l2_cpu1 ol_l2_cpu2 scale_array scale_matrix sum_array translate_array
mat1x3 matrix1 matrix2 n_real_updates pin_down sum_of_squares diveq_sca diveq len_sq len lerp
matmul_sca muleq muleq_sca negate pluseq subeq array_inc array_sum cube_in_place
fourth_in_place sum_elts dct fir_small histogram lmsfir1 lmsfir2 mult_big matmul_ll
rmsnorm_part1 rmsnorm_part2 softmax_part1 softmax_part2 softmax_part3 softmax_part4
transformer_part3 transformer_part4 color_burn_8 color_dodge_8 darken_blend_8 dissolve_blend_8
lighten_blend_8 linear_burn_8 linear_dodge_8 multiply_blend_8 normal_blend_8 normal_blend_f
overlay_blend_8 screen_blend_8
""".split()
UNION_SUITES = {"blas", "blend", "darknet", "dsp", "dspstone", "llama", "makespeare", "mathfu",
                "simpl_array", "utdsp", "polybench"}
FRONTIER_POLYBENCH = """
cholesky durbin gramschmidt lu ludcmp trisolv deriche floyd-warshall nussinov adi fdtd-2d heat-3d
jacobi-1d jacobi-2d seidel-2d
""".split()
STENSO_NAMES = """
diag_dot elem_square log_exp_1 log_exp_2 mat_vec_prod dot_trans scalar_sum vec_lerp
euclidian_dist common_factor inner_prod scale_dot reshape_dot dot_trans_2 power_neg sum_sum
sum_stack sum_diag_dot max_stack trace_dot reorder_dot
synth_1 synth_2 synth_3 synth_4 synth_5 synth_6 synth_7 synth_8 synth_9 synth_10 synth_11 synth_12
""".split()
# Wave 2 suites: kernels of shapes the first corpus never showed (int data
# with float accumulators, pointer walking, row pointers, struct parameters,
# tensor descriptors, loop-free functions).
WAVE2_SUITES = {"conversions", "dspstone-ptr", "rowptr", "darknet-struct", "tensor-desc", "scalar"}


def test_corpus_has_99_union_15_frontier_polybench_and_33_stenso_kernels(manifest):
    # The PolyBench kernels in their distributed form are a second copy of the 30
    # PolyBench entries (tests/python/test_polybench_dist.py checks them).
    suites = {k.name: k.suite for k in manifest.values() if k.suite != "polybench-dist"}
    stenso = sorted(n for n, s in suites.items() if s == "stenso")
    frontier = sorted(n for n in suites if n in FRONTIER_POLYBENCH)
    union = sorted(n for n, s in suites.items() if s in UNION_SUITES and n not in FRONTIER_POLYBENCH)
    others = sorted(n for n, s in suites.items()
                    if s not in UNION_SUITES | {"stenso"} | WAVE2_SUITES)
    wave2 = [n for n, s in suites.items() if s in WAVE2_SUITES]
    assert stenso == sorted(STENSO_NAMES)
    assert frontier == sorted(FRONTIER_POLYBENCH)
    assert all(suites[n] == "polybench" for n in frontier)
    assert not others, f"entries with an unknown suite: {others}"
    assert sorted(set(TENSORIZE_NAMES) - set(union)) == []
    assert len(union) == 99
    assert len(suites) == 99 + 15 + 33 + len(wave2)
    assert len(manifest) == 99 + 15 + 33 + 30 + len(wave2)


def test_every_kernel_file_belongs_to_exactly_one_manifest_entry(manifest):
    named = [k.path for k in manifest.values()]
    duplicates = sorted({str(p) for p in named if named.count(p) > 1})
    assert not duplicates, f"files used by several entries: {duplicates}"
    on_disk = {p.resolve() for suite in UNION_SUITES | {"stenso"} | WAVE2_SUITES
               for p in (BENCHMARKS / suite).glob("*.c")}
    # The distributed layout: <group>/<name>/<name>.c (utilities/ holds the suite's runtime).
    on_disk |= {p.resolve() for p in (BENCHMARKS / "polybench-dist").glob("**/*.c")
                if p.parent.name == p.stem}
    orphans = sorted(str(p.relative_to(BENCHMARKS)) for p in on_disk - set(named))
    missing = sorted(str(p) for p in set(named) - on_disk)
    assert not orphans, f"kernel files without a manifest entry: {orphans}"
    assert not missing, f"manifest entries whose file is missing: {missing}"


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", " ", source)


def _split_top_level(parameter_text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in parameter_text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip() and p.strip() != "void"]


def _definition_parameters(kernel) -> list[str] | None:
    """The parameter list of the function's definition in its file, or None."""
    source = _strip_comments(kernel.path.read_text())
    pattern = re.compile(r"\b" + re.escape(kernel.function) + r"\s*\(")
    for match in pattern.finditer(source):
        depth, end = 1, match.end()
        while end < len(source) and depth:
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            end += 1
        if re.match(r"\s*\{", source[end:]):
            return _split_top_level(source[match.end():end - 1])
    return None


def test_every_manifest_entry_is_consistent_with_its_c_file(manifest):
    problems = []
    for kernel in manifest.values():
        for problem in cref.validate_kernel(kernel):
            problems.append(f"{kernel.name}: {problem}")
        if not kernel.path.is_file():
            continue
        parameters = _definition_parameters(kernel)
        c_names = _c_level_names(kernel)
        if parameters is None:
            problems.append(f"{kernel.name}: no definition of {kernel.function}() in {kernel.file}")
        elif len(parameters) != len(c_names):
            problems.append(f"{kernel.name}: {kernel.function}() takes {len(parameters)} "
                            f"parameters, the manifest lists {len(c_names)}")
        else:
            for declared, name in zip(parameters, c_names):
                if not re.search(r"\b" + re.escape(name) + r"\b", declared):
                    problems.append(f"{kernel.name}: manifest param {name} does not "
                                    f"match C parameter `{declared}`")
    assert not problems, "\n".join(problems)


def _c_level_names(kernel):
    """The C parameters the manifest's params stand for: struct fields
    (`field = "m.rows"`) collapse into their struct, passed where its first
    field stands; fields of a global struct are no parameter."""
    passing = {s["name"]: s["pass"] for s in kernel.extra.get("structs", [])}
    names = []
    for param in kernel.params:
        if param.field is None:
            names.append(param.name)
            continue
        root = re.match(r"\w+", param.field).group(0)
        if passing.get(root) != "global" and root not in names:
            names.append(root)
    return names


def _compile(kernel, command_prefix):
    command = [*command_prefix, *cref.compile_flags(kernel, "MINI"), "-c", str(kernel.path),
               "-o", os.devnull]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return f"{kernel.name}: $ {' '.join(command)}\n{result.stderr.strip()}"
    return None


@pytest.mark.parametrize("compiler", [
    pytest.param(["gcc", "-O3", "-Wall", "-Werror"], id="gcc-Wall-Werror"),
    pytest.param(["clang-19", "-O3", "-mllvm", "-polly"], id="clang-polly"),
])
def test_every_kernel_compiles(manifest, compiler):
    kernels = [k for k in manifest.values() if k.path.is_file()]
    with ThreadPool(max(2, os.cpu_count() or 2)) as pool:
        # chunksize=1: a few Polly compiles take seconds each; keep both workers busy.
        results = pool.imap_unordered(lambda k: _compile(k, compiler), kernels, chunksize=1)
        failures = sorted(f for f in results if f)
    assert not failures, f"{len(failures)} kernels fail to compile:\n" + "\n\n".join(failures)
