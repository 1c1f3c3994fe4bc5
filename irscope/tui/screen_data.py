"""What the screens read from the bundle, computed off the UI thread.

Pure functions that build plain results (rows of the browser, per-stage indexes of
the kernel view); the screens call them from ``@work(thread=True)`` workers and hand
the results back with ``call_from_thread`` or through the worker's result, so reading
or parsing a bundle never blocks a key press.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text

from irscope.core.variant import differing_fields
from irscope.errors import IrscopeError
from irscope.compiler.units import human_bytes

if TYPE_CHECKING:
    from textual.app import App

    from irscope.core import Bundle, Capture
    from irscope.tui.app import IrscopeApp
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


def _short_variants(bundle: "Bundle") -> dict[tuple[str, str], str]:
    """(kernel, label) -> the fields that differ between the kernel's variants (the
    core's :func:`~irscope.core.variant.differing_fields`, as ``irscope ls`` shows
    them), less ``num_warps``/``num_stages``: the browser has columns for those."""
    by_kernel: dict[str, list[str]] = {}
    for c in bundle.captures():
        by_kernel.setdefault(c.kernel, []).append(c.variant)
    out = {}
    for kernel, labels in by_kernel.items():
        for lab, fields in differing_fields(labels, omit=("num_warps", "num_stages")).items():
            out[(kernel, lab)] = " ".join(fields) if fields else "-"
    return out


@dataclass(frozen=True, slots=True)
class BrowserRow:
    """One capture as the browser shows it."""

    capture: "Capture"
    cells: dict[str, Text]
    """Column key -> the cell (plain Text: kernel names never reach markup)."""
    keys: dict[str, Any]
    """Column key -> the sort key (numbers sort as numbers, unknown last)."""
    haystack: str
    """Lower-case text the filter matches against."""


def browser_row(capture: "Capture", short_variant: str) -> BrowserRow:
    """The cells and sort keys of one capture, drawn from its summary
    (:attr:`irscope.core.Capture.summary`, the figures ``irscope ls`` shows)."""
    s = capture.summary
    status = Text("ok", style="green") if not s.error else Text(f"failed ({s.failed_at or '?'})", style="red")
    values = {
        "id": s.id, "kernel": s.kernel, "variant": short_variant, "target": s.target,
        "triton": s.triton_version or "-", "warps": s.num_warps, "stages": s.num_stages,
        "regs": s.registers, "spills": s.spills, "shared": s.shared, "occupancy": s.warps_per_sm,
        "compile": s.compile_seconds, "status": s.status,
    }
    cells = {
        "id": Text(str(s.id), justify="right"), "kernel": Text(s.kernel),
        "variant": Text(short_variant, no_wrap=True, overflow="ellipsis"),
        "target": Text(s.target),
        "triton": Text(s.triton_version or "-"),
        "warps": Text("-" if s.num_warps is None else str(s.num_warps), justify="right"),
        "stages": Text("-" if s.num_stages is None else str(s.num_stages), justify="right"),
        "regs": Text("-" if s.registers is None else str(s.registers), justify="right"),
        "spills": Text("-" if s.spills is None else human_bytes(s.spills), justify="right"),
        "shared": Text(human_bytes(s.shared), justify="right"),
        "occupancy": Text(s.occupancy_text or "-", justify="right"),
        "compile": Text("-" if s.compile_seconds is None else f"{s.compile_seconds:.2f}s", justify="right"),
        "status": status,
    }
    keys = {k: ((0, v) if v is not None else (1, 0)) if k in _NUMERIC or k == "occupancy"
            else str(v).lower() for k, v in values.items()}
    haystack = " ".join((s.kernel, s.variant, s.target, s.triton_version or "", str(s.id))).lower()
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
    """None when the stage is not an IR irscope parses (binaries, logs)."""
    by_python_line: dict[int, list["Op"]] = field(default_factory=dict)
    """Python statement (its first line, file numbering) -> the ops that belong to it
    (the core's rule: :meth:`irscope.core.Capture.ops_by_line`)."""
    by_text_line: dict[int, "Op"] = field(default_factory=dict)
    """1-based line of the stage text -> the op that starts there."""

    def count(self, python_line_no: int) -> int:
        """How many ops of this stage belong to a Python statement (by its first line)."""
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
    out = StageIndex(name, module, capture.ops_by_line(name))
    for op in module.ops():
        out.by_text_line.setdefault(op.line, op)
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
        app.call_from_thread(lambda: cast("IrscopeApp", app).open_diff(comparison, a=a, b=b))

    app.run_worker(job, thread=True, group="diff", exclusive=True, name="compare captures", exit_on_error=False)
