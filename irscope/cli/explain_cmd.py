"""``irscope explain``: why each line of a kernel costs what it costs, from the capture alone.

    irscope explain BUNDLE KERNEL [--target T] [--variant V] [--line N] [--json]

A per-line table (ops per stage, global access widths, shared-memory and tensor-core
instructions, spills, remarks), then the remarks in full, the loops, the layout
conversions, the main loop's arithmetic intensity and the occupancy. The facts are
:meth:`irscope.core.Capture.explain`'s; :mod:`irscope.cli.explain_render` lays them
out (every string from the capture reaching Rich as :class:`~rich.text.Text`, never as
markup).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from irscope.cli.flags import add_selection, select
from irscope.errors import IrscopeError

if TYPE_CHECKING:
    from irscope.core import Capture
    from irscope.core.explain import Explanation, LineExplanation

# Building the parser imports this module for every command: the analysis and the
# rendering (irscope.cli.explain_render) are imported only when explain runs.


def add_parser(sub) -> None:
    """Register the ``explain`` subcommand."""
    p = sub.add_parser(
        "explain", help="why each line costs what it costs: access widths, spills, remarks, loops, occupancy",
        description="Per Python line of the kernel (and of its @triton.jit helpers): the ops of each stage, the "
                    "width of each global load and store against the widest its layout allows, shared-memory "
                    "and tensor-core instructions, SASS spills and Triton's remarks. Then the loops (software "
                    "pipelining), layout conversions, the main loop's arithmetic intensity and the occupancy. "
                    "Read from the capture: no GPU needed.")
    add_selection(p, kernel_optional=True)
    p.add_argument("--line", type=int, metavar="N", help="only the statement at line N of the kernel's file")
    p.add_argument("--json", action="store_true", help="a JSON object (fields: docs/cli-json.md)")


def main(args) -> int:
    """Run ``irscope explain``."""
    import irscope

    with irscope.open(args.bundle) as bundle:
        cap = select(bundle, args)
        if cap.failed:
            raise IrscopeError(f"{cap.title()} failed to compile ({cap.failed_at or 'unknown stage'}): "
                               f"nothing to explain (irscope cat --stage log shows why)")
        ex = cap.explain()
        lines = ex.lines
        if args.line is not None:
            lines = _pick_line(cap, ex, args.line)
        if args.json:
            out = ex.to_json()
            out["lines"] = [ln.to_json() for ln in lines]
            print(json.dumps(out, indent=2))
            return 0
        from irscope.cli.explain_render import render

        render(cap, ex, lines, args.line is not None)
    return 0


def _pick_line(cap: Capture, ex: Explanation, line: int) -> tuple[LineExplanation, ...]:
    if line < 1:
        raise IrscopeError(f"--line {line}: lines start at 1")
    src = cap.source
    last = src.last_line
    if src.text and last is not None and line > last and ex.line(line) is None:
        raise IrscopeError(f"--line {line} is past the kernel's source ({cap.file}:{src.first_line}-{last})")
    head = cap.statement(line).first
    got = [ln for ln in ex.lines if ln.line == head and ln.file == cap.file] or \
          [ln for ln in ex.lines if ln.line == line]
    return tuple(got)
