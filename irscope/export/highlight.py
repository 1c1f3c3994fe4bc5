"""What ``--pass N`` and ``--diff OTHER`` colour: per op line of the drawn module its
status (``added``, ``changed``, ``moved``), and the ops of the other side that are
gone (``removed``), all from the diff engine (:func:`irscope.irdiff.engine.diff_modules`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.compiler.stages import pass_stage
from irscope.irdiff.engine import diff_modules
from irscope.irdiff.model import REMOVED, OpRef, StageDiff
from irscope.ir import Module
from irscope.ir.python_lines import python_line


@dataclass
class Highlight:
    """The statuses to colour, and where they come from."""

    status: dict[int, str] = field(default_factory=dict)
    """Line of an op in the drawn module -> ``added``/``changed``/``moved``."""
    removed: list[OpRef] = field(default_factory=list)
    """Ops only the other side has (their lines are the other side's)."""
    removed_label: str = "removed"
    notes: list[str] = field(default_factory=list)
    other: Module | None = None
    """The module ``removed``'s lines are in, so that a focus on Python lines can
    keep the removed ops of those lines (pairing is done on whole modules first)."""

    def removed_at(self, lines: tuple[int, int], file: str | None, head=None) -> list[OpRef]:
        """The removed ops whose Python line (the one rule, in ``file``; ``head`` maps a
        line to its statement's first) is within ``lines``."""
        if self.other is None:
            return []
        by_line = {op.line: op for op in self.other.ops()}
        lo, hi = lines
        out = []
        for ref in self.removed:
            op = by_line.get(ref.line)
            py = python_line(op.location, file) if op is not None else None
            if py is not None and head is not None:
                py = head(py)
            if py is not None and lo <= py <= hi:
                out.append(ref)
        return out


def diff_highlight(drawn: Module, other: Module, fmt: str, other_name: str, heading: str | None = None) -> Highlight:
    """Colour ``drawn`` against ``other``: added = only in ``drawn``. ``heading``
    starts the note (default: ``against OTHER``)."""
    h = highlight_of(diff_modules(other, drawn, fmt), other_name, heading)
    h.other = other
    return h


def highlight_of(d: StageDiff, other_name: str, heading: str | None = None) -> Highlight:
    """The colours of one diff, drawn on its *after* side (``other_name``: its before)."""
    h = Highlight(removed_label=f"only in {other_name}")
    for c in d.changes:
        if c.kind == REMOVED:
            if c.before is not None:
                h.removed.append(c.before)
        elif c.after is not None:
            h.status[c.after.line] = c.kind
    n = {k: d.count(k) for k in ("added", "removed", "changed", "moved")}
    h.notes.append(f"{heading or 'against ' + other_name}: {d.matched:,} ops matched, {n['added']:,} added, "
                   f"{n['removed']:,} removed, {n['changed']:,} changed, {n['moved']:,} moved (diff engine)")
    if d.note:
        h.notes.append(d.note)
    return h


@dataclass
class PassView:
    """The module ``--pass N`` draws, its title part and its highlight."""

    module: Module
    what: str
    highlight: Highlight | None


def pass_view(capture, index: int) -> PassView:
    """Pass ``index`` of ``capture``: the IR after it (the core's pass step says where
    that is: the next snapshot, the stage's text, or the snapshot itself for an LLVM
    "after" dump), with the ops it added or changed coloured and the ops it erased
    listed. When the IR on one side of the pass is not kept in a comparable form,
    the pass's own snapshot is drawn, uncoloured."""
    p = capture.pass_at(index)
    step = p.step
    name = f"pass {index} {p.name}" + (f" ({p.argument})" if p.argument else "")
    if step.before is None or step.after is None:
        return _before_only(p, name)
    after = capture.side_module(step.after)
    d = step.text_diff
    if d is None:  # the same text on both sides
        d = diff_modules(after, after, pass_stage(p.kind))
    h = highlight_of(d, f"the IR before {name}", heading=f"{name}, IR after it ({step.after.label})")
    h.removed_label = f"erased by pass {index}"
    h.other = capture.side_module(step.before)
    if not p.changed:
        h.notes.append(f"pass {index} did not change the IR")
    return PassView(after, f"{name}: IR after it", h)


def _before_only(p, name: str) -> PassView:
    side = p.step.snapshot
    other = "after" if side == "before" else "before"
    note = (f"the IR {other} {name} is not printed in a comparable form (the neighbouring text is another "
            f"format): its snapshot ({side} the pass) is drawn, nothing coloured")
    h = Highlight(notes=[note])
    return PassView(p.module, f"{name}: IR {side} it", h)
