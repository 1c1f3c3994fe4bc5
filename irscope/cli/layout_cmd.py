"""``irscope layout``: draw a Triton layout, given as text or as an op of a captured stage.

    irscope layout '#ttg.blocked<{...}>' --shape 64x64 -o blocked.svg
    irscope layout BUNDLE KERNEL --stage ttgir --op-line 77 -o convert.svg

The picture model is :mod:`irscope.export.layout_picture` (and
:mod:`~irscope.export.layout_op` for ops); :mod:`irscope.export.layout_dot` draws
it.  Nothing external reaches Rich: messages are plain ``print`` to stderr and
errors are one-line :class:`IrscopeError`.
"""

from __future__ import annotations

import json
import os
import sys

from irscope.cli.flags import TARGET_HELP, VARIANT_HELP, select
from irscope.compiler.stages import TTGIR
from irscope.errors import IrscopeError

FORMATS = ("svg", "png", "json", "dot")


def add_parser(sub) -> None:
    """Register the ``layout`` subcommand."""
    p = sub.add_parser(
        "layout", help="draw a Triton layout: who holds each tensor element (or which bank it lands in)",
        description="Draw a layout encoding over a tensor shape, or the layouts of one op of a captured stage "
                    "(its result, and its operands where they differ: both sides of a convert_layout). "
                    "Each element shows the warp, lane and register that hold it; shared-memory layouts "
                    "show the bank and offset of each element.")
    p.add_argument("source", metavar="ENCODING|BUNDLE",
                   help="an encoding as TTGIR prints it ('#ttg.blocked<{...}>'), or a bundle with --op-line")
    p.add_argument("kernel", metavar="KERNEL", nargs="?", help="with a bundle: kernel name (or a capture id like #3)")
    p.add_argument("--shape", metavar="SHAPE", help="with an encoding: the tensor shape, e.g. 64x64 or 128x64xf16 "
                   "(the element type sets the banks of shared layouts; default f16)")
    p.add_argument("--stage", default=TTGIR, help="with a bundle: the stage of the op (default ttgir)")
    p.add_argument("--op-line", type=int, metavar="N", help="with a bundle: the line of the op in that stage's text")
    p.add_argument("--target", metavar="T", help="with a bundle: " + TARGET_HELP)
    p.add_argument("--variant", metavar="V", help="with a bundle: " + VARIANT_HELP)
    p.add_argument("--format", choices=FORMATS, help="svg, png, json or dot (default: from -o's extension; "
                   "json on stdout without -o)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (replaced whole, never half-written)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--compact", action="store_true", default=None,
                      help="colour-only cells (automatic above 4096 elements)")
    size.add_argument("--full", dest="compact", action="store_false",
                      help="text in every cell even above 4096 elements (up to 16384)")


def _format(args) -> str:
    if args.format:
        fmt = args.format
    elif args.output:
        ext = os.path.splitext(args.output)[1].lower().lstrip(".")
        if ext not in FORMATS:
            raise IrscopeError(f"cannot tell the format from {args.output!r}: name it .svg, .png, .json or .dot, "
                               f"or pass --format")
        fmt = ext
    else:
        fmt = "json"
    if fmt == "png" and not args.output:
        raise IrscopeError("png is binary: write it with -o FILE")
    return fmt


def _from_encoding(args):
    from irscope.export.layout_picture import MAX_ELEMENTS, parse_shape, picture_of

    if args.kernel is not None or args.op_line is not None:
        raise IrscopeError("an encoding takes --shape only; KERNEL and --op-line go with a bundle")
    if not args.shape:
        raise IrscopeError("an encoding needs --shape, e.g. --shape 64x64")
    shape, bits = parse_shape(args.shape)
    numel = 1
    for n in shape:
        numel *= n
    if args.format_chosen != "json" and numel > MAX_ELEMENTS:  # refuse before mapping them all
        raise IrscopeError(f"{numel} elements are too many to draw (at most {MAX_ELEMENTS}); "
                           f"use --format json for the full map")
    return [picture_of(args.source, shape, element_bits=bits)], None


def _from_bundle(args):
    import irscope
    from irscope.export.layout_op import op_layouts
    from irscope.export.style import clean

    with irscope.open(args.source) as bundle:
        cap = select(bundle, args)
        if args.stage not in cap.stages:
            raise IrscopeError(f"{clean(cap.title(), 120)} has no {clean(args.stage, 40)} stage")
        module = cap.stage(args.stage).module
        if module is None or not hasattr(module, "ops"):
            raise IrscopeError(f"the {clean(args.stage, 40)} stage is not parsed IR")
        found = op_layouts(module, args.op_line, args.stage)
    return found.pictures, found


def main(args) -> int:
    """Run ``irscope layout``."""
    fmt = args.format_chosen = _format(args)
    source = args.source.strip()
    if args.op_line is not None:
        pictures, op = _from_bundle(args)
    elif source.startswith("#"):
        pictures, op = _from_encoding(args)
    elif os.path.exists(args.source):
        raise IrscopeError("a bundle needs KERNEL and --op-line N (the line of an op in 'irscope cat BUNDLE KERNEL')")
    else:
        raise IrscopeError("the first argument must be an encoding starting with '#' (e.g. '#ttg.blocked<{...}>') "
                           "or a bundle with --op-line")
    changes = _owner_changes(pictures, op)
    for role, counts in changes.items():
        print(f"irscope: note: {role}: {_changes_line(counts)}", file=sys.stderr)
    if fmt == "json":
        if op is not None:
            data = op.to_json()
            for side in data["layouts"]:  # a conversion's result says what moves (added field)
                if side["role"] in changes:
                    side["owner_changes"] = changes[side["role"]]
        else:
            data = pictures[0].to_json()
        out: str | bytes = json.dumps(data, indent=None, separators=(",", ":")) + "\n"
    else:
        from irscope.export.layout_dot import is_compact, render_layout

        sources = sum(1 for s in op.sides if s.role.startswith("operand")) if op is not None else 0
        out = render_layout(pictures, fmt, compact=args.compact, op_name=op.op_name if op else "", sources=sources)
        auto = [p for p in pictures if args.compact is None and is_compact(p)]
        if auto and args.output:
            print(f"irscope: {auto[0].numel} elements: drawn compact (colour only); --full for text in every cell",
                  file=sys.stderr)
    if args.output:
        from irscope.cli.inspect_cmd import write_atomic

        write_atomic(args.output, out)
    elif isinstance(out, bytes):
        sys.stdout.write(out.decode())
    else:
        sys.stdout.write(out)
    return 0


def _owner_changes(pictures, op) -> dict[str, dict]:
    """Role -> how many elements of that result change owner against its source
    (:func:`irscope.export.layout_moves.conversion_moves`): ``{"from", "same",
    "register", "lane", "warp"}``; empty unless the op converts a layout."""
    if op is None:
        return {}
    from collections import Counter

    from irscope.export.layout_moves import MOVE_KINDS, conversion_moves

    sources = sum(1 for s in op.sides if s.role.startswith("operand"))
    out = {}
    for b, moves in conversion_moves(pictures, sources).items():
        src = next(s.role for s in op.sides[:sources] if s.picture.layout is not None
                   and s.picture.shape == pictures[b].shape)
        counts = Counter(moves.values())
        out[op.sides[b].role] = {"from": src, "same": pictures[b].numel - len(moves),
                                 **{k: counts.get(k, 0) for k in MOVE_KINDS}}
    return out


def _changes_line(c: dict) -> str:
    total = c["same"] + c["register"] + c["lane"] + c["warp"]
    return (f"against {c['from']}, of {total} elements {c['same']} keep their owners, {c['register']} move to "
            f"another register of the same thread, {c['lane']} to another lane of the same warp, {c['warp']} "
            f"to another warp (bordered in the picture)")
