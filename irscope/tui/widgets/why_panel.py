"""The why panel under the Python pane (``w``): the facts the core gives for the
statement under the cursor (:meth:`irscope.core.Capture.explain`) and the hints about
it. It follows the pane's cursor and shows nothing it computes itself: every number is
a field of the core's :class:`~irscope.core.explain.LineExplanation`, printed as
``irscope explain`` prints it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from irscope.core.why_marks import GLYPHS, MARKS, conversions_at, hints_at, kernel_hints, line_marks, loops_at
from irscope.tui.widgets.heat import heat_text

if TYPE_CHECKING:
    from irscope.core.explain import Explanation, Hint, LineExplanation
    from irscope.core.line_costs import GlobalAccess
    from irscope.tui.widgets.python_pane import PythonPane


def access_words(a: "GlobalAccess") -> str:
    """``load 16 bits, 1 of 8 elements, 8 instructions, masked``: one global access of
    the core, in words (its ``bits``, ``elements`` of ``max_elements``, ``instructions``)."""
    kind = "atomic" if a.atomic else a.kind
    path = "" if a.path in ("ld", "st", "atomic") else f" via {a.path}"
    out = f"{kind}{path} " + ("? bits" if a.bits is None else f"{a.bits} bits")
    if a.elements is not None or a.max_elements is not None:
        out += f", {a.elements if a.elements is not None else '?'} of " \
               f"{a.max_elements if a.max_elements is not None else '?'} elements"
    out += f", {a.instructions} instruction{'s' if a.instructions != 1 else ''}"
    if a.masked:
        out += ", masked"
    return out


def why_text(ex: "Explanation", ln: "LineExplanation | None", label: str) -> Text:
    """The panel's text for ``ln`` (the statement ``label`` names), from ``ex``."""
    out = Text()
    out.append(f"why: {label}\n", style="bold")
    if not ex.lines:
        out.append("the capture has no per-line facts\n", style="dim")
    if ln is None:
        out.append("no op and no remark on this line\n", style="dim")
        return out
    marks = line_marks(ex, ln)
    if marks:
        meaning = {m.key: m.meaning for m in MARKS}
        out.append("  ".join(f"{GLYPHS[k]} {meaning[k]}" for k in marks) + "\n", style="bold yellow")
    c = ln.costs
    out.append("ops: ", style="bold")
    out.append(", ".join(f"{s} {n}" for s, n in c.ops.items()) or "none")
    out.append("\n")
    out.append("global:", style="bold")
    if not c.global_accesses:
        out.append(" none\n", style="dim")
    else:
        out.append("\n")
        for a in c.global_accesses:
            out.append(f"  {access_words(a)}", style="bold yellow" if a.narrow else "")
            out.append(f"  {a.opcode}\n" if a.opcode else "\n", style="dim")
    if c.shared_tensor:
        out.append("smem / tensor core: ", style="bold")
        out.append(", ".join(f"{k} {n}" for k, n in c.shared_tensor.items()) + "\n")
    out.append("spills: ", style="bold")
    out.append(f"{ln.spills} (LDL {c.spill_loads}, STL {c.spill_stores})\n" if ln.spills else "0\n",
               style="bold red" if ln.spills else "")
    if c.sass_by_class:
        out.append("sass: ", style="bold")
        out.append(", ".join(f"{k} {n}" for k, n in c.sass_by_class.items()) + "\n", style="dim")
    for r in ln.remarks:
        out.append("remark: " if r.severity == "remark" else f"{r.severity}: ", style="bold")
        out.append(f"{r.text}\n")
    for cv in conversions_at(ex, ln):
        out.append("conversion: ", style="bold")
        out.append(f"ttgir {cv.ttgir_line} via {cv.via.replace('_', ' ')}")
        if cv.via == "shared_memory":
            out.append(f", {cv.scratch_bytes} B scratch")
            if cv.bank_conflicts is not None:
                out.append(f", {cv.bank_conflicts}-way bank conflicts")
        out.append("\n")
    for lp in loops_at(ex, ln):
        out.append("loop: ", style="bold")
        out.append(f"pipelined, {lp.stages} stages, {lp.async_loads} async loads\n" if lp.pipelined
                   else "not pipelined\n", style="" if lp.pipelined else "yellow")
        if lp.remark:
            out.append(f"  remark: {lp.remark}\n", style="dim")
    hints = hints_at(ex, ln)
    if not ex.hints_computed:
        out.append("hints: not computed by this version\n", style="dim")
    elif hints:
        _hints(out, "hints:", hints)
    else:
        out.append("hints: none for this line\n", style="dim")
    if ex.hints_computed and kernel_hints(ex):
        _hints(out, "kernel hints:", kernel_hints(ex))
    return out


def _hints(out: Text, title: str, hints: "tuple[Hint, ...]") -> None:
    out.append(title + "\n", style="bold")
    for h in hints:
        out.append(f"  {h.text}\n")
        for e in h.evidence:
            out.append(f"    evidence: {e.text}\n", style="dim")


class WhyPanel(VerticalScroll, can_focus=False):
    """The cursor statement's facts and hints (hidden until ``w``). It never takes the
    focus (the keys stay with the Python pane it follows); the mouse wheel scrolls it."""

    DEFAULT_CSS = """
    WhyPanel { height: auto; max-height: 50%; border-top: solid $accent; display: none; }
    WhyPanel.-shown { display: block; }
    """

    def __init__(self, pane: "PythonPane", *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pane = pane
        """The Python pane whose cursor and explanation the panel follows."""

    def compose(self):
        yield Static(Text(""), id="why-body")

    def on_mount(self) -> None:
        self.watch(self.pane, "cursor_line", self._follow, init=False)
        self.watch(self.pane, "why_version", self._loaded, init=False)

    def _loaded(self, *_: object) -> None:
        # The legend of the column (glyphs or heat) goes on the frame of the pane the
        # panel sits in (the Python pane's), where the column is.
        if self.parent is not None and isinstance(self.parent, Widget):
            self.parent.border_subtitle = Text(self.pane.gutter_legend())
        self._follow()

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def toggle(self) -> bool:
        """Show or hide the panel; returns whether it is shown."""
        self.set_class(not self.shown, "-shown")
        self.refresh_text()
        return self.shown

    def _follow(self, *_: object) -> None:
        if self.shown:
            self.refresh_text()

    def text(self) -> Text:
        """What the panel shows for the pane's cursor now."""
        pane = self.pane
        ex = pane.explanation
        if ex is None:
            if pane.why_error is not None:
                out = Text(f"why: {pane.why_error}", style="dim")
            else:
                out = Text("why: reading the capture's facts...", style="dim")
        else:
            out = why_text(ex, pane.why_line(), pane.label())
        hot = pane.profile
        if (hot is not None or pane.heat_error is not None) and not out.plain.endswith("\n"):
            out.append("\n")
        if hot is not None:  # what was measured on the statement's lines, under what the compile says
            rows = pane.statement_rows() or [pane.cursor_line]
            heats = [(f"line {pane.row(y).line}", pane.line_heat(y)) for y in rows]
            out.append_text(heat_text(hot, heats))
        elif pane.heat_error is not None:
            out.append(f"measured: {pane.heat_error}\n", style="dim")
        return out

    def refresh_text(self) -> None:
        """Redraw from the pane's cursor."""
        self.query_one("#why-body", Static).update(self.text())
