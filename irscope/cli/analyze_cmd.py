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


def capture_pass_changes(bundle: Bundle, capture_id: int, rows=None) -> list[PassChange]:
    """The :class:`PassChange` list of one capture, read from ``bundle`` (``rows``:
    its ``bundle.passes`` rows, when the caller has them already)."""
    rows = bundle.passes(capture_id) if rows is None else rows
    # Most passes change nothing, so many rows share a blob: decode each blob once and
    # hand out the same string, which provenance then hashes and compares only once.
    texts: dict[int, str] = {}
    inputs = []
    for r in rows:
        text = texts.get(r.blob)
        if text is None:
            text = bundle.text(r.blob)
            if isinstance(text, bytes):  # never expected for a snapshot; keep going
                text = text.decode("utf-8", "replace")
            texts[r.blob] = text
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


# Stages whose final text is the IR their passes print, and the snapshot kind that
# does: llir runs MLIR passes (their result is not printed as LLVM IR) and then,
# captured with --llvm-passes, LLVM ones, whose last result is the llir file.
_ORIGIN_STAGES = {"ttir": "mlir", "ttgir": "mlir", "llir": "llvm"}


def _origins(bundle: Bundle, row, changes: list[PassChange], as_json: bool) -> int:
    """``passes --origins``: every op of the final TTIR/TTGIR (and LLVM IR, when LLVM
    passes were captured) with the pass that made it, and every op instance the
    stage's passes erased (made by, erased by)."""
    from collections import Counter

    from irscope.ir import op_form, parse_stage
    from irscope.link.provenance import op_lives

    def pass_ref(index):
        if index is None:
            return None
        c = changes[index]
        return {"index": c.index, "name": c.name, "argument": c.argument}

    out: dict[str, dict] = {}
    for stage, kind in _ORIGIN_STAGES.items():
        if stage not in row.stages or not any(c.stage == stage and c.kind == kind and c.after_known
                                              for c in changes):
            continue
        births, gone = op_lives(changes, stage, kind)
        seen: Counter = Counter()
        ops = []
        for op in parse_stage(stage, bundle.stage_text(row.id, stage)).ops():
            if op.name == "<unknown>":
                continue
            form = (op.name, op_form(op))
            mine = births.get(form, ())
            i = seen[form]
            seen[form] += 1
            ops.append({"line": op.line, "name": op.name, "text": op.text.strip(),
                        "introduced_by": pass_ref(mine[i]) if i < len(mine) else None})
        erased = Counter((life.form, life.born, life.erased) for life in gone)
        out[stage] = {"ops": ops, "erased": [
            {"name": form[0], "form": form[1], "count": n, "introduced_by": pass_ref(born),
             "erased_by": pass_ref(by)}
            for (form, born, by), n in sorted(erased.items(), key=lambda kv: (kv[0][2], kv[0][1] if kv[0][1] is not None else -1, kv[0][0]))]}
    if as_json:
        print(json.dumps({"kernel": row.kernel, "variant": row.variant, "target": row.target, "stages": out}, indent=2))
        return 0
    console = stdout_console()
    for stage, data in out.items():
        t = Table(header_style="bold", title=f"{row.kernel} [{row.variant}] {row.target}: final {stage}, op by op")
        for col in ("line", "op", "made by pass"):
            t.add_column(col)
        for op in data["ops"]:
            by = op["introduced_by"]
            t.add_row(str(op["line"]), op["text"][:110],
                      f"#{by['index']} {by['name']}" if by else Text("(input of the stage)", style="dim"))
        console.print(t)
        if data["erased"]:
            console.print(f"erased during {stage} (made by -> erased by):", style="bold")
            for e in data["erased"]:
                made = f"#{e['introduced_by']['index']} {e['introduced_by']['name']}" if e["introduced_by"] else "input"
                console.print(f"  {e['count']}x {e['name']}: {e['form'][:90]}  [{made} -> "
                              f"#{e['erased_by']['index']} {e['erased_by']['name']}]", highlight=False, markup=False)
    return 0


def _ms(secs: float | None) -> str:
    return "" if secs is None else f"{secs * 1000:.1f} ms"


def _passes(bundle: Bundle, args) -> int:
    row = select_capture(bundle, args.kernel, args.target, args.variant)
    if not row.passes:
        raise IrscopeError(f"{row.kernel} [{row.variant}] {row.target} has no per-pass snapshots")
    pass_rows = bundle.passes(row.id)
    changes = capture_pass_changes(bundle, row.id, pass_rows)
    if args.origins:
        return _origins(bundle, row, changes, args.json)
    seconds = [r.seconds for r in pass_rows]  # same order as changes
    stages = dict.fromkeys(c.stage for c in changes)
    if args.stage and args.stage not in stages:
        raise IrscopeError(f"{row.kernel} [{row.variant}] {row.target} has no passes in stage {args.stage!r}; "
                           f"it has: {', '.join(stages)}")
    # Filters keep each pass's index and its diff, which were computed on all passes.
    rows = [(c, secs) for c, secs in zip(changes, seconds)
            if (not args.stage or c.stage == args.stage) and (not args.changed or c.changed)]
    if args.json:
        print(json.dumps([c.to_json() | {"seconds": s} for c, s in rows], indent=2))
        return 0
    info = bundle.capture_info(row.id)
    stage_seconds = info.get("stage_seconds") or {}
    if isinstance(stage_seconds, str):
        stage_seconds = json.loads(stage_seconds)
    shown = f"{len(rows)} of {len(changes)} passes" if len(rows) != len(changes) else f"{len(changes)} passes"
    t = Table(header_style="bold", title=f"{row.kernel} [{row.variant}] {row.target}: {shown}")
    for col, just in (("#", "right"), ("stage", "left"), ("pass", "left"), ("argument", "left"),
                      ("changed", "left"), ("+add", "right"), ("-rm", "right"), ("~mod", "right"),
                      ("ops", "right"), ("time", "right"), ("top dialects", "left")):
        t.add_column(col, justify=just)
    prev_stage = None
    for c, secs in rows:
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
                  str(c.ops_after) if c.after_known else "", _ms(secs), dialects)
    console = stdout_console()
    console.print(t)
    for stage in stages:
        if args.stage and stage != args.stage:
            continue
        of = [c for c in changes if c.stage == stage and not c.internal]
        n_changed = sum(1 for c in of if c.changed)
        secs = stage_seconds.get(stage)
        time_txt = f", {secs:.3f} s for the stage" if isinstance(secs, (int, float)) else ""
        console.print(f"{stage}: {len(of)} passes, {n_changed} changed the IR{time_txt}", highlight=False)
    console.print("time: MLIR's and LLVM's pass timing reports (empty where no report names the pass: the "
                  "2nd..nth run of a nested pass, the llir stage's LLVM passes); '?' = the IR on one side of "
                  "the pass was not printed in a comparable form.", style="dim", highlight=False)
    return 0


def _num(n: int, style: str, c: PassChange) -> Text:
    """A count cell: blank when zero or unknown."""
    if not c.after_known or not n:
        return Text("")
    return Text(str(n), style=style)


# Stages ``show`` maps back to Python, in pipeline order.
SHOW_STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


def _same_file(frame_file: str, kernel_file: str | None) -> bool:
    """Whether a debug-info path names the kernel's file: compilers print it absolute,
    relative or (MIR) as a base name, so compare path suffixes."""
    if not kernel_file:
        return True
    a = frame_file.replace("\\", "/")
    b = kernel_file.replace("\\", "/")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def kernel_source_line(bundle: Bundle, capture_id: int, file: str | None, line: int) -> str | None:
    """Text of ``line`` of the kernel's file: from the kernel source stored in the bundle
    (it holds the ``@triton.jit`` function from ``first_line``), else from the file on
    disk; None when neither has it."""
    got = bundle.kernel_source(capture_id)
    if got[0] and got[1]:
        lines = got[0].splitlines()
        if 0 <= line - got[1] < len(lines):
            return lines[line - got[1]]
    try:
        with open(file or "", encoding="utf-8") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text.rstrip("\n")
    except OSError:
        pass
    return None


def ops_at_line(stage: str, text: str, file: str | None, line: int) -> list[dict]:
    """Ops of ``text`` (parsed as ``stage``) whose innermost user frame (library frames
    under ``triton/language/`` skipped) is ``line`` of ``file``."""
    from irscope.ir import parse_stage

    out = []
    for op in parse_stage(stage, text).ops():
        fr = op.location.user_frame()
        if fr is not None and fr.line == line and _same_file(fr.file, file):
            out.append({"line": op.line, "text": op.text.strip(), "name": op.name})
    return out


def _show(bundle: Bundle, args) -> int:
    row = select_capture(bundle, args.kernel, args.target, args.variant)
    if args.line is None or args.line < 1:
        raise IrscopeError("--line N (a 1-based line of the kernel's file) is required")
    stages: dict[str, list[dict]] = {}
    for stage in SHOW_STAGES:
        if stage not in row.stages:
            continue
        text = bundle.stage_text(row.id, stage)
        if isinstance(text, bytes):
            continue
        stages[stage] = ops_at_line(stage, text, row.file, args.line)
    source = kernel_source_line(bundle, row.id, row.file, args.line)
    if args.json:
        print(json.dumps({"kernel": row.kernel, "file": row.file, "line": args.line, "source": source,
                          "stages": stages}, indent=2))
        return 0
    console = stdout_console()
    console.print(Text(f"{row.file}:{args.line}", style="bold") + Text("  " + (source or "(source not available)").strip()))
    for stage, ops in stages.items():
        console.print(Text(f"{stage}: {len(ops)} op(s)", style="bold cyan"))
        for op in ops:
            console.print(Text(f"  {op['line']:>5}  ", style="dim") + Text(op["text"]), soft_wrap=True)
    if not any(stages.values()):
        console.print("No op of any stage is located at that line.", style="dim")
    return 0
