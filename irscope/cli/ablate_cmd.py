"""``irscope passes BUNDLE KERNEL --ablate``: replay the kernel once without each pass
of its TTGIR pipeline and rank the passes by what leaving them out changes."""

from __future__ import annotations

import json
from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from irscope.cli.render import human_bytes, stdout_console
from irscope.core import Capture
from irscope.compiler.stages import TTGIR
from irscope.core.experiments import Ablation, AblationRow, Figures
from irscope.errors import IrscopeError
from irscope.ir.instr_classes import ASYNC_COPY, CLASSES, MMA

ABLATE_ONLY = ("jobs", "without_pass", "output", "skip_unchanged")
"""The ``passes`` flags that only an ablation takes (dest names; declared in
:mod:`irscope.cli.main`)."""


def check_flags(args: Any) -> None:
    """One-line errors for an ablation's flags given without ``--ablate``, or out of range."""
    if not args.ablate:
        given = [f"--{d.replace('_', '-')}" for d in ABLATE_ONLY if getattr(args, d, None)]
        if given:
            raise IrscopeError(f"{', '.join(given)} {'goes' if len(given) == 1 else 'go'} only with --ablate")
        return
    if args.origins or args.changed or args.stage:
        raise IrscopeError("--ablate replays the TTGIR pipeline: it takes no --origins, --changed or --stage")
    if args.jobs is not None and args.jobs < 1:
        raise IrscopeError(f"--jobs must be 1 or more, not {args.jobs}")


def main(cap: Capture, args: Any) -> int:
    """Run the ablation of ``cap`` (in ``args.bundle``), print its table or JSON."""
    from irscope.whatif.ablate import ablate, side_bundle_path

    check_flags(args)
    out = args.output or side_bundle_path(args.bundle)
    err = Console(stderr=True)
    progress = Progress(TextColumn("ablating"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                        console=err, transient=True, disable=not err.is_terminal)
    with progress:
        task = progress.add_task(f"{cap.kernel}: replaying", total=None)

        def on_progress(done: int, total: int, label: str) -> None:
            progress.update(task, completed=done, total=total,
                            description=f"last: without {label}" if label else "last: the control")

        table = ablate(args.bundle, cap, tuple(args.without_pass), jobs=args.jobs or 1, on_progress=on_progress,
                       out_path=out, skip_unchanged=args.skip_unchanged)
    if args.json:
        print(json.dumps(table.to_json(), indent=2))
        return 0
    print_table(table, stdout_console(), args.bundle, out)
    return 0


def _delta(base: int | None, value: int | None, fmt: Callable[[int], str] = str) -> Text:
    """``value`` with its change from ``base`` (``128 (+16)``); dim when unchanged."""
    if value is None:
        return Text("-", style="dim")
    if base is None or value == base:
        return Text(fmt(value), style="dim" if base is not None else "")
    sign = "+" if value > base else "-"
    return Text(fmt(value)) + Text(f" ({sign}{fmt(abs(value - base))})", style="yellow")


def _sass_changes(base: dict[str, int] | None, now: dict[str, int] | None, most: int = 3) -> Text:
    """The SASS classes that changed most: ``mma 32->0, async 48->0``."""
    if base is None or now is None:
        return Text("-", style="dim")
    moved = sorted(((abs(now.get(c, 0) - base.get(c, 0)), c) for c in CLASSES
                    if now.get(c, 0) != base.get(c, 0)), reverse=True)
    if not moved:
        return Text("same", style="dim")
    parts = [f"{_short_class(c)} {base.get(c, 0)}->{now.get(c, 0)}" for _, c in moved[:most]]
    more = f" +{len(moved) - most}" if len(moved) > most else ""
    return Text(", ".join(parts) + more)


def _short_class(cls: str) -> str:
    return {ASYNC_COPY: "async", MMA: "mma"}.get(cls, cls)


_LIMITS = {"registers": "regs", "shared": "smem"}


def _occupancy(f: Figures | None) -> str:
    """Resident warps per SM and what binds them: ``8 (regs)``."""
    if f is None or f.warps_per_sm is None:
        return "-"
    return f"{f.warps_per_sm} ({_LIMITS.get(f.limited_by or '', f.limited_by)})"


def _pass_cell(r: AblationRow) -> Text:
    """The pass's name, its pipeline when not the TTGIR's (``(llir)``)."""
    if not r.pass_name:
        return Text("(nothing left out)")
    return Text(r.pass_name) + (Text(f" ({r.stage})", style="dim") if r.stage != TTGIR else Text(""))


def _row_cells(r: AblationRow, base: Figures) -> list[Text]:
    f = r.figures
    rank = Text(str(r.rank)) if r.rank else Text("")
    if not r.compiled:  # where and why: below the table
        return [rank, _pass_cell(r), Text("fails", style="bold red"), *[Text("")] * 8, Text("-", style="dim")]
    status = Text("no effect", style="dim") if r.no_effect and r.pass_name else Text("ok", style="green")
    assert f is not None  # a compiled row has figures
    return [rank, _pass_cell(r), status,
            _delta(base.registers, f.registers), _delta(base.spills, f.spills, human_bytes),
            _delta(base.shared, f.shared, human_bytes),
            Text(_occupancy(f), style="" if f.warps_per_sm != base.warps_per_sm else "dim"),
            _delta(base.async_copies, f.async_copies), _delta(base.mma, f.mma),
            _sass_changes(base.sass_by_class, f.sass_by_class),
            Text("-" if r.diff_size is None else str(r.diff_size), style="" if r.diff_size else "dim"),
            Text(f"{r.effect:.3f}", style="bold" if r.effect else "dim")]


def print_table(table: Ablation, console: Console, bundle: str, replays: str) -> None:
    """The ranked table of ``table`` (attached in ``bundle``, its replays in ``replays``),
    the original's figures first, then what the columns mean."""
    t = Table(header_style="bold", title=Text(f"{table.kernel} [{table.variant}] {table.target}: "
                                              f"{len(table.rows)} passes left out one at a time"))
    widest = min(44, max((len(r.pass_name) + (len(r.stage) + 3 if r.stage != TTGIR else 0) for r in table.rows
                         if not r.no_effect), default=18))
    for col, just in (("#", "right"), ("pass left out", "left"), ("status", "left"), ("regs", "right"),
                      ("spills", "right"), ("shared", "right"), ("warps/SM", "right"), ("async", "right"),
                      ("mma", "right"), ("SASS by class", "left"), ("diff", "right"), ("effect", "right")):
        # Pass names fold rather than end in an ellipsis; the SASS changes give way first.
        t.add_column(col, justify=just, overflow="fold",  # type: ignore[arg-type]  # Rich's JustifyMethod literals
                     max_width=30 if col == "SASS by class" else None, min_width=widest if col == "pass left out" else None)
    b = table.baseline
    t.add_row(Text(""), Text("(original)", style="bold"), Text(""), Text(str(b.registers or "-")),
              Text(human_bytes(b.spills)), Text(human_bytes(b.shared)), Text(_occupancy(b)),
              Text(str(b.async_copies if b.async_copies is not None else "-")),
              Text(str(b.mma if b.mma is not None else "-")),
              Text(f"{b.sass_total} instructions" if b.sass_total is not None else "-"), Text(""), Text(""))
    if table.control is not None:
        t.add_row(*_row_cells(table.control, b))
    t.add_section()
    # Passes that changed nothing are named once below the table, not a row each: in
    # most kernels they are the majority (--json has every row).
    inert = [r for r in table.rows if r.no_effect]
    for r in table.rows:
        if not r.no_effect:
            t.add_row(*_row_cells(r, b))
    console.print(t)
    if inert:
        skipped = sum(1 for r in inert if not r.replayed)
        why = (f"; {skipped} not replayed, marked *: they changed nothing in the original compile, so leaving "
               f"them out cannot change it (--skip-unchanged)") if skipped else ""
        console.print(Text(f"no measured effect ({len(inert)}{why}): ", style="bold")
                      + Text(", ".join(r.pass_name + ("" if r.replayed else "*") for r in inert), style="dim"))
    for r in table.failed:
        where = f" at {r.failed_at}" if r.failed_at else ""
        console.print(Text(f"{r.pass_name} left out: the compile fails{where}: ", style="bold red")
                      + Text(r.error or "(no message)"))
    for note in table.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    console.print(Text(f"{len(table.failed)} pass(es) the kernel cannot compile without, {len(inert)} with no "
                       f"measured effect; replays in {replays}, attached to capture #{table.capture_id} "
                       f"(irscope diff {bundle}:#{table.capture_id} {replays}:#ID shows one: ID is the row's "
                       f"capture_id in --json)."))
    console.print(Text("Each row: the kernel replayed from its TTIR without that pass (every run of it). async, mma: "
                       "TTGIR asynchronous copies and tensor-core dots; warps/SM: resident warps per SM and the "
                       "limit that binds; SASS by class: the classes that changed "
                       "most; diff: TTGIR ops (LLVM IR ops for an (llir) pass, replayed from the TTGIR) the structural "
                       "diff against the original finds changed. effect: the "
                       "sum of eight terms in [0, 1] (relative change of registers, spills, shared memory, warps "
                       "per SM, async copies, mma ops; SASS mix distance; diff size over TTGIR ops); a pass the "
                       "kernel cannot compile without ranks first.", style="dim"))
