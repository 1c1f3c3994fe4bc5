"""Flags several commands share, defined once so their help and meaning never drift."""

from __future__ import annotations


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
