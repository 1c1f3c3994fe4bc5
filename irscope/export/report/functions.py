"""The user functions a kernel page's Python pane shows: the kernel, then each
``@triton.jit`` helper (:func:`irscope.core.user_functions.user_functions`), and for
both charge modes the stage lines of the ops charged to each of their statements.

The page's script keys a statement as ``"F:L"`` (function index, statement first line):
two functions of different files may share line numbers. With one function (a kernel
that calls no helper) the page shows no helper section and no switch."""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.core import Capture
from irscope.core.user_functions import CHARGES, OWN, UserFunctions, function_line_ops, user_functions
from irscope.export.report.collect import StageText


@dataclass(frozen=True, slots=True)
class FunctionsView:
    """The sections of the Python pane and their ops in every shown stage."""

    functions: dict[str, UserFunctions]
    """Charge mode -> the core's answer (same functions and lines in both)."""
    ops: dict[str, dict[str, dict[str, list[int]]]] = field(default_factory=dict)
    """Charge mode -> stage -> ``"F:L"`` -> the (1-based) stage text lines of its ops."""

    @property
    def has_helpers(self) -> bool:
        return bool(self.functions[OWN].helpers)

    def to_json(self) -> dict:
        own = self.functions[OWN]
        return {
            "functions": [{"index": f.index, "name": f.name, "file": f.file, "first_line": f.first_line,
                           "last_line": f.last_line, "kernel": f.kernel, "call_lines": list(f.call_lines),
                           "heading": f.heading(), "lines": [ln.text for ln in f.lines],
                           "statement_of": {str(ln.line): ln.statement for ln in f.lines
                                            if ln.statement != ln.line}}
                          for f in own.functions],
            "ops": self.ops,
        }


def function_views(capture: Capture, stages: list[StageText]) -> FunctionsView:
    """The user functions of ``capture`` and, per charge mode, the lines of the ``stages``
    (as the page shows them: a cut text keeps the ops of its kept lines) that each of
    their statements owns."""
    got = {mode: user_functions(capture, mode) for mode in CHARGES}
    last = {s.name: s.text.count("\n") + 1 for s in stages}
    ops: dict[str, dict[str, dict[str, list[int]]]] = {}
    for mode, uf in got.items():
        by_stage: dict[str, dict[str, list[int]]] = {s.name: {} for s in stages}
        for fn in uf.functions:
            for ln in fn.lines:
                if ln.statement != ln.line or not ln.counts:
                    continue
                for stage, found in function_line_ops(capture, fn, ln.line, mode).items():
                    if stage not in by_stage:
                        continue
                    lines = sorted({op.line for op in found if op.line and op.line <= last[stage]})
                    if lines:
                        by_stage[stage][f"{fn.index}:{ln.line}"] = lines
        ops[mode] = by_stage
    return FunctionsView(got, ops)
