"""``irscope ls`` and ``irscope cat``: read a bundle (no Triton needed)."""

from __future__ import annotations

import json
import sys

from rich.table import Table

import irscope
from irscope.cli.render import capture_table, human_bytes, stdout_console
from irscope.core import Bundle
from irscope.errors import IrscopeError


def main(args) -> int:
    with irscope.open(args.bundle) as bundle:
        if args.command == "ls":
            return _ls(bundle, args)
        if args.command == "cat":
            return _cat(bundle, args)
    raise IrscopeError(f"unknown command {args.command}")


def _ls(bundle: Bundle, args) -> int:
    if args.runs:
        runs = bundle.runs()
        if args.json:
            print(json.dumps([r.to_json() for r in runs], indent=2))
            return 0
        t = Table(header_style="bold")
        for col in ("run", "started", "mode", "targets", "complete", "status", "command"):
            t.add_column(col)
        for r in runs:
            t.add_row(str(r.id), r.started, r.mode, ",".join(r.targets) or "auto", "yes" if r.complete else "NO",
                      r.status or "-", " ".join(r.command))
        stdout_console().print(t)
        return 0
    caps = bundle.captures()
    if args.json:
        print(json.dumps([c.to_json() for c in caps], indent=2))
        return 0
    stdout_console().print(capture_table(caps, title=f"{bundle.path}"))
    stdout_console().print(f"{len(caps)} capture(s); IR text {human_bytes(bundle.raw_bytes)} stored in "
                           f"{human_bytes(bundle.stored_bytes())}", highlight=False)
    return 0


def _cat(bundle: Bundle, args) -> int:
    cap = bundle.capture(args.kernel, args.target, args.variant)
    if args.pass_index is not None:
        text = cap.pass_at(args.pass_index).text
    else:
        text = cap.stage(args.stage).text
    if isinstance(text, bytes):
        if sys.stdout.isatty():
            raise IrscopeError(f"stage {args.stage} is binary ({len(text)} bytes): redirect it to a file")
        sys.stdout.buffer.write(text)
    else:
        sys.stdout.write(text)
    return 0
