"""Per-Python-line sample changes: two profiled captures (two versions, two configs)
compared line by line, each line's measured samples on side A and side B
(:func:`irscope.core.profile.profile_of`, the newest profile of each side, helpers on
their own lines) beside the IR change of its statement (:mod:`irscope.diff.lines`).

Lines are matched by file base name and number, as :mod:`irscope.diff.lines` matches
them by number. Two profiles rarely hold the same number of samples (another launch
count, another sampling interval), so each side's share of its own total is given
with the counts: the shares compare, the counts say how much was measured.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from irscope.core import Capture
from irscope.core.profile import HotProfile, ProfileStamp, profile_of
from irscope.diff.lines import LineDelta
from irscope.diff.metadata import CountDelta
from irscope.ir.python_lines import same_file


@dataclass(frozen=True, slots=True)
class LineHeatDelta:
    """One user line with samples on either side."""

    line: int
    file: str
    """As side B's capture names it (else side A's)."""
    text: str | None
    """The line's source (side B's, else side A's)."""
    before: int
    """Side A's samples on the line."""
    after: int
    share_before: float
    """``before`` over side A's total samples."""
    share_after: float
    ops: tuple[CountDelta, ...] = ()
    """The IR change of the line's statement: ops per stage before and after (the
    :class:`~irscope.diff.lines.LineDelta` of its first line); empty when its op counts
    did not change."""
    kernel_file: bool = True
    """Whether the line is in the kernel's file (numbered as :mod:`irscope.diff.lines`
    numbers lines); a helper in another file has its own numbers."""

    @property
    def delta(self) -> int:
        return self.after - self.before

    def to_json(self) -> dict:
        return {"line": self.line, "file": self.file, "text": self.text, "before": self.before, "after": self.after,
                "delta": self.delta, "share_before": round(self.share_before, 4),
                "share_after": round(self.share_after, 4),
                "ops": {c.name: {"before": c.before, "after": c.after, "delta": c.delta} for c in self.ops},
                "kernel_file": self.kernel_file}


@dataclass(frozen=True, slots=True)
class HeatDelta:
    """The measured side of a comparison: both profiles and the per-line changes."""

    a: ProfileStamp
    b: ProfileStamp
    total_before: int
    total_after: int
    unattributed_before: int
    unattributed_after: int
    lines: tuple[LineHeatDelta, ...]
    """Every line with samples on either side, in (file, line) order."""

    def to_json(self) -> dict:
        return {"a_profile": self.a.to_json(), "b_profile": self.b.to_json(), "total_before": self.total_before,
                "total_after": self.total_after, "unattributed_before": self.unattributed_before,
                "unattributed_after": self.unattributed_after, "lines": [ln.to_json() for ln in self.lines]}


def _share(samples: int, total: int) -> float:
    return samples / total if total > 0 else 0.0


def _text(cap: Capture, file: str, line: int) -> str | None:
    if cap.file is None or not same_file(file, cap.file):
        return None
    return cap.source.line(line)


def heat_lines(a: Capture, ha: HotProfile, b: Capture, hb: HotProfile,
               line_deltas: Sequence[LineDelta] = ()) -> tuple[LineHeatDelta, ...]:
    """Each line with samples in ``ha`` or ``hb``, its samples on both sides and the op
    change of its statement among ``line_deltas``."""
    keyed: dict[tuple[str, int], list] = {}  # (base name, line) -> [file, before, after]
    for side, hot in ((0, ha), (1, hb)):
        for lh in hot.lines:
            got = keyed.setdefault((os.path.basename(lh.file), lh.line), [lh.file, 0, 0])
            got[1 + side] += lh.samples
            if side == 1:
                got[0] = lh.file
    by_line = {d.line: d for d in line_deltas}
    out = []
    for (_, line), (file, before, after) in sorted(keyed.items()):
        ops: tuple[CountDelta, ...] = ()
        kernel_file = b.file is not None and same_file(file, b.file)
        if kernel_file:
            d = by_line.get(b.statements.head(line))
            ops = d.counts if d is not None else ()
        text = _text(b, file, line)
        out.append(LineHeatDelta(line, file, text if text is not None else _text(a, file, line), before, after,
                                 _share(before, ha.total_samples), _share(after, hb.total_samples), ops,
                                 kernel_file))
    return tuple(out)


def heat_delta(a: Capture, b: Capture, line_deltas: Sequence[LineDelta] = ()) -> tuple[HeatDelta | None, str | None]:
    """The measured change from ``a`` to ``b`` (None unless both have a profile) and a
    note when only one side has one."""
    ha, hb = profile_of(a), profile_of(b)
    if ha is None and hb is None:
        return None, None
    if ha is None or hb is None:
        which = "B" if ha is None else "A"
        return None, f"only side {which} has a profile: no sample change per line (irscope profile import)"
    return HeatDelta(ha.stamp, hb.stamp, ha.total_samples, hb.total_samples, ha.unattributed, hb.unattributed,
                     heat_lines(a, ha, b, hb, line_deltas)), None
