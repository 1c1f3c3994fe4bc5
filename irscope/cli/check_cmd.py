"""``irscope check``: expectations about compiled kernels, for CI.

    irscope check BUNDLE RULES.toml [--json]

Exit status: 0 when every expectation holds, 1 when any is violated (each listed with
its evidence), 2 for input that cannot be checked (a rules file with an unknown key or
a bad value, a kernel, line or loop the bundle does not have, a bundle that does not
open): one line on stderr. The rules and their evaluation are
:mod:`irscope.core.checks`; docs/checks.md describes the format.
"""

from __future__ import annotations

import json
import sys

from irscope.errors import IrscopeError

EXIT_OK, EXIT_VIOLATED, EXIT_BAD_INPUT = 0, 1, 2


def add_parser(sub) -> None:
    """Register the ``check`` subcommand."""
    p = sub.add_parser(
        "check", help="check expectations (no spills, 128-bit loads, wgmma, pipelined loops...) for CI",
        description="Check the expectations of RULES.toml (docs/checks.md) against the captures of BUNDLE: "
                    "spills, instructions at a line, global access widths, loop pipelining, occupancy, "
                    "layout conversions through shared memory. Exit 0 when every one holds, 1 when any is "
                    "violated (each listed with its evidence), 2 for a bad rules file or bundle.")
    p.add_argument("bundle", metavar="BUNDLE")
    p.add_argument("rules", metavar="RULES.toml")
    p.add_argument("--json", action="store_true", help="a JSON object: ok, checked, violations (docs/cli-json.md)")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def main(args) -> int:
    """Run ``irscope check``."""
    import irscope
    from irscope.core.checks import load_rules, run_checks
    from irscope.core.selection import default_pick_note

    try:
        rules = load_rules(args.rules)
        with irscope.open(args.bundle) as bundle:
            report = run_checks(bundle, rules)
            for rule in rules.kernels:  # a left-out target or variant never picks silently
                cap = bundle.capture(rule.name, rule.target, rule.variant)
                note = default_pick_note(cap, rule.name, rule.target, rule.variant)
                if note and not args.json:  # the rules file's keys, not the command's flags
                    note = note.replace("showing", "checking").replace("--target", "target =")
                    print(f"{args.rules}: {note.replace('--variant', 'variant =')}", file=sys.stderr)
    except IrscopeError as exc:  # bad rules or bundle: exit 2, not the violations' 1
        print(f"irscope: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        _render(report)
    return EXIT_OK if report.ok else EXIT_VIOLATED


def _render(report) -> None:
    """Each capture's expectations, ok or FAIL, the failures' evidence, a total."""
    from rich.console import Console
    from rich.text import Text

    console = Console(soft_wrap=True, highlight=False)
    current: tuple | None = None
    for o in report.outcomes:
        key = (o.kernel, o.target, o.capture)
        if key != current:
            current = key
            console.print(Text(f"{o.kernel}@{o.target} (#{o.capture})", style="bold"))
        where = {"line": f"line {o.line}, ", "loop": f"loop at line {o.line}, "}.get(o.scope, "")
        line = Text("  ")
        line.append("ok  " if o.ok else "FAIL", style="green" if o.ok else "bold red")
        line.append(f"  {where}{o.expectation}: {o.message}")
        console.print(line)
        if not o.ok:
            for e in o.evidence:
                console.print(Text(f"        {e}", style="dim"))
    n = len(report.violations)
    total = Text(f"{report.checked} expectation(s) checked: ")
    total.append("all hold" if n == 0 else f"{n} violated", style="green" if n == 0 else "bold red")
    console.print(total)
