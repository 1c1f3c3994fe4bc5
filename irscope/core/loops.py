"""The kernel's loops as Triton's software pipeliner left them, and the arithmetic
intensity of the main loop.

**Loops** (:func:`loops_of`): every ``scf.for`` of the final TTGIR whose own body (not a
nested loop's) loads from global memory. A loop is *pipelined* when the pipeliner
peeled iterations of its loads ahead of it: the final TTGIR holds, before the loop,
copies of its loads (same op, same Python line). ``stages`` is the pipeline depth: the
schedule's ``tt.scheduled_max_stage + 1`` from the TTGIR the pipeliner pass read (the
pass snapshot before ``TritonGPUPipeline``; Triton 3.3+ schedules first and writes it
there), else the number of prologue copies of a load plus one; 1 for a loop left alone.
The number of shared-memory buffers is not the stage count (sm_80 at num_stages=3 keeps
2 buffers: the dot reads its operands one stage after they land), so it is reported
apart (``buffers``). ``async_loads`` counts the loop's loads that became asynchronous
copies (``cp.async``) or TMA copies. The schedule lists the ops the pipeliner put before
the loop (prologue), the ops of each pipeline stage (steady state, from the schedule)
and the ops it put after the loop (epilogue: the drained waits, peeled iterations).

**Intensity** (:func:`intensity_of`): the main loop is the loop (as above) whose dots do
the most FLOPs per iteration (2*M*N*K per dot tile, from the operand types); a kernel
with no such loop has no main-loop intensity. Its global
bytes per iteration are the tiles its loads read (element size times tile elements;
masked loads count whole tiles). FLOPs over bytes, set beside the target's ridge point
(:mod:`irscope.core.peaks`), gives "compute-bound tile" or "memory-bound tile". It is a
per-tile figure: reuse of the same data by other blocks through L2 is not modelled.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from irscope.compiler.dialects import current_op_name
from irscope.compiler.stages import TTGIR
from irscope.ir import Module, Op
from irscope.ir.model import Function
from irscope.ir.types import MemDescType, PointerType, ScalarType, TensorType, Type

if TYPE_CHECKING:
    from irscope.core.capture import Capture

LOOP_OP = "scf.for"
# (AMD's dialect prints as ``amdg.`` in Triton 3.6, ``amdgpu.`` in 3.3 to 3.5.)
ASYNC_COPY_OPS = frozenset({"ttg.async_copy_global_to_local", "amdgpu.buffer_load_to_local",
                            "amdg.buffer_load_to_local"})
TMA_OPS = frozenset({"ttng.async_tma_copy_global_to_local", "ttng.async_tma_gather"})
LOAD_OPS = frozenset({"tt.load", "tt.descriptor_load", "tt.experimental_descriptor_load", "tt.descriptor_gather",
                      "amdgpu.buffer_load", "amdg.buffer_load", *ASYNC_COPY_OPS, *TMA_OPS})
"""Ops that read global memory into a tile (registers or shared memory)."""
DOT_OPS = frozenset({"tt.dot", "tt.dot_scaled", "ttng.warp_group_dot", "ttng.tc_gen5_mma",
                     "ttng.tc_gen5_mma_scaled"})
# The pass that expands loops into prologue, steady state and epilogue, by its argument
# (Triton 3.0 to 3.9 on NVIDIA; AMD's stream pipeliner).
PIPELINER_ARGUMENTS = ("tritongpu-pipeline", "tritonamdgpu-pipeline", "tritonamdgpu-stream-pipeline",
                       "tritonamdgpu-stream-pipeline-v2")
PIPELINE_REMARK_WORDS = ("pipelin",)
# A remark at a load that stayed synchronous explaining why: an access too narrow for an
# asynchronous copy (cp.async moves 4, 8 or 16 bytes) is what keeps a load out of them.
LOAD_REMARK_WORDS = ("pipelin", "vectoriz")
# What the pipeliner puts right after a loop to drain it.
DRAIN_OPS = frozenset({"ttg.async_wait", "ttng.warp_group_dot_wait", "ttg.local_dealloc", "ttng.inval_barrier",
                       "ttng.wait_barrier", "ttng.async_tma_store_wait"})

VERDICT_COMPUTE = "compute-bound tile"
VERDICT_MEMORY = "memory-bound tile"


@dataclass(frozen=True)
class Schedule:
    """Where a pipelined loop's ops run (op names, text order)."""

    prologue: tuple[str, ...]
    """Ops the pipeliner put before the loop: the first iterations' loads, their
    buffers and predicates."""
    steady: tuple[tuple[int, tuple[str, ...]], ...]
    """(stage, ops) for each stage of the schedule the pipeliner read; empty when the
    Triton version does not print it (before 3.3)."""
    epilogue: tuple[str, ...]
    """Ops the pipeliner put after the loop: waits that drain the copies and the
    asynchronous dots, buffer deallocations, peeled last iterations."""

    def to_json(self) -> dict:
        return {"prologue": list(self.prologue),
                "steady": [{"stage": s, "ops": list(ops)} for s, ops in self.steady],
                "epilogue": list(self.epilogue)}


@dataclass(frozen=True)
class Loop:
    """One ``scf.for`` holding global loads, after the software pipeliner."""

    line: int | None
    """The Python line of the loop (its ``for`` statement); None when unknown."""
    pipelined: bool
    stages: int
    async_loads: int
    """Loads of the loop that are asynchronous copies (``cp.async``) or TMA copies."""
    remark: str | None
    """Triton's remark about pipelining at the loop's line or one of its loads' lines."""
    ttgir_line: int
    """The ``scf.for``'s line in the final TTGIR (``irscope cat --stage ttgir``)."""
    requested_stages: int | None
    """The stages asked for: the loop's own ``tl.range(..., num_stages=N)`` (its
    ``tt.num_stages`` attribute), else the kernel's ``num_stages``."""
    loads: int
    """Global loads in the loop's own body (each tile load once, async copies included)."""
    tma_loads: int
    load_lines: tuple[int, ...]
    """Python lines of the loads (sorted, distinct)."""
    async_lines: tuple[int, ...]
    """Python lines of the loads that became asynchronous or TMA copies."""
    buffers: int | None
    """Leading dimension of the multi-buffered shared allocations its copies fill."""
    schedule: Schedule | None
    """The prologue / steady state / epilogue split; None when not pipelined."""
    evidence: str
    """What the answer rests on, in words."""

    def to_json(self) -> dict:
        """The ``loops`` object of ``irscope explain --json``."""
        return {"line": self.line, "pipelined": self.pipelined, "stages": self.stages,
                "async_loads": self.async_loads, "remark": self.remark, "ttgir_line": self.ttgir_line,
                "requested_stages": self.requested_stages,
                "loads": self.loads, "tma_loads": self.tma_loads, "load_lines": list(self.load_lines),
                "async_lines": list(self.async_lines), "buffers": self.buffers,
                "schedule": self.schedule.to_json() if self.schedule is not None else None,
                "evidence": self.evidence}


@dataclass(frozen=True)
class Intensity:
    """Arithmetic intensity of the main loop's tile, beside the target's ridge point."""

    flops_per_iter: int
    bytes_per_iter: int
    ratio: float | None
    """FLOPs per global byte loaded; None when the loop loads no bytes it can size."""
    ridge: float | None
    """Peak matrix FLOP/s over DRAM bandwidth of the target's reference GPU; None when
    the table (:mod:`irscope.core.peaks`) has no figure for the target or operand type."""
    verdict: str | None
    """``"compute-bound tile"`` or ``"memory-bound tile"``; None without a ridge point."""
    line: int | None
    """The Python line of the main loop."""
    dtype: str
    """The operand class the peak was read for (``fp16``, ``tf32``, ``fp8``...)."""
    device: str | None
    """The reference GPU of the ridge point."""

    def to_json(self) -> dict:
        """The ``intensity`` object of ``irscope explain --json``."""
        return {"flops_per_iter": self.flops_per_iter, "bytes_per_iter": self.bytes_per_iter,
                "ratio": None if self.ratio is None else round(self.ratio, 2),
                "ridge": None if self.ridge is None else round(self.ridge, 2), "verdict": self.verdict,
                "line": self.line, "dtype": self.dtype, "device": self.device}


# -- walking the IR -----------------------------------------------------------------

def _op_name(op: Op) -> str:
    """The op's name as Triton 3.3+ prints it (``triton_gpu.`` is ``ttg.``), so one
    table of op names reads every version."""
    return current_op_name(op.name)


def _body(loop: Op) -> list[Op]:
    """The ops of the loop's own body (its region's blocks), without the yield."""
    return [op for region in loop.regions for block in region.blocks for op in block.ops if _op_name(op) != "scf.yield"]


def _direct_ops(loop: Op) -> list[Op]:
    """Every op inside the loop that is not inside a nested loop."""
    out: list[Op] = []
    stack = list(reversed(_body(loop)))
    while stack:
        op = stack.pop()
        out.append(op)
        if _op_name(op) != LOOP_OP:
            stack.extend(reversed([o for r in op.regions for b in r.blocks for o in b.ops]))
    return out


def _loops(module: Module) -> list[Op]:
    return [op for op in module.ops() if _op_name(op) == LOOP_OP]


def _siblings(loop: Op) -> list[Op]:
    """The ops of the block that holds ``loop``."""
    parent = loop.parent
    if isinstance(parent, Function):
        blocks = list(parent.blocks)
    elif parent is not None:
        blocks = [b for r in parent.regions for b in r.blocks]
    else:
        return []
    for block in blocks:
        if any(o is loop for o in block.ops):
            return block.ops
    return []


def _loop_lines(cap: "Capture", loop: Op) -> set[int]:
    """The Python lines of the loop and of the ops of its own body."""
    return {ln for ln in (cap.line_of(o) for o in [loop, *_direct_ops(loop)]) if ln is not None}


def _epilogue_ops(cap: "Capture", loop: Op, lines: set[int]) -> list[Op]:
    """The run of ops right after the loop that drain it (waits, deallocations) or
    finish its last iterations (ops on the loop's ``lines``: AMD's pipeliner peels
    them, each under an ``scf.if``); a new buffer, the return or another line ends it
    (the code after the loop, or the next loop's prologue, starts there)."""
    ops = _siblings(loop)
    at = next((i for i, o in enumerate(ops) if o is loop), len(ops))
    out: list[Op] = []
    for op in ops[at + 1:]:
        name = _op_name(op)
        if name in ("ttg.local_alloc", LOOP_OP, "tt.return"):
            break
        if name not in DRAIN_OPS and cap.line_of(op) not in lines:
            break
        out.append(op)
    return out


def _before(cap: "Capture", loop: Op) -> list[Op]:
    """The ops of the loop's block before it, back to the previous loop's epilogue,
    each with its nested ops."""
    ops = _siblings(loop)
    at = next((i for i, o in enumerate(ops) if o is loop), None)
    if at is None:
        return []
    prev = max((i for i, o in enumerate(ops[:at]) if _op_name(o) == LOOP_OP), default=None)
    start = 0 if prev is None else prev + 1 + len(_epilogue_ops(cap, ops[prev], _loop_lines(cap, ops[prev])))
    return [n for o in ops[start:at] for n in o.walk()]


def _int_attr(op: Op, name: str) -> int | None:
    value = op.attribute_values().get(name)
    got = getattr(value, "value", None)
    return got if isinstance(got, int) and not isinstance(got, bool) else None


def _signature(op: Op, module: Module) -> Any:
    return op.signature(module.encodings)


def _tile_bits(t: Type | None) -> int | None:
    """Bits of one tile of type ``t``: tensor of scalars or pointers (their pointees),
    a shared-memory descriptor, or a scalar."""
    if isinstance(t, (TensorType, MemDescType)):
        elem: Any = t.element
        if isinstance(elem, PointerType):
            elem = elem.pointee
        if not isinstance(elem, ScalarType) or not elem.bits:
            return None
        n = 1
        for d in t.shape:
            if d is None:
                return None  # a dynamic dimension: no size to count
            n *= d
        return n * elem.bits
    if isinstance(t, PointerType) and isinstance(t.pointee, ScalarType):
        return t.pointee.bits
    if isinstance(t, ScalarType):
        return t.bits or None
    return None


def load_bytes(op: Op, module: Module) -> int | None:
    """Global bytes one execution of load ``op`` reads (its whole tile); None when its
    types do not say."""
    sig = _signature(op, module)
    if _op_name(op) in ASYNC_COPY_OPS:
        candidates = list(sig.operands[:1])  # the pointer tensor
    elif _op_name(op) in TMA_OPS:
        # the destination buffer: the largest shared-memory operand (the barrier is one too)
        candidates = sorted((t for t in sig.operands if isinstance(t, MemDescType)),
                            key=lambda t: -(_tile_bits(t) or 0))
    else:
        candidates = list(sig.results[:1])
    for t in candidates:
        bits = _tile_bits(t)
        if bits is not None:
            return bits // 8
    return None


def dot_flops(op: Op, module: Module) -> tuple[int, str] | None:
    """2*M*N*K (times the batch) of one dot tile, and its operand class for the peak
    table; None when the operand shapes are unknown, and for scaled dots
    (``tt.dot_scaled``), whose operand types do not give K directly."""
    if "scaled" in _op_name(op):
        return None  # operands interleaved with their scales, fp4 packed two per byte
    sig = _signature(op, module)
    shapes = [t for t in sig.operands if isinstance(t, (TensorType, MemDescType))]
    if len(shapes) < 2 or len(shapes[0].shape) < 2 or len(shapes[1].shape) < 2:
        return None
    a, b = shapes[0], shapes[1]
    dims = [*a.shape, b.shape[-1]]
    flops = 2
    for d in dims:
        if d is None:
            return None  # a dynamic dimension
        flops *= d
    return flops, _dtype_class(a.element, op)


def _dtype_class(elem: Any, op: Op) -> str:
    name = getattr(elem, "name", "") or ""
    if name.startswith("f8") or name.startswith("f4") or name.startswith("f6"):
        return "fp8"
    if name in ("f16", "bf16"):
        return "fp16"
    if name.startswith("i"):
        return "int8"
    if name == "f32":
        return "fp32" if "ieee" in op.attributes or "ieee" in op.text else "tf32"
    return name or "fp16"


# -- loops ----------------------------------------------------------------------------

def _key(cap: "Capture", op: Op) -> tuple[str, int | None]:
    return _op_name(op), cap.line_of(op)


def _schedule_module(cap: "Capture") -> Module | None:
    """The TTGIR the pipeliner pass read (its 'before' snapshot), when captured."""
    for row_index, row in enumerate(cap.pass_rows()):
        if row.stage == TTGIR and row.argument in PIPELINER_ARGUMENTS:
            # The snapshot alone: pass_at() would first diff every pass of the capture.
            return cap._pass_module(row_index)
    return None


def _match_loops(cap: "Capture", final: list[Op], before: list[Op]) -> dict[int, Op]:
    """Final loop index -> the same loop in the pipeliner's input (same Python line, in
    order among the loops of that line)."""
    by_line: dict[int | None, list[Op]] = {}
    for op in before:
        by_line.setdefault(cap.line_of(op), []).append(op)
    seen: Counter = Counter()
    out = {}
    for i, op in enumerate(final):
        line = cap.line_of(op)
        k = seen[line]
        seen[line] += 1
        got = by_line.get(line, [])
        if k < len(got):
            out[i] = got[k]
    return out


def _copies(cap: "Capture", ops: list[Op], inside: set[tuple[str, int | None]], lines: set[int],
            earlier: list[Op]) -> tuple[str, ...]:
    """Op names among ``ops`` that the pipeliner made: same op and line as an op of the
    loop, or on one of the loop's lines, less what stood there before it ran."""
    old = Counter(_key(cap, o) for o in earlier)
    out = []
    for op in ops:
        key = _key(cap, op)
        if key in inside or (key[1] is not None and key[1] in lines):
            if old[key] > 0:
                old[key] -= 1
                continue
            out.append(_op_name(op))
    return tuple(out)


def _remark_for(remarks: Iterable[Any], files: set[str], lines: set[int], sync_lines: set[int]) -> str | None:
    """The first remark that explains the loop: one about pipelining whose innermost
    user frame is one of ``lines`` (the loop's and its loads'), or one about pipelining
    or vectorization at ``sync_lines`` (its loads that did not become asynchronous
    copies). Files are compared by base name: a remark prints the path as the compile
    saw it."""
    from irscope.core.remarks import remark_location

    for r in remarks:
        text = getattr(r, "text", "") or ""
        low = text.lower()
        frame = remark_location(r).user_frame()
        if frame is None or (files and os.path.basename(frame.file) not in files):
            continue
        if (frame.line in lines and any(w in low for w in PIPELINE_REMARK_WORDS)) or \
                (frame.line in sync_lines and any(w in low for w in LOAD_REMARK_WORDS)):
            return text
    return None


def loops_of(cap: "Capture", remarks: Iterable[Any] = ()) -> tuple[Loop, ...]:
    """Every loop of the final TTGIR that loads from global memory, in text order, with
    what the software pipeliner made of it (module docstring). ``remarks`` are Triton's
    remarks for the compile (objects with ``file``, ``line`` and ``text``, as
    :func:`irscope.core.remarks.remarks_of` gives); the first about pipelining at the
    loop's line or a load's line, or about pipelining or vectorization at a load that
    did not become an asynchronous copy, becomes the loop's ``remark``. Empty when the
    capture has no TTGIR."""
    if TTGIR not in cap.stages:
        return ()
    module = cap.stage(TTGIR).module
    remarks = tuple(remarks)
    finals = _loops(module)
    sched_module = _schedule_module(cap)
    sched_loops = _loops(sched_module) if sched_module is not None else []
    matched = _match_loops(cap, finals, sched_loops)
    out = []
    for i, loop in enumerate(finals):
        inner = _direct_ops(loop)
        loads = [o for o in inner if _op_name(o) in LOAD_OPS]
        if not loads:
            continue
        out.append(_one_loop(cap, module, loop, inner, loads, matched.get(i), remarks))
    return tuple(out)


def _one_loop(cap: "Capture", module: Module, loop: Op, inner: list[Op], loads: list[Op],
              before_loop: Op | None, remarks: tuple[Any, ...]) -> Loop:
    line = cap.line_of(loop)
    asyncs = [o for o in loads if _op_name(o) in ASYNC_COPY_OPS or _op_name(o) in TMA_OPS]
    tma = [o for o in loads if _op_name(o) in TMA_OPS]
    load_lines = sorted({ln for ln in (cap.line_of(o) for o in loads) if ln is not None})
    async_lines = sorted({ln for ln in (cap.line_of(o) for o in asyncs) if ln is not None})
    before = _before(cap, loop)
    # Prologue copies of each load: the same load op on the same line, before the loop.
    ahead = Counter(_key(cap, o) for o in before if _op_name(o) in LOAD_OPS)
    copies = max((ahead[_key(cap, o)] for o in loads), default=0)
    max_stage = _int_attr(before_loop, "tt.scheduled_max_stage") if before_loop is not None else None
    pipelined = copies > 0
    if pipelined:
        stages = max_stage + 1 if max_stage is not None else copies + 1
    else:
        stages = 1
    # the ring the copies fill; a loop pipelined through registers (AMD) stores its
    # loads into one too
    buffers = _buffers(module, before, asyncs or (loads if copies else []))
    schedule = None
    if pipelined:
        inside = {_key(cap, o) for o in inner}
        lines = _loop_lines(cap, loop)
        old_before = _before(cap, before_loop) if before_loop is not None else []
        steady: list[tuple[int, tuple[str, ...]]] = []
        if before_loop is not None and max_stage is not None:
            by_stage: dict[int, list[str]] = {}
            for o in _direct_ops(before_loop):
                s = _int_attr(o, "loop.stage")
                if s is not None:
                    by_stage.setdefault(s, []).append(_op_name(o))
            steady = [(s, tuple(by_stage[s])) for s in sorted(by_stage)]
        schedule = Schedule(_copies(cap, before, inside, lines, old_before), tuple(steady),
                            tuple(_op_name(o) for e in _epilogue_ops(cap, loop, lines) for o in e.walk()
                                  if _op_name(o) != "scf.yield"))
    files = {os.path.basename(f.file) for f in (o.location.user_frame() for o in [loop, *loads]) if f is not None}
    sync_lines = {ln for ln in (cap.line_of(o) for o in loads if o not in asyncs) if ln is not None}
    remark = _remark_for(remarks, files, set(load_lines) | ({line} if line is not None else set()), sync_lines)
    evidence = _evidence(pipelined, stages, max_stage, copies, len(asyncs), len(tma), buffers)
    return Loop(line=line, pipelined=pipelined, stages=stages, async_loads=len(asyncs), remark=remark,
                ttgir_line=loop.line, requested_stages=_int_attr(loop, "tt.num_stages") or cap.num_stages,
                loads=len(loads), tma_loads=len(tma), load_lines=tuple(load_lines),
                async_lines=tuple(async_lines), buffers=buffers, schedule=schedule, evidence=evidence)


def _buffers(module: Module, before: list[Op], asyncs: list[Op]) -> int | None:
    """Leading dimension of the multi-buffered allocations made before the loop on the
    lines of ``asyncs`` (its copies, or its pipelined loads: their destination is one
    slice of one of them)."""
    if not asyncs:
        return None
    lines = {o.location.user_frame() for o in asyncs}
    lines.discard(None)
    want = {(f.file, f.line) for f in lines if f is not None}
    best = None
    for op in before:
        if _op_name(op) != "ttg.local_alloc":
            continue
        f = op.location.user_frame()
        if f is None or (f.file, f.line) not in want:
            continue
        results = _signature(op, module).results
        t = results[0] if results else None
        # An empty, mutable allocation one rank above a tile: the copies' ring of buffers
        # (an allocation initialised from a tensor holds that one tile).
        ring = isinstance(t, MemDescType) and t.mutable and not op.operands and len(t.shape) >= 2
        depth = t.shape[0] if ring and isinstance(t, MemDescType) else None
        if depth is not None:
            best = max(best or 0, depth)
    return best


def _evidence(pipelined: bool, stages: int, max_stage: int | None, copies: int, asyncs: int, tma: int,
              buffers: int | None) -> str:
    if not pipelined:
        if max_stage is not None:
            return f"the pipeliner scheduled it (max stage {max_stage}) but put no load ahead of it"
        return "no load of the loop is issued ahead of it in the final TTGIR"
    parts = [f"{copies} prologue cop{'y' if copies == 1 else 'ies'} of its loads before it"]
    if max_stage is not None:
        parts.append(f"tt.scheduled_max_stage = {max_stage}")
    if asyncs:
        kind = "TMA" if tma == asyncs else "async" if not tma else "async/TMA"
        parts.append(f"{asyncs} {kind} cop{'y' if asyncs == 1 else 'ies'} in the loop")
    if buffers:
        parts.append(f"{buffers}-deep shared buffers")
    return "; ".join(parts)


# -- intensity ---------------------------------------------------------------------

def intensity_of(cap: "Capture") -> Intensity | None:
    """The main loop's FLOPs and global bytes per iteration against the target's ridge
    point (module docstring). None when no loop of the final TTGIR both loads and has
    a dot."""
    from irscope.core.peaks import peaks_for

    if TTGIR not in cap.stages:
        return None
    module = cap.stage(TTGIR).module
    best: tuple[int, int, Op, str] | None = None
    for loop in _loops(module):
        inner = _direct_ops(loop)
        loads = [o for o in inner if _op_name(o) in LOAD_OPS]
        if not loads:
            continue
        flops, dtype = 0, ""
        for o in inner:
            if _op_name(o) in DOT_OPS:
                got = dot_flops(o, module)
                if got is not None:
                    flops += got[0]
                    dtype = dtype or got[1]
        nbytes = sum(b for b in (load_bytes(o, module) for o in loads) if b is not None)
        if not flops:
            continue  # no dot: not a main loop (the tensor-core roofline does not apply)
        if best is None or (flops, nbytes) > (best[0], best[1]):
            best = (flops, nbytes, loop, dtype)
    if best is None:
        return None
    flops, nbytes, loop, dtype = best
    ratio = flops / nbytes if nbytes else None
    peaks = peaks_for(cap.target)
    ridge = peaks.ridge(dtype) if peaks is not None else None
    verdict = None
    if ridge is not None and ratio is not None:
        verdict = VERDICT_COMPUTE if ratio >= ridge else VERDICT_MEMORY
    return Intensity(flops_per_iter=flops, bytes_per_iter=nbytes, ratio=ratio, ridge=ridge, verdict=verdict,
                     line=cap.line_of(loop), dtype=dtype, device=peaks.device if peaks is not None else None)
