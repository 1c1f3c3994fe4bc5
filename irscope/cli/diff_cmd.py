"""``irscope diff A B [C ...]``: a structural IR diff of captures, passes, bundles or files."""

from __future__ import annotations

import sys

import json
from dataclasses import replace

from rich.table import Table
from rich.text import Text

from irscope.cli.diff_render import aligned_diff, print_comparison
from irscope.cli.render import stdout_console
from irscope.diff.compare import compare_captures, compare_files, compare_passes
from irscope.diff.matrix import group_by, matrix, pick_sides
from irscope.diff.bundles import compare_pairs
from irscope.diff.pairing import pair_captures
from irscope.diff.sides import Side, close_sides, open_side
from irscope.compiler.stages import SASS, TTGIR
from irscope.errors import IrscopeError


def main(args) -> int:
    """Run ``irscope diff``."""
    sides = [open_side(s, args.format) for s in args.sides]
    for side in sides:
        if side.note:
            print(f"{side.spec}: {side.note}", file=sys.stderr)
    try:
        return _dispatch(args, sides)
    finally:
        close_sides(sides)


def _dispatch(args, sides: list[Side]) -> int:
    stages = tuple(args.stage) or None
    limit = None if args.all else 40
    if args.passes:
        if len(sides) != 1 or sides[0].capture is None:
            raise IrscopeError("--passes takes one capture: BUNDLE[:KERNEL][@TARGET][#VARIANT]")
        return _passes(args, sides[0], limit)
    if args.by:
        if len(sides) != 1 or not sides[0].bundle:
            raise IrscopeError("--by takes one bundle")
        return _by(args, sides[0])
    if len(sides) == 1:
        raise IrscopeError("diff needs two sides (or one bundle with --by, or one capture with --passes)")
    if len(sides) > 2:
        return _matrix(args, sides)
    a, b = sides
    if a.whole_bundle and b.whole_bundle:
        return _bundles(args, a, b)
    if a.file is not None or b.file is not None:
        if args.tui:
            raise IrscopeError("--tui compares two captures (or their pass snapshots), not IR files")
        if a.file is None or b.file is None:
            raise IrscopeError("compare a file with a file, or a capture with a capture "
                               "(irscope cat BUNDLE KERNEL --stage S > file.S makes a file of a capture)")
        cmp = compare_files(a.file, b.file, line=args.line)
    else:
        ca, cb = _capture(a), _capture(b)
        if args.pass_index is not None:
            cmp = compare_passes(ca, args.pass_index, cb, args.pass_index, line=args.line, a_label=a.label,
                                 b_label=b.label)
        else:
            cmp = compare_captures(ca, cb, stages=stages, line=args.line, a_label=a.label, b_label=b.label)
    if args.json:
        print(json.dumps(cmp.to_json(), indent=2))
        return 0
    if args.tui:
        if args.pass_index is not None:
            # The app names a stage by the registry: the pass's stage (ttgir), not the
            # format its snapshots are read as (mlir).
            stage = ca.pass_at(args.pass_index).stage
            cmp = replace(cmp, stages={stage: d for d in cmp.stages.values()})
        return _tui(cmp, ca, cb, args.pass_index is not None)
    print_comparison(stdout_console(), cmp, limit=limit)
    return 0


def tui_app(cmp, a, b, *, passes: bool = False):
    """The app, built by the factory ``irscope open`` uses, opening on the diff screen
    of ``cmp`` (captures ``a`` and ``b``). ``passes``: ``cmp`` compares pass snapshots,
    so the stages' whole texts are not the compared ones and the screen shows the
    changes only. Raises IrscopeError (one line) before any terminal is touched."""
    from irscope.tui.app import make_app

    return make_app(a.bundle.path, diff=cmp, diff_sides=None if passes else (a, b))


def _tui(cmp, a, b, passes: bool) -> int:
    tui_app(cmp, a, b, passes=passes).run()
    return 0


def _capture(side: Side):
    if side.capture is not None:
        return side.capture
    if side.bundle is None:
        raise IrscopeError(f"{side.spec} is an IR file, not a capture: this comparison takes captures "
                           "(BUNDLE:KERNEL[@TARGET][#VARIANT])")
    caps = side.bundle.captures()
    if len(caps) != 1:
        raise IrscopeError(f"{side.spec} holds {len(caps)} captures: name one (BUNDLE:KERNEL[@TARGET][#VARIANT]), "
                           "or give two whole bundles")
    return caps[0]


def _bundles(args, a: Side, b: Side) -> int:
    """Two whole bundles: kernels paired, one summary row per pair."""
    assert a.bundle is not None and b.bundle is not None  # whole bundles: checked by _dispatch
    pairing = pair_captures(a.bundle.captures(), b.bundle.captures())
    if args.jobs is not None and args.jobs < 1:
        raise IrscopeError(f"--jobs {args.jobs}: give 1 or more")
    done = compare_pairs(list(pairing.pairs), tuple(args.stage) or None, args.jobs)
    rows = [r for r, _ in done]
    changes = [c for _, c in done]
    if args.json:
        print(json.dumps({"a": a.spec, "b": b.spec,
                          "pairs": [r.to_json() | {"changes": c} for r, c in zip(rows, changes)],
                          "only_a": [c.to_json() for c in pairing.only_a],
                          "only_b": [c.to_json() for c in pairing.only_b]}, indent=2))
        return 0
    console = stdout_console()
    t = Table(title=Text(f"{a.spec} -> {b.spec}: {len(rows)} pair(s)"), header_style="bold", title_justify="left")
    for col in ("kernel", "variant", "target", "regs", "spills", "shared", "occupancy", "ops ttgir", "ops sass",
                "IR changes", "differs"):
        t.add_column(col, justify="left" if col in ("kernel", "variant", "target", "differs", "IR changes")
                     else "right")
    for r, c in zip(rows, changes):
        ops = {x.name: x for x in r.ops}
        ir = ", ".join(f"{s} {n}" for s, n in c.items() if n) or "none"
        t.add_row(Text(r.kernel), Text(r.variant), Text(r.target), _delta(r.registers), _delta(r.spills),
                  _delta(r.shared), _delta(r.occupancy), _delta(ops.get(TTGIR)), _delta(ops.get(SASS)),
                  Text(ir, style="yellow" if ir != "none" else "dim"), Text(", ".join(r.differs)))
    console.print(t)
    for label, caps in (("only in A", pairing.only_a), ("only in B", pairing.only_b)):
        for cap in caps:
            console.print(Text(f"{label}: ", style="yellow") + Text(cap.title()))
    return 0


def _figure(v) -> str:
    # A side without the figure (a failed compile has no registers) shows '-', not None.
    return "-" if v is None else str(v)


def _delta(d) -> Text:
    """A figure or op count of both sides (before, after, changed), or '-'."""
    if d is None:
        return Text("-")
    if not d.changed:
        return Text(_figure(d.before), style="dim")
    return Text(f"{_figure(d.before)} -> {_figure(d.after)}", style="yellow")


def _matrix(args, sides: list[Side]) -> int:
    pairs = [(s.label, _capture(s)) for s in sides]
    return _print_matrix(args, matrix(pairs))


def _by(args, side: Side) -> int:
    assert side.bundle is not None  # checked by _dispatch
    groups = group_by(side.bundle.captures(), args.by)
    if len(groups) < 2:
        raise IrscopeError(f"{side.spec} has one {args.by} only ({', '.join(groups) or 'none'}): nothing to compare")
    out = []
    seen = set()
    for cap in side.bundle.captures():
        key = (cap.kernel, cap.variant)
        if key in seen:
            continue
        seen.add(key)
        sides = pick_sides(groups, cap)
        if len(sides) >= 2:
            out.append(matrix(sides))
    if args.json:
        print(json.dumps({"by": args.by, "matrices": [m.to_json() for m in out]}, indent=2))
        return 0
    for m in out:
        _print_matrix(args, m)
    return 0


def _print_matrix(args, m) -> int:
    if args.json and not args.by:
        print(json.dumps(m.to_json(), indent=2))
        return 0
    t = Table(title=Text(m.sides[0].capture if m.sides else ""), header_style="bold", title_justify="left")
    t.add_column("")
    for label in m.labels:
        t.add_column(Text(label), justify="right")
    for row in m.rows():
        t.add_row(Text(row.name), *[Text("-" if v is None else str(v), style="yellow" if row.varies else "")
                                    for v in row.values])
    stdout_console().print(t)
    return 0


def _passes(args, side: Side, limit) -> int:
    cap = side.capture
    if cap is None:  # _dispatch lets only a capture through
        raise IrscopeError("--passes takes one capture: BUNDLE[:KERNEL][@TARGET][#VARIANT]")
    # The core's pass steps: the same sides and counts as `irscope passes` (matched by index).
    stage = args.stage[0] if args.stage else None
    steps = [s for s in cap.pass_steps() if (stage is None or s.stage == stage) and s.diff is not None]
    if args.json:
        print(json.dumps([{"pass": s.index, "index": s.index, "name": s.name, "stage": s.stage,
                           "next": s.after.pass_index if s.after else None, "snapshot": s.snapshot,
                           "before": s.before.to_json() if s.before else None,
                           "after": s.after.to_json() if s.after else None,
                           "parent": s.parent, "depth": s.depth, "diff": s.diff.to_json() if s.diff else None}
                          for s in steps], indent=2))
        return 0
    console = stdout_console()
    console.print(Text(cap.title(), style="bold") + Text(f": {len(steps)} pass(es) changed the IR"))
    for s in steps:
        d = s.diff
        if d is None:
            continue
        where = f"  ({s.before.label if s.before else '?'} -> {s.after.label if s.after else '?'})"
        console.print(Text(f"── {'  ' * s.depth}#{s.index} {s.stage} ", style="bold cyan") + Text(s.name) + Text(
            f"  {d.added} added, {d.removed} removed, {d.moved} moved, {d.changed} changed" + where, style="dim"))
        if d.identical:
            console.print(Text("    no op changed: the text differs only in locations, names or spacing",
                               style="dim"))
        for ln in aligned_diff(d, 8 if limit else None):
            console.print(ln, soft_wrap=True)
    return 0
