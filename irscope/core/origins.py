"""Op origins: which pass made each op of a stage's final IR, and which ops the
stage's passes made and erased again (``irscope passes --origins``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

from irscope.compiler.pass_order import Side
from irscope.compiler.stages import pass_stage
from irscope.core.pass_steps import PassStep, line_map
from irscope.ir import Module
from irscope.ir.forms import normalise_op_text
from irscope.irdiff.engine import diff_modules
from irscope.irdiff.model import ADDED, CHANGED, REMOVED
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
    changed_by: PassRef | None = None
    """The last pass that changed the op in place (its diff paired it as changed:
    a new type or layout, other operands); None when none did."""

    def to_json(self) -> dict:
        return {"line": self.line, "name": self.name, "text": self.text,
                "introduced_by": self.introduced_by.to_json() if self.introduced_by else None,
                "changed_by": self.changed_by.to_json() if self.changed_by else None}


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


def origins(steps: Sequence[PassStep], stages: Sequence[str], module_of: Callable[[str], Module],
            side_module: Callable[[Side], Module]) -> dict[str, StageOrigins]:
    """Origins per stage of ``stages`` whose passes end in a known result.

    Follows each op through the structural diffs of the stage's top-level passes
    (the steps' own diffs, so origins and ``irscope passes`` agree): an op the diff
    pairs with one after the pass (matched, changed or moved) keeps its maker; an op
    it adds was made by that pass; an op it removes was erased by it; an op it
    pairs as changed keeps its maker and records the pass as ``changed_by``. A
    renamed layout alias changes no op, so it makes and erases nothing. ``module_of(stage)``
    gives the stage's parsed final text, ``side_module`` the text on a pass's side.
    """

    def at(index: int) -> PassRef:
        s = steps[index]
        return PassRef(s.index, s.name, s.argument)

    def ref(index: int | None) -> PassRef | None:
        return None if index is None else at(index)

    out: dict[str, StageOrigins] = {}
    for stage, kind in ORIGIN_STAGES.items():
        if stage not in stages:
            continue
        group = [s for s in steps if s.stage == stage and s.kind == kind and s.top_level and not s.internal
                 and s.after_known]
        if not group:
            continue
        births: dict[int, int | None] = {}  # line in the current text -> its op's maker (absent: the input)
        edits: dict[int, int] = {}  # line in the current text -> the last pass that changed its op in place
        erased: Counter = Counter()
        for s in group:
            d = s.text_diff
            if d is None:
                continue  # the same text: the same lines
            moved = line_map(d)
            now = {moved[line]: born for line, born in births.items() if line in moved}
            edited = {moved[line]: by for line, by in edits.items() if line in moved}
            for c in d.changes:
                if c.kind == ADDED and c.after is not None and c.after.line > 0:
                    now[c.after.line] = s.index
                elif c.kind == CHANGED and c.after is not None and c.after.line > 0:
                    edited[c.after.line] = s.index
                elif c.kind == REMOVED and c.before is not None and c.before.line > 0:
                    erased[(c.op, normalise_op_text(c.before.text), births.get(c.before.line), s.index)] += 1
            births, edits = now, edited
        final = module_of(stage)
        last = group[-1].after
        if last is not None and last.stage != stage:
            # the stage's text is not the last snapshot itself: carry the lines over
            moved = line_map(diff_modules(side_module(last), final, pass_stage(kind)))
            births = {moved[line]: born for line, born in births.items() if line in moved}
            edits = {moved[line]: by for line, by in edits.items() if line in moved}
        ops = [OpOrigin(op.line, op.name, op.text.strip(), ref(births.get(op.line)), ref(edits.get(op.line)))
               for op in final.ops() if op.name != "<unknown>"]
        order = sorted(erased.items(), key=lambda kv: (kv[0][3], kv[0][2] if kv[0][2] is not None else -1,
                                                       kv[0][0], kv[0][1]))
        out[stage] = StageOrigins(stage, tuple(ops), tuple(
            ErasedOps(name, form, n, ref(born), at(by)) for (name, form, born, by), n in order))
    return out
