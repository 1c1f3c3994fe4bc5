"""The headline facts of one capture, worked out once: what every listing shows.

``irscope ls`` (and the table ``irscope run`` prints), the app's kernel browser and the
report's index are all drawn from :class:`CaptureSummary`; they choose columns and
styles, never figures. Get one from :attr:`irscope.Capture.summary`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irscope.core.capture import Capture
    from irscope.core.occupancy import Occupancy

LIMIT_ABBREV = {"registers": "regs", "shared": "smem", "warps": "warps", "blocks": "blocks"}
"""How :func:`occupancy_text` names the limit that binds."""


def occupancy_text(occ: "Occupancy | None") -> str | None:
    """``2x8w regs``: resident blocks per SM, times warps per block, and the limit that
    binds (``regs``, ``smem``, ``warps``, ``blocks``); None when unknown. The one
    wording of every view."""
    if occ is None:
        return None
    return f"{occ.blocks_per_sm}x{occ.num_warps}w {LIMIT_ABBREV.get(occ.limited_by, occ.limited_by)}"


@dataclass(frozen=True, slots=True)
class CaptureSummary:
    """One capture's identity and headline figures; None where unknown."""

    id: int
    kernel: str
    target: str
    variant: str
    """The whole variant label (views that are short of room show its differing fields)."""
    triton_version: str | None
    num_warps: int | None
    num_stages: int | None
    """By the one rule of :meth:`irscope.Capture.compile_option`."""
    registers: int | None
    """Registers per thread (VGPRs on AMD)."""
    registers_from_driver: bool
    """The register count came from the driver on a GPU run (``ls`` marks it ``*``)."""
    spills: int | None
    """Spilled bytes, stores plus loads."""
    shared: int | None
    """Shared memory the launch uses, in bytes (dynamic plus static)."""
    occupancy: "Occupancy | None"
    occupancy_text: str | None
    """:func:`occupancy_text` of :attr:`occupancy`: ``2x8w regs``."""
    compile_seconds: float | None
    passes: int
    """How many pass snapshots the capture holds."""
    stages: tuple[str, ...]
    error: str | None
    """The compile's error (one line), None when it compiled."""
    failed_at: str | None
    """The pass (else the stage) a failed compile stopped in."""
    complete: bool
    """False when the run that made it did not finish."""

    @property
    def status(self) -> str:
        """``ok`` or ``failed``."""
        return "failed" if self.error else "ok"

    @property
    def warps_per_sm(self) -> int | None:
        """Resident warps per SM (what the occupancy column sorts by)."""
        return self.occupancy.warps_per_sm if self.occupancy is not None else None

    def to_json(self) -> dict:
        """Every figure as JSON (``occupancy`` as ``irscope ls --json`` gives it)."""
        return {"id": self.id, "kernel": self.kernel, "target": self.target, "variant": self.variant,
                "triton_version": self.triton_version, "num_warps": self.num_warps, "num_stages": self.num_stages,
                "registers": self.registers, "spills": self.spills, "shared": self.shared,
                "occupancy": self.occupancy.to_json() if self.occupancy is not None else None,
                "occupancy_text": self.occupancy_text, "compile_seconds": self.compile_seconds,
                "passes": self.passes, "stages": list(self.stages), "error": self.error,
                "failed_at": self.failed_at, "complete": self.complete, "status": self.status}


def summarise(capture: "Capture") -> CaptureSummary:
    """The :class:`CaptureSummary` of ``capture`` (use :attr:`irscope.Capture.summary`,
    which keeps it)."""
    res = capture.resources
    occ = capture.occupancy
    return CaptureSummary(
        id=capture.id, kernel=capture.kernel, target=capture.target, variant=capture.variant,
        triton_version=capture.triton_version, num_warps=res.num_warps, num_stages=capture.num_stages,
        registers=res.registers, registers_from_driver=res.source == "driver", spills=res.spills,
        shared=res.shared, occupancy=occ, occupancy_text=occupancy_text(occ),
        compile_seconds=capture.compile_seconds, passes=capture.pass_count, stages=tuple(capture.stages),
        error=capture.error, failed_at=capture.failed_at, complete=capture.complete)
