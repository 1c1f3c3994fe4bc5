"""A compile target, spelled one way: the one normaliser every command uses.

``90``, ``sm90``, ``sm_90``, ``SM_90`` and ``sm_90a`` all name ``sm_90``; ``gfx942``
names AMD's gfx942. ``irscope run --target`` and every command that picks a capture
(``--target``, ``diff BUNDLE:KERNEL@TARGET``) read the user's spelling through
:meth:`Target.parse`, so a spelling that works for one works for all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from irscope.errors import IrscopeError

_CUDA = re.compile(r"^(?:sm_?|cuda:|compute_)?(\d+)a?$")
_GFX = re.compile(r"^(?:hip:)?(gfx[0-9a-f]+)$")
CUDA_RANGE = (50, 130)
"""The NVIDIA compute capabilities (as ``sm_N``'s N) a target may name."""


@dataclass(frozen=True, slots=True)
class Target:
    """One compile target by its canonical name."""

    name: str
    """``sm_90`` or ``gfx942``: how bundles store it and every view prints it."""
    vendor: str
    """``nvidia`` or ``amd``."""

    @property
    def warp_size(self) -> int:
        """Threads per warp (wave64 on AMD CDNA)."""
        return 64 if self.vendor == "amd" else 32

    @property
    def arch(self) -> int | str:
        """The compute capability (``90``) on NVIDIA, the ``gfx`` name on AMD."""
        return int(self.name[3:]) if self.vendor == "nvidia" else self.name

    def __str__(self) -> str:
        return self.name

    @classmethod
    def parse(cls, text: str) -> "Target":
        """The target ``text`` names: ``90``, ``sm90``, ``sm_90`` (or ``sm_90a``), ``gfx942``.
        IrscopeError (one line) for anything else, or an NVIDIA target out of range."""
        t = str(text).strip().lower()
        m = _GFX.match(t)
        if m:
            return cls(m.group(1), "amd")
        m = _CUDA.match(t)
        if not m:
            raise IrscopeError(f"unknown target {text!r} (expected e.g. sm_90, sm90, 90 or gfx942)")
        arch = int(m.group(1))
        if not CUDA_RANGE[0] <= arch <= CUDA_RANGE[1]:
            raise IrscopeError(f"unknown target {text!r}: NVIDIA targets run from sm_{CUDA_RANGE[0]} "
                               f"to sm_{CUDA_RANGE[1]}")
        return cls(f"sm_{arch}", "nvidia")


def normalise_target(text: str) -> str:
    """The canonical name of the target ``text`` spells (``90`` -> ``sm_90``).
    IrscopeError (one line) when it names no target."""
    return Target.parse(text).name


def target_key(stored: str) -> str:
    """The canonical name of a target as a bundle stores it, for matching a user's
    spelling against it; a stored name the parser does not know is kept as is."""
    try:
        return normalise_target(stored)
    except IrscopeError:
        return stored
