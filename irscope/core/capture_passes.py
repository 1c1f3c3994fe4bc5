"""A capture's pass history, behind :class:`irscope.core.capture.Capture`'s pass methods:
the stored pass headers, what every pass did, each step's structural diff and counts,
and the snapshots read and parsed on demand.

Every result is cached in the capture's own cache (``Capture._memo``), under the
capture's lock, so a view that asks twice, or from two threads, pays once. Snapshot
texts are not all kept: a capture with ``--llvm-passes`` holds hundreds of megabytes
of them.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from irscope.compiler.stages import KIND_LLVM, STAGES
from irscope.errors import IrscopeError
from irscope.ir import Module, ParseCache, parse_pass
from irscope.store.bundle import PassRow

if TYPE_CHECKING:
    from irscope.compiler.pass_order import Side
    from irscope.core.capture import Capture
    from irscope.core.origins import StageOrigins
    from irscope.core.pass_steps import PassStep, StepCounts
    from irscope.core.passes import Pass
    from irscope.irdiff.model import StageDiff
    from irscope.link.provenance import PassChange

# Links, provenance and origins are imported on first use: opening a bundle to show
# one stage (the first screen of every view) needs none of them.

STEP_SIDES_KEPT = 4
"""The diffs of every pass read every snapshot once: they are not kept, except the last
few parsed, since the text after one pass is the text before the next."""


def pass_rows(cap: Capture) -> list[PassRow]:
    """The stored pass headers, in order."""
    return cap._memo("pass_rows", lambda: cap._store().passes(cap.id))


def pass_changes(cap: Capture) -> list[PassChange]:
    """What every pass did, in order (computed once)."""
    return cap._memo("changes", lambda: _compute_changes(cap))


def pass_text(cap: Capture, blob: int) -> str:
    """A snapshot's text (kept once read)."""
    def read() -> str:
        text = cap._store().text(blob)
        return text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return cap._memo(("blob", blob), read)


def _compute_changes(cap: Capture) -> list[PassChange]:
    from irscope.link.provenance import PassInput, pass_changes as changes_of

    rows = pass_rows(cap)
    # Most passes change nothing, so many rows share a blob: one string per blob,
    # which provenance then hashes and compares only once.
    texts: dict[int, str] = {}
    inputs = []
    for r in rows:
        text = texts.get(r.blob)
        if text is None:
            text = texts[r.blob] = cap._store().text(r.blob)
            if isinstance(text, bytes):
                text = texts[r.blob] = text.decode("utf-8", "replace")
        inputs.append(PassInput(r.stage, r.name, r.argument, r.when, r.kind, text, r.anchor))
    return changes_of(inputs, pass_finals(cap))


def pass_finals(cap: Capture) -> dict[str, str]:
    """The stage texts a pass can end in or start from (``ttir``, ``ttgir``,
    ``llir``), by stage name."""
    def read() -> dict[str, str]:
        finals = {}
        for name, info in STAGES.items():
            if (info.passes_kind or any(s.passes_input == name for s in STAGES.values())) \
                    and name in cap.row.stages:
                text = cap.stage(name).text
                if isinstance(text, str):
                    finals[name] = text
        return finals
    return cap._memo("pass_finals", read)


def pass_steps(cap: Capture) -> list[PassStep]:
    """What every pass did, in order (:mod:`irscope.core.pass_steps`): built once
    per capture; each step's structural diff is computed on first use."""
    def build() -> list[PassStep]:
        from irscope.compiler.pass_order import place_steps
        from irscope.core.pass_steps import PassStep

        rows = pass_rows(cap)
        places = place_steps(rows, list(pass_finals(cap)))
        return [PassStep(i, row, place, change, _diff=functools.partial(cap.step_diff, i),
                         _counts=functools.partial(cap.step_counts, i))
                for i, (row, place, change) in enumerate(zip(rows, places, pass_changes(cap)))]
    return cap._memo("pass_steps", build)


def step_diff(cap: Capture, index: int) -> StageDiff | None:
    """The structural diff of the IR before and after pass ``index`` (computed
    once; None when a side is unknown or the two texts are equal)."""
    def compute() -> StageDiff | None:
        from irscope.core.pass_steps import step_diff as diff_of

        sides = _step_texts(cap, index)
        if sides is None:
            return None
        step, tb, ta, stage, one_function = sides
        assert step.before is not None and step.after is not None  # _step_texts checked
        return diff_of(_step_side_module(cap, step.before, tb), _step_side_module(cap, step.after, ta),
                       stage, one_function=one_function)
    return cap._memo(("step_diff", index), compute)


def step_counts(cap: Capture, index: int) -> StepCounts:
    """The counts of :func:`step_diff` (computed once), without making the diff's
    changes unless it is made already: a view of every pass's counts (``irscope
    passes``) then pays for the pairing only."""
    def compute() -> StepCounts:
        from irscope.core.pass_steps import NO_CHANGE, StepCounts, step_counts as counts_of

        with cap._lock:
            made = cap._cache.get(("step_diff", index))
        if made is not None:
            return StepCounts.of(made)
        sides = _step_texts(cap, index)
        if sides is None:
            return NO_CHANGE
        step, tb, ta, stage, one_function = sides
        assert step.before is not None and step.after is not None  # _step_texts checked
        if one_function:  # the diff's changes are filtered by line: count what it keeps
            d = cap.step_diff(index)
            return StepCounts.of(d) if d is not None else NO_CHANGE
        return counts_of(_step_side_module(cap, step.before, tb), _step_side_module(cap, step.after, ta), stage)
    return cap._memo(("step_counts", index), compute)


def _step_texts(cap: Capture, index: int) -> tuple[PassStep, str, str, str, bool] | None:
    """Step ``index``, the texts before and after it, the stage to parse them as
    and whether they are LLVM dumps of one function against the whole module;
    None when a side is unknown or the texts are equal (nothing to diff)."""
    from irscope.compiler.stages import FAMILY_LLVM, SNAPSHOT_KINDS, pass_stage
    from irscope.link.provenance import module_scope

    step = pass_steps(cap)[index]
    if step.before is None or step.after is None:
        return None
    tb, ta = _step_side_text(cap, step.before), _step_side_text(cap, step.after)
    if tb == ta:
        return None
    info = SNAPSHOT_KINDS.get(step.kind)
    one_function = info is not None and info.family == FAMILY_LLVM and module_scope(tb) != module_scope(ta)
    return step, tb, ta, pass_stage(step.kind), one_function


def _step_side_text(cap: Capture, side: Side) -> str:
    if side.pass_index is None:
        return pass_finals(cap)[side.stage or ""]
    return _blob_text(cap, pass_rows(cap)[side.pass_index].blob)


def _blob_text(cap: Capture, blob: int) -> str:
    """A snapshot's text, read again unless it is kept already (not kept here)."""
    with cap._lock:
        hit = cap._cache.get(("blob", blob))
    if isinstance(hit, str):
        return hit
    text = cap._store().text(blob)
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else text


def _step_side_module(cap: Capture, side: Side, text: str) -> Module:
    from irscope.link.provenance import module_scope

    if side.pass_index is None:
        return cap.stage(side.stage or "").module
    row = pass_rows(cap)[side.pass_index]
    # Passes that change nothing repeat a text (one blob): parse it once. A
    # function-level LLVM dump borrows the !N table of the module dump before it,
    # so it is keyed by its place.
    key = side.pass_index if row.kind == KIND_LLVM and not module_scope(text) else ("blob", row.blob)
    with cap._lock:
        hit = cap._cache.get(("pass_module", side.pass_index))
        if hit is None:
            hit = cap._cache.get("step_sides", {}).get(key)
    if hit is not None:
        return hit
    module = _parse_pass_text(cap, side.pass_index, text)
    with cap._lock:
        kept = cap._cache.setdefault("step_sides", {})
        kept.pop(key, None)
        kept[key] = module
        while len(kept) > STEP_SIDES_KEPT:
            del kept[next(iter(kept))]
    return module


def side_text(cap: Capture, side: Side) -> str:
    """The text on one side of a pass: a snapshot's, or a stage's."""
    if side.pass_index is not None:
        return pass_text(cap, pass_rows(cap)[side.pass_index].blob)
    return pass_finals(cap)[side.stage or ""]


def side_module(cap: Capture, side: Side) -> Module:
    """The parsed text on one side of a pass."""
    if side.pass_index is not None:
        return pass_module(cap, side.pass_index)
    return cap.stage(side.stage or "").module


def passes(cap: Capture, stage: str | None = None, changed: bool | None = None) -> list[Pass]:
    """The pass timeline; ``stage`` keeps one stage's passes, ``changed`` only the
    passes that changed (True) or did not change (False) the IR. Indexes and
    changes are those of the whole list."""
    from irscope.core.passes import Pass

    out = []
    for i, (row, step) in enumerate(zip(pass_rows(cap), pass_steps(cap))):
        if stage is not None and row.stage != stage:
            continue
        if changed is not None and step.changed != changed:
            continue
        out.append(Pass(i, row, step, _text=functools.partial(cap._pass_text, row.blob),
                        _module=functools.partial(cap._pass_module, i)))
    return out


def pass_at(cap: Capture, index: int) -> Pass:
    """The pass at ``index`` of the whole list (what ``--pass N`` takes)."""
    rows = pass_rows(cap)
    if not 0 <= index < len(rows):
        raise IrscopeError(f"{cap.kernel} has {len(rows)} pass snapshots (0..{len(rows) - 1}); no {index}")
    return passes(cap)[index]


def _parse_cache(cap: Capture) -> ParseCache:
    return cap._memo("parse_cache", ParseCache)


def pass_module(cap: Capture, index: int) -> Module:
    """Snapshot ``index`` parsed (kept once parsed)."""
    return cap._memo(("pass_module", index),
                     lambda: _parse_pass_text(cap, index, pass_text(cap, pass_rows(cap)[index].blob)))


def _parse_pass_text(cap: Capture, index: int, text: str) -> Module:
    """Parse snapshot ``index`` (its text given)."""
    from irscope.link.provenance import module_scope

    rows = pass_rows(cap)
    row = rows[index]
    metadata = None
    if row.kind == KIND_LLVM and not module_scope(text):
        # A function-level LLVM dump prints no !N table: borrow the latest
        # module-level dump's, as parse_snapshots does.
        for j in range(index - 1, -1, -1):
            if rows[j].kind == KIND_LLVM and cap._memo(("module_scope", rows[j].blob),
                                                       functools.partial(_blob_scope, cap, rows[j].blob)):
                metadata = cap._memo(("loc_aliases", j), functools.partial(_loc_aliases_of, cap, j))
                break
    with cap._lock:  # the shared parse cache is not thread-safe
        return parse_pass(row.kind, text, _parse_cache(cap), metadata)


def _blob_scope(cap: Capture, blob: int) -> bool:
    """Whether a stored LLVM snapshot prints the whole module (see ``module_scope``)."""
    from irscope.link.provenance import module_scope

    return module_scope(_blob_text(cap, blob))


def _loc_aliases_of(cap: Capture, index: int) -> dict[str, str]:
    """The ``!N`` table of module-level LLVM snapshot ``index``."""
    return _parse_pass_text(cap, index, _blob_text(cap, pass_rows(cap)[index].blob)).loc_aliases


def origins(cap: Capture) -> dict[str, StageOrigins]:
    """Which pass made each op of the final TTIR, TTGIR (and LLVM IR, with
    ``--llvm-passes``), and which ops the stages' passes erased."""
    from irscope.core.origins import origins as origins_of

    return cap._memo("origins", lambda: origins_of(pass_steps(cap), cap.row.stages,
                                                   lambda s: cap.stage(s).module, cap.side_module))
