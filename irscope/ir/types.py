"""Parsed types: the text of an MLIR or LLVM IR type as immutable data.

An :class:`~irscope.ir.model.Op` keeps its types as text (``Op.types``); this module
turns such text into :class:`Type` objects: ``tensor<128x64xf16, #blocked>`` is a
:class:`TensorType` with shape ``(128, 64)``, element ``f16`` and encoding ref
``#blocked``. It reads the builtin, Triton (``tt``/``ttg``/``triton_gpu``) and LLVM
dialect types, and LLVM IR types (``ptr addrspace(3)``, ``<4 x float>``, ``{ i32, i32 }``).

Pure functions over text, standard library only. Nothing here raises on input
text: what is not understood becomes an :class:`OpaqueType` that keeps the text.
Types are frozen and hashable, so text -> type is memoised (``lru_cache``):
a module prints the same few dozen type texts thousands of times.

Equality ignores ``raw`` (the text as written) and the spelling (``flavor``,
``dialect``): ``tensor<4xf32,#blocked>`` equals ``tensor<4xf32, #blocked>`` and
``!llvm.ptr<1>`` equals LLVM IR ``ptr addrspace(1)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from math import prod
from typing import Mapping

from irscope import robust

from ._scan import _STRING_RE, _blank, _open_count, matching, split_top

__all__ = [
    "ArrayType", "FunctionType", "MemDescType", "OpTypes", "OpaqueType", "PointerType",
    "ScalarType", "StructType", "TensorType", "TokenType", "Type", "VectorType", "VoidType",
    "op_types", "parse_leading_type", "parse_op_types", "parse_type",
]


class Type:
    """Base of every parsed type. ``raw`` is the text as written; ``str()`` gives a
    normalised form of it; :meth:`short` a compact one for node labels."""

    __slots__ = ()
    raw: str

    def short(self) -> str:
        """A compact form for labels (``128x64xf16`` for a tensor); ``str()`` by default."""
        return str(self)


def _raw():
    # Equal types printed with different spacing compare equal: raw is not compared.
    return field(default="", compare=False, repr=False)


def _spelling(default: str):
    # How a type is spelled (!llvm.ptr<1> or LLVM IR ptr addrspace(1); !tt.memdesc or
    # !ttg.memdesc) is kept for printing, but is no part of the type's identity.
    return field(default=default, compare=False)


def _inner(t: "Type") -> str:
    """``t`` as printed inside an LLVM dialect type, which drops the nested types'
    ``!llvm.`` prefix: ``!llvm.struct<(ptr<1>, i32)>``."""
    s = str(t)
    return s[6:] if s.startswith("!llvm.") else s


def _dims(shape) -> str:
    return "".join(("?" if d is None else str(d)) + "x" for d in shape)


@dataclass(frozen=True, slots=True)
class ScalarType(Type):
    """An integer, float, ``index`` or ``none`` type: ``i32``, ``bf16``,
    ``f8E4M3FN``, LLVM IR ``float``/``half``/``double``."""

    name: str
    """As written (``f32``, ``float``, ``ui1``)."""
    bits: int | None
    """Width in bits; None for ``index`` (target dependent), 0 for ``none``."""
    kind: str
    """``int``, ``float``, ``index`` or ``none``."""
    raw: str = _raw()

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class PointerType(Type):
    """``!tt.ptr<f16>``, ``!tt.ptr<f16, 3>``, ``!llvm.ptr<1>``, ``!llvm.ptr``, LLVM IR
    ``ptr addrspace(3)``, ``ptr``."""

    pointee: Type | None
    """The pointee of a Triton pointer; None for opaque (LLVM) pointers."""
    address_space: int
    """Triton pointers default to 1 (global), LLVM pointers to 0."""
    flavor: str = _spelling("tt")
    """How it is printed: ``tt`` (``!tt.ptr<..>``), ``llvm`` (``!llvm.ptr<..>``) or
    ``ir`` (LLVM IR ``ptr addrspace(N)``)."""
    raw: str = _raw()

    def __str__(self) -> str:
        n = self.address_space
        if self.flavor == "tt":
            return f"!tt.ptr<{self.pointee}>" if n == 1 else f"!tt.ptr<{self.pointee}, {n}>"
        if self.flavor == "llvm":
            inner = ", ".join(([_inner(self.pointee)] if self.pointee is not None else []) + ([str(n)] if n else []))
            return f"!llvm.ptr<{inner}>" if inner else "!llvm.ptr"
        return f"ptr addrspace({n})" if n else "ptr"

    def short(self) -> str:
        if self.pointee is not None:
            return f"ptr<{self.pointee.short()}>" if self.address_space == 1 else \
                f"ptr<{self.pointee.short()}, {self.address_space}>"
        return f"ptr<{self.address_space}>" if self.address_space else "ptr"


def _encoding_text(ref: str | None, aliases: Mapping[str, str] | None) -> str | None:
    if ref is not None and aliases and ref in aliases:
        return aliases[ref]
    return ref


_decoder = None


def _decode(ref: str | None, aliases: Mapping[str, str] | None):
    global _decoder
    if ref is None:
        return None
    if _decoder is None:  # on first use: showing a stage's text needs no layouts
        from irscope.ir.layouts import decode_encoding
        _decoder = decode_encoding
    return _decoder(ref, aliases)


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """``tensor<128x64xf16, #blocked>``, ``tensor<256x!tt.ptr<f32>>``, ``tensor<?x4xi32>``,
    ``tensor<64xf32, #ttg.slice<{dim = 1, parent = #mma}>>``."""

    shape: tuple[int | None, ...]
    """Dimensions; None for a dynamic one (``?``)."""
    element: Type
    encoding_ref: str | None = None
    """The encoding as written: an alias (``#blocked``) or inline text
    (``#ttg.slice<{...}>``); None when the tensor has none (TTIR)."""
    raw: str = _raw()

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int | None:
        """Number of elements; None when a dimension is dynamic."""
        return None if None in self.shape else prod(self.shape)  # type: ignore[arg-type]

    def encoding_text(self, aliases: Mapping[str, str] | None = None) -> str | None:
        """The encoding with its alias resolved through ``aliases`` (``Module.encodings``):
        ``#blocked`` -> ``#ttg.blocked<{...}>``; the ref itself when it is inline or
        unknown; None when there is no encoding."""
        return _encoding_text(self.encoding_ref, aliases)

    def encoding(self, aliases: Mapping[str, str] | None = None):
        """The decoded encoding (:func:`irscope.ir.layouts.decode_encoding`), or None
        when the tensor has none."""
        return _decode(self.encoding_ref, aliases)

    def __str__(self) -> str:
        enc = f", {self.encoding_ref}" if self.encoding_ref else ""
        return f"tensor<{_dims(self.shape)}{self.element}{enc}>"

    def short(self) -> str:
        return f"{_dims(self.shape)}{self.element.short()}"


@dataclass(frozen=True, slots=True)
class MemDescType(Type):
    """A Triton memory descriptor: ``!ttg.memdesc<3x128x64xf16, #shared, #smem, mutable>``
    (``!tt.memdesc`` / ``!triton_gpu`` spellings of Triton 3.2 too), optionally with
    an allocation shape (``..., mutable, 3x128x64>``)."""

    shape: tuple[int | None, ...]
    element: Type
    encoding_ref: str | None
    """Layout alias or inline text (``#shared``, ``#ttg.nvmma_shared<{...}>``)."""
    memory_space: str | None
    """As written: ``#smem``, ``#ttg.shared_memory``, ``#ttng.tensor_memory``, ``#tmem``."""
    mutable: bool = False
    alloc_shape: tuple[int | None, ...] = ()
    """Shape of the whole allocation; equals ``shape`` unless printed (subviews)."""
    dialect: str = _spelling("ttg")
    """Prefix as printed: ``ttg``, ``tt`` or ``triton_gpu``."""
    raw: str = _raw()

    def encoding_text(self, aliases: Mapping[str, str] | None = None) -> str | None:
        """The layout with its alias resolved (see :meth:`TensorType.encoding_text`)."""
        return _encoding_text(self.encoding_ref, aliases)

    def encoding(self, aliases: Mapping[str, str] | None = None):
        """The decoded layout (:func:`irscope.ir.layouts.decode_encoding`), or None."""
        return _decode(self.encoding_ref, aliases)

    def memory_space_text(self, aliases: Mapping[str, str] | None = None) -> str | None:
        """The memory space with its alias resolved: ``#smem`` -> ``#ttg.shared_memory``."""
        return _encoding_text(self.memory_space, aliases)

    def memory_kind(self, aliases: Mapping[str, str] | None = None) -> str:
        """``shared``, ``tensor`` (Blackwell tensor memory) or '' when unknown."""
        text = self.memory_space_text(aliases) or ""
        if "shared_memory" in text or text == "#smem":
            return "shared"
        if "tensor_memory" in text or text == "#tmem":
            return "tensor"
        return ""

    def __str__(self) -> str:
        parts = [f"{_dims(self.shape)}{self.element}"]
        parts += [p for p in (self.encoding_ref, self.memory_space) if p]
        if self.mutable:
            parts.append("mutable")
        if self.alloc_shape != self.shape:
            parts.append(_dims(self.alloc_shape)[:-1])
        return f"!{self.dialect}.memdesc<{', '.join(parts)}>"

    def short(self) -> str:
        return f"memdesc<{_dims(self.shape)}{self.element.short()}>"


@dataclass(frozen=True, slots=True)
class VectorType(Type):
    """``vector<4xf32>`` (MLIR), ``<4 x float>`` (LLVM IR), ``!llvm.vec<4 x ptr>``."""

    count: int
    """Number of elements (the product of the dimensions of an n-d vector)."""
    element: Type
    shape: tuple[int, ...] = ()
    """Dimensions of an MLIR vector (``(count,)`` for the usual 1-d one)."""
    flavor: str = _spelling("mlir")
    """``mlir``, ``ir`` or ``llvm`` (``!llvm.vec``)."""
    raw: str = _raw()

    def __str__(self) -> str:
        if self.flavor == "ir":
            return f"<{self.count} x {self.element}>"
        if self.flavor == "llvm":
            return f"!llvm.vec<{self.count} x {_inner(self.element)}>"
        return f"vector<{_dims(self.shape or (self.count,))}{self.element}>"


@dataclass(frozen=True, slots=True)
class ArrayType(Type):
    """``[4 x i32]`` (LLVM IR), ``!llvm.array<4 x i32>``."""

    count: int
    element: Type
    flavor: str = _spelling("ir")
    """``ir`` or ``llvm``."""
    raw: str = _raw()

    def __str__(self) -> str:
        if self.flavor == "llvm":
            return f"!llvm.array<{self.count} x {_inner(self.element)}>"
        return f"[{self.count} x {self.element}]"


@dataclass(frozen=True, slots=True)
class StructType(Type):
    """``{ float, float }``, ``<{ i8, i32 }>`` (LLVM IR), ``!llvm.struct<(f32, f32)>``,
    ``!llvm.struct<packed (i8)>``, ``!llvm.struct<"name", (...)>``."""

    fields: tuple[Type, ...]
    packed: bool = False
    name: str | None = None
    """Name of an identified LLVM dialect struct."""
    flavor: str = _spelling("ir")
    """``ir`` or ``llvm``."""
    raw: str = _raw()

    def __str__(self) -> str:
        if self.flavor == "llvm":
            body = ", ".join(map(_inner, self.fields))
            head = (f'"{self.name}", ' if self.name is not None else "") + ("packed " if self.packed else "")
            return f"!llvm.struct<{head}({body})>"
        body = ", ".join(map(str, self.fields))
        inner = f"{{ {body} }}" if body else "{}"
        return f"<{inner}>" if self.packed else inner

    def short(self) -> str:
        # Triton's LLVM structs hold one field per register: runs of equal fields
        # are folded so a label stays readable (struct<(f32 x 64)>).
        runs: list[list] = []
        for f in self.fields:
            s = f.short()
            if runs and runs[-1][0] == s:
                runs[-1][1] += 1
            else:
                runs.append([s, 1])
        return "struct<(" + ", ".join(s if n == 1 else f"{s} x {n}" for s, n in runs) + ")>"


@dataclass(frozen=True, slots=True)
class FunctionType(Type):
    """``(i32, f32) -> f32``, ``(tensor<..>) -> (i32, i32)`` (MLIR); ``i32 (ptr, ...)``
    (LLVM IR); ``!llvm.func<void (i32)>``."""

    inputs: tuple[Type, ...]
    results: tuple[Type, ...]
    variadic: bool = False
    flavor: str = _spelling("mlir")
    """``mlir``, ``ir`` or ``llvm``."""
    raw: str = _raw()

    def __str__(self) -> str:
        show = _inner if self.flavor == "llvm" else str
        args = ", ".join([show(t) for t in self.inputs] + (["..."] if self.variadic else []))
        if self.flavor in ("ir", "llvm"):
            ret = show(self.results[0]) if self.results else "void"
            text = f"{ret} ({args})"
            return f"!llvm.func<{text}>" if self.flavor == "llvm" else text
        res = str(self.results[0]) if len(self.results) == 1 and not isinstance(self.results[0], FunctionType) \
            else "(" + ", ".join(map(str, self.results)) + ")"
        return f"({args}) -> {res}"


@dataclass(frozen=True, slots=True)
class VoidType(Type):
    """LLVM IR ``void``, ``!llvm.void``."""

    flavor: str = _spelling("ir")
    raw: str = _raw()

    def __str__(self) -> str:
        return "!llvm.void" if self.flavor == "llvm" else "void"


@dataclass(frozen=True, slots=True)
class TokenType(Type):
    """A token: ``!ttg.async.token``, ``!llvm.token``, LLVM IR ``token``."""

    raw: str = ""

    def __str__(self) -> str:
        return self.raw


@dataclass(frozen=True, slots=True)
class OpaqueType(Type):
    """A type this module does not model (``!tt.tensordesc<...>``, ``memref<...>``,
    ``label``...) or text it does not understand; ``raw`` keeps the text."""

    raw: str = ""

    def __str__(self) -> str:
        return self.raw


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
_MEMDESC = {"!ttg.memdesc": "ttg", "!tt.memdesc": "tt", "!triton_gpu.memdesc": "triton_gpu"}
_TT_PTR = ("!tt.ptr", "!ptr")
_LLVM_PREFIX = "!llvm."
_TOKEN_NAMES = ("token", "!llvm.token")


def _ws(s: str, i: int) -> int:
    return _WS_RE.match(s, i).end()


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
        return ArrayType(int(m.group(2)), elem, "ir", s[i:j]), j
    if c == "{":
        fields, j = _type_list(s, i + 1, "}", depth)
        return StructType(fields, False, None, "ir", s[i:j]), j
    if c == "<":
        if s.startswith("{", _ws(s, i + 1)):  # packed struct <{ ... }>
            fields, j = _type_list(s, _ws(s, i + 1) + 1, "}", depth)
            j = _expect(s, j, ">")
            return StructType(fields, True, None, "ir", s[i:j]), j
        m = _COUNT_RE.match(s, i + 1)
        if not m or m.group(1):  # scalable LLVM vectors are left opaque
            raise _Fail
        elem, j = _type_at(s, m.end(), depth + 1)
        j = _expect(s, j, ">")
        return VectorType(int(m.group(2)), elem, (), "ir", s[i:j]), j
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
        return _llvm(s, i, name[len(_LLVM_PREFIX):], j, depth, "llvm")
    if name in ("ptr", "struct", "array", "void", "vec", "func"):
        # inside LLVM dialect types the '!llvm.' prefix is dropped: struct<(ptr<1>, i32)>
        return _llvm(s, i, name, j, depth, "llvm" if lt else "ir")
    if lt:
        if name in ("tensor", "vector"):
            return _shaped(s, i, name, j + 1, depth)
        if name in _TT_PTR:
            pointee, k = _type_at(s, j + 1, depth + 1)
            space = 1
            k = _ws(s, k)
            if s.startswith(",", k):
                mi = _INT_LIT_RE.match(s, k + 1)
                if not mi:
                    raise _Fail
                space, k = int(mi.group(1)), mi.end()
            k = _expect(s, k, ">")
            return PointerType(pointee, space, "tt", s[i:k]), k
        if name in _MEMDESC:
            return _memdesc(s, i, _MEMDESC[name], j + 1, depth)
        k = matching(s, j)
        return OpaqueType(s[i:k]), k
    if name in _TOKEN_NAMES or (name.startswith("!") and name.endswith(".token")):
        return TokenType(name), j
    if name in ("label", "metadata") or name.startswith("!"):
        return OpaqueType(name), j
    raise _Fail


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
    return FunctionType(inputs, results, variadic, "mlir", s[i:k]), k


def _shaped(s: str, i: int, name: str, j: int, depth: int) -> tuple[Type, int]:
    """``tensor<...>`` / ``vector<...>`` with ``j`` just after the '<'."""
    m = _DIMS_RE.match(s, j)
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
        return VectorType(prod(shape), elem, shape, "mlir", s[i:k]), k  # type: ignore[arg-type]
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
        if flavor == "ir":
            m = _ADDRSPACE_RE.match(s, j)
            if m:
                return PointerType(None, int(m.group(1)), "ir", s[i:m.end()]), m.end()
            return PointerType(None, 0, "ir", s[i:j]), j
        if not lt:
            return PointerType(None, 0, "llvm", s[i:j]), j
        mi = _INT_LIT_RE.match(s, j + 1)
        if mi:  # opaque pointer in an address space: !llvm.ptr<3>
            k = _expect(s, mi.end(), ">")
            return PointerType(None, int(mi.group(1)), "llvm", s[i:k]), k
        pointee, k = _type_at(s, j + 1, depth + 1)  # typed pointer of old LLVM: ptr<f32, 3>
        k = _ws(s, k)
        space = 0
        if s.startswith(",", k):
            mi = _INT_LIT_RE.match(s, k + 1)
            if not mi:
                raise _Fail
            space, k = int(mi.group(1)), mi.end()
        k = _expect(s, k, ">")
        return PointerType(pointee, space, "llvm", s[i:k]), k
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
        return StructType(fields, packed, sname, "llvm", s[i:k]), k
    if name in ("array", "vec"):
        m = _COUNT_RE.match(s, j + 1)
        if not m or m.group(1):
            raise _Fail
        elem, k = _type_at(s, m.end(), depth + 1)
        k = _expect(s, k, ">")
        if name == "array":
            return ArrayType(int(m.group(2)), elem, "llvm", s[i:k]), k
        return VectorType(int(m.group(2)), elem, (), "llvm", s[i:k]), k
    if name == "func":
        ret, k = _type_at(s, j + 1, depth + 1)
        k = _ws(s, k)
        if not s.startswith("(", k):
            raise _Fail
        inputs, variadic, k = _args(s, k, depth)
        k = _expect(s, k, ">")
        results = () if isinstance(ret, VoidType) else (ret,)
        return FunctionType(inputs, results, variadic, "llvm", s[i:k]), k
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
    return FunctionType(inputs, results, variadic, "ir", s[i:k]), k


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


@lru_cache(maxsize=16384)
def _parse(text: str) -> Type:
    try:
        t, j = _type_at(text, 0)
        t, j = _ir_function_suffix(text, t, 0, j)
        if _ws(text, j) != len(text):
            return OpaqueType(text)
        return t
    except (_Fail, RecursionError):
        return OpaqueType(text)
    except Exception:  # a parser bug must not reach the user as a traceback
        if robust.STRICT:
            raise
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
    try:
        s = _resolve_aliases(text.lstrip(), aliases)
        t, j = _type_at(s, 0)
        t, j = _ir_function_suffix(s, t, 0, j)
        return t, s[j:].strip()
    except (_Fail, RecursionError):
        return None, text
    except Exception:
        if robust.STRICT:
            raise
        return None, text


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
    return tuple(_parse(p) for p in split_top(text))


@lru_cache(maxsize=8192)
def _op_types(text: str, num_results: int | None) -> OpTypes:
    try:
        return _op_types_raw(text, num_results)
    except Exception:  # a parser bug must not reach the user as a traceback
        if robust.STRICT:
            raise
        return OpTypes((OpaqueType(text),), (), text, "")


def _op_types_raw(s: str, num_results: int | None) -> OpTypes:
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
