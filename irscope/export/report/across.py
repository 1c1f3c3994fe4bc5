"""What a report shows across captures: with two or more bundles, each kernel of
the first paired with its counterpart in every other (:mod:`irscope.diff.pairing`,
as ``irscope diff A B`` pairs them), the figures side by side
(:mod:`irscope.diff.matrix`) and each pair's diff (:func:`compare_captures`); with
one bundle holding several Triton versions or targets, the matrix ``irscope diff
--by`` prints."""

from __future__ import annotations

from dataclasses import dataclass

from irscope.core import Capture
from irscope.diff.compare import Comparison, compare_captures
from irscope.diff.matrix import Matrix, group_by, matrix, pick_sides
from irscope.diff.pairing import PairSummary, best_match, pair_captures, summarise_pair


@dataclass(frozen=True, slots=True)
class PairDiff:
    """One kernel variant in bundle A and in bundle B, and what changed."""

    page: str
    """The diff page's file name."""
    a_label: str
    b_label: str
    a_page: str
    b_page: str
    summary: PairSummary
    comparison: Comparison
    differs: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Across:
    """Everything the compare page shows."""

    labels: tuple[str, ...]
    """The bundles (or, for one bundle, the versions or targets) compared."""
    by: str | None
    """``triton_version`` or ``target`` when one bundle was split; None for bundles."""
    matrices: tuple[Matrix, ...]
    pairs: tuple[PairDiff, ...]
    only: tuple[tuple[str, str], ...]
    """(bundle label, capture title) of captures no other bundle pairs with."""


def across_bundles(bundles: list[tuple[str, list[Capture]]], page_of) -> Across:
    """Pair the first bundle's captures with each other bundle's; ``page_of(label,
    capture)`` names a capture's kernel page. Matrices span every bundle that has
    the capture; pair diffs are between the first bundle and each other."""
    first_label, first = bundles[0]
    pairs: list[PairDiff] = []
    only: list[tuple[str, str]] = []
    for label, caps in bundles[1:]:
        pairing = pair_captures(first, caps)
        for p in pairing.pairs:
            cmp = compare_captures(p.a, p.b, a_label=first_label, b_label=label)
            pairs.append(PairDiff(f"diff-{len(pairs) + 1}.html", first_label, label, page_of(first_label, p.a),
                                  page_of(label, p.b), summarise_pair(p), cmp, p.differs))
        only += [(first_label, c.title()) for c in pairing.only_a]
        only += [(label, c.title()) for c in pairing.only_b]
    matrices = []
    for cap in first:
        sides = [(first_label, cap)]
        for label, caps in bundles[1:]:
            match = best_match(cap, caps)
            if match is not None:
                sides.append((label, match))
        if len(sides) >= 2:
            matrices.append(matrix(sides))
    return Across(tuple(lab for lab, _ in bundles), None, tuple(matrices), tuple(pairs),
                  tuple(dict.fromkeys(only)))


def within_bundle(captures: list[Capture]) -> Across | None:
    """One bundle of several Triton versions (else targets): a matrix per kernel
    variant, as ``irscope diff BUNDLE --by``. None when it holds one of each."""
    for key in ("triton_version", "target"):
        groups = group_by(captures, key)
        if len(groups) < 2:
            continue
        seen, out = set(), []
        for cap in captures:
            if (cap.kernel, cap.variant) in seen:
                continue
            seen.add((cap.kernel, cap.variant))
            sides = pick_sides(groups, cap)
            if len(sides) >= 2:
                out.append(matrix(sides))
        return Across(tuple(groups), key, tuple(out), (), ())
    return None
