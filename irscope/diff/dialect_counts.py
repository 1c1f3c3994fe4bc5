"""Ops per dialect on both sides of a stage diff, one row a dialect, renamed dialects
as one row (``triton_gpu -> ttg``: Triton 3.3 renamed them,
:mod:`irscope.compiler.dialects`)."""

from __future__ import annotations

from dataclasses import dataclass

from irscope.compiler.dialects import current_dialect


@dataclass(frozen=True, slots=True)
class DialectRow:
    """One dialect's op count before and after."""

    name: str
    """The dialect's current name (``ttg``)."""
    before_names: tuple[str, ...]
    """How the old side spells it (``triton_gpu``), () when it has none of its ops."""
    after_names: tuple[str, ...]
    before: int
    after: int

    @property
    def label(self) -> str:
        """``ttg``, or ``triton_gpu -> ttg`` when the two sides spell it differently."""
        a = "/".join(self.before_names) or self.name
        b = "/".join(self.after_names) or self.name
        if not self.before_names:
            a = b
        if not self.after_names:
            b = a
        return a if a == b else f"{a} -> {b}"

    @property
    def text(self) -> str:
        """``tt 44``, ``ttg 0->3`` or ``triton_gpu -> ttg 30->31``."""
        return f"{self.label} {self.before}" if self.before == self.after else \
            f"{self.label} {self.before}->{self.after}"


def dialect_rows(before: dict[str, int], after: dict[str, int]) -> list[DialectRow]:
    """Every dialect of either side, in the order the sides list them (most ops
    first), a renamed dialect's two spellings as one row."""
    order: list[str] = []
    spell: dict[str, tuple[list[str], list[str]]] = {}
    counts: dict[str, list[int]] = {}
    for side, got in enumerate((before, after)):
        for name, n in got.items():
            key = current_dialect(name)
            if key not in spell:
                order.append(key)
                spell[key] = ([], [])
                counts[key] = [0, 0]
            if name not in spell[key][side]:
                spell[key][side].append(name)
            counts[key][side] += n
    return [DialectRow(k, tuple(spell[k][0]), tuple(spell[k][1]), counts[k][0], counts[k][1]) for k in order]


def dialect_text(before: dict[str, int], after: dict[str, int]) -> str:
    """Every row of :func:`dialect_rows`, comma-separated (the summary's column)."""
    return ", ".join(r.text for r in dialect_rows(before, after))
