"""The browser's table of captures: a virtually rendered table (a ``ScrollView``).

Textual's ``DataTable`` measures every cell with Rich when rows are added (14,000
measurements for 1,000 captures: most of two seconds here). This table takes its column
widths from the cells' plain lengths and paints only the visible rows from
``render_line``, the approach of textual-fastdatatable and of :class:`IRView`. The header
row stays on top; a click on it sorts, a click on a row moves the cursor there (a second
click on the cursor row opens it, as enter does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.console import JustifyMethod
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

PADDING = 1
"""Blank cells on each side of a column."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its key, header, and the widest its cells may be (None: no limit).
    A ``pinned`` column (the last ones) stays at the right edge while the others scroll
    sideways, so what it says (a capture's status) is on screen at every width."""

    key: str
    header: str
    max_width: int | None = None
    justify: JustifyMethod = "left"
    pinned: bool = False


class CaptureTable(ScrollView, can_focus=True):
    """A header row and rows of Rich Text cells, with a row cursor."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "capture-table--header", "capture-table--cursor", "capture-table--cursor-blur",
        "capture-table--even",
    }

    DEFAULT_CSS = """
    CaptureTable {
        background: $surface;
        color: $foreground;
        overflow: auto auto;
        & > .capture-table--header { background: $panel; text-style: bold; color: $foreground; }
        & > .capture-table--cursor { background: $accent 45%; }
        & > .capture-table--cursor-blur { background: $accent 20%; }
        & > .capture-table--even { background: $foreground 4%; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Open capture", show=False, id="captures.select"),
        Binding("up", "cursor_up", "Cursor up", show=False, id="captures.up"),
        Binding("down", "cursor_down", "Cursor down", show=False, id="captures.down"),
        Binding("pageup", "page_up", "Page up", show=False, id="captures.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="captures.page_down"),
        Binding("home", "cursor_home", "First row", show=False, id="captures.home"),
        Binding("end", "cursor_end", "Last row", show=False, id="captures.end"),
        Binding("left", "scroll_left", "Scroll left", show=False, id="captures.left"),
        Binding("right", "scroll_right", "Scroll right", show=False, id="captures.right"),
    ]

    cursor_row: reactive[int] = reactive(0, repaint=False, layout=False)
    """0-based row of the cursor."""

    class RowSelected(Message):
        """Enter, or a click on the cursor row."""

        def __init__(self, table: "CaptureTable", row: int) -> None:
            super().__init__()
            self.table = table
            self.row = row

        @property
        def control(self) -> "CaptureTable":
            return self.table

    class HeaderSelected(Message):
        """A click on the header of column ``key``."""

        def __init__(self, table: "CaptureTable", key: str) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> "CaptureTable":
            return self.table

    def __init__(self, columns: Sequence[Column] = (), *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns: list[Column] = list(columns)
        self.rows: list[list[Text]] = []
        self.widths: list[int] = [len(c.header) for c in self.columns]
        self._styles: dict[str, Style] = {}
        self._strips: dict[int, tuple[Strip, Strip]] = {}
        """Row -> its scrolling and pinned cells, uncropped."""

    # -- content -------------------------------------------------------------------
    @property
    def row_count(self) -> int:
        return len(self.rows)

    def set_rows(self, rows: Sequence[Sequence[Text]], *, cursor: int = 0) -> None:
        """Replace every row (cells in column order); widths follow the plain text."""
        self.rows = [list(r) for r in rows]
        widths = [len(c.header) for c in self.columns]
        for row in self.rows:
            for i, cell in enumerate(row):
                n = len(cell.plain)
                if n > widths[i]:
                    widths[i] = n
        self.widths = [min(w, c.max_width) if c.max_width else w
                       for w, c in zip(widths, self.columns)]
        self._strips.clear()
        total = sum(self.widths) + 2 * PADDING * len(self.widths)
        self.virtual_size = Size(total, len(self.rows) + 1)
        self.set_reactive(CaptureTable.cursor_row, max(0, min(cursor, len(self.rows) - 1)))
        self._scroll_into_view(self.cursor_row)
        self.refresh()

    def update_cell(self, row: int, column: int, cell: Text) -> None:
        """Replace one cell (same width budget) and repaint its row."""
        self.rows[row][column] = cell
        self._strips.pop(row, None)
        self.refresh()

    @property
    def pinned_width(self) -> int:
        """Cells the pinned columns take at the right edge."""
        return sum(w + 2 * PADDING for c, w in zip(self.columns, self.widths) if c.pinned)

    def _scrolled_width(self) -> int:
        """Cells left to the scrolling columns (all of the width when nothing is pinned)."""
        pinned = self.pinned_width
        return max(0, self.size.width - pinned) if pinned < self.size.width else self.size.width

    def column_at(self, x: int) -> str | None:
        """The key of the column under content x (scrolling included), or None."""
        at = 0
        for col, w in zip(self.columns, self.widths):
            at += w + 2 * PADDING
            if x < at:
                return col.key
        return None

    def column_x(self, key: str) -> int:
        """Content x where column ``key`` starts (for tests and the mouse)."""
        at = 0
        for col, w in zip(self.columns, self.widths):
            if col.key == key:
                return at
            at += w + 2 * PADDING
        raise KeyError(key)

    # -- cursor --------------------------------------------------------------------
    def validate_cursor_row(self, row: int) -> int:
        return max(0, min(row, len(self.rows) - 1)) if self.rows else 0

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._strips.pop(old, None)
        self._strips.pop(new, None)
        self.refresh()
        self._scroll_into_view(new)

    def move_cursor(self, row: int) -> None:
        """Put the cursor on ``row`` (clamped) and scroll it into view."""
        self.cursor_row = row

    def _scroll_into_view(self, row: int) -> None:
        height = self.scrollable_content_region.height - 1  # the header row
        if height <= 0:
            return
        top = round(self.scroll_offset.y)
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self._scroll_into_view, self.cursor_row)

    def action_cursor_up(self) -> None:
        self.cursor_row -= 1

    def action_cursor_down(self) -> None:
        self.cursor_row += 1

    def action_page_up(self) -> None:
        self.cursor_row -= max(1, self.scrollable_content_region.height - 2)

    def action_page_down(self) -> None:
        self.cursor_row += max(1, self.scrollable_content_region.height - 2)

    def action_cursor_home(self) -> None:
        self.cursor_row = 0

    def action_cursor_end(self) -> None:
        self.cursor_row = len(self.rows) - 1

    def action_select_cursor(self) -> None:
        if self.rows:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        event.stop()
        key = self.column_at(offset.x + round(self.scroll_offset.x))
        if offset.x >= self._scrolled_width():  # on a pinned column, at the right edge
            at = self._scrolled_width()
            for col, w in zip(self.columns, self.widths):
                if col.pinned:
                    at += w + 2 * PADDING
                    if offset.x < at:
                        key = col.key
                        break
        if offset.y == 0:
            if key is not None:
                self.post_message(self.HeaderSelected(self, key))
            return
        row = offset.y - 1 + round(self.scroll_offset.y)
        if 0 <= row < len(self.rows):
            if row == self.cursor_row:
                self.post_message(self.RowSelected(self, row))
            self.cursor_row = row

    # -- rendering -------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._strips.clear()

    def on_focus(self) -> None:
        self._styles.clear()
        self._strips.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._styles.clear()
        self._strips.clear()
        self.refresh()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = (self.rich_style if name == "" else
                                          self.get_component_rich_style(name))
        return style

    def _cells_strip(self, cells: Sequence[Text], style: Style, *, pinned: bool = False) -> Strip:
        """The row's scrolling columns (``pinned``: its pinned ones) as one strip."""
        segments: list[Segment] = []
        pad = Segment(" " * PADDING, style)
        console = self.app.console
        for col, width, cell in zip(self.columns, self.widths, cells):
            if col.pinned != pinned:
                continue
            text = cell.copy()
            text.truncate(width, overflow="ellipsis", pad=True)
            if (col.justify == "right" or cell.justify == "right") and len(cell.plain) < width:
                text = Text(" " * (width - len(cell.plain))) + cell
            segments.append(pad)
            segments.extend(Segment.apply_style(text.render(console), style))
            segments.append(pad)
        return Strip(segments)

    def render_line(self, y: int) -> Strip:
        scroll_y = self.scroll_offset.y
        width = self.size.width
        base = self._style("")
        if y == 0:
            header = self._style("capture-table--header")
            heads = [Text(c.header, justify=c.justify) for c in self.columns]
            return self._with_pinned(self._cells_strip(heads, base + header),
                                     self._cells_strip(heads, base + header, pinned=True), base + header)
        row = scroll_y + y - 1
        if row >= len(self.rows):
            return Strip.blank(width, base)
        if row == self.cursor_row:
            style = base + self._style("capture-table--cursor" if self.has_focus
                                       else "capture-table--cursor-blur")
        elif row % 2:
            style = base + self._style("capture-table--even")
        else:
            style = base
        cached = self._strips.get(row)
        if cached is None:  # kept uncropped: scrolling sideways only crops again
            cached = self._strips[row] = (self._cells_strip(self.rows[row], style),
                                          self._cells_strip(self.rows[row], style, pinned=True))
        return self._with_pinned(*cached, style)

    def _with_pinned(self, scrolled: Strip, pinned: Strip, style: Style) -> Strip:
        """The visible line: the scrolling columns cropped to the room the pinned ones
        leave, then the pinned ones at the right edge."""
        scroll_x = round(self.scroll_offset.x)
        width = self.size.width
        room = self._scrolled_width()
        if room == width:  # nothing pinned, or no room for it: everything scrolls
            return Strip.join([scrolled, pinned]).crop_extend(scroll_x, scroll_x + width, style)
        return Strip.join([scrolled.crop_extend(scroll_x, scroll_x + room, style), pinned])
