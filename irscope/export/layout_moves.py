"""Which elements change owner in a layout conversion (``ttg.convert_layout``).

For each element of the result, its owners in the source layout and in the result
layout (both from the core decoder's element maps, :class:`irscope.ir.layouts.LayoutMap`)
say how far it moves:

- ``None``: the same (warp, lane, register) owners on both sides: nothing moves;
- ``register``: every thread holding it after already held it before, in another
  register: a move inside each thread;
- ``lane``: some thread after did not hold it, but a thread of the same warp did: a
  move across lanes of a warp (shuffles);
- ``warp``: some warp after held none of it: a move across warps (through shared memory).

The layout picture marks each moving element by its kind and counts them in the legend
(:mod:`irscope.export.layout_svg`, :mod:`irscope.export.layout_dot`).
"""

from __future__ import annotations

from collections.abc import Sequence

from irscope.ir.layouts.convert_layout import MOVE_KINDS, element_moves

from .layout_picture import LayoutPicture

__all__ = ["MOVE_KINDS", "conversion_moves", "owner_moves"]


def owner_moves(source: LayoutPicture, result: LayoutPicture) -> dict[tuple[int, ...], str]:
    """Index -> ``register``, ``lane`` or ``warp`` for every element of ``result``
    whose owners differ from ``source``'s (both distributed, of one shape); elements
    that keep their owners are left out. The comparison is the core's
    (:func:`irscope.ir.layouts.convert_layout.element_moves`)."""
    if source.layout is None or result.layout is None or source.shape != result.shape:
        raise ValueError("owner moves need two distributed pictures of one shape")
    return element_moves(source.layout, result.layout)


def conversion_moves(pictures: Sequence[LayoutPicture], sources: int) -> dict[int, dict[tuple[int, ...], str]]:
    """Picture index -> its :func:`owner_moves`, for each result picture (after the
    first ``sources`` pictures) that has a distributed source picture of its shape:
    the result of a ``convert_layout`` against its operand."""
    out: dict[int, dict[tuple[int, ...], str]] = {}
    for b in range(sources, len(pictures)):
        res = pictures[b]
        src = next((pictures[a] for a in range(sources) if pictures[a].layout is not None
                    and pictures[a].shape == res.shape), None)
        if src is not None and res.layout is not None:
            out[b] = owner_moves(src, res)
    return out
