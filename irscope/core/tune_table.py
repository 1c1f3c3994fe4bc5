"""Autotune-exploration tables kept in a bundle (``irscope tune``), as typed results
the views read.

A tune table has one row per configuration of a grid (constexprs and options such
as ``BLOCK_M``, ``num_warps``, ``num_stages``), each compiled with no GPU from one
captured kernel's source and signature. A row holds the compile's figures
(:class:`irscope.core.experiments.Figures`: registers, spills, shared memory,
occupancy and its limiter, SASS instructions by class, TTGIR async copies and
MMAs), the MMA instruction kind, the main loop's arithmetic intensity, and two
marks: the configuration cannot launch on the target (a block over its shared
memory, register or thread limits: :mod:`irscope.core.occupancy`), and it spills.

The what-if layer (:mod:`irscope.whatif.tune`) compiles and saves the table as an
attachment of kind :data:`irscope.core.experiments.TUNE`; this module computes a
row's figures from a capture and reads the tables back. Nothing here compiles.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irscope.compiler.stages import PTX, SASS
from irscope.core.experiments import TUNE, Figures, figures_of
from irscope.core.occupancy import Occupancy, limits_for
from irscope.errors import IrscopeError
from irscope.ir.instr_classes import MMA, classify

if TYPE_CHECKING:
    from irscope.core.bundle import Bundle
    from irscope.core.capture import Capture

_KIB = 1024


def _kib(n: int) -> str:
    return f"{n / _KIB:.1f}".rstrip("0").rstrip(".") + " KiB"


def launch_problem(occ: Occupancy | None) -> str | None:
    """Why a block of this kernel cannot be resident on its target at all (so the
    launch fails there), in one line; None when one can be (or when the occupancy is
    unknown). The limits are those of :mod:`irscope.core.occupancy`: a block over the
    per-block shared memory (opt-in maximum), over the registers a thread or a block
    may have, or over the threads a block may have."""
    if occ is None or occ.blocks_per_sm > 0:
        return None
    lim = limits_for(occ.target)
    if lim is None:
        return None
    why: list[str] = []
    if occ.by_shared == 0:
        why.append(f"shared memory {_kib(occ.shared_bytes)} over the {_kib(lim.shared_per_block_optin)} "
                   f"a block may use on {occ.target}")
    if occ.by_registers == 0:
        if occ.registers > lim.max_registers_per_thread:
            why.append(f"{occ.registers} registers per thread over the {lim.max_registers_per_thread} allowed")
        else:
            why.append(f"{occ.registers} registers x {occ.num_warps} warps over the {lim.registers_per_block} "
                       f"registers a block may have on {occ.target}")
    if occ.by_warps == 0:
        why.append(f"{occ.num_warps * lim.warp_size} threads over the {lim.max_threads_per_block} a block may have")
    return "; ".join(why) or f"no block fits on an SM of {occ.target}"


def mma_kind(cap: "Capture") -> str | None:
    """The tensor-core instruction the kernel's main work uses: the most frequent MMA
    opcode of its SASS (``HGMMA.64x128x16.F32``, ``HMMA.16816.F32``), else of its PTX
    reduced to the instruction and shape (``wgmma.mma_async m64n128k16``); None when it
    has none."""
    for stage in (SASS, PTX):
        if stage not in cap.stages or cap.stage(stage).binary:
            continue
        counts: Counter[str] = Counter()
        for op in cap.stage(stage).module.ops():
            if op.name and op.name != "<unknown>" and classify(op.name, stage) == MMA:
                counts[op.name] += 1
        if not counts:
            continue
        top = counts.most_common(1)[0][0]
        if stage == SASS:
            return top
        parts = top.split(".")
        shape = next((p for p in parts if p.startswith("m") and "n" in p and "k" in p and p[1:2].isdigit()), None)
        return ".".join(parts[:2]) + (f" {shape}" if shape else "")
    return None


@dataclass(frozen=True, slots=True)
class TuneRow:
    """One configuration of a tune grid, compiled (or not) on one target."""

    config: dict[str, Any]
    """Grid key -> value (constexprs and options), in the grid's key order."""
    target: str
    compiled: bool
    failed_at: str | None
    """Where the compile stopped (pass, else stage) when it failed."""
    error: str | None
    """One line: why it failed."""
    capture_id: int | None
    """The configuration's capture in the table's ``captures`` bundle (None when none was made)."""
    figures: Figures | None
    occupancy: float | None = None
    """Resident warps over the SM's maximum (0 to 1)."""
    mma_kind: str | None = None
    intensity: float | None = None
    """The main loop's FLOPs per global byte (:meth:`irscope.core.capture.Capture.intensity`)."""
    intensity_verdict: str | None = None
    """``compute-bound tile`` or ``memory-bound tile`` against the target's ridge point."""
    launch_problem: str | None = None
    """Why it cannot launch on ``target`` (:func:`launch_problem`); None when it can."""

    @property
    def label(self) -> str:
        """``BLOCK_M=64,num_warps=4``: the configuration as one word."""
        return config_label(self.config)

    @property
    def cannot_launch(self) -> bool:
        """It compiled, but a block is over the target's shared memory, register or thread limits."""
        return self.launch_problem is not None

    @property
    def spills(self) -> bool:
        """It compiled and spills registers."""
        return bool(self.figures is not None and self.figures.spills)

    def to_json(self) -> dict[str, Any]:
        """The row object of ``irscope tune --json``: the configuration, the figures flat
        beside it, and the marks."""
        figures = (self.figures or _NO_FIGURES).to_json()
        return {"config": dict(self.config), "label": self.label, "target": self.target,
                "compiled": self.compiled, "failed_at": self.failed_at, "error": self.error,
                "capture_id": self.capture_id, **figures,
                "occupancy": None if self.occupancy is None else round(self.occupancy, 4),
                "mma_kind": self.mma_kind,
                "intensity": None if self.intensity is None else round(self.intensity, 2),
                "intensity_verdict": self.intensity_verdict,
                "cannot_launch": self.cannot_launch, "launch_problem": self.launch_problem,
                "spills_mark": self.spills}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "TuneRow":
        """The inverse of :meth:`to_json`."""
        compiled = bool(d.get("compiled"))
        return cls(dict(d.get("config") or {}), str(d.get("target", "")), compiled, d.get("failed_at"),
                   d.get("error"), d.get("capture_id"), Figures.from_json(d) if compiled else None,
                   d.get("occupancy"), d.get("mma_kind"), d.get("intensity"), d.get("intensity_verdict"),
                   d.get("launch_problem"))


_NO_FIGURES = Figures(None, None, None, None, None, None, None, None, None, None)


def config_label(config: dict[str, Any]) -> str:
    """``BLOCK_M=64,num_warps=4`` for ``{"BLOCK_M": 64, "num_warps": 4}``."""
    return ",".join(f"{k}={v}" for k, v in config.items())


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


def tune_row(config: dict[str, Any], target: str, cap: "Capture | None", error: str | None = None) -> TuneRow:
    """The row of one configuration: ``cap`` is its capture (None when the compile made
    none: then ``error`` says why)."""
    if cap is None or cap.failed:
        why = error or (cap.error if cap is not None else None) or "the compile made no capture"
        return TuneRow(dict(config), cap.target if cap is not None else target, False,
                       cap.failed_at if cap is not None else None, _first_line(why),
                       cap.id if cap is not None else None, None)
    occ = cap.occupancy
    inten = cap.intensity()
    return TuneRow(dict(config), cap.target, True, None, None, cap.id, figures_of(cap),
                   occupancy=occ.fraction if occ is not None else None, mma_kind=mma_kind(cap),
                   intensity=inten.ratio if inten is not None else None,
                   intensity_verdict=inten.verdict if inten is not None else None,
                   launch_problem=launch_problem(occ))


@dataclass(frozen=True)
class TuneTable:
    """An autotune exploration: one kernel compiled once per configuration of a grid."""

    kernel: str
    variant: str
    """The captured variant the grid starts from (its other constexprs and options stay)."""
    base_capture_id: int
    """That capture, in the bundle named by ``source``."""
    source: str
    """Path of the bundle that holds the base capture, relative to the folder of the
    bundle the table is attached to."""
    captures: str
    """Path of the bundle that holds the rows' captures (their ``capture_id``), relative
    to the same folder: the table's own bundle."""
    grid: tuple[tuple[str, tuple[Any, ...]], ...]
    """Key -> values, in the order given."""
    targets: tuple[str, ...]
    rows: tuple[TuneRow, ...]
    """Grid order (the last key varies fastest), per target."""
    triton_version: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> tuple[TuneRow, ...]:
        """The rows whose compile failed."""
        return tuple(r for r in self.rows if not r.compiled)

    @property
    def launchable(self) -> tuple[TuneRow, ...]:
        """The rows that compiled and can launch on their target."""
        return tuple(r for r in self.rows if r.compiled and not r.cannot_launch)

    def row(self, target: str | None = None, **config: Any) -> TuneRow:
        """The row of one configuration (every grid key given, ``BLOCK_M=64`` ...), on
        ``target`` (default: the table's only target). IrscopeError when none fits."""
        for r in self.rows:
            if (target is None or r.target == target) and all(str(r.config.get(k)) == str(v) for k, v in config.items()):
                return r
        raise IrscopeError(f"the tune table of {self.kernel} has no row {config_label(config) or '(empty)'}"
                           + (f" on {target}" if target else "")
                           + f" (it has: {', '.join(dict.fromkeys(r.label for r in self.rows))})")

    def to_json(self) -> dict[str, Any]:
        """The object of ``irscope tune --json`` (and the stored attachment)."""
        return {"kernel": self.kernel, "variant": self.variant, "base_capture_id": self.base_capture_id,
                "source": self.source, "captures": self.captures,
                "grid": [{"key": k, "values": list(v)} for k, v in self.grid], "targets": list(self.targets),
                "triton_version": self.triton_version, "rows": [r.to_json() for r in self.rows],
                "notes": list(self.notes)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "TuneTable":
        """The inverse of :meth:`to_json`. IrscopeError for a payload that is not one."""
        try:
            grid = tuple((str(g["key"]), tuple(g["values"])) for g in d["grid"])
            return cls(str(d["kernel"]), str(d["variant"]), int(d["base_capture_id"]), str(d["source"]),
                       str(d["captures"]), grid, tuple(d["targets"]), tuple(TuneRow.from_json(r) for r in d["rows"]),
                       d.get("triton_version"), tuple(d.get("notes") or ()))
        except (KeyError, TypeError, ValueError) as exc:
            raise IrscopeError(f"a tune attachment is damaged ({exc!r})") from None


def tune_tables(bundle: "Bundle", kernel: str | None = None) -> list[TuneTable]:
    """Every tune table attached to a bundle (one kernel's, with ``kernel``), oldest
    first; none in a bundle older than schema 6."""
    from irscope.store.attachments import attachments

    tables = [TuneTable.from_json(a.data) for a in attachments(bundle._store(), TUNE)]
    return [t for t in tables if kernel is None or t.kernel == kernel]
