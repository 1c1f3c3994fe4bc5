"""A one-line status bar that repaints without a layout pass.

``Static.update`` asks for a new layout of the screen (its size may change), which
costs a few milliseconds on every cursor move; this line's size never depends on its
text, so setting it only repaints the line.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

SEPARATOR = "  |  "
"""Between the fields of a status line."""


def join_fields(fields: Iterable[str], *, empty: str = "-") -> Text:
    """The non-blank ``fields`` joined by :data:`SEPARATOR` (plain text): a status line
    never shows a blank field; with none left, ``empty``."""
    kept = [f.strip() for f in fields if f and f.strip()]
    return Text(SEPARATOR.join(kept) if kept else empty, no_wrap=True, overflow="ellipsis")


class StatusLine(Widget):
    """One line of plain ``rich.text.Text`` (never markup), cut with an ellipsis."""

    DEFAULT_CSS = "StatusLine { height: 1; }"

    text: reactive[Text] = reactive(Text, layout=False)
    """What the line shows."""

    def __init__(self, text: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.set_reactive(StatusLine.text, Text(text))

    def update(self, text: Text | str) -> None:
        """Show ``text`` (a str is taken literally)."""
        self.text = text if isinstance(text, Text) else Text(text)

    def update_fields(self, fields: Iterable[str]) -> None:
        """Show ``fields`` (plain strings) joined, blank ones left out (:func:`join_fields`)."""
        self.text = join_fields(fields)

    def render(self) -> Text:
        shown = self.text.copy()
        shown.no_wrap = True
        shown.overflow = "ellipsis"
        return shown
