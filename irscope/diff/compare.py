"""One comparison, whole: two captures (or two passes, or two IR files) -> a
:class:`Comparison` holding every section ``irscope diff`` prints, in its order."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

from irscope.core import Capture, IRFile
from irscope.core.files import DUMP
from irscope.errors import IrscopeError
from irscope.ir import Module
from irscope.compiler.stages import LOWERING, MLIR, pass_stage

from irscope.irdiff.engine import diff_modules
from .heat import HeatDelta, heat_delta
from .lines import LineDelta, line_deltas, line_note
from .metadata import COMPILE, CONSTEXPRS, FieldDelta, metadata_delta
from .mix import MIX_STAGES, MixDelta, capture_mix, mix_delta
from irscope.irdiff.model import StageDiff
from .pipeline import PipelineDelta, pipeline_delta


@dataclass
class Comparison:
    """Everything one ``irscope diff A B`` reports."""

    a: str
    b: str
    """How the sides are named."""
    stages: dict[str, StageDiff]
    """1. the structural diff per stage (or the one format of two files)."""
    metadata: list[FieldDelta] = field(default_factory=list)
    """2. compile options and constexprs, then resources and occupancy."""
    instruction_mix: dict[str, MixDelta] = field(default_factory=dict)
    """3. PTX and SASS instructions by class."""
    passes: PipelineDelta | None = None
    """4. pass pipeline differences."""
    lines: list[LineDelta] = field(default_factory=list)
    """5. per-Python-line op counts that changed."""
    notes: list[str] = field(default_factory=list)
    heat: HeatDelta | None = None
    """6. per-Python-line measured samples, when both captures have a profile."""

    def to_json(self) -> dict:
        """The ``irscope diff --json`` object (docs/cli-json.md)."""
        compile_ = [d.to_json() for d in self.metadata if d.group in (COMPILE, CONSTEXPRS)]
        resources = [d.to_json() for d in self.metadata if d.group not in (COMPILE, CONSTEXPRS)]
        return {"a": self.a, "b": self.b, "stages": {s: d.to_json() for s, d in self.stages.items()},
                "metadata": compile_, "resources": resources,
                "instruction_mix": {s: m.to_json() for s, m in self.instruction_mix.items()},
                "passes": self.passes.to_json() if self.passes is not None else None,
                "lines": [ln.to_json() for ln in self.lines], "notes": self.notes,
                "heat": self.heat.to_json() if self.heat is not None else None}


def only_line(d: StageDiff, line: int | Collection[int]) -> StageDiff:
    """The part of a stage diff that belongs to Python ``line`` (or to any line of a
    statement: :func:`statement_lines`)."""
    lines = (line,) if isinstance(line, int) else line
    return replace(d, changes=tuple(c for c in d.changes if c.python_line in lines))


def on_statements(d: StageDiff, capture: Capture) -> StageDiff:
    """``d`` with each change's Python line moved to its statement's first line in
    ``capture``'s source, the line every view shows an op on."""
    heads = capture.statements
    return replace(d, changes=tuple(c if c.python_line is None else replace(c, python_line=heads.head(c.python_line))
                                    for c in d.changes))


def statement_lines(a: Capture, b: Capture, line: int) -> frozenset[int]:
    """Every line of ``line``'s statement on either side: the ops of a statement spanning
    lines are those of all its lines (:meth:`irscope.core.Capture.ops_at_line`)."""
    return frozenset(a.statement(line).lines) | frozenset(b.statement(line).lines)


def compare_captures(a: Capture, b: Capture, *, stages: tuple[str, ...] | None = None,
                     line: int | None = None, a_label: str = "A", b_label: str = "B") -> Comparison:
    """Two captures, every section. ``stages`` limits the IR diff (and the line
    counts) to some stages; ``line`` keeps only what that Python line became."""
    want = tuple(s for s in (stages or LOWERING) if s in LOWERING)
    both = [s for s in want if s in a.stages and s in b.stages]
    out = Comparison(a_label, b_label, {})
    for s in both:
        sa, sb = a.stage(s), b.stage(s)
        if sa.binary or sb.binary:
            continue
        d = on_statements(diff_modules(sa.module, sb.module, s), b)
        out.stages[s] = only_line(d, statement_lines(a, b, line)) if line is not None else d
    missing = [s for s in want if (s in a.stages) != (s in b.stages)]
    if missing:
        out.notes.append(f"only one side has stage(s) {', '.join(missing)}")
    out.metadata = metadata_delta(a, b)
    for s in MIX_STAGES:
        if s in both:
            ma, mb = capture_mix(a, s), capture_mix(b, s)
            if ma is not None and mb is not None:
                out.instruction_mix[s] = mix_delta(ma, mb)
    if a.pass_count or b.pass_count:
        out.passes = pipeline_delta(a.passes(), b.passes())
    out.lines = every_line = line_deltas(a, b, tuple(both))
    if line is not None:  # per-line counts sit on each statement's first line
        heads = {a.statement(line).first, b.statement(line).first}
        out.lines = [ln for ln in out.lines if ln.line in heads]
    out.heat, heat_note = heat_delta(a, b, every_line)
    if out.heat is not None and line is not None:  # the statement's lines only
        keep = statement_lines(a, b, line)
        out.heat = replace(out.heat, lines=tuple(h for h in out.heat.lines if h.line in keep))
    note = line_note(a, b)
    for n in (note, heat_note):
        if n:
            out.notes.append(n)
    return out


def change_counts(a: Capture, b: Capture, stages: tuple[str, ...] | None = None) -> dict[str, int]:
    """Per stage both captures hold: how many changes the structural diff finds (the
    two-bundle summary's headline)."""
    out = {}
    for s in stages or LOWERING:
        if s in a.stages and s in b.stages and s in LOWERING:
            sa, sb = a.stage(s), b.stage(s)
            if not (sa.binary or sb.binary):
                out[s] = len(diff_modules(sa.module, sb.module, s).changes)
    return out


def pass_module(capture: Capture, index: int) -> tuple[str, Module]:
    """(stage name to report it under, parsed module) of pass snapshot ``index``."""
    p = capture.pass_at(index)
    return pass_stage(p.kind), p.module


def compare_passes(a: Capture, ia: int, b: Capture, ib: int, *, line: int | None = None,
                   a_label: str = "A", b_label: str = "B") -> Comparison:
    """Two pass snapshots (of one capture or two)."""
    sa, ma = pass_module(a, ia)
    sb, mb = pass_module(b, ib)
    if sa != sb:
        raise IrscopeError(f"pass {ia} is {sa} and pass {ib} is {sb}: only one format can be compared")
    d = on_statements(diff_modules(ma, mb, sa), b)
    return Comparison(a_label, b_label, {sa: only_line(d, statement_lines(a, b, line)) if line is not None else d})


def compare_files(a: IRFile, b: IRFile, *, line: int | None = None) -> Comparison:
    """Two IR files of one format; one entry in ``stages``, named by the format. Two
    dump streams compare their last snapshots."""
    if a.format != b.format:
        raise IrscopeError(f"{a.path} is {a.format} and {b.path} is {b.format}: give two files of one format "
                           f"(or name it with --format)")
    fmt = a.format
    stage = fmt
    if fmt == DUMP:
        kinds = {s.family for s in a.snapshots[-1:] + b.snapshots[-1:]}
        stage = pass_stage(kinds.pop()) if len(kinds) == 1 else MLIR
    d = diff_modules(a.module, b.module, stage)
    d = replace(d, stage=fmt)
    out = Comparison(a.path, b.path, {fmt: only_line(d, line) if line is not None else d})
    if fmt == DUMP:
        out.notes.append("dump streams: their last snapshots are compared (irscope diff --passes steps through one)")
    return out
