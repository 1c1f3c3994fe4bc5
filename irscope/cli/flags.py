"""Flags several commands share, defined once so their help and meaning never drift."""

from __future__ import annotations


def add_selection(sp, kernel_optional: bool = False) -> None:
    """BUNDLE [KERNEL] --target --variant: how every reading command picks a capture."""
    sp.add_argument("bundle", metavar="BUNDLE")
    sp.add_argument("kernel", metavar="KERNEL", nargs="?" if kernel_optional else None,
                    help="kernel name (or a capture id like #3)")
    sp.add_argument("--target", metavar="T", help="e.g. sm_90 (default: the kernel's first capture)")
    sp.add_argument("--variant", metavar="V", help="variant label, a unique prefix of one, or its index")
