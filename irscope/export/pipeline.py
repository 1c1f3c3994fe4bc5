"""The pass pipeline of one capture as a graph: the compilation flow a learner holds
against Triton's architecture diagram.

Stages are clusters and passes are nodes, in order, each annotated with the ops it
added, removed, changed and moved (:class:`irscope.core.pass_steps.PassStep`) and its
time; passes that left the IR alone are greyed. Stages without passes (PTX, cubin,
SASS) follow as single nodes. With ``other`` (another capture), passes that only
one capture ran are marked, from :func:`irscope.diff.pipeline.pipeline_delta`: runs
only this capture has are green, runs only the other has are drawn in red in a
cluster of their own inside their stage, and paired runs whose effect differs are
orange.
"""

from __future__ import annotations

from irscope.diff.pipeline import pipeline_delta
from irscope.errors import IrscopeError
from irscope.compiler.stages import JSON, LOG, SOURCE, STAGES, display_name, stage_rank

from .graph import OpGraph, add_cluster, capture_title, new_graph
from .style import GREY_FILL, GREY_TEXT, STAGE_FILL, STATUS, clean

_CHANGED_FILL = "#dbeafe"


def _seconds(s: float | None) -> str:
    if s is None:
        return ""
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def _effect(p) -> str:
    return p.step.effect(unknown="effect unknown (IR after it not comparable)", minus="\u2212", grouped=True,
                         attrs="changed (no op changed: attributes, locations)")


def pipeline_graph(capture, other=None) -> OpGraph:
    """The pass pipeline of ``capture`` (an :class:`irscope.core.Capture`); ``other``,
    another capture, marks the passes only one of them ran."""
    passes = capture.passes()
    if not passes:
        raise IrscopeError(f"{capture.title()} has no pass snapshots (capture with irscope run records them)")
    g = new_graph(f"{capture_title(capture)} \u00b7 pass pipeline", "pipeline")
    notes = [(f"{len(passes)} passes, {sum(1 for p in passes if p.changed)} changed the IR; "
              "label: +added \u2212removed ~changed >moved ops, time from MLIR's/LLVM's timing report")]
    marks: dict[int, str] = {}
    ghosts: dict[str, list] = {}
    if other is not None:
        delta = pipeline_delta(other.passes(), passes)
        for sd in delta.stages:
            for occ in sd.added:
                marks[occ.index] = "only-here"
            for e in sd.effect_changed:
                marks.setdefault(e.index_after, "effect-differs")
            if sd.removed:
                ghosts[sd.stage] = list(sd.removed)
        n_here = sum(1 for v in marks.values() if v == "only-here")
        n_other = sum(len(v) for v in ghosts.values())
        notes.append(clean(f"against {capture_title(other)}: {n_here} pass run(s) only here (green), "
                           f"{n_other} only there (red), "
                           f"{sum(1 for v in marks.values() if v == 'effect-differs')} with another effect (orange)",
                           300))
    stage_names = list(dict.fromkeys(p.stage for p in passes))
    chain = [s for s in capture.stages if STAGES.get(s) is not None and s not in (SOURCE, JSON, LOG)]
    order = sorted(dict.fromkeys([*stage_names, *chain]), key=stage_rank)
    prev = None
    if SOURCE in capture.stages or capture.source.text:
        g.add_node(SOURCE, kind=SOURCE, shape="note", fill=STAGE_FILL[SOURCE],
                   label=[clean(f"Python: {capture.kernel}", 60), clean(capture.file or "", 60)],
                   tooltip=clean(capture.file or capture.kernel, 300), cluster=None)
        prev = SOURCE
    for stage in order:
        cid = f"stage:{stage}"
        name = display_name(stage)
        mine = [p for p in passes if p.stage == stage]
        total = sum(p.seconds or 0 for p in mine)
        label = f"{stage}: {name}" + (f" \u00b7 {len(mine)} passes" if mine else "") + \
            (f" \u00b7 {_seconds(total)} timed" if total else "")
        add_cluster(g, cid, clean(label, 120), None, "stage", STAGE_FILL.get(stage, "#fafafa"))
        for p in mine:
            key = f"pass{p.index}"
            g.add_node(key, **_pass_attrs(p, cid, marks.get(p.index)))
            if prev is not None:
                g.add_edge(prev, key, kind="order")
            prev = key
        if stage in capture.stages:
            key = f"stage{stage}"
            g.add_node(key, kind="stage", name=stage, cluster=cid, shape="box", style="filled,bold",
                       fill="#ffffff", label=[clean(f"{stage} text", 40), _stage_size(capture, stage)],
                       tooltip=clean(f"the final {name} text", 200))
            if prev is not None:
                g.add_edge(prev, key, kind="order")
            prev = key
        for n, occ in enumerate(ghosts.get(stage, ())):
            gcid = f"other:{stage}"
            if n == 0:
                add_cluster(g, gcid, clean(f"only in #{other.id}", 80), cid, "removed", "#fff5f5")
            fill, border = STATUS["only-other"]
            key = f"other{occ.index}"
            g.add_node(key, kind="pass", status="only-other", index=occ.index, name=clean(occ.name, 80),
                       argument=clean(occ.argument, 80), cluster=gcid, shape="box", style="filled,dashed",
                       fill=fill, border=border, label=[clean(f"#{occ.index} {occ.name}", 50), "only in the other"],
                       tooltip=clean(f"{occ.name} ({occ.argument}) run {occ.occurrence + 1} of the other capture", 300))
            if n:
                g.add_edge(f"other{ghosts[stage][n - 1].index}", key, kind="order", style="dashed", color="#c62828")
    g.graph["notes"] = notes
    g.graph["legend"] = [["changed the IR", _CHANGED_FILL], ["unchanged", GREY_FILL]] + (
        [["only here", STATUS["only-here"][0]], ["only in the other", STATUS["only-other"][0]],
         ["effect differs", STATUS["effect-differs"][0]]] if other is not None else [])
    return OpGraph(g, notes, len(passes))


def _stage_size(capture, stage: str) -> str:
    text = capture.stage(stage).text
    if isinstance(text, bytes):
        return f"{len(text):,} bytes"
    return f"{text.count(chr(10)):,} lines"


def _pass_attrs(p, cid: str, mark: str | None) -> dict:
    s = p.step
    c = s.counts
    effect = _effect(p)
    nested = "\u21b3 " * s.depth
    lines = [clean(f"{nested}#{p.index} {p.name}", 50), effect + (f" \u00b7 {_seconds(p.seconds)}" if p.seconds else "")]
    attrs = {"kind": "pass", "index": p.index, "name": clean(p.name, 80), "argument": clean(p.argument, 80),
             "stage": p.stage, "changed": s.changed, "added": c.added, "removed": c.removed,
             "modified": c.changed, "moved": c.moved, "depth": s.depth, "parent": s.parent,
             "ops_after": s.ops_after, "seconds": p.seconds, "status": mark,
             "cluster": cid, "shape": "box", "label": lines,
             "tooltip": clean(f"{p.name} ({p.argument}): {effect}; {s.ops_after:,} ops after", 300)}
    if s.changed:
        attrs |= {"fill": _CHANGED_FILL}
    else:
        attrs |= {"fill": GREY_FILL, "fontcolor": GREY_TEXT, "border": "#c8c8c8"}
    if mark is not None:
        fill, border = STATUS[mark]
        attrs |= {"fill": fill, "border": border, "penwidth": 2.5}
        lines.append("only in this capture" if mark == "only-here" else "effect differs from the other")
    return attrs
