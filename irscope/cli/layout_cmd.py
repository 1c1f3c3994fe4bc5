"""``irscope layout``: placeholder until its view lands (owned by the layout work)."""

from __future__ import annotations

from irscope.errors import IrscopeError


def add_parser(sub) -> None:
    """Register the ``layout`` subcommand."""
    p = sub.add_parser("layout", help="(in progress)")
    p.add_argument("rest", nargs="*")


def main(args) -> int:
    raise IrscopeError("'irscope layout' is not built yet")
