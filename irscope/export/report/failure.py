"""A failed capture in the report: the failure panel of its kernel page and its status
cell in the index. Every fact comes from the core (:attr:`irscope.Capture.failure`,
:attr:`irscope.Capture.summary`); every text goes through :func:`esc`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from irscope.compiler.stages import PTX
from irscope.export.report.embed import esc

if TYPE_CHECKING:
    from irscope.core import Failure
    from irscope.export.report.collect import KernelMeta


def status_cell(meta: "KernelMeta") -> str:
    """The index's status: ``ok``, or ``failed (stage)`` marked, with the one-line error
    under it (it wraps; the column never pushes the table wider than the page)."""
    if not meta.error:
        return '<span class="status ok">ok</span>'
    where = f" ({meta.failed_at})" if meta.failed_at else ""
    return (f'<span class="status failed">failed{esc(where)}</span>'
            f'<span class="why">{esc(meta.error)}</span>')


def failure_panel(failure: "Failure | None", stages: set[str]) -> str:
    """The kernel page's failure panel (empty for a capture that compiled): where the
    compile stopped, the one line, the telling lines, and a link to the line the error
    names (the user's Python line, else the PTX line of a ptxas diagnostic, when the page
    shows that stage). The page's script selects the line on a click."""
    if failure is None:
        return ""
    jump = ""
    if failure.line is not None:
        jump = (f'<p class="jump"><a href="#line={failure.line}" data-jump-line="{failure.line}">'
                f"Show {esc(failure.where or '')} in the Python pane</a></p>")
    elif failure.ptx_line is not None and PTX in stages:
        jump = (f'<p class="jump"><a href="#ptx-line={failure.ptx_line}" data-jump-stage="{PTX}" '
                f'data-jump-stage-line="{failure.ptx_line}">Show PTX line {failure.ptx_line}</a></p>')
    lines = "\n".join(failure.lines)
    return (f'<section id="failure" class="failure"><h2>{esc(failure.headline)}</h2>'
            f'<p class="error-line">{esc(failure.error)}</p>'
            f'<pre class="telling">{esc(lines)}</pre>{jump}'
            f'<p class="note">All of it, with the traceback: <code>irscope cat BUNDLE KERNEL --stage error</code>'
            f"</p></section>")
