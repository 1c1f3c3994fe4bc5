"""The element grids of a layout SVG, drawn directly: one short element per cell.

A layout picture is a plain grid, and dot's own drawing of an HTML table costs about
330 bytes a cell (a group, a link, a polygon with five points, a text with its font
attributes): 1.4 MB for a 64x64 picture. Here dot still lays the picture out
(title, summary, legend, the arrows between tensors), with one empty placeholder cell
of the grid's exact size per picture (:func:`grid_size`); :func:`inline_grids` then
replaces each placeholder in dot's SVG with the grid drawn here:

- one ``<style>`` (font, text colours, ``pointer-events: none`` on texts so a hover
  reaches the cell under them) and one ``<rect>`` per distinct fill in ``<defs>``
  (``f0``, ``f1``... and ``f3m``, the same with a black border, for a marked cell);
- a row is ``<g transform="translate(x,y)">``; plain cells (no hover text, no
  text, no mark: past :data:`~irscope.export.layout_dot.TOOLTIPS_UP_TO` elements)
  of one fill side by side are one ``<use>`` of a rect that many cells wide; a cell is
  ``<use href="#f3" x="46"><title>[0, 1] w0 l0 r1</title></use>`` followed by its
  ``<text>`` (full mode), and a cell whose owner changes in a conversion gets
  ``<use href="#mv-lane" .../>`` on top (:mod:`irscope.export.layout_moves`).

The result is about 100 bytes a cell: a 64x64 picture with text and hover in every
cell is about 400 KB (``benchmarks/bench_layout.py``). Everything textual goes
through :func:`irscope.export.style.clean` and ``html.escape`` (XML text).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence

from irscope.errors import IrscopeError

from .layout_colours import text_colour

__all__ = ["GridSpec", "grid_size", "inline_grids", "placeholder_id"]

LABEL_W = 24  # the row-label column
HEAD_H = 10  # the column-label row
CAPTION_H = 14  # ``[1, :, :]`` above each grid of a 3-D picture
GAP = 4  # between the grids of a 3-D picture

MOVE_LOOK = {"register": ("#2e7d32", "same thread, another register"),
             "lane": ("#e65100", "another lane of the same warp"),
             "warp": ("#c62828", "another warp")}
"""How a cell whose owner changes is marked: (colour, meaning), by the kind of move."""

_STYLE = ("<style>.lg text{font-family:Helvetica,sans-serif;font-size:7px;pointer-events:none}"
          ".lg .w{fill:#fff}.lg .ax{font-size:6px}.lg .cap{font-size:9px;font-weight:bold}</style>")


class GridSpec:
    """What one picture's grid needs: its grids (caption, rows, cols, index_of), cell
    size, label step, and per index its fill, texts, hover text, border mark and move."""

    def __init__(self, grids: list[tuple[str, int, int, Callable[..., tuple[int, ...] | None]]],
                 cell: tuple[int, int], step: int, one_d: bool, fill: Callable, texts: Callable,
                 tooltip: Callable | None, marked: Callable, move: Callable, lines: int = 1):
        self.grids, self.cell, self.step, self.one_d = grids, cell, step, one_d
        self.lines = lines
        """Lines of text most cells hold (2 for bank and offset): a row's origin is
        their first baseline, so those texts need no ``y``."""
        self.fill, self.texts, self.tooltip, self.marked, self.move = fill, texts, tooltip, marked, move


def grid_size(spec: GridSpec) -> tuple[int, int]:
    """(width, height) in points of the drawn grid, labels included."""
    cw, ch = spec.cell
    cols = max(c for _, _, c, _ in spec.grids)
    height = 0
    for caption, rows, _, _ in spec.grids:
        height += (CAPTION_H if caption else 0) + HEAD_H + rows * ch + GAP
    return LABEL_W + cols * cw, height - GAP


def placeholder_id(pid: int) -> str:
    """The ID of picture ``pid``'s placeholder cell (dot writes ``<g id="a_<ID>">``)."""
    return f"grid{pid}"


def _fmt(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def _draw(spec: GridSpec, pid: int, x0: float, y0: float, fills: dict[str, int]) -> list[str]:
    pre = f"p{pid}"
    cw, ch = spec.cell
    out = [f'<g class="lg" id="p{pid}_grid" transform="translate({_fmt(x0)},{_fmt(y0)})">']
    y = 0
    for caption, rows, cols, index_of in spec.grids:
        if caption:
            out.append(f'<text class="cap" x="0" y="{y + 10}">{html.escape(caption)}</text>')
            y += CAPTION_H
        for c in range(0, cols, spec.step):
            label = f"+{c}" if spec.one_d else str(c)
            out.append(f'<text class="ax" x="{LABEL_W + c * cw}" y="{y + 7}">{label}</text>')
        y += HEAD_H
        base = _baseline(spec)
        for r in range(rows):
            # A row's origin is its text baseline, so a one-line text needs no y.
            row = [f'<g transform="translate({LABEL_W},{y + base})">']
            if r % spec.step == 0:
                row_label = r * cols if spec.one_d else r
                row.append(f'<text class="ax" x="-2" y="{7 - base}" text-anchor="end">{row_label}</text>')
            c = 0
            while c < cols:
                index = index_of(r, c)
                if index is None:
                    c += 1
                    continue
                run = _run(spec, index_of, r, c, cols)
                if run > 1:  # plain cells of one fill side by side: one wider rect
                    n = fills.setdefault(f"{spec.fill(index)}*{run}", len(fills))
                    row.append(f'<use href="#{pre}f{n}" x="{c * cw}"/>')
                else:
                    row.append(_cell(spec, index, c * cw, fills, pre))
                c += run
            row.append("</g>")
            out.append("".join(row))
            y += ch
        y += GAP
    out.append("</g>")
    return out


def _plain(spec: GridSpec, index) -> bool:
    """A cell drawn as its fill alone: no hover text, no text, no border, no move."""
    return (spec.tooltip is None and not spec.texts(index) and not spec.marked(index)
            and spec.move(index) is None)


def _run(spec: GridSpec, index_of, r: int, c: int, cols: int) -> int:
    """How many plain cells of one fill start at column ``c`` (1 for any other cell)."""
    first = index_of(r, c)
    if not _plain(spec, first):
        return 1
    fill = spec.fill(first)
    n = 1
    while c + n < cols:
        nxt = index_of(r, c + n)
        if nxt is None or not _plain(spec, nxt) or spec.fill(nxt) != fill:
            break
        n += 1
    return n


def _cell(spec: GridSpec, index, x: int, fills: dict[str, int], pre: str) -> str:
    fill = spec.fill(index)
    key = fill + ("m" if spec.marked(index) else "")
    n = fills.setdefault(key, len(fills))
    tip = spec.tooltip(index) if spec.tooltip is not None else None
    cell = (f'<use href="#{pre}f{n}" x="{x}"><title>{html.escape(tip, quote=False)}</title></use>'
            if tip is not None else f'<use href="#{pre}f{n}" x="{x}"/>')
    move = spec.move(index)
    if move is not None:
        cell += f'<use href="#{pre}mv-{move}" x="{x}"/>'
    texts = spec.texts(index)
    if texts:
        cw, ch = spec.cell
        cls = ' class="w"' if text_colour(fill) == "#ffffff" else ""
        first = (ch // 2 + 3 if len(texts) == 1 else ch // 2 - 1) - _baseline(spec)
        y = f' y="{first}"' if first else ""
        cell += f'<text{cls} x="{x + 4}"{y}>{html.escape(texts[0], quote=False)}'
        if len(texts) > 1:
            cell += f'<tspan x="{x + 4}" dy="8">{html.escape(texts[1], quote=False)}</tspan>'
        cell += "</text>"
    return cell


def _baseline(spec: GridSpec) -> int:
    """Where a row's origin is, from the top of its cells: the baseline of the first
    line of text when most cells hold ``spec.lines`` lines."""
    ch = spec.cell[1]
    return ch // 2 + 3 if spec.lines == 1 else ch // 2 - 1


def _defs(fills: dict[str, int], spec: GridSpec, pre: str) -> str:
    cw, ch = spec.cell
    top = -_baseline(spec)
    rects = []
    for key, n in fills.items():  # "#rrggbb", "#rrggbbm" (marked) or "#rrggbb*run" (run cells wide)
        fill, _, run = key.partition("*")
        marked = fill.endswith("m")
        fill = fill[:-1] if marked else fill
        border = ' stroke="#000000" stroke-width="1"' if marked else ""
        width = cw * (int(run) if run else 1)
        rects.append(f'<rect id="{pre}f{n}" y="{top}" width="{width}" height="{ch}" fill="{fill}"{border}/>')
    for kind, (colour, _) in MOVE_LOOK.items():
        rects.append(f'<rect id="{pre}mv-{kind}" x="1" y="{top + 1}" width="{cw - 2}" height="{ch - 2}" fill="none" '
                     f'stroke="{colour}" stroke-width="{1.5 if cw >= 16 else 1}"/>')
    return "<defs>" + "".join(rects) + "</defs>"


_PLACEHOLDER = re.compile(r'<g id="a_grid(\d+)">.*?</g>', re.DOTALL)
_POINTS = re.compile(r'points="([^"]+)"')


def inline_grids(svg: bytes, specs: Sequence[GridSpec]) -> bytes:
    """dot's SVG with each placeholder cell replaced by its grid. One ``<defs>`` per
    picture (its cells' sizes differ) and one ``<style>`` in all. IrscopeError when a
    placeholder is missing (a dot that drew the table otherwise)."""
    text = svg.decode("utf-8")
    found = 0
    style_done = False

    def replace(m: re.Match) -> str:
        nonlocal found, style_done
        pid = int(m.group(1))
        if pid >= len(specs):
            return m.group(0)
        pts = _POINTS.search(m.group(0))
        if pts is None:
            return m.group(0)
        xy = [tuple(float(v) for v in p.split(",")) for p in pts.group(1).split()]
        x0, y0 = min(p[0] for p in xy), min(p[1] for p in xy)
        fills: dict[str, int] = {}
        body = _draw(specs[pid], pid, x0, y0, fills)
        # Ids are per picture (p0f3, p1f3): several pictures share one document.
        defs = _defs(fills, specs[pid], f"p{pid}")
        drawn = "".join(body)
        found += 1
        head = "" if style_done else _STYLE
        style_done = True
        return head + defs + "\n" + drawn.replace("</g><g transform", "</g>\n<g transform")

    out = _PLACEHOLDER.sub(replace, text)
    if found != len(specs):
        raise IrscopeError(f"dot drew {found} of {len(specs)} layout grids where expected: cannot finish the SVG")
    return out.encode("utf-8")
