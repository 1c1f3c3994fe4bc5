"""``irscope links``: what one op of one stage became (or came from) in every other stage."""

from __future__ import annotations

import json

from rich.text import Text

from irscope.cli.render import stdout_console
from irscope.errors import IrscopeError
from irscope.link.stage_links import PIPELINE, capture_links
from irscope.store.bundle import Bundle
from irscope.store.select import select_capture


def main(args) -> int:
    """Run ``irscope links``."""
    if args.stage not in PIPELINE:
        raise IrscopeError(f"--stage must be one of {', '.join(PIPELINE)}")
    with Bundle.open(args.bundle) as bundle:
        row = select_capture(bundle, args.kernel, args.target, args.variant)
        if args.stage not in row.stages:
            raise IrscopeError(f"{row.kernel} [{row.variant}] {row.target} has no {args.stage} stage")
        links = capture_links(bundle, row.id)
    if links.op(args.stage, args.op_line) is None:
        raise IrscopeError(f"no op starts at line {args.op_line} of the {args.stage} stage "
                           f"(see 'irscope cat BUNDLE {row.kernel} --stage {args.stage}')")
    result = links.links_for_op(args.stage, args.op_line)
    if args.json:
        out = dict(result, links={s: [o.to_json() for o in ops] for s, ops in result["links"].items()})
        print(json.dumps(out, indent=2))
        return 0
    console = stdout_console()
    console.print(Text(f"{args.stage}:{args.op_line}  ", style="bold") + Text(result["text"] or ""), soft_wrap=True)
    mode = "exact (USE_IR_LOC=ttgir)" if links.exact else "by Python location (capture with --exact-links for exact TTGIR links)"
    console.print(f"TTGIR -> LLIR/PTX links: {mode}", style="dim", highlight=False)
    for stage, ops in result["links"].items():
        console.print(Text(f"{stage}: {len(ops)} op(s)", style="bold cyan"))
        for op in ops:
            console.print(Text(f"  {op.line:>5}  ", style="dim") + Text(f"{op.kind:<13} ", style="yellow")
                          + Text(op.text), soft_wrap=True)
    if not result["links"]:
        console.print("No op of another stage is linked to this one.", style="dim")
    return 0
