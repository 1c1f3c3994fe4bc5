"""The pass stepper's timeline: one row per pass of a stage, with its op count, what it
changed and its time. A ``DataTable`` is right here: a stage has tens to a few
hundred passes, never the hundreds of thousands of rows that call for virtual tables."""

from __future__ import annotations

from typing import ClassVar, Sequence

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable

from irscope.core.pass_steps import PassStep

NAME_WIDTH = 18
"""Pass names are cut to this many cells (the full name is in the pass header)."""


def _cut(name: str, width: int = NAME_WIDTH) -> str:
    return name if len(name) <= width else name[:width - 1] + "…"


def change_cell(p: PassStep) -> Text:
    """``+a -r ~c >m`` of what the pass did (the structural diff's added, removed,
    changed, moved ops); ``-`` for nothing, ``?`` when unknown, ``attrs`` when only
    text outside the ops changed."""
    if not p.after_known:
        return Text("?", style="dim")
    if not p.changed:
        return Text("-", style="dim")
    c = p.counts
    parts = [(f"+{c.added}", "green"), (f"-{c.removed}", "red"), (f"~{c.changed}", "yellow"),
             (f">{c.moved}", "blue")]
    shown = [(s, st) for s, st in parts if s[1:] != "0"]
    if not shown:
        return Text("attrs", style="yellow")
    return Text(" ").join(Text(s, style=st) for s, st in shown)


def time_cell(p: PassStep) -> Text:
    s = p.seconds
    return Text("" if s is None else f"{s * 1000:.1f}"[:4].rstrip("."), justify="right")


class PassTimeline(DataTable):
    """Rows keyed by the pass's index in the capture (``PassStep.index``)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Previous row", show=False, id="pass_timeline.cursor_up"),
        Binding("down", "cursor_down", "Next row", show=False, id="pass_timeline.cursor_down"),
        Binding("enter", "select_cursor", "Show pass", show=False, id="pass_timeline.select"),
        Binding("pageup", "page_up", "Page up", show=False, id="pass_timeline.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="pass_timeline.page_down"),
        Binding("home", "scroll_home", "First pass", show=False, id="pass_timeline.home"),
        Binding("end", "scroll_end", "Last pass", show=False, id="pass_timeline.end"),
        Binding("ctrl+home", "scroll_top", "Top", show=False, id="pass_timeline.top"),
        Binding("ctrl+end", "scroll_bottom", "Bottom", show=False, id="pass_timeline.bottom"),
        Binding("left", "cursor_left", "Left", show=False, id="pass_timeline.left"),
        Binding("right", "cursor_right", "Right", show=False, id="pass_timeline.right"),
    ]

    class PassChosen(Message):
        """The user moved the timeline's cursor onto a pass."""

        def __init__(self, timeline: "PassTimeline", index: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.index = index
            """The pass's index in the capture's whole pass list."""

        @property
        def control(self) -> "PassTimeline":
            return self.timeline

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self._rows: list[int] = []

    def on_mount(self) -> None:
        # Fixed widths: auto widths are measured lazily on idle, and rows filled in
        # after the first paint (the timeline is read in a worker) kept the label widths.
        # What the pass changed comes right after its name, so a narrow pane shows it.
        self.add_column("#", key="n", width=3)
        self.add_column("pass", key="pass", width=NAME_WIDTH)
        self.add_column("change", key="change", width=11)
        self.add_column("ops", key="ops", width=5)
        self.add_column("ms", key="ms", width=4)

    @property
    def pass_indexes(self) -> list[int]:
        """The pass indexes shown, top to bottom."""
        return list(self._rows)

    def set_passes(self, passes: Sequence[PassStep]) -> None:
        """Show these passes (replacing the rows); a nested pass is indented under its parent."""
        self.clear()
        self._rows = []
        for p in passes:
            name = " " * max(0, p.depth - 1) + ("↳ " if p.depth else "") + p.name
            ops = p.ops_after if p.after_known else p.ops_before
            self.add_row(Text(str(p.index), style="dim", justify="right"), Text(_cut(name)),
                         change_cell(p), Text(str(ops), justify="right"), time_cell(p), key=str(p.index))
            self._rows.append(p.index)

    def show_pass(self, index: int) -> None:
        """Put the cursor on pass ``index`` (no PassChosen is posted for it)."""
        if index in self._rows:
            row = self._rows.index(index)
            if self.cursor_row != row:
                self.move_cursor(row=row, animate=False)

    # The screen follows the user's moves only: PassChosen is posted from the key and
    # mouse actions, not from RowHighlighted, which programmatic moves (and rebuilding
    # the rows) also send, later, when the screen may have moved on.
    def _chosen(self) -> None:
        if 0 <= self.cursor_row < len(self._rows):
            self.post_message(self.PassChosen(self, self._rows[self.cursor_row]))

    def action_cursor_up(self) -> None:
        super().action_cursor_up()
        self._chosen()

    def action_cursor_down(self) -> None:
        super().action_cursor_down()
        self._chosen()

    def action_page_up(self) -> None:
        super().action_page_up()
        self._chosen()

    def action_page_down(self) -> None:
        super().action_page_down()
        self._chosen()

    def action_select_cursor(self) -> None:
        self._chosen()

    async def _on_click(self, event) -> None:
        await super()._on_click(event)
        self._chosen()
