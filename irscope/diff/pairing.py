"""Pairing the captures of two bundles (or two runs), and the one-row summary of
each pair that ``irscope diff BUNDLE_A BUNDLE_B`` lists before any detail.

Kernels pair by name. Within a kernel and target, variants pair field by field:
num_warps, num_stages and every constexpr. Only fields both sides have are
compared, because Triton versions disagree on what is a constexpr (3.6 lists the
arguments it specialised to 1, ``stride_ak=1``; others may not), and a pair must
agree on all of them. When a kernel has exactly one capture for a target on each
side (no autotuning), the two pair even if a field differs: that is the change
being looked at, and the pair says which fields differ. Anything else left over
(a renamed kernel, an autotune config added or dropped) is unpaired.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from irscope.core import Capture, occupancy_text
from irscope.diff.metadata import CountDelta, FieldDelta, compile_option, field_delta
from irscope.diff.mix import CLASSES, MIX_STAGES, capture_mix, ops_per_stage


def variant_fields(capture: Capture) -> dict[str, Any]:
    """The fields variants are told apart by: ``num_warps``, ``num_stages`` and
    ``constexprs.<name>`` for each constexpr."""
    out: dict[str, Any] = {"num_warps": compile_option(capture, "num_warps"),
                           "num_stages": compile_option(capture, "num_stages")}
    for name, value in capture.constexprs.items():
        out[f"constexprs.{name}"] = value
    return out


def differing_fields(a: Capture, b: Capture) -> tuple[str, ...]:
    """The variant fields (both sides have) whose values differ, then the target
    when it differs."""
    fa, fb = variant_fields(a), variant_fields(b)
    out = [k for k in fa if k in fb and fa[k] != fb[k]]
    if a.target != b.target:
        out.append("target")
    return tuple(out)


def _agreeing(a: Capture, b: Capture) -> int | None:
    """How many shared fields agree, or None when any shared field (or the target)
    differs."""
    if a.target != b.target:
        return None
    fa, fb = variant_fields(a), variant_fields(b)
    shared = [k for k in fa if k in fb]
    if any(fa[k] != fb[k] for k in shared):
        return None
    return len(shared)


@dataclass(frozen=True, slots=True)
class CapturePair:
    """Two captures taken to be one kernel variant on both sides."""

    a: Capture
    b: Capture
    differs: tuple[str, ...] = ()
    """Variant fields that differ: empty for a pair matched field by field; set for
    the single captures of a kernel paired although a config changed."""

    @property
    def exact(self) -> bool:
        return not self.differs

    def to_json(self) -> dict:
        return {"kernel": self.a.kernel, "target": self.a.target, "a": self.a.id, "b": self.b.id,
                "variant_a": self.a.variant, "variant_b": self.b.variant, "differs": list(self.differs)}


@dataclass(frozen=True, slots=True)
class Pairing:
    """The captures of side A and side B, paired where they can be."""

    pairs: tuple[CapturePair, ...]
    """In side A's capture order."""
    only_a: tuple[Capture, ...]
    only_b: tuple[Capture, ...]

    def to_json(self) -> dict:
        return {"pairs": [p.to_json() for p in self.pairs],
                "only_a": [{"id": c.id, "kernel": c.kernel, "variant": c.variant, "target": c.target}
                           for c in self.only_a],
                "only_b": [{"id": c.id, "kernel": c.kernel, "variant": c.variant, "target": c.target}
                           for c in self.only_b]}


def best_match(like: Capture, candidates: Sequence[Capture]) -> Capture | None:
    """The capture of ``candidates`` (same kernel name) that pairs with ``like`` by
    the field-by-field rule: every shared field equal, most fields shared wins,
    the earliest capture on a tie. None when none agrees."""
    best, best_n = None, -1
    for c in candidates:
        if c.kernel != like.kernel:
            continue
        n = _agreeing(like, c)
        if n is not None and n > best_n:
            best, best_n = c, n
    return best


def pair_captures(a: Sequence[Capture], b: Sequence[Capture]) -> Pairing:
    """Pair two lists of captures (two bundles' :meth:`~irscope.core.Bundle.captures`)
    by kernel name, then variant (see the module's rule)."""
    left = list(b)
    pairs: list[CapturePair] = []
    only_a: list[Capture] = []
    for ca in a:
        cb = best_match(ca, left)
        if cb is None:
            only_a.append(ca)
            continue
        left.remove(cb)
        pairs.append(CapturePair(ca, cb))
    # A kernel compiled once per target on each side pairs even when its config changed.
    loose: list[CapturePair] = []
    for ca in list(only_a):
        same_a = [c for c in a if c.kernel == ca.kernel and c.target == ca.target]
        same_b = [c for c in b if c.kernel == ca.kernel and c.target == ca.target]
        if len(same_a) == 1 and len(same_b) == 1 and same_b[0] in left:
            cb = same_b[0]
            left.remove(cb)
            only_a.remove(ca)
            loose.append(CapturePair(ca, cb, differing_fields(ca, cb)))
    order = {c.id: i for i, c in enumerate(a)}
    pairs = sorted([*pairs, *loose], key=lambda p: order[p.a.id])
    return Pairing(tuple(pairs), tuple(only_a), tuple(left))


@dataclass(frozen=True, slots=True)
class PairSummary:
    """The headline figures of one pair: one row of a bundle-to-bundle listing."""

    kernel: str
    variant: str
    """Side B's variant label (side A's is the same for an exact pair)."""
    target: str
    registers: FieldDelta
    spills: FieldDelta
    shared: FieldDelta
    occupancy: FieldDelta
    """Blocks per SM and the binding limit, as ``"2x4w regs"``."""
    ops: tuple[CountDelta, ...]
    """Ops per lowering stage both hold (``name`` is the stage)."""
    instructions: tuple[CountDelta, ...]
    """Per ``ptx.<class>`` and ``sass.<class>`` whose count is not zero on both sides."""
    differs: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Any headline figure differs."""
        return any(f.changed for f in (self.registers, self.spills, self.shared, self.occupancy)) or \
            any(c.changed for c in (*self.ops, *self.instructions))

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "variant": self.variant, "target": self.target,
                "registers": self.registers.to_json(), "spills": self.spills.to_json(),
                "shared": self.shared.to_json(), "occupancy": self.occupancy.to_json(),
                "ops": [c.to_json() for c in self.ops], "instructions": [c.to_json() for c in self.instructions],
                "differs": list(self.differs), "changed": self.changed}


def occupancy_label(capture: Capture) -> str | None:
    """``"2x4w regs"``: resident blocks, warps per block, the binding limit (the
    core's one wording, :func:`irscope.core.occupancy_text`)."""
    return occupancy_text(capture.occupancy)


def instruction_counts(capture: Capture) -> dict[str, int]:
    """``ptx.<class>`` / ``sass.<class>`` -> instruction count, for the stages the
    capture has."""
    out = {}
    for stage in MIX_STAGES:
        mix = capture_mix(capture, stage)
        if mix is not None:
            for cls in CLASSES:
                out[f"{stage}.{cls}"] = mix.count(cls)
    return out


def summarise_pair(pair: CapturePair) -> PairSummary:
    """The headline deltas of one pair: resources, occupancy, ops per stage and
    instruction counts by class."""
    a, b = pair.a, pair.b
    ra, rb = a.resources, b.resources
    oa, ob = ops_per_stage(a), ops_per_stage(b)
    ops = tuple(CountDelta(s, oa[s], ob[s]) for s in oa if s in ob)
    ia, ib = instruction_counts(a), instruction_counts(b)
    inst = tuple(CountDelta(k, ia[k], ib[k]) for k in ia if k in ib and (ia[k] or ib[k]))
    return PairSummary(
        kernel=b.kernel, variant=b.variant, target=b.target,
        registers=field_delta("registers", ra.registers, rb.registers, "resources"),
        spills=field_delta("spills", ra.spills, rb.spills, "resources"),
        shared=field_delta("shared", ra.shared, rb.shared, "resources"),
        occupancy=field_delta("occupancy", occupancy_label(a), occupancy_label(b), "occupancy"),
        ops=ops, instructions=inst, differs=pair.differs)
