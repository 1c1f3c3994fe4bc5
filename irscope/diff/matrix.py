"""The version matrix: one kernel variant on three or more sides (Triton versions,
targets...), its headline figures side by side.

``group_by`` splits one bundle's captures into sides by Triton version or target;
``pick_sides`` takes from each group the capture that pairs with a given one (by
the rule of :mod:`irscope.diff.pairing`); ``matrix`` reads the figures.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from irscope.core import Capture
from irscope.diff.mix import CLASSES, MIX_STAGES, capture_mix, ops_per_stage
from irscope.diff.pairing import best_match, variant_fields
from irscope.errors import IrscopeError

GROUP_KEYS = ("triton_version", "target")


@dataclass(frozen=True, slots=True)
class SideFigures:
    """The headline figures of one side's capture."""

    label: str
    capture: str
    """The capture's title: ``kernel [variant] target``."""
    capture_id: int
    triton_version: str | None
    target: str
    registers: int | None
    spills: int | None
    shared: int | None
    blocks_per_sm: int | None
    warps_per_sm: int | None
    limited_by: str | None
    compile_seconds: float | None
    ops: dict[str, int]
    """Ops per parsed lowering stage."""
    instructions: dict[str, dict[str, int]]
    """``ptx`` / ``sass`` -> class -> count (every class of the mix)."""
    failed: bool = False

    def figure(self, name: str) -> Any:
        """One figure by the name :meth:`Matrix.rows` gives it: ``registers``,
        ``ops.ttgir``, ``sass.mma``..."""
        head, dot, rest = name.partition(".")
        if not dot:
            return getattr(self, name)
        if head == "ops":
            return self.ops.get(rest)
        return self.instructions.get(head, {}).get(rest)

    def to_json(self) -> dict:
        return {"label": self.label, "capture": self.capture, "capture_id": self.capture_id,
                "triton_version": self.triton_version, "target": self.target, "registers": self.registers,
                "spills": self.spills, "shared": self.shared, "blocks_per_sm": self.blocks_per_sm,
                "warps_per_sm": self.warps_per_sm, "limited_by": self.limited_by,
                "compile_seconds": self.compile_seconds, "ops": dict(self.ops),
                "instructions": {s: dict(c) for s, c in self.instructions.items()}, "failed": self.failed}


@dataclass(frozen=True, slots=True)
class MatrixRow:
    """One figure across every side."""

    name: str
    values: tuple[Any, ...]
    """One per side, in side order (None where a side lacks it)."""

    @property
    def varies(self) -> bool:
        """The sides do not all agree."""
        return len(set(map(repr, self.values))) > 1

    def to_json(self) -> dict:
        return {"name": self.name, "values": list(self.values), "varies": self.varies}


_HEADLINE = ("triton_version", "target", "registers", "spills", "shared", "blocks_per_sm", "warps_per_sm",
             "limited_by", "compile_seconds")


@dataclass(frozen=True, slots=True)
class Matrix:
    """Headline figures of one kernel variant on several sides."""

    sides: tuple[SideFigures, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(s.label for s in self.sides)

    def rows(self, varying_only: bool = False) -> list[MatrixRow]:
        """The figures as rows (a figure per row, a side per column): the headline
        ones, then ``ops.<stage>`` and ``ptx.<class>`` / ``sass.<class>``. Instruction
        classes no side uses are left out; ``varying_only`` keeps the rows where the
        sides disagree."""
        names = list(_HEADLINE)
        stages = dict.fromkeys(s for side in self.sides for s in side.ops)
        names += [f"ops.{s}" for s in stages]
        for stage in MIX_STAGES:
            for cls in CLASSES:
                if any(side.instructions.get(stage, {}).get(cls) for side in self.sides):
                    names.append(f"{stage}.{cls}")
        rows = [MatrixRow(n, tuple(side.figure(n) for side in self.sides)) for n in names]
        return [r for r in rows if r.varies] if varying_only else rows

    def to_json(self) -> dict:
        return {"sides": [s.to_json() for s in self.sides], "rows": [r.to_json() for r in self.rows()]}


def side_figures(label: str, capture: Capture) -> SideFigures:
    """The headline figures of one capture, labelled."""
    r = capture.resources
    occ = capture.occupancy
    mixes = {s: capture_mix(capture, s) for s in MIX_STAGES}
    seconds = capture.compile_seconds
    return SideFigures(
        label=label, capture=capture.title(), capture_id=capture.id, triton_version=capture.triton_version,
        target=capture.target, registers=r.registers, spills=r.spills, shared=r.shared,
        blocks_per_sm=occ.blocks_per_sm if occ else None, warps_per_sm=occ.warps_per_sm if occ else None,
        limited_by=occ.limited_by if occ else None,
        compile_seconds=round(seconds, 3) if isinstance(seconds, (int, float)) else None,
        ops=ops_per_stage(capture), instructions={s: dict(m.classes) for s, m in mixes.items() if m is not None},
        failed=capture.failed)


def matrix(sides: Sequence[tuple[str, Capture]]) -> Matrix:
    """The figures of each ``(label, capture)`` side, in the order given. Meant for
    three or more sides (two are a diff), but any number works."""
    labels = [label for label, _ in sides]
    if len(set(labels)) != len(labels):
        raise IrscopeError(f"matrix sides need distinct labels, got {', '.join(labels)}")
    return Matrix(tuple(side_figures(label, cap) for label, cap in sides))


def _natural_key(v: str) -> list:
    # "3.10.0" after "3.9.0", "sm_100" after "sm_90": digit runs compare as numbers
    # (re.split with a group alternates text and digits, so positions compare alike).
    return [int(p) if i % 2 else p for i, p in enumerate(re.split(r"(\d+)", v))]


def group_by(captures: Sequence[Capture], key: str) -> dict[str, list[Capture]]:
    """Split captures into sides by ``triton_version`` or ``target``, labels in
    natural order (3.2.0, 3.9.0, 3.10.0; sm_80, sm_90, sm_100); each side keeps
    capture order."""
    if key not in GROUP_KEYS:
        raise IrscopeError(f"group_by takes {' or '.join(GROUP_KEYS)}, not {key!r}")
    groups: dict[str, list[Capture]] = {}
    for c in captures:
        groups.setdefault(str(getattr(c, key) or "?"), []).append(c)
    return dict(sorted(groups.items(), key=lambda kv: _natural_key(kv[0])))


def pick_sides(groups: dict[str, list[Capture]], like: Capture) -> list[tuple[str, Capture]]:
    """From each group, the capture that pairs with ``like`` (same kernel, every
    shared variant field equal; the target too unless groups are by target).
    Groups with none are left out."""
    out = []
    for label, caps in groups.items():
        match = best_match(like, caps)
        if match is None:
            # Grouped by target: the target differs by construction, the rest must agree.
            match = next((c for c in caps if c.kernel == like.kernel and _same_variant(like, c)), None)
        if match is not None:
            out.append((label, match))
    return out


def _same_variant(a: Capture, b: Capture) -> bool:
    fa, fb = variant_fields(a), variant_fields(b)
    return all(fa[k] == fb[k] for k in fa if k in fb)
