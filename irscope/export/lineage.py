"""The lineage of one Python line: the line, then its TTIR ops, TTGIR ops, LLVM IR,
PTX and SASS (AMDGCN on AMD) instructions, with the links between adjacent stages.

The ops of each stage are those of the line's statement by the one rule
(:meth:`irscope.core.Capture.ops_at_line`: a statement spanning lines owns the ops
of all of them); links come from the capture's link
graph (:meth:`irscope.core.Capture.links`) and are drawn by kind: solid for
op-exact ones (``same-op``, ``exact``, ``derived``), dashed for links by location
only (``same-location``), dotted for by-line links (``same-line``: SASS). The
notes say, per stage pair, which kind the links are, and how to get exact ones.
A stage with many ops at the line folds them by op name, so the picture stays one
screen.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from irscope.errors import IrscopeError
from irscope.compiler.stages import LLIR, LOWERING, PTX, SOURCE, TTGIR, display_name

from .graph import OpGraph, add_cluster, capture_title, new_graph
from .style import STAGE_FILL, clean, dialect_fill

PER_STAGE = 16
"""A stage with more ops than this at the line is folded by op name."""
SOURCE_LINES = 4
"""Lines of a multi-line statement the Python node prints (the tooltip has them all)."""

_EXACT_KINDS = ("same-op", "exact", "derived")
_EDGE_LOOK: dict[str, dict[str, object]] = {"same-op": {"penwidth": 2.0}, "exact": {"penwidth": 2.0}, "derived": {},
              "same-location": {"style": "dashed"}, "same-line": {"style": "dotted"}}
_KIND_WORDS = {"same-op": "op-exact (same op, same location chain)", "exact": "op-exact (--exact-links)",
               "derived": "derived (ops passes added at a location TTIR ops share)",
               "same-location": "by location only", "same-line": "by Python line only (the stage prints no columns)"}


def lineage_graph(capture, line: int) -> OpGraph:
    """What Python ``line`` of ``capture``'s kernel became in every stage."""
    per_stage = capture.ops_at_line(line)
    unit = per_stage.statement  # the line's whole statement: its ops may sit on any of its lines
    where = f"Python line {line}" if not unit.spans else f"Python lines {unit.label()}"
    stages = [s for s in LOWERING if per_stage.get(s)]
    if not stages:
        src = capture.source
        span = f" (the kernel spans lines {src.first_line}..{src.last_line})" if src.first_line and src.last_line else ""
        raise IrscopeError(f"no op of any stage comes from {where}{span}")
    g = new_graph(f"{capture_title(capture)} \u00b7 lineage of {where}", "lineage")
    texts = [capture.source.line(n) or "" for n in unit.lines]
    shown = [clean(t.strip(), 90) for t in texts[:SOURCE_LINES]]
    if len(texts) > SOURCE_LINES:
        shown.append(f"(+{len(texts) - SOURCE_LINES} lines)")
    g.add_node("python", kind=SOURCE, line=unit.first, last_line=unit.last, shape="note",
               fill=STAGE_FILL[SOURCE], label=[where, *shown], tooltip=clean("\n".join(texts), 300))
    rep: dict[tuple[str, int], str] = {}
    for s in stages:
        ops = per_stage[s]
        cid = add_cluster(g, f"stage:{s}", clean(f"{display_name(s)}: {len(ops):,} op(s)", 80),
                          None, "stage", STAGE_FILL.get(s, "#fafafa"))
        if len(ops) <= PER_STAGE:
            for op in ops:
                key = f"{s}:{op.line}"
                rep[(s, op.line)] = key
                g.add_node(key, kind="op", stage=s, name=clean(op.name, 80), line=op.line, cluster=cid,
                           shape="box", fill=dialect_fill(op.dialect or s),
                           label=[clean(op.name, 40), f"L{op.line}"], tooltip=clean(op.text.strip(), 400))
        else:
            names = Counter(op.name for op in ops)
            for name, n in names.most_common():
                key = f"{s}:group:{name}"
                g.add_node(key, kind="group", stage=s, name=clean(name, 80), count=n, cluster=cid,
                           shape="box3d", fill=dialect_fill(next(o.dialect for o in ops if o.name == name) or s),
                           label=[clean(name, 40), f"\u00d7{n:,}"], tooltip=clean(f"{n:,} {name} at line {line}", 200))
            for op in ops:
                rep[(s, op.line)] = f"{s}:group:{op.name}"
    for op in per_stage[stages[0]]:
        if not g.has_edge("python", rep[(stages[0], op.line)]):
            g.add_edge("python", rep[(stages[0], op.line)], kind=SOURCE)
    notes = _link(g, capture, stages, per_stage, rep)
    if any(len(per_stage[s]) > PER_STAGE for s in stages):
        notes.append(f"stages with more than {PER_STAGE} ops at the line are folded by op name")
    g.graph["notes"] = [clean(n, 300) for n in notes]
    # Node fills are dialects (as in stage graphs); the links are told apart by line style.
    dialects = {d: dialect_fill(d) for s in stages for d in dict.fromkeys(op.dialect or s for op in per_stage[s])}
    g.graph["legend"] = [[d, c] for d, c in list(dialects.items())[:12]] + [
        ["links: op-exact solid", ""], ["by location dashed", ""], ["by line dotted", ""]]
    return OpGraph(g, list(g.graph["notes"]), sum(len(per_stage[s]) for s in stages))


def _link(g, capture, stages: list[str], per_stage, rep) -> list[str]:
    """Edges between adjacent stages; one note per stage pair."""
    links = capture.links()
    notes = []
    for a, b in pairwise(stages):
        kinds: Counter = Counter()
        outside = 0
        for op in per_stage[a]:
            for ln, kind in links.neighbours(a, op.line, b):
                dst = rep.get((b, ln))
                if dst is None:
                    outside += 1
                    continue
                kinds[kind] += 1
                src = rep[(a, op.line)]
                if g.has_edge(src, dst):
                    e = g.edges[src, dst]
                    e["count"] += 1
                    if _rank(kind) < _rank(e["link"]):
                        e["link"] = kind
                        e.update(_EDGE_LOOK.get(kind, {}))
                    continue
                g.add_edge(src, dst, kind="link", link=kind, count=1, **_EDGE_LOOK.get(kind, {}))
        if not kinds:
            notes.append(f"{a} -> {b}: no links between these ops")
            continue
        words = ", ".join(f"{n:,} {_KIND_WORDS.get(k, k)}" for k, n in kinds.most_common())
        note = f"{a} -> {b}: {words}"
        if a == TTGIR and b in (LLIR, PTX) and "exact" not in kinds:
            note += " (capture with --exact-links for op-exact TTGIR links)"
        if outside:
            note += f"; {outside:,} link(s) lead to ops of other lines, not drawn"
        notes.append(note)
    return notes


def _rank(kind: str) -> int:
    order = ("same-op", "exact", "derived", "same-location", "same-line")
    return order.index(kind) if kind in order else len(order)
