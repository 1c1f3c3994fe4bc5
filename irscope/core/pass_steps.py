"""What pass N did: one :class:`PassStep` per pass snapshot, with one change model.

Every view of a capture's passes reads these (``irscope passes``, ``passes
--origins``, ``diff --passes``, ``export --pass``, the report's timeline, the
pipeline picture, the app's stepper), so a pass has one answer everywhere:

- its two sides (which snapshot or stage text holds the IR before and after it)
  and its parent, by the one rule of :mod:`irscope.compiler.pass_order`;
- its counts, from the structural IR diff of those two texts
  (:func:`irscope.irdiff.engine.diff_modules`): ops added, removed, moved and
  changed (``modified`` in JSON);
- the op-form counts of :mod:`irscope.link.provenance` as a detail
  (:attr:`PassStep.forms`: which op names it introduced or erased, op totals).

The diff of a step is computed when first asked for, once per capture
(:meth:`irscope.core.Capture.step_diff`), so views that need only some steps (one
stage, one pass) pay for those. Its counts alone
(:meth:`irscope.core.Capture.step_counts`, what a table of every pass reads) come
from the same pairing without making the changes
(:func:`irscope.irdiff.engine.diff_counts`), or from the diff when it is made already.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from irscope.compiler.pass_order import Side, StepPlace
from irscope.irdiff.engine import diff_counts, diff_modules
from irscope.irdiff.model import ADDED, CHANGED, MOVED, REMOVED, OpRef, StageDiff
from irscope.ir import Module
from irscope.link.provenance import PassChange
from irscope.store.bundle import PassRow


@dataclass(frozen=True, slots=True)
class StepCounts:
    """What a pass changed, by the structural diff's kinds."""

    added: int = 0
    removed: int = 0
    moved: int = 0
    changed: int = 0

    @classmethod
    def of(cls, d: StageDiff) -> StepCounts:
        """The counts of one diff."""
        return cls(d.added, d.removed, d.moved, d.changed)

    @property
    def total(self) -> int:
        """Number of changes."""
        return self.added + self.removed + self.moved + self.changed

    def to_json(self) -> dict:
        return {"added": self.added, "removed": self.removed, "moved": self.moved, "changed": self.changed}


NO_CHANGE = StepCounts()


class PassHeader:
    """The header fields of a pass, read off its stored row: shared by
    :class:`PassStep` and :class:`irscope.core.passes.Pass`."""

    row: PassRow

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def stage(self) -> str:
        return self.row.stage

    @property
    def kind(self) -> str:
        """Snapshot kind: ``mlir``, ``llvm`` or ``mir``."""
        return self.row.kind

    @property
    def argument(self) -> str:
        return self.row.argument

    @property
    def when(self) -> str:
        """The dump's own word: ``before``, ``after``, ``after-failed`` or ``internal``."""
        return self.row.when

    @property
    def seconds(self) -> float | None:
        """The pass's time from MLIR's or LLVM's timing report, when one names it."""
        return self.row.seconds


@dataclass(eq=False)
class PassStep(PassHeader):
    """What one pass did: its place (sides, parent, depth), its structural counts,
    and its op-form detail."""

    index: int
    """Position in the capture's pass list (0-based; what ``--pass N`` takes)."""
    row: PassRow
    """The stored header (stage, kind, when, name, argument, anchor, seconds...)."""
    place: StepPlace
    forms: PassChange
    """The op-form detail: op-form counts (``added``/``removed``/``modified`` of op
    forms), op totals before and after, op names introduced and erased."""
    _diff: Callable[[], StageDiff | None] = field(repr=False)
    _counts: Callable[[], StepCounts] | None = field(default=None, repr=False)
    """The counts of ``_diff`` made without its changes (None: read them off the diff)."""

    @property
    def anchor(self) -> str:
        """The op the pass ran on: ``builtin.module``, ``tt.func`` (a nested run),
        LLVM's ``module`` or ``function``."""
        return self.row.anchor

    # -- place -----------------------------------------------------------------
    @property
    def snapshot(self) -> str:
        """Which side of the pass its snapshot holds: ``before`` or ``after``."""
        return self.place.snapshot

    @property
    def before(self) -> Side | None:
        return self.place.before

    @property
    def after(self) -> Side | None:
        return self.place.after

    @property
    def parent(self) -> int | None:
        """Index of the pass this one ran inside (None: top level)."""
        return self.place.parent

    @property
    def depth(self) -> int:
        return self.place.depth

    @property
    def internal(self) -> bool:
        """A snapshot printed from inside a pass (the pipeliner's steps)."""
        return self.forms.internal

    @property
    def top_level(self) -> bool:
        """A pass of the stage's own pipeline: what sums and origins count."""
        return self.depth == 0

    # -- change ----------------------------------------------------------------
    @property
    def after_known(self) -> bool:
        """Both sides are kept in a comparable form (else the counts are 0)."""
        return self.place.before is not None and self.place.after is not None and self.forms.after_known

    @property
    def changed(self) -> bool:
        """The IR after the pass differs from the IR before it (any byte of the op
        text; an LLVM dump of one function against one of the whole module only by
        its ops)."""
        return self.forms.changed

    @property
    def diff(self) -> StageDiff | None:
        """The structural diff of the two sides (None when one side is unknown or
        the pass changed nothing)."""
        return self._diff() if self.changed and self.after_known else None

    @property
    def text_diff(self) -> StageDiff | None:
        """The structural diff whenever the two texts differ, even when no op did (an
        LLVM dump of one function against one of the module): what origins follow
        op lines through. None when a side is unknown or the texts are equal."""
        return self._diff() if self.after_known else None

    @property
    def counts(self) -> StepCounts:
        """Added, removed, moved, changed ops (all 0 when unchanged or unknown)."""
        if not (self.changed and self.after_known):
            return NO_CHANGE
        if self._counts is not None:
            return self._counts()
        d = self._diff()
        return StepCounts.of(d) if d is not None else NO_CHANGE

    @property
    def ops_before(self) -> int:
        return self.forms.ops_before

    @property
    def ops_after(self) -> int:
        return self.forms.ops_after

    def effect(self, unknown: str = "?", attrs: str = "attrs", minus: str = "-", grouped: bool = False) -> str:
        """``+a -r ~c >m`` (only the non-zero ones), ``unchanged``, ``attrs`` (only
        text outside the ops changed) or ``?`` (unknown). Views word the two odd cases
        and the minus sign their own way, and ``grouped`` puts thousands separators in."""
        if not self.after_known:
            return unknown
        if not self.changed:
            return "unchanged"
        c = self.counts

        def n(v: int) -> str:
            return f"{v:,}" if grouped else str(v)

        parts = [f"+{n(c.added)}" if c.added else "", f"{minus}{n(c.removed)}" if c.removed else "",
                 f"~{n(c.changed)}" if c.changed else "", f">{n(c.moved)}" if c.moved else ""]
        return " ".join(x for x in parts if x) or attrs

    def to_json(self) -> dict:
        """The ``irscope passes --json`` object (docs/cli-json.md)."""
        c = self.counts
        f = self.forms
        return {
            "index": self.index, "stage": self.stage, "name": self.name, "argument": self.argument,
            "when": self.when, "kind": self.kind, "internal": self.internal, "after_known": self.after_known,
            "changed": self.changed, "added": c.added, "removed": c.removed, "modified": c.changed,
            "moved": c.moved, "ops_by_dialect": f.ops_by_dialect, "ops_before": f.ops_before,
            "ops_after": f.ops_after, "introduces": f.introduces, "erases": f.erases, "seconds": self.seconds,
            "snapshot": self.snapshot, "before": self.before.to_json() if self.before else None,
            "after": self.after.to_json() if self.after else None, "parent": self.parent, "depth": self.depth,
            "forms": {"added": f.added, "removed": f.removed, "modified": f.modified},
        }


def step_diff(before: Module, after: Module, stage: str, *, one_function: bool = False) -> StageDiff:
    """The structural diff of a pass's two sides, parsed as ``stage`` (``mlir`` or
    ``llir``). ``one_function``: one side is an LLVM dump of one function and the
    other of the whole module, so only the functions both print are compared."""
    d = diff_modules(before, after, stage)
    return common_functions(d, before, after) if one_function else d


def step_counts(before: Module, after: Module, stage: str) -> StepCounts:
    """The counts of :func:`step_diff` of two whole modules (not ``one_function``),
    without making its changes."""
    c = diff_counts(before, after, stage)
    return StepCounts(c[ADDED], c[REMOVED], c[MOVED], c[CHANGED])


def common_functions(d: StageDiff, a: Module, b: Module) -> StageDiff:
    """``d`` without the changes outside the functions both modules print
    (declarations, globals, functions only one side printed)."""
    both = {f.name for f in a.functions} & {f.name for f in b.functions}

    def outside(m: Module) -> set[int]:
        lines = {op.line for op in m.globals}
        for f in m.functions:
            if f.name not in both:
                lines.add(f.line)
                lines.update(op.line for op in f.ops())
        return lines

    out_a, out_b = outside(a), outside(b)
    keep = tuple(c for c in d.changes if not ((c.before is not None and c.before.line in out_a)
                                              or (c.after is not None and c.after.line in out_b)))
    return replace(d, changes=keep) if len(keep) != len(d.changes) else d


def marks_of(d: StageDiff) -> tuple[dict[int, str], tuple[OpRef, ...]]:
    """Change kind (``added``, ``changed``, ``moved``) per 0-based line of the
    *after* text, and the removed ops (their lines are in the *before* text, so
    they are returned apart rather than spliced into a text the engine numbered)."""
    marks: dict[int, str] = {}
    removed = []
    for c in d.changes:
        if c.kind == REMOVED:
            if c.before is not None:
                removed.append(c.before)
            continue
        if c.after is not None and c.after.line > 0 and c.kind in (ADDED, CHANGED, MOVED):
            marks[c.after.line - 1] = c.kind
    return marks, tuple(removed)


def line_map(d: StageDiff) -> dict[int, int]:
    """Line before -> line after of every op the diff pairs (matched, changed, moved)."""
    out = dict(d.pairs)
    for c in d.changes:
        if c.kind == MOVED and c.before is not None and c.after is not None:
            out[c.before.line] = c.after.line
    return out
