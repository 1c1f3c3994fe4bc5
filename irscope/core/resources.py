"""Resource figures a user can trust: what the launch really uses.

The bundle keeps what the tools said at capture time (``cuobjdump -res-usage``,
``ptxas -v``, the AMDGCN metadata, or the driver on a GPU run) beside Triton's
metadata. Shared memory needs both: Triton's kernels declare one ``.extern
.shared`` array, sized at launch by ``metadata["shared"]`` (dynamic), and
``cuobjdump`` adds the 1 KiB the hardware reserves per block on sm_80 and later,
which the launch does not request (on the H200 the driver reports a static size of
0 for these kernels: docs/gpu-check.md). So the figure is dynamic shared memory
plus the static ``.shared`` arrays the PTX declares.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

from irscope.store.bundle import CaptureRow

@dataclass(frozen=True, slots=True)
class Resources:
    """What one compiled kernel uses; None where unknown."""

    registers: int | None
    """Registers per thread (VGPRs on AMD)."""
    spill_stores: int | None
    """Bytes of register spill stores (ptxas -v), or spilled registers on AMD."""
    spill_loads: int | None
    shared: int | None
    """Shared memory (LDS on AMD) the launch uses, in bytes: dynamic plus static."""
    shared_dynamic: int | None
    """Triton's ``metadata["shared"]``: what the launch requests."""
    shared_static: int | None
    """Statically sized shared arrays of the binary (0 for Triton's own kernels)."""
    local: int | None
    stack: int | None
    source: str
    """Where the counts came from: ``cuobjdump+ptxas``, ``driver``, ``amdgcn metadata``."""
    num_warps: int | None
    threads_per_warp: int | None

    @property
    def spills(self) -> int | None:
        """Spilled bytes, stores plus loads."""
        if self.spill_stores is None:
            return None
        return self.spill_stores + (self.spill_loads or 0)

    @property
    def threads(self) -> int | None:
        """Threads per block."""
        if self.num_warps is None or self.threads_per_warp is None:
            return None
        return self.num_warps * self.threads_per_warp

    def to_json(self) -> dict:
        """Every field, plus ``spills``."""
        return asdict(self) | {"spills": self.spills}


def resources_of(row: CaptureRow, ptx: Callable[[], str | None]) -> Resources:
    """The :class:`Resources` of one capture from its listing row; ``ptx()`` gives its
    PTX, read only for bundles older than schema 3, which did not store static
    shared memory."""
    dynamic = row.shared_dynamic if isinstance(row.shared_dynamic, int) else None
    if row.target.startswith("gfx"):
        # LDS is sized in the code object; Triton's metadata gives the same figure.
        total = dynamic if dynamic is not None else row.shared
        static = 0 if total is not None else None
        dynamic = total
    else:
        static = row.shared_static
        if static is None:
            from irscope.ir.ptx import static_shared_bytes  # only for bundles older than schema 3

            text = ptx()
            static = static_shared_bytes(text) if text else None
        total = None if dynamic is None and static is None else (dynamic or 0) + (static or 0)
    warp = row.warp_size or (64 if row.target.startswith("gfx") else 32)
    return Resources(
        registers=row.registers, spill_stores=row.spill_stores, spill_loads=row.spill_loads, shared=total,
        shared_dynamic=dynamic, shared_static=static, local=row.local, stack=row.stack,
        source=row.resource_source or "", num_warps=row.num_warps, threads_per_warp=warp)
