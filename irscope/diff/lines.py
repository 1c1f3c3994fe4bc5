"""Per-Python-line deltas: for every statement of the kernel (by its first line), how
many ops of each stage belong to it on side A and on side B, by the core's rule
(:meth:`irscope.core.Capture.ops_by_line`: an op belongs to the line of its innermost
user frame, and a statement spanning lines owns the ops of all of them).

Each stage is read in one pass over its ops (the core's per-line index), not one
``ops_at_line`` per line: a kernel of 200 lines costs five walks, not a thousand.
Lines are matched by number. That is exact when both captures compiled the same
file (one kernel across Triton versions or configs); across two files (a renamed
or edited kernel) numbers may name different code, and :func:`line_note` says so.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from irscope.compiler.stages import LOWERING
from irscope.core import Capture
from irscope.diff.metadata import CountDelta
from irscope.ir.python_lines import same_file

LINE_STAGES = LOWERING


@dataclass(frozen=True, slots=True)
class LineDelta:
    """One Python line whose op count changed in at least one stage."""

    line: int
    text: str | None
    """The line's source (side B's, else side A's; None when neither has it)."""
    counts: tuple[CountDelta, ...]
    """Per stage (``name`` is the stage), in the order asked: ops before and after,
    for every stage both captures hold, changed or not."""
    text_before: str | None = None
    """Side A's source of the line when it differs from ``text`` (two files, or an
    edited kernel); None when it is the same."""

    def count(self, stage: str) -> CountDelta | None:
        """The counts of one stage."""
        return next((c for c in self.counts if c.name == stage), None)

    @property
    def changed_stages(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.counts if c.changed)

    def to_json(self) -> dict:
        return {"line": self.line, "text": self.text, "text_before": self.text_before,
                "counts": {c.name: {"before": c.before, "after": c.after, "delta": c.delta} for c in self.counts}}


def line_counts(capture: Capture, stage: str) -> Counter:
    """Python statement (its first line) -> number of ``stage`` ops that belong to it
    (ops of no line, or of a line in another file, left out)."""
    return Counter({n: len(ops) for n, ops in capture.ops_by_line(stage).items()})


def line_deltas(a: Capture, b: Capture,
                stages: tuple[str, ...] = LINE_STAGES) -> list[LineDelta]:
    """Every Python line whose op count differs between ``a`` and ``b`` in some
    stage (of ``stages`` that both captures hold), in line order."""
    both = [s for s in stages if s in a.stages and s in b.stages]
    per_stage = {s: (line_counts(a, s), line_counts(b, s)) for s in both}
    lines = sorted({n for ca, cb in per_stage.values() for n in (*ca, *cb)})
    out = []
    for n in lines:
        counts = tuple(CountDelta(s, per_stage[s][0].get(n, 0), per_stage[s][1].get(n, 0)) for s in both)
        if not any(c.changed for c in counts):
            continue
        text_a, text_b = a.source.line(n), b.source.line(n)
        text = text_b if text_b is not None else text_a
        out.append(LineDelta(n, text, counts, text_a if text_a != text else None))
    return out


def line_note(a: Capture, b: Capture) -> str | None:
    """A sentence for the report when lines are matched by number across two
    different kernel files (or sources); None when both compiled the same file."""
    fa, fb = a.file, b.file
    if fa != fb and not (fa and fb and same_file(fa, fb)):  # one path printed relative, one absolute
        return f"the kernels come from two files ({fa} and {fb}): Python lines are compared by number"
    if a.source.text is not None and b.source.text is not None and \
            (a.source.text, a.source.first_line) != (b.source.text, b.source.first_line):
        return f"the kernel's source in {fa} differs between the captures: Python lines are compared by number"
    return None
