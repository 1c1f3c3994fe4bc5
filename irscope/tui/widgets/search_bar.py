"""The ``/`` search bar: one line docked at the bottom of a screen, hidden until asked for.

Its border names the pane it searches. Opened with ``keep_open``, it stays on screen
after enter, unfocused, as the search's result line (the query, the pane, the hit
count), until the screen closes it (:meth:`SearchBar.hide`).

It only collects the query; the screen owns the pane being searched and calls
``IRView.search`` with what :class:`SearchBar.Submitted` carries (attributes down,
messages up).
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class SearchBar(Input):
    """A query input for the focused pane; enter searches, escape closes."""

    DEFAULT_CSS = """
    SearchBar { dock: bottom; display: none; border: tall $accent; height: 3; }
    SearchBar.-shown { display: block; }
    """

    BINDINGS = [Binding("escape", "close", "Close search", show=False, id="search.close")]

    class Submitted(Input.Submitted):
        """The user asked to search for ``query`` (empty: clear the search).

        A subclass of ``Input.Submitted``: the Input posts it itself on enter (it builds
        ``self.Submitted(input, value, validation_result)``), so handlers see one message.
        """

        @property
        def query(self) -> str:
            """The text to search for."""
            return self.value

        @property
        def bar(self) -> "SearchBar":
            assert isinstance(self.input, SearchBar)  # only a SearchBar posts this message
            return self.input

    class Closed(Message):
        """The bar was closed without a search."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder="search (enter: find, n/N: next/previous, escape: close)",
                         id=id)
        self.keep_open = False
        """Stay shown after enter (the screen hides the bar on its own escape)."""
        self._title = "search"

    @property
    def shown(self) -> bool:
        """Whether the bar is on screen (focused or as a result line)."""
        return self.has_class("-shown")

    def open(self, initial: str = "", *, pane: str = "", keep_open: bool = False) -> None:
        """Show the bar with ``initial`` selected, and focus it; ``pane`` names the pane
        searched (in the bar's border)."""
        self.value = initial
        self.keep_open = keep_open
        self._title = f"search {pane}" if pane else "search"
        self.border_title = self._title
        self.add_class("-shown")
        # Focus now, not after the next refresh (what focus() does): keys typed right
        # after "/" are already queued and must reach the bar, not the pane's bindings.
        self.screen.set_focus(self)

    def action_close(self) -> None:
        self.hide()
        self.post_message(self.Closed())

    def hide(self) -> None:
        """Take the bar off screen (no message)."""
        self.remove_class("-shown")

    def show_result(self, text: str) -> None:
        """Say what the last search found (after the pane's name, in the border title),
        while the bar stays shown."""
        self.border_title = f"{self._title}: {text}"

    @on(Submitted)
    def _submitted(self, event: "SearchBar.Submitted") -> None:
        # Hide (unless kept as the result line), and let the message bubble on to the
        # screen that owns the pane.
        if not self.keep_open or not event.value:
            self.remove_class("-shown")
