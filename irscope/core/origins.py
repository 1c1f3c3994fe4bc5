"""Op origins: which pass made each op of a stage's final IR, and which ops the
stage's passes made and erased again (``irscope passes --origins``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from irscope.ir import Module, op_form
from irscope.link.provenance import PassChange, op_lives
from irscope.compiler.stages import STAGES

ORIGIN_STAGES: dict[str, str] = {s.name: s.passes_kind for s in STAGES.values() if s.passes_kind}
"""Stage -> the kind of pass snapshot whose last result is its final text: llir runs
MLIR passes (whose result is not printed as LLVM IR) and then, captured with
``--llvm-passes``, LLVM ones, whose last result is the llir file."""


@dataclass(frozen=True, slots=True)
class PassRef:
    """A pass by its place in the capture's pass list."""

    index: int
    name: str
    argument: str

    def to_json(self) -> dict:
        return {"index": self.index, "name": self.name, "argument": self.argument}

    def __str__(self) -> str:
        return f"#{self.index} {self.name}"


@dataclass(frozen=True, slots=True)
class OpOrigin:
    """One op of a final stage text and the pass that made it (None: the stage's input)."""

    line: int
    name: str
    text: str
    introduced_by: PassRef | None

    def to_json(self) -> dict:
        return {"line": self.line, "name": self.name, "text": self.text,
                "introduced_by": self.introduced_by.to_json() if self.introduced_by else None}


@dataclass(frozen=True, slots=True)
class ErasedOps:
    """``count`` instances of one op form that one pass made and a later one erased."""

    name: str
    form: str
    count: int
    introduced_by: PassRef | None
    erased_by: PassRef

    def to_json(self) -> dict:
        return {"name": self.name, "form": self.form, "count": self.count,
                "introduced_by": self.introduced_by.to_json() if self.introduced_by else None,
                "erased_by": self.erased_by.to_json()}


@dataclass(frozen=True, slots=True)
class StageOrigins:
    """The origins of one stage's ops."""

    stage: str
    ops: tuple[OpOrigin, ...]
    erased: tuple[ErasedOps, ...]

    def to_json(self) -> dict:
        return {"ops": [o.to_json() for o in self.ops], "erased": [e.to_json() for e in self.erased]}


def origins(changes: Sequence[PassChange], stages: Sequence[str], module_of: Callable[[str], Module]
            ) -> dict[str, StageOrigins]:
    """Origins per stage of ``stages`` whose passes end in a known result.

    ``module_of(stage)`` gives the stage's parsed final text. Instances of one op
    form are told apart by count (see :func:`irscope.link.provenance.op_lives`): the
    ``i``-th op of a form in text order gets the ``i``-th birth.
    """

    def ref(index: int | None) -> PassRef | None:
        if index is None:
            return None
        c = changes[index]
        return PassRef(c.index, c.name, c.argument)

    out: dict[str, StageOrigins] = {}
    for stage, kind in ORIGIN_STAGES.items():
        if stage not in stages or not any(c.stage == stage and c.kind == kind and c.after_known for c in changes):
            continue
        births, gone = op_lives(changes, stage, kind)
        seen: Counter = Counter()
        ops = []
        for op in module_of(stage).ops():
            if op.name == "<unknown>":
                continue
            form = (op.name, op_form(op))
            mine = births.get(form, ())
            i = seen[form]
            seen[form] += 1
            ops.append(OpOrigin(op.line, op.name, op.text.strip(), ref(mine[i]) if i < len(mine) else None))
        erased = Counter((life.form, life.born, life.erased) for life in gone)
        order = sorted(erased.items(), key=lambda kv: (kv[0][2], kv[0][1] if kv[0][1] is not None else -1, kv[0][0]))
        out[stage] = StageOrigins(stage, tuple(ops), tuple(
            ErasedOps(form[0], form[1], n, ref(born), ref(by)) for (form, born, by), n in order))
    return out
