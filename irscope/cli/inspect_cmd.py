"""``irscope ls`` and ``irscope cat``: read a bundle (no Triton needed)."""

from __future__ import annotations

import json
import sys

from rich.table import Table

from irscope.cli.render import capture_table, human_bytes, stdout_console
from irscope.errors import IrscopeError
from irscope.store.bundle import Bundle
from irscope.store.select import select_capture


def main(args) -> int:
    with Bundle.open(args.bundle) as bundle:
        if args.command == "ls":
            return _ls(bundle, args)
        if args.command == "cat":
            return _cat(bundle, args)
    raise IrscopeError(f"unknown command {args.command}")


def _ls(bundle: Bundle, args) -> int:
    if args.runs:
        runs = bundle.runs()
        if args.json:
            print(json.dumps(runs, indent=2))
            return 0
        t = Table(header_style="bold")
        for col in ("run", "started", "mode", "targets", "complete", "status", "command"):
            t.add_column(col)
        for r in runs:
            t.add_row(str(r["id"]), r["started"], r["mode"], ",".join(r["targets"]) or "auto", "yes" if r["complete"] else "NO",
                      r["status"] or "-", " ".join(r["command"]))
        stdout_console().print(t)
        return 0
    rows = bundle.captures()
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
        return 0
    raw = sum(r.raw_bytes for r in rows)
    stdout_console().print(capture_table(rows, title=f"{bundle.path}"))
    stdout_console().print(f"{len(rows)} capture(s); IR text {human_bytes(raw)} stored in {human_bytes(bundle.stored_bytes())}",
                    highlight=False)
    return 0


def _cat(bundle: Bundle, args) -> int:
    row = select_capture(bundle, args.kernel, args.target, args.variant)
    if args.pass_index is not None:
        passes = bundle.passes(row.id)
        if not 0 <= args.pass_index < len(passes):
            raise IrscopeError(f"{row.kernel} has {len(passes)} pass snapshots (0..{len(passes) - 1}); no {args.pass_index}")
        text = bundle.text(passes[args.pass_index].blob)
    else:
        if args.stage not in row.stages:
            raise IrscopeError(f"{row.kernel} [{row.variant}] {row.target} has no stage {args.stage!r} (it has: {', '.join(row.stages)})")
        text = bundle.stage_text(row.id, args.stage)
    if isinstance(text, bytes):
        if sys.stdout.isatty():
            raise IrscopeError(f"stage {args.stage} is binary ({len(text)} bytes): redirect it to a file")
        sys.stdout.buffer.write(text)
    else:
        sys.stdout.write(text)
    return 0
