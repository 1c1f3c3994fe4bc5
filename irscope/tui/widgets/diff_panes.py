"""Two IR panes side by side for one stage of a comparison, row for row.

The panes draw the change list ``irscope diff`` prints
(:func:`irscope.diff.change_list.change_list`): each change on one row (the op
before on the left, after on the right, a blank where a side has none), its details
("layout: sizePerThread [1, 1] -> [1, 8]") on rows under it, and each run of
unchanged ops folded into one row with its count. ``enter`` on a folded run opens
it (the ops of both sides, paired) when the whole texts are at hand. Both panes hold
the same rows, so one cursor and one scroll serve both: moving or scrolling either
moves the other.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from rich.segment import Segment
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.strip import Strip

from irscope.diff.change_list import ChangeItem, ChangeList
from irscope.irdiff.model import ADDED, CHANGED, MOVED, REMOVED, Change
from irscope.tui.widgets.ir_view import MARK_SIGNS, IRView

_MARK = {ADDED: "added", REMOVED: "removed", CHANGED: "changed", MOVED: "linked"}

FOLD, OPEN_FOLD, UNCHANGED, CHANGE, DETAIL = "fold", "open-fold", "unchanged", "change", "detail"
"""Row kinds: a folded run, the head of an opened run, an op of an opened run, a
change, a detail line of the change above."""


def fold_label(count: int, opened: bool = False) -> str:
    """What a folded run's row says (the CLI prints the same words)."""
    return f"{'⌄' if opened else '⋯'} {count} unchanged op(s)" + ("" if opened else "  (enter: show)")


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One row of both panes."""

    kind: str
    item: int
    """Index of the change-list item the row belongs to."""
    text_a: str
    text_b: str
    line_a: int | None = None
    """The row's line in side A's text (1-based; None: no line)."""
    line_b: int | None = None
    mark_a: str | None = None
    mark_b: str | None = None


def _one_line(text: str) -> str:
    # A row is one line of each pane: a character splitlines() breaks on would shift
    # every row below it out of alignment.
    parts = text.splitlines()
    return " ".join(parts) if len(parts) > 1 else text


def _line(lines: list[str] | None, number: int, fallback: str) -> str:
    """Line ``number`` (1-based) of a side's text, indentation kept, else ``fallback``."""
    if lines is not None and 0 < number <= len(lines):
        return lines[number - 1]
    return fallback


def change_rows(c: Change, item: int, lines_a: list[str] | None, lines_b: list[str] | None) -> list[DiffRow]:
    """The rows of one change: the op on each side that has it, then its details."""
    mark = _MARK[c.kind]
    a = _line(lines_a, c.before.line, c.before.text) if c.before is not None else ""
    b = _line(lines_b, c.after.line, c.after.text) if c.after is not None else ""
    rows = [DiffRow(CHANGE, item, _one_line(a), _one_line(b),
                    c.before.line or None if c.before is not None else None,
                    c.after.line or None if c.after is not None else None,
                    mark if c.before is not None else None, mark if c.after is not None else None)]
    if c.kind == MOVED and c.before is not None and c.after is not None and c.before.line and c.after.line:
        rows.append(DiffRow(DETAIL, item, "", f"  ↳ moved from line {c.before.line}"))
    for det in c.details:
        rows.append(DiffRow(DETAIL, item, "", _one_line("  ↳ " + det)))
    return rows


def diff_rows(listed: ChangeList, texts: tuple[str, str] | None, opened: frozenset[int] = frozenset()
              ) -> list[DiffRow]:
    """Both panes' rows for a change list; ``opened``: the items (folds) shown whole
    (only with ``texts``, the two sides' whole texts)."""
    lines_a = texts[0].splitlines() if texts is not None else None
    lines_b = texts[1].splitlines() if texts is not None else None
    rows: list[DiffRow] = []
    for i, item in enumerate(listed.items):
        if isinstance(item, ChangeItem):
            rows.extend(change_rows(item.change, i, lines_a, lines_b))
            continue
        if i not in opened or lines_a is None or lines_b is None:
            label = fold_label(item.count)
            rows.append(DiffRow(FOLD, i, label, label))
            continue
        label = fold_label(item.count, opened=True)
        rows.append(DiffRow(OPEN_FOLD, i, label, label))
        for x, y in item.pairs:
            rows.append(DiffRow(UNCHANGED, i, _one_line(_line(lines_a, x, "")), _one_line(_line(lines_b, y, "")),
                                x, y))
    return rows


class SidePane(IRView):
    """One side of the diff: the rows' texts, with each row's line in that side's text
    in the gutter (blank on rows that have none)."""

    def __init__(self, *, id: str | None = None) -> None:
        self._numbers: list[int | None] = []
        self._number_digits = 1
        self.partner: SidePane | None = None
        """The other side: it scrolls wherever this one scrolls (and back)."""
        super().__init__(id=id)

    # The scroll watchers themselves, not a watch() from outside: they run in the
    # same call as every scroll, whoever makes it (keys, wheel, a cursor kept in view).
    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        partner = self.partner
        if partner is not None and partner.scroll_y != new_value:
            partner.scroll_to(y=new_value, animate=False, immediate=True)

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_x(old_value, new_value)
        partner = self.partner
        if partner is not None and partner.scroll_x != new_value:
            partner.scroll_to(x=new_value, animate=False, immediate=True)

    def set_rows(self, texts: list[str], numbers: list[int | None], marks: dict[int, str],
                 language: str | None) -> None:
        """Replace the rows (their texts, gutter numbers and marks)."""
        self._numbers = numbers
        self._number_digits = len(str(max((n for n in numbers if n), default=1)))
        self.set_text("\n".join(texts), language=language)
        self.set_marks(marks)

    def row_number(self, row: int) -> int | None:
        """The line in this side's text shown on ``row`` (None: none)."""
        return self._numbers[row] if 0 <= row < len(self._numbers) else None

    @property
    def _gutter_width(self) -> int:
        return self._number_digits + 2  # number, sign, space

    def _gutter_strip(self, y: int) -> Strip:
        mark = self._marks.get(y)
        sign = MARK_SIGNS.get(mark, "\u2022") if mark else " "
        n = self.row_number(y)
        number = (str(n) if n else "").rjust(self._number_digits)
        segments = [Segment(number, self._style("ir-view--gutter")),
                    Segment(sign, self._style(f"ir-view--mark-{mark}") if mark in MARK_SIGNS
                            else self._style("ir-view--gutter")),
                    Segment(" ")]
        return Strip(segments, self._gutter_width)


class DiffPanes(Horizontal):
    """Side A and side B of one stage, one row for row, moving and scrolling together."""

    DEFAULT_CSS = """
    DiffPanes { height: 1fr; }
    DiffPanes SidePane { width: 1fr; }
    DiffPanes #pane-a { border-right: vkey $foreground 20%; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.listed: ChangeList | None = None
        self.rows: list[DiffRow] = []
        self._texts: tuple[str, str] | None = None
        self._language: str | None = None
        self._opened: frozenset[int] = frozenset()
        self._starts: list[int] = []
        self._syncing = False

    def compose(self) -> ComposeResult:
        yield SidePane(id="pane-a")
        yield SidePane(id="pane-b")

    def on_mount(self) -> None:
        a, b = self.pane_a, self.pane_b
        a.partner, b.partner = b, a

    @property
    def pane_a(self) -> SidePane:
        return self.query_one("#pane-a", SidePane)

    @property
    def pane_b(self) -> SidePane:
        return self.query_one("#pane-b", SidePane)

    @property
    def full_text(self) -> bool:
        """Whether the sides' whole texts are at hand (folded runs can be opened)."""
        return self._texts is not None

    # -- content ---------------------------------------------------------------
    def show(self, listed: ChangeList, texts: tuple[str, str] | None, language: str | None) -> None:
        """Draw a change list (folds closed); the cursor goes to its first change."""
        self.listed, self._texts, self._language = listed, texts, language
        self._opened = frozenset()
        self._draw()
        starts = self.change_starts()
        if starts:
            self.goto_row(starts[0])

    def _draw(self) -> None:
        assert self.listed is not None  # _draw follows show()
        self.rows = diff_rows(self.listed, self._texts, self._opened)
        self._starts = [i for i, r in enumerate(self.rows) if r.kind == CHANGE]
        for pane, side in ((self.pane_a, 0), (self.pane_b, 1)):
            texts = [r.text_b if side else r.text_a for r in self.rows]
            numbers = [r.line_b if side else r.line_a for r in self.rows]
            marks = {i: m for i, r in enumerate(self.rows) if (m := (r.mark_b if side else r.mark_a))}
            pane.set_rows(texts, numbers, marks, self._language)

    def toggle_fold(self, row: int) -> bool:
        """Open the folded run on ``row`` (or close the opened one); False when the row
        is no run or the whole texts are not at hand."""
        if not 0 <= row < len(self.rows) or self.rows[row].kind not in (FOLD, OPEN_FOLD, UNCHANGED):
            return False
        if self._texts is None:
            return False
        item = self.rows[row].item
        self._opened = self._opened - {item} if item in self._opened else self._opened | {item}
        self._draw()
        head = next(i for i, r in enumerate(self.rows) if r.item == item)
        self.goto_row(head, center=False)
        return True

    # -- position --------------------------------------------------------------
    def change_starts(self) -> list[int]:
        """The first row of each change, in order."""
        return list(self._starts)

    @property
    def cursor_row(self) -> int:
        return self.pane_b.cursor_line

    def change_at(self, row: int) -> ChangeItem | None:
        """The change whose rows hold ``row`` (None on a run)."""
        if self.listed is None or not 0 <= row < len(self.rows) or self.rows[row].kind not in (CHANGE, DETAIL):
            return None
        item = self.listed.items[self.rows[row].item]
        return item if isinstance(item, ChangeItem) else None

    def position(self) -> int:
        """How many changes start at or above the cursor (0: above the first)."""
        return bisect_right(self._starts, self.cursor_row)

    def goto_row(self, row: int, *, center: bool = True) -> None:
        """Move both panes' cursor to ``row``."""
        self._syncing = True
        try:
            for pane in (self.pane_a, self.pane_b):
                pane.goto_line(row, center=center)
        finally:
            self._syncing = False

    def goto_change(self, step: int) -> bool:
        """Move to the next (``step`` 1) or previous (-1) change, wrapping; False when
        there is none."""
        starts = self._starts
        if not starts:
            return False
        here = self.cursor_row
        if step > 0:
            k = bisect_right(starts, here)
            self.goto_row(starts[k] if k < len(starts) else starts[0])
        else:
            k = bisect_left(starts, here) - 1
            self.goto_row(starts[k] if k >= 0 else starts[-1])
        return True

    # -- search (both sides, what the rows show) -------------------------------
    def search(self, query: str) -> list[int]:
        """Rows whose text on either side holds ``query`` (as IRView matches it); the
        cursor goes to the first at or after it."""
        self.pane_a.search(query)
        self.pane_b.search(query)
        hits = sorted(set(self.pane_a.hits) | set(self.pane_b.hits))
        if hits:
            here = self.cursor_row
            self.goto_row(next((h for h in hits if h >= here), hits[0]))
        return hits

    def hits(self) -> list[int]:
        """The rows the active search matches."""
        return sorted(set(self.pane_a.hits) | set(self.pane_b.hits))

    def goto_hit(self, step: int) -> bool:
        """Next (1) or previous (-1) search hit, wrapping; False when none."""
        hits = self.hits()
        if not hits:
            return False
        here = self.cursor_row
        if step > 0:
            self.goto_row(next((h for h in hits if h > here), hits[0]))
        else:
            self.goto_row(next((h for h in reversed(hits) if h < here), hits[-1]))
        return True

    # -- keeping the two sides together -----------------------------------------
    @on(IRView.CursorMoved)
    def _follow_cursor(self, event: IRView.CursorMoved) -> None:
        # not stopped: the screen also shows the details of the change under the cursor
        # Only the focused pane leads (keys and clicks move it; goto_row moves both),
        # and to where its cursor is now: these messages arrive after the fact, and a
        # stale line from a programmatic move must not pull the other pane back.
        mine = event.ir_view
        if self._syncing or not mine.has_focus:
            return
        other = self.pane_b if mine.id == "pane-a" else self.pane_a
        line = mine.cursor_line
        if other.cursor_line != line:
            self._syncing = True
            try:
                other.cursor_line = line
            finally:
                self._syncing = False



def status_text(panes: DiffPanes) -> Text:
    """``change 2/17`` and what the keys do (the diff screen's status line)."""
    listed = panes.listed
    t = Text()
    if listed is None:
        return t
    n = listed.shown
    t.append(f"change {panes.position() or '-'}/{n}", style="bold")
    if listed.left_out:
        t.append(f" (+{listed.left_out} not listed)", style="dim")
    t.append(f"   {len(listed.folds)} unchanged run(s) folded", style="dim")
    t.append("   n/N: next/previous change" + ("   enter: open a run" if panes.full_text else ""), style="dim")
    return t
