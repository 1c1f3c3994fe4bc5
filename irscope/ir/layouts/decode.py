"""TTGIR layout attribute text -> typed encoding record; never raises.

Handles both spellings of the dialects (``#ttg.`` since Triton 3.3,
``#triton_gpu.`` in 3.0-3.2; ``#ttng.`` / ``#triton_nvidia_gpu.``), alias
references such as ``#blocked1`` resolved through the module's alias table,
and nested parents (slice / dot_op) resolved recursively.  Anything that does
not parse, or parses into something we do not know, becomes
:class:`UnknownEncoding` with a reason.
"""

from __future__ import annotations

import functools

import re
from collections.abc import Callable, Mapping

from irscope.compiler.dialects import DIALECT_RENAMES
from irscope.text_guard import never_raise

from .model import (
    AmdMfmaEncoding,
    AmdRotatingSharedEncoding,
    AmdWmmaEncoding,
    BlockedEncoding,
    CgaLayout,
    DotOperandEncoding,
    Encoding,
    LinearEncoding,
    MemorySpace,
    NvidiaMmaEncoding,
    NvmmaSharedEncoding,
    PaddedSharedEncoding,
    SharedLinearEncoding,
    SliceEncoding,
    SwizzledSharedEncoding,
    TensorMemoryEncoding,
    TensorMemoryScalesEncoding,
    UnknownEncoding,
)

from .attr_parser import MAX_DEPTH, Attr, ParseError, Parser, Ref, flat_attr

__all__ = ["decode_encoding", "parse_aliases"]

# Old and new dialect prefixes mean the same thing (Triton 3.3's renames: the compiler layer's table).
_DIALECTS = {**{new: new for new in DIALECT_RENAMES.values()}, **DIALECT_RENAMES}
_MAX_TEXT = 200_000
_ALIAS_LINE = re.compile(r"^\s*(#[A-Za-z_][\w$.-]*)\s*=\s*(#.*?)\s*$")


def parse_aliases(module_text: str) -> dict[str, str]:
    """The ``#name = #dialect.attr<...>`` lines at the top of a TTGIR module, as a dict.

    ``loc`` aliases and anything that is not an attribute alias are skipped.
    """
    out: dict[str, str] = {}
    if not isinstance(module_text, str):
        return out
    for line in module_text.splitlines():
        m = _ALIAS_LINE.match(line)
        if m and not m.group(2).startswith("#loc"):
            out[m.group(1)] = m.group(2)
    return out


# ------------------------------------------------------------------ building
class _Bad(Exception):
    """A field is missing or of the wrong type."""


def _ints(v, name: str) -> tuple[int, ...]:
    if not isinstance(v, tuple) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise _Bad(f"{name} must be a list of integers")
    return v


def _int(v, name: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise _Bad(f"{name} must be an integer")
    return v


def _bool(v, name: str) -> bool:
    if not isinstance(v, bool):
        raise _Bad(f"{name} must be true or false")
    return v


def _bases(v, name: str) -> tuple[tuple[int, ...], ...]:
    if not isinstance(v, tuple):
        raise _Bad(f"{name} must be a list of bases")
    return tuple(_ints(b, name) for b in v)


def _opt(p: dict, key: str, conv: Callable):
    return conv(p[key], key) if key in p else None


def _need(p: dict, key: str, conv: Callable):
    if key not in p:
        raise _Bad(f"missing {key}")
    return conv(p[key], key)


def _cga(p: dict) -> CgaLayout | None:
    if "CGALayout" in p:
        return CgaLayout(bases=_bases(p["CGALayout"], "CGALayout"))
    if "CTAsPerCGA" in p or "CTASplitNum" in p or "CTAOrder" in p:
        return CgaLayout(
            ctas_per_cga=_opt(p, "CTAsPerCGA", _ints),
            cta_split_num=_opt(p, "CTASplitNum", _ints),
            cta_order=_opt(p, "CTAOrder", _ints),
        )
    return None


class _Builder:
    def __init__(self, aliases: Mapping[str, str] | None):
        self.aliases = aliases or {}

    def resolve(self, value, depth: int, seen: frozenset) -> Encoding:
        """A parsed parameter value that should be a layout (an alias or an inline attribute)."""
        if isinstance(value, Ref):
            if value.name in seen:
                raise _Bad(f"alias cycle through {value.name}")
            text = self.aliases.get(value.name)
            if not isinstance(text, str):
                raise _Bad(f"unknown alias {value.name}")
            if not seen:
                # The head of a chain (an alias alone, a slice's parent): what it gives
                # depends on its text and what that reaches, so it is decoded once for
                # all the slices and operands of one parent.
                return _decode_alias(value.name, text, depth + 1, _dependencies(text, self.aliases))
            return self.decode(text, depth + 1, seen | {value.name})
        if isinstance(value, Attr):
            return self.build(value, depth + 1, seen)
        raise _Bad("parent must be a layout")

    def decode(self, text: str, depth: int, seen: frozenset) -> Encoding:
        if depth > MAX_DEPTH:
            raise _Bad("layouts nested too deeply")
        node = flat_attr(text)
        if node is None:
            parser = Parser(text)
            node = parser.value(0) if parser.peek() == "#" else None
            if node is None:
                raise _Bad("not an attribute (expected '#')")
            if parser.peek() != "":
                raise _Bad(f"trailing text at offset {parser.i}")
        if isinstance(node, Ref):
            return self.resolve(node, depth, seen)
        return self.build(node, depth, seen)

    def build(self, a: Attr, depth: int, seen: frozenset) -> Encoding:
        dialect = _DIALECTS.get(a.dialect)
        if dialect is None:
            raise _Bad(f"unknown dialect {a.dialect!r}")
        maker = _MAKERS.get((dialect, a.name))
        if maker is None:
            raise _Bad(f"unknown encoding #{a.dialect}.{a.name}")
        return maker(self, a, a.params, depth, seen)


def _blocked(b, a, p, depth, seen):
    return BlockedEncoding(
        raw=a.text,
        size_per_thread=_need(p, "sizePerThread", _ints),
        threads_per_warp=_need(p, "threadsPerWarp", _ints),
        warps_per_cta=_need(p, "warpsPerCTA", _ints),
        order=_need(p, "order", _ints),
        cga=_cga(p),
    )


def _slice(b, a, p, depth, seen):
    if "parent" not in p:
        raise _Bad("missing parent")
    return SliceEncoding(raw=a.text, dim=_need(p, "dim", _int), parent=b.resolve(p["parent"], depth, seen))


def _dot_op(b, a, p, depth, seen):
    if "parent" not in p:
        raise _Bad("missing parent")
    return DotOperandEncoding(
        raw=a.text,
        op_idx=_need(p, "opIdx", _int),
        parent=b.resolve(p["parent"], depth, seen),
        k_width=_opt(p, "kWidth", _int),
    )


def _nvidia_mma(b, a, p, depth, seen):
    return NvidiaMmaEncoding(
        raw=a.text,
        version_major=_need(p, "versionMajor", _int),
        version_minor=_opt(p, "versionMinor", _int) or 0,
        warps_per_cta=_need(p, "warpsPerCTA", _ints),
        instr_shape=_opt(p, "instrShape", _ints) or (),
        cga=_cga(p),
    )


def _amd_mfma(b, a, p, depth, seen):
    version = _opt(p, "version", _int)
    if version is None:
        version = _need(p, "versionMajor", _int)
    instr = _opt(p, "instrShape", _ints)
    if instr is None:
        # Triton <= 3.1 printed MDim/NDim instead of instrShape.
        instr = (_need(p, "MDim", _int), _need(p, "NDim", _int))
    return AmdMfmaEncoding(
        raw=a.text,
        version=version,
        version_minor=_opt(p, "versionMinor", _int),
        warps_per_cta=_need(p, "warpsPerCTA", _ints),
        instr_shape=instr,
        is_transposed=_opt(p, "isTransposed", _bool) or False,
        tiles_per_warp=_opt(p, "tilesPerWarp", _ints),
        element_bit_width=_opt(p, "elementBitWidth", _int),
        cga=_cga(p),
    )


def _amd_wmma(b, a, p, depth, seen):
    version = _opt(p, "version", _int)
    if version is None:
        version = _opt(p, "versionMajor", _int) or 1
    transposed = _opt(p, "isTranspose", _bool)
    if transposed is None:
        transposed = _opt(p, "isTransposed", _bool) or False
    return AmdWmmaEncoding(
        raw=a.text,
        version=version,
        warps_per_cta=_need(p, "warpsPerCTA", _ints),
        is_transposed=transposed,
        instr_shape=_opt(p, "instrShape", _ints),
        tiles_per_warp=_opt(p, "tilesPerWarp", _ints),
        cga=_cga(p),
    )


def _linear(b, a, p, depth, seen):
    return LinearEncoding(
        raw=a.text,
        register=_need(p, "register", _bases),
        lane=_need(p, "lane", _bases),
        warp=_need(p, "warp", _bases),
        block=_opt(p, "block", _bases) or (),
    )


def _nvmma_shared(b, a, p, depth, seen):
    return NvmmaSharedEncoding(
        raw=a.text,
        swizzling_byte_width=_need(p, "swizzlingByteWidth", _int),
        transposed=_opt(p, "transposed", _bool) or False,
        element_bit_width=_need(p, "elementBitWidth", _int),
        fp4_padded=_opt(p, "fp4Padded", _bool) or False,
        rank=_opt(p, "rank", _int),
        cga=_cga(p),
    )


def _swizzled(b, a, p, depth, seen):
    return SwizzledSharedEncoding(
        raw=a.text,
        vec=_need(p, "vec", _int),
        per_phase=_need(p, "perPhase", _int),
        max_phase=_need(p, "maxPhase", _int),
        order=_need(p, "order", _ints),
        has_leading_offset=_opt(p, "hasLeadingOffset", _bool),
        cga=_cga(p),
    )


def _rotating(b, a, p, depth, seen):
    return AmdRotatingSharedEncoding(
        raw=a.text,
        vec=_need(p, "vec", _int),
        per_phase=_need(p, "perPhase", _int),
        max_phase=_need(p, "maxPhase", _int),
        order=_need(p, "order", _ints),
        cga=_cga(p),
    )


def _padded(b, a, p, depth, seen):
    pairs = next((v[1] for v in a.positional if isinstance(v, tuple) and v[:1] == ("padding",)), None)
    if not pairs:
        raise _Bad("missing [interval:+padding] list")
    return PaddedSharedEncoding(
        raw=a.text,
        intervals=tuple(i for i, _ in pairs),
        paddings=tuple(q for _, q in pairs),
        order=_opt(p, "order", _ints),
        shape=_opt(p, "shape", _ints),
        offset_bases=_opt(p, "offset", _bases),
        block_bases=_opt(p, "block", _bases),
    )


def _shared_linear(b, a, p, depth, seen):
    return SharedLinearEncoding(
        raw=a.text,
        offset_bases=_need(p, "offset", _bases),
        block_bases=_opt(p, "block", _bases) or (),
        alignment=_opt(p, "alignment", _int),
    )


def _tmem(b, a, p, depth, seen):
    return TensorMemoryEncoding(
        raw=a.text,
        block_m=_need(p, "blockM", _int),
        block_n=_need(p, "blockN", _int),
        col_stride=_opt(p, "colStride", _int),
        unpacked=_opt(p, "unpacked", _bool),
        cta_split_m=_opt(p, "CTASplitM", _int),
        cta_split_n=_opt(p, "CTASplitN", _int),
        two_ctas=_opt(p, "twoCTAs", _bool),
    )


def _tmem_scales(b, a, p, depth, seen):
    return TensorMemoryScalesEncoding(raw=a.text, cta_split_m=_opt(p, "CTASplitM", _int),
                                      cta_split_n=_opt(p, "CTASplitN", _int))


def _space(b, a, p, depth, seen):
    return MemorySpace(raw=a.text, name=a.name)


_MAKERS = {
    ("ttg", "blocked"): _blocked,
    ("ttg", "slice"): _slice,
    ("ttg", "dot_op"): _dot_op,
    ("ttg", "nvidia_mma"): _nvidia_mma,
    ("ttg", "mma"): _nvidia_mma,  # Triton 2.x / early 3.0 spelling
    ("ttg", "amd_mfma"): _amd_mfma,
    ("ttg", "amd_wmma"): _amd_wmma,
    ("ttg", "linear"): _linear,
    ("ttg", "nvmma_shared"): _nvmma_shared,
    ("ttg", "swizzled_shared"): _swizzled,
    ("ttg", "shared"): _swizzled,  # Triton <= 3.2
    ("ttg", "amd_rotating_shared"): _rotating,
    ("ttg", "padded_shared"): _padded,
    ("ttg", "shared_linear"): _shared_linear,
    ("ttg", "shared_memory"): _space,
    ("ttng", "tensor_memory_encoding"): _tmem,
    ("ttng", "tensor_memory_scales_encoding"): _tmem_scales,
    ("ttng", "tensor_memory"): _space,
}


# An alias reference: '#blocked1', '#mma' (a dialect attribute has a dot: '#ttg.blocked<').
_REF_RE = re.compile(r"#[\w$-]+(?![\w$.<-])")


def _dependencies(body: str, aliases: Mapping[str, str] | None) -> tuple[tuple[str, str], ...]:
    """The (alias, text) pairs ``body`` reaches through references, transitively:
    with the body, all a decode depends on, so the decode can be memoised on them."""
    if not aliases:
        return ()
    out: dict[str, str] = {}
    todo = _REF_RE.findall(body)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        text = aliases.get(name)
        if not isinstance(text, str):
            continue  # the builder reports the unknown alias
        out[name] = text
        todo.extend(_REF_RE.findall(text))
    return tuple(sorted(out.items()))


@functools.lru_cache(maxsize=4096)
def _decode_cached(body: str, deps: tuple[tuple[str, str], ...]) -> Encoding:
    # A module prints a few layouts and uses each on hundreds of types: decode each once.
    return _Builder(dict(deps)).decode(body, 0, frozenset())


@functools.lru_cache(maxsize=4096)
def _decode_alias(name: str, text: str, depth: int, deps: tuple[tuple[str, str], ...]) -> Encoding:
    return _Builder(dict(deps)).decode(text, depth, frozenset({name}))


def decode_encoding(text: str, aliases: Mapping[str, str] | None = None) -> Encoding:
    """Decode a layout attribute (``#ttg.blocked<{...}>``) or alias (``#blocked1``).

    ``aliases`` maps alias names (with ``#``) to their attribute text as
    printed at the top of the module (see :func:`parse_aliases`); it is used
    for the reference itself and for nested parents.  A whole alias line
    (``#blocked = #ttg.blocked<...>``) is accepted too.  The result's ``raw``
    is the attribute text itself (an alias is resolved; nested parent
    references inside it stay as written).  Never raises: text
    that is not a known encoding gives :class:`UnknownEncoding` with a reason.
    """
    memo = getattr(aliases, "decoded", None)  # a module's AliasTable
    if type(memo) is dict and type(text) is str:
        got = memo.get(text)
        if got is None:
            got = memo[text] = _decode_uncached(text, aliases)
        return got
    return _decode_uncached(text, aliases)


def _undecodable(text: object, aliases: object) -> Encoding:
    """What a decoder bug gives (the guard's fallback)."""
    return UnknownEncoding(raw=text if isinstance(text, str) else repr(text), reason="could not decode")


@never_raise(_undecodable, pause_gc=False)  # decoding must never raise on input text
def _decode_uncached(text, aliases) -> Encoding:
    raw = text if isinstance(text, str) else repr(text)
    try:
        if not isinstance(text, str):
            return UnknownEncoding(raw=raw, reason="not a string")
        if len(text) > _MAX_TEXT:
            return UnknownEncoding(raw=raw, reason="text too long for a layout")
        body = text.strip()
        line = _ALIAS_LINE.match(body)
        if line and "\n" not in body:
            body = line.group(2)
        if aliases is not None and not isinstance(aliases, Mapping):
            aliases = None
        return _decode_cached(body, _dependencies(body, aliases))
    except (_Bad, ParseError) as exc:
        return UnknownEncoding(raw=raw, reason=str(exc))
    except RecursionError:
        return UnknownEncoding(raw=raw, reason="nested too deeply")
