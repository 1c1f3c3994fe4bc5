"""MLIR attribute syntax, just what layouts use: the recursive descent that reads
a layout's text (``#ttg.blocked<{sizePerThread = [1, 8], ...}>``, ``#mma``) into a
tree of :class:`Attr` and :class:`Ref` for :mod:`irscope.ir.layouts.decode` to
build encodings from. Raises :class:`ParseError` on text it cannot read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_DEPTH = 32  # nesting of parents / lists; deeper text is garbage, not a layout
_WS_RE = re.compile(r"[ \t\r\n]*")
_IDENT_RE = re.compile(r"[A-Za-z_][\w$]*")
_STRING_RE = re.compile(r'"((?:[^"\\]|\\.)*)"')
_INT_RE = re.compile(r"[-+]?\d+")
_KEY_RE = re.compile(r"\s*([A-Za-z_][\w$]*)\s*=")
_PAD_RE = re.compile(r"\s*(\d+)\s*:\s*\+\s*(\d+)\s*")  # padded_shared's 'interval:+padding'
_ATTR_NAME_RE = re.compile(r"([A-Za-z_][\w$]*)(?:\.([A-Za-z_][\w$]*))?")
_INT_TYPE_RE = re.compile(r"\s*:\s*[iu]\d+")  # '32 : i32' typed integers in some attributes


class ParseError(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Ref:
    """An alias reference like ``#blocked1``."""

    name: str


@dataclass(frozen=True, slots=True)
class Attr:
    """A dialect attribute: ``#dialect.name<params>``; ``params`` keyed, ``positional`` the rest."""

    dialect: str
    name: str
    params: dict
    positional: tuple
    text: str


# A list of plain integers, the bulk of every layout ([1, 8], [[0, 1], [2, 0]] inside).
_INT_LIST_RE = re.compile(r"\[[ \t\r\n]*([-+]?\d+(?:[ \t\r\n]*,[ \t\r\n]*[-+]?\d+)*)?[ \t\r\n]*\]")


class Parser:
    """Recursive descent over MLIR attribute syntax (just what layouts use). A list
    of plain integers is read at one regex (``tests/test_layouts.py`` compares that
    with the descent on every fixture layout and on garbled ones)."""

    def __init__(self, text: str):
        self.s = text
        self.i = 0

    def error(self, what: str) -> ParseError:
        return ParseError(f"{what} at offset {self.i}")

    def ws(self) -> None:
        self.i = _WS_RE.match(self.s, self.i).end()  # type: ignore[union-attr]  # a * pattern always matches

    def peek(self) -> str:
        self.i = i = _WS_RE.match(self.s, self.i).end()  # type: ignore[union-attr]  # a * pattern always matches
        return self.s[i:i + 1]

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.error(f"expected {ch!r}")
        self.i += 1

    def ident(self) -> str:
        self.ws()
        m = _IDENT_RE.match(self.s, self.i)
        if not m:
            raise self.error("expected a name")
        self.i = m.end()
        return m.group(0)

    def value(self, depth: int):
        if depth > MAX_DEPTH:
            raise self.error("nested too deeply")
        ch = self.peek()
        if ch == "[":
            if depth < MAX_DEPTH:
                m = _INT_LIST_RE.match(self.s, self.i)
                if m is not None:
                    self.i = m.end()
                    body = m.group(1)
                    return tuple(map(int, body.split(","))) if body else ()
            return self.list_(depth + 1)
        if ch == "#":
            return self.attr(depth + 1)
        if ch == '"':
            m = _STRING_RE.match(self.s, self.i)
            if not m:
                raise self.error("unterminated string")
            self.i = m.end()
            return m.group(1)
        m = _INT_RE.match(self.s, self.i)
        if m:
            self.i = m.end()
            number = int(m.group(0))
            # ``32 : i32`` typed integers appear in some attributes.
            save = self.i
            typed = _INT_TYPE_RE.match(self.s, self.i) if self.peek() == ":" else None
            self.i = typed.end() if typed else save
            return number
        name = self.ident()
        if name in ("true", "false"):
            return name == "true"
        return name

    def list_(self, depth: int) -> tuple:
        self.expect("[")
        items: list[object] = []
        if self.peek() == "]":
            self.i += 1
            return tuple(items)
        while True:
            items.append(self.value(depth))
            if not self.another_item():
                return tuple(items)

    def another_item(self) -> bool:
        """After a list item: True at ',' (another follows), False at ']' (the list
        ends); both are consumed. Anything else is an error."""
        ch = self.peek()
        if ch == ",":
            self.i += 1
            return True
        if ch == "]":
            self.i += 1
            return False
        raise self.error("expected ',' or ']'")

    def params(self, close: str, depth: int, into: dict, positional: list) -> None:
        """``key = value, key = value`` (or bare values) up to ``close``."""
        if self.peek() == close:
            self.i += 1
            return
        while True:
            ch = self.peek()
            if ch == "{":
                self.i += 1
                self.params("}", depth + 1, into, positional)
            elif ch == "[":
                # padded_shared: ``[32:+4, 64:+8]``
                positional.append(self.padding_list())
            else:
                start = self.i
                m = _KEY_RE.match(self.s, self.i)
                if m:
                    self.i = m.end()
                    into[m.group(1)] = self.value(depth)
                else:
                    self.i = start
                    v = self.value(depth)
                    if isinstance(v, str) and self.peek() not in (",", close):
                        raise self.error("unexpected text")
                    if isinstance(v, str):
                        into[v] = True  # a unit attribute like ``unpacked``
                    else:
                        positional.append(v)
            ch = self.peek()
            if ch == ",":
                self.i += 1
                continue
            if ch == close:
                self.i += 1
                return
            if ch in ("{", "["):
                continue  # ``[...] {...}`` sit side by side without a comma
            raise self.error(f"expected ',' or {close!r}")

    def padding_list(self) -> tuple:
        self.expect("[")
        pairs = []
        while True:
            m = _PAD_RE.match(self.s, self.i)
            if not m:
                raise self.error("expected interval:+padding")
            self.i = m.end()
            pairs.append((int(m.group(1)), int(m.group(2))))
            if not self.another_item():
                return ("padding", tuple(pairs))

    def attr(self, depth: int):
        start = self.i
        self.expect("#")
        m = _ATTR_NAME_RE.match(self.s, self.i)
        if not m:
            raise self.error("expected an attribute name")
        self.i = m.end()
        if m.group(2) is None:
            return Ref("#" + m.group(1))
        dialect, name = m.group(1), m.group(2)
        params: dict = {}
        positional: list = []
        if self.i < len(self.s) and self.s[self.i] == "<":
            self.i += 1
            self.params(">", depth, params, positional)
        return Attr(dialect, name, params, tuple(positional), self.s[start:self.i])


# The layouts a TTGIR prints are flat: ``#ttg.blocked<{sizePerThread = [1, 8], ...}>``,
# ``#ttg.slice<{dim = 1, parent = #mma}>``, ``#ttg.shared_memory``, ``#mma``: keys
# with an int list, an int (perhaps typed), a bool or an alias each. Those are read at two regexes
# (:func:`flat_attr`); anything else (nesting, unit attributes, odd spacing) by the descent.
_FLAT_VALUE = r"\[(?:-?\d+(?:, -?\d+)*)?\]|-?\d+(?: : [iu]\d+)?|true|false|#[A-Za-z_][\w$]*(?![\w$.<])"
_FLAT_PAIR = rf"[A-Za-z_][\w$]* = (?:{_FLAT_VALUE})"
# (ASCII: a non-ASCII name fails these and goes to the descent, never reads otherwise.)
_FLAT_ATTR_RE = re.compile(
    rf"#([A-Za-z_][\w$]*)(?:\.([A-Za-z_][\w$]*)(?:<\{{((?:{_FLAT_PAIR})(?:, {_FLAT_PAIR})*)?\}}>)?)?", re.ASCII)
_FLAT_PAIR_RE = re.compile(rf"([A-Za-z_][\w$]*) = ({_FLAT_VALUE})", re.ASCII)


def _flat_value(v: str):
    c = v[0]
    if c == "[":
        return tuple(map(int, v[1:-1].split(","))) if len(v) > 2 else ()
    if c == "#":
        return Ref(v)
    if v == "true" or v == "false":
        return v == "true"
    return int(v.partition(" ")[0])


def flat_attr(text: str) -> Attr | Ref | None:
    """The :class:`Attr` (or alias :class:`Ref`) that ``Parser(text).value(0)`` reads
    from a whole flat layout text, or None for any other text (the descent reads it).
    ``tests/test_layouts.py`` holds the two to one answer."""
    m = _FLAT_ATTR_RE.fullmatch(text)
    if m is None:
        return None
    dialect, name, body = m.groups()
    if name is None:
        return Ref(text)
    params = {k: _flat_value(v) for k, v in _FLAT_PAIR_RE.findall(body)} if body else {}
    return Attr(dialect, name, params, (), text)
