"""Triton's remarks for a capture, and the Python line each one belongs to.

    rs = irscope.open("k.irscope").capture("kernel").remarks()
    if rs.available:
        for r in rs.at_line(27):
            print(r.severity, r.text, r.pass_name)
    else:
        print(rs.why_not)

A remark belongs to a Python line by the rule every op follows
(:mod:`irscope.ir.python_lines`): its innermost user frame. A remark about an op
inlined from a ``@triton.jit`` helper stays on the helper's line (its file and
line); ``call_sites`` also counts it on the line that called the helper, as
``show`` does with ops.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscope.compiler.remarks import OFF, RECORDED, REMARKS_MIN_TRITON, UNSUPPORTED, Remark
from irscope.ir.model import Frame, Location
from irscope.ir.python_lines import line_match

if TYPE_CHECKING:
    from irscope.core.capture import Capture

__all__ = ["Remark", "RemarkSet", "remark_location", "remarks_of"]

_MIN = ".".join(map(str, REMARKS_MIN_TRITON))


def remark_location(remark: Remark) -> Location:
    """The remark's position as an op location: its own frame, then its call sites."""
    frames = (Frame(remark.file, remark.line, remark.column),
              *(Frame(f, ln, col) for f, ln, col in remark.called_from))
    return Location(frames, "callsite" if remark.called_from else "file")


@dataclass(frozen=True)
class RemarkSet:
    """The remarks of one capture, or why there are none to show."""

    available: bool
    """Whether the compile was made with remarks on (then ``items`` is complete,
    possibly empty: Triton emitted none)."""
    why_not: str | None
    """Why remarks are not available (None when they are)."""
    items: tuple[Remark, ...]
    """Remarks, warnings and errors, in the order the compile emitted them."""

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def at_line(self, line: int | Collection[int], file: str | None = None,
                call_sites: bool = False) -> tuple[Remark, ...]:
        """The remarks that belong to ``line`` (one line, or a statement's lines) of
        ``file`` (the kernel's file when a Capture asks; None: any file), by the
        innermost-user-frame rule; ``call_sites`` adds those about ops inlined from a
        helper called there."""
        return tuple(r for r in self.items if line_match(remark_location(r), line, file, call_sites))

    def by_line(self) -> dict[tuple[str, int], tuple[Remark, ...]]:
        """(file, line) of each remark's innermost user frame -> its remarks, in
        order; remarks with no user frame (every frame in Triton's library, or no
        position) are left out: :meth:`unplaced` lists them."""
        out: dict[tuple[str, int], list[Remark]] = {}
        for r in self.items:
            user = remark_location(r).user_frame()
            if user is not None and user.line:
                out.setdefault((user.file, user.line), []).append(r)
        return {k: tuple(v) for k, v in out.items()}

    def unplaced(self) -> tuple[Remark, ...]:
        """The remarks no Python line owns (no position, or only library frames)."""
        placed = {id(r) for rs in self.by_line().values() for r in rs}
        return tuple(r for r in self.items if id(r) not in placed)

    def to_json(self) -> dict:
        """``{"available", "why_not", "remarks": [...]}``."""
        return {"available": self.available, "why_not": self.why_not,
                "remarks": [r.to_json() for r in self.items]}


def why_not(status: str | None, triton_version: str | None) -> str | None:
    """The sentence for a capture's remark status (None: they are available)."""
    if status == RECORDED:
        return None
    if status == OFF:
        return "remarks not recorded: captured with --no-remarks"
    if status == UNSUPPORTED:
        return (f"remarks not available: Triton {triton_version or '(unknown version)'} does not print them "
                f"(MLIR_ENABLE_DIAGNOSTICS=remarks needs Triton {_MIN} or later)")
    return "remarks not recorded: captured by an irscope that did not record them"


def remarks_of(cap: "Capture") -> RemarkSet:
    """The remarks of a capture (read once per capture, cached)."""
    def read() -> RemarkSet:
        status, items = cap._store().remarks(cap.id)
        reason = why_not(status, cap.triton_version)
        return RemarkSet(reason is None, reason, tuple(items))
    return cap._memo("remarks", read)
