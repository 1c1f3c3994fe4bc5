"""The kernel page's "What if" section: the pass-ablation table attached to the
capture (``irscope passes --ablate``), and the autotune tables that hold it
(``irscope tune``), read through :mod:`irscope.core.experiments`. Every text from
the bundle goes through :func:`~irscope.export.report.embed.esc`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from irscope.compiler.stages import TTGIR
from irscope.compiler.units import human_bytes
from irscope.core.experiments import Ablation, AblationRow, Figures, ablation_of
from irscope.export.report.embed import esc

if TYPE_CHECKING:
    from irscope.core import Capture

_ABLATION_HEADS = ("#", "pass left out", "compiles", "regs", "spills", "shared", "warps/SM", "async", "mma",
                   "SASS", "diff", "effect")


def _num(v: int | None) -> str:
    return "-" if v is None else str(v)


def _cell(base: int | None, value: int | None, fmt: Callable[[int | None], str] = _num) -> str:
    """A figure, marked ``changed`` with the original's value in its title when it differs."""
    if value is None or base is None or value == base:
        return f"<td>{esc(fmt(value))}</td>"
    return f'<td class="changed" title="original: {esc(fmt(base))}">{esc(fmt(value))}</td>'


def _row(r: AblationRow, base: Figures) -> str:
    name = esc(r.pass_name or "(nothing left out)") + (f" <small>({esc(r.stage)})</small>" if r.stage != TTGIR else "")
    rank = str(r.rank) if r.rank else ""
    if not r.compiled or r.figures is None:
        where = f" at {esc(r.failed_at)}" if r.failed_at else ""
        return (f'<tr class="failed" data-pass="{esc(r.pass_name)}"><td>{rank}</td><td>{name}</td>'
                f'<td class="wrap" colspan="10">failed{where}: {esc(r.error or "")}</td></tr>')
    f = r.figures
    status = ("no effect" if r.replayed else "no effect (not replayed: it changed nothing)") if r.no_effect else "ok"
    cls = ' class="inert"' if r.no_effect else ""
    return (f'<tr{cls} data-pass="{esc(r.pass_name)}" data-effect="{r.effect:.4f}"><td>{rank}</td><td>{name}</td>'
            f"<td>{status}</td>{_cell(base.registers, f.registers)}{_cell(base.spills, f.spills, human_bytes)}"
            f"{_cell(base.shared, f.shared, human_bytes)}{_cell(base.warps_per_sm, f.warps_per_sm)}"
            f"{_cell(base.async_copies, f.async_copies)}{_cell(base.mma, f.mma)}"
            f"{_cell(base.sass_total, f.sass_total)}<td>{_num(r.diff_size)}</td><td>{r.effect:.3f}</td></tr>")


def ablation_table(table: Ablation) -> str:
    """The ranked ablation table as HTML: the original's figures first, the control,
    then a row per pass left out."""
    b = table.baseline
    original = (f'<tr class="original"><td></td><td><b>(original)</b></td><td></td><td>{_num(b.registers)}</td>'
                f"<td>{esc(human_bytes(b.spills))}</td><td>{esc(human_bytes(b.shared))}</td>"
                f"<td>{_num(b.warps_per_sm)}</td><td>{_num(b.async_copies)}</td><td>{_num(b.mma)}</td>"
                f"<td>{_num(b.sass_total)}</td><td></td><td></td></tr>")
    rows = [original]
    if table.control is not None:
        rows.append(_row(table.control, b))
    rows += [_row(r, b) for r in table.rows]
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in table.notes)
    inert = sum(1 for r in table.rows if r.no_effect)
    return (f'<h3>Pass ablation: {len(table.rows)} passes left out one at a time</h3>'
            f'<div class="table-scroll"><table class="ablation"><thead><tr>'
            + "".join(f"<th>{esc(h)}</th>" for h in _ABLATION_HEADS) + "</tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div>" + notes
            + f'<p class="note">Each row: the kernel replayed from its TTIR without that pass ({len(table.failed)} '
              f"it cannot compile without, {inert} with no measured effect). async, mma: TTGIR asynchronous copies "
              f"and tensor-core dots; SASS: instructions; diff: ops the structural diff against the original finds "
              f"changed. effect: the sum of eight terms in [0, 1] (relative change of registers, spills, shared "
              f"memory, warps per SM, async copies, MMAs; SASS mix distance; diff size over the op count); a "
              f"pass the kernel cannot compile without ranks first. Replays: <code>{esc(table.replays)}</code>; "
              f"made by <code>irscope passes BUNDLE {esc(table.kernel)} --ablate</code>.</p>")


def experiments_section(cap: "Capture") -> str:
    """The "What if" section of one capture's page; '' when the bundle holds no
    experiment about it."""
    parts = []
    ablation = ablation_of(cap)
    if ablation is not None:
        parts.append(ablation_table(ablation))
    if not parts:
        return ""
    return '<section id="whatif"><h2>What if</h2>' + "".join(parts) + "</section>"
