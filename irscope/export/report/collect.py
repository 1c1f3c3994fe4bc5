"""What a report shows of one capture, read through the core API: its listing
metadata, its stage texts, and which lines of each stage belong to each Python line
(the rule of :mod:`irscope.ir.python_lines`, as ``irscope show`` and the TUI apply it)."""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.core import Capture
from irscope.ir.python_lines import python_line
from irscope.compiler.stages import LOWERING, STAGES

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
    """``2x4w registers``: resident blocks per SM, warps per block, what binds."""
    compile_seconds: float | None
    passes: int
    stages: tuple[str, ...]
    error: str | None

    def to_json(self) -> dict:
        return {"page": self.page, "bundle": self.bundle, "capture_id": self.capture_id, "kernel": self.kernel,
                "variant": self.variant, "target": self.target, "triton_version": self.triton_version,
                "num_warps": self.num_warps, "num_stages": self.num_stages, "registers": self.registers,
                "spills": self.spills, "shared": self.shared, "occupancy": self.occupancy,
                "compile_seconds": self.compile_seconds, "passes": self.passes, "stages": list(self.stages),
                "error": self.error}


@dataclass(frozen=True, slots=True)
class StageText:
    """One lowering stage as the page shows it."""

    name: str
    title: str
    text: str
    truncated: bool
    line_ops: dict[int, list[int]] = field(default_factory=dict)
    """Python line -> the (1-based) lines of this stage's text where its ops start."""


@dataclass(frozen=True, slots=True)
class SourceView:
    """The kernel's Python source with file numbering."""

    file: str | None
    first_line: int
    lines: tuple[str, ...]


def occupancy_text(capture: Capture) -> str | None:
    """``2x4w registers`` (as ``irscope ls`` and ``irscope diff`` say it), or None."""
    occ = capture.occupancy
    if occ is None:
        return None
    per_block = occ.warps_per_sm // occ.blocks_per_sm if occ.blocks_per_sm else 0
    return f"{occ.blocks_per_sm}x{per_block}w {occ.limited_by}"


def kernel_meta(capture: Capture, page: str, bundle: str) -> KernelMeta:
    """The index row of ``capture``."""
    r = capture.row
    res = capture.resources
    stages_opt = capture.options.get("num_stages", capture.metadata.get("num_stages"))
    return KernelMeta(
        page=page, bundle=bundle, capture_id=r.id, kernel=r.kernel, variant=r.variant, target=r.target,
        triton_version=r.triton_version, num_warps=res.num_warps,
        num_stages=stages_opt if isinstance(stages_opt, int) else None, registers=res.registers,
        spills=res.spills, shared=res.shared, occupancy=occupancy_text(capture),
        compile_seconds=r.compile_seconds, passes=r.passes, stages=tuple(r.stages), error=r.error)


def source_view(capture: Capture) -> SourceView | None:
    """The stored Python source of the kernel, or None when the capture has none."""
    src = capture.source
    if not src.text:
        return None
    return SourceView(src.file, src.first_line or 1, tuple(src.text.splitlines()))


def _cut(text: str) -> tuple[str, bool]:
    if len(text) <= MAX_STAGE_CHARS:
        return text, False
    return text[: text.rfind("\n", 0, MAX_STAGE_CHARS) + 1], True


def stage_texts(capture: Capture) -> list[StageText]:
    """Every text lowering stage the capture holds, in pipeline order, with the
    lines of its ops per Python line. One walk over each stage's ops."""
    out = []
    file = capture.row.file
    for name in LOWERING:
        if name not in capture.stages:
            continue
        st = capture.stage(name)
        if st.binary:
            continue
        text, cut = _cut(st.text)
        line_ops: dict[int, list[int]] = {}
        ops = st.module.ops()  # parsers never raise on text: unknown lines are <unknown> ops
        last = text.count("\n") + 1
        for op in ops:
            pl = python_line(op.location, file)
            if pl is not None and op.line and op.line <= last:
                line_ops.setdefault(pl, []).append(op.line)
        info = STAGES.get(name)
        out.append(StageText(name, info.display_name if info else name, text, cut,
                             {k: sorted(set(v)) for k, v in sorted(line_ops.items())}))
    return out
