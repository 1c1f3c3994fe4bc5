"""``irscope export``: a stage's op graph, the pass pipeline or one line's lineage, as
SVG, PNG, DOT or JSON.

    irscope export BUNDLE KERNEL --stage ttgir -o mm.svg
    irscope export BUNDLE KERNEL --pass 65 --max-nodes 200 -o lowered.svg
    irscope export BUNDLE KERNEL --costs -o costs.svg
    irscope export BUNDLE KERNEL --pipeline -o pipeline.svg
    irscope export BUNDLE KERNEL --lineage 70 -o line70.png

The graphs are built by :mod:`irscope.export`; this module only resolves the
capture and the other side, picks the format, prints the notes (plain text on
stderr, never through Rich) and writes the file atomically.
"""

from __future__ import annotations

import os
import sys

from irscope.cli.flags import add_selection, select
from irscope.compiler.stages import TTGIR
from irscope.errors import IrscopeError

FORMATS = ("svg", "png", "dot", "json")
_EXTENSIONS = {".svg": "svg", ".png": "png", ".dot": "dot", ".gv": "dot", ".json": "json"}


def add_parser(sub) -> None:
    """Register the ``export`` subcommand."""
    p = sub.add_parser(
        "export", help="draw a stage's op graph, the pass pipeline or one line's lineage (svg, png, dot, json)",
        description="Op graphs of a stage or pass snapshot (nodes are ops, edges def-use, regions nested "
                    "clusters), the pass pipeline (--pipeline) or the lineage of one Python line (--lineage), "
                    "drawn by Graphviz's dot.")
    add_selection(p)
    p.add_argument("--stage", default=TTGIR, help="ttir, ttgir, llir, ptx, amdgcn, sass (default ttgir)")
    p.add_argument("--format", choices=FORMATS, help="svg, png, dot or json (default: from -o's extension; "
                   "dot on stdout without -o)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (replaced whole, never half-written)")
    p.add_argument("--lines", metavar="A-B", help="only the ops of these Python lines (30-42, or 30)")
    p.add_argument("--op", metavar="NAME", help="only the ops near every op of this name (tt.dot)")
    p.add_argument("--radius", type=int, metavar="R", help="with --op: def-use steps around it (default 1)")
    p.add_argument("--max-nodes", type=int, metavar="N",
                   help="fold the rest into summary nodes by Python line or region (0: draw every op; "
                        "default: every op up to 1,000, then 300)")
    p.add_argument("--pass", dest="pass_index", type=int, metavar="N",
                   help="the IR pass N produced, with the ops it added and changed coloured (N as in "
                        "'irscope passes')")
    p.add_argument("--diff", metavar="OTHER",
                   help="colour what differs from OTHER (BUNDLE[:KERNEL][@TARGET][#VARIANT] or an IR file, as "
                        "'irscope diff' takes); with --pipeline, mark the passes only one capture ran")
    p.add_argument("--costs", action="store_true",
                   help="the final TTGIR with each op's cost: convert_layout nodes filled by how the data moves "
                        "(scratch bytes, bank conflicts), global accesses with their widths (irscope explain)")
    p.add_argument("--pipeline", action="store_true", help="the pass pipeline instead: stages and their passes")
    p.add_argument("--lineage", type=int, metavar="LINE", help="what Python LINE became in every stage instead")
    p.add_argument("--timeout", type=float, metavar="S", help="give up when dot takes longer than S seconds")


def output_format(fmt: str | None, output: str | None) -> str:
    """The format: ``--format``, else from the output's extension, else ``dot``."""
    if fmt:
        return fmt
    if not output:
        return "dot"
    ext = os.path.splitext(output)[1].lower()
    if ext not in _EXTENSIONS:
        raise IrscopeError(f"cannot tell the format from {output!r}: give --format svg, png, dot or json "
                           f"(or name the file .svg .png .dot .json)")
    return _EXTENSIONS[ext]


def main(args) -> int:
    """Run ``irscope export``."""
    import irscope
    from irscope.export.render import render

    fmt = output_format(args.format, args.output)
    if fmt == "png" and not args.output:
        raise IrscopeError("png is binary: write it to a file with -o FILE.png")
    _check_combination(args)
    with irscope.open(args.bundle) as bundle:
        capture = select(bundle, args)
        graph = _build(args, capture)
        data = render(graph, fmt, timeout=args.timeout)
    for note in graph.notes:
        print(f"irscope: note: {note}", file=sys.stderr)
    if args.output:
        from irscope.cli.inspect_cmd import write_atomic

        write_atomic(args.output, data)
        print(f"irscope: wrote {args.output} ({graph.nodes:,} nodes, {graph.edges:,} edges, {fmt})", file=sys.stderr)
        return 0
    # Bytes, not text: the picture is UTF-8 whatever the terminal's locale says.
    sys.stdout.flush()
    sys.stdout.buffer.write(data if data.endswith(b"\n") else data + b"\n")
    sys.stdout.buffer.flush()
    return 0


def _check_combination(args) -> None:
    focus = [flag for flag, v in (("--lines", args.lines), ("--op", args.op), ("--radius", args.radius),
                                  ("--max-nodes", args.max_nodes), ("--pass", args.pass_index)) if v is not None]
    if args.pipeline and args.lineage is not None:
        raise IrscopeError("--pipeline and --lineage draw different pictures: give one")
    if (args.pipeline or args.lineage is not None) and focus:
        what = "--pipeline" if args.pipeline else "--lineage"
        raise IrscopeError(f"{', '.join(focus)} focus stage graphs, not {what}")
    if args.lineage is not None and args.diff:
        raise IrscopeError("--lineage does not take --diff")
    if args.costs and (args.pipeline or args.lineage is not None):
        raise IrscopeError(f"--costs draws the TTGIR op graph, not {'--pipeline' if args.pipeline else '--lineage'}")
    if args.costs and (args.pass_index is not None or args.diff):
        # (stage_graph says the same; said here before OTHER is opened)
        raise IrscopeError(f"--costs and {'--pass' if args.pass_index is not None else '--diff'} do not combine: "
                           f"--costs colours the final TTGIR by cost")


def _build(args, capture):
    from irscope.export import lineage_graph, pipeline_graph, stage_graph

    if args.lineage is not None:
        return lineage_graph(capture, args.lineage)
    if args.pipeline:
        other = _other(args.diff, capture, need_capture=True) if args.diff else None
        return pipeline_graph(capture, other)
    lines = None
    if args.lines is not None:
        from irscope.export.focus import parse_lines

        lines = parse_lines(args.lines)
    other = _other(args.diff, capture, need_capture=False, stage=args.stage) if args.diff else None
    return stage_graph(capture, args.stage, lines=lines, op=args.op, radius=args.radius, max_nodes=args.max_nodes,
                       pass_index=args.pass_index, diff_against=other, costs=args.costs)


def _other(spec: str, capture, *, need_capture: bool, stage: str | None = None):
    """OTHER as ``irscope diff`` reads a side: a capture (a whole bundle gives the
    capture that pairs with this one), or, for stage graphs, an IR file."""
    from irscope.diff.pairing import best_match
    from irscope.diff.sides import open_side

    side = open_side(spec)
    if side.capture is not None:
        return side.capture
    if side.bundle is not None:
        got = best_match(capture, side.bundle.captures())
        if got is None:
            raise IrscopeError(f"{spec} has no capture of {capture.kernel} that pairs with this one: "
                               f"name it (BUNDLE:KERNEL[@TARGET][#VARIANT])")
        return got
    if need_capture:
        raise IrscopeError(f"--pipeline --diff takes a capture (BUNDLE[:KERNEL]...), and {spec} is an IR file")
    return side.file
