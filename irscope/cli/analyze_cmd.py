"""``irscope passes`` and ``irscope show``: views of one capture's passes and lines."""

from __future__ import annotations

import json

from rich.table import Table
from rich.text import Text

import irscope
from irscope.cli.render import stdout_console
from irscope.core import Capture
from irscope.errors import IrscopeError
from irscope.link.provenance import PassChange
from irscope.vocab.stages import LOWERING


def main(args) -> int:
    """Dispatch ``passes`` / ``show``."""
    with irscope.open(args.bundle) as bundle:
        cap = bundle.capture(args.kernel, args.target, args.variant)
        if args.command == "passes":
            return _passes(cap, args)
        if args.command == "show":
            return _show(cap, args)
    raise IrscopeError(f"unknown command {args.command}")


def _origins(cap: Capture, as_json: bool) -> int:
    """``passes --origins``: every op of the final TTIR/TTGIR (and LLVM IR, when LLVM
    passes were captured) with the pass that made it, and every op instance the
    stage's passes erased (made by, erased by)."""
    out = cap.origins()
    if as_json:
        print(json.dumps({"kernel": cap.kernel, "variant": cap.variant, "target": cap.target,
                          "stages": {s: o.to_json() for s, o in out.items()}}, indent=2))
        return 0
    console = stdout_console()
    for stage, data in out.items():
        t = Table(header_style="bold", title=f"{cap.title()}: final {stage}, op by op")
        for col in ("line", "op", "made by pass"):
            t.add_column(col)
        for op in data.ops:
            by = op.introduced_by
            t.add_row(str(op.line), op.text[:110], str(by) if by else Text("(input of the stage)", style="dim"))
        console.print(t)
        if data.erased:
            console.print(f"erased during {stage} (made by -> erased by):", style="bold")
            for e in data.erased:
                made = str(e.introduced_by) if e.introduced_by else "input"
                console.print(f"  {e.count}x {e.name}: {e.form[:90]}  [{made} -> {e.erased_by}]",
                              highlight=False, markup=False)
    return 0


def _ms(secs: float | None) -> str:
    return "" if secs is None else f"{secs * 1000:.1f} ms"


def _passes(cap: Capture, args) -> int:
    if not cap.row.passes:
        raise IrscopeError(f"{cap.title()} has no per-pass snapshots")
    if args.origins:
        return _origins(cap, args.json)
    every = cap.passes()
    stages = dict.fromkeys(p.stage for p in every)
    if args.stage and args.stage not in stages:
        raise IrscopeError(f"{cap.title()} has no passes in stage {args.stage!r}; it has: {', '.join(stages)}")
    # Filters keep each pass's index and its diff, which were computed on all passes.
    shown = cap.passes(stage=args.stage or None, changed=True if args.changed else None)
    if args.json:
        print(json.dumps([p.to_json() for p in shown], indent=2))
        return 0
    stage_seconds = cap.info.get("stage_seconds") or {}
    if isinstance(stage_seconds, str):
        stage_seconds = json.loads(stage_seconds)
    count = f"{len(shown)} of {len(every)} passes" if len(shown) != len(every) else f"{len(every)} passes"
    t = Table(header_style="bold", title=f"{cap.title()}: {count}")
    for col, just in (("#", "right"), ("stage", "left"), ("pass", "left"), ("argument", "left"),
                      ("changed", "left"), ("+add", "right"), ("-rm", "right"), ("~mod", "right"),
                      ("ops", "right"), ("time", "right"), ("top dialects", "left")):
        t.add_column(col, justify=just)
    prev_stage = None
    for p in shown:
        c = p.changes
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
                  _count(c.added, "green", c), _count(c.removed, "red", c), _count(c.modified, "cyan", c),
                  str(c.ops_after) if c.after_known else "", _ms(p.seconds), dialects)
    console = stdout_console()
    console.print(t)
    for stage in stages:
        if args.stage and stage != args.stage:
            continue
        of = [p.changes for p in every if p.stage == stage and not p.changes.internal]
        n_changed = sum(1 for c in of if c.changed)
        secs = stage_seconds.get(stage)
        time_txt = f", {secs:.3f} s for the stage" if isinstance(secs, (int, float)) else ""
        console.print(f"{stage}: {len(of)} passes, {n_changed} changed the IR{time_txt}", highlight=False)
    console.print("time: MLIR's and LLVM's pass timing reports (empty where no report names the pass: the "
                  "2nd..nth run of a nested pass, the llir stage's LLVM passes); '?' = the IR on one side of "
                  "the pass was not printed in a comparable form.", style="dim", highlight=False)
    return 0


def _count(n: int, style: str, c: PassChange) -> Text:
    """A count cell: blank when zero or unknown."""
    if not c.after_known or not n:
        return Text("")
    return Text(str(n), style=style)


def _show(cap: Capture, args) -> int:
    if args.line is None or args.line < 1:
        raise IrscopeError("--line N (a 1-based line of the kernel's file) is required")
    found = cap.ops_at_line(args.line, call_sites=args.call_sites, stages=LOWERING)
    stages = {s: [{"line": op.line, "text": op.text.strip(), "name": op.name} for op in ops]
              for s, ops in found.items()}
    source = cap.source.line(args.line)
    file = cap.row.file
    if args.json:
        print(json.dumps({"kernel": cap.kernel, "file": file, "line": args.line, "source": source,
                          "stages": stages}, indent=2))
        return 0
    console = stdout_console()
    console.print(Text(f"{file}:{args.line}", style="bold") + Text("  " + (source or "(source not available)").strip()))
    for stage, ops in stages.items():
        console.print(Text(f"{stage}: {len(ops)} op(s)", style="bold cyan"))
        for op in ops:
            console.print(Text(f"  {op['line']:>5}  ", style="dim") + Text(op["text"]), soft_wrap=True)
    if not any(stages.values()):
        console.print("No op of any stage is located at that line.", style="dim")
    return 0
