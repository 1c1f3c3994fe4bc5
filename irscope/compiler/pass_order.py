"""Where the IR on each side of a pass is, and which pass runs inside which.

The one pairing rule of a capture's pass snapshots, used by the op-form counts
(:mod:`irscope.link.provenance`) and the pass steps of the core
(:mod:`irscope.core.pass_steps`), so every view compares the same two texts.

A snapshot holds the IR on one side of its pass (:data:`SNAPSHOT_KINDS`: Triton's
MLIR dumps print the IR *before* the pass, LLVM's print-after-all the IR *after*):

- a ``before`` snapshot at depth ``d``: the IR after its pass is the next
  ``before`` snapshot of its stage and kind at depth ``d`` or less (internal ones
  skipped), else the stage's own text when the stage's passes end in it;
- an ``after`` (or ``after-failed``) snapshot: the IR before its pass is the
  previous ``after`` snapshot of its stage and kind, else, for a stage's first LLVM
  pass, the text of the stage its pipeline starts from (``ptx`` starts from ``llir``);
- an ``internal`` snapshot (a step a pass printed from inside, like the
  pipeliner's): the IR before it is the snapshot just before it.

Nesting: an MLIR pass anchored on an op inside the module (``('tt.func'
operation: @f)``) runs inside the closest module-level pass before it: the
inliner runs its canonicalize pipeline on each function it visits. Such a pass
gets that pass as parent and depth 1; an internal snapshot sits one level under
the pass before it. LLVM's function passes are top-level passes of their own
pipeline (anchored ``function``), so LLVM snapshots never nest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Literal, Protocol, Sequence

from irscope.compiler.stages import FAMILY_MLIR, KIND_LLVM, SNAPSHOT_KINDS, STAGES

BEFORE: Literal["before"] = "before"
AFTER: Literal["after"] = "after"
INTERNAL = "internal"
AFTER_FAILED = "after-failed"

MODULE_ANCHORS = frozenset({"builtin.module", "module", ""})
"""Anchors of a pass that runs on the whole module (MLIR prints ``builtin.module``;
the capture stores LLVM's ``[module]`` as ``module``)."""


class SnapshotHeader(Protocol):
    """What the rule reads of a snapshot (a stored pass row has it all)."""

    @property
    def stage(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def when(self) -> str: ...

    @property
    def anchor(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Side:
    """Where the IR on one side of a pass is: a pass snapshot, or a stage's text."""

    pass_index: int | None = None
    stage: str | None = None

    @property
    def label(self) -> str:
        """``snapshot 12`` or ``ttgir output``."""
        return f"snapshot {self.pass_index}" if self.pass_index is not None else f"{self.stage} output"

    def to_json(self) -> dict:
        """``{"pass": 12}`` or ``{"stage": "ttgir"}``."""
        return {"pass": self.pass_index} if self.pass_index is not None else {"stage": self.stage}


@dataclass(frozen=True, slots=True)
class StepPlace:
    """One pass's place in the capture: its two sides and its parent."""

    snapshot: Literal["before", "after"]
    """Which side of its pass the snapshot holds (an internal snapshot: ``after``)."""
    before: Side | None
    after: Side | None
    """None when that side is not kept in a comparable form (the last MLIR pass of
    ``llir``, whose result is only printed as LLVM IR; the first MIR pass)."""
    parent: int | None
    """Index of the pass this one ran inside (None: a top-level pass)."""
    depth: int
    """0 for a top-level pass, 1 inside another, 2 inside a nested one."""


def snapshot_side(when: str, kind: str) -> Literal["before", "after"]:
    """Which side of its pass a snapshot holds: its dump's own header word when it
    says (``before``/``after``), else what the registry says of its kind."""
    if when == BEFORE:
        return BEFORE
    if when in (AFTER, AFTER_FAILED, INTERNAL):
        return AFTER
    info = SNAPSHOT_KINDS.get(kind)
    return info.when if info is not None else BEFORE


def _nests(p: SnapshotHeader) -> bool:
    """An MLIR pass anchored on an op inside the module: a nested pipeline's run."""
    info = SNAPSHOT_KINDS.get(p.kind)
    return info is not None and info.family == FAMILY_MLIR and p.anchor not in MODULE_ANCHORS


def nesting(passes: Sequence[SnapshotHeader]) -> list[tuple[int | None, int]]:
    """(parent index, depth) of every snapshot (see the module docstring)."""
    out: list[tuple[int | None, int]] = []
    last_top: int | None = None  # the latest module-level non-internal pass of the stage
    for i, p in enumerate(passes):
        if i and passes[i - 1].stage != p.stage:
            last_top = None
        if p.when == INTERNAL:
            j = i - 1
            while j >= 0 and passes[j].when == INTERNAL and passes[j].stage == p.stage:
                j -= 1
            if j >= 0 and passes[j].stage == p.stage:
                out.append((j, out[j][1] + 1))
            else:
                out.append((None, 0))
            continue
        if _nests(p) and last_top is not None and passes[last_top].kind == p.kind:
            out.append((last_top, 1))
            continue
        out.append((None, 0))
        last_top = i
    return out


def place_steps(passes: Sequence[SnapshotHeader], stage_texts: Collection[str]) -> list[StepPlace]:
    """The :class:`StepPlace` of every snapshot, in order. ``passes`` is the capture's
    snapshots in order, each stage's contiguous; ``stage_texts`` names the stages
    whose own text the capture holds (as text)."""
    nest = nesting(passes)
    out: list[StepPlace] = []
    for i, p in enumerate(passes):
        parent, depth = nest[i]
        side = snapshot_side(p.when, p.kind)
        if p.when == INTERNAL:
            ok = i > 0 and passes[i - 1].stage == p.stage and passes[i - 1].kind == p.kind
            out.append(StepPlace(AFTER, Side(i - 1) if ok else None, Side(i), parent, depth))
        elif side == BEFORE:
            out.append(StepPlace(BEFORE, Side(i), _after_of(passes, nest, i, stage_texts), parent, depth))
        else:
            out.append(StepPlace(AFTER, _before_of(passes, i, stage_texts), Side(i), parent, depth))
    return out


def _after_of(passes: Sequence[SnapshotHeader], nest: list[tuple[int | None, int]], i: int,
              stage_texts: Collection[str]) -> Side | None:
    p, depth = passes[i], nest[i][1]
    for j in range(i + 1, len(passes)):
        q = passes[j]
        if q.stage != p.stage:
            break
        if q.when == INTERNAL or q.kind != p.kind or nest[j][1] > depth:
            continue
        return Side(j) if snapshot_side(q.when, q.kind) == BEFORE else None
    info = STAGES.get(p.stage)
    if info is not None and info.passes_kind == p.kind and p.stage in stage_texts:
        return Side(stage=p.stage)
    return None


def _before_of(passes: Sequence[SnapshotHeader], i: int, stage_texts: Collection[str]) -> Side | None:
    p = passes[i]
    for j in range(i - 1, -1, -1):
        q = passes[j]
        if q.stage != p.stage:
            break
        if q.kind == p.kind and q.when != INTERNAL and snapshot_side(q.when, q.kind) == AFTER:
            return Side(j)
    info = STAGES.get(p.stage)
    start = info.passes_input if info is not None else None
    if p.kind == KIND_LLVM and start and start in stage_texts:
        return Side(stage=start)
    return None
