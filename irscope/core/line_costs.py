"""What each Python line costs, read from a capture's TTGIR, PTX and SASS with no GPU.

Per line (the kernel's lines and its ``@triton.jit`` helpers' lines, each op at the
line of its innermost user frame, library code charged to the user line that called it:
:meth:`irscope.core.Capture.user_functions`, the rule every view shares):

* **global memory accesses**: each load, store and atomic of global memory, from the
  PTX instruction that does it (``ld.global.v4.b32``, ``st.global.b16``,
  ``cp.async.cg.shared.global`` with its byte count, TMA ``cp.async.bulk.tensor``,
  ``atom``/``red``), tied to the TTGIR op it lowers (``tt.load``, ``tt.store``,
  ``ttg.async_copy_global_to_local``, ``tt.atomic_rmw``...) by their common source
  position (line and column). The TTGIR op gives the element type, the mask and the
  widest access its layout allows (:func:`max_elements`);
* **shared memory and tensor cores**: ``ld``/``st.shared``, ``ldmatrix``,
  ``stmatrix``, ``cp.async``, TMA, ``mma``, ``wgmma``, ``tcgen05.mma`` (PTX);
* **spills**: SASS ``LDL``/``STL``; those no line owns are the kernel's
  :attr:`LineCostTable.unattributed_spills`, so the lines' spills plus that equal
  the SASS's total (:attr:`LineCostTable.total_spills`);
* **barriers** (PTX) and the SASS instructions by class
  (:mod:`irscope.ir.instr_classes`).

Pure functions over the parsed stages; nothing here needs Triton or a GPU.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from irscope.compiler.stages import PTX, SASS, TTGIR
from irscope.ir import Op
from irscope.ir.instr_classes import (ASYNC_COPY, ATOMIC, BARRIER, GLOBAL_LOAD, GLOBAL_STORE, MMA,
                                      SHARED_LOAD, SHARED_STORE, classify)
from irscope.ir.layouts import DistributedEncoding, LayoutError, to_linear
from irscope.ir.layouts.model import BlockedEncoding
from irscope.ir.types import PointerType, ScalarType, TensorType, Type

if TYPE_CHECKING:
    from irscope.core.capture import Capture

LOAD, STORE = "load", "store"
""":attr:`GlobalAccess.kind`: an atomic is a store (it writes global memory) with
:attr:`GlobalAccess.atomic` set."""

MAX_ACCESS_BITS = 128
"""The widest global access one thread issues (``ld.global.v4.b32``, ``LDG.E.128``)."""

# How the access reaches memory (GlobalAccess.path).
PATH_LD, PATH_ST, PATH_CP_ASYNC, PATH_TMA, PATH_ATOMIC = "ld", "st", "cp.async", "tma", "atomic"

# TTGIR ops that access global memory, by kind.
_TT_LOADS = frozenset({"tt.load", "tt.descriptor_load", "tt.descriptor_gather", "ttg.async_copy_global_to_local",
                       "ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather",
                       "amdgpu.buffer_load", "amdgpu.buffer_load_to_local"})
_TT_STORES = frozenset({"tt.store", "tt.descriptor_store", "tt.descriptor_scatter",
                        "ttng.async_tma_copy_local_to_global", "ttng.async_tma_scatter", "amdgpu.buffer_store"})
_TT_ATOMICS = frozenset({"tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_reduce", "ttng.async_tma_reduce",
                         "amdgpu.buffer_atomic_rmw", "amdgpu.buffer_atomic_cas"})
# TMA and descriptor ops: the hardware clips the box at the tensor's bounds (no mask).
_TT_DESCRIPTOR = frozenset({"tt.descriptor_load", "tt.descriptor_gather", "tt.descriptor_store",
                            "tt.descriptor_scatter", "tt.descriptor_reduce", "ttng.async_tma_copy_global_to_local",
                            "ttng.async_tma_gather", "ttng.async_tma_copy_local_to_global", "ttng.async_tma_scatter",
                            "ttng.async_tma_reduce"})

SHARED_KINDS = ("ld.shared", "st.shared", "ldmatrix", "stmatrix", "cp.async", "tma", "mma", "wgmma", "tcgen05.mma")
"""The keys of :attr:`LineCosts.shared_tensor`, in the order views print them."""

_VEC_RE = re.compile(r"v(\d+)")
_TYPE_RE = re.compile(r"(?:bf|b|u|s|f)(\d+)(?:x(\d+))?")


# -- PTX instructions -------------------------------------------------------------

def ptx_access_bits(opcode: str) -> int | None:
    """Bits one PTX load, store or atomic moves per thread, from its vector and type
    qualifiers: ``ld.global.v4.b32`` 128, ``st.global.b16`` 16, ``atom.global.add.f16x2``
    32; None when the opcode names no type."""
    vec, bits = 1, None
    for q in opcode.split(".")[1:]:
        m = _VEC_RE.fullmatch(q)
        if m:
            vec = int(m.group(1))
            continue
        m = _TYPE_RE.fullmatch(q)
        if m:
            bits = int(m.group(1)) * int(m.group(2) or 1)
    return None if bits is None else vec * bits


def _cp_async_bits(op: Op) -> int | None:
    """Bits of one ``cp.async.ca/cg`` (its third operand is the byte count)."""
    ops = op.operands
    if len(ops) < 3:
        return None
    try:
        return int(ops[2].strip(), 0) * 8
    except ValueError:
        return None


def ptx_global_access(op: Op) -> tuple[str, str, bool] | None:
    """(kind, path, atomic) of a PTX instruction that reads or writes global memory;
    None for any other (shared, local, parameter accesses; prefetches)."""
    opcode = op.name
    cls = classify(opcode, PTX)
    quals = opcode.split(".")
    spaces = [q.split("::", 1)[0] for q in quals[1:]]
    if cls == GLOBAL_LOAD:
        return LOAD, PATH_LD, False
    if cls == GLOBAL_STORE:
        return STORE, PATH_ST, False
    if cls == ATOMIC:
        if "shared" in spaces:
            return None  # a shared-memory atomic
        return STORE, PATH_ATOMIC, True
    if cls == ASYNC_COPY and quals[0] in ("cp", "cp_async") and "global" in spaces and "prefetch" not in quals:
        shared = spaces.index("shared") if "shared" in spaces else len(spaces)
        load = shared < spaces.index("global")  # the destination's space comes first
        tma = "bulk" in quals
        path = PATH_TMA if tma else PATH_CP_ASYNC
        if quals[0] == "cp" and len(quals) > 1 and quals[1] == "reduce":
            return STORE, path, True
        return (LOAD if load else STORE), path, False
    return None


def shared_kind(op: Op) -> str | None:
    """The :data:`SHARED_KINDS` key of a PTX shared-memory or tensor-core
    instruction; None for any other."""
    opcode = op.name
    base = opcode.split(".", 1)[0]
    cls = classify(opcode, PTX)
    if base == "ldmatrix":
        return "ldmatrix"
    if base == "stmatrix":
        return "stmatrix"
    if cls == SHARED_LOAD:
        return "ld.shared"
    if cls == SHARED_STORE:
        return "st.shared"
    if cls == ASYNC_COPY:
        if base == "tcgen05":
            return None  # shared memory -> tensor memory: neither kind
        return "tma" if ".bulk" in opcode else "cp.async"
    if cls == MMA:
        if base == "wgmma":
            return "wgmma"
        if base == "tcgen05":
            return "tcgen05.mma"
        return "mma"
    return None


# -- the TTGIR side ----------------------------------------------------------------

def tt_access_kind(op: Op) -> tuple[str, bool] | None:
    """(kind, atomic) of a TTGIR op that accesses global memory; None for others."""
    if op.name in _TT_LOADS:
        return LOAD, False
    if op.name in _TT_STORES:
        return STORE, False
    if op.name in _TT_ATOMICS:
        return STORE, True
    return None


def _element_bits(t: Type | None) -> int | None:
    if isinstance(t, ScalarType) and t.bits:
        return max(t.bits, 8)  # an i1 is stored as a byte
    if isinstance(t, PointerType):
        return 64
    return None


def _pointer_tensor(op: Op, aliases) -> tuple[TensorType | None, Type | None]:
    """The op's pointer tensor (the first tensor of pointers among its operand types)
    and the element type it accesses; for descriptor ops, the data tensor's."""
    try:
        sig = op.signature(aliases)
    except (ValueError, IndexError):
        return None, None
    for t in (*sig.operands, *sig.results):
        if isinstance(t, TensorType) and isinstance(t.element, PointerType):
            return t, t.element.pointee
        if isinstance(t, PointerType) and isinstance(t.pointee, TensorType):
            return t.pointee, t.pointee.element  # a block pointer: its tensor holds the layout
        if isinstance(t, PointerType) and t.pointee is not None:
            return None, t.pointee  # a scalar pointer: one element per access
    for t in (*sig.results, *sig.operands):
        if isinstance(t, TensorType):
            return None, t.element
    return None, None


def max_elements(tensor: TensorType, element_bits: int, aliases) -> int | None:
    """The widest access (in elements) the layout of pointer ``tensor`` allows one
    thread: the registers it holds in a row along the contiguous dimension (a blocked
    layout's ``sizePerThread[order[0]]``, capped by the tensor's size there), capped at
    :data:`MAX_ACCESS_BITS`. None when the layout is not one irscope decodes."""
    cap = max(MAX_ACCESS_BITS // element_bits, 1)
    enc = tensor.encoding(aliases)
    if not isinstance(enc, DistributedEncoding) or None in tensor.shape:
        return None
    shape = [int(n) for n in tensor.shape if n is not None]
    try:
        bases = to_linear(enc, shape).bases("register")
    except (LayoutError, ValueError, KeyError):
        if isinstance(enc, BlockedEncoding) and enc.order:
            d = enc.order[0]
            return max(1, min(enc.size_per_thread[d], shape[d], cap))
        return None
    run = 1
    if bases:
        first = bases[0]
        dims = [i for i, v in enumerate(first) if v]
        if len(dims) == 1 and first[dims[0]] == 1:
            d = dims[0]
            for i, b in enumerate(bases):
                if b[d] != 1 << i or any(v for j, v in enumerate(b) if j != d):
                    break
                run = 1 << (i + 1)
    return min(run, cap)


def tt_masked(op: Op) -> bool:
    """Whether a TTGIR access op takes a mask (or a block pointer's boundary check)."""
    n = len(op.operands)
    if op.name in _TT_DESCRIPTOR:
        return False
    if "boundaryCheck" in op.attributes and "array<i32>" not in op.attributes:
        return True
    if op.name in ("tt.load", "amdgpu.buffer_load"):
        return n >= 2
    if op.name == "ttg.async_copy_global_to_local":
        return n >= 3 or " mask " in op.text
    if op.name in ("tt.store", "tt.atomic_rmw", "amdgpu.buffer_store"):
        return n >= 3
    return False


# -- results -----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class GlobalAccess:
    """The PTX instructions of one global-memory access op that share one width."""

    kind: str
    """``load`` or ``store`` (an atomic is a store: see :attr:`atomic`)."""
    bits: int | None
    """Bits per access instruction, per thread (``ld.global.v4.b32``: 128); for TMA,
    None (one instruction moves a whole box)."""
    elements: int | None
    """Elements per access instruction (``bits`` over the element's bits); None when
    the element type is not known."""
    max_elements: int | None
    """The widest access that element type and the pointer tensor's layout allow
    (:func:`max_elements`); None when unknown (a layout irscope does not decode)."""
    masked: bool
    """The op takes a mask (TTGIR); without a TTGIR op, whether the PTX is predicated."""
    instructions: int
    """PTX instructions of this op with this width."""
    path: str
    """``ld``, ``st``, ``cp.async`` (asynchronous copy to shared memory), ``tma`` or
    ``atomic``."""
    atomic: bool = False
    opcode: str = ""
    """The PTX opcode (the first one, when several spell the same width)."""
    op: str | None = None
    """The TTGIR op it lowers (``tt.load``), None when none matched."""
    ttgir_line: int | None = None
    """The TTGIR op's line in ``irscope cat --stage ttgir``."""
    element_type: str | None = None
    """The element type (``f16``)."""
    predicated: bool = False
    """Whether any of the PTX instructions carries a guard predicate."""
    column: int = 0
    """The source column of the access (its position on the line)."""
    source_line: int | None = None
    """The Python line of the access itself (a line of the statement: the statement's
    first line unless the call starts on a later one)."""

    @property
    def max_bits(self) -> int | None:
        """``max_elements`` in bits."""
        if self.max_elements is None or self.bits is None or not self.elements:
            return None
        return self.max_elements * (self.bits // self.elements)

    @property
    def narrow(self) -> bool:
        """True when the access is narrower than its layout allows."""
        return self.elements is not None and self.max_elements is not None and self.elements < self.max_elements

    def to_json(self) -> dict:
        return {"kind": self.kind, "bits": self.bits, "elements": self.elements, "max_elements": self.max_elements,
                "masked": self.masked, "instructions": self.instructions, "path": self.path, "atomic": self.atomic,
                "opcode": self.opcode, "op": self.op, "ttgir_line": self.ttgir_line,
                "element_type": self.element_type, "predicated": self.predicated, "column": self.column,
                "source_line": self.source_line}


@dataclass(frozen=True, slots=True)
class LineCosts:
    """The static costs of one Python statement (keyed by its first line)."""

    line: int
    file: str | None
    function: str
    """The kernel's or the helper's name."""
    ops: dict[str, int]
    """Stage -> ops charged to the line."""
    global_accesses: tuple[GlobalAccess, ...] = ()
    shared_tensor: dict[str, int] = field(default_factory=dict)
    """:data:`SHARED_KINDS` key -> PTX instructions (only those the line has)."""
    spill_loads: int = 0
    """SASS ``LDL``."""
    spill_stores: int = 0
    """SASS ``STL``."""
    barriers: int = 0
    """PTX barrier-class instructions (``bar.sync``, ``mbarrier``, fences, group waits)."""
    sass_by_class: dict[str, int] = field(default_factory=dict)
    """SASS instruction class -> count (only the classes the line has)."""
    sass_global: dict[str, int] = field(default_factory=dict)
    """SASS global-memory opcodes (``LDG.E.128``, ``LDGSTS.E.BYPASS.128``) -> count."""
    statement_lines: tuple[int, ...] = ()
    """Every line of the statement (``line`` is its first); empty when unknown."""

    @property
    def spills(self) -> int:
        """SASS ``LDL`` + ``STL`` charged to the line."""
        return self.spill_loads + self.spill_stores

    def to_json(self) -> dict:
        return {"line": self.line, "file": self.file, "function": self.function, "ops": dict(self.ops),
                "global_accesses": [a.to_json() for a in self.global_accesses],
                "shared_tensor": dict(self.shared_tensor), "spills": self.spills,
                "spill_loads": self.spill_loads, "spill_stores": self.spill_stores, "barriers": self.barriers,
                "sass_by_class": dict(self.sass_by_class), "sass_global": dict(self.sass_global),
                "statement_lines": list(self.statement_lines or (self.line,))}


@dataclass(frozen=True, slots=True)
class LineCostTable:
    """The per-line costs of one capture, and the spills no line owns."""

    lines: tuple[LineCosts, ...]
    """Every user line with at least one op, the kernel's first, in line order, then
    each helper's."""
    unattributed_spills: int
    """SASS ``LDL``/``STL`` with no user line (no debug location, or only library frames)."""
    total_spills: int
    """Every ``LDL``/``STL`` of the SASS: the lines' spills plus :attr:`unattributed_spills`."""
    has_ptx: bool
    has_sass: bool

    def line(self, line: int, file: str | None = None) -> LineCosts | None:
        """The costs of the statement starting at ``line`` (of ``file``, when given)."""
        from irscope.ir.python_lines import same_file

        for lc in self.lines:
            if lc.line == line and (file is None or same_file(lc.file or "", file)):
                return lc
        return None


# -- building ----------------------------------------------------------------------

def _frame_key(op: Op) -> tuple[int, int] | None:
    fr = op.location.user_frame()
    return None if fr is None else (fr.line, fr.col)


def _tt_index(ops: list[Op]) -> list[tuple[Op, str, bool, tuple[int, int] | None]]:
    out = []
    for op in ops:
        got = tt_access_kind(op)
        if got is not None:
            out.append((op, got[0], got[1], _frame_key(op)))
    return out


def _match(kind: str, atomic: bool, key: tuple[int, int] | None,
           tt: list[tuple[Op, str, bool, tuple[int, int] | None]]) -> Op | None:
    """The TTGIR access op a PTX access lowers: the one of its kind at its source
    position; else the only one of its kind on the line."""
    same_kind = [t for t in tt if t[1] == kind and t[2] == atomic]
    at = [t for t in same_kind if key is not None and t[3] == key]
    if at:
        return at[0][0]
    if len(same_kind) == 1:
        return same_kind[0][0]
    return None


def global_accesses(ptx_ops: list[Op], ttgir_ops: list[Op], aliases) -> tuple[GlobalAccess, ...]:
    """The global accesses of one line: its PTX access instructions grouped by the
    TTGIR op they lower and their width."""
    tt = _tt_index(ttgir_ops)
    groups: dict[tuple, list[Op]] = {}
    facts: dict[tuple, tuple[str, str, bool, Op | None, int | None]] = {}
    for ins in ptx_ops:
        got = ptx_global_access(ins)
        if got is None:
            continue
        kind, path, atomic = got
        if path == PATH_CP_ASYNC:
            bits = _cp_async_bits(ins)
        elif path == PATH_TMA:
            bits = None
        else:
            bits = ptx_access_bits(ins.name)
        key = _frame_key(ins)
        owner = _match(kind, atomic, key, tt)
        gkey = (kind, path, atomic, bits, id(owner) if owner is not None else key)
        groups.setdefault(gkey, []).append(ins)
        facts.setdefault(gkey, (kind, path, atomic, owner, bits))
    out = []
    for gkey, instrs in groups.items():
        kind, path, atomic, owner, bits = facts[gkey]
        elem_bits = elements = most = None
        element_type = None
        predicated = any(getattr(i, "predicate", "") for i in instrs)
        masked = predicated
        if owner is not None:
            tensor, element = _pointer_tensor(owner, aliases)
            elem_bits = _element_bits(element)
            element_type = str(element) if element is not None else None
            masked = tt_masked(owner)
            if elem_bits and path != PATH_TMA:  # a TMA copy moves a box: no per-thread width
                most = max_elements(tensor, elem_bits, aliases) if tensor is not None else 1
                if bits is not None and bits % elem_bits == 0:
                    elements = bits // elem_bits
        key = _frame_key(instrs[0])
        out.append(GlobalAccess(
            kind=kind, bits=bits, elements=elements, max_elements=most, masked=masked, instructions=len(instrs),
            path=path, atomic=atomic, opcode=instrs[0].name, op=owner.name if owner is not None else None,
            ttgir_line=owner.line if owner is not None else None, element_type=element_type,
            predicated=predicated, column=key[1] if key else 0, source_line=key[0] if key else None))
    out.sort(key=lambda a: (a.ttgir_line or 0, a.column, a.kind, a.bits or 0))
    return tuple(out)


def _shared(ptx_ops: list[Op]) -> dict[str, int]:
    counts: Counter = Counter()
    for ins in ptx_ops:
        k = shared_kind(ins)
        if k is not None:
            counts[k] += 1
    return {k: counts[k] for k in SHARED_KINDS if counts[k]}


def sass_spills(ops: list[Op]) -> tuple[int, int]:
    """(``LDL``, ``STL``) counts of SASS ``ops``."""
    loads = stores = 0
    for op in ops:
        base = op.name.split(".", 1)[0]
        if base == "LDL":
            loads += 1
        elif base == "STL":
            stores += 1
    return loads, stores


def _sass_counts(ops: list[Op]) -> tuple[dict[str, int], dict[str, int]]:
    by_class: Counter = Counter()
    glob: Counter = Counter()
    for op in ops:
        if not op.name or op.name == "<unknown>":
            continue
        cls = classify(op.name, SASS)
        by_class[cls] += 1
        if cls in (GLOBAL_LOAD, GLOBAL_STORE) or (cls == ATOMIC and not op.name.startswith("ATOMS")) or \
                (cls == ASYNC_COPY and op.name.split(".", 1)[0] in ("LDGSTS", "UTMALDG", "UTMASTG", "UTMAREDG",
                                                                     "UBLKCP", "UBLKRED")):
            glob[op.name] += 1
    return dict(sorted(by_class.items(), key=lambda kv: -kv[1])), dict(glob.most_common())


def line_costs(cap: "Capture") -> LineCostTable:
    """The per-line costs of ``cap`` (computed once per capture)."""
    return cap._memo("line_costs", lambda: _build(cap))


def _stage_ops(cap: "Capture", name: str) -> list[Op] | None:
    if name not in cap.stages:
        return None
    st = cap.stage(name)
    if st.binary:
        return None
    return list(st.module.ops())


def _build(cap: "Capture") -> LineCostTable:
    from irscope.core.user_functions import function_line_ops

    has_ptx = PTX in cap.stages
    sass_ops = _stage_ops(cap, SASS)
    aliases = cap.stage(TTGIR).module.encodings if TTGIR in cap.stages else None
    lines = []
    attributed = 0
    for fn in cap.user_functions().functions:
        spans: dict[int, list[int]] = {}
        for fl in fn.lines:
            spans.setdefault(fl.statement, []).append(fl.line)
        for fl in fn.lines:
            if fl.statement != fl.line or not any(fl.counts.values()):
                continue
            ops = function_line_ops(cap, fn, fl.line)
            ptx = ops.get(PTX, [])
            sass = ops.get(SASS, [])
            loads, stores = sass_spills(sass)
            attributed += loads + stores
            by_class, glob = _sass_counts(sass)
            lines.append(LineCosts(
                line=fl.line, file=fn.file, function=fn.name, ops={s: n for s, n in fl.counts.items() if n},
                global_accesses=global_accesses(ptx, ops.get(TTGIR, []), aliases), shared_tensor=_shared(ptx),
                spill_loads=loads, spill_stores=stores,
                barriers=sum(1 for i in ptx if classify(i.name, PTX) == BARRIER),
                sass_by_class=by_class, sass_global=glob, statement_lines=tuple(spans.get(fl.line, ()))))
    total = sum(sass_spills(sass_ops)) if sass_ops is not None else 0
    return LineCostTable(tuple(lines), total - attributed, total, has_ptx, sass_ops is not None)


__all__ = ["GlobalAccess", "LineCostTable", "LineCosts", "LOAD", "STORE", "MAX_ACCESS_BITS", "SHARED_KINDS",
           "global_accesses", "line_costs", "max_elements", "ptx_access_bits", "ptx_global_access", "sass_spills",
           "shared_kind", "tt_access_kind", "tt_masked", "LOCAL"]
