"""The live key bindings of a screen, as the help screen and the palette list them.

Read from the nodes' own binding maps (so a key added anywhere shows up without a
table to keep in sync) with the user's keymap applied (``App.set_keymap``), which is
how a remapped key is shown under its new name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from textual.binding import Binding
    from textual.dom import DOMNode
    from textual.screen import Screen


@dataclass(frozen=True, slots=True)
class BindingRow:
    """One binding as listed: where it works, its keys, what it does, its id."""

    where: str
    keys: str
    description: str
    action: str
    id: str | None
    node: "DOMNode"


def _where(node: "DOMNode") -> str:
    from textual.app import App
    from textual.screen import Screen

    if isinstance(node, App):
        return "everywhere"
    if isinstance(node, Screen):
        return "this screen"
    return type(node).__name__


def _keys(app, binding: "Binding", keymap: dict[str, str]) -> str:
    remapped = keymap.get(binding.id) if binding.id else None
    if remapped is None:
        return app.get_key_display(binding)
    return ", ".join(app.get_key_display(binding.__class__(key.strip(), binding.action))
                     for key in remapped.split(","))


def live_bindings(screen: "Screen") -> Iterator[BindingRow]:
    """Every binding of the app, ``screen`` and each widget class on it, once per
    (class, action), in that order, with the user's keymap applied to the keys."""
    app = screen.app
    keymap = getattr(app, "keymap_overrides", {}) or {}
    seen: set[tuple[type, str, str]] = set()
    for node in (app, screen, *screen.query("*")):
        for bindings in node._bindings.key_to_bindings.values():
            for binding in bindings:
                marker = (type(node), binding.action, binding.id or binding.key)
                if marker in seen:
                    continue
                seen.add(marker)
                yield BindingRow(_where(node), _keys(app, binding, keymap),
                                 binding.description or binding.action, binding.action,
                                 binding.id, node)
