"""The report's "What if" sections: on a kernel page, the pass-ablation table
attached to the capture (``irscope passes --ablate``, read through
:mod:`irscope.core.experiments`); on the index, the autotune tables a bundle holds
(``irscope tune``, read through :mod:`irscope.core.tune_table`), each row linked to
its configuration's page. Every text from the bundle goes through
:func:`~irscope.export.report.embed.esc`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from irscope.compiler.stages import TTGIR
from irscope.compiler.units import human_bytes
from irscope.core.experiments import Ablation, AblationRow, Figures, ablation_of
from irscope.core.tune_table import TuneRow, TuneTable, tune_tables
from irscope.export.report.embed import esc

if TYPE_CHECKING:
    from irscope.core import Bundle, Capture

_ABLATION_HEADS = ("#", "pass left out", "status", "regs", "spills", "shared", "warps/SM", "async", "mma",
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
    status = "ok"
    if r.no_effect and r.pass_name:  # the control's figures are the yardstick, not an effect
        status = "no effect" if r.replayed else "no effect (not replayed: it changed nothing)"
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


_TUNE_HEADS = ("configuration", "target", "compiles", "regs", "spills", "shared", "occupancy", "limited by",
               "mma", "SASS", "intensity", "marks")


def _tune_row(r: TuneRow, page: str | None) -> str:
    label = esc(r.label or "-")
    if page is not None:
        label = f'<a href="{esc(page)}">{label}</a>'
    if not r.compiled or r.figures is None:
        where = f" at {esc(r.failed_at)}" if r.failed_at else ""
        return (f'<tr class="failed" data-config="{esc(r.label)}"><td>{label}</td><td>{esc(r.target)}</td>'
                f'<td class="wrap" colspan="10">failed{where}: {esc(r.error or "")}</td></tr>')
    f = r.figures
    marks = [m for m, on in (("cannot launch", r.cannot_launch), ("spills", r.spills)) if on]
    occupancy = "-" if r.occupancy is None else f"{r.occupancy:.0%}"
    intensity = "-" if r.intensity is None else f"{r.intensity:.1f}" + (f" ({r.intensity_verdict})"
                                                                        if r.intensity_verdict else "")
    cls = ' class="cannot-launch"' if r.cannot_launch else (' class="spills"' if r.spills else "")
    title = f' title="{esc(r.launch_problem)}"' if r.launch_problem else ""
    return (f'<tr{cls} data-config="{esc(r.label)}"><td>{label}</td><td>{esc(r.target)}</td><td>ok</td>'
            f"<td>{_num(f.registers)}</td><td>{esc(human_bytes(f.spills))}</td><td>{esc(human_bytes(f.shared))}</td>"
            f"<td>{esc(occupancy)}</td><td>{esc(f.limited_by or '-')}</td><td>{esc(r.mma_kind or '-')}</td>"
            f"<td>{_num(f.sass_total)}</td><td>{esc(intensity)}</td><td{title}>{esc(', '.join(marks))}</td></tr>")


def tune_table_html(table: TuneTable, page_of: "Callable[[int], str | None]") -> str:
    """One tune table as HTML; ``page_of(capture_id)`` is the report page of a row's
    capture (None when the report has none)."""
    grid = " ".join(f"{k}={','.join(str(v) for v in vs)}" for k, vs in table.grid)
    rows = "".join(_tune_row(r, page_of(r.capture_id) if r.capture_id is not None else None) for r in table.rows)
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in table.notes)
    return (f"<h3>{esc(table.kernel)}: {len(table.rows)} compiles of <code>{esc(grid)}</code></h3>"
            f'<div class="table-scroll"><table class="tune"><thead><tr>'
            + "".join(f"<th>{esc(h)}</th>" for h in _TUNE_HEADS) + f"</tr></thead><tbody>{rows}</tbody></table></div>"
            + notes + f'<p class="note">{len(table.launchable)} of {len(table.rows)} can launch; '
              f"{len(table.failed)} failed to compile. occupancy: resident warps over the SM's maximum; intensity: "
              f"the main loop's FLOPs per global byte; marks: a block over the target's limits (cannot launch), "
              f"register spills.</p>")


def tune_section(bundles: "list[tuple[str, Bundle, Callable[[int], str | None]]]",
                 kernels: set[str] | None = None) -> str:
    """The index's "What if" section: every tune table of each (label, bundle,
    page_of) about one of ``kernels`` (all when None); '' when there is none."""
    parts = []
    for label, bundle, page_of in bundles:
        for table in tune_tables(bundle):
            if kernels is None or table.kernel in kernels:
                parts.append((f"<p>in <b>{esc(label)}</b></p>" if len(bundles) > 1 else "")
                             + tune_table_html(table, page_of))
    if not parts:
        return ""
    return '<section id="whatif-tune"><h2>What if: tune tables</h2>' + "".join(parts) + "</section>"
