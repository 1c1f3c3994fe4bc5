"""Parsers for every stage Triton emits, into one IR model (see :mod:`.model`).

Pure functions over text: no I/O, standard library only. Nothing here raises on
input text; what a parser does not understand is kept as ``<unknown>`` ops and
measured by ``Module.coverage``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable

from irscope import text_guard

from .parse_guard import paused_gc
from .forms import normalise_op_text, op_form
from .model import (UNKNOWN_LOCATION, Block, Frame, Function, Instruction, Location,
                    Module, Op, ParseCache, Region, Value)
from .parsers import parse_as, parsed_family, parser
from irscope.compiler.stages import FAMILY_LLVM, FAMILY_MLIR, KIND_LLVM, KIND_MLIR, MLIR, snapshot_kind

if TYPE_CHECKING:
    from irscope.compiler.passdump import PassSnapshot

# Each parser (and the dump splitter) loads when first used: showing one stage needs
# one of them, and every module compiles its regexes at import.
_LAZY = {"parse_mlir": "irscope.ir.mlir", "op_forms_mlir": "irscope.ir.mlir_forms", "parse_llvm": "irscope.ir.llvm",
         "op_forms_llvm": "irscope.ir.llvm", "parse_ptx": "irscope.ir.ptx", "parse_sass": "irscope.ir.sass",
         "parse_amdgcn": "irscope.ir.amdgcn"}
_LAZY_VOCAB = ("PassDump", "PassSnapshot", "split_llvm_pass_dump", "split_mlir_pass_dump", "split_pass_dump")


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_VOCAB:
        return getattr(importlib.import_module("irscope.compiler.passdump"), name)
    raise AttributeError(f"module 'irscope.ir' has no attribute {name!r}")

__all__ = [
    "Block", "Frame", "Function", "Instruction", "Location", "Module", "Op", "ParseCache",
    "PassDump", "PassSnapshot", "Region", "UNKNOWN_LOCATION", "Value",
    "normalise_op_text", "op_form", "op_forms", "parse_amdgcn", "parse_llvm", "parse_mlir", "parse_ptx", "parse_sass", "parse_snapshot",
    "parse_snapshots", "parse_as", "parse_pass", "parser", "parse_stage", "split_llvm_pass_dump", "split_mlir_pass_dump",
    "split_pass_dump",
]


def parse_stage(stage: str, text: str, cache: ParseCache | None = None) -> Module:
    """Parse ``text`` as ``stage`` (``ttir``, ``ttgir``, ``llir``, ``ptx``, ``amdgcn``, ``sass``, or
    ``mlir`` for a pass snapshot). Raises ValueError only for an unknown stage name."""
    return parse_as(stage, text, cache)


@paused_gc
def op_forms(stage: str, text: str, cache: ParseCache | None = None) -> list[tuple[str, str]]:
    """``(op name, form)`` of every op that ``parse_stage(stage, text)`` gives, unknown
    lines left out, in text order: the same answer, without building the op tree.

    Summaries of whole snapshots (``irscope passes``, diffs of passes) need only
    this; MLIR and LLVM IR take a fast path that reads the text with its names
    erased and never builds ops or resolves locations. Other stages are parsed.
    Never raises on input text (a fast-path bug falls back to the parse, which
    does not raise either).
    """
    family = parsed_family(stage)[1]
    if family in (FAMILY_MLIR, FAMILY_LLVM):
        return _fast_op_forms(__getattr__(f"op_forms_{family}"), stage, text, cache)
    return _parsed_op_forms(None, stage, text, cache)


def _parsed_op_forms(fast: object, stage: str, text: str, cache: ParseCache | None) -> list[tuple[str, str]]:
    """:func:`op_forms` through the parse (``fast`` unused: the guard's fallback)."""
    return [(op.name, op_form(op)) for op in parse_stage(stage, text, cache).ops()
            if op.name != "<unknown>" and op.name]


@text_guard.never_raise(_parsed_op_forms, pause_gc=False)
def _fast_op_forms(fast: Callable[[str, ParseCache | None], list[tuple[str, str]]], stage: str, text: str,
                   cache: ParseCache | None) -> list[tuple[str, str]]:
    """:func:`op_forms` by a family's fast path."""
    return fast(text, cache)


def parse_pass(kind: str, text: str, cache: ParseCache | None = None,
               metadata: dict[str, str] | None = None) -> Module:
    """Parse one pass snapshot's text by its kind: ``mlir``, ``llvm`` (LLVM IR) or
    ``mir`` (machine IR of codegen passes). ``metadata``: the ``!N`` table of an
    earlier module-level LLVM dump, for a function-level one that prints none."""
    info = snapshot_kind(kind)
    if info is not None and info.family == FAMILY_MLIR:
        return parser(FAMILY_MLIR)(text, MLIR, cache)
    return parser(FAMILY_LLVM)(text, kind, cache, metadata)


def parse_snapshot(snap: "PassSnapshot", cache: ParseCache | None = None,
                   metadata: dict[str, str] | None = None) -> Module:
    """Parse one pass snapshot with the parser of its family (MLIR, LLVM IR or MIR)."""
    return parse_pass(snap.family, snap.text, cache, metadata)


@paused_gc
def parse_snapshots(snapshots: Iterable["PassSnapshot"], cache: ParseCache | None = None
                    ) -> list[Module]:
    """Parse a sequence of snapshots, sharing work between them.

    One :class:`ParseCache` serves them all; a snapshot whose text equals an earlier
    one's gets the same :class:`Module` object (most passes change nothing); LLVM
    function-level dumps, which print no metadata, resolve ``!dbg`` through the
    metadata of the latest module-level dump.
    """
    cache = cache if cache is not None else ParseCache()
    out: list[Module] = []
    seen: dict[tuple, tuple[PassSnapshot, Module]] = {}
    metadata: dict[str, str] | None = None
    for snap in snapshots:
        text = snap.text
        # Keyed by hash, confirmed by comparing texts: the earlier text is rebuilt
        # from its snapshot rather than kept alive (memory). An LLVM text without
        # metadata of its own also depends on the metadata it borrows.
        base = (snap.family, len(text), hash(text))
        hit = seen.get(base + (0,)) or seen.get(base + (id(metadata),))
        if hit is not None and hit[0].text == text:
            out.append(hit[1])
            continue
        borrowed = metadata
        mod = parse_snapshot(snap, cache, metadata)
        own = snap.family == KIND_MLIR or any(k.startswith("!") for k in mod.loc_aliases)
        if snap.family == KIND_LLVM and own:
            metadata = mod.loc_aliases
        seen[base + (0 if own else id(borrowed),)] = (snap, mod)
        out.append(mod)
    return out
