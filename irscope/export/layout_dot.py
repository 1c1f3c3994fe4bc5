"""Layout pictures drawn by Graphviz: one node per tensor, its label an HTML-like table.

Each :class:`~irscope.export.layout_picture.LayoutPicture` becomes a node whose
label holds a title, the encoding's one-line description, the element grid and a
legend; the two sides of a conversion are joined by an edge named after the op.
The real ``dot`` binary lays it out and writes SVG or PNG
(:func:`render_layout`).  Measured (``benchmarks/bench_layout.py``): dot draws a
16,384-cell table in well under a second, so every element is its own cell.

Grid rules:

* 2-D: rows are dim 0, columns dim 1.  1-D: rows of up to 32 elements, each
  labelled with its first index.  3-D and more: one grid of the last two dims
  per leading index (``[1, :, :]``), stacked.
* Full mode: a cell shows its owners (``w1 l5 r2``: warp, lane, register), both
  when two threads hold it, else the first and ``×N``; shared cells show the
  bank (``b5``) and the offset (``@120``).  Hovering a cell (SVG) lists them all.
* Compact mode (``compact=True``, or automatically above
  :data:`COMPACT_ABOVE` elements): colour only; cells held by a different number
  of owners than the most common count get a black border; hovering still
  lists the owners up to :data:`TOOLTIPS_UP_TO` elements.

Every external text (titles, encodings, op names) goes through
:func:`irscope.export.style.clean` and :func:`html_text` before it reaches DOT.
"""

from __future__ import annotations

import itertools
import textwrap
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from irscope.errors import IrscopeError

from .dot_text import html_text
from .layout_svg import MOVE_LOOK, GridSpec, grid_size, inline_grids, placeholder_id
from .layout_colours import EMPTY_FILL, bank_fill, owner_fill, text_colour
from .layout_moves import conversion_moves
from .layout_picture import MAX_ELEMENTS, LayoutPicture
from .style import clean

__all__ = ["COMPACT_ABOVE", "FULL_UP_TO", "TOOLTIPS_UP_TO", "html_text", "is_compact", "layout_dot",
           "render_layout"]

COMPACT_ABOVE = 4096  # 64x64 still shows text in every cell
FULL_UP_TO = 16384  # text in more cells than this is refused: too big to read or draw quickly
TOOLTIPS_UP_TO = 16384  # a hover text per cell costs ~100 bytes of SVG
ROW_1D = 32  # a warp's worth of lanes per row
FONT = "Helvetica"


def is_compact(picture: LayoutPicture, compact: bool | None = None) -> bool:
    """Whether ``picture`` is drawn compact: as asked, or above :data:`COMPACT_ABOVE` elements."""
    return picture.numel > COMPACT_ABOVE if compact is None else compact


def _lines(text: str, width: int = 110, most: int = 4) -> str:
    """Wrap a cleaned text into at most ``most`` escaped lines."""
    wrapped = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]
    if len(wrapped) > most:
        wrapped = wrapped[:most - 1] + [wrapped[most - 1][:width - 1] + "\u2026"]
    return '<BR ALIGN="LEFT"/>'.join(html_text(w) for w in wrapped) + '<BR ALIGN="LEFT"/>'


def _grids(shape: tuple[int, ...]) -> list[tuple[str, int, int, Callable[..., tuple[int, ...] | None]]]:
    """(caption, rows, cols, index_of(r, c)) for each grid a shape is drawn as."""
    if len(shape) == 1:
        n = shape[0]
        cols = min(n, ROW_1D)
        rows = -(-n // cols)
        return [("", rows, cols, lambda r, c: (r * cols + c,) if r * cols + c < n else None)]
    rows, cols = shape[-2], shape[-1]
    out: list[tuple[str, int, int, Callable[..., tuple[int, ...] | None]]] = []
    for lead in itertools.product(*(range(n) for n in shape[:-2])):
        caption = f"[{', '.join(map(str, lead))}, :, :]" if lead else ""
        out.append((caption, rows, cols, lambda r, c, lead=lead: lead + (r, c)))
    return out


def _with_tooltips(pic: LayoutPicture, asked: bool | None) -> bool:
    return pic.numel <= TOOLTIPS_UP_TO if asked is None else asked


class _Cells:
    """How each element of one picture is drawn (fill, text lines, hover text)."""

    def __init__(self, pic: LayoutPicture, compact: bool, tooltips: bool | None,
                 moves: Mapping[tuple[int, ...], str] | None = None, before: LayoutPicture | None = None):
        self.pic, self.compact = pic, compact
        self.moves = moves or {}
        self.before = before
        if pic.layout is not None:
            m = pic.layout
            self.owners = dict(m.elements())
            counts = Counter(len(o) for o in self.owners.values())
            # The most common owner count (ties: the larger); others get a border.
            self.usual = max(counts, key=lambda k: (counts[k], k)) if counts else 1
            self.fill_of = {(w, lane): owner_fill(w, lane, m.num_warps, m.threads_per_warp)
                            for w in range(m.num_warps) for lane in range(m.threads_per_warp)}
        self.tooltips = _with_tooltips(pic, tooltips)

    def fill(self, index) -> str:
        if self.pic.layout is None:
            return bank_fill(self.pic.banks[index])
        owners = self.owners[index]
        return self.fill_of[(owners[0].warp, owners[0].lane)] if owners else EMPTY_FILL

    def text(self, index) -> list[str]:
        if self.pic.layout is None:
            return [f"b{self.pic.banks[index]}", f"@{self.pic.offsets[index]}"]
        owners = self.owners[index]
        if not owners:
            return ["\u2014"]
        shown = [f"w{o.warp} l{o.lane} r{o.register}" for o in owners]
        return shown if len(shown) <= 2 else [shown[0], f"\u00d7{len(shown)}"]

    def tooltip(self, index) -> str:
        where = f"[{', '.join(map(str, index))}]"
        if self.pic.layout is None:
            if not self.compact:  # the cell shows its bank and offset; the hover adds the index
                return where
            return f"{where}: bank {self.pic.banks[index]}, offset {self.pic.offsets[index]}"
        owners = self.owners[index]
        text = f"{where}: {_owners_text(owners)}"
        if index in self.moves and self.before is not None:
            text += f"; before: {_owners_text(self.before.owners_of(index))} ({MOVE_LOOK[self.moves[index]][1]})"
        return text

    def move(self, index) -> str | None:
        return self.moves.get(index)

    def spec(self, pic: LayoutPicture) -> GridSpec:
        """The grid as :mod:`irscope.export.layout_svg` draws it."""
        size, step = _cell_size(pic, self.compact)
        return GridSpec(_grids(pic.shape), size, step, len(pic.shape) == 1, self.fill,
                        (lambda i: []) if self.compact else self.text, self.tooltip if self.tooltips else None,
                        self.marked if self.compact else (lambda i: False), self.move,
                        lines=2 if pic.layout is None else 1)

    def marked(self, index) -> bool:
        return self.pic.layout is not None and len(self.owners[index]) != self.usual


def _owners_text(owners) -> str:
    """``w0 l0 r1`` for one owner; ``2 owners: w0 l0 r1, w1 l0 r1``; ``no owner``."""
    if not owners:
        return "no owner"
    listed = ", ".join(f"w{o.warp} l{o.lane} r{o.register}" for o in owners[:32])
    if len(owners) == 1:
        return listed
    more = f" (+{len(owners) - 32} more)" if len(owners) > 32 else ""
    return f"{len(owners)} owners: {listed}{more}"


def _cell_size(pic: LayoutPicture, compact: bool) -> tuple[tuple[int, int], int]:
    """(cell width and height, label step) of a picture's grid."""
    if compact:
        size = (8, 8) if pic.numel <= FULL_UP_TO else (5, 5)
        return size, (8 if size[0] >= 8 else 16)
    return ((46, 24) if pic.layout is not None else (34, 24)), 1


def _cell(cells: _Cells, index, pid: int, size: tuple[int, int]) -> str:
    if index is None:
        return f'<TD WIDTH="{size[0]}" HEIGHT="{size[1]}" FIXEDSIZE="TRUE"></TD>'
    fill = cells.fill(index)
    attrs = f'WIDTH="{size[0]}" HEIGHT="{size[1]}" FIXEDSIZE="TRUE" BGCOLOR="{fill}"'
    if cells.tooltips:
        flat = "_".join(map(str, index))
        attrs += f' HREF="#" ID="p{pid}_e{flat}" TOOLTIP="{html_text(cells.tooltip(index))}"'
    move = cells.move(index)
    if move is not None:  # an element that changes owner: bordered in its move's colour
        attrs += f' BORDER="2" COLOR="{MOVE_LOOK[move][0]}"'
    if cells.compact:
        if cells.marked(index) and move is None:
            attrs += ' BORDER="1" COLOR="#000000"'
        return f"<TD {attrs}></TD>"
    body = "<BR/>".join(html_text(t) for t in cells.text(index))
    return f'<TD {attrs}><FONT POINT-SIZE="7" COLOR="{text_colour(fill)}">{body}</FONT></TD>'


def _grid(pic: LayoutPicture, pid: int, cells: _Cells) -> str:
    compact = cells.compact
    size, _ = _cell_size(pic, compact)
    one_d = len(pic.shape) == 1
    out = ['<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0">']
    for caption, rows, cols, index_of in _grids(pic.shape):
        if caption:
            out.append(f'<TR><TD COLSPAN="{cols + 1}" ALIGN="LEFT"><FONT POINT-SIZE="9"><B>'
                       f'{html_text(caption)}</B></FONT></TD></TR>')
        step = 1 if not compact else (8 if size[0] >= 8 else 16)
        head = ['<TD></TD>']
        for c in range(0, cols, step):
            span = min(step, cols - c)
            label = f"+{c}" if one_d else str(c)
            head.append(f'<TD COLSPAN="{span}" ALIGN="LEFT"><FONT POINT-SIZE="6">{label}</FONT></TD>')
        out.append("<TR>" + "".join(head) + "</TR>")
        for r in range(rows):
            row = []
            if r % step == 0:
                row_label = r * cols if one_d else r
                row.append(f'<TD ROWSPAN="{min(step, rows - r)}" ALIGN="RIGHT" VALIGN="TOP">'
                           f'<FONT POINT-SIZE="6">{row_label} </FONT></TD>')
            row.extend(_cell(cells, index_of(r, c), pid, size) for c in range(cols))
            out.append("<TR>" + "".join(row) + "</TR>")
    out.append("</TABLE>")
    return "".join(out)


def _swatches(name: str, items: list[tuple[str, str]], width: int) -> str:
    # No FIXEDSIZE: Graphviz stretches a nested table to its cell, so swatches
    # stretch with it and stay a contiguous bar.
    tds = "".join(f'<TD BGCOLOR="{fill}" WIDTH="{width}" HEIGHT="14">'
                  f'<FONT POINT-SIZE="6" COLOR="{text_colour(fill)}">{html_text(label)}</FONT></TD>'
                  for label, fill in items)
    return (f'<TR><TD ALIGN="LEFT"><TABLE BORDER="0" CELLSPACING="0" CELLPADDING="0"><TR>'
            f'<TD ALIGN="LEFT" WIDTH="64"><FONT POINT-SIZE="8">{html_text(name)}</FONT></TD>{tds}'
            f'</TR></TABLE></TD></TR>')


def _note(text: str) -> str:
    return f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="8">{_lines(text)}</FONT></TD></TR>'


def _legend(pic: LayoutPicture, compact: bool, tooltips: bool, moves: Mapping | None = None,
            before: str = "") -> str:
    rows = []
    if pic.layout is not None:
        m = pic.layout
        warps = [(f"w{w}", owner_fill(w, 0, m.num_warps, m.threads_per_warp)) for w in range(min(m.num_warps, 32))]
        lanes = [(str(lane), owner_fill(0, lane, m.num_warps, m.threads_per_warp))
                 for lane in range(m.threads_per_warp)]
        rows.append(_swatches("warp (hue)", warps, 18))
        rows.append(_swatches("lane (shade)", lanes, 14))
        lo, hi = pic.replication()
        rep = ("no element is replicated" if hi == 1 else
               f"every element is held by {hi} owners (replicated)" if lo == hi else
               f"elements are held by {lo} to {hi} owners")
        rows.append(_note(f"{pic.numel} elements; {m.num_warps} warps x {m.threads_per_warp} lanes x "
                          f"{m.registers} registers per thread; {rep}"))
        key = ("compact: colour only, of the first owner; a black border marks an element held by an unusual "
               "number of owners" if compact else
               "cell: w warp, l lane, r register of each owner (the first and \u00d7N when more than two)")
    else:
        rows.append(_swatches("bank", [(str(b), bank_fill(b)) for b in range(32)], 16))
        rows.append(_note(f"{pic.numel} elements of {pic.element_bits} bits; bank = floor(offset x "
                          f"{pic.element_bits} / 32) mod 32 (32 banks of 4 bytes)"))
        key = ("compact: colour only" if compact else
               "cell: b bank, @ offset in elements from the allocation start, after swizzling")
    if moves is not None:
        counts = Counter(moves.values())
        same = pic.numel - sum(counts.values())
        items = [(f"{MOVE_LOOK[k][1]}: {counts.get(k, 0)}", MOVE_LOOK[k][0]) for k in MOVE_LOOK]
        rows.append(_borders(f"owner change from {before}", items))
        rows.append(_note(f"{same} of {pic.numel} elements keep their owners (no border); a border marks an "
                          f"element that moves, by how far"))
    if tooltips:
        key += ("; hover a cell (SVG) for its index" if pic.layout is None and not compact
                else "; hover a cell (SVG) for its details")
    rows.append(_note(key))
    return '<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1">' + "".join(rows) + "</TABLE>"


def _borders(name: str, items: list[tuple[str, str]]) -> str:
    """A legend row of bordered white swatches: the marks of moving elements."""
    tds = "".join(f'<TD BORDER="2" COLOR="{colour}" WIDTH="16" HEIGHT="12" FIXEDSIZE="TRUE"></TD>'
                  f'<TD ALIGN="LEFT"><FONT POINT-SIZE="8"> {html_text(label)}   </FONT></TD>'
                  for label, colour in items)
    return (f'<TR><TD ALIGN="LEFT"><TABLE BORDER="0" CELLSPACING="1" CELLPADDING="0"><TR>'
            f'<TD ALIGN="LEFT"><FONT POINT-SIZE="8">{html_text(name)}: </FONT></TD>{tds}'
            f'</TR></TABLE></TD></TR>')


def _node_label(pic: LayoutPicture, pid: int, cells: _Cells, grid: str, before: str) -> str:
    head = [f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="11"><B>{_lines(pic.title, 100, 3)}</B></FONT></TD></TR>',
            f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9">{_lines(pic.summary, 110, 4)}</FONT></TD></TR>']
    if pic.note:
        head.append(f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="9">{_lines(pic.note)}</FONT></TD></TR>')
    legend = _legend(pic, cells.compact, cells.tooltips, cells.moves if cells.before is not None else None, before)
    return ('<<TABLE BORDER="1" COLOR="#888888" CELLBORDER="0" CELLSPACING="0" CELLPADDING="4">' + "".join(head)
            + f"<TR><TD>{grid}</TD></TR>"
            + f'<TR><TD ALIGN="LEFT">{legend}</TD></TR>'
            + "</TABLE>>")


def _placeholder(spec: GridSpec, pid: int) -> str:
    """An empty table of the grid's size, for :func:`irscope.export.layout_svg.inline_grids`
    to draw the grid into."""
    w, h = grid_size(spec)
    return (f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="0"><TR><TD ID="{placeholder_id(pid)}" '
            f'HREF="#" BGCOLOR="#ffffff" WIDTH="{w}" HEIGHT="{h}" FIXEDSIZE="TRUE"></TD></TR></TABLE>')


def _all_cells(pictures: Sequence[LayoutPicture], compact: bool | None, tooltips: bool | None,
               sources: int) -> list[_Cells]:
    for pic in pictures:
        small = is_compact(pic, compact)
        if pic.numel > MAX_ELEMENTS:
            raise IrscopeError(f"{pic.numel} elements are too many to draw (at most {MAX_ELEMENTS}); "
                               f"use --format json for the full map")
        if not small and pic.numel > FULL_UP_TO:
            raise IrscopeError(f"{pic.numel} elements are too many to draw with text (at most {FULL_UP_TO}); "
                               f"drop --full")
    moves = conversion_moves(pictures, sources) if sources else {}
    out = []
    for pid, pic in enumerate(pictures):
        before = None
        if pid in moves:
            before = next(pictures[a] for a in range(sources) if pictures[a].layout is not None
                          and pictures[a].shape == pic.shape)
        out.append(_Cells(pic, is_compact(pic, compact), tooltips, moves.get(pid), before))
    return out


def layout_dot(pictures: Sequence[LayoutPicture], *, compact: bool | None = None, op_name: str = "",
               sources: int = 0, tooltips: bool | None = None, placeholders: bool = False) -> str:
    """DOT text drawing ``pictures`` top to bottom (inputs above results).

    ``sources``: how many leading pictures are an op's inputs; each gets an edge,
    labelled ``op_name``, to every later picture (the op's results). A result of
    the shape of a distributed source (the two sides of a ``convert_layout``) marks
    the elements that change owner (:mod:`irscope.export.layout_moves`), with a
    legend.  ``compact``: see :func:`is_compact`.  ``tooltips``: a hover text per
    cell; by default up to :data:`TOOLTIPS_UP_TO` elements.  ``placeholders``: each
    grid is an empty cell of its size, for :func:`render_layout` to draw the SVG grid
    into.  IrscopeError when a picture is too large to draw.
    """
    import graphviz

    if not pictures:
        raise IrscopeError("nothing to draw")
    g = graphviz.Digraph("layout", graph_attr={"rankdir": "TB", "fontname": FONT, "nodesep": "0.4"},
                         node_attr={"shape": "plaintext", "fontname": FONT}, edge_attr={"fontname": FONT})
    cells = _all_cells(pictures, compact, tooltips, sources)
    for pid, pic in enumerate(pictures):
        c = cells[pid]
        grid = _placeholder(c.spec(pic), pid) if placeholders else _grid(pic, pid, c)
        before = next((f"operand {a}" for a in range(sources) if c.before is pictures[a]), "")
        g.node(f"p{pid}", label=_node_label(pic, pid, c, grid, before))
    for a in range(sources):
        for b in range(sources, len(pictures)):
            g.edge(f"p{a}", f"p{b}", label=f"<{html_text(op_name, 80)}>" if op_name else None)
    return g.source


def render_layout(pictures: Sequence[LayoutPicture], fmt: str = "svg", *, compact: bool | None = None,
                  op_name: str = "", sources: int = 0, tooltips: bool | None = None) -> bytes:
    """``pictures`` as ``svg``, ``png`` or ``dot`` bytes (see :func:`layout_dot`).

    SVG and PNG run the real ``dot`` binary; a missing one is an IrscopeError that
    names the fix. In SVG the grids are drawn by :mod:`irscope.export.layout_svg`
    (shared styles, one ``<use>`` per cell) into the places dot left for them."""
    if fmt == "dot":
        return layout_dot(pictures, compact=compact, op_name=op_name, sources=sources, tooltips=tooltips).encode()
    if fmt not in ("svg", "png"):
        raise IrscopeError(f"cannot draw a layout as {fmt!r}: svg, png or dot")
    import subprocess

    import graphviz

    svg = fmt == "svg"
    source = layout_dot(pictures, compact=compact, op_name=op_name, sources=sources, tooltips=tooltips,
                        placeholders=svg)
    try:
        out = graphviz.Source(source).pipe(format=fmt, engine="dot")
    except graphviz.ExecutableNotFound:
        raise IrscopeError("Graphviz's 'dot' program is not installed: install the graphviz package "
                           "(apt-get install graphviz, brew install graphviz), or use --format json or dot") from None
    except subprocess.CalledProcessError as exc:
        err = (exc.stderr or b"").decode("utf-8", "replace").strip().splitlines()
        raise IrscopeError(f"dot failed: {clean(err[0] if err else exc, 200)}") from None
    if not svg:
        return out
    cells = _all_cells(pictures, compact, tooltips, sources)
    return inline_grids(out, [c.spec(p) for c, p in zip(cells, pictures)])
