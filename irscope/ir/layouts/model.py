"""Typed, immutable records of Triton layout encodings as printed in TTGIR.

One frozen dataclass per encoding attribute.  Each has ``kind`` (short name),
``raw`` (the text it was decoded from), ``describe()`` (one human line) and
``fields()`` (Triton's field names -> values, so two encodings can be diffed
field by field).  Distributed encodings also have ``to_linear(shape)`` and
``owners(shape)``; shared ones ``banks(shape, element_bits)``.  Those methods
live in :mod:`conversions` and :mod:`shared`; they are attached here lazily to
keep this module free of the algebra.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:  # pragma: no cover
    from .linear import LinearLayout
    from .owners import LayoutMap

__all__ = [
    "AmdMfmaEncoding",
    "AmdRotatingSharedEncoding",
    "AmdWmmaEncoding",
    "BlockedEncoding",
    "CgaLayout",
    "DistributedEncoding",
    "DotOperandEncoding",
    "Encoding",
    "LinearEncoding",
    "MemorySpace",
    "NvidiaMmaEncoding",
    "NvmmaSharedEncoding",
    "PaddedSharedEncoding",
    "SharedEncoding",
    "SharedLinearEncoding",
    "SliceEncoding",
    "SwizzledSharedEncoding",
    "TensorMemoryEncoding",
    "TensorMemoryScalesEncoding",
    "UnknownEncoding",
]

Ints = tuple[int, ...]
Bases = tuple[tuple[int, ...], ...]


def _fmt(value: object) -> str:
    """Print a field value the way TTGIR does: lists as ``[1, 2]``, bools lower-case."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, Encoding):
        return value.describe()
    return str(value)


class Encoding:
    """Common behaviour of every decoded encoding (no fields of its own)."""

    __slots__ = ()
    kind: ClassVar[str] = "encoding"
    raw: str

    def fields(self) -> dict[str, object]:  # pragma: no cover - overridden
        """Field name (as Triton prints it) -> value."""
        return {}

    def describe(self) -> str:
        """One human line: the kind then each printed field, e.g. ``blocked sizePerThread [1, 8] ...``."""
        parts = [self.kind]
        for name, value in self.fields().items():
            if value is None:
                continue
            if isinstance(value, Encoding):
                parts.append(f"{name} ({value.describe()})")
            else:
                parts.append(f"{name} {_fmt(value)}")
        return " ".join(parts)


class DistributedEncoding(Encoding):
    """An encoding that spreads a tensor over registers, lanes and warps."""

    __slots__ = ()

    def to_linear(self, shape: Sequence[int]) -> LinearLayout:
        """The linear layout (register/lane/warp/block -> index) for ``shape``, as Triton computes it."""
        from .conversions import to_linear

        return to_linear(self, shape)

    def owners(self, shape: Sequence[int], block: int = 0) -> LayoutMap:
        """Which (warp, lane, register) hold each element of a tensor of ``shape``.

        ``block`` picks the CTA for layouts split over a cluster (0 otherwise).
        """
        from .owners import layout_map

        return layout_map(self.to_linear(shape), shape, block)


class SharedEncoding(Encoding):
    """An encoding of a tensor stored in shared memory."""

    __slots__ = ()

    def banks(self, shape: Sequence[int], element_bits: int) -> dict[tuple[int, ...], int]:
        """Index -> shared-memory bank (0..31, 4-byte banks) after swizzling; see :mod:`shared`."""
        from .shared import banks

        return banks(self, shape, element_bits)

    def offsets(self, shape: Sequence[int], element_bits: int) -> dict[tuple[int, ...], int]:
        """Index -> element offset inside the allocation (after swizzling/padding)."""
        from .shared import offsets

        return offsets(self, shape, element_bits)


@dataclass(frozen=True, slots=True)
class CgaLayout:
    """How CTAs of a cluster split a tensor.

    Triton >= 3.5 prints ``CGALayout = [[...], ...]`` (block bases); older
    versions print ``CTAsPerCGA``/``CTASplitNum``/``CTAOrder``.  Either set
    of fields is filled, the other left ``None``.
    """

    bases: Bases | None = None
    ctas_per_cga: Ints | None = None
    cta_split_num: Ints | None = None
    cta_order: Ints | None = None

    def fields(self) -> dict[str, object]:
        if self.bases is not None:
            return {"CGALayout": self.bases}
        return {"CTAsPerCGA": self.ctas_per_cga, "CTASplitNum": self.cta_split_num, "CTAOrder": self.cta_order}

    @property
    def num_ctas(self) -> int:
        if self.bases is not None:
            return 1 << len(self.bases)
        n = 1
        for c in self.ctas_per_cga or ():
            n *= c
        return n


def _cga_fields(cga: CgaLayout | None) -> dict[str, object]:
    return cga.fields() if cga is not None else {}


@dataclass(frozen=True, slots=True)
class BlockedEncoding(DistributedEncoding):
    """``#ttg.blocked``: each thread holds a sizePerThread block, threads and warps tile it."""

    kind: ClassVar[str] = "blocked"
    raw: str
    size_per_thread: Ints
    threads_per_warp: Ints
    warps_per_cta: Ints
    order: Ints
    cga: CgaLayout | None = None

    def fields(self) -> dict[str, object]:
        return {
            "sizePerThread": self.size_per_thread,
            "threadsPerWarp": self.threads_per_warp,
            "warpsPerCTA": self.warps_per_cta,
            "order": self.order,
            **_cga_fields(self.cga),
        }


@dataclass(frozen=True, slots=True)
class SliceEncoding(DistributedEncoding):
    """``#ttg.slice``: the parent layout with dimension ``dim`` removed (broadcast along it)."""

    kind: ClassVar[str] = "slice"
    raw: str
    dim: int
    parent: Encoding

    def fields(self) -> dict[str, object]:
        return {"dim": self.dim, "parent": self.parent}


@dataclass(frozen=True, slots=True)
class DotOperandEncoding(DistributedEncoding):
    """``#ttg.dot_op``: operand A (opIdx 0) or B (1) of a dot whose result has ``parent`` layout."""

    kind: ClassVar[str] = "dot_op"
    raw: str
    op_idx: int
    parent: Encoding
    k_width: int | None = None

    def fields(self) -> dict[str, object]:
        return {"opIdx": self.op_idx, "parent": self.parent, "kWidth": self.k_width}


@dataclass(frozen=True, slots=True)
class NvidiaMmaEncoding(DistributedEncoding):
    """``#ttg.nvidia_mma``: tensor-core accumulator (v2 Ampere mma, v3 Hopper wgmma, v5 syntax only)."""

    kind: ClassVar[str] = "nvidia_mma"
    raw: str
    version_major: int
    version_minor: int
    warps_per_cta: Ints
    instr_shape: Ints
    cga: CgaLayout | None = None

    def fields(self) -> dict[str, object]:
        return {
            "versionMajor": self.version_major,
            "versionMinor": self.version_minor,
            "warpsPerCTA": self.warps_per_cta,
            "instrShape": self.instr_shape,
            **_cga_fields(self.cga),
        }


@dataclass(frozen=True, slots=True)
class AmdMfmaEncoding(DistributedEncoding):
    """``#ttg.amd_mfma``: CDNA matrix-core accumulator (64-lane wavefronts).

    ``version`` is the CDNA generation (3 = gfx942); older TTGIR spelled it
    ``versionMajor``/``versionMinor`` and gave ``MDim``/``NDim`` instead of
    ``instrShape``: those are normalised into ``version`` and ``instr_shape``.
    """

    kind: ClassVar[str] = "amd_mfma"
    raw: str
    version: int
    warps_per_cta: Ints
    instr_shape: Ints
    is_transposed: bool = False
    tiles_per_warp: Ints | None = None
    element_bit_width: int | None = None
    version_minor: int | None = None
    cga: CgaLayout | None = None

    def fields(self) -> dict[str, object]:
        return {
            "version": self.version,
            "versionMinor": self.version_minor,
            "warpsPerCTA": self.warps_per_cta,
            "instrShape": self.instr_shape,
            "isTransposed": self.is_transposed,
            "tilesPerWarp": self.tiles_per_warp,
            "elementBitWidth": self.element_bit_width,
            **_cga_fields(self.cga),
        }


@dataclass(frozen=True, slots=True)
class AmdWmmaEncoding(DistributedEncoding):
    """``#ttg.amd_wmma``: RDNA matrix-core accumulator (32-lane waves); instrShape defaults to 16x16x16."""

    kind: ClassVar[str] = "amd_wmma"
    raw: str
    version: int
    warps_per_cta: Ints
    is_transposed: bool = False
    instr_shape: Ints | None = None
    tiles_per_warp: Ints | None = None
    cga: CgaLayout | None = None

    def fields(self) -> dict[str, object]:
        return {
            "version": self.version,
            "isTranspose": self.is_transposed,
            "warpsPerCTA": self.warps_per_cta,
            "instrShape": self.instr_shape,
            "tilesPerWarp": self.tiles_per_warp,
            **_cga_fields(self.cga),
        }


@dataclass(frozen=True, slots=True)
class LinearEncoding(DistributedEncoding):
    """``#ttg.linear``: the linear layout written out as bases."""

    kind: ClassVar[str] = "linear"
    raw: str
    register: Bases
    lane: Bases
    warp: Bases
    block: Bases = ()

    @property
    def bases(self) -> dict[str, Bases]:
        return {"register": self.register, "lane": self.lane, "warp": self.warp, "block": self.block}

    def fields(self) -> dict[str, object]:
        return dict(self.bases)


@dataclass(frozen=True, slots=True)
class NvmmaSharedEncoding(SharedEncoding):
    """``#ttg.nvmma_shared``: the 128/64/32-byte swizzled layout wgmma/tcgen05/TMA read."""

    kind: ClassVar[str] = "nvmma_shared"
    raw: str
    swizzling_byte_width: int
    transposed: bool = False
    element_bit_width: int = 16
    fp4_padded: bool = False
    rank: int | None = None
    cga: CgaLayout | None = None

    def fields(self) -> dict[str, object]:
        return {
            "swizzlingByteWidth": self.swizzling_byte_width,
            "transposed": self.transposed,
            "elementBitWidth": self.element_bit_width,
            "fp4Padded": self.fp4_padded or None,
            "rank": self.rank,
            **_cga_fields(self.cga),
        }


@dataclass(frozen=True, slots=True)
class SwizzledSharedEncoding(SharedEncoding):
    """``#ttg.swizzled_shared`` (and the pre-3.3 ``#triton_gpu.shared``): XOR swizzle by vec/perPhase/maxPhase.

    ``has_leading_offset`` is only printed by old versions; ``true`` there meant
    the wgmma (nvmma) swizzle, which :mod:`shared` honours.
    """

    kind: ClassVar[str] = "swizzled_shared"
    raw: str
    vec: int
    per_phase: int
    max_phase: int
    order: Ints
    has_leading_offset: bool | None = None
    cga: CgaLayout | None = None

    def fields(self) -> dict[str, object]:
        return {
            "vec": self.vec,
            "perPhase": self.per_phase,
            "maxPhase": self.max_phase,
            "order": self.order,
            "hasLeadingOffset": self.has_leading_offset,
            **_cga_fields(self.cga),
        }


@dataclass(frozen=True, slots=True)
class AmdRotatingSharedEncoding(SharedEncoding):
    """``#ttg.amd_rotating_shared``: swizzle whose phase also rotates per block of rows."""

    kind: ClassVar[str] = "amd_rotating_shared"
    raw: str
    vec: int
    per_phase: int
    max_phase: int
    order: Ints
    cga: CgaLayout | None = None

    def fields(self) -> dict[str, object]:
        return {"vec": self.vec, "perPhase": self.per_phase, "maxPhase": self.max_phase, "order": self.order,
                **_cga_fields(self.cga)}


@dataclass(frozen=True, slots=True)
class PaddedSharedEncoding(SharedEncoding):
    """``#ttg.padded_shared<[interval:+pad, ...] {...}>``: padding after every interval elements.

    The element order is either ``order`` (+ ``shape``), or explicit
    ``offset`` bases (offset bit -> index), as the printer chose.
    """

    kind: ClassVar[str] = "padded_shared"
    raw: str
    intervals: Ints
    paddings: Ints
    order: Ints | None = None
    shape: Ints | None = None
    offset_bases: Bases | None = None
    block_bases: Bases | None = None

    def fields(self) -> dict[str, object]:
        return {
            "intervals": self.intervals,
            "paddings": self.paddings,
            "order": self.order,
            "shape": self.shape,
            "offset": self.offset_bases,
            "block": self.block_bases,
        }


@dataclass(frozen=True, slots=True)
class SharedLinearEncoding(SharedEncoding):
    """``#ttg.shared_linear``: shared layout given as offset bases."""

    kind: ClassVar[str] = "shared_linear"
    raw: str
    offset_bases: Bases
    block_bases: Bases = ()
    alignment: int | None = None

    def fields(self) -> dict[str, object]:
        return {"offset": self.offset_bases, "block": self.block_bases, "alignment": self.alignment}


@dataclass(frozen=True, slots=True)
class TensorMemoryEncoding(Encoding):
    """``#ttng.tensor_memory_encoding``: Blackwell TMEM accumulator tile (blockM x blockN)."""

    kind: ClassVar[str] = "tensor_memory"
    raw: str
    block_m: int
    block_n: int
    col_stride: int | None = None
    unpacked: bool | None = None
    cta_split_m: int | None = None
    cta_split_n: int | None = None
    two_ctas: bool | None = None

    def fields(self) -> dict[str, object]:
        return {
            "blockM": self.block_m,
            "blockN": self.block_n,
            "colStride": self.col_stride,
            "unpacked": self.unpacked,
            "CTASplitM": self.cta_split_m,
            "CTASplitN": self.cta_split_n,
            "twoCTAs": self.two_ctas,
        }


@dataclass(frozen=True, slots=True)
class TensorMemoryScalesEncoding(Encoding):
    """``#ttng.tensor_memory_scales_encoding``: TMEM layout of block-scaled MMA scale factors."""

    kind: ClassVar[str] = "tensor_memory_scales"
    raw: str
    cta_split_m: int | None = None
    cta_split_n: int | None = None

    def fields(self) -> dict[str, object]:
        return {"CTASplitM": self.cta_split_m, "CTASplitN": self.cta_split_n}


@dataclass(frozen=True, slots=True)
class MemorySpace(Encoding):
    """``#ttg.shared_memory`` / ``#ttng.tensor_memory``: a memory space, not a layout."""

    kind: ClassVar[str] = "memory_space"
    raw: str
    name: str

    def fields(self) -> dict[str, object]:
        return {"space": self.name}


@dataclass(frozen=True, slots=True)
class UnknownEncoding(Encoding):
    """Text that is not an encoding we understand; ``reason`` says why."""

    kind: ClassVar[str] = "unknown"
    raw: str
    reason: str

    def fields(self) -> dict[str, object]:
        return {"reason": self.reason}

    def describe(self) -> str:
        shown = self.raw if len(self.raw) <= 80 else self.raw[:77] + "..."
        return f"unknown encoding {shown!r}: {self.reason}"
