"""A one-line status bar that repaints without a layout pass.

``Static.update`` asks for a new layout of the screen (its size may change), which
costs a few milliseconds on every cursor move; this line's size never depends on its
text, so setting it only repaints the line.
"""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget


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

    def render(self) -> Text:
        shown = self.text.copy()
        shown.no_wrap = True
        shown.overflow = "ellipsis"
        return shown
