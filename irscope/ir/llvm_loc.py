"""LLVM IR locations: ``!dbg !N`` references resolved through the module's debug
metadata (``!DILocation`` chains with their ``inlinedAt`` callers, ``!DISubprogram``,
``!DIFile``) into :class:`~irscope.ir.model.Location` frame chains, as
:mod:`irscope.ir.mlir_loc` does for MLIR's ``#loc`` aliases.
"""

from __future__ import annotations

import re

from irscope.text_guard import never_raise

from .model import DIALECT_LLVM, DIALECT_MIR, UNKNOWN_LOCATION, Frame, Location, Module, ParseCache

# !7 = !DILocation(line: 62, column: 24, scope: !4)   /   !llvm.dbg.cu = !{!0}
META_RE = re.compile(r"(![-\w.$]+) = (?:distinct )?(!?[A-Za-z]*)(.*)$")
# line: 62   /   filename: "k.py"   /   scope: !4
FIELD_RE = re.compile(r'(\w+): ("(?:[^"\\]|\\.)*"|[^,()]+)')


def chain_location(chain: list) -> Location:
    """A location from ``(file, line, column)`` frames, innermost first."""
    frames = tuple(Frame(f, int(ln), int(col)) for f, ln, col in chain)
    return Location(frames, "callsite" if len(frames) > 1 else "file")


class DebugInfo:
    """Resolves ``!N`` references of one module's metadata to locations."""

    __slots__ = ("nodes", "cache", "_active")

    def __init__(self, nodes: dict[str, tuple[str, dict]]) -> None:
        self.nodes = nodes
        self.cache: dict[str, Location] = {}
        self._active: set[str] = set()

    def resolve(self, ref: str) -> Location:
        """Location of ``!N`` (a DILocation); unknown when undefined or malformed."""
        loc = self.cache.get(ref)
        if loc is not None:
            return loc
        if ref in self._active or len(self._active) > 200:
            return UNKNOWN_LOCATION
        self._active.add(ref)
        try:
            loc = self._read(ref)
        finally:
            self._active.discard(ref)
        self.cache[ref] = loc
        return loc

    def _unknown(self, ref: str) -> Location:
        """What a resolver bug gives (the guard's fallback)."""
        return UNKNOWN_LOCATION

    @never_raise(_unknown, pause_gc=False)
    def _read(self, ref: str) -> Location:
        """:meth:`_location`, unknown for malformed metadata (a line or column that is
        not a number raises ValueError); any other exception is a bug, left to the guard."""
        try:
            return self._location(ref)
        except ValueError:
            return UNKNOWN_LOCATION

    def _location(self, ref: str) -> Location:
        node = self.nodes.get(ref)
        if node is None:
            return UNKNOWN_LOCATION
        f = node[1]
        if node[0] == "!DISubprogram":
            frame = Frame(self._file(ref), int(f.get("line", 0)), 0,
                          f.get("name", "").strip('"') or None)
            return Location((frame,), "file")
        if node[0] != "!DILocation":
            return UNKNOWN_LOCATION
        scope = f.get("scope", "")
        frame = Frame(self._file(scope), int(f.get("line", 0)), int(f.get("column", 0)),
                      self._subprogram(scope))
        outer = f.get("inlinedAt")
        if outer:
            caller = self.resolve(outer)
            return Location((frame,) + caller.frames, "callsite")
        return Location((frame,), "file")

    def _file(self, scope: str) -> str:
        for _ in range(100):
            node = self.nodes.get(scope)
            if node is None:
                return ""
            kind, f = node
            if kind == "!DIFile":
                name = f.get("filename", "").strip('"')
                folder = f.get("directory", "").strip('"')
                return name if name.startswith("/") or not folder else f"{folder}/{name}"
            if "file" in f:
                scope = f["file"]
            else:
                scope = f.get("scope", "")
        return ""

    def _subprogram(self, scope: str) -> str | None:
        for _ in range(100):
            node = self.nodes.get(scope)
            if node is None:
                return None
            if node[0] == "!DISubprogram":
                return node[1].get("name", "").strip('"') or None
            scope = node[1].get("scope", "")
        return None


_KEPT = 8


def debug_info(meta: dict[str, str], nodes: dict[str, tuple], cache: ParseCache | None
                ) -> DebugInfo:
    """A resolver for this metadata, reused when a recent module had the same table."""
    key = tuple(meta.items())
    if cache is not None:
        found = cache.resolvers.get((DIALECT_LLVM, key))
        if found is not None:
            return found
    if not nodes and meta:
        for ident, text in meta.items():
            m = META_RE.match(f"{ident} = {text}")
            if m and m.group(2).startswith("!DI"):
                nodes[ident] = (m.group(2), tuple(FIELD_RE.findall(m.group(3))))
    info = DebugInfo({k: (kind, {a: b.strip() for a, b in f}) for k, (kind, f) in nodes.items()})
    if cache is not None:
        cache.resolvers[(DIALECT_LLVM, key)] = info
        if len(cache.resolvers) > _KEPT:
            del cache.resolvers[next(iter(cache.resolvers))]
    return info


def resolve_locations(mod: Module, info: DebugInfo) -> None:
    """Give every op and function of ``mod`` the location its ``!dbg`` names."""
    resolve = info.resolve
    last_ref, loc = None, UNKNOWN_LOCATION  # neighbouring instructions mostly share one
    for op in mod.all_ops:
        ref = op.loc_ref
        if ref and op.dialect != DIALECT_MIR:  # MIR ops carry their location already
            if ref != last_ref:
                last_ref, loc = ref, resolve(ref)
            op.location = loc
    for fn in mod.functions:
        if fn.loc_ref:
            fn.location = resolve(fn.loc_ref)
