"""Pass ablation: what each pass of the TTGIR pipeline is worth to one kernel.

The kernel is replayed from its captured TTIR once per pass of its TTGIR pipeline
that can be left out, each time without that pass, plus one control replay that
leaves nothing out; an extra pass asked for from the LLVM lowering is left out of a
replay from the captured TTGIR. A pass that left the IR unchanged in the original
compile needs no replay: its row is the control's (:func:`unchanged_passes`).
Every replay is an ordinary capture in a side bundle; the table compares each with
the original compile (:mod:`irscope.core.experiments`: figures, effect score,
ranking) and is attached to the original capture (attachment kind ``ablation``),
where ``irscope report`` and the core's
:func:`irscope.core.experiments.ablation_of` find it.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import replace
from typing import Callable

from irscope.compiler.stages import LLIR, TTGIR, TTIR
from irscope.core.bundle import open_bundle
from irscope.core.capture import Capture
from irscope.core.experiments import ABLATION, Ablation, AblationRow, ablation_row, figures_of, ranked
from irscope.errors import IrscopeError
from irscope.store.attachments import add_attachment
from irscope.store.bundle import Bundle as StoreBundle
from irscope.whatif.replay import ReplayOutcome, ReplayRequest, known_passes, replay_many

ProgressFn = Callable[[int, int, str], None]
"""``on_progress(done, total, label)``: called once per finished replay, ``label``
naming the pass it left out ('' for the control replay)."""

SIDE_SUFFIX = ".ablate.irscope"


def side_bundle_path(bundle_path: str) -> str:
    """Where an ablation's replays go by default: beside the bundle, ``STEM.ablate.irscope``."""
    stem, _ = os.path.splitext(bundle_path)
    return stem + SIDE_SUFFIX


def ablation_passes(cap: Capture, extra_without: tuple[str, ...] = (),
                    only: tuple[str, ...] | None = None) -> tuple[tuple[str, str], ...]:
    """The passes an ablation of ``cap`` leaves out, one replay each, with the stage
    whose pipeline runs them: every pass of its TTGIR pipeline that can be left out
    (``only``: just these of them), then each extra not among them. An extra may
    be a pass of the LLVM lowering (replayed from the TTGIR); IrscopeError listing
    the passes there are for any other name, and for a capture with nothing to
    replay (a failed compile, no TTIR)."""
    if cap.failed:
        raise IrscopeError(f"{cap.title()} did not compile: there is no pipeline to ablate")
    if TTIR not in cap.stages:
        raise IrscopeError(f"{cap.title()} has no TTIR stage to replay from")
    known = known_passes(cap, TTGIR)
    if not known:
        raise IrscopeError(f"{cap.title()} has no TTGIR passes to leave out (was it captured with its pass snapshots?)")
    passes = known if only is None else ()
    out = [(p, TTGIR) for p in passes]
    later: tuple[str, ...] | None = None
    for p in dict.fromkeys((*(only or ()), *extra_without)):
        if p in passes:
            continue
        if p in known:
            out.append((p, TTGIR))
            continue
        later = _passes_or_none(cap, LLIR) if later is None else later
        if p not in later:
            raise IrscopeError(f"unknown pass {p!r} for {cap.kernel}: an ablation can leave out "
                               f"{', '.join((*known, *later))}")
        out.append((p, LLIR))
    return tuple(out)


def _passes_or_none(cap: Capture, stage: str) -> tuple[str, ...]:
    """The droppable passes of another stage; none when that stage has none captured."""
    if not any(p.stage == stage for p in cap.pass_rows()):
        return ()
    return known_passes(cap, stage)


def unchanged_passes(cap: Capture, stage: str = TTGIR) -> frozenset[str]:
    """The passes of ``cap``'s ``stage`` pipeline that left the IR byte for byte
    unchanged at every run (their snapshots before and after are equal). MLIR passes
    are functions of the IR they get, so leaving one of these out hands every later
    pass the same IR: the compile cannot change. A pass whose other side is not
    known is not among them (it is replayed): a doubt costs a compile, never a
    wrong row."""
    runs: dict[str, bool] = {}
    for p in cap.passes(stage):
        arg = p.row.argument
        if not arg or not p.step.top_level:
            continue
        same = p.step.after_known and not p.step.changed
        runs[arg] = runs.get(arg, True) and same
    return frozenset(arg for arg, same in runs.items() if same)


def ablate(bundle_path: str, cap: Capture, extra_without: tuple[str, ...] = (), jobs: int = 1,
           on_progress: ProgressFn | None = None, out_path: str | None = None, save: bool = True,
           only: tuple[str, ...] | None = None, skip_unchanged: bool = False) -> Ablation:
    """Replay ``cap`` (a capture of the bundle at ``bundle_path``) once without each
    pass of :func:`ablation_passes` (``only``: just these passes), and once from its
    TTIR leaving nothing out (the control), ``jobs`` at a time, into ``out_path``
    (default :func:`side_bundle_path`); the ranked table, attached to ``cap`` in its
    bundle when ``save``.

    With ``skip_unchanged``, a pipeline pass that changed nothing in the original
    compile (:func:`unchanged_passes`) is not replayed: its row is the control's,
    marked ``replayed=False`` (MLIR passes see only their input IR, so leaving such a
    pass out gives every later pass the same input). Passes named in ``only`` or
    ``extra_without`` are always replayed. IrscopeError (one line) for a capture with
    no TTIR or pass snapshots, an unknown pass, or a Triton too old to leave passes
    out."""
    passes = ablation_passes(cap, extra_without, only)
    named = set(only or ()) | set(extra_without)
    inert = unchanged_passes(cap) - named if skip_unchanged else frozenset()
    inferred = tuple(p for p, stage in passes if stage == TTGIR and p in inert)
    passes = tuple((p, stage) for p, stage in passes if p not in inferred)
    out = out_path or side_bundle_path(bundle_path)
    if os.path.abspath(out) == os.path.abspath(bundle_path):
        raise IrscopeError(f"the replays need a bundle of their own, not {bundle_path} itself")
    # A pass of the TTGIR pipeline is left out of a replay from the TTIR; one of the
    # LLVM lowering, of a replay from the TTGIR (the pipeline each replays runs again).
    start = {TTGIR: TTIR, LLIR: TTGIR}
    requests = [ReplayRequest(bundle_path, cap.id, TTIR)]
    requests += [ReplayRequest(bundle_path, cap.id, start[stage], without=(p,)) for p, stage in passes]
    labels = {id(r): (r.without[0] if r.without else "") for r in requests}

    def progress(done: int, total: int, outcome: ReplayOutcome) -> None:
        if on_progress is not None:
            on_progress(done, total, labels.get(id(outcome.request), ""))

    outcomes = replay_many(requests, out, jobs=jobs, on_progress=progress)
    table = ablation_table(cap, outcomes, out, bundle_path, inferred)
    if save:
        try:
            save_ablation(bundle_path, table)
        except (sqlite3.Error, OSError, IrscopeError) as exc:
            # The replays are done and kept: say the table could not be attached
            # rather than lose it (a read-only bundle, a full disk).
            why = " ".join(str(exc).split())
            table = replace(table, notes=(*table.notes, f"not attached to {bundle_path}: {why}"))
    return table


def ablation_table(cap: Capture, outcomes: list[ReplayOutcome], out_path: str, bundle_path: str,
                   inferred: tuple[str, ...] = ()) -> Ablation:
    """The ranked table of finished replays: the first outcome leaving nothing out is
    the control, every other is the row of the pass it left out; each pass of
    ``inferred`` (not replayed: it changed nothing) gets the control's row."""
    base = figures_of(cap)
    notes: list[str] = []
    control: AblationRow | None = None
    rows: list[AblationRow] = []
    with open_bundle(out_path) as replays:
        by_id = {c.id: c for c in replays.captures()}
        for o in outcomes:
            name = o.request.without[0] if o.request.without else ""
            replay = by_id.get(o.capture_id) if o.capture_id is not None else None
            stage = LLIR if o.request.from_stage == TTGIR else TTGIR
            row = ablation_row(name, cap, replay, o.error, o.failed_pass or o.failed_stage, base, stage)
            if not name:
                control = row
                if row.compiled and row.diff_size:
                    notes.append(f"the control replay (nothing left out) differs from the original in "
                                 f"{row.diff_size} TTGIR ops: effects include what replaying from TTIR changes")
                elif not row.compiled:
                    notes.append(f"the control replay (nothing left out) failed: {row.error}")
                continue
            if o.ok and name not in o.dropped:
                notes.append(f"{name} was not in the replayed pipeline: its row is the control's")
            rows.append(row)
    if inferred:
        if control is None:
            raise IrscopeError("an ablation that infers rows needs the control replay among the outcomes")
        rows += [replace(control, pass_name=p, replayed=False, capture_id=None) for p in inferred]
    ranked_rows = ranked(rows)
    return Ablation(kernel=cap.kernel, target=cap.target, variant=cap.variant, capture_id=cap.id,
                    replays=_relative_to(out_path, bundle_path), stage=TTGIR, from_stage=TTIR, baseline=base,
                    rows=ranked_rows, control=replace(control, rank=0) if control is not None else None,
                    triton_version=cap.triton_version, notes=tuple(notes))


def _relative_to(path: str, bundle_path: str) -> str:
    """``path`` as the table stores it: relative to the bundle's folder, so a folder
    of bundles can move whole (:meth:`Ablation.replays_path` resolves it)."""
    return os.path.relpath(os.path.abspath(path), os.path.dirname(os.path.abspath(bundle_path)))


def save_ablation(bundle_path: str, table: Ablation) -> int:
    """Attach ``table`` to its capture in the bundle at ``bundle_path``; the attachment's id."""
    store = StoreBundle.open(bundle_path, create=True)
    try:
        label = f"{table.stage} ablation, {len(table.rows)} passes"
        return add_attachment(store, ABLATION, table.capture_id, label, table.to_json())
    finally:
        store.close()
