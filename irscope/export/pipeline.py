"""The pass pipeline of one capture as a graph: the compilation flow a learner holds
against Triton's architecture diagram.

Stages are clusters and passes are nodes, each annotated with the ops it added,
removed, changed and moved (:class:`irscope.core.pass_steps.PassStep`) and its time;
passes that left the IR alone are greyed. The passes are laid out in columns read
left to right, each top to bottom, in the order they ran (:func:`_grid`): each stage
starts a column, a pass run inside another (the step's ``parent``/``depth``) sits
under its parent in a ``nested`` cluster and never leaves its column, stages without
passes (PTX, cubin, SASS) share the last column, and the rows per column are those
that make the picture fit :data:`SCREEN_PT` with the least zoom. With ``other`` (another capture), passes that only
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
_NESTED_FILL = "#ffffff"
SCREEN_PT = (1440, 900)
"""The screen the picture is laid out for, in points (1920x1200 px at 96 dpi): the
number of rows per column is chosen so that the estimated picture fits it."""
_ROW_PT = 38.0  # a two-line pass node (0.3 in high, grown to its text) and the gap under it
_CHAR_PT = 5.3  # a character of a 10 pt bold label (Helvetica, pass names: measured)


def _seconds(s: float | None) -> str:
    if s is None:
        return ""
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def _effect(p, short: bool = False) -> str:
    """What pass ``p`` did; ``short`` for a label (the tooltip has the long words)."""
    if short:
        return p.step.effect(unknown="effect unknown", minus="\u2212", grouped=True, attrs="attributes/locations")
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
    # What each stage holds, in reading order: units are kept whole in one column (a
    # pass and the passes it ran inside it, in a cluster under it).
    stage_units: list[tuple[str, list[list[str]]]] = []
    if SOURCE in capture.stages or capture.source.text:
        g.add_node(SOURCE, kind=SOURCE, shape="note", fill=STAGE_FILL[SOURCE],
                   label=[clean(f"Python: {capture.kernel}", 60), clean(capture.file or "", 60)],
                   tooltip=clean(capture.file or capture.kernel, 300), cluster=None)
        stage_units.append((SOURCE, [[SOURCE]]))
    for stage in order:
        cid = f"stage:{stage}"
        name = display_name(stage)
        mine = [p for p in passes if p.stage == stage]
        total = sum(p.seconds or 0 for p in mine)
        label = f"{stage}: {name}" + (f" \u00b7 {len(mine)} passes" if mine else "") + \
            (f" \u00b7 {_seconds(total)} timed" if total else "")
        add_cluster(g, cid, clean(label, 120), None, "stage", STAGE_FILL.get(stage, "#fafafa"))
        units: list[list[str]] = []
        top: dict[int, int] = {}  # pass index -> the top-level pass of its unit
        for p in mine:
            key = f"pass{p.index}"
            parent = p.step.parent
            if parent is not None and parent in top and units:
                root = top[p.index] = top[parent]
                ncid = f"nest:{root}"
                if ncid not in g.graph["clusters"]:
                    add_cluster(g, ncid, clean(f"inside #{root} {passes[root].name}", 80), cid, "nested",
                                _NESTED_FILL)
                g.add_node(key, **_pass_attrs(p, ncid, marks.get(p.index)))
                units[-1].append(key)
            else:
                top[p.index] = p.index
                g.add_node(key, **_pass_attrs(p, cid, marks.get(p.index)))
                units.append([key])
        if stage in capture.stages:
            key = f"stage{stage}"
            g.add_node(key, kind="stage", name=stage, cluster=cid, shape="box", style="filled,bold",
                       fill="#ffffff", label=[clean(f"{stage} text", 40), _stage_size(capture, stage)],
                       tooltip=clean(f"the final {name} text", 200))
            units.append([key])
        ghost_keys = []
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
            ghost_keys.append(key)
        stage_units.append((stage, units))
        if ghost_keys:  # the other capture's runs: a column group of their own, inside the stage
            stage_units.append((stage, [[k] for k in ghost_keys]))
    g.graph["notes"] = notes  # (before the grid: the notes' lines count in its height)
    _grid(g, stage_units)
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
    lines = [clean(f"{nested}#{p.index} {p.name}", 50),
             _effect(p, short=True) + (f" \u00b7 {_seconds(p.seconds)}" if p.seconds else "")]
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


def _label_width(attrs: dict) -> float:
    lines = attrs.get("label") or [""]
    return max([len(lines[0]) * _CHAR_PT] + [len(t) * 5.2 for t in lines[1:]]) + 24


def _columns(groups: list[list[list[str]]], rows: int) -> list[list[str]]:
    """The columns of ``groups`` (each starts a column) with at most ``rows`` nodes
    each; a unit (a pass and its nested passes) is never split, so a longer one
    makes a longer column."""
    cols: list[list[str]] = []
    for units in groups:
        col: list[str] = []
        for unit in units:
            if col and len(col) + len(unit) > rows:
                cols.append(col)
                col = []
            col.extend(unit)
        if col:
            cols.append(col)
    return cols


def _estimate(g, cols: list[list[str]]) -> tuple[float, float]:
    """(width, height) in points the picture of ``cols`` will about take."""
    width = sum(max(_label_width(g.nodes[n]) for n in col) + 24 for col in cols)
    clusters = g.graph["clusters"]
    height = 0.0
    for col in cols:
        nests = {g.nodes[n].get("cluster") for n in col} - {None}
        nested = sum(1 for c in nests if clusters.get(c, {}).get("kind") != "stage")
        rows = sum(_ROW_PT + 11 * max(0, len(g.nodes[n].get("label") or ()) - 2) for n in col)
        height = max(height, rows + 26 * (1 + nested))
    return width, height + 80 + 14 * (2 + len(g.graph.get("notes", [])))


def _grid(g, stage_units: list[tuple[str, list[list[str]]]]) -> None:
    """Lay the passes out in columns that fit :data:`SCREEN_PT`: each stage starts a
    column, a column holds as many rows as make the whole picture need the least
    zoom to fit the screen, stages without passes share one column, and the Python
    source sits on top of the first stage's first column. Edges join the nodes of a
    column (they set the layout); the columns read left to right."""
    groups: list[list[list[str]]] = []
    stages: list[str] = []  # the stage of each group
    singles: list[str] = []
    source = False
    for stage, units in stage_units:
        if stage == SOURCE:
            source = True
            continue
        if len(units) == 1 and len(units[0]) == 1 and g.nodes[units[0][0]].get("kind") == "stage":
            singles.append(units[0][0])  # PTX, cubin, SASS: one node each
            continue
        if singles:
            groups.append([[k] for k in singles])
            stages.append("")
            singles = []
        groups.append(units)
        stages.append(stage)
    if singles:
        groups.append([[k] for k in singles])
        stages.append("")
    if source:  # kept whole with the first unit, so it tops the first column
        groups = [[[SOURCE, *groups[0][0]], *groups[0][1:]], *groups[1:]] if groups else [[[SOURCE]]]
    longest = max((len(u) for units in groups for u in units), default=1)
    total = sum(len(u) for units in groups for u in units)
    best = None
    for rows in range(max(4, longest), max(5, total + 1)):
        w, h = _estimate(g, _columns(groups, rows))
        zoom = max(w / SCREEN_PT[0], h / SCREEN_PT[1])
        if best is None or zoom < best[0] - 1e-9:
            best = (zoom, rows)
    rows = best[1] if best is not None else total
    cols = _columns(groups, rows)
    for col in cols:
        for a, b in zip(col, col[1:]):
            g.add_edge(a, b, kind="order")
    g.graph["columns"] = [list(c) for c in cols]
    # The column tops on one rank, in reading order (dot would otherwise reorder
    # columns to shorten edges). The first stage's columns start one row lower, under
    # the source, so that its cluster does not reach up around the source.
    lead = next((i for i, st in enumerate(stages) if st != stages[0]), len(stages)) if stages else 0
    first = len(_columns(groups[:lead], rows)) if source else 0  # the first stage's columns
    tops = [c[0] for c in cols[:1]] + [c[0] for c in cols[max(1, first):]]
    same = [tops]
    if first > 1 and len(cols[0]) > 1:
        same.append([cols[0][1]] + [c[0] for c in cols[1:first]])
    g.graph["same_rank"] = same
    g.graph["ranksep"] = "0.12"
    g.graph["node_height"] = "0.3"
    g.graph["node_fontsize"] = "10"
