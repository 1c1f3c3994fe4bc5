"""The types of a whole op: an MLIR op's type list after its colon assigned to
operands and results (:func:`parse_op_types`), and the type an LLVM IR
instruction defines (:func:`instruction_result_type`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping

from irscope import text_guard

from .bracket_scan import _STRING_RE, _blank, _open_count, matching, split_top

from .type_model import OpaqueType, PointerType, StructType, Type
from .type_parser import FAST_TYPE, _fast, _parse, _resolve_aliases, parse_leading_type, parse_type

@dataclass(frozen=True, slots=True)
class OpTypes:
    """The types an MLIR op prints after its top-level colon, assigned to operands
    and results (see :func:`parse_op_types` for how, and where it approximates)."""

    operands: tuple[Type, ...]
    results: tuple[Type, ...]
    raw: str = field(default="", compare=False)
    form: str = ""
    """Which form was printed: ``single`` (``T``), ``list`` (``T1, T2``), ``arrow``
    (``T1 -> T2``), ``function`` (``(T1, T2) -> T3``), ``dot`` (``A * B -> C``),
    ``cast`` (``T1 to T2``); '' for empty text."""
    extra: tuple[Type, ...] = ()
    """Types printed after the function type: ``llvm.getelementptr``'s element type
    in ``(!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32``."""


def _find_top(s: str, sub: str) -> int:
    """Index of the first top-level ``sub`` in ``s`` (outside brackets), or -1."""
    i = s.find(sub)
    while i >= 0:
        if not _open_count(s[:i]):
            return i
        i = s.find(sub, i + 1)
    return -1


def _types(text: str) -> tuple[Type, ...]:
    t = text.strip()
    if "," not in t or _fast(t) is not None:  # one type: no top-level comma to look for
        return (_parse(t),) if t else ()
    return tuple(_parse(p) for p in split_top(text))


def _opaque_op_types(text: str, num_results: int | None) -> OpTypes:
    """What a reader bug gives (the guard's fallback): the whole text as one opaque type."""
    return OpTypes((OpaqueType(text),), (), text, "")


@lru_cache(maxsize=8192)
@text_guard.never_raise(_opaque_op_types, pause_gc=False)
def _op_types(text: str, num_results: int | None) -> OpTypes:
    return _op_types_raw(text, num_results)


# `T` or `T -> U` of simple types (most TTGIR ops): split at one regex, each type
# read by _parse as the general path would (the tests hold the two to one answer).
# (ASCII: a non-ASCII name fails these and goes to the general reader, never reads otherwise.)
_FAST_RE = re.compile(rf"({FAST_TYPE})(?: -> ({FAST_TYPE}))?", re.ASCII)
# `T1, T2, ...` of simple types: each piece is one match of the type pattern.
_FAST_LIST_RE = re.compile(rf"{FAST_TYPE}(?:, {FAST_TYPE})+", re.ASCII)
_FAST_PIECE_RE = re.compile(FAST_TYPE, re.ASCII)
# The other forms TTGIR prints, of such types:
#     (T1, T2) -> T3   /   () -> T      (ttg.local_alloc, tt.reduce...)
#     T1 to T2                          (arith.truncf, arith.extsi...)
#     A * B -> C                        (ttng.warp_group_dot, tt.dot)
_FAST_FUNCTION_RE = re.compile(rf"\(((?:{FAST_TYPE}(?:, {FAST_TYPE})*)?)\) -> ({FAST_TYPE})", re.ASCII)
_FAST_CAST_RE = re.compile(rf"({FAST_TYPE}) to ({FAST_TYPE})", re.ASCII)
_FAST_DOT_RE = re.compile(rf"({FAST_TYPE}) \* ({FAST_TYPE}) -> ({FAST_TYPE})", re.ASCII)


def _op_types_raw(s: str, num_results: int | None) -> OpTypes:
    m = _FAST_RE.fullmatch(s)
    if m is not None:
        a, b = m.groups()
        t = _parse(a)
        if b is None:
            return OpTypes((t,), (t,) * (1 if num_results is None else num_results), s, "single")
        return OpTypes((t,), (_parse(b),), s, "arrow")
    c = s[:1]
    if c == "(":
        m = _FAST_FUNCTION_RE.fullmatch(s)
        if m is not None:
            args, result = m.groups()
            return OpTypes(tuple(map(_parse, _FAST_PIECE_RE.findall(args))), (_parse(result),), s, "function")
    elif _FAST_LIST_RE.fullmatch(s) is not None:
        ts = tuple(map(_parse, _FAST_PIECE_RE.findall(s)))
        return OpTypes(ts, ts if num_results == len(ts) else (), s, "list")
    elif " to " in s:
        m = _FAST_CAST_RE.fullmatch(s)
        if m is not None:
            return OpTypes((_parse(m.group(1)),), (_parse(m.group(2)),), s, "cast")
    elif " * " in s:
        m = _FAST_DOT_RE.fullmatch(s)
        if m is not None:
            a, b, r = m.groups()
            return OpTypes((_parse(a), _parse(b)), (_parse(r),), s, "dot")
    return _op_types_general(s, num_results)


def _op_types_general(s: str, num_results: int | None) -> OpTypes:
    """:func:`_op_types_raw` without its fast path (the tests' oracle)."""
    if not s:
        return OpTypes((), (), s, "")
    # Positions are found in a copy with strings blanked (identified LLVM structs
    # print their name as one) and cut from the text itself.
    flat = _STRING_RE.sub(_blank, s) if '"' in s else s
    to = _find_top(flat, " to ")
    if to >= 0:
        return OpTypes(_types(s[:to]), _types(s[to + 4:]), s, "cast")
    arrow = _find_top(flat, "->")
    if arrow < 0:
        ts = _types(s)
        if len(ts) == 1:
            n = 1 if num_results is None else num_results
            return OpTypes(ts, ts * n, s, "single")
        # Operand types only; results are known only for pass-through ops, where
        # each result has the type of the operand at its position.
        return OpTypes(ts, ts if num_results == len(ts) else (), s, "list")
    lhs, rhs = s[:arrow].strip(), s[arrow + 2:].strip()
    if lhs.startswith("(") and matching(lhs, 0) == len(lhs):
        operands, form = _types(lhs[1:-1]), "function"
    else:
        star = _find_top(flat[:arrow].strip(), " * ")
        if star >= 0:
            operands, form = (_parse(lhs[:star].strip()), _parse(lhs[star + 3:].strip())), "dot"
        else:
            operands, form = _types(lhs), "arrow"
    extra: tuple[Type, ...] = ()
    if rhs.startswith("(") and matching(rhs, 0) == len(rhs):
        results = _types(rhs[1:-1])
    else:
        pieces = split_top(rhs)
        results = (_parse(pieces[0]),) if pieces else ()
        extra = tuple(_parse(p) for p in pieces[1:])
    return OpTypes(operands, results, s, form, extra)


def parse_op_types(types_text: str, aliases: Mapping[str, str] | None = None, *,
                   num_results: int | None = None) -> OpTypes:
    """Read the types an MLIR op prints after its top-level colon (``Op.types``).

    Forms and how they are assigned:

    - ``T1 -> T2``, ``(T1, T2) -> T3``, ``(T1) -> (T3, T4)``: operands left of the
      arrow, results right of it (types after a function type go to ``extra``).
    - ``A * B -> C`` (``tt.dot``): operands ``(A, B)``, result ``C`` (the
      accumulator, a third operand, has the result's type and is not repeated).
    - ``T1 to T2`` (casts; lists on either side): operands, then results.
    - ``T`` alone: an approximation. Custom printers often print one type for all
      (``arith.addf %a, %b : tensor<..>``), but some print only an operand's
      (``tt.load %p : tensor<..x!tt.ptr<f32>>`` yields f32 values, ``arith.cmpi``
      yields i1). ``operands`` gets ``(T,)``, once, not repeated per operand;
      ``results`` gets T once per result: ``num_results`` times (``len(op.results)``;
      once when None).
    - ``T1, T2, ...``: operand types (``tt.addptr``, ``scf.yield``, ``llvm.store``).
      Results are filled only when ``num_results`` equals the number of types
      (pass-through ops such as ``ttng.warp_group_dot_wait``); otherwise empty.

    ``aliases`` resolves type aliases as in :func:`parse_type`. Never raises.
    """
    memo = getattr(aliases, "decoded", None)  # a module's AliasTable
    if type(memo) is dict and type(types_text) is str:
        # A TTGIR prints a few dozen type lists on hundreds of ops: each is read once per
        # alias table (string keys there are encodings; these are tuples).
        key = (types_text, num_results)
        got = memo.get(key)
        if got is None:
            got = memo[key] = _op_types(_resolve_aliases(types_text.strip(), aliases), num_results)
        return got
    if not isinstance(types_text, str):
        types_text = str(types_text)
    return _op_types(_resolve_aliases(types_text.strip(), aliases), num_results)


def op_types(op, aliases: Mapping[str, str] | None = None) -> OpTypes:
    """:func:`parse_op_types` of an :class:`~irscope.ir.model.Op`'s type text, with
    its number of results."""
    return parse_op_types(op.types, aliases, num_results=len(op.results))


# Words an LLVM IR instruction may print between its opcode and its first type.
_LLVM_FLAGS = frozenset({"tail", "musttail", "notail", "fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn",
                         "reassoc", "nuw", "nsw", "exact", "disjoint", "nneg", "inbounds", "nusw", "samesign",
                         "volatile", "atomic"})
_LLVM_PREDICATES = frozenset({"eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle", "oeq", "ogt",
                              "oge", "olt", "ole", "one", "ord", "ueq", "une", "uno", "true", "false"})


@lru_cache(maxsize=1 << 14)
def instruction_result_type(text: str) -> Type | None:
    """The type of the value an LLVM IR instruction defines (``%5 = fadd float ...``
    gives float; a cast its target; a compare i1; ``getelementptr`` a pointer), or
    None when it defines none or the text does not say."""
    head, sep, body = text.strip().partition(" = ")
    if not sep or not head.startswith("%"):
        return None
    body = body.split(", !dbg", 1)[0]
    words = body.split(" ")
    while len(words) > 1 and words[0] in _LLVM_FLAGS:  # 'tail call'
        words = words[1:]
    opcode = words[0]
    if opcode in ("icmp", "fcmp"):
        return parse_type("i1")
    rest = [w for w in words[1:] if w not in _LLVM_FLAGS and w not in _LLVM_PREDICATES]
    if opcode in ("getelementptr", "alloca") or opcode.endswith("cmpxchg"):
        return PointerType(None, 0, "ir") if opcode != "getelementptr" else _gep_type(" ".join(rest))
    if " to " in body and opcode in ("bitcast", "trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi",
                                     "uitofp", "sitofp", "ptrtoint", "inttoptr", "addrspacecast"):
        t, _ = parse_leading_type(body.rsplit(" to ", 1)[1])
        return t
    if opcode == "extractelement":
        t, _ = parse_leading_type(" ".join(rest))
        return getattr(t, "element", t)
    if opcode == "extractvalue":
        t, tail = parse_leading_type(" ".join(rest))
        index = tail.rsplit(",", 1)[-1].strip()
        if isinstance(t, StructType) and index.isdigit() and int(index) < len(t.fields):
            return t.fields[int(index)]
        return None
    t, _ = parse_leading_type(" ".join(rest))
    return t


def _gep_type(rest: str) -> Type:
    # getelementptr float, ptr addrspace(1) %1, ...: the result is the base pointer's type.
    _, tail = parse_leading_type(rest)
    t, _ = parse_leading_type(tail.lstrip(", "))
    return t if isinstance(t, PointerType) else PointerType(None, 0, "ir")
