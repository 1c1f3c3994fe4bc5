"""MLIR location syntax, resolved to :class:`~irscope.ir.model.Location` chains.

Triton prints locations as trailing ``loc(#locN)`` references whose definitions come
after the module, e.g.::

    #loc2 = loc("/abs/k.py":6:24)
    #loc19 = loc("pid"(#loc2))                  // named (3.5+)
    #loc39 = loc(callsite(#loc3 at #loc33))     // inlined helper
    #loc40 = loc(fused[#loc1, #loc2])
    #loc3 = loc(unknown)

so resolution happens after the whole text is read, through the alias table.
"""

from __future__ import annotations

import re

from irscope.text_guard import never_raise

from .bracket_scan import unescape
from .model import UNKNOWN_LOCATION, Frame, Location

# Deeper nesting than this is garbled input, not Triton output.
_MAX_DEPTH = 100

# "/abs/k.py":6:24   (MLIR 20+ may print a range: "/abs/k.py":6:24 to 6:30 / to :30)
_FILE_RE = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)(?: to (?:\d+)?:\d+)?')
# "pid"
_STR_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')
# #loc12
_ALIAS = r"#[\w$.-]+"
_ALIAS_RE = re.compile(_ALIAS)
# Whole alias definitions:  "/abs/k.py":6:24  /  "pid"(#loc2)  /  callsite(#loc3 at #loc33)
_PLAIN_FILE_RE = re.compile(r'"([^"\\]*)":(\d+):(\d+)')
_NAMED_ALIAS_RE = re.compile(rf'"([^"\\]*)"\(({_ALIAS})\)')
_CALLSITE_ALIASES_RE = re.compile(rf"callsite\(({_ALIAS}) at ({_ALIAS})\)")
class LocResolver:
    """Resolves location texts (the inside of ``loc(...)``) for one module.

    ``aliases`` maps ``#locN`` to its definition text (inside ``loc(...)``).
    ``shared`` caches texts that contain no alias reference, whose meaning does not
    depend on the module, across modules (pass snapshots repeat them).
    """

    __slots__ = ("aliases", "shared", "cache", "_active")

    def __init__(self, aliases: dict[str, str], shared: dict | None = None) -> None:
        self.aliases = aliases
        self.shared = shared if shared is not None else {}
        self.cache: dict[str, Location] = {}
        self._active: set[str] = set()

    def resolve(self, text: str) -> Location:
        """Location of ``text`` (e.g. ``#loc12`` or ``"k.py":3:4``); never raises."""
        loc = self.cache.get(text)
        if loc is not None:
            return loc
        if not text:
            return UNKNOWN_LOCATION
        context_free = "#" not in text
        if context_free:
            loc = self.shared.get(text)
            if loc is not None:
                self.cache[text] = loc
                return loc
        loc = self._read(text, 0)
        self.cache[text] = loc
        if context_free:
            self.shared[text] = loc
        return loc

    def _alias(self, name: str, depth: int) -> Location:
        loc = self.cache.get(name)
        if loc is not None:
            return loc
        text = self.aliases.get(name)
        if text is None or name in self._active:  # undefined or cyclic
            return UNKNOWN_LOCATION
        self._active.add(name)
        try:
            loc = self._read(text, depth + 1)
        finally:
            self._active.discard(name)
        self.cache[name] = loc
        return loc

    def _unknown(self, text: str, depth: int) -> Location:
        """What a resolver bug gives (the guard's fallback)."""
        return UNKNOWN_LOCATION

    @never_raise(_unknown, pause_gc=False)
    def _read(self, text: str, depth: int) -> Location:
        """The location a whole location text (or alias definition) stands for.

        Malformed text is unknown, never an error: the scanner raises ValueError on
        text that is not a location and IndexError on text that ends early. Any
        other exception is a bug, left to the guard (raised in the strict mode).
        """
        try:
            loc = self._common(text, depth) if depth + 1 <= _MAX_DEPTH else None
            return loc if loc is not None else self._parse(text, 0, depth)[0]
        except (ValueError, IndexError):
            return UNKNOWN_LOCATION

    def _common(self, s: str, depth: int) -> Location | None:
        """What ``_parse(s, 0, depth)`` gives, for the three shapes Triton prints for
        nearly every alias (one regex each); None for any other text."""
        loc = self.shared.get(s)  # a file location reads the same in every module
        if loc is not None:
            return loc
        m = _PLAIN_FILE_RE.fullmatch(s)
        if m is not None:
            loc = self.shared[s] = _file_location(m)
            return loc
        m = _NAMED_ALIAS_RE.fullmatch(s)
        if m is not None:
            return _named(m.group(1), self._alias(m.group(2), depth + 1))
        m = _CALLSITE_ALIASES_RE.fullmatch(s)
        if m is not None:
            callee = self._alias(m.group(1), depth + 1)
            caller = self._alias(m.group(2), depth + 1)
            return Location(callee.frames + caller.frames, "callsite")
        return None  # (escapes in a path, a column range...: _parse reads those)

    def _parse(self, s: str, i: int, depth: int) -> tuple[Location, int]:
        if depth > _MAX_DEPTH:
            raise ValueError("location nested too deep")
        c = s[i]
        if c == "#":
            m = _ALIAS_RE.match(s, i)
            if m is None:
                raise ValueError("bad alias")
            return self._alias(m.group(), depth), m.end()
        if c == '"':
            m = _FILE_RE.match(s, i)
            if m:
                return _file_location(m), m.end()
            m = _STR_RE.match(s, i)
            if not m:
                raise ValueError("bad string")
            name = unescape(m.group(1))
            i = m.end()
            if i < len(s) and s[i] == "(":
                child, i = self._parse(s, i + 1, depth + 1)
                i = _expect(s, i, ")")
            else:
                child = UNKNOWN_LOCATION
            return _named(name, child), i
        if s.startswith("unknown", i):
            return UNKNOWN_LOCATION, i + 7
        if s.startswith("callsite(", i):
            callee, i = self._parse(s, i + 9, depth + 1)
            if not s.startswith(" at ", i):
                raise ValueError("callsite without 'at'")
            caller, i = self._parse(s, i + 4, depth + 1)
            i = _expect(s, i, ")")
            return Location(callee.frames + caller.frames, "callsite"), i
        if s.startswith("fused", i):
            return self._fused(s, i + 5, depth)
        raise ValueError(f"unexpected location text at {i}")

    def _fused(self, s: str, i: int, depth: int) -> tuple[Location, int]:
        if s[i] == "<":  # fused<"metadata">[...]: skip the metadata
            level = 0
            while True:
                c = s[i]
                if c == '"':
                    m = _STR_RE.match(s, i)
                    if m is None:
                        raise ValueError("unterminated string")
                    i = m.end()
                    continue
                level += (c == "<") - (c == ">")
                i += 1
                if level == 0:
                    break
        i = _expect(s, i, "[")
        parts = []
        while s[i] != "]":
            part, i = self._parse(s, i, depth + 1)
            parts.append(part)
            if s[i] == ",":
                i += 1
                while s[i] == " ":
                    i += 1
        frames: tuple[Frame, ...] = ()
        for part in parts:
            if part.frames:
                frames = part.frames
                break
        return Location(frames, "fused", tuple(parts)), i + 1


def _file_location(m: re.Match) -> Location:
    """The location of a ``"path":line:col`` match (groups 1-3)."""
    return Location((Frame(unescape(m.group(1)), int(m.group(2)), int(m.group(3))),), "file")


def _named(name: str, child: Location) -> Location:
    """``"name"(child)``: the child's location with ``name`` on its innermost frame."""
    frames = child.frames
    if frames:
        f0 = frames[0]
        frames = (Frame(f0.file, f0.line, f0.col, name),) + frames[1:]
    kind = child.kind if child.kind in ("callsite", "fused") else "name"
    return Location(frames, kind, child.parts)


def _expect(s: str, i: int, ch: str) -> int:
    if s[i] != ch:
        raise ValueError(f"expected {ch!r} at {i}")
    return i + 1
