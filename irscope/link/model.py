"""The vocabulary of links: how two ops of adjacent stages are tied, and what a
query returns. (The kinds are explained in :mod:`irscope.link`.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from irscope.compiler.stages import EXACT_STAGES, LOWERING

# Pipeline order; a query walks this chain (plus the TTGIR -> PTX shortcut in exact mode).
PIPELINE = LOWERING
__all__ = ["EXACT_STAGES", "KIND_RANK", "PIPELINE", "ExactReport", "LinkedOp", "StageLink"]

KIND_RANK = {"same-op": 0, "exact": 0, "derived": 1, "same-location": 2, "same-line": 3}
"""Strength of each link kind (lower is stronger); a path takes its weakest kind."""

class StageLink(NamedTuple):
    """One op of ``src_stage`` tied to one op of ``dst_stage`` (lines are 1-based lines
    of the stage texts). A named tuple: a capture has thousands, built at C speed."""

    src_stage: str
    src_line: int
    dst_stage: str
    dst_line: int
    kind: str

    def reversed(self) -> "StageLink":
        """The same link read from the other end."""
        return StageLink(self.dst_stage, self.dst_line, self.src_stage, self.src_line, self.kind)


@dataclass(frozen=True, slots=True)
class LinkedOp:
    """An op a query reached: its line and text in its stage, and how it is tied."""

    line: int
    text: str
    kind: str

    def to_json(self) -> dict:
        return {"line": self.line, "text": self.text, "kind": self.kind}


@dataclass(slots=True)
class ExactReport:
    """How the ``_ttgirloc`` stage of ``stage`` was used."""

    stage: str
    ttgirloc_ops: int = 0
    with_ttgir_line: int = 0
    """``_ttgirloc`` instructions whose debug line names a TTGIR op."""
    identical: bool = False
    """The instruction texts (debug info stripped) of both compiles are equal."""
    transferred: int = 0
    """Normal-stage instructions that received the exact TTGIR link."""
    ratio: float = 0.0


def rank(stage: str) -> int:
    """Pipeline position of a stage (the ``_ttgirloc`` stages after all others)."""
    return PIPELINE.index(stage) if stage in PIPELINE else len(PIPELINE)


def weaker(a: str, b: str) -> str:
    """The weaker of two link kinds (a composed link has the weakest along its path)."""
    return b if KIND_RANK.get(b, 9) >= KIND_RANK.get(a, 9) else a


def keep(d: dict[int, str], line: int, kind: str) -> None:
    """Record ``line`` in ``d`` with ``kind`` unless it has a stronger kind already."""
    old = d.get(line)
    if old is None or KIND_RANK.get(kind, 9) < KIND_RANK.get(old, 9):
        d[line] = kind
