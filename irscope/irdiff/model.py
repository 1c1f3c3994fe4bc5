"""What a diff returns: changes between two IR texts of one format, per stage."""

from __future__ import annotations

from dataclasses import dataclass, field

ADDED, REMOVED, MOVED, CHANGED = "added", "removed", "moved", "changed"
KINDS = (ADDED, REMOVED, MOVED, CHANGED)


@dataclass(frozen=True, slots=True)
class OpRef:
    """One op on one side: its line in that side's text, its text and name."""

    line: int
    text: str
    name: str

    def to_json(self) -> dict:
        return {"line": self.line, "text": self.text, "name": self.name}


@dataclass(frozen=True, slots=True)
class Change:
    """One difference between the two sides, in words a person reads."""

    kind: str
    """``added``, ``removed``, ``moved`` or ``changed``."""
    op: str
    """The op's name (the new side's, for a changed op)."""
    before: OpRef | None
    after: OpRef | None
    details: tuple[str, ...] = ()
    """What differs: ``operands: %a, %b -> %b, %a``, ``layout: sizePerThread [1, 8] -> [1, 4]``..."""
    python_line: int | None = None
    """The Python line of the op (the new side's, else the old side's)."""

    def to_json(self) -> dict:
        return {"kind": self.kind, "op": self.op, "before": self.before.to_json() if self.before else None,
                "after": self.after.to_json() if self.after else None, "details": list(self.details),
                "python_line": self.python_line}


@dataclass(frozen=True, slots=True)
class StageDiff:
    """The diff of one stage (or of two files of one format)."""

    stage: str
    matched: int
    """Op pairs equal up to renaming."""
    changes: tuple[Change, ...]
    ops_by_dialect_before: dict[str, int] = field(default_factory=dict)
    ops_by_dialect_after: dict[str, int] = field(default_factory=dict)
    pairs: tuple[tuple[int, int], ...] = ()
    """(line before, line after) of every aligned op pair, in order: for rendering
    the aligned texts side by side."""
    note: str | None = None
    """Set when the diff could not be structural (and says what was done instead)."""

    def count(self, kind: str) -> int:
        return sum(1 for c in self.changes if c.kind == kind)

    @property
    def added(self) -> int:
        return self.count(ADDED)

    @property
    def removed(self) -> int:
        return self.count(REMOVED)

    @property
    def moved(self) -> int:
        return self.count(MOVED)

    @property
    def changed(self) -> int:
        return self.count(CHANGED)

    @property
    def identical(self) -> bool:
        return not self.changes

    def to_json(self) -> dict:
        """The per-stage object of ``irscope diff --json``."""
        return {"matched": self.matched, "added": self.added, "removed": self.removed, "moved": self.moved,
                "changed": self.changed, "changes": [c.to_json() for c in self.changes],
                "ops_by_dialect": {"before": self.ops_by_dialect_before, "after": self.ops_by_dialect_after},
                "note": self.note}
