"""The change list of one stage diff: its changes in the new side's order, with the
unchanged ops between them folded into runs, counted.

``irscope diff`` prints it and the app's diff screens draw it, so both show one
answer: the same changes, the same folds, the same counts. A removed op has no line
on the new side; it sits after the new partner of the nearest unchanged op above it
(where the engine sorts it), so the runs around it are split there.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from irscope.irdiff.model import Change, StageDiff


@dataclass(frozen=True, slots=True)
class Fold:
    """A run of ops that both sides share unchanged, folded."""

    pairs: tuple[tuple[int, int], ...]
    """(line before, line after) of each op of the run, in the new side's order."""

    @property
    def count(self) -> int:
        """How many ops the run holds."""
        return len(self.pairs)


@dataclass(frozen=True, slots=True)
class ChangeItem:
    """One change of the list, with its number (1-based, in list order)."""

    change: Change
    number: int


Item = Fold | ChangeItem


@dataclass(frozen=True, slots=True)
class ChangeList:
    """One stage diff as a person reads it."""

    stage: str
    items: tuple[Item, ...]
    """Folds and changes, in the new side's order."""
    total: int
    """How many changes the diff has (``items`` holds ``shown`` of them)."""
    note: str | None = None
    """The diff's note (set when it could not be structural)."""

    @property
    def changes(self) -> list[ChangeItem]:
        """The changes listed."""
        return [i for i in self.items if isinstance(i, ChangeItem)]

    @property
    def folds(self) -> list[Fold]:
        """The folded runs listed."""
        return [i for i in self.items if isinstance(i, Fold)]

    @property
    def shown(self) -> int:
        """How many changes are listed."""
        return len(self.changes)

    @property
    def left_out(self) -> int:
        """How many changes a limit left out."""
        return self.total - self.shown


def change_position(c: Change, rows: list[tuple[int, int]], olds: list[int]) -> float | None:
    """Where a change sits in the new side's order: its new line; a removed op, just
    after the new partner of the nearest paired op above it (``rows``: the diff's
    pairs sorted by old line, ``olds`` their old lines); None for a change with no
    line (an encoding alias)."""
    if c.after is not None:
        return float(c.after.line) if c.after.line else None
    if c.before is None or not c.before.line:
        return None
    k = bisect_right(olds, c.before.line) - 1
    return rows[k][1] + 0.5 if k >= 0 else 0.5


def change_list(d: StageDiff, limit: int | None = None) -> ChangeList:
    """The changes of ``d`` (the first ``limit`` of them; None: all) with the unchanged
    runs before, between and after them folded (a diff with no change: one run of
    every op). The run after the last change listed is there only when no change
    was left out (it would hide them)."""
    rows = sorted(d.pairs)
    olds = [r[0] for r in rows]
    by_new = sorted(d.pairs, key=lambda p: p[1])
    new_lines = [p[1] for p in by_new]
    shown = d.changes if limit is None else d.changes[:limit]
    items: list[Item] = []
    done = 0  # new-side lines below this are listed (folded or changed)
    for n, c in enumerate(shown, 1):
        pos = change_position(c, rows, olds)
        if pos is not None:
            lo, hi = bisect_left(new_lines, done), bisect_left(new_lines, pos)
            if hi > lo:
                items.append(Fold(tuple(by_new[lo:hi])))
            done = max(done, int(pos) + 1)
        items.append(ChangeItem(c, n))
    if len(shown) == len(d.changes):
        lo = bisect_left(new_lines, done)
        if lo < len(by_new):
            items.append(Fold(tuple(by_new[lo:])))
    return ChangeList(d.stage, tuple(items), len(d.changes), d.note)
