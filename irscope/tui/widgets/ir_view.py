"""IRView: a read-only, virtually rendered text pane for IR dumps and Python source.

Modelled on Textual's ``Log`` widget (and toolong): the pane keeps the lines as a list of
strings, sets ``virtual_size`` to the line count and paints only the visible rows from
``render_line``, with a per-line ``Strip`` cache. A 50,000-line LLVM dump costs what its
40 visible lines cost. Marks, the cursor row and search matches are layered on top of the
cached highlighted strip, so moving the cursor repaints two lines and re-tokenizes none.

Text is never interpreted as Rich markup: each line becomes a ``rich.text.Text`` built
from the plain string.

A display filter (:meth:`IRView.set_filter`) hides some lines and rewrites others
(the kernel view hides MLIR ``#loc`` lines and ``loc(...)`` suffixes). Lines keep their
numbers: the cursor, marks and hits are content lines, the gutter shows their numbers
(with gaps where lines are hidden), and only painting and scrolling go by shown rows.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Callable, ClassVar, Mapping

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from irscope.tui.widgets.heat import HEAT_WIDTH, LEVELS, level, share_text
from irscope.tui.widgets.highlight import TOKEN_KINDS, tokenize

_CONTROL = re.compile("[\u0000-\u0008\u000b-\u001f\u007f]")

#: Gutter sign per mark kind; unknown kinds get a bullet and the "linked" tint.
MARK_SIGNS: dict[str, str] = {
    "added": "+", "removed": "-", "changed": "~", "linked": ">", "hit": "*",
}


def _clean(line: str) -> str:
    """Tabs expanded and control characters replaced, so cell widths are predictable."""
    return _CONTROL.sub("\ufffd", line.expandtabs(4))


class _LineMessage(Message):
    """A message about one line of an IRView (``line`` is 0-based)."""

    def __init__(self, ir_view: "IRView", line: int) -> None:
        super().__init__()
        self.ir_view = ir_view
        self.line = line

    @property
    def control(self) -> "IRView":
        return self.ir_view


class IRView(ScrollView, can_focus=True):
    """Virtual-rendering read-only text pane with a cursor, marks, highlighting and search."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ir-view--gutter", "ir-view--cursor", "ir-view--cursor-blur", "ir-view--match",
        *(f"ir-view--mark-{kind}" for kind in MARK_SIGNS),
        *(f"ir-view--tok-{kind}" for kind in TOKEN_KINDS),
        *(f"ir-view--heat-{lv}" for lv in LEVELS),
    }

    DEFAULT_CSS = """
    IRView {
        background: $surface;
        color: $foreground;
        overflow: auto auto;
        & > .ir-view--gutter { color: $foreground-muted; }
        & > .ir-view--cursor { background: $accent 40%; }
        & > .ir-view--cursor-blur { background: $accent 18%; }
        & > .ir-view--match { background: $warning 45%; text-style: bold; }
        & > .ir-view--mark-added { background: $success 22%; }
        & > .ir-view--mark-removed { background: $error 22%; }
        & > .ir-view--mark-changed { background: $warning 22%; }
        & > .ir-view--mark-linked { background: $primary 28%; }
        & > .ir-view--mark-hit { background: $secondary 28%; }
        & > .ir-view--tok-comment { color: $foreground-muted; text-style: italic; }
        & > .ir-view--tok-string { color: $text-success; }
        & > .ir-view--tok-keyword { color: $text-accent; text-style: bold; }
        & > .ir-view--tok-op { color: $text-primary; text-style: bold; }
        & > .ir-view--tok-value { color: $text-warning; }
        & > .ir-view--tok-type { color: $text-secondary; }
        & > .ir-view--tok-attr { color: $text-accent; }
        & > .ir-view--tok-number { color: $text-error; }
        & > .ir-view--tok-label { color: $text-success; text-style: bold; }
        & > .ir-view--tok-directive { color: $text-secondary; }
        & > .ir-view--tok-register { color: $text-warning; }
        & > .ir-view--heat-hot { color: $text-error; text-style: bold; }
        & > .ir-view--heat-warm { color: $text-warning; }
        & > .ir-view--heat-cool { color: $foreground-muted; }
        &:focus { background-tint: $foreground 3%; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False, id="ir_view.cursor_up"),
        Binding("down", "cursor_down", "Down", show=False, id="ir_view.cursor_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="ir_view.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="ir_view.page_down"),
        Binding("home", "cursor_home", "First line", show=False, id="ir_view.home"),
        Binding("end", "cursor_end", "Last line", show=False, id="ir_view.end"),
        Binding("left", "scroll_left", "Scroll left", show=False, id="ir_view.scroll_left"),
        Binding("right", "scroll_right", "Scroll right", show=False,
                id="ir_view.scroll_right"),
        Binding("enter", "select_line", "Select line", show=False, id="ir_view.select"),
    ]

    cursor_line: reactive[int] = reactive(0, repaint=False, layout=False)
    """0-based line of the cursor; the row is drawn highlighted and kept in view."""

    class CursorMoved(_LineMessage):
        """Posted when ``cursor_line`` changes."""

    class LineSelected(_LineMessage):
        """Posted on enter, or on a click on a line."""

    def __init__(self, text: str = "", *, language: str | None = None,
                 name: str | None = None, id: str | None = None,
                 classes: str | None = None, first_number: int = 1) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: list[str] = []
        self._language: str | None = None
        self._marks: dict[int, str] = {}
        self._query = ""
        self._hits: list[int] = []
        self._match: re.Pattern[str] | None = None
        self._strip_cache: LRUCache[int, Strip] = LRUCache(2048)
        self._styles: dict[str, Style] = {}
        self._gutter_digits = 1
        self._first_number = first_number
        self._hide: Callable[[str], bool] | None = None
        self._rewrite: Callable[[str], str] | None = None
        self._shown: list[int] | None = None
        """Content lines shown, in order (None: every line)."""
        self._heat: dict[int, float] | None = None
        """Content line -> measured samples, while the heat column is shown (:meth:`set_heat`)."""
        self._heat_total = 0.0
        self.set_text(text, language=language, first_number=first_number)

    # ------------------------------------------------------------------ content
    def set_text(self, text: str, *, language: str | None = None,
                 first_number: int = 1) -> None:
        """Replace the content; resets cursor, marks and search. ``first_number`` is the
        number the gutter shows for line 0 (a kernel's first line in its file)."""
        self._lines = text.splitlines()
        self._language = language
        self._first_number = first_number
        self._marks = {}
        self._query, self._hits, self._match = "", [], None
        self._apply_filter()
        self.set_reactive(IRView.cursor_line, self._shown[0] if self._shown else 0)
        if self.is_mounted:
            self.scroll_to(0, 0, animate=False, immediate=True)
            self.post_message(self.CursorMoved(self, self.cursor_line))
        self.refresh()

    def set_filter(self, hide: Callable[[str], bool] | None = None,
                   rewrite: Callable[[str], str] | None = None) -> None:
        """Hide the lines for which ``hide`` is true and show ``rewrite(line)`` for the
        others (None, None: every line as written). Kept across :meth:`set_text`; the
        cursor stays on its line, or moves to the nearest shown one."""
        if hide is self._hide and rewrite is self._rewrite:
            return
        self._hide, self._rewrite = hide, rewrite
        line = self.cursor_line
        self._apply_filter()
        if self._match is not None:
            self._find_hits()
        self.set_reactive(IRView.cursor_line, self.validate_cursor_line(line))
        if self.is_mounted:
            self.call_after_refresh(self._center_on, self.cursor_line)
        self.refresh()

    @property
    def filtered(self) -> bool:
        """Whether a display filter is set."""
        return self._hide is not None or self._rewrite is not None

    def _apply_filter(self) -> None:
        """Recompute the shown lines, the gutter and the virtual size."""
        self._strip_cache.clear()
        hide = self._hide
        self._shown = ([i for i, line in enumerate(self._lines) if not hide(line)]
                       if hide is not None else None)
        self._gutter_digits = len(str(max(1, len(self._lines) + self._first_number - 1)))
        shown = self._shown if self._shown is not None else range(len(self._lines))
        if self._rewrite is None and self._shown is None:  # the common case: one C loop
            widest = max(map(len, self._lines), default=0)
        else:
            widest = max((len(self._display(i)) for i in shown), default=0)
        self.virtual_size = Size(self._gutter_width + widest + 1, len(shown))

    def _display(self, line: int) -> str:
        """Content line ``line`` as shown (rewritten by the display filter)."""
        raw = self._lines[line]
        return self._rewrite(raw) if self._rewrite is not None else raw

    @property
    def shown_count(self) -> int:
        """Number of lines shown (``line_count`` less the hidden ones)."""
        return len(self._shown) if self._shown is not None else len(self._lines)

    def is_shown(self, line: int) -> bool:
        """Whether content line ``line`` is shown (not hidden by the display filter)."""
        if not 0 <= line < len(self._lines):
            return False
        if self._shown is None:
            return True
        at = bisect_left(self._shown, line)
        return at < len(self._shown) and self._shown[at] == line

    def row_of(self, line: int) -> int:
        """The row (0-based, in shown lines) of content line ``line``, or of the first
        shown line after it when it is hidden."""
        return line if self._shown is None else bisect_left(self._shown, line)

    def line_at_row(self, row: int) -> int:
        """The content line shown at ``row``, or -1 past the end."""
        if self._shown is None:
            return row if 0 <= row < len(self._lines) else -1
        return self._shown[row] if 0 <= row < len(self._shown) else -1

    def _step_line(self, line: int, rows: int) -> int:
        """The content line ``rows`` shown rows away from ``line`` (clamped)."""
        count = self.shown_count
        if not count:
            return 0
        row = min(max(self.row_of(line) + rows, 0), count - 1)
        return self.line_at_row(row)

    @property
    def language(self) -> str | None:
        """The highlighting family given to ``set_text`` (None: plain)."""
        return self._language

    @property
    def line_count(self) -> int:
        """Number of lines of content."""
        return len(self._lines)

    def line_text(self, line: int) -> str:
        """The raw text of 0-based ``line`` ("" when out of range)."""
        return self._lines[line] if 0 <= line < len(self._lines) else ""

    @property
    def marks(self) -> Mapping[int, str]:
        """The current marks (0-based line -> kind); read only."""
        return dict(self._marks)

    def set_marks(self, marks: Mapping[int, str]) -> None:
        """Replace the marks; repaints only the lines whose mark changed."""
        new = {int(k): v for k, v in marks.items() if 0 <= int(k) < len(self._lines)}
        old = self._marks
        changed = {y for y in old.keys() | new.keys() if old.get(y) != new.get(y)}
        self._marks = new
        for y in changed:
            self.refresh_lines(self.row_of(y))

    # ------------------------------------------------------------------ heat
    def set_heat(self, heat: Mapping[int, float] | None, total: float = 0.0) -> None:
        """Show a heat column: ``heat`` maps 0-based content lines to measured samples,
        drawn as their share of ``total`` (:mod:`irscope.tui.widgets.heat`); None hides
        the column."""
        was = self._heat is not None
        self._heat = None if heat is None else {int(k): float(v) for k, v in heat.items()}
        self._heat_total = float(total)
        if was != (heat is not None):  # the gutter's width changes
            self.virtual_size = Size(self.virtual_size.width + (HEAT_WIDTH if heat is not None else -HEAT_WIDTH),
                                     self.virtual_size.height)
        self.refresh()

    @property
    def heat_shown(self) -> bool:
        """Whether the heat column is shown."""
        return self._heat is not None

    def heat_at(self, line: int) -> float:
        """The samples the heat column gives content line ``line`` (0 when none, or no column)."""
        return (self._heat or {}).get(line, 0.0)

    def _heat_segments(self, line: int) -> list[Segment]:
        """The heat column's cells for content line ``line`` (none while it is hidden)."""
        if self._heat is None:
            return []
        samples = self._heat.get(line, 0.0)
        lv = level(samples, self._heat_total)
        style = self._style(f"ir-view--heat-{lv}") if lv is not None else self._style("ir-view--gutter")
        return [Segment(share_text(samples, self._heat_total), style), Segment(" ")]

    # ------------------------------------------------------------------ cursor
    def validate_cursor_line(self, line: int) -> int:
        line = max(0, min(line, len(self._lines) - 1)) if self._lines else 0
        if self._shown is not None and self._shown and not self.is_shown(line):
            # A hidden line: the next shown one (else the last shown one).
            at = bisect_left(self._shown, line)
            line = self._shown[min(at, len(self._shown) - 1)]
        return line

    def watch_cursor_line(self, old: int, new: int) -> None:
        self.refresh_lines(self.row_of(old))
        self.refresh_lines(self.row_of(new))
        self._scroll_into_view(new)
        self.post_message(self.CursorMoved(self, new))

    def goto_line(self, line: int, *, center: bool = True) -> None:
        """Move the cursor to ``line`` and scroll it into view (centred by default)."""
        self.cursor_line = line
        if center:
            target = self.validate_cursor_line(line)
            if self.size.height:
                self.scroll_to(y=max(0, self.row_of(target) - self.size.height // 2),
                               animate=False, immediate=True)
            else:  # not laid out yet: centre once the size is known
                self.call_after_refresh(self._center_on, target)

    def _center_on(self, line: int) -> None:
        if self.cursor_line == line:
            self.scroll_to(y=max(0, self.row_of(line) - self.size.height // 2), animate=False,
                           immediate=True)

    def _scroll_into_view(self, line: int) -> None:
        height = self.scrollable_content_region.height
        if not height:
            return
        line = self.row_of(line)
        top = round(self.scroll_offset.y)
        if line < top:
            self.scroll_to(y=line, animate=False, immediate=True)
        elif line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False, immediate=True)

    def on_resize(self, event: events.Resize) -> None:
        # A pane that shrinks (the details panel opening) keeps its cursor in view.
        self.call_after_refresh(self._scroll_into_view, self.cursor_line)

    def action_cursor_up(self) -> None:
        self.cursor_line = self._step_line(self.cursor_line, -1)

    def action_cursor_down(self) -> None:
        self.cursor_line = self._step_line(self.cursor_line, 1)

    def action_page_up(self) -> None:
        self.cursor_line = self._step_line(self.cursor_line,
                                           -max(1, self.scrollable_content_region.height - 1))

    def action_page_down(self) -> None:
        self.cursor_line = self._step_line(self.cursor_line,
                                           max(1, self.scrollable_content_region.height - 1))

    def action_cursor_home(self) -> None:
        self.cursor_line = self._step_line(0, 0)

    def action_cursor_end(self) -> None:
        self.cursor_line = self._step_line(len(self._lines) - 1, 0)

    def action_select_line(self) -> None:
        if self._lines:
            self.post_message(self.LineSelected(self, self.cursor_line))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        line = self.line_at_row(offset.y + round(self.scroll_offset.y))
        if 0 <= line < len(self._lines):
            event.stop()
            self.cursor_line = line
            self.post_message(self.LineSelected(self, line))

    # ------------------------------------------------------------------ search
    @property
    def search_query(self) -> str:
        """The active search query ("" when none)."""
        return self._query

    @property
    def hits(self) -> list[int]:
        """0-based lines that match the active search, in order."""
        return list(self._hits)

    def search(self, query: str) -> int:
        """Find ``query`` (plain text; case-insensitive unless it has a capital).

        Returns the number of lines that match and moves the cursor to the first hit at
        or after it (wrapping). An empty query clears the search.
        """
        self._query = query
        self._strip_cache.clear()
        if not query:
            self._hits, self._match = [], None
            self.refresh()
            return 0
        flags = 0 if any(c.isupper() for c in query) else re.IGNORECASE
        self._match = re.compile(re.escape(query), flags)
        self._find_hits()
        if self._hits:
            at = bisect_left(self._hits, self.cursor_line)
            self.goto_line(self._hits[at % len(self._hits)])
        self.refresh()
        return len(self._hits)

    def _find_hits(self) -> None:
        """The shown lines that match the search, as shown (rewritten)."""
        if self._match is None:
            self._hits = []
            return
        search = self._match.search
        shown = self._shown if self._shown is not None else range(len(self._lines))
        self._hits = [i for i in shown if search(self._display(i))]

    def next_hit(self) -> bool:
        """Move to the next search hit after the cursor (wrapping); False when none."""
        if not self._hits:
            return False
        at = bisect_right(self._hits, self.cursor_line)
        self.goto_line(self._hits[at % len(self._hits)])
        return True

    def previous_hit(self) -> bool:
        """Move to the previous search hit before the cursor (wrapping); False when none."""
        if not self._hits:
            return False
        at = bisect_left(self._hits, self.cursor_line) - 1
        self.goto_line(self._hits[at % len(self._hits)])
        return True

    # ------------------------------------------------------------------ rendering
    @property
    def _gutter_width(self) -> int:
        heat = HEAT_WIDTH if getattr(self, "_heat", None) is not None else 0  # read while __init__ runs
        return self._gutter_digits + 2 + heat  # number, sign, space, the heat column

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._strip_cache.clear()

    def on_focus(self, event: events.Focus) -> None:
        self._styles.pop("", None)  # the focus tint changes the base style
        self.refresh()

    def on_blur(self, event: events.Blur) -> None:
        self._styles.pop("", None)
        self.refresh()

    def _style(self, component: str) -> Style:
        style = self._styles.get(component)
        if style is None:
            if component.startswith(("ir-view--tok-", "ir-view--heat-")) or component == "ir-view--gutter":
                # Foreground only: a token must not paint over the row's tint.
                style = self.get_component_rich_style(component, partial=True)
                style = Style(color=style.color, bold=style.bold, italic=style.italic)
            else:
                # Tints are translucent theme colours: the full style has them blended
                # over the pane's background; only that background is kept.
                full = self.get_component_rich_style(component)
                style = Style(bgcolor=full.bgcolor, bold=True if component == "ir-view--match"
                              else None)
            self._styles[component] = style
        return style

    def _content_strip(self, y: int) -> Strip:
        """The highlighted, uncropped line ``y`` (cached); carries no background."""
        strip = self._strip_cache.get(y)
        if strip is not None:
            return strip
        line = _clean(self._display(y))
        text = Text(line, no_wrap=True, end="")
        for start, end, kind in tokenize(line, self._language):
            text.stylize(self._style(f"ir-view--tok-{kind}"), start, end)
        if self._match is not None:
            match_style = self._style("ir-view--match")
            for m in self._match.finditer(line):
                text.stylize(match_style, m.start(), m.end())
        strip = Strip(list(text.render(self.app.console)), cell_len(line))
        self._strip_cache[y] = strip
        return strip

    def _gutter_strip(self, y: int) -> Strip:
        mark = self._marks.get(y)
        sign = MARK_SIGNS.get(mark, "\u2022") if mark else " "
        number = str(y + self._first_number).rjust(self._gutter_digits)
        segments = [Segment(number, self._style("ir-view--gutter"))]
        segments.append(Segment(sign, self._style(f"ir-view--mark-{mark}")
                                if mark in MARK_SIGNS else self._style("ir-view--gutter")))
        segments.append(Segment(" "))
        segments += self._heat_segments(y)
        return Strip(segments, self._gutter_width)

    def _base_style(self) -> Style:
        # rich_style walks the DOM; it only changes when styles do (cache cleared then).
        style = self._styles.get("")
        if style is None:
            style = self._styles[""] = self.rich_style
        return style

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line_no = self.line_at_row(scroll_y + y)
        width = self.size.width
        base = self._base_style()
        if line_no >= len(self._lines) or line_no < 0:
            return Strip.blank(width, base)
        gutter = self._gutter_strip(line_no)
        body_width = max(0, width - self._gutter_width)
        body = self._content_strip(line_no).crop_extend(scroll_x, scroll_x + body_width, None)
        strip = Strip.join([gutter, body])
        mark = self._marks.get(line_no)
        row_style = base
        if mark is not None:
            row_style = row_style + self._style(
                f"ir-view--mark-{mark if mark in MARK_SIGNS else 'linked'}")
        if line_no == self.cursor_line:
            row_style = row_style + self._style("ir-view--cursor" if self.has_focus
                                                else "ir-view--cursor-blur")
        return strip.apply_style(row_style)
