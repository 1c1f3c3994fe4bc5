"""The pass timeline of one capture as a report shows it: every pass with what it
changed, read from the core's pass steps (:class:`irscope.core.pass_steps.PassStep`:
the structural counts and diff of the IR before and after the pass, the same ones
``irscope passes`` and ``diff --passes`` print).

Snapshots are not embedded (the samples' 52 MB of pass text would not make a
report of a few MB); their diffs are, capped per pass."""

from __future__ import annotations

from dataclasses import dataclass

from irscope.core import Capture
from irscope.irdiff.model import Change, StageDiff

MAX_CHANGES = 200
"""Changes embedded per pass (the total is always given)."""
MAX_TEXT = 400
"""Characters kept of an op's text in a change."""


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One pass of the timeline."""

    index: int
    stage: str
    name: str
    argument: str
    seconds: float | None
    changed: bool
    added: int
    removed: int
    modified: int
    """Changed ops (the structural diff's ``changed``)."""
    ops_before: int
    ops_after: int
    diff: StageDiff | None
    """The diff of the IR before and after the pass (None: unchanged, or one side
    not kept in a comparable form)."""
    moved: int = 0
    depth: int = 0
    parent: int | None = None
    after_known: bool = True

    def to_json(self) -> dict:
        out = {"index": self.index, "stage": self.stage, "name": self.name, "argument": self.argument,
               "seconds": self.seconds, "changed": self.changed, "added": self.added, "removed": self.removed,
               "modified": self.modified, "moved": self.moved, "ops_before": self.ops_before,
               "ops_after": self.ops_after, "depth": self.depth, "parent": self.parent,
               "after_known": self.after_known, "diff": None}
        if self.diff is not None:
            d = self.diff
            out["diff"] = {"added": d.added, "removed": d.removed, "moved": d.moved, "changed": d.changed,
                           "matched": d.matched, "total": len(d.changes), "note": d.note,
                           "changes": [change_json(c) for c in d.changes[:MAX_CHANGES]]}
        return out


def _clip(text: str | None) -> str | None:
    if text is None:
        return None
    text = text.strip()
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " …"


def change_json(c: Change) -> dict:
    """One change, compact: kind, op, the two sides' lines and (clipped) texts."""
    return {"kind": c.kind, "op": c.op, "python_line": c.python_line, "details": list(c.details),
            "before": None if c.before is None else {"line": c.before.line, "text": _clip(c.before.text)},
            "after": None if c.after is None else {"line": c.after.line, "text": _clip(c.after.text)}}


def timeline(capture: Capture) -> list[TimelineEntry]:
    """Every pass of ``capture`` in order, with its diff where it changed the IR."""
    out = []
    for s in capture.pass_steps():
        c = s.counts
        out.append(TimelineEntry(s.index, s.stage, s.name, s.argument, s.seconds, s.changed, c.added, c.removed,
                            c.changed, s.ops_before, s.ops_after, s.diff, c.moved, s.depth, s.parent,
                            s.after_known))
    return out
