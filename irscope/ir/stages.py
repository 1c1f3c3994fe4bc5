"""The stages irscope parses, as small frozen descriptors in one registry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .llvm import parse_llvm
from .mlir import parse_mlir
from .model import Module, ParseCache
from .ptx import parse_ptx
from .sass import parse_sass


@dataclass(frozen=True, slots=True)
class StageInfo:
    """What irscope knows about one stage of the compiler's output."""

    name: str
    """Registry key: ``ttir``, ``ttgir``, ``llir``, ``ptx``, ``sass``, ``mlir``."""
    extension: str
    """File extension Triton uses (``.ttgir``...)."""
    display_name: str
    """Human-readable name."""
    family: str
    """Parser family: ``mlir``, ``llvm``, ``ptx`` or ``sass``."""
    parser: Callable[..., Module]
    """``parser(text, stage, cache)`` -> :class:`Module`."""

    def parse(self, text: str, cache: ParseCache | None = None) -> Module:
        """Parse ``text`` as this stage."""
        return self.parser(text, self.name, cache)


STAGES: dict[str, StageInfo] = {s.name: s for s in (
    StageInfo("ttir", ".ttir", "Triton IR", "mlir", parse_mlir),
    StageInfo("ttgir", ".ttgir", "Triton GPU IR", "mlir", parse_mlir),
    StageInfo("llir", ".llir", "LLVM IR", "llvm", parse_llvm),
    StageInfo("ptx", ".ptx", "PTX", "ptx", parse_ptx),
    StageInfo("sass", ".sass", "SASS", "sass", parse_sass),
    StageInfo("mlir", ".mlir", "MLIR pass snapshot", "mlir", parse_mlir),
)}
"""Every known stage by name, in pipeline order (pass snapshots last)."""


def stage_info(name: str) -> StageInfo:
    """The descriptor of stage ``name``; ValueError for an unknown name."""
    try:
        return STAGES[name]
    except KeyError:
        raise ValueError(f"unknown stage {name!r}; known: {', '.join(STAGES)}") from None


def stage_for_extension(ext: str) -> StageInfo | None:
    """The stage whose files end with ``ext`` (``.ptx`` or ``ptx``), or None."""
    ext = ext if ext.startswith(".") else "." + ext
    for info in STAGES.values():
        if info.extension == ext:
            return info
    return None
