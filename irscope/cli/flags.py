"""Flags several commands share, defined once so their help and meaning never drift."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from irscope.core import Bundle, Capture


def add_selection(sp, kernel_optional: bool = False) -> None:
    """BUNDLE [KERNEL] --target --variant: how every reading command picks a capture."""
    sp.add_argument("bundle", metavar="BUNDLE")
    sp.add_argument("kernel", metavar="KERNEL", nargs="?" if kernel_optional else None,
                    help="kernel name (or a capture id like #3)")
    sp.add_argument("--target", metavar="T", help=TARGET_HELP)
    sp.add_argument("--variant", metavar="V", help=VARIANT_HELP)


TARGET_HELP = "sm_90, sm90, 90 or gfx942 (default: the kernel's first capture)"
VARIANT_HELP = ("variant label, a unique prefix of one, fields only it has (BLOCK_SIZE_M=64 num_warps=4), "
                "or its index (the v of 'irscope ls'); one that fits several is an error listing them")


def select(bundle: "Bundle", args) -> "Capture":
    """The capture ``args`` name (``kernel``, ``--target``, ``--variant``), by the core's
    one rule; when a left-out qualifier picked one of several, a one-line note on stderr
    says which, so the pick is never silent (stdout, and so ``--json``, is untouched)."""
    from irscope.core.selection import default_pick_note

    cap = bundle.capture(args.kernel, args.target, args.variant)
    note = default_pick_note(cap, args.kernel, args.target, args.variant)
    if note:
        print(note, file=sys.stderr)
    return cap
