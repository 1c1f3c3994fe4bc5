"""How a ``ttg.convert_layout`` moves its data: within each thread, by warp shuffles, or
through shared memory. Triton's own rule, re-derived from the two sides' linear layouts.

Triton lowers a conversion by comparing the source and destination linear layouts
(``lib/Analysis/Utility.cpp`` of Triton 3.6/3.7, ``minimalCvtLayout``,
``cvtReordersRegisters``, ``cvtNeedsWarpShuffle``, ``cvtNeedsSharedMemory``):

1. ``comp = dst.invertAndCompose(src)``: for each (register, lane, warp, block) of the
   destination, the source (register, lane, warp, block) holding the same element.
2. Quotient ``comp`` by ``block``, then ``warp``, then ``lane``, then ``register``, as
   long as it is the identity on that dimension and does not mix it with the others.
3. Nothing left, or only ``register``: the conversion reorders registers within each
   thread. ``register`` and ``lane`` left: the data stays in each warp, and Triton uses
   warp shuffles when the permutation of register and lane bits factors with at most
   one register<->lane transposition (``getWarpLayoutConvertDecomposition``).
   Otherwise it goes through shared memory, and the allocation pass gives the op a
   scratch buffer (its ``allocation.offset`` attribute).

Everything here is pure and works on :class:`~irscope.ir.layouts.linear.LinearLayout`
values of one CTA's tensor (``to_linear`` of each side's encoding and shape).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .linear import LinearLayout
from .owners import LayoutMap

__all__ = ["MOVE_KINDS", "REGISTERS", "SHARED_MEMORY", "VIAS", "WARP_SHUFFLE", "Ll", "conversion_via",
           "element_moves", "from_linear", "moved_dims",
           "invert_and_compose", "minimal_conversion", "mixed_transpositions", "remove_broadcast_registers"]

REGISTERS, WARP_SHUFFLE, SHARED_MEMORY = "registers", "warp_shuffle", "shared_memory"
VIAS = (REGISTERS, WARP_SHUFFLE, SHARED_MEMORY)
"""The three ways a conversion moves data, cheapest first."""

REG, LANE, WARP, BLOCK = "register", "lane", "warp", "block"
HARDWARE_DIMS = (REG, LANE, WARP, BLOCK)


@dataclass(frozen=True, slots=True)
class Ll:
    """A linear layout with its outputs flattened to one integer (``dim0`` the most minor,
    as Triton's ``flattenOuts``): ``ins`` is (in dim, bases as ints) in order;
    ``out_bits`` the log2 of the flattened output size. Named-output layouts
    (``comp``, whose outputs are the source's hardware dims) use :class:`Named`."""

    ins: tuple[tuple[str, tuple[int, ...]], ...]
    out_bits: int

    def bases(self, dim: str) -> tuple[int, ...]:
        for name, bs in self.ins:
            if name == dim:
                return bs
        return ()

    @property
    def in_names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.ins)


@dataclass(frozen=True, slots=True)
class Named:
    """A linear layout whose outputs are named dims: ``ins`` maps each in dim to its
    bases, each basis a tuple with one value per out dim of ``outs`` (name, log2 size)."""

    ins: tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]
    outs: tuple[tuple[str, int], ...]

    def bases(self, dim: str) -> tuple[tuple[int, ...], ...]:
        for name, bs in self.ins:
            if name == dim:
                return bs
        return ()

    def in_bits(self, dim: str) -> int:
        return len(self.bases(dim))

    def out_bits(self, dim: str) -> int:
        for name, bits in self.outs:
            if name == dim:
                return bits
        return 0


def from_linear(ll: LinearLayout) -> Ll:
    """Flatten ``ll``'s outputs (``dim0`` minor) and give it Triton's four hardware in
    dims, in Triton's order (register, lane, warp, block; absent ones with no bases)."""
    shifts: list[int] = []
    total = 0
    for _, size in ll.outs:
        shifts.append(total)
        total += size.bit_length() - 1
    ins = []
    for dim in HARDWARE_DIMS:
        flat = []
        for b in ll.bases(dim):
            v = 0
            for k, s in enumerate(shifts):
                v |= b[k] << s
            flat.append(v)
        ins.append((dim, tuple(flat)))
    return Ll(tuple(ins), total)


def remove_broadcast_registers(ll: Ll) -> Ll:
    """Drop the register bases that are zero (Triton's ``actionRemoveBroadcastedRegs``):
    registers that only hold copies."""
    return Ll(tuple((n, tuple(b for b in bs if b) if n == REG else bs) for n, bs in ll.ins), ll.out_bits)


# ---------------------------------------------------------------- GF(2) algebra
def _lstsq(a: Sequence[tuple[str, tuple[int, ...]]], b: Sequence[tuple[str, tuple[int, ...]]],
           rows: int) -> tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]:
    """Triton's ``lstsq(A, B)``: X with A X = B, from the reduced row echelon form of
    [A | B] (unique, so any elimination order gives Triton's answer). Returns B's in
    dims, each basis one value per A in dim."""
    a_cols = [v for _, bs in a for v in bs]
    b_cols = [v for _, bs in b for v in bs]
    na = len(a_cols)
    mat = []
    for r in range(rows):
        row = 0
        for c, v in enumerate(a_cols):
            row |= ((v >> r) & 1) << c
        for c, v in enumerate(b_cols):
            row |= ((v >> r) & 1) << (na + c)
        mat.append(row)
    # Gauss-Jordan over GF(2), columns left to right: the canonical RREF.
    pivot_row_of: dict[int, int] = {}
    top = 0
    for c in range(na + len(b_cols)):
        hit = next((r for r in range(top, len(mat)) if mat[r] >> c & 1), None)
        if hit is None:
            continue
        mat[top], mat[hit] = mat[hit], mat[top]
        for r in range(len(mat)):
            if r != top and mat[r] >> c & 1:
                mat[r] ^= mat[top]
        pivot_row_of[c] = top
        top += 1
    ret = [(mat[pivot_row_of[c]] >> na) if c in pivot_row_of and c < na else 0 for c in range(na)]
    flat_bases = []
    for cb in range(len(b_cols)):
        v = 0
        for r in range(na):
            v |= ((ret[r] >> cb) & 1) << r
        flat_bases.append(v)
    # Reshape: the flat input is B's in dims concatenated (first minor); the flat
    # output A's in dims likewise.
    a_sizes = [(n, len(bs)) for n, bs in a]
    out = []
    i = 0
    for name, bs in b:
        split = []
        for v in flat_bases[i:i + len(bs)]:
            parts, shift = [], 0
            for _, bits in a_sizes:
                parts.append((v >> shift) & ((1 << bits) - 1))
                shift += bits
            split.append(tuple(parts))
        out.append((name, tuple(split)))
        i += len(bs)
    return tuple(out)


def invert_and_compose(this: Ll, outer: Ll) -> Named:
    """Triton's ``this.invertAndCompose(outer)``: for each input of ``this``, the input of
    ``outer`` that maps to the same element. In dims equal in both map to themselves
    (Triton's broadcasting heuristic); the rest are solved by :func:`_lstsq`."""
    if this.out_bits > outer.out_bits:
        raise ValueError("invert_and_compose: the outer layout covers fewer elements")
    identity = [n for n, bs in outer.ins if n in this.in_names and this.bases(n) == bs
                and this.out_bits == outer.out_bits]
    a = [(n, bs) for n, bs in outer.ins if n not in identity]
    b = [(n, bs) for n, bs in this.ins if n not in identity]
    solved = dict(_lstsq(a, b, outer.out_bits)) if a else {}
    a_names = [n for n, _ in a]
    out_names = outer.in_names
    ins = []
    for name, bs in this.ins:
        if name in identity:
            rows = tuple(tuple((1 << i) if o == name else 0 for o in out_names) for i in range(len(bs)))
        else:
            rows = tuple(tuple(row[a_names.index(o)] if o in a_names else 0 for o in out_names)
                         for row in solved[name])
        ins.append((name, rows))
    return Named(tuple(ins), tuple((n, len(outer.bases(n))) for n in out_names))


def _trivial_over(comp: Named, dim: str) -> bool:
    """Triton's ``isTrivialOver({dim})``: identity on ``dim`` (sizes equal), and ``dim``
    neither reached from other in dims nor reaching other out dims."""
    k = [n for n, _ in comp.outs].index(dim)
    if comp.in_bits(dim) != comp.out_bits(dim):
        return False
    for i, basis in enumerate(comp.bases(dim)):
        if basis[k] != 1 << i or any(v for j, v in enumerate(basis) if j != k):
            return False
    return all(basis[k] == 0 for name, bs in comp.ins if name != dim for basis in bs)


def _quotient(comp: Named, dim: str) -> Named:
    k = [n for n, _ in comp.outs].index(dim)
    ins = tuple((n, tuple(tuple(v for j, v in enumerate(b) if j != k) for b in bs))
                for n, bs in comp.ins if n != dim)
    return Named(ins, tuple(o for o in comp.outs if o[0] != dim))


def minimal_conversion(src: Ll, dst: Ll) -> Named:
    """Triton's ``minimalCvtLayout``: ``dst.invertAndCompose(src)`` quotiented by the
    slowest hardware dims first (block, warp, lane, register) while it is trivial over
    them. Its remaining out dims say how far the data travels."""
    comp = invert_and_compose(dst, src)
    for dim in reversed(HARDWARE_DIMS):
        if dim not in [n for n, _ in comp.outs] or dim not in [n for n, _ in comp.ins] \
                or not _trivial_over(comp, dim):
            break
        comp = _quotient(comp, dim)
    return comp


def _pad(ll: Ll, regs: int, lanes: int) -> Ll:
    ins = []
    for n, bs in ll.ins:
        if n == REG:
            bs = bs + (0,) * (regs - len(bs))
        elif n == LANE:
            bs = bs + (0,) * (lanes - len(bs))
        ins.append((n, bs))
    return Ll(tuple(ins), ll.out_bits)


def mixed_transpositions(src: Ll, dst: Ll) -> int | None:
    """How many register<->lane transpositions Triton's warp-shuffle lowering needs
    (``getWarpLayoutConvertDecomposition``: the permutation of register and lane bits
    factored as P_mixed * P_lane * P_reg). None when the bits do not form a
    permutation (not a warp-local conversion)."""
    s, t = remove_broadcast_registers(src), remove_broadcast_registers(dst)
    n_reg = max(len(s.bases(REG)), len(t.bases(REG)))
    n_lane = max(len(s.bases(LANE)), len(t.bases(LANE)))
    s = Ll(((REG, s.bases(REG)), (LANE, s.bases(LANE))), s.out_bits)
    t = Ll(((REG, t.bases(REG)), (LANE, t.bases(LANE))), t.out_bits)
    s, t = _pad(s, n_reg, n_lane), _pad(t, n_reg, n_lane)
    try:
        p = invert_and_compose(s, t)
    except ValueError:
        return None
    dims = (REG, LANE)
    pb = {n: [list(b) for b in bs] for n, bs in p.ins}
    src_free: list[tuple[int, int]] = []
    dst_free: list[tuple[int, int]] = []
    for d, dim in enumerate(dims):
        for i, (sv, tv) in enumerate(zip(s.bases(dim), t.bases(dim))):
            if sv == 0 and tv == 0:
                pb[dim][i][d] = 1 << i
            elif sv == 0:
                src_free.append((d, i))
            elif tv == 0:
                dst_free.append((d, i))
    for (sd, si), (dd, di) in zip(src_free, dst_free):
        pb[dims[sd]][si][dd] = 1 << di
    sizes = {REG: n_reg, LANE: n_lane}
    visited: set[tuple[str, int]] = set()
    mixed = 0
    for dim in dims:
        for i in range(sizes[dim]):
            if (dim, i) in visited:
                continue
            cur = (dim, i)
            reg_start = lane_end = -1
            lane_start = reg_end = -1
            for _ in range(n_reg + n_lane + 1):
                visited.add(cur)
                nxt = None
                for d, v in enumerate(pb[cur[0]][cur[1]]):
                    if v:
                        nxt = (dims[d], v.bit_length() - 1)
                if nxt is None or nxt[1] >= sizes[nxt[0]]:
                    return None
                if cur[0] == REG and nxt[0] == LANE:
                    reg_start, lane_start = cur[1], nxt[1]
                elif cur[0] == LANE and nxt[0] == REG:
                    reg_end, lane_end = nxt[1], cur[1]
                if reg_end >= 0:
                    mixed += 1
                    reg_start = lane_start = lane_end = reg_end = -1
                cur = nxt
                if cur == (dim, i):
                    break
            else:
                return None  # not a cycle: the bits are no permutation
    if len(visited) != n_reg + n_lane:
        return None
    return mixed


def moved_dims(src: LinearLayout, dst: LinearLayout) -> tuple[str, ...]:
    """The hardware dims a conversion from ``src`` to ``dst`` must move data across:
    the out dims of :func:`minimal_conversion` (``()`` or ``("register",)``: none;
    ``("register", "lane")``: lanes of a warp; ``warp``/``block`` as well: beyond)."""
    return tuple(n for n, _ in minimal_conversion(from_linear(src), from_linear(dst)).outs)


def conversion_via(src: LinearLayout, dst: LinearLayout) -> str:
    """``registers``, ``warp_shuffle`` or ``shared_memory``: how Triton moves a tensor
    from layout ``src`` to layout ``dst`` (both :func:`~irscope.ir.layouts.to_linear`
    of one shape), by the rule of ``cvtNeedsSharedMemory``."""
    s, d = from_linear(src), from_linear(dst)
    left = list(moved_dims(src, dst))
    if left in ([], [REG]):
        return REGISTERS
    if left == [REG, LANE]:
        mixed = mixed_transpositions(s, d)
        if mixed is not None and mixed < 2:
            return WARP_SHUFFLE
    return SHARED_MEMORY


MOVE_KINDS = ("register", "lane", "warp")
"""How far an element moves in a conversion, nearest first (:func:`element_moves`)."""


def element_moves(source: LayoutMap, result: LayoutMap) -> dict[tuple[int, ...], str]:
    """Index -> ``register``, ``lane`` or ``warp`` for every element of ``result`` whose
    (warp, lane, register) owners differ from ``source``'s (two element maps of one
    shape); elements that keep their owners, or that no thread holds after, are left out.

    ``register``: every thread holding it after held it before, in another register;
    ``lane``: some thread after did not hold it, but a thread of the same warp did;
    ``warp``: some warp after held none of it. This is the per-element picture of a
    conversion; :func:`conversion_via` is Triton's decision for the whole op (which
    also weighs how the lane bits permute)."""
    if source.shape != result.shape:
        raise ValueError("element moves need two element maps of one shape")
    out: dict[tuple[int, ...], str] = {}
    for index, after in result.elements():
        before = source.owners_of(index)
        if set(before) == set(after) or not after:
            continue
        threads = {(o.warp, o.lane) for o in before}
        warps = {o.warp for o in before}
        if all((o.warp, o.lane) in threads for o in after):
            out[index] = "register"
        elif all(o.warp in warps for o in after):
            out[index] = "lane"
        else:
            out[index] = "warp"
    return out
