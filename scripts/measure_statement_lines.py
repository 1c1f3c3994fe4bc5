"""How many kernel lines that call tl.load / tl.dot / tl.sum show no op, by the line
rule alone (an op belongs to the line of its innermost user frame) and by the
statement rule (:meth:`irscope.core.Capture.ops_at_line`: a statement spanning lines
owns the ops of all of them).

    .venv/bin/python scripts/measure_statement_lines.py BUNDLE [BUNDLE ...] [--json] [--list]

A line counts once per (file, line) over every capture of the bundles: it "shows ops"
when some capture has at least one op of some lowering stage there. Only lines of
the kernels' stored source are looked at (a ``@triton.jit`` helper called by a
kernel is not in it). ``--list`` prints each line that shows nothing before.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field

import irscope
from irscope.compiler.stages import LOWERING
from irscope.ir.python_lines import python_line

CALLS = re.compile(r"\btl\.(load|dot|sum)\s*\(")


@dataclass
class Tally:
    lines: int = 0
    empty_before: int = 0
    empty_after: int = 0
    empty_before_lines: list[str] = field(default_factory=list)
    empty_after_lines: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"lines": self.lines, "empty_before": self.empty_before, "empty_after": self.empty_after,
                "empty_before_lines": self.empty_before_lines, "empty_after_lines": self.empty_after_lines}


def measure(paths: list[str]) -> Tally:
    """Every (file, line) calling tl.load/tl.dot/tl.sum in the bundles' kernels, and
    whether it shows ops by the line rule and by the statement rule."""
    seen: dict[tuple[str, int], list] = {}
    for path in paths:
        with irscope.open(path) as bundle:
            for cap in bundle.captures():
                if cap.failed:
                    continue
                src = cap.source
                if not src.text or not src.first_line:
                    continue
                file = cap.row.file or "?"
                calls = [src.first_line + i for i, text in enumerate(src.text.splitlines())
                         if CALLS.search(text.split("#", 1)[0])]
                if not calls:
                    continue
                before: dict[int, int] = {}  # innermost user line -> ops, every stage
                for stage in cap.modules():
                    if stage not in LOWERING:  # the --exact-links twins would count ops twice
                        continue
                    for op in cap.stage(stage).module.ops():
                        n = python_line(op.location, cap.row.file)
                        if n is not None:
                            before[n] = before.get(n, 0) + 1
                for n in calls:
                    after = any(cap.ops_at_line(n).values())
                    got = seen.setdefault((file, n), [False, False, (src.line(n) or "").strip()])
                    got[0] = got[0] or bool(before.get(n))
                    got[1] = got[1] or after
    t = Tally(lines=len(seen))
    for (file, n), (b, a, text) in sorted(seen.items()):
        if not b:
            t.empty_before += 1
            t.empty_before_lines.append(f"{file}:{n}: {text}")
        if not a:
            t.empty_after += 1
            t.empty_after_lines.append(f"{file}:{n}: {text}")
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundles", nargs="+")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--list", action="store_true", help="print the lines that show nothing")
    args = ap.parse_args(argv)
    t = measure(args.bundles)
    if args.json:
        print(json.dumps(t.to_json(), indent=2))
        return 0
    print(f"{t.lines} lines call tl.load/tl.dot/tl.sum; no op at the line: "
          f"{t.empty_before} by the line rule, {t.empty_after} by the statement rule")
    if args.list:
        for label, lines in (("line rule", t.empty_before_lines), ("statement rule", t.empty_after_lines)):
            print(f"-- empty by the {label}:")
            for ln in lines:
                print("  " + ln)
    return 0


if __name__ == "__main__":
    sys.exit(main())
