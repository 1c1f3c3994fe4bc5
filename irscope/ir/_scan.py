"""Small bracket-aware scanners over one line of IR text (strings are skipped)."""

from __future__ import annotations

import re

# Tokens that matter for nesting; a string literal is one token so brackets inside
# it do not count, and '->' is one token so its '>' does not close a '<'.
# e.g. tensor<64xf32, #ttg.slice<{dim = 1, parent = #mma}>> : "a{b" -> f32
_TOK_RE = re.compile(r'"(?:[^"\\]|\\.)*"|->|[<>(){}\[\],]| : ')
_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')

_OPENERS = "<({["


def top_level(s: str) -> tuple[int, int, int]:
    """Scan ``s`` once: (start, end) of its first top-level ``{...}``/``<{...}>`` group
    (-1, -1 when none) and the index of its last top-level `` : `` (-1 when none)."""
    depth = 0
    a_start = a_end = colon = -1
    for m in _TOK_RE.finditer(s):
        tok = m.group()
        c = tok[0]
        if c == '"' or c == "," or tok == "->":
            continue
        if tok == " : ":
            if depth == 0:
                colon = m.start()
            continue
        if c in _OPENERS:
            if depth == 0 and a_end < 0 and a_start < 0:
                pos = m.start()
                if c == "{" or (c == "<" and s.startswith("{", pos + 1)):
                    a_start = pos
            depth += 1
        else:
            depth -= 1
            if depth == 0 and a_start >= 0 and a_end < 0:
                a_end = m.end()
            if depth < 0:
                depth = 0
    return a_start, a_end, colon


def split_top(s: str) -> list[str]:
    """Split ``s`` at top-level commas; pieces are stripped, empty ones dropped."""
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
