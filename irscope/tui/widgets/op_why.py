"""What the core says about a ``ttg.convert_layout`` or an ``scf.for`` of the final TTGIR,
for the op-details panel: the conversion's facts (:meth:`irscope.core.Capture.conversions`)
or the loop's (:meth:`irscope.core.Capture.loops`), matched by the op's TTGIR line. Every
figure is a field the core computed; this module only finds the fact and prints it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from rich.text import Text

from irscope.compiler.stages import TTGIR
from irscope.core.conversions import Conversion
from irscope.core.loops import Loop
from irscope.errors import IrscopeError

if TYPE_CHECKING:
    from irscope.core import Capture
    from irscope.ir import Op

__all__ = ["OpWhy", "op_why", "render_op_why"]

# The names the core's conversions_of reads (older Tritons name the dialect triton_gpu).
CONVERT_OPS = frozenset({"ttg.convert_layout", "triton_gpu.convert_layout"})
FOR_OP = "scf.for"

OpWhy = Union[Conversion, Loop, str]
"""A conversion's or a loop's facts, or a sentence saying why there are none."""


def op_why(capture: "Capture", stage: str, op: "Op") -> OpWhy | None:
    """The core's facts about ``op`` of ``stage``: its :class:`Conversion` (a convert_layout
    of the TTGIR) or its :class:`Loop` (an scf.for header), matched by the op's line in the
    TTGIR text; a sentence when the core has none for it; None for any other op."""
    if stage != TTGIR or (op.name not in CONVERT_OPS and op.name != FOR_OP):
        return None
    try:
        if op.name == FOR_OP:
            loop = next((lp for lp in capture.loops() if lp.ttgir_line == op.line), None)
            return loop if loop is not None else "no loop facts: this loop loads nothing from global memory"
        conv = next((c for c in capture.conversions() if c.ttgir_line == op.line), None)
        return conv if conv is not None else "no conversion facts for this op"
    except IrscopeError as exc:
        return f"no facts: {exc}"


def _conversion(c: Conversion, out: Text) -> None:
    out.append("conversion: ", style="bold")
    out.append(f"via {c.via.replace('_', ' ')}")
    if c.scratch_bytes or c.via == "shared_memory":
        out.append(f", {c.scratch_bytes} B scratch")
    if c.bank_conflicts is not None:
        out.append(f", {c.bank_conflicts}-way bank conflicts")
        if c.store_conflicts is not None and c.load_conflicts is not None:
            out.append(f" (store {c.store_conflicts}-way, load {c.load_conflicts}-way)", style="dim")
    out.append("\n")
    if c.instructions:
        out.append("  instructions: ", style="dim")
        out.append(" then ".join(c.instructions) + "\n")
    out.append("  from ", style="dim")
    out.append((c.source or "?") + "\n")
    out.append("  to   ", style="dim")
    out.append((c.destination or "?") + "\n")
    out.append("  Triton's allocation: ", style="dim")
    if c.triton_allocated is None:
        out.append("not in the capture (no snapshot after its allocation pass)\n", style="dim")
    else:
        out.append("scratch memory given (allocation.offset)\n" if c.triton_allocated
                   else "no scratch memory\n")
    if c.note:
        out.append(f"  {c.note}\n", style="dim")


def _loop(lp: Loop, out: Text) -> None:
    out.append("loop: ", style="bold")
    where = f"python line {lp.line}, " if lp.line is not None else ""
    if lp.pipelined:
        out.append(f"{where}pipelined, {lp.stages} stages, {lp.async_loads} of {lp.loads} loads async",
                   style="green")
        if lp.tma_loads:
            out.append(f" ({lp.tma_loads} TMA)")
    else:
        out.append(f"{where}not pipelined ({lp.loads} loads)", style="yellow")
    out.append("\n")
    if lp.requested_stages is not None:
        out.append(f"  stages asked for: {lp.requested_stages}", style="dim")
        out.append(f"; {lp.buffers}-deep buffers\n" if lp.buffers is not None else "\n", style="dim")
    if lp.load_lines:
        out.append("  loads at lines: ", style="dim")
        out.append(", ".join(map(str, lp.load_lines)))
        out.append("; async: " + (", ".join(map(str, lp.async_lines)) or "none") + "\n", style="dim")
    if lp.remark:
        out.append("  remark: ", style="bold")
        out.append(lp.remark + "\n")
    s = lp.schedule
    if s is not None:
        out.append("  prologue: ", style="dim")
        out.append(f"{len(s.prologue)} ops\n")
        for stage, ops in s.steady:
            out.append(f"  stage {stage}: ", style="dim")
            out.append(", ".join(ops) + "\n")
        out.append("  epilogue: ", style="dim")
        out.append((", ".join(s.epilogue) or "nothing") + "\n")
    out.append(f"  evidence: {lp.evidence}\n", style="dim")


def render_op_why(fact: OpWhy) -> Text:
    """The panel's lines for ``fact`` (plain strings only; never markup)."""
    out = Text()
    if isinstance(fact, Conversion):
        _conversion(fact, out)
    elif isinstance(fact, Loop):
        _loop(fact, out)
    else:
        out.append(fact + "\n", style="dim")
    return out
