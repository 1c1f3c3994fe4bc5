"""What ``--pass N`` and ``--diff OTHER`` colour: per op line of the drawn module its
status (``added``, ``changed``, ``moved``), and the ops of the other side that are
gone (``removed``), all from the diff engine (:func:`irscope.irdiff.engine.diff_modules`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from irscope.irdiff.engine import diff_modules
from irscope.irdiff.model import REMOVED, OpRef
from irscope.ir import Module

# A snapshot's kind -> the format its diff runs as (as irscope.diff.compare does).
_PASS_FORMAT = {"mlir": "mlir", "llvm": "llir", "mir": "llir"}


@dataclass
class Highlight:
    """The statuses to colour, and where they come from."""

    status: dict[int, str] = field(default_factory=dict)
    """Line of an op in the drawn module -> ``added``/``changed``/``moved``."""
    removed: list[OpRef] = field(default_factory=list)
    """Ops only the other side has (their lines are the other side's)."""
    removed_label: str = "removed"
    notes: list[str] = field(default_factory=list)


def diff_highlight(drawn: Module, other: Module, fmt: str, other_name: str, heading: str | None = None) -> Highlight:
    """Colour ``drawn`` against ``other``: added = only in ``drawn``. ``heading``
    starts the note (default: ``against OTHER``)."""
    d = diff_modules(other, drawn, fmt)
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
    """Pass ``index`` of ``capture``: the IR it produced (the next snapshot, or the
    stage's final text after a stage's last pass), with the ops it added or changed
    coloured and the ops it erased listed. When the IR after the pass was not printed
    in a comparable form, the snapshot before it is drawn, uncoloured."""
    p = capture.pass_at(index)
    passes = capture.passes()
    fmt = _PASS_FORMAT.get(p.kind, "mlir")
    after: Module | None = None
    where = ""
    nxt = passes[index + 1] if index + 1 < len(passes) else None
    if nxt is not None and nxt.stage == p.stage and nxt.kind == p.kind:
        after, where = nxt.module, f"snapshot {index + 1}"
    else:
        info = capture.stage(p.stage).info if p.stage in capture.stages else None
        if info is not None and info.passes_kind == p.kind:
            after, where = capture.stage(p.stage).module, f"the final {p.stage}"
    name = f"pass {index} {p.name}" + (f" ({p.argument})" if p.argument else "")
    if after is None:
        return _before_only(p, name)
    h = diff_highlight(after, p.module, fmt, f"the IR before {name}", heading=f"{name}, IR after it ({where})")
    h.removed_label = f"erased by pass {index}"
    if not p.changed:
        h.notes.append(f"pass {index} did not change the IR")
    return PassView(after, f"{name}: IR after it", h)


def _before_only(p, name: str) -> PassView:
    note = (f"the IR after {name} is not printed in a comparable form (the stage's next text is another "
            f"format): its snapshot before the pass is drawn, nothing coloured")
    h = Highlight(notes=[note])
    return PassView(p.module, f"{name}: IR before it", h)
