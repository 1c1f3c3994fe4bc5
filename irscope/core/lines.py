"""The ops of a Python line: the one answer ``show``, the app, the report, the
lineage and the capture diff all read.

Two rules make it: an op belongs to the line of its innermost user frame
(:mod:`irscope.ir.python_lines`), and a line stands for its whole statement
(:mod:`irscope.ir.statements`): ``x = tl.load(\\n    ptr, mask=m)`` owns the ops
Triton put on either line, and views show them on the statement's first line.
"""

from __future__ import annotations

from typing import Iterable

from irscope.ir import Op
from irscope.ir.python_lines import line_match, python_line
from irscope.ir.statements import Statement, StatementMap


class LineOps(dict[str, list[Op]]):
    """Stage -> the ops of one Python statement, with the statement's line span.

    A dict (``ops["ttgir"]``) so that code reading stages by name keeps working; the
    span says which lines were asked for: ``first_line`` is where views show them."""

    def __init__(self, line: int, statement: Statement, ops: dict[str, list[Op]] | None = None):
        super().__init__(ops or {})
        self.line = line
        """The line asked for."""
        self.statement = statement
        """The statement that owns it (the line alone when the source has no statement there)."""

    @property
    def first_line(self) -> int:
        return self.statement.first

    @property
    def last_line(self) -> int:
        return self.statement.last

    @property
    def lines(self) -> tuple[int, ...]:
        return self.statement.lines


def line_of(op: Op, file: str | None, statements: StatementMap) -> int | None:
    """The line views show ``op`` on: the first line of the statement of its innermost
    user frame; None when it has no user frame in ``file``."""
    n = python_line(op.location, file)
    return None if n is None else statements.head(n)


def statement_ops(ops: Iterable[Op], statement: Statement, file: str | None, call_sites: bool = False) -> list[Op]:
    """The ops (of one stage) that belong to ``statement``; ``call_sites`` adds those
    inlined from a helper called there."""
    lines = frozenset(statement.lines)
    return [op for op in ops if line_match(op.location, lines, file, call_sites)]


def ops_by_line(ops: Iterable[Op], file: str | None, statements: StatementMap) -> dict[int, list[Op]]:
    """Statement first line -> its ops, in one walk (what per-line counts read)."""
    out: dict[int, list[Op]] = {}
    for op in ops:
        n = line_of(op, file, statements)
        if n is not None:
            out.setdefault(n, []).append(op)
    return out
