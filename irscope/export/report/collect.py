"""What a report shows of one capture, read through the core API: its listing
metadata, its stage texts, and which lines of each stage belong to each Python
statement (:meth:`irscope.core.Capture.ops_by_line`, the rule ``irscope show`` and the
app apply: a statement spanning lines owns their ops, shown on its first line)."""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.core import Capture
from irscope.compiler.stages import LOWERING, display_name

MAX_STAGE_CHARS = 3_000_000
"""A stage text longer than this is cut at a line boundary (the page says so; the
whole text is one ``irscope cat`` away). No sample comes near: the largest LLVM IR
of the samples is 0.8 MB."""


@dataclass(frozen=True, slots=True)
class KernelMeta:
    """One row of the index: a capture's identity and headline figures."""

    page: str
    """The kernel page's file name in the report."""
    bundle: str
    """The label of the bundle it comes from."""
    capture_id: int
    kernel: str
    variant: str
    target: str
    triton_version: str | None
    num_warps: int | None
    num_stages: int | None
    registers: int | None
    spills: int | None
    shared: int | None
    occupancy: str | None
    """``2x4w regs``: resident blocks per SM, warps per block, what binds
    (:func:`irscope.core.occupancy_text`)."""
    compile_seconds: float | None
    passes: int
    stages: tuple[str, ...]
    error: str | None
    failed_at: str | None = None
    """Where a failed compile stopped: the pass, else the stage (the summary's)."""

    def to_json(self) -> dict:
        return {"page": self.page, "bundle": self.bundle, "capture_id": self.capture_id, "kernel": self.kernel,
                "variant": self.variant, "target": self.target, "triton_version": self.triton_version,
                "num_warps": self.num_warps, "num_stages": self.num_stages, "registers": self.registers,
                "spills": self.spills, "shared": self.shared, "occupancy": self.occupancy,
                "compile_seconds": self.compile_seconds, "passes": self.passes, "stages": list(self.stages),
                "error": self.error, "failed_at": self.failed_at}


@dataclass(frozen=True, slots=True)
class StageText:
    """One lowering stage as the page shows it."""

    name: str
    title: str
    text: str
    truncated: bool
    line_ops: dict[int, list[int]] = field(default_factory=dict)
    """Python statement (its first line) -> the (1-based) lines of this stage's text
    where its ops start."""


@dataclass(frozen=True, slots=True)
class SourceView:
    """The kernel's Python source with file numbering."""

    file: str | None
    first_line: int
    lines: tuple[str, ...]
    statement_of: dict[int, int] = field(default_factory=dict)
    """Line -> its statement's first line, for lines that continue a statement (a click
    there selects the statement)."""


def kernel_meta(capture: Capture, page: str, bundle: str) -> KernelMeta:
    """The index row of ``capture``: its summary (:attr:`irscope.core.Capture.summary`,
    the figures ``irscope ls`` and the app's browser show), with its page and bundle."""
    s = capture.summary
    return KernelMeta(
        page=page, bundle=bundle, capture_id=s.id, kernel=s.kernel, variant=s.variant, target=s.target,
        triton_version=s.triton_version, num_warps=s.num_warps, num_stages=s.num_stages, registers=s.registers,
        spills=s.spills, shared=s.shared, occupancy=s.occupancy_text, compile_seconds=s.compile_seconds,
        passes=s.passes, stages=s.stages, error=s.error, failed_at=s.failed_at)


def source_view(capture: Capture) -> SourceView | None:
    """The stored Python source of the kernel, or None when the capture has none."""
    src = capture.source
    if not src.text:
        return None
    return SourceView(src.file, src.first_line or 1, tuple(src.text.splitlines()), capture.statements.spanning())


def _cut(text: str) -> tuple[str, bool]:
    if len(text) <= MAX_STAGE_CHARS:
        return text, False
    return text[: text.rfind("\n", 0, MAX_STAGE_CHARS) + 1], True


def stage_texts(capture: Capture) -> list[StageText]:
    """Every text lowering stage the capture holds, in pipeline order, with the
    lines of its ops per Python line. One walk over each stage's ops."""
    out = []
    for name in LOWERING:
        if name not in capture.stages:
            continue
        full = capture.stage(name).text
        if isinstance(full, bytes):  # a binary stage
            continue
        text, cut = _cut(full)
        line_ops: dict[int, list[int]] = {}
        last = text.count("\n") + 1
        # parsers never raise on text: unknown lines are <unknown> ops
        for pl, ops in capture.ops_by_line(name).items():
            for op in ops:
                if op.line and op.line <= last:
                    line_ops.setdefault(pl, []).append(op.line)
        out.append(StageText(name, display_name(name), text, cut,
                             {k: sorted(set(v)) for k, v in sorted(line_ops.items())}))
    return out
