"""``--costs``: the TTGIR op graph with what its ops cost, read from the core.

Every fact comes from :meth:`irscope.core.Capture.explain` (nothing is computed
here): each ``ttg.convert_layout`` node gets how its data moves (``via``), its
scratch bytes and its n-way bank conflicts (:class:`irscope.core.conversions.Conversion`),
filled by ``via``; each global load, store or atomic node gets its access widths
(:class:`irscope.core.line_costs.GlobalAccess`: ``16b x8 of 128b``, element bits times
elements per access instruction, of the widest access its layout allows), filled
full-width or narrow. A red border marks a narrow access and a conversion with bank
conflicts. The other ops are grey. Both tie to a node by the op's line in the final
TTGIR (``ttgir_line``), which is how the op graph keys its ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irscope.core.conversions import REGISTERS, SHARED_MEMORY, WARP_SHUFFLE, Conversion
from irscope.core.line_costs import PATH_ATOMIC, PATH_CP_ASYNC, PATH_TMA, GlobalAccess

from .style import GREY_FILL

if TYPE_CHECKING:
    from irscope.core.capture import Capture

# Fills by what a node costs: cheap to dear, green to red (distinct from STATUS's).
COST_FILL: dict[str, str] = {
    REGISTERS: "#c8efc0",
    WARP_SHUFFLE: "#ffe699",
    SHARED_MEMORY: "#ffb3a7",
    "access": "#bcd7ff",
    "narrow-access": "#ffcf8a",
}
COST_NAMES: dict[str, str] = {
    REGISTERS: "convert in registers",
    WARP_SHUFFLE: "convert by warp shuffles",
    SHARED_MEMORY: "convert via shared memory",
    "access": "global access, full width",
    "narrow-access": "narrow global access",
}
MARK_BORDER = "#c62828"
"""The border of a marked node: a narrow access, a conversion with bank conflicts."""
MARK_WORDS = "red border: narrow, or bank conflicts"
WIDTH_WORDS = "16b x8 of 128b: element bits x elements, of the widest"
_VIA_WORDS = {REGISTERS: "via registers", WARP_SHUFFLE: "via warp shuffles", SHARED_MEMORY: "via shared memory"}
_ACCESS_LINES = 3  # width lines drawn per node; the rest are counted


@dataclass(frozen=True)
class OpCosts:
    """What one TTGIR op costs: its conversion, or its global accesses."""

    ttgir_line: int
    conversion: Conversion | None = None
    accesses: tuple[GlobalAccess, ...] = ()


@dataclass
class CostView:
    """The costs to draw, by TTGIR line, and what could not be drawn."""

    ops: dict[int, OpCosts] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def cost_view(capture: "Capture") -> CostView:
    """The conversions and global accesses of ``capture``'s final TTGIR, by op line,
    from :meth:`~irscope.core.Capture.explain`."""
    ex = capture.explain()
    accesses: dict[int, list[GlobalAccess]] = {}
    loose = 0
    for ln in ex.lines:
        for a in ln.global_accesses:
            if a.ttgir_line is None:
                loose += 1
            else:
                accesses.setdefault(a.ttgir_line, []).append(a)
    view = CostView()
    for c in ex.conversions:
        view.ops[c.ttgir_line] = OpCosts(c.ttgir_line, conversion=c)
    for line, got in accesses.items():
        view.ops[line] = OpCosts(line, conversion=view.ops[line].conversion if line in view.ops else None,
                                 accesses=tuple(got))
    n_conv = len(ex.conversions)
    n_acc = sum(len(v) for v in accesses.values())
    view.notes.append(f"costs: {n_conv:,} convert_layout op(s), {n_acc:,} global access width(s) on "
                      f"{len(accesses):,} op(s) (irscope explain)")
    if not ex.has_ptx:
        view.notes.append("costs: the capture has no PTX, so global access widths are not known")
    if loose:
        view.notes.append(f"costs: {loose:,} global access group(s) of the PTX tie to no TTGIR op and are not drawn "
                          f"(irscope explain lists them by line)")
    return view


def access_text(a: GlobalAccess) -> str:
    """One access width as a node shows it: ``16b x8 of 128b``, ``narrow`` when fewer
    elements than the layout allows (``16b x1 of 128b (narrow)``); the path (``cp.async``, ``atomic``) when not a
    plain load or store; ``TMA box`` for a TMA copy (no per-thread width)."""
    prefix = {PATH_CP_ASYNC: "cp.async ", PATH_ATOMIC: "atomic "}.get(a.path, "")
    if a.path == PATH_TMA or a.bits is None:
        text = "TMA box" if a.path == PATH_TMA else "width unknown"
    elif not a.elements:
        text = f"{a.bits}b per access"
    else:
        elem = a.bits // a.elements
        text = f"{elem}b x{a.elements}"
        text += f" of {a.max_elements * elem}b" if a.max_elements is not None else " (widest unknown)"
    if a.narrow:
        text += " (narrow)"
    if a.masked:
        text += " \u00b7 masked"
    return prefix + text


def conversion_lines(c: Conversion) -> list[str]:
    """A conversion as a node shows it: how it moves, then (through shared memory)
    its scratch bytes and bank conflicts (``1-way``: none)."""
    out = [_VIA_WORDS.get(c.via, c.via)]
    if c.via == SHARED_MEMORY:
        n = c.bank_conflicts
        ways = ("bank conflicts unknown" if n is None else "1-way (no bank conflicts)" if n == 1
                else f"{n}-way bank conflicts")
        out.append(f"{c.scratch_bytes:,} B scratch \u00b7 {ways}")
    return out


def _kind(costs: OpCosts) -> str:
    if costs.conversion is not None:
        return costs.conversion.via
    return "narrow-access" if any(a.narrow for a in costs.accesses) else "access"


def _marked(costs: OpCosts) -> bool:
    c = costs.conversion
    if c is not None and c.bank_conflicts is not None and c.bank_conflicts > 1:
        return True
    return any(a.narrow for a in costs.accesses)


def _cost_lines(costs: OpCosts) -> list[str]:
    lines = conversion_lines(costs.conversion) if costs.conversion is not None else []
    texts = [access_text(a) for a in costs.accesses]
    lines += texts[:_ACCESS_LINES]
    if len(texts) > _ACCESS_LINES:
        lines.append(f"+{len(texts) - _ACCESS_LINES} more width(s)")
    return lines


def apply_costs(g: Any, view: CostView) -> None:
    """Decorate the drawn op nodes of ``g`` (a stage graph's DiGraph) with ``view``:
    labels, fills, marks, the facts themselves (``cost``, ``conversion``,
    ``global_accesses``, as the core's ``to_json`` gives them), and the legend."""
    drawn: set[str] = set()
    marked = False
    for _, attrs in g.nodes(data=True):
        kind = attrs.get("kind")
        if kind not in ("op", "group"):
            continue
        costs = view.ops.get(attrs.get("line", -1)) if kind == "op" else None
        if costs is None:
            attrs["fill"] = GREY_FILL
            attrs["cost"] = None
            drawn.add("other")
            continue
        k = _kind(costs)
        drawn.add(k)
        label = list(attrs.get("label") or [])
        # The cost goes after the result type, before the ``py N · LM`` line.
        attrs["label"] = label[:-1] + _cost_lines(costs) + label[-1:]
        attrs["fill"] = COST_FILL[k]
        attrs["cost"] = k
        if costs.conversion is not None:
            attrs["conversion"] = costs.conversion.to_json()
        if costs.accesses:
            attrs["global_accesses"] = [a.to_json() for a in costs.accesses]
        if _marked(costs):
            marked = True
            attrs["border"] = MARK_BORDER
            attrs["penwidth"] = 2.5
    legend: list[list[str]] = [[COST_NAMES[k], COST_FILL[k]] for k in COST_FILL if k in drawn]
    if "other" in drawn:
        legend.append(["other ops", GREY_FILL])
    if drawn & {"access", "narrow-access"}:
        legend.append([WIDTH_WORDS, ""])
    if marked:
        legend.append([MARK_WORDS, ""])
    g.graph["legend"] = legend
