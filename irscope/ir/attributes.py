"""Parsed MLIR attributes: an op's attribute dictionary as typed values.

``{axis = 1 : i32, isAsync = true}`` (``Op.attributes``), the property form
``<{axis = 0 : i32}>``, a function's ``{noinline = false}`` and the module's
``{"ttg.num-warps" = 4 : i32, ...}`` (quoted keys) all read into
``dict[str, AttrValue]``: ``{"axis": IntAttr(1, i32), "isAsync": BoolAttr(True)}``.

Every value has ``.value`` (a plain Python value) and ``.raw`` (its text). What is
not modelled (encodings ``#ttg.blocked<..>``, enums ``#arith.fastmath<none>``,
symbol refs ``@foo``, affine maps, hex blobs ``dense<"0x..">``) is a
:class:`RawAttr`. Pure functions, standard library only; never raises on input.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Union

from irscope import text_guard

from .bracket_scan import unescape, matching, split_top, top_level
from .types import OpaqueType, ScalarType, TensorType, Type, VectorType, parse_type

__all__ = [
    "AttrValue", "ArrayAttr", "BoolAttr", "DenseAttr", "DictAttr", "FloatAttr", "IntAttr",
    "RawAttr", "StringAttr", "TypeAttr", "UnitAttr", "parse_attr_value", "parse_attributes",
]


def _raw():
    return field(default="", compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class IntAttr:
    """``16 : i32``, ``-1``, ``0x10 : i64``, ``1 : ui1`` (no type printed means i64)."""

    value: int
    type: Type | None = None
    raw: str = _raw()


@dataclass(frozen=True, slots=True)
class FloatAttr:
    """``1.5 : f32``, ``2.000000e+00 : f64``, ``0xFF800000 : f32`` (bits: -inf)."""

    value: float
    type: Type | None = None
    raw: str = _raw()


@dataclass(frozen=True, slots=True)
class BoolAttr:
    """``true`` / ``false``."""

    value: bool
    raw: str = _raw()


@dataclass(frozen=True, slots=True)
class StringAttr:
    """``"cuda:90"``; ``value`` has the escapes (``\\22``, ``\\0A``) decoded."""

    value: str
    type: Type | None = None
    raw: str = _raw()


@dataclass(frozen=True, slots=True)
class UnitAttr:
    """A bare key (``{omitUniformHint}``) or ``unit``; ``value`` is True."""

    raw: str = ""

    @property
    def value(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class TypeAttr:
    """A type used as a value: ``tt.pointee_type = f32``, ``function_type = (i32) -> ()``."""

    type: Type
    raw: str = _raw()

    @property
    def value(self) -> Type:
        return self.type


@dataclass(frozen=True, slots=True)
class ArrayAttr:
    """``[1, 2]``, ``[#a, "s"]``, and dense arrays ``array<i32: 1, 2>`` (then
    ``element_type`` is set and the items are typed with it)."""

    items: tuple["AttrValue", ...]
    element_type: Type | None = None
    raw: str = _raw()

    @property
    def value(self) -> list:
        return [a.value for a in self.items]


@dataclass(frozen=True, slots=True)
class DenseAttr:
    """``dense<0.000000e+00> : tensor<256xf32>`` (a splat), ``dense<[1, 2]> : tensor<2xi32>``.

    ``values`` is the literal as nested tuples of Python scalars (one scalar for a
    splat); hex floats (``dense<0xFF800000>``) are decoded with the element type."""

    values: Any
    splat: bool
    type: Type | None = None
    raw: str = _raw()

    @property
    def value(self) -> Any:
        """The splat scalar, or nested lists."""
        return self.values if self.splat else _lists(self.values)


@dataclass(frozen=True, slots=True)
class DictAttr:
    """A nested dictionary ``{a = 1, b}`` (LLVM argument attributes, ...)."""

    entries: tuple[tuple[str, "AttrValue"], ...]
    raw: str = _raw()

    @property
    def value(self) -> dict:
        return {k: v.value for k, v in self.entries}


@dataclass(frozen=True, slots=True)
class RawAttr:
    """A value this module does not model; ``value`` is its text."""

    raw: str = ""

    @property
    def value(self) -> str:
        return self.raw


AttrValue = Union[IntAttr, FloatAttr, BoolAttr, StringAttr, UnitAttr, TypeAttr, ArrayAttr,
                  DenseAttr, DictAttr, RawAttr]


def _lists(v):
    return [_lists(x) for x in v] if isinstance(v, tuple) else v


# -- literals -------------------------------------------------------------------------

_INT_RE = re.compile(r"[-+]?\d+")
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT_RE = re.compile(r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|inf|nan)")
_KEY_RE = re.compile(r"[A-Za-z_][\w$.\-]*")
def _string_end(s: str, i: int) -> int:
    """Index after the string literal opening at ``s[i] == '"'``; -1 if unclosed."""
    j = i + 1
    while True:
        j = s.find('"', j)
        if j < 0:
            return -1
        k = j - 1
        while s[k] == "\\":
            k -= 1
        if (j - 1 - k) % 2 == 0:  # an even run of backslashes: the quote is real
            return j + 1
        j += 1


def _float_bits(bits: int, ty: Type | None) -> float | None:
    """The float whose bit pattern is ``bits`` in ``ty`` (f16, bf16, f32, f64)."""
    if not isinstance(ty, ScalarType) or ty.kind != "float":
        return None
    width = ty.bits
    try:
        if width == 32 and ty.name not in ("tf32",):
            return struct.unpack("<f", struct.pack("<I", bits))[0]
        if width == 64:
            return struct.unpack("<d", struct.pack("<Q", bits))[0]
        if width == 16 and ty.name in ("f16", "half"):
            return struct.unpack("<e", struct.pack("<H", bits))[0]
        if width == 16 and ty.name in ("bf16", "bfloat"):
            return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    except struct.error:  # more bits than the width holds
        return None
    return None


def _element(ty: Type | None) -> Type | None:
    return ty.element if isinstance(ty, (TensorType, VectorType)) else ty


def _scalar(text: str, ty: Type | None):
    """A scalar literal as Python (typed by the element type ``ty``); raises ValueError."""
    if text in ("true", "false"):
        return text == "true"
    is_float = isinstance(ty, ScalarType) and ty.kind == "float"
    if _HEX_RE.fullmatch(text):
        if is_float:
            v = _float_bits(int(text, 16), ty)
            if v is None:
                raise ValueError(text)
            return v
        return int(text, 16)
    if _INT_RE.fullmatch(text):
        return float(text) if is_float else int(text)
    if _FLOAT_RE.fullmatch(text):
        return float(text)
    raise ValueError(text)


def _dense_literal(text: str, ty: Type | None, depth: int = 0):
    """``[[1, 2], [3, 4]]`` or a scalar, as nested tuples; raises ValueError."""
    text = text.strip()
    if depth > 32:
        raise ValueError(text)
    if text.startswith("["):
        if not text.endswith("]"):
            raise ValueError(text)
        return tuple(_dense_literal(p, ty, depth + 1) for p in split_top(text[1:-1]))
    return _scalar(text, ty)


# -- values ---------------------------------------------------------------------------

def parse_attr_value(text: str) -> AttrValue:
    """One attribute value (``16 : i32``, ``[1, 2]``, ``dense<0.0> : tensor<4xf32>``,
    ``"s"``, ``#ttg.blocked<{...}>``...) as a typed :data:`AttrValue`; a
    :class:`RawAttr` for what is not modelled. Never raises."""
    if not isinstance(text, str):
        return RawAttr(str(text))
    return _value(text.strip())


@lru_cache(maxsize=8192)
@text_guard.never_raise(lambda text: RawAttr(text), pause_gc=False)  # a reader bug: the text kept raw
def _value(text: str) -> AttrValue:
    return _value_raw(text, 0)


def _value_raw(t: str, depth: int) -> AttrValue:
    if depth > 32:
        return RawAttr(t)
    v, ty = t, None
    colon = top_level(t)[2]
    if colon >= 0:
        v, tytext = t[:colon].strip(), t[colon + 3:].strip()
        ty = parse_type(tytext)
        if isinstance(ty, OpaqueType):
            return RawAttr(t)
    if not v:
        return RawAttr(t)
    c = v[0]
    if v in ("true", "false"):
        return BoolAttr(v == "true", t)
    if v == "unit":
        return UnitAttr(t)
    if c == '"':
        if _string_end(v, 0) == len(v):
            return StringAttr(unescape(v[1:-1]), ty, t)
        return RawAttr(t)
    if c.isdigit() or c in "-+" or v in ("inf", "nan"):
        try:
            x = _scalar(v, ty)
        except ValueError:
            return RawAttr(t)
        if isinstance(x, float):
            return FloatAttr(x, ty, t)
        return IntAttr(x, ty, t)
    if c == "[" and ty is None:
        if matching(v, 0) != len(v):
            return RawAttr(t)
        return ArrayAttr(tuple(_value_raw(p, depth + 1) for p in split_top(v[1:-1])), None, t)
    if c == "{" and ty is None:
        if matching(v, 0) != len(v):
            return RawAttr(t)
        return DictAttr(_entries(v[1:-1], depth + 1), t)
    if v.startswith("array<") and ty is None and matching(v, 5) == len(v):
        return _dense_array(v, t)
    if v.startswith("dense<") and matching(v, 5) == len(v):
        body = v[6:-1].strip()
        if body.startswith('"') or not body:  # hex blob / empty: not decoded
            return RawAttr(t)
        try:
            values = _dense_literal(body, _element(ty))
        except ValueError:
            return RawAttr(t)
        return DenseAttr(values, not body.startswith("["), ty, t)
    if ty is None and c not in "#@":
        tt = parse_type(v)
        if not isinstance(tt, OpaqueType):
            return TypeAttr(tt, t)
    return RawAttr(t)


def _dense_array(v: str, raw: str) -> AttrValue:
    """``array<i32: 1, 2>`` / ``array<f32>``."""
    body = v[6:-1]
    head, sep, rest = body.partition(":")
    et = parse_type(head.strip())
    if isinstance(et, OpaqueType):
        return RawAttr(raw)
    items = []
    for p in split_top(rest) if sep else ():
        try:
            x = _scalar(p, et)
        except ValueError:
            return RawAttr(raw)
        items.append(FloatAttr(x, et, p) if isinstance(x, float) else
                     BoolAttr(x, p) if isinstance(x, bool) else IntAttr(x, et, p))
    return ArrayAttr(tuple(items), et, raw)


# -- dictionaries ---------------------------------------------------------------------

def _entries(inner: str, depth: int) -> tuple[tuple[str, AttrValue], ...]:
    out: list[tuple[str, AttrValue]] = []
    for entry in split_top(inner):
        if entry.startswith('"'):
            end = _string_end(entry, 0)
            if end < 0:
                out.append((entry, RawAttr(entry)))
                continue
            key, rest = unescape(entry[1:end - 1]), entry[end:].strip()
        else:
            m = _KEY_RE.match(entry)
            if not m:
                out.append((entry, RawAttr(entry)))
                continue
            key, rest = m.group(), entry[m.end():].strip()
        if not rest:
            out.append((key, UnitAttr(key)))
        elif rest.startswith("="):
            out.append((key, _value_raw(rest[1:].strip(), depth)))
        else:  # 'key junk': keep the text, under the whole entry
            out.append((entry, RawAttr(entry)))
    return tuple(out)


@lru_cache(maxsize=4096)
@text_guard.never_raise(lambda text: (), pause_gc=False)  # a reader bug: no attributes read
def _attributes(text: str) -> tuple[tuple[str, AttrValue], ...]:
    s = text.strip()
    # the module line's 'module attributes {...}', a function's 'attributes {...}'
    for word in ("module", "attributes"):
        if s.startswith(word) and s[len(word):len(word) + 1] in (" ", "{"):
            s = s[len(word):].lstrip()
    if s.startswith("<{"):
        end = matching(s, 0)
        inner = s[2:end - 2] if s[end - 2:end] == "}>" else s[2:]
    elif s.startswith("{"):
        end = matching(s, 0)
        inner = s[1:end - 1] if s[end - 1:end] == "}" else s[1:]
    else:
        return ()  # not an MLIR dictionary (LLVM IR function attributes...)
    return _entries(inner, 0)


def parse_attributes(text: str) -> dict[str, AttrValue]:
    """The attribute dictionary ``text`` as ``{name: value}``.

    Reads ``{a = 1 : i32, b, c = "s"}``, the property form ``<{...}>``, quoted keys
    (``{"ttg.num-warps" = 4 : i32}``) and a leading ``module attributes`` /
    ``attributes``. Text that is no MLIR dictionary gives ``{}``; an entry it cannot
    split into key and value is kept as a :class:`RawAttr` under its whole text.
    A key printed twice keeps its last value. Never raises.
    """
    if not isinstance(text, str) or not text:
        return {}
    return dict(_attributes(text))
