"""Triton's compiler remarks, read from what a compile wrote to stderr.

With ``MLIR_ENABLE_DIAGNOSTICS=remarks`` (Triton 3.6 and later) MLIR's diagnostic
handler prints each remark, warning and error a pass emits, tied to the source
position of the op it is about::

    /work/k.py:7:19: remark: Warning: vectorization fails vec = 1 origin vec = 1 numElems = 8 mask is 1

        return tl.load(p + offs, mask=mask)
                      ^
    /work/k.py:13:28: note: called from
        x = helper(x_ptr, offs, mask)
                               ^

The source snippet and caret lines are MLIR's rendering and are skipped; a
``note: called from`` extends the position of the diagnostic before it with a call
site (the op was inlined from a helper); any other note is kept as that
diagnostic's note. The capture reads these lines out of the compile's stderr
between the pass dumps, so each one also knows the stage being compiled and the
pass whose dump came last before it (the pass that emitted it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

REMARKS_MIN_TRITON = (3, 6)
"""The first Triton whose ``MLIR_ENABLE_DIAGNOSTICS`` takes ``remarks`` and prints each
remark with its source position (3.2 prints bare texts with ``=1``, 3.0 nothing). The
capture child (stdlib-only) applies the same bound itself: irscope_child_hook._enable_remarks."""

# Capture states, stored per capture (``captures.remarks`` in the bundle).
RECORDED = "recorded"
"""Remarks were on for the compile: an empty list means Triton emitted none."""
OFF = "off"
"""The run turned them off (``irscope run --no-remarks``)."""
UNSUPPORTED = "unsupported"
"""The capturing Triton cannot print remarks with their positions."""

# A diagnostic's first line. Its severity is MLIR's own word: remark, warning or
# error are kept; a note belongs to the diagnostic before it.
_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\n]*?):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<severity>remark|warning|error|note): ?(?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class Remark:
    """One diagnostic a Triton pass emitted during a compile."""

    file: str
    """Path as the compiler printed it (the Python file of the op's location)."""
    line: int
    """1-based source line; 0 when the op had no known location."""
    column: int
    """Column as printed (conventions differ between Triton versions)."""
    severity: str
    """``remark``, ``warning`` or ``error``."""
    text: str
    """The message as Triton wrote it (trailing blanks removed)."""
    pass_name: str | None
    """The pass that emitted it: the pass whose dump the compile printed last before
    it, in the same stage; None where no pass dump came before it."""
    stage: str | None
    """The stage being compiled (``ttir``, ``ttgir``, ``llir``...); None outside any
    stage (the frontend)."""
    called_from: tuple[tuple[str, int, int], ...] = ()
    """(file, line, column) of each call site, innermost first, when the op was
    inlined from a ``@triton.jit`` helper."""
    notes: tuple[str, ...] = ()
    """The notes Triton attached (``Target compute capability (90) supports MMA v3.``)."""

    def to_json(self) -> dict:
        """A plain-JSON form (the CLI's ``--json`` and the bundle's row)."""
        return {"file": self.file, "line": self.line, "column": self.column, "severity": self.severity,
                "text": self.text, "pass": self.pass_name, "stage": self.stage,
                "called_from": [list(c) for c in self.called_from], "notes": list(self.notes)}


@dataclass(slots=True)
class _Open:
    head: re.Match
    stage: str | None
    pass_name: str | None
    calls: list[tuple[str, int, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def close(self) -> Remark:
        m = self.head
        return Remark(m["file"], int(m["line"]), int(m["col"] or 0), m["severity"], m["text"].rstrip(),
                      self.pass_name, self.stage, tuple(self.calls), tuple(self.notes))


def parse_diagnostics(lines: Iterable[tuple[str, str | None, str | None]]) -> list[Remark]:
    """The diagnostics in stderr ``lines``, each given as (text, stage, pass in effect).

    Lines that are neither a diagnostic nor a note (source snippets, carets, pass
    dumps, anything the script printed) are passed over, so the input may be the
    whole stray text of a compile."""
    out: list[Remark] = []
    current: _Open | None = None
    for text, stage, pass_name in lines:
        m = _DIAGNOSTIC.match(text.rstrip("\r\n"))
        if m is None:
            continue
        if m["severity"] == "note":
            if current is None:
                continue
            if m["text"].strip() == "called from":
                current.calls.append((m["file"], int(m["line"]), int(m["col"] or 0)))
            else:
                current.notes.append(m["text"].rstrip())
            continue
        if current is not None:
            out.append(current.close())
        current = _Open(m, stage, pass_name)
    if current is not None:
        out.append(current.close())
    return out
