"""Stage graphs: the ops of one stage (or pass snapshot) as an :class:`OpGraph`.

Nodes are ops (label: op name, short result type, Python line; fill: the dialect,
or for PTX and SASS the instruction class) and block arguments; edges are def-use,
plus a dashed edge from each region terminator (``scf.yield``...) back to the op
that owns the region. Functions, ops with regions, their regions (when several) and
blocks (when several) are nested clusters.

Focus (:mod:`.focus`) keeps some Python lines or the neighbourhood of an op name;
``max_nodes`` folds the rest into summary nodes (:mod:`.collapse`). With no
``max_nodes``, up to :data:`DRAW_ALL_UP_TO` ops are drawn one by one; past that
:data:`DEFAULT_MAX_NODES` applies and a note says so. ``max_nodes=0`` draws every op.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from irscope.compiler.stages import FAMILY_MLIR, PTX, SASS, TTGIR
from irscope.errors import IrscopeError
from irscope.ir import Module
from irscope.ir.statements import StatementMap

from . import collapse
from .focus import by_lines, by_op
from .graph import OpGraph, add_cluster, capture_title, new_graph
from .highlight import Highlight, diff_highlight, pass_view
from .structure import Structure, Thing, build_structure
from .style import (
    GREY_FILL,
    GREY_TEXT,
    STATUS,
    clean,
    counts_line,
    dialect_fill,
    short_type,
)

if TYPE_CHECKING:
    from .costs import CostView

DRAW_ALL_UP_TO = 1000
"""Without ``max_nodes``, graphs of up to this many ops are drawn op by op."""
DEFAULT_MAX_NODES = 300
"""The ``max_nodes`` that applies past :data:`DRAW_ALL_UP_TO` ops."""
_REMOVED_SHOWN = 40  # removed ops drawn one by one; the rest as one node
_REMOVED_COLUMNS = 6

_CLUSTER_FILL = {"function": "#fbfbfb", "region": "#f4f7ff", "part": "#ffffff", "block": "#fffdf5"}


def stage_graph(capture, stage: str | None, *, lines: tuple[int, int] | None = None, op: str | None = None,
                radius: int | None = None, max_nodes: int | None = None, pass_index: int | None = None,
                diff_against=None, costs: bool = False) -> OpGraph:
    """The op graph of ``stage`` of ``capture`` (a :class:`irscope.core.Capture`).

    ``lines`` (first, last) keeps the ops of those Python lines; ``op`` (a name such
    as ``tt.dot``) keeps the ops within ``radius`` (default 1) def-use steps of every
    op of that name; ``max_nodes`` folds the rest into summary nodes (0: never).
    ``pass_index`` draws the IR pass N produced, its added and changed ops coloured
    (``stage`` is then ignored). ``diff_against`` (a Capture, an ``IRFile`` or a
    parsed ``Module`` of the same format) colours what differs from it: added =
    only here. ``costs`` puts each op's cost on its node (:mod:`.costs`: conversions
    and global access widths, from :meth:`irscope.core.Capture.explain`); final
    TTGIR only.
    IrscopeError (one line) for a stage, pass or op that is not there.
    """
    file = capture.file
    title = capture_title(capture)
    if costs:
        return _costs_graph(capture, stage, title, lines=lines, op=op, radius=radius, max_nodes=max_nodes,
                            pass_index=pass_index, diff_against=diff_against)
    if pass_index is not None:
        if diff_against is not None:
            raise IrscopeError("--pass and --diff do not combine: export the pass, or diff the stage")
        view = pass_view(capture, pass_index)
        return module_graph(view.module, title=f"{title} \u00b7 {view.what}", file=file, lines=lines, op=op,
                            radius=radius, max_nodes=max_nodes, highlight=view.highlight,
                            source_line=capture.source.line, statements=capture.statements)
    if not stage:
        raise IrscopeError("name a stage (--stage ttgir) or a pass (--pass N)")
    module = capture.stage(stage).module
    highlight = None
    if diff_against is not None:
        other, other_name = _other_module(diff_against, stage)
        highlight = diff_highlight(module, other, stage, other_name)
    return module_graph(module, title=f"{title} \u00b7 {stage}", file=file, lines=lines, op=op, radius=radius,
                        max_nodes=max_nodes, highlight=highlight, source_line=capture.source.line,
                        statements=capture.statements)


def _costs_graph(capture, stage: str | None, title: str, *, lines: tuple[int, int] | None, op: str | None,
                 radius: int | None, max_nodes: int | None, pass_index: int | None, diff_against) -> OpGraph:
    """The final TTGIR with its costs: the facts are TTGIR ops', so no other stage,
    pass snapshot or diff colouring combines with them."""
    from .costs import cost_view

    if pass_index is not None or diff_against is not None:
        raise IrscopeError(f"--costs and {'--pass' if pass_index is not None else '--diff'} do not combine: "
                           f"--costs colours the final TTGIR by cost")
    if stage != TTGIR:
        raise IrscopeError(f"--costs draws the final TTGIR (conversions and access widths are TTGIR ops'), "
                           f"not {clean(stage, 40)}: use --stage ttgir")
    module = capture.stage(TTGIR).module
    return module_graph(module, title=f"{title} \u00b7 {TTGIR} \u00b7 costs", file=capture.file, lines=lines,
                        op=op, radius=radius, max_nodes=max_nodes, source_line=capture.source.line,
                        statements=capture.statements, costs=cost_view(capture))


def _other_module(other, stage: str) -> tuple[Module, str]:
    from irscope.core import IRFile
    from irscope.core.files import DUMP

    if isinstance(other, Module):
        return other, "the other side"
    if isinstance(other, IRFile):
        from irscope.irdiff.engine import family_of

        try:
            same = family_of(other.format) == family_of(stage)
        except ValueError:  # a dump stream, or a format the diff does not know
            same = other.format == DUMP and family_of(stage) == FAMILY_MLIR
        if not same:
            raise IrscopeError(f"{clean(other.path, 120)} is {other.format}, and the {stage} stage cannot be "
                               f"compared with it: give a {stage} file")
        return other.module, clean(other.path, 120)
    if stage not in other.stages:
        raise IrscopeError(f"the other side ({other.title()}) has no stage {stage!r}")
    return other.stage(stage).module, capture_title(other)


def module_graph(module: Module, *, title: str, file: str | None = None, lines: tuple[int, int] | None = None,
                 op: str | None = None, radius: int | None = None, max_nodes: int | None = None,
                 highlight: Highlight | None = None, source_line=None,
                 statements: StatementMap | None = None, costs: CostView | None = None) -> OpGraph:
    """The op graph of any parsed module (see :func:`stage_graph` for the options);
    ``file`` is the kernel's file, whose lines count as Python lines, and
    ``source_line(n)`` (optional) its text, quoted in summary nodes. With
    ``statements`` (a capture's, :attr:`irscope.core.Capture.statements`) an op's
    Python line is its statement's first line, as every other view shows it.
    ``costs`` (:func:`irscope.export.costs.cost_view`) puts those costs on the op
    nodes, keeps the costed ops out of summary nodes, and sets the legend."""
    if radius is not None and op is None:
        raise IrscopeError("--radius goes with --op NAME")
    if max_nodes is not None and max_nodes < 0:
        raise IrscopeError(f"--max-nodes {max_nodes}: give 0 (no limit) or more")
    s = build_structure(module, file)
    if statements is not None:  # the core's rule: a statement spanning lines is shown on its first
        for t in s.things.values():
            if t.python_line is not None:
                t.python_line = statements.head(t.python_line)
    g = new_graph(clean(title, 300), "stage")
    notes: list[str] = []
    keys = list(s.things)
    total = sum(1 for t in s.things.values() if t.kind == "op")
    if not total:
        raise IrscopeError(f"{clean(title, 120)}: no ops inside functions to draw")
    if lines is not None:
        keys = by_lines(s, keys, lines)
        notes.append(f"Python lines {lines[0]}-{lines[1]}: {_ops(s, keys):,} of {total:,} ops")
    if op is not None:
        r = 1 if radius is None else radius
        keys, seeds = by_op(s, keys, op, r)
        notes.append(f"{seeds:,} {op} op(s) and what lies within {r} def-use step(s): {_ops(s, keys):,} ops")
    if highlight is not None:
        notes.extend(highlight.notes)
    removed = highlight.removed if highlight is not None else []
    if removed and lines is not None and highlight is not None:
        # Paired on whole modules first (so an op that moved to another line is not
        # "only in B"), then focused: the removed ops of these lines only.
        removed = highlight.removed_at(lines, file, statements.head if statements is not None else None)
        notes.append(f"{highlight.removed_label}: {len(removed):,} of {len(highlight.removed):,} op(s) at "
                     f"Python lines {lines[0]}-{lines[1]}")
    drawn_ops = _ops(s, keys)
    if max_nodes is None and drawn_ops > DRAW_ALL_UP_TO:
        max_nodes = DEFAULT_MAX_NODES
        notes.append(f"{drawn_ops:,} ops: more than {DRAW_ALL_UP_TO:,}, so drawn with --max-nodes "
                     f"{DEFAULT_MAX_NODES} (--max-nodes 0 draws every op)")
    # The removed ops get at most a fifth of a budget: they are the other side's.
    room = _REMOVED_SHOWN if not max_nodes else min(_REMOVED_SHOWN, max(1, max_nodes // 5) - 1)
    shown_removed = min(len(removed), room) + (1 if len(removed) > room else 0)
    budget = max(1, max_nodes - shown_removed) if max_nodes else 0
    members = [collapse.Member(k, s.things[k].clusters, s.things[k].python_line) for k in keys]
    keep = s.owners()
    if costs is not None:  # a costed op folded into a summary node would lose its cost
        keep |= {k for k in keys if (t := s.things[k]).op is not None and t.op.line in costs.ops}
    plan = collapse.plan(members, budget, keep) if budget else collapse.Plan({}, [], "none", len(keys))
    if plan.groups:
        folded = sum(len(m) for _, m in plan.groups)
        by = {"line": "Python line within each region", "region": "region", "function": "function"}[plan.level]
        notes.append(f"collapsed {folded:,} of {len(keys):,} ops and arguments into {len(plan.groups):,} summary "
                     f"nodes (grouped by {by}); {plan.drawn:,} nodes drawn")
    if not s.ssa:
        notes.append("PTX/SASS/AMDGCN registers are not SSA: an edge joins a read to the latest earlier write in text "
                     "order, ignoring branches")
    if s.module_ops:
        notes.append(f"{s.module_ops:,} module-level op(s) (globals, declarations) not drawn")
    _emit(g, s, keys, plan, highlight, module.stage, source_line)
    if removed and highlight is not None:  # (only a highlight has removed ops)
        _removed(g, removed, highlight.removed_label, room)
    _status_legend(g, highlight)
    if costs is not None:
        from .costs import apply_costs

        notes.extend(costs.notes)
        apply_costs(g, costs)
    g.graph["notes"] = [clean(n, 300) for n in notes]
    return OpGraph(g, list(g.graph["notes"]), total)


def _status_legend(g, h: Highlight | None) -> None:
    """With a highlight, the fills mean statuses, not dialects: the legend says which."""
    if h is None:
        return
    drawn = {a.get("status") for _, a in g.nodes(data=True) if a.get("kind") in ("op", "group", "removed")}
    pass_view = h.removed_label.startswith("erased")
    words = {"added": "added by the pass" if pass_view else "only here", "changed": "changed",
             "moved": "moved", "removed": clean(h.removed_label, 60)}
    legend = [[words[k], STATUS[k][0]] for k in ("added", "changed", "moved", "removed") if k in drawn]
    if None in drawn:
        legend.append(["unchanged", GREY_FILL])
    g.graph["legend"] = legend


def _ops(s: Structure, keys: list[str]) -> int:
    return sum(1 for k in keys if s.things[k].kind == "op")


def _fill_of(t: Thing, stage: str) -> tuple[str, str]:
    """(fill, legend name) of an op."""
    if t.op is None:
        return "#ffffff", ""
    if stage in (PTX, SASS):
        from irscope.diff.mix import CLASSES, classify

        from .style import CLASS_FILL

        cls = classify(t.op.name, stage) if t.op.name != "<unknown>" else "other"
        return CLASS_FILL.get(cls if cls in CLASSES else "other", "#f4f4f4"), cls
    d = t.op.dialect or "?"
    return dialect_fill(d), d


def _emit(g, s: Structure, keys: list[str], plan: collapse.Plan, h: Highlight | None, stage: str,
          source_line=None) -> None:
    clusters = s.clusters
    for cid, c in clusters.items():
        add_cluster(g, cid, c.label, c.parent, c.kind, _CLUSTER_FILL.get(c.kind, "#ffffff"))
    status = h.status if h is not None else {}
    legend: Counter = Counter()
    colours: dict[str, str] = {}
    rep: dict[str, str] = {}
    du_cache: dict[int, object] = {}
    for k in keys:
        if k in plan.group_of:
            rep[k] = f"group{plan.group_of[k]}"
            continue
        rep[k] = k
        t = s.things[k]
        fill, lname = _fill_of(t, stage)
        if lname:
            legend[lname] += 1
            colours[lname] = fill
        attrs = _thing_attrs(t, fill, du_cache)
        st = status.get(t.op.line) if t.op is not None else None
        if h is not None:
            attrs |= _status_look(st)
        g.add_node(k, **attrs)
    for n, (gkey, members) in enumerate(plan.groups):
        things = [s.things[m] for m in members]
        g.add_node(f"group{n}", **_group_attrs(things, gkey, status if h is not None else None, stage,
                                               source_line))
        for t in things:
            fill, lname = _fill_of(t, stage)
            if lname:
                legend[lname] += 1
                colours[lname] = fill
    folded: Counter = Counter()
    for a, b, kind, value in s.edges:
        ra, rb = rep.get(a), rep.get(b)
        if ra is None or rb is None:
            continue
        if ra == rb:
            continue
        if g.has_edge(ra, rb):
            folded[(ra, rb)] += 1
            continue
        g.add_edge(ra, rb, kind=kind, value=clean(value, 40), count=1,
                   **({"style": "dashed", "constraint": False, "color": "#888888", "label": "yield"}
                      if kind == "yield" else {}))
    for (a, b), extra in folded.items():
        e = g.edges[a, b]
        e["count"] += extra
        e["label"] = f"\u00d7{e['count']}"
        e["penwidth"] = min(6.0, 1.0 + e["count"] ** 0.5 / 4)
    g.graph["legend"] = [[name, colours[name]] for name, _ in legend.most_common(12)]


def _thing_attrs(t: Thing, fill: str, du_cache) -> dict:
    if t.op is None:
        v = t.arg
        assert v is not None  # a thing is an op or a block argument
        return {"kind": "block_arg", "name": clean(v.name, 60), "type": clean(v.type_text, 200),
                "python_line": t.python_line, "cluster": t.clusters[-1], "shape": "ellipse", "fill": "#ffffff",
                "label": [clean(v.name, 40)] + ([short_type(v.type_text)] if v.type_text else []),
                "tooltip": clean(f"block argument {v.name}: {v.type_text}", 300)}
    op = t.op
    rtype = ""
    if op.results:
        fn = _function_of(op)
        if fn is not None:
            du = du_cache.get(id(fn))
            if du is None:
                du = du_cache[id(fn)] = fn.def_use()
            results = du.results(op)
            rtype = results[0].type_text if results else ""
    label = [clean(op.name, 40)]
    if rtype:
        label.append(short_type(rtype) + (f" (+{len(op.results) - 1})" if len(op.results) > 1 else ""))
    label.append(f"py {t.python_line} \u00b7 L{op.line}" if t.python_line else f"L{op.line}")
    return {"kind": "op", "name": clean(op.name, 80), "dialect": clean(op.dialect, 40), "line": op.line,
            "python_line": t.python_line, "result_type": clean(rtype, 200), "cluster": t.clusters[-1],
            "shape": "box", "fill": fill, "label": label, "tooltip": clean(op.text.strip(), 400)}


def _function_of(op):
    p = op.parent
    while p is not None and not hasattr(p, "def_use"):
        p = p.parent
    return p


def _status_look(status: str | None) -> dict:
    if status is None:
        return {"status": None, "fill": GREY_FILL, "fontcolor": GREY_TEXT, "border": "#c8c8c8"}
    fill, border = STATUS[status]
    return {"status": status, "fill": fill, "border": border, "penwidth": 2.5}


def _group_attrs(things: list[Thing], gkey, status: dict | None, stage: str, source_line=None) -> dict:
    names = Counter(t.name if t.op is not None else "block argument" for t in things)
    dialects = Counter(_fill_of(t, stage)[0] for t in things if t.op is not None)
    lines = sorted({t.python_line for t in things if t.python_line})
    cluster = gkey[0]
    n_ops = sum(1 for t in things if t.op is not None)
    where = (f"py {lines[0]}" if len(lines) == 1 else f"py {lines[0]}-{lines[-1]}" if lines else "no Python line")
    first = min((t.op.line for t in things if t.op is not None), default=0)
    last = max((t.op.line for t in things if t.op is not None), default=0)
    label = [f"{len(things):,} ops folded \u00b7 {where}", counts_line(names)]
    text = source_line(lines[0]) if source_line is not None and len(lines) == 1 else None
    if text and text.strip():  # what the line says: the learner's way into a lowered graph
        label.insert(1, clean(text.strip(), 60))
    attrs = {"kind": "group", "cluster": cluster, "count": len(things), "ops": n_ops,
             "python_lines": lines, "names": dict(names.most_common(20)), "first_line": first, "last_line": last,
             "shape": "box3d", "style": "filled,dashed",
             "fill": dialects.most_common(1)[0][0] if dialects else "#ffffff",
             "tooltip": clean(f"{len(things):,} ops folded (IR lines {first}-{last}): "
                              + counts_line(names, 12), 400)}
    if status is not None:
        got: Counter[str] = Counter(st for t in things if t.op is not None
                                    and (st := status.get(t.op.line)) is not None)
        attrs["statuses"] = dict(got)
        if got:
            top = got.most_common(1)[0][0]
            label.append(", ".join(f"{n:,} {k}" for k, n in got.most_common()))
            attrs |= {"status": top, "fill": STATUS[top][0], "border": STATUS[top][1], "penwidth": 2.5}
        else:
            attrs |= {"status": None, "fill": GREY_FILL, "fontcolor": GREY_TEXT}
    attrs["label"] = label
    return attrs


def _removed(g, removed, label: str, room: int) -> None:
    """The other side's ops that are gone, in a cluster of their own."""
    add_cluster(g, "removed", clean(f"{label}: {len(removed):,} op(s)", 120), None, "removed", "#fff5f5")
    fill, border = STATUS["removed"]
    for ref in removed[:room]:
        g.add_node(f"removed{ref.line}", kind="removed", name=clean(ref.name, 80), line=ref.line,
                   cluster="removed", shape="box", style="filled,dashed", fill=fill, border=border,
                   status="removed", label=[clean(ref.name, 40), f"was L{ref.line}"],
                   tooltip=clean(ref.text, 400))
    # Invisible edges stack the removed ops in columns: one row of 40 is unreadably wide.
    shown = [f"removed{ref.line}" for ref in removed[:room]]
    for a, b in zip(shown, shown[_REMOVED_COLUMNS:]):
        g.add_edge(a, b, kind="layout", style="invis")
    rest = removed[room:]
    if rest:
        names = Counter(r.name for r in rest)
        g.add_node("removed-rest", kind="group", cluster="removed", count=len(rest), ops=len(rest),
                   python_lines=[], status="removed",
                   shape="box3d", style="filled,dashed", fill=fill, border=border,
                   names=dict(names.most_common(20)),
                   label=[f"{len(rest):,} more removed", counts_line(names)],
                   tooltip=clean(counts_line(names, 12), 400))
