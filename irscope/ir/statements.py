"""Which Python statement each line of a kernel's source belongs to.

Triton locates an op on the line of the expression that made it: in
``x = tl.load(\\n    ptr, mask=m)`` the load sits on the argument line, while the
user clicks the first line. So "the ops of line N" means the ops of every line of
N's *statement*: the unit is the statement, and its first line is where views show it.

A statement's own lines are its ``lineno..end_lineno`` minus the lines of the
statements nested in it. For a compound statement (``for``, ``if``, ``with``,
``def``) they are its header: the lines before its first nested statement, so a
``for`` header spanning two lines is one unit and its body is not. Lines a compound
statement holds after its body starts (``else:``, ``except ...:``), decorators,
comments and blank lines belong to no statement: each is its own unit. Source that
is missing or does not parse gives the identity map (every line its own unit).
Pure: the standard library's :mod:`ast` and :mod:`tokenize`, no I/O.
"""

from __future__ import annotations

import ast
import io
import threading
import tokenize
from dataclasses import dataclass, field

# Tokens that carry no code: a line holding only these is blank or a comment.
_NO_CODE = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                      tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING})


@dataclass(frozen=True, slots=True)
class Statement:
    """One unit of source lines (file numbering)."""

    first: int
    """The line views show the statement on (its first line)."""
    last: int
    """Its last own line."""
    lines: tuple[int, ...]
    """Every line it owns, ascending (comment and blank lines inside it excluded)."""

    def __contains__(self, line: object) -> bool:
        return line in self.lines

    @property
    def spans(self) -> bool:
        """Whether the statement owns more than one line."""
        return len(self.lines) > 1

    def label(self) -> str:
        """``22`` or ``22-24``."""
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"

    def to_json(self) -> dict:
        return {"first_line": self.first, "last_line": self.last, "lines": list(self.lines)}


def single(line: int) -> Statement:
    """The unit of a line that belongs to no statement: the line alone."""
    return Statement(line, line, (line,))


@dataclass(frozen=True, slots=True)
class StatementMap:
    """Line -> its statement, for one kernel's source."""

    of_line: dict[int, Statement] = field(default_factory=dict)
    """Every line owned by a statement (file numbering) -> that statement."""
    parsed: bool = False
    """False when the source was missing or did not parse (the identity map)."""

    def statement(self, line: int) -> Statement:
        """The statement that owns ``line``, or the line alone."""
        got = self.of_line.get(line)
        return got if got is not None else single(line)

    def head(self, line: int) -> int:
        """The first line of ``line``'s statement: where views show its ops."""
        got = self.of_line.get(line)
        return got.first if got is not None else line

    def statements(self) -> list[Statement]:
        """Every statement, in line order."""
        return sorted({s.first: s for s in self.of_line.values()}.values(), key=lambda s: s.first)

    def spanning(self) -> dict[int, int]:
        """Line -> its statement's first line, for every line not first in its statement
        (what a page needs to send a click on a continuation line to its statement)."""
        return {n: s.first for n, s in self.of_line.items() if n != s.first}


_AST_LOCK = threading.Lock()
# CPython 3.11's ast.parse keeps its recursion depth in shared state: two threads (the
# app's workers) parsing at once can fail with "AST constructor recursion depth
# mismatch". Every parse of Python source in the views goes through this lock.


def parse_python(text: str) -> ast.Module:
    """``ast.parse(text)``, one thread at a time (raises what it raises)."""
    with _AST_LOCK:
        return ast.parse(text)


def _parse(text: str) -> tuple[ast.Module, str, int] | None:
    """The tree, the text parsed and its line shift; an indented function (a method,
    a def inside a block) is parsed under ``if 1:`` and shifted back."""
    for prefix, shift in (("", 0), ("if 1:\n", 1)):
        try:
            return parse_python(prefix + text), prefix + text, shift
        except (SyntaxError, ValueError):  # ValueError: a NUL byte in the source
            continue
    return None


def _code_lines(text: str) -> set[int]:
    """Lines (of ``text``) holding at least one code token; a multi-line string
    counts on every line it covers."""
    out: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type not in _NO_CODE:
                out.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):  # cannot happen on text ast parsed; kept total
        return {i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() and not ln.lstrip().startswith("#")}
    return out


def _nested(node: ast.AST) -> list[ast.stmt]:
    """The statements directly nested in ``node`` (through non-statement nodes such as
    an ``except`` handler or a ``case``)."""
    out: list[ast.stmt] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            out.append(child)
        else:
            out.extend(_nested(child))
    return out


def statement_map(text: str | None, first_line: int | None = 1) -> StatementMap:
    """The statement of every line of ``text``, a kernel's source whose first line is
    line ``first_line`` of its file. Missing or unparsable source: the identity map."""
    if not text or not first_line:
        return StatementMap()
    got = _parse(text)
    if got is None:
        return StatementMap()
    tree, parsed_text, shift = got
    code = _code_lines(parsed_text)
    owned: dict[int, ast.stmt] = {}

    def visit(node: ast.AST) -> None:
        for st in _nested(node):
            end = st.end_lineno or st.lineno
            inner = _nested(st)
            stop = min((s.lineno for s in inner), default=end + 1)
            for n in range(st.lineno, min(end, stop - 1) + 1):
                owned[n] = st  # nested statements are visited later and take their lines back
            visit(st)

    visit(tree)
    lines: dict[int, list[int]] = {}
    for n, st in owned.items():
        if n in code and n > shift:
            lines.setdefault(id(st), []).append(n)
    of_line: dict[int, Statement] = {}
    offset = first_line - 1 - shift
    for ns in lines.values():
        ns.sort()
        unit = Statement(ns[0] + offset, ns[-1] + offset, tuple(n + offset for n in ns))
        for n in unit.lines:
            of_line[n] = unit
    return StatementMap(of_line, parsed=True)
