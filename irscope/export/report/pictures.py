"""The pictures of a kernel page, drawn by the exporters: the TTGIR op graph, the
pass pipeline, the lineage of the busiest Python lines (:mod:`irscope.export`) and
the distinct layouts of the TTGIR's tensors (:mod:`irscope.export.layout_op`).

SVGs are stored packed in the page (:func:`~irscope.export.report.embed.pack`:
a 128x256 layout drawn element by element is 3.6 MB of SVG but ~0.1 MB packed)
and shown through ``<img>`` from a ``blob:`` URL, where a browser runs no
script an SVG might hold. A picture that cannot be drawn (no ``dot``, a layout
the decoder does not know) becomes a note on the page, never a failed report."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from irscope.compiler.stages import TTGIR
from irscope.core import Capture
from irscope.errors import IrscopeError
from irscope.export.report.embed import pack

GRAPH_MAX_NODES = 300
"""The TTGIR graph's ``--max-nodes`` (the export default past 1,000 ops): the
samples' TTGIRs (<= 210 ops) are drawn op by op."""
LINEAGE_LINES = 4
"""Lineages drawn per kernel: the Python lines with the most ops."""
LAYOUTS = 6
"""Distinct encodings drawn per kernel."""
LAYOUT_MAX_ELEMENTS = 1024
"""Each encoding is drawn on the largest tensor of it: with the owner's text in
every cell (SVG) up to this many elements, compact above (colour by warp, shade by
lane, as PNG). An SVG of 128x256 with text is 3.6 MB, 200 KB packed; the compact
PNG is ~0.1 MB: a report of a few MB has room for many of those only."""
LAYOUT_MAX_DRAWN = 4096
"""Past this many elements the encoding is drawn on a smaller shape (its largest
dimension halved until it fits), and the caption says so."""
DOT_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class Picture:
    """One picture of a page: ``data`` is the packed SVG, or for a PNG its bytes
    in base64 (PNG is compressed already)."""

    key: str
    title: str
    caption: str
    data: str
    mime: str = "image/svg+xml"

    def to_json(self) -> dict:
        return {"data": self.data, "mime": self.mime}


@dataclass
class KernelPictures:
    """What :func:`draw_pictures` made for one kernel page."""

    graphs: list[Picture] = field(default_factory=list)
    layouts: list[Picture] = field(default_factory=list)
    lineage: dict[int, Picture] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _svg(make, notes: list[str], what: str) -> bytes | None:
    try:
        return make()
    except IrscopeError as exc:
        notes.append(f"{what}: not drawn ({exc})")
        return None


def draw_pictures(capture: Capture, line_ops: dict[int, int]) -> KernelPictures:
    """Every picture of ``capture``'s page; ``line_ops`` is Python line -> ops of
    that line over every stage (the busiest lines get a lineage)."""
    from irscope.export.lineage import lineage_graph
    from irscope.export.opgraph import stage_graph
    from irscope.export.pipeline import pipeline_graph
    from irscope.export.render import render

    out = KernelPictures()
    if TTGIR in capture.stages:
        svg = _svg(lambda: render(stage_graph(capture, TTGIR, max_nodes=GRAPH_MAX_NODES), "svg",
                                  timeout=DOT_TIMEOUT), out.notes, "TTGIR graph")
        if svg is not None:
            out.graphs.append(Picture(TTGIR, "TTGIR op graph",
                                      f"def-use edges, regions as clusters, colour by dialect "
                                      f"(at most {GRAPH_MAX_NODES} nodes)", pack(svg.decode("utf-8", "replace"))))
    if capture.pass_count:
        svg = _svg(lambda: render(pipeline_graph(capture), "svg", timeout=DOT_TIMEOUT), out.notes, "pass pipeline")
        if svg is not None:
            out.graphs.append(Picture("pipeline", "Pass pipeline",
                                      "stages as clusters, passes in order; unchanged passes greyed",
                                      pack(svg.decode("utf-8", "replace"))))
    if out.notes and any("dot" in n for n in out.notes):
        return out  # no dot: the other pictures would fail the same way
    busiest = sorted(line_ops, key=lambda n: (-line_ops[n], n))[:LINEAGE_LINES]
    for line in sorted(busiest):
        svg = _svg(lambda: render(lineage_graph(capture, line), "svg", timeout=DOT_TIMEOUT), out.notes,
                   f"lineage of line {line}")
        if svg is not None:
            out.lineage[line] = Picture(f"lineage-{line}", f"Lineage of Python line {line}", "",
                                        pack(svg.decode("utf-8", "replace")))
    if TTGIR in capture.stages:
        out.layouts = _layouts(capture, out.notes)
    return out


def clipped_shape(shape: tuple[int, ...], limit: int = LAYOUT_MAX_ELEMENTS, *,
                  keep_last: bool = False) -> tuple[int, ...]:
    """``shape`` with its largest dimension halved until it has at most ``limit``
    elements (``(128, 256)`` -> ``(32, 32)`` for 1024). ``keep_last`` (shared
    memory: a swizzle spans whole rows) halves the other dimensions first."""
    dims = list(shape)
    while _numel(dims) > limit:
        pool = [k for k in range(len(dims) - 1) if dims[k] > 1] if keep_last else []
        pool = pool or list(range(len(dims)))
        i = max(pool, key=lambda k: dims[k])
        if dims[i] <= 1:
            break
        dims[i] //= 2
    return tuple(dims)


def _numel(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def _layouts(capture: Capture, notes: list[str]) -> list[Picture]:
    from irscope.export.layout_dot import render_layout
    from irscope.export.layout_op import module_layouts
    from irscope.export.layout_picture import picture_of

    module = capture.stage(TTGIR).module
    by_encoding: dict[str, list] = {}
    for side in module_layouts(module):
        by_encoding.setdefault(side.picture.encoding, []).append(side)
    out: list[Picture] = []
    for encoding, sides in list(by_encoding.items())[:LAYOUTS]:
        side = max(sides, key=lambda s: s.picture.numel)
        pic = side.picture
        where = f"{side.type} ({side.role} {side.value})"
        caption = f"{pic.summary} · drawn on {where}"
        shared = pic.kind == "shared"
        if pic.numel > LAYOUT_MAX_DRAWN:
            shape = clipped_shape(pic.shape, LAYOUT_MAX_DRAWN, keep_last=shared)
            try:
                pic = picture_of(pic.encoding, shape, element_bits=pic.element_bits, title=pic.title,
                                 aliases=module.encodings)
            except IrscopeError as exc:
                notes.append(f"layout {encoding[:80]}: not drawn ({exc})")
                continue
            caption = (f"{pic.summary} · drawn on a {'x'.join(map(str, shape))} tensor of this encoding "
                       f"(the kernel's is {where}; where the encoding's tile is larger than the shape drawn, "
                       "elements repeat)")
        others = sorted({s.type for s in sides} - {side.type})
        if others:
            caption += f"; {len(others)} other shape(s) use it"
        final = pic
        small = pic.numel <= LAYOUT_MAX_ELEMENTS
        if not small:
            caption += " · compact: colour by warp, shade by lane (irscope layout draws every cell's owner)"
        data = _svg(lambda: render_layout([final], "svg" if small else "png", compact=not small), notes,
                    f"layout {encoding[:80]}")
        if data is not None:
            key = f"layout-{len(out)}"
            out.append(Picture(key, encoding, caption, pack(data.decode("utf-8", "replace")))
                       if small else Picture(key, encoding, caption, base64.b64encode(data).decode("ascii"),
                                             "image/png"))
    if len(by_encoding) > LAYOUTS:
        notes.append(f"{len(by_encoding) - LAYOUTS} more layouts not drawn: irscope layout BUNDLE KERNEL --op-line N")
    return out
