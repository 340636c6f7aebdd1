"""scripts/polly_evidence.py on real clang-19 Polly compiles of tiny C files
(tests/fixtures/polly): what Polly did is credited to the kernel only when it
is the kernel's own code and the code that runs, in both array forms; plus the
verdict's decision table on evidence built by hand."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "scripts"))
import polly_evidence as pe  # noqa: E402

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "polly"


@pytest.fixture(scope="module")
def polly_flags(cref):
    """The `polly` and `polly-parallel` variants' flags, as the bench uses them."""
    return {v: list(cref.VARIANTS[v][1]) for v in ("polly", "polly-parallel")}


def analyse(tmp_path, flags, name, function):
    source = FIXTURES / f"{name}.c"
    return pe.analyse(["clang-19", *flags, str(source)], source, function, tmp_path / "work")


def function_lines(name, function):
    """First and last line of `function`'s definition in the fixture (its
    signature line through the closing brace at the start of a line)."""
    lines = (FIXTURES / f"{name}.c").read_text().splitlines()
    first = next(i for i, line in enumerate(lines, 1)
                 if re.match(rf"(static )?void {function}\(", line))
    last = next(i for i, line in enumerate(lines, 1) if i > first and line == "}")
    return first, last


def test_matmul_in_the_distributed_form_is_tiled_with_the_matmul_pattern(tmp_path, polly_flags):
    report = analyse(tmp_path, polly_flags["polly"], "mm_fixed", "kernel_mm")
    assert report["transformed"] is True, report
    assert {"scop", "rescheduled", "tiled", "matmul-pattern", "codegen"} <= set(report["what"])
    assert report["why_not"] is None
    # The static kernel is inlined: Polly's code for it runs in main.
    assert report["runs_in"] == ["main"]
    first, last = function_lines("mm_fixed", "kernel_mm")
    assert first <= report["lines"][0] and report["lines"][1] <= last
    assert report["scops"] == 1


def test_matmul_in_the_c99_form_is_judged_on_the_copy_that_runs(tmp_path, polly_flags):
    """The external kernel_mm keeps a parametric copy nobody calls; main runs
    the copy inlined at size 400, which Polly tiles."""
    report = analyse(tmp_path, polly_flags["polly"], "mm_vla", "kernel_mm")
    assert report["transformed"] is True, report
    assert {"scop", "rescheduled", "tiled", "codegen"} <= set(report["what"])
    assert report["runs_in"] == ["main"]
    ir = (tmp_path / "work" / pe.IR_NAME).read_text()
    assert "define dso_local void @kernel_mm(" in ir


def test_polly_work_on_init_array_is_not_credited_to_the_kernel(tmp_path, polly_flags):
    """chase.c: init_array is a matrix product Polly optimises with its matmul
    pattern, in the same file and the same LLVM function (main) as the kernel,
    a data-dependent while loop Polly cannot model."""
    report = analyse(tmp_path, polly_flags["polly"], "chase", "kernel_chase")
    assert report["transformed"] is False, report
    assert report["what"] == []
    assert report["why_not"].startswith("no SCoP: ")
    assert report["missed"] and report["why_not"] == f"no SCoP: {report['missed'][0]}"
    # The file-level evidence a classifier without attribution would take:
    ir = (tmp_path / "work" / pe.IR_NAME).read_text()
    assert "Packed_A" in ir and "polly.stmt" in ir
    init = analyse(tmp_path, polly_flags["polly"], "chase", "init_array")
    assert init["transformed"] is True and "matmul-pattern" in init["what"], init


def test_the_parallel_variant_runs_the_kernel_in_openmp_subfunctions(tmp_path, polly_flags):
    report = analyse(tmp_path, polly_flags["polly-parallel"], "stencil", "kernel_stencil")
    assert report["transformed"] is True, report
    assert {"rescheduled", "tiled", "parallel", "codegen"} <= set(report["what"])
    assert report["runs_in"] and all("_polly_subfn" in f for f in report["runs_in"])
    serial = analyse(tmp_path, polly_flags["polly"], "stencil", "kernel_stencil")
    assert serial["transformed"] is True and "parallel" not in serial["what"], serial


def test_a_dismissed_scop_is_not_a_transformation(tmp_path, polly_flags):
    report = analyse(tmp_path, polly_flags["polly"], "vla_dismissed", "kernel_mm")
    assert report["transformed"] is False, report
    assert report["what"] == ["scop"] and report["scops"] == 1
    assert report["why_not"].startswith("SCoP dismissed (assumptions that cannot hold: ")
    assert "No-aliasing" in report["why_not"]


def test_a_function_without_debug_info_is_an_error(tmp_path, polly_flags):
    with pytest.raises(pe.PollyEvidenceError, match="no debug info for function kernel_nope"):
        analyse(tmp_path, polly_flags["polly"], "stencil", "kernel_nope")


_DEBUG_DIRECTIVE = r"\s*\.(loc|file|cfi_\w+|ident|addrsig\w*)\b"
_DEBUG_LABEL = r"\.L(tmp|func_begin|func_end|info|line|debug|str|addr|loclists|rnglists)"


def _machine_code(assembly: str) -> list[str]:
    """Instructions and code labels of an assembly file, without debug
    directives, debug sections, comments or the labels debug info adds."""
    kept, in_debug = [], False
    for line in assembly.splitlines():
        stripped = line.split("#", 1)[0].rstrip()
        if stripped.lstrip().startswith(".section"):
            in_debug = ".debug" in stripped
            continue
        if in_debug or not stripped.strip():
            continue
        if re.match(_DEBUG_DIRECTIVE, stripped) or re.match(_DEBUG_LABEL, stripped):
            continue
        kept.append(stripped)
    return kept


@pytest.mark.parametrize("name", ["mm_fixed", "stencil"])
def test_the_analysis_flags_change_no_machine_code(tmp_path, polly_flags, name):
    """The analysis compile observes the timed one: the same machine code
    with and without the flags analyse() adds."""
    source = FIXTURES / f"{name}.c"
    observing = pe.observing_flags(tmp_path)
    code = []
    for extra in ([], observing):
        out = tmp_path / f"out{len(code)}.s"
        subprocess.run(["clang-19", *polly_flags["polly-parallel"], *extra, "-S", str(source),
                        "-o", str(out)], check=True, cwd=tmp_path, capture_output=True)
        code.append(_machine_code(out.read_text()))
    assert len(code[0]) > 100
    assert code[0] == code[1]


# ----------------------------------------------------------------------------- verdict


def _scop(region="%a---%b", arrays=("MemRef0",), schedules=("{ S[i] -> [i] }",)):
    return pe.Scop("main", region, "k.c", 3, 9, arrays, schedules)


@pytest.mark.parametrize("evidence,transformed,why_not", [
    (pe.Evidence(), False, "no SCoP"),
    (pe.Evidence(missed=["Unspecified error."]), False, "no SCoP: Unspecified error."),
    (pe.Evidence(scops=1, dismissed=1, false_assumptions=["No-aliasing"]), False,
     "SCoP dismissed (assumptions that cannot hold: No-aliasing)"),
    (pe.Evidence(scops=1), False, "SCoP dropped before scheduling (unprofitable)"),
    (pe.Evidence(scops=1, exported=[_scop()]), False, "SCoP kept its schedule"),
    (pe.Evidence(scops=1, exported=[_scop()], codegen_in=["main"], runtime_check=True), False,
     "SCoP kept its schedule (only versioned)"),
    (pe.Evidence(scops=1, exported=[_scop()], rescheduled=[_scop()]), False,
     "rescheduled, but none of Polly's code for it is in the final IR"),
    (pe.Evidence(scops=1, exported=[_scop()], rescheduled=[_scop()], codegen_in=["main"]),
     True, None),
    (pe.Evidence(scops=1, exported=[_scop()], parallel_in=["main_polly_subfn"]), True, None),
])
def test_verdict_decision_table(evidence, transformed, why_not):
    got = pe.verdict(evidence)
    assert (got["transformed"], got["why_not"]) == (transformed, why_not)


def test_tiles_and_strip_mines_are_told_apart_by_the_schedule_factors():
    tiled = _scop(schedules=("{ S[i0, i1] -> [o1, i0 - 32o1, o4, i1 - 4o4] : -31 + i0 <= 32o1 }",))
    mined = _scop(schedules=("{ S[i0, i1] -> [i0, o4, i1 - 4o4] : -3 + i1 <= 4o4 <= i1 }",))
    packed = _scop(arrays=("MemRef0", "Packed_A"), schedules=("{ S[i] -> [i - 256o1] }",))
    assert pe.schedule_factors(tiled) == {32, 4}

    def what(scop):
        return pe.verdict(pe.Evidence(scops=1, exported=[scop], rescheduled=[scop],
                                      codegen_in=["main"]))["what"]
    assert what(tiled) == ["scop", "rescheduled", "tiled", "codegen"]
    assert what(mined) == ["scop", "rescheduled", "stripmined", "codegen"]
    assert what(packed) == ["scop", "rescheduled", "tiled", "matmul-pattern", "codegen"]
