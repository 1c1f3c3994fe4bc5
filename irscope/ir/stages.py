"""Parsing by stage name: the registry (:mod:`irscope.compiler.stages`) names each
stage's parser family; this table maps a family to its parser."""

from __future__ import annotations

import importlib
from typing import Callable

from irscope.compiler.stages import STAGES as _ALL, Stage, for_extension

from .model import Module, ParseCache

StageInfo = Stage  # the registry entry (kept under its older name)

PARSERS: dict[str, str] = {"mlir": "mlir:parse_mlir", "llvm": "llvm:parse_llvm", "ptx": "ptx:parse_ptx",
                           "sass": "sass:parse_sass"}
"""Parser family -> ``module:function`` in this package, loaded on first use."""


def parser(family: str) -> Callable[..., Module]:
    """The parser of a family: ``parser(text, stage, cache)`` -> :class:`Module`."""
    module, name = PARSERS[family].split(":")
    return getattr(importlib.import_module(f"irscope.ir.{module}"), name)

STAGES: dict[str, Stage] = {name: s for name, s in _ALL.items() if s.parsed and s.base is None}
"""The stages irscope parses, in pipeline order (pass snapshots last)."""


def stage_info(name: str) -> Stage:
    """The registry entry of parsed stage ``name``; ValueError for any other name."""
    try:
        return STAGES[name]
    except KeyError:
        raise ValueError(f"unknown stage {name!r}; known: {', '.join(STAGES)}") from None


def stage_for_extension(ext: str) -> Stage | None:
    """The stage whose files end with ``ext`` (``.ptx`` or ``ptx``), or None."""
    return for_extension(ext)


def parse_as(name: str, text: str, cache: ParseCache | None = None) -> Module:
    """Parse ``text`` as stage ``name``; an ``--exact-links`` stage (``ptx_ttgirloc``)
    is read by its base stage's parser. ValueError for a stage irscope does not parse."""
    info = _ALL.get(name)
    if info is not None and info.base is not None:
        info, name = _ALL[info.base], info.base
    else:
        info = stage_info(name)
    return parser(info.family)(text, name, cache)
