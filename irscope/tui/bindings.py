"""The live key bindings of a screen, as the help screen and the palette list them.

Read from the nodes' own binding maps (so a key added anywhere shows up without a
table to keep in sync) with the user's keymap applied (``App.set_keymap``), which is
how a remapped key is shown under its new name. Keys are spelled out
(``ctrl+c``, ``enter``, not ``^c``, ``⏎``), and a binding with no description gets
one (Textual's ``ctrl+c`` says "Say how to quit", never ``help_quit``).
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


# Textual's glyphs for keys, as words a reader types in a keymap file.
_GLYPHS = {"⏎": "enter", "⌫": "backspace", "⇥": "tab", "␣": "space", "↑": "up", "↓": "down",
           "←": "left", "→": "right"}

# Textual's own bindings that carry no description.
_DESCRIPTIONS = {"help_quit": "Say how to quit (ctrl+q quits)"}


def readable_keys(display: str) -> str:
    """A key as Textual displays it, spelled out: ``^c`` -> ``ctrl+c``, ``shift+^←`` ->
    ``shift+ctrl+left``, ``⏎`` -> ``enter``; arrows alone stay arrows (``→``)."""
    parts = display.split("+")
    out = []
    for part in parts:
        if part.startswith("^") and len(part) > 1:
            out.append("ctrl")
            part = part[1:]
        if len(parts) > 1 or part not in "↑↓←→":
            part = _GLYPHS.get(part, part)
        out.append(part)
    return "+".join(out)


def describe_binding(binding: "Binding") -> str:
    """What a binding does, in words (its description, else one made from its action)."""
    if binding.description:
        return binding.description
    action = binding.action.split("(", 1)[0].rsplit(".", 1)[-1]
    return _DESCRIPTIONS.get(action) or action.replace("_", " ").capitalize()


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
        return readable_keys(app.get_key_display(binding))
    return ", ".join(readable_keys(app.get_key_display(binding.__class__(key.strip(), binding.action)))
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
                                 describe_binding(binding), binding.action,
                                 binding.id, node)
