"""The error panel of a failed capture in the kernel view.

It says where the compile stopped (stage and pass), the telling lines of the error
(no traceback, no reproducer boilerplate), and which key goes to the line the error
names: the user's ``file:line`` for a frontend error, the PTX line for a ptxas
diagnostic. Every fact comes from :attr:`irscope.Capture.failure`; the panel only
draws it, with the error text as plain ``Text`` (never markup).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

if TYPE_CHECKING:
    from irscope.core import Failure

JUMP_KEY = "e"
"""The kernel view's key that goes to the line the error names."""


def jump_hint(failure: "Failure", has_ptx: bool) -> str | None:
    """What :data:`JUMP_KEY` does for ``failure``, in words; None when the error names
    no line the app can show."""
    if failure.line is not None:
        return f"{JUMP_KEY}: go to {failure.where} in the Python pane"
    if failure.ptx_line is not None and has_ptx:
        return f"{JUMP_KEY}: go to PTX line {failure.ptx_line}"
    return None


def render_failure(failure: "Failure", everything: str | None = None) -> Text:
    """The panel's text: where it stopped, the one line, the telling lines, and
    ``everything``, the command that prints the whole error."""
    out = Text()
    out.append(failure.headline, style="bold red")
    out.append("\n")
    out.append(failure.error, style="red")
    out.append("\n\n")
    for line in failure.lines:
        out.append(line + "\n")
    if everything:
        out.append(f"\nAll of it, with the traceback: {everything}", style="dim")
    return out


class ErrorPanel(VerticalScroll):
    """A failed capture's error, above the stage tabs (the whole stage pane when the
    compile stopped before any stage)."""

    DEFAULT_CSS = """
    ErrorPanel {
        height: auto;
        max-height: 50%;
        border: round $error;
        border-title-color: $error;
        border-subtitle-color: $text;
        border-subtitle-style: bold;
        padding: 0 1;
    }
    ErrorPanel.-alone { height: 1fr; max-height: 100%; }
    """

    def __init__(self, failure: "Failure", *, has_ptx: bool, alone: bool, everything: str | None = None,
                 id: str | None = None) -> None:
        super().__init__(id=id, classes="-alone" if alone else None)
        self.failure = failure
        self._everything = everything
        self.border_title = "failed"
        # On the border, so the key shows however little of the panel fits.
        self.border_subtitle = jump_hint(failure, has_ptx)

    def compose(self) -> ComposeResult:
        yield Static(render_failure(self.failure, self._everything), id="error-text")
