"""Where each element of a shared-memory tensor lands: offset, and bank.

Model
-----
A shared encoding defines a map *offset -> tensor index* (Triton's shared
linear layout, input dim ``offset``).  We build that map the way
``LinearLayoutConversions.cpp`` does and invert it: ``offsets()`` gives each
element's offset in elements from the start of the allocation (padding
included for ``padded_shared``).  The byte address is ``offset * bits / 8`` and
the bank is ``(byte_address // 4) % 32``: 32 banks of 4 bytes, the layout of
NVIDIA shared memory and of AMD LDS in its 32-bank view.  Elements narrower
than 4 bytes share a bank word; a 64-bit element starts in the bank reported
and also covers the next one.  The allocation is assumed to start on a bank-0
boundary (Triton aligns it to at least 16 bytes; swizzled nvmma tiles to
1024 bytes).

* ``swizzled_shared`` (and old ``shared``): row ``r`` of the two most-minor
  dims (``order[1]``, ``order[0]``) has its ``vec``-element groups XORed with
  ``(r // perPhase) % maxPhase``.
* ``nvmma_shared`` (and old ``shared`` with ``hasLeadingOffset = true``): the
  CUDA 32/64/128-byte swizzles: in 8-row x swizzle-width-byte tiles the 16-byte
  chunk index is XORed with ``(row // perPhase) % maxPhase``; tiles stack along
  the rows, then along the columns (one TMA box after another).
* ``padded_shared``: linear order (``order`` or ``offset`` bases), plus
  ``padding`` elements after every ``interval``.

The tensor shape must be the per-CTA shape (powers of two).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from .conversions import LayoutError
from .linear import LinearLayout, dim_names
from .model import (
    AmdRotatingSharedEncoding,
    Encoding,
    NvmmaSharedEncoding,
    PaddedSharedEncoding,
    SharedLinearEncoding,
    SwizzledSharedEncoding,
)

__all__ = ["BANK_BYTES", "NUM_BANKS", "banks", "offsets", "shared_linear_layout"]

NUM_BANKS = 32
BANK_BYTES = 4
OFF = "offset"


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _swizzle_2d(shape: Sequence[int], order: Sequence[int], row_col) -> LinearLayout:
    """Offset bases over the two minor dims (``row_col(row)`` gives a row's column XOR), rest linear."""
    names = dim_names(len(shape))
    col_dim, row_dim = order[0], order[1]
    n_cols, n_rows = shape[col_dim], shape[row_dim]
    bases = [(0, c) for c in _powers(n_cols)] + [(r, row_col(r, n_cols)) for r in _powers(n_rows)]
    ll = LinearLayout.from_bases({OFF: bases}, [names[row_dim], names[col_dim]])
    for d in order[2:]:
        ll = ll * LinearLayout.identity1d(shape[d], OFF, names[d])
    return ll


def _powers(n: int) -> list[int]:
    out, v = [], 1
    while v < n:
        out.append(v)
        v *= 2
    return out


def _swizzled(enc: SwizzledSharedEncoding | AmdRotatingSharedEncoding, shape: list[int]) -> LinearLayout:
    names = dim_names(len(shape))
    if len(shape) == 1:
        return LinearLayout.identity1d(shape[0], OFF, names[0])
    vec, per, mx = enc.vec, enc.per_phase, enc.max_phase
    if per <= 0 or mx <= 0:
        raise LayoutError("perPhase and maxPhase must be positive")
    if isinstance(enc, AmdRotatingSharedEncoding):
        def col(r, n):  # the phase also rotates once per maxPhase*perPhase rows
            return (vec * (((r // per) % mx) ^ (r // mx // per % mx))) % n
    else:
        def col(r, n):
            return (vec * ((r // per) % mx)) % n
    return _swizzle_2d(shape, enc.order, col)


def _nvmma_params(swizzle_bytes: int, element_bits: int) -> tuple[int, int, int]:
    vec = max(1, 128 // element_bits)  # one 16-byte chunk
    per_phase, max_phase = {128: (1, 8), 64: (2, 4), 32: (4, 2)}.get(swizzle_bytes, (1, 1))
    return vec, per_phase, max_phase


def _nvmma(shape: list[int], swizzle: int, bits: int, transposed: bool, fp4: bool) -> LinearLayout:
    """Triton's ``nvmmaSharedToLinearLayout`` (TMA-box tiling, then the swizzled core matrices)."""
    rank = len(shape)
    names = dim_names(rank)
    if swizzle not in (0, 32, 64, 128):
        raise LayoutError(f"swizzlingByteWidth {swizzle} is not 0, 32, 64 or 128")
    contig = 0 if transposed else rank - 1
    box = [min(s, 256) for s in shape]
    if fp4:
        box[contig] *= 2
    if swizzle:
        width = 8 * swizzle // bits
        if box[contig] < width:
            raise LayoutError(f"shape {shape} is narrower than the {swizzle}-byte swizzle ({width} elements)")
        box[contig] = width
    if fp4:
        box[contig] //= 2
    if swizzle == 0 or rank == 1:
        ll = LinearLayout.identity1d(box[rank - 1], OFF, names[rank - 1])
        for i in range(rank - 2, -1, -1):
            ll = ll * LinearLayout.identity1d(box[i], OFF, names[i])
        return ll.not_smaller_than(dict(zip(names, shape)))
    if rank != 2 and transposed:
        raise LayoutError("transposed nvmma_shared is only modelled for rank 2")
    rows = 1
    for s in box[:-1]:
        rows *= s
    collapsed = [rows, box[-1]]
    if transposed:
        collapsed.reverse()
    vec, per, mx = _nvmma_params(swizzle, bits)
    tile_cols = 8 * max(16, swizzle) // bits
    bases = []
    for c in _powers(tile_cols):
        bases.append((0, c // 16 * 8 + c % 8 if fp4 else c))
    for r in _powers(8):
        colp = vec * ((r // per) % mx)
        bases.append((r, colp // 16 * 8 + colp % 8 if fp4 else colp))
    two = dim_names(2)
    core = LinearLayout.from_bases({OFF: bases}, two)
    if collapsed[1] * (2 if fp4 else 1) < core.out_size("dim1") or collapsed[0] < core.out_size("dim0"):
        raise LayoutError(f"shape {shape} is smaller than one {swizzle}-byte swizzle tile")
    ll = core.not_smaller_than(dict(zip(two, collapsed)))
    # Reshape [rows, cols] to the N-d box: split the row bits into the leading dims.
    target = ([box[-1]] + box[:-1]) if transposed else box
    ll = _reshape_rows(ll, target)
    if transposed:
        ll = LinearLayout(ll.ins, ll.outs).transpose_outs(list(reversed(ll.out_names)))
        ll = LinearLayout(
            tuple((n, bs) for n, bs in ll.ins), tuple((names[i], s) for i, (_, s) in enumerate(ll.outs))
        )
    return ll.not_smaller_than(dict(zip(names, shape)), order=list(names))


def _reshape_rows(ll: LinearLayout, target: Sequence[int]) -> LinearLayout:
    """[R, C] -> target shape (row-major); the column dim stays last."""
    rank = len(target)
    names = dim_names(rank)
    if rank == 2:
        return LinearLayout(ll.ins, tuple(zip(names, target)))
    sizes = list(target[:-1])
    new_ins = []
    for name, bs in ll.ins:
        new = []
        for r, c in bs:
            idx = []
            for s in reversed(sizes):
                idx.append(r % s)
                r //= s
            new.append(tuple(reversed(idx)) + (c,))
        new_ins.append((name, tuple(new)))
    return LinearLayout(tuple(new_ins), tuple(zip(names, target)))


def shared_linear_layout(enc: Encoding, shape: Sequence[int], element_bits: int | None = None) -> LinearLayout:
    """The ``offset -> index`` layout of a shared encoding for ``shape`` (per CTA)."""
    shape = [int(s) for s in shape]
    if not shape or not all(_pow2(s) for s in shape):
        raise LayoutError(f"shared layouts need power-of-two shapes, got {shape}")
    names = dim_names(len(shape))
    if isinstance(enc, (SwizzledSharedEncoding, AmdRotatingSharedEncoding)):
        if isinstance(enc, SwizzledSharedEncoding) and enc.has_leading_offset:
            # Pre-3.3 spelling of the nvmma swizzle: perPhase/maxPhase name the width.
            width = {(4, 2): 32, (2, 4): 64, (1, 8): 128}.get((enc.per_phase, enc.max_phase))
            if width is None or element_bits is None:
                raise LayoutError("hasLeadingOffset needs (perPhase, maxPhase) of a known swizzle and element_bits")
            transposed = len(shape) == 2 and tuple(enc.order[:2]) == (0, 1)
            return _nvmma(shape, width, element_bits, transposed, False)
        if len(enc.order) != len(shape):
            raise LayoutError(f"order {list(enc.order)} does not match shape {shape}")
        return _swizzled(enc, shape)
    if isinstance(enc, NvmmaSharedEncoding):
        return _nvmma(shape, enc.swizzling_byte_width, enc.element_bit_width, enc.transposed, enc.fp4_padded)
    if isinstance(enc, SharedLinearEncoding):
        return LinearLayout.from_bases({OFF: enc.offset_bases}, names, shape)
    if isinstance(enc, PaddedSharedEncoding):
        if enc.offset_bases is not None:
            return LinearLayout.from_bases({OFF: enc.offset_bases}, names, shape)
        order = enc.order or tuple(range(len(shape) - 1, -1, -1))
        ll = LinearLayout.empty()
        for d in order:
            ll = ll * LinearLayout.identity1d(shape[d], OFF, names[d])
        return ll.transpose_outs(names)
    raise LayoutError(f"{enc.kind} is not a shared-memory layout")


def offsets(enc: Encoding, shape: Sequence[int], element_bits: int) -> dict[tuple[int, ...], int]:
    """Index -> offset in elements from the start of the allocation (padding counted)."""
    ll = shared_linear_layout(enc, shape, element_bits)
    shape = [int(s) for s in shape]
    names = dim_names(len(shape))
    pos = [ll.out_names.index(n) for n in names]
    out: dict[tuple[int, ...], int] = {}
    pads: tuple[tuple[int, int], ...] = ()
    if isinstance(enc, PaddedSharedEncoding):
        pads = tuple((iv, pad) for iv, pad in zip(enc.intervals, enc.paddings) if iv > 0)
    # Images of all offsets by doubling: offset i's image XORs the bases of its
    # set bits.  With power-of-two sizes the row-major flat index is XOR-linear.
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    flat_images = [0]
    for b in ll.bases(OFF):
        if any(b[p] >= n for p, n in zip(pos, shape)):
            raise LayoutError(f"{enc.kind} reaches outside shape {shape}")
        fb = sum(b[p] * st for p, st in zip(pos, strides))
        flat_images = flat_images + [v ^ fb for v in flat_images]
    index_of = list(itertools.product(*(range(n) for n in shape)))
    for off, flat in enumerate(flat_images):
        index = index_of[flat]
        if index not in out:
            out[index] = off + sum((off // iv) * pad for iv, pad in pads) if pads else off
    total = 1
    for s in shape:
        total *= s
    if len(out) != total:
        raise LayoutError(f"{enc.kind} does not place every element of shape {shape}")
    return out


def banks(enc: Encoding, shape: Sequence[int], element_bits: int) -> dict[tuple[int, ...], int]:
    """Index -> bank (0..31) of the first byte of each element; see the module docstring."""
    if element_bits <= 0:
        raise LayoutError("element_bits must be positive")
    return {index: (off * element_bits // 8 // BANK_BYTES) % NUM_BANKS
            for index, off in offsets(enc, shape, element_bits).items()}
