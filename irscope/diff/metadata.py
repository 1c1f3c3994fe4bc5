"""Metadata and resources of two captures, field by field: what ``irscope diff``
prints under "metadata and resources".

A :class:`FieldDelta` is one named figure on both sides; numbers also carry their
difference and ratio, so a view can print ``207 -> 174 (-33, 0.84x)`` without
knowing which fields are numeric.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from irscope.core import Capture
from irscope.core.variant import compile_option as core_compile_option

# Field groups, in the order a view prints them.
COMPILE, CONSTEXPRS, RESOURCES, OCCUPANCY = "compile", "constexprs", "resources", "occupancy"
GROUPS = (COMPILE, CONSTEXPRS, RESOURCES, OCCUPANCY)


def _number(value: Any) -> bool:
    # bool is an int subclass, but True -> False has no meaningful ratio.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def format_value(v: Any) -> str:
    """A metadata value as every view prints it: ``-`` for none, floats to 3 digits."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


@dataclass(frozen=True, slots=True)
class FieldDelta:
    """One figure on side A (``before``) and side B (``after``)."""

    name: str
    """``num_warps``, ``constexprs.BLOCK_SIZE_M``, ``registers``, ``occupancy.blocks_per_sm``..."""
    before: Any
    after: Any
    changed: bool
    group: str = COMPILE
    """Which part of the report it belongs to: one of :data:`GROUPS`."""

    @property
    def numeric(self) -> bool:
        """Both sides are numbers (None on either side: not numeric)."""
        return _number(self.before) and _number(self.after)

    @property
    def delta(self) -> int | float | None:
        """``after - before`` for numbers, else None."""
        if not self.numeric:
            return None
        d = self.after - self.before
        return round(d, 6) if isinstance(d, float) else d

    @property
    def ratio(self) -> float | None:
        """``after / before`` for numbers with a non-zero ``before``, else None."""
        if not self.numeric or not self.before:
            return None
        return round(self.after / self.before, 4)

    @property
    def before_text(self) -> str:
        """``before`` as every view prints it (``-`` for none, 3 significant digits)."""
        return format_value(self.before)

    @property
    def after_text(self) -> str:
        """``after`` as every view prints it."""
        return format_value(self.after)

    @property
    def delta_text(self) -> str:
        """``+33 (1.19x)`` for numbers, '' otherwise."""
        if self.delta is None:
            return ""
        return f"{self.delta:+g}" + (f" ({self.ratio:.2f}x)" if self.ratio else "")

    def to_json(self) -> dict:
        return {"name": self.name, "group": self.group, "before": self.before, "after": self.after,
                "changed": self.changed, "delta": self.delta, "ratio": self.ratio}


def field_delta(name: str, before: Any, after: Any, group: str = COMPILE) -> FieldDelta:
    """A :class:`FieldDelta`; floats are compared rounded to the millisecond-ish
    precision they are printed with, so a re-read float is not a change."""
    if isinstance(before, float) and isinstance(after, float):
        changed = round(before, 6) != round(after, 6)
    else:
        changed = before != after
    return FieldDelta(name, before, after, changed, group)


@dataclass(frozen=True, slots=True)
class CountDelta:
    """A count on both sides: ops of a stage, instructions of a class, ops of a line."""

    name: str
    before: int
    after: int

    @property
    def delta(self) -> int:
        return self.after - self.before

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_json(self) -> dict:
        return {"name": self.name, "before": self.before, "after": self.after, "delta": self.delta}


def compile_option(capture: Capture, name: str) -> Any:
    """A compile option (``num_warps``, ``num_stages``, ``num_ctas``, ``maxnreg``), by the
    core's one rule (:func:`irscope.core.variant.compile_option`)."""
    return core_compile_option(capture.variant, capture.options, capture.metadata, name)


def metadata_delta(a: Capture, b: Capture) -> list[FieldDelta]:
    """Every compile setting, constexpr, resource and occupancy figure of ``a`` and
    ``b``, in report order (:data:`GROUPS`). Constexprs are the union of both sides'
    names (A's order first); a name only one side has shows None on the other."""
    out = [field_delta("triton_version", a.triton_version, b.triton_version),
           field_delta("target", a.target, b.target)]
    for name in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        out.append(field_delta(name, compile_option(a, name), compile_option(b, name)))
    ca, cb = a.constexprs, b.constexprs
    for name in dict.fromkeys([*ca, *cb]):
        out.append(field_delta(f"constexprs.{name}", ca.get(name), cb.get(name), CONSTEXPRS))
    ra, rb = a.resources, b.resources
    for name in ("registers", "spills", "shared", "shared_dynamic", "local", "stack"):
        out.append(field_delta(name, getattr(ra, name), getattr(rb, name), RESOURCES))
    oa, ob = a.occupancy, b.occupancy
    for name in ("blocks_per_sm", "warps_per_sm", "limited_by"):
        out.append(field_delta(f"occupancy.{name}", getattr(oa, name, None), getattr(ob, name, None), OCCUPANCY))
    out.append(field_delta("compile_seconds", _seconds(a), _seconds(b)))
    return out


def _seconds(capture: Capture) -> float | None:
    s = capture.compile_seconds
    return round(s, 3) if isinstance(s, (int, float)) else None
