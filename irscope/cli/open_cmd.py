"""``irscope open BUNDLE [KERNEL] [--target T] [--variant V]``: the Textual app.

The bundle, the capture and the keymap file are checked before the app starts, so a
bad argument is one ``irscope: error:`` line and exit 1, never a half-drawn screen.
"""

from __future__ import annotations

import os
import sys

from irscope.cli.flags import add_selection
from irscope.errors import IrscopeError


def add_parser(sub) -> None:
    """Register the ``open`` subcommand."""
    p = sub.add_parser(
        "open", help="browse a bundle in the terminal app (kernels, stages, passes, diffs)",
        description="Open BUNDLE in irscope's terminal app: the kernel browser, or with KERNEL "
                    "that capture's kernel view. Keys: ? lists them; ctrl+p the command palette. "
                    "Remap keys in ~/.config/irscope/keymap.toml (or the file IRSCOPE_KEYMAP names).")
    add_selection(p, kernel_optional=True)


def main(args) -> int:
    """Check the arguments, then run the app until the user quits."""
    if not os.path.exists(args.bundle):
        raise IrscopeError(f"{args.bundle}: no such bundle")
    if (args.target or args.variant) and not args.kernel:
        raise IrscopeError("--target and --variant pick a capture of a KERNEL: name the kernel too")
    from irscope.tui.app import make_app

    app = make_app(args.bundle, args.kernel, target=args.target, variant=args.variant)
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        raise IrscopeError("'irscope open' needs a terminal (stdin and stdout); "
                           "for scripts use 'irscope ls', 'cat', 'show' or 'diff'")
    app.run()
    return 0


def open_after_capture(bundle_path: str) -> None:
    """What ``irscope run``/``compile`` call at the end when stdout is a terminal."""
    from irscope.tui.app import make_app

    make_app(bundle_path).run()
