"""The kernel page's "Measured" section, for a capture with a profile attached
(:func:`irscope.core.profile.profile_of`): what was measured, a "where the time goes"
table (the user's lines by samples, with their stall reasons, as ``irscope hot`` lists
them), a heat map of the source (the kernel's lines and its helpers', as the app's
Python pane shows them) and one of each stage (its text cut into bands, each tinted by
the samples of its ops), with the stage's hottest ops.

Every number is a field of the core's :class:`~irscope.core.profile.HotProfile`; every
text from the capture goes through :func:`~irscope.export.report.embed.esc`. The tint
rides in a ``--heat`` custom property (a number the page writes itself), so no capture
text reaches an attribute unescaped.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from irscope.compiler.stages import display_name
from irscope.core.user_functions import OWN, user_functions
from irscope.errors import IrscopeError
from irscope.export.report.embed import esc

if TYPE_CHECKING:
    from irscope.core import Capture
    from irscope.core.profile import HotProfile, LineHeat, ProfileStamp
    from irscope.diff.heat import HeatDelta

TOP_OPS = 12
"""Ops listed under each stage's map."""
BANDS = 96
"""At most this many bands in a stage's map (a short stage gets one per line)."""


def _share(samples: float, total: int) -> float:
    return samples / total if total > 0 else 0.0


def _pct(samples: float, total: int) -> str:
    return f"{100.0 * _share(samples, total):.1f}%"


def _samples(samples: float) -> str:
    return str(int(samples)) if float(samples).is_integer() else f"{samples:.2f}"


def _heat(samples: float, most: float) -> str:
    """The ``--heat`` value of a cell: its samples over the hottest cell's (0..1)."""
    return f"{min(1.0, samples / most) if most > 0 else 0.0:.3f}"


def _stamp(s: "ProfileStamp") -> str:
    tool = s.tool + (f" {s.tool_version}" if s.tool_version else "")
    where = f" on {s.gpu}" if s.gpu else ""
    when = f", {s.date}" if s.date else ""
    return f"profile #{s.id}: {tool}{where}{when}, {s.launches} launch{'es' if s.launches != 1 else ''}, from {s.source}"


def _stalls(lh: "LineHeat") -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(lh.stalls.items(), key=lambda kv: (-kv[1], kv[0])))


def _where(lh: "LineHeat", kernel_file: str | None) -> str:
    return f"{lh.line}" if lh.file == kernel_file else f"{os.path.basename(lh.file)}:{lh.line}"


def _time_table(hot: "HotProfile", texts: dict[tuple[str, int], str], kernel_file: str | None,
                table_id: str) -> str:
    """The user's lines by samples (most first), then the unattributed bucket."""
    t = hot.total_samples
    most = max((lh.samples for lh in hot.lines), default=0)
    rows = []
    for lh in hot.lines:
        text = texts.get((os.path.basename(lh.file), lh.line), "")
        rows.append(f'<tr data-line="{lh.line}" data-file="{esc(lh.file)}" data-samples="{lh.samples}">'
                    f"<td>{esc(_where(lh, kernel_file))}</td><td>{lh.samples}</td>"
                    f'<td class="heat-share"><span class="heat-bar" style="--heat:{_heat(lh.samples, most)}">'
                    f"</span>{_pct(lh.samples, t)}</td><td>{esc(lh.how)}</td>"
                    f'<td class="wrap">{esc(_stalls(lh))}</td><td><code>{esc(text.strip())}</code></td></tr>')
    rows.append(f'<tr class="unattributed" data-samples="{hot.unattributed}"><td>no line</td><td>{hot.unattributed}</td>'
                f'<td class="heat-share">{_pct(hot.unattributed, t)}</td><td>unattributed</td><td></td><td></td></tr>')
    heads = "".join(f"<th>{h}</th>" for h in ("line", "samples", "share", "charged", "stall reasons", "source"))
    return (f'<div class="table-scroll"><table class="heat" id="{esc(table_id)}"><thead><tr>{heads}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


_Function = tuple[int, str, "str | None", list[int], list[str]]
"""A section of the source: function index (0: the kernel), name, file, lines, their texts."""


def _functions(cap: "Capture") -> list[_Function]:
    """The kernel's lines, then each helper's (the sections of the app's Python pane
    and of the report's linked source)."""
    try:
        got = user_functions(cap, OWN)
    except IrscopeError:
        got = None
    if got is None:  # the kernel alone, from the stored source
        src = cap.source
        texts = (src.text or "").splitlines()
        return [(0, cap.kernel, cap.file, [(src.first_line or 1) + i for i in range(len(texts))], texts)]
    return [(fn.index, fn.name, fn.file, [ln.line for ln in fn.lines], [ln.text for ln in fn.lines])
            for fn in got.functions]


def _source_map(cap: "Capture", hot: "HotProfile") -> tuple[str, dict[tuple[str, int], str]]:
    """The heat map of the source (the kernel's lines, then each helper's), and the text
    of each (file base name, line) for the table."""
    functions = [(name, file, lines, line_texts) for _, name, file, lines, line_texts in _functions(cap)]
    texts: dict[tuple[str, int], str] = {}
    rows: list[str] = []
    heat: dict[tuple[str | None, int], int] = {}
    for name, file, lines, line_texts in functions:
        for n, text in zip(lines, line_texts):
            lh = hot.line(n, file)
            heat[(file, n)] = lh.samples if lh is not None else 0
            texts[(os.path.basename(file or ""), n)] = text
    most = max(heat.values(), default=0)
    t = hot.total_samples
    for i, (name, file, lines, line_texts) in enumerate(functions):
        if i:
            rows.append(f'<div class="heat-head">helper {esc(name)} · {esc(os.path.basename(file or "?"))}</div>')
        for n, text in zip(lines, line_texts):
            s = heat[(file, n)]
            share = _pct(s, t) if s else ""
            rows.append(f'<div class="heat-line" data-line="{n}" data-file="{esc(file or "")}" data-samples="{s}" '
                        f'style="--heat:{_heat(s, most)}"><span class="ln">{n}</span><span class="pct">{share}</span>'
                        f"<code>{esc(text)}</code></div>")
    return f'<div class="heat-source" id="heat-source">{"".join(rows)}</div>', texts


def _stage_map(cap: "Capture", hot: "HotProfile", stage: str) -> str:
    """One stage: its text in bands tinted by their samples, and its hottest ops."""
    text = cap.stage(stage).text
    count = text.count("\n") + 1 if isinstance(text, str) else 0
    per_line = hot.stage_heat(stage)
    size = max(1, -(-count // BANDS))
    bands: dict[int, float] = {}
    for line, s in per_line.items():
        bands[(line - 1) // size] = bands.get((line - 1) // size, 0.0) + s
    most = max(bands.values(), default=0.0)
    t = hot.total_samples
    cells = []
    for b in range(max(1, -(-count // size))):
        s = bands.get(b, 0.0)
        first, last = b * size + 1, min(count, (b + 1) * size)
        span = f"line {first}" if first == last else f"lines {first}-{last}"
        cells.append(f'<span class="band" style="--heat:{_heat(s, most)}" data-first="{first}" data-samples="{s:.2f}" '
                     f'title="{span}: {_samples(s)} samples ({_pct(s, t)})"></span>')
    ops = "".join(f'<tr data-stage-line="{o.stage_line}"><td>{o.stage_line}</td><td>{_samples(o.samples)}</td>'
                  f"<td>{_pct(o.samples, t)}</td><td><code>{esc(o.text.strip())}</code></td></tr>"
                  for o in hot.ops(stage)[:TOP_OPS])
    unplaced = hot.unplaced(stage)
    note = f" · {_samples(unplaced)} samples on no op of this stage" if unplaced else ""
    return (f'<div class="heat-stage" data-stage="{esc(stage)}"><h4>{esc(display_name(stage))} '
            f'<span class="note">{count} lines{note}</span></h4><div class="bands">{"".join(cells)}</div>'
            f'<table class="heat-ops"><thead><tr><th>line</th><th>samples</th><th>share</th><th>op</th></tr></thead>'
            f"<tbody>{ops}</tbody></table></div>")


def heat_html(cap: "Capture", hot: "HotProfile", calls: "HotProfile | None" = None,
              others: "tuple[ProfileStamp, ...]" = ()) -> str:
    """The section's HTML for ``hot`` (``calls``: the same profile with helpers' samples
    on their call lines, shown when it differs; ``others``: the capture's other profiles)."""
    source, texts = _source_map(cap, hot)
    t = hot.total_samples
    more = ""
    if others:
        more = (" Other profiles: " + "; ".join(esc(_stamp(s)) for s in others)
                + " (<code>irscope hot --profile ID</code>).")
    by_call = ""
    if calls is not None and calls.lines != hot.lines:
        by_call = ("<h3>With helpers charged to their call lines</h3>"
                   '<p class="note">The same samples, each helper\'s moved to the kernel line that calls it '
                   "(<code>irscope hot --call-sites</code>, the app's <code>c</code>).</p>"
                   + _time_table(calls, texts, cap.file, "heat-calls"))
    stages = "".join(_stage_map(cap, hot, s) for s in hot.stages)
    return f"""<section id="heat"><h2>Measured: where the time goes</h2>
<p class="note">{esc(_stamp(hot.stamp))}. {t} samples in all, {hot.unattributed} ({_pct(hot.unattributed, t)}) on
no line. What <code>irscope hot</code> shows: each sample is charged to one line of the user's code; a sample
in Triton's library (<code>tl.sum</code>, <code>tl.max</code>...) goes to the line that calls it.{more}</p>
<h3>Where the time goes</h3>
{_time_table(hot, texts, cap.file, "heat-lines")}
{by_call}
<h3>Heat map: source</h3>
{source}
<h3>Heat map: stages</h3>
<p class="note">Each stage's text from top to bottom, in bands; a band's tint is its ops' samples (an instruction's
samples shared equally by the ops of its line in that stage).</p>
{stages}
</section>"""


def heat_section(cap: "Capture") -> str:
    """The "Measured" section of ``cap``'s kernel page ('' when it has no profile)."""
    from irscope.core.profile import profile_of, profiles_of

    try:
        hot = profile_of(cap)
        if hot is None:
            return ""
        calls = profile_of(cap, call_sites=True)
        others = tuple(s for s in profiles_of(cap) if s.id != hot.stamp.id)
    except IrscopeError as exc:
        return f'<section id="heat"><h2>Measured: where the time goes</h2><p class="note">{esc(exc)}</p></section>'
    return heat_html(cap, hot, calls, others)


def heat_map(cap: "Capture") -> dict[str, Any] | None:
    """The page data that tints the linked source and stages (None with no profile):
    ``{"total", "source": {"F:L": [heat, samples]}, "stages": {stage: {"L": [heat,
    samples]}}}``, F the section (0: the kernel, then the helpers), L a line, ``heat``
    the samples over the hottest line's (of the source, or of that stage)."""
    from irscope.core.profile import profile_of

    try:
        hot = profile_of(cap)
    except IrscopeError:  # the section says why
        return None
    if hot is None:
        return None
    source: dict[str, list[float]] = {}
    for index, _, file, lines, _ in _functions(cap):
        for n in lines:
            lh = hot.line(n, file)
            if lh is not None and lh.samples:
                source[f"{index}:{n}"] = [0.0, lh.samples]
    most = max((c[1] for c in source.values()), default=0)
    for c in source.values():
        c[0] = round(c[1] / most, 3) if most else 0.0
    stages: dict[str, dict[str, list[float]]] = {}
    for stage in hot.stages:
        per_line = hot.stage_heat(stage)
        top = max(per_line.values(), default=0.0)
        stages[stage] = {str(n): [round(s / top, 3) if top else 0.0, s] for n, s in per_line.items() if s}
    return {"total": hot.total_samples, "source": source, "stages": stages}


def heat_pair_section(h: "HeatDelta") -> str:
    """A pair page's measured change (both captures profiled): each line's samples and
    share on both sides, beside its statement's op change (``irscope diff``'s ``heat``)."""
    rows = []
    for ln in h.lines:
        moved = ln.share_after - ln.share_before
        cls = ' class="hotter"' if moved >= 0.02 else ' class="cooler"' if moved <= -0.02 else ""
        where = str(ln.line) if ln.kernel_file else f"{os.path.basename(ln.file)}:{ln.line}"
        ops = ", ".join(f"{c.name} {c.before}→{c.after}" for c in ln.ops if c.changed)
        rows.append(f'<tr{cls} data-line="{ln.line}" data-file="{esc(ln.file)}" data-before="{ln.before}" '
                    f'data-after="{ln.after}"><td>{esc(where)}</td><td>{ln.before} → {ln.after}</td>'
                    f"<td>{100 * ln.share_before:.1f}% → {100 * ln.share_after:.1f}%</td>"
                    f'<td class="wrap">{esc(ops)}</td><td><code>{esc((ln.text or "").strip())}</code></td></tr>')
    heads = "".join(f"<th>{x}</th>" for x in ("line", "samples A → B", "share A → B", "ops changed", "source"))
    return (f'<section id="heat-diff"><h2>Measured samples per line</h2><p class="note">A: {esc(_stamp(h.a))}, '
            f"{h.total_before} samples, {h.unattributed_before} on no line. B: {esc(_stamp(h.b))}, {h.total_after} "
            f"samples, {h.unattributed_after} on no line. Shares are of each side's own total.</p>"
            f'<div class="table-scroll"><table class="heat heat-diff"><thead><tr>{heads}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')
