"""The kernel view's Python pane: the kernel's lines, then one section per ``@triton.jit``
helper whose ops the capture holds (:mod:`irscope.core.user_functions`).

The kernel's lines come first, numbered as in its file, so row ``r`` of the kernel is
file line ``first_line + r`` as before; each helper follows under a heading row that
names it, its file, its lines and the kernel lines that call it. The gutter shows each
row's own file line (blank on headings). The helpers are found in a thread worker once
the pane is mounted (the walk parses every stage); until then the pane shows the kernel
alone and counts come from the kernel view's stage indexes.

The charge mode (:data:`~irscope.core.user_functions.OWN` or
:data:`~irscope.core.user_functions.CALL_LINE`) says where a helper's ops are counted:
on the helper's lines, or on the kernel line that calls it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from irscope.core.user_functions import (CALL_LINE, OWN, UserFunction, UserFunctions, function_line_ops, op_place,
                                         ready, user_functions)
from irscope.errors import IrscopeError
from irscope.core.why_marks import GLYPHS, MARKS, kinds_present, legend, line_marks
from irscope.tui.widgets import heat as heat_view
from irscope.tui.widgets.ir_view import MARK_SIGNS, IRView

if TYPE_CHECKING:
    from irscope.core import Capture
    from irscope.core.explain import Explanation, LineExplanation
    from irscope.core.profile import HotProfile, LineHeat
    from irscope.ir import Op
    from irscope.tui.screen_data import StageIndex


@dataclass(frozen=True, slots=True)
class PaneRow:
    """What one row of the pane shows."""

    function: int | None
    """Index of its function in :attr:`UserFunctions.functions`; None on a heading or gap."""
    line: int | None
    """Its file line; None on a heading or gap."""


def helper_heading(fn: UserFunction, kernel_file: str | None) -> str:
    """The heading row of a helper's section (a Python comment, so it reads as one): its
    name, file (the base name when it is the kernel's file, which the pane's title
    names), lines and the kernel lines that call it; the pane is narrow, so the name and
    line numbers come first."""
    file = os.path.basename(fn.file or "?") if fn.file == kernel_file else (fn.file or "?")
    calls = ", ".join(map(str, fn.call_lines))
    called = f"  called at {calls}" if calls else ""
    return f"# ── helper {fn.name}  {file}:{fn.first_line}-{fn.last_line}{called}"


def pane_rows(functions: UserFunctions) -> tuple[list[str], list[PaneRow]]:
    """The pane's text lines and what each row is: the kernel's lines, then for each
    helper a gap, its heading and its lines."""
    texts: list[str] = []
    rows: list[PaneRow] = []
    for fn in functions.functions:
        if not fn.kernel:
            texts += ["", helper_heading(fn, functions.kernel.file)]
            rows += [PaneRow(None, None), PaneRow(None, None)]
        for ln in fn.lines:
            texts.append(ln.text if fn.has_source else f"(line {ln.line}: source not captured)")
            rows.append(PaneRow(fn.index, ln.line))
    return texts, rows


class PythonPane(IRView):
    """The Python source of the kernel and its helpers, one row per file line, with a
    "why" column of cost glyphs (:mod:`irscope.core.why_marks`) once the core's
    :meth:`~irscope.core.Capture.explain` is in."""

    COMPONENT_CLASSES = IRView.COMPONENT_CLASSES | {f"python-pane--why-{m.key}" for m in MARKS}

    DEFAULT_CSS = """
    PythonPane {
        & > .python-pane--why-narrow { color: $text-warning; text-style: bold; }
        & > .python-pane--why-spill { color: $text-error; text-style: bold; }
        & > .python-pane--why-smem { color: $text-accent; text-style: bold; }
        & > .python-pane--why-unpipelined { color: $text-warning; text-style: bold; }
        & > .python-pane--why-remark { color: $text-primary; text-style: bold; }
    }
    """

    why_version: reactive[int] = reactive(0, repaint=False, layout=False)
    """Bumped when :attr:`explanation` arrives (the why panel watches it)."""

    class FunctionsLoaded(Message):
        """Posted when the helpers' sections are in (the counts may change)."""

    class HeatChanged(Message):
        """Posted when the profile arrives or the column switches between heat and
        static costs (the stage panes follow)."""

    def __init__(self, capture: "Capture", text: str, *, language: str | None = None,
                 id: str | None = None, first_number: int = 1) -> None:
        self.capture = capture
        self.first_line = first_number
        self.charge = OWN
        """Where helpers' ops are counted: OWN (their lines) or CALL_LINE (the kernel's call)."""
        self.functions: dict[str, UserFunctions] = {}
        """Charge mode -> the core's answer; empty until the worker is done."""
        self._rows: list[PaneRow] = []
        self.explanation: "Explanation | None" = None
        """The core's facts per line (``cap.explain()``); None until the worker is done."""
        self.why_error: str | None = None
        """Why there is no explanation (the core's one-line error), once it failed."""
        self._why_kinds: tuple[str, ...] = ()
        self._why_rows: dict[int, tuple[str, ...]] = {}
        """Row -> the mark keys of the statement starting there."""
        self.profiles: dict[str, "HotProfile"] = {}
        """Charge mode -> the core's measured profile (:func:`irscope.core.profile.profile_of`,
        helpers' samples on their call lines in CALL_LINE); empty when the capture has none."""
        self.heat_error: str | None = None
        """Why the profile could not be read (the core's one-line error)."""
        self.show_heat = False
        """Whether the column shows heat (``h``) rather than the static costs' glyphs."""
        super().__init__(text, language=language, id=id, first_number=first_number)
        self._rows = [PaneRow(0, first_number + i) for i in range(self.line_count)]
        if ready(capture):  # opened before: the sections are there at once (a restored cursor may sit in one)
            self._apply({mode: user_functions(capture, mode) for mode in (OWN, CALL_LINE)})

    def on_mount(self) -> None:
        self.find_heat()
        if self.functions:
            self.post_message(self.FunctionsLoaded())
            self.find_why()
        else:
            self.find_functions()

    @work(thread=True, group="python-pane", exclusive=True, exit_on_error=False)
    def find_functions(self) -> None:
        """Ask the core for the user functions in both charge modes (off the UI thread)."""
        try:
            got = {mode: user_functions(self.capture, mode) for mode in (OWN, CALL_LINE)}
        except IrscopeError:
            return  # the pane keeps the kernel's source alone
        self.app.call_from_thread(self._loaded, got)

    def _loaded(self, got: dict[str, UserFunctions]) -> None:
        self._apply(got)
        self.post_message(self.FunctionsLoaded())
        self.find_why()

    # -- the why column -------------------------------------------------------------
    @work(thread=True, group="python-pane-why", exclusive=True, exit_on_error=False)
    def find_why(self) -> None:
        """Ask the core for the capture's explanation (off the UI thread; after the user
        functions, which it reuses)."""
        try:
            got = self.capture.explain()
        except IrscopeError as exc:
            self.app.call_from_thread(self._why_failed, str(exc))
            return
        self.app.call_from_thread(self._why_loaded, got)

    def _why_failed(self, message: str) -> None:
        self.why_error = message
        self.why_version += 1

    def _why_loaded(self, ex: "Explanation") -> None:
        self.explanation = ex
        self._why_kinds = kinds_present(ex)
        self._why_rows = {}
        for y in range(len(self._rows)):
            ln = self.why_line(y, statement=False)
            if ln is not None:
                self._why_rows[y] = line_marks(ex, ln)
        self.virtual_size = Size(self._gutter_width + max((len(self.line_text(i)) for i in range(self.line_count)),
                                                          default=0) + 1, self.virtual_size.height)
        self.refresh()
        self.why_version += 1

    @property
    def why_kinds(self) -> tuple[str, ...]:
        """The mark keys the column shows (the kinds some line has), in order."""
        return self._why_kinds

    def why_marks(self, y: int) -> tuple[str, ...]:
        """The mark keys of row ``y`` (on a statement's first line only)."""
        return self._why_rows.get(y, ())

    def why_line(self, y: int | None = None, *, statement: bool = True) -> "LineExplanation | None":
        """The core's facts for row ``y`` (the cursor's): its statement's, from any of
        its lines when ``statement``, else only on its first line."""
        ex = self.explanation
        r = self.row(y)
        if ex is None or r.line is None or r.function is None:
            return None
        got = self.functions.get(OWN)
        if got is None:
            return None
        fn = got.functions[r.function]
        head = r.line
        if statement and fn.first_line <= r.line <= fn.last_line:
            head = fn.lines[r.line - fn.first_line].statement
        return ex.line(head, fn.file)

    # -- the heat column -------------------------------------------------------------
    @work(thread=True, group="python-pane-heat", exclusive=True, exit_on_error=False)
    def find_heat(self) -> None:
        """Ask the core for the capture's measured profile, in both charge modes (off the
        UI thread); a capture with none keeps the static costs."""
        from irscope.core.profile import profile_of

        try:
            own = profile_of(self.capture)
            got = {} if own is None else {OWN: own, CALL_LINE: profile_of(self.capture, call_sites=True) or own}
        except IrscopeError as exc:
            self.app.call_from_thread(self._heat_failed, str(exc))
            return
        self.app.call_from_thread(self._heat_loaded, got)

    def _heat_failed(self, message: str) -> None:
        self.heat_error = message
        self.post_message(self.HeatChanged())

    def _heat_loaded(self, got: dict[str, "HotProfile"]) -> None:
        self.profiles = got
        self.show_heat = bool(got)  # a capture with a profile opens on it: it is what was measured
        self._draw_heat()

    @property
    def profile(self) -> "HotProfile | None":
        """The profile of the charge mode shown (None: the capture has none, or not read yet)."""
        return self.profiles.get(self.charge)

    def _row_file(self, r: PaneRow) -> str | None:
        got = self.functions.get(OWN)
        if got is not None and r.function is not None:
            return got.functions[r.function].file
        return self.capture.file

    def line_heat(self, y: int | None = None) -> "LineHeat | None":
        """The core's measured heat of row ``y``'s file line (the cursor's), in the
        charge mode shown; None on a heading, or with no profile."""
        hot = self.profile
        r = self.row(y)
        if hot is None or r.line is None:
            return None
        return hot.line(r.line, self._row_file(r))

    def _draw_heat(self) -> None:
        hot = self.profile
        if hot is None or not self.show_heat:
            self.set_heat(None)
        else:
            rows = {}
            for y in range(len(self._rows)):
                lh = self.line_heat(y)
                if lh is not None and lh.samples:
                    rows[y] = float(lh.samples)
            self.set_heat(rows, hot.total_samples)
        widest = max((len(self.line_text(i)) for i in range(self.line_count)), default=0)
        self.virtual_size = Size(self._gutter_width + widest + 1, self.virtual_size.height)
        self.why_version += 1  # the frame's legend and the why panel follow
        self.post_message(self.HeatChanged())

    def toggle_heat(self) -> bool:
        """Switch the column between heat and static costs; returns whether it shows
        heat (False, unchanged, with no profile)."""
        if not self.profiles:
            return False
        self.show_heat = not self.show_heat
        self._draw_heat()
        return self.show_heat

    def gutter_legend(self) -> str:
        """The legend of the column as it is now ('' when it shows nothing)."""
        hot = self.profile
        if hot is not None and self.show_heat:
            return heat_view.legend(hot)
        if self._why_kinds:
            return legend(self._why_kinds) + "  (w: why" + (", h: heat)" if self.profiles else ")")
        return "h: heat" if self.profiles else ""

    def _apply(self, got: dict[str, UserFunctions]) -> None:
        self.functions = got
        texts, rows = pane_rows(got[OWN])
        if len(rows) > len(self._rows) or self.line_count == 0:
            at = self.cursor_line
            self.set_text("\n".join(texts), language=self.language, first_number=self.first_line)
            self._rows = rows
            self._gutter_digits = len(str(max((r.line or 0 for r in rows), default=1)))
            widest = max(map(len, texts), default=0)
            self.virtual_size = Size(self._gutter_width + widest + 1, len(texts))
            self.set_reactive(IRView.cursor_line, at)
            self.refresh()
            if self.profiles:  # the rows moved: so do their figures
                self._draw_heat()

    # -- where the cursor is ------------------------------------------------------
    @property
    def helpers(self) -> tuple[UserFunction, ...]:
        """The helpers shown (empty until found)."""
        got = self.functions.get(OWN)
        return got.helpers if got is not None else ()

    def row(self, y: int | None = None) -> PaneRow:
        """What row ``y`` (the cursor's by default) shows."""
        y = self.cursor_line if y is None else y
        return self._rows[y] if 0 <= y < len(self._rows) else PaneRow(None, None)

    def function(self, y: int | None = None) -> UserFunction | None:
        """The function of row ``y`` (the cursor's), once the functions are found."""
        r = self.row(y)
        got = self.functions.get(self.charge)
        if r.function is None or got is None:
            return None
        return got.functions[r.function]

    def statement_rows(self) -> list[int]:
        """The rows of the cursor's statement (more than one for a multi-line statement)."""
        r = self.row()
        if r.line is None:
            return []
        fn = self.function()
        if fn is None:  # the kernel alone: the core's statement map of the kernel
            unit = self.capture.statement(r.line)
            return [n - self.first_line for n in unit.lines]
        head = fn.lines[r.line - fn.first_line].statement if fn.first_line <= r.line <= fn.last_line else r.line
        top = self.cursor_line - (r.line - fn.first_line)  # the row of the function's first line
        return [top + ln.line - fn.first_line for ln in fn.lines if ln.statement == head]

    def ops(self, stage: str, index: "StageIndex | None") -> list["Op"] | None:
        """The ops of ``stage`` charged to the cursor's statement; None when unknown yet."""
        r = self.row()
        if r.line is None:
            return []
        fn = self.function()
        if fn is not None:
            if stage in self.functions[self.charge].stages:
                return function_line_ops(self.capture, fn, r.line, self.charge).get(stage, [])
            if index is None:
                return None
            return []
        if index is None:
            return None
        if r.function != 0:
            return []
        return index.by_python_line.get(self.capture.statement(r.line).first, [])

    def label(self) -> str:
        """``python line 27``, ``python lines 26-27`` or ``_gelu line 29``."""
        r = self.row()
        if r.line is None:
            got = self.functions.get(OWN)
            return "helpers below" if got is not None and got.helpers else "python"
        fn = self.function()
        rows = self.statement_rows()
        lines = sorted(self._rows[y].line or 0 for y in rows) or [r.line]
        span = str(lines[0]) if len(lines) <= 1 else f"{lines[0]}-{lines[-1]}"
        if fn is not None and not fn.kernel:
            return f"{fn.name} line{'s' if len(lines) > 1 else ''} {span}"
        return f"python line{'s' if len(lines) > 1 else ''} {span}"

    def charge_label(self) -> str:
        """What the status line says about the charge mode ('' with no helpers)."""
        if not self.helpers:
            return ""
        return "helper ops: call line (c)" if self.charge == CALL_LINE else "helper ops: own lines (c)"

    def toggle_charge(self) -> str:
        """Switch the charge mode; returns the new one."""
        self.charge = CALL_LINE if self.charge == OWN else OWN
        if self.profiles:
            self._draw_heat()
        return self.charge

    def row_of_op(self, stage: str, op: "Op") -> int | None:
        """The row of the statement ``op`` is charged to (its first line), or None."""
        if self.functions:
            place = op_place(self.capture, stage, op, self.charge)
            if place is None:
                return None
            file, first, line = place
            got = self.functions[self.charge]
            for fn in got.functions:
                if fn.file == file and fn.first_line == first:
                    for y, row in enumerate(self._rows):
                        if row.function == fn.index and row.line == line:
                            return y
            return None
        py = self.capture.line_of(op)
        if py is None or not 0 <= py - self.first_line < self.line_count:
            return None
        return py - self.first_line

    # -- drawing ------------------------------------------------------------------
    @property
    def _gutter_width(self) -> int:
        if getattr(self, "_heat", None) is not None:  # the heat column takes the static costs' place
            return self._gutter_digits + 2 + heat_view.HEAT_WIDTH
        kinds = len(getattr(self, "_why_kinds", ()))  # read while IRView's __init__ runs
        return self._gutter_digits + 2 + (kinds + 1 if kinds else 0)

    def _why_style(self, key: str) -> Style:
        component = f"python-pane--why-{key}"
        style = self._styles.get(component)
        if style is None:  # foreground only, as a token: the row's tint shows through
            got = self.get_component_rich_style(component, partial=True)
            style = self._styles[component] = Style(color=got.color, bold=got.bold)
        return style

    def _gutter_strip(self, y: int) -> Strip:
        mark = self._marks.get(y)
        sign = MARK_SIGNS.get(mark, "\u2022") if mark else " "
        line = self.row(y).line if self.functions else y + self._first_number
        number = ("" if line is None else str(line)).rjust(self._gutter_digits)
        segments = [Segment(number, self._style("ir-view--gutter")),
                    Segment(sign, self._style(f"ir-view--mark-{mark}") if mark in MARK_SIGNS
                            else self._style("ir-view--gutter")),
                    Segment(" ")]
        if self._heat is not None:
            segments += self._heat_segments(y)
        elif self._why_kinds:  # one slot per kind shown, so a glyph keeps its place
            have = self.why_marks(y)
            for key in self._why_kinds:
                segments.append(Segment(GLYPHS[key], self._why_style(key)) if key in have else Segment(" "))
            segments.append(Segment(" "))
        return Strip(segments, self._gutter_width)
