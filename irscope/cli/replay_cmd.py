"""``irscope replay``: recompile a captured kernel from its TTIR or TTGIR, with changes.

    irscope replay BUNDLE KERNEL --from ttir|ttgir [--set KEY=VALUE ...] [--target T]
                   [--variant V] [--without-pass NAME ...] [--python PY] [-o OUT] [--json]

The replaying is :mod:`irscope.whatif.replay`'s (imported when the command runs). The
replay is a new capture in OUT, stamped with what changed; the command ends with the
``irscope diff`` line that compares it with the original. Every string from a capture
reaches Rich as :class:`~rich.text.Text`, never as markup.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Callable

from irscope.compiler.stages import TTGIR, TTIR
from irscope.cli.flags import VARIANT_HELP
from irscope.errors import IrscopeError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from irscope.core.capture import Capture
    from irscope.whatif.replay import ReplayOutcome, ReplayRequest

EXIT_COMPILE_FAILED = 4


def add_parser(sub) -> None:
    """Register the ``replay`` subcommand."""
    p = sub.add_parser(
        "replay", help="recompile a captured kernel from its TTIR or TTGIR, with options, target or passes changed",
        description="Recompile KERNEL from the IR of a captured stage, not from Python: --from ttir runs the "
                    "TTGIR pipeline and every later stage again, --from ttgir the LLVM lowering onwards. "
                    "Change compile options (--set num_stages=2), the target (--target, from ttir), or leave "
                    "passes out of the pipeline that runs (--without-pass, Triton 3.6+). The replay is a new "
                    "capture in OUT, stamped with what changed; 'irscope diff' compares it with the original.")
    p.add_argument("bundle", metavar="BUNDLE")
    p.add_argument("kernel", metavar="KERNEL", help="kernel name (or a capture id like #3)")
    p.add_argument("--from", dest="from_stage", choices=(TTIR, TTGIR), default=TTIR,
                   help="the captured stage to compile from (default ttir)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a compile option to change (num_stages=2, num_warps=4, maxnreg=128...); repeatable")
    p.add_argument("--target", metavar="T", help="compile for this target instead of the captured one (sm_80...)")
    p.add_argument("--variant", metavar="V", help="the captured variant to replay: " + VARIANT_HELP)
    p.add_argument("--without-pass", dest="without", action="append", default=[], metavar="NAME",
                   help="leave this pass (every run of it) out of the pipeline that runs: the TTGIR pipeline "
                        "--from ttir, the LLVM lowering --from ttgir; by its MLIR name (tritongpu-pipeline); "
                        "repeatable; an unknown name lists the known ones")
    p.add_argument("--python", metavar="PY", help="compile with this interpreter's Triton (where it can read the IR)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="bundle for the replay (default: BUNDLE's stem + .replay.irscope)")
    p.add_argument("--json", action="store_true", help="a JSON object (fields: docs/cli-json.md)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress")


def default_output(bundle: str) -> str:
    """``runs/a.irscope`` -> ``runs/a.replay.irscope``."""
    stem = bundle[:-len(".irscope")] if bundle.endswith(".irscope") else bundle
    return stem + ".replay.irscope"


def main(args) -> int:
    """Run ``irscope replay``."""
    import irscope
    from irscope.whatif.replay import ReplayRequest, check_request, parse_set, replay_many

    sets = tuple(parse_set(s) for s in args.sets)
    output = args.output or default_output(args.bundle)
    if os.path.abspath(output) == os.path.abspath(args.bundle):
        raise IrscopeError("-o names the input bundle: write the replay to another bundle")
    with irscope.open(args.bundle) as view:
        cap = view.capture(args.kernel, None, args.variant)
        req = ReplayRequest(args.bundle, cap.id, args.from_stage, sets, args.target, tuple(args.without),
                            args.python)
        check_request(req, cap)  # bad input is said before a child starts
        title = f"#{cap.id} {cap.kernel} ({cap.target})"
    outcome = _run(req, output, quiet=args.quiet or args.json, title=title)
    if outcome.capture_id is None:  # nothing compiled (the IR could not be read): the line says all
        raise IrscopeError(outcome.error or "the replay captured nothing")
    if args.json:
        print(json.dumps({**outcome.to_json(), "output": output, "diff": _diff_command(args.bundle, cap.id, output,
                                                                                     outcome)}, indent=2))
    else:
        _print(outcome, output, args.bundle)
    if not outcome.ok:
        where = f" in pass {outcome.failed_pass}" if outcome.failed_pass else (
            f" in {outcome.failed_stage}" if outcome.failed_stage else "")
        print(f"irscope: error: the replay of {title} failed to compile{where}: {outcome.error}; "
              f"the stages that compiled are kept in {output} (#{outcome.capture_id})", file=sys.stderr)
        return EXIT_COMPILE_FAILED
    return 0


def _run(req: "ReplayRequest", output: str, quiet: bool, title: str) -> "ReplayOutcome":
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from irscope.whatif.replay import replay_many

    console = Console(stderr=True)
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                        console=console, transient=True, disable=quiet or not console.is_terminal)
    with progress:
        progress.add_task(f"replaying {title}: {req.label()}", total=None)
        return replay_many([req], output)[0]


def _diff_command(bundle: str, cap_id: int, output: str, outcome: "ReplayOutcome") -> str | None:
    if outcome.capture_id is None:
        return None
    return f"irscope diff {_quote(bundle)}:#{cap_id} {_quote(output)}:#{outcome.capture_id}"


def _quote(path: str) -> str:
    import shlex

    return shlex.quote(path)


def _print(outcome: "ReplayOutcome", output: str, bundle: str) -> None:
    import irscope
    from rich.table import Table
    from rich.text import Text

    from irscope.cli.render import human_bytes, stdout_console

    console = stdout_console()
    req = outcome.request
    table = Table(title=Text(f"replay: {req.label()}"), title_justify="left")
    for col in ("", "#", "kernel", "variant", "target", "regs", "spills", "shared", "status"):
        table.add_column(col, justify="right" if col in ("#", "regs", "spills", "shared") else "left")
    with irscope.open(bundle) as orig_view:
        orig = orig_view.capture(f"#{req.capture_id}")
        _add_row(table, "original", orig, human_bytes)
    if outcome.capture_id is not None:
        with irscope.open(output) as view:
            _add_row(table, "replay", view.capture(f"#{outcome.capture_id}"), human_bytes)
    console.print(table)
    err = _stderr()
    if outcome.dropped:
        err.print(Text(f"left out: {', '.join(outcome.dropped)}"), highlight=False)
    missing = [p for p in req.without if p not in outcome.dropped]
    if missing:
        err.print(Text.assemble(("note: ", "yellow"), f"not in this replay's pipeline, so not left out: "
                                                       f"{', '.join(missing)}"), highlight=False)
    versions = outcome.version_note()
    if versions:
        err.print(Text.assemble(("note: ", "yellow"), versions), highlight=False)
    diff = _diff_command(bundle, req.capture_id, output, outcome)
    if diff:
        err.print(Text(f"bundle: {output}; compare: {diff}"), highlight=False)


def _stderr() -> "Console":
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


def _add_row(table: "Table", label: str, cap: "Capture", human_bytes: Callable[[int], str]) -> None:
    from rich.text import Text

    res = cap.resources
    spills = res.spills
    status = "failed" + (f" at {cap.failed_at}" if cap.failed_at else "") if cap.failed else "ok"
    table.add_row(Text(label), Text(str(cap.id)), Text(cap.kernel), Text(cap.variant), Text(cap.target),
                  Text("-" if res.registers is None else str(res.registers)),
                  Text("-" if spills is None else human_bytes(spills)),
                  Text("-" if res.shared is None else human_bytes(res.shared)), Text(status))
