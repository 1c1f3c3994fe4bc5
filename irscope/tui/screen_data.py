"""What the screens read from the bundle, computed off the UI thread.

Pure functions that build plain results (rows of the browser, per-stage indexes of
the kernel view); the screens call them from ``@work(thread=True)`` workers and hand
the results back with ``call_from_thread`` or through the worker's result, so reading
or parsing a bundle never blocks a key press.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.text import Text

from irscope.errors import IrscopeError
from irscope.ir.python_lines import python_line
from irscope.compiler.units import human_bytes

if TYPE_CHECKING:
    from textual.app import App

    from irscope.core import Bundle, Capture
    from irscope.ir import Module, Op

# -- the kernel browser ---------------------------------------------------------

BROWSER_COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "#"), ("kernel", "kernel"), ("variant", "variant"), ("target", "target"),
    ("triton", "triton"), ("warps", "warps"), ("stages", "stages"), ("regs", "regs"),
    ("spills", "spills"), ("shared", "shared"), ("occupancy", "occupancy"),
    ("compile", "compile"), ("status", "status"),
)
"""(key, header) of the browser table's data columns, in order."""

VARIANT_WIDTH = 24
"""The variant column's widest (longer labels end in an ellipsis; the filter sees all)."""

_NUMERIC = {"id", "warps", "stages", "regs", "spills", "shared", "compile"}
_FIELD = re.compile(r",(?=[A-Za-z_][\w.]*=)")
_LIMIT = {"registers": "regs", "shared": "smem", "warps": "warps", "blocks": "blocks"}


def variant_fields(label: str) -> list[str]:
    """``'BLOCK=64,num_warps=4'`` -> ``['BLOCK=64', 'num_warps=4']``."""
    return [f for f in _FIELD.split(label or "") if f]


def _short_variants(bundle: "Bundle") -> dict[tuple[str, str], str]:
    """(kernel, label) -> the fields that differ between the kernel's variants."""
    by_kernel: dict[str, list[str]] = {}
    for c in bundle.captures():
        by_kernel.setdefault(c.kernel, [])
        if c.variant not in by_kernel[c.kernel]:
            by_kernel[c.kernel].append(c.variant)
    out = {}
    for kernel, labels in by_kernel.items():
        split = {lab: variant_fields(lab) for lab in labels}
        counts: dict[str, int] = {}
        for fields in split.values():
            for f in set(fields):
                counts[f] = counts.get(f, 0) + 1
        for lab, fields in split.items():
            # warps and stages have their own columns
            keep = [f for f in fields if counts[f] < len(labels)
                    and not f.startswith(("num_warps=", "num_stages="))]
            out[(kernel, lab)] = " ".join(keep) if keep else "-"
    return out


@dataclass(frozen=True, slots=True)
class BrowserRow:
    """One capture as the browser shows it."""

    capture: "Capture"
    cells: dict[str, Text]
    """Column key -> the cell (plain Text: kernel names never reach markup)."""
    keys: dict[str, object]
    """Column key -> the sort key (numbers sort as numbers, unknown last)."""
    haystack: str
    """Lower-case text the filter matches against."""


def _num_stages(capture: "Capture") -> int | None:
    for f in variant_fields(capture.variant):
        name, _, value = f.partition("=")
        if name == "num_stages" and value.isdigit():
            return int(value)
    value = capture.options.get("num_stages")
    return value if isinstance(value, int) else None


def browser_row(capture: "Capture", short_variant: str) -> BrowserRow:
    """The cells and sort keys of one capture (reads its options when the label lacks
    ``num_stages``)."""
    r = capture.row
    res = capture.resources
    occ = capture.occupancy
    stages = _num_stages(capture)
    if occ is not None and occ.blocks_per_sm:
        occupancy = (f"{occ.blocks_per_sm}x{occ.warps_per_sm // occ.blocks_per_sm}w "
                     f"{_LIMIT.get(occ.limited_by, occ.limited_by)}")
    else:
        occupancy = "-"
    status = Text("ok", style="green") if not r.error else Text(
        f"failed ({r.failed_pass or r.failed_stage or '?'})", style="red")
    values = {
        "id": r.id, "kernel": r.kernel, "variant": short_variant, "target": r.target,
        "triton": r.triton_version or "-", "warps": res.num_warps, "stages": stages,
        "regs": r.registers, "spills": res.spills, "shared": res.shared,
        "occupancy": occ.warps_per_sm if occ is not None else None,
        "compile": r.compile_seconds, "status": "ok" if not r.error else "failed",
    }
    cells = {
        "id": Text(str(r.id), justify="right"), "kernel": Text(r.kernel),
        "variant": Text(short_variant, no_wrap=True, overflow="ellipsis"),
        "target": Text(r.target),
        "triton": Text(r.triton_version or "-"),
        "warps": Text("-" if res.num_warps is None else str(res.num_warps), justify="right"),
        "stages": Text("-" if stages is None else str(stages), justify="right"),
        "regs": Text("-" if r.registers is None else str(r.registers), justify="right"),
        "spills": Text("-" if res.spills is None else human_bytes(res.spills), justify="right"),
        "shared": Text(human_bytes(res.shared), justify="right"),
        "occupancy": Text(occupancy, justify="right"),
        "compile": Text("-" if r.compile_seconds is None else f"{r.compile_seconds:.2f}s",
                        justify="right"),
        "status": status,
    }
    keys = {k: ((0, v) if v is not None else (1, 0)) if k in _NUMERIC or k == "occupancy"
            else str(v).lower() for k, v in values.items()}
    haystack = " ".join((r.kernel, capture.variant, r.target, r.triton_version or "",
                         str(r.id))).lower()
    return BrowserRow(capture, cells, keys, haystack)


def browser_rows(bundle: "Bundle") -> list[BrowserRow]:
    """Every capture of ``bundle`` as a browser row, in capture order."""
    shorts = _short_variants(bundle)
    return [browser_row(c, shorts.get((c.kernel, c.variant), "-")) for c in bundle.captures()]


# -- the kernel view --------------------------------------------------------------

@dataclass(slots=True)
class StageIndex:
    """One parsed stage of a capture, indexed for the kernel view."""

    name: str
    module: "Module | None"
    """None when the stage is not an IR irscope parses (AMDGCN, binaries)."""
    by_python_line: dict[int, list["Op"]] = field(default_factory=dict)
    """Python line (file numbering) -> the ops that belong to it (the core's rule)."""
    by_text_line: dict[int, "Op"] = field(default_factory=dict)
    """1-based line of the stage text -> the op that starts there."""

    def count(self, python_line_no: int) -> int:
        """How many ops of this stage belong to a Python line."""
        return len(self.by_python_line.get(python_line_no, ()))

    def op_at(self, text_line: int) -> "Op | None":
        """The op starting at 1-based ``text_line``, or None."""
        return self.by_text_line.get(text_line)


def index_stage(capture: "Capture", name: str) -> StageIndex:
    """Parse one stage (once per capture, cached by the core) and index its ops by Python
    line and by text line. A stage irscope does not parse gives an empty index."""
    st = capture.stage(name)
    if st.binary or st.info is None or not st.info.parsed:
        return StageIndex(name, None)
    try:
        module = st.module
    except IrscopeError:
        return StageIndex(name, None)
    out = StageIndex(name, module)
    file = capture.row.file
    for op in module.ops():
        out.by_text_line.setdefault(op.line, op)
        line = python_line(op.location, file)
        if line is not None:
            out.by_python_line.setdefault(line, []).append(op)
    return out


class StageIndexes:
    """The stage indexes of one capture, each built once even when two workers ask for it
    at the same time (the second waits for the first instead of parsing again)."""

    def __init__(self, capture: "Capture") -> None:
        self.capture = capture
        self._done: dict[str, StageIndex] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, stage: str) -> StageIndex:
        """The index of ``stage`` (built on first use; call from a worker thread)."""
        with self._guard:
            lock = self._locks.setdefault(stage, threading.Lock())
        with lock:
            if stage not in self._done:
                self._done[stage] = index_stage(self.capture, stage)
            return self._done[stage]


def compare_in_worker(app: "App", a: "Capture", b: "Capture") -> None:
    """Run :func:`irscope.diff.compare_captures` in a thread, then open the diff screen."""

    def job() -> None:
        from irscope.diff.compare import compare_captures

        try:
            comparison = compare_captures(a, b, a_label=a.title(), b_label=b.title())
        except IrscopeError as exc:
            app.call_from_thread(app.notify, str(exc), severity="error", markup=False)
            return
        app.call_from_thread(lambda: app.open_diff(comparison, a=a, b=b))

    app.run_worker(job, thread=True, group="diff", exclusive=True, name="compare captures")
