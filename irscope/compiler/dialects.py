"""Triton's dialect names across its versions: the one table of renamed dialects.

Triton 3.3 shortened the printed prefixes of its GPU dialects (``triton_gpu.`` became
``ttg.``, ``triton_nvidia_gpu.`` became ``ttng.``, ``triton_amdgpu.`` became
``amdgpu.``). An op is the same op under either spelling, so the diff keys ops on the
current name and a comparison across versions lists the two names as one dialect.
"""

from __future__ import annotations

import re

DIALECT_RENAMES: dict[str, str] = {
    "triton_gpu": "ttg",
    "triton_nvidia_gpu": "ttng",
    "triton_amdgpu": "amdgpu",
}
"""Pre-3.3 dialect name -> the name Triton 3.3 and later print."""

OLD_PREFIX = re.compile(r"\b(" + "|".join(DIALECT_RENAMES) + r")\.")
"""A renamed dialect's old prefix (``triton_gpu.``), wherever it appears in a text."""


def current_dialect(name: str) -> str:
    """The current name of dialect ``name`` (``triton_gpu`` -> ``ttg``; others as given)."""
    return DIALECT_RENAMES.get(name, name)


def current_op_name(name: str) -> str:
    """An op name with the pre-3.3 dialect spelling made the current one
    (``triton_gpu.local_load`` -> ``ttg.local_load``)."""
    m = OLD_PREFIX.match(name)
    return DIALECT_RENAMES[m.group(1)] + name[m.end() - 1:] if m else name


def current_spelling(text: str) -> str:
    """``text`` with every old dialect prefix written the current way."""
    return OLD_PREFIX.sub(lambda m: DIALECT_RENAMES[m.group(1)] + ".", text) if "triton_" in text else text
