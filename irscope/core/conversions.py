"""Every ``ttg.convert_layout`` of a capture's final TTGIR, and what it costs.

    for c in irscope.open("k.irscope").capture("kernel").conversions():
        print(c.ttgir_line, c.python_line, c.via, c.scratch_bytes, c.bank_conflicts)

``via`` says how the data moves: ``registers`` (each thread keeps its elements),
``warp_shuffle`` (within each warp) or ``shared_memory`` (a scratch buffer). It is
computed from the two sides' linear layouts by Triton's own rule
(:mod:`irscope.ir.layouts.convert_layout`); the scratch size and the bank conflicts of
its store and load come from Triton's swizzling choice
(:mod:`irscope.ir.layouts.conversion_scratch`). ``triton_allocated`` is Triton's own
answer where the capture holds it: whether its shared-memory allocation pass gave the
op a scratch buffer (an ``allocation.offset`` attribute). docs/layouts.md describes
the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscope.compiler.stages import TTGIR
from irscope.core.target import Target
from irscope.errors import IrscopeError
from irscope.ir.layouts import DistributedEncoding, LayoutError, LinearLayout
from irscope.ir.layouts.conversion_scratch import scratch_of
from irscope.ir.layouts.convert_layout import (REGISTERS, SHARED_MEMORY, VIAS, WARP_SHUFFLE, conversion_via,
                                               from_linear, moved_dims)
from irscope.ir.model import Module, Op
from irscope.ir.result_types import op_result_types
from irscope.ir.types import PointerType, ScalarType, TensorType

if TYPE_CHECKING:
    from irscope.core.capture import Capture

__all__ = ["CONVERT_LAYOUT", "Conversion", "REGISTERS", "SHARED_MEMORY", "VIAS", "WARP_SHUFFLE",
           "allocation_snapshot", "conversions_of", "triton_allocations"]

CONVERT_LAYOUT = "ttg.convert_layout"
_CONVERT_OPS = frozenset({CONVERT_LAYOUT, "triton_gpu.convert_layout"})  # older Tritons name the dialect triton_gpu
_ALLOCATION_PASS = re.compile(r"Allocate\w*SharedMemory")


@dataclass(frozen=True)
class Conversion:
    """One ``ttg.convert_layout`` of the final TTGIR and how its data moves."""

    ttgir_line: int
    """The op's line in the TTGIR text (``irscope cat --stage ttgir``)."""
    python_line: int | None
    """The Python line it belongs to (its innermost user frame); None when it has none."""
    source: str
    """The source layout, every alias spelled out (``#ttg.blocked<{...}>``)."""
    destination: str
    """The destination layout, aliases resolved."""
    via: str
    """``registers``, ``warp_shuffle`` or ``shared_memory``."""
    scratch_bytes: int
    """Bytes of the shared-memory scratch buffer Triton allocates (0 unless
    ``via == "shared_memory"``)."""
    bank_conflicts: int | None
    """Through shared memory: the n-way bank conflicts of its worse access (1: none);
    None otherwise."""
    type: str = ""
    """The result type as printed (``tensor<128x64xf16, #blocked>``)."""
    store_conflicts: int | None = None
    """n-way bank conflicts of one store of the source into the scratch buffer."""
    load_conflicts: int | None = None
    """n-way bank conflicts of one load of the destination from it."""
    instructions: tuple[str, str] | None = None
    """The store and load instructions Triton's lowering picks (``st.shared``,
    ``stmatrix``, ``ld.shared``, ``ldmatrix``, ``ldmatrix.trans``)."""
    triton_allocated: bool | None = None
    """Triton's own answer: whether its allocation pass gave the op scratch memory
    (``allocation.offset``); None when the capture has no snapshot after that pass."""
    note: str | None = None
    """Why ``via`` is not computed from the layouts (a layout irscope does not decode),
    and where it came from instead."""

    def to_json(self) -> dict:
        """The ``conversions`` object of ``irscope explain --json``."""
        return {"ttgir_line": self.ttgir_line, "python_line": self.python_line, "source": self.source,
                "destination": self.destination, "via": self.via, "scratch_bytes": self.scratch_bytes,
                "bank_conflicts": self.bank_conflicts, "type": self.type,
                "store_conflicts": self.store_conflicts, "load_conflicts": self.load_conflicts,
                "instructions": list(self.instructions) if self.instructions else None,
                "triton_allocated": self.triton_allocated, "note": self.note}


def _element_bits(t: TensorType) -> int | None:
    e = t.element
    if isinstance(e, PointerType):
        return 64
    if isinstance(e, ScalarType) and e.bits:
        return max(8, e.bits)  # Triton's getBitwidth: i1 is stored as a byte
    return None


_ALIAS = re.compile(r"#[A-Za-z_][\w$.-]*")


def _spelled_out(text: str, aliases: dict[str, str]) -> str:
    """``text`` with every alias it names replaced by its definition (a dot operand's
    ``parent = #mma`` included), so the layout reads alone."""
    for _ in range(4):  # parents nest a few levels at most
        new = _ALIAS.sub(lambda m: aliases.get(m.group(0), m.group(0)), text)
        if new == text:
            break
        text = new
    return text


def allocation_snapshot(cap: "Capture") -> Module | None:
    """The IR right after Triton's shared-memory allocation pass (``AllocateSharedMemoryNv``,
    ``AllocateAMDGPUSharedMemory``...): the snapshot of the pass that follows it (Triton's
    MLIR snapshots are taken before their pass). None when the capture has none."""
    rows = cap.pass_rows()
    for i, row in enumerate(rows):
        if _ALLOCATION_PASS.search(row.name or "") and i + 1 < len(rows):
            # One snapshot parsed, without the pass timeline's diffs (cap.passes()
            # computes what every pass changed: ten times the cost).
            return cap._pass_module(i + 1)
    return None


def _sides(op: Op, module: Module) -> tuple[TensorType, TensorType] | None:
    aliases = module.encodings
    operands = op.signature(aliases).operands
    results = op_result_types(op, aliases)
    if not operands or not results:
        return None
    src, dst = operands[0], results[0]
    if not isinstance(src, TensorType) or not isinstance(dst, TensorType):
        return None
    return src, dst


def _type_key(op: Op, module: Module) -> tuple[str, str, tuple] | None:
    got = _sides(op, module)
    if got is None:
        return None
    src, dst = got
    aliases = module.encodings
    # Spelled out: the two modules may name a dot operand's parent by other aliases.
    return (_spelled_out(src.encoding_text(aliases) or "", aliases),
            _spelled_out(dst.encoding_text(aliases) or "", aliases), tuple(dst.shape))


def triton_allocations(cap: "Capture") -> dict[int, bool]:
    """Final-TTGIR line of each ``convert_layout`` -> whether Triton's allocation pass
    gave it scratch memory. Conversions pair with those of the snapshot after the
    allocation pass in order, by their layouts and shape; one that no snapshot op
    matches (a later pass rewrote it) is left out."""
    snap = allocation_snapshot(cap)
    if snap is None or TTGIR not in cap.stages:
        return {}
    final = cap.stage(TTGIR).module
    theirs = [(o, _type_key(o, snap)) for o in snap.ops() if o.name in _CONVERT_OPS]
    out: dict[int, bool] = {}
    j = 0
    for op in final.ops():
        if op.name not in _CONVERT_OPS:
            continue
        key = _type_key(op, final)
        k = next((i for i in range(j, len(theirs)) if theirs[i][1] == key), None)
        if key is None or k is None:
            continue
        out[op.line] = "allocation.offset" in theirs[k][0].attributes
        j = k + 1
    return out


def _nvidia_capability(target: str) -> int | None:
    try:
        t = Target.parse(target)
    except IrscopeError:
        return None
    return t.arch if t.vendor == "nvidia" and isinstance(t.arch, int) else None


def _decoded(src: TensorType, dst: TensorType, aliases: dict[str, str]) \
        -> tuple[LinearLayout, LinearLayout, int] | str:
    """Both sides' linear layouts and the element width, or why they cannot be had."""
    s_enc, d_enc = src.encoding(aliases), dst.encoding(aliases)
    bits = _element_bits(src)
    if not isinstance(s_enc, DistributedEncoding) or not isinstance(d_enc, DistributedEncoding) \
            or None in src.shape or None in dst.shape or bits is None:
        return "layouts not decoded (not two distributed layouts of a static shape)"
    try:
        return (s_enc.to_linear([n or 0 for n in src.shape]), d_enc.to_linear([n or 0 for n in dst.shape]), bits)
    except LayoutError as exc:
        return f"layouts not decoded ({exc})"


def _conversion(cap: "Capture", op: Op, module: Module, triton: dict[int, bool], cc: int | None) -> Conversion:
    aliases = module.encodings
    recorded = triton.get(op.line)
    got = _sides(op, module)
    if got is None:
        why: str = "the op's types are not two tensors"
        src_text = dst_text = type_text = ""
    else:
        src, dst = got
        src_text = _spelled_out(src.encoding_text(aliases) or "", aliases)
        dst_text = _spelled_out(dst.encoding_text(aliases) or "", aliases)
        type_text = str(dst)
        decoded = _decoded(src, dst, aliases)
        if not isinstance(decoded, str):
            s_ll, d_ll, bits = decoded
            via = conversion_via(s_ll, d_ll)
            note = None
            if recorded is not None and recorded != (via == SHARED_MEMORY):
                # Older Tritons decide by other rules (3.2 allocates scratch for some
                # conversions 3.6 does in registers): Triton's recorded choice wins.
                rule = via
                if recorded:
                    via = SHARED_MEMORY
                else:
                    via = REGISTERS if set(moved_dims(s_ll, d_ll)) <= {"register"} else WARP_SHUFFLE
                note = (f"Triton {cap.triton_version}'s allocation pass "
                        f"{'gave it' if recorded else 'gave it no'} scratch memory; the rule irscope "
                        f"computes (Triton 3.6's) says {rule}")
            if via != SHARED_MEMORY:
                return Conversion(op.line, cap.line_of(op), src_text, dst_text, via, 0, None, type_text,
                                  triton_allocated=recorded, note=note)
            sc = scratch_of(from_linear(s_ll), from_linear(d_ll), bits, cc)
            return Conversion(op.line, cap.line_of(op), src_text, dst_text, via, sc.bytes, sc.bank_conflicts,
                              type_text, sc.store_ways, sc.load_ways, sc.instructions,
                              triton_allocated=recorded, note=note)
        why = decoded
    if recorded is not None:
        via = SHARED_MEMORY if recorded else REGISTERS
        note = (f"{why}; via from Triton's allocation pass" if recorded else
                f"{why}; Triton's allocation pass gave it no scratch memory (registers or warp shuffles)")
    else:
        via = SHARED_MEMORY
        note = f"{why}; assumed shared memory (no allocation snapshot to read Triton's choice from)"
    return Conversion(op.line, cap.line_of(op), src_text, dst_text, via, 0, None, type_text,
                      triton_allocated=recorded, note=note)


def conversions_of(cap: "Capture") -> tuple[Conversion, ...]:
    """Every ``ttg.convert_layout`` of ``cap``'s final TTGIR, in text order (empty when
    the capture has no TTGIR)."""
    if TTGIR not in cap.stages:
        return ()
    module = cap.stage(TTGIR).module
    ops = [op for op in module.ops() if op.name in _CONVERT_OPS]
    if not ops:
        return ()
    triton = triton_allocations(cap)
    cc = _nvidia_capability(cap.target)
    return tuple(_conversion(cap, op, module, triton, cc) for op in ops)
