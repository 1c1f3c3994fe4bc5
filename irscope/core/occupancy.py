"""Theoretical occupancy of a compiled kernel: how many of its blocks fit on one SM (or CU).

Pure arithmetic over documented per-architecture rules; nothing here needs a GPU,
Triton or torch. The NVIDIA model is the one of the CUDA occupancy calculator
(``cuda_occupancy.h``, which ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` and the
driver's ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` implement):

* warps: ``max_warps_per_sm // warps_per_block`` (0 if the block has more threads than a
  block may have);
* blocks: the hardware cap on resident blocks per SM;
* registers: registers are allocated per warp, ``regs_per_thread * 32`` rounded up to the
  allocation unit (256). The register file is split over the SM's 4 sub-partitions, so
  ``warps_per_subpartition = (regs_per_sm / 4) // regs_per_warp``, resident warps
  ``= 4 * warps_per_subpartition`` and blocks ``= resident_warps // warps_per_block``. A
  block is refused outright (0) when ``regs_per_warp * round_up(warps_per_block, 4)`` (the
  warp-allocation granularity the hardware check assumes) exceeds the per-block limit, or
  when a thread uses more registers than a thread may have;
* shared memory: per block, the kernel's static + dynamic shared memory plus the 1 KiB
  the system reserves per block (sm_80+), rounded up to the allocation granularity (128 B);
  the SM side is the largest carveout (with the default carveout preference the driver
  picks the largest, and Triton asks for "prefer shared" when it needs > 48 KiB).
  0 when the block needs more than the opt-in per-block maximum.

The binding limit is the smallest of the four. The CUDA calculator reports every limit that
reaches the minimum as a bit mask (``cudaOccLimitingFactor``: warps 0x1, registers 0x2,
shared memory 0x4, blocks 0x8); ``Occupancy.tied`` lists them all and ``limited_by`` is the
first in that flag order (:data:`LIMIT_PRECEDENCE`). Warps coming first also means a kernel
that fills the SM's warp slots reads "warps", not a resource that merely ties at full
occupancy.

AMD CDNA (gfx942, gfx950) uses the same four limits, with LLVM AMDGPU's rules
(``AMDGPUBaseInfo.cpp``) and the ROCm occupancy notes: a CU has 4 SIMDs, a SIMD runs at
most 8 wave64 waves (gfx90a and later), and has 512 unified VGPRs (arch + AGPR) per lane,
allocated in granules of 8. A wave's VGPRs are expressed here as "lane registers"
(``vgprs * 64``, granule ``8 * 64``) so that the NVIDIA formula applies unchanged: waves
per SIMD by VGPRs ``= 512 // round_up(vgprs, 8)``, times 4 SIMDs. ``num_warps`` is the
number of waves per workgroup, "SM" means CU and "block" means workgroup. Workgroups of
more than one wave are capped at 16 per CU (barrier resources, LLVM
``getMaxWorkGroupsPerCU``); single-wave workgroups only by the wave limit. LDS per
workgroup is rounded to its allocation granule (128 dwords on gfx942, 320 dwords on
gfx950) with nothing reserved. Waves are assumed spread over the 4 SIMDs (per-CU totals),
which is exact when ``num_warps`` is a multiple of 4. SGPRs are not modelled: on gfx9 they
do not limit wave64 occupancy below 8 waves/SIMD for Triton-sized kernels.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from irscope.errors import IrscopeError

#: Tie-break order for ``Occupancy.limited_by`` (the bit order of cuda_occupancy.h's
#: cudaOccLimitingFactor): the first of these that reaches the minimum.
LIMIT_PRECEDENCE = ("warps", "registers", "shared", "blocks")
LIMITS = LIMIT_PRECEDENCE

_KIB = 1024
_CUDA_RULE = ("CUDA C++ Programming Guide, 'Technical Specifications per Compute Capability' table, "
              "cc {cc}; CUDA occupancy calculator rules (cuda_occupancy.h)")
_AMD_RULE = ("LLVM AMDGPU AMDGPUBaseInfo (getMaxWavesPerEU=8 for gfx90a+, 512 unified VGPRs/SIMD lane, "
             "VGPR granule 8, getMaxWorkGroupsPerCU=16) and AMDGPUUsage LDS granule; {arch} ISA/ROCm docs "
             "for LDS per CU")


@dataclass(frozen=True, slots=True)
class ArchLimits:
    """Per-target hardware rules an occupancy computation needs.

    Registers are counted in 32-bit lane registers: one NVIDIA register of one thread, or
    one lane of an AMD VGPR. ``register_alloc_unit`` is the granularity of a warp's (wave's)
    allocation in those units.
    """

    target: str                       # canonical name: "sm_90", "gfx942"
    vendor: str                       # "nvidia" or "amd"
    warp_size: int                    # threads per warp (wave)
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int            # resident blocks (workgroups) per SM (CU)
    max_threads_per_block: int
    registers_per_sm: int             # lane registers in the whole SM (CU) register file
    registers_per_block: int          # the most one block may allocate
    register_alloc_unit: int          # per warp (wave), in lane registers
    max_registers_per_thread: int
    subpartitions: int                # SM sub-partitions (NVIDIA) / SIMDs per CU (AMD)
    warp_alloc_granularity: int       # warps per block rounded to this for the per-block check
    shared_per_sm: int                # bytes: the largest shared-memory carveout (LDS per CU)
    shared_per_block_optin: int       # bytes: the most one block may use (opt-in above 48 KiB)
    reserved_shared_per_block: int    # bytes the system adds to every block (1 KiB on sm_80+)
    shared_alloc_granularity: int     # bytes
    rule: str                         # where these numbers come from

    def to_json(self) -> dict:
        """All fields as a plain dict."""
        return asdict(self)


def _cuda(cc: str, *, threads: int, blocks: int, smem_kib: int, smem_block_kib: int) -> ArchLimits:
    major, minor = cc.split(".")
    return ArchLimits(
        target=f"sm_{major}{minor}", vendor="nvidia", warp_size=32,
        max_threads_per_sm=threads, max_warps_per_sm=threads // 32, max_blocks_per_sm=blocks,
        max_threads_per_block=1024, registers_per_sm=64 * _KIB, registers_per_block=64 * _KIB,
        register_alloc_unit=256, max_registers_per_thread=255, subpartitions=4, warp_alloc_granularity=4,
        shared_per_sm=smem_kib * _KIB, shared_per_block_optin=smem_block_kib * _KIB,
        reserved_shared_per_block=1 * _KIB, shared_alloc_granularity=128,
        rule=_CUDA_RULE.format(cc=cc),
    )


def _cdna(arch: str, *, lds_kib: int, lds_granule_dwords: int) -> ArchLimits:
    wave, simds, waves_per_simd, vgprs_per_lane, vgpr_granule = 64, 4, 8, 512, 8
    return ArchLimits(
        target=arch, vendor="amd", warp_size=wave,
        max_threads_per_sm=simds * waves_per_simd * wave, max_warps_per_sm=simds * waves_per_simd,
        max_blocks_per_sm=16, max_threads_per_block=1024,
        registers_per_sm=simds * vgprs_per_lane * wave, registers_per_block=simds * vgprs_per_lane * wave,
        register_alloc_unit=vgpr_granule * wave, max_registers_per_thread=vgprs_per_lane,
        subpartitions=simds, warp_alloc_granularity=1,
        shared_per_sm=lds_kib * _KIB, shared_per_block_optin=lds_kib * _KIB, reserved_shared_per_block=0,
        shared_alloc_granularity=lds_granule_dwords * 4,
        rule=_AMD_RULE.format(arch=arch),
    )


# Numbers from the CUDA C++ Programming Guide's compute-capability table (threads and blocks
# per SM, shared memory per SM = largest carveout, per block opt-in); sm_90 is checked against
# the H200's driver in tests/test_occupancy.py, the others are from the documents only.
_TABLE: dict[str, ArchLimits] = {
    a.target: a for a in (
        _cuda("8.0", threads=2048, blocks=32, smem_kib=164, smem_block_kib=163),
        _cuda("8.6", threads=1536, blocks=16, smem_kib=100, smem_block_kib=99),
        _cuda("8.9", threads=1536, blocks=24, smem_kib=100, smem_block_kib=99),
        _cuda("9.0", threads=2048, blocks=32, smem_kib=228, smem_block_kib=227),
        _cuda("10.0", threads=2048, blocks=32, smem_kib=228, smem_block_kib=227),
        _cuda("12.0", threads=1536, blocks=32, smem_kib=100, smem_block_kib=99),
        # CDNA3 (MI300): 64 KiB LDS per CU, granule 128 dwords; CDNA4 (MI350): 160 KiB, 320 dwords.
        _cdna("gfx942", lds_kib=64, lds_granule_dwords=128),
        _cdna("gfx950", lds_kib=160, lds_granule_dwords=320),
    )
}

_SM_RE = re.compile(r"^(?:cuda:|sm_?|compute_)(\d+)[a-z]?$")
_GFX_RE = re.compile(r"^(?:hip:)?(gfx[0-9a-f]+)(?::.*)?$")


def limits_for(target: str) -> ArchLimits | None:
    """The rules for ``target`` (``sm_90``, ``sm_90a``, ``cuda:90``, ``gfx942``, ``gfx942:xnack-``).

    Architecture-specific suffixes (``a``, ``f``) and AMD feature strings share the base
    target's rules. Returns None for a target with no table entry.
    """
    t = target.strip().lower()
    m = _SM_RE.match(t)
    if m:
        return _TABLE.get(f"sm_{m.group(1)}")
    m = _GFX_RE.match(t)
    if m:
        return _TABLE.get(m.group(1))
    return None


@dataclass(frozen=True, slots=True)
class Occupancy:
    """Resident blocks and warps per SM (CU) for one kernel launch configuration."""

    blocks_per_sm: int
    warps_per_sm: int
    limited_by: str                   # one of LIMITS; ties broken by LIMIT_PRECEDENCE
    rule: str
    by_registers: int
    by_shared: int
    by_warps: int
    by_blocks: int                    # a limit that never binds shows max_warps_per_sm
    target: str
    num_warps: int
    registers: int
    shared_bytes: int                 # what the kernel asked for (static + dynamic)
    shared_allocated: int             # per block, with the reserved part, rounded to the granule
    max_warps_per_sm: int
    tied: tuple[str, ...]             # every limit equal to blocks_per_sm, in precedence order

    @property
    def fraction(self) -> float:
        """Resident warps over the SM's maximum (the calculator's "occupancy")."""
        return self.warps_per_sm / self.max_warps_per_sm

    def to_json(self) -> dict:
        """The summary a bundle listing shows: blocks and warps per SM, and the binding limit."""
        return {"blocks_per_sm": self.blocks_per_sm, "warps_per_sm": self.warps_per_sm,
                "limited_by": self.limited_by}

    def detail_json(self) -> dict:
        """Every field, the per-limit block counts and the occupancy fraction."""
        d = asdict(self)
        d["tied"] = list(self.tied)
        d["fraction"] = round(self.fraction, 4)
        return d


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def _by_registers(lim: ArchLimits, registers: int, warps: int) -> int | None:
    if registers > lim.max_registers_per_thread:
        return 0
    per_warp = _round_up(registers * lim.warp_size, lim.register_alloc_unit)
    if per_warp == 0:
        return None  # no registers: this limit never binds
    # The hardware's per-block check counts the warps rounded up to a multiple of the sub-partitions.
    if per_warp * _round_up(warps, lim.warp_alloc_granularity) > lim.registers_per_block:
        return 0
    warps_per_part = (lim.registers_per_sm // lim.subpartitions) // per_warp
    return warps_per_part * lim.subpartitions // warps


def _by_warps(lim: ArchLimits, warps: int) -> int:
    if warps * lim.warp_size > lim.max_threads_per_block:
        return 0
    return lim.max_warps_per_sm // warps


def _by_blocks(lim: ArchLimits, warps: int) -> int:
    if lim.vendor == "amd" and warps == 1:
        return lim.max_warps_per_sm  # single-wave workgroups use no barrier (LLVM getMaxWorkGroupsPerCU)
    return lim.max_blocks_per_sm


def occupancy(target: str, *, num_warps: int, registers: int | None, shared_bytes: int | None,
              threads_per_warp: int | None = None) -> Occupancy | None:
    """Blocks (workgroups) of one kernel resident per SM (CU) on ``target``.

    ``registers`` is per thread (NVIDIA: ``n_regs`` of the cubin; AMD: the VGPR count,
    arch + AGPRs). ``shared_bytes`` is everything the block uses: static plus the dynamic
    amount the launch asks for (Triton's ``metadata.shared``); None is taken as 0 (the
    per-block reservation still applies). Returns None when the target has no rules or the
    register count is unknown. Raises IrscopeError for impossible inputs (no warps, negative
    sizes, a warp size the target does not run).
    """
    lim = limits_for(target)
    if lim is None or registers is None:
        return None
    if num_warps < 1 or registers < 0 or (shared_bytes is not None and shared_bytes < 0):
        raise IrscopeError(f"occupancy: bad kernel resources (num_warps={num_warps}, registers={registers}, "
                           f"shared_bytes={shared_bytes})")
    if threads_per_warp is not None and threads_per_warp != lim.warp_size:
        raise IrscopeError(f"occupancy: {lim.target} runs {lim.warp_size}-thread warps, not {threads_per_warp}")
    shared = shared_bytes or 0
    allocated = _round_up(shared + lim.reserved_shared_per_block, lim.shared_alloc_granularity)
    if shared > lim.shared_per_block_optin:
        by_shared = 0
    elif allocated == 0:
        by_shared = None  # no LDS at all (AMD): this limit never binds
    else:
        by_shared = lim.shared_per_sm // allocated
    bound = {"registers": _by_registers(lim, registers, num_warps), "shared": by_shared,
             "warps": _by_warps(lim, num_warps), "blocks": _by_blocks(lim, num_warps)}
    blocks = min(v for v in bound.values() if v is not None)
    tied = tuple(name for name in LIMIT_PRECEDENCE if bound[name] == blocks)
    # A limit that never binds is shown as the most blocks any launch could have (one per warp slot).
    counts = {k: lim.max_warps_per_sm if v is None else v for k, v in bound.items()}
    return Occupancy(
        blocks_per_sm=blocks, warps_per_sm=blocks * num_warps, limited_by=tied[0], rule=lim.rule,
        by_registers=counts["registers"], by_shared=counts["shared"], by_warps=counts["warps"],
        by_blocks=counts["blocks"], target=lim.target, num_warps=num_warps, registers=registers,
        shared_bytes=shared, shared_allocated=allocated, max_warps_per_sm=lim.max_warps_per_sm, tied=tied,
    )
