"""An :class:`~irscope.export.graph.OpGraph` as DOT, SVG, PNG or JSON.

DOT is written with the ``graphviz`` package; SVG and PNG come from the real
``dot`` binary (Debian's ``graphviz``). Escaping, which the tests hold to hostile
input:

- labels are Graphviz HTML-like labels: every text goes through
  :func:`irscope.export.dot_text.html_text` (entities, backslashes doubled);
- tooltips are quoted strings made by :func:`irscope.export.dot_text.dot_string`
  (backslashes and quotes escaped by Graphviz's rules, for as many escString passes
  as the installed ``dot`` runs; marked ``nohtml``), so they read back exactly;
- node and cluster names are generated (``n12``, ``cluster_3``), never IR text.
"""

from __future__ import annotations

import json
import shutil
import subprocess

from irscope.errors import IrscopeError

from .dot_text import dot_string, html_text
from .graph import OpGraph, used_clusters

FORMATS = ("svg", "png", "dot", "json")
DOT_MISSING = "Graphviz's dot is not installed: install Graphviz: apt-get install graphviz (or run scripts/setup.sh)"
_FONT = "Helvetica"


def render(graph: OpGraph, fmt: str, *, timeout: float | None = None) -> bytes:
    """``graph`` as ``fmt`` (``svg``, ``png``, ``dot`` or ``json``). ``timeout``
    (seconds) bounds the ``dot`` run; IrscopeError (one line) when ``dot`` is
    missing, fails or runs out of time."""
    if fmt == "json":
        return to_json(graph).encode("utf-8")
    source = to_dot(graph)
    if fmt == "dot":
        return source.encode("utf-8")
    if fmt not in FORMATS:
        raise IrscopeError(f"unknown format {fmt!r} (one of: {', '.join(FORMATS)})")
    return run_dot(source, fmt, timeout=timeout)


def run_dot(source: str, fmt: str, *, timeout: float | None = None) -> bytes:
    """Lay out DOT ``source`` with the ``dot`` binary into ``fmt`` (svg, png)."""
    exe = shutil.which("dot")
    if exe is None:
        raise IrscopeError(DOT_MISSING)
    try:
        p = subprocess.run([exe, f"-T{fmt}"], input=source.encode("utf-8"), capture_output=True, timeout=timeout,
                           check=False)
    except subprocess.TimeoutExpired:
        raise IrscopeError(f"dot took more than {timeout:g} s on this graph: fewer nodes help (--max-nodes)") from None
    except OSError as exc:
        raise IrscopeError(f"cannot run dot: {exc.strerror or exc}") from None
    if p.returncode != 0:
        err = " ".join(p.stderr.decode("utf-8", "replace").split())[:300]
        raise IrscopeError(f"dot failed (exit {p.returncode}): {err or 'no message'}")
    return p.stdout


def to_json(graph: OpGraph) -> str:
    """The graph itself: ``{"graph": {...}, "nodes": [...], "edges": [...]}``, each
    node and edge with every attribute (the schema of :mod:`irscope.export.graph`)."""
    g = graph.graph
    nodes = [{"id": n, **attrs} for n, attrs in g.nodes(data=True)]
    edges = [{"source": a, "target": b, **attrs} for a, b, attrs in g.edges(data=True)]
    meta = dict(g.graph)
    meta["nodes_drawn"] = g.number_of_nodes()
    meta["ops_total"] = graph.ops_total
    return json.dumps({"graph": meta, "nodes": nodes, "edges": edges}, indent=1, ensure_ascii=False, default=str)


def _text(s: object) -> str:
    """One text of an HTML-like label."""
    return html_text(s)


def _tooltip(s: object):
    return dot_string(s)


def _label(lines: list[str], *, bold_first: bool = True, colour: str | None = None) -> str:
    parts = []
    for i, line in enumerate(lines):
        t = _text(line) if line else " "
        if i == 0 and bold_first:
            parts.append(f"<B>{t}</B>")
        else:
            parts.append(f'<FONT POINT-SIZE="9">{t}</FONT>')
    body = "<BR/>".join(parts)
    if colour:
        body = f'<FONT COLOR="{colour}">{body}</FONT>'
    return f"<{body}>"


def _graph_label(g) -> str:
    """The title, the notes, and the legend: a swatch of each colour that means
    something, with its name (every picture that colours nodes sets one)."""
    rows = [f'<TR><TD ALIGN="LEFT"><B>{_text(g.graph.get("title", ""))}</B></TD></TR>']
    for n in g.graph.get("notes", []):
        rows.append(f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="10">{_text(n)}</FONT></TD></TR>')
    legend = g.graph.get("legend") or []
    if legend:
        # An entry without a colour (a line style of the lineage's links) is its words alone.
        cells = "".join((f'<TD BGCOLOR="{_colour(c)}" BORDER="1" COLOR="#777777" WIDTH="14" HEIGHT="10" '
                         f'FIXEDSIZE="TRUE"> </TD>' if c else "")
                        + f'<TD ALIGN="LEFT"><FONT POINT-SIZE="10">{_text(name)}  </FONT></TD>'
                        for name, c in legend)
        # A nested table is stretched to its cell (the notes are wider) unless it is
        # fixed: its width is estimated from the names, generously (Helvetica 10 pt).
        width = 50 + sum(22 + 6.2 * (len(str(name)) + 2) for name, _ in legend)
        rows.append(f'<TR><TD ALIGN="LEFT"><TABLE ALIGN="LEFT" FIXEDSIZE="TRUE" WIDTH="{int(width)}" HEIGHT="16" '
                    'BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="0"><TR>'
                    f'<TD ALIGN="LEFT"><FONT POINT-SIZE="10">legend:</FONT></TD>{cells}</TR></TABLE></TD></TR>')
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">' + "".join(rows) + "</TABLE>>"


def _number(v: object, default: str) -> str:
    """A graph's own spacing (a number), or ``default``."""
    try:
        return f"{float(str(v)):g}"
    except ValueError:
        return default


def _colour(c: object) -> str:
    """Colours are ours (``#rrggbb`` or a Graphviz name); anything else is dropped."""
    s = str(c)
    return s if s.replace("#", "").replace(",", "").isalnum() and len(s) < 40 else "#ffffff"


def to_dot(graph: OpGraph) -> str:
    """The DOT source of ``graph``, built with the ``graphviz`` package."""
    import graphviz

    g = graph.graph
    dot = graphviz.Digraph("irscope", engine="dot")
    dot.attr(rankdir=str(g.graph.get("rankdir", "TB")), labelloc="t", labeljust="l", fontname=_FONT,
             newrank="true", nodesep="0.25", ranksep=_number(g.graph.get("ranksep"), "0.35"),
             label=_graph_label(g))
    dot.attr("node", fontname=_FONT, fontsize=_number(g.graph.get("node_fontsize"), "11"), shape="box", style="filled", margin="0.08,0.04",
             height=_number(g.graph.get("node_height"), "0.5"))
    dot.attr("edge", fontname=_FONT, fontsize="9", arrowsize="0.6", color="#555555")
    ids = {n: f"n{i}" for i, n in enumerate(g.nodes)}
    clusters = g.graph.get("clusters", {})
    used = used_clusters(g)
    members: dict[str | None, list] = {}
    for n, attrs in g.nodes(data=True):
        c = attrs.get("cluster")
        members.setdefault(c if c in clusters else None, []).append(n)
    children: dict[str | None, list[str]] = {}
    for cid, c in clusters.items():
        if cid in used:
            children.setdefault(c.get("parent"), []).append(cid)
    cnum = {cid: i for i, cid in enumerate(clusters)}

    def fill(container, cid: str | None) -> None:
        for n in members.get(cid, ()):
            container.node(ids[n], **_node_attrs(g.nodes[n]))
        for child in children.get(cid, ()):
            c = clusters[child]
            with container.subgraph(name=f"cluster_{cnum[child]}") as sub:
                sub.attr(label=_label([c.get("label", "")], bold_first=False), style="rounded,filled",
                         fillcolor=_colour(c.get("fill", "#ffffff")), color="#9a9a9a", fontname=_FONT,
                         fontsize="10", labeljust="l")
                fill(sub, child)

    fill(dot, None)
    for a, b, attrs in g.edges(data=True):
        dot.edge(ids[a], ids[b], **_edge_attrs(attrs))
    for row in g.graph.get("same_rank", ()):  # nodes kept on one rank, left to right in this order
        known = [ids[n] for n in row if n in ids]
        with dot.subgraph() as same:
            same.attr(rank="same")
            for a, b in zip(known, known[1:]):
                same.edge(a, b, style="invis")
    return dot.source


def _node_attrs(a: dict) -> dict:
    out = {"label": _label(list(a.get("label") or [""]), colour=_colour(a["fontcolor"]) if a.get("fontcolor") else None),
           "fillcolor": _colour(a.get("fill", "#ffffff")), "shape": str(a.get("shape", "box"))}
    if a.get("style"):
        out["style"] = str(a["style"])
    if a.get("border"):
        out["color"] = _colour(a["border"])
    if a.get("penwidth"):
        out["penwidth"] = f"{float(a['penwidth']):.2f}"
    if a.get("tooltip"):
        out["tooltip"] = _tooltip(a["tooltip"])
    return out


def _edge_attrs(a: dict) -> dict:
    out = {}
    if a.get("label"):
        # xlabel: placed after layout, so labels cost dot no extra ranks (a label
        # on each of a few hundred edges tripled the layout time).
        out["xlabel"] = _label([a["label"]], bold_first=False)
    if a.get("style"):
        out["style"] = str(a["style"])
    if a.get("color"):
        out["color"] = _colour(a["color"])
    if a.get("penwidth"):
        out["penwidth"] = f"{float(a['penwidth']):.2f}"
    if a.get("constraint") is False:
        out["constraint"] = "false"
    return out
