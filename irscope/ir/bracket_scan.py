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


# -- where a statement ends (MLIR statements split over lines) ---------------------

# What a line ends with when the statement goes on in the next line (after its
# brackets are counted): 'tt.func @f(%a: i32,' / '%0 = ttg.local_alloc %x :' / '->'.
_GOES_ON = (",", ":", "->", " =", "attributes", " *")


def _bracket_balance(flat: str) -> tuple[int, int, int, int]:
    """The ``(``, ``[``, ``{`` and ``<`` that ``flat`` opens minus those it closes
    (an arrow's '>' closes nothing; nor do the '<' and '>' of '<=' and '>=')."""
    angle = 0
    if "<" in flat or ">" in flat:
        angle = flat.count("<") - flat.count(">") + flat.count("->") + flat.count(">=") - flat.count("<=")
    return (flat.count("(") - flat.count(")"), flat.count("[") - flat.count("]"),
            flat.count("{") - flat.count("}"), angle)


_CLOSED = (0, 0, 0, 0)
BROKEN = (-1, -1, -1, -1)
"""What :func:`goes_on` gives for a line that closes a bracket its statement never opened."""


def goes_on(s: str, depth: tuple[int, int, int, int] | None = None) -> tuple[int, int, int, int] | None:
    """Whether a statement goes on past the line ``s`` (stripped): None when it ends
    here (its brackets closed, or a trailing ``{`` that opens a region), else the
    brackets still open, by kind. ``depth``: those the statement's earlier lines left
    open (None: ``s`` is its first line); a line that closes a bracket they did not
    open gives :data:`BROKEN` (the lines are not one statement: garbled or cut text).

    MLIR ends a statement at the end of its line unless a bracket is still open;
    hand-written IR splits long signatures and types over lines that way.
    """
    first = depth is None
    if '"' in s:  # string literals out (their brackets count for nothing); split is the fast way
        flat = '""'.join(s.split('"')[::2]) if "\\" not in s else _STRING_RE.sub('""', s)
    else:
        flat = s
    if first and flat[-1:] == ")" and " loc(" in flat:
        return None  # a statement's location ends it (what the reader of plain op lines takes too)
    if "//" in flat:  # a trailing comment: '^bb1(%1: index):  // 2 preds: ^bb0, ^bb2'
        flat = flat[:flat.index("//")].rstrip()
        if first and flat[-1:] == ")" and " loc(" in flat:
            return None
    if first and flat[:1] == "}":  # a region's end: '}) {axis = 0 : i32} : (...', '}, {'
        flat = (flat[2:] if flat[1:2] == ")" else flat[1:]).lstrip(", ")
    d = depth or _CLOSED
    if flat[-1:] == "{":  # a region opens ('scf.for ... {', '<{...}>({'), unless an attribute group does
        head = flat[:-1].rstrip()
        paren = head[-1:] == "("
        if paren:
            head = head[:-1]
        b = _bracket_balance(head)
        n = (d[0] + b[0], d[1] + b[1], d[2] + b[2], d[3] + b[3])
        if max(n) <= 0 and not head.endswith(_GOES_ON):
            return None if first or min(n) == 0 else BROKEN
        n = (n[0] + paren, n[1], n[2] + 1, n[3])
    elif first and _BRACKET_RE.search(flat) is None:
        n = _CLOSED
    else:
        b = _bracket_balance(flat)
        n = (d[0] + b[0], d[1] + b[1], d[2] + b[2], d[3] + b[3])
    if min(n) < 0:
        return None if first else BROKEN
    # (a trailing ':' continues a statement, but not a block label's: '^bb1:', '^bb0(%a: i32):')
    if max(n) > 0 or (flat.endswith(_GOES_ON) and flat[-2:] != "):" and (not first or flat[:1] != "^")):
        return n
    return None


def without_comment(s: str) -> str:
    """``s`` without a trailing ``// comment`` (outside string literals)."""
    if "//" not in s:
        return s
    flat = _STRING_RE.sub(_blank, s) if '"' in s else s
    i = flat.find("//")
    return s[:i].rstrip() if i >= 0 else s
