"""Triton layout encodings, decoded: who owns each tensor element, where shared data lands.

Pure Python (standard library only), so viewing a capture never needs Triton.

>>> enc = decode_encoding("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], "
...                       "warpsPerCTA = [4, 1], order = [1, 0]}>")
>>> enc.describe()
'blocked sizePerThread [1, 8] threadsPerWarp [4, 8] warpsPerCTA [4, 1] order [1, 0]'
>>> enc.owners([16, 64]).owners_of((0, 9))
(Owner(warp=0, lane=1, register=1),)

* :func:`decode_encoding` / :func:`parse_aliases`: TTGIR text -> typed records
  (:mod:`.model`), never raising (:class:`UnknownEncoding` instead).
* ``enc.to_linear(shape)`` / ``enc.owners(shape)``: for distributed encodings,
  the linear layout Triton builds (:mod:`.conversions`) and the element ->
  (warp, lane, register) map (:class:`LayoutMap`).
* ``enc.banks(shape, element_bits)`` / ``enc.offsets(...)``: for shared
  encodings, where each element lands (:mod:`.shared`).
* :func:`diff_fields`: field-by-field differences of two encodings.
* :mod:`.convert_layout`: how a ``ttg.convert_layout`` moves data (registers, warp
  shuffles or shared memory, by Triton's rule) and which elements change owner;
  :mod:`.conversion_scratch`: its shared-memory scratch size and bank conflicts.
"""

from __future__ import annotations

from .conversions import LayoutError, to_linear
from .decode import decode_encoding, parse_aliases
from .linear import LinearLayout
from .model import (
    AmdMfmaEncoding,
    AmdRotatingSharedEncoding,
    AmdWmmaEncoding,
    BlockedEncoding,
    CgaLayout,
    DistributedEncoding,
    DotOperandEncoding,
    Encoding,
    LinearEncoding,
    MemorySpace,
    NvidiaMmaEncoding,
    NvmmaSharedEncoding,
    PaddedSharedEncoding,
    SharedEncoding,
    SharedLinearEncoding,
    SliceEncoding,
    SwizzledSharedEncoding,
    TensorMemoryEncoding,
    TensorMemoryScalesEncoding,
    UnknownEncoding,
)
from .owners import LayoutMap, Owner, layout_map
from .shared import banks, offsets, shared_linear_layout

__all__ = [
    "AmdMfmaEncoding",
    "AmdRotatingSharedEncoding",
    "AmdWmmaEncoding",
    "BlockedEncoding",
    "CgaLayout",
    "DistributedEncoding",
    "DotOperandEncoding",
    "Encoding",
    "LayoutError",
    "LayoutMap",
    "LinearEncoding",
    "LinearLayout",
    "MemorySpace",
    "NvidiaMmaEncoding",
    "NvmmaSharedEncoding",
    "Owner",
    "PaddedSharedEncoding",
    "SharedEncoding",
    "SharedLinearEncoding",
    "SliceEncoding",
    "SwizzledSharedEncoding",
    "TensorMemoryEncoding",
    "TensorMemoryScalesEncoding",
    "UnknownEncoding",
    "banks",
    "decode_encoding",
    "diff_fields",
    "layout_map",
    "offsets",
    "parse_aliases",
    "shared_linear_layout",
    "to_linear",
]


def diff_fields(old: Encoding, new: Encoding) -> list[str]:
    """Human lines for what changed between two encodings, e.g. ``sizePerThread [1, 8] -> [1, 4]``.

    A change of kind is one line (``kind blocked -> nvidia_mma``); nested
    parents are compared by their one-line description.
    """
    from .model import _fmt

    if old.kind != new.kind:
        return [f"kind {old.kind} -> {new.kind}"]
    a, b = old.fields(), new.fields()
    lines = []
    for name in list(a) + [n for n in b if n not in a]:
        va, vb = a.get(name), b.get(name)
        if isinstance(va, Encoding) and isinstance(vb, Encoding):
            if va.describe() != vb.describe():  # by content: alias names of parents differ freely
                lines.append(f"{name} ({va.describe()}) -> ({vb.describe()})")
            continue
        if va != vb:
            lines.append(f"{name} {_fmt(va) if va is not None else '-'} -> {_fmt(vb) if vb is not None else '-'}")
    return lines
