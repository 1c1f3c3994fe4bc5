"""The instruction mix of a PTX or SASS stage: how many instructions of each class
(:mod:`irscope.ir.instr_classes`) it holds, and how two mixes differ.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from irscope.core import Capture
from irscope.diff.metadata import CountDelta
from irscope.errors import IrscopeError
from irscope.ir import Module
from irscope.ir.instr_classes import (  # noqa: F401  (re-exported: the diff's callers read them here)
    ASYNC_COPY, ATOMIC, BARRIER, CLASSES, CONTROL_FLOW, CONVERSION, GLOBAL_LOAD, GLOBAL_STORE, LOCAL, MIX_STAGES,
    MMA, OTHER, SHARED_LOAD, SHARED_STORE, classify)
from irscope.compiler.stages import LOWERING


@dataclass(frozen=True, slots=True)
class InstructionMix:
    """How many instructions of each class one PTX or SASS stage has."""

    stage: str
    classes: dict[str, int]
    """Class -> instruction count, every class of :data:`CLASSES` in that order (zeros too)."""
    opcodes: dict[str, int] = field(default_factory=dict)
    """Opcode as parsed (``LDG.E.128``) -> count, largest first."""
    unknown: int = 0
    """Lines the parser did not understand: in no class."""

    @property
    def total(self) -> int:
        """Instructions classified (``unknown`` left out)."""
        return sum(self.classes.values())

    def count(self, cls: str) -> int:
        """Instructions of class ``cls``."""
        return self.classes.get(cls, 0)

    def opcodes_of(self, cls: str) -> dict[str, int]:
        """The opcodes of one class with their counts."""
        return {op: n for op, n in self.opcodes.items() if classify(op, self.stage) == cls}

    def to_json(self) -> dict:
        return {"stage": self.stage, "total": self.total, "classes": dict(self.classes),
                "opcodes": dict(self.opcodes), "unknown": self.unknown}


def instruction_mix(module: Module, stage: str | None = None) -> InstructionMix:
    """Classify every instruction of a parsed PTX or SASS ``module`` (``stage``
    defaults to the module's own). IrscopeError for another stage."""
    stage = stage or module.stage
    if stage not in MIX_STAGES:
        raise IrscopeError(f"instruction classes are for {' and '.join(MIX_STAGES)}, not {stage}")
    opcodes: Counter = Counter()
    unknown = 0
    for op in module.ops():
        if op.name == "<unknown>" or not op.name:
            unknown += 1
        else:
            opcodes[op.name] += 1
    classes = dict.fromkeys(CLASSES, 0)
    for opcode, n in opcodes.items():
        classes[classify(opcode, stage)] += n
    return InstructionMix(stage, classes, dict(opcodes.most_common()), unknown)


def capture_mix(capture: Capture, stage: str) -> InstructionMix | None:
    """The mix of one capture's ``ptx`` or ``sass`` stage; None when it has none (a
    failed compile, an AMD target)."""
    if stage not in capture.stages:
        return None
    st = capture.stage(stage)
    if st.binary:
        return None
    return instruction_mix(st.module, stage)


@dataclass(frozen=True, slots=True)
class MixDelta:
    """Two mixes of one stage, class by class."""

    stage: str
    classes: tuple[CountDelta, ...]
    """Every class of :data:`CLASSES`, in order."""
    opcodes: tuple[CountDelta, ...]
    """The opcodes whose count differs, most changed first."""
    total: CountDelta

    @property
    def identical(self) -> bool:
        return not self.opcodes

    def changed_classes(self) -> list[CountDelta]:
        """The classes whose count differs."""
        return [c for c in self.classes if c.changed]

    def to_json(self) -> dict:
        return {"stage": self.stage, "total": self.total.to_json(), "classes": [c.to_json() for c in self.classes],
                "opcodes": [c.to_json() for c in self.opcodes]}


def mix_delta(a: InstructionMix, b: InstructionMix) -> MixDelta:
    """How the mix of ``b`` differs from that of ``a`` (one stage)."""
    if a.stage != b.stage:
        raise IrscopeError(f"cannot compare a {a.stage} mix with a {b.stage} mix")
    classes = tuple(CountDelta(c, a.count(c), b.count(c)) for c in CLASSES)
    names = dict.fromkeys([*a.opcodes, *b.opcodes])
    ops = [CountDelta(o, a.opcodes.get(o, 0), b.opcodes.get(o, 0)) for o in names]
    ops = sorted((d for d in ops if d.changed), key=lambda d: (-abs(d.delta), d.name))
    return MixDelta(a.stage, classes, tuple(ops), CountDelta("total", a.total, b.total))


def ops_per_stage(capture: Capture, stages: tuple[str, ...] = LOWERING) -> dict[str, int]:
    """Ops (instructions) of each parsed lowering stage the capture has, lines the
    parser did not understand left out."""
    out = {}
    for name in stages:
        if name not in capture.stages:
            continue
        st = capture.stage(name)
        if st.binary:
            continue
        out[name] = sum(1 for op in st.module.ops() if op.name and op.name != "<unknown>")
    return out
