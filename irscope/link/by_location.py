"""Location links: every op of one stage tied to every op of the next at the same
Python location, kept grouped by location key until a query expands them."""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping

from irscope.compiler.stages import line_links
from irscope.ir import Module

from .keys import _keys_by_line, _line_index, chain_key, line_key
from .model import StageLink

class LocationGroup:
    """The location links between two adjacent stages, kept grouped by location key.

    Every op of ``src_stage`` links to every op of ``dst_stage`` at the same key
    (:func:`chain_key`, or :func:`line_key` when either stage's locations give only a
    line: SASS, :attr:`~irscope.compiler.stages.Stage.line_links`), so the links are a
    union of per-key products. One flash_attention capture has ~270,000 such pairs but
    only a few thousand ops: storing the groups and expanding on query keeps building
    cheap. Pairs whose source line is in ``src_exact`` *and* whose destination line is in
    ``dst_exact`` are left out (both ends have an ``exact`` link between them instead).

    Iterating gives the :class:`StageLink` objects in the order :func:`link_by_location`
    lists them (source ops in line order, then destination ops in line order); ``len``
    counts them without building them.
    """

    __slots__ = ("src_stage", "dst_stage", "kind", "_src_keys", "_dst_keys", "src_lines", "dst_lines",
                 "src_exact", "dst_exact", "_len")

    def __init__(self, src_stage: str, dst_stage: str, kind: str,
                 src_index: Mapping[tuple, list[int]], dst_index: Mapping[tuple, list[int]],
                 src_exact: frozenset[int] = frozenset(), dst_exact: frozenset[int] = frozenset()) -> None:
        self.src_stage, self.dst_stage, self.kind = src_stage, dst_stage, kind
        # Only keys both stages have produce links; the others would only cost lookups.
        shared = src_index.keys() & dst_index.keys()
        self.src_lines: dict[tuple, list[int]] = {k: v for k, v in src_index.items() if k in shared}
        self.dst_lines: dict[tuple, list[int]] = {k: v for k, v in dst_index.items() if k in shared}
        self._src_keys: dict[int, list[tuple]] | None = None  # built by the first query
        self._dst_keys: dict[int, list[tuple]] | None = None
        self.src_exact, self.dst_exact = src_exact, dst_exact
        n = 0
        for k, ss in self.src_lines.items():
            ds = self.dst_lines[k]
            n += len(ss) * len(ds)
            if src_exact and dst_exact:
                n -= sum(s in src_exact for s in ss) * sum(d in dst_exact for d in ds)
        self._len = n

    def __len__(self) -> int:
        return self._len

    @property
    def src_keys(self) -> dict[int, list[tuple]]:
        """Source line -> its location keys, in line order."""
        if self._src_keys is None:
            self._src_keys = _keys_by_line(self.src_lines)
        return self._src_keys

    @property
    def dst_keys(self) -> dict[int, list[tuple]]:
        """Destination line -> its location keys, in line order."""
        if self._dst_keys is None:
            self._dst_keys = _keys_by_line(self.dst_lines)
        return self._dst_keys

    def __iter__(self) -> Iterator[StageLink]:
        a, b, kind, se, de = self.src_stage, self.dst_stage, self.kind, self.src_exact, self.dst_exact
        for s, keys in self.src_keys.items():
            for k in keys:
                cut = s in se
                for d in self.dst_lines[k]:
                    if not (cut and d in de):
                        yield StageLink(a, s, b, d, kind)

    def __repr__(self) -> str:
        return f"LocationGroup({self.src_stage}->{self.dst_stage}, {self.kind}, {len(self.src_lines)} keys, {self._len} links)"

    def linked(self, line: int, forward: bool) -> Iterator[int]:
        """The lines linked to ``line`` (of ``src_stage`` when ``forward``, else of
        ``dst_stage``), in the order the flat link list has them."""
        if forward:
            mine, theirs, cut, other_cut = self.src_keys, self.dst_lines, self.src_exact, self.dst_exact
        else:
            mine, theirs, cut, other_cut = self.dst_keys, self.src_lines, self.dst_exact, self.src_exact
        excluded = other_cut if line in cut else ()
        for k in mine.get(line, ()):
            for o in theirs[k]:
                if o not in excluded:
                    yield o

    def linked_lines(self) -> tuple[set[int], set[int]]:
        """(source lines, destination lines) that have at least one link here."""
        src: set[int] = set()
        dst: set[int] = set()
        se, de = self.src_exact, self.dst_exact
        for k, ss in self.src_lines.items():
            ds = self.dst_lines[k]
            # An excluded pair only matters when every partner of a line is excluded.
            free_d = [d for d in ds if d not in de]
            free_s = [s for s in ss if s not in se]
            src.update(ss if free_d else free_s)
            dst.update(ds if free_s else free_d)
        return src, dst


def location_group(src_stage: str, src: Module, dst_stage: str, dst: Module, *,
                   drop_dst: Iterable[int] = (), src_exact: Iterable[int] = (),
                   dst_exact: Iterable[int] = (), _indexes: dict | None = None) -> LocationGroup:
    """The location links of :func:`link_by_location`, grouped (see :class:`LocationGroup`).

    ``drop_dst``: destination lines that get no location link at all; ``src_exact`` /
    ``dst_exact``: pairs with both ends in them are left out.
    """
    coarse = line_links(src_stage) or line_links(dst_stage)
    key, kind = (line_key, "same-line") if coarse else (chain_key, "same-location")

    def index(stage: str, module: Module) -> dict[tuple, list[int]]:
        # A middle stage is the destination of one group and the source of the next:
        # build_links passes _indexes so its keys are computed once.
        if _indexes is None:
            return _line_index(module, key)
        got = _indexes.get((stage, key))
        if got is None:
            got = _indexes[(stage, key)] = _line_index(module, key)
        return got

    dst_index = index(dst_stage, dst)
    drop = set(drop_dst)
    if drop:
        dst_index = {k: kept for k, v in dst_index.items() if (kept := [d for d in v if d not in drop])}
    return LocationGroup(src_stage, dst_stage, kind, index(src_stage, src), dst_index,
                         frozenset(src_exact), frozenset(dst_exact))


def link_by_location(src_stage: str, src: Module, dst_stage: str, dst: Module) -> list[StageLink]:
    """Links between every pair of ops at the same Python location.

    The full chain (with columns and inlined-at frames) when both stages print one
    (``same-location``: PTX, AMDGCN); the innermost file and line when either
    prints no more (``same-line``: SASS, the registry's ``line_links``). This builds every pair; :func:`build_links` keeps them grouped
    (:func:`location_group`).
    """
    return list(location_group(src_stage, src, dst_stage, dst))

