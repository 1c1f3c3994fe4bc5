"""The shared-memory buffer of a ``ttg.convert_layout`` that goes through shared memory:
its size and its bank conflicts, as Triton chooses them.

Triton stores the source registers to a swizzled scratch buffer and loads the
destination registers back (``lib/Tools/GenericSwizzling.cpp``, ``optimalSwizzling`` and
``optimalSwizzlingLdSt``; sizes in ``lib/Analysis/Allocation.cpp``
``getNumScratchElemsSwizzledCvt`` and NVIDIA's ``Allocation.cpp``). The swizzle is a
linear map from (vector, bank, segment, reps) bits to tensor elements:

- ``vector``: the elements one thread moves with one access (registers held in order
  on both sides, up to 128 bits);
- ``bank``: what fills the 32 banks of one 128-byte row;
- ``segment``: the remaining bits, chosen so that the lanes of one access hit other
  banks when they can;
- ``reps``: segment bits that are registers on both sides: the buffer holds one such
  repetition at a time, so it is smaller than the tensor by 2^|reps|.

NVIDIA targets also try ``stmatrix``/``ldmatrix`` tiles (sm_90+/sm_75+) and keep the
pair of instructions with the fewest bank conflicts. Bank conflicts of an access are
2^k where k is the number of the access's lane bits that land in segment bits (lanes
that differ only there hit one bank at different rows).

Pure functions over flattened layouts (:class:`~irscope.ir.layouts.convert_layout.Ll`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .convert_layout import BLOCK, LANE, REG, WARP, Ll, invert_and_compose, remove_broadcast_registers

__all__ = ["Scratch", "scratch_of"]


@dataclass(frozen=True, slots=True)
class Scratch:
    """The scratch buffer of one conversion through shared memory.

    ``elements``/``bytes``: its size; ``store_ways``/``load_ways``: the bank conflicts of
    one store of the source / load of the destination (1 = conflict-free, n = n-way);
    ``instructions``: the pair Triton lowers it with (``ld/st.shared``, ``stmatrix``...).
    """

    elements: int
    bytes: int
    store_ways: int
    load_ways: int
    instructions: tuple[str, str]

    @property
    def bank_conflicts(self) -> int:
        """The worst access: n-way bank conflicts (1 when none)."""
        return max(self.store_ways, self.load_ways)


@dataclass(frozen=True, slots=True)
class _Smem:
    vector: tuple[int, ...]
    bank: tuple[int, ...]
    segment: tuple[int, ...]
    reps: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _Tile:
    """Triton's ``LocalMemOpTile``: lane bits in the contiguous part and in the address part."""

    name: str
    lane_contig: tuple[int, ...]
    lane_addr: tuple[int, ...]


_LDST = _Tile("ld/st.shared", (), (0, 1, 2))
_MATRIX = _Tile("matrix", (0, 1), (2, 3, 4))
_MATRIX_TRANS = _Tile("matrix.trans", (2, 3, 4), (0, 1))


# ------------------------------------------------------------------ GF(2) helpers
def _log2(n: int) -> int:
    return n.bit_length() - 1 if n > 0 else -1  # llvm::Log2_32(0) is -1


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _ctz(n: int) -> int:
    return (n & -n).bit_length() - 1


def _rref(vectors: list[int], dim: int) -> list[int]:
    """The reduced row echelon form (columns = bits, lowest first) of ``vectors``: unique,
    so it is what ``f2reduce::inplace_rref_strided`` gives."""
    mat = list(vectors)
    top = 0
    for c in range(dim):
        hit = next((r for r in range(top, len(mat)) if mat[r] >> c & 1), None)
        if hit is None:
            continue
        mat[top], mat[hit] = mat[hit], mat[top]
        for r in range(len(mat)):
            if r != top and mat[r] >> c & 1:
                mat[r] ^= mat[top]
        top += 1
    return mat[:top]


def _nullspace(vectors: list[int], dim: int) -> list[int]:
    mat = _rref(vectors, dim)
    pivots = {_ctz(r) for r in mat}
    out = []
    for free in range(dim):
        if free in pivots:
            continue
        vec = 1 << free
        for r in mat:
            if r >> free & 1:
                vec ^= 1 << _ctz(r)
        out.append(vec)
    return out


def _complement(basis: list[int], dim: int) -> list[int]:
    pivots = {_ctz(r) for r in _rref(basis, dim)}
    return [1 << i for i in range(dim) if i not in pivots]


def _intersection(b1: list[int], b2: list[int], dim: int) -> list[int]:
    """Triton's ``intersectionBasis``: b1's order kept when every basis is a power of two."""
    if all(_pow2(x) for x in b1) and all(_pow2(x) for x in b2):
        s2 = set(b2)
        return [b for b in b1 if b != 0 and b in s2]
    return _nullspace(_nullspace(b1, dim) + _nullspace(b2, dim), dim)


# ------------------------------------------------------------------ the swizzle
def _segment(bank_src: list[int], bank_dst: list[int], blocks: list[int], dim: int, length: int) -> list[int]:
    """Triton's ``computeSegment``."""
    set_src = (set(bank_src) | set(blocks)) - {0}
    set_dst = (set(bank_dst) | set(blocks)) - {0}
    seg = [1 << b for b in range(dim) if (1 << b) not in set_src and (1 << b) not in set_dst]
    if len(seg) >= length:
        return seg[:length]
    a = sorted(v for v in set_src if v not in set_dst)
    b = sorted(v for v in set_dst if v not in set_src)
    if len(a) > len(b):
        a, b = b, a
    conflicts = min(max(0, length - len(a) - len(seg)), len(a))
    seg += [a[i] ^ b[i] for i in range(conflicts, len(a))]
    seg += a[:conflicts] + b[:conflicts]
    return seg[:length]


def _swizzle(src: Ll, dst: Ll, bits: int, vbasis: list[int], tile_src: list[int], tile_dst: list[int],
             leave_reps: int = 0) -> _Smem:
    """Triton's ``optimalSwizzling`` (the basis form) followed by ``buildReps``."""
    dim = src.out_bits
    blocks = [b for b in src.bases(BLOCK) if b]
    len_bank = min(_log2(32 * 32 // ((1 << len(vbasis)) * bits)), dim - len(vbasis) - len(blocks))
    len_seg = dim - len_bank - len(vbasis) - len(blocks)
    seg = _segment(vbasis + tile_src, vbasis + tile_dst, blocks, dim, len_seg)
    bank = _complement(vbasis + seg + blocks, dim)
    regs_src, regs_dst = set(src.bases(REG)), set(dst.bases(REG))
    segment, reps = [], []
    for s in seg:
        if s in regs_src and s in regs_dst:
            if leave_reps > 0:
                leave_reps -= 1
                segment.append(s)
            else:
                reps.append(s)
        else:
            segment.append(s)
    return _Smem(tuple(vbasis), tuple(bank), tuple(segment), tuple(reps))


def _conflicts(tile_src: list[int], tile_dst: list[int], smem: _Smem, dim: int) -> tuple[int, int]:
    """Triton's ``bankConflicts``: (load, store) extra wavefronts, 2^k - 1 each."""
    seg = list(smem.segment)
    write = 1 << len(_intersection(seg, tile_src, dim))
    read = 1 << len(_intersection(seg, tile_dst, dim))
    return read - 1, write - 1


def _ldst(src: Ll, dst: Ll, bits: int) -> tuple[_Smem, tuple[int, int]]:
    """Triton's ``optimalSwizzlingLdSt`` and ``bankConflictsLdSt``: plain ld/st.shared."""
    dim = src.out_bits
    reg_src, reg_dst = list(src.bases(REG)), list(dst.bases(REG))
    lane_src, lane_dst = list(src.bases(LANE)), list(dst.bases(LANE))
    block_src = list(src.bases(BLOCK))
    vbasis = _intersection(reg_src, reg_dst, dim)[:_log2(128 // bits)]
    if (1 << len(vbasis)) * bits < 32:
        per_bank = _log2(32 // bits)
        warp_src = [w for w in src.bases(WARP) if w]
        warp_dst = [w for w in dst.bases(WARP) if w]
        src_warp = _intersection([r for r in reg_src if r not in vbasis], warp_dst, dim)
        dst_warp = _intersection([r for r in reg_dst if r not in vbasis], warp_src, dim)
        if len(src_warp) == len(dst_warp) and src_warp:
            largest = src_warp if min(src_warp) < min(dst_warp) else dst_warp
        else:
            largest = src_warp if len(src_warp) > len(dst_warp) else dst_warp
        vbasis = vbasis + largest
        if len(vbasis) < per_bank:
            vbasis += _intersection(warp_src, warp_dst, dim)
        i = 0
        while len(vbasis) < per_bank and (i < len(warp_src) or i < len(warp_dst)):
            if i < len(warp_src) and warp_src[i] not in vbasis:
                vbasis.append(warp_src[i])
            if len(vbasis) < per_bank and i < len(warp_dst) and warp_dst[i] not in vbasis \
                    and warp_dst[i] not in block_src:
                vbasis.append(warp_dst[i])
            i += 1
        vbasis = vbasis[:per_bank]
    log2_vec = _log2(max(1, ((1 << len(vbasis)) * bits) // 32))
    tile_src = lane_src[:len(lane_src) - log2_vec]
    tile_dst = lane_dst[:len(lane_dst) - log2_vec]
    smem = _swizzle(src, dst, bits, vbasis, tile_src, tile_dst)
    return smem, _conflicts(tile_src, tile_dst, smem, dim)


def _tile_vbasis(a: Ll, b: Ll, n_reg_a: int, n_reg_b: int, ids_a: tuple[int, ...],
                 ids_b: tuple[int, ...]) -> list[int] | None:
    """Triton's ``optimalSwizzlingTile``: the vector bases both instructions can use."""
    if n_reg_a < n_reg_b:
        return _tile_vbasis(b, a, n_reg_b, n_reg_a, ids_b, ids_a)
    dim = a.out_bits
    cvt = invert_and_compose(b, a)
    outs = [n for n, _ in cvt.outs]
    vbasis = _intersection(list(a.bases(REG)), list(b.bases(REG)), dim)
    if len(vbasis) < n_reg_b:
        return None
    vbasis = vbasis[:n_reg_b]
    lane_a, lane_b = a.bases(LANE), b.bases(LANE)
    if any(i >= len(lane_a) for i in ids_a) or any(i >= len(lane_b) for i in ids_b):
        return None
    tile_a = [lane_a[i] for i in ids_a]
    tile_b = [lane_b[i] for i in ids_b]
    if 0 in tile_a or 0 in tile_b:
        return None
    lanes = cvt.bases(LANE)
    for i in range(n_reg_a - n_reg_b):
        if lanes[ids_b[i]][outs.index(REG)] == 0:
            return None
    for ia, ib in zip(ids_a, ids_b[len(ids_b) - len(ids_a):]):
        if lanes[ib][outs.index(LANE)] != 1 << ia:
            return None
    return vbasis + tile_b


def _tile(instr: _Tile, regs: tuple[int, ...], lanes: tuple[int, ...], vbasis: list[int]) -> list[int] | None:
    need = 3 - len(instr.lane_addr)
    tile = [r for r in regs if r not in vbasis][:need]
    if len(tile) < need:
        return None
    return tile + [lanes[i] for i in instr.lane_addr]


def _with_tiles(src: Ll, dst: Ll, bits: int, src_tiles: list[_Tile],
                dst_tiles: list[_Tile]) -> tuple[_Smem, tuple[int, int], tuple[str, str]]:
    """Triton's ``optimalSwizzling`` over instruction tiles: the fewest bank conflicts,
    then the most reps; plain ld/st.shared when no tile fits."""
    dim = src.out_bits
    total = _log2(128 // bits)
    best: tuple[int, int, _Smem, tuple[int, int], tuple[str, str]] | None = None
    for ts in src_tiles:
        for td in dst_tiles:
            vbasis = _tile_vbasis(src, dst, total - len(ts.lane_contig), total - len(td.lane_contig),
                                  ts.lane_contig, td.lane_contig)
            if vbasis is None:
                continue
            tile_src = _tile(ts, src.bases(REG), src.bases(LANE), vbasis)
            tile_dst = _tile(td, dst.bases(REG), dst.bases(LANE), vbasis)
            if tile_src is None or tile_dst is None:
                continue
            missing = min(len(ts.lane_contig) + len(ts.lane_addr) - 3, len(td.lane_contig) + len(td.lane_addr) - 3)
            smem = _swizzle(src, dst, bits, vbasis, tile_src, tile_dst, missing)
            read, write = _conflicts(tile_src, tile_dst, smem, dim)
            key = (read + write, -len(smem.reps))
            if best is None or key < (best[0], best[1]):
                best = (key[0], key[1], smem, (read, write), (ts.name, td.name))
    if best is None:
        smem, rw = _ldst(src, dst, bits)
        return smem, rw, (_LDST.name, _LDST.name)
    return best[2], best[3], best[4]


def _instruction(name: str, store: bool) -> str:
    if name == _LDST.name:
        return "st.shared" if store else "ld.shared"
    return ("stmatrix" if store else "ldmatrix") + (".trans" if name.endswith("trans") else "")


def scratch_of(src: Ll, dst: Ll, element_bits: int, nvidia_capability: int | None = None) -> Scratch:
    """The scratch buffer Triton allocates for a conversion through shared memory from
    ``src`` to ``dst`` (flattened layouts of one CTA, see
    :func:`~irscope.ir.layouts.convert_layout.from_linear`).

    ``element_bits``: the element type's width (pointers 64, at least 8: Triton's
    ``getBitwidth``). ``nvidia_capability`` (80, 90...) lets Triton's NVIDIA lowering
    consider ``stmatrix``/``ldmatrix``; None (AMD, unknown) uses plain ld/st.shared."""
    bits = max(8, element_bits)
    s, d = remove_broadcast_registers(src), remove_broadcast_registers(dst)
    if nvidia_capability is None:
        smem, (read, write) = _ldst(s, d, bits)
        names = (_LDST.name, _LDST.name)
    else:
        src_tiles, dst_tiles = [_LDST], [_LDST]
        # Triton asks whether the conversion is trivial over ``block``; for one CTA it
        # always is, and for a cluster this compares the two sides' CTA bases.
        cross_cta = any(b for b in s.bases(BLOCK)) and s.bases(BLOCK) != d.bases(BLOCK)
        if nvidia_capability >= 75 and bits <= 32:
            if nvidia_capability >= 90:
                src_tiles.append(_MATRIX)
            if not cross_cta:
                dst_tiles.append(_MATRIX)
            if bits == 16:
                if nvidia_capability >= 90:
                    src_tiles.append(_MATRIX_TRANS)
                if not cross_cta:
                    dst_tiles.append(_MATRIX_TRANS)
        smem, (read, write), names = _with_tiles(s, d, bits, src_tiles, dst_tiles)
    blocks = 1 << len([b for b in s.bases(BLOCK) if b])
    elements = (1 << s.out_bits) // ((1 << len(smem.reps)) * blocks)
    return Scratch(elements=elements, bytes=elements * bits // 8, store_ways=write + 1, load_ways=read + 1,
                   instructions=(_instruction(names[0], True), _instruction(names[1], False)))
