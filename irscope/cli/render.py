"""Rich renderings shared by commands (tables, sizes)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from rich import box
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.cells import cell_len
from rich.text import Text

from irscope.core import Capture
from irscope.core.selection import variant_index
from irscope.core.variant import differing_fields as short_labels, variant_fields
from irscope.compiler.stages import JSON, STAGES
from irscope.compiler.units import human_bytes  # noqa: F401  (re-exported for the commands)

PIPED_WIDTH = 200
"""Width of output that goes to a pipe or file when ``COLUMNS`` is not set."""


def _num(v) -> str:
    return "-" if v is None else str(v)


@dataclass(frozen=True)
class _Col:
    key: str
    header: str
    justify: JustifyMethod = "left"
    drop: int = 99
    """Layouts from this one on leave the column out (lower: dropped sooner)."""
    wrap: bool = False
    """Its cells may wrap between words (never inside one)."""


_COLUMNS = (
    _Col("id", "#", "right"), _Col("v", "v", "right"), _Col("kernel", "kernel", drop=5, wrap=True),
    _Col("variant", "variant", drop=5, wrap=True), _Col("kv", "kernel / variant", wrap=True),
    _Col("target", "target", drop=3), _Col("triton", "triton", drop=2), _Col("stages", "stages", drop=1, wrap=True),
    _Col("passes", "passes", "right", drop=2), _Col("regs", "regs", "right"), _Col("spills", "spills", "right", drop=4),
    _Col("shared", "shared", "right", wrap=True), _Col("occupancy", "occupancy", "right", wrap=True),
    _Col("compile", "compile", "right", drop=3), _Col("status", "status", wrap=True),
)
_LAYOUTS = 6
"""0: every column (heavy box); 1: no stages; 2: no triton, passes; 3: no compile, and
no target when all rows share one; 4: no spills when none spill; 5: kernel and
variant in one column, no vertical lines."""
_MAX_ROW_LINES = 3  # the fullest layout whose rows stay this short is chosen


def _words(text: str) -> list[str]:
    return text.split()


def _lines_needed(text: str, width: int) -> int:
    """Lines ``text`` takes wrapped at ``width`` between words (a longer word folds)."""
    total = 0
    for line in text.split("\n") or [""]:
        n, used = 1, 0
        for word in line.split():
            w = cell_len(word)
            if used and used + 1 + w > width:
                n, used = n + 1, 0
            used = w if not used else used + 1 + w
            n += max(0, (w - 1) // max(width, 1)) if w > width else 0
        total += n
    return total


class CaptureTable:
    """The summary table of ``irscope run`` and ``irscope ls``, laid out for the width
    it is printed at: the fullest layout (columns left out, least needed first)
    whose every cell's longest word fits and whose rows stay short; columns get
    widths that never cut a kernel name or a variant field. The variant column
    holds the fields that differ between a kernel's variants; ``v`` is the ``N`` of
    ``--variant N`` (with ``--target`` of the row) and ``#`` the capture id
    (``irscope cat BUNDLE 3``). ``--json`` has the full labels."""

    def __init__(self, caps: list[Capture], title: str | None = None):
        self.caps = caps
        self.title = title
        shorts: dict[str, dict[str, list[str]]] = {}
        self.rows = []
        for c in caps:
            if c.kernel not in shorts:
                shorts[c.kernel] = short_labels([x.variant for x in c.bundle.captures(c.kernel)])
            fields = shorts[c.kernel].get(c.variant)
            if fields is None:  # not among the bundle's (a capture of another bundle): all fields
                fields = variant_fields(c.variant)
            self.rows.append(self._cells(c, fields))
        self.shortened = any(r["_short"] for r in self.rows)

    @staticmethod
    def _cells(c: Capture, fields: list[str]) -> dict:
        s = c.summary
        spills = s.spills
        status = Text("ok", style="green") if not s.error else (
            Text("failed", style="red") + Text(f" ({s.failed_at or '?'})"))
        if not s.complete:
            status += Text(" incomplete run", style="yellow")
        regs = _num(s.registers) + ("*" if s.registers_from_driver else "")
        variant = " ".join(fields) if fields else "-"
        return {
            "id": Text(str(s.id)), "v": Text(str(variant_index(c))), "kernel": Text(s.kernel),
            "variant": Text(variant), "kv": Text(s.kernel, style="bold") + Text("\n" + variant if fields else ""),
            "target": Text(s.target), "triton": Text(s.triton_version or "-"),
            "stages": Text(" ".join(STAGES[n].short if n in STAGES else n for n in s.stages if n != JSON)),
            "passes": Text(str(s.passes)), "regs": Text(regs),
            "spills": Text(_num(spills) if spills is None else human_bytes(spills)),
            "shared": Text(human_bytes(s.shared)), "occupancy": Text(s.occupancy_text or "-"),
            "compile": Text("-" if s.compile_seconds is None else f"{s.compile_seconds:.2f}s"), "status": status,
            "_short": fields != variant_fields(s.variant), "_spills": bool(spills),
        }

    def _uniform(self, key: str) -> str | None:
        values = {r[key].plain for r in self.rows}
        return values.pop() if len(values) == 1 else None

    def columns(self, layout: int) -> list[_Col]:
        """The columns of ``layout``."""
        cols = [c for c in _COLUMNS if c.drop > layout and not (c.key == "kv" and layout < 5)]
        if layout >= 3 and self._uniform("target") is not None:
            cols = [c for c in cols if c.key != "target"]
        if layout >= 4 and not any(r["_spills"] for r in self.rows):
            cols = [c for c in cols if c.key != "spills"]
        return cols

    def _widths(self, layout: int, max_width: int) -> list[int] | None:
        """Column widths for ``layout`` within ``max_width``: each column at least its
        longest word; the widest shrinkable ones give way first. None: it cannot fit."""
        cols = self.columns(layout)
        cells = [[row[c.key].plain for row in self.rows] for c in cols]
        mins = [max([cell_len(w) for t in [c.header, *col] for w in _words(t)] or [1]) for c, col in zip(cols, cells)]
        maxs = [max([cell_len(ln) for t in [c.header, *col] for ln in t.split("\n")] or [1])
                for c, col in zip(cols, cells)]
        maxs = [max(a, b) for a, b in zip(mins, maxs)]
        room = max_width - self._overhead(layout, len(cols))
        if sum(mins) > room:
            return None
        widths = list(maxs)
        while sum(widths) > room:
            i = max((i for i, c in enumerate(cols) if c.wrap and widths[i] > mins[i]), key=lambda i: widths[i])
            widths[i] -= 1
        return widths

    @staticmethod
    def _overhead(layout: int, n: int) -> int:
        """Width the table adds to its columns': padding and lines."""
        return 2 * n - 2 + (n - 1) if layout >= 5 else 2 * n + n + 1

    def _height(self, layout: int, widths: list[int]) -> int:
        cols = self.columns(layout)
        return max([max(_lines_needed(row[c.key].plain, w) for c, w in zip(cols, widths)) for row in self.rows] or [1])

    def layout_for(self, max_width: int) -> tuple[int, list[int] | None]:
        """The fullest layout that fits ``max_width`` with short rows (else the one with
        the shortest rows), and its column widths."""
        best = None
        for layout in range(_LAYOUTS):
            widths = self._widths(layout, max_width)
            if widths is None:
                continue
            height = self._height(layout, widths)
            if height <= _MAX_ROW_LINES:
                return layout, widths
            if best is None or height < best[0]:
                best = (height, layout, widths)
        if best is not None:
            return best[1], best[2]
        return _LAYOUTS - 1, None  # even the narrowest layout's longest words do not fit: Rich folds them

    def table(self, layout: int, widths: list[int] | None = None) -> Table:
        """The table with the columns of ``layout`` (0: all), at ``widths``."""
        cols = self.columns(layout)
        compact = layout >= 5
        t = Table(title=Text(self.title) if self.title is not None else None, header_style="bold",
                  show_lines=False, box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD,
                  show_edge=not compact, pad_edge=not compact, caption=self._caption(layout, cols),
                  caption_justify="left")
        for i, col in enumerate(cols):
            t.add_column(col.header, justify=col.justify, overflow="fold",
                         width=widths[i] if widths else None, no_wrap=not col.wrap and widths is not None)
        for row in self.rows:
            t.add_row(*(row[c.key] for c in cols))
        return t

    def _caption(self, layout: int, cols: list[_Col]) -> Text:
        parts = []
        keys = {c.key for c in cols}
        if self.shortened:
            parts.append("variant: the fields that differ between a kernel's variants (all of them: --json)")
        parts.append("v: the N of --variant N")
        left = []
        for c in _COLUMNS:
            if c.key in keys or c.key in ("kernel", "variant", "kv"):
                continue
            same = self._uniform(c.key)
            if c.key in ("target", "triton") and same is not None:
                left.append(f"{c.header} {same}" if c.key == "triton" else f"all {same}")
            elif c.key == "spills" and not any(r["_spills"] for r in self.rows):
                left.append("no spills")
            else:
                left.append(c.header)
        if left:
            parts.append("not shown at this width: " + ", ".join(left))
        return Text("; ".join(parts), style="dim")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(*self.layout_for(options.max_width))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table(*self.layout_for(options.max_width)))


def capture_table(caps: list[Capture], title: str | None = None) -> CaptureTable:
    """The summary table of ``irscope run`` and ``irscope ls`` (see :class:`CaptureTable`)."""
    return CaptureTable(caps, title)


def output_width() -> int | None:
    """The width command output is laid out for: ``COLUMNS`` when set, else the
    terminal's (None: Rich asks it), else :data:`PIPED_WIDTH` for a pipe or file."""
    cols = os.environ.get("COLUMNS", "").strip()
    if cols.isdigit() and int(cols) > 0:
        return int(cols)
    return None if sys.stdout.isatty() else PIPED_WIDTH


def stdout_console() -> Console:
    """Console for command output, :func:`output_width` wide (wide when piped, so
    tables are not crushed, unless ``COLUMNS`` says otherwise)."""
    return Console(width=output_width())
