"""``irscope open``: placeholder until its view lands (owned by the open work)."""

from __future__ import annotations

from irscope.errors import IrscopeError


def add_parser(sub) -> None:
    """Register the ``open`` subcommand."""
    p = sub.add_parser("open", help="(in progress)")
    p.add_argument("rest", nargs="*")


def main(args) -> int:
    raise IrscopeError("'irscope open' is not built yet")
