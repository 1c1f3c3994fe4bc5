"""``irscope hot``: where a profiled kernel spent its time, by the user's lines and by
the ops of one stage.

    irscope hot BUNDLE KERNEL [--target T] [--variant V] [--stage S] [--profile ID]
                [--top N] [--call-sites] [--json]

The samples of a GPU profile attached to the capture (``irscope profile import`` or
``irscope run --profile``), charged by :mod:`irscope.core.profile`: the top Python
lines (Triton library code such as ``tl.sum`` charged to the line that calls it), each
with its share and dominant stall reasons, then the top ops of the stage. Reads the
bundle only: no GPU, no profiler.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Sequence

from irscope.compiler.stages import LLIR, PTX, SASS, TTGIR, TTIR
from irscope.cli.flags import add_selection
from irscope.errors import IrscopeError

if TYPE_CHECKING:
    from rich.table import Table

    from irscope.core import Capture
    from irscope.core.profile import HotProfile

HOT_STAGE_CHOICES = (SASS, PTX, LLIR, TTGIR, TTIR)
_DEFAULT_TOP = 10


def add_parser(sub) -> None:
    """Register the ``hot`` subcommand."""
    p = sub.add_parser(
        "hot", help="measured hot spots: the Python lines and ops with most GPU profile samples",
        description="The samples of a GPU profile attached to the capture (irscope profile import, or irscope run "
                    "--profile), charged to the user's lines (Triton library code such as tl.sum to the line that "
                    "calls it) with their dominant stall reasons, then the top ops of one stage.")
    add_selection(p)
    p.add_argument("--stage", choices=HOT_STAGE_CHOICES, default=SASS,
                   help="the stage whose ops to rank (default sass)")
    p.add_argument("--profile", type=int, metavar="ID",
                   help="which attached profile (an id of 'irscope profile ls'; default the newest)")
    p.add_argument("--top", type=int, metavar="N",
                   help=f"lines and ops to show (default {_DEFAULT_TOP}; with --json: all)")
    p.add_argument("--call-sites", action="store_true",
                   help="charge a @triton.jit helper's lines to the kernel lines that call it")
    p.add_argument("--json", action="store_true", help="a JSON object (fields: docs/cli-json.md)")


def main(args) -> int:
    """Run ``irscope hot``."""
    import irscope
    from irscope.core.profile import profile_of

    if args.top is not None and args.top < 1:
        raise IrscopeError(f"--top {args.top}: give a positive count")
    with irscope.open(args.bundle) as bundle:
        cap = _pick(bundle, args)
        if args.stage not in cap.stages:
            raise IrscopeError(f"{cap.title()} has no {args.stage} stage (it has: {', '.join(cap.stages)})")
        hot = profile_of(cap, args.profile, call_sites=args.call_sites)
        if hot is None:
            others = [f"#{c.id}" for c in bundle.captures(cap.kernel) if c is not cap and c.profiles()]
            if others:
                raise IrscopeError(f"{cap.title()} has no profile; {', '.join(others)} of {cap.kernel} "
                                   f"{'has' if len(others) == 1 else 'have'} one (irscope profile ls lists them)")
            raise IrscopeError(f"{cap.title()} has no profile: attach one with 'irscope profile import "
                               f"{args.bundle} {cap.kernel} FILE' (an ncu source CSV, a .ncu-rep or a Proton "
                               f".hatchet) or capture with 'irscope run --profile' on a GPU machine")
        if args.json:
            # Which capture the figures are of: a kernel named alone may have several.
            shown = {"capture_id": cap.id, "capture": cap.title(), "variant": cap.variant}
            print(json.dumps(shown | hot.to_json(args.stage, args.top), indent=2))
            return 0
        _render(cap, hot, args.stage, args.top or _DEFAULT_TOP)
    return 0


def _pick(bundle, args) -> "Capture":
    """The capture ``args`` name; a kernel named alone whose first capture has no
    profile is shown by its first capture that has one (a profiled run profiles the
    variants it launched, not always the first). The note on stderr names the pick."""
    import sys

    from irscope.core.selection import default_pick_note

    cap = bundle.capture(args.kernel, args.target, args.variant)
    named_one = args.variant is not None or args.kernel.lstrip("#").isdigit()
    if not named_one and not cap.profiles():
        cap = next((c for c in bundle.captures(cap.kernel) if c.target == cap.target and c.profiles()), cap)
    note = default_pick_note(cap, args.kernel, args.target, args.variant)
    if note:
        print(note, file=sys.stderr)
    return cap


def _share(n: float, total: int) -> str:
    return f"{100.0 * n / total:.1f}%" if total else "-"


def _stalls(stalls: dict[str, int], samples: int, n: int = 2) -> str:
    return ", ".join(f"{r} {_share(k, samples)}" for r, k in list(stalls.items())[:n])


def _widths(heads: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[int]:
    return [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(heads)]


def _room(width: int, heads: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> int:
    """Characters left for the last column once the others have their full width (each
    column takes 3 more: its padding and the separator)."""
    return width - sum(_widths(heads, rows)[:-1]) - 3 * len(heads) - 1


def _table(title: str, heads: tuple[str, ...], justify: str, rows: Sequence[tuple[str, ...]], width: int) -> "Table":
    """A table whose last column (source text, op text) gives way: every other column
    keeps its full width, so no number is cut."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    widths = _widths(heads, rows)
    widths[-1] = max(8, min(widths[-1], _room(width, heads, rows)))
    for i, head in enumerate(heads):
        t.add_column(head, justify="right" if justify[i] == "r" else "left", no_wrap=True, overflow="ellipsis",
                     width=widths[i])
    for r in rows:
        # Every string from the bundle reaches Rich as Text, never as markup.
        t.add_row(*(Text(c) for c in r))
    return t


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _render(cap: "Capture", hot: "HotProfile", stage: str, top: int) -> None:
    from rich.text import Text

    from irscope.cli.render import stdout_console
    from irscope.core.profile import line_texts
    from irscope.ir.python_lines import same_file

    console = stdout_console()
    total = hot.total_samples
    console.print(Text(f"{cap.title()}: {hot.stamp.label()}"))
    head = f"{total} samples, {hot.unattributed} unattributed ({_share(hot.unattributed, total)})"
    if hot.call_sites:
        head += "; helper lines charged to their call sites"
    console.print(Text(head))
    texts = line_texts(cap)

    def text_of(file: str, line: int) -> str:
        got = texts.get((file, line))
        if got is None:
            got = next((t for (f, n), t in texts.items() if n == line and same_file(f, file)), "")
        return got.strip()

    heads = ("line", "samples", "share", "stalls", "how", "source")
    files = {_base(h.file) for h in hot.lines[:top]}
    several = len(files) > 1
    title = "Python lines" if several or not files else f"Python lines of {next(iter(files))}"
    picked: list[tuple[str, ...]] = []
    # The widest layout whose source column keeps 24 characters: two stall reasons and
    # how each line was charged where there is room, the dominant reason alone in 80 columns.
    for reasons, how in ((2, True), (1, True), (1, False)):
        picked = [(f"{_base(h.file)}:{h.line}" if several else str(h.line), str(h.samples), _share(h.samples, total),
                   _stalls(h.stalls, h.samples, reasons), *((h.how,) if how else ()), text_of(h.file, h.line))
                  for h in hot.lines[:top]]
        cols = heads if how else heads[:4] + heads[5:]
        if _room(console.width, cols, picked) >= 24:
            break
    console.print(_table(title, cols, "lrrll"[:len(cols) - 1] + "l", picked, console.width))
    ops = [(str(o.stage_line), f"{o.samples:g}", _share(o.samples, total), " ".join(o.text.split()))
           for o in hot.ops(stage)[:top]]
    console.print(_table(f"{stage} ops", ("line", "samples", "share", "op"), "rrrl", ops, console.width))
    unplaced = hot.unplaced(stage)
    if unplaced:
        console.print(Text(f"{unplaced:g} samples on no {stage} op (no op of that stage at their line)"))
