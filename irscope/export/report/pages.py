"""The report's HTML pages. Every text from a bundle (names, labels, paths, IR)
goes through :func:`~irscope.export.report.embed.esc` or rides as escaped JSON
(:func:`~irscope.export.report.embed.json_block`); the page's script puts texts
into the document with ``textContent`` only, never as markup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscope.export.report.across import Across, PairDiff
from irscope.export.report.collect import KernelMeta, SourceView, StageText
from irscope.export.report.embed import esc, json_block, pack, pack_json
from irscope.export.report.failure import failure_panel, status_cell
from irscope.export.report.functions import FunctionsView
from irscope.export.report.heat import heat_pair_section
from irscope.export.report.pictures import KernelPictures, Picture
from irscope.export.report.timeline import TimelineEntry, change_json
from irscope.compiler.stages import SASS, TTGIR
from irscope.compiler.units import human_bytes

if TYPE_CHECKING:
    from irscope.core import Failure


@dataclass(frozen=True, slots=True)
class Stamp:
    """How the report was made, printed at the foot of every page."""

    command: str
    irscope_version: str
    triton_versions: tuple[str, ...]
    created: str
    """UTC, ISO 8601."""

    def to_json(self) -> dict:
        return {"command": self.command, "irscope_version": self.irscope_version,
                "triton_versions": list(self.triton_versions), "created": self.created}


def _num(v) -> str:
    return "-" if v is None else str(v)


def page(title: str, body: str, stamp: Stamp, *, kind: str, data: str = "") -> str:
    """A whole page: head, navigation, ``body`` (already HTML), the stamp."""
    versions = ", ".join(stamp.triton_versions) or "-"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="irscope report {esc(stamp.irscope_version)}">
<title>{esc(title)}</title>
<link rel="stylesheet" href="assets/report.css">
</head>
<body data-page="{esc(kind)}">
<header class="top"><a class="home" href="index.html">irscope report</a><h1>{esc(title)}</h1></header>
<main>
{body}
</main>
<footer class="stamp" id="stamp">Made by <code>{esc(stamp.command)}</code> · irscope {esc(stamp.irscope_version)}
 · Triton {esc(versions)} · {esc(stamp.created)}</footer>
{data}
<script src="assets/report.js"></script>
</body></html>
"""


_INDEX_COLUMNS = ("kernel", "status", "variant", "target", "Triton", "warps", "stages", "regs", "spills", "shared",
                  "occupancy", "compile", "passes")
"""The index's columns: the status next to the kernel's name, seen at every width."""


def _meta_row(m: KernelMeta, with_bundle: bool) -> str:
    compile_ = "-" if m.compile_seconds is None else f"{m.compile_seconds:.2f} s"
    variant = esc(m.variant or "-").replace(",", ",<wbr>")  # long labels wrap between fields
    cells = [f'<a href="{esc(m.page)}">{esc(m.kernel)}</a>', status_cell(m), variant, esc(m.target),
             esc(m.triton_version or "-"), _num(m.num_warps), _num(m.num_stages), _num(m.registers),
             esc(human_bytes(m.spills)), esc(human_bytes(m.shared)), esc(m.occupancy or "-"), compile_,
             str(m.passes)]
    wrap = {1, 2}  # status and variant may wrap; numbers never do
    if with_bundle:
        cells.insert(0, esc(m.bundle))
        wrap = {i + 1 for i in wrap} | {0}
    cls = ' class="failed"' if m.error else ""
    return f"<tr{cls}>" + "".join(f'<td class="wrap">{c}</td>' if i in wrap else f"<td>{c}</td>"
                                  for i, c in enumerate(cells)) + "</tr>"


def index_page(metas: list[KernelMeta], bundles: list[tuple[str, str]], stamp: Stamp,
               compare: str | None, whatif: str = "") -> str:
    """The kernels with their metadata; ``bundles`` is (label, path) per bundle;
    ``whatif``: the tune tables' section (HTML of :mod:`irscope.export.report.experiments`)."""
    many = len(bundles) > 1
    heads = (("bundle",) if many else ()) + _INDEX_COLUMNS
    rows = "\n".join(_meta_row(m, many) for m in metas)
    listed = "".join(f"<li><b>{esc(label)}</b>: <code>{esc(path)}</code></li>" for label, path in bundles)
    link = (f'<p class="compare-link"><a href="{esc(compare)}">Compare: the matrix and the diffs</a></p>'
            if compare else "")
    body = f"""<section><h2>Bundles</h2><ul class="bundles">{listed}</ul>{link}</section>
<section><h2>Kernels</h2>
<div class="table-scroll"><table class="kernels"><thead><tr>{"".join(f"<th>{esc(h)}</th>" for h in heads)}</tr></thead>
<tbody>
{rows}
</tbody></table></div>
<p class="note">stages: Triton's num_stages; shared: the shared memory a launch uses; occupancy: resident
blocks per SM x warps per block, and the limit that binds.</p></section>
{whatif}"""
    return page("Kernels", body, stamp, kind="index")


def _pictures(pictures: list[Picture]) -> str:
    # The SVG is set by the script (a blob: URL of the packed data): see pictures.py.
    return "\n".join(f'<figure class="picture"><figcaption><b>{esc(p.title)}</b> {esc(p.caption)} '
                     f'<a class="open" data-picture="{esc(p.key)}" target="_blank">open</a></figcaption>'
                     f'<img data-picture="{esc(p.key)}" alt="{esc(p.title)}"></figure>' for p in pictures)


def _lineage_hint(pics: KernelPictures) -> str:
    if not pics.lineage:
        return ""
    lines = ", ".join(str(n) for n in sorted(pics.lineage))
    return esc(f"Lineage pictures (the line's ops in every stage, and their links) are drawn for the lines with "
               f"the most ops: {lines}.")


def _charge_switch() -> str:
    """The switch that counts a helper's ops on the kernel line that calls it."""
    return ('<label class="charge" title="count each helper\'s ops on the kernel line that calls it">'
            '<input id="charge-calls" type="checkbox"> helpers\' ops on their call line</label>')


def kernel_page(meta: KernelMeta, source: SourceView | None, stages: list[StageText], passes: list[TimelineEntry],
                stamp: Stamp, pictures: KernelPictures | None = None, functions: "FunctionsView | None" = None,
                failure: "Failure | None" = None, why: str = "", whatif: str = "", heat: str = "",
                heat_map: dict | None = None) -> str:
    """One capture: metadata, the ``failure`` panel of a failed compile, linked source and
    stages (the Python pane with a section per ``@triton.jit`` helper, ``functions``), the
    ``why`` section (HTML of :mod:`irscope.export.report.why`), the ``whatif`` section
    (:mod:`irscope.export.report.experiments`), the measured ``heat`` section of a profiled
    capture (:mod:`irscope.export.report.heat`, whose ``heat_map`` tints the linked source
    and stages), pass timeline, pictures."""
    pics = pictures or KernelPictures()
    helpers = functions is not None and functions.has_helpers
    every = [*pics.graphs, *pics.layouts, *pics.lineage.values()]
    data = {
        "source": None if source is None else {"file": source.file, "first_line": source.first_line,
                                               "lines": list(source.lines),
                                               "statement_of": {str(k): v for k, v in source.statement_of.items()}},
        "stages": [{"name": s.name, "title": s.title, "truncated": s.truncated, "text": pack(s.text),
                    "line_ops": {str(k): v for k, v in s.line_ops.items()}} for s in stages],
        "passes": pack_json([p.to_json() for p in passes]),
        "lineage": {str(k): p.key for k, p in pics.lineage.items()},
        "functions": functions.to_json() if functions is not None and helpers else None,
        "pictures": {p.key: p.to_json() for p in every},
        "heat": heat_map,
    }
    facts = [("bundle", meta.bundle), ("capture", f"#{meta.capture_id}"), ("variant", meta.variant or "-"),
             ("target", meta.target), ("Triton", meta.triton_version or "-"), ("warps", _num(meta.num_warps)),
             ("stages", _num(meta.num_stages)), ("registers", _num(meta.registers)),
             ("spills", human_bytes(meta.spills)), ("shared", human_bytes(meta.shared)),
             ("occupancy", meta.occupancy or "-"),
             ("compile", "-" if meta.compile_seconds is None else f"{meta.compile_seconds:.2f} s"),
             ("passes", str(meta.passes))]
    if meta.error:
        facts.append(("failed", meta.error))
    dl = "".join(f"<div><dt>{esc(k)}</dt><dd>{esc(v)}</dd></div>" for k, v in facts)
    note_html = "".join(f'<p class="note">{esc(n)}</p>' for n in pics.notes)
    file = source.file if source else None
    body = f"""<section class="facts"><dl>{dl}</dl>{note_html}</section>
{failure_panel(failure, {s.name for s in stages})}
<section id="linked"><h2>Source and stages</h2>
<p class="hint">Click a Python line (<code>{esc(file or "no source stored")}</code>): its ops light up in every
stage. Lines with ops carry their count; a statement spanning lines carries it on its first line, and a click
on any of its lines selects it whole.</p>
<div class="linked"><div class="pane source-pane"><h3>Python</h3>{_charge_switch() if helpers else ""}<div id="source" class="code"></div></div>
<div id="stages" class="stages"></div></div>
<div id="lineage" class="lineage" hidden><h3>Lineage of line <span id="lineage-line"></span></h3>
<img id="lineage-img" alt="lineage"></div>
<p class="note" id="lineage-hint">{_lineage_hint(pics)}</p>
</section>
{heat}
{why}
{whatif}
<section id="timeline"><h2>Pass timeline</h2>
<div class="controls"><button id="prev-pass" type="button" title="previous pass (←)">◀ prev</button>
<button id="next-pass" type="button" title="next pass (→)">next ▶</button>
<label><input id="changed-only" type="checkbox" checked> only passes that changed the IR</label>
<span class="keys">keys: ← →</span></div>
<div id="pass-strip" class="strip"></div>
<div id="pass-detail" class="detail"><h3 id="pass-title"></h3><p id="pass-summary"></p>
<ol id="pass-changes" class="changes"></ol></div>
</section>
<section id="graphs"><h2>Graphs</h2>{_pictures(pics.graphs) or '<p class="note">no graphs drawn</p>'}</section>
<section id="layouts"><h2>Layouts</h2><p class="note">The distinct encodings of the TTGIR's tensors: who holds
each element (colour: warp, shade: lane), or for shared memory the bank after swizzling.</p>
{_pictures(pics.layouts) or '<p class="note">no layouts drawn</p>'}</section>
<noscript><p class="note">The source, stages and pass timeline need JavaScript.</p></noscript>"""
    title = f"{meta.kernel} [{meta.variant or '-'}] {meta.target}"
    return page(title, body, stamp, kind="kernel", data=json_block("kernel-data", data))


def _matrix_table(m) -> str:
    head = "".join(f"<th>{esc(label)}</th>" for label in m.labels)
    rows = []
    for r in m.rows():
        cls = ' class="varies"' if r.varies else ""
        cells = "".join(f"<td>{esc('-' if v is None else v)}</td>" for v in r.values)
        rows.append(f"<tr{cls}><th>{esc(r.name)}</th>{cells}</tr>")
    title = m.sides[0].capture if m.sides else ""
    return (f'<table class="matrix"><caption>{esc(title)}</caption><thead><tr><th></th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def _delta(d) -> str:
    if d is None:
        return "-"
    if not d.changed:
        return esc(d.before)
    return f'<span class="changed">{esc(d.before)} → {esc(d.after)}</span>'


def compare_page(across: Across, stamp: Stamp) -> str:
    """The version or target matrix, and the table of pair diffs."""
    what = "bundles" if across.by is None else across.by.replace("_", " ") + "s"
    parts = [f"<section><h2>Sides</h2><p>Compared {esc(what)}: "
             + ", ".join(f"<b>{esc(x)}</b>" for x in across.labels) + "</p></section>"]
    if across.pairs:
        rows = []
        for p in across.pairs:
            s = p.summary
            ops = {x.name: x for x in s.ops}
            counts = {k: len(d.changes) for k, d in p.comparison.stages.items()}
            ir = ", ".join(f"{k} {n}" for k, n in counts.items() if n) or "none"
            variant = esc(s.variant).replace(",", ",<wbr>")
            rows.append(f'<tr><td><a href="{esc(p.page)}">{esc(s.kernel)}</a></td><td class="wrap">{variant}</td>'
                        f"<td>{esc(s.target)}</td><td>{esc(p.a_label)} → {esc(p.b_label)}</td>"
                        f"<td>{_delta(s.registers)}</td><td>{_delta(s.spills)}</td><td>{_delta(s.shared)}</td>"
                        f"<td>{_delta(s.occupancy)}</td><td>{_delta(ops.get(TTGIR))}</td>"
                        f"<td>{_delta(ops.get(SASS))}</td><td class=\"wrap\">{esc(ir)}</td>"
                        f"<td class=\"wrap\">{esc(', '.join(p.differs))}</td></tr>")
        heads = ("kernel", "variant", "target", "sides", "regs", "spills", "shared", "occupancy", "ops ttgir",
                 "ops sass", "IR changes", "variant differs")
        parts.append("<section><h2>Pairs</h2><table class=\"pairs\"><thead><tr>"
                     + "".join(f"<th>{esc(h)}</th>" for h in heads) + "</tr></thead><tbody>"
                     + "".join(rows) + "</tbody></table></section>")
    if across.only:
        parts.append("<section><h2>Unpaired</h2><ul>" + "".join(
            f"<li>only in <b>{esc(label)}</b>: {esc(title)}</li>" for label, title in across.only) + "</ul></section>")
    if across.matrices:
        parts.append("<section><h2>Matrix</h2><p class=\"note\">Highlighted rows differ between the sides.</p>"
                     + "\n".join(_matrix_table(m) for m in across.matrices) + "</section>")
    return page("Compare", "\n".join(parts), stamp, kind="compare")


MAX_PAIR_CHANGES = 300
"""Changes listed per stage on a pair's diff page."""


def _change_item(c) -> str:
    j = change_json(c)
    sides = []
    for key in ("before", "after"):
        ref = j[key]
        if ref is not None:
            sides.append(f'<div class="{key}"><span class="ln">{key} line {ref["line"]}</span>'
                         f"<code>{esc(ref['text'])}</code></div>")
    details = "".join(f"<li>{esc(d)}</li>" for d in j["details"])
    py = f' <span class="py">py {j["python_line"]}</span>' if j["python_line"] else ""
    return (f'<li class="change {esc(j["kind"])}"><span class="kind">{esc(j["kind"])}</span> '
            f'<b>{esc(j["op"])}</b>{py}{"".join(sides)}' + (f"<ul>{details}</ul>" if details else "") + "</li>")


def pair_page(p: PairDiff, stamp: Stamp) -> str:
    """One pair's diff: metadata deltas, then each stage's changes."""
    cmp = p.comparison
    meta = [d for d in cmp.metadata if d.changed]
    parts = [f'<section><p>A: <a href="{esc(p.a_page)}">{esc(p.a_label)}</a> · '
             f'B: <a href="{esc(p.b_page)}">{esc(p.b_label)}</a></p>'
             + "".join(f'<p class="note">{esc(n)}</p>' for n in cmp.notes) + "</section>"]
    if meta:
        parts.append("<section><h2>Compile options and resources</h2><table class=\"meta\"><thead><tr><th>field"
                     "</th><th>A</th><th>B</th></tr></thead><tbody>" + "".join(
                         f"<tr><td>{esc(d.name)}</td><td>{esc(d.before)}</td><td>{esc(d.after)}</td></tr>"
                         for d in meta) + "</tbody></table></section>")
    if cmp.heat is not None:  # both captures profiled: the measured change per line
        parts.append(heat_pair_section(cmp.heat))
    if cmp.passes is not None:
        rows = [s for s in cmp.passes.stages if not s.identical]
        if rows:
            parts.append("<section><h2>Pass pipeline</h2><ul>" + "".join(
                f"<li><b>{esc(s.stage)}</b>: {len(s.added)} added, {len(s.removed)} removed, "
                f"{len(s.reordered)} reordered, {len(s.effect_changed)} with another effect"
                + "".join(f" · +{esc(x.argument or x.name)}" for x in s.added[:20])
                + "".join(f" · −{esc(x.argument or x.name)}" for x in s.removed[:20]) + "</li>"
                for s in rows) + "</ul></section>")
    for stage, d in cmp.stages.items():
        shown = d.changes[:MAX_PAIR_CHANGES]
        more = (f'<p class="note">{len(d.changes) - len(shown)} more changes: irscope diff --all</p>'
                if len(d.changes) > len(shown) else "")
        note = f'<p class="note">{esc(d.note)}</p>' if d.note else ""
        parts.append(f'<section class="stage-diff"><h2>{esc(stage)}</h2><p>{d.matched} matched · {d.added} added · '
                     f"{d.removed} removed · {d.moved} moved · {d.changed} changed</p>{note}"
                     f'<ol class="changes">{"".join(_change_item(c) for c in shown)}</ol>{more}</section>')
    title = f"{p.summary.kernel} [{p.summary.variant}] {p.summary.target}: {p.a_label} → {p.b_label}"
    return page(title, "\n".join(parts), stamp, kind="pair")
