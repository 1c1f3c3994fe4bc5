"""Rich renderings shared by commands (tables, sizes)."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

from irscope.core import Capture, Occupancy
from irscope.vocab.stages import STAGES


def human_bytes(n: int | None) -> str:
    """1536 -> '1.5 KiB'."""
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _num(v) -> str:
    return "-" if v is None else str(v)


def occupancy_cell(occ: Occupancy | None) -> str:
    """``2x8w regs``: resident blocks per SM, times warps per block, and what binds."""
    if occ is None:
        return "-"
    per_block = occ.warps_per_sm // occ.blocks_per_sm if occ.blocks_per_sm else 0
    return f"{occ.blocks_per_sm}x{per_block}w {LIMIT_ABBREV.get(occ.limited_by, occ.limited_by)}"


LIMIT_ABBREV = {"registers": "regs", "shared": "smem", "warps": "warps", "blocks": "blocks"}


def capture_table(caps: list[Capture], title: str | None = None) -> Table:
    """The summary table of ``irscope run`` and ``irscope ls``."""
    t = Table(title=title, header_style="bold", show_lines=False)
    for col, kw in (("#", {"justify": "right"}), ("kernel", {}), ("variant", {"overflow": "fold"}), ("target", {}),
                    ("triton", {}), ("stages", {}), ("passes", {"justify": "right"}), ("regs", {"justify": "right"}),
                    ("spills", {"justify": "right"}), ("shared", {"justify": "right"}),
                    ("occupancy", {"justify": "right"}), ("compile", {"justify": "right"}), ("status", {})):
        t.add_column(col, **kw)
    for c in caps:
        r = c.row
        res = c.resources
        spills = res.spills
        status = "[green]ok[/]" if not r.error else f"[red]failed[/] ({r.failed_pass or r.failed_stage or '?'})"
        if not r.complete:
            status += " [yellow]incomplete run[/]"
        regs = _num(r.registers) + ("*" if r.resource_source == "driver" else "")
        t.add_row(str(r.id), r.kernel, r.variant, r.target, r.triton_version or "-",
                  " ".join(STAGES[s].short if s in STAGES else s for s in r.stages if s != "json"), str(r.passes), regs,
                  _num(spills) if spills is None else human_bytes(spills), human_bytes(res.shared),
                  occupancy_cell(c.occupancy), "-" if r.compile_seconds is None else f"{r.compile_seconds:.2f}s", status)
    return t


def stdout_console() -> Console:
    """Console for command output: wide when piped, so tables are not crushed."""
    return Console() if sys.stdout.isatty() else Console(width=200)
