"""Whether two captures are the same compile, up to source locations and file names.

A reproducer (``irscope repro``), a replay with an option set, and a real compile with
that option are checked this way: their TTIR, TTGIR, LLVM IR and PTX must be equal once
what only says *where* the source was is taken out, and their registers, spills and
shared memory must be equal. What is taken out, by stage family:

- MLIR (TTIR, TTGIR): the ``#locN = loc(...)`` definitions and every ``loc(...)``;
  and the SSA value names, which Triton derives from locations (a value's name is the
  Python variable its location names: ``%acc_11``), and which a compile from an IR file
  loses where MLIR's syntax prints no location (a loop's induction variable and
  iteration arguments: ``%arg9``). Values are compared by position instead, each
  name replaced by its order of first appearance;
- LLVM IR: the module's name and source file, ``!dbg`` attachments, debug intrinsics
  and the debug-info metadata (``!DIFile``, ``!DILocation``...), and the numbers of the
  metadata left (renumbered in order of first use);
- PTX: ``.loc`` and ``.file`` directives, the DWARF ``.section .debug_*`` blocks and the
  labels only they refer to (``$L__tmpN``, ``$L__func_begin/endN``).

A ``tl.device_assert`` kept by ``debug=True`` compiles the file name and line into the
code, as the arguments of ``__assertfail``: LLVM IR and PTX keep the ``assertFile_N``
constants and the line argument, with their values taken out.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscope.compiler.stages import LLIR, PTX, TTGIR, TTIR

if TYPE_CHECKING:
    from irscope.core.capture import Capture

COMPARED_STAGES: tuple[str, ...] = (TTIR, TTGIR, LLIR, PTX)
"""The stages a round trip must give equal."""

_LOC_CALL = re.compile(r"\s*(?<![\w.#])loc\(")
_LOC_DEF = re.compile(r"^#loc\d*\s*=\s*loc\(")
_LLVM_DROP = re.compile(r"^(; ModuleID = |source_filename = |!\d+ = (distinct )?!DI|\s*#dbg_|.*call void @llvm\.dbg\.)")
_DBG_ATTACH = re.compile(r",?\s*!dbg !\d+")
_META_REF = re.compile(r"!\d+\b")
_PTX_DROP = re.compile(r"^\s*(\.loc\s|\.file\s|\$L__(tmp|func_begin|func_end)\d+:)")
_PTX_DEBUG_SECTION = re.compile(r"^\s*\.section\s+\.debug_")


def _strip_locs(line: str) -> str:
    """``line`` without any ``loc(...)`` (balanced parentheses, quoted strings skipped)."""
    out: list[str] = []
    i = 0
    for m in _LOC_CALL.finditer(line):
        if m.start() < i:
            continue  # inside a loc(...) already skipped
        out.append(line[i:m.start()])
        depth, k, quoted = 1, m.end(), False
        while k < len(line) and depth:
            c = line[k]
            if quoted:
                if c == "\\":
                    k += 1
                elif c == '"':
                    quoted = False
            elif c == '"':
                quoted = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            k += 1
        i = k
    out.append(line[i:])
    return "".join(out)


def _mlir(text: str) -> list[str]:
    return [_strip_locs(ln).rstrip() for ln in text.splitlines() if not _LOC_DEF.match(ln)]


_SSA_NAME = re.compile(r"%[A-Za-z0-9_$.-]+")
# A definition: a result (``%x = ``, ``%acc:3 = ``, a loop's ``%iv = `` and
# ``iter_args(%x = ...)``) or a typed argument (``^bb0(%x: i32``, ``tt.func @k(%arg0: ...``).
_DEFINED = re.compile(r"(:\d+)?\s*=(?!=)|: ")


def _positional(lines: list[str]) -> list[str]:
    """MLIR lines with every SSA value named by its position instead of its name: each
    definition gets the next number (``%v7``), each use the number of the latest
    definition of its name. Two texts that differ only in their names (MLIR reuses a
    name in another region) become equal; a value used in another place does not."""
    names: dict[str, str] = {}
    count = [0]

    def fresh(name: str) -> str:
        names[name] = f"%v{count[0]}"
        count[0] += 1
        return names[name]

    def number(line: str) -> str:
        out: list[str] = []
        i = 0
        for m in _SSA_NAME.finditer(line):
            out.append(line[i:m.start()])
            name = m.group(0)
            if _DEFINED.match(line, m.end()) or name not in names:
                out.append(fresh(name))
            else:
                out.append(names[name])
            i = m.end()
        out.append(line[i:])
        return "".join(out)

    return [number(ln) for ln in lines]


# A device assert's source file (a string constant) and line (an argument of __assertfail).
_LLVM_ASSERT_FILE = re.compile(r"^(@assertFile_\d+ = .*?constant )\[\d+ x i8\] c\".*\"")
_LLVM_ASSERT_LINE = re.compile(r"(@__assertfail\(.*?@assertFile_\d+, i32 )\d+")
_PTX_ASSERT_FILE = re.compile(r"^(\s*\.global .*\bassertFile_\d+)\[\d+\] = \{[\d,\s]*\};")
_PTX_ASSERT_LINE = re.compile(r"^(\s*st\.param\.b32\s+\[param2\],\s*)\d+;")


def _llvm(text: str) -> list[str]:
    numbers: dict[str, str] = {}

    def renumber(m: re.Match[str]) -> str:
        return numbers.setdefault(m.group(0), f"!m{len(numbers)}")

    out = []
    for ln in text.splitlines():
        if _LLVM_DROP.match(ln):
            continue
        ln = _LLVM_ASSERT_LINE.sub(r"\1<line>", _LLVM_ASSERT_FILE.sub(r"\1<file>", ln))
        out.append(_META_REF.sub(renumber, _DBG_ATTACH.sub("", ln)).rstrip())
    return out


def _ptx_asserts(lines: list[str]) -> list[str]:
    """``lines`` with each device assert's file constant and line argument (the third
    parameter of the ``__assertfail`` call that closes its call sequence) taken out."""
    out = [_PTX_ASSERT_FILE.sub(r"\1[<file>];", ln) for ln in lines]
    for i, ln in enumerate(out):
        if "__assertfail" not in ln or not ln.lstrip().startswith("call"):
            continue
        for k in range(i - 1, max(i - 40, -1), -1):
            if out[k].lstrip().startswith("{"):  # the call sequence's start
                break
            m = _PTX_ASSERT_LINE.match(out[k])
            if m:
                out[k] = m.group(1) + "<line>;"
                break
    return out


def _ptx(text: str) -> list[str]:
    out: list[str] = []
    depth = 0  # inside a debug section's braces
    for ln in text.splitlines():
        if depth:
            depth += ln.count("{") - ln.count("}")
            continue
        if _PTX_DEBUG_SECTION.match(ln):
            depth = max(ln.count("{") - ln.count("}"), 0)
            if depth == 0 and "{" not in ln:
                depth = 1  # the brace opens on the next line
            continue
        if _PTX_DROP.match(ln):
            continue
        out.append(re.sub(r"\s*//.*$", "", ln).rstrip())
    return _ptx_asserts([ln for ln in out if ln])


def without_locations(stage: str, text: str) -> list[str]:
    """The lines of one stage's text with what only says where the source was taken out
    (see the module); stages other than TTIR, TTGIR, LLIR and PTX are returned as lines."""
    if stage in (TTIR, TTGIR):
        return _mlir(text)
    if stage == LLIR:
        return _llvm(text)
    if stage == PTX:
        return _ptx(text)
    return text.splitlines()


@dataclass(frozen=True)
class Difference:
    """One way two captures differ."""

    what: str
    """A stage name, or ``registers``, ``spills``, ``shared``."""
    detail: str
    """One line: the first differing lines, or the two numbers."""

    def __str__(self) -> str:
        return f"{self.what}: {self.detail}"


def stage_difference(stage: str, a: str, b: str) -> Difference | None:
    """The first difference of two texts of ``stage`` up to locations (and, for MLIR,
    value names), or None."""
    x, y = without_locations(stage, a), without_locations(stage, b)
    if stage in (TTIR, TTGIR):  # compared by position, shown with their own names
        cx, cy = _positional(x), _positional(y)
    else:
        cx, cy = x, y
    if cx == cy:
        return None
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, cx, cy, autojunk=False).get_opcodes():
        if tag != "equal":
            left = x[i1] if i1 < i2 else "(nothing)"
            right = y[j1] if j1 < j2 else "(nothing)"
            return Difference(stage, f"line {i1 + 1}: {left.strip()[:120]!r} vs {right.strip()[:120]!r}")
    return Difference(stage, "texts differ")  # unreachable: unequal lists have a non-equal opcode


def compile_differences(a: "Capture", b: "Capture",
                        stages: tuple[str, ...] = COMPARED_STAGES) -> list[Difference]:
    """How captures ``a`` and ``b`` differ as compiles: each of ``stages`` up to
    locations (a stage only one of them holds counts as a difference), then registers,
    spills and shared memory. Empty when they are the same compile."""
    out: list[Difference] = []
    for st in stages:
        has_a, has_b = st in a.stages, st in b.stages
        if not (has_a or has_b):
            continue
        if has_a != has_b:
            out.append(Difference(st, f"only in capture #{a.id if has_a else b.id}"))
            continue
        ta, tb = a.stage(st).text, b.stage(st).text
        if not isinstance(ta, str) or not isinstance(tb, str):
            continue
        d = stage_difference(st, ta, tb)
        if d is not None:
            out.append(d)
    ra, rb = a.resources, b.resources
    for what, x, y in (("registers", ra.registers, rb.registers), ("spills", ra.spills, rb.spills),
                       ("shared", ra.shared, rb.shared)):
        if x != y:
            out.append(Difference(what, f"{x} vs {y}"))
    return out
