"""A short description of every compiler pass a Triton compile runs, for learners.

The descriptions live in ``pass_catalog.json`` beside this module (shipped as
package data), one entry per pass: its command-line argument (``tritongpu-pipeline``),
the class names dumps print for it (``TritonGPUPipeline``), where it comes from
(``MLIR core``, ``Triton TritonGPU``, ``NVIDIA backend``...) and one or two sentences
saying what it is for and what changes in the IR after it. ``docs/pass-catalog.md``
says how to add one.

:func:`describe` takes a pass name in any of the forms dumps and timelines use:
``TritonGPUPipeline``, ``tritongpu-pipeline``, ``TritonGPUPipeline (tritongpu-pipeline)``,
``CanonicalizerPass: canonicalize{max-iterations=10}``, ``CSEPass``,
``(anonymous namespace)::VerifyWarpSpecializationPartitions``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .stages import KIND_LLVM, KIND_MIR, KIND_MLIR

CATALOG_FILE = "pass_catalog.json"

# "Name (argument)" as the 3.0-3.7 MLIR headers and the timeline print it.
_PAREN_ARG_RE = re.compile(r"^(?P<name>.*?)\s*\((?P<arg>[\w.$-]+)(?:\{.*\})?\)\s*$")
_NOT_ALNUM_RE = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class PassInfo:
    """One catalog entry."""

    name: str
    """The pass's class name as dumps print it (``TritonGPUPipeline``)."""
    argument: str
    """Its command-line argument (``tritongpu-pipeline``); '' for Triton's internal
    pipeliner dumps (``LowerLoops``), which have none."""
    summary: str
    """One or two sentences: what the pass is for, what you see change."""
    source: str
    """Where it is defined: ``MLIR core``, ``Triton``, ``Triton TritonGPU``,
    ``NVIDIA backend``, ``AMD backend``, ``Triton warp specialization``,
    ``Triton pipeliner (internal dump)`` or ``LLVM``."""
    aliases: tuple[str, ...] = ()
    """Other names of the same pass: across Triton versions, or LLVM's legacy
    description next to its new-pass-manager class name."""
    family: str = KIND_MLIR
    """``mlir`` (MLIR pipelines: TTIR, TTGIR, the LLVM dialect) or ``llvm`` (LLVM's
    own IR and codegen passes, recorded with ``irscope run --llvm-passes``)."""


def normalise(name: str) -> str:
    """The lookup key of a pass name: lower case, letters and digits only, without a
    trailing ``pass`` and without C++ namespaces (``TritonGPUPipeline`` and
    ``tritongpu-pipeline`` both give ``tritongpupipeline``)."""
    name = name.strip()
    if "<" in name and not name.startswith("<"):
        # RequireAnalysisPass<llvm::GlobalsAA, ...>: the template arguments are no part of it
        name = name.split("<", 1)[0]
    if "::" in name:
        name = name.rsplit("::", 1)[1]
    key = _NOT_ALNUM_RE.sub("", name.lower())
    if key.endswith("pass") and len(key) > 4:
        key = key[:-4]
    return key


def candidates(pass_name: str, argument: str = "") -> list[str]:
    """Lookup keys to try for a name as written in a dump or timeline, best first."""
    text = pass_name.strip().lstrip("↳ ").strip()
    parts: list[str] = []
    if argument:
        parts.append(argument)
    m = _PAREN_ARG_RE.match(text)
    if m:
        parts += [m["arg"], m["name"]]
    elif ": " in text:
        # "::" is never followed by a space, so this splits off the argument only
        name, rest = text.split(": ", 1)
        parts += [rest.split("{", 1)[0], name]
    parts.append(text)
    keys: list[str] = []
    for part in parts:
        key = normalise(part)
        if key and key not in keys:
            keys.append(key)
    return keys


def keys_of(info: PassInfo) -> set[str]:
    """The lookup keys an entry claims (its names and its argument, normalised)."""
    keys = {normalise(n) for n in (info.name, *info.aliases)}
    if info.argument:
        keys.add(normalise(info.argument))
    return keys - {""}


@lru_cache(maxsize=1)
def _index() -> tuple[dict[str, dict[str, PassInfo]], tuple[PassInfo, ...]]:
    raw = json.loads(resources.files("irscope.compiler").joinpath(CATALOG_FILE).read_text("utf-8"))
    entries = []
    # One index per family: MLIR and LLVM both have an "InlinerPass" and an "SCCPPass".
    index: dict[str, dict[str, PassInfo]] = {KIND_MLIR: {}, KIND_LLVM: {}}
    for e in raw["passes"]:
        names = tuple(e["names"])
        info = PassInfo(names[0], e["argument"], e["summary"], e["source"], names[1:],
                        e.get("family", KIND_MLIR))
        entries.append(info)
        for key in keys_of(info):
            # the first entry claiming a key keeps it; tests check there are no clashes
            index[info.family].setdefault(key, info)
    return index, tuple(entries)


def describe(pass_name: str, argument: str = "", *, family: str | None = None) -> PassInfo | None:
    """The catalog entry for a pass, or None when the catalog does not know it.

    ``pass_name`` may be a class name, an argument, or a whole dump/timeline label
    (``TritonGPUPipeline (tritongpu-pipeline)``, ``CanonicalizerPass: canonicalize{...}``);
    ``argument``, when known separately, is tried first. ``family`` is the snapshot's
    kind (``mlir``, ``llvm``, ``mir``): its passes are looked up first, the other
    family's after (None: MLIR first).
    """
    index, _ = _index()
    first = KIND_LLVM if family in (KIND_LLVM, KIND_MIR) else KIND_MLIR
    order = (first, KIND_MLIR if first == KIND_LLVM else KIND_LLVM)
    keys = candidates(pass_name, argument)
    for fam in order:
        for key in keys:
            info = index[fam].get(key)
            if info is not None:
                return info
    return None


def all_passes() -> tuple[PassInfo, ...]:
    """Every catalog entry, in file order."""
    return _index()[1]
