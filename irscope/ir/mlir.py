"""Parser for MLIR text as Triton prints it: ttir, ttgir and per-pass snapshots
(including the LLVM-dialect MLIR of the late passes).

Line-oriented: each distinct line is classified once into a tuple (kept in a memo
shared across snapshots), then a cheap loop builds the op tree from those tuples.
Locations are resolved at the end, once the ``#loc`` aliases (printed after the
module) are known.
"""

from __future__ import annotations

import functools
import re
from typing import Iterator

from irscope.text_guard import never_raise

from .parse_guard import parser
from .bracket_scan import _BRACKET_RE, odd_quotes, split_loc, split_top, top_level, matching
from .line_shapes import Templater
from .forms import normalise_op_text
from .mlir_loc import LocResolver
from irscope.compiler.stages import MLIR

from .model import (new_lazy_op, unknown_op, UNKNOWN_LOCATION, Block, Function, LazyOp, Module, Op, ParseCache,
                    Region, Value)
__all__ = ["parse_mlir"]

# Line kinds (first element of a classified tuple).
K_BLANK, K_COMMENT, K_OP, K_BLOCK, K_FUNC, K_MODULE, K_CLOSE, K_REOPEN = range(8)
K_LOCDEF, K_ALIAS, K_UNKNOWN, K_OPENSTR, K_RESOURCE, K_TAIL, K_OPEN, K_GOES_ON, K_REGION, K_AMEND = range(8, 18)
# (K_OPENSTR and above: lines that the reader of logical lines looks at; K_REGION is
# among them only so that the common kinds need one comparison there.)

# #blocked = #ttg.blocked<{sizePerThread = [1], ...}>   /   #loc2 = loc("/k.py":6:24)
_ALIAS_RE = re.compile(r"([#!][\w$.-]+) *=\s*(.*)$", re.S)
# %pid = tt.get_program_id x : i32 loc(#loc2)   /   "tt.reduce"(%1) <{axis = 0 : i32}> ({
# (DOTALL: an op whose string literal spans lines arrives here joined)
_OP_RE = re.compile(r'(?:(%[^=]*?) =\s+)?("[\w$.]+"|[A-Za-z_][\w$.]*)(.*)$', re.S)
# A name's characters; a '-' just before '>' is the arrow of a function type (->),
# not part of a name (the same rule as the line templates' tokens).
# (Unrolled: as fast as [\w$.-]+, where (?:[\w$.]|-(?!>))+ is 1.6x slower.)
_NAME = r"(?=[\w$.]|-(?!>))[\w$.]*(?:-(?!>)[\w$.]*)*"
# %12:2  /  %pid
_RESULT_RE = re.compile(rf"(%{_NAME})(?::(\d+))?")
# %acc#1  /  %arg0
_VALUE_RE = re.compile(rf"%{_NAME}(?:#\d+)?")
_PLAIN_VALUE_RE = re.compile(r"%[\w$.]+(?:#\d+)?", re.ASCII)  # the same, for ASCII text without a '-
# iter_args(%m_i = %cst, ...)  ->  %m_i is defined by the op's region
_DEF_RE = re.compile(rf"(%{_NAME}) = ")
# ^bb0(%a: f32 loc(#loc3), %b: f32 loc(#loc3)):  // 2 preds: ^bb1, ^bb2
_BLOCK_RE = re.compile(rf"(\^{_NAME})(\(.*\))?:\s*(?://.*)?$")
# tt.func public @add_kernel(%x_ptr: !tt.ptr<f32> loc(...), ...) attributes {...} {
_FUNC_RE = re.compile(r'((?:\w+\.)?func)\s+((?:[a-z_]+\s+)*)@("(?:[^"\\]|\\.)*"|[\w$.-]+)(.*)$',
                      re.S)
# module attributes {"ttg.num-warps" = 4 : i32} {
_MODULE_RE = re.compile(r'(?:module|"builtin\.module"\(\))(?:\s+@[\w$.-]+)?(.*)$')

# The usual op line, for a lazy read (what _op gives it, at one regex):
#     %12 = arith.addi %10, %11 : i32 loc(#loc3)
_PLAIN_OP_RE = re.compile(r'\s*(%[-\w$.]+) = ([A-Za-z_][\w$.]*)( [^"\n]*)? loc\((#[\w$.-]+)\)$')
# The same line's details, for its first read (what _op gives, at one regex): a head
# of plain words and values (no bracket, colon or '=') ending in at most one flat <...>
# (dense<0.0>) or [...] (ttg.memdesc_index %k[%c0_i32]), an attribute group without
# nesting, then ' : ' and the types (if any).
#     %12 = arith.addi %10, %11 : i32 loc(#loc3)   ->   ' %10, %11', None, 'i32'
#     %4 = tt.expand_dims %3 {axis = 1 : i32} : tensor<..> -> tensor<..> loc(#loc9)
_PLAIN_DETAILS_RE = re.compile(r'\s*(?:%[-\w$.]+(?::\d+)? = )?[A-Za-z_][\w$]*\.[\w$.]*'
                               r'(?: (%[\w$.]+(?:#\d+)?(?:, %[\w$.]+(?:#\d+)?)*)|'
                               r'((?: [^"<>(){}\[\]:=\n]*(?:<[^<>"(){}\[\]:=\n]*>|\[[^<>"(){}\[\]:=\n]*\])?)?))'
                               r'( \{[^{}"<>()\[\]%\n]*\})?(?: : (.*))? loc\(#[\w$.-]+\)$',
                               re.ASCII)  # (a name with a non-ASCII letter fails here: the general reader reads it)

# A location alias as Triton prints it (at most one string, no escapes):
#     #loc2 = loc("/abs/k.py":6:24)   /   #loc19 = loc("pid"(#loc2))
_PLAIN_LOCDEF_RE = re.compile(r'(#loc[\w$.-]*) = loc\(([^"\\\n]*(?:"[^"\\\n]*"[^"\\\n]*)?)\)')

# A string literal longer than this is garbled input: give up joining lines.
_MAX_STRING_LINES = 1000
# A statement split over more lines than this (a signature of a few hundred
# arguments, one a line) is taken for garbled input too.
_MAX_JOINED_LINES = 512

# A named region of ttg.warp_specialize: 'default {', 'partition0(%a: i32) num_warps(4) {'
# (the name; then the arguments, if any, and the tail).
_REGION_RE = re.compile(r"([A-Za-z_]\w*)\s*")
_REGION_TAIL_RE = re.compile(r"(?:\s*[A-Za-z_]\w*\([^()]*\))*\s*\{")
# A function in generic form: "tt.func"() <{function_type = ..., sym_name = "f"}> ({
_GENERIC_FUNCS = frozenset({"tt.func", "func.func", "llvm.func"})
_SYM_NAME_RE = re.compile(r'\bsym_name = "((?:[^"\\]|\\.)*)"')
_SYM_VISIBILITY_RE = re.compile(r'\bsym_visibility = "(\w+)"')

# Ops printed without a dialect prefix that still are ops.
_BARE_OPS = frozenset({"module", "return", "func", "unrealized_conversion_cast"})


_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')
# What a line ends with when the statement goes on in the next line (after its
# brackets are counted): 'tt.func @f(%a: i32,' / '%0 = ttg.local_alloc %x :' / '->'.
_GOES_ON = (",", ":", "->", " =", "attributes", " *")
# What a line starts with when it continues the statement of the line above:
# '-> tensor<...> {', ': !ttg.memdesc<...> * !ttg.memdesc<...>', '{maxNumImpreciseAcc = 32 : i32} :'.
_GOES_ON_STARTS = ("->", ": ", "* ", "{")
_GOES_ON_FIRST = frozenset("-:*{")


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
    flat = _STRING_RE.sub(_same_length_blank, s) if '"' in s else s
    i = flat.find("//")
    return s[:i].rstrip() if i >= 0 else s


def _same_length_blank(m: re.Match) -> str:
    return '"' + "_" * (len(m.group()) - 2) + '"'


def _args(inner: str) -> tuple:
    """(name, type, loc) for each argument of ``(%a: f32 loc(...), ...)``."""
    out = []
    for piece in split_top(inner):
        body, loc = split_loc(piece)
        if body.startswith("%"):
            name, _, typ = body.partition(":")
            typ = typ.strip()
        else:
            name, typ = "", body
        if " {" in typ:  # argument attributes: {tt.divisibility = 16 : i32}
            typ = typ[:typ.index(" {")]
        out.append((name.strip(), typ, loc))
    return tuple(out)


def _dialect(name: str) -> str:
    return name.split(".", 1)[0] if "." in name else "builtin"


def _unread_op(name: str, results: tuple, loc: str, generic: bool) -> tuple:
    """The classified tuple of an op without regions read lazily: its operands, types,
    attributes (and defs, which only ops with regions have) left None."""
    return (K_OP, name, _dialect(name), results, None, None, None, loc, False, None, generic, "")


def _op(s: str, lazy: bool = False) -> tuple:
    m = _OP_RE.match(s)
    if m is None:
        return (K_UNKNOWN, split_loc(s)[1])
    res_text, name, rest = m.groups()
    generic = name[0] == '"'
    if generic:
        name = name[1:-1]
    if not res_text and not generic and "." not in name and name not in _BARE_OPS:
        return _region_header(s)
    results: tuple = ()
    if res_text and ":" not in res_text and "," not in res_text:
        results = (res_text.strip(),)
    elif res_text:
        rs: list[str] = []
        for r, n in _RESULT_RE.findall(res_text):
            if n:
                rs.extend(f"{r}#{k}" for k in range(int(n)))
            else:
                rs.append(r)
        results = tuple(rs)
    body, loc = split_loc(rest)
    opens = False
    if body.endswith("({"):  # ' ({', or '<{axis = 0 : i32}>({' as hand-written IR has it
        body, opens = body[:-2].rstrip(), True
    elif body.endswith("{"):  # (a line that ends in '{' and closes its brackets opens a region)
        body, opens = body[:-1].rstrip(), True
    elif lazy:
        return _unread_op(name, results, loc, generic)
    colon = body.find(" : ")
    if colon >= 0 and '"' not in body and _BRACKET_RE.search(body, 0, colon) is None \
            and body.find(" : ", colon + 3) < 0:
        # The common op (`%a, %b : tensor<...>`): one colon, nothing nested before it,
        # so it is the top-level one and there is no attribute group.
        head, types, attrs = body[:colon], body[colon + 3:].strip(), ""
    else:
        a_start, a_end, colon = top_level(body)
        types = body[colon + 3:].strip() if colon >= 0 else ""
        head = body[:colon] if colon >= 0 else body
        attrs = body[a_start:a_end] if a_start >= 0 and (colon < 0 or a_start < colon) else ""
    operands = _VALUE_RE.findall(head)
    defs: tuple = ()
    if " = " in head:
        defs = tuple(_DEF_RE.findall(head))
        operands = [o for o in operands if o not in defs]
    if generic and opens and name in _GENERIC_FUNCS:
        return _generic_func(name, attrs, loc)
    dialect = _dialect(name)
    # The form (last) is left empty here: it costs as much as the rest of the line,
    # and is filled once per template for snapshots, on demand for a stage's text.
    return (K_OP, name, dialect, results, tuple(operands), types, attrs, loc, opens,
            tuple((d, "", "") for d in defs), generic, "")


def _region_header(s: str) -> tuple:
    """A named region's header, as ``ttg.warp_specialize`` prints its regions:
    ``default {``, ``partition0(%arg2: !tt.ptr<f16>, %arg3: i32) num_warps(4) {``
    -> ``(K_REGION, name, block arguments)``; anything else is unknown."""
    m = _REGION_RE.match(s)
    if m is None:
        return (K_UNKNOWN, split_loc(s)[1])
    rest = s[m.end():]
    args: tuple = ()
    if rest.startswith("("):
        end = matching(rest, 0)
        args = _args(rest[1:end - 1])
        rest = rest[end:]
    if _REGION_TAIL_RE.fullmatch(rest) is None:
        return (K_UNKNOWN, "")
    return (K_REGION, m.group(1), args)


def _generic_func(kind: str, attrs: str, loc: str) -> tuple:
    """The K_FUNC tuple of a function in generic form, ``"tt.func"() <{sym_name = "f",
    ...}> ({``: its arguments are the entry block's, on the ``^bb0(...)`` line below."""
    m = _SYM_NAME_RE.search(attrs)
    vis = _SYM_VISIBILITY_RE.search(attrs)
    return (K_FUNC, kind, m.group(1) if m else "", vis.group(1) if vis else "", (), attrs, loc, True)


def _close(s: str) -> tuple:
    tail = s[2:] if s.startswith("})") else s[1:]
    if tail.rstrip().endswith("{"):
        return (K_REOPEN,)
    body, loc = split_loc(" " + tail.strip())
    body = body.strip()
    if body.startswith(": "):  # }) : (tensor<256xf32>) -> f32
        return (K_CLOSE, body[2:].strip(), "", loc)
    a_start, a_end, colon = top_level(body)
    types = body[colon + 3:].strip() if colon >= 0 else ""
    attrs = body[a_start:a_end] if a_start >= 0 else ""
    return (K_CLOSE, types, attrs, loc)


def _func(m: re.Match) -> tuple:
    kind, vis, name, rest = m.groups()
    if name.startswith('"'):
        name = name[1:-1]
    rest = rest.strip()
    args: tuple = ()
    if rest.startswith("("):
        end = matching(rest, 0)
        args = _args(rest[1:end - 1])
        rest = rest[end:].strip()
    opens = rest.endswith("{") and not rest.endswith("}")
    if opens:
        rest = rest[:-1].rstrip()
    rest, loc = split_loc(rest)
    attrs = ""
    i = rest.find("attributes {")
    if i >= 0:
        attrs = rest[i + 11:matching(rest, i + 11)]
    return (K_FUNC, kind, name, vis.strip(), args, attrs, loc, opens)


def classify(raw: str, lazy: bool = False) -> tuple:
    """Parse one line of MLIR text into a tuple whose first element is its kind.

    ``lazy``: an op without regions gets None for its operands, types and attributes
    (a stage file's parse reads those on first use, see :class:`MlirOp`).

    The two most common lines, a location alias and (lazily) a plain op, are read by
    one regex each; :func:`classify_general` reads everything (the tests' oracle).
    """
    if raw[:4] == "#loc":
        m = _PLAIN_LOCDEF_RE.fullmatch(raw)
        if m is not None:
            return (K_LOCDEF, m.group(1), m.group(2))
    elif lazy:
        m = _PLAIN_OP_RE.match(raw)
        if m is not None and not (m.group(3) or "").endswith("{"):
            res, name, _, loc = m.groups()
            return _unread_op(name, (res,), loc, False)
    return classify_general(raw, lazy)


def classify_general(raw: str, lazy: bool = False) -> tuple:
    """:func:`classify`, for any line, without its fast paths."""
    s = raw.strip()
    if not s:
        return (K_BLANK,)
    c = s[0]
    if c == "/" and s.startswith("//"):
        return (K_COMMENT,)
    if odd_quotes(s):
        return (K_OPENSTR,)
    if c in _GOES_ON_FIRST and (c != "{" or not s.startswith("{-#")) and \
            (s.startswith(_GOES_ON_STARTS) or s == ":"):  # the rest of the statement above
        return (K_GOES_ON, goes_on(s))
    if (c != "{" or not s.startswith("{-#")) and (c != "}" or len(s) > 2):
        depth = goes_on(s)
        if depth is not None:
            return (K_OPEN, depth)
    if c == "#" or c == "!":
        m = _ALIAS_RE.match(s)
        if m is None:
            return (K_UNKNOWN, "")
        name, value = m.groups()
        if value.startswith("loc(") and value.endswith(")"):
            return (K_LOCDEF, name, value[4:-1])
        return (K_ALIAS, name, value)
    if c == "m" or s.startswith('"builtin.module"'):
        m = _MODULE_RE.match(s)
        if m is not None and (s.startswith("module ") or c == '"'):
            rest = m.group(1).strip()
            opens = rest.endswith("{")
            rest = rest[:-1].rstrip().rstrip("(").rstrip() if opens else rest
            rest, loc = split_loc(rest)
            attrs = rest[len("attributes "):] if rest.startswith("attributes ") else rest
            return (K_MODULE, attrs, loc, opens)
    if c == "%" or c == '"':
        return _op(s, lazy)
    if c == "}":
        return _close(s)
    if c == "^":
        m = _BLOCK_RE.match(s)
        if m is None:
            return (K_UNKNOWN, "")
        inner = m.group(2)
        return (K_BLOCK, m.group(1), _args(inner[1:-1]) if inner else ())
    if s.startswith("{-#"):
        return (K_RESOURCE, s.endswith("#-}"))
    if "func " in s:
        m = _FUNC_RE.match(s)
        if m is not None:
            return _func(m)
    return _op(s, lazy)


@never_raise(lambda raw, lazy=False: (K_UNKNOWN, ""), pause_gc=False)  # odd text must never stop a parse
def _classify_safe(raw: str, lazy: bool = False) -> tuple:
    """``classify(raw, lazy)``."""
    return classify(raw, lazy)


def _classify_lazy(raw: str) -> tuple:
    return _classify_safe(raw, True)


class MlirOp(LazyOp):
    """An MLIR op of a stage file: operands, types and attributes read on first use."""

    __slots__ = ()

    @staticmethod
    def read_details(text: str) -> tuple:
        m = _PLAIN_DETAILS_RE.match(text)
        if m is not None:
            values, head, attrs, types = m.groups()
            if types is None:
                types = ""
            # (the types are matched by '.*', cheaper than a class; a quote is ruled out here)
            if " : " not in types and not types.endswith("{") and types[:1] != ":" and '"' not in types:
                if values is not None:  # a head of values alone ('%a, %b'): split, no second regex
                    operands = tuple(values.split(", "))
                elif "%" in head:
                    operands = tuple((_PLAIN_VALUE_RE if "-" not in head and head.isascii() else _VALUE_RE).findall(head))
                else:
                    operands = ()
                return (operands, types.strip(), attrs[1:] if attrs else "")
        t = _classify_safe(text)
        return (t[4], t[5], t[6]) if t[0] == K_OP else ((), "", "")


# Value names, location aliases and block labels: what renumbering changes.
def _with_form(shape: tuple, template: str) -> tuple:
    """An op's shape with its form, the same for every line of the template."""
    if shape[0] == K_OP:
        return shape[:11] + (normalise_op_text(template.strip()),)
    return shape


# Alias definitions (``#loc12 = loc(...)``) are unique: classified directly.
_TEMPLATER = Templater(rf"(%|\^|#loc)({_NAME})", ("#loc", "%", "^"), _classify_safe, _with_form,
                       unique="#")
_classify_new = _TEMPLATER.classify_new


def _logical_lines(text: str, memo: dict, classify_new, counts: list) -> Iterator[tuple]:
    """Yield ``(t, first line, text, last line)`` for each logical line of ``text``
    that is not blank, a comment or inside a resource block; ``t`` is its classified
    tuple. A string literal spanning lines arrives joined, as one line; so does a
    statement whose brackets stay open at a line's end, without the comment lines
    between.

    A line that continues the op above it (it starts with ``->``, ``:``, ``{``...)
    arrives as ``((K_AMEND,), first line of that op, ...)``: the op just yielded is
    to be taken back, and the next item is the op read whole.

    ``memo`` maps a raw line to what ``classify_new(raw)`` gives; ``counts`` gets
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
                t = _joined(pending, base) if depth is None else (K_UNKNOWN, "")
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
            t = _classify_safe(joined) if not pending_odd else (K_UNKNOWN, "")
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
                    t = _joined(pending, base)
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


def _joined(pending: list[str], base: tuple | None) -> tuple:
    """The classified tuple of a statement spanning lines, read as one line (after
    the text of ``base``, the op they continue); (K_UNKNOWN, "") when it is not one
    statement."""
    pieces = [without_comment(raw.strip()) for raw in pending]
    if base is not None:
        pieces[:0] = [without_comment(line.strip()) for line in base[2].split("\n")]
    # '%e:' at a line's end, the types below: the colon that starts them, as ' : '.
    pieces = [p[:-1] + " :" if p[-1:] == ":" and p[-2:-1] not in (" ", ")") else p for p in pieces]
    flat = " ".join(pieces)
    t = _classify_safe(flat)
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


@parser(MLIR)
def parse_mlir(text: str, stage: str = MLIR, cache: ParseCache | None = None) -> Module:
    """Parse MLIR text (a ttir/ttgir file or one pass snapshot) into a :class:`Module`.

    Never raises on input text: lines it does not understand become ``<unknown>``
    ops and are listed in ``Module.unknown``. ``cache`` shares the per-line memo
    between calls (pass snapshots repeat most lines).
    """
    memo = cache.mlir if cache is not None else {}
    shapes = cache.mlir_shapes if cache is not None else {}
    mod = Module(stage)
    all_ops = mod.all_ops
    glob = mod.globals
    unknown = mod.unknown
    loc_aliases = mod.loc_aliases
    stack: list = []  # (owner, saved block, saved region, saved parent)
    # The op whose region closed last, and how many ops there were then: a named
    # region header right after it ('partition0(...) num_warps(4) {') opens its next region.
    closed: object = None
    closed_at = -1
    # Where in all_ops each open function's ops start; -1 for one that holds another
    # (garbled text): its ops are not one run of all_ops, and it walks its regions.
    body_start: list[int] = []
    block: Block | None = None
    region: Region | None = None
    parent: Op | Function | None = None
    counts = [0, 0, 0]
    understood = 0
    mod_loc = ""
    lineno = 0
    new_op = Op
    add_here = glob.append  # appends to the current block (module level: globals)
    # Pass snapshots repeat line shapes across passes (renumbered values), so each is
    # classified once per template; a stage's own text rarely repeats one, and there
    # templating costs more than it saves (flash_attention: snapshots 1.26 -> 0.63 s
    # with templates, its final ttir/ttgir 0.012 -> 0.024 s).
    classify_new = (functools.partial(_classify_new, memo=shapes) if stage == MLIR
                    else _classify_lazy)
    for t, line_of_op, raw_text, lineno in _logical_lines(text, memo, classify_new, counts):
        k = t[0]
        if k == K_OP:
            if t[4] is not None:
                op = new_op(name=t[1], dialect=t[2], results=t[3], operands=t[4], types=t[5], attributes=t[6],
                            location=UNKNOWN_LOCATION, line=line_of_op, text=raw_text, parent=parent,
                            loc_ref=t[7], end_line=lineno, form=t[11])
            else:  # details left unread (MlirOp reads them on first use)
                op = new_lazy_op(MlirOp, t[1], t[2], t[3], line_of_op, raw_text, parent, t[7], lineno, t[11])
            all_ops.append(op)
            add_here(op)
            if t[8]:
                new = Block(None, tuple(Value(n, ty) for n, ty, _ in t[9]), [], lineno)
                op.regions = [Region([new])]
                stack.append((op, block, region, parent))
                block, region, parent = new, op.regions[0], op
                add_here = new.ops.append
            understood += 1
        elif k == K_CLOSE:
            if not stack:
                unknown.append((lineno, raw_text))
                continue
            owner, block, region, parent = stack.pop()
            add_here = (block.ops if block is not None else glob).append
            closed, closed_at = owner, len(all_ops)
            if owner is not None:
                owner.end_line = lineno
                if type(owner) is Function:
                    _end_body(owner, body_start, all_ops)
                if t[3]:
                    owner.loc_ref = t[3]
                if isinstance(owner, Op):
                    if t[1] and not owner.types:
                        owner.types = t[1]
                    if t[2] and not owner.attributes:
                        owner.attributes = t[2]
            elif t[3]:
                mod_loc = t[3]
            understood += 1
        elif k == K_LOCDEF:
            loc_aliases[t[1]] = t[2]
            understood += 1
        elif k == K_BLOCK:
            if region is None:
                unknown.append((lineno, raw_text))
                continue
            args = tuple(Value(n, ty, UNKNOWN_LOCATION, lc) for n, ty, lc in t[2])
            if block is not None and block.label is None and not block.ops:
                block.label, block.args, block.line = t[1], args, lineno
            else:
                block = Block(t[1], args, [], lineno)
                region.blocks.append(block)
                add_here = block.ops.append
            understood += 1
        elif k == K_FUNC:
            args = tuple(Value(n, ty, UNKNOWN_LOCATION, lc) for n, ty, lc in t[4])
            if t[7]:
                entry = Block(None, (), [], lineno)
                fn = Function(name=t[2], kind=t[1], args=args, blocks=[entry], line=line_of_op, end_line=lineno,
                              visibility=t[3], attributes=t[5], loc_ref=t[6], text=raw_text)
                mod.functions.append(fn)
                body_start[:] = [-1] * len(body_start)
                body_start.append(len(all_ops))
                stack.append((fn, block, region, parent))
                block, region, parent = entry, Region(fn.blocks), fn
                add_here = entry.ops.append
            else:
                op = Op(name=t[1], dialect=t[1].split(".", 1)[0], results=(), operands=(), types="",
                        attributes=t[5], location=UNKNOWN_LOCATION, line=line_of_op, text=raw_text, parent=parent,
                        loc_ref=t[6], end_line=lineno)
                all_ops.append(op)
                add_here(op)
            understood += 1
        elif k == K_REGION:
            # A named region of the op whose region closed on the line above (its next
            # one), or else of the op on the line above (its first).
            regions: list[Region]
            if isinstance(closed, Op) and closed_at == len(all_ops) and isinstance(closed.regions, list):
                owner, regions = closed, closed.regions
            elif all_ops and all_ops[-1].parent is parent and not all_ops[-1].regions \
                    and all_ops[-1].name != "<unknown>" and (block is None or block.ops[-1:] == all_ops[-1:]):
                owner = all_ops[-1]
                owner.regions = regions = []
            else:
                unknown.append((line_of_op, raw_text))
                op = unknown_op(line_of_op, raw_text, parent=parent, end_line=lineno)
                all_ops.append(op)
                add_here(op)
                continue
            new = Block(None, tuple(Value(n, ty, UNKNOWN_LOCATION, lc) for n, ty, lc in t[2]), [], lineno)
            regions.append(Region([new]))
            stack.append((owner, block, region, parent))
            block, region, parent = new, regions[-1], owner
            add_here = new.ops.append
            closed = None
            understood += 1
        elif k == K_AMEND:  # the op of that line goes on below: taken back, and comes again whole
            here = block.ops if block is not None else glob
            if all_ops and all_ops[-1].line == line_of_op and here and here[-1] is all_ops[-1]:
                all_ops.pop()
                here.pop()
                understood -= 1
        elif k == K_REOPEN:
            owner = stack[-1][0] if stack else None
            if not isinstance(owner, Op) or not isinstance(owner.regions, list):
                unknown.append((lineno, raw_text))
                continue
            block = Block(None, (), [], lineno)
            region = Region([block])
            owner.regions.append(region)
            add_here = block.ops.append
            understood += 1
        elif k == K_ALIAS:
            mod.encodings[t[1]] = t[2]
            understood += 1
        elif k == K_MODULE:
            mod.attributes = t[1]
            if t[3]:
                stack.append((None, block, region, parent))
                block, region, parent = None, None, None
                add_here = glob.append
            understood += 1
        elif k == K_RESOURCE:
            understood += 1
        elif k == K_TAIL:  # text ended inside a string literal
            unknown.append((line_of_op, raw_text))
        else:  # K_UNKNOWN
            unknown.append((line_of_op, raw_text))
            op = unknown_op(line_of_op, raw_text, parent=parent, loc_ref=t[1] if len(t) > 1 else "",
                            end_line=lineno)
            all_ops.append(op)
            add_here(op)
    lineno = counts[2]
    while stack:  # truncated text: close what is open
        owner, block, region, parent = stack.pop()
        if owner is not None:
            owner.end_line = lineno
            if type(owner) is Function:
                _end_body(owner, body_start, all_ops)
    mod.total_lines = counts[0]
    mod.understood_lines = understood + counts[1]
    res = _resolver(loc_aliases, cache)
    _resolve(mod, res)
    if mod_loc:
        mod.location = res.resolve(mod_loc)
    return mod


def _end_body(fn: Function, starts: list[int], all_ops: list) -> None:
    """A function's body closed: its ops are the run of ``all_ops`` since it opened."""
    start = starts.pop()
    if start >= 0:
        fn.body_ops = all_ops[start:]


_RESOLVERS_KEPT = 8


def _resolver(aliases: dict[str, str], cache: ParseCache | None) -> LocResolver:
    """A resolver for ``aliases``, reused when a recent module had the same table."""
    if cache is None:
        return LocResolver(aliases)
    key = tuple(aliases.items())
    res = cache.resolvers.get(key)
    if res is None:
        res = LocResolver(aliases, cache.locs)
        cache.resolvers[key] = res
        if len(cache.resolvers) > _RESOLVERS_KEPT:
            del cache.resolvers[next(iter(cache.resolvers))]
    return res


def _resolve(mod: Module, res: LocResolver) -> None:
    get = res.cache.get
    resolve = res.resolve
    for op in mod.all_ops:
        ref = op.loc_ref
        if ref:
            op.location = get(ref) or resolve(ref)
        if op.regions:
            for region in op.regions:
                for block in region.blocks:
                    for v in block.args:
                        if v.loc_ref:
                            v.location = resolve(v.loc_ref)
    for fn in mod.functions:
        if fn.loc_ref:
            fn.location = resolve(fn.loc_ref)
        for v in fn.args:
            if v.loc_ref:
                v.location = resolve(v.loc_ref)
        for block in fn.blocks:
            for v in block.args:
                if v.loc_ref:
                    v.location = resolve(v.loc_ref)
