"""Pictures of a capture: op graphs of a stage or pass snapshot, the pass pipeline,
the lineage of one Python line (and, from their own modules, layouts and the HTML
report).

Every builder returns an :class:`~irscope.export.graph.OpGraph`: a networkx
``DiGraph`` whose nodes and edges carry what they mean (op name, Python line,
dialect, diff status...) and how to draw them (label lines, colour, cluster), plus
the notes a view prints ("collapsed 17,908 ops into 212 nodes"). :func:`render`
turns one into DOT (through the ``graphviz`` package), SVG or PNG (through the real
``dot`` binary) or JSON. Everything external that reaches a label is cleaned and
escaped (:mod:`irscope.export.style`, :mod:`irscope.export.render`).

Public API (the names below load their module on first use, so importing
``irscope.export`` costs nothing and loads neither networkx nor graphviz)::

    from irscope.export import stage_graph, pipeline_graph, lineage_graph
    from irscope.export.render import render
    g = stage_graph(capture, "ttgir", max_nodes=300)      # OpGraph
    svg = render(g, "svg")                                  # bytes

- ``stage_graph(capture, stage, *, lines=None, op=None, radius=None, max_nodes=None,
  pass_index=None, diff_against=None)`` (:mod:`irscope.export.opgraph`)
- ``module_graph(module, *, title, ...)``: the same for any parsed ``Module``
- ``pipeline_graph(capture, other=None)`` (:mod:`irscope.export.pipeline`)
- ``lineage_graph(capture, line)`` (:mod:`irscope.export.lineage`)
- ``irscope.export.render.render(graph, fmt)`` for ``fmt`` in ``svg``, ``png``,
  ``dot``, ``json`` (import it from its module: ``irscope.export.render`` is the
  module, so that the name means one thing whatever was imported before)
- ``OpGraph`` (:mod:`irscope.export.graph`)
"""

from __future__ import annotations

_EXPORTS = {
    "OpGraph": "graph",
    "stage_graph": "opgraph", "module_graph": "opgraph", "DEFAULT_MAX_NODES": "opgraph",
    "DRAW_ALL_UP_TO": "opgraph",
    "pipeline_graph": "pipeline",
    "lineage_graph": "lineage",
}
__all__ = ['DEFAULT_MAX_NODES', 'DRAW_ALL_UP_TO', 'OpGraph', 'lineage_graph', 'module_graph', 'pipeline_graph', 'stage_graph']


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f"irscope.export.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'irscope.export' has no attribute {name!r}")
