"""The type model: immutable records of MLIR and LLVM IR types (read by
:mod:`irscope.ir.type_parser`; the public names are in :mod:`irscope.ir.types`).

Equality ignores ``raw`` (the text as written) and the spelling (``flavor``,
``dialect``): ``tensor<4xf32,#blocked>`` equals ``tensor<4xf32, #blocked>`` and
``!llvm.ptr<1>`` equals LLVM IR ``ptr addrspace(1)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Mapping


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


# How a type is spelled: MLIR's builtin types, the LLVM dialect's (``!llvm.ptr<1>``)
# or LLVM IR's (``ptr addrspace(1)``). These name spellings, not stages.
FLAVOR_MLIR = "mlir"
FLAVOR_LLVM = "llvm"
FLAVOR_IR = "ir"


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
        if self.flavor == FLAVOR_LLVM:
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
    """The decoded encoding ``ref``; the callers look in the module memo first."""
    global _decoder
    if ref is None:
        return None
    if _decoder is None:  # on first use: showing a stage's text needs no layouts
        from irscope.ir.layouts import decode_encoding
        _decoder = decode_encoding
    return _decoder(ref, aliases)


def _encoding(self, aliases: Mapping[str, str] | None = None):
    """The decoded encoding (:func:`irscope.ir.layouts.decode_encoding`) of the type's
    ``encoding_ref``, or None when it has none (a tensor's and a memdesc's method)."""
    # A module's AliasTable memo first, here rather than in _decode: a TTGIR asks this
    # of hundreds of types, and the hit then costs no second call (decode_encoding
    # fills the memo).
    memo, ref = getattr(aliases, "decoded", None), self.encoding_ref
    if type(memo) is dict and type(ref) is str:
        got = memo.get(ref)
        if got is not None:
            return got
    return _decode(ref, aliases)


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
        return None if None in self.shape else prod(self.shape)  # type: ignore[arg-type]  # no None dims: checked on the left

    def encoding_text(self, aliases: Mapping[str, str] | None = None) -> str | None:
        """The encoding with its alias resolved through ``aliases`` (``Module.encodings``):
        ``#blocked`` -> ``#ttg.blocked<{...}>``; the ref itself when it is inline or
        unknown; None when there is no encoding."""
        return _encoding_text(self.encoding_ref, aliases)

    encoding = _encoding

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
    """Prefix as printed: ``ttg``, ``tt`` or ``triton_gpu``; '' when the op's printer
    left it out (``ttg.async_copy_global_to_local ... -> <64x64xf16, #shared, ...>``)."""
    raw: str = _raw()

    def encoding_text(self, aliases: Mapping[str, str] | None = None) -> str | None:
        """The layout with its alias resolved (see :meth:`TensorType.encoding_text`)."""
        return _encoding_text(self.encoding_ref, aliases)

    encoding = _encoding

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
        head = f"!{self.dialect}.memdesc" if self.dialect else ""
        return f"{head}<{', '.join(parts)}>"

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
    flavor: str = _spelling(FLAVOR_MLIR)
    """``mlir``, ``ir`` or ``llvm`` (``!llvm.vec``)."""
    raw: str = _raw()

    def __str__(self) -> str:
        if self.flavor == FLAVOR_IR:
            return f"<{self.count} x {self.element}>"
        if self.flavor == FLAVOR_LLVM:
            return f"!llvm.vec<{self.count} x {_inner(self.element)}>"
        return f"vector<{_dims(self.shape or (self.count,))}{self.element}>"


@dataclass(frozen=True, slots=True)
class ArrayType(Type):
    """``[4 x i32]`` (LLVM IR), ``!llvm.array<4 x i32>``."""

    count: int
    element: Type
    flavor: str = _spelling(FLAVOR_IR)
    """``ir`` or ``llvm``."""
    raw: str = _raw()

    def __str__(self) -> str:
        if self.flavor == FLAVOR_LLVM:
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
    flavor: str = _spelling(FLAVOR_IR)
    """``ir`` or ``llvm``."""
    raw: str = _raw()

    def __str__(self) -> str:
        if self.flavor == FLAVOR_LLVM:
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
    flavor: str = _spelling(FLAVOR_MLIR)
    """``mlir``, ``ir`` or ``llvm``."""
    raw: str = _raw()

    def __str__(self) -> str:
        show = _inner if self.flavor == FLAVOR_LLVM else str
        args = ", ".join([show(t) for t in self.inputs] + (["..."] if self.variadic else []))
        if self.flavor in (FLAVOR_IR, FLAVOR_LLVM):
            ret = show(self.results[0]) if self.results else "void"
            text = f"{ret} ({args})"
            return f"!llvm.func<{text}>" if self.flavor == FLAVOR_LLVM else text
        res = str(self.results[0]) if len(self.results) == 1 and not isinstance(self.results[0], FunctionType) \
            else "(" + ", ".join(map(str, self.results)) + ")"
        return f"({args}) -> {res}"


@dataclass(frozen=True, slots=True)
class VoidType(Type):
    """LLVM IR ``void``, ``!llvm.void``."""

    flavor: str = _spelling(FLAVOR_IR)
    raw: str = _raw()

    def __str__(self) -> str:
        return "!llvm.void" if self.flavor == FLAVOR_LLVM else "void"


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
