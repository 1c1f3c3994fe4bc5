"""The "hide ``#loc``" display filter of the stage panes.

MLIR stages (TTIR, TTGIR) print a location table (``#loc12 = loc("k.py":34:20)``,
often a third of the text, much of it at the top) and end ops with a ``loc(#loc12)``
suffix. A reader of the IR wants the ops: with the filter on, the table lines are hidden
and the suffixes left out (:meth:`irscope.tui.widgets.ir_view.IRView.set_filter`). The
lines keep their numbers, so op links, marks and jumps are unchanged.

Only MLIR shapes match: LLVM IR, PTX and SASS lines pass through as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from irscope.ir.forms import loc_group_end

_LOC_LINE = re.compile(r"\s*#loc[\w$.-]*\s*=\s*loc\(")
# A location group starts a word: after a space or at the start of the line, never the
# tail of a name (``@alloc(``, ``%loc(``).
_LOC_START = re.compile(r"(?:(?<=\s)|^)loc\(")


def is_loc_line(line: str) -> bool:
    """Whether ``line`` is an MLIR location alias definition (``#loc3 = loc(...)``)."""
    # Most lines fail the cheap test (the table is at module level: no indent).
    return (line.startswith("#loc") or (line[:1].isspace() and line.lstrip().startswith("#loc"))) \
        and _LOC_LINE.match(line) is not None


def loc_filter(hide: bool) -> tuple[Callable[[str], bool] | None, Callable[[str], str] | None]:
    """The ``(hide, rewrite)`` pair of ``IRView.set_filter`` for the setting ``hide``
    (the app's ``hide_loc``): these rules, or none."""
    return (is_loc_line, strip_loc) if hide else (None, None)


def strip_loc(line: str) -> str:
    """``line`` without its ``loc(...)`` groups (an op's location suffix, a function
    argument's ``loc("a_ptr"(#loc))``), trailing spaces trimmed; other lines as they are."""
    if "loc(" not in line:
        return line
    out: list[str] = []
    i = 0
    for m in _LOC_START.finditer(line):
        if m.start() < i:  # inside a group already removed
            continue
        out.append(line[i:m.start()].rstrip(" "))
        i = loc_group_end(line, m.start())
    if not out:
        return line
    out.append(line[i:])
    return "".join(out).rstrip()
