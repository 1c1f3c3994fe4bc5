"""What the kernel view shows about one op: types, layouts, location chain, origin, links.

:func:`op_detail` gathers it (reads links and pass origins, which the core computes once
per capture: call it from a worker); :func:`render_detail` turns it into Rich Text; the
:class:`OpDetails` panel shows that Text. IR text only ever enters ``Text`` as plain
strings, never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from irscope.compiler.stages import TTGIR, TTIR
from irscope.errors import IrscopeError
from irscope.ir.layouts import DistributedEncoding, LayoutError, UnknownEncoding
from irscope.ir.result_types import op_result_types
from irscope.ir.types import MemDescType, TensorType
from irscope.tui.widgets.layout_grid import MAX_CELLS, warp_lane_grid
from irscope.tui.widgets.op_why import OpWhy, op_why, render_op_why

if TYPE_CHECKING:
    from irscope.core import Capture
    from irscope.ir import Frame, Module, Op
    from irscope.link import LinkedOp


@dataclass(slots=True)
class LayoutInfo:
    """One encoding an op's types use, decoded."""

    ref: str
    description: str
    grid: Text | None = None
    """A warp/lane grid (distributed layouts of a small enough tensor), else None."""


@dataclass(slots=True)
class OpDetail:
    """Everything the details panel says about one op."""

    stage: str
    line: int
    name: str
    text: str
    operand_types: list[str] = field(default_factory=list)
    result_types: list[str] = field(default_factory=list)
    layouts: list[LayoutInfo] = field(default_factory=list)
    frames: list["Frame"] = field(default_factory=list)
    python_line: int | None = None
    created_by: str | None = None
    """The pass that made it (``#12 TritonGPUCoalesce``), ``"(the stage's input)"``, or
    None when the capture has no pass snapshots for the stage."""
    previous_stage: str | None = None
    next_stage: str | None = None
    links: dict[str, list["LinkedOp"]] = field(default_factory=dict)
    """Stage -> linked ops, for the previous and next stage."""
    notes: list[str] = field(default_factory=list)
    why: OpWhy | None = None
    """The core's conversion or loop facts (a convert_layout or scf.for of the TTGIR)."""


def _layouts(op: "Op", module: "Module", grid_cols: int) -> tuple[list[str], list[str], list[LayoutInfo]]:
    sig = op.signature(module.encodings)  # never raises: unknown type text is an OpaqueType
    # The types the op defines (tt.load of f16 pointers: f16 values), not its printed type.
    results = op_result_types(op, module.encodings)
    seen: dict[str, LayoutInfo] = {}
    for t in (*sig.operands, *results):
        if not isinstance(t, (TensorType, MemDescType)) or not t.encoding_ref:
            continue
        ref = t.encoding_ref
        if ref in seen:
            continue
        enc = module.encoding(ref)
        info = LayoutInfo(ref, enc.describe() if not isinstance(enc, UnknownEncoding)
                          else f"not decoded: {enc.describe()}")
        shape = tuple(s for s in t.shape if s is not None)
        if (isinstance(enc, DistributedEncoding) and isinstance(t, TensorType)
                and len(shape) == len(t.shape) and 1 <= len(shape) <= 2):
            total = 1
            for n in shape:
                total *= n
            if total <= MAX_CELLS:
                try:
                    info.grid = warp_lane_grid(enc.owners(shape), max_cols=grid_cols)
                except (LayoutError, ValueError, IndexError) as exc:
                    info.description += f" (no grid: {exc})"
            else:
                info.description += f" ({'x'.join(map(str, shape))}: too big to draw here; "
                info.description += "see 'irscope layout')"
        seen[ref] = info
    return [str(t) for t in sig.operands], [str(t) for t in results], list(seen.values())


def _origin(capture: "Capture", stage: str, line: int) -> str | None:
    try:
        got = capture.origins().get(stage)
    except IrscopeError:
        return None
    if got is None:
        return None
    for o in got.ops:
        if o.line == line:
            made = str(o.introduced_by) if o.introduced_by is not None else "(the stage's input)"
            return made + (f", last changed by {o.changed_by}" if o.changed_by is not None else "")
    return None


def op_detail(capture: "Capture", stage: str, op: "Op", module: "Module", stages: list[str],
              *, grid_cols: int = 16) -> OpDetail:
    """Gather what the panel shows about ``op`` of ``stage`` (``stages``: the tab order)."""
    d = OpDetail(stage, op.line, op.name, op.text.strip())
    if module.stage in (TTIR, TTGIR) or stage in (TTIR, TTGIR):
        d.operand_types, d.result_types, d.layouts = _layouts(op, module, grid_cols)
    elif op.types:
        d.result_types = [op.types]
    d.frames = list(op.location.frames)
    d.python_line = capture.line_of(op)  # its statement's first line, where the source pane shows it
    d.created_by = _origin(capture, stage, op.line)
    d.why = op_why(capture, stage, op)
    at = stages.index(stage) if stage in stages else -1
    d.previous_stage = stages[at - 1] if at > 0 else None
    d.next_stage = stages[at + 1] if 0 <= at < len(stages) - 1 else None
    try:
        got = capture.links_for_op(stage, op.line)
        d.links = {s: ops for s, ops in got.links.items() if s in (d.previous_stage, d.next_stage)}
    except IrscopeError as exc:
        d.notes.append(str(exc))
    return d


def render_detail(d: OpDetail, *, max_links: int = 4) -> Text:
    """The panel's text for ``d`` (plain strings only; no markup)."""
    out = Text()
    out.append(d.name, style="bold")
    out.append(f"  {d.stage} line {d.line}", style="dim")
    if d.python_line is not None:
        out.append(f"  python line {d.python_line}", style="dim")
    out.append("\n")
    out.append(d.text[:400] + ("..." if len(d.text) > 400 else "") + "\n")
    if d.operand_types or d.result_types:
        out.append("types: ", style="bold")
        out.append(", ".join(d.operand_types) or "()")
        out.append(" -> ")
        out.append(", ".join(d.result_types) or "()")
        out.append("\n")
    if d.why is not None:  # what the op costs, before the layouts it converts between
        out.append_text(render_op_why(d.why))
    for lay in d.layouts:
        out.append("layout ", style="bold")
        out.append(lay.ref, style="bold")
        out.append(f": {lay.description}\n")
        if lay.grid is not None:
            out.append_text(lay.grid)
            out.append("\n")
    out.append("location: ", style="bold")
    if d.frames:
        for i, fr in enumerate(d.frames):
            out.append(("\n  " if i else "") + ("called from " if i else ""))
            out.append(f"{fr.file}:{fr.line}:{fr.col}", style="dim" if fr.is_library() else "")
            if fr.name:
                out.append(f" ({fr.name})", style="dim")
    else:
        out.append("unknown", style="dim")
    out.append("\n")
    out.append("created by: ", style="bold")
    out.append(d.created_by or "(no pass snapshots for this stage)")
    out.append("\n")
    for label, stage, key in (("became in", d.next_stage, "]"), ("came from", d.previous_stage, "[")):
        if stage is None:
            continue
        ops = d.links.get(stage, [])
        out.append(f"{label} {stage.upper()}: ", style="bold")
        if not ops:
            out.append("nothing linked\n", style="dim")
            continue
        out.append(f"{len(ops)} op(s), press {key} to jump\n", style="dim")
        for linked in ops[:max_links]:
            out.append(f"  {linked.line:>6}  ", style="dim")
            out.append(linked.text[:160])
            out.append(f"  ({linked.kind})\n", style="dim")
        if len(ops) > max_links:
            out.append(f"  ... {len(ops) - max_links} more\n", style="dim")
    for note in d.notes:
        out.append(note + "\n", style="dim")
    return out


class OpDetails(VerticalScroll):
    """The details panel under the stage pane (hidden until an op is selected)."""

    DEFAULT_CSS = """
    OpDetails { height: auto; max-height: 45%; border-top: solid $accent; display: none; }
    OpDetails.-shown { display: block; }
    """

    def compose(self):
        yield Static(Text(""), id="op-details-body")

    def show_text(self, text: Text) -> None:
        """Show ``text`` (a Rich Text, never parsed as markup) and make the panel visible."""
        self.query_one("#op-details-body", Static).update(text)
        self.add_class("-shown")

    def hide(self) -> None:
        self.remove_class("-shown")

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")
