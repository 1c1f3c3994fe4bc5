"""GF(2) linear layouts: the algebra Triton uses to say who owns which element.

A linear layout maps named *input* dimensions (``register``, ``lane``, ``warp``,
``block`` for tensors in registers; ``offset``/``block`` for shared memory) to
named *output* dimensions (``dim0``, ``dim1``, ...), the tensor index.  Each
input dimension has a list of bases, one per bit of the input: the image of an
input value is the XOR of the bases whose bits are set.  This mirrors
``triton/Tools/LinearLayout.h`` closely enough that the conversions in
:mod:`conversions` can follow ``LinearLayoutConversions.cpp`` step by step.

Everything here is immutable and pure; operations return new layouts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["LinearLayout", "dim_names"]

Basis = tuple[int, ...]


def dim_names(rank: int) -> tuple[str, ...]:
    """Triton's standard output dimension names: ``dim0 .. dim<rank-1>``."""
    return tuple(f"dim{i}" for i in range(rank))


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


def _next_pow2_above(value: int) -> int:
    # Triton infers an out-dim size as the smallest power of two that is
    # greater than every basis value on that dim (OR of the values works too,
    # since bases are non-negative).
    size = 1
    while size <= value:
        size *= 2
    return size


@dataclass(frozen=True, slots=True)
class LinearLayout:
    """A linear map from input dims to output dims over GF(2).

    ``ins`` keeps the input dims in order, each with its bases; every basis has
    one component per output dim, in the order of ``outs``.  ``outs`` holds the
    output dim names with their sizes (powers of two).  The order of both is
    meaningful: Triton's product and "make not smaller" steps depend on it.
    """

    ins: tuple[tuple[str, tuple[Basis, ...]], ...]
    outs: tuple[tuple[str, int], ...]

    # ----------------------------------------------------------- construction
    @staticmethod
    def empty() -> LinearLayout:
        """The layout with no dims at all (unit of the product)."""
        return LinearLayout((), ())

    @staticmethod
    def identity1d(size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """``in_dim = i`` maps to ``out_dim = i`` for i < size.

        Triton returns the empty layout for size 0 (a division that came out
        below one); so do we, because some conversions rely on that.
        """
        if size == 0:
            return LinearLayout.empty()
        bases = tuple((1 << i,) for i in range(_log2(size)))
        return LinearLayout(((in_dim, bases),), ((out_dim, size),))

    @staticmethod
    def zeros1d(size: int, in_dim: str, out_dim: str, out_size: int = 1) -> LinearLayout:
        """Every value of ``in_dim`` (size of it given) maps to 0: broadcast."""
        bases = tuple((0,) for _ in range(_log2(size)))
        return LinearLayout(((in_dim, bases),), ((out_dim, out_size),))

    @staticmethod
    def from_bases(
        bases: Mapping[str, Sequence[Sequence[int]]] | Sequence[tuple[str, Sequence[Sequence[int]]]],
        out_names: Sequence[str],
        out_sizes: Sequence[int] | None = None,
    ) -> LinearLayout:
        """Build from explicit bases; out sizes inferred from the bases if not given."""
        items = list(bases.items()) if isinstance(bases, Mapping) else list(bases)
        ins = tuple((name, tuple(tuple(int(v) for v in b) for b in bs)) for name, bs in items)
        for name, bs in ins:
            for b in bs:
                if len(b) != len(out_names):
                    raise ValueError(f"basis {list(b)} of {name!r} has the wrong rank")
        if out_sizes is None:
            sizes = []
            for k in range(len(out_names)):
                top = 0
                for _, bs in ins:
                    for b in bs:
                        top |= b[k]
                sizes.append(_next_pow2_above(top))
        else:
            sizes = [int(s) for s in out_sizes]
        return LinearLayout(ins, tuple(zip(out_names, sizes)))

    # -------------------------------------------------------------- accessors
    @property
    def in_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.ins)

    @property
    def out_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.outs)

    def bases(self, in_dim: str) -> tuple[Basis, ...]:
        """The bases of ``in_dim`` (empty if the dim is absent)."""
        for name, bs in self.ins:
            if name == in_dim:
                return bs
        return ()

    def has_in(self, in_dim: str) -> bool:
        return in_dim in self.in_names

    def in_size(self, in_dim: str) -> int:
        return 1 << len(self.bases(in_dim))

    def out_size(self, out_dim: str) -> int:
        for name, size in self.outs:
            if name == out_dim:
                return size
        return 1

    def apply(self, inputs: Mapping[str, int]) -> tuple[int, ...]:
        """Image of the given input values, one value per output dim (``outs`` order)."""
        acc = [0] * len(self.outs)
        for name, bs in self.ins:
            value = inputs.get(name, 0)
            bit = 0
            while value and bit < len(bs):
                if value & 1:
                    b = bs[bit]
                    for k in range(len(acc)):
                        acc[k] ^= b[k]
                value >>= 1
                bit += 1
        return tuple(acc)

    def as_dict(self) -> dict[str, list[list[int]]]:
        """Bases per input dim as plain lists (for JSON or for comparing with Triton)."""
        return {name: [list(b) for b in bs] for name, bs in self.ins}

    # ------------------------------------------------------------- operations
    def __mul__(self, outer: LinearLayout) -> LinearLayout:
        """Triton's layout product: ``self`` is minor, ``outer`` major.

        In-dims and out-dims are unions (self's first).  For an in-dim in both,
        outer's bases come after self's; on an out-dim in both, outer's values
        are shifted past self's size.  That is how "repeat this tile" is spelled.
        """
        inner = self
        in_order: list[str] = list(inner.in_names)
        in_order += [n for n in outer.in_names if n not in in_order]
        out_log: dict[str, int] = {}
        for name, size in inner.outs + outer.outs:
            out_log[name] = out_log.get(name, 0) + _log2(size)
        out_order = list(out_log)
        inner_pos = {n: i for i, n in enumerate(inner.out_names)}
        outer_pos = {n: i for i, n in enumerate(outer.out_names)}
        new_ins = []
        for name in in_order:
            rows: list[Basis] = []
            for b in inner.bases(name):
                rows.append(tuple(b[inner_pos[o]] if o in inner_pos else 0 for o in out_order))
            for b in outer.bases(name):
                rows.append(
                    tuple(
                        (b[outer_pos[o]] << (_log2(inner.out_size(o)) if o in inner_pos else 0))
                        if o in outer_pos
                        else 0
                        for o in out_order
                    )
                )
            new_ins.append((name, tuple(rows)))
        return LinearLayout(tuple(new_ins), tuple((o, 1 << out_log[o]) for o in out_order))

    def transpose_outs(self, order: Sequence[str]) -> LinearLayout:
        """Reorder the output dims (the map itself does not change)."""
        if sorted(order) != sorted(self.out_names):
            raise ValueError(f"transpose_outs: {list(order)} is not a permutation of {list(self.out_names)}")
        pos = [self.out_names.index(o) for o in order]
        ins = tuple((name, tuple(tuple(b[p] for p in pos) for b in bs)) for name, bs in self.ins)
        return LinearLayout(ins, tuple((o, self.out_size(o)) for o in order))

    def with_bases(self, in_dim: str, bases: Iterable[Basis]) -> LinearLayout:
        """A copy with ``in_dim``'s bases replaced (added at the end if new)."""
        new = tuple(tuple(b) for b in bases)
        ins = [(n, new if n == in_dim else bs) for n, bs in self.ins]
        if in_dim not in self.in_names:
            ins.append((in_dim, new))
        return LinearLayout(tuple(ins), self.outs)

    def with_out_sizes_inferred(self) -> LinearLayout:
        """Recompute out sizes from the bases (Triton's non-explicit constructor)."""
        return LinearLayout.from_bases(list(self.ins), self.out_names)

    def not_larger_than(self, shape: Mapping[str, int], broadcast_registers: bool = True) -> LinearLayout:
        """Triton's ``ensureLayoutNotLargerThan``: replicate instead of overflowing ``shape``.

        For each out-dim too large, the bases with the largest values on it
        are set to 0 on that dim, one by one, until the dim fits: those inputs
        now hold copies of the data (registers too; their count is kept, as
        Triton keeps it).  Ties keep in-dim order (register, lane, warp, block).
        With ``broadcast_registers=False`` such registers are removed instead.
        """
        dropped: set[int] = set()
        rows = {name: [list(b) for b in bs] for name, bs in self.ins}
        for k, (out, size) in enumerate(self.outs):
            desired = shape[out]
            if size <= desired:
                continue
            found = [(bs[i][k], n, i) for n, bs in rows.items() for i in range(len(bs)) if bs[i][k] != 0]
            # Python's sort is stable: equal values keep the in-dim order.
            found.sort(key=lambda t: -t[0])
            for _, name, i in found:
                if size <= desired:
                    break
                if name == "register" and not broadcast_registers:
                    dropped.add(i)
                else:
                    rows[name][i][k] = 0
                size //= 2
        if dropped:
            rows["register"] = [b for i, b in enumerate(rows["register"]) if i not in dropped]
        return LinearLayout.from_bases([(n, rows[n]) for n in self.in_names], self.out_names)

    def not_smaller_than(self, shape: Mapping[str, int], order: Sequence[str] | None = None) -> LinearLayout:
        """Triton's ``ensureLayoutNotSmallerThan``: repeat along the first in-dim to cover ``shape``.

        The first in-dim is ``register`` (or ``offset``); out dims are visited
        in the layout's own order (minor to major) unless ``order`` is given.
        """
        if not self.ins:
            raise ValueError("not_smaller_than needs an input dimension")
        first = self.ins[0][0]
        ret = self
        for out in order if order is not None else self.out_names:
            have = self.out_size(out)
            want = shape[out]
            if want > have:
                ret = ret * LinearLayout.identity1d(want // have, first, out)
        return ret
