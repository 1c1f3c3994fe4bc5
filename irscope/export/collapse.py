"""``--max-nodes``: which ops stay nodes of their own, and which fold into summary
nodes, grouped by Python line within their region (then by region alone).

The aim is a picture that stays readable at any size, in the manner of Model
Explorer's collapsible layers: the lowering of one Python line to thousands of
``llvm.extractvalue`` becomes one node that says so, while the small groups
(a loop header, the ops of a short line) stay drawn op by op.

The plan is greedy and linear-logarithmic: start with every group folded; if the
groups alone exceed the budget, group more coarsely; then unfold groups smallest
first while the budget allows (unfolding a group of ``k`` ops costs ``k - 1``
nodes). Ops in ``keep`` (region owners, yields) are always drawn.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence, Set as AbstractSet
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Member:
    """One thing to draw, as the plan sees it."""

    key: str
    clusters: tuple[str, ...]
    """Its cluster chain, outermost first (the function's cluster, regions, blocks)."""
    python_line: int | None


@dataclass(frozen=True, slots=True)
class Plan:
    """Where each member ends up."""

    group_of: dict[str, int]
    """Member key -> group number, for the folded members only (the rest are drawn)."""
    groups: list[tuple[Hashable, list[str]]]
    """Per group number: its key (``(cluster, python_line)``, ``(cluster,)``...) and members."""
    level: str
    """How the folded groups were made: ``line``, ``region`` or ``function``."""
    drawn: int
    """Nodes the plan draws: members kept plus folded groups."""


_LEVELS = ("line", "region", "function")


def _group_key(m: Member, level: str) -> Hashable:
    cluster = m.clusters[-1] if m.clusters else None
    if level == "line":
        return (cluster, m.python_line)
    if level == "region":
        return (cluster,)
    return (m.clusters[0] if m.clusters else None,)


def plan(members: Sequence[Member], max_nodes: int, keep: AbstractSet[str] = frozenset()) -> Plan:
    """Fold ``members`` so that at most ``max_nodes`` nodes are drawn where it can be
    done (the coarsest grouping, one group per function plus ``keep``, is the floor)."""
    free = [m for m in members if m.key not in keep]
    fixed = len(members) - len(free)
    if len(members) <= max_nodes:
        return Plan({}, [], "none", len(members))
    chosen: dict[Hashable, list[str]] = {}
    level = _LEVELS[-1]
    for level in _LEVELS:
        chosen = {}
        for m in free:
            chosen.setdefault(_group_key(m, level), []).append(m.key)
        if len(chosen) + fixed <= max_nodes:
            break
    groups = list(chosen.items())
    total = len(groups) + fixed
    # Smallest first (ties in text order): the most groups unfold for the budget.
    order = sorted(range(len(groups)), key=lambda i: (len(groups[i][1]), i))
    unfolded: set[int] = set()
    for i in order:
        extra = len(groups[i][1]) - 1
        if total + extra > max_nodes:
            break
        total += extra
        unfolded.add(i)
    kept_groups = [g for i, g in enumerate(groups) if i not in unfolded]
    group_of = {k: n for n, (_, keys) in enumerate(kept_groups) for k in keys}
    return Plan(group_of, kept_groups, level, total)
