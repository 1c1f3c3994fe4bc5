"""What every exporter builds: an :class:`OpGraph`, a networkx graph plus the notes a
view prints, in one schema that :mod:`irscope.export.render` draws whatever made it.

The schema (also what ``--format json`` prints):

- ``graph.graph``: ``title``, ``kind`` (``stage``, ``pipeline``, ``lineage``),
  ``notes`` (list of lines), ``rankdir`` (``TB``/``LR``), ``legend`` (list of
  ``[name, colour]``, one per colour that means something; colour ``""`` for an
  entry that is words alone) and ``clusters``: cluster id -> ``{"label", "parent"
  (cluster id or None), "kind", "fill"}``; parents come before their children.
  Optional layout hints: ``same_rank`` (lists of nodes kept on one rank, left to
  right), ``ranksep``, ``node_height``, ``node_fontsize`` (DOT's, as numbers); the
  pipeline adds ``columns`` (its columns, node ids top to bottom).
- a node: ``label`` (list of lines, the first drawn bold), ``cluster`` (id or
  None), ``fill``, ``shape`` (``box``, ``ellipse``, ``box3d``, ``note``...),
  ``style`` (``filled``, ``dashed``...), ``border``, ``penwidth``, ``fontcolor``,
  ``tooltip``; plus what it means: ``kind`` (``op``, ``block_arg``, ``group``,
  ``pass``, ``stage``, ``source``, ``removed``), and per kind ``name``,
  ``dialect``, ``line`` (in the IR text), ``python_line``, ``status``, and with
  ``--costs`` ``cost``, ``conversion``, ``global_accesses`` (:mod:`.costs`)...
- an edge: optional ``label``, ``style``, ``color``, ``penwidth``, ``constraint``
  (False: not used for ranking), plus ``kind`` (``def-use``, ``yield``, ``link``,
  ``order``) and ``count`` (def-use edges folded into it).

Every text in the graph is already cleaned (:func:`irscope.export.style.clean`): no
control characters, no lone surrogates; escaping for DOT or SVG is the renderer's job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class OpGraph:
    """A graph ready to render, and what the builder has to say about it."""

    graph: Any
    """The ``networkx.DiGraph`` (schema above)."""
    notes: list[str] = field(default_factory=list)
    """Lines for the user: what was focused, collapsed or could not be linked."""
    ops_total: int = 0
    """Ops (or passes, for a pipeline) in what was drawn from, before focus and collapse."""

    @property
    def title(self) -> str:
        return self.graph.graph.get("title", "")

    @property
    def kind(self) -> str:
        return self.graph.graph.get("kind", "")

    @property
    def nodes(self) -> int:
        """Nodes drawn."""
        return self.graph.number_of_nodes()

    @property
    def edges(self) -> int:
        return self.graph.number_of_edges()


def new_graph(title: str, kind: str, *, rankdir: str = "TB"):
    """An empty DiGraph with the schema's graph attributes set."""
    import networkx as nx

    g = nx.DiGraph()
    g.graph.update(title=title, kind=kind, notes=[], rankdir=rankdir, legend=[], clusters={})
    return g


def add_cluster(g, cid: str, label: str, parent: str | None, kind: str, fill: str = "#ffffff") -> str:
    """Declare cluster ``cid`` (its parent must be declared first)."""
    g.graph["clusters"][cid] = {"label": label, "parent": parent, "kind": kind, "fill": fill}
    return cid


def used_clusters(g) -> set[str]:
    """Clusters holding a node, and their ancestors: the ones worth drawing."""
    clusters = g.graph.get("clusters", {})
    out: set[str] = set()
    for _, c in g.nodes(data="cluster"):
        while c is not None and c not in out:
            out.add(c)
            c = clusters.get(c, {}).get("parent")
    return out


def capture_title(capture) -> str:
    """How a graph names its capture: kernel, capture id, target and the variant
    label (cut: autotune labels run long, and the title must keep what follows)."""
    from .style import clean

    return clean(f"{capture.kernel} #{capture.id} {capture.target} [{clean(capture.variant, 70)}]", 160)
