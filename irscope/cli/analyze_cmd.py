"""``irscope passes`` and ``irscope show``: views of one capture's passes and lines."""

from __future__ import annotations

import json
import os
from collections import Counter

from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

import irscope
from irscope.cli.render import stdout_console
from irscope.cli.flags import select
from irscope.core import Capture
from irscope.errors import IrscopeError
from irscope.core.pass_steps import PassStep
from irscope.compiler.stages import LLIR, LOWERING


def main(args) -> int:
    """Dispatch ``passes`` / ``show``."""
    with irscope.open(args.bundle) as bundle:
        cap = select(bundle, args)
        if args.command == "passes":
            return _passes(cap, args)
        if args.command == "show":
            return _show(cap, args)
    raise IrscopeError(f"unknown command {args.command}")


def _origins(cap: Capture, as_json: bool, stage: str | None = None) -> int:
    """``passes --origins``: every op of the final TTIR/TTGIR (and LLVM IR, when LLVM
    passes were captured) with the pass that made it, and every op instance the
    stage's passes erased (made by, erased by); ``stage`` keeps one of them."""
    out = cap.origins()
    if stage:
        if stage not in out:
            raise IrscopeError(f"--origins covers the final {', '.join(out) or 'no stage'} of {cap.title()}, "
                               f"not {stage!r}" + ("" if LLIR in out else " (llir needs a capture with --llvm-passes)"))
        out = {stage: out[stage]}
    if as_json:
        print(json.dumps({"kernel": cap.kernel, "variant": cap.variant, "target": cap.target,
                          "stages": {s: o.to_json() for s, o in out.items()}}, indent=2))
        return 0
    console = stdout_console()
    for stage, data in out.items():
        t = Table(header_style="bold", title=Text(f"{cap.title()}: final {stage}, op by op"))
        for col in ("line", "op", "made by pass", "last changed by"):
            t.add_column(col)
        for op in data.ops:
            by = op.introduced_by
            t.add_row(str(op.line), Text(op.text[:110]), Text(str(by)) if by else Text("(input of the stage)", style="dim"),
                      Text(str(op.changed_by)) if op.changed_by else Text(""))
        console.print(t)
        if data.erased:
            console.print(f"erased during {stage} (made by -> erased by):", style="bold", markup=False)
            for e in data.erased:
                made = str(e.introduced_by) if e.introduced_by else "input"
                console.print(f"  {e.count}x {e.name}: {e.form[:90]}  [{made} -> {e.erased_by}]",
                              highlight=False, markup=False)
    return 0


def _ms(secs: float | None) -> str:
    return "" if secs is None else f"{secs * 1000:.1f} ms"


def _passes(cap: Capture, args) -> int:
    from irscope.cli import ablate_cmd

    ablate_cmd.check_flags(args)
    if args.ablate:
        return ablate_cmd.main(cap, args)
    if not cap.pass_count:
        raise IrscopeError(f"{cap.title()} has no per-pass snapshots")
    if args.origins:
        if args.changed:
            raise IrscopeError("--changed lists passes; it does not apply to --origins")
        return _origins(cap, args.json, args.stage)
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
    t = Table(header_style="bold", title=Text(f"{cap.title()}: {count}"))
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"), ("stage", "left"), ("pass", "left"), ("argument", "left"), ("changed", "left"),
        ("+add", "right"), ("-rm", "right"), ("~mod", "right"), (">mv", "right"), ("ops", "right"),
        ("time", "right"), ("top dialects", "left"))
    for col, just in columns:
        t.add_column(col, justify=just)
    prev_stage = None
    for p in shown:
        s = p.step
        if prev_stage is not None and s.stage != prev_stage:
            t.add_section()
        prev_stage = s.stage
        if not s.after_known:
            status = Text("?", style="dim")
        elif s.changed:
            status = Text("changed", style="bold yellow")
        else:
            status = Text("-", style="dim")
        c = s.counts
        dialects = ", ".join(f"{d} {n}" for d, n in list(s.forms.ops_by_dialect.items())[:4])
        name = "  " * s.depth + ("↳ " if s.depth else "") + s.name
        t.add_row(str(s.index), Text(s.stage), Text(name), Text(s.argument or ""), status,
                  _count(c.added, "green", s), _count(c.removed, "red", s), _count(c.changed, "cyan", s),
                  _count(c.moved, "blue", s), str(s.ops_after) if s.after_known else "", _ms(p.seconds),
                  Text(dialects))
    console = stdout_console()
    console.print(t)
    for stage in stages:
        if args.stage and stage != args.stage:
            continue
        of = [p.step for p in every if p.stage == stage and p.step.top_level]
        n_changed = sum(1 for c in of if c.changed)
        secs = stage_seconds.get(stage)
        time_txt = f", {secs:.3f} s for the stage" if isinstance(secs, (int, float)) else ""
        console.print(f"{stage}: {len(of)} passes, {n_changed} changed the IR{time_txt}", highlight=False, markup=False)
    console.print("+add -rm ~mod >mv: ops the structural diff of the IR before and after the pass finds added, "
                  "removed, changed and moved; ↳ = a pass run inside the one above it (not in the sums). "
                  "time: MLIR's and LLVM's pass timing reports (empty where no report names the pass: the "
                  "2nd..nth run of a nested pass, the llir stage's LLVM passes); '?' = the IR on one side of "
                  "the pass was not printed in a comparable form.", style="dim", highlight=False)
    return 0


def _count(n: int, style: str, s: PassStep) -> Text:
    """A count cell: blank when zero or unknown."""
    if not s.after_known or not n:
        return Text("")
    return Text(str(n), style=style)


SHOW_FIRST = 8
"""Ops of each stage ``show`` prints without ``--all``."""


def _file_lines(cap: Capture) -> int | None:
    """How many lines the kernel's file has: from the file on disk, else (at least)
    the stored function's last line; None when neither is known."""
    try:
        with open(cap.file or "", "rb") as fh:
            return sum(1 for _ in fh)
    except OSError:
        return cap.source.last_line


def _show(cap: Capture, args) -> int:
    if args.line is None:
        raise IrscopeError("--line N (a 1-based line of the kernel's file) is required")
    if args.line < 1:
        raise IrscopeError(f"--line {args.line}: lines start at 1")
    last = _file_lines(cap)
    if last is not None and args.line > last:
        raise IrscopeError(f"--line {args.line} is out of range: {cap.file} has {last} lines")
    found = cap.ops_at_line(args.line, call_sites=args.call_sites, stages=LOWERING)
    stages = {s: [{"line": op.line, "text": op.text.strip(), "name": op.name} for op in ops]
              for s, ops in found.items()}
    source = cap.source.line(args.line)
    file = cap.file
    unit = found.statement  # the ops are those of every line of the line's statement
    lines = [cap.source.line(n) for n in unit.lines]
    remark_set = cap.remarks()
    remarks = remark_set.at_line(unit.lines, file, call_sites=args.call_sites)
    if args.json:
        print(json.dumps({"kernel": cap.kernel, "file": file, "line": args.line, "source": source,
                          **unit.to_json(), "statement_source": lines, "stages": stages,
                          "remarks": [r.to_json() for r in remarks], "remarks_why_not": remark_set.why_not},
                         indent=2))
        return 0
    console = stdout_console()
    console.print(Text(f"{file}:{unit.label()}", style="bold") + Text("  " + (lines[0] or "(source not available)").strip()))
    for n, text in zip(unit.lines[1:], lines[1:]):
        console.print(Text(f"{n:>{len(f'{file}:{unit.label()}')}}", style="dim") + Text("  " + (text or "").strip()),
                      no_wrap=True, overflow="ellipsis", crop=True)
    every = getattr(args, "all", False)
    if not every:  # the summary: one line per stage
        for stage, ops in stages.items():
            counts = Counter(op["name"] or "?" for op in ops)
            breakdown = ", ".join(f"{n} {name}" for name, n in counts.most_common())
            console.print(Text(f"{stage}: {_ops(len(ops))}", style="bold cyan") + Text(": " + breakdown if ops else ""),
                          no_wrap=True, overflow="ellipsis", crop=True)
    cut = False
    for stage, ops in stages.items():
        shown = ops if every else ops[:SHOW_FIRST]
        if every:
            console.print(Text(f"{stage}: {len(ops)} op(s)", style="bold cyan"))
        elif ops:
            more = f", the first {len(shown)}" if len(shown) < len(ops) else ""
            console.print(Text(f"{stage} ({_ops(len(ops))}{more}):", style="bold cyan"))
        for op in shown:
            line = Text(f"  {op['line']:>5}  ", style="dim") + Text(str(op["text"]))
            if every:
                console.print(line, soft_wrap=True)
            else:
                cut = cut or len(line) > console.width
                console.print(line, no_wrap=True, overflow="ellipsis", crop=True)
        cut = cut or len(shown) < len(ops)
    if remarks:
        console.print(Text(f"remarks ({len(remarks)}):", style="bold cyan"))
        for r in remarks:
            # A helper's remark (--call-sites) is at the helper's line: say which file and line.
            at = f"{r.line}:{r.column}" if not r.called_from else f"{os.path.basename(r.file)}:{r.line}:{r.column}"
            where = f"  {at}  " + (f"[{r.stage}: {r.pass_name}] " if r.pass_name else "")
            console.print(Text(where, style="dim") + Text(r.severity + ": ", style="yellow") + Text(r.text),
                          soft_wrap=True)
    if not any(stages.values()):
        console.print("No op of any stage is located at that line.", style="dim")
    elif cut:
        console.print("(long lines and long stages are cut: --all prints every op in full, --json too)",
                      style="dim", highlight=False)
    return 0


def _ops(n: int) -> str:
    return f"{n} op" if n == 1 else f"{n} ops"
