"""Location keys, and indexes of a module's ops by key: what links are joined on."""

from __future__ import annotations

import functools
import operator
from collections import defaultdict
from itertools import groupby
from typing import Iterable, Mapping

from irscope.ir import Location, Module, Op

@functools.lru_cache(maxsize=4096)  # a capture names few files, each on thousands of ops
def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


@functools.lru_cache(maxsize=1 << 16)  # stages print the same locations: key each once
def chain_key(loc: Location) -> tuple | None:
    """The whole frame chain as ``((base name, line, col), ...)``: absolute and relative
    paths of one file compare equal. None when the location is unknown."""
    if not loc.frames or not any(f.line for f in loc.frames):
        return None
    return tuple((_base(f.file), f.line, f.col) for f in loc.frames)


def line_key(loc: Location) -> tuple | None:
    """``(base name, line)`` of the innermost frame: all SASS knows. None when unknown."""
    fr = loc.frame
    if fr is None or not fr.line:
        return None
    return (_base(fr.file), fr.line)


def units(module: Module) -> list:
    """The linkable units of a module in line order: every op, and every function
    header (instructions placed at the function's own line, e.g. PTX ``ld.param``,
    tie to the ``tt.func`` / ``define`` / ``.entry`` line)."""
    return sorted([*module.ops(), *module.functions], key=_LINE)


_LINE = operator.attrgetter("line")
_LOCATION = operator.attrgetter("location")
_MISSING = object()


def _index(ops: Iterable[Op], key, lines: bool = False) -> dict[tuple, list]:
    """Key -> the ops at it (their lines, with ``lines``), in ``ops`` order."""
    out: dict[tuple, list] = defaultdict(list)
    # Parsers share one Location object between the ops of one location alias or
    # !dbg node, and neighbouring instructions mostly share one: key each run of
    # equal locations once (and each object once: the ops keep it alive, so ids
    # are stable).
    keys: dict[int, tuple | None] = {}
    take = _LINE if lines else None
    for loc, run in groupby(ops, _LOCATION):
        k = keys.get(id(loc), _MISSING)
        if k is _MISSING:
            k = keys[id(loc)] = key(loc)
        if isinstance(k, tuple):  # (not None: a location with no key)
            out[k].extend(map(take, run) if take else run)
    return out


def _keys_by_line(index: Mapping[tuple, list[int]]) -> dict[int, list[tuple]]:
    # Line order, as link_by_location walks the source ops; a line normally has one key,
    # but two units starting on one line keep both.
    out: dict[int, list[tuple]] = defaultdict(list)
    for k, lines in index.items():
        for ln in lines:
            out[ln].append(k)
    return {ln: out[ln] for ln in sorted(out)}


def _line_index(module: Module, key) -> dict[tuple, list[int]]:
    return _index(units(module), key, lines=True)

