"""The kernel browser: every capture of the bundle, sortable and filterable.

Rows are read in a thread worker (:func:`irscope.tui.screen_data.browser_rows`), so a big or
slow bundle never freezes the keyboard; enter opens a capture's kernel view, space marks
captures and ``d`` diffs the two marked ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from irscope.tui import screen_data
from irscope.tui.screen_data import BROWSER_COLUMNS, BrowserRow
from irscope.tui.widgets.kernel_table import CaptureTable, Column
from irscope.tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from irscope.tui.app import IrscopeApp

MARK = "\u25cf"
RIGHT = {"id", "warps", "stages", "regs", "spills", "shared", "occupancy", "compile"}


class BrowserScreen(Screen):
    """Captures by kernel, target and variant, with their resources."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter", key_display="/", id="browser.filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="browser.clear_filter"),
        Binding("s", "sort", "Sort", id="browser.sort"),
        Binding("r", "reverse", "Reverse", id="browser.reverse"),
        Binding("space", "mark", "Mark", id="browser.mark"),
        Binding("d", "diff", "Diff marked", id="browser.diff"),
        Binding("o", "open", "Open", show=False, id="browser.open"),
    ]

    def __init__(self, bundle) -> None:
        super().__init__()
        self.bundle = bundle
        self.rows: list[BrowserRow] = []
        """Every capture's row, in capture order (filled by the loading worker)."""
        self.shown: list[BrowserRow] = []
        """The rows on screen, filtered and sorted."""
        self.sort_key = "id"
        self.sort_reverse = False
        self.filter_text = ""
        self.marked: list[int] = []
        """Capture ids marked with space, in marking order."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        with Horizontal(id="browser-top"):
            yield Static(Text("filter"), id="filter-label")
            yield Input(placeholder="kernel, variant, target... (/ to focus, escape to clear)",
                        id="filter")
        # No loading overlay: a loading widget cannot hold the focus, and the keys must
        # keep working while the worker reads (the status line says it is reading).
        columns = [Column("mark", " "), *(
            Column(key, header, screen_data.VARIANT_WIDTH if key == "variant" else None,
                   "right" if key in RIGHT else "left", pinned=key == "status")  # seen at every width
            for key, header in BROWSER_COLUMNS)]
        yield CaptureTable(columns, id="captures")
        yield StatusLine("reading the bundle...", id="browser-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#captures", CaptureTable).focus()
        self.load_rows()

    @work(thread=True, exclusive=True, group="browser-rows", exit_on_error=False)
    def load_rows(self) -> None:
        """Read every capture's row off the UI thread."""
        rows = screen_data.browser_rows(self.bundle)
        self.app.call_from_thread(self._rows_loaded, rows)

    def _rows_loaded(self, rows: list[BrowserRow]) -> None:
        self.rows = rows
        self._refill()

    # -- table contents --------------------------------------------------------
    def _visible(self) -> list[BrowserRow]:
        words = self.filter_text.lower().split()
        rows = [r for r in self.rows if all(w in r.haystack for w in words)]
        rows.sort(key=lambda r: r.keys[self.sort_key], reverse=self.sort_reverse)
        return rows

    def _refill(self) -> None:
        table = self.query_one("#captures", CaptureTable)
        current = self.current_row()
        self.shown = self._visible()
        mark = Text(MARK, style="bold")
        blank = Text(" ")
        table.set_rows(
            [[mark if r.capture.id in self.marked else blank,
              *(r.cells[k] for k, _ in BROWSER_COLUMNS)] for r in self.shown],
            cursor=self.shown.index(current) if current in self.shown else 0)
        self._update_status()

    def _update_status(self) -> None:
        arrow = "\u2193" if self.sort_reverse else "\u2191"
        header = dict(BROWSER_COLUMNS)[self.sort_key]
        parts = [f"{len(self.shown)} of {len(self.rows)} captures", f"sorted by {header} {arrow}"]
        if self.filter_text.strip():
            parts.append(f"filter: {self.filter_text.strip()}")
        if self.marked:
            parts.append(f"marked: {', '.join('#' + str(i) for i in self.marked)}"
                         + ("  (d: diff them)" if len(self.marked) == 2 else ""))
        else:
            parts.append("space marks two captures, d diffs them")
        self.query_one("#browser-status", StatusLine).update_fields(parts)

    def current_row(self) -> BrowserRow | None:
        """The row under the table's cursor, or None when the table is empty."""
        table = self.query_one("#captures", CaptureTable)
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    # -- events and actions ------------------------------------------------------
    @on(CaptureTable.RowSelected, "#captures")
    def _row_selected(self, event: CaptureTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    @on(CaptureTable.HeaderSelected, "#captures")
    def _header_selected(self, event: CaptureTable.HeaderSelected) -> None:
        event.stop()
        key = event.key
        if key == "mark":
            return
        if key == self.sort_key:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_key, self.sort_reverse = key, False
        self._refill()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._refill()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#captures", CaptureTable).focus()

    def action_open(self) -> None:
        """Open the kernel view of the capture under the cursor."""
        row = self.current_row()
        if row is not None:
            cast("IrscopeApp", self.app).open_capture(row.capture)

    def action_filter(self) -> None:
        """Focus the filter box."""
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        """Clear the filter and go back to the table."""
        self.query_one("#filter", Input).value = ""
        self.query_one("#captures", CaptureTable).focus()

    def action_sort(self) -> None:
        """Sort by the next column."""
        keys = [k for k, _ in BROWSER_COLUMNS]
        self.sort_key = keys[(keys.index(self.sort_key) + 1) % len(keys)]
        self.sort_reverse = False
        self._refill()

    def action_reverse(self) -> None:
        """Reverse the sort order."""
        self.sort_reverse = not self.sort_reverse
        self._refill()

    def action_mark(self) -> None:
        """Mark (or unmark) the capture under the cursor for a diff."""
        row = self.current_row()
        if row is None:
            return
        cid = row.capture.id
        before = set(self.marked)
        if cid in self.marked:
            self.marked.remove(cid)
        else:
            self.marked.append(cid)
            del self.marked[:-2]  # two sides at most: the oldest mark gives way
        changed = before ^ set(self.marked)
        table = self.query_one("#captures", CaptureTable)
        for i, r in enumerate(self.shown):
            if r.capture.id in changed:
                cell = Text(MARK, style="bold") if r.capture.id in self.marked else Text(" ")
                table.update_cell(i, 0, cell)
        table.move_cursor(table.cursor_row + 1)
        self._update_status()

    def action_diff(self) -> None:
        """Diff the two marked captures (A: the first marked)."""
        if len(self.marked) != 2:
            self.notify(f"mark two captures with space first ({len(self.marked)} marked)",
                        severity="warning", markup=False)
            return
        by_id = {r.capture.id: r.capture for r in self.rows}
        cast("IrscopeApp", self.app).diff_captures(by_id[self.marked[0]], by_id[self.marked[1]])
