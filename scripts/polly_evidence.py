"""What Polly did to one C function, read from one clang compile (issue #16).

`analyse(command, kernel_file, function, workdir)` runs a Polly compile
(`command`: the compiler, the variant's flags and the source, exactly as the
timed executable is built) once more with `analysis_flags()` added and reads
four things Polly and clang write about it:

- the optimisation record (`-fsave-optimization-record`, passes `^polly`):
  every "SCoP begins here" (polly-scops) and every reason a region is not a
  SCoP (polly-detect), each with the LLVM function it was found in and its
  source line;
- the SCoPs Polly exported after scheduling (`-polly-export`, one .jscop per
  SCoP: its function, source lines, arrays, new schedule);
- the SCoPs whose schedule Polly changed (`-polly-optimized-scops` prints the
  description of exactly those, after `markAsOptimized`, on stderr);
- the final LLVM IR with debug info (`-g`): Polly's generated blocks
  (`polly.*`), the values it names (`%p_<copied>`, `%polly.*`, which survive
  when later passes unroll its loops and merge its blocks) and its OpenMP
  subfunctions (`*_polly_subfn*`) carry the debug locations of the
  instructions they were copied from.

Evidence counts for the kernel only when it is the kernel's and runs:
  * the kernel's code = instructions whose debug location (the innermost one,
    or any frame of its `inlinedAt` chain) lies in the kernel's
    DISubprogram, so code inlined into the driver still counts and another
    function's does not;
  * the kernel's lines = its DISubprogram's first line through the last line
    of its code; a remark or SCoP belongs to the kernel when its source lines
    fall in (overlap) that range in the kernel's file. The frontend knows a
    range too, but it is the lifted region and there is none for a kernel it
    refuses, while every C baseline needs this; the debug info of the very
    compile gives the function's lines;
  * only LLVM functions reachable from `main` count: PolyBench's own `main`
    (renamed by the driver, never called) holds another inlined copy of the
    kernel, which Polly may treat differently.

Fixed-size arrays (PolyBench's distributed form) need no run-time alias check,
so Polly's `polly.split_new_and_old` guard is often folded away; nothing here
depends on it (it is only reported, as `rtc`, when a check survives).

`transformed` = Polly's code for the kernel is in the final IR and Polly either
changed the schedule of a kernel SCoP or made it parallel. Code regenerated
with the original schedule (Polly versions a SCoP behind alias checks even when
it does not reschedule it) is not a transformation.

The analysis flags change no machine code (`-g` and printing options; checked
by tests/python/test_polly_evidence.py on the fixtures).
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORD_NAME = "polly-remarks.yaml"
IR_NAME = "polly.ll"
# Polly strip-mines a loop by this many iterations for vectorisation
# (-polly-prevect-width, default 4; the variants keep the default): a schedule
# whose only new factor is this width was strip-mined, not tiled.
PREVECT_WIDTH = 4
# Messages Polly repeats around every rejection: not the reason itself.
_FRAME_MESSAGES = ("The following errors keep this region from being a Scop.",
                   "Invalid Scop candidate ends here.")


class PollyEvidenceError(Exception):
    """The analysis compile failed or its output lacks what the analysis needs."""


def observing_flags(workdir: Path) -> list[str]:
    """What is added to a Polly variant's command line to watch Polly: debug
    locations, kept value names, the optimisation record, Polly's SCoP export
    and its dump of rescheduled SCoPs. None of them changes the code."""
    return ["-g", "-fno-discard-value-names", "-fsave-optimization-record",
            f"-foptimization-record-file={workdir / RECORD_NAME}",
            "-foptimization-record-passes=^polly", "-mllvm", "-polly-export",
            "-mllvm", "-polly-optimized-scops"]


def analysis_flags(workdir: Path) -> list[str]:
    """`observing_flags`, and LLVM IR (workdir/polly.ll) instead of an object."""
    return [*observing_flags(workdir), "-S", "-emit-llvm", "-o", str(workdir / IR_NAME)]


# ----------------------------------------------------------------------------- LLVM IR


@dataclass
class Block:
    label: str
    locations: list[int] = field(default_factory=list)  # DILocation ids
    # Locations of instructions Polly named: its copies of the original
    # statements (`%p_<name>`) and its own values (`%polly.<name>`). They keep
    # their names when later passes unroll Polly's loops and merge its blocks
    # into blocks of other names.
    polly_locations: list[int] = field(default_factory=list)
    runtime_check: bool = False  # ends in a conditional branch on a value

    @property
    def is_polly(self) -> bool:
        return self.label.startswith("polly.")

    def polly_code(self) -> list[int]:
        """Locations of this block's instructions that are Polly's code."""
        return self.locations if self.is_polly else self.polly_locations


@dataclass
class IrFunction:
    name: str
    blocks: list[Block] = field(default_factory=list)
    references: set[str] = field(default_factory=set)  # @names it mentions
    generated: bool = False  # holds a block or value Polly named `polly.*`


@dataclass
class Module:
    functions: dict[str, IrFunction]
    locations: dict[int, tuple[int, int, int | None]]  # id -> (line, scope, inlinedAt)
    parents: dict[int, int]  # lexical block id -> enclosing scope id
    subprograms: dict[int, tuple[str, int, int]]  # id -> (name, file id, line)
    files: dict[int, tuple[str, str]]  # DIFile id -> (filename, directory)

    def frames(self, location: int) -> list[int]:
        """The subprograms of a debug location, innermost first, through its
        `inlinedAt` chain."""
        found: list[int] = []
        current: int | None = location
        while current is not None and current in self.locations and len(found) < 64:
            _, scope, inlined_at = self.locations[current]
            for _ in range(256):  # lexical blocks nest; bound the walk on broken input
                if scope in self.subprograms or scope not in self.parents:
                    break
                scope = self.parents[scope]
            if scope in self.subprograms:
                found.append(scope)
            current = inlined_at
        return found

    def reachable(self, root: str = "main") -> set[str]:
        """Functions `root` may run: it and everything it mentions, transitively
        (a thread entry passed to pthread_create or an OpenMP subfunction passed
        to the runtime counts). Every function when the module has no `root`."""
        if root not in self.functions:
            return set(self.functions)
        seen, stack = {root}, [root]
        while stack:
            for name in self.functions[stack.pop()].references:
                if name in self.functions and name not in seen:
                    seen.add(name)
                    stack.append(name)
        return seen


_DEFINE = re.compile(r'^define\b[^@]*@("[^"]+"|[-\w.$]+)\(')
_LABEL = re.compile(r'^("[^"]+"|[-\w.$]+):')
_DBG = re.compile(r"!dbg !(\d+)")
_RECORD_LOC = re.compile(r"#dbg_\w+\(.*,\s*!(\d+)\)\s*$")
_REFERENCE = re.compile(r'@("[^"]+"|[-\w.$]+)')
_POLLY_VALUE = re.compile(r"\s*%(p_|polly\.)[-\w.$]* = ")
_METADATA = re.compile(r"^!(\d+) = (?:distinct )?!(DILocation|DILexicalBlock|DILexicalBlockFile|"
                       r"DISubprogram|DIFile)\((.*)\)\s*$")


def _field(body: str, key: str) -> str | None:
    match = re.search(rf'(?<![\w])({key}): ("(?:[^"\\]|\\.)*"|![0-9]+|-?\d+)', body)
    if match is None:
        return None
    value = match.group(2)
    return value[1:-1] if value.startswith('"') else value.lstrip("!")


def _metadata(module: Module, line: str) -> None:
    match = _METADATA.match(line)
    if match is None:
        return
    ident, kind, body = int(match[1]), match[2], match[3]
    scope = _field(body, "scope")
    if kind == "DILocation" and scope is not None:
        inlined = _field(body, "inlinedAt")
        module.locations[ident] = (int(_field(body, "line") or 0), int(scope),
                                   int(inlined) if inlined else None)
    elif kind in ("DILexicalBlock", "DILexicalBlockFile") and scope is not None:
        module.parents[ident] = int(scope)
    elif kind == "DISubprogram":
        module.subprograms[ident] = (_field(body, "name") or "", int(_field(body, "file") or -1),
                                     int(_field(body, "line") or 0))
    elif kind == "DIFile":
        module.files[ident] = (_field(body, "filename") or "", _field(body, "directory") or "")


def parse_ir(text: str) -> Module:
    """Functions (blocks with the debug locations of their instructions, and
    the functions they mention) and the debug-info nodes of a textual module."""
    module = Module({}, {}, {}, {}, {})
    current: IrFunction | None = None
    for line in text.splitlines():
        if current is None:
            match = _DEFINE.match(line)
            if match:
                current = IrFunction(match[1].strip('"'), [Block("")])
            elif line.startswith("!"):
                _metadata(module, line)
            continue
        if line == "}":
            module.functions[current.name] = current
            current = None
            continue
        label = _LABEL.match(line)
        if label:
            current.blocks.append(Block(label[1].strip('"')))
            current.generated |= current.blocks[-1].is_polly
            continue
        block = current.blocks[-1]
        for pattern in (_DBG, _RECORD_LOC):
            block.locations.extend(int(m) for m in pattern.findall(line))
        if _POLLY_VALUE.match(line):
            block.polly_locations.extend(int(m) for m in _DBG.findall(line))
            current.generated |= "%polly." in line
        if re.match(r"\s*br i1 %", line):
            block.runtime_check = True
        current.references.update(r.strip('"') for r in _REFERENCE.findall(line))
    return module


# ----------------------------------------------------------------------------- remarks and SCoPs


@dataclass(frozen=True)
class Remark:
    pass_name: str
    name: str
    function: str
    file: str
    line: int
    message: str


def _yaml_scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return json.loads(text) if "\\" in text else text[1:-1]
    return text


def parse_remarks(text: str) -> list[Remark]:
    """The records of an optimisation record file (LLVM's YAML remark format)."""
    remarks = []
    for record in re.split(r"^--- !\w+\s*$", text, flags=re.M)[1:]:
        def get(pattern: str) -> str:
            match = re.search(pattern, record, re.M)
            return _yaml_scalar(match[1]) if match else ""
        file = get(r"File:\s+('(?:[^']|'')*'|[^,}]+)")
        line = get(r"Line:\s+(\d+)")
        remarks.append(Remark(get(r"^Pass:\s+(.+)$"), get(r"^Name:\s+(.+)$"),
                              get(r"^Function:\s+(.+)$"), file, int(line or 0),
                              get(r"^\s+- String:\s+(.+)$")))
    return remarks


@dataclass(frozen=True)
class Scop:
    """One SCoP as Polly exported it after scheduling."""

    function: str
    region: str
    file: str
    first_line: int
    last_line: int
    arrays: tuple[str, ...]
    schedules: tuple[str, ...]


def read_scops(workdir: Path) -> list[Scop]:
    """The .jscop files `-polly-export` wrote into `workdir` (named
    `<function>___<region>.jscop`)."""
    scops = []
    for path in sorted(workdir.glob("*___*.jscop")):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise PollyEvidenceError(f"{path.name}: unreadable SCoP export ({error})") from None
        location = re.fullmatch(r"(.*):(\d+)-(\d+)", str(data.get("location", "")))
        file, first, last = (location[1], int(location[2]), int(location[3])) if location \
            else ("", 0, 0)
        scops.append(Scop(path.name.split("___", 1)[0], str(data.get("name", "")), file, first,
                          last, tuple(a.get("name", "") for a in data.get("arrays", [])),
                          tuple(s.get("schedule", "") for s in data.get("statements", []))))
    return scops


def parse_rescheduled(stderr: str) -> set[tuple[str, str]]:
    """(function, region) of every SCoP `-polly-optimized-scops` printed: the
    ones whose schedule Polly changed."""
    found = re.findall(r"^\s+Function: (\S+)\s*\n\s+Region: (\S+)", stderr, re.M)
    return {(function, region) for function, region in found}


# ----------------------------------------------------------------------------- attribution


def _is_file(name: str, directory: str, wanted: Path) -> bool:
    if not name:
        return False
    try:
        return (Path(directory) / name).resolve() == wanted.resolve()
    except OSError:
        return False


@dataclass
class Kernel:
    """Where the kernel is: its subprograms, lines and the functions that run."""

    subprograms: set[int]
    # The kernel file as remarks and SCoP exports name it: clang splits the
    # main file's path into a name and a directory, and those name the file
    # by the first part only.
    file_names: set[str]
    lines: tuple[int, int]
    runs: set[str]

    def owns(self, module: Module, location: int) -> bool:
        return any(s in self.subprograms for s in module.frames(location))

    def covers(self, file: str, first: int, last: int) -> bool:
        return file in self.file_names and first <= self.lines[1] and last >= self.lines[0]


def locate_kernel(module: Module, function: str, kernel_file: Path, cwd: Path) -> Kernel:
    """The kernel's subprogram(s), its line range and the functions `main` runs."""
    file_ids = {ident for ident, (name, directory) in module.files.items()
                if _is_file(name, directory or str(cwd), kernel_file)}
    subprograms = {ident for ident, (name, file_id, _) in module.subprograms.items()
                   if name == function and file_id in file_ids}
    if not subprograms:
        raise PollyEvidenceError(f"no debug info for function {function} of {kernel_file}")
    names = {module.files[i][0] for i in file_ids} | {str(kernel_file)}
    kernel = Kernel(subprograms, names, (0, 0), module.reachable())
    lines = [module.subprograms[s][2] for s in subprograms]
    for ident, (line, _, _) in module.locations.items():
        innermost = module.frames(ident)[:1]
        if line > 0 and innermost and innermost[0] in subprograms:
            lines.append(line)
    kernel.lines = (min(lines), max(lines))
    return kernel


@dataclass
class Evidence:
    """What Polly did to the kernel, each item already attributed to it."""

    scops: int = 0  # distinct kernel SCoPs Polly found
    dismissed: int = 0  # of those, SCoPs Polly dropped because an assumption cannot hold
    false_assumptions: list[str] = field(default_factory=list)  # ... which ones ("No-aliasing")
    exported: list[Scop] = field(default_factory=list)  # kernel SCoPs that reached scheduling
    rescheduled: list[Scop] = field(default_factory=list)
    codegen_in: list[str] = field(default_factory=list)  # functions with Polly's kernel code
    parallel_in: list[str] = field(default_factory=list)  # OpenMP subfunctions of the kernel
    runtime_check: bool = False
    missed: list[str] = field(default_factory=list)  # Polly's reasons for not modelling it


def _code_evidence(module: Module, kernel: Kernel, evidence: Evidence) -> None:
    """Functions that run Polly's code for the kernel: OpenMP subfunctions
    holding kernel code, and functions with Polly blocks or Polly-named
    values whose debug locations are the kernel's (a C variable named `p_x`
    does not count in a function where Polly generated nothing)."""
    for name in sorted(kernel.runs):
        function = module.functions[name]
        if "_polly_subfn" in name:
            if any(kernel.owns(module, loc) for b in function.blocks for loc in b.locations):
                evidence.parallel_in.append(name)
            continue
        if not function.generated:
            continue
        polly = [b for b in function.blocks
                 if any(kernel.owns(module, loc) for loc in b.polly_code())]
        if polly:
            evidence.codegen_in.append(name)
        evidence.runtime_check |= any(b.runtime_check and b.label.startswith(
            "polly.split_new_and_old") for b in polly)


def _scop_remarks(remarks: list[Remark], kernel: Kernel, evidence: Evidence) -> set:
    """The kernel's SCoPs from Polly's remarks, in their emitted order: "SCoP
    begins here", its assumptions, then "SCoP ends here" (with "but was
    dismissed" when an assumption is infeasible). Polly may build a SCoP more
    than once; a SCoP is its function and first line."""
    found, dismissed = set(), set()
    entry: Remark | None = None
    assumptions: list[str] = []
    for remark in remarks:
        if remark.pass_name != "polly-scops" or remark.function not in kernel.runs:
            continue
        if remark.name == "ScopEntry":
            entry, assumptions = remark, []
        elif remark.name == "ScopEnd" and entry is not None:
            if kernel.covers(entry.file, entry.line, entry.line) or kernel.covers(
                    remark.file, remark.line, remark.line):
                found.add((entry.function, entry.line))
                if "dismissed" in remark.message:
                    dismissed.add((entry.function, entry.line))
                    evidence.false_assumptions = list(dict.fromkeys(
                        evidence.false_assumptions + assumptions))
            entry = None
        elif entry is not None:
            infeasible = re.match(r"(.+?) assumption:.*:\s*false\s*\}\s*$", remark.message)
            if infeasible:
                assumptions.append(infeasible[1])
    evidence.dismissed = len(dismissed)
    return found


def gather(module: Module, remarks: list[Remark], scops: list[Scop],
           rescheduled: set[tuple[str, str]], kernel: Kernel) -> Evidence:
    """Keeps the remarks, SCoPs and generated code that are the kernel's."""
    evidence = Evidence()
    found = _scop_remarks(remarks, kernel, evidence)
    for remark in remarks:
        if (remark.pass_name == "polly-detect" and remark.function in kernel.runs
                and kernel.covers(remark.file, remark.line, remark.line)
                and remark.message not in (*_FRAME_MESSAGES, *evidence.missed)):
            evidence.missed.append(remark.message)
    evidence.exported = [s for s in scops if s.function in kernel.runs
                         and kernel.covers(s.file, s.first_line, s.last_line)]
    evidence.rescheduled = [s for s in evidence.exported if (s.function, s.region) in rescheduled]
    evidence.scops = max(len(found), len({(s.function, s.region) for s in evidence.exported}))
    _code_evidence(module, kernel, evidence)
    return evidence


# ----------------------------------------------------------------------------- verdict


def schedule_factors(scop: Scop) -> set[int]:
    """The factors by which Polly's new schedule divides loops (`i - 32o1`:
    tiles of 32; `4o4`: strip-mined by 4)."""
    return {int(f) for schedule in scop.schedules for f in re.findall(r"\b(\d+)o\d+\b", schedule)}


def verdict(evidence: Evidence) -> dict[str, Any]:
    """`transformed`, the tags of what Polly did (`what`) and, when it did not
    transform the kernel, why (`why_not`)."""
    what = ["scop"] if evidence.scops else []
    if evidence.rescheduled:
        what.append("rescheduled")
        factors = set().union(*(schedule_factors(s) for s in evidence.rescheduled)) - {1}
        if factors - {PREVECT_WIDTH}:
            what.append("tiled")
        elif factors:
            what.append("stripmined")
        if any(a.startswith("Packed_") for s in evidence.rescheduled for a in s.arrays):
            what.append("matmul-pattern")
    what += [tag for tag, present in (("parallel", evidence.parallel_in),
                                      ("codegen", evidence.codegen_in or evidence.parallel_in),
                                      ("rtc", evidence.runtime_check)) if present]
    generated = bool(evidence.codegen_in or evidence.parallel_in)
    transformed = generated and bool(evidence.rescheduled or evidence.parallel_in)
    why_not = None
    if not transformed:
        if not evidence.scops:
            why_not = "no SCoP" + (f": {evidence.missed[0]}" if evidence.missed else "")
        elif not evidence.exported and evidence.dismissed == evidence.scops:
            why_not = "SCoP dismissed" + (
                f" (assumptions that cannot hold: {', '.join(evidence.false_assumptions)})"
                if evidence.false_assumptions else "")
        elif not evidence.exported:
            why_not = "SCoP dropped before scheduling (unprofitable)"
        elif not (evidence.rescheduled or evidence.parallel_in):
            why_not = "SCoP kept its schedule" + (" (only versioned)" if generated else "")
        else:
            why_not = "rescheduled, but none of Polly's code for it is in the final IR"
    return {"transformed": transformed, "what": what, "why_not": why_not}


def analyse(command: list[str], kernel_file: Path, function: str, workdir: Path) -> dict[str, Any]:
    """Runs `command` plus the analysis flags in `workdir` (an empty directory:
    Polly writes its SCoP exports there) and returns the verdict with its
    evidence: SCoP count, the kernel's lines, where Polly's code runs."""
    workdir.mkdir(parents=True, exist_ok=True)
    for stale in workdir.glob("*___*.jscop"):
        stale.unlink()
    full = [*command, *analysis_flags(workdir)]
    try:
        result = subprocess.run(full, capture_output=True, text=True, cwd=workdir)
    except FileNotFoundError:
        raise PollyEvidenceError(f"compiler {command[0]!r} not found") from None
    if result.returncode != 0:
        raise PollyEvidenceError(f"Polly analysis failed:\n$ {' '.join(full)}\n"
                                 f"{result.stderr.strip()[-2000:]}")
    module = parse_ir((workdir / IR_NAME).read_text())
    kernel = locate_kernel(module, function, kernel_file, workdir)
    record = workdir / RECORD_NAME
    remarks = parse_remarks(record.read_text()) if record.is_file() else []
    evidence = gather(module, remarks, read_scops(workdir), parse_rescheduled(result.stderr),
                      kernel)
    return {**verdict(evidence), "scops": evidence.scops,
            "rescheduled": len(evidence.rescheduled), "lines": list(kernel.lines),
            "runs_in": evidence.codegen_in + evidence.parallel_in,
            "missed": evidence.missed[:3]}
