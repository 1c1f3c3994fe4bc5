"""What-if experiments kept in a bundle: pass-ablation tables (and autotune tables),
as typed results the views read.

The what-if layer (:mod:`irscope.whatif`) compiles the replays and configurations
and saves each table as a bundle attachment (``irscope.store.attachments``, kinds
:data:`ABLATION` and :data:`TUNE`); this module holds the dataclasses, computes the
figures of a compiled capture from the core (resources, occupancy, the SASS
instruction classes of :mod:`irscope.ir.instr_classes`, the structural diff of
:mod:`irscope.irdiff`), ranks an ablation's passes by effect, and reads the tables
back. Nothing here compiles: a table is computed from captures already in bundles.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from irscope.compiler.dialects import current_op_name
from irscope.compiler.stages import SASS, TTGIR
from irscope.errors import IrscopeError
from irscope.ir.instr_classes import CLASSES, classify
from irscope.ir.types import TensorType

if TYPE_CHECKING:
    from irscope.core.bundle import Bundle
    from irscope.core.capture import Capture
    from irscope.ir import Module, Op

ABLATION = "ablation"
"""Attachment kind of a pass-ablation table (on the ablated capture)."""
TUNE = "tune"
"""Attachment kind of an autotune-exploration table."""

# TTGIR ops that copy global memory to shared memory asynchronously (cp.async, TMA, AMD's
# direct-to-LDS loads): what the software pipeliner makes of a loop's loads.
ASYNC_COPY_OPS = frozenset({"ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local",
                            "ttng.async_tma_gather", "amdgpu.buffer_load_to_local", "amdg.buffer_load_to_local"})
# Dot ops that are tensor-core MMAs whatever their operands' layouts.
_MMA_DOT_OPS = frozenset({"ttng.warp_group_dot", "ttng.tc_gen5_mma", "ttng.tc_gen5_mma_scaled"})
# A tt.dot is a tensor-core MMA once accelerate-matmul gave its result an MMA layout.
_PLAIN_DOT_OPS = frozenset({"tt.dot", "tt.dot_scaled"})
_MMA_ENCODINGS = ("nvidia_mma", "amd_mfma", "amd_wmma")


# -- the figures of one compiled capture ------------------------------------------

@dataclass(frozen=True, slots=True)
class Figures:
    """What one compile produced, in the figures an experiment table compares; None
    where the capture does not know (no SASS without the CUDA tools...)."""

    registers: int | None
    spills: int | None
    """Spilled bytes, stores plus loads."""
    shared: int | None
    """Shared memory the launch uses, in bytes."""
    blocks_per_sm: int | None
    warps_per_sm: int | None
    """Resident warps per SM (the occupancy)."""
    limited_by: str | None
    """What binds the occupancy: ``warps``, ``registers``, ``shared`` or ``blocks``."""
    sass_by_class: dict[str, int] | None
    """SASS instructions per class (:data:`irscope.ir.instr_classes.CLASSES`, zeros too)."""
    async_copies: int | None
    """TTGIR asynchronous global-to-shared copies (cp.async, TMA)."""
    mma: int | None
    """TTGIR dots lowered to tensor-core MMAs (``warp_group_dot``, an MMA-layout ``tt.dot``...)."""
    ttgir_ops: int | None
    """Ops of the final TTGIR (what a diff size is measured against)."""

    @property
    def sass_total(self) -> int | None:
        """SASS instructions in all classes."""
        return None if self.sass_by_class is None else sum(self.sass_by_class.values())

    def to_json(self) -> dict[str, Any]:
        """Every field, plus ``sass_total``."""
        return {"registers": self.registers, "spills": self.spills, "shared": self.shared,
                "blocks_per_sm": self.blocks_per_sm, "warps_per_sm": self.warps_per_sm,
                "limited_by": self.limited_by,
                "sass_by_class": dict(self.sass_by_class) if self.sass_by_class is not None else None,
                "sass_total": self.sass_total, "async_copies": self.async_copies, "mma": self.mma,
                "ttgir_ops": self.ttgir_ops}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Figures":
        """The inverse of :meth:`to_json` (unknown keys ignored, missing ones None)."""
        sass = d.get("sass_by_class")
        return cls(d.get("registers"), d.get("spills"), d.get("shared"), d.get("blocks_per_sm"),
                   d.get("warps_per_sm"), d.get("limited_by"), dict(sass) if isinstance(sass, dict) else None,
                   d.get("async_copies"), d.get("mma"), d.get("ttgir_ops"))


def figures_of(cap: "Capture") -> Figures:
    """The :class:`Figures` of one capture, from the core's readers. A failed compile
    has what its stages hold (often nothing)."""
    r = cap.resources
    occ = cap.occupancy
    ttgir = cap.stage(TTGIR).module if TTGIR in cap.stages else None
    async_copies = mma = ops = None
    if ttgir is not None:
        async_copies, mma, ops = ttgir_counts(ttgir)
    return Figures(registers=r.registers, spills=r.spills, shared=r.shared,
                   blocks_per_sm=occ.blocks_per_sm if occ is not None else None,
                   warps_per_sm=occ.warps_per_sm if occ is not None else None,
                   limited_by=occ.limited_by if occ is not None else None,
                   sass_by_class=sass_classes(cap), async_copies=async_copies, mma=mma, ttgir_ops=ops)


def sass_classes(cap: "Capture") -> dict[str, int] | None:
    """SASS instructions per class (every class, zeros too); None when the capture has
    no SASS (a failed compile, no CUDA tools, an AMD target)."""
    if SASS not in cap.stages or cap.stage(SASS).binary:
        return None
    counts: Counter[str] = Counter()
    for op in cap.stage(SASS).module.ops():
        if op.name and op.name != "<unknown>":
            counts[classify(op.name, SASS)] += 1
    return {c: counts.get(c, 0) for c in CLASSES}


def ttgir_counts(module: "Module") -> tuple[int, int, int]:
    """(asynchronous copies, tensor-core MMAs, all ops) of a parsed TTGIR module."""
    copies = mma = ops = 0
    for op in module.ops():
        ops += 1
        name = current_op_name(op.name)
        if name in ASYNC_COPY_OPS:
            copies += 1
        elif name in _MMA_DOT_OPS or (name in _PLAIN_DOT_OPS and _has_mma_result(op, module)):
            mma += 1
    return copies, mma, ops


def _has_mma_result(op: "Op", module: "Module") -> bool:
    """Whether a dot's result carries an MMA layout (resolved through the module's aliases)."""
    for t in op.signature(module.encodings).results:
        if isinstance(t, TensorType) and t.encoding_ref:
            text = module.encodings.get(t.encoding_ref) or t.encoding_ref
            if any(e in text for e in _MMA_ENCODINGS):
                return True
    return False


def diff_size(before: "Capture", after: "Capture", stage: str = TTGIR) -> int | None:
    """Ops the structural diff of ``stage`` finds added, removed, changed or moved
    between two captures (0: equal up to renaming and locations); None when one of
    them lacks the stage."""
    from irscope.irdiff.engine import diff_counts

    if stage not in before.stages or stage not in after.stages:
        return None
    return sum(diff_counts(before.stage(stage).module, after.stage(stage).module, stage).values())


# -- pass ablation ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class AblationRow:
    """One replay of an ablation: the kernel compiled without one pass."""

    pass_name: str
    """The pass left out, as the capture names it (its MLIR argument, ``tritongpu-pipeline``);
    '' for the control replay, which leaves nothing out."""
    compiled: bool
    failed_at: str | None
    """Where the compile stopped (pass, else stage) when it failed."""
    error: str | None
    """One line: why it failed."""
    capture_id: int | None
    """The replay's capture in the ablation's replay bundle (None when no capture was made)."""
    figures: Figures | None
    diff_size: int | None
    """Ops the structural diff of ``stage`` against the original finds changed (0: the same IR)."""
    effect: float
    """The effect score (:func:`effect_score`); ``inf`` when the compile fails."""
    rank: int = 0
    """1 for the largest effect; 0 for the control row."""
    stage: str = TTGIR
    """The pipeline the pass belongs to (``ttgir``; ``llir`` for a pass of the LLVM
    lowering, replayed from the TTGIR), and the stage ``diff_size`` compares."""
    replayed: bool = True
    """False only with ``irscope passes --ablate --skip-unchanged``, for a pass that left
    the IR byte for byte unchanged at every run in the original compile: leaving it out
    cannot change anything, so its row is the control's, not a replay of its own."""

    # The figures by name (None for a compile that failed).
    @property
    def registers(self) -> int | None:
        return self.figures.registers if self.figures else None

    @property
    def spills(self) -> int | None:
        return self.figures.spills if self.figures else None

    @property
    def shared(self) -> int | None:
        return self.figures.shared if self.figures else None

    @property
    def occupancy(self) -> int | None:
        """Resident warps per SM."""
        return self.figures.warps_per_sm if self.figures else None

    @property
    def sass_by_class(self) -> dict[str, int] | None:
        return self.figures.sass_by_class if self.figures else None

    @property
    def async_copies(self) -> int | None:
        return self.figures.async_copies if self.figures else None

    @property
    def mma(self) -> int | None:
        return self.figures.mma if self.figures else None

    @property
    def no_effect(self) -> bool:
        """It compiled, and leaving the pass out changed nothing measured."""
        return self.compiled and self.effect == 0

    def to_json(self) -> dict[str, Any]:
        """The row object of ``irscope passes --ablate --json``: the figures flat beside
        the pass, its rank and effect (``null`` for a failed compile's infinite effect)."""
        figures = (self.figures or _NO_FIGURES).to_json()
        return {"pass": self.pass_name, "stage": self.stage, "rank": self.rank, "replayed": self.replayed,
                "compiled": self.compiled, "failed_at": self.failed_at, "error": self.error,
                "capture_id": self.capture_id,
                **figures, "diff_size": self.diff_size,
                "effect": None if math.isinf(self.effect) else self.effect}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "AblationRow":
        """The inverse of :meth:`to_json`."""
        compiled = bool(d.get("compiled"))
        effect = d.get("effect")
        return cls(str(d.get("pass", "")), compiled, d.get("failed_at"), d.get("error"), d.get("capture_id"),
                   Figures.from_json(d) if compiled else None, d.get("diff_size"),
                   math.inf if effect is None else float(effect), int(d.get("rank", 0)), str(d.get("stage", TTGIR)),
                   bool(d.get("replayed", True)))


_NO_FIGURES = Figures(None, None, None, None, None, None, None, None, None, None)


def _relative(a: float | None, b: float | None) -> float:
    """How far ``b`` is from ``a``, in [0, 1): |b - a| / max(|a|, |b|, 1); 0 when
    either is unknown."""
    if a is None or b is None:
        return 0.0
    return abs(b - a) / max(abs(a), abs(b), 1)


def _mix_distance(a: dict[str, int] | None, b: dict[str, int] | None) -> float:
    """The SASS mixes' L1 distance over the larger total, in [0, 1]; 0 when unknown."""
    if a is None or b is None:
        return 0.0
    moved = sum(abs(a.get(c, 0) - b.get(c, 0)) for c in set(a) | set(b))
    return moved / max(sum(a.values()), sum(b.values()), 1)


def effect_score(base: Figures, fig: Figures | None, diff: int | None, diff_ops: int | None = None) -> float:
    """How much leaving a pass out changed the compiled kernel (the ranking of
    ``irscope passes --ablate``).

    A replay that fails to compile scores ``inf``: the pipeline cannot do without
    the pass, the largest effect there is. Otherwise the score is the sum of eight
    terms, each in [0, 1], one per figure compared with the original compile:
    registers, spilled bytes, shared memory, resident warps per SM, TTGIR
    asynchronous copies and MMAs (each the relative change |b - a| / max(|a|, |b|, 1)),
    the SASS instruction mix (the L1 distance of the class counts over the larger
    total) and the structural diff size over the original's op count in the stage
    diffed (``diff_ops``; default the TTGIR's), capped at 1. Every term weighs the same, so a pass that changes one figure a
    lot can rank beside one that changes many a little; 0 means that nothing
    measured changed. A figure unknown on either side adds nothing.
    """
    if fig is None:
        return math.inf
    terms = (_relative(base.registers, fig.registers), _relative(base.spills, fig.spills),
             _relative(base.shared, fig.shared), _relative(base.warps_per_sm, fig.warps_per_sm),
             _relative(base.async_copies, fig.async_copies), _relative(base.mma, fig.mma),
             _mix_distance(base.sass_by_class, fig.sass_by_class),
             min(1.0, diff / max((base.ttgir_ops if diff_ops is None else diff_ops) or 0, 1))
             if diff is not None else 0.0)
    return sum(terms)


def ranked(rows: "list[AblationRow] | tuple[AblationRow, ...]") -> tuple[AblationRow, ...]:
    """The rows by effect, largest first (failed compiles first, by pass name), ties
    broken by the diff size, then the pass name; ``rank`` set from 1."""
    def key(r: AblationRow) -> tuple[float, int, str]:
        return (-r.effect, -(r.diff_size or 0), r.pass_name)

    return tuple(replace(r, rank=i) for i, r in enumerate(sorted(rows, key=key), start=1))


def ablation_row(pass_name: str, original: "Capture", replay: "Capture | None", error: str | None = None,
                 failed_at: str | None = None, base: Figures | None = None, stage: str = TTGIR) -> AblationRow:
    """The row of one replay of ``original`` without ``pass_name``, a pass of the
    ``stage`` pipeline: ``replay`` is its capture (None when the replay made none:
    then ``error`` says why). ``base`` is ``figures_of(original)``, passed in so a
    table computes it once."""
    base = base if base is not None else figures_of(original)
    if replay is None or replay.failed:
        where = failed_at or (replay.failed_at if replay is not None else None)
        why = error or (replay.error if replay is not None else None) or "the replay made no capture"
        return AblationRow(pass_name, False, where, _first_line(why), replay.id if replay is not None else None,
                           None, None, math.inf, stage=stage)
    fig = figures_of(replay)
    diff = diff_size(original, replay, stage)
    ops = base.ttgir_ops
    if stage != TTGIR and stage in original.stages and not original.stage(stage).binary:
        ops = sum(1 for _ in original.stage(stage).module.ops())
    return AblationRow(pass_name, True, None, None, replay.id, fig, diff, effect_score(base, fig, diff, ops),
                       stage=stage)


def _first_line(text: str) -> str:
    """One line of an error: its first non-blank line."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


@dataclass(frozen=True)
class Ablation:
    """A pass-ablation table: one capture replayed from its TTIR once per pass of its
    TTGIR pipeline that can be left out, ranked by effect."""

    kernel: str
    target: str
    variant: str
    capture_id: int
    """The ablated capture, in the bundle the table is attached to."""
    replays: str
    """Path of the bundle that holds the replays (their ``capture_id``), relative to
    the folder of the bundle the table is attached to (:meth:`replays_path`)."""
    stage: str
    """The pipeline whose passes were left out (``ttgir``)."""
    from_stage: str
    """The stage the replays start from (``ttir``)."""
    baseline: Figures
    """The original compile's figures, which every row is compared with."""
    rows: tuple[AblationRow, ...]
    """Ranked, largest effect first."""
    control: AblationRow | None = None
    """The replay that leaves nothing out: its diff size should be 0 (the replay
    reproduces the original); None when it was not run."""
    triton_version: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> tuple[AblationRow, ...]:
        """The rows whose compile failed."""
        return tuple(r for r in self.rows if not r.compiled)

    def replays_path(self, bundle_path: str) -> str:
        """The replay bundle's path, for the table read from the bundle at
        ``bundle_path`` (``replays`` is stored relative to that bundle's folder)."""
        return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(bundle_path)), self.replays))

    def row(self, pass_name: str) -> AblationRow:
        """The row of one pass. IrscopeError (listing the passes) when it has none."""
        for r in self.rows:
            if r.pass_name == pass_name:
                return r
        raise IrscopeError(f"the ablation of {self.kernel} has no pass {pass_name!r} "
                           f"(it has: {', '.join(r.pass_name for r in self.rows)})")

    def to_json(self) -> dict[str, Any]:
        """The object of ``irscope passes --ablate --json`` (and the stored attachment)."""
        return {"kernel": self.kernel, "target": self.target, "variant": self.variant,
                "capture_id": self.capture_id, "replays": self.replays, "stage": self.stage,
                "from_stage": self.from_stage, "triton_version": self.triton_version,
                "baseline": self.baseline.to_json(),
                "control": self.control.to_json() if self.control is not None else None,
                "rows": [r.to_json() for r in self.rows], "notes": list(self.notes)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Ablation":
        """The inverse of :meth:`to_json`. IrscopeError for a payload that is not one."""
        try:
            control = d.get("control")
            return cls(str(d["kernel"]), str(d["target"]), str(d["variant"]), int(d["capture_id"]),
                       str(d["replays"]), str(d["stage"]), str(d["from_stage"]),
                       Figures.from_json(d["baseline"]), tuple(AblationRow.from_json(r) for r in d["rows"]),
                       AblationRow.from_json(control) if control else None, d.get("triton_version"),
                       tuple(d.get("notes") or ()))
        except (KeyError, TypeError, ValueError) as exc:
            raise IrscopeError(f"an ablation attachment is damaged ({exc!r})") from None


def ablations(bundle: "Bundle", capture_id: int | None = None) -> list[Ablation]:
    """Every ablation table attached to a bundle (one capture's, with ``capture_id``),
    oldest first; none in a bundle older than schema 6."""
    from irscope.store.attachments import attachments

    return [Ablation.from_json(a.data) for a in attachments(bundle._store(), ABLATION, capture_id)]


def ablation_of(cap: "Capture") -> Ablation | None:
    """The latest ablation table of one capture; None when it has none."""
    found = ablations(cap.bundle, cap.id)
    return found[-1] if found else None
