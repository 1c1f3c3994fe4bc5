"""What makes two ops "the same up to renaming": the key of an op.

An op's key is its form (:func:`irscope.ir.op_form`: the text with value names,
block labels, locations and metadata numbers erased) with every encoding alias
replaced by a token that both sides share when the encodings are paired (see
:func:`pair_encodings`). A key says nothing about *which* values an op uses:
``subf %a, %b`` and ``subf %b, %a`` have one key, and the aligner tells them
apart through its value map. SASS registers are not SSA names, so they are erased
too (register allocation renames them between any two compiles).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from irscope.compiler.dialects import current_op_name, current_spelling
from irscope.compiler.stages import FAMILY_LLVM, FAMILY_MLIR, FAMILY_SASS
from irscope.ir import Module, Op, op_form

# An alias reference: '#blocked1', '#mma', '#smem' (a dialect attribute has a dot).
_REF_RE = re.compile(r"#[A-Za-z_][\w$-]*(?![\w$.<-])")
# /*0040*/ offsets, registers (R12, UR4, P0, UP1, with .reuse), labels (.L_x_3).
_SASS_OFFSET = re.compile(r"/\*[0-9a-fA-F]+\*/\s*")
_SASS_REG = re.compile(r"\b(U?R|U?P)\d+(\.reuse)?\b")
_SASS_LABEL = re.compile(r"\.L_x_\d+")
# Triton 3.3 renamed its dialects' printed prefixes: one op, two spellings
# (the table is the compiler layer's: irscope.compiler.dialects).
canonical_name = current_op_name


# LLVM IR attribute groups ('#4'): numbered in print order, so renumbered freely.
_LLVM_ATTR_GROUP = re.compile(r"#\d+\b")


@dataclass(frozen=True, slots=True)
class EncodingPair:
    """One encoding alias of the old side paired with one of the new side."""

    before: str | None
    """Alias name on the old side (None: only the new side has it)."""
    after: str | None
    content_before: str | None
    """The decoded content (``describe()``), None on the side that lacks it."""
    content_after: str | None
    details: tuple[str, ...] = ()
    """Field-by-field differences (``sizePerThread [1, 8] -> [1, 4]``); () when equal."""

    @property
    def same(self) -> bool:
        return self.before is not None and self.after is not None and not self.details


def encoding_content(module: Module) -> dict[str, str]:
    """Alias -> decoded content of each layout alias (not ``#loc``) of a module."""
    out: dict[str, str] = {}
    for ref in module.encodings:
        enc = module.encoding(ref)
        out[ref] = enc.describe() if enc.kind != "unknown" else "unknown " + module.encodings[ref]
    return out


def pair_encodings(a: Module, b: Module) -> tuple[list[EncodingPair], dict[str, str], dict[str, str]]:
    """Pair the encoding aliases of two modules by content, then by name, then by
    kind in order; returns the pairs and, per side, alias -> shared token.

    Aliases with equal content get one token whatever their names: renaming or
    reordering alias lines changes nothing. An alias whose content changed keeps
    one token for both sides too, so the ops using it still match, and the change
    is reported once, as this pair's ``details``.
    """
    from irscope.ir.layouts import diff_fields

    ca, cb = encoding_content(a), encoding_content(b)
    by_content: dict[str, list[str]] = {}
    for ref, content in cb.items():
        by_content.setdefault(content, []).append(ref)
    pairs: list[EncodingPair] = []
    left = []
    for ref, content in ca.items():
        peers = by_content.get(content)
        if peers:
            pairs.append(EncodingPair(ref, peers.pop(0), content, content))
        else:
            left.append(ref)
    right = [r for refs in by_content.values() for r in refs]
    right.sort(key=list(cb).index)

    def kind(module: Module, ref: str) -> str:
        return module.encoding(ref).kind

    for rule in ("name", "kind"):
        still = []
        for ref in left:
            match = next((r for r in right if (r == ref if rule == "name" else kind(b, r) == kind(a, ref))), None)
            if match is None:
                still.append(ref)
                continue
            right.remove(match)
            ea, eb = a.encoding(ref), b.encoding(match)
            details = tuple(diff_fields(ea, eb)) or (f"{ca[ref]} -> {cb[match]}",)
            pairs.append(EncodingPair(ref, match, ca[ref], cb[match], details))
        left = still
    pairs.extend(EncodingPair(ref, None, ca[ref], None) for ref in left)
    pairs.extend(EncodingPair(None, ref, None, cb[ref]) for ref in right)
    ta: dict[str, str] = {}
    tb: dict[str, str] = {}
    for i, p in enumerate(pairs):
        token = f"#E{i}"
        if p.before is not None:
            ta[p.before] = token
        if p.after is not None:
            tb[p.after] = token
    return pairs, ta, tb


class Keys:
    """Op keys of one side, memoised per distinct form."""

    def __init__(self, family: str, tokens: Mapping[str, str]):
        self.family = family
        self.tokens = tokens
        self._memo: dict[str, str] = {}

    def __call__(self, op: Op) -> str:
        form = op.form or op_form(op)
        key = self._memo.get(form)
        if key is None:
            key = self._memo[form] = self._key(form)
        return key

    def _key(self, form: str) -> str:
        if self.family == FAMILY_LLVM:
            form = _LLVM_ATTR_GROUP.sub("#", form)
        if self.family == FAMILY_SASS:
            form = _SASS_LABEL.sub(".L", _SASS_REG.sub(r"\1", _SASS_OFFSET.sub("", form)))
        if self.family == FAMILY_MLIR:
            form = current_spelling(form)
        if self.tokens and "#" in form:
            tokens = self.tokens
            form = _REF_RE.sub(lambda m: tokens.get(m.group(0), m.group(0)), form)
        return form
