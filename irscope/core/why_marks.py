"""The "why" marks of a Python line, read from :meth:`irscope.core.Capture.explain`
(the explanation holds each fact; this module groups them by line and names them, once,
for every view).

A line's marks, in a fixed order (:data:`MARKS`): a global access narrower than its
layout allows, SASS spills, a layout conversion through shared memory, a loop that was
not software-pipelined, and Triton's remarks. The app shows them as the Python pane's
glyph column and the report in its per-line table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irscope.core.conversions import Conversion
    from irscope.core.explain import Explanation, Hint, LineExplanation
    from irscope.core.loops import Loop

NARROW, SPILL, SHARED_CONVERSION, NOT_PIPELINED, REMARK = "narrow", "spill", "smem", "unpipelined", "remark"


@dataclass(frozen=True, slots=True)
class Mark:
    """One kind of mark: its key, glyph and what it means."""

    key: str
    glyph: str
    meaning: str


MARKS: tuple[Mark, ...] = (
    Mark(NARROW, "n", "global access narrower than its layout allows"),
    Mark(SPILL, "s", "SASS spills (LDL/STL)"),
    Mark(SHARED_CONVERSION, "m", "layout conversion through shared memory"),
    Mark(NOT_PIPELINED, "p", "loop not pipelined"),
    Mark(REMARK, "r", "Triton remark"),
)
"""Every mark, in the order the views show them."""

GLYPHS: dict[str, str] = {m.key: m.glyph for m in MARKS}


def _on_statement(line: int | None, ln: "LineExplanation") -> bool:
    if line is None:
        return False
    return line == ln.line or line in ln.costs.statement_lines


def conversions_at(ex: "Explanation", ln: "LineExplanation") -> tuple["Conversion", ...]:
    """The conversions whose Python line is a line of ``ln``'s statement (a conversion
    names its line but not its file: one in a helper matches by line number)."""
    return tuple(c for c in ex.conversions if _on_statement(c.python_line, ln))


def loops_at(ex: "Explanation", ln: "LineExplanation") -> tuple["Loop", ...]:
    """The loops whose ``for`` statement is ``ln``'s."""
    return tuple(lp for lp in ex.loops if _on_statement(lp.line, ln))


def hints_at(ex: "Explanation", ln: "LineExplanation") -> tuple["Hint", ...]:
    """The hints the core ties to ``ln``'s statement (:attr:`Hint.line`)."""
    return tuple(h for h in ex.hints if _on_statement(h.line, ln))


def kernel_hints(ex: "Explanation") -> tuple["Hint", ...]:
    """The hints about the whole kernel (no line)."""
    return tuple(h for h in ex.hints if h.line is None)


def line_marks(ex: "Explanation", ln: "LineExplanation") -> tuple[str, ...]:
    """The keys of :data:`MARKS` that apply to ``ln``, in :data:`MARKS` order."""
    got = set()
    if any(a.narrow for a in ln.global_accesses):
        got.add(NARROW)
    if ln.spills > 0:
        got.add(SPILL)
    if any(c.via == "shared_memory" for c in conversions_at(ex, ln)):
        got.add(SHARED_CONVERSION)
    if any(not lp.pipelined for lp in loops_at(ex, ln)):
        got.add(NOT_PIPELINED)
    if ln.remarks:
        got.add(REMARK)
    return tuple(m.key for m in MARKS if m.key in got)


def kinds_present(ex: "Explanation") -> tuple[str, ...]:
    """The mark keys some line of ``ex`` has, in :data:`MARKS` order (a view shows a
    column per kind present, so a kernel with none takes no room)."""
    got = {k for ln in ex.lines for k in line_marks(ex, ln)}
    return tuple(m.key for m in MARKS if m.key in got)


def legend(kinds: tuple[str, ...]) -> str:
    """``why: n narrow access  s spills`` for the kinds shown ('' when none)."""
    short = {NARROW: "narrow access", SPILL: "spills", SHARED_CONVERSION: "smem conversion",
             NOT_PIPELINED: "not pipelined", REMARK: "remark"}
    if not kinds:
        return ""
    return "why: " + "  ".join(f"{GLYPHS[k]} {short[k]}" for k in kinds)
