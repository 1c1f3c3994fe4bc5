"""The command palette's provider (ctrl+p): the current screen's actions and the captures.

Every action a key of the app or the screen runs (and each irscope widget's keys) is
also a palette command, found by its description, so a user who forgot a key types what
they want. Each command is listed once: a description Textual's own commands already
have ("Quit", "Theme") or one already listed (in any letter case) is not repeated, and
the editing keys of text inputs and the scroll keys of containers are not commands. The
captures of the bundle are commands too ("open matmul_kernel [...] sm_90").
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from irscope.tui.bindings import live_bindings

if TYPE_CHECKING:
    from irscope.tui.app import IrscopeApp



class IrscopeCommands(Provider):
    """Actions of the screen the palette was opened over, and "open <capture>" commands."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        out: list[tuple[str, str, Callable[[], object]]] = []
        seen: set[str] = {cmd.title.casefold() for cmd in self.app.get_system_commands(self.screen)}
        for row in live_bindings(self.screen):
            if row.action in ("command_palette", "help_quit") or row.description.casefold() in seen:
                continue
            if row.id is None and row.where not in ("everywhere", "this screen"):
                continue  # a Textual widget's own key (an input's editing, a scroll)
            seen.add(row.description.casefold())
            help_text = f"key: {row.keys}" + (f"   id: {row.id}" if row.id else "")
            out.append((row.description, help_text,
                        partial(self.app.run_action, row.action, row.node)))
        bundle = getattr(self.app, "bundle", None)
        if bundle is not None:
            for cap in bundle.captures():
                out.append((f"open {cap.title()}", f"capture #{cap.id}",
                            partial(cast("IrscopeApp", self.app).open_capture, cap)))
        return out

    async def discover(self) -> Hits:
        for name, help_text, command in self._commands():
            if not name.startswith("open "):
                yield DiscoveryHit(Text(name), command, text=name, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, command in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, self._highlight(matcher, query, name), command, text=name,
                          help=help_text)

    def _highlight(self, matcher, query: str, name: str) -> Content:
        # Matcher.highlight parses the candidate as markup; capture titles hold
        # brackets ("[BLOCK=64]"), so the matched letters are styled on plain content.
        content = Content(name)
        _score, offsets = matcher.fuzzy_search.match(query, name)
        style = self.match_style or "bold underline"
        for offset in offsets:
            content = content.stylize(style, offset, offset + 1)
        return content
