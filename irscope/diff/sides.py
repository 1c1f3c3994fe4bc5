"""What ``irscope diff`` compares: each side is a capture, a whole bundle, or a plain
IR file written without irscope.

``BUNDLE[:KERNEL][@TARGET][#VARIANT]`` names a capture (``#VARIANT`` a label, a
unique prefix of one, or its index); a bundle alone is the whole bundle; anything
else is an IR file whose format comes from its name or ``--format``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from irscope.core import Bundle, Capture, IRFile, open_bundle, read_ir_file
from irscope.core.selection import default_pick_note
from irscope.errors import IrscopeError
from irscope.store.bundle import is_bundle


@dataclass(eq=False)
class Side:
    """One side of a diff."""

    spec: str
    """As the user wrote it."""
    bundle: Bundle | None = None
    capture: Capture | None = None
    """None for a whole bundle or a file."""
    file: IRFile | None = None
    note: str | None = None
    """One line naming the capture a left-out qualifier picked among several (see
    :func:`irscope.core.selection.default_pick_note`); the command prints it on stderr."""

    @property
    def label(self) -> str:
        """How reports name the side."""
        if self.capture is not None and self.bundle is not None:  # (a capture comes with its bundle)
            c = self.capture
            return f"{os.path.basename(self.bundle.path)}:{c.kernel}@{c.target} (#{c.id}, Triton {c.triton_version})"
        return self.spec

    @property
    def whole_bundle(self) -> bool:
        return self.bundle is not None and self.capture is None


def _split(spec: str) -> tuple[str, str | None, str | None, str | None]:
    """(path, kernel, target, variant): the longest prefix that is a file is the path."""
    if os.path.exists(spec):
        return spec, None, None, None
    variant = target = kernel = None
    rest = spec
    if "#" in rest:
        head, tail = rest.rsplit("#", 1)
        if head.endswith(":") and tail.isdigit():  # BUNDLE:#3, a capture id as `ls` prints it
            return head[:-1], "#" + tail, None, None
        if head and not os.path.exists(rest):
            rest, variant = head, tail
    if "@" in rest and not os.path.exists(rest):
        head, tail = rest.rsplit("@", 1)
        rest, target = head, tail
    if ":" in rest and not os.path.exists(rest):
        head, tail = rest.split(":", 1) if os.path.exists(rest.split(":", 1)[0]) else rest.rsplit(":", 1)
        rest, kernel = head, tail or None
    return rest, kernel, target, variant


def open_side(spec: str, format: str | None = None) -> Side:
    """Resolve one side. IrscopeError (one line) when it names nothing readable."""
    path, kernel, target, variant = _split(spec)
    if not os.path.exists(path):
        raise IrscopeError(f"{spec}: no such file or bundle")
    if is_bundle(path):
        bundle = open_bundle(path)
        if kernel is None and target is None and variant is None:
            return Side(spec, bundle=bundle)
        capture = bundle.capture(kernel, target, variant)
        return Side(spec, bundle=bundle, capture=capture,
                    note=default_pick_note(capture, kernel, target, variant))
    if (kernel, target, variant) != (None, None, None):
        raise IrscopeError(f"{path} is not an irscope bundle, so {spec!r} names no capture")
    return Side(spec, file=read_ir_file(path, format))


def close_sides(sides: list[Side]) -> None:
    """Close the bundles the sides opened."""
    for s in sides:
        if s.bundle is not None:
            s.bundle.close()
