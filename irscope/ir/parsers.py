"""Which function parses each parser family, and parsing by stage name.

The registry (:mod:`irscope.compiler.stages`) says which family reads each stage;
this table says which parser of this package reads each family. It holds no stage
knowledge of its own.
"""

from __future__ import annotations

import importlib
from typing import Callable

from irscope.compiler.stages import FAMILY_AMDGCN, FAMILY_LLVM, FAMILY_MLIR, FAMILY_PTX, FAMILY_SASS, STAGES

from .model import Module, ParseCache

PARSERS: dict[str, str] = {FAMILY_MLIR: "mlir:parse_mlir", FAMILY_LLVM: "llvm:parse_llvm",
                           FAMILY_PTX: "ptx:parse_ptx", FAMILY_SASS: "sass:parse_sass",
                           FAMILY_AMDGCN: "amdgcn:parse_amdgcn"}
"""Parser family -> ``module:function`` in this package, loaded on first use (each
parser compiles its regexes at import; showing one stage needs one of them)."""


def parser(family: str) -> Callable[..., Module]:
    """The parser of a family: ``parser(text, stage, cache)`` -> :class:`Module`."""
    module, name = PARSERS[family].split(":")
    fn: Callable[..., Module] = getattr(importlib.import_module(f"irscope.ir.{module}"), name)
    return fn


def parsed_family(name: str) -> tuple[str, str]:
    """``(stage, family)`` that reads stage ``name``: an ``--exact-links`` stage
    (``ptx_ttgirloc``) is read as its base stage. ValueError for a stage irscope does
    not parse."""
    info = STAGES.get(name)
    if info is not None and info.base is not None:
        name, info = info.base, STAGES[info.base]
    if info is None or info.family is None:
        known = ", ".join(s.name for s in STAGES.values() if s.parsed and s.base is None)
        raise ValueError(f"unknown stage {name!r}; known: {known}")
    return name, info.family


def parse_as(name: str, text: str, cache: ParseCache | None = None) -> Module:
    """Parse ``text`` as stage ``name``; an ``--exact-links`` stage (``ptx_ttgirloc``)
    is read by its base stage's parser. ValueError for a stage irscope does not parse."""
    stage, family = parsed_family(name)
    return parser(family)(text, stage, cache)
