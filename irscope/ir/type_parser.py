"""The type parser: the text of one MLIR or LLVM IR type into a
:mod:`~irscope.ir.type_model` record (:func:`parse_type`, :func:`parse_leading_type`).

A recursive descent over the text, memoised per text; never raises on input:
what is not one whole type becomes an :class:`OpaqueType` that keeps the text.
"""

from __future__ import annotations

import re
from functools import lru_cache
from math import prod
from typing import Mapping

from irscope import text_guard

from .bracket_scan import matching

from .type_model import FLAVOR_IR, FLAVOR_LLVM, FLAVOR_MLIR
from .type_model import (ArrayType, FunctionType, MemDescType, OpaqueType, PointerType, ScalarType, StructType,
                         TensorType, TokenType, Type, VectorType, VoidType)

# -- scalar names ---------------------------------------------------------------------

_FLOATS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f80": 80, "f128": 128, "tf32": 19,
           "half": 16, "bfloat": 16, "float": 32, "double": 64, "fp128": 128,
           "x86_fp80": 80, "ppc_fp128": 128}
_INT_RE = re.compile(r"(?:s|u)?i([1-9]\d{0,6})")
# Small floats are named by their layout: f8E4M3FN, f6E2M3FN, f4E2M1FN, f8E8M0FNU...
_MINIFLOAT_RE = re.compile(r"f(\d{1,2})E\d+M\d+[A-Z]*")


@lru_cache(maxsize=512)
def _scalar(name: str) -> ScalarType | None:
    """The scalar type called ``name``, or None."""
    bits = _FLOATS.get(name)
    if bits is not None:
        return ScalarType(name, bits, "float", name)
    m = _INT_RE.fullmatch(name)
    if m:
        return ScalarType(name, int(m.group(1)), "int", name)
    m = _MINIFLOAT_RE.fullmatch(name)
    if m:
        return ScalarType(name, int(m.group(1)), "float", name)
    if name == "index":
        return ScalarType(name, None, "index", name)
    if name == "none":
        return ScalarType(name, 0, "none", name)
    return None


# -- the parser -----------------------------------------------------------------------

class _Fail(Exception):
    """Text that is not a type where one is expected."""


_MAX_DEPTH = 48  # nesting deeper than any real type: garbage, stop before recursion limits
_IDENT_RE = re.compile(r"!?[A-Za-z_][\w$.]*")
_WS_RE = re.compile(r"\s*")
# Shaped-type dimensions: 128x64x, ?x4x, [4]x (scalable vector)
_DIMS_RE = re.compile(r"(?:(?:\d+|\?|\[\d+\])x)*")
# LLVM counts: '4 x ', 'vscale x 4 x '
_ALLOC_RE = re.compile(r"(?:\d+|\?)(?:x(?:\d+|\?))*")
_COUNT_RE = re.compile(r"\s*(vscale\s+x\s+)?(\d+)\s+x\s+")
_INT_LIT_RE = re.compile(r"\s*(-?\d+)\s*")
_ADDRSPACE_RE = re.compile(r"\s+addrspace\((\d+)\)")
# A memdesc printed without its name: dimensions, an element, then a layout or space.
_ELIDED_MEMDESC_RE = re.compile(r"<(?:(?:\d+|\?)x)+[\w!.]+(?:<[^<>]*>)?, #")
_MEMDESC = {"!ttg.memdesc": "ttg", "!tt.memdesc": "tt", "!triton_gpu.memdesc": "triton_gpu"}
_TT_PTR = ("!tt.ptr", "!ptr")
_LLVM_PREFIX = "!llvm."
_TOKEN_NAMES = ("token", "!llvm.token")


def _ws(s: str, i: int) -> int:
    return _WS_RE.match(s, i).end()  # type: ignore[union-attr]  # a * pattern always matches


def _expect(s: str, i: int, c: str) -> int:
    i = _ws(s, i)
    if not s.startswith(c, i):
        raise _Fail
    return i + len(c)


def _shape(dims: str) -> tuple[int | None, ...]:
    return tuple(None if d == "?" else int(d.strip("[]")) for d in dims.split("x")[:-1])


def _type_at(s: str, i: int, depth: int = 0) -> tuple[Type, int]:
    """The type that starts at ``s[i]`` (spaces skipped) and the index after it."""
    if depth > _MAX_DEPTH:
        raise _Fail
    i = _ws(s, i)
    if i >= len(s):
        raise _Fail
    c = s[i]
    if c == "(":
        return _mlir_function(s, i, depth)
    if c == "[":  # LLVM IR array
        m = _COUNT_RE.match(s, i + 1)
        if not m:
            raise _Fail
        elem, j = _type_at(s, m.end(), depth + 1)
        j = _expect(s, j, "]")
        return ArrayType(int(m.group(2)), elem, FLAVOR_IR, s[i:j]), j
    if c == "{":
        fields, j = _type_list(s, i + 1, "}", depth)
        return StructType(fields, False, None, FLAVOR_IR, s[i:j]), j
    if c == "<":
        if s.startswith("{", _ws(s, i + 1)):  # packed struct <{ ... }>
            fields, j = _type_list(s, _ws(s, i + 1) + 1, "}", depth)
            j = _expect(s, j, ">")
            return StructType(fields, True, None, FLAVOR_IR, s[i:j]), j
        m = _COUNT_RE.match(s, i + 1)
        if not m and _ELIDED_MEMDESC_RE.match(s, i):
            # '<64x64xf16, #shared, #smem, mutable>': a memdesc whose op printed it
            # without its name (LLVM's vectors space their 'x': '<4 x float>')
            return _memdesc(s, i, "", i + 1, depth)
        if not m or m.group(1):  # scalable LLVM vectors are left opaque
            raise _Fail
        elem, j = _type_at(s, m.end(), depth + 1)
        j = _expect(s, j, ">")
        return VectorType(int(m.group(2)), elem, (), FLAVOR_IR, s[i:j]), j
    m = _IDENT_RE.match(s, i)
    if not m:
        raise _Fail
    name = m.group()
    j = m.end()
    lt = j < len(s) and s[j] == "<"
    if not lt:
        t = _scalar(name)
        if t is not None:
            return t, j
    if name.startswith(_LLVM_PREFIX):
        return _llvm(s, i, name[len(_LLVM_PREFIX):], j, depth, FLAVOR_LLVM)
    if name in ("ptr", "struct", "array", "void", "vec", "func"):
        # inside LLVM dialect types the '!llvm.' prefix is dropped: struct<(ptr<1>, i32)>
        return _llvm(s, i, name, j, depth, FLAVOR_LLVM if lt else FLAVOR_IR)
    if lt:
        if name in ("tensor", "vector"):
            return _shaped(s, i, name, j + 1, depth)
        if name in _TT_PTR:
            return _pointer(s, i, j, depth, 1, "tt")
        if name in _MEMDESC:
            return _memdesc(s, i, _MEMDESC[name], j + 1, depth)
        k = matching(s, j)
        return OpaqueType(s[i:k]), k
    if name in _TOKEN_NAMES or (name.startswith("!") and name.endswith(".token")):
        return TokenType(name), j
    if name in ("label", "metadata") or name.startswith("!"):
        return OpaqueType(name), j
    raise _Fail


def _pointer(s: str, i: int, j: int, depth: int, space: int, flavor: str) -> tuple[Type, int]:
    """``<pointee[, address space]>`` with ``s[j]`` its '<'; ``space`` when none is given."""
    pointee, k = _type_at(s, j + 1, depth + 1)
    k = _ws(s, k)
    if s.startswith(",", k):
        mi = _INT_LIT_RE.match(s, k + 1)
        if not mi:
            raise _Fail
        space, k = int(mi.group(1)), mi.end()
    k = _expect(s, k, ">")
    return PointerType(pointee, space, flavor, s[i:k]), k


def _type_list(s: str, i: int, close: str, depth: int) -> tuple[tuple[Type, ...], int]:
    """Comma-separated types up to ``close``; the index after ``close``."""
    out: list[Type] = []
    j = _ws(s, i)
    if s.startswith(close, j):
        return (), j + len(close)
    while True:
        t, j = _type_at(s, j, depth + 1)
        out.append(t)
        j = _ws(s, j)
        if s.startswith(",", j):
            j += 1
        elif s.startswith(close, j):
            return tuple(out), j + len(close)
        else:
            raise _Fail


def _args(s: str, i: int, depth: int) -> tuple[tuple[Type, ...], bool, int]:
    """``(T, T, ...)`` at ``s[i] == '('``: (types, variadic, index after ')')."""
    j = _ws(s, i + 1)
    if s.startswith("...", j):
        return (), True, _expect(s, j + 3, ")")
    out: list[Type] = []
    if s.startswith(")", j):
        return (), False, j + 1
    while True:
        t, j = _type_at(s, j, depth + 1)
        out.append(t)
        j = _ws(s, j)
        if s.startswith(")", j):
            return tuple(out), False, j + 1
        j = _expect(s, j, ",")
        if s.startswith("...", _ws(s, j)):
            return tuple(out), True, _expect(s, _ws(s, j) + 3, ")")


def _mlir_function(s: str, i: int, depth: int) -> tuple[Type, int]:
    """``(a, b) -> c`` or ``(a) -> (b, c)`` at ``s[i] == '('``."""
    inputs, variadic, j = _args(s, i, depth)
    j = _expect(s, j, "->")
    k = _ws(s, j)
    if s.startswith("(", k):
        # '(a) -> (b) -> c' would be a function type result; MLIR prints it in parens
        results, _, k = _args(s, k, depth)
    else:
        r, k = _type_at(s, k, depth + 1)
        results = (r,)
    return FunctionType(inputs, results, variadic, FLAVOR_MLIR, s[i:k]), k


def _shaped(s: str, i: int, name: str, j: int, depth: int) -> tuple[Type, int]:
    """``tensor<...>`` / ``vector<...>`` with ``j`` just after the '<'."""
    m = _DIMS_RE.match(s, j)
    assert m is not None  # a * pattern always matches
    shape = _shape(m.group())
    elem, k = _type_at(s, m.end(), depth + 1)
    k = _ws(s, k)
    enc = None
    if name == "tensor" and s.startswith(",", k):
        enc, k = _attr_ref(s, _ws(s, k + 1))
    k = _expect(s, k, ">")
    if name == "vector":
        if None in shape:
            raise _Fail
        return VectorType(prod(shape), elem, shape, FLAVOR_MLIR, s[i:k]), k  # type: ignore[arg-type]  # no None dims: checked above
    return TensorType(shape, elem, enc, s[i:k]), k


def _attr_ref(s: str, i: int) -> tuple[str, int]:
    """An attribute (``#blocked``, ``#ttg.slice<{...}>``) at ``s[i]``: (text, end)."""
    if not s.startswith("#", i):
        raise _Fail
    m = _IDENT_RE.match(s, i + 1)
    if not m:
        raise _Fail
    k = m.end()
    if s.startswith("<", k):
        k = matching(s, k)
        if s[k - 1] != ">":
            raise _Fail
    return s[i:k], k


def _memdesc(s: str, i: int, dialect: str, j: int, depth: int) -> tuple[Type, int]:
    """``!ttg.memdesc<...>`` with ``j`` just after the '<'."""
    m = _DIMS_RE.match(s, j)
    assert m is not None  # a * pattern always matches
    shape = _shape(m.group())
    elem, k = _type_at(s, m.end(), depth + 1)
    refs: list[str] = []
    mutable = False
    alloc = shape
    while True:
        k = _ws(s, k)
        if s.startswith(">", k):
            k += 1
            break
        k = _expect(s, k, ",")
        k = _ws(s, k)
        if s.startswith("#", k):
            ref, k = _attr_ref(s, k)
            refs.append(ref)
        elif s.startswith("mutable", k):
            mutable, k = True, k + 7
        else:
            mi = _ALLOC_RE.match(s, k)  # the allocation shape of a subview: '3x128x64'
            if not mi:
                raise _Fail
            alloc, k = _shape(mi.group() + "x"), mi.end()
    enc = refs[0] if refs else None
    space = refs[1] if len(refs) > 1 else None
    if len(refs) == 1 and ("memory" in refs[0] or refs[0] in ("#smem", "#tmem")):
        enc, space = None, refs[0]
    return MemDescType(shape, elem, enc, space, mutable, alloc, dialect, s[i:k]), k


def _llvm(s: str, i: int, name: str, j: int, depth: int, flavor: str) -> tuple[Type, int]:
    """An LLVM dialect type named ``name`` (``!llvm.`` dropped), or LLVM IR ``ptr``
    (``flavor='ir'``), with ``j`` just after the name."""
    lt = s.startswith("<", j)
    if name == "ptr":
        if flavor == FLAVOR_IR:
            m = _ADDRSPACE_RE.match(s, j)
            if m:
                return PointerType(None, int(m.group(1)), FLAVOR_IR, s[i:m.end()]), m.end()
            return PointerType(None, 0, FLAVOR_IR, s[i:j]), j
        if not lt:
            return PointerType(None, 0, FLAVOR_LLVM, s[i:j]), j
        mi = _INT_LIT_RE.match(s, j + 1)
        if mi:  # opaque pointer in an address space: !llvm.ptr<3>
            k = _expect(s, mi.end(), ">")
            return PointerType(None, int(mi.group(1)), FLAVOR_LLVM, s[i:k]), k
        return _pointer(s, i, j, depth, 0, FLAVOR_LLVM)  # typed pointer of old LLVM: ptr<f32, 3>
    if name == "void" and not lt:
        return VoidType(flavor, s[i:j]), j
    if name in ("token", "label", "metadata") and not lt:
        return (TokenType(s[i:j]) if name == "token" else OpaqueType(s[i:j])), j
    if not lt:
        raise _Fail
    if name == "struct":
        k = _ws(s, j + 1)
        sname = None
        if s.startswith('"', k):
            end = s.find('"', k + 1)
            if end < 0:
                raise _Fail
            sname = s[k + 1:end]
            k = _expect(s, end + 1, ",")
            k = _ws(s, k)
        packed = s.startswith("packed", k)
        if packed:
            k = _ws(s, k + 6)
        if not s.startswith("(", k):
            raise _Fail  # opaque identified struct
        fields, _, k = _args(s, k, depth)
        k = _expect(s, k, ">")
        return StructType(fields, packed, sname, FLAVOR_LLVM, s[i:k]), k
    if name in ("array", "vec"):
        m = _COUNT_RE.match(s, j + 1)
        if not m or m.group(1):
            raise _Fail
        elem, k = _type_at(s, m.end(), depth + 1)
        k = _expect(s, k, ">")
        if name == "array":
            return ArrayType(int(m.group(2)), elem, FLAVOR_LLVM, s[i:k]), k
        return VectorType(int(m.group(2)), elem, (), FLAVOR_LLVM, s[i:k]), k
    if name == "func":
        ret, k = _type_at(s, j + 1, depth + 1)
        k = _ws(s, k)
        if not s.startswith("(", k):
            raise _Fail
        inputs, variadic, k = _args(s, k, depth)
        k = _expect(s, k, ">")
        results = () if isinstance(ret, VoidType) else (ret,)
        return FunctionType(inputs, results, variadic, FLAVOR_LLVM, s[i:k]), k
    k = matching(s, j)
    return OpaqueType(s[i:k]), k


def _ir_function_suffix(s: str, t: Type, i: int, j: int) -> tuple[Type, int]:
    """An LLVM IR function type ``ret (args)`` when ``(`` follows the type ``t``."""
    k = _ws(s, j)
    if not s.startswith("(", k) or isinstance(t, (TensorType, MemDescType, FunctionType)):
        return t, j
    try:
        inputs, variadic, k = _args(s, k, 0)
    except _Fail:
        return t, j
    results = () if isinstance(t, VoidType) else (t,)
    return FunctionType(inputs, results, variadic, FLAVOR_IR, s[i:k]), k


# -- entry points ---------------------------------------------------------------------

_BANG_REF_RE = re.compile(r"![\w$.]+")


def _resolve_aliases(text: str, aliases: Mapping[str, str] | None) -> str:
    """``text`` with type aliases (``!name`` keys of ``aliases``) replaced by their
    definitions. Encoding aliases (``#blocked``) are kept: types refer to them."""
    if not aliases or "!" not in text:
        return text
    for _ in range(4):  # an alias may be defined through another one
        refs = [r for r in _bang_refs(text) if r in aliases]
        if not refs:
            break
        text = _BANG_REF_RE.sub(lambda m: aliases.get(m.group(), m.group())
                                if not m.string.startswith("<", m.end()) else m.group(), text)
    return text


@lru_cache(maxsize=4096)
def _bang_refs(text: str) -> tuple[str, ...]:
    return tuple(_BANG_REF_RE.findall(text))


# The types a TTGIR prints on most ops, read at one regex each (what _type_at gives):
#     tensor<128x64x!tt.ptr<f16>, #ttg.slice<{dim = 1, parent = #mma}>>
#     !ttg.memdesc<3x64x64xf16, #shared, #smem, mutable>
_FAST_TENSOR = r'tensor<((?:\d+x)+)(?:([a-z]\w*)|!tt\.ptr<([a-z]\w*)>)(?:, (#[A-Za-z_][\w$.]*(?:<\{[^{}<>"\x28\x29\[\]]*\}>)?))?>'
_FAST_MEMDESC = r"!ttg\.memdesc<((?:\d+x)+)([a-z]\w*), (#[A-Za-z_][\w$.]*), (#[A-Za-z_][\w$.]*)(, mutable)?>"
# The same memdesc as an op prints it without its name (ttg.async_copy_global_to_local):
#     <64x64xf16, #shared, #smem, mutable>
_FAST_ELIDED = _FAST_MEMDESC[len(r"!ttg\.memdesc"):]
# (ASCII: a non-ASCII name fails these and goes to the descent, never reads otherwise.)
_FAST_TENSOR_RE = re.compile(_FAST_TENSOR, re.ASCII)
_FAST_MEMDESC_RE = re.compile(_FAST_MEMDESC, re.ASCII)
_FAST_ELIDED_RE = re.compile(_FAST_ELIDED, re.ASCII)
# One such type, a !tt.ptr of a scalar, one word (a scalar) or a dialect type without
# parameters (!ttg.async.token, which _parse reads by the descent): no top-level comma,
# arrow, ' to ' or ' * ' inside, so a type list of these splits at one regex (the
# patterns above with their groups made non-capturing: none holds a '\(', and the
# flat encoding's class names its parentheses \x28 \x29). A bracket inside that
# encoding sends it to the descent, which counts brackets.
FAST_TYPE = "(?:" + "|".join(re.sub(r"\((?!\?)", "(?:", p) for p in (_FAST_TENSOR, _FAST_MEMDESC, _FAST_ELIDED)) \
    + r"|!tt\.ptr<[a-z]\w*>|[a-z]\w*|![A-Za-z_][\w$.]*(?![\w$.<]))"


# '128x64x' -> (128, 64), memoised: a module prints a few dozen shapes on hundreds of types.
_fast_shape = lru_cache(maxsize=1024)(_shape)


def _fast(text: str) -> Type | None:
    """The common TTGIR tensor or memdesc type ``text`` (a memdesc also as printed
    without its name), or None for any other text
    (the descent reads it). ``tests/test_ir_types.py`` holds both to one answer."""
    if text.startswith("tensor<"):
        m = _FAST_TENSOR_RE.fullmatch(text)
        if m is None:
            return None
        dims, name, pointee, enc = m.groups()
        elem: Type | None
        if name is not None:
            elem = _scalar(name)
        else:
            target = _scalar(pointee)
            elem = None if target is None else PointerType(target, 1, "tt", f"!tt.ptr<{pointee}>")
        return None if elem is None else TensorType(_fast_shape(dims), elem, enc, text)
    if text.startswith("!ttg.memdesc<"):
        m, dialect = _FAST_MEMDESC_RE.fullmatch(text), "ttg"
    elif text.startswith("<"):
        m, dialect = _FAST_ELIDED_RE.fullmatch(text), ""
    else:
        return None
    if m is None:
        return None
    dims, name, enc, space, mutable = m.groups()
    elem = _scalar(name)
    if elem is None:
        return None
    shape = _fast_shape(dims)
    return MemDescType(shape, elem, enc, space, mutable is not None, shape, dialect, text)


@lru_cache(maxsize=16384)
def _parse(text: str) -> Type:
    fast = _fast(text)
    if fast is not None:
        return fast
    return _parse_general(text)


@text_guard.never_raise(OpaqueType, pause_gc=False)  # a parser bug: the text as an opaque type
def _parse_general(text: str) -> Type:
    """:func:`_parse` by the descent alone (the tests' oracle for :func:`_fast`)."""
    try:
        t, j = _type_at(text, 0)
        t, j = _ir_function_suffix(text, t, 0, j)
        if _ws(text, j) != len(text):
            return OpaqueType(text)
        return t
    except (_Fail, RecursionError):
        return OpaqueType(text)


def parse_type(text: str, aliases: Mapping[str, str] | None = None) -> Type:
    """The type printed as ``text`` (MLIR builtin/Triton/LLVM dialect, or LLVM IR).

    ``aliases`` (``Module.encodings``) resolves type aliases (``!name``); encoding
    aliases such as ``#blocked`` are kept as refs (see :meth:`TensorType.encoding_text`).
    Never raises: text that is not one whole type gives an :class:`OpaqueType`.
    """
    if not isinstance(text, str):
        return OpaqueType(str(text))
    return _parse(_resolve_aliases(text.strip(), aliases))


def parse_leading_type(text: str, aliases: Mapping[str, str] | None = None) -> tuple[Type | None, str]:
    """The type at the start of ``text`` and the rest (stripped): reads LLVM IR
    such as ``ptr addrspace(1) nofree readnone`` (a parameter with attributes) or
    ``float %3, %4``. ``(None, text)`` when ``text`` does not start with a type
    (a bare unknown word is not taken for one). Never raises."""
    return _leading_type(text, aliases)


@text_guard.never_raise(lambda text, aliases: (None, text), pause_gc=False)  # a parser bug: no type read
def _leading_type(text: str, aliases: Mapping[str, str] | None) -> tuple[Type | None, str]:
    try:
        s = _resolve_aliases(text.lstrip(), aliases)
        t, j = _type_at(s, 0)
        t, j = _ir_function_suffix(s, t, 0, j)
        return t, s[j:].strip()
    except (_Fail, RecursionError):
        return None, text
