"""Distributed encodings -> linear layouts, following Triton's ``LinearLayoutConversions.cpp``.

Each function re-derives, in Python, the layout Triton's C++ builds for an
encoding and a tensor shape: which tensor index register ``r`` of lane ``l`` of
warp ``w`` (of CTA ``b``) holds.  The steps and their order mirror the C++ so
that register numbering matches Triton's, not only the set of owners; the
tests compare against ``GluonOpBuilder.to_linear_layout`` of Triton 3.6.
"""

from __future__ import annotations

from collections.abc import Sequence

from irscope.errors import IrscopeError

from .linear import LinearLayout, dim_names
from .model import (
    AmdMfmaEncoding,
    AmdWmmaEncoding,
    BlockedEncoding,
    CgaLayout,
    DotOperandEncoding,
    Encoding,
    LinearEncoding,
    NvidiaMmaEncoding,
    SliceEncoding,
)

__all__ = ["LayoutError", "cga_layout", "combine_cta_cga", "to_linear"]

REG, LANE, WARP, BLOCK = "register", "lane", "warp", "block"


class LayoutError(IrscopeError, ValueError):
    """The encoding/shape pair has no linear layout we can compute (unsupported or inconsistent)."""


# ---------------------------------------------------------------- helpers
def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def matrix_order(rank: int, row_major: bool) -> list[int]:
    """Triton's ``getMatrixOrder``: minor-to-major dims of a batch of matrices."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def dot_operand_order(op_idx: int, rank: int, k_contig: bool) -> list[int]:
    """Triton's ``getOrderForDotOperand``: A is [.., m, k], B is [.., k, n]."""
    return matrix_order(rank, row_major=bool(op_idx) != k_contig)


def identity_nd(in_dim: str, shape: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Triton's ``identityStandardND``: fill ``shape`` with ``in_dim``, minor dim (order[0]) first."""
    names = dim_names(len(shape))
    ret = LinearLayout.empty()
    for d in order:
        ret = ret * LinearLayout.identity1d(shape[d], in_dim, names[d])
    return ret


def broadcast_dot_operand(shape: Sequence[int], order: Sequence[int], k_dim: int, in_dim: str) -> LinearLayout:
    """Triton's ``broadcastedDotOperandLayout``: like identity_nd but every k step maps to 0.

    Operands are shared by all warps (lanes) along K: the warps that compute
    different K slices of C would need the same A rows.
    """
    names = dim_names(len(shape))
    ret = LinearLayout.empty()
    for d in order:
        if d == k_dim:
            ret = ret * LinearLayout.zeros1d(shape[d], in_dim, names[d])
        else:
            ret = ret * LinearLayout.identity1d(shape[d], in_dim, names[d])
    return ret


def cga_layout(cga: CgaLayout | None, rank: int) -> LinearLayout:
    """Block -> index layout of the CTAs in a cluster (Triton's ``makeCgaLayout``)."""
    names = dim_names(rank)
    if cga is not None and cga.bases is not None:
        if any(len(b) != rank for b in cga.bases):
            raise LayoutError("CGALayout bases do not match the tensor rank")
        return LinearLayout.from_bases({BLOCK: cga.bases}, names)
    ctas = list(cga.ctas_per_cga) if cga and cga.ctas_per_cga else [1] * rank
    split = list(cga.cta_split_num) if cga and cga.cta_split_num else list(ctas)
    order = list(cga.cta_order) if cga and cga.cta_order else list(range(rank - 1, -1, -1))
    if not (len(ctas) == len(split) == len(order) == rank):
        raise LayoutError("CTA layout fields do not match the tensor rank")
    ret = LinearLayout.empty()
    for d in order:
        ret = ret * (LinearLayout.identity1d(split[d], BLOCK, names[d])
                     * LinearLayout.zeros1d(ctas[d] // split[d], BLOCK, names[d]))
    return ret.transpose_outs(names)


def combine_cta_cga(cta: LinearLayout, cga: CgaLayout | None, shape: Sequence[int]) -> LinearLayout:
    """Triton's ``combineCtaCgaWithShape``: fit one CTA's layout to ``shape`` and add the blocks.

    A layout tile smaller than the shape repeats along registers (minor out-dim
    first, in the CTA layout's out-dim order); a tile larger than the shape is
    shrunk by making warps, then lanes, then registers hold duplicates.
    """
    rank = len(shape)
    names = dim_names(rank)
    full = dict(zip(names, shape))
    cga_ll = cga_layout(cga, rank).not_larger_than(full).transpose_outs(cta.out_names)
    cta_shape = {d: max(1, full[d] // cga_ll.out_size(d)) for d in cta.out_names}
    cta = cta.not_smaller_than(cta_shape)
    cta = cta.not_larger_than(cta_shape)
    return (cta * cga_ll).transpose_outs(names)


def _check_shape(shape: Sequence[int], rank: int, what: str) -> list[int]:
    shape = [int(s) for s in shape]
    if len(shape) != rank:
        raise LayoutError(f"{what} has rank {rank} but the shape {shape} has rank {len(shape)}")
    if not all(_pow2(s) for s in shape):
        raise LayoutError(f"linear layouts need power-of-two shapes, got {shape}")
    return shape


# ---------------------------------------------------------------- encodings
def _blocked(enc: BlockedEncoding, shape: list[int]) -> LinearLayout:
    rank = len(enc.order)
    shape = _check_shape(shape, rank, "blocked layout")
    if not (len(enc.size_per_thread) == len(enc.threads_per_warp) == len(enc.warps_per_cta) == rank):
        raise LayoutError("blocked layout fields disagree on the rank")
    cta = (identity_nd(REG, enc.size_per_thread, enc.order)
           * identity_nd(LANE, enc.threads_per_warp, enc.order)
           * identity_nd(WARP, enc.warps_per_cta, enc.order))
    return combine_cta_cga(cta, enc.cga, shape)


def _nvidia_mma_tile(tile_shape: Sequence[int], k_width: int, order: Sequence[int],
                     rep_order: Sequence[int]) -> LinearLayout:
    """Triton's ``nvidiaMmaTile``: the mma.sync / wgmma fragment of one warp.

    Inner dim: kWidth registers, then 4 lanes; outer dim: 8 lanes, then the
    remaining rows in registers; then the remaining inner columns in registers.
    """
    rank = len(rep_order)
    names = dim_names(rank)
    cta = identity_nd(REG, [1] * rank, rep_order)
    inner, outer = order[0], order[1]
    m, n = tile_shape[outer], tile_shape[inner]
    if m % 8 or n % (k_width * 4):
        raise LayoutError(f"mma tile {list(tile_shape)} does not fit kWidth {k_width}")
    return (cta
            * LinearLayout.identity1d(k_width, REG, names[inner])
            * LinearLayout.identity1d(4, LANE, names[inner])
            * LinearLayout.identity1d(8, LANE, names[outer])
            * LinearLayout.identity1d(m // 8, REG, names[outer])
            * LinearLayout.identity1d(n // (k_width * 4), REG, names[inner]))


def _nvidia_mma(enc: NvidiaMmaEncoding, shape: list[int]) -> LinearLayout:
    rank = len(enc.warps_per_cta)
    shape = _check_shape(shape, rank, "nvidia_mma layout")
    if enc.version_major == 2:
        tile = list(enc.instr_shape)
    elif enc.version_major == 3:
        tile = list(enc.instr_shape[:2])
    else:
        raise LayoutError(f"nvidia_mma v{enc.version_major} has no register layout here (only v2 and v3)")
    if len(tile) != rank:
        raise LayoutError(f"instrShape {list(enc.instr_shape)} does not match rank {rank}")
    order = matrix_order(rank, True)
    cta = _nvidia_mma_tile(tile, 2, order, matrix_order(rank, True))
    # Ampere numbers warps row-major over the C tile grid, Hopper column-major
    # (a warpgroup's 4 warps stack along M).
    warp_order = matrix_order(rank, row_major=enc.version_major != 3)
    cta = cta * identity_nd(WARP, enc.warps_per_cta, warp_order).transpose_outs(cta.out_names)
    return combine_cta_cga(cta, enc.cga, shape)


def _nvidia_dot(enc: DotOperandEncoding, mma: NvidiaMmaEncoding, shape: list[int]) -> LinearLayout:
    rank = len(mma.warps_per_cta)
    shape = _check_shape(shape, rank, "dot_op layout")
    if enc.k_width is None:
        raise LayoutError("dot_op of nvidia_mma needs kWidth")
    if mma.version_major not in (2, 3):
        raise LayoutError(f"dot_op of nvidia_mma v{mma.version_major} is not a register layout")
    is_a = enc.op_idx == 0
    if not is_a and mma.version_major != 2:
        raise LayoutError("Hopper takes operand B from shared memory; no register layout")
    k = enc.k_width
    tile = [1] * rank
    if is_a:
        tile[rank - 2], tile[rank - 1] = 16, k * 8
    else:
        tile[rank - 2], tile[rank - 1] = k * 8, 8
    order = dot_operand_order(enc.op_idx, rank, k_contig=True)
    cta = _nvidia_mma_tile(tile, k, order, dot_operand_order(enc.op_idx, rank, k_contig=True))
    k_dim = rank - 1 if is_a else rank - 2
    warp_order = matrix_order(rank, row_major=mma.version_major != 3)
    warps = broadcast_dot_operand(mma.warps_per_cta, warp_order, k_dim, WARP)
    cta = cta * warps.transpose_outs(cta.out_names)
    return combine_cta_cga(cta, mma.cga, shape)


def _fma_dot(enc: DotOperandEncoding, blocked: BlockedEncoding, shape: list[int]) -> LinearLayout:
    """Dot operand of an FMA (no tensor core) dot: each thread holds its whole K row/column."""
    rank = len(blocked.order)
    shape = _check_shape(shape, rank, "dot_op layout")
    order = list(blocked.order)
    k_dim = rank - 1 if enc.op_idx == 0 else rank - 2
    size = list(blocked.size_per_thread)
    size[k_dim] = shape[k_dim]
    rep_names = [dim_names(rank)[d] for d in order]
    regs = identity_nd(REG, size, order)
    lanes = broadcast_dot_operand(blocked.threads_per_warp, order, k_dim, LANE)
    warps = broadcast_dot_operand(blocked.warps_per_cta, order, k_dim, WARP)
    cta = regs.transpose_outs(rep_names) * lanes.transpose_outs(rep_names) * warps.transpose_outs(rep_names)
    return combine_cta_cga(cta, blocked.cga, shape)


def _mfma_parts(enc: AmdMfmaEncoding):
    rank = len(enc.warps_per_cta)
    tiles = list(enc.tiles_per_warp) if enc.tiles_per_warp else [1] * rank
    ebw = enc.element_bit_width or 32
    if len(enc.instr_shape) < 2:
        raise LayoutError("amd_mfma needs instrShape [M, N, (K)]")
    return rank, tiles, ebw, enc.instr_shape[0], enc.instr_shape[1]


def _amd_mfma(enc: AmdMfmaEncoding, shape: list[int]) -> LinearLayout:
    rank, tiles_per_warp, ebw, m_dim, n_dim = _mfma_parts(enc)
    shape = _check_shape(shape, rank, "amd_mfma layout")
    names = dim_names(rank)
    batch = rank == 3
    m_idx, n_idx = int(batch), 1 + int(batch)
    order = matrix_order(rank, True)
    dim_m, dim_n = names[order[1]], names[order[0]]
    height = 1 if ebw == 64 else 4
    wave = 64
    tiles = (m_dim * n_dim) // (wave * height)
    I = LinearLayout.identity1d
    if not enc.is_transposed:
        # Each lane holds `height` consecutive rows of one column; lanes run along N.
        tile = I(height, REG, dim_m) * (I(n_dim, LANE, dim_n) * I(wave // n_dim, LANE, dim_m))
        if tiles > 0:
            tile = tile * I(tiles, REG, dim_m)
    else:
        tile = I(height, REG, dim_n) * (I(m_dim, LANE, dim_m) * I(wave // m_dim, LANE, dim_n))
        if tiles > 0:
            tile = tile * I(tiles, REG, dim_n)
    tile = tile.transpose_outs([dim_n, dim_m])
    wpc = enc.warps_per_cta
    # MFMA tiles are numbered N-contiguous across the whole tensor (the dot
    # lowering assumes it), so the N repeats go into registers before M.
    tile = tile * I(tiles_per_warp[n_idx], REG, dim_n)
    tile = tile * I(wpc[n_idx], WARP, dim_n)
    tile = tile * I(shape[n_idx] // (n_dim * wpc[n_idx] * tiles_per_warp[n_idx]), REG, dim_n)
    tile = tile * I(tiles_per_warp[m_idx], REG, dim_m)
    tile = tile * I(wpc[m_idx], WARP, dim_m)
    if batch:
        tile = tile * I(1, REG, names[order[2]]) * I(1, LANE, names[order[2]]) * I(wpc[0], WARP, names[order[2]])
    return combine_cta_cga(tile, enc.cga, shape)


def _mfma_dot(enc: DotOperandEncoding, mfma: AmdMfmaEncoding, shape: list[int]) -> LinearLayout:
    rank, tiles_per_warp, _, m_dim, n_dim = _mfma_parts(mfma)
    shape = _check_shape(shape, rank, "dot_op layout")
    if enc.k_width is None:
        raise LayoutError("dot_op of amd_mfma needs kWidth")
    names = dim_names(rank)
    op = enc.op_idx
    non_k_idx = rank - 2 if op == 0 else rank - 1
    k_idx = rank - 1 if op == 0 else rank - 2
    non_k = m_dim if op == 0 else n_dim
    wave = 64
    order = dot_operand_order(op, rank, k_contig=True)
    dim_k, dim_non_k = names[order[0]], names[order[1]]
    I = LinearLayout.identity1d
    # kWidth consecutive K elements per lane; lanes go along the non-K dim first.
    tile = I(enc.k_width, REG, dim_k) * (I(non_k, LANE, dim_non_k) * I(wave // non_k, LANE, dim_k))
    k_tile = wave // non_k * enc.k_width
    if (m_dim == 64 and n_dim == 4 and op == 0) or (m_dim == 4 and n_dim == 64 and op == 1):
        tile = tile * I(16, REG, dim_k)
        k_tile *= 16
    if shape[k_idx] > k_tile:
        tile = tile * I(shape[k_idx] // k_tile, REG, dim_k)
    tile = tile * I(tiles_per_warp[non_k_idx], REG, dim_non_k)
    tile = tile.transpose_outs([dim_k, dim_non_k])
    if rank == 3:
        tile = tile * I(1, REG, names[order[2]]) * I(1, LANE, names[order[2]])
    cta = tile * identity_nd(WARP, mfma.warps_per_cta, matrix_order(rank, True))
    return combine_cta_cga(cta, mfma.cga, shape).transpose_outs(names)


def _amd_wmma(enc: AmdWmmaEncoding, shape: list[int]) -> LinearLayout:
    rank = len(enc.warps_per_cta)
    shape = _check_shape(shape, rank, "amd_wmma layout")
    if enc.version not in (1, 2, 3):
        raise LayoutError(f"amd_wmma version {enc.version} is unknown")
    names = dim_names(rank)
    batch = rank == 3
    m_idx, n_idx = int(batch), 1 + int(batch)
    order = matrix_order(rank, True)
    dim_m, dim_n = names[order[1]], names[order[0]]
    n_dim = enc.instr_shape[1] if enc.instr_shape else 16
    thread_order = matrix_order(rank, row_major=not enc.is_transposed)
    outs = [names[thread_order[0]], names[thread_order[1]]]
    if enc.version == 1:
        # RDNA3: lanes 16-31 hold the odd rows, registers step two rows.
        bases = {REG: [[0, 2], [0, 4], [0, 8]], LANE: [[1, 0], [2, 0], [4, 0], [8, 0], [0, 1]]}
    else:
        bases = {REG: [[0, 1], [0, 2], [0, 4]], LANE: [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]]}
    tile = LinearLayout.from_bases(bases, outs).transpose_outs([dim_n, dim_m])
    I = LinearLayout.identity1d
    tiles = enc.tiles_per_warp or (1,) * rank
    wpc = enc.warps_per_cta
    # Like MFMA: instruction tiles are numbered N-contiguous over the whole
    # tensor: a warp's own N tiles, the warps along N, the remaining N
    # repeats, and only then M.
    tile = tile * I(tiles[n_idx], REG, dim_n) * I(wpc[n_idx], WARP, dim_n)
    tile = tile * I(shape[n_idx] // (n_dim * wpc[n_idx] * tiles[n_idx]), REG, dim_n)
    tile = tile * I(tiles[m_idx], REG, dim_m) * I(wpc[m_idx], WARP, dim_m)
    if batch:
        tile = tile * I(1, REG, names[order[2]]) * I(1, LANE, names[order[2]]) * I(wpc[0], WARP, names[order[2]])
    return combine_cta_cga(tile, enc.cga, shape)


def _wmma_dot(enc: DotOperandEncoding, wmma: AmdWmmaEncoding, shape: list[int]) -> LinearLayout:
    rank = len(wmma.warps_per_cta)
    shape = _check_shape(shape, rank, "dot_op layout")
    if enc.k_width is None:
        raise LayoutError("dot_op of amd_wmma needs kWidth")
    names = dim_names(rank)
    op = enc.op_idx
    order = dot_operand_order(op, rank, k_contig=True)
    dim_k, dim_non_k = names[order[0]], names[order[1]]
    mnk = list(wmma.instr_shape) if wmma.instr_shape else [16, 16, 16]
    non_k = mnk[0] if op == 0 else mnk[1]
    k_idx = rank - 1 if op == 0 else rank - 2
    non_k_idx = rank - 2 if op == 0 else rank - 1
    depth = 32 // non_k
    I = LinearLayout.identity1d
    tile = I(enc.k_width, REG, dim_k) * I(non_k, LANE, dim_non_k)
    # v1 duplicates the operand in both half-waves; v2/v3 split K between them.
    tile = tile * (LinearLayout.zeros1d(depth, LANE, dim_k) if wmma.version == 1 else I(depth, LANE, dim_k))
    # Registers cover the rest of the instruction's K, then further K tiles.
    tile = tile * I(mnk[2] // (depth * enc.k_width), REG, dim_k)
    k_tile = max(mnk[2], depth * enc.k_width)
    if shape[k_idx] > k_tile:
        tile = tile * I(shape[k_idx] // k_tile, REG, dim_k)
    tiles = wmma.tiles_per_warp or (1,) * rank
    tile = tile * I(tiles[non_k_idx], REG, dim_non_k)
    if rank == 3:
        tile = tile * I(1, REG, names[order[2]]) * I(1, LANE, names[order[2]])
    warps = broadcast_dot_operand(wmma.warps_per_cta, matrix_order(rank, True), k_idx, WARP)
    rep = [names[d] for d in order]
    cta = tile.transpose_outs(rep) * warps.transpose_outs(rep)
    return combine_cta_cga(cta, wmma.cga, shape)


def _slice(enc: SliceEncoding, shape: list[int]) -> LinearLayout:
    shape = [int(s) for s in shape]
    if not 0 <= enc.dim <= len(shape):
        raise LayoutError(f"slice dim {enc.dim} out of range for shape {shape}")
    parent_shape = shape[: enc.dim] + [1] + shape[enc.dim:]
    parent = to_linear(enc.parent, parent_shape)
    names = dim_names(len(shape))

    def drop(b):
        return tuple(v for i, v in enumerate(b) if i != enc.dim)

    ins = []
    for name, bs in parent.ins:
        new = [drop(b) for b in bs]
        if name == REG:
            # Registers that only walked the removed dim are now duplicates.
            new = [b for b in new if any(b)]
        ins.append((name, new))
    return LinearLayout.from_bases(ins, names)


def _linear(enc: LinearEncoding, shape: list[int]) -> LinearLayout:
    rank = len(shape)
    for b in enc.register + enc.lane + enc.warp + enc.block:
        if len(b) != rank:
            raise LayoutError(f"linear layout bases have rank {len(b)}, the shape {list(shape)} rank {rank}")
    names = dim_names(rank)
    ll = LinearLayout.from_bases({REG: enc.register, LANE: enc.lane, WARP: enc.warp, BLOCK: enc.block}, names)
    # Used with another shape than the bases span (e.g. tensor<128x1> after an
    # expand_dims), Triton fits it: registers repeat to cover a larger shape;
    # for a smaller one lanes/warps hold duplicates and surplus registers go.
    want = dict(zip(names, (int(s) for s in shape)))
    return ll.not_smaller_than(want).not_larger_than(want, broadcast_registers=False)


def to_linear(enc: Encoding, shape: Sequence[int]) -> LinearLayout:
    """The linear layout of a distributed encoding for a tensor of ``shape``.

    Raises :class:`LayoutError` for encodings without a register layout
    (shared, tensor memory, nvidia_mma v5, Hopper operand B, unknown) or for a
    shape that does not suit the encoding.
    """
    shape = [int(s) for s in shape]
    if isinstance(enc, BlockedEncoding):
        return _blocked(enc, shape)
    if isinstance(enc, SliceEncoding):
        return _slice(enc, shape)
    if isinstance(enc, NvidiaMmaEncoding):
        return _nvidia_mma(enc, shape)
    if isinstance(enc, AmdMfmaEncoding):
        return _amd_mfma(enc, shape)
    if isinstance(enc, AmdWmmaEncoding):
        return _amd_wmma(enc, shape)
    if isinstance(enc, LinearEncoding):
        return _linear(enc, shape)
    if isinstance(enc, DotOperandEncoding):
        parent = enc.parent
        if isinstance(parent, NvidiaMmaEncoding):
            return _nvidia_dot(enc, parent, shape)
        if isinstance(parent, BlockedEncoding):
            return _fma_dot(enc, parent, shape)
        if isinstance(parent, AmdMfmaEncoding):
            return _mfma_dot(enc, parent, shape)
        if isinstance(parent, AmdWmmaEncoding):
            return _wmma_dot(enc, parent, shape)
        raise LayoutError(f"dot_op with a {parent.kind} parent has no register layout here")
    raise LayoutError(f"{enc.kind} is not a distributed (register) layout")
