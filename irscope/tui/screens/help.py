"""The help screen (``?``): every key of the screen it was opened over, read live."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Static

from irscope.tui.bindings import BindingRow, live_bindings

INTRO = ("Keys of this screen, from its live bindings (remapped keys show their new names). "
         "Remap any key by its id in ~/.config/irscope/keymap.toml or the file named by "
         "IRSCOPE_KEYMAP, e.g.  \"kernel.passes\" = \"ctrl+n\".  Mouse: click a line, a tab, "
         "a row or a column header.")


class HelpScreen(ModalScreen):
    """A table of the keys of ``screen``: where, keys, what, binding id."""

    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close"),
        Binding("q", "dismiss", "Close", show=False, id="help.quit"),
        Binding("question_mark", "dismiss", "Close", show=False, key_display="?",
                id="help.toggle"),
    ]

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.rows: list[BindingRow] = list(live_bindings(screen))
        """The bindings listed, in table order."""

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(Text("Keys", style="bold"), id="help-title")
            yield Static(Text(INTRO), id="help-intro")
            yield DataTable(id="help-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one("#help-table", DataTable)
        table.add_columns(Text("where"), Text("keys"), Text("does"), Text("id"))
        table.add_rows([Text(r.where), Text(r.keys, style="bold"), Text(r.description),
                        Text(r.id or "-", style="dim")] for r in self.rows)
        table.focus()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss()
