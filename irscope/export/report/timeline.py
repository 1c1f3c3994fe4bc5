"""The pass timeline of one capture as a report shows it: every pass with what it
changed (the provenance counts of :class:`irscope.link.provenance.PassChange`),
and, for each pass that changed the IR, the structural diff of the snapshot
before it against the one after it (:func:`irscope.diff.compare.step_passes`).

Snapshots are not embedded (the samples' 52 MB of pass text would not make a
report of a few MB); their diffs are, capped per pass."""

from __future__ import annotations

from dataclasses import dataclass

from irscope.core import Capture
from irscope.diff.compare import step_passes
from irscope.irdiff.model import Change, StageDiff

MAX_CHANGES = 200
"""Changes embedded per pass (the total is always given)."""
MAX_TEXT = 400
"""Characters kept of an op's text in a change."""


@dataclass(frozen=True, slots=True)
class PassStep:
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
    ops_before: int
    ops_after: int
    diff: StageDiff | None
    """The snapshot diff (None: unchanged, or the stage's last pass, whose result is
    the stage text rather than a snapshot)."""

    def to_json(self) -> dict:
        out = {"index": self.index, "stage": self.stage, "name": self.name, "argument": self.argument,
               "seconds": self.seconds, "changed": self.changed, "added": self.added, "removed": self.removed,
               "modified": self.modified, "ops_before": self.ops_before, "ops_after": self.ops_after,
               "diff": None}
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


def timeline(capture: Capture) -> list[PassStep]:
    """Every pass of ``capture`` in order, with its snapshot diff where it has one."""
    diffs = {i: d for i, _, d in step_passes(capture)}
    out = []
    for p in capture.passes():
        c = p.changes
        out.append(PassStep(p.index, p.stage, p.name, p.argument, p.seconds, c.changed, c.added, c.removed,
                            c.modified, c.ops_before, c.ops_after, diffs.get(p.index)))
    return out
