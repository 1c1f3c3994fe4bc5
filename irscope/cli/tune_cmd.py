"""``irscope tune``: compile every configuration of a grid with no GPU, and tabulate
what each costs.

    irscope tune SCRIPT_OR_BUNDLE KERNEL --grid 'BLOCK_M=64,128 num_warps=4,8 num_stages=2,3'
                 [--target T ...] [--variant V] [--jobs N] [-o OUT] [--json]

The compiling is :mod:`irscope.whatif.tune`'s (imported when the command runs); the
rows are :class:`irscope.core.tune_table.TuneRow`. Every string from a capture reaches
Rich as :class:`~rich.text.Text`, never as markup.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from irscope.cli.flags import VARIANT_HELP
from irscope.errors import IrscopeError

if TYPE_CHECKING:
    from rich.table import Table

    from irscope.core import Capture

    from irscope.core.tune_table import TuneRow, TuneTable


def add_parser(sub) -> None:
    """Register the ``tune`` subcommand."""
    p = sub.add_parser(
        "tune", help="compile every configuration of a grid, with no GPU: registers, spills, shared, occupancy",
        description="Compile KERNEL once per configuration of --grid (the kernel's constexprs and num_warps, "
                    "num_stages, num_ctas, maxnreg), from its captured source and signature, with no GPU. One "
                    "row per configuration: registers, spills, shared memory, occupancy and its limiter, SASS "
                    "instructions by class, the MMA instruction, the main loop's arithmetic intensity; marks "
                    "the configurations that cannot launch on the target and those that spill. A SCRIPT is "
                    "captured first (compile-only). Every compile is kept as a capture in the output bundle, "
                    "with the table.")
    p.add_argument("source", metavar="SCRIPT_OR_BUNDLE", help="a bundle, or a Python script to capture first")
    p.add_argument("kernel", metavar="KERNEL", help="kernel name (or a capture id like #3 in a bundle)")
    p.add_argument("--grid", required=True, metavar="GRID",
                   help="'KEY=V1,V2 KEY=V1,V2 ...': every combination is compiled (e.g. "
                        "'BLOCK_M=64,128 num_warps=4,8 num_stages=2,3')")
    p.add_argument("--target", action="append", default=[], metavar="T",
                   help="compile for this target (sm_90, sm_80, gfx942...); repeatable (default: the capture's, "
                        "sm_90 for a script)")
    p.add_argument("--variant", metavar="V", help="the captured variant the grid starts from: " + VARIANT_HELP)
    p.add_argument("--jobs", type=int, default=1, metavar="N", help="compile in N processes at once (default 1)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="bundle for the compiles and the table (default: the input bundle; for a script, "
                        "SCRIPT's name with .irscope)")
    p.add_argument("--json", action="store_true", help="the table as a JSON object (fields: docs/cli-json.md)")


def main(args) -> int:
    """Run ``irscope tune``."""
    import irscope
    from irscope.store.bundle import is_bundle
    from irscope.whatif.tune import capture_script, tune
    from irscope.whatif.tune_grid import parse_grid

    if args.jobs < 1:
        raise IrscopeError(f"--jobs {args.jobs}: give 1 or more")
    grid = parse_grid(args.grid)
    if not os.path.exists(args.source):
        raise IrscopeError(f"{args.source}: no such bundle or script")
    script = not is_bundle(args.source)
    if script and not args.source.endswith(".py"):
        raise IrscopeError(f"{args.source} is neither an irscope bundle nor a Python script")
    command = ["irscope", "tune", args.source, args.kernel, "--grid", args.grid]
    out = args.output or (os.path.splitext(os.path.basename(args.source))[0] + ".irscope" if script else args.source)
    bundle_path = args.source
    with _progress(args) as progress:
        if script:
            task = progress.add_task(f"capturing {os.path.basename(args.source)}", total=None)
            ids = capture_script(args.source, args.kernel, tuple(args.target), out, command)
            progress.remove_task(task)
            bundle_path = out
        with irscope.open(bundle_path) as bundle:
            pool = [c for c in bundle.captures() if c.id in set(ids)] if script else bundle.captures()
            cap = _base(pool, bundle_path, args)
            if cap.failed and args.variant is None and not args.kernel.startswith("#"):
                # Named by kernel alone: an autotuner's first config may be one that does
                # not compile; the grid starts from the first that did.
                cap = next((c for c in pool if c.kernel == cap.kernel and c.target == cap.target and not c.failed),
                           cap)
            if cap.failed:
                raise IrscopeError(f"{cap.title()} failed to compile ({cap.failed_at or 'unknown stage'}): "
                                   f"pick a variant that compiled (--variant)")
            total = len(grid) * max(1, len(set(args.target)))
            task = progress.add_task(f"tuning {cap.kernel}", total=total)

            def step(done: int, all_: int, last: str) -> None:
                progress.update(task, completed=done, total=all_, description=f"tuning {cap.kernel}: {last}")

            table = tune(bundle_path, cap, grid, tuple(args.target), out, args.jobs, step, command)
    if args.json:
        print(json.dumps(table.to_json(), indent=2))
        return 0
    _print(table, out)
    return 0


def _base(pool, where: str, args) -> "Capture":
    """The captured compile the grid starts from: KERNEL (and --variant) on the one
    --target given when the bundle has it there (its options are that target's), else
    the kernel's first capture."""
    from irscope.core.selection import select_capture

    if len(set(args.target)) == 1:
        try:
            return select_capture(pool, where, args.kernel, args.target[0], args.variant)
        except IrscopeError:
            pass  # not captured for that target: start from another and compile for it
    return select_capture(pool, where, args.kernel, None, args.variant)


def _progress(args):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True, soft_wrap=True)
    return Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                    MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True,
                    disable=args.json or not console.is_terminal)


def _kib(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def _n(v: object) -> str:
    return "-" if v is None else str(v)


# What binds the occupancy, as `irscope ls` says it.
_LIMITS = {"registers": "regs", "shared": "smem", "warps": "warps", "blocks": "blocks"}


def _marks(r: "TuneRow") -> str:
    if not r.compiled:
        return "failed" + (f" in {r.failed_at}" if r.failed_at else "")
    marks = []
    if r.cannot_launch:
        marks.append("cannot launch")
    if r.spills:
        marks.append("spills")
    return ", ".join(marks)


def render(table: "TuneTable") -> "Table":
    """The tune table as Rich renders it: one row per configuration (and target)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    n = len(table.rows) // max(1, len(table.targets))
    title = f"{table.kernel}: {n} configuration(s) on {', '.join(table.targets)}"
    t = Table(box=box.SIMPLE_HEAD, title=Text(title), title_justify="left", collapse_padding=True)
    keys = [k for k, _ in table.grid]
    for k in keys:  # the configuration stays whole: narrow terminals wrap the marks instead
        t.add_column(Text(k), justify="right", no_wrap=True, min_width=len(k))
    several = len(table.targets) > 1
    if several:
        t.add_column("target", no_wrap=True, min_width=6)
    for name in ("regs", "spills", "shared", "warps/SM", "SASS", "mma", "gld/gst", "sld/sst", "async", "FLOP/B"):
        t.add_column(name, justify="right", no_wrap=True)
    t.add_column("mma kind", no_wrap=True)
    t.add_column("marks", min_width=6)
    t.add_column("#", justify="right")
    for r in table.rows:
        cells = [Text(str(r.config.get(k))) for k in keys]
        if several:
            cells.append(Text(r.target))
        f = r.figures
        if f is None:
            cells += [Text("-")] * 10 + [Text("-")]
        else:
            sass = f.sass_by_class or {}
            occ = (f"{f.warps_per_sm} {_LIMITS.get(f.limited_by or '', f.limited_by or '')}".strip()
                   if f.warps_per_sm is not None else "-")
            cells += [Text(_n(f.registers)), Text(_n(f.spills)), Text(_kib(f.shared)), Text(occ),
                      Text(_n(f.sass_total)),
                      Text(_n(sass.get("mma") if f.sass_by_class else None)),
                      Text(f"{sass.get('global_load', 0)}/{sass.get('global_store', 0)}" if sass else "-"),
                      Text(f"{sass.get('shared_load', 0)}/{sass.get('shared_store', 0)}" if sass else "-"),
                      Text(_n(sass.get("async_copy_tma") if sass else None)),
                      Text("-" if r.intensity is None else f"{r.intensity:.1f}"),
                      Text(r.mma_kind or "-")]
        marks = _marks(r)
        cells.append(Text(marks, style="red" if marks else ""))
        cells.append(Text(_n(r.capture_id)))
        t.add_row(*cells)
    return t


def _print(table: "TuneTable", out: str) -> None:
    from rich.text import Text

    from irscope.cli.render import stdout_console

    console = stdout_console()
    console.print(render(table))
    for r in table.rows:
        if r.error:
            console.print(Text.assemble((f"{r.label} {r.target}: ", "red"), r.error), highlight=False)
        elif r.launch_problem:
            console.print(Text.assemble((f"{r.label} {r.target}: cannot launch: ", "yellow"), r.launch_problem),
                          highlight=False)
    for note in table.notes:
        console.print(Text.assemble(("note: ", "yellow"), note), highlight=False)
    ids = [r.capture_id for r in table.rows if r.capture_id is not None]
    how = f"; compare two: irscope diff {out}:#{ids[0]} {out}:#{ids[1]}" if len(ids) > 1 else ""
    console.print(Text(f"captures: {out} (the # column){how}"), highlight=False)
