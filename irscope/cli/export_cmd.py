"""``irscope export``: placeholder until its view lands (owned by the export work)."""

from __future__ import annotations

from irscope.errors import IrscopeError


def add_parser(sub) -> None:
    """Register the ``export`` subcommand."""
    p = sub.add_parser("export", help="(in progress)")
    p.add_argument("rest", nargs="*")


def main(args) -> int:
    raise IrscopeError("'irscope export' is not built yet")
