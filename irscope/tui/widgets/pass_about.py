"""The pass stepper's description box: a pass's whole catalog description, never cut.

The box is as tall as the description wraps to at the current width, up to a fifth of
the screen (at least 3 lines); a longer one scrolls (mouse wheel, or up/down once Tab
has focused it: it takes the focus only then). Heights change only when a description
needs another number of lines, so stepping between passes repaints the box without a
layout pass when it does not.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

MIN_LINES = 3


class PassAbout(VerticalScroll):
    """A pass's description, as tall as its wrapped text (capped), scrollable beyond."""

    DEFAULT_CSS = """
    PassAbout { height: 3; padding: 0 1; scrollbar-size-vertical: 1; }
    PassAbout > Static { height: 1; }
    PassAbout:focus { background-tint: $foreground 5%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll_up", "Scroll up", show=False, id="pass_about.up"),
        Binding("down", "scroll_down", "Scroll down", show=False, id="pass_about.down"),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, can_focus=False)
        self._text = Text()

    def compose(self) -> ComposeResult:
        yield Static()

    @property
    def text(self) -> Text:
        """The description shown."""
        return self._text

    def max_lines(self) -> int:
        """The most lines the box takes before it scrolls."""
        return max(MIN_LINES, self.app.size.height // 5)

    def lines_needed(self, text: Text) -> int:
        """How many lines ``text`` wraps to in the box's width (less a scrollbar)."""
        width = self.size.width - self.styles.padding.width - 1 if self.size.width else 0
        if width <= 0:
            width = max(20, self.app.size.width // 2)
        return max(1, len(text.wrap(self.app.console, width)))

    def show(self, text: Text) -> None:
        """Show ``text`` whole: resize when it needs another number of lines."""
        self._text = text
        inner = self.query_one(Static)
        if self._fit():
            inner.update(text)
        else:
            inner.update(text, layout=False)
        self.scroll_home(animate=False)

    def _fit(self) -> bool:
        """Size the box and its text for the shown text; True when a size changed. The
        box takes the focus (to scroll) only when the text is taller than it."""
        needed = self.lines_needed(self._text)
        height = min(max(MIN_LINES, needed), self.max_lines())
        self.can_focus = needed > height
        inner = self.query_one(Static)
        changed = False
        for styles, value in ((self.styles, height), (inner.styles, needed)):
            if styles.height is None or styles.height.value != value:
                styles.height = value
                changed = True
        return changed

    def on_resize(self, event: events.Resize) -> None:
        # Another width wraps the text to another number of lines.
        self._fit()
