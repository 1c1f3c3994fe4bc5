"""What a layout picture shows: every element of a tensor and who holds it (or where it lands).

A :class:`LayoutPicture` is pure data, built from a decoded encoding and a shape
by the core decoder (:mod:`irscope.ir.layouts`), never re-derived here:

* a *distributed* encoding (blocked, slice, dot_op, nvidia_mma v2/v3, amd_mfma,
  amd_wmma, linear): each element's owners, ``(warp, lane, register)`` triples
  from ``enc.owners(shape)``; several where the layout replicates;
* a *shared* encoding (swizzled_shared, nvmma_shared, amd_rotating_shared,
  padded_shared, shared_linear): each element's offset in the allocation and its
  bank after swizzling (``enc.offsets``/``enc.banks``).

``to_json()`` is what ``irscope layout --format json`` prints;
:mod:`irscope.export.layout_dot` draws it.  Stable API (the HTML report uses it):

>>> pic = picture_of("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], "
...                  "warpsPerCTA = [4, 1], order = [1, 0]}>", [16, 64])
>>> pic.owners_of((0, 9))
(Owner(warp=0, lane=1, register=1),)
>>> sorted(pic.to_json())
['elements', 'shape']
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from irscope.errors import IrscopeError
from irscope.ir.layouts import (
    DistributedEncoding,
    Encoding,
    LayoutMap,
    Owner,
    SharedEncoding,
    UnknownEncoding,
    decode_encoding,
)
from irscope.ir.types import ScalarType, TensorType, parse_type

from .style import clean

__all__ = ["MAX_ELEMENTS", "MAX_JSON_ELEMENTS", "LayoutPicture", "parse_shape", "picture_of"]

# Past this many elements a picture is refused (the JSON still has them all):
# 256x256 draws in about a second through dot; more would not be read anyway.
MAX_ELEMENTS = 65536
# Past this many the element map itself is refused (it would take minutes and
# gigabytes): 1M elements is already 16 times the largest tile Triton picks.
MAX_JSON_ELEMENTS = 1 << 20
# Shared layouts need an element width; f16 is what most kernels stage.
DEFAULT_ELEMENT_BITS = 16


@dataclass(frozen=True, slots=True)
class LayoutPicture:
    """One tensor's layout, element by element.

    ``kind`` is ``"distributed"`` (``layout`` is set: who holds each element) or
    ``"shared"`` (``offsets`` and ``banks`` are set: where each element lands).
    ``title`` names the tensor (``result %y``, or the encoding as given);
    ``encoding`` is the encoding text (aliases resolved), ``summary`` its one-line
    description; both are cleaned (printable, no surrogates) but not escaped.
    """

    title: str
    encoding: str
    summary: str
    encoding_kind: str
    shape: tuple[int, ...]
    kind: str
    layout: LayoutMap | None = None
    element_bits: int | None = None
    offsets: Mapping[tuple[int, ...], int] = field(default_factory=dict)
    banks: Mapping[tuple[int, ...], int] = field(default_factory=dict)
    note: str = ""
    """A line the picture adds under its title (e.g. which dims a shared picture shows)."""

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def owners_of(self, index: tuple[int, ...]) -> tuple[Owner, ...]:
        """Every (warp, lane, register) holding ``index`` (distributed pictures only)."""
        if self.layout is None:
            raise TypeError("a shared-memory picture has no owners")
        return self.layout.owners_of(index)

    def elements(self) -> Iterator[tuple[tuple[int, ...], tuple[Owner, ...]]]:
        """``(index, owners)`` in row-major order (distributed pictures only)."""
        if self.layout is None:
            raise TypeError("a shared-memory picture has no owners")
        return self.layout.elements()

    def replication(self) -> tuple[int, int]:
        """(fewest, most) owners of any element: ``(1, 1)`` when nothing is replicated."""
        if self.layout is None:
            return (1, 1)
        counts = self.layout.owner_counts()
        return (min(counts, default=0), max(counts, default=0))

    def to_json(self) -> dict:
        """The ``--format json`` object.

        Distributed: exactly ``{"shape": [...], "elements": [{"index": [...],
        "owners": [{"warp", "lane", "register"}, ...]}, ...]}``, row-major.
        Shared: ``{"shape", "element_bits", "elements": [{"index", "bank", "offset"}]}``.
        """
        if self.layout is not None:
            return {"shape": list(self.shape), "elements": [
                {"index": list(index), "owners": [{"warp": o.warp, "lane": o.lane, "register": o.register}
                                                  for o in owners]}
                for index, owners in self.layout.elements()]}
        return {"shape": list(self.shape), "element_bits": self.element_bits, "elements": [
            {"index": list(index), "bank": self.banks[index], "offset": self.offsets[index]}
            for index in sorted(self.offsets)]}


def parse_shape(text: str) -> tuple[tuple[int, ...], int | None]:
    """``64x64`` -> ((64, 64), None); ``64x64xf16`` -> ((64, 64), 16): an element
    type, spelled as in a tensor type, may end the shape. IrscopeError when malformed."""
    s = clean(text, 80).strip()
    m = _SHAPE.fullmatch(s)
    dims = tuple(int(d) for d in m.group(1).split("x")) if m else ()
    if m is None or not dims or any(d <= 0 or d > 1 << 20 for d in dims):
        raise IrscopeError(f"--shape {s!r} is not a shape like 64x64 or 128x32xf16 (positive sizes, 'x' between)")
    bits = None
    if m.group(2):
        tensor = parse_type(f"tensor<1x{m.group(2)}>")
        elem = tensor.element if isinstance(tensor, TensorType) else None
        if not isinstance(elem, ScalarType) or not elem.bits:
            raise IrscopeError(f"--shape {s!r}: {m.group(2)!r} is not an element type like f16, bf16, i8, f32")
        bits = elem.bits
    return dims, bits


_SHAPE = re.compile(r"(\d{1,7}(?:x\d{1,7})*)(?:x([a-zA-Z][A-Za-z0-9]*))?")


def picture_of(encoding: Encoding | str, shape: Sequence[int], *, element_bits: int | None = None,
               aliases: Mapping[str, str] | None = None, title: str | None = None) -> LayoutPicture:
    """The picture of ``encoding`` (decoded, or TTGIR text: inline or an alias of
    ``aliases``) over a tensor of ``shape``.

    ``element_bits`` matters only for shared encodings (their banks): by default
    the encoding's ``elementBitWidth`` if it has one, else 16.  IrscopeError (one
    line) for text that is no encoding, an encoding that places no elements
    (tensor memory, a memory space, nvidia_mma v5), or a shape it cannot take.
    """
    enc = decode_encoding(encoding, aliases) if isinstance(encoding, str) else encoding
    shape = tuple(int(s) for s in shape)
    if isinstance(enc, UnknownEncoding):
        raise IrscopeError(f"not a layout encoding: {clean(enc.describe(), 160)}")
    numel = 1
    for s in shape:
        numel *= s
    if not shape or numel <= 0:
        raise IrscopeError(f"shape {list(shape)} has no elements")
    if numel > MAX_JSON_ELEMENTS:
        raise IrscopeError(f"shape {list(shape)} has {numel} elements; at most {MAX_JSON_ELEMENTS} are mapped")
    text = clean(enc.raw, 2000)  # an alias decodes to its resolved text
    base: dict[str, Any] = {"title": clean(title if title is not None else text, 300), "encoding": text,
            "summary": clean(enc.describe(), 600), "encoding_kind": enc.kind}
    if isinstance(enc, DistributedEncoding):
        return LayoutPicture(shape=shape, kind="distributed", layout=enc.owners(shape), **base)
    if isinstance(enc, SharedEncoding):
        bits = element_bits or getattr(enc, "element_bit_width", None) or DEFAULT_ELEMENT_BITS
        drawn, note = _shared_dims(enc, shape)
        offs = enc.offsets(drawn, bits)
        return LayoutPicture(shape=drawn, kind="shared", element_bits=bits, offsets=offs,
                             banks=enc.banks(drawn, bits), note=note, **base)
    raise IrscopeError(f"{enc.kind} is not drawn: only distributed (register) and shared-memory layouts "
                       f"place tensor elements ({clean(enc.describe(), 120)})")


def _shared_dims(enc: Encoding, shape: tuple[int, ...]) -> tuple[tuple[int, ...], str]:
    """The dims a shared layout is drawn over: a memdesc of a pipelined buffer
    (``3x128x64``) has more dims than the encoding's ``order``; each buffer is laid
    out alike, so one buffer is drawn."""
    order = getattr(enc, "order", None)
    if order and len(shape) > len(order):
        lead = "x".join(map(str, shape[: len(shape) - len(order)]))
        return shape[-len(order):], f"one buffer of {lead} (each is laid out alike)"
    return shape, ""
