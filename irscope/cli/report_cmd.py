"""``irscope report``: placeholder until its view lands (owned by the report work)."""

from __future__ import annotations

from irscope.errors import IrscopeError


def add_parser(sub) -> None:
    """Register the ``report`` subcommand."""
    p = sub.add_parser("report", help="(in progress)")
    p.add_argument("rest", nargs="*")


def main(args) -> int:
    raise IrscopeError("'irscope report' is not built yet")
