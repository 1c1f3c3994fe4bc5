"""``irscope links``: what one op of one stage became (or came from) in every other stage."""

from __future__ import annotations

import json

from rich.text import Text

import irscope
from irscope.cli.render import stdout_console
from irscope.cli.flags import select
from irscope.errors import IrscopeError
from irscope.compiler.stages import LOWERING


def main(args) -> int:
    """Run ``irscope links``."""
    if args.stage not in LOWERING:
        raise IrscopeError(f"--stage must be one of {', '.join(LOWERING)}")
    with irscope.open(args.bundle) as bundle:
        cap = select(bundle, args)
        if args.stage not in cap.stages:
            raise IrscopeError(f"{cap.title()} has no {args.stage} stage")
        result = cap.links_for_op(args.stage, args.op_line)
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
        return 0
    console = stdout_console()
    console.print(Text(f"{args.stage}:{args.op_line}  ", style="bold") + Text(result.text or ""), soft_wrap=True)
    mode = ("exact (USE_IR_LOC=ttgir)" if result.exact
            else "by Python location (capture with --exact-links for exact TTGIR links)")
    console.print(f"TTGIR -> LLIR/PTX links: {mode}", style="dim", highlight=False)
    for stage, ops in result.links.items():
        console.print(Text(f"{stage}: {len(ops)} op(s)", style="bold cyan"))
        for op in ops:
            console.print(Text(f"  {op.line:>5}  ", style="dim") + Text(f"{op.kind:<13} ", style="yellow")
                          + Text(op.text), soft_wrap=True)
    if not result.links:
        console.print("No op of another stage is linked to this one.", style="dim")
    return 0
