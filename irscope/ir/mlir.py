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
from .bracket_scan import _BRACKET_RE, goes_on, matching, odd_quotes, split_loc, split_top, top_level
from .line_shapes import Templater
from .mlir_lines import (K_ALIAS, K_AMEND, K_BLANK, K_BLOCK, K_CLOSE, K_COMMENT, K_FUNC, K_GOES_ON, K_LOCDEF,
                         K_MODULE, K_OP, K_OPEN, K_OPENSTR, K_REGION, K_REOPEN, K_RESOURCE, K_TAIL, K_UNKNOWN,
                         logical_lines)
from .forms import normalise_op_text
from .mlir_loc import LocResolver
from irscope.compiler.stages import MLIR

from .model import (new_lazy_op, unknown_op, UNKNOWN_LOCATION, Block, Function, LazyOp, Module, Op, ParseCache,
                    Region, Value)
__all__ = ["parse_mlir"]


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


# What a line starts with when it continues the statement of the line above:
# '-> tensor<...> {', ': !ttg.memdesc<...> * !ttg.memdesc<...>', '{maxNumImpreciseAcc = 32 : i32} :'.
_GOES_ON_STARTS = ("->", ": ", "* ", "{")
_GOES_ON_FIRST = frozenset("-:*{")


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
    # (a line that ends with its location ends its statement: most lines, tested here
    # without a call)
    if (s[-1] != ")" or " loc(" not in s) and (c != "{" or not s.startswith("{-#")) and (c != "}" or len(s) > 2):
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
    """:func:`.mlir_lines.logical_lines`, reading joined statements with :func:`classify`."""
    return logical_lines(text, memo, classify_new, counts, _classify_safe)


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
    # templating costs more than it saves (flash_attention's snapshots: 1.26 s without
    # templates, 0.63 s with; its final ttir/ttgir: 0.012 s without, 0.024 s with).
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
