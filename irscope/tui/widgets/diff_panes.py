"""Two IR panes side by side for one stage of a comparison, marked and kept aligned.

With both sides' texts, each pane shows its whole text: side A marks removed and
changed ops (``-`` ``~``), side B added and changed ones (``+`` ``~``), moved ops
``>`` on both. Moving the cursor in one pane moves the other to the paired line (the
engine's aligned pairs plus its changed and moved ops). Without the texts (a
Comparison alone), the panes show the changes only, one row per change, aligned
row for row: that is all a Comparison carries.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal

from irscope.irdiff.model import ADDED, CHANGED, MOVED, REMOVED, StageDiff
from irscope.tui.widgets.ir_view import IRView

_MARK = {ADDED: "added", REMOVED: "removed", CHANGED: "changed", MOVED: "linked"}


@dataclass(frozen=True, slots=True)
class PaneContent:
    """What the two panes show for one stage."""

    text_a: str
    text_b: str
    marks_a: dict[int, str]
    marks_b: dict[int, str]
    a_to_b: dict[int, int]
    """0-based line of A -> the paired 0-based line of B."""
    full_text: bool
    """True: the sides' whole texts; False: the changes only, row by row."""


def pane_content(d: StageDiff, texts: tuple[str, str] | None) -> PaneContent:
    """The panes' texts, marks and line pairing for one stage diff."""
    if texts is None:
        rows_a, rows_b, marks = [], [], {}
        for i, c in enumerate(d.changes):
            rows_a.append(f"{c.before.line:>5}  {c.before.text}" if c.before else "")
            rows_b.append(f"{c.after.line:>5}  {c.after.text}" if c.after else "")
            marks[i] = _MARK[c.kind]
        ma = {i: k for i, k in marks.items() if rows_a[i]}
        mb = {i: k for i, k in marks.items() if rows_b[i]}
        return PaneContent("\n".join(rows_a), "\n".join(rows_b), ma, mb,
                           {i: i for i in range(len(rows_a))}, False)
    marks_a: dict[int, str] = {}
    marks_b: dict[int, str] = {}
    pairs = {a - 1: b - 1 for a, b in d.pairs if a > 0 and b > 0}
    for c in d.changes:
        kind = _MARK[c.kind]
        if c.before is not None and c.before.line > 0:
            marks_a[c.before.line - 1] = kind
        if c.after is not None and c.after.line > 0:
            marks_b[c.after.line - 1] = kind
        if c.before is not None and c.after is not None and c.before.line > 0 and c.after.line > 0:
            pairs[c.before.line - 1] = c.after.line - 1
    return PaneContent(texts[0], texts[1], marks_a, marks_b, pairs, True)


def nearest(pairs_sorted: list[tuple[int, int]], line: int) -> int | None:
    """The partner of ``line``, or of the nearest paired line above it (``pairs_sorted``:
    (line, partner) sorted by line)."""
    keys = [p[0] for p in pairs_sorted]
    k = bisect_right(keys, line) - 1
    if k < 0:
        return None
    return pairs_sorted[k][1]


class DiffPanes(Horizontal):
    """Side A and side B of one stage."""

    DEFAULT_CSS = """
    DiffPanes { height: 1fr; }
    DiffPanes IRView { width: 1fr; }
    DiffPanes #pane-a { border-right: vkey $foreground 20%; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._ab: list[tuple[int, int]] = []
        self._ba: list[tuple[int, int]] = []
        self._syncing = False
        self.content: PaneContent | None = None

    def compose(self) -> ComposeResult:
        yield IRView(id="pane-a")
        yield IRView(id="pane-b")

    def show(self, content: PaneContent, language: str | None) -> None:
        """Replace both panes' contents."""
        self.content = content
        a, b = self.query_one("#pane-a", IRView), self.query_one("#pane-b", IRView)
        a.set_text(content.text_a, language=language)
        b.set_text(content.text_b, language=language)
        a.set_marks(content.marks_a)
        b.set_marks(content.marks_b)
        self._ab = sorted(content.a_to_b.items())
        self._ba = sorted((y, x) for x, y in content.a_to_b.items())

    @on(IRView.CursorMoved)
    def _follow(self, event: IRView.CursorMoved) -> None:
        # not stopped: the screen also shows the details of the change under the cursor
        if self._syncing or not event.ir_view.has_focus:
            return
        mine = event.ir_view.id
        other = self.query_one("#pane-b" if mine == "pane-a" else "#pane-a", IRView)
        target = nearest(self._ab if mine == "pane-a" else self._ba, event.line)
        if target is None or target == other.cursor_line:
            return
        self._syncing = True
        try:
            other.goto_line(target)
        finally:
            self._syncing = False
