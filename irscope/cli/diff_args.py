"""The ``diff`` subcommand's arguments, apart from :mod:`irscope.cli.diff_cmd`: building
the command line must not import the whole comparison machinery that only ``diff``
itself runs (every other command starts faster for it)."""

from __future__ import annotations


def add_parser(sub) -> None:
    """The ``diff`` subcommand's arguments."""
    d = sub.add_parser("diff", help="what changed between two captures, passes, bundles or IR files",
                       description="Compare A and B op by op, robust to SSA renaming. Each side is "
                                   "BUNDLE[:KERNEL][@TARGET][#VARIANT], a whole BUNDLE, or an IR file "
                                   "(.ttir .ttgir .llir .ptx .amdgcn .sass .mlir, a dump stream, or any name with --format).")
    d.add_argument("sides", nargs="+", metavar="SIDE")
    d.add_argument("--stage", action="append", default=[], metavar="S",
                   help="only these stages (ttir, ttgir, llir, ptx, amdgcn, sass); repeatable")
    d.add_argument("--line", type=int, metavar="N", help="only what Python line N became")
    d.add_argument("--pass", dest="pass_index", type=int, metavar="N",
                   help="compare pass snapshot N of each capture side instead of the final stages")
    d.add_argument("--passes", action="store_true",
                   help="one capture: every pass against the IR after it, as one report")
    d.add_argument("--format", metavar="F", help="the format of file sides (ttgir, llir, ptx, sass, mlir, dump...)")
    d.add_argument("--by", choices=("triton_version", "target"),
                   help="one bundle: a matrix of each kernel across its Triton versions or targets")
    d.add_argument("--all", action="store_true", help="print every change (default: the first 40 per stage)")
    d.add_argument("--json", action="store_true", help="a JSON object (docs/cli-json.md)")
    d.add_argument("--jobs", type=int, metavar="N",
                   help="two whole bundles: compare the pairs in N processes (default: one per CPU, at most 8)")
    d.add_argument("--tui", action="store_true",
                   help="open the comparison in the app's diff screen instead of printing it")
