"""Instruction classes of PTX and SASS: every instruction put in one class by its
opcode (global/shared loads and stores, MMA, async copies and TMA, barriers,
conversions, control flow...). The one classification the capture diff's
instruction mix (:mod:`irscope.diff.mix`) and the core's per-line costs
(:mod:`irscope.core.line_costs`) both read.

The classes count the instructions that *do* the work. Instructions that only
order work already issued (``wgmma.fence``/``wait_group``, ``cp.async.commit_group``
/``wait_group``, SASS ``WARPGROUP.ARRIVE``, ``DEPBAR``, ``LDGDEPBAR``) are
barriers, so ``mma`` counts tensor-core math and ``async_copy_tma`` counts copies,
alike in PTX and SASS. The spellings were read off the samples' PTX and SASS
for sm_80 and sm_90 (Triton 3.2, 3.6, 3.9) and the PTX ISA / CUDA binary
utilities instruction lists for the rest (TMA, tcgen05, ``SYNCS``).
"""

from __future__ import annotations

from functools import lru_cache

from irscope.compiler.stages import PTX, SASS
from irscope.errors import IrscopeError

GLOBAL_LOAD, GLOBAL_STORE = "global_load", "global_store"
SHARED_LOAD, SHARED_STORE = "shared_load", "shared_store"
LOCAL, ATOMIC, MMA, ASYNC_COPY = "local", "atomic", "mma", "async_copy_tma"
BARRIER, CONVERSION, CONTROL_FLOW, OTHER = "barrier", "conversion", "control_flow", "other"
CLASSES = (GLOBAL_LOAD, GLOBAL_STORE, SHARED_LOAD, SHARED_STORE, LOCAL, ATOMIC, MMA, ASYNC_COPY, BARRIER,
           CONVERSION, CONTROL_FLOW, OTHER)
"""Every class, in the order views print them."""

MIX_STAGES = (PTX, SASS)
"""The stages :func:`classify` classifies."""

# -- PTX -----------------------------------------------------------------------
# PTX opcodes are dot-separated: ``ld.global.nc.v4.b32``, ``st.shared::cta.b32``.
# Loads and stores are classed by their state space, wherever it stands among the
# qualifiers (``ld.relaxed.gpu.global.b32``). A generic-address ld/st (no space) is
# counted as global: Triton emits generic pointers only for global memory.
_PTX_SPACE: dict[str | None, tuple[str, str]] = {"global": (GLOBAL_LOAD, GLOBAL_STORE), "shared": (SHARED_LOAD, SHARED_STORE),
              "local": (LOCAL, LOCAL), "param": (OTHER, OTHER), "const": (OTHER, OTHER)}
_PTX_BARRIER = frozenset({"bar", "barrier", "mbarrier", "membar", "fence"})
_PTX_CONTROL = frozenset({"bra", "brx", "ret", "exit", "call", "trap", "brkpt"})
# The group bookkeeping of async copies and async MMAs: waits and commits, not work.
_PTX_GROUP_OPS = frozenset({"commit_group", "wait_group", "wait_all", "fence", "commit", "wait", "arrive",
                            "mbarrier"})


def _ptx_space(quals: list[str]) -> str | None:
    for q in quals:
        space = q.split("::", 1)[0]  # shared::cta, shared::cluster
        if space in _PTX_SPACE:
            return space
    return None


def _ptx_class(opcode: str) -> str:
    base, *quals = opcode.split(".")
    if base in ("ld", "ldu", "st"):
        space = _ptx_space(quals)
        loads, stores = _PTX_SPACE.get(space, (GLOBAL_LOAD, GLOBAL_STORE))
        return stores if base == "st" else loads
    if base == "ldmatrix":
        return SHARED_LOAD
    if base == "stmatrix":
        return SHARED_STORE
    if base in ("atom", "red"):
        return ATOMIC
    if base == "mma":
        return MMA
    if base in ("wgmma", "tcgen05", "wmma"):
        op = quals[0].split("::", 1)[0] if quals else ""  # tcgen05.wait::ld
        if op.startswith("mma"):  # wgmma.mma_async, tcgen05.mma(.sp/.ws), wmma.mma
            return MMA
        if op in _PTX_GROUP_OPS:
            return BARRIER
        if base == "tcgen05" and op == "cp":  # shared memory -> tensor memory, asynchronous
            return ASYNC_COPY
        if base == "wmma" and op in ("load", "store"):
            space = _ptx_space(quals)
            loads, stores = _PTX_SPACE.get(space, (GLOBAL_LOAD, GLOBAL_STORE))
            return stores if op == "store" else loads
        return OTHER  # tcgen05.ld/st/alloc...: tensor memory, none of the classes
    if base in ("cp", "cp_async"):
        # cp.async.ca/cg, cp.async.bulk(.tensor), cp.reduce.async.bulk(.tensor),
        # cp.async.bulk.prefetch(.tensor): copies; their commit/wait groups: barriers.
        if any(q in _PTX_GROUP_OPS for q in quals):
            return BARRIER
        return ASYNC_COPY
    if base in _PTX_BARRIER:
        return BARRIER
    if base == "cvt":  # not cvta: that converts an address between state spaces
        return CONVERSION
    if base in _PTX_CONTROL:
        return CONTROL_FLOW
    return OTHER


# -- SASS ----------------------------------------------------------------------
# SASS opcodes are ``MNEMONIC.MODIFIERS`` (``LDG.E.128``, ``HGMMA.64x128x16.F32``);
# the mnemonic decides. ``HFMA2.MMA`` is a half-precision FMA issued on the MMA pipe
# (ptxas uses it as a move), not a matrix multiply: the mnemonic is HFMA2.
_SASS = {
    GLOBAL_LOAD: {"LDG", "LD"},  # LD: generic address, as for PTX
    GLOBAL_STORE: {"STG", "ST"},
    SHARED_LOAD: {"LDS", "LDSM"},
    SHARED_STORE: {"STS", "STSM"},
    LOCAL: {"LDL", "STL"},
    ATOMIC: {"ATOM", "ATOMG", "ATOMS", "RED", "REDG", "REDAS"},
    ASYNC_COPY: {"LDGSTS", "UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG", "UBLKCP", "UBLKRED", "UBLKPF", "UTCCP"},
    BARRIER: {"BAR", "BARRIER", "MEMBAR", "FENCE", "ERRBAR", "CGAERRBAR", "SYNCS", "DEPBAR", "LDGDEPBAR",
              "WARPGROUP", "WARPSYNC", "ARRIVES", "UCGABAR_ARV", "UCGABAR_WAIT", "UTMACMDFLUSH", "UTCBAR"},
    CONVERSION: {"F2F", "F2I", "I2F", "F2FP", "I2FP", "I2I", "I2IP", "F2IP", "FRND"},
    CONTROL_FLOW: {"BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "BREAK", "BPT", "KILL"},
}
_SASS_CLASS = {m: cls for cls, mnemonics in _SASS.items() for m in mnemonics}


def _sass_class(opcode: str) -> str:
    mnemonic = opcode.split(".", 1)[0]
    cls = _SASS_CLASS.get(mnemonic)
    if cls is not None:
        return cls
    # HMMA, IMMA, DMMA, BMMA, HGMMA, IGMMA, QGMMA, BGMMA, OMMA, UTCHMMA, UTCQMMA...
    if mnemonic.endswith("MMA"):
        return MMA
    return OTHER


@lru_cache(maxsize=4096)
def classify(opcode: str, stage: str) -> str:
    """The class (one of :data:`CLASSES`) of one PTX or SASS opcode as the parsers
    name it (``ld.global.v4.b32``, ``LDG.E.128``; no predicate)."""
    if stage == PTX:
        return _ptx_class(opcode)
    if stage == SASS:
        return _sass_class(opcode)
    raise IrscopeError(f"instruction classes are for {' and '.join(MIX_STAGES)}, not {stage}")
