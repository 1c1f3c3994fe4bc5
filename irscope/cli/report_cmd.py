"""``irscope report BUNDLE [BUNDLE2 ...] -o DIR``: a static HTML report that opens
from ``file://`` (docs/report.md)."""

from __future__ import annotations

import shlex
import sys


def add_parser(sub) -> None:
    """Register the ``report`` subcommand."""
    p = sub.add_parser("report", help="a static HTML report of one or more bundles (opens from file://)",
                       description="Write a folder of HTML pages: the kernels with their metadata, per kernel "
                                   "its stages with linked Python lines, the pass timeline with each pass's diff, "
                                   "graphs and layouts; with two or more bundles, the matrix and the diffs.")
    p.add_argument("bundles", nargs="+", metavar="BUNDLE", help="one or more .irscope bundles")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the report folder (replaced if it is an earlier irscope report)")
    p.add_argument("--no-pictures", action="store_true",
                   help="leave out the graphs, lineages and layouts (drawing them is most of the build time)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--kernel", metavar="K", help="report one capture of each bundle: this kernel (or a capture id "
                                                 "like #3), picked as every command picks it")
    p.add_argument("--target", metavar="T", help="e.g. sm_90, sm90 or 90: only this target's captures (with "
                                                 "--kernel: the kernel's capture on it)")
    p.add_argument("--variant", metavar="V", help="with --kernel: variant label, a unique prefix of one, its "
                                                  "fields, or its index")


def main(args) -> int:
    """Build the report; progress on stderr, the folder's path on stdout."""
    from irscope.export.report import build_report
    from irscope.compiler.units import human_bytes

    def progress(msg: str) -> None:
        if not args.quiet:
            print(f"irscope report: {msg}", file=sys.stderr, flush=True)

    result = build_report(list(args.bundles), args.output, command=shlex.join(["irscope", *sys.argv[1:]]),
                          progress=progress, pictures=False if args.no_pictures else None,
                          kernel=args.kernel, target=args.target, variant=args.variant)
    for note in result.notes:
        progress(note)
    print(f"{result.path}/index.html: {result.kernels} kernel page(s), {len(result.pages)} page(s), "
          f"{human_bytes(result.total_bytes)}")
    return 0
