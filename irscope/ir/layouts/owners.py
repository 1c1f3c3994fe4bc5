"""Element -> owners maps: which (warp, lane, register) hold each tensor element.

Built from a :class:`LinearLayout` by enumerating every register of every lane
of every warp (of one CTA) and recording the element it holds.  An element
held by several threads or registers (broadcast, or a shape smaller than the
layout's tile) lists every owner.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .conversions import LayoutError
from .linear import LinearLayout

__all__ = ["LayoutMap", "Owner", "layout_map"]


class Owner(NamedTuple):
    """One holder of an element: register ``register`` of lane ``lane`` of warp ``warp``."""

    warp: int
    lane: int
    register: int


@dataclass(frozen=True, slots=True)
class LayoutMap:
    """The owners of every element of a ``shape`` tensor under one layout (one CTA: ``block``).

    ``registers`` is the number of registers per thread the layout uses,
    counting duplicates (Triton numbers them that way too).  Two maps are
    equal when every (warp, lane, register) holds the same element in both,
    i.e. when every element has the same owners.
    """

    shape: tuple[int, ...]
    num_warps: int
    threads_per_warp: int
    registers: int
    block: int
    # The row-major element held by each (warp, lane, register), indexed by
    # (warp * threads_per_warp + lane) * registers + register; -1 outside the
    # shape.  Stored this way round because it is what the layout computes
    # directly: building it is cheap, the inverse is made on first use.
    _element_of: tuple[int, ...] = field(repr=False)
    _inverse: list = field(default_factory=list, compare=False, repr=False)

    def _owners(self) -> list[tuple[int, ...]]:
        if not self._inverse:
            total = 1
            for n in self.shape:
                total *= n
            inv: list[list[int]] = [[] for _ in range(total)]
            for code, flat in enumerate(self._element_of):
                if flat >= 0:
                    inv[flat].append(code)
            self._inverse.append([tuple(o) for o in inv])  # codes ascend: owners come out sorted
        return self._inverse[0]

    def _unpack(self, codes: tuple[int, ...]) -> tuple[Owner, ...]:
        regs, lanes = self.registers, self.threads_per_warp
        return tuple(Owner(c // regs // lanes, c // regs % lanes, c % regs) for c in codes)

    def _flat(self, index: Sequence[int]) -> int:
        if len(index) != len(self.shape):
            raise IndexError(f"index {tuple(index)} has the wrong rank for shape {self.shape}")
        flat = 0
        for i, n in zip(index, self.shape):
            if not 0 <= i < n:
                raise IndexError(f"index {tuple(index)} is outside shape {self.shape}")
            flat = flat * n + i
        return flat

    def owners_of(self, index: tuple[int, ...]) -> tuple[Owner, ...]:
        """Every (warp, lane, register) that holds element ``index``, sorted."""
        return self._unpack(self._owners()[self._flat(index)])

    def elements(self) -> Iterator[tuple[tuple[int, ...], tuple[Owner, ...]]]:
        """``(index, owners)`` for every element, in row-major order."""
        indices = itertools.product(*(range(n) for n in self.shape))
        for index, codes in zip(indices, self._owners()):
            yield index, self._unpack(codes)

    def element_held_by(self, warp: int, lane: int, register: int) -> tuple[int, ...] | None:
        """The index register ``register`` of (warp, lane) holds, or None if outside the tensor."""
        flat = self._element_of[(warp * self.threads_per_warp + lane) * self.registers + register]
        if flat < 0:
            return None
        idx = []
        for n in reversed(self.shape):
            idx.append(flat % n)
            flat //= n
        return tuple(reversed(idx))

    def held_by(self, warp: int, lane: int) -> tuple[tuple[int, ...], ...]:
        """The element each register of one thread holds, register 0 first."""
        held = (self.element_held_by(warp, lane, r) for r in range(self.registers))
        return tuple(i for i in held if i is not None)

    def owner_counts(self) -> tuple[int, ...]:
        """Number of owners of each element, row-major."""
        return tuple(len(o) for o in self._owners())

    def replication(self) -> int:
        """The largest number of owners any element has (1: no duplication)."""
        return max(self.owner_counts(), default=0)

    def to_json(self) -> dict:
        """``{"shape": [...], "elements": [{"index": [...], "owners": [{"warp", "lane", "register"}]}]}``."""
        return {
            "shape": list(self.shape),
            "num_warps": self.num_warps,
            "threads_per_warp": self.threads_per_warp,
            "registers": self.registers,
            "elements": [
                {"index": list(index), "owners": [o._asdict() for o in owners]}
                for index, owners in self.elements()
            ],
        }


def _span(bases, rank: int) -> list[tuple[int, ...]]:
    """Images of every input value 0..2^len(bases)-1 (bit i of the input selects basis i)."""
    vals = [tuple(0 for _ in range(rank))]
    for b in bases:
        vals = vals + [tuple(x ^ y for x, y in zip(v, b)) for v in vals]
    return vals


def layout_map(ll: LinearLayout, shape: Sequence[int], block: int = 0) -> LayoutMap:
    """Enumerate ``ll`` (register/lane/warp[/block] -> dim0..) over ``shape``.

    Elements outside ``shape`` (a layout larger than the tensor) are dropped;
    elements no thread holds get an empty owner tuple.
    """
    shape = tuple(int(s) for s in shape)
    rank = len(shape)
    if len(ll.outs) != rank:
        raise LayoutError(f"layout has {len(ll.outs)} dims, shape {list(shape)} has {rank}")
    names = ll.out_names
    pos = [names.index(f"dim{d}") if f"dim{d}" in names else d for d in range(rank)]

    def flat_of(vec: Sequence[int]) -> int:
        flat = 0
        for d in range(rank):
            v = vec[pos[d]]
            if v >= shape[d]:
                return -1
            flat = flat * shape[d] + v
        return flat

    blk = ll.apply({"block": block}) if ll.has_in("block") else tuple(0 for _ in range(rank))
    regs, lanes, warps = (_span(ll.bases(n), rank) for n in ("register", "lane", "warp"))
    pow2 = all(n > 0 and n & (n - 1) == 0 for n in shape)
    if pow2 and all(v < shape[d] for d in range(rank) for v in
                    [blk[pos[d]]] + [b[pos[d]] for _, bs in ll.ins for b in bs]):
        # Power-of-two sizes make the row-major flat index a concatenation of
        # bits, so it is XOR-linear: combine flat indices, not tuples.
        rf, lf, wf = ([flat_of(v) for v in vals] for vals in (regs, lanes, warps))
        base = flat_of(blk)
        element_of = tuple(base ^ w ^ lane ^ r for w in wf for lane in lf for r in rf)
    else:
        element_of = tuple(
            flat_of(tuple(a ^ b ^ c ^ d for a, b, c, d in zip(w, lane, r, blk)))
            for w in warps for lane in lanes for r in regs
        )
    return LayoutMap(shape=shape, num_warps=len(warps), threads_per_warp=len(lanes), registers=len(regs),
                     block=block, _element_of=element_of)
