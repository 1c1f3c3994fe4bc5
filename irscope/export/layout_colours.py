"""Colours of a layout picture: hue by warp, shade by lane; hue by bank for shared memory.

Warps get evenly spaced hues so neighbours differ most; within a warp lane 0 is
the lightest shade and the last lane the darkest, so a warp's lanes read as one
colour family and the order of lanes shows as a gradient.  Banks run around the
colour wheel in order: a swizzle shows as diagonal stripes of hue.
"""

from __future__ import annotations

import colorsys

__all__ = ["EMPTY_FILL", "bank_fill", "owner_fill", "text_colour"]

EMPTY_FILL = "#ffffff"
_LIGHT, _DARK = 0.88, 0.42  # lightness of lane 0 and of the last lane


def _hex(h: float, lightness: float, saturation: float) -> str:
    r, g, b = colorsys.hls_to_rgb(h % 1.0, lightness, saturation)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def _warp_hue(warp: int, num_warps: int) -> float:
    # A single warp is blue; more warps share the wheel (offset so warp 0 is blue too).
    return 0.58 + warp / max(num_warps, 1)


def owner_fill(warp: int, lane: int, num_warps: int, lanes: int) -> str:
    """Fill of an element held (first) by ``(warp, lane)``."""
    t = lane / max(lanes - 1, 1)
    return _hex(_warp_hue(warp, num_warps), _LIGHT - (_LIGHT - _DARK) * t, 0.72)


def bank_fill(bank: int, banks: int = 32) -> str:
    """Fill of an element that lands in shared-memory ``bank``."""
    return _hex(bank / banks, 0.74, 0.75)


def text_colour(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (``#rrggbb``)."""
    r, g, b = (int(fill[i:i + 2], 16) / 255 for i in (1, 3, 5))
    luma = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000000" if luma > 0.5 else "#ffffff"
