"""``irscope ls`` and ``irscope cat``: read a bundle (no Triton needed)."""

from __future__ import annotations

import json
import os
import sys
import tempfile

from rich.table import Table
from rich.text import Text

import irscope
from irscope.cli.render import capture_table, human_bytes, stdout_console
from irscope.cli.flags import select
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
            t.add_row(str(r.id), Text(r.started or "-"), Text(r.mode or "-"), Text(",".join(r.targets) or "auto"),
                      "yes" if r.complete else "NO", Text(r.status or "-"), Text(" ".join(r.command)))
        stdout_console().print(t)
        return 0
    caps = bundle.captures()
    if args.json:
        print(json.dumps([c.to_json() for c in caps], indent=2))
        return 0
    stdout_console().print(capture_table(caps, title=str(bundle.path)))
    stdout_console().print(f"{len(caps)} capture(s); IR text {human_bytes(bundle.raw_bytes)} stored in "
                           f"{human_bytes(bundle.stored_bytes())}", highlight=False)
    return 0


def _cat(bundle: Bundle, args) -> int:
    cap = select(bundle, args)
    text: str | bytes
    if args.pass_index is not None:
        text = cap.pass_at(args.pass_index).text
    else:
        text = cap.stage(args.stage).text
    if getattr(args, "output", None):
        write_atomic(args.output, text)
        return 0
    if isinstance(text, bytes):
        if sys.stdout.isatty():
            raise IrscopeError(f"stage {args.stage} is binary ({len(text)} bytes): not printed to a terminal; "
                               f"write it with -o FILE, or pipe it (| xxd)")
        sys.stdout.buffer.write(text)
    else:
        sys.stdout.write(text)
    return 0


def write_atomic(path: str, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in its folder, renamed over
    it: a reader (or a crash) never sees half a file. IrscopeError when it cannot."""
    if os.path.isdir(path):
        raise IrscopeError(f"cannot write {path}: it is a directory")
    folder = os.path.dirname(os.path.abspath(path))
    raw = data.encode() if isinstance(data, str) else data
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
        if os.path.exists(path):
            mode = os.stat(path).st_mode & 0o7777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise IrscopeError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            try:
                os.remove(tmp)
            except OSError:
                pass
