"""What the pass stepper shows for one pass: the IR after it, marked with what it changed.

Pure functions over the core and the diff engine (no Textual), so they are tested and
timed without an app. A snapshot is the IR *before* its pass (Triton prints "Before"
dumps; LLVM "After" ones); which text holds the IR on each side of a pass follows the
rule of :func:`irscope.link.provenance.pass_changes`, so the stepper's marks and the
timeline's counts describe the same two texts:

- a ``before`` snapshot: after = the next non-internal ``before`` snapshot of its stage
  and kind, else the stage's output when it is printed in the same form;
- an ``after`` snapshot (LLVM): before = the previous ``after`` snapshot of the stage,
  else the output of the stage the pipeline started from;
- an ``internal`` snapshot (the pipeliner's own steps): before = the snapshot just
  before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.core import Capture
from irscope.core.passes import Pass
from irscope.irdiff.engine import diff_modules
from irscope.irdiff.model import ADDED, CHANGED, MOVED, REMOVED, OpRef, StageDiff
from irscope.ir import Module
from irscope.compiler.stages import STAGES

# Snapshot kind -> the stage name the diff engine parses and reports it as.
_DIFF_STAGE = {"mlir": "mlir", "llvm": "llir", "mir": "llir"}
# Snapshot kind -> IRView highlighting language.
_LANGUAGE = {"mlir": "mlir", "llvm": "llvm", "mir": None}
# Diff change kind -> IRView mark kind (a moved op is drawn as "linked": it is the same
# op, elsewhere).
MARK_OF = {ADDED: "added", REMOVED: "removed", CHANGED: "changed", MOVED: "linked"}


@dataclass(frozen=True, slots=True)
class Side:
    """Where the IR on one side of a pass is: a pass snapshot, or a stage's output."""

    pass_index: int | None = None
    stage: str | None = None

    @property
    def label(self) -> str:
        return f"snapshot {self.pass_index}" if self.pass_index is not None else f"{self.stage} output"


@dataclass(frozen=True, slots=True)
class PassStep:
    """One row of the stepper: a pass and the two texts that show what it did."""

    position: int
    """Position in the stage's timeline (0-based)."""
    pass_: Pass
    before: Side | None
    after: Side | None
    """None when that side is not kept in a comparable form (the last MLIR pass of
    llir, whose result is only printed as LLVM IR)."""


@dataclass(frozen=True, slots=True)
class StepView:
    """What the IR pane shows for one step, computed off the UI thread."""

    text: str
    language: str | None
    marks: dict[int, str]
    """0-based line -> mark kind, in ``text``."""
    removed: tuple[OpRef, ...]
    """Ops the pass removed (their lines are in the *before* text)."""
    diff: StageDiff | None
    """The engine's diff (None when one side is unknown)."""
    shows: str
    """Which side ``text`` is: ``after`` or ``before``."""
    note: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    """Changes by kind (added, removed, changed, moved)."""


def pass_steps(capture: Capture, stage: str) -> list[PassStep]:
    """Every pass of ``stage`` with the sides of its change."""
    passes = capture.passes()
    out = []
    for p in passes:
        if p.stage != stage:
            continue
        before, after = sides(capture, passes, p.index)
        out.append(PassStep(len(out), p, before, after))
    return out


def sides(capture: Capture, passes: list[Pass], i: int) -> tuple[Side | None, Side | None]:
    """(before, after) of pass ``i`` of the whole list ``passes``."""
    p = passes[i]
    if p.when == "internal":
        prev = passes[i - 1] if i > 0 else None
        ok = prev is not None and prev.stage == p.stage and prev.kind == p.kind
        return (Side(i - 1) if ok else None), Side(i)
    if p.when == "before":
        for q in passes[i + 1:]:
            if q.stage != p.stage:
                break
            if q.when == "internal" or q.kind != p.kind:
                continue
            return Side(i), (Side(q.index) if q.when == "before" else None)
        info = STAGES.get(p.stage)
        final = info is not None and info.passes_kind == p.kind and p.stage in capture.stages
        return Side(i), (Side(stage=p.stage) if final else None)
    # "after" / "after-failed": the snapshot is the IR after the pass
    for q in reversed(passes[:i]):
        if q.stage != p.stage:
            break
        if q.kind == p.kind and q.when in ("after", "after-failed"):
            return Side(q.index), Side(i)
    info = STAGES.get(p.stage)
    start = info.passes_input if info is not None else None
    if start and start in capture.stages:
        return Side(stage=start), Side(i)
    return None, Side(i)


def side_text(capture: Capture, passes: list[Pass], side: Side) -> str:
    if side.pass_index is not None:
        return passes[side.pass_index].text
    text = capture.stage(side.stage).text
    return text if isinstance(text, str) else text.decode("utf-8", "replace")


def side_module(capture: Capture, passes: list[Pass], side: Side) -> Module:
    if side.pass_index is not None:
        return passes[side.pass_index].module
    return capture.stage(side.stage).module


def step_view(capture: Capture, passes: list[Pass], step: PassStep) -> StepView:
    """The IR after the pass with its changes marked (or, when the IR after it is
    not kept comparably, the IR before it, unmarked, with a note saying so)."""
    p = step.pass_
    language = _LANGUAGE.get(p.kind)
    if step.after is None or step.before is None:
        side = step.before or step.after
        text = side_text(capture, passes, side) if side else ""
        missing = "after" if step.after is None else "before"
        note = f"the IR {missing} this pass is not kept in a comparable form: no changes are marked"
        return StepView(text, language, {}, (), None, "before" if step.after is None else "after", note)
    text = side_text(capture, passes, step.after)
    if not p.changed:
        return StepView(text, language, {}, (), None, "after", "this pass changed nothing",
                        {k: 0 for k in MARK_OF})
    d = diff_modules(side_module(capture, passes, step.before),
                     side_module(capture, passes, step.after), _DIFF_STAGE.get(p.kind, "mlir"))
    marks, removed = marks_of(d)
    counts = {k: d.count(k) for k in MARK_OF}
    note = "" if d.changes else "only text outside the ops changed (attributes, locations, aliases)"
    return StepView(text, language, marks, removed, d, "after", note, counts)


def marks_of(d: StageDiff) -> tuple[dict[int, str], tuple[OpRef, ...]]:
    """IRView marks (0-based lines of the *after* text) and the removed ops of a diff.

    Removed ops have no line in the after text: they are returned apart, for the
    stepper's "removed" list, rather than spliced into the text (which would shift
    every line the engine numbered).
    """
    marks: dict[int, str] = {}
    removed = []
    for c in d.changes:
        if c.kind == REMOVED:
            if c.before is not None:
                removed.append(c.before)
            continue
        if c.after is not None and c.after.line > 0:
            marks[c.after.line - 1] = MARK_OF[c.kind]
    return marks, tuple(removed)
