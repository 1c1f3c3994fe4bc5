"""MLIR text as logical lines: the kinds of a classified line, and the reader that
joins the lines of one statement (a string literal, brackets left open, a line that
goes on below) so that the parser and the op-form summary see statements.

The classifier itself lives in :mod:`.mlir`; this reader gets it as arguments.
"""

from __future__ import annotations

from typing import Callable, Iterator

from .bracket_scan import BROKEN, goes_on, odd_quotes, without_comment
from .forms import normalise_op_text

# Line kinds (first element of a classified tuple).
K_BLANK, K_COMMENT, K_OP, K_BLOCK, K_FUNC, K_MODULE, K_CLOSE, K_REOPEN = range(8)
K_LOCDEF, K_ALIAS, K_UNKNOWN, K_OPENSTR, K_RESOURCE, K_TAIL, K_OPEN, K_GOES_ON, K_REGION, K_AMEND = range(8, 18)
# (K_OPENSTR and above: lines that the reader of logical lines looks at; K_REGION is
# among them only so that the common kinds need one comparison there.)

# A string literal longer than this is garbled input: give up joining lines.
_MAX_STRING_LINES = 1000
# A statement split over more lines than this (a signature of a few hundred
# arguments, one a line) is taken for garbled input too.
_MAX_JOINED_LINES = 512


def logical_lines(text: str, memo: dict, classify_new: Callable[[str], tuple], counts: list,
                  read_whole: Callable[[str], tuple]) -> Iterator[tuple]:
    """Yield ``(t, first line, text, last line)`` for each logical line of ``text``
    that is not blank, a comment or inside a resource block; ``t`` is its classified
    tuple. A string literal spanning lines arrives joined, as one line; so does a
    statement whose brackets stay open at a line's end, without the comment lines
    between.

    A line that continues the op above it (it starts with ``->``, ``:``, ``{``...)
    arrives as ``((K_AMEND,), first line of that op, ...)``: the op just yielded is
    to be taken back, and the next item is the op read whole.

    ``memo`` maps a raw line to what ``classify_new(raw)`` gives; ``read_whole``
    classifies a statement joined from several lines (the full reader, not a
    template's or the op-form summary's); ``counts`` gets
    ``[lines counted, lines understood, last line]``: the understood count covers the
    lines this consumes itself (continuation lines, resource blocks); the caller
    counts the rest. A string still open at the end arrives as ``(K_TAIL,)``.
    """
    total = understood = 0
    pending: list[str] | None = None  # lines of a string literal or a statement spanning lines
    pending_line = 0
    pending_odd = False
    # Brackets the pending statement leaves open, by kind (None: pending is a string literal).
    depth: tuple[int, int, int, int] | None = None
    lines: list[int] = []  # the pending statement's line numbers
    last: tuple | None = None  # the item yielded last (what a continuation line continues)
    base: tuple | None = None  # the op that the pending lines continue
    in_resource = False
    lineno = 0
    memo_get = memo.get
    t: tuple | None
    for raw in text.split("\n"):
        lineno += 1
        if pending is not None:
            if depth is not None:  # a statement spanning lines
                s = raw.strip()
                if not s or s[:2] == "//":
                    continue
                pending.append(raw)
                lines.append(lineno)
                total += 1
                depth = goes_on(s, depth)
                if depth is not None and depth is not BROKEN and len(pending) < _MAX_JOINED_LINES:
                    continue
                t = _joined(pending, base, read_whole) if depth is None else (K_UNKNOWN, "")
                if t[0] != K_UNKNOWN:
                    joined = "\n".join(pending)
                    if base is not None:
                        yield (K_AMEND,), base[1], base[2], base[3]
                        understood += len(pending)
                        last = (t, base[1], base[2] + "\n" + joined, lineno)
                    else:
                        understood += len(pending) - 1
                        last = (t, pending_line, joined, lineno)
                    yield last
                else:
                    yield from _unjoined(pending, lines, memo, classify_new)
                    last = None
                pending = base = None
                continue
            pending.append(raw)
            total += 1
            if odd_quotes(raw):
                pending_odd = not pending_odd
            if pending_odd and len(pending) < _MAX_STRING_LINES:
                continue
            joined = "\n".join(pending)
            t = read_whole(joined) if not pending_odd else (K_UNKNOWN, "")
            if t[0] == K_OPEN:  # brackets still open after the string: read on
                depth, lines = t[1], list(range(pending_line, lineno + 1))
                continue
            if t[0] == K_UNKNOWN or t[0] >= K_OPENSTR:
                t = (K_UNKNOWN, "")
            else:
                understood += len(pending) - 1
            pending = None
            last = (t, pending_line, joined, lineno)
            yield last
            continue
        t = memo_get(raw)
        if t is None:
            t = classify_new(raw)
            memo[raw] = t
        k = t[0]
        if k == K_BLANK or k == K_COMMENT:
            continue
        total += 1
        if in_resource:
            understood += 1
            in_resource = not raw.rstrip().endswith("#-}")
            continue
        if k >= K_OPENSTR:
            if k == K_GOES_ON:  # '-> tensor<...>' under the op it completes
                if last is not None and _continued(last):
                    base, pending, pending_line, depth, lines = last, [raw], last[1], t[1], [lineno]
                    if depth is not None:
                        continue
                    t = _joined(pending, base, read_whole)
                    if t[0] != K_UNKNOWN:
                        yield (K_AMEND,), base[1], base[2], base[3]
                        understood += 1
                        last = (t, base[1], base[2] + "\n" + raw, lineno)
                        yield last
                        pending = base = None
                        continue
                    pending = base = None
                t = (K_UNKNOWN, "")
            elif k == K_OPENSTR:
                pending, pending_line, pending_odd, depth = [raw], lineno, True, None
                continue
            elif k == K_OPEN:
                pending, pending_line, depth, lines = [raw], lineno, t[1], [lineno]
                continue
            elif k == K_RESOURCE:
                in_resource = not t[1]
        last = (t, lineno, raw, lineno)
        yield last
    if pending is not None:
        if depth is not None:  # text ended inside a statement
            yield from _unjoined(pending, lines, memo, classify_new)
        else:
            yield (K_TAIL,), pending_line, "\n".join(pending), lineno
    counts[0] += total
    counts[1] += understood
    counts[2] = lineno


def _continued(item: tuple) -> bool:
    """Whether a line that starts with '->', ':', '{'... can continue the statement
    ``item`` (as :func:`_logical_lines` yields it): an op without regions, or a
    function's declaration. (Read from the kind and the text alone, so that the
    summary of op forms, whose tuples keep less, decides the same.)"""
    k = item[0][0]
    return (k == K_OP or k == K_FUNC) and not without_comment(item[2].rstrip()).endswith("{")


def _joined(pending: list[str], base: tuple | None, read_whole: Callable[[str], tuple]) -> tuple:
    """The classified tuple of a statement spanning lines, read as one line (after
    the text of ``base``, the op they continue); (K_UNKNOWN, "") when it is not one
    statement."""
    pieces = [without_comment(raw.strip()) for raw in pending]
    if base is not None:
        pieces[:0] = [without_comment(line.strip()) for line in base[2].split("\n")]
    # '%e:' at a line's end, the types below: the colon that starts them, as ' : '.
    pieces = [p[:-1] + " :" if p[-1:] == ":" and p[-2:-1] not in (" ", ")") else p for p in pieces]
    flat = " ".join(pieces)
    t = read_whole(flat)
    k = t[0]
    if k == K_OP:  # its form, as a one-line op gets it (a snapshot's) or would get it (op_form)
        return t[:11] + (normalise_op_text(flat),)
    if k == K_UNKNOWN or (k >= K_OPENSTR and k != K_REGION) or (base is not None and k != K_FUNC):
        return (K_UNKNOWN, "")
    return t


def _unjoined(pending: list[str], lines: list[int], memo: dict, classify_new) -> Iterator[tuple]:
    """What :func:`_logical_lines` yields for lines that looked like one statement and
    are not (garbled or truncated text): the first line unknown, the others one by one."""
    if not pending:
        return
    yield (K_UNKNOWN, ""), lines[0], pending[0], lines[0]
    for raw, n in zip(pending[1:], lines[1:]):
        t = memo.get(raw)
        if t is None:
            t = memo[raw] = classify_new(raw)
        if t[0] >= K_OPENSTR and t[0] != K_REGION:
            t = (K_UNKNOWN, "")
        yield t, n, raw, n
