"""The ``/`` search bar: one line docked at the bottom of a screen, hidden until asked for.

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

    def open(self, initial: str = "") -> None:
        """Show the bar with ``initial`` selected, and focus it."""
        self.value = initial
        self.add_class("-shown")
        # Focus now, not after the next refresh (what focus() does): keys typed right
        # after "/" are already queued and must reach the bar, not the pane's bindings.
        self.screen.set_focus(self)

    def action_close(self) -> None:
        self.remove_class("-shown")
        self.post_message(self.Closed())

    @on(Submitted)
    def _submitted(self, event: "SearchBar.Submitted") -> None:
        # Hide, and let the message bubble on to the screen that owns the pane.
        self.remove_class("-shown")
