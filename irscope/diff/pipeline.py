"""How two captures' pass pipelines differ, stage by stage: passes only one side
ran, passes both ran in another relative order, and passes both ran whose effect
on the IR differs.

Passes are keyed within a stage by their argument (the pass's command-line name,
``canonicalize``), or their name when it has none (the pipeliner's internal
steps). Not by class name: that is not stable across Triton versions (MLIR's
``Canonicalizer`` and ``CSE`` became ``CanonicalizerPass`` and ``CSEPass`` between
Triton 3.6 and 3.9, same arguments); a paired pass whose name changed is listed in
``renamed``. The two key sequences are
aligned (:mod:`irscope.irdiff.align`, the patience alignment the op diff uses: never
quadratic): runs in it pair in order (with equal pipelines, the i-th Canonicalizer
of ttgir pairs with the i-th). Of the runs left over, those of a key both sides
still have pair by occurrence order: they are the *reordered* ones; the rest were
added or removed. Aligning first, rather than pairing every key by occurrence,
matters when a run is inserted: with ``[C, C, R, C]`` against ``[C, R, C]``
occurrence pairing would call the second C moved past R and the last one removed,
where the alignment says one C went.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from irscope.core.passes import Pass
from irscope.compiler.stages import stage_rank

from irscope.irdiff.align import align


@dataclass(frozen=True, slots=True)
class PassOccurrence:
    """One run of a pass in one capture's pass list."""

    name: str
    argument: str
    occurrence: int
    """0 for the first run of the pass (by argument, else name) in its stage, 1 for the second..."""
    index: int
    """Position in the capture's whole pass list (what ``--pass N`` takes)."""

    def to_json(self) -> dict:
        return {"name": self.name, "argument": self.argument, "occurrence": self.occurrence, "index": self.index}


@dataclass(frozen=True, slots=True)
class PassEffect:
    """What a pass did to the IR, in the figures a pipeline diff compares."""

    changed: bool
    added: int
    removed: int
    modified: int
    moved: int = 0

    @classmethod
    def of(cls, p: Pass) -> PassEffect:
        """The pass's step counts (:class:`irscope.core.pass_steps.PassStep`)."""
        c = p.step.counts
        return cls(p.step.changed, c.added, c.removed, c.changed, c.moved)

    def to_json(self) -> dict:
        return {"changed": self.changed, "added": self.added, "removed": self.removed, "modified": self.modified,
                "moved": self.moved}


@dataclass(frozen=True, slots=True)
class PassEffectDelta:
    """A pass both sides ran whose effect differs."""

    name: str
    argument: str
    occurrence_before: int
    occurrence_after: int
    index_before: int
    index_after: int
    before: PassEffect
    after: PassEffect

    @property
    def flipped(self) -> bool:
        """The pass changed the IR on one side and left it alone on the other (the
        sharpest kind of difference; otherwise only the counts moved)."""
        return self.before.changed != self.after.changed

    def to_json(self) -> dict:
        return {"name": self.name, "argument": self.argument, "occurrence_before": self.occurrence_before,
                "occurrence_after": self.occurrence_after, "index_before": self.index_before,
                "index_after": self.index_after, "before": self.before.to_json(), "after": self.after.to_json(), "flipped": self.flipped}


@dataclass(frozen=True, slots=True)
class ReorderedPass:
    """A pass both sides ran, out of the order the others keep."""

    name: str
    argument: str
    occurrence_before: int
    occurrence_after: int
    index_before: int
    index_after: int

    def to_json(self) -> dict:
        return {"name": self.name, "argument": self.argument, "occurrence_before": self.occurrence_before,
                "occurrence_after": self.occurrence_after, "index_before": self.index_before,
                "index_after": self.index_after}


@dataclass(frozen=True, slots=True)
class StagePipelineDelta:
    """The pipeline difference of one stage."""

    stage: str
    passes_before: int
    passes_after: int
    added: tuple[PassOccurrence, ...]
    """Runs only side B has (indexes are B's)."""
    removed: tuple[PassOccurrence, ...]
    """Runs only side A has (indexes are A's)."""
    reordered: tuple[ReorderedPass, ...]
    """Paired runs outside the longest order both sides share."""
    effect_changed: tuple[PassEffectDelta, ...]
    """Paired runs whose changed flag or added/removed/modified counts differ."""
    renamed: tuple[tuple[str, str], ...] = ()
    """(name before, name after) of paired passes whose class name changed
    (``("CSE", "CSEPass")``): the same pass, renamed; not a pipeline change."""
    note: str | None = None
    """Set when the stage was too long to align exactly (see the module)."""

    @property
    def identical(self) -> bool:
        """Same passes, same order, same effect."""
        return not (self.added or self.removed or self.reordered or self.effect_changed)

    @property
    def same_pipeline(self) -> bool:
        """Same passes in the same order (effects may differ)."""
        return not (self.added or self.removed or self.reordered)

    def to_json(self) -> dict:
        return {"stage": self.stage, "passes_before": self.passes_before, "passes_after": self.passes_after,
                "added": [p.to_json() for p in self.added], "removed": [p.to_json() for p in self.removed],
                "reordered": [p.to_json() for p in self.reordered],
                "effect_changed": [p.to_json() for p in self.effect_changed],
                "renamed": [list(r) for r in self.renamed], "note": self.note}


@dataclass(frozen=True, slots=True)
class PipelineDelta:
    """Every stage's pipeline difference, in pipeline order."""

    stages: tuple[StagePipelineDelta, ...]

    @property
    def identical(self) -> bool:
        return all(s.identical for s in self.stages)

    def stage(self, name: str) -> StagePipelineDelta | None:
        """One stage's difference (None when neither side ran passes in it)."""
        return next((s for s in self.stages if s.stage == name), None)

    def to_json(self) -> dict:
        return {"identical": self.identical, "stages": [s.to_json() for s in self.stages]}


_Run = tuple[tuple[str, int], Pass]  # ((key, occurrence), pass)


def pass_key(p: Pass) -> str:
    """What pairs a pass with its counterpart on the other side: its argument, or
    its name when it has none."""
    return p.argument or p.name


def _occurrences(passes: Sequence[Pass]) -> dict[str, list[_Run]]:
    """Per stage, in list order: ((key, occurrence), pass)."""
    out: dict[str, list] = {}
    seen: dict[tuple[str, str], int] = {}
    for p in passes:
        k = (p.stage, pass_key(p))
        n = seen.get(k, 0)
        seen[k] = n + 1
        out.setdefault(p.stage, []).append(((k[1], n), p))
    return out


def _align(a: list[_Run], b: list[_Run]) -> tuple[list[tuple[int, int]], set[int]]:
    """Pairs of positions (a, b) of runs both sides have, and the positions (into the
    pairs) that are in the common order."""
    ka = [key[0] for key, _ in a]
    kb = [key[0] for key, _ in b]
    # Patience alignment (irscope.irdiff.align, as for ops): never quadratic, and runs
    # inserted or removed leave the rest of the pipeline paired in order.
    common = align(ka, kb)
    used_a = {i for i, _ in common}
    used_b = {j for _, j in common}
    # Left-over runs of a key both sides have pair in occurrence order: moved runs.
    waiting: dict[str, list[int]] = {}
    for j, k in enumerate(kb):
        if j not in used_b:
            waiting.setdefault(k, []).append(j)
    moved = []
    for i, k in enumerate(ka):
        if i not in used_a and waiting.get(k):
            moved.append((i, waiting[k].pop(0)))
    pairs = sorted(common + moved)
    in_order = {n for n, p in enumerate(pairs) if p[0] in used_a}
    return pairs, in_order


def _stage_delta(stage: str, a: list[_Run], b: list[_Run]) -> StagePipelineDelta:
    pairs, in_order = _align(a, b)
    note = None
    reordered, effects = [], []
    renamed: dict[tuple[str, str], None] = {}
    for n, (i, j) in enumerate(pairs):
        (_, occ_a), pa = a[i]
        (_, occ_b), pb = b[j]
        if pa.name != pb.name:
            renamed[(pa.name, pb.name)] = None
        if n not in in_order:
            reordered.append(ReorderedPass(pb.name, pb.argument, occ_a, occ_b, pa.index, pb.index))
        ea, eb = PassEffect.of(pa), PassEffect.of(pb)
        if ea != eb:
            effects.append(PassEffectDelta(pb.name, pb.argument, occ_a, occ_b, pa.index, pb.index, ea, eb))
    paired_a = {i for i, _ in pairs}
    paired_b = {j for _, j in pairs}
    removed = tuple(PassOccurrence(p.name, p.argument, occ, p.index)
                    for i, ((_, occ), p) in enumerate(a) if i not in paired_a)
    added = tuple(PassOccurrence(p.name, p.argument, occ, p.index)
                  for j, ((_, occ), p) in enumerate(b) if j not in paired_b)
    return StagePipelineDelta(stage, len(a), len(b), added, removed, tuple(reordered), tuple(effects),
                              tuple(renamed), note)


def pipeline_delta(a_passes: Sequence[Pass], b_passes: Sequence[Pass]) -> PipelineDelta:
    """How the pass list ``b_passes`` differs from ``a_passes``
    (:meth:`irscope.core.Capture.passes` of two captures), per stage."""
    ga, gb = _occurrences(a_passes), _occurrences(b_passes)
    names = sorted(dict.fromkeys([*ga, *gb]), key=stage_rank)
    return PipelineDelta(tuple(_stage_delta(s, ga.get(s, []), gb.get(s, [])) for s in names))
