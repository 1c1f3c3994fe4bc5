"""The kernel page's "Why" section: the per-line table ``irscope explain`` prints
(one row per line with a fact: its global accesses with their widths, shared-memory and
tensor-core instructions, spills, remarks, and the marks of
:mod:`irscope.core.why_marks`), then the hints. Every value is a field of the core's
:meth:`irscope.core.Capture.explain`; every text from the capture goes through
:func:`~irscope.export.report.embed.esc`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from irscope.compiler.stages import PTX, SASS, TTGIR
from irscope.errors import IrscopeError
from irscope.export.report.embed import esc
from irscope.core.why_marks import GLYPHS, MARKS, conversions_at, line_marks, loops_at

if TYPE_CHECKING:
    from irscope.core import Capture
    from irscope.core.explain import Explanation, LineExplanation
    from irscope.core.line_costs import GlobalAccess

_HEADS = ("line", "function", "ttgir/ptx/sass", "global accesses", "smem / tensor core", "spills", "remarks", "why")


def _access(a: "GlobalAccess") -> str:
    """One access: ``load 16 b, 1 of 8 el, x8, masked``; data attributes carry the
    JSON's numbers (``irscope explain --json``'s ``global_accesses``)."""
    kind = "atomic" if a.atomic else a.kind
    via = "" if a.path in ("ld", "st", "atomic") else f" ({a.path})"
    bits = "?" if a.bits is None else str(a.bits)
    el = "?" if a.elements is None else str(a.elements)
    most = "?" if a.max_elements is None else str(a.max_elements)
    words = f"{kind}{via} {bits} b, {el} of {most} el, x{a.instructions}" + (", masked" if a.masked else "")
    cls = ' class="narrow"' if a.narrow else ""
    attrs = (f' data-kind="{esc(a.kind)}" data-bits="{esc(a.bits)}" data-elements="{esc(a.elements)}"'
             f' data-max-elements="{esc(a.max_elements)}" data-masked="{str(a.masked).lower()}"')
    return f'<li{cls}{attrs} title="{esc(a.opcode)}">{esc(words)}</li>'


def _has_facts(ex: "Explanation", ln: "LineExplanation") -> bool:
    return bool(ln.global_accesses or ln.costs.shared_tensor or ln.spills or ln.remarks
                or conversions_at(ex, ln) or loops_at(ex, ln))


def _row(ex: "Explanation", ln: "LineExplanation") -> str:
    c = ln.costs
    ops = "/".join(str(c.ops.get(s, 0)) for s in (TTGIR, PTX, SASS))
    glob = "".join(_access(a) for a in c.global_accesses)
    smem = ", ".join(f"{k} {n}" for k, n in c.shared_tensor.items())
    remarks = "".join(f"<li>{esc(r.text)}</li>" for r in ln.remarks)
    meaning = {m.key: m.meaning for m in MARKS}
    marks = " ".join(f'<span class="why-{esc(k)}" title="{esc(meaning[k])}">{esc(GLYPHS[k])}</span>'
                     for k in line_marks(ex, ln))
    return (f'<tr data-line="{ln.line}" data-file="{esc(ln.file or "")}" data-spills="{ln.spills}">'
            f"<td>{ln.line}</td><td>{esc(ln.function)}</td><td>{ops}</td>"
            f'<td class="wrap"><ul class="accesses">{glob}</ul></td><td>{esc(smem)}</td>'
            f"<td>{ln.spills if ln.spills else '-'}</td>"
            f'<td class="wrap"><ul class="remarks">{remarks}</ul></td><td class="why-marks">{marks}</td></tr>')


def _kernel_facts(ex: "Explanation") -> str:
    items = []
    if ex.has_sass:
        items.append(f"spills: {ex.total_spills} SASS LDL/STL in all, {ex.unattributed_spills} on no line")
    for lp in ex.loops:
        where = f"line {lp.line}" if lp.line is not None else f"ttgir line {lp.ttgir_line}"
        how = (f"pipelined, {lp.stages} stages, {lp.async_loads} async loads" if lp.pipelined
               else "not pipelined" + (f": {lp.remark}" if lp.remark else ""))
        items.append(f"loop at {where}: {how}")
    for cv in ex.conversions:
        at = f"line {cv.python_line}" if cv.python_line is not None else "no line"
        extra = ""
        if cv.via == "shared_memory":
            extra = f", {cv.scratch_bytes} B scratch"
            if cv.bank_conflicts is not None:
                extra += f", {cv.bank_conflicts}-way bank conflicts"
        items.append(f"conversion at ttgir {cv.ttgir_line} ({at}): via {cv.via.replace('_', ' ')}{extra}")
    it = ex.intensity
    if it is not None and it.verdict:
        items.append(f"main loop: {it.flops_per_iter} FLOP / {it.bytes_per_iter} B per iteration: {it.verdict}")
    if not ex.remarks_available:
        items.append(ex.remarks_why_not or "remarks: not available")
    return "".join(f"<li>{esc(i)}</li>" for i in items)


def _hints(ex: "Explanation") -> str:
    if not ex.hints_computed:
        return '<p class="note">Hints are not computed by this version of irscope.</p>'
    if not ex.hints:
        return '<p class="note">No hint: no rule found evidence on this kernel.</p>'
    out = []
    for h in ex.hints:
        evidence = "".join(f"<li>{esc(e.text)}</li>" for e in h.evidence)
        where = f' data-line="{h.line}"' if h.line is not None else ""
        out.append(f'<li{where} data-rule="{esc(h.rule)}"><span class="hint-text">{esc(h.text)}</span>'
                   f'<ul class="evidence">{evidence}</ul></li>')
    return f'<ol class="hints">{"".join(out)}</ol>'


def why_html(ex: "Explanation") -> str:
    """The section's HTML for one explanation."""
    rows = [_row(ex, ln) for ln in ex.lines if _has_facts(ex, ln)]
    legend = " · ".join(f"<b>{esc(m.glyph)}</b> {esc(m.meaning)}" for m in MARKS)
    table = (f'<div class="table-scroll"><table class="why"><thead><tr>{"".join(f"<th>{esc(h)}</th>" for h in _HEADS)}'
             f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>' if rows
             else '<p class="note">No line has a global access, a shared-memory or tensor-core instruction, a '
                  'spill or a remark.</p>')
    return f"""<section id="why"><h2>Why: costs per line</h2>
<p class="note">What <code>irscope explain</code> shows: each line with a fact. global accesses: bits per
instruction, elements per instruction of the most the layout allows, instructions. why: {legend}.</p>
{table}
<ul class="kernel-why">{_kernel_facts(ex)}</ul>
<h3>Hints</h3>
{_hints(ex)}
</section>"""


def why_section(cap: "Capture") -> str:
    """The "Why" section of ``cap``'s kernel page ('' for a compile that failed
    before any stage: it has no line to explain)."""
    try:
        ex = cap.explain()
    except IrscopeError as exc:
        return f'<section id="why"><h2>Why: costs per line</h2><p class="note">{esc(exc)}</p></section>'
    if not ex.lines and cap.failure is not None:
        return ""
    return why_html(ex)
