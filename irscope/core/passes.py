"""One pass of a capture's timeline: its header, what it did (its
:class:`~irscope.core.pass_steps.PassStep`), and its snapshot (text and parsed
module) read on demand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from irscope.ir import Module
from irscope.core.pass_steps import PassHeader, PassStep
from irscope.store.bundle import PassRow



@dataclass(eq=False)
class Pass(PassHeader):
    """A per-pass snapshot (the IR before its pass for Triton's MLIR dumps, after it
    for LLVM's: :attr:`PassStep.snapshot` says which) and what the pass did."""

    index: int
    """Position in the capture's pass list (0-based; what ``--pass N`` takes)."""
    row: PassRow
    """The stored header (stage, kind, when, name, argument, options, anchor...)."""
    step: PassStep
    """What the pass did: its sides, parent and depth, its structural counts
    (``step.counts``) and its op-form detail (``step.forms``)."""
    _text: Callable[[], str] = field(repr=False)
    _module: Callable[[], Module] = field(repr=False)

    @property
    def changed(self) -> bool:
        return self.step.changed

    @property
    def text(self) -> str:
        """The snapshot's text (read from the bundle on first use)."""
        return self._text()

    @property
    def module(self) -> Module:
        """The snapshot parsed (once; snapshots of one capture share a parse cache)."""
        return self._module()

    def to_json(self) -> dict:
        """The ``irscope passes --json`` object."""
        return self.step.to_json()


def droppable_passes(passes: "list[Pass]") -> tuple[str, ...]:
    """The passes of one stage's pipeline that a replay can leave out, by MLIR argument,
    in pipeline order, each once: the top-level passes, less the steps Triton dumps
    inside a pass (the pipeliner's ``LowerLoops``: no argument of their own) and the
    dialect conversions (``convert-triton-to-tritongpu``...), without which the next
    stage cannot read the IR. ``passes`` is ``Capture.passes(stage)``."""
    out: dict[str, None] = {}
    for p in passes:
        arg = p.row.argument
        if arg and p.step.depth == 0 and not arg.startswith("convert-"):
            out.setdefault(arg, None)
    return tuple(out)
