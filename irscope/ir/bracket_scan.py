"""Small bracket-aware scanners over one line of IR text (strings are skipped)."""

from __future__ import annotations

import re

# A label line, shared by the PTX and SASS parsers:
# $L__BB0_1:   /   .text.helper_kernel:   /   .L_x_0:
LABEL_RE = re.compile(r"([\w$.]+):\s*(?://.*)?$")

# Tokens that matter for nesting; a string literal is one token so brackets inside
# it do not count, and '->' is one token so its '>' does not close a '<'.
# e.g. tensor<64xf32, #ttg.slice<{dim = 1, parent = #mma}>> : "a{b" -> f32
_TOK_RE = re.compile(r'"(?:[^"\\]|\\.)*"|->|[<>(){}\[\],]| : ')
_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')

_OPENERS = "<({["


_BRACKET_RE = re.compile(r"[<({\[]")
_NESTING_RE = re.compile(r"[<({]")
# A comma or another '[' while a '[' is open: then commas may not all be top level.
_COMMA_IN_SQUARE_RE = re.compile(r"\[[^\]]*[,\[]")


def _open_count(s: str) -> int:
    """Brackets opened and not closed in ``s`` (strings already removed)."""
    if _BRACKET_RE.search(s) is None:
        return 0
    return (s.count("(") - s.count(")") + s.count("[") - s.count("]") + s.count("{")
            - s.count("}") + s.count("<") - s.count(">") + s.count("->"))


def top_level(s: str) -> tuple[int, int, int]:
    """Find, in one line, (start, end) of its first top-level ``{...}``/``<{...}>``
    group (-1, -1 when none) and the index of its last top-level `` : `` (-1 when none).

    Bracket counts over a prefix (C-speed ``str.count``) tell whether a position is at
    top level; strings are blanked first so their brackets do not count.
    """
    flat = _STRING_RE.sub(_blank, s) if '"' in s else s
    colon = flat.rfind(" : ")
    while colon >= 0 and _open_count(flat[:colon]):
        colon = flat.rfind(" : ", 0, colon)
    a_start = a_end = -1
    # attributes precede the types in custom syntax; '{' inside types is not one
    limit = colon if colon >= 0 else len(flat)
    i = flat.find("{", 0, limit)
    while i >= 0:
        start = i - 1 if i and flat[i - 1] == "<" else i
        if not _open_count(flat[:start]):
            a_start = start
            a_end = matching(flat, start)
            break
        i = flat.find("{", i + 1, limit)
    return a_start, a_end, colon


def _blank(m: re.Match) -> str:
    """A string literal replaced by as many neutral characters (keeps offsets)."""
    return '"' + "_" * (len(m.group()) - 2) + '"'


def split_top(s: str) -> list[str]:
    """Split ``s`` at top-level commas; pieces are stripped, empty ones dropped."""
    # Common cases at C speed: no brackets at all, or only [...] groups without commas
    # inside (PTX addresses such as [%rd1+4]): then every comma is at top level.
    if '"' not in s and _NESTING_RE.search(s) is None and ("[" not in s or _COMMA_IN_SQUARE_RE.search(s) is None):
        out = [q.strip() for q in s.split(",")]
        return [q for q in out if q] if "" in out else out
    if '"' not in s and "->" not in s:
        # Types (tensor<4xf32, #ttg.slice<{dim = 1, parent = #mma}>>, ...): take out the
        # innermost bracket groups until none is left (a few C-speed passes). When the
        # brackets were all well nested, the bracket count before a comma is its depth.
        flat, n = _GROUP_RE.subn("", s)
        while n:
            flat, n = _GROUP_RE.subn("", flat)
        if _ANY_BRACKET_RE.search(flat) is None:
            pieces = []
            last = 0
            i = s.find(",")
            while i >= 0:
                if not _open_count(s[:i]):
                    pieces.append(s[last:i].strip())
                    last = i + 1
                i = s.find(",", i + 1)
            pieces.append(s[last:].strip())
            return [q for q in pieces if q]
    return split_top_scan(s)


# A bracket group with no bracket inside, and any bracket (for split_top).
_GROUP_RE = re.compile(r"<[^<>(){}\[\]]*>|\([^<>(){}\[\]]*\)|\{[^<>(){}\[\]]*\}|\[[^<>(){}\[\]]*\]")
_ANY_BRACKET_RE = re.compile(r"[<>(){}\[\]]")


def split_top_scan(s: str) -> list[str]:
    """:func:`split_top` token by token, for any text (its reference implementation)."""
    depth = 0
    pieces = []
    last = 0
    for m in _TOK_RE.finditer(s):
        tok = m.group()
        c = tok[0]
        if c == '"' or tok == "->" or tok == " : ":
            continue
        if c == ",":
            if depth == 0:
                pieces.append(s[last:m.start()].strip())
                last = m.end()
        elif c in _OPENERS:
            depth += 1
        elif depth:
            depth -= 1
    pieces.append(s[last:].strip())
    return [p for p in pieces if p]


def matching(s: str, i: int) -> int:
    """Index just after the bracket that closes the one at ``s[i]``; ``len(s)`` when
    it never closes."""
    depth = 0
    for m in _TOK_RE.finditer(s, i):
        tok = m.group()
        c = tok[0]
        if c == '"' or c == "," or tok == "->" or tok == " : ":
            continue
        if c in _OPENERS:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.end()
    return len(s)


def balanced(s: str) -> bool:
    """True when the parentheses of ``s`` (outside strings) balance."""
    if '"' in s:
        s = _STRING_RE.sub("", s)
    return s.count("(") == s.count(")")


def split_loc(s: str) -> tuple[str, str]:
    """Split a trailing `` loc(...)`` off ``s``: (rest, text inside loc(...)); the
    second is '' when there is none."""
    if not s.endswith(")"):
        return s, ""
    i = s.rfind(" loc(")
    if i < 0:
        return s, ""
    inner = s[i + 5:-1]
    if not balanced(inner):
        return s, ""
    return s[:i], inner


def odd_quotes(s: str) -> bool:
    """True when ``s`` leaves a string literal open (an odd number of unescaped quotes)."""
    n = s.count('"')
    if n and "\\" in s:
        n -= s.count('\\"') - s.count('\\\\"')
    return n % 2 == 1


# MLIR string escapes: \22 (a hex byte), \\, \", \n, \t.
_ESCAPE_RE = re.compile(r"\\([0-9a-fA-F]{2}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def unescape(body: str) -> str:
    """An MLIR string body with its escapes decoded. MLIR escapes each byte of a
    non-ASCII character (é is \\C3\\A9): the bytes are rebuilt, then read as UTF-8."""
    if "\\" not in body:
        return body
    out = bytearray()
    last = 0
    for m in _ESCAPE_RE.finditer(body):
        out += body[last:m.start()].encode()
        e = m.group(1)
        out += bytes([int(e, 16)]) if len(e) == 2 else _ESCAPES.get(e, e).encode()
        last = m.end()
    out += body[last:].encode()
    return out.decode("utf-8", errors="replace")
