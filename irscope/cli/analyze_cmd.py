"""``irscope passes`` and ``irscope show``: analyses of one captured kernel."""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text

from irscope.cli.render import stdout_console
from irscope.errors import IrscopeError
from irscope.link.provenance import PassChange, PassInput, pass_changes
from irscope.store.bundle import Bundle
from irscope.store.select import select_capture

# Stages whose final text can close the last pass of the stage (see provenance).
_FINAL_STAGES = ("ttir", "ttgir", "llir")


def main(args) -> int:
    """Dispatch ``passes`` / ``show``."""
    with Bundle.open(args.bundle) as bundle:
        if args.command == "passes":
            return _passes(bundle, args)
        if args.command == "show":
            return _show(bundle, args)
    raise IrscopeError(f"unknown command {args.command}")


def capture_pass_changes(bundle: Bundle, capture_id: int) -> list[PassChange]:
    """The :class:`PassChange` list of one capture, read from ``bundle``."""
    rows = bundle.passes(capture_id)
    inputs = []
    for r in rows:
        text = bundle.text(r.blob)
        if isinstance(text, bytes):  # never expected for a snapshot; keep going
            text = text.decode("utf-8", "replace")
        inputs.append(PassInput(r.stage, r.name, r.argument, r.when, r.kind, text))
    finals: dict[str, str] = {}
    for stage in _FINAL_STAGES:
        try:
            text = bundle.stage_text(capture_id, stage)
        except Exception:  # stage missing (failed compile): the last pass stays unknown
            continue
        if isinstance(text, str):
            finals[stage] = text
    return pass_changes(inputs, finals)


def _passes(bundle: Bundle, args) -> int:
    row = select_capture(bundle, args.kernel, args.target, args.variant)
    if not row.passes:
        raise IrscopeError(f"{row.kernel} [{row.variant}] {row.target} has no per-pass snapshots")
    changes = capture_pass_changes(bundle, row.id)
    if args.json:
        print(json.dumps([c.to_json() for c in changes], indent=2))
        return 0
    info = bundle.capture_info(row.id)
    stage_seconds = info.get("stage_seconds") or {}
    if isinstance(stage_seconds, str):
        stage_seconds = json.loads(stage_seconds)
    t = Table(header_style="bold", title=f"{row.kernel} [{row.variant}] {row.target}: {len(changes)} passes")
    for col, just in (("#", "right"), ("stage", "left"), ("pass", "left"), ("argument", "left"),
                      ("changed", "left"), ("+add", "right"), ("-rm", "right"), ("~mod", "right"),
                      ("ops", "right"), ("top dialects", "left")):
        t.add_column(col, justify=just)
    prev_stage = None
    for c in changes:
        if prev_stage is not None and c.stage != prev_stage:
            t.add_section()
        prev_stage = c.stage
        if not c.after_known:
            status = Text("?", style="dim")
        elif c.changed:
            status = Text("changed", style="bold yellow")
        else:
            status = Text("-", style="dim")
        dialects = ", ".join(f"{d} {n}" for d, n in list(c.ops_by_dialect.items())[:4])
        name = ("  ↳ " if c.internal else "") + c.name
        t.add_row(str(c.index), c.stage, name, c.argument, status,
                  _num(c.added, "green", c), _num(c.removed, "red", c), _num(c.modified, "cyan", c),
                  str(c.ops_after) if c.after_known else "", dialects)
    console = stdout_console()
    console.print(t)
    for stage in dict.fromkeys(c.stage for c in changes):
        of = [c for c in changes if c.stage == stage and not c.internal]
        n_changed = sum(1 for c in of if c.changed)
        secs = stage_seconds.get(stage)
        time_txt = f", {secs:.3f} s for the stage" if isinstance(secs, (int, float)) else ""
        console.print(f"{stage}: {len(of)} passes, {n_changed} changed the IR{time_txt}", highlight=False)
    console.print("Per-pass times are not recorded; '?' = result not comparable (kept only as LLVM IR).",
                  style="dim", highlight=False)
    return 0


def _num(n: int, style: str, c: PassChange) -> Text:
    """A count cell: blank when zero or unknown."""
    if not c.after_known or not n:
        return Text("")
    return Text(str(n), style=style)
