"""A small warp/lane grid of a distributed layout: who holds each element of a 2-D tile.

Each cell is one tensor element, labelled with the lane that holds it and coloured by
its warp, like ``triton-tensor-layout`` prints, but only for the top-left corner that
fits the panel. Pure: takes an :class:`irscope.ir.layouts.LayoutMap`, returns Rich Text.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from irscope.ir.layouts import LayoutMap

# Eight distinguishable colours that read on light and dark backgrounds; warps cycle.
WARP_COLOURS = ("bright_red", "green", "blue", "magenta", "dark_orange", "cyan",
                "yellow4", "purple")

MAX_CELLS = 1 << 16
"""Largest tensor whose owner map is built for the grid (the map costs per element)."""


def warp_lane_grid(layout: LayoutMap, *, max_rows: int = 8, max_cols: int = 16) -> Text:
    """The top-left ``max_rows`` x ``max_cols`` elements of a rank-1 or rank-2 layout,
    each as ``lane`` coloured by warp (``*`` for an element held by several threads:
    broadcast), with a legend."""
    shape = layout.shape
    index: Callable[[int, int], tuple[int, ...]]
    if len(shape) == 1:
        rows, cols = 1, min(shape[0], max_cols)
        index = lambda r, c: (c,)  # noqa: E731
    elif len(shape) == 2:
        rows, cols = min(shape[0], max_rows), min(shape[1], max_cols)
        index = lambda r, c: (r, c)  # noqa: E731
    else:
        return Text(f"(rank-{len(shape)} tensor: no grid)", style="dim")
    width = len(str(layout.threads_per_warp - 1))
    out = Text()
    out.append(" " * 5 + " ".join(str(c).rjust(width) for c in range(cols)) + "\n", style="dim")
    for r in range(rows):
        out.append(f"{r:>4} ", style="dim")
        for c in range(cols):
            owners = layout.owners_of(index(r, c))
            if not owners:
                out.append(".".rjust(width), style="dim")
            else:
                first = owners[0]
                label = str(first.lane).rjust(width)
                style = WARP_COLOURS[first.warp % len(WARP_COLOURS)]
                out.append(label, style=style + (" underline" if len({(o.warp, o.lane) for o in owners}) > 1 else ""))
            out.append(" ")
        out.append("\n")
    shown = f"{rows}x{cols}" if len(shape) == 2 else f"{cols}"
    total = "x".join(map(str, shape))
    out.append("lane per element, colour = warp (", style="dim")
    for w in range(min(layout.num_warps, len(WARP_COLOURS))):
        out.append(f"w{w}", style=WARP_COLOURS[w])
        out.append(" " if w + 1 < min(layout.num_warps, len(WARP_COLOURS)) else "", style="dim")
    out.append(f"); {shown} of {total}; underlined: held by several threads", style="dim")
    return out
